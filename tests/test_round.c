/* tally_round against Python's round(x, n): exact binary value, ties to
 * even. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct round_case_s {
  double x;
  int ndigits;
  double expected; /* what CPython's round(x, ndigits) returns */
} round_case_t;

ParameterizedTestParameters(round, matches_python_round) {
  static round_case_t cases[] = {
      /* The ties and near-ties of the spec. */
      {0.125, 2, 0.12},
      {2.675, 2, 2.67},
      {0.375, 2, 0.38},
      {2.5, 0, 2.0},
      {3.5, 0, 4.0},
      /* More exact ties go to even. */
      {0.5, 0, 0.0},
      {1.5, 0, 2.0},
      {-2.5, 0, -2.0},
      {-0.125, 2, -0.12},
      {1.25, 1, 1.2},
      /* Decimal-looking ties that are not ties in binary. */
      {1.005, 2, 1.0},
      {0.285, 2, 0.28},
      {1.35, 1, 1.4},
      {2.345, 2, 2.35},
      {0.045, 2, 0.04},
      {8.345, 2, 8.35},
      /* Ordinary values. */
      {123.456789, 4, 123.4568},
      {33.333333333, 3, 33.333},
      {0.30000000000000004, 10, 0.3},
      {1.0000000005, 9, 1.000000001},
      {5e-11, 10, 1e-10},
      {1.5e-10, 10, 1e-10},
      {42.0, 0, 42.0},
      {23.1, 2, 23.1},
      {1000000000000000.5, 0, 1000000000000000.0},
      {5e-324, 10, 0.0},
      {1.7976931348623157e308, 2, 1.7976931348623157e308},
  };
  return cr_make_param_array(round_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(round_case_t *c, round, matches_python_round) {
  double got = tally_round(c->x, c->ndigits);
  cr_expect(got == c->expected, "round(%.17g, %d): expected %.17g, got %.17g",
            c->x, c->ndigits, c->expected, got);
}

Test(round, keeps_the_sign_of_a_negative_value_that_rounds_to_zero) {
  double got = tally_round(-0.4, 0);
  cr_expect(got == 0.0 && signbit(got), "got %g", got);
}

Test(round, returns_non_finite_values_unchanged) {
  cr_expect(isinf(tally_round(INFINITY, 2)));
  cr_expect(isinf(tally_round(-INFINITY, 2)) && tally_round(-INFINITY, 2) < 0);
  cr_expect(isnan(tally_round(NAN, 2)));
}

Test(round, returns_the_value_unchanged_for_precisions_outside_0_to_10) {
  cr_expect(tally_round(2.675, -1) == 2.675);
  cr_expect(tally_round(2.675, 11) == 2.675);
}

Test(round, is_the_identity_on_values_that_already_have_few_digits) {
  static const double values[] = {0.0, 1.0, 0.1, 0.2, 10.5, 99.99, 1e9};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
    for (int n = 2; n <= 10; n++)
      cr_expect(tally_round(values[i], n) == values[i], "%g at %d", values[i],
                n);
}

/* The reference: printf's correctly rounded digits read back by strtod,
 * which tally_round's shortcut must always agree with. */
static double by_printf(double x, int n) {
  char buf[400];
  snprintf(buf, sizeof(buf), "%.*f", n, x);
  return strtod(buf, NULL);
}

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void expect_same(double x, int n) {
  double got = tally_round(x, n), want = isfinite(x) ? by_printf(x, n) : x;
  cr_assert(memcmp(&got, &want, sizeof(got)) == 0,
            "round(%.17g, %d): %.17g, printf and strtod give %.17g", x, n, got,
            want);
}

Test(round, agrees_with_printf_on_random_values_and_near_ties) {
  for (int i = 0; i < 2000000; i++) {
    uint64_t u = next_u64();
    int n = (int)(u % 11);
    double x;
    switch (u >> 60) {
    case 0: /* any bit pattern */
      memcpy(&x, &(uint64_t){next_u64()}, sizeof(x));
      break;
    case 1: /* a decimal tie k + 0.5 at n digits, and its neighbours */
      x = ((double)(int64_t)(next_u64() % 2000001) - 1000000 + 0.5) /
          (double)(uint64_t)pow(10, n);
      x = nextafter(x, (u >> 8) & 1 ? INFINITY : -INFINITY);
      if ((u >> 9) & 1)
        x = nextafter(x, (u >> 10) & 1 ? INFINITY : -INFINITY);
      break;
    case 2: /* scores as a task computes them */
      x = (double)(next_u64() % 100001) / 1000.0 *
          ((double)(next_u64() % 1000) / 999.0);
      break;
    default: /* a wide range of magnitudes */
      x = ldexp((double)(next_u64() >> 11), (int)(next_u64() % 140) - 120);
      if (u & 1)
        x = -x;
    }
    expect_same(x, n);
  }
  /* Signed zeros and values that round to zero keep their sign. */
  for (int n = 0; n <= 10; n++) {
    expect_same(0.0, n);
    expect_same(-0.0, n);
    expect_same(-1e-12, n);
    expect_same(4503599627370495.5, n);
    expect_same(-4503599627370497.0, n);
  }
}
