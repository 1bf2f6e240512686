/* GroupThreshold: a subtask scores in full when every outcome lies in
 * (0, threshold], and nothing otherwise. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

ParameterizedTestParameters(group_threshold,
                            scores_all_or_nothing_against_the_threshold) {
  static ts_group_case_t cases[] = {
      {{0.3, 0.5, 0.9, 1}, 100, 40, {1, 1}, {40, 60}},
      {{0.5, 0.5, 1, 1}, 100, 40, {1, 1}, {40, 60}},
      {{0.6, 0.1, 0.9, 1}, 60, 0, {0, 1}, {0, 60}},
      /* 0 is not above 0. */
      {{0, 0.1, 0.9, 1}, 60, 0, {0, 1}, {0, 60}},
      /* Outcomes outside [0, 1] are allowed: they are times, say. */
      {{0.3, 0.5, 2, 1}, 40, 40, {1, 0}, {40, 0}},
      {{0.3, 0.5, -1, 0.5}, 40, 40, {1, 0}, {40, 0}},
      {{1e-9, 0.5, 5, 1}, 40, 40, {1, 0}, {40, 0}},
  };
  return cr_make_param_array(ts_group_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(ts_group_case_t *c, group_threshold,
                  scores_all_or_nothing_against_the_threshold) {
  ts_expect_group_case("GroupThreshold", "[[40, 2, 0.5], [60, 2, 1.0]]", c);
}

ParameterizedTestParameters(group_threshold,
                            reads_the_threshold_from_subtask_objects) {
  static ts_group_case_t cases[] = {
      {{0.3, 0.5, 0.9, 1}, 100, 40, {1, 1}, {40, 60}},
      {{0.6, 0.1, 0.9, 1}, 60, 0, {0, 1}, {0, 60}},
      {{0.3, 0.5, 2, 1}, 40, 40, {1, 0}, {40, 0}},
  };
  return cr_make_param_array(ts_group_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(ts_group_case_t *c, group_threshold,
                  reads_the_threshold_from_subtask_objects) {
  ts_expect_group_case("GroupThreshold",
                       "[{\"max_score\": 40, \"testcases\": 2, \"threshold\": "
                       "0.5}, {\"threshold\": 1, \"testcases\": 2, "
                       "\"max_score\": 60}]",
                       c);
}

typedef struct label_case_s {
  double threshold;
  double outcome;
  char label[32];
} label_case_t;

ParameterizedTestParameters(group_threshold,
                            labels_correct_exactly_inside_the_threshold) {
  static label_case_t cases[] = {
      {0.5, 0.5, "Correct"},           {0.5, 0.25, "Correct"},
      {0.5, 1e-12, "Correct"},         {0.5, 0.0, "Not correct"},
      {0.5, 0.5000001, "Not correct"}, {0.5, -1.0, "Not correct"},
      {0.5, 100.0, "Not correct"},     {2.0, 1.5, "Correct"},
      {2.0, 2.0, "Correct"},           {2.0, 2.5, "Not correct"},
  };
  return cr_make_param_array(label_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(label_case_t *c, group_threshold,
                  labels_correct_exactly_inside_the_threshold) {
  char task_json[256];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"g\", \"score_type\": \"GroupThreshold\", "
           "\"score_type_parameters\": [[10, 1, %.17g]], \"testcases\": "
           "{\"a\": true}}",
           c->threshold);
  const char *got = ts_label_of(task_json, c->outcome);
  cr_assert_not_null(got);
  cr_expect_str_eq(got, c->label, "outcome %g, threshold %g", c->outcome,
                   c->threshold);
}

Test(group_threshold, uses_each_subtask_its_own_threshold) {
  /* 0.7 passes the first subtask's threshold but not the second's, though
   * both subtasks hold the same testcase. */
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupThreshold\", "
                      "\"score_type_parameters\": [[30, [\"a\"], 1], [70, "
                      "[\"a\"], 0.5]], \"testcases\": {\"a\": true}}",
                      "{\"evaluations\": {\"a\": 0.7}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 30);
  cr_expect_str_eq(ts_str_at(res, "details[0].testcases[0].outcome"),
                   "Correct");
  cr_expect_str_eq(ts_str_at(res, "details[1].testcases[0].outcome"),
                   "Not correct");
  cJSON_Delete(res);
}
