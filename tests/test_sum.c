/* Sum: totals, labels, detail shapes and rounding, against the tables of
 * CMS's own tests and the spec. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

/* Sum 10.5 over the public map {0: F, 1: T, 2: F, 3: F}, as in CMS. */
#define CMS_TASK(extra)                                                        \
  "{\"name\": \"s\", \"score_type\": \"Sum\", \"score_type_parameters\": "     \
  "10.5, \"testcases\": {\"0\": false, \"1\": true, \"2\": false, \"3\": "     \
  "false}" extra "}"

static const char *const codenames4[] = {"0", "1", "2", "3"};

typedef struct sum_case_s {
  double outcomes[4];
  double total;
  double public_total;
} sum_case_t;

ParameterizedTestParameters(sum, matches_cms_table) {
  static sum_case_t cases[] = {
      {{1, 1, 1, 1}, 42.0, 10.5},
      {{1, 1, 1, 0}, 31.5, 10.5},
      {{1, 0, 1, 0}, 21.0, 0},
      {{1, 0.2, 1, 0}, 23.1, 2.1},
      {{0, 0, 0, 0}, 0, 0},
      {{0, 1, 0, 0}, 10.5, 10.5},
      {{0.5, 0.5, 0.5, 0.5}, 21.0, 5.25},
      {{0.1, 0.1, 0.1, 0.1}, 4.2, 1.05},
  };
  return cr_make_param_array(sum_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(sum_case_t *c, sum, matches_cms_table) {
  char err[256] = "";
  tally_task_t *task =
      ts_task(CMS_TASK(", \"score_precision\": 2"), err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  cJSON *res = ts_score(task, ts_job(4, codenames4, c->outcomes));
  cr_assert_not_null(res);
  cr_expect_float_eq(ts_num(res, "score"), c->total, 1e-9);
  cr_expect_float_eq(ts_num(res, "public_score"), c->public_total, 1e-9);
  cr_expect_float_eq(ts_num(res, "max_score"), 42.0, 1e-12);
  cr_expect_float_eq(ts_num(res, "max_public_score"), 10.5, 1e-12);
  cJSON_Delete(res);
  tally_task_free(task);
}

/* The same table, but the totals must be exact once rounded. */
ParameterizedTestParameters(sum, rounds_totals_to_the_exact_decimal) {
  static sum_case_t cases[] = {
      {{1, 0.2, 1, 0}, 23.1, 2.1},
      {{0.1, 0.1, 0.1, 0.1}, 4.2, 1.05},
      {{0.3, 0.3, 0.3, 0.3}, 12.6, 3.15},
  };
  return cr_make_param_array(sum_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(sum_case_t *c, sum, rounds_totals_to_the_exact_decimal) {
  tally_task_t *task = ts_task(CMS_TASK(", \"score_precision\": 2"), NULL, 0);
  cr_assert_not_null(task);
  cJSON *res = ts_score(task, ts_job(4, codenames4, c->outcomes));
  cr_expect(ts_num(res, "score") == c->total, "score %.17g",
            ts_num(res, "score"));
  cr_expect(ts_num(res, "public_score") == c->public_total, "public %.17g",
            ts_num(res, "public_score"));
  cJSON_Delete(res);
  tally_task_free(task);
}

typedef struct label_case_s {
  double parameter;
  double outcome;
  char label[32]; /* inline: parameters are copied into the test process */
} label_case_t;

ParameterizedTestParameters(sum, labels_each_testcase_by_its_score) {
  static label_case_t cases[] = {
      {10.5, 0.0, "Not correct"},
      {10.5, 1.0, "Correct"},
      {10.5, 0.5, "Partially correct"},
      {10.5, 1e-9, "Partially correct"},
      {10.5, 0.999999, "Partially correct"},
      {1.0, 1.0, "Correct"},
      /* A zero parameter makes every score 0, which is "Not correct". */
      {0.0, 1.0, "Not correct"},
      {0.0, 0.5, "Not correct"},
  };
  return cr_make_param_array(label_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(label_case_t *c, sum, labels_each_testcase_by_its_score) {
  char task_json[256], job[128];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"s\", \"score_type\": \"Sum\", "
           "\"score_type_parameters\": %.17g, \"testcases\": {\"a\": true}}",
           c->parameter);
  snprintf(job, sizeof(job), "{\"evaluations\": {\"a\": %.17g}}", c->outcome);
  cJSON *res = ts_run(task_json, job);
  cr_assert_not_null(res);
  cr_expect_str_eq(ts_str_at(res, "details[0].outcome"), c->label);
  cr_expect_str_eq(ts_str_at(res, "public_details[0].outcome"), c->label);
  cJSON_Delete(res);
}

Test(sum, lists_details_in_codename_byte_order) {
  cJSON *res = ts_run("{\"name\": \"s\", \"score_type\": \"Sum\", "
                      "\"score_type_parameters\": 1, \"testcases\": {\"2\": "
                      "true, \"10\": true, \"b\": true, \"B\": true, \"1\": "
                      "true}}",
                      "{\"evaluations\": {\"1\": 1, \"10\": 1, \"2\": 1, "
                      "\"b\": 1, \"B\": 1}}");
  cr_assert_not_null(res);
  static const char *const order[] = {"1", "10", "2", "B", "b"};
  cr_assert_eq(ts_len_at(res, "details"), 5);
  for (int i = 0; i < 5; i++) {
    char path[32];
    snprintf(path, sizeof(path), "details[%d].idx", i);
    cr_expect_str_eq(ts_str_at(res, path), order[i], "at %d", i);
  }
  cJSON_Delete(res);
}

Test(sum, echoes_text_time_and_memory_and_writes_null_when_absent) {
  cJSON *res = ts_run(
      CMS_TASK(""),
      "{\"submission\": \"x\", \"evaluations\": {\"0\": {\"outcome\": 1, "
      "\"text\": [\"Output is correct\"], \"time\": 0.25, \"memory\": 1024}, "
      "\"1\": {\"outcome\": 0.5, \"text\": \"half\"}, \"2\": 0, \"3\": "
      "{\"outcome\": 0, \"text\": null, \"time\": null}}}");
  cr_assert_not_null(res);
  char *d0 = ts_json_at(res, "details[0]");
  cr_expect_str_eq(d0, "{\"idx\":\"0\",\"outcome\":\"Correct\",\"text\":["
                       "\"Output is correct\"],\"time\":0.25,\"memory\":1024}");
  free(d0);
  char *d1 = ts_json_at(res, "details[1]");
  cr_expect_str_eq(d1, "{\"idx\":\"1\",\"outcome\":\"Partially correct\","
                       "\"text\":\"half\",\"time\":null,\"memory\":null}");
  free(d1);
  char *d2 = ts_json_at(res, "details[2]");
  cr_expect_str_eq(d2, "{\"idx\":\"2\",\"outcome\":\"Not correct\","
                       "\"text\":null,\"time\":null,\"memory\":null}");
  free(d2);
  char *d3 = ts_json_at(res, "details[3]");
  cr_expect_str_eq(d3, "{\"idx\":\"3\",\"outcome\":\"Not correct\","
                       "\"text\":null,\"time\":null,\"memory\":null}");
  free(d3);
  cJSON_Delete(res);
}

Test(sum, shows_private_testcases_in_public_details_as_just_their_idx) {
  double outcomes[] = {1, 0.2, 1, 0};
  tally_task_t *task = ts_task(CMS_TASK(""), NULL, 0);
  cr_assert_not_null(task);
  cJSON *res = ts_score(task, ts_job(4, codenames4, outcomes));
  cr_assert_not_null(res);
  cr_assert_eq(ts_len_at(res, "public_details"), 4);
  for (int i = 0; i < 4; i++) {
    char path[32];
    snprintf(path, sizeof(path), "public_details[%d]", i);
    char *got = ts_json_at(res, path);
    if (i == 1) {
      char *full = ts_json_at(res, "details[1]");
      cr_expect_str_eq(got, full, "the public testcase is shown whole");
      free(full);
    } else {
      char want[32];
      snprintf(want, sizeof(want), "{\"idx\":\"%d\"}", i);
      cr_expect_str_eq(got, want);
    }
    free(got);
  }
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(sum, has_empty_ranking_details_and_headers) {
  double outcomes[] = {1, 1, 1, 1};
  tally_task_t *task = ts_task(CMS_TASK(""), NULL, 0);
  cr_assert_not_null(task);
  cJSON *res = ts_score(task, ts_job(4, codenames4, outcomes));
  cr_expect_eq(ts_len_at(res, "ranking_details"), 0);
  cr_expect_eq(ts_len_at(res, "ranking_headers"), 0);
  cr_expect_str_eq(ts_str_at(res, "task"), "s");
  cr_expect_eq(ts_num_at(res, "submission"), 1);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(sum, counts_nothing_public_when_every_testcase_is_private) {
  cJSON *res = ts_run("{\"name\": \"s\", \"score_type\": \"Sum\", "
                      "\"score_type_parameters\": 5, \"testcases\": {\"a\": "
                      "false, \"b\": {\"public\": false}}}",
                      "{\"evaluations\": {\"a\": 1, \"b\": 1}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 10);
  cr_expect_eq(ts_num(res, "max_score"), 10);
  cr_expect_eq(ts_num(res, "public_score"), 0);
  cr_expect_eq(ts_num(res, "max_public_score"), 0);
  cJSON_Delete(res);
}

Test(sum, rounds_to_zero_digits_by_default) {
  double outcomes[] = {1, 0.2, 1, 0};
  tally_task_t *task = ts_task(CMS_TASK(""), NULL, 0);
  cr_assert_not_null(task);
  cJSON *res = ts_score(task, ts_job(4, codenames4, outcomes));
  cr_expect_eq(ts_num(res, "score"), 23.0);       /* round(23.1) */
  cr_expect_eq(ts_num(res, "public_score"), 2.0); /* round(2.1) */
  cr_expect_eq(ts_num(res, "max_score"), 42.0);
  cr_expect_eq(ts_num(res, "max_public_score"), 10.5); /* never rounded */
  cJSON_Delete(res);
  tally_task_free(task);
}

typedef struct sum_round_case_s {
  double parameter;
  int precision;
  double expected; /* total with one testcase, outcome 1 */
} sum_round_case_t;

ParameterizedTestParameters(sum, rounds_totals_like_python) {
  static sum_round_case_t cases[] = {
      {0.125, 2, 0.12}, {2.675, 2, 2.67}, {0.375, 2, 0.38}, {2.5, 0, 2.0},
      {3.5, 0, 4.0},    {0.5, 0, 0.0},    {1.005, 2, 1.0},  {2.345, 2, 2.35},
  };
  return cr_make_param_array(sum_round_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(sum_round_case_t *c, sum, rounds_totals_like_python) {
  char task_json[256];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"s\", \"score_type\": \"Sum\", "
           "\"score_type_parameters\": %.17g, \"testcases\": {\"a\": true}, "
           "\"score_precision\": %d}",
           c->parameter, c->precision);
  cJSON *res = ts_run(task_json, "{\"evaluations\": {\"a\": 1}}");
  cr_assert_not_null(res);
  cr_expect(ts_num(res, "score") == c->expected, "score %.17g",
            ts_num(res, "score"));
  cr_expect(ts_num(res, "public_score") == c->expected, "public %.17g",
            ts_num(res, "public_score"));
  cr_expect(ts_num(res, "max_score") == c->parameter);
  cJSON_Delete(res);
}

#define TENTHS_TASK(rounding)                                                  \
  "{\"name\": \"s\", \"score_type\": \"Sum\", \"score_type_parameters\": "     \
  "0.1, \"testcases\": {\"a\": true, \"b\": true, \"c\": true}, "              \
  "\"score_precision\": 2" rounding "}"
#define TENTHS_JOB "{\"evaluations\": {\"a\": 1, \"b\": 1, \"c\": 1}}"

Test(sum, rounds_the_float_sum_in_subtask_mode) {
  tally_task_t *task = ts_task(TENTHS_TASK(""), NULL, 0);
  cr_assert_not_null(task);
  char *text = ts_score_text(task, TENTHS_JOB);
  cr_assert_not_null(text);
  cr_expect(strstr(text, "\"score\":0.3,") != NULL, "%s", text);
  cr_expect(strstr(text, "\"public_score\":0.3,") != NULL, "%s", text);
  /* The maximum adds 0.1 three times, as CMS does, and is never rounded. */
  cr_expect(strstr(text, "\"max_score\":0.30000000000000004,") != NULL, "%s",
            text);
  free(text);
  tally_task_free(task);
}

Test(sum, leaves_the_float_sum_unrounded_in_none_mode) {
  tally_task_t *task =
      ts_task(TENTHS_TASK(", \"score_rounding\": \"none\""), NULL, 0);
  cr_assert_not_null(task);
  char *text = ts_score_text(task, TENTHS_JOB);
  cr_assert_not_null(text);
  cr_expect(strstr(text, "\"score\":0.30000000000000004,") != NULL, "%s", text);
  cr_expect(strstr(text, "\"public_score\":0.30000000000000004,") != NULL, "%s",
            text);
  free(text);
  tally_task_free(task);
}

Test(sum, accumulates_in_codename_string_order_from_zero) {
  /* In string order ("10", "2", "3") the two tiny outcomes are each lost
   * against 1.0; in numeric order they would add up first and survive. */
  cJSON *res = ts_run(
      "{\"name\": \"s\", \"score_type\": \"Sum\", \"score_type_parameters\": "
      "1, \"testcases\": {\"2\": true, \"3\": false, \"10\": true}, "
      "\"score_rounding\": \"none\"}",
      "{\"evaluations\": {\"2\": 1e-16, \"3\": 1e-16, \"10\": 1}}");
  cr_assert_not_null(res);
  cr_expect(ts_num(res, "score") == 1.0, "score %.17g", ts_num(res, "score"));
  cr_expect(ts_num(res, "public_score") == 1.0, "public %.17g",
            ts_num(res, "public_score"));
  cJSON_Delete(res);
}
