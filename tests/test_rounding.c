/* score_rounding and score_precision for group score types: "subtask"
 * rounds each subtask and then the total, "none" leaves totals alone. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#define TWO_SUBTASKS(pub_b, extra)                                             \
  "{\"name\": \"g\", \"score_type\": \"GroupMin\", "                           \
  "\"score_type_parameters\": [[10, 1], [10, 1]], \"testcases\": {\"a\": "     \
  "true, \"b\": " pub_b "}" extra "}"
#define HALVES "{\"evaluations\": {\"a\": 0.45, \"b\": 0.45}}"

Test(rounding, rounds_each_subtask_before_adding_in_subtask_mode) {
  /* 0.45 * 10 is 4.5, which rounds to 4 (ties to even): 4 + 4, not 9. */
  cJSON *res = ts_run(TWO_SUBTASKS("true", ", \"score_rounding\": "
                                           "\"subtask\""),
                      HALVES);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 8);
  cr_expect_eq(ts_num(res, "public_score"), 8);
  cr_expect_eq(ts_num_at(res, "details[0].score"), 4);
  cr_expect_eq(ts_num_at(res, "details[1].score"), 4);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "4");
  cr_expect_str_eq(ts_str_at(res, "ranking_details[1]"), "4");
  cJSON_Delete(res);
}

Test(rounding, uses_subtask_mode_and_zero_digits_by_default) {
  cJSON *res = ts_run(TWO_SUBTASKS("true", ""), HALVES);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 8);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "4");
  cJSON_Delete(res);
}

Test(rounding, adds_unrounded_subtask_scores_in_none_mode) {
  cJSON *res =
      ts_run(TWO_SUBTASKS("true", ", \"score_rounding\": \"none\""), HALVES);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 9);
  cr_expect_eq(ts_num(res, "public_score"), 9);
  /* details still show each subtask's score rounded... */
  cr_expect_eq(ts_num_at(res, "details[0].score"), 4);
  cr_expect_eq(ts_num_at(res, "details[1].score"), 4);
  /* ...but the ranking shows the unrounded one. */
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "4.5");
  cr_expect_str_eq(ts_str_at(res, "ranking_details[1]"), "4.5");
  cJSON_Delete(res);
}

Test(rounding, counts_only_public_subtasks_unrounded_in_none_mode) {
  cJSON *res =
      ts_run(TWO_SUBTASKS("false", ", \"score_rounding\": \"none\""), HALVES);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "public_score"), 4.5);
  cr_expect_eq(ts_num(res, "max_public_score"), 10);
  cJSON_Delete(res);
}

Test(rounding, counts_only_public_subtasks_rounded_in_subtask_mode) {
  cJSON *res = ts_run(TWO_SUBTASKS("false", ""), HALVES);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "public_score"), 4);
  cJSON_Delete(res);
}

#define TENTHS(extra)                                                          \
  "{\"name\": \"g\", \"score_type\": \"GroupMin\", "                           \
  "\"score_type_parameters\": [[0.1, 1], [0.2, 1]], \"testcases\": {\"a\": "   \
  "true, \"b\": true}, \"score_precision\": 1" extra "}"
#define ONES "{\"evaluations\": {\"a\": 1, \"b\": 1}}"

static char *score_text(const char *task_json, const char *job) {
  tally_task_t *task = ts_task(task_json, NULL, 0);
  cr_assert_not_null(task);
  char *text = ts_score_text(task, job);
  cr_assert_not_null(text);
  tally_task_free(task);
  return text;
}

Test(rounding, rounds_the_sum_of_rounded_subtasks_once_more) {
  /* 0.1 + 0.2 is 0.30000000000000004; rounded once more it is 0.3. */
  char *text = score_text(TENTHS(""), ONES);
  cr_expect(strstr(text, "\"score\":0.3,") != NULL, "%s", text);
  cr_expect(strstr(text, "\"public_score\":0.3,") != NULL, "%s", text);
  /* The maximum is the plain float sum of the max scores. */
  cr_expect(strstr(text, "\"max_score\":0.30000000000000004,") != NULL, "%s",
            text);
  cr_expect(strstr(text, "\"max_public_score\":0.30000000000000004,") != NULL,
            "%s", text);
  free(text);
}

Test(rounding, leaves_the_float_sum_unrounded_in_none_mode) {
  char *text = score_text(TENTHS(", \"score_rounding\": \"none\""), ONES);
  cr_expect(strstr(text, "\"score\":0.30000000000000004,") != NULL, "%s", text);
  cr_expect(strstr(text, "\"public_score\":0.30000000000000004,") != NULL, "%s",
            text);
  free(text);
}

Test(rounding, shows_unrounded_scores_with_g_in_none_mode_rankings) {
  const char *job = "{\"evaluations\": {\"a\": 0.33333333333333331}}";
  const char *none = "{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                     "\"score_type_parameters\": [[100, 1]], \"testcases\": "
                     "{\"a\": true}, \"score_precision\": 2, "
                     "\"score_rounding\": \"none\"}";
  cJSON *res = ts_run(none, job);
  cr_assert_not_null(res);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "33.3333");
  cr_expect_eq(ts_num_at(res, "details[0].score"), 33.33);
  cr_expect_eq(ts_num(res, "score"), 100 * 0.33333333333333331);
  cJSON_Delete(res);
  const char *subtask = "{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                        "\"score_type_parameters\": [[100, 1]], "
                        "\"testcases\": {\"a\": true}, \"score_precision\": 2}";
  res = ts_run(subtask, job);
  cr_assert_not_null(res);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "33.33");
  cr_expect_eq(ts_num(res, "score"), 33.33);
  cJSON_Delete(res);
}

Test(rounding, adds_subtasks_in_order_from_zero_in_none_mode) {
  /* 1 + 1e-16 + 1e-16 in that order is exactly 1: each tiny score is lost
   * against 1 in turn. */
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[1, 1], [1e-16, 1], "
                      "[1e-16, 1]], \"testcases\": {\"a\": true, \"b\": "
                      "true, \"c\": true}, \"score_rounding\": \"none\"}",
                      "{\"evaluations\": {\"a\": 1, \"b\": 1, \"c\": 1}}");
  cr_assert_not_null(res);
  cr_expect(ts_num(res, "score") == 1.0, "score %.17g", ts_num(res, "score"));
  cr_expect(ts_num(res, "max_score") == 1.0, "max %.17g",
            ts_num(res, "max_score"));
  cJSON_Delete(res);
}

typedef struct subtask_round_case_s {
  double max_score;
  int precision;
  double rounded;
} subtask_round_case_t;

ParameterizedTestParameters(rounding, rounds_subtask_scores_like_python) {
  static subtask_round_case_t cases[] = {
      {2.675, 2, 2.67}, {0.125, 2, 0.12},
      {0.375, 2, 0.38}, {2.5, 0, 2.0},
      {3.5, 0, 4.0},    {1.005, 2, 1.0},
      {8.345, 2, 8.35}, {1.0 / 3, 10, 0.3333333333},
  };
  return cr_make_param_array(subtask_round_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(subtask_round_case_t *c, rounding,
                  rounds_subtask_scores_like_python) {
  char task_json[256];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"g\", \"score_type\": \"GroupMin\", "
           "\"score_type_parameters\": [[%.17g, 1]], \"testcases\": {\"a\": "
           "true}, \"score_precision\": %d}",
           c->max_score, c->precision);
  cJSON *res = ts_run(task_json, "{\"evaluations\": {\"a\": 1}}");
  cr_assert_not_null(res);
  cr_expect(ts_num_at(res, "details[0].score") == c->rounded,
            "details score %.17g", ts_num_at(res, "details[0].score"));
  cr_expect(ts_num(res, "score") == c->rounded, "score %.17g",
            ts_num(res, "score"));
  cr_expect(ts_num(res, "public_score") == c->rounded);
  cr_expect(ts_num(res, "max_score") == c->max_score);
  cJSON_Delete(res);
}
