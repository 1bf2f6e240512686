/* pass@k, bootstrap and normal intervals (estimates.h). */
#include "stats/estimates.h"

#include <math.h>
#include <stdlib.h>

double tally_pass_at_k(long n, long c, long k) {
  if (c <= 0)
    return 0;
  if (c >= n || n - c < k)
    return 1;
  /* C(n-c, k) / C(n, k) = prod over i in (n-c, n] of (1 - k / i). */
  double fail = 1;
  for (long i = n - c + 1; i <= n; i++)
    fail *= 1.0 - (double)k / (double)i;
  return 1.0 - fail;
}

double tally_quantile(const double *sorted, size_t n, double q) {
  double h = (double)(n - 1) * q;
  size_t lo = (size_t)floor(h);
  if (lo >= n - 1)
    return sorted[n - 1];
  double t = h - (double)lo, a = sorted[lo], b = sorted[lo + 1];
  /* numpy's lerp: from the nearer end, so the ends come out exact. */
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

static double mean_of(const double *v, size_t m) {
  double s = 0;
  for (size_t i = 0; i < m; i++)
    s += v[i];
  return m > 0 ? s / (double)m : 0;
}

/* Moves the k-th smallest of a[0..n) to a[k], the smaller ones before
 * it and the larger after (Hoare's selection, median-of-three pivots). */
static void select_kth(double *a, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (hi > lo) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < a[lo]) {
      double t = a[mid];
      a[mid] = a[lo];
      a[lo] = t;
    }
    if (a[hi] < a[lo]) {
      double t = a[hi];
      a[hi] = a[lo];
      a[lo] = t;
    }
    if (a[hi] < a[mid]) {
      double t = a[hi];
      a[hi] = a[mid];
      a[mid] = t;
    }
    double pivot = a[mid];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot)
        i++;
      while (a[j] > pivot)
        j--;
      if (i <= j) {
        double t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* The q-quantile of a[0..n) as tally_quantile gives it on the sorted
 * values, by selection: only the two order statistics it reads are put
 * in place. a is reordered. */
static double quantile_unsorted(double *a, size_t n, double q) {
  double h = (double)(n - 1) * q;
  size_t lo = (size_t)floor(h);
  if (lo >= n - 1) {
    select_kth(a, n, n - 1);
    return a[n - 1];
  }
  select_kth(a, n, lo);
  double next = a[lo + 1];
  for (size_t i = lo + 2; i < n; i++)
    if (a[i] < next)
      next = a[i];
  double two[2] = {a[lo], next};
  return tally_quantile(two, 2, h - (double)lo);
}

tally_interval_t tally_bootstrap(const double *v, size_t m, long resamples,
                                 uint64_t seed, double conf, double *scratch) {
  tally_interval_t r;
  r.mean = mean_of(v, m);
  r.lower = r.upper = r.mean;
  if (m < 2 || resamples < 1)
    return r;
  uint64_t state = seed;
  for (long k = 0; k < resamples; k++) {
    double s = 0;
    for (size_t i = 0; i < m; i++)
      s += v[tally_draw_index(&state, m)];
    scratch[k] = s / (double)m;
  }
  r.lower = quantile_unsorted(scratch, (size_t)resamples, (1 - conf) / 2);
  r.upper = quantile_unsorted(scratch, (size_t)resamples, (1 + conf) / 2);
  return r;
}

double tally_normal_quantile(double p) {
  /* Newton's method on the CDF, 0.5 * erfc(-z / sqrt 2), from a start
   * that converges for every p in (0, 1). */
  double z = 0;
  for (int i = 0; i < 100; i++) {
    double cdf = 0.5 * erfc(-z / M_SQRT2);
    double pdf = exp(-z * z / 2) / sqrt(2 * M_PI);
    if (pdf < 1e-300)
      break;
    double step = (cdf - p) / pdf;
    if (step > 1)
      step = 1;
    if (step < -1)
      step = -1;
    z -= step;
    if (fabs(step) < 1e-15 * (1 + fabs(z)))
      break;
  }
  return z;
}

tally_interval_t tally_normal_interval(const double *v, size_t m, double conf) {
  tally_interval_t r;
  r.mean = mean_of(v, m);
  r.lower = r.upper = r.mean;
  if (m < 2)
    return r;
  double ss = 0;
  for (size_t i = 0; i < m; i++)
    ss += (v[i] - r.mean) * (v[i] - r.mean);
  double se = sqrt(ss / (double)(m - 1)) / sqrt((double)m);
  double z = tally_normal_quantile((1 + conf) / 2);
  r.lower = r.mean - z * se;
  r.upper = r.mean + z * se;
  return r;
}
