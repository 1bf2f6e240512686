/* GroupMul: a subtask scores the product of its outcomes. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

ParameterizedTestParameters(
    group_mul, scores_the_product_of_the_outcomes_of_each_subtask) {
  static ts_group_case_t cases[] = {
      {{1, 1, 1, 1}, 100, 40, {1, 1}, {40, 60}},
      {{1, 0.5, 1, 1}, 80, 20, {0.5, 1}, {20, 60}},
      {{0.5, 0.5, 1, 1}, 70, 10, {0.25, 1}, {10, 60}},
      {{0.5, 0.25, 0.75, 1}, 50, 5, {0.125, 0.75}, {5, 45}},
      {{1, 1, 0.5, 0.5}, 55, 40, {1, 0.25}, {40, 15}},
      {{0, 1, 1, 1}, 60, 0, {0, 1}, {0, 60}},
      /* 0.9 * 0.9 * 40 is 32.400000000000006 before rounding. */
      {{0.9, 0.9, 0.9, 0.9}, 81, 32.4, {0.81, 0.81}, {32.4, 48.6}},
      {{0.1, 0.2, 0.3, 0.7}, 13.4, 0.8, {0.02, 0.21}, {0.8, 12.6}},
  };
  return cr_make_param_array(ts_group_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(ts_group_case_t *c, group_mul,
                  scores_the_product_of_the_outcomes_of_each_subtask) {
  ts_expect_group_case("GroupMul", "[[40, 2], [60, 2]]", c);
}

typedef struct label_case_s {
  double outcome;
  char label[32];
} label_case_t;

ParameterizedTestParameters(group_mul, labels_outcomes_on_the_unit_scale) {
  static label_case_t cases[] = {
      {0.0, "Not correct"},
      {1.0, "Correct"},
      {0.5, "Partially correct"},
      {0.999999, "Partially correct"},
  };
  return cr_make_param_array(label_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(label_case_t *c, group_mul,
                  labels_outcomes_on_the_unit_scale) {
  const char *got =
      ts_label_of("{\"name\": \"g\", \"score_type\": \"GroupMul\", "
                  "\"score_type_parameters\": [[10, 1]], \"testcases\": "
                  "{\"a\": true}}",
                  c->outcome);
  cr_assert_not_null(got);
  cr_expect_str_eq(got, c->label, "outcome %g", c->outcome);
}

Test(group_mul, multiplies_in_the_order_of_an_explicit_list) {
  /* (0.1 * 0.3) * 0.2 and (0.1 * 0.2) * 0.3 differ in the last bit; the
   * fraction must be the product in the listed order. */
  double listed = (0.1 * 0.3) * 0.2;
  double sorted = (0.1 * 0.2) * 0.3;
  cr_assert(listed != sorted, "the outcomes no longer tell the orders apart");
  cJSON *res =
      ts_run("{\"name\": \"g\", \"score_type\": \"GroupMul\", "
             "\"score_type_parameters\": [[1, [\"a\", \"c\", \"b\"]]], "
             "\"testcases\": {\"a\": true, \"b\": true, \"c\": true}, "
             "\"score_rounding\": \"none\"}",
             "{\"evaluations\": {\"a\": 0.1, \"b\": 0.2, \"c\": 0.3}}");
  cr_assert_not_null(res);
  double got = ts_num_at(res, "details[0].score_fraction");
  cr_expect(got == listed, "expected %.17g, got %.17g", listed, got);
  cr_expect(ts_num(res, "score") == listed, "score %.17g",
            ts_num(res, "score"));
  cJSON_Delete(res);
}
