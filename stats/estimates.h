/* The statistics of benchmark reports (docs/benchmarks.md): pass@k,
 * percentile bootstrap and normal-approximation confidence intervals,
 * and the seeded generator that makes a bootstrap reproducible bit for
 * bit. */
#ifndef TALLY_STATS_ESTIMATES_H
#define TALLY_STATS_ESTIMATES_H

#include <stddef.h>
#include <stdint.h>

/* pass@k of a problem with n samples, c of them correct:
 * 1 - C(n-c, k) / C(n, k), computed as a product of ratios so that no
 * binomial is formed (n up to millions). c = 0 gives 0, c = n gives 1.
 * The caller leaves out problems with n < k. */
double tally_pass_at_k(long n, long c, long k);

/* SplitMix64: the generator of every bootstrap. state starts at the
 * seed; each draw adds 0x9e3779b97f4a7c15 and mixes. Inline: a report
 * draws hundreds of millions. */
static inline uint64_t tally_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A draw in [0, m): the high 64 bits of draw * m. */
static inline size_t tally_draw_index(uint64_t *state, size_t m) {
  return (size_t)(((unsigned __int128)tally_splitmix64(state) * m) >> 64);
}

/* The q-quantile (0 <= q <= 1) of sorted (n >= 1), linear between order
 * statistics as numpy.percentile does by default. */
double tally_quantile(const double *sorted, size_t n, double q);

typedef struct tally_interval_s {
  double mean, lower, upper;
} tally_interval_t;

/* The percentile bootstrap of the mean of v (m values): resamples means
 * of m draws with replacement from a generator seeded with seed, then
 * the (1-conf)/2 and (1+conf)/2 quantiles of those means. Fewer than two
 * values give a zero-width interval at the mean. scratch holds resamples
 * doubles. */
tally_interval_t tally_bootstrap(const double *v, size_t m, long resamples,
                                 uint64_t seed, double conf, double *scratch);

/* The normal approximation: mean +- z * s / sqrt(m), with s the sample
 * standard deviation (m - 1 in the denominator) and z the
 * (1+conf)/2 quantile of the standard normal. Fewer than two values
 * give a zero-width interval. */
tally_interval_t tally_normal_interval(const double *v, size_t m, double conf);

/* The p-quantile of the standard normal (0 < p < 1). */
double tally_normal_quantile(double p);

#endif
