/* tally_round against Python's round(x, n): exact binary value, ties to
 * even. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>

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
