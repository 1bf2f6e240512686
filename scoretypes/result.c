/* Result buffers, Python-compatible rounding, and the testcase lookup
 * every score type uses. */
#include "scoretypes/scoretype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_result_init(tally_result_t *res) {
  memset(res, 0, sizeof(*res));
}

void tally_result_close(tally_result_t *res) {
  free(res->tcs);
  free(res->sts);
  free(res->scratch);
  memset(res, 0, sizeof(*res));
}

void tally_result_reset(tally_result_t *res) {
  res->evaluated = true;
  res->grouped = false;
  res->score = 0.0;
  res->public_score = 0.0;
  res->ntcs = 0;
  res->nsts = 0;
}

/* Grows *buf (of *cap elements of size elem) so that one more fits. */
static int grow(void **buf, size_t *cap, size_t used, size_t elem) {
  if (used < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 64;
  void *n = realloc(*buf, ncap * elem);
  if (n == NULL)
    return TALLY_ENOMEM;
  *buf = n;
  *cap = ncap;
  return 0;
}

tally_tc_result_t *tally_result_push_tc(tally_result_t *res) {
  if (grow((void **)&res->tcs, &res->tcs_cap, res->ntcs, sizeof(*res->tcs)))
    return NULL;
  return &res->tcs[res->ntcs++];
}

tally_st_result_t *tally_result_push_st(tally_result_t *res) {
  if (grow((void **)&res->sts, &res->sts_cap, res->nsts, sizeof(*res->sts)))
    return NULL;
  return &res->sts[res->nsts++];
}

/* glibc's printf rounds the exact binary value correctly, honouring the
 * rounding mode (ties to even by default), and strtod reads the digits
 * back correctly rounded: the same two steps as CPython's float.__round__.
 * The buffer fits any double with up to 10 fractional digits.
 *
 * Most values take a shorter way to the same double. With p = 10^ndigits
 * (exact), y = x * p is within half an ulp of the exact product X; when y
 * is more than an ulp away from every half-integer, X rounds (ties to
 * even, as nearbyint in the default mode) to the same integer r as y, so
 * the digits printf would write are those of r / p; r below 2^53 and p
 * are exact, so the division rounds the real r / p correctly, as strtod
 * reads those digits. Near a half-integer (a tie in decimal, or within
 * the product's error of one) and for large values, printf decides. */
double tally_round(double x, int ndigits) {
  static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5,
                                 1e6, 1e7, 1e8, 1e9, 1e10};
  char buf[400];
  if (!isfinite(x) || ndigits < 0 || ndigits > 10)
    return x;
  double p = pow10[ndigits], y = x * p;
  if (fabs(y) < 4503599627370496.0) { /* 2^52 */
    double r = nearbyint(y);
    double d = fabs(y - r); /* exact: r is y's nearest integer */
    if (fabs(d - 0.5) > fabs(y) * 0x1p-52)
      return r / p;
  }
  snprintf(buf, sizeof(buf), "%.*f", ndigits, x);
  return strtod(buf, NULL);
}

long tally_task_find_testcase(const tally_task_t *task, const char *codename) {
  size_t lo = 0, hi = task->ntestcases;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(task->testcases[mid].codename, codename);
    if (c == 0)
      return (long)mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}
