/* agent_run scoring through the engine (docs/evaluation-specs.md): each
 * strategy with gates passing, failing and unavailable; the validity
 * ladder; the null overall score; and the validators at their edges
 * (empty, Unicode, invalid UTF-8, huge, regex limits). */
#include "support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A spec of validators and a scorecard (JSON texts) scored on a run with
 * final output `output` (a JSON string literal, or NULL for none). */
static cJSON *score(const char *validators, const char *scorecard,
                    const char *output) {
  size_t n = strlen(validators) + strlen(scorecard) + 1024;
  size_t olen = output != NULL ? strlen(output) : 0;
  char *task = malloc(n), *job = malloc(olen + 1024);
  char *events = malloc(olen + 512);
  snprintf(task, n,
           "{\"name\": \"t\", \"task_type\": \"agent_run\", \"max_score\": "
           "10, \"score_precision\": 2, \"evaluation_spec\": {\"name\": \"e\", "
           "\"version_number\": 1, \"judge_mode\": \"deterministic\", "
           "\"validators\": [%s], \"metrics\": [{\"key\": \"done\", \"type\": "
           "\"boolean\", \"collector\": \"run_completed_successfully\"}, "
           "{\"key\": \"fails\", \"type\": \"numeric\", \"collector\": "
           "\"run_failure_count\"}], \"scorecard\": %s}}",
           validators, scorecard);
  events[0] = '\0';
  if (output != NULL)
    snprintf(events, olen + 512,
             "{\"type\": \"system.run.completed\", \"sequence_number\": 1, "
             "\"occurred_at\": \"2026-01-01T00:00:00Z\", \"payload\": "
             "{\"final_output\": %s}}",
             output);
  snprintf(job, olen + 1024,
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"events\": [%s]}}",
           events);
  free(events);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s\n%s", task, job);
  free(task);
  free(job);
  return r;
}

#define LIT(key, type, actual, expected)                                       \
  "{\"key\": \"" key "\", \"type\": \"" type                                   \
  "\", \"target\": \"literal:" actual                                          \
  "\", \"expected_from\": \"literal:" expected "\"}"
#define LITC(key, type, actual, expected, config)                              \
  "{\"key\": \"" key "\", \"type\": \"" type                                   \
  "\", \"target\": \"literal:" actual                                          \
  "\", \"expected_from\": \"literal:" expected "\", \"config\": " config "}"

#define PASS LIT("pass", "exact_match", "a", "a")
#define FAIL LIT("fail", "exact_match", "a", "b")
#define HALF LITC("half", "fuzzy_match", "ab", "ab", "{\"threshold\": 0}")
/* needs the final output: unavailable without one */
#define OUT                                                                    \
  "{\"key\": \"out\", \"type\": \"contains\", \"target\": \"final_output\", "  \
  "\"expected_from\": \"literal:ok\"}"

#define DIM(key, validators, more)                                             \
  "{\"key\": \"" key                                                           \
  "\", \"source\": \"validators\", \"validators\": [" validators "]" more "}"

Test(evalspec_scoring, weighted_gate_failing_keeps_the_score) {
  cJSON *r = score(
      PASS "," FAIL,
      "{\"dimensions\": [" DIM("good", "\"pass\"", "") "," DIM(
          "bad", "\"fail\"", ", \"gate\": true, \"pass_threshold\": 0.5") "]}",
      "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0.5);
  cr_expect_eq(ts_num(r, "score"), 5);
  cr_expect_eq(ts_bool_at(r, "passed"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "weighted: gated dimension \"bad\" below pass_threshold");
  cJSON_Delete(r);
}

Test(evalspec_scoring, weighted_gate_unavailable_fails_the_verdict) {
  cJSON *r = score(PASS "," OUT,
                   "{\"dimensions\": [" DIM("good", "\"pass\"", "") "," DIM(
                       "needs_output", "\"out\"",
                       ", \"gate\": true, \"pass_threshold\": 0.5") "]}",
                   NULL);
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 1);
  cr_expect_eq(ts_bool_at(r, "passed"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "weighted: gated dimension \"needs_output\" is unavailable");
  cr_expect_str_eq(ts_str_at(r, "validity"), "degraded");
  cJSON_Delete(r);
}

Test(evalspec_scoring, weighted_scorecard_threshold_and_weights) {
  cJSON *r = score(PASS "," FAIL,
                   "{\"pass_threshold\": 0.8, \"dimensions\": [" DIM(
                       "good", "\"pass\"",
                       ", \"weight\": 3") "," DIM("bad", "\"fail\"", "") "]}",
                   "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0.75);
  cr_expect_eq(ts_bool_at(r, "passed"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "weighted: overall score 0.7500 below scorecard "
                   "pass_threshold 0.8000");
  cJSON_Delete(r);
  /* All weights zero: a plain mean. */
  r = score(PASS "," FAIL,
            "{\"dimensions\": [" DIM("good", "\"pass\"",
                                     ", \"weight\": 0") "," DIM("bad",
                                                                "\"fail\"",
                                                                ", \"weight\": "
                                                                "0") "]}",
            "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0.5);
  cr_expect_eq(ts_bool_at(r, "passed"), 1);
  cJSON_Delete(r);
}

Test(evalspec_scoring, binary_is_all_or_nothing) {
  cJSON *r =
      score(PASS "," HALF,
            "{\"strategy\": \"binary\", \"dimensions\": [" DIM(
                "a", "\"pass\"", ", \"pass_threshold\": 1") "," DIM("b",
                                                                    "\"h"
                                                                    "alf"
                                                                    "\"",
                                                                    ", "
                                                                    "\"p"
                                                                    "ass"
                                                                    "_th"
                                                                    "res"
                                                                    "hol"
                                                                    "d\""
                                                                    ": "
                                                                    "1") "]}",
            "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 1);
  cr_expect_eq(ts_bool_at(r, "passed"), 1);
  cJSON_Delete(r);
  r = score(PASS "," FAIL,
            "{\"strategy\": \"binary\", \"dimensions\": [" DIM(
                "a", "\"pass\"", ", \"pass_threshold\": 1") "," DIM("b",
                                                                    "\"fail\"",
                                                                    ", "
                                                                    "\"pass_"
                                                                    "threshold"
                                                                    "\": "
                                                                    "0.5") "]}",
            "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "binary: dimension \"b\" below pass_threshold");
  cJSON_Delete(r);
  /* Nothing available: 0, with the first unavailable dimension. */
  r = score(OUT,
            "{\"strategy\": \"binary\", \"dimensions\": [" DIM(
                "o", "\"out\"", ", \"pass_threshold\": 0") "]}",
            NULL);
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0);
  cr_expect_eq(ts_bool_at(r, "details.passed"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "binary: dimension \"o\" is unavailable");
  cJSON_Delete(r);
}

Test(evalspec_scoring, hybrid_gates_short_circuit) {
  const char *gate_fail = "{\"strategy\": \"hybrid\", \"dimensions\": [" DIM(
      "gate", "\"fail\"",
      ", \"gate\": true, \"pass_threshold\": 0.5") "," DIM("soft", "\"pass\"",
                                                           "") "]}";
  cJSON *r = score(PASS "," FAIL, gate_fail, "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0);
  cr_expect_eq(ts_num(r, "score"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "hybrid: gated dimension \"gate\" below pass_threshold");
  cJSON_Delete(r);
  /* A passing gate stays out of the mean. */
  r = score(PASS "," HALF "," FAIL,
            "{\"strategy\": \"hybrid\", \"pass_threshold\": 0.6, "
            "\"dimensions\": [" DIM("gate", "\"pass\"",
                                    ", \"gate\": true, \"pass_threshold\": "
                                    "0.5") "," DIM("soft",
                                                   "\"half\", "
                                                   "\"fail\"",
                                                   "") "]}",
            "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 0.5);
  cr_expect_eq(ts_bool_at(r, "passed"), 0);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "hybrid: non-gate weighted score 0.5000 below scorecard "
                   "pass_threshold 0.6000");
  cJSON_Delete(r);
  /* Every dimension a gate, all passing: 1. */
  r = score(
      PASS,
      "{\"strategy\": \"hybrid\", \"dimensions\": [" DIM(
          "gate", "\"pass\"", ", \"gate\": true, \"pass_threshold\": 1") "]}",
      "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.overall_score"), 1);
  cr_expect_str_eq(ts_str_at(r, "details.overall_reason"),
                   "hybrid: all dimensions are gates and all passed");
  cJSON_Delete(r);
}

Test(evalspec_scoring, the_validity_ladder) {
  /* valid */
  cJSON *r = score(PASS, "{\"dimensions\": [\"correctness\", \"reliability\"]}",
                   "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "validity"), "valid");
  cr_expect_str_eq(ts_str_at(r, "details.status"), "complete");
  cJSON_Delete(r);
  /* degraded: a dimension unavailable (reliability without the run's end) */
  r = score(PASS, "{\"dimensions\": [\"correctness\", \"reliability\"]}", NULL);
  cr_expect_str_eq(ts_str_at(r, "validity"), "degraded");
  cr_expect_str_eq(ts_str_at(r, "details.status"), "partial");
  cr_expect_str_eq(ts_str_at(r, "details.validity_reason"),
                   "dimension \"reliability\" unavailable: completion metric "
                   "is unavailable");
  cJSON_Delete(r);
  /* invalid: a validator in error, whatever else */
  r = score(LIT("bad", "regex_match", "a", "(") "," PASS,
            "{\"dimensions\": [" DIM("c", "\"pass\"", "") "]}", NULL);
  cr_expect_str_eq(ts_str_at(r, "validity"), "invalid");
  cr_expect(strncmp(ts_str_at(r, "details.validity_reason"),
                    "validator \"bad\" errored: invalid regex pattern",
                    46) == 0,
            "%s", ts_str_at(r, "details.validity_reason"));
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].outcome_class"),
                   "pack_error");
  cJSON_Delete(r);
}

Test(evalspec_scoring, no_overall_score_is_a_zero_with_its_reason) {
  cJSON *r =
      score(OUT, "{\"dimensions\": [" DIM("o", "\"out\"", "") "]}", NULL);
  cr_expect(cJSON_IsNull(ts_at(r, "overall_score")));
  cr_expect_eq(ts_num(r, "score"), 0);
  cr_expect_str_eq(ts_str_at(r, "score_reason"),
                   "no dimensions produced an available score");
  cr_expect_null(ts_at(r, "details.overall_score"));
  cr_expect_null(ts_at(r, "details.passed"));
  cJSON_Delete(r);
}

/* One validator's result on a spec of it alone. */
static cJSON *one(const char *validator, const char *output) {
  return score(validator, "{\"dimensions\": [\"correctness\"]}", output);
}

Test(evalspec_scoring, fuzzy_match_edges) {
  cJSON *r = one(LIT("f", "fuzzy_match", "", ""), "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               1);
  cJSON_Delete(r);
  /* Full case folding: STRASSE and straße are equal folded. */
  r = one(LITC("f", "fuzzy_match", "STRASSE", "straße",
               "{\"case_insensitive\": true}"),
          "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               1);
  cJSON_Delete(r);
  /* Code points, not bytes: é against e is one substitution of 2. */
  r = one(LIT("f", "fuzzy_match", "é", "e"), "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               0.5);
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "similarity 0.5000 is below threshold 0.8000");
  cJSON_Delete(r);
}

/* A run whose final output is not UTF-8 (raw bytes "caf\xe9") is refused
 * naming its field (issue 24): the evaluation would echo it. AgentClash's
 * Go decoder would read it as "caf\uFFFD"; tally follows the issue. */
Test(evalspec_scoring, a_final_output_that_is_not_utf8_is_refused) {
  cJSON *r = one("{\"key\": \"f\", \"type\": \"fuzzy_match\", \"target\": "
                 "\"final_output\", \"expected_from\": \"literal:café\", "
                 "\"config\": {\"threshold\": 0}}",
                 "\"caf\xe9\"");
  const char *error = ts_str_at(r, "error");
  cr_assert_not_null(error, "scored");
  cr_expect(strstr(error, "is not valid UTF-8") != NULL, "%s", error);
  cr_expect(strstr(error, "run.") != NULL, "names the field: %s", error);
  cJSON_Delete(r);
}

Test(evalspec_scoring, fuzzy_match_refuses_huge_inputs) {
  size_t n = 100001;
  char *big = malloc(n + 3);
  big[0] = '"';
  memset(big + 1, 'a', n);
  strcpy(big + 1 + n, "\"");
  cJSON *r = one("{\"key\": \"f\", \"type\": \"fuzzy_match\", \"target\": "
                 "\"final_output\", \"expected_from\": \"literal:a\"}",
                 big);
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].state"), "error");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "fuzzy_match input too large: inputs exceed 100000 runes");
  cJSON_Delete(r);
  free(big);
}

Test(evalspec_scoring, the_default_pipeline_folds_and_collapses) {
  /* trim, lowercase (case folding, Ÿ to ÿ), collapse_whitespace */
  cJSON *r =
      one(LITC("n", "normalized_match", "  Ÿ  X ", "ÿ x", "null"), "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
}

Test(evalspec_scoring, numeric_match_edges) {
  cJSON *r = one(LITC("n", "numeric_match", "Total: $1,200.50 USD", "1200.5",
                      "{\"extract_number\": true}"),
                 "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(LIT("n", "numeric_match", "abc", "1"), "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "parse actual numeric value: strconv.ParseFloat: parsing "
                   "\"abc\": invalid syntax");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].outcome_class"),
                   "evaluator_error");
  cJSON_Delete(r);
  r = one(LITC("n", "numeric_match", "102", "100",
               "{\"relative_tolerance\": 0.02}"),
          "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(
      LITC("n", "numeric_match", "1234", "1200", "{\"significant_digits\": 2}"),
      "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
}

Test(evalspec_scoring, normalized_and_token_f1_edges) {
  cJSON *r = one(LITC("n", "normalized_match", "ﬁle", "file",
                      "{\"pipeline\": [\"normalize_unicode\"]}"),
                 "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(LITC("n", "normalized_match", "the cat, an ox!", "cat ox",
               "{\"pipeline\": [\"strip_punctuation\", \"remove_articles\", "
               "\"collapse_whitespace\", \"trim\"]}"),
          "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(LIT("t", "token_f1", "", ""), "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               1);
  cJSON_Delete(r);
  r = one(LIT("t", "token_f1", "a b", ""), "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               0);
  cJSON_Delete(r);
  /* Clipped counts: "a a b" against "a b": precision 2/3, recall 1. */
  r = one(LIT("t", "token_f1", "a a b", "a b"), "\"x\"");
  cr_expect_eq(ts_num_at(r, "details.validator_results[0].normalized_score"),
               2 * (2.0 / 3) * 1 / (2.0 / 3 + 1));
  cJSON_Delete(r);
}

Test(evalspec_scoring, boolean_regex_and_json_path_edges) {
  cJSON *r = one(LIT("b", "boolean_assert", " YES ", "1"), "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(LIT("b", "boolean_assert", "maybe", "1"), "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "parse actual boolean assertion value: unsupported boolean "
                   "value \"maybe\"");
  cJSON_Delete(r);
  /* A pattern that backtracks without end hits the limit: an error. */
  char out[200];
  memset(out, 'a', 60);
  strcpy(out + 60, "b");
  char quoted[220];
  snprintf(quoted, sizeof(quoted), "\"%s\"", out);
  r = one("{\"key\": \"r\", \"type\": \"regex_match\", \"target\": "
          "\"final_output\", \"expected_from\": \"literal:^(a+)+$\"}",
          quoted);
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].state"), "error");
  cr_expect(strstr(ts_str_at(r, "details.validator_results[0].reason"),
                   "limit") != NULL,
            "%s", ts_str_at(r, "details.validator_results[0].reason"));
  cJSON_Delete(r);
  r = one(
      LIT("j", "json_path_match", "{\\\"a\\\": {\\\"b\\\": [1, 2]}}", "$.a.c"),
      "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "fail");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "json path did not resolve to a value");
  cJSON_Delete(r);
  r = one(LIT("j", "json_path_match", "{\\\"a\\\": {\\\"b\\\": [1, 2]}}",
              "{\\\"path\\\": \\\"$.a.b[1]\\\", \\\"comparator\\\": "
              "\\\"greater_than\\\", \\\"value\\\": 1.5}"),
          "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "pass");
  cJSON_Delete(r);
  r = one(LIT("j", "json_path_match", "not json", "$.a"), "\"x\"");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "parse actual JSON document: invalid character 'o' in "
                   "literal null (expecting 'u')");
  cJSON_Delete(r);
}

/* A JSON Schema whose keyword values have the wrong types (issue 24,
 * defect 10): the reference decodes a schema into a typed struct, so such
 * a schema is an error (the evaluation invalid, its dimension error,
 * validator_pass_rate unavailable), not a schema that passes or fails
 * every document. What its decoder takes (null for an optional keyword,
 * an integer written 2.0) is taken. */
static cJSON *with_schema(const char *schema, const char *doc) {
  char v[1024];
  snprintf(v, sizeof(v),
           "{\"key\": \"j\", \"type\": \"json_schema\", \"target\": "
           "\"literal:%s\", \"expected_from\": \"literal:%s\"}",
           doc, schema);
  return score(v,
               "{\"dimensions\": [{\"key\": \"correctness\", \"source\": "
               "\"validators\", \"validators\": [\"j\"]}]}",
               "\"x\"");
}

#define VR "details.validator_results[0]."

Test(evalspec_scoring, a_schema_of_wrong_keyword_types_is_an_error) {
  static const struct {
    const char *schema, *reason;
  } bad[] = {
      {"{\\\"minimum\\\": \\\"x\\\"}",
       "parse JSON schema: json: cannot unmarshal string into Go struct "
       "field .minimum of type float64"},
      {"{\\\"properties\\\": []}",
       "parse JSON schema: json: cannot unmarshal array into Go struct field "
       ".properties of type map[string]*jsonschema.Schema"},
      {"{\\\"type\\\": 5}",
       "parse JSON schema: invalid value for \"type\": \"5\""},
      {"{\\\"type\\\": null}",
       "parse JSON schema: invalid value for \"type\": \"null\""},
      {"{\\\"minLength\\\": 2.5}", "parse JSON schema: not an integer value"},
      {"{\\\"minLength\\\": \\\"2\\\"}", "parse JSON schema: not a number"},
      {"{\\\"maxItems\\\": 4294967296}",
       "parse JSON schema: integer is out of range"},
      {"{\\\"required\\\": [1]}",
       "parse JSON schema: json: cannot unmarshal number into Go struct "
       "field .required of type string"},
      {"{\\\"not\\\": 5}", "parse JSON schema: json: cannot unmarshal number "
                           "into Go value of type jsonschema.Schema"},
      {"{\\\"properties\\\": {\\\"a\\\": {\\\"pattern\\\": 7}}}",
       "parse JSON schema: json: cannot unmarshal number into Go struct "
       "field .pattern of type string"},
      {"{\\\"uniqueItems\\\": \\\"yes\\\"}",
       "parse JSON schema: json: cannot unmarshal string into Go struct field "
       ".uniqueItems of type bool"},
      {"{\\\"allOf\\\": [null]}",
       "resolve JSON schema: jsonschema: schema at /allOf/0 is nil"},
      {"{\\\"properties\\\": {\\\"a/b\\\": null}}",
       "resolve JSON schema: jsonschema: schema at /properties/a~1b is nil"},
      {"{\\\"$defs\\\": {}, \\\"definitions\\\": {}}",
       "resolve JSON schema: both Defs and Definitions are set; at most one "
       "should be"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cJSON *r = with_schema(bad[i].schema, "{\\\"a\\\": 1}");
    cr_expect_str_eq(ts_str_at(r, VR "verdict"), "error", "%s", bad[i].schema);
    cr_expect_str_eq(ts_str_at(r, VR "reason"), bad[i].reason);
    cr_expect_str_eq(ts_str_at(r, "details.validity"), "invalid", "%s",
                     bad[i].schema);
    cr_expect_str_eq(ts_str_at(r, "details.dimension_results[0].state"),
                     "error", "%s", bad[i].schema);
    cJSON_Delete(r);
  }
  /* What the reference's decoder takes. */
  static const struct {
    const char *schema, *doc, *verdict;
  } good[] = {
      {"{\\\"minLength\\\": 2.0, \\\"maximum\\\": null, \\\"type\\\": "
       "\\\"string\\\"}",
       "\\\"abc\\\"", "pass"},
      {"{\\\"minLength\\\": 4.0}", "\\\"abc\\\"", "fail"},
      {"{\\\"items\\\": null, \\\"title\\\": null, \\\"required\\\": "
       "null}",
       "[1]", "pass"},
      {"{\\\"$schema\\\": \\\"\\\", \\\"type\\\": [\\\"object\\\"]}",
       "{\\\"a\\\": 1}", "pass"},
      {"null", "{\\\"a\\\": 1}", "fail"},
      {"{\\\"x-vendor\\\": [1, {\\\"minimum\\\": \\\"no\\\"}]}", "1", "pass"},
  };
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    cJSON *r = with_schema(good[i].schema, good[i].doc);
    cr_expect_str_eq(ts_str_at(r, VR "verdict"), good[i].verdict, "%s: %s",
                     good[i].schema, ts_str_at(r, VR "reason"));
    cJSON_Delete(r);
  }
}
