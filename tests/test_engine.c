/* The scoring path end to end: one engine reused across jobs and tasks,
 * large tasks, unusual codenames, and extra members in results. */
#include "support.h"

#include <criterion/criterion.h>
#include <string.h>

/* A task JSON with n testcases "t000".."t(n-1)", all public, built into a
 * malloc'ed string; params is the score_type_parameters JSON. */
static char *many_testcases(const char *name, const char *type,
                            const char *params, size_t n) {
  size_t cap = 256 + strlen(params) + n * 20;
  char *json = malloc(cap);
  cr_assert_not_null(json);
  size_t used = (size_t)snprintf(json, cap,
                                 "{\"name\": \"%s\", \"score_type\": \"%s\", "
                                 "\"score_type_parameters\": %s, "
                                 "\"testcases\": {",
                                 name, type, params);
  for (size_t i = 0; i < n; i++)
    used += (size_t)snprintf(json + used, cap - used, "%s\"t%03zu\": true",
                             i ? ", " : "", i);
  snprintf(json + used, cap - used, "}, \"score_precision\": 2}");
  return json;
}

/* A job giving every testcase of many_testcases() outcome 1, except
 * testcase `low`, which gets `outcome`. */
static char *many_outcomes(const char *task, size_t n, size_t low,
                           double outcome) {
  size_t cap = 128 + n * 32;
  char *json = malloc(cap);
  cr_assert_not_null(json);
  size_t used = (size_t)snprintf(json, cap,
                                 "{\"task\": \"%s\", \"evaluations\": {", task);
  for (size_t i = 0; i < n; i++)
    used += (size_t)snprintf(json + used, cap - used, "%s\"t%03zu\": %.17g",
                             i ? ", " : "", i, i == low ? outcome : 1.0);
  snprintf(json + used, cap - used, "}}");
  return json;
}

Test(engine, scores_a_task_with_hundreds_of_testcases_and_subtasks) {
  char *task_json = many_testcases(
      "big", "GroupMin", "[[10, 100], [20, 100], [30, 100], [40, 200]]", 500);
  char err[256] = "";
  tally_task_t *task = ts_task(task_json, err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  char *job = many_outcomes("big", 500, 250, 0.5);
  cJSON *res = ts_score(task, job);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect_eq(ts_num(res, "score"), 10 + 20 + 15 + 40);
  cr_expect_eq(ts_len_at(res, "details[3].testcases"), 200);
  cr_expect_str_eq(ts_str_at(res, "details[2].testcases[50].idx"), "t250");
  cr_expect_eq(ts_bool_at(res, "details[2].testcases[50].show_in_oi_"
                               "restricted_feedback"),
               1);
  cr_expect_eq(ts_bool_at(res, "details[2].testcases[51].show_in_"
                               "restricted_feedback"),
               0);
  cJSON_Delete(res);
  free(job);
  tally_task_free(task);
  free(task_json);
}

Test(engine, reuses_its_buffers_across_tasks_of_different_sizes) {
  char *big_json = many_testcases("big", "Sum", "1", 300);
  tally_task_t *big = ts_task(big_json, NULL, 0);
  tally_task_t *small = ts_task(
      "{\"name\": \"small\", \"score_type\": \"GroupMin\", "
      "\"score_type_parameters\": [[10, 1], [20, 1]], \"testcases\": {\"a\": "
      "true, \"b\": false}}",
      NULL, 0);
  cr_assert_not_null(big);
  cr_assert_not_null(small);
  /* Entries sorted by task name, as tally_taskset_find expects. */
  tally_taskset_entry_t entries[] = {{.task = big, .file = "big.json"},
                                     {.task = small, .file = "small.json"}};
  tally_taskset_t ts = {.entries = entries, .count = 2};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  const char *small_job = "{\"task\": \"small\", \"evaluations\": {\"a\": "
                          "{\"outcome\": 1, \"text\": [\"ok\"]}, \"b\": 0.5}}";
  const char *small_job2 = "{\"task\": \"small\", \"evaluations\": {\"a\": "
                           "0, \"b\": 1}}";
  char *big_job = many_outcomes("big", 300, 7, 0.25);
  const char *jobs[] = {small_job, big_job, small_job2, big_job, small_job};
  const double scores[] = {20, 299.25, 20, 299.25, 20};
  for (size_t i = 0; i < 5; i++) {
    tally_buf_reset(&out);
    int rc = tally_engine_score(&e, jobs[i], strlen(jobs[i]), NULL, &out);
    cr_expect_eq(rc, 0, "job %zu: %s", i, e.err);
    cJSON *res = cJSON_Parse(out.data);
    cr_assert_not_null(res, "job %zu", i);
    cr_expect_eq(ts_num(res, "score"), scores[i], "job %zu", i);
    if (i == 2) {
      /* No text from job 0 may linger on "a". */
      cr_expect(cJSON_IsNull(ts_at(res, "details[0].testcases[0].text")));
      cr_expect_str_eq(ts_str_at(res, "details[0].testcases[0].outcome"),
                       "Not correct");
    }
    if (i == 1 || i == 3)
      cr_expect_eq(ts_len_at(res, "details"), 300);
    cJSON_Delete(res);
  }
  free(big_job);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(big);
  tally_task_free(small);
  free(big_json);
}

Test(engine, escapes_unusual_codenames_in_results_and_errors) {
  /* Codenames with a quote, a backslash, a newline, a control byte and a
   * non-ASCII letter. */
  cJSON *res =
      ts_run("{\"name\": \"q\\\"t\", \"score_type\": \"Sum\", "
             "\"score_type_parameters\": 1, \"testcases\": {\"a\\\"b\": true, "
             "\"c\\\\d\": true, \"e\\nf\": false, \"g\\u0001\": true, "
             "\"\\u00e9\": true}}",
             "{\"evaluations\": {\"a\\\"b\": 1, \"c\\\\d\": 1, \"e\\nf\": 1, "
             "\"g\\u0001\": 1, \"\\u00e9\": 1}}");
  cr_assert_not_null(res, "the result must be valid JSON");
  cr_expect_eq(ts_num(res, "score"), 5);
  cr_expect_str_eq(ts_str_at(res, "task"), "q\"t");
  cr_expect_str_eq(ts_str_at(res, "details[0].idx"), "a\"b");
  cr_expect_str_eq(ts_str_at(res, "details[1].idx"), "c\\d");
  cr_expect_str_eq(ts_str_at(res, "details[2].idx"), "e\nf");
  cr_expect_str_eq(ts_str_at(res, "details[3].idx"), "g\x01");
  cr_expect_str_eq(ts_str_at(res, "details[4].idx"), "\xc3\xa9");
  cr_expect_str_eq(ts_str_at(res, "public_details[2].idx"), "e\nf");
  cJSON_Delete(res);
  res = ts_run("{\"name\": \"t\", \"score_type\": \"Sum\", "
               "\"score_type_parameters\": 1, \"testcases\": {\"a\": true}}",
               "{\"evaluations\": {\"a\": 1, \"x\\\"y\\n\": 1}}");
  cr_assert_not_null(res, "the error reply must be valid JSON");
  const char *error = ts_str_at(res, "error");
  cr_assert_not_null(error);
  cr_expect(strstr(error, "has no testcase \"x\"y\n\"") != NULL, "%s", error);
  cJSON_Delete(res);
}

Test(engine, appends_extra_members_to_a_result) {
  tally_task_t *task = ts_task("{\"name\": \"t\", \"score_type\": \"Sum\", "
                               "\"score_type_parameters\": 1, \"testcases\": "
                               "{\"a\": true}}",
                               NULL, 0);
  cr_assert_not_null(task);
  tally_taskset_entry_t entry = {.task = task, .file = "t.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  const char *job = "{\"submission\": 3, \"participant\": \"p\", "
                    "\"evaluations\": {\"a\": 1}}";
  cr_assert_eq(
      tally_engine_score(&e, job, strlen(job), "\"worker\":\"w1\"", &out), 0);
  cJSON *res = cJSON_Parse(out.data);
  cr_assert_not_null(res, "%s", out.data);
  cr_expect_str_eq(ts_str_at(res, "worker"), "w1");
  cr_expect_str_eq(ts_str_at(res, "participant"), "p");
  cr_expect_eq(ts_num(res, "submission"), 3);
  cJSON_Delete(res);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
}

Test(engine, appends_each_result_after_what_the_buffer_holds) {
  tally_task_t *task = ts_task("{\"name\": \"t\", \"score_type\": \"Sum\", "
                               "\"score_type_parameters\": 1, \"testcases\": "
                               "{\"a\": true}}",
                               NULL, 0);
  cr_assert_not_null(task);
  tally_taskset_entry_t entry = {.task = task, .file = "t.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  const char *good = "{\"submission\": 1, \"evaluations\": {\"a\": 1}}";
  const char *bad = "{\"submission\": 2, \"evaluations\": {}}";
  tally_buf_puts(&out, "[");
  cr_expect_eq(tally_engine_score(&e, good, strlen(good), NULL, &out), 0);
  tally_buf_puts(&out, ",");
  cr_expect_eq(tally_engine_score(&e, bad, strlen(bad), NULL, &out),
               TALLY_EJOB);
  tally_buf_puts(&out, "]");
  cJSON *arr = cJSON_Parse(out.data);
  cr_assert_not_null(arr, "%s", out.data);
  cr_expect_eq(ts_num_at(arr, "[0].score"), 1);
  cr_expect_not_null(ts_str_at(arr, "[1].error"));
  cr_expect(strstr(e.err, "no evaluation for testcase \"a\"") != NULL, "%s",
            e.err);
  cJSON_Delete(arr);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
}
