/* The CMS shapes of a group score type's details, public details and
 * ranking columns. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

/* Subtask 0 holds "000" (public) and "001" (private); subtask 1 holds
 * "big_0" and "big_1", both public. */
#define APLUSB(extra)                                                          \
  "{\"name\": \"aplusb\", \"score_type\": \"GroupMin\", "                      \
  "\"score_type_parameters\": [[40, \"0\"], [60, \"big_\"]], \"testcases\": "  \
  "{\"000\": true, \"001\": false, \"big_0\": {\"public\": true}, "            \
  "\"big_1\": true}, \"score_precision\": 2" extra "}"

#define APLUSB_JOB                                                             \
  "{\"submission\": \"s-1\", \"evaluations\": {\"000\": 1.0, \"001\": "        \
  "{\"outcome\": 0.5, \"text\": [\"Output is partially correct\"], "           \
  "\"time\": 0.12, \"memory\": 2048}, \"big_0\": 1, \"big_1\": {\"outcome\": " \
  "0, \"text\": [\"Execution timed out\"], \"time\": 1.5, \"memory\": 4096}}}"

static cJSON *aplusb(const char *extra_is_time_limit) {
  const char *task_json =
      extra_is_time_limit ? APLUSB(", \"time_limit\": 1.25") : APLUSB("");
  cJSON *res = ts_run(task_json, APLUSB_JOB);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  return res;
}

Test(group_details, gives_each_subtask_its_idx_fraction_score_and_max) {
  cJSON *res = aplusb(NULL);
  cr_assert_eq(ts_len_at(res, "details"), 2);
  char *keys = ts_keys_at(res, "details[0]");
  cr_expect_str_eq(keys, "idx,max_score,score,score_fraction,testcases");
  free(keys);
  cr_expect_eq(ts_num_at(res, "details[0].idx"), 0);
  cr_expect_eq(ts_num_at(res, "details[0].score_fraction"), 0.5);
  cr_expect_eq(ts_num_at(res, "details[0].score"), 20);
  cr_expect_eq(ts_num_at(res, "details[0].max_score"), 40);
  cr_expect_eq(ts_num_at(res, "details[1].idx"), 1);
  cr_expect_eq(ts_num_at(res, "details[1].score_fraction"), 0);
  cr_expect_eq(ts_num_at(res, "details[1].score"), 0);
  cr_expect_eq(ts_num_at(res, "details[1].max_score"), 60);
  cr_expect_eq(ts_num(res, "score"), 20);
  cr_expect_eq(ts_num(res, "max_score"), 100);
  cr_expect_str_eq(ts_str_at(res, "task"), "aplusb");
  cr_expect_str_eq(ts_str_at(res, "submission"), "s-1");
  cJSON_Delete(res);
}

Test(group_details, describes_every_testcase_with_the_cms_keys) {
  cJSON *res = aplusb(NULL);
  char *list = ts_idx_list_at(res, "details[0].testcases");
  cr_expect_str_eq(list, "000,001");
  free(list);
  list = ts_idx_list_at(res, "details[1].testcases");
  cr_expect_str_eq(list, "big_0,big_1");
  free(list);
  char *keys = ts_keys_at(res, "details[0].testcases[1]");
  cr_expect_str_eq(keys, "idx,memory,outcome,show_in_oi_restricted_feedback,"
                         "show_in_restricted_feedback,text,time,time_limit,"
                         "time_limit_was_exceeded");
  free(keys);
  const char *p = "details[0].testcases[1].";
  char path[96];
#define AT(k) (snprintf(path, sizeof(path), "%s%s", p, k), path)
  cr_expect_str_eq(ts_str_at(res, AT("outcome")), "Partially correct");
  cr_expect_str_eq(ts_str_at(res, AT("text[0]")),
                   "Output is partially correct");
  cr_expect_eq(ts_num_at(res, AT("time")), 0.12);
  cr_expect_eq(ts_num_at(res, AT("memory")), 2048);
  cr_expect(cJSON_IsNull(ts_at(res, AT("time_limit"))));
  cr_expect_eq(ts_bool_at(res, AT("time_limit_was_exceeded")), 0);
  /* Absent text, time and memory are null. */
  p = "details[0].testcases[0].";
  cr_expect_str_eq(ts_str_at(res, AT("outcome")), "Correct");
  cr_expect(cJSON_IsNull(ts_at(res, AT("text"))));
  cr_expect(cJSON_IsNull(ts_at(res, AT("time"))));
  cr_expect(cJSON_IsNull(ts_at(res, AT("memory"))));
  p = "details[1].testcases[1].";
  cr_expect_str_eq(ts_str_at(res, AT("outcome")), "Not correct");
  cr_expect_eq(ts_bool_at(res, AT("time_limit_was_exceeded")), 1);
#undef AT
  cJSON_Delete(res);
}

Test(group_details, reports_the_task_time_limit_on_every_testcase) {
  cJSON *res = aplusb("yes");
  for (int s = 0; s < 2; s++) {
    for (int t = 0; t < 2; t++) {
      char path[64];
      snprintf(path, sizeof(path), "details[%d].testcases[%d].time_limit", s,
               t);
      cr_expect_eq(ts_num_at(res, path), 1.25, "%s", path);
    }
  }
  cJSON_Delete(res);
}

typedef struct timeout_case_s {
  char text[96]; /* JSON of the evaluation's text */
  int exceeded;
} timeout_case_t;

ParameterizedTestParameters(group_details,
                            flags_a_timeout_exactly_for_execution_timed_out) {
  static timeout_case_t cases[] = {
      {"[\"Execution timed out\"]", 1},
      {"null", 0},
      {"[]", 0},
      {"[\"Output is correct\"]", 0},
      {"[\"Execution timed out\", \"again\"]", 0},
      {"[\"Execution timed out (wall clock limit exceeded)\"]", 0},
      {"[\"execution timed out\"]", 0},
      /* CMS compares the list: the bare string is not a timeout. */
      {"\"Execution timed out\"", 0},
  };
  return cr_make_param_array(timeout_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

static int timed_out_flag(const char *text) {
  char job[256];
  snprintf(job, sizeof(job),
           "{\"evaluations\": {\"a\": {\"outcome\": 0, \"text\": %s}}}", text);
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[1, 1]], \"testcases\": "
                      "{\"a\": true}, \"time_limit\": 2}",
                      job);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  int flag = ts_bool_at(res, "details[0].testcases[0].time_limit_was_exceeded");
  cJSON_Delete(res);
  return flag;
}

ParameterizedTest(timeout_case_t *c, group_details,
                  flags_a_timeout_exactly_for_execution_timed_out) {
  cr_expect_eq(timed_out_flag(c->text), c->exceeded, "text %s", c->text);
}

Test(group_details, shows_all_public_subtasks_whole_in_public_details) {
  cJSON *res = aplusb(NULL);
  cr_assert_eq(ts_len_at(res, "public_details"), 2);
  char *full = ts_json_at(res, "details[1]");
  char *pub = ts_json_at(res, "public_details[1]");
  cr_expect_str_eq(pub, full);
  free(full);
  free(pub);
  cJSON_Delete(res);
}

Test(group_details, hides_private_testcases_of_mixed_subtasks) {
  cJSON *res = aplusb(NULL);
  char *keys = ts_keys_at(res, "public_details[0]");
  cr_expect_str_eq(keys, "idx,testcases");
  free(keys);
  cr_expect_eq(ts_num_at(res, "public_details[0].idx"), 0);
  cr_assert_eq(ts_len_at(res, "public_details[0].testcases"), 2);
  char *full = ts_json_at(res, "details[0].testcases[0]");
  char *pub = ts_json_at(res, "public_details[0].testcases[0]");
  cr_expect_str_eq(pub, full, "a public testcase is shown whole");
  free(full);
  free(pub);
  char *priv = ts_json_at(res, "public_details[0].testcases[1]");
  cr_expect_str_eq(priv, "{\"idx\":\"001\"}");
  free(priv);
  cJSON_Delete(res);
}

Test(group_details, shows_a_private_only_subtask_as_idx_and_bare_testcases) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[40, 1], [60, 2]], "
                      "\"testcases\": {\"a\": true, \"b\": false, \"c\": "
                      "false}}",
                      "{\"evaluations\": {\"a\": 1, \"b\": 1, \"c\": 1}}");
  cr_assert_not_null(res);
  char *pub = ts_json_at(res, "public_details[1]");
  cr_expect_str_eq(pub, "{\"idx\":1,\"testcases\":[{\"idx\":\"b\"},"
                        "{\"idx\":\"c\"}]}");
  free(pub);
  cr_expect_eq(ts_num(res, "score"), 100);
  cr_expect_eq(ts_num(res, "public_score"), 40);
  cr_expect_eq(ts_num(res, "max_public_score"), 40);
  cJSON_Delete(res);
}

Test(group_details, counts_only_all_public_subtasks_as_public) {
  /* Subtask 1 shares the public "a" but also holds the private "b". */
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMul\", "
                      "\"score_type_parameters\": [{\"max_score\": 30, "
                      "\"testcases\": [\"a\"]}, {\"max_score\": 70, "
                      "\"testcases\": [\"a\", \"b\"]}, {\"max_score\": 5, "
                      "\"testcases\": [\"c\"]}], \"testcases\": {\"a\": "
                      "true, \"b\": false, \"c\": true}}",
                      "{\"evaluations\": {\"a\": 0.5, \"b\": 1, \"c\": 1}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "max_score"), 105);
  cr_expect_eq(ts_num(res, "max_public_score"), 35);
  cr_expect_eq(ts_num(res, "score"), 15 + 35 + 5);
  cr_expect_eq(ts_num(res, "public_score"), 15 + 5);
  /* "a" appears in both subtasks, in details and public details alike. */
  char *list = ts_idx_list_at(res, "public_details[1].testcases");
  cr_expect_str_eq(list, "a,b");
  free(list);
  cr_expect_not_null(ts_at(res, "public_details[1].testcases[0].outcome"));
  cr_expect_null(ts_at(res, "public_details[1].testcases[1].outcome"));
  cJSON_Delete(res);
}

Test(group_details, names_ranking_columns_after_subtask_index_and_max) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[12.5, 1], [0, 1], "
                      "[100, 1], [33.333333, 1]], \"testcases\": {\"a\": "
                      "true, \"b\": true, \"c\": true, \"d\": true}, "
                      "\"score_precision\": 2}",
                      "{\"evaluations\": {\"a\": 0.5, \"b\": 1, \"c\": 0.25, "
                      "\"d\": 1}}");
  cr_assert_not_null(res);
  static const char *const headers[] = {"Subtask 0 (12.5)", "Subtask 1 (0)",
                                        "Subtask 2 (100)",
                                        "Subtask 3 (33.3333)"};
  static const char *const details[] = {"6.25", "0", "25", "33.33"};
  cr_assert_eq(ts_len_at(res, "ranking_headers"), 4);
  cr_assert_eq(ts_len_at(res, "ranking_details"), 4);
  for (int s = 0; s < 4; s++) {
    char path[64];
    snprintf(path, sizeof(path), "ranking_headers[%d]", s);
    cr_expect_str_eq(ts_str_at(res, path), headers[s]);
    snprintf(path, sizeof(path), "ranking_details[%d]", s);
    cr_expect_str_eq(ts_str_at(res, path), details[s]);
  }
  cr_expect_eq(ts_num(res, "score"), 64.58); /* 6.25 + 0 + 25 + 33.33 */
  cJSON_Delete(res);
}

Test(group_details, echoes_text_time_and_memory_verbatim) {
  cJSON *res = ts_run(
      "{\"name\": \"g\", \"score_type\": \"GroupThreshold\", "
      "\"score_type_parameters\": [[1, 1, 2]], \"testcases\": {\"a\": true}}",
      "{\"evaluations\": {\"a\": {\"outcome\": 1.5, \"text\": [\"Output is "
      "correct\", \"\\\"quoted\\\" \\u00e9\"], \"time\": 0, \"memory\": "
      "123456789}}}");
  cr_assert_not_null(res);
  char *text = ts_json_at(res, "details[0].testcases[0].text");
  cr_expect_str_eq(text, "[\"Output is correct\",\"\\\"quoted\\\" \xc3\xa9\"]");
  free(text);
  cr_expect_eq(ts_num_at(res, "details[0].testcases[0].time"), 0);
  cr_expect_eq(ts_num_at(res, "details[0].testcases[0].memory"), 123456789);
  cJSON_Delete(res);
}
