/* GroupMin: a subtask scores the lowest of its outcomes. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

ParameterizedTestParameters(group_min,
                            scores_the_lowest_outcome_of_each_subtask) {
  static ts_group_case_t cases[] = {
      {{1, 1, 1, 1}, 100, 40, {1, 1}, {40, 60}},
      {{1, 0.5, 1, 1}, 80, 20, {0.5, 1}, {20, 60}},
      {{0, 1, 1, 1}, 60, 0, {0, 1}, {0, 60}},
      {{1, 1, 0.3, 1}, 58, 40, {1, 0.3}, {40, 18}},
      {{0.5, 0.25, 0.75, 1}, 55, 10, {0.25, 0.75}, {10, 45}},
      {{0, 0, 0, 0}, 0, 0, {0, 0}, {0, 0}},
      {{0.9, 0.9, 0.9, 0.9}, 90, 36, {0.9, 0.9}, {36, 54}},
      /* 40/3 = 13.333... rounds to 13.33 before it is added up. */
      {{1.0 / 3, 1, 1, 2.0 / 3}, 53.33, 13.33, {1.0 / 3, 2.0 / 3}, {13.33, 40}},
  };
  return cr_make_param_array(ts_group_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(ts_group_case_t *c, group_min,
                  scores_the_lowest_outcome_of_each_subtask) {
  ts_expect_group_case("GroupMin", "[[40, 2], [60, 2]]", c);
}

ParameterizedTestParameters(group_min,
                            scores_the_same_with_subtasks_given_as_objects) {
  static ts_group_case_t cases[] = {
      {{1, 0.5, 1, 1}, 80, 20, {0.5, 1}, {20, 60}},
      {{0.5, 0.25, 0.75, 1}, 55, 10, {0.25, 0.75}, {10, 45}},
  };
  return cr_make_param_array(ts_group_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(ts_group_case_t *c, group_min,
                  scores_the_same_with_subtasks_given_as_objects) {
  ts_expect_group_case("GroupMin",
                       "[{\"max_score\": 40, \"testcases\": 2}, "
                       "{\"testcases\": 2, \"max_score\": 60}]",
                       c);
}

typedef struct label_case_s {
  double outcome;
  char label[32];
} label_case_t;

ParameterizedTestParameters(group_min, labels_outcomes_on_the_unit_scale) {
  static label_case_t cases[] = {
      {0.0, "Not correct"},
      {1.0, "Correct"},
      {0.5, "Partially correct"},
      {1e-12, "Partially correct"},
      {0.999999, "Partially correct"},
  };
  return cr_make_param_array(label_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(label_case_t *c, group_min,
                  labels_outcomes_on_the_unit_scale) {
  const char *got =
      ts_label_of("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                  "\"score_type_parameters\": [[10, 1]], \"testcases\": "
                  "{\"a\": true}}",
                  c->outcome);
  cr_assert_not_null(got);
  cr_expect_str_eq(got, c->label, "outcome %g", c->outcome);
}

Test(group_min, scores_a_single_testcase_subtask_by_its_outcome) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[12.5, 1]], "
                      "\"testcases\": {\"a\": false}, \"score_precision\": 3}",
                      "{\"evaluations\": {\"a\": 0.5}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 6.25);
  cr_expect_eq(ts_num(res, "public_score"), 0);
  cr_expect_eq(ts_num(res, "max_score"), 12.5);
  cr_expect_eq(ts_num(res, "max_public_score"), 0);
  cr_expect_str_eq(ts_str_at(res, "ranking_headers[0]"), "Subtask 0 (12.5)");
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "6.25");
  cJSON_Delete(res);
}

Test(group_min, gives_nothing_for_a_subtask_worth_zero) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[0, 1], [10, 1]], "
                      "\"testcases\": {\"a\": true, \"b\": true}}",
                      "{\"evaluations\": {\"a\": 1, \"b\": 1}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 10);
  cr_expect_eq(ts_num(res, "max_score"), 10);
  cr_expect_eq(ts_num_at(res, "details[0].score"), 0);
  cr_expect_eq(ts_num_at(res, "details[0].score_fraction"), 1);
  cr_expect_str_eq(ts_str_at(res, "ranking_headers[0]"), "Subtask 0 (0)");
  cJSON_Delete(res);
}
