/* Submissions whose compilation failed: zero scores and empty details, in
 * the shape CMS gives them. */
#include "support.h"

#include <criterion/criterion.h>
#include <string.h>

#define FAILED "{\"submission\": 7, \"compilation\": \"failed\"}"

Test(compilation, scores_a_failed_group_submission_zero_with_zero_rankings) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[40, 2], [60, 2]], "
                      "\"testcases\": {\"0\": true, \"1\": true, \"2\": "
                      "false, \"3\": false}}",
                      FAILED);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect_eq(ts_num(res, "submission"), 7);
  cr_expect_eq(ts_num(res, "score"), 0);
  cr_expect_eq(ts_num(res, "public_score"), 0);
  cr_expect_eq(ts_num(res, "max_score"), 100);
  cr_expect_eq(ts_num(res, "max_public_score"), 40);
  cr_expect_eq(ts_len_at(res, "details"), 0);
  cr_expect_eq(ts_len_at(res, "public_details"), 0);
  cr_assert_eq(ts_len_at(res, "ranking_details"), 2);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "0");
  cr_expect_str_eq(ts_str_at(res, "ranking_details[1]"), "0");
  cr_expect_str_eq(ts_str_at(res, "ranking_headers[0]"), "Subtask 0 (40)");
  cr_expect_str_eq(ts_str_at(res, "ranking_headers[1]"), "Subtask 1 (60)");
  cJSON_Delete(res);
}

Test(compilation, gives_a_zero_ranking_column_per_subtask_in_every_mode) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupThreshold\", "
                      "\"score_type_parameters\": [[10, 1, 1], [20, 1, 1], "
                      "[30, 1, 1]], \"testcases\": {\"a\": true, \"b\": "
                      "true, \"c\": true}, \"score_rounding\": \"none\"}",
                      FAILED);
  cr_assert_not_null(res);
  cr_assert_eq(ts_len_at(res, "ranking_details"), 3);
  for (int s = 0; s < 3; s++) {
    char path[32];
    snprintf(path, sizeof(path), "ranking_details[%d]", s);
    cr_expect_str_eq(ts_str_at(res, path), "0");
  }
  cr_expect_eq(ts_num(res, "score"), 0);
  cr_expect_eq(ts_len_at(res, "details"), 0);
  cJSON_Delete(res);
}

Test(compilation, scores_a_failed_sum_submission_zero_with_empty_lists) {
  cJSON *res = ts_run("{\"name\": \"s\", \"score_type\": \"Sum\", "
                      "\"score_type_parameters\": 10.5, \"testcases\": "
                      "{\"0\": false, \"1\": true}}",
                      FAILED);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect_eq(ts_num(res, "score"), 0);
  cr_expect_eq(ts_num(res, "public_score"), 0);
  cr_expect_eq(ts_num(res, "max_score"), 21);
  cr_expect_eq(ts_num(res, "max_public_score"), 10.5);
  cr_expect_eq(ts_len_at(res, "details"), 0);
  cr_expect_eq(ts_len_at(res, "public_details"), 0);
  cr_expect_eq(ts_len_at(res, "ranking_details"), 0);
  cr_expect_eq(ts_len_at(res, "ranking_headers"), 0);
  cJSON_Delete(res);
}

Test(compilation, scores_normally_when_compilation_is_ok) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMul\", "
                      "\"score_type_parameters\": [[10, 1]], \"testcases\": "
                      "{\"a\": true}}",
                      "{\"compilation\": \"ok\", \"evaluations\": {\"a\": "
                      "0.5}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 5);
  cr_expect_eq(ts_len_at(res, "details"), 1);
  cJSON_Delete(res);
}

Test(compilation, does_not_leak_a_previous_job_into_a_failed_one) {
  /* One engine scores a full job, then a failed one. */
  tally_task_t *task = ts_task("{\"name\": \"g\", \"score_type\": "
                               "\"GroupMin\", \"score_type_parameters\": "
                               "[[10, 1]], \"testcases\": {\"a\": true}}",
                               NULL, 0);
  cr_assert_not_null(task);
  tally_taskset_entry_t entry = {.task = task, .file = "task.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  const char *full = "{\"evaluations\": {\"a\": 1}}";
  cr_expect_eq(tally_engine_score(&e, full, strlen(full), NULL, &out), 0);
  tally_buf_reset(&out);
  cr_expect_eq(tally_engine_score(&e, FAILED, strlen(FAILED), NULL, &out), 0);
  cJSON *res = cJSON_Parse(out.data);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 0);
  cr_expect_eq(ts_len_at(res, "details"), 0);
  cr_expect_str_eq(ts_str_at(res, "ranking_details[0]"), "0");
  cJSON_Delete(res);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
}
