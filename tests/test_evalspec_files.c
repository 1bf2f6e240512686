/* The file validators of evaluation specs (docs/evaluation-specs.md):
 * file_exists (a missing capture is a verdict), file_content_match in
 * every mode, file_json_schema, directory_structure with Go's
 * filepath.Rel, and their configs read as Go's json.Unmarshal reads them,
 * errors in Go's words. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scores one validator over a run that captured file "out" (content, a
 * JSON string literal, or NULL: not captured; exists false when missing
 * is set) and listed directory "listing" (a JSON object, or NULL). */
/* Further members of the spec (",..."), for the postconditions. */
static const char *spec_more = "";

static cJSON *run_files(const char *validator, const char *content,
                        bool missing, const char *listing) {
  char task[4096], events[4096] = "", job[8192];
  snprintf(
      task, sizeof(task),
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"validators\": [%s], \"scorecard\": "
      "{\"dimensions\": [\"correctness\"]}%s}}",
      validator, spec_more);
  size_t used = 0;
  if (content != NULL)
    used += (size_t)snprintf(
        events, sizeof(events),
        "{\"type\": \"grader.verification.file_captured\", "
        "\"sequence_number\": 1, \"occurred_at\": \"2026-01-01T00:00:00Z\", "
        "\"payload\": {\"key\": \"out\", \"path\": \"/w/out.txt\", "
        "\"exists\": %s, \"content\": %s}}",
        missing ? "false" : "true", content);
  if (listing != NULL)
    snprintf(events + used, sizeof(events) - used,
             "%s{\"type\": \"grader.verification.directory_listed\", "
             "\"sequence_number\": 2, \"occurred_at\": "
             "\"2026-01-01T00:00:01Z\", \"payload\": %s}",
             used ? "," : "", listing);
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"events\": [%s]}}",
           events);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s\n%s", task, job);
  return r;
}

#define R "details.validator_results[0]."

static void expect(cJSON *r, const char *verdict, const char *reason) {
  cr_expect_str_eq(ts_str_at(r, R "verdict"), verdict);
  const char *got = ts_str_at(r, R "reason");
  cr_expect_str_eq(got != NULL ? got : "", reason);
  cJSON_Delete(r);
}

#define EXISTS(config)                                                         \
  "{\"key\": \"f\", \"type\": \"file_exists\", \"target\": "                   \
  "\"file:out\"" config "}"

Test(files, file_exists) {
  expect(run_files(EXISTS(""), "\"x\"", false, NULL), "pass", "");
  expect(run_files(EXISTS(", \"config\": {\"must_exist\": false}"), "\"x\"",
                   false, NULL),
         "fail", "file exists but should not");
  /* Not captured, or captured as missing: a verdict, not unavailable. */
  cJSON *r = run_files(EXISTS(""), NULL, false, NULL);
  cr_expect_str_eq(ts_str_at(r, R "state"), "available");
  expect(r, "fail", "file does not exist");
  expect(run_files(EXISTS(", \"config\": {\"must_exist\": false}"), "\"\"",
                   true, NULL),
         "pass", "file correctly does not exist");
  /* Go matches field names without regard to case, and ignores the
   * others. */
  expect(run_files(EXISTS(", \"config\": {\"MUST_EXIST\": false, \"x\": 1}"),
                   "\"x\"", false, NULL),
         "fail", "file exists but should not");
  /* A type error is the validator's error, in Go's words; when the file
   * is missing the reference ignores it. */
  r = run_files(EXISTS(", \"config\": {\"must_exist\": \"no\"}"), "\"x\"",
                false, NULL);
  cr_expect_str_eq(ts_str_at(r, R "outcome_class"), "pack_error");
  expect(r, "error",
         "invalid file_exists config: json: cannot unmarshal string into Go "
         "struct field fileExistsConfig.must_exist of type bool");
  expect(run_files(EXISTS(", \"config\": [1]"), NULL, false, NULL), "fail",
         "file does not exist");
  expect(run_files(EXISTS(", \"config\": [1]"), "\"x\"", false, NULL), "error",
         "invalid file_exists config: json: cannot unmarshal array into Go "
         "value of type scoring.fileExistsConfig");
}

#define CONTENT(mode, expected)                                                \
  "{\"key\": \"f\", \"type\": \"file_content_match\", \"target\": "            \
  "\"file:out\", \"expected_from\": \"literal:" expected "\", \"config\": "    \
  "{\"match_mode\": \"" mode "\"}}"

Test(files, file_content_match_modes) {
  expect(run_files(CONTENT("contains", "b c"), "\"a b c d\"", false, NULL),
         "pass", "");
  expect(run_files(CONTENT("exact", "a b"), "\"a b\\n\"", false, NULL), "fail",
         "file content does not match exactly");
  expect(run_files(CONTENT("not_contains", "z"), "\"a b\"", false, NULL),
         "pass", "");
  expect(run_files(CONTENT("not_contains", "a"), "\"a b\"", false, NULL),
         "fail", "file content contains forbidden string");
  expect(run_files(CONTENT("regex", "^a\\\\s+b$"), "\"a  b\"", false, NULL),
         "pass", "");
  expect(run_files(CONTENT("regex", "^b"), "\"a b\"", false, NULL), "fail",
         "file content does not match regex pattern");
  expect(run_files(CONTENT("json_equal", "{\\\"a\\\": [1, 2.0]}"),
                   "\"{\\\"a\\\":[1.0,2]}\"", false, NULL),
         "pass", "");
  expect(
      run_files(CONTENT("json_equal", "{}"), "\"{\\\"a\\\": 1}\"", false, NULL),
      "fail", "file JSON content is not structurally equal");
  expect(run_files(CONTENT("json_equal", "{}"), "\"nope\"", false, NULL),
         "error",
         "parse actual as JSON: invalid character 'o' in literal null "
         "(expecting 'u')");
  expect(run_files(CONTENT("fuzzy", "x"), "\"x\"", false, NULL), "error",
         "unsupported match_mode \"fuzzy\"");
  expect(run_files(CONTENT("", "x"), "\"x\"", false, NULL), "error",
         "unsupported match_mode \"\"");
  /* ignore_whitespace collapses runs of white space on both sides. */
  expect(run_files("{\"key\": \"f\", \"type\": \"file_content_match\", "
                   "\"target\": \"file:out\", \"expected_from\": \"literal:a "
                   "b\", \"config\": {\"match_mode\": \"exact\", "
                   "\"ignore_whitespace\": true}}",
                   "\"a \\t\\n b\"", false, NULL),
         "pass", "");
  /* A file captured as missing leaves the validator unavailable. */
  cJSON *r = run_files(CONTENT("contains", "x"), "\"\"", true, NULL);
  cr_expect_str_eq(ts_str_at(r, R "state"), "unavailable");
  cJSON_Delete(r);
}

#define SCHEMA(config)                                                         \
  "{\"key\": \"f\", \"type\": \"file_json_schema\", \"target\": "              \
  "\"file:out\"" config "}"

Test(files, file_json_schema) {
  expect(run_files(SCHEMA(", \"config\": {\"schema\": {\"type\": \"object\", "
                          "\"required\": [\"a\"]}}"),
                   "\"{\\\"a\\\": 1}\"", false, NULL),
         "pass", "");
  expect(run_files(SCHEMA(", \"config\": {\"schema\": {\"type\": "
                          "\"object\", \"required\": [\"b\"]}}"),
                   "\"{\\\"a\\\": 1}\"", false, NULL),
         "fail", "json schema validation failed");
  expect(run_files(SCHEMA(""), "\"{}\"", false, NULL), "error",
         "file_json_schema config is required");
  expect(
      run_files(SCHEMA(", \"config\": {\"other\": 1}"), "\"{}\"", false, NULL),
      "error", "file_json_schema config.schema is required");
}

#define DIRS(config)                                                           \
  "{\"key\": \"f\", \"type\": \"directory_structure\", \"target\": "           \
  "\"file:listing\", \"config\": " config "}"
#define LISTING                                                                \
  "{\"key\": \"listing\", \"path\": \"/w/\", \"entries\": [{\"path\": "        \
  "\"/w/a.txt\", \"size\": 3}, {\"path\": \"/w/src\", \"size\": 0, "           \
  "\"is_dir\": true}, {\"path\": \"/w/src/./m.c\", \"size\": 9}, {\"path\": "  \
  "\"b.txt\", \"size\": 1}]}"

Test(files, directory_structure) {
  /* Paths relative to the listing's root (Go's filepath.Rel after Clean),
   * or as given. */
  expect(run_files(DIRS("{\"required_files\": [\"a.txt\", \"/w/a.txt\", "
                        "\"src/m.c\", \"b.txt\"], \"required_directories\": "
                        "[\"src\", \"src/\"]}"),
                   NULL, false, LISTING),
         "pass", "");
  expect(run_files(DIRS("{\"required_files\": [\"c.txt\", \"src\"], "
                        "\"forbidden_files\": [\"a.txt\", \"x\"], "
                        "\"required_directories\": [\"lib/\", \"a.txt\"]}"),
                   NULL, false, LISTING),
         "fail",
         "missing required files: c.txt; forbidden files present: a.txt; "
         "missing required directories: lib/");
  /* "b.txt" is relative under an absolute root: filepath.Rel cannot, so
   * the path counts as given, and "../b.txt" is not it. */
  expect(run_files(DIRS("{\"required_files\": [\"../b.txt\"]}"), NULL, false,
                   LISTING),
         "fail", "missing required files: ../b.txt");
  expect(run_files(DIRS("{\"required_files\": 1}"), NULL, false, LISTING),
         "error",
         "invalid directory_structure config: json: cannot unmarshal number "
         "into Go struct field directoryStructureConfig.required_files of "
         "type []string");
  /* A captured file is no listing. */
  expect(run_files("{\"key\": \"f\", \"type\": \"directory_structure\", "
                   "\"target\": \"file:out\", \"config\": {}}",
                   "\"plain text\"", false, NULL),
         "error",
         "parse directory listing: invalid character 'p' looking for "
         "beginning of value");
  expect(run_files("{\"key\": \"f\", \"type\": \"directory_structure\", "
                   "\"target\": \"file:listing\"}",
                   NULL, false, LISTING),
         "error", "directory_structure config is required");
}

#define POST(config)                                                           \
  "{\"key\": \"f\", \"type\": \"postcondition\", \"target\": \"file:out\", "   \
  "\"config\": " config "}"
/* The spec needs the post_execution_check a file: target names. */
static cJSON *post(const char *validator, const char *content, bool missing) {
  spec_more = ", \"post_execution_checks\": [{\"key\": \"out\", \"type\": "
              "\"file_capture\", \"path\": \"/w/out.txt\"}]";
  cJSON *r = run_files(validator, content, missing, NULL);
  spec_more = "";
  return r;
}

#define R2 "details.validator_results[0]."

static void expect2(cJSON *r, const char *state, const char *verdict,
                    const char *reason) {
  cr_expect_str_eq(ts_str_at(r, R2 "state"), state);
  if (verdict != NULL)
    cr_expect_str_eq(ts_str_at(r, R2 "verdict"), verdict);
  const char *got = ts_str_at(r, R2 "reason");
  cr_expect_str_eq(got != NULL ? got : "", reason);
  cJSON_Delete(r);
}

Test(files, postcondition) {
  expect2(post(POST("{\"condition\": \"exists\"}"), "\"x\"", false),
          "available", "pass", "postcondition target exists");
  /* A file captured as missing does not exist: exists and not_exists
   * judge it; the other conditions have nothing to judge. */
  expect2(post(POST("{\"condition\": \"not_exists\"}"), "\"\"", true),
          "available", "pass", "postcondition target does not exist");
  expect2(post(POST("{\"condition\": \"contains\", \"value\": \"a\"}"), "\"\"",
               true),
          "unavailable", NULL,
          "captured file \"out\" does not exist at path \"/w/out.txt\"");
  /* A capture that never came is unavailable even for exists. */
  expect2(post(POST("{\"condition\": \"exists\"}"), NULL, false), "unavailable",
          NULL, "file capture key \"out\" is unavailable");
  expect2(post(POST("{\"condition\": \"contains\", \"value\": \"b\"}"),
               "\"abc\"", false),
          "available", "pass", "target contains expected text");
  expect2(post(POST("{\"condition\": \"not_contains\", \"value\": \"b\"}"),
               "\"abc\"", false),
          "available", "fail", "target contains forbidden text");
  expect2(post(POST("{\"condition\": \"regex_match\", \"value\": \"^a.c$\"}"),
               "\"abc\"", false),
          "available", "pass", "target matches regex");
  expect2(post(POST("{\"condition\": \"equals\", \"value\": {\"n\": 1}}"),
               "\"{\\\"n\\\": 1.0}\"", false),
          "available", "pass", "target JSON equals expected value");
  expect2(
      post(POST("{\"condition\": \"equals\", \"value\": 2}"), "\"two\"", false),
      "error", "error",
      "parse postcondition target as JSON: invalid character 'w' in "
      "literal true (expecting 'r')");
  expect2(post(POST("{\"condition\": \"json_path_match\", \"json_path\": "
                    "\"$.a[1]\", \"value\": 2}"),
               "\"{\\\"a\\\": [1, 2]}\"", false),
          "available", "pass", "");
  /* Config rules, with paths. */
  char *errs = ts_task_errors(
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"post_execution_checks\": [{\"key\": \"out\", "
      "\"type\": \"file_capture\", \"path\": \"/o\"}], \"validators\": ["
      "{\"key\": \"a\", \"type\": \"postcondition\", \"target\": "
      "\"file:out\", \"config\": {\"condition\": \"exists\", \"value\": 1}},"
      "{\"key\": \"b\", \"type\": \"postcondition\", \"target\": "
      "\"file:out\", \"config\": {\"condition\": \"regex_match\", \"value\": "
      "\"(\"}},"
      "{\"key\": \"c\", \"type\": \"postcondition\", \"target\": "
      "\"file:out\", \"config\": {\"condition\": \"sometimes\"}},"
      "{\"key\": \"d\", \"type\": \"postcondition\", \"target\": "
      "\"file:out\"}], \"scorecard\": {\"dimensions\": [\"correctness\"]}}}");
  cr_assert_not_null(errs);
  cr_expect(strstr(errs, "validators[0].config.value: must be omitted for "
                         "exists") != NULL,
            "%s", errs);
  cr_expect(strstr(errs, "validators[1].config.value: must be a valid regex") !=
                NULL,
            "%s", errs);
  cr_expect(strstr(errs, "validators[2].config.condition: must be one of "
                         "exists, not_exists") != NULL,
            "%s", errs);
  cr_expect(strstr(errs, "validators[3].config: is required") != NULL, "%s",
            errs);
  free(errs);
}
