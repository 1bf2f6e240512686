/* The behavioral signals of evaluation specs (docs/evaluation-specs.md):
 * each signal on a tool-call trace by hand, the behavioral dimension's
 * weighted mean and gate, and the behavioral_*_score collectors. */
#include "support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run of tool calls: each "name" or "!name" (failed), with arguments
 * {"n": <index % 2>} when args is set. */
static cJSON *behave(const char *signals, const char *const *calls, size_t n,
                     bool args) {
  char task[2048], events[8192] = "", job[9000];
  snprintf(
      task, sizeof(task),
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"validators\": [{\"key\": \"v\", \"type\": "
      "\"exact_match\", \"target\": \"literal:a\", \"expected_from\": "
      "\"literal:a\"}], \"metrics\": [{\"key\": \"cascade\", \"type\": "
      "\"numeric\", \"collector\": \"behavioral_error_cascade_score\"}], "
      "\"behavioral\": {\"signals\": [%s]}, \"scorecard\": "
      "{\"dimensions\": [{\"key\": \"b\", \"source\": \"behavioral\"}]}}}",
      signals);
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    bool failed = calls[i][0] == '!';
    char a[64] = "";
    if (args)
      snprintf(a, sizeof(a), ", \"arguments\": {\"n\": %zu}", i % 2);
    used += (size_t)snprintf(
        events + used, sizeof(events) - used,
        "%s{\"type\": \"tool.call.%s\", \"sequence_number\": %zu, "
        "\"occurred_at\": \"2026-01-01T00:00:00Z\", \"payload\": "
        "{\"tool_name\": \"%s\"%s}}",
        i ? "," : "", failed ? "failed" : "completed", i + 1, calls[i] + failed,
        a);
  }
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"events\": [%s]}}",
           events);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s\n%s", task, job);
  return r;
}

#define D "details.dimension_results[0]."
#define N(a) (sizeof(a) / sizeof((a)[0]))

static double dim(const char *signal, const char *const *calls, size_t n,
                  bool args) {
  char s[256];
  snprintf(s, sizeof(s), "{\"key\": \"%s\", \"weight\": 1}", signal);
  cJSON *r = behave(s, calls, n, args);
  cr_expect_str_eq(ts_str_at(r, D "state"), "available", "%s", signal);
  double v = ts_num_at(r, D "score");
  cJSON_Delete(r);
  return v;
}

Test(behavioral, each_signal) {
  static const char *const trace[] = {"read",   "!read",  "read",
                                      "!write", "!write", "grep"};
  /* The longest run of failures is 2. */
  cr_expect_float_eq(dim("error_cascade", trace, N(trace), false), 0.5, 1e-12);
  /* Without arguments every read is the same call: read, read, read are
   * two duplicates, write, write one more: 1 - 3/6. */
  cr_expect_float_eq(dim("exploration_efficiency", trace, N(trace), false), 0.5,
                     1e-12);
  /* The failed read is followed by read (same call): not adaptive; the
   * first failed write by write (same), the second by grep (adaptive). */
  cr_expect_float_eq(dim("recovery_behavior", trace, N(trace), false), 1.0 / 3,
                     1e-12);
  /* With arguments {"n": i % 2}, every call differs from the next. */
  cr_expect_float_eq(dim("recovery_behavior", trace, N(trace), true), 1, 1e-12);
  cr_expect_float_eq(dim("scope_adherence", trace, N(trace), false), 1, 1e-12);
  static const char *const none[] = {"read"};
  cr_expect_float_eq(dim("error_cascade", none, 0, false), 1, 1e-12);
  static const char *const last[] = {"read", "!write"};
  cJSON *r =
      behave("{\"key\": \"recovery_behavior\", \"weight\": 1}", last, 2, false);
  cr_expect_float_eq(ts_num_at(r, D "score"), 0, 1e-12);
  cJSON_Delete(r);
}

Test(behavioral, dimension_weights_gates_and_collector) {
  static const char *const trace[] = {"!a", "!a", "!a", "b"};
  cJSON *r = behave("{\"key\": \"error_cascade\", \"weight\": 1}, {\"key\": "
                    "\"scope_adherence\", \"weight\": 3}",
                    trace, N(trace), false);
  /* (1/3 * 1 + 1 * 3) / 4 */
  cr_expect_float_eq(ts_num_at(r, D "score"), (1.0 / 3 + 3) / 4, 1e-12);
  cr_expect_float_eq(ts_num_at(r, "details.metric_results[0].numeric_value"),
                     1.0 / 3, 1e-12);
  cr_expect_str_eq(
      ts_str_at(r, "details.metric_results[0].metadata.signal_key"),
      "error_cascade");
  cr_expect_eq(ts_num_at(r, "details.metric_results[0].metadata.trace_len"), 4);
  cJSON_Delete(r);
  r = behave("{\"key\": \"error_cascade\", \"weight\": 1, \"gate\": true, "
             "\"pass_threshold\": 0.5}, {\"key\": \"scope_adherence\", "
             "\"weight\": 1}",
             trace, N(trace), false);
  cr_expect_eq(ts_num_at(r, D "score"), 0);
  cr_expect_str_eq(ts_str_at(r, D "reason"),
                   "behavioral gate failed: error_cascade=0.333 < 0.500");
  cJSON_Delete(r);
  /* confidence_calibration is refused, as the reference refuses it. */
  char *errs = ts_task_errors(
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"validators\": [], \"behavioral\": {\"signals\": "
      "[{\"key\": \"confidence_calibration\", \"weight\": 1}]}, "
      "\"scorecard\": {\"dimensions\": [{\"key\": \"b\", \"source\": "
      "\"behavioral\"}]}}}");
  cr_expect(errs != NULL && strstr(errs, "behavioral.signals[0].key") != NULL,
            "%s", errs ? errs : "(accepted)");
  free(errs);
}
