/* agent_run task configs (docs/evaluation-specs.md): the evaluation_spec
 * block accepted as the reference writes it, every rule refused with its
 * JSON path, every error reported at once. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An agent_run task whose spec has the given validators, scorecard and
 * further spec members (",..." or ""). */
static char *task_of(const char *validators, const char *scorecard,
                     const char *more) {
  size_t n = strlen(validators) + strlen(scorecard) + strlen(more) + 512;
  char *t = malloc(n);
  snprintf(t, n,
           "{\"name\": \"t\", \"task_type\": \"agent_run\", \"max_score\": "
           "100, \"evaluation_spec\": {\"name\": \"e\", \"version_number\": "
           "1, \"judge_mode\": \"deterministic\", \"validators\": [%s], "
           "\"scorecard\": %s%s}}",
           validators, scorecard, more);
  return t;
}

#define EXACT                                                                  \
  "{\"key\": \"exact\", \"type\": \"exact_match\", \"target\": "               \
  "\"final_output\", \"expected_from\": \"case.expectations.answer\"}"
#define CORRECT "{\"dimensions\": [\"correctness\"]}"

static void expect_ok(const char *task) {
  char *errs = ts_task_errors(task);
  cr_expect(errs != NULL && errs[0] == '\0', "refused: %s\n%s",
            errs ? errs : "", task);
  free(errs);
}

static void expect_error(const char *task, const char *message) {
  char *errs = ts_task_errors(task);
  cr_expect(errs != NULL && strstr(errs, message) != NULL,
            "wanted \"%s\" in: %s", message, errs ? errs : "(accepted)");
  free(errs);
}

static void spec_error(const char *validators, const char *scorecard,
                       const char *more, const char *message) {
  char *t = task_of(validators, scorecard, more);
  expect_error(t, message);
  free(t);
}

static void spec_ok(const char *validators, const char *scorecard,
                    const char *more) {
  char *t = task_of(validators, scorecard, more);
  expect_ok(t);
  free(t);
}

Test(evalspec_config, a_full_spec_loads) {
  spec_ok(
      EXACT
      ",{\"key\": \"fz\", \"type\": \"fuzzy_match\", \"target\": "
      "\"run.final_output\", \"expected_from\": \"literal:hello\", "
      "\"config\": {\"threshold\": 0.7, \"case_insensitive\": true, "
      "\"normalize\": false}}"
      ",{\"key\": \"num\", \"type\": \"numeric_match\", \"target\": "
      "\"final_output\", \"expected_from\": \"case.payload.answer\", "
      "\"config\": {\"tolerance_mode\": \"absolute\", \"tolerance\": 0.5}}"
      ",{\"key\": \"norm\", \"type\": \"normalized_match\", \"target\": "
      "\"final_output\", \"expected_from\": \"artifact.gold.path\", "
      "\"config\": {\"normalizations\": [\"trim\", \"sort_words\"]}}"
      ",{\"key\": \"f1\", \"type\": \"token_f1\", \"target\": "
      "\"transcript.last_n:3\", \"expected_from\": "
      "\"case.inputs.question\", \"config\": {\"threshold\": 0.4, "
      "\"remove_articles\": true}}"
      ",{\"key\": \"re\", \"type\": \"regex_match\", \"target\": "
      "\"final_output\", \"expected_from\": \"literal:^ok\", \"config\": "
      "{\"anything\": [1, 2]}}",
      "{\"dimensions\": [\"correctness\", \"reliability\", \"latency\", "
      "\"cost\", {\"key\": \"speed\", \"source\": \"metric\", \"metric\": "
      "\"ttft\", \"better_direction\": \"lower\", \"normalization\": "
      "{\"target\": 100, \"max\": 5000}, \"weight\": 0.5, \"gate\": true, "
      "\"pass_threshold\": 0.2}, {\"key\": \"hp\", \"source\": "
      "\"human_preference\", \"weight\": 0}], \"strategy\": \"hybrid\", "
      "\"pass_threshold\": 0.5, \"normalization\": {\"latency\": "
      "{\"target_ms\": 1000}, \"cost\": {\"target_usd\": 0.01, "
      "\"max_usd\": 1}}}",
      ",\"metrics\": [{\"key\": \"ttft\", \"type\": \"numeric\", "
      "\"collector\": \"run_ttft_ms\", \"unit\": \"ms\"}, {\"key\": "
      "\"odd\", \"type\": \"text\", \"collector\": \"no_such_collector\"}],"
      "\"runtime_limits\": {\"max_duration_ms\": 60000, \"max_iterations\": "
      "10}, \"pricing\": {\"models\": [{\"provider_key\": \"openai\", "
      "\"provider_model_id\": \"gpt-4o\", \"input_cost_per_million_tokens\": "
      "2.5, \"output_cost_per_million_tokens\": 10}]}");
}

Test(evalspec_config, unknown_keys_and_types_are_named_by_path) {
  spec_error(EXACT, CORRECT, ",\"extra\": 1",
             "evaluation_spec.extra: unknown key");
  spec_error(
      "{\"key\": \"k\", \"type\": \"exact_match\", \"target\": "
      "\"final_output\", \"expected_from\": \"literal:x\", \"wieght\": 1}",
      CORRECT, "", "evaluation_spec.validators[0].wieght: unknown key");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"correctness\", \"wieght\": 1}]}",
             "", "evaluation_spec.scorecard.dimensions[0].wieght: unknown key");
  spec_error(EXACT, CORRECT, ",\"version_number\": \"1\"", "key appears twice");
  spec_error(EXACT, "{\"dimensions\": \"correctness\"}", "",
             "evaluation_spec.scorecard.dimensions: must be an array");
  spec_error(EXACT, CORRECT, ",\"runtime_limits\": {\"max_iterations\": 1.5}",
             "evaluation_spec.runtime_limits.max_iterations: must be a whole "
             "number");
}

Test(evalspec_config, the_top_level_rules) {
  char *t = task_of("", "{\"dimensions\": []}", "");
  expect_error(t, "evaluation_spec.validators: must contain at least one "
                  "validator");
  expect_error(t, "evaluation_spec.scorecard.dimensions: must contain at least "
                  "one dimension");
  free(t);
  const char *bad_top =
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"  \", \"version_number\": 0, \"judge_mode\": \"auto\", "
      "\"validators\": [" EXACT "], \"scorecard\": " CORRECT "}}";
  expect_error(bad_top, "evaluation_spec.name: is required");
  expect_error(bad_top,
               "evaluation_spec.version_number: must be greater than 0");
  expect_error(bad_top, "evaluation_spec.judge_mode: must be one of");
  spec_error(EXACT, CORRECT,
             ",\"llm_judges\": [{\"key\": \"j\", \"mode\": "
             "\"rubric\", \"rubric\": \"r\", \"model\": \"gpt-4o\"}]",
             "evaluation_spec.llm_judges: must be empty when judge_mode is "
             "deterministic");
  spec_error(EXACT,
             "{\"dimensions\": [\"correctness\"], \"strategy\": \"best\"}", "",
             "evaluation_spec.scorecard.strategy: must be one of weighted, "
             "binary, hybrid");
  spec_error(EXACT, CORRECT, ",\"runtime_limits\": {\"max_iterations\": 1001}",
             "runtime_limits.max_iterations: must be between 1 and 1000");
  spec_error(EXACT, CORRECT, ",\"runtime_limits\": {\"max_cost_usd\": 0}",
             "runtime_limits.max_cost_usd: must be greater than 0");
}

Test(evalspec_config, validator_rules) {
  spec_error(EXACT "," EXACT, CORRECT, "",
             "evaluation_spec.validators[1].key: must be unique");
  spec_error("{\"key\": \" \", \"type\": \"exact_match\", \"target\": "
             "\"final_output\", \"expected_from\": \"literal:x\"}",
             CORRECT, "", "evaluation_spec.validators[0].key: is required");
  spec_error("{\"key\": \"k\", \"type\": \"exactly\", \"target\": "
             "\"final_output\", \"expected_from\": \"literal:x\"}",
             CORRECT, "",
             "evaluation_spec.validators[0].type: is not a supported "
             "validator type");
  spec_error("{\"key\": \"k\", \"type\": \"exact_match\", \"target\": "
             "\"final_output\"}",
             CORRECT, "",
             "evaluation_spec.validators[0].expected_from: is required");
  const char *bad_refs[] = {
      "case.payload.",       "case.inputs.a..b",    "artifact.", "file:  ",
      "transcript.last_n:0", "transcript.last_n:x", "final",     "case.other"};
  for (size_t i = 0; i < sizeof(bad_refs) / sizeof(bad_refs[0]); i++) {
    char v[256];
    snprintf(v, sizeof(v),
             "{\"key\": \"k\", \"type\": \"contains\", \"target\": \"%s\", "
             "\"expected_from\": \"literal:x\"}",
             bad_refs[i]);
    spec_error(v, CORRECT, "",
               "evaluation_spec.validators[0].target: must be a supported "
               "evidence reference");
  }
  const char *good_refs[] = {"final_output",
                             "run.final_output",
                             "challenge_input",
                             "case.payload",
                             "case.payload.a.b",
                             "case.inputs.q",
                             "case.expectations.x.0",
                             "artifact.a.path",
                             "file:out",
                             "literal:",
                             "transcript.full",
                             "transcript.from_mismatch",
                             "turn.expectations",
                             "transcript.last_n: 5"};
  for (size_t i = 0; i < sizeof(good_refs) / sizeof(good_refs[0]); i++) {
    char v[256];
    snprintf(v, sizeof(v),
             "{\"key\": \"k\", \"type\": \"contains\", \"target\": \"%s\", "
             "\"expected_from\": \"literal:x\"}",
             good_refs[i]);
    spec_ok(v, CORRECT, "");
  }
  /* Every type the reference lists is scored; a file validator's capture
   * is looked for when the run is scored, as the reference does. */
  spec_ok("{\"key\": \"k\", \"type\": \"file_exists\", \"target\": "
          "\"file:out\"}",
          CORRECT, "");
  spec_ok("{\"key\": \"k\", \"type\": \"math_equivalence\", \"target\": "
          "\"final_output\", \"expected_from\": \"literal:1/2\"}",
          CORRECT, "");
}

Test(evalspec_config, validator_configs) {
#define WITH(type, config)                                                     \
  "{\"key\": \"k\", \"type\": \"" type "\", \"target\": \"final_output\", "    \
  "\"expected_from\": \"literal:x\", \"config\": " config "}"
  spec_error(WITH("fuzzy_match", "{\"threshold\": 1.5}"), CORRECT, "",
             "validators[0].config.threshold: must be between 0 and 1");
  spec_error(WITH("fuzzy_match", "{\"cutoff\": 0.5}"), CORRECT, "",
             "validators[0].config.cutoff: unknown key");
  spec_error(WITH("fuzzy_match", "5"), CORRECT, "",
             "validators[0].config: must be an object");
  spec_ok(WITH("fuzzy_match", "null"), CORRECT, "");
  spec_error(WITH("numeric_match",
                  "{\"tolerance\": 0.1, \"relative_tolerance\": 0.1}"),
             CORRECT, "", "cannot mix tolerance_mode/tolerance");
  spec_error(WITH("numeric_match", "{\"tolerance_mode\": \"fuzzy\"}"), CORRECT,
             "", "tolerance_mode must be either");
  spec_error(WITH("numeric_match", "{\"absolute_tolerance\": -1}"), CORRECT, "",
             "validators[0].config.absolute_tolerance: must be greater than "
             "or equal to 0");
  spec_error(WITH("numeric_match", "{\"tolerance\": -1}"), CORRECT, "",
             "validators[0].config.relative_tolerance: must be greater than "
             "or equal to 0");
  spec_error(WITH("numeric_match", "{\"significant_digits\": 0}"), CORRECT, "",
             "validators[0].config.significant_digits: must be greater than 0");
  spec_error(WITH("numeric_match", "{\"significant_digits\": 2.5}"), CORRECT,
             "", "validators[0].config.significant_digits: must be a whole");
  spec_error(WITH("normalized_match",
                  "{\"pipeline\": [\"trim\"], \"normalizations\": [\"trim\"]}"),
             CORRECT, "", "cannot mix pipeline with normalizations");
  spec_error(
      WITH("normalized_match", "{\"normalizations\": [\"trim\", \"up\"]}"),
      CORRECT, "",
      "validators[0].config.pipeline[1]: \"up\" is not a supported "
      "normalization step");
  spec_error(WITH("token_f1", "{\"threshold\": -0.1}"), CORRECT, "",
             "validators[0].config.threshold: must be between 0 and 1");
  spec_ok(WITH("exact_match", "[\"ignored\"]"), CORRECT, "");
#undef WITH
}

Test(evalspec_config, metric_rules) {
  spec_error(EXACT, CORRECT,
             ",\"metrics\": [{\"key\": \"m\", \"type\": \"number\", "
             "\"collector\": \" \"}]",
             "evaluation_spec.metrics[0].type: is not a supported metric type");
  spec_error(EXACT, CORRECT,
             ",\"metrics\": [{\"key\": \"m\", \"type\": \"numeric\", "
             "\"collector\": \" \"}]",
             "evaluation_spec.metrics[0].collector: is required");
  spec_error(EXACT, CORRECT,
             ",\"metrics\": [{\"key\": \"exact\", \"type\": \"numeric\", "
             "\"collector\": \"run_ttft_ms\"}]",
             "evaluation_spec.metrics[0].key: collides with validator key "
             "\"exact\"");
  spec_error(EXACT, CORRECT,
             ",\"metrics\": [{\"key\": \"m\", \"type\": \"numeric\", "
             "\"collector\": \"run_ttft_ms\"}, {\"key\": \"m\", \"type\": "
             "\"numeric\", \"collector\": \"run_ttft_ms\"}]",
             "evaluation_spec.metrics[1].key: must be unique");
}

Test(evalspec_config, dimension_rules) {
  spec_error(EXACT, "{\"dimensions\": [\"speediness\"]}", "",
             "scorecard.dimensions[0].source: must be one of");
  spec_error(EXACT, "{\"dimensions\": [\"correctness\", \"correctness\"]}", "",
             "scorecard.dimensions[1]: must be unique");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"validators\": [\"nope\"]}]}",
             "",
             "scorecard.dimensions[0].validators[0]: references unknown "
             "validator key \"nope\"");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"better_direction\": \"lower\"}]}",
             "",
             "scorecard.dimensions[0].better_direction: must be "
             "\"higher\" for validators source (got \"lower\")");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"m\", \"source\": \"metric\", "
             "\"better_direction\": \"lower\"}]}",
             "",
             "scorecard.dimensions[0].metric: is required when source is "
             "metric");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"m\", \"source\": \"metric\", "
             "\"metric\": \"x\", \"better_direction\": \"lower\"}]}",
             "",
             "scorecard.dimensions[0].normalization: is required when "
             "source is metric");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"m\", \"source\": "
             "\"latency\", \"better_direction\": \"up\", \"normalization\": "
             "{\"target\": 1}}]}",
             "",
             "scorecard.dimensions[0].better_direction: must be higher or "
             "lower");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"m\", \"source\": "
             "\"latency\", \"better_direction\": \"lower\", \"normalization\": "
             "{\"target\": 1}}]}",
             "", "scorecard.dimensions[0].normalization.max: is required");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"m\", \"source\": "
             "\"cost\", \"better_direction\": \"higher\", \"normalization\": "
             "{\"target\": 1, \"max\": 2}}]}",
             "",
             "scorecard.dimensions[0].normalization.max: must be less "
             "than target when better_direction is higher");
  /* latency with the legacy normalization, max from runtime_limits. */
  spec_ok(EXACT,
          "{\"dimensions\": [\"latency\"], \"normalization\": "
          "{\"latency\": {\"target_ms\": 100}}}",
          ",\"runtime_limits\": {\"max_duration_ms\": 5000}");
  spec_error(EXACT, "{\"dimensions\": [\"latency\"]}", "",
             "scorecard.dimensions[0].normalization: is required when source "
             "is latency");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"weight\": -1}]}",
             "",
             "scorecard.dimensions[0].weight: must be greater than or "
             "equal to 0");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"gate\": true}]}",
             "",
             "scorecard.dimensions[0].pass_threshold: is required when "
             "the dimension is gated or strategy is binary");
  spec_error(EXACT,
             "{\"dimensions\": [\"correctness\"], \"strategy\": "
             "\"binary\"}",
             "", "scorecard.dimensions[0].pass_threshold: is required");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"pass_threshold\": 1.2}]}",
             "",
             "scorecard.dimensions[0].pass_threshold: must be between 0 "
             "and 1");
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"judge_key\": \"j\"}]}",
             "",
             "scorecard.dimensions[0].judge_key: must be empty unless "
             "source is llm_judge");
  spec_error(EXACT, "{\"dimensions\": [\"behavioral\"]}", "",
             "evaluation_spec.behavioral: is required when a scorecard "
             "dimension uses source behavioral");
}

Test(evalspec_config, strategy_rules) {
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"c\", \"source\": "
             "\"validators\", \"pass_threshold\": 0.5}], \"strategy\": "
             "\"binary\", \"pass_threshold\": 0.5}",
             "",
             "scorecard.pass_threshold: must not be set for binary "
             "strategy");
  spec_error(EXACT,
             "{\"dimensions\": [\"correctness\"], \"strategy\": "
             "\"hybrid\"}",
             "",
             "scorecard.strategy: hybrid strategy requires at least one "
             "gated dimension");
  spec_error(EXACT,
             "{\"dimensions\": [\"correctness\"], \"judge_limits\": "
             "{\"max_samples_per_judge\": 11}}",
             "",
             "scorecard.judge_limits.max_samples_per_judge: must be "
             "between 0 and 10");
}

Test(evalspec_config, judges_behavioral_pricing_and_checks) {
  char *t = malloc(4096);
  snprintf(
      t, 4096,
      "{\"name\": \"t\", \"task_type\": \"agent_run\", "
      "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
      "\"judge_mode\": \"hybrid\", \"validators\": [" EXACT "], "
      "\"llm_judges\": [{\"key\": \"exact\", \"mode\": \"rubric\", "
      "\"model\": \"gpt-4o\"}, {\"key\": \"j2\", \"mode\": \"rubric\", "
      "\"model\": \"llama\"}, {\"key\": \"j3\", \"mode\": \"assertion\", "
      "\"assertion\": \"uses ${secrets.KEY}\", \"models\": [\"gpt-4o\", "
      "\"claude-3\"], \"consensus\": {\"aggregation\": \"mean\"}}, "
      "{\"key\": \"j4\", \"mode\": \"reference\", \"rubric\": \"r\", "
      "\"model\": \"a/b\", \"samples\": 11}], "
      "\"behavioral\": {\"signals\": [{\"key\": \"confidence_calibration\", "
      "\"weight\": 0}]}, "
      "\"pricing\": {\"models\": [{\"provider_key\": \"p\", "
      "\"provider_model_id\": \"m\"}, {\"provider_key\": \"p\", "
      "\"provider_model_id\": \"m\", \"input_cost_per_million_tokens\": "
      "-1}]}, "
      "\"post_execution_checks\": [{\"key\": \"out\", \"type\": \"zip\", "
      "\"path\": \"\"}], "
      "\"scorecard\": {\"dimensions\": [{\"key\": \"q\", \"source\": "
      "\"llm_judge\", \"judge_key\": \"missing\"}]}}}");
  expect_error(t, "llm_judges[0].key: collides with validator key \"exact\"");
  expect_error(t, "llm_judges[1].rubric: is required for rubric mode");
  expect_error(t, "llm_judges[1].model: must be inferable to a known judge "
                  "provider");
  expect_error(t, "llm_judges[2].consensus.aggregation: \"mean\" aggregation "
                  "is only valid for numeric modes");
  expect_error(t, "llm_judges[2].assertion: must not contain ${secrets.*}");
  expect_error(t, "llm_judges[3].reference_from: is required for reference "
                  "mode");
  expect_error(t, "llm_judges[3].samples: must be at most 10");
  expect_error(t, "behavioral.signals[0].key: is not supported until "
                  "confidence reporting lands");
  expect_error(t, "behavioral.signals[0].weight: must be greater than 0");
  expect_error(t, "pricing.models[1].input_cost_per_million_tokens: must be "
                  "greater than or equal to 0");
  expect_error(t, "pricing.models[1]: must be unique by provider_key and "
                  "provider_model_id");
  expect_error(t, "post_execution_checks[0].type: must be file_capture or "
                  "directory_listing");
  expect_error(t, "post_execution_checks[0].path: is required");
  expect_error(t, "scorecard.dimensions[0].judge_key: references unknown judge "
                  "key \"missing\"");
  free(t);
}

Test(evalspec_config, task_keys_of_other_types_are_refused) {
  expect_error("{\"name\": \"t\", \"task_type\": \"agent_run\"}",
               "evaluation_spec: is missing");
  char *t = task_of(EXACT, CORRECT, "");
  /* A score type's key on an agent_run task. */
  char *u = malloc(strlen(t) + 64);
  sprintf(u, "{\"score_type\": \"Sum\", %s", t + 1);
  expect_error(u, "score_type: an agent_run task is scored by its "
                  "evaluation_spec: it takes no score_type");
  free(u);
  free(t);
  expect_error("{\"name\": \"t\", \"score_type\": \"Sum\", "
               "\"score_type_parameters\": 10, \"testcases\": {\"a\": true}, "
               "\"evaluation_spec\": {}}",
               "evaluation_spec: only an agent_run task");
  expect_error("{\"name\": \"t\", \"task_type\": \"agent_run\", \"max_score\": "
               "0, \"evaluation_spec\": {}}",
               "max_score: must be a number above 0");
}

/* The rules of the parts the next issue scores, decoded and checked now. */
Test(evalspec_config, the_rest_of_the_rules) {
  static const struct {
    const char *more, *message;
  } cases[] = {
      {",\"runtime_limits\": {\"max_total_tokens\": 0}",
       "runtime_limits.max_total_tokens: must be greater than 0"},
      {",\"runtime_limits\": {\"max_duration_ms\": -5}",
       "runtime_limits.max_duration_ms: must be greater than 0"},
      {",\"pricing\": {\"models\": [{\"provider_key\": \"p\"}]}",
       "pricing.models[0].provider_model_id: is required"},
      {",\"post_execution_checks\": [{\"key\": \"k\", \"type\": "
       "\"file_capture\", \"path\": \"/p\", \"max_size_bytes\": -1}]",
       "post_execution_checks[0].max_size_bytes: must be greater than or "
       "equal to 0"},
      {",\"post_execution_checks\": [{\"key\": \"k\", \"type\": "
       "\"file_capture\", \"path\": \"/p\"}, {\"key\": \"k\", \"type\": "
       "\"directory_listing\", \"path\": \"/q\"}]",
       "post_execution_checks[1].key: must be unique"},
      {",\"behavioral\": {\"signals\": []}",
       "behavioral.signals: must contain at least one signal"},
      {",\"behavioral\": {\"signals\": [{\"key\": \"error_cascade\", "
       "\"weight\": 1, \"gate\": true}]}",
       "behavioral.signals[0].pass_threshold: is required when the signal is "
       "gated"},
      {",\"behavioral\": {\"signals\": [{\"key\": \"error_cascade\", "
       "\"weight\": 1, \"pass_threshold\": 2}]}",
       "behavioral.signals[0].pass_threshold: must be between 0 and 1"},
      {",\"behavioral\": {\"signals\": [{\"key\": \"error_cascade\", "
       "\"weight\": 1}, {\"key\": \"error_cascade\", \"weight\": 1}]}",
       "behavioral.signals[1].key: must be unique"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    spec_error(EXACT, CORRECT, cases[i].more, cases[i].message);
}

Test(evalspec_config, judge_rules) {
#define JUDGES(list)                                                           \
  "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "      \
  "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": \"llm_judge\", "   \
  "\"validators\": [" EXACT "], \"llm_judges\": [" list "], "                  \
  "\"scorecard\": {\"dimensions\": [\"correctness\"], \"judge_limits\": "      \
  "{\"max_calls_usd\": -1, \"max_tokens\": -2}}}}"
  const char *t = JUDGES(
      "{\"key\": \"a\", \"mode\": \"rubric\", \"rubric\": \"r\", \"model\": "
      "\"gpt-4o\", \"samples\": -1, \"timeout_ms\": 0, \"score_scale\": "
      "{\"min\": 5, \"max\": 1}, \"output_schema\": {\"$schema\": "
      "\"http://json-schema.org/draft-04/schema#\"}},"
      "{\"key\": \"b\", \"mode\": \"rubric\", \"rubric\": \"r\", \"model\": "
      "\"gpt-4o\", \"consensus\": {\"aggregation\": \"median\"}},"
      "{\"key\": \"c\", \"mode\": \"reference\", \"rubric\": \"r\", "
      "\"reference_from\": \"nowhere\", \"models\": [\"gpt-4o\", \"\"], "
      "\"consensus\": {\"aggregation\": \"median\", "
      "\"min_agreement_threshold\": 2}},"
      "{\"key\": \"d\", \"mode\": \"vote\", \"model\": \"gpt-4o\"},"
      "{\"key\": \"e\", \"mode\": \"n_wise\", \"prompt\": \" \", \"model\": "
      "\"gpt-4o\", \"context_from\": [\"final_output\", \"bad\"]}");
  static const char *const messages[] = {
      "llm_judges[0].samples: must be greater than or equal to 0",
      "llm_judges[0].timeout_ms: must be greater than 0",
      "llm_judges[0].score_scale: min must be strictly less than max",
      "llm_judges[0].output_schema: must be valid JSON Schema: unsupported "
      "JSON schema draft",
      "llm_judges[1].consensus: is only valid when multiple models are "
      "declared",
      "llm_judges[2].reference_from: must be a supported evidence reference",
      "llm_judges[2].models[1]: must be a non-empty model identifier",
      "llm_judges[2].consensus.min_agreement_threshold: must be between 0 "
      "and 1",
      "llm_judges[3].mode: must be one of rubric, assertion, n_wise, "
      "reference",
      "llm_judges[4].prompt: is required for n_wise mode",
      "llm_judges[4].context_from[1]: must be a supported evidence reference",
      "scorecard.judge_limits.max_calls_usd: must be greater than or equal to "
      "0",
      "scorecard.judge_limits.max_tokens: must be greater than or equal to 0",
  };
  for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
    expect_error(t, messages[i]);
  spec_error(EXACT,
             "{\"dimensions\": [{\"key\": \"q\", \"source\": \"llm_judge\", "
             "\"judge_key\": \"j\", \"better_direction\": \"lower\"}]}",
             ",\"judge_mode\": \"llm_judge\", \"llm_judges\": [{\"key\": "
             "\"j\", \"mode\": \"assertion\", \"assertion\": \"a\", "
             "\"model\": \"claude-3\"}]",
             "must be \"higher\" for llm_judge source (got \"lower\")");
#undef JUDGES
}

/* A repeated key is refused with its path, as every config key is; the
 * decoder still reads both values (to report every other error at once),
 * and under ASan nothing of the first one leaks (fuzz_task found that a
 * repeated "metrics" did). */
Test(evalspec_config, repeated_keys_are_refused_without_a_leak) {
  spec_error(EXACT, CORRECT,
             ", \"metrics\": [{\"key\": \"m1\", \"type\": \"numeric\", "
             "\"collector\": \"run_total_latency_ms\", \"unit\": \"ms\"}, "
             "{\"key\": \"m2\"}], \"metrics\": [{\"key\": \"m3\"}]",
             "evaluation_spec.metrics: key appears twice");
  spec_error(EXACT ", " EXACT, CORRECT, ", \"validators\": [" EXACT "]",
             "evaluation_spec.validators: key appears twice");
  spec_error(EXACT, CORRECT,
             ", \"llm_judges\": [{\"key\": \"j\", \"models\": [\"a\"], "
             "\"models\": [\"b\", \"c\"]}]",
             "models: key appears twice");
}
