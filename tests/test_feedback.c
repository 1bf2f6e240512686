/* The restricted-feedback flags of group score types: which testcases a
 * contestant sees under restricted and OI-restricted feedback. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

/* One subtask over the list ["a", "b", "c", "d"]. Flags are written as
 * strings of T and F, one letter per position. */
typedef struct feedback_case_s {
  char type[16];
  char extra[48]; /* more members of the subtask object */
  char pub[5];
  double outcomes[4];
  char restricted[5];
  char oi[5];
} feedback_case_t;

ParameterizedTestParameters(feedback, flags_the_first_lowest_public_testcase) {
  static feedback_case_t cases[] = {
      /* The first public testcase with the lowest outcome, and every
       * public testcase up to it. */
      {"GroupMin", "", "TTTT", {1, 0.5, 0, 0}, "TTTF", "FFTF"},
      {"GroupMin", "", "TTTT", {1, 0.5, 0.5, 1}, "TTFF", "FTFF"},
      {"GroupMin", "", "TTTT", {0, 0, 1, 1}, "TFFF", "TFFF"},
      /* A full subtask shows every public testcase. */
      {"GroupMin", "", "TTTT", {1, 1, 1, 1}, "TTTT", "TTTT"},
      /* Private testcases are never shown, nor chosen as the lowest. */
      {"GroupMin", "", "TFTT", {1, 0, 0.5, 0.5}, "TFTF", "FFTF"},
      {"GroupMin", "", "FTTT", {0, 1, 1, 1}, "FTFF", "FTFF"},
      {"GroupMin", "", "TFTF", {1, 1, 1, 0}, "TFFF", "TFFF"},
      {"GroupMin", "", "FFFF", {0, 0, 0, 0}, "FFFF", "FFFF"},
      {"GroupMin", "", "TFTF", {1, 1, 1, 1}, "TFTF", "TFTF"},
      /* always_show_testcases turns the rule off; false keeps it on. */
      {"GroupMin",
       ", \"always_show_testcases\": true",
       "TTTT",
       {1, 0, 1, 0},
       "TTTT",
       "TTTT"},
      {"GroupMin",
       ", \"always_show_testcases\": true",
       "TFTF",
       {0, 0, 0, 0},
       "TFTF",
       "TFTF"},
      {"GroupMin",
       ", \"always_show_testcases\": false",
       "TTTT",
       {1, 0, 1, 0},
       "TTFF",
       "FTFF"},
      /* GroupMul: any product below 1. */
      {"GroupMul", "", "TTTT", {1, 0.9, 1, 0.9}, "TTFF", "FTFF"},
      {"GroupMul", "", "TTTT", {0.5, 0.5, 0.5, 0.5}, "TFFF", "TFFF"},
      {"GroupMul", "", "TTTT", {1, 1, 1, 1}, "TTTT", "TTTT"},
      /* GroupThreshold (threshold 1): the lowest outcome, even when the
       * failing testcase is another one. */
      {"GroupThreshold",
       ", \"threshold\": 1",
       "TTTT",
       {0.5, 2, 0.1, 0.7},
       "TTTF",
       "FFTF"},
      {"GroupThreshold",
       ", \"threshold\": 1",
       "TTTT",
       {0.5, 0, 0.1, 0.7},
       "TTFF",
       "FTFF"},
      {"GroupThreshold",
       ", \"threshold\": 1",
       "TTTT",
       {0.5, 0.2, 0.1, 0.7},
       "TTTT",
       "TTTT"},
  };
  return cr_make_param_array(feedback_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(feedback_case_t *c, feedback,
                  flags_the_first_lowest_public_testcase) {
  static const char *const names[] = {"a", "b", "c", "d"};
  char task_json[512];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"g\", \"score_type\": \"%s\", "
           "\"score_type_parameters\": [{\"max_score\": 100, \"testcases\": "
           "[\"a\", \"b\", \"c\", \"d\"]%s}], \"testcases\": {\"a\": %s, "
           "\"b\": %s, \"c\": %s, \"d\": %s}}",
           c->type, c->extra, c->pub[0] == 'T' ? "true" : "false",
           c->pub[1] == 'T' ? "true" : "false",
           c->pub[2] == 'T' ? "true" : "false",
           c->pub[3] == 'T' ? "true" : "false");
  char err[512] = "";
  tally_task_t *task = ts_task(task_json, err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  cJSON *res = ts_score(task, ts_job(4, names, c->outcomes));
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  char restricted[5] = "????", oi[5] = "????";
  for (int i = 0; i < 4; i++) {
    char path[96];
    snprintf(path, sizeof(path),
             "details[0].testcases[%d].show_in_restricted_feedback", i);
    int r = ts_bool_at(res, path);
    snprintf(path, sizeof(path),
             "details[0].testcases[%d].show_in_oi_restricted_feedback", i);
    int o = ts_bool_at(res, path);
    restricted[i] = r == 1 ? 'T' : r == 0 ? 'F' : '?';
    oi[i] = o == 1 ? 'T' : o == 0 ? 'F' : '?';
  }
  cr_expect_str_eq(restricted, c->restricted, "show_in_restricted_feedback");
  cr_expect_str_eq(oi, c->oi, "show_in_oi_restricted_feedback");
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(feedback, decides_each_subtask_on_its_own) {
  /* "b" is past the lowest testcase of subtask 0 but is itself the lowest
   * of subtask 1. */
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[50, [\"a\", \"b\"]], "
                      "[50, [\"b\", \"c\"]]], \"testcases\": {\"a\": true, "
                      "\"b\": true, \"c\": true}}",
                      "{\"evaluations\": {\"a\": 0, \"b\": 0.5, \"c\": 1}}");
  cr_assert_not_null(res);
  const char *r = "show_in_restricted_feedback";
  const char *o = "show_in_oi_restricted_feedback";
  char path[96];
#define FLAG(s, t, k)                                                          \
  (snprintf(path, sizeof(path), "details[%d].testcases[%d].%s", s, t, k),      \
   ts_bool_at(res, path))
  cr_expect_eq(FLAG(0, 0, r), 1);
  cr_expect_eq(FLAG(0, 0, o), 1);
  cr_expect_eq(FLAG(0, 1, r), 0);
  cr_expect_eq(FLAG(0, 1, o), 0);
  cr_expect_eq(FLAG(1, 0, r), 1);
  cr_expect_eq(FLAG(1, 0, o), 1);
  cr_expect_eq(FLAG(1, 1, r), 0);
  cr_expect_eq(FLAG(1, 1, o), 0);
#undef FLAG
  cJSON_Delete(res);
}

Test(feedback, carries_the_flags_into_public_details) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[100, 3]], "
                      "\"testcases\": {\"a\": true, \"b\": false, \"c\": "
                      "true}}",
                      "{\"evaluations\": {\"a\": 0.5, \"b\": 1, \"c\": 0.2}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_bool_at(res,
                          "public_details[0].testcases[0].show_in_restricted_"
                          "feedback"),
               1);
  cr_expect_eq(ts_bool_at(res, "public_details[0].testcases[0].show_in_oi_"
                               "restricted_feedback"),
               0);
  cr_expect_eq(ts_bool_at(res,
                          "public_details[0].testcases[2].show_in_restricted_"
                          "feedback"),
               1);
  cr_expect_eq(ts_bool_at(res, "public_details[0].testcases[2].show_in_oi_"
                               "restricted_feedback"),
               1);
  cJSON_Delete(res);
}
