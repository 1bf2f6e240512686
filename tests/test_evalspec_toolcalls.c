/* The tool_call_assertion validator (docs/evaluation-specs.md): the trace
 * from tool.call.completed and tool.call.failed events, presence, counts,
 * arguments as a recursive subset with distinct array elements, order as
 * a subsequence or exactly, failed calls never matching, the source of
 * the first match, the evidence, and every config rule with its path. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tool-call events: name, arguments (JSON text or NULL), failed. */
typedef struct call_s {
  const char *tool, *args;
  int failed; /* 0, 1: a tool.call.failed event, 2: result.is_error */
} call_t;

static cJSON *assert_calls(const char *config, const call_t *calls, size_t n) {
  char task[2048], events[8192] = "";
  snprintf(
      task, sizeof(task),
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"validators\": [{\"key\": \"tc\", \"type\": "
      "\"tool_call_assertion\", \"target\": \"tool_calls\", \"config\": "
      "%s}], \"scorecard\": {\"dimensions\": [\"correctness\"]}}}",
      config);
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    char args[512] = "";
    if (calls[i].args != NULL)
      snprintf(args, sizeof(args), ", \"arguments\": %s", calls[i].args);
    used += (size_t)snprintf(
        events + used, sizeof(events) - used,
        "%s{\"type\": \"tool.call.%s\", \"sequence_number\": %zu, "
        "\"occurred_at\": \"2026-01-01T00:00:00Z\", \"payload\": "
        "{\"tool_name\": \"%s\"%s, \"result\": {\"is_error\": %s}}}",
        i ? "," : "", calls[i].failed == 1 ? "failed" : "completed", i + 1,
        calls[i].tool, args, calls[i].failed == 2 ? "true" : "false");
  }
  char job[9000];
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"events\": [%s]}}",
           events);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s\n%s", task, job);
  return r;
}

#define R "details.validator_results[0]."
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const call_t trace[] = {
    {"read", "{\"path\": \"a.txt\", \"tags\": [\"x\", \"y\"]}", 0},
    {"grep", "{\"pattern\": \"TODO\"}", 1},
    {"write", "{\"path\": \"a.txt\", \"n\": 2}", 0},
    {"read", "{\"path\": \"b.txt\"}", 2},
    {"read", NULL, 0},
};

static void expect(const char *config, const char *verdict,
                   const char *reason) {
  cJSON *r = assert_calls(config, trace, N(trace));
  cr_expect_str_eq(ts_str_at(r, R "verdict"), verdict, "%s", config);
  /* A result's reason is left out when empty; raw_output keeps it. */
  const char *got = ts_str_at(r, R "reason");
  cr_expect_str_eq(got != NULL ? got : "", reason, "%s", config);
  cr_expect_str_eq(ts_str_at(r, R "raw_output.reason"), reason, "%s", config);
  cJSON_Delete(r);
}

Test(tool_calls, presence_and_counts) {
  expect("{\"tool_name\": \"read\"}", "pass", "");
  expect("{\"tool_name\": \"grep\"}", "fail",
         "expected matching tool call was not observed");
  expect("{\"tool_name\": \"write\", \"must_call\": false}", "fail",
         "forbidden matching tool call was observed");
  /* Two successful reads (the third failed through is_error). */
  expect("{\"tool_name\": \"read\", \"count\": 2}", "pass", "");
  expect("{\"tool_name\": \"read\", \"count\": 3}", "fail",
         "matched tool call count 2 != expected 3");
  expect("{\"tool_name\": \"read\", \"min_count\": 3, \"max_count\": 4}",
         "fail", "matched tool call count 2 < min_count 3");
  expect("{\"max_count\": 2}", "fail",
         "matched tool call count 3 > max_count 2");
  /* With a count, presence is not asserted unless must_call is given. */
  expect("{\"tool_name\": \"grep\", \"count\": 0}", "pass", "");
}

Test(tool_calls, arguments_subset) {
  expect("{\"arguments_contain\": {\"path\": \"a.txt\"}, \"count\": 2}", "pass",
         "");
  expect("{\"tool_name\": \"read\", \"arguments_contain\": {\"tags\": "
         "[\"y\"]}}",
         "pass", "");
  /* Each expected element takes a distinct actual one. */
  expect("{\"tool_name\": \"read\", \"arguments_contain\": {\"tags\": "
         "[\"x\", \"x\"]}}",
         "fail", "expected matching tool call was not observed");
  /* Numbers by value; a failed call never matches. */
  expect("{\"arguments_contain\": {\"n\": 2.0}}", "pass", "");
  expect("{\"arguments_contain\": {\"path\": \"b.txt\"}}", "fail",
         "expected matching tool call was not observed");
  /* Absent arguments are an empty object. */
  expect("{\"tool_name\": \"read\", \"arguments_contain\": {}, \"count\": 2}",
         "pass", "");
}

Test(tool_calls, order) {
  expect("{\"ordered_tools\": [\"read\", \"write\"]}", "pass", "");
  expect("{\"ordered_tools\": [\"write\", \"read\"]}", "pass", "");
  expect("{\"ordered_tools\": [\"grep\", \"write\"]}", "fail",
         "observed tool order [read write read] does not contain expected "
         "subsequence [grep write]");
  expect("{\"ordered_tools\": [\"read\", \"write\"], \"order_mode\": "
         "\"exact\"}",
         "fail",
         "observed tool order [read write read] does not exactly match "
         "expected order [read write]");
  expect("{\"ordered_tools\": [\" read\", \"write \", \"read\"], "
         "\"order_mode\": \" exact\"}",
         "pass", "");
  /* Every failing assertion is in the reason, in order. */
  expect("{\"tool_name\": \"bash\", \"ordered_tools\": [\"bash\"]}", "fail",
         "expected matching tool call was not observed; observed tool order "
         "[read write read] does not contain expected subsequence [bash]");
}

Test(tool_calls, evidence_and_source) {
  cJSON *r = assert_calls("{\"tool_name\": \" read \", \"count\": 2}", trace,
                          N(trace));
  cr_expect_eq(ts_num_at(r, R "normalized_score"), 1);
  cr_expect_str_eq(ts_str_at(r, R "raw_output.tool_name"), "read");
  cr_expect_eq(ts_num_at(r, R "raw_output.observed_count"), 3);
  cr_expect_eq(ts_num_at(r, R "raw_output.failed_count"), 2);
  cr_expect_eq(ts_num_at(r, R "raw_output.matched_count"), 2);
  cr_expect_eq(ts_num_at(r, R "raw_output.matched_indices[1]"), 4);
  cr_expect_str_eq(ts_str_at(r, R "raw_output.observed_tool_names[1]"),
                   "write");
  cr_expect_eq(ts_num_at(r, R "raw_output.expected_count"), 2);
  cr_expect(cJSON_IsNull(ts_at(r, R "raw_output.expected_min_count")));
  cr_expect(cJSON_IsNull(ts_at(r, R "raw_output.expected_order")));
  cr_expect(cJSON_IsFalse(ts_at(r, R "raw_output.arguments_contain_set")));
  cr_expect_str_eq(ts_str_at(r, R "raw_output.outcome_class"), "pass");
  /* The first match's event. */
  cr_expect_str_eq(ts_str_at(r, R "source.kind"), "tool_call");
  cr_expect_eq(ts_num_at(r, R "source.sequence"), 1);
  cr_expect_str_eq(ts_str_at(r, R "source.field_path"), "tool_calls");
  cJSON_Delete(r);
  /* No calls at all. */
  r = assert_calls("{\"must_call\": false}", NULL, 0);
  cr_expect_str_eq(ts_str_at(r, R "verdict"), "pass");
  cr_expect_eq(ts_num_at(r, R "raw_output.observed_count"), 0);
  cJSON_Delete(r);
}

Test(tool_calls, config_rules_with_paths) {
  struct {
    const char *validator, *want;
  } cases[] = {
      {"\"config\": {\"count\": -1}", "config.count: must be greater than or "
                                      "equal to 0"},
      {"\"config\": {\"count\": 1, \"max_count\": 2}",
       "config.count: cannot be combined with min_count or max_count"},
      {"\"config\": {\"min_count\": 3, \"max_count\": 2}",
       "config.min_count: must be less than or equal to max_count"},
      {"\"config\": {\"must_call\": true, \"count\": 0}",
       "config.must_call: cannot be true when count is 0"},
      {"\"config\": {\"must_call\": false, \"min_count\": 1}",
       "config.must_call: cannot be false when min_count is greater than 0"},
      {"\"config\": {\"arguments_contain\": [1]}",
       "config.arguments_contain: must be a JSON object"},
      {"\"config\": {\"ordered_tools\": [\"a\", \" \"]}",
       "config.ordered_tools[1]: must not be empty"},
      {"\"config\": {\"order_mode\": \"exact\"}",
       "config.ordered_tools: is required when order_mode is set"},
      {"\"config\": {\"ordered_tools\": [\"a\"], \"order_mode\": \"any\"}",
       "config.order_mode: must be \"subsequence\" or \"exact\""},
      {"\"config\": {}", "config: must declare at least one tool call "
                         "assertion"},
      {"\"config\": {\"tool\": \"a\"}", "config.tool: unknown key"},
      {"\"note\": 1", "unknown key"},
  };
  for (size_t i = 0; i < N(cases); i++) {
    char task[2048];
    snprintf(task, sizeof(task),
             "{\"name\": \"t\", \"task_type\": \"agent_run\", "
             "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
             "\"judge_mode\": \"deterministic\", \"validators\": [{\"key\": "
             "\"tc\", \"type\": \"tool_call_assertion\", \"target\": "
             "\"tool_calls\", %s}], \"scorecard\": {\"dimensions\": "
             "[\"correctness\"]}}}",
             cases[i].validator);
    char *errs = ts_task_errors(task);
    cr_expect(errs != NULL && strstr(errs, cases[i].want) != NULL,
              "case %zu: wanted \"%s\" in %s", i, cases[i].want,
              errs ? errs : "(accepted)");
    free(errs);
  }
  /* No config at all; another target; an expected_from. */
  const char *other[][2] = {
      {"\"target\": \"tool_calls\"",
       "config: tool_call_assertion config is required"},
      {"\"target\": \"final_output\", \"config\": {\"tool_name\": \"a\"}",
       "target: must be \"tool_calls\" for tool_call_assertion validators"},
      {"\"target\": \"tool_calls\", \"expected_from\": \"final_output\", "
       "\"config\": {\"tool_name\": \"a\"}",
       "expected_from: must be omitted for tool_call_assertion validators"},
  };
  for (size_t i = 0; i < N(other); i++) {
    char task[2048];
    snprintf(task, sizeof(task),
             "{\"name\": \"t\", \"task_type\": \"agent_run\", "
             "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
             "\"judge_mode\": \"deterministic\", \"validators\": [{\"key\": "
             "\"tc\", \"type\": \"tool_call_assertion\", %s}], \"scorecard\": "
             "{\"dimensions\": [\"correctness\"]}}}",
             other[i][0]);
    char *errs = ts_task_errors(task);
    cr_expect(errs != NULL && strstr(errs, other[i][1]) != NULL,
              "other %zu: wanted \"%s\" in %s", i, other[i][1],
              errs ? errs : "(accepted)");
    free(errs);
  }
}
