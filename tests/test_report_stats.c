/* The statistics and failure categories of benchmark reports
 * (docs/benchmarks.md): pass@k against exact rational arithmetic, the
 * bootstrap's reproducibility and coverage, the normal interval, and
 * every failure rule in its order. */
#include "stats/estimates.h"
#include "stats/failure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* C(n, k) exactly, for n <= 120. */
static unsigned __int128 binom(long n, long k) {
  if (k < 0 || k > n)
    return 0;
  unsigned __int128 r = 1;
  for (long i = 1; i <= k; i++)
    r = r * (unsigned __int128)(n - k + i) / (unsigned __int128)i;
  return r;
}

Test(pass_at_k, hand_values) {
  cr_expect_float_eq(tally_pass_at_k(10, 0, 1), 0.0, 1e-15);
  cr_expect_float_eq(tally_pass_at_k(10, 10, 5), 1.0, 1e-15);
  cr_expect_float_eq(tally_pass_at_k(10, 3, 1), 0.3, 1e-15);
  /* 1 - C(7,5)/C(10,5) = 1 - 21/252 */
  cr_expect_float_eq(tally_pass_at_k(10, 3, 5), 1 - 21.0 / 252, 1e-15);
  /* n - c < k: every draw of k holds a correct one. */
  cr_expect_float_eq(tally_pass_at_k(10, 6, 5), 1.0, 1e-15);
  cr_expect_float_eq(tally_pass_at_k(1, 1, 1), 1.0, 1e-15);
  cr_expect_float_eq(tally_pass_at_k(2, 1, 2), 1.0, 1e-15);
}

Test(pass_at_k, matches_exact_rationals_on_small_n) {
  for (long n = 1; n <= 60; n++)
    for (long c = 0; c <= n; c++)
      for (long k = 1; k <= n; k++) {
        unsigned __int128 num = binom(n - c, k), den = binom(n, k);
        double want = 1.0 - (double)num / (double)den;
        double got = tally_pass_at_k(n, c, k);
        cr_assert(fabs(got - want) <= 1e-12, "n %ld c %ld k %ld: %.17g, %.17g",
                  n, c, k, got, want);
      }
}

Test(pass_at_k, large_n_without_overflow) {
  /* n = 10,000: the binomials are far past any integer type. */
  double v = tally_pass_at_k(10000, 1, 1);
  cr_expect_float_eq(v, 1e-4, 1e-15);
  v = tally_pass_at_k(10000, 5000, 100);
  cr_expect(v > 0.999999 && v <= 1.0);
  v = tally_pass_at_k(10000, 1, 100);
  cr_expect_float_eq(v, 0.01, 1e-12);
  v = tally_pass_at_k(1000000, 10, 1000);
  cr_expect(isfinite(v) && v > 0 && v < 1);
  /* pass@k grows with k. */
  double prev = 0;
  for (long k = 1; k <= 10000; k += 97) {
    double p = tally_pass_at_k(10000, 3, k);
    cr_assert(p >= prev && p <= 1.0, "k %ld: %g after %g", k, p, prev);
    prev = p;
  }
}

Test(quantile, is_numpy_linear) {
  double a[] = {1, 2, 3, 4};
  cr_expect_float_eq(tally_quantile(a, 4, 0.0), 1.0, 1e-15);
  cr_expect_float_eq(tally_quantile(a, 4, 1.0), 4.0, 1e-15);
  cr_expect_float_eq(tally_quantile(a, 4, 0.5), 2.5, 1e-15);
  /* numpy.percentile([1,2,3,4], 2.5) = 1.075 */
  cr_expect_float_eq(tally_quantile(a, 4, 0.025), 1.075, 1e-15);
  cr_expect_float_eq(tally_quantile(a, 4, 0.975), 3.925, 1e-15);
  double one[] = {7};
  cr_expect_float_eq(tally_quantile(one, 1, 0.3), 7.0, 1e-15);
}

Test(splitmix64, known_stream) {
  /* The reference outputs of SplitMix64 seeded with 0. */
  uint64_t s = 0;
  cr_expect_eq(tally_splitmix64(&s), 0xe220a8397b1dcdafull);
  cr_expect_eq(tally_splitmix64(&s), 0x6e789e6aa1b965f4ull);
  cr_expect_eq(tally_splitmix64(&s), 0x06c45d188009454full);
}

Test(bootstrap, same_seed_same_interval) {
  double v[50], scratch[2000];
  for (int i = 0; i < 50; i++)
    v[i] = (i * 37 % 11) / 10.0;
  tally_interval_t a = tally_bootstrap(v, 50, 2000, 42, 0.95, scratch);
  tally_interval_t b = tally_bootstrap(v, 50, 2000, 42, 0.95, scratch);
  tally_interval_t c = tally_bootstrap(v, 50, 2000, 43, 0.95, scratch);
  cr_expect(memcmp(&a, &b, sizeof(a)) == 0);
  cr_expect(a.lower != c.lower || a.upper != c.upper);
  cr_expect(a.lower < a.mean && a.mean < a.upper);
  /* A wider confidence gives a wider interval. */
  tally_interval_t w = tally_bootstrap(v, 50, 2000, 42, 0.99, scratch);
  cr_expect(w.lower <= a.lower && w.upper >= a.upper);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The bootstrap as docs/benchmarks.md writes it, sorting every mean: the
 * selection tally does must give the same bits. */
Test(bootstrap, equals_the_sorted_definition) {
  uint64_t g = 99;
  static double v[300], scratch[5001], means[5001];
  for (int trial = 0; trial < 60; trial++) {
    size_t m = 2 + tally_splitmix64(&g) % 299;
    long resamples = 1 + (long)(tally_splitmix64(&g) % 5000);
    /* Few distinct values, so that ties are common. */
    for (size_t i = 0; i < m; i++)
      v[i] = (double)(tally_splitmix64(&g) % (trial % 2 ? 3 : 1000)) / 7.0;
    double conf = trial % 3 == 0 ? 0.95 : trial % 3 == 1 ? 0.5 : 0.999;
    uint64_t seed = tally_splitmix64(&g);
    tally_interval_t r = tally_bootstrap(v, m, resamples, seed, conf, scratch);
    uint64_t st = seed;
    for (long k = 0; k < resamples; k++) {
      double s = 0;
      for (size_t i = 0; i < m; i++)
        s += v[tally_draw_index(&st, m)];
      means[k] = s / (double)m;
    }
    qsort(means, (size_t)resamples, sizeof(double), cmp_double);
    double lo = tally_quantile(means, (size_t)resamples, (1 - conf) / 2);
    double hi = tally_quantile(means, (size_t)resamples, (1 + conf) / 2);
    cr_assert(r.lower == lo && r.upper == hi,
              "trial %d (m %zu, %ld resamples): [%.17g, %.17g], want "
              "[%.17g, %.17g]",
              trial, m, resamples, r.lower, r.upper, lo, hi);
  }
}

Test(bootstrap, zero_width_cases) {
  double scratch[100], one[] = {0.25};
  tally_interval_t r = tally_bootstrap(one, 1, 100, 42, 0.95, scratch);
  cr_expect(r.mean == 0.25 && r.lower == 0.25 && r.upper == 0.25);
  r = tally_bootstrap(one, 0, 100, 42, 0.95, scratch);
  cr_expect(r.mean == 0 && r.lower == 0 && r.upper == 0);
  double same[] = {0.5, 0.5, 0.5};
  r = tally_bootstrap(same, 3, 100, 42, 0.95, scratch);
  cr_expect(r.lower == 0.5 && r.upper == 0.5);
  r = tally_normal_interval(same, 3, 0.95);
  cr_expect(r.lower == 0.5 && r.upper == 0.5);
  r = tally_normal_interval(one, 1, 0.95);
  cr_expect(r.lower == 0.25 && r.upper == 0.25);
}

/* Over 400 synthetic benchmarks of 60 problems whose values are drawn
 * from a known distribution (mean 0.4), the 90% bootstrap interval
 * covers the true mean about 90% of the time. The generator is fixed, so
 * the count is too: the bounds allow for the bootstrap's known
 * undercoverage on small samples, not for chance. */
Test(bootstrap, covers_the_true_mean_at_about_the_stated_rate) {
  uint64_t g = 2024;
  double v[60], scratch[1000];
  int covered = 0, ncovered = 0;
  for (int trial = 0; trial < 400; trial++) {
    for (int i = 0; i < 60; i++) {
      /* A reward of 0, 0.5 or 1 with probabilities .5, .2, .3: mean .4 */
      double u = (double)(tally_splitmix64(&g) >> 11) / 9007199254740992.0;
      v[i] = u < 0.5 ? 0 : u < 0.7 ? 0.5 : 1;
    }
    tally_interval_t r =
        tally_bootstrap(v, 60, 1000, (uint64_t)trial, 0.90, scratch);
    covered += r.lower <= 0.4 && 0.4 <= r.upper;
    tally_interval_t n = tally_normal_interval(v, 60, 0.90);
    ncovered += n.lower <= 0.4 && 0.4 <= n.upper;
  }
  cr_expect(covered >= 340 && covered <= 380, "covered %d of 400", covered);
  cr_expect(ncovered >= 340 && ncovered <= 380, "normal covered %d of 400",
            ncovered);
}

Test(normal, quantiles) {
  cr_expect_float_eq(tally_normal_quantile(0.975), 1.959963984540054, 1e-12);
  cr_expect_float_eq(tally_normal_quantile(0.5), 0.0, 1e-12);
  cr_expect_float_eq(tally_normal_quantile(0.95), 1.6448536269514722, 1e-12);
  cr_expect_float_eq(tally_normal_quantile(0.995), 2.5758293035489004, 1e-12);
  cr_expect_float_eq(tally_normal_quantile(0.0005), -3.2905267314918945, 1e-10);
  double v[] = {0, 1, 0, 1};
  tally_interval_t r = tally_normal_interval(v, 4, 0.95);
  /* sd = 0.57735, se = 0.288675, z = 1.95996 */
  cr_expect_float_eq(r.lower, 0.5 - 1.959963984540054 * 0.28867513459481287,
                     1e-12);
}

/* The category of an error given as text. */
static const char *of(const char *error) {
  cJSON *e = cJSON_CreateString(error);
  const char *c = tally_failure_of_error(e);
  cJSON_Delete(e);
  return c;
}

Test(failure, each_error_rule) {
  cr_expect_str_eq(of("HTTP 504"), "server_error");
  cr_expect_str_eq(of("Gateway Timeout"), "server_error");
  cr_expect_str_eq(of("upstream timeout while reading"), "server_error");
  cr_expect_str_eq(of("Turn budget exhausted after 30 turns"),
                   "turn_budget_exhausted");
  cr_expect_str_eq(of("This model's maximum context length is 8192"),
                   "context_window_exceeded");
  cr_expect_str_eq(of("context window exceeded"), "context_window_exceeded");
  cr_expect_str_eq(of("token budget exceeded"), "budget_exceeded");
  cr_expect_str_eq(of("Error code: 429"), "rate_limit");
  cr_expect_str_eq(of("Rate limited"), "rate_limit");
  cr_expect_str_eq(of("408 Request Timeout"), "timeout");
  cr_expect_str_eq(of("read timeout"), "timeout");
  cr_expect_str_eq(of("500 Internal Server Error"), "server_error");
  cr_expect_str_eq(of("status 599"), "server_error");
  cr_expect_str_eq(of("Connection refused"), "server_error");
  cr_expect_str_eq(of("invalid api key"), "model_error");
  cr_expect_str_eq(of("400 Bad Request"), "model_error");
  /* A status is exactly three digits. */
  cr_expect_str_eq(of("code 5040"), "model_error");
  cr_expect_str_eq(of("code 1504"), "model_error");
  cJSON *n = cJSON_CreateNumber(429);
  cr_expect_str_eq(tally_failure_of_error(n), "rate_limit");
  cJSON_SetNumberValue(n, 503);
  cr_expect_str_eq(tally_failure_of_error(n), "server_error");
  cJSON_SetNumberValue(n, 401);
  cr_expect_str_eq(tally_failure_of_error(n), "model_error");
  cJSON_Delete(n);
}

Test(failure, the_first_rule_that_matches_wins) {
  /* 504 before the rest; turn budget before budget; context before
   * budget; budget before rate ("exceeded rate"); 429 before timeout;
   * timeout before 5xx; the word "rate" is anywhere, as in "generate". */
  cr_expect_str_eq(of("504 rate limit"), "server_error");
  cr_expect_str_eq(of("turn budget: context length"), "turn_budget_exhausted");
  cr_expect_str_eq(of("context length over the budget"),
                   "context_window_exceeded");
  cr_expect_str_eq(of("budget rate"), "budget_exceeded");
  cr_expect_str_eq(of("429 timeout"), "rate_limit");
  cr_expect_str_eq(of("timeout 503"), "timeout");
  cr_expect_str_eq(of("could not generate"), "rate_limit");
  cr_expect_str_eq(of("gateway timeout 429"), "server_error");
}

static const char *classify(const char *error, const char *response,
                            bool correct, int extracted) {
  cJSON *e = error != NULL ? cJSON_CreateString(error) : NULL;
  tally_sample_facts_t f = {.error = e,
                            .response = response,
                            .response_len = response ? strlen(response) : 0,
                            .correct = correct,
                            .extracted = (signed char)extracted};
  const char *c = tally_failure_classify(&f, NULL, 0);
  cJSON_Delete(e);
  return c;
}

Test(failure, responses) {
  cr_expect_str_eq(classify("rate limit", "Answer: B", true, 1), "rate_limit");
  cr_expect_null(classify("", "Answer: B", true, 1));
  cr_expect_str_eq(classify(NULL, "", false, 0), "empty");
  cr_expect_str_eq(classify(NULL, " \n\t\xe3\x80\x80", false, 0), "empty");
  cr_expect_str_eq(classify(NULL, "Well, I CANNOT do that", false, 1),
                   "refusal");
  /* A refusal is one even when the answer is right. */
  cr_expect_str_eq(classify(NULL, "I'm sorry, it is 42", true, 1), "refusal");
  cr_expect_str_eq(classify(NULL, "as an ai model", false, -1), "refusal");
  cr_expect_str_eq(classify(NULL, "no idea", false, 0), "format_error");
  cr_expect_null(classify(NULL, "no idea", true, 0));
  cr_expect_null(classify(NULL, "41", false, 1));
  cr_expect_null(classify(NULL, "41", false, -1));
  /* Without a response text, only the scorer's extraction counts. */
  cr_expect_str_eq(classify(NULL, NULL, false, 0), "format_error");
  cr_expect_null(classify(NULL, NULL, false, -1));
  const char *mine[] = {"nope"};
  tally_sample_facts_t f = {
      .response = "I cannot; nope", .response_len = 14, .extracted = -1};
  cr_expect_str_eq(tally_failure_classify(&f, mine, 1), "refusal");
  f.response = "I cannot";
  f.response_len = 8;
  cr_expect_null(tally_failure_classify(&f, mine, 1));
}

/* A scorer's cause (code_sandbox's reasons): after the error rules, empty
 * and refusal, before format_error; only for a sample not correct, and
 * only a category a scorer may name. */
Test(failure, the_scorers_cause) {
  tally_sample_facts_t f = {.response = "def f(): pass",
                            .response_len = 13,
                            .extracted = 0,
                            .cause = "execution_timeout"};
  cr_expect_str_eq(tally_failure_classify(&f, NULL, 0), "execution_timeout");
  f.cause = "test_failure";
  cr_expect_str_eq(tally_failure_classify(&f, NULL, 0), "test_failure");
  f.correct = true;
  cr_expect_null(tally_failure_classify(&f, NULL, 0));
  f.correct = false;
  f.cause = "refusal"; /* not a scorer's: the rules decide */
  cr_expect_str_eq(tally_failure_classify(&f, NULL, 0), "format_error");
  f.cause = "runtime_crash";
  f.response = "I cannot write that";
  f.response_len = 19;
  cr_expect_str_eq(tally_failure_classify(&f, NULL, 0), "refusal");
  cJSON *e = cJSON_CreateNumber(503);
  f.error = e;
  cr_expect_str_eq(tally_failure_classify(&f, NULL, 0), "server_error");
  cJSON_Delete(e);
  cr_expect(tally_failure_is_cause("output_limit"));
  cr_expect(!tally_failure_is_cause("timeout"));
  cr_expect(!tally_failure_is_cause(NULL));
}

Test(failure, previews_cut_at_characters) {
  char s[600];
  memset(s, 'a', 300);
  cr_expect_eq(tally_failure_preview_len(s, 300, 200), 200);
  /* 2-byte characters: 200 of them are 400 bytes. */
  for (int i = 0; i < 300; i++)
    memcpy(s + 2 * i, "\xc3\xa9", 2);
  cr_expect_eq(tally_failure_preview_len(s, 600, 200), 400);
  cr_expect_eq(tally_failure_preview_len("ab", 2, 200), 2);
}
