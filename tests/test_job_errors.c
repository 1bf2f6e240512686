/* Job errors: a job that cannot be scored gives {"submission", "error"},
 * with the error naming the field and the problem. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tasks of the tables, by kind. Each has testcases "0" to "3". */
enum { GMIN, SUM, GTHR, GMUL };

static tally_task_t *table_task(int kind) {
  static const char *const tasks[] = {
      [GMIN] = "{\"name\": \"t\", \"score_type\": \"GroupMin\", "
               "\"score_type_parameters\": [[40, 2], [60, 2]], "
               "\"testcases\": {\"0\": true, \"1\": true, \"2\": false, "
               "\"3\": false}}",
      [SUM] = "{\"name\": \"t\", \"score_type\": \"Sum\", "
              "\"score_type_parameters\": 25, \"testcases\": {\"0\": true, "
              "\"1\": true, \"2\": false, \"3\": false}}",
      [GTHR] = "{\"name\": \"t\", \"score_type\": \"GroupThreshold\", "
               "\"score_type_parameters\": [[40, 2, 10], [60, 2, 10]], "
               "\"testcases\": {\"0\": true, \"1\": true, \"2\": false, "
               "\"3\": false}}",
      [GMUL] = "{\"name\": \"t\", \"score_type\": \"GroupMul\", "
               "\"score_type_parameters\": [[40, 2], [60, 2]], "
               "\"testcases\": {\"0\": true, \"1\": true, \"2\": false, "
               "\"3\": false}}",
  };
  char err[256] = "";
  tally_task_t *task = ts_task(tasks[kind], err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  return task;
}

#define REST "\"1\": 1, \"2\": 1, \"3\": 1"
#define EVALS(first) "{\"submission\": 9, \"evaluations\": {" first "}}"

typedef struct job_case_s {
  int kind;
  char job[200];
  char expected[120]; /* a substring of the error */
} job_case_t;

ParameterizedTestParameters(job_errors, names_the_field_and_the_problem) {
  static job_case_t cases[] = {
      /* Missing and unknown testcases. */
      {GMIN, EVALS("\"0\": 1, \"1\": 1, \"2\": 1"),
       "evaluations: no evaluation for testcase \"3\""},
      {GMIN, EVALS("\"0\": 1, \"3\": 1"),
       "evaluations: no evaluation for testcase \"1\" and 1 others"},
      {SUM, EVALS(""),
       "evaluations: no evaluation for testcase \"0\" and 3 others"},
      {GMIN, EVALS("\"0\": 1, " REST ", \"9\": 1"),
       "evaluations[\"9\"]: task t has no testcase \"9\""},
      {GMIN, EVALS("\"0\": 1, " REST ", \"0\": 1"),
       "evaluations[\"0\"]: testcase appears twice"},
      /* Outcomes that are not finite numbers. */
      {GMIN, EVALS("\"0\": \"1\", " REST),
       "evaluations[\"0\"]: outcome must be a finite number"},
      {SUM, EVALS("\"0\": null, " REST),
       "evaluations[\"0\"]: outcome must be a finite number"},
      {GTHR, EVALS("\"0\": true, " REST),
       "evaluations[\"0\"]: outcome must be a finite number"},
      {GMUL, EVALS("\"0\": [1], " REST),
       "evaluations[\"0\"]: outcome must be a finite number"},
      /* Beyond a double: out of range (issue 10). */
      {GTHR, EVALS("\"0\": 1e999, " REST),
       "evaluations[\"0\"]: number out of range"},
      {GTHR, EVALS("\"0\": -1e999, " REST),
       "evaluations[\"0\"]: number out of range"},
      {GMIN, EVALS("\"0\": {\"text\": [\"x\"]}, " REST),
       "evaluations[\"0\"]: outcome is missing"},
      {SUM, EVALS("\"0\": {\"outcome\": \"1\"}, " REST),
       "evaluations[\"0\"].outcome: outcome must be a finite number"},
      {GTHR, EVALS("\"0\": {\"outcome\": null}, " REST),
       "evaluations[\"0\"].outcome: outcome must be a finite number"},
      /* Outcomes outside [0, 1], for all but GroupThreshold. */
      {GMIN, EVALS("\"0\": 1.5, " REST),
       "evaluations[\"0\"]: outcome 1.5 is outside [0, 1]"},
      {GMIN, EVALS("\"0\": -0.5, " REST),
       "evaluations[\"0\"]: outcome -0.5 is outside [0, 1]"},
      {SUM, EVALS("\"0\": 2, " REST),
       "evaluations[\"0\"]: outcome 2 is outside [0, 1]"},
      {GMUL, EVALS("\"0\": 1.0000001, " REST),
       "evaluations[\"0\"]: outcome 1.0000001 is outside [0, 1]"},
      {GMUL, EVALS("\"0\": {\"outcome\": -1}, " REST),
       "evaluations[\"0\"].outcome: outcome -1 is outside [0, 1]"},
      /* Evaluation objects are strict. */
      {GMIN, EVALS("\"0\": {\"outcome\": 1, \"colour\": 2}, " REST),
       "evaluations[\"0\"].colour: unknown key"},
      {GTHR, EVALS("\"0\": {\"outcome\": 1, \"Outcome\": 1}, " REST),
       "evaluations[\"0\"].Outcome: unknown key"},
      {GMIN, EVALS("\"0\": {\"outcome\": 1, \"outcome\": 1}, " REST),
       "evaluations[\"0\"].outcome: key appears twice"},
      {GMIN, EVALS("\"0\": {\"outcome\": 1, \"time\": -1}, " REST),
       "evaluations[\"0\"].time: must be a non-negative number or null"},
      {SUM, EVALS("\"0\": {\"outcome\": 1, \"memory\": \"1M\"}, " REST),
       "evaluations[\"0\"].memory: must be a non-negative number or null"},
      {GMIN, EVALS("\"0\": {\"outcome\": 1, \"text\": 5}, " REST),
       "evaluations[\"0\"].text: must be a string or a list of strings"},
      {GMIN, EVALS("\"0\": {\"outcome\": 1, \"text\": [1]}, " REST),
       "evaluations[\"0\"].text: must be a string or a list of strings"},
      /* Strings that are not UTF-8, anywhere (issue 24): results and
       * contestants' events would echo them. */
      {GMIN,
       EVALS("\"0\": {\"outcome\": 1, \"text\": \"bad \xff\xfe\"}, " REST),
       "evaluations[\"0\"].text: is not valid UTF-8"},
      {GMIN,
       EVALS("\"0\": {\"outcome\": 1, \"text\": [\"ok\", \"\xc3\"]}, " REST),
       "evaluations[\"0\"].text[1]: is not valid UTF-8"},
      {SUM, EVALS("\"0\": {\"outcome\": 1, \"text\": \"\xed\xa0\x80\"}, " REST),
       "evaluations[\"0\"].text: is not valid UTF-8"},
      {SUM, EVALS("\"\xc0\xaf\": 1, \"0\": 1, " REST),
       "evaluations[0]: a key is not valid UTF-8"},
      {SUM,
       "{\"submission\": 9, \"meta\": {\"x\": [\"\xf8\"]}, \"evaluations\": "
       "{\"0\": 1, " REST "}}",
       "meta.x[0]: is not valid UTF-8"},
      /* Numbers JSON does not allow, which cJSON reads (issue 24). */
      {GMIN, EVALS("\"0\": 01, " REST),
       "invalid JSON at byte 39: a number is not written as JSON requires"},
      {GMIN, EVALS("\"0\": 1., " REST), "a number is not written as JSON"},
      {GMIN, EVALS("\"0\": 1.e0, " REST), "a number is not written as JSON"},
      {GMIN, EVALS("\"0\": -0.5e, " REST), "invalid JSON at byte"},
      {GMIN, EVALS("\"0\": -01, " REST), "a number is not written as JSON"},
      {GMIN, "{\"submission\": 09, \"evaluations\": {}}",
       "a number id must be an integer"},
      /* The job as a whole. */
      {GMIN, "{\"submission\": 9, \"evaluations\": ", "invalid JSON at byte"},
      {GMIN, "not json", "invalid JSON at byte 0"},
      {GMIN, EVALS("\"0\": 1, " REST) " {}",
       "unexpected text after the job at byte"},
      {GMIN, "[1, 2]", "a job must be a JSON object"},
      {GMIN,
       "{\"submission\": 9, \"compilation\": \"failed\", "
       "\"evaluations\": {}}",
       "evaluations: a submission whose compilation failed has no "
       "evaluations"},
      {GMIN, "{\"submission\": 9, \"compilation\": \"maybe\"}",
       "compilation: must be \"ok\" or \"failed\""},
      {GMIN, "{\"submission\": 9}", "evaluations: missing"},
      {SUM, "{\"submission\": 9, \"evaluations\": [1, 1, 1, 1]}",
       "evaluations: must be an object mapping codenames to outcomes"},
      {GMIN, "{\"submission\": 9, \"evaluations\": {}, \"evaluations\": {}}",
       "evaluations: key appears twice"},
      {GMIN,
       "{\"submission\": 9, \"participant\": {}, \"evaluations\": "
       "{\"0\": 1, " REST "}}",
       "participant: must be a string or a number"},
      {GMIN,
       "{\"submission\": 9, \"task\": 5, \"evaluations\": {\"0\": 1, " REST
       "}}",
       "task: must be a string"},
      {GMIN,
       "{\"submission\": 9, \"task\": \"other\", \"evaluations\": "
       "{\"0\": 1, " REST "}}",
       "task: unknown task \"other\""},
  };
  return cr_make_param_array(job_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(job_case_t *c, job_errors, names_the_field_and_the_problem) {
  tally_task_t *task = table_task(c->kind);
  cJSON *res = ts_score(task, c->job);
  cr_assert_not_null(res, "the reply must be JSON");
  const char *error = ts_str_at(res, "error");
  cr_assert_not_null(error, "job %s was scored", c->job);
  cr_expect(strstr(error, c->expected) != NULL,
            "job %s\nexpected an error containing:\n  %s\ngot:\n  %s", c->job,
            c->expected, error);
  char *keys = ts_keys_at(res, "");
  cr_expect_str_eq(keys, "error,submission");
  free(keys);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(job_errors, echoes_the_submission_id_in_an_error) {
  tally_task_t *task = table_task(GMIN);
  cJSON *res = ts_score(task, "{\"submission\": \"s-7\", \"evaluations\": {}}");
  cr_expect_str_eq(ts_str_at(res, "submission"), "s-7");
  cJSON_Delete(res);
  res = ts_score(task, "{\"submission\": 42, \"evaluations\": {}}");
  cr_expect_eq(ts_num_at(res, "submission"), 42);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(job_errors, gives_a_null_submission_when_it_is_absent_or_invalid) {
  tally_task_t *task = table_task(GMIN);
  cJSON *res = ts_score(task, "{\"evaluations\": {}}");
  cr_expect(cJSON_IsNull(ts_at(res, "submission")));
  cr_expect_not_null(ts_str_at(res, "error"));
  cJSON_Delete(res);
  res = ts_score(task, "{\"submission\": [1], \"evaluations\": {}}");
  cr_expect(cJSON_IsNull(ts_at(res, "submission")));
  cr_expect(strstr(ts_str_at(res, "error"),
                   "submission: must be a string or a number") != NULL);
  cJSON_Delete(res);
  res = ts_score(task, "{\"evaluations\": ");
  cr_expect(cJSON_IsNull(ts_at(res, "submission")));
  cJSON_Delete(res);
  tally_task_free(task);
}

typedef struct accept_case_s {
  int kind;
  double outcome;
} accept_case_t;

ParameterizedTestParameters(job_errors, accepts_outcomes_in_range) {
  static accept_case_t cases[] = {
      {GMIN, 0},  {GMIN, 1},   {SUM, 0},    {SUM, 1},
      {GMUL, 0},  {GMUL, 1},   {GMUL, 0.5}, {GTHR, 1.5},
      {GTHR, -3}, {GTHR, 100}, {GTHR, 0},   {GTHR, 1e300},
  };
  return cr_make_param_array(accept_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(accept_case_t *c, job_errors, accepts_outcomes_in_range) {
  tally_task_t *task = table_task(c->kind);
  char job[256];
  snprintf(job, sizeof(job), "{\"evaluations\": {\"0\": %.17g, " REST "}}",
           c->outcome);
  cJSON *res = ts_score(task, job);
  cr_assert_not_null(res);
  cr_expect_null(ts_at(res, "error"), "outcome %g: %s", c->outcome,
                 ts_str_at(res, "error"));
  cr_expect_not_null(ts_at(res, "score"));
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(job_errors, ignores_unknown_top_level_keys) {
  tally_task_t *task = table_task(GMIN);
  cJSON *res = ts_score(task, "{\"submission\": 1, \"meta\": {\"x\": [1]}, "
                              "\"attempt\": 3, \"evaluations\": {\"3\": 1, "
                              "\"2\": 1, \"1\": 1, \"0\": 1}}");
  cr_assert_not_null(res);
  cr_expect_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect_eq(ts_num(res, "score"), 100);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(job_errors, scores_the_next_job_normally_after_an_error) {
  tally_task_t *task = table_task(GMIN);
  tally_taskset_entry_t entry = {.task = task, .file = "task.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  const char *bad = "{\"evaluations\": {\"0\": {\"outcome\": 1, \"text\": "
                    "[\"x\"]}, \"1\": 7, \"2\": 1, \"3\": 1}}";
  const char *good = "{\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
                     "\"3\": 0.5}}";
  cr_expect_eq(tally_engine_score(&e, bad, strlen(bad), NULL, &out),
               TALLY_EJOB);
  tally_buf_reset(&out);
  cr_expect_eq(tally_engine_score(&e, good, strlen(good), NULL, &out), 0);
  cJSON *res = cJSON_Parse(out.data);
  cr_assert_not_null(res);
  cr_expect_eq(ts_num(res, "score"), 70);
  /* The text of the failed job's "0" must not carry over. */
  cr_expect(cJSON_IsNull(ts_at(res, "details[0].testcases[0].text")));
  cJSON_Delete(res);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
}

/* Ids (issue 10): a NUL, a control character or invalid UTF-8 would merge
 * or break identities downstream; a number id that is not a plain integer
 * below 2^53 would be rewritten (1e22, 1.5, 12345678901234567890123). */
typedef struct id_case_s {
  char job[160];
  char expected[120];
} id_case_t;

#define ID_EVALS ", \"evaluations\": {\"0\": 1, " REST "}}"

ParameterizedTestParameters(job_errors, refuses_ids_that_are_not_names) {
  static id_case_t cases[] = {
      {"{\"submission\": \"s\", \"participant\": \"alice\\u0000evil\"" ID_EVALS,
       "participant: holds a control character (U+0000 at byte 5)"},
      {"{\"submission\": \"s\\u0000\", \"participant\": \"a\"" ID_EVALS,
       "submission: holds a control character (U+0000 at byte 1)"},
      {"{\"submission\": \"s\", \"participant\": \"a\\nb\"" ID_EVALS,
       "participant: holds a control character (U+000A at byte 1)"},
      {"{\"submission\": \"s\", \"participant\": \"a\\u007f\"" ID_EVALS,
       "participant: holds a control character (U+007F at byte 1)"},
      {"{\"submission\": \"s\", \"participant\": \"a\\u0085\"" ID_EVALS,
       "participant: holds a control character (U+0085 at byte 1)"},
      {"{\"submission\": \"s\", \"participant\": \"ab\xff\"" ID_EVALS,
       "participant: is not valid UTF-8 (at byte 2)"},
      {"{\"submission\": \"s\", \"contest\": \"\xc3(\"" ID_EVALS,
       "contest: is not valid UTF-8 (at byte 0)"},
      {"{\"submission\": \"s\", \"participant\": \"\"" ID_EVALS,
       "participant: must not be empty"},
      {"{\"submission\": \"s\", \"task\": \"t\\u0000x\"" ID_EVALS,
       "task: holds a control character (U+0000 at byte 1)"},
      {"{\"submission\": \"s\", \"task\": 7" ID_EVALS,
       "task: must be a string"},
      {"{\"submission\": 12345678901234567890123" ID_EVALS,
       "submission: a number id must be an integer below 2^53"},
      {"{\"submission\": 9007199254740992" ID_EVALS,
       "submission: a number id must be an integer below 2^53"},
      {"{\"submission\": 1e3" ID_EVALS,
       "submission: a number id must be an integer below 2^53 written in "
       "plain digits"},
      {"{\"submission\": \"s\", \"participant\": 1.5" ID_EVALS,
       "participant: a number id must be an integer"},
      {"{\"submission\": \"s\", \"participant\": 10.0" ID_EVALS,
       "participant: a number id must be an integer"},
      {"{\"submission\": \"s\", \"contest\": -0" ID_EVALS,
       "contest: a number id must be an integer"},
      {"{\"submission\": \"s\", \"participant\": \"a\", \"participant\": "
       "\"b\"" ID_EVALS,
       "participant: key appears twice"},
      {"{\"submission\": \"s\", \"timestamp\": 1, \"timestamp\": 2" ID_EVALS,
       "timestamp: key appears twice"},
  };
  return cr_make_param_array(id_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(id_case_t *c, job_errors, refuses_ids_that_are_not_names) {
  tally_task_t *task = table_task(SUM);
  cJSON *res = ts_score(task, c->job);
  cr_assert_not_null(res, "%s", c->job);
  const char *err = ts_str_at(res, "error");
  cr_expect(err != NULL && strstr(err, c->expected) != NULL,
            "job %s: error %s, expected %s", c->job, err ? err : "(none)",
            c->expected);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(job_errors, accepts_unicode_ids_and_integers_below_2_53) {
  tally_task_t *task = table_task(SUM);
  static const char *const jobs[] = {
      "{\"submission\": \"s\", \"participant\": \"\xc3\xa9l\xc3\xa8ve "
      "\xe2\x98\x83 \xf0\x9f\x98\x80\"" ID_EVALS,
      "{\"submission\": 9007199254740991, \"participant\": "
      "-9007199254740991" ID_EVALS,
      "{\"submission\": 0, \"contest\": 12" ID_EVALS,
  };
  for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
    cJSON *res = ts_score(task, jobs[i]);
    cr_assert_not_null(res);
    cr_expect_null(ts_at(res, "error"), "%s: %s", jobs[i],
                   ts_str_at(res, "error"));
    cJSON_Delete(res);
  }
  tally_task_free(task);
}

Test(job_errors, says_nesting_too_deep_rather_than_invalid_json) {
  tally_task_t *task = table_task(SUM);
  size_t depth = 2000;
  char *job = malloc(2 * depth + 64);
  size_t n = (size_t)sprintf(job, "{\"submission\": \"s\", \"x\": ");
  for (size_t i = 0; i < depth; i++)
    job[n++] = '[';
  for (size_t i = 0; i < depth; i++)
    job[n++] = ']';
  strcpy(job + n, "}");
  cJSON *res = ts_score(task, job);
  cr_expect(strstr(ts_str_at(res, "error"), "nesting too deep") != NULL, "%s",
            ts_str_at(res, "error"));
  cJSON_Delete(res);
  free(job);
  tally_task_free(task);
}

/* Every number JSON allows is read (issue 24 refuses only those it does
 * not), and strings of every plane of UTF-8. */
Test(job_errors, accepts_every_json_number_and_utf8_text) {
  tally_task_t *task = table_task(GTHR);
  cJSON *res = ts_score(
      task,
      "{\"submission\": 0, \"evaluations\": {\"0\": -0, \"1\": 1.0e+0, "
      "\"2\": {\"outcome\": -0.5E-3, \"text\": \"caf\xc3\xa9 \xe2\x82\xac "
      "\xf0\x9f\x8e\x89\"}, \"3\": 10E2}}");
  cr_assert_not_null(res);
  cr_expect_null(ts_str_at(res, "error"), "%s", ts_str_at(res, "error"));
  cJSON_Delete(res);
  tally_task_free(task);
}
