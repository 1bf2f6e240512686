/* Which testcases each subtask holds: counts in codename string order,
 * regexes matched at the start like Python's re.match, and explicit lists
 * in their given order. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

typedef struct target_case_s {
  char testcases[160]; /* the "testcases" object of the task */
  char params[160];    /* GroupMin score_type_parameters */
  char members[2][64]; /* expected codenames of subtasks 0 and 1 */
} target_case_t;

ParameterizedTestParameters(group_targets, selects_the_expected_testcases) {
  static target_case_t cases[] = {
      /* Counts take consecutive runs in string order: "10" before "2". */
      {"{\"1\": true, \"2\": true, \"10\": true, \"11\": true}",
       "[[30, 2], [70, 2]]",
       {"1,10", "11,2"}},
      {"{\"b\": true, \"a\": true, \"c\": true}",
       "[[30, 1], [70, 2]]",
       {"a", "b,c"}},
      /* Byte order puts upper case before lower case. */
      {"{\"a\": true, \"B\": true, \"_\": true}",
       "[[30, 2], [70, 1]]",
       {"B,_", "a"}},
      /* A regex matches at the start, like re.match: "1_*" matches "10_0"
       * by its first character; matches come in codename order. */
      {"{\"1_a\": true, \"10_0\": true, \"2_b\": true, \"x1_c\": true}",
       "[[50, \"1_*\"], [50, \"2|x\"]]",
       {"10_0,1_a", "2_b,x1_c"}},
      /* ...but only at the start: "0" does not match inside "10". */
      {"{\"10\": true, \"0a\": true, \"20\": true}",
       "[[50, \"0\"], [50, \"[12]\"]]",
       {"0a", "10,20"}},
      /* An alternation is anchored in every branch. */
      {"{\"xa\": true, \"b1\": true, \"a2\": true}",
       "[[50, \"a|b\"], [50, \"x\"]]",
       {"a2,b1", "xa"}},
      /* "$" ends the match at the end of the codename. */
      {"{\"1\": true, \"10\": true, \"2\": true}",
       "[[50, \"1$\"], [50, \"1.\"]]",
       {"1", "10"}},
      /* A testcase may belong to several subtasks. */
      {"{\"1\": true, \"2\": true, \"3\": true}",
       "[[50, \".*\"], [50, \"[12]\"]]",
       {"1,2,3", "1,2"}},
      /* "." matches one character of a UTF-8 codename, not one byte. */
      {"{\"\\u00e91\": true, \"e1\": true, \"ab1\": true}",
       "[[50, \".1$\"], [50, \"ab\"]]",
       {"e1,\xc3\xa9"
        "1",
        "ab1"}},
      /* An empty regex matches every codename, as re.match("", x) does;
       * inline flags work too. */
      {"{\"a\": true, \"b\": true}",
       "[[50, \"\"], [50, \"(?i)B\"]]",
       {"a,b", "b"}},
      /* Explicit lists keep their order and may overlap. */
      {"{\"a\": true, \"b\": true, \"c\": true}",
       "[[50, [\"c\", \"a\"]], [50, [\"b\", \"c\"]]]",
       {"c,a", "b,c"}},
      {"{\"10\": true, \"2\": true}",
       "[[50, [\"2\", \"10\"]], [50, [\"10\"]]]",
       {"2,10", "10"}},
  };
  return cr_make_param_array(target_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(target_case_t *c, group_targets,
                  selects_the_expected_testcases) {
  char task_json[512];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"g\", \"score_type\": \"GroupMin\", "
           "\"score_type_parameters\": %s, \"testcases\": %s}",
           c->params, c->testcases);
  char err[512] = "";
  tally_task_t *task = ts_task(task_json, err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  /* Every testcase gets outcome 1. */
  char job[512];
  size_t used = (size_t)snprintf(job, sizeof(job), "{\"evaluations\": {");
  for (size_t i = 0; i < task->ntestcases; i++)
    used += (size_t)snprintf(job + used, sizeof(job) - used, "%s\"%s\": 1",
                             i ? ", " : "", task->testcases[i].codename);
  snprintf(job + used, sizeof(job) - used, "}}");
  cJSON *res = ts_score(task, job);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  for (int s = 0; s < 2; s++) {
    char path[64];
    snprintf(path, sizeof(path), "details[%d].testcases", s);
    char *got = ts_idx_list_at(res, path);
    cr_expect_str_eq(got, c->members[s], "subtask %d", s);
    free(got);
  }
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(group_targets, scores_counts_over_the_string_order_of_codenames) {
  /* In string order the subtasks are {"1", "10"} and {"11", "2"}: the
   * failed "2" costs the second subtask, not the first. */
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[30, 2], [70, 2]], "
                      "\"testcases\": {\"1\": true, \"2\": true, \"10\": "
                      "true, \"11\": true}}",
                      "{\"evaluations\": {\"1\": 1, \"2\": 0, \"10\": 1, "
                      "\"11\": 1}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 30);
  cJSON_Delete(res);
}

Test(group_targets, lets_counts_leave_trailing_testcases_out_of_every_subtask) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[100, 2]], "
                      "\"testcases\": {\"a\": true, \"b\": true, \"c\": "
                      "true}}",
                      "{\"evaluations\": {\"a\": 1, \"b\": 1, \"c\": 0}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 100);
  char *got = ts_idx_list_at(res, "details[0].testcases");
  cr_expect_str_eq(got, "a,b");
  free(got);
  cJSON_Delete(res);
}

Test(group_targets, scores_a_testcase_in_every_subtask_that_holds_it) {
  cJSON *res = ts_run("{\"name\": \"g\", \"score_type\": \"GroupMin\", "
                      "\"score_type_parameters\": [[20, \".*\"], [30, "
                      "\"a\"], [50, \"b\"]], \"testcases\": {\"a1\": true, "
                      "\"a2\": true, \"b1\": true}}",
                      "{\"evaluations\": {\"a1\": 0.5, \"a2\": 1, \"b1\": "
                      "1}}");
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 10 + 15 + 50);
  cJSON_Delete(res);
}
