/* The code_execution validator (docs/evaluation-specs.md): the record of
 * a grader.verification.code_executed event scored by fraction passed,
 * all or nothing, or the exit code; errors, time-outs and missing records;
 * counts derived from output the way the reference's executor derives
 * them (code_counts_reference checks the parser against the reference's
 * own on 1,500 outputs); and the config rules. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *code(const char *config, const char *record) {
  char task[2048], job[4096];
  snprintf(
      task, sizeof(task),
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"post_execution_checks\": [{\"key\": \"out\", "
      "\"type\": \"file_capture\", \"path\": \"/o\"}], \"validators\": "
      "[{\"key\": \"v0\", \"type\": \"code_execution\", \"target\": "
      "\"file:out\"%s}], \"scorecard\": {\"dimensions\": "
      "[\"correctness\"]}}}",
      config);
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"events\": [%s]}}",
           record);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s\n%s", task, job);
  return r;
}

#define EV(payload)                                                            \
  "{\"type\": \"grader.verification.code_executed\", \"sequence_number\": 4, " \
  "\"occurred_at\": \"2026-01-01T00:00:00Z\", \"payload\": "                   \
  "{\"validator_key\": "                                                       \
  "\"v0\", \"target\": \"file:out\"" payload "}}"
#define R "details.validator_results[0]."

static void expect(cJSON *r, const char *state, double score,
                   const char *reason) {
  cr_expect_str_eq(ts_str_at(r, R "state"), state);
  if (score >= 0)
    cr_expect_float_eq(ts_num_at(r, R "normalized_score"), score, 1e-12);
  const char *got = ts_str_at(r, R "reason");
  cr_expect_str_eq(got != NULL ? got : "", reason);
  cJSON_Delete(r);
}

Test(code_execution, scoring_modes) {
  expect(code("", EV(", \"passed_tests\": 3, \"failed_tests\": 1")),
         "available", 0.75, "3 passed, 1 failed (4 total)");
  expect(code(", \"config\": {\"test_command\": \"t\", \"scoring\": "
              "\"all_or_nothing\"}",
              EV(", \"passed_tests\": 3, \"error_tests\": 1, \"total_tests\": "
                 "4")),
         "available", 0, "3 passed, 1 error (4 total)");
  /* Without counts, the exit code. */
  expect(code("", EV(", \"exit_code\": 0")), "available", 1,
         "test command exited with code 0");
  expect(code("", EV(", \"exit_code\": 2")), "available", 0,
         "test command exited with code 2");
  /* A pass threshold below 1 lets a fraction pass. */
  cJSON *r = code(", \"config\": {\"test_command\": \"t\", \"pass_threshold\": "
                  "0.7}",
                  EV(", \"passed_tests\": 3, \"failed_tests\": 1"));
  cr_expect_str_eq(ts_str_at(r, R "verdict"), "pass");
  cJSON_Delete(r);
}

Test(code_execution, errors_timeouts_and_missing_records) {
  cJSON *r = code("", EV(", \"execution_error\": \"sandbox died\""));
  cr_expect_str_eq(ts_str_at(r, R "outcome_class"), "infra_error");
  expect(r, "error", -1, "sandbox died");
  expect(code("", EV(", \"timed_out\": true, \"exit_code\": 0")), "available",
         0, "test command timed out");
  expect(code("", ""), "unavailable", -1,
         "code execution result for validator \"v0\" is unavailable");
  expect(code("", EV("")), "unavailable", -1,
         "code execution result is unavailable");
  /* A record Go cannot decode is skipped, as the reference skips it. */
  expect(code("", EV(", \"exit_code\": \"0\"")), "unavailable", -1,
         "code execution result for validator \"v0\" is unavailable");
}

Test(code_execution, counts_from_output) {
  expect(code("", EV(", \"exit_code\": 1, \"stdout\": \"3 passed, 1 failed "
                     "in 0.2s\"")),
         "available", 0.75, "3 passed, 1 failed (4 total)");
  expect(code("", EV(", \"stdout\": \"<testsuites><testsuite tests=\\\"2\\\" "
                     "failures=\\\"1\\\"/><testsuite tests=\\\"3\\\"/>"
                     "</testsuites>\"")),
         "available", 0.8, "4 passed, 1 failed (5 total)");
  expect(code("", EV(", \"stdout\": \"{\\\"passed\\\": 2, \\\"errors\\\": "
                     "2}\"")),
         "available", 0.5, "2 passed, 2 errors (4 total)");
  /* Output that ends inside a word is read no further than its end (the
   * fuzzer found a read past it): no counts, so the exit code. */
  expect(code("", EV(", \"exit_code\": 0, \"stdout\": \"7 pass\"")),
         "available", 1, "test command exited with code 0");
  expect(code("", EV(", \"exit_code\": 2, \"stderr\": \"1 err\"")), "available",
         0, "test command exited with code 2");
}

Test(code_execution, config_rules) {
  struct {
    const char *config, *want;
  } cases[] = {
      {"{\"scoring\": \"fraction_passed\"}",
       "config.test_command: is required"},
      {"{\"test_command\": \"t\", \"timeout_ms\": 0}",
       "config.timeout_ms: must be greater than 0"},
      {"{\"test_command\": \"t\", \"scoring\": \"pass_at_k\"}",
       "config.scoring: pass_at_k requires multi-sample execution"},
      {"{\"test_command\": \"t\", \"scoring\": \"best\"}",
       "config.scoring: must be one of fraction_passed, all_or_nothing, "
       "pass_at_k"},
      {"{\"test_command\": \"t\", \"pass_threshold\": 2}",
       "config.pass_threshold: must be between 0 and 1"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char task[2048];
    snprintf(task, sizeof(task),
             "{\"name\": \"t\", \"task_type\": \"agent_run\", "
             "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
             "\"judge_mode\": \"deterministic\", \"post_execution_checks\": "
             "[{\"key\": \"out\", \"type\": \"file_capture\", \"path\": "
             "\"/o\"}], \"validators\": [{\"key\": \"v0\", \"type\": "
             "\"code_execution\", \"target\": \"file:out\", \"config\": %s}], "
             "\"scorecard\": {\"dimensions\": [\"correctness\"]}}}",
             cases[i].config);
    char *errs = ts_task_errors(task);
    cr_expect(errs != NULL && strstr(errs, cases[i].want) != NULL,
              "case %zu: wanted \"%s\" in %s", i, cases[i].want,
              errs ? errs : "(accepted)");
    free(errs);
  }
}
