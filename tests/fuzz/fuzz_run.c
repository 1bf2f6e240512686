/* A libFuzzer target that scores arbitrary bytes as a job against an
 * agent_run task whose evaluation spec uses every validator this version
 * scores, every metric collector and every dimension source, and checks
 * that the reply is one JSON object whose score lies in [0, max_score]
 * and whose overall score, when it has one, lies in [0, 1]. The seeds are
 * runs, so the mutations reach the run decoder, the evidence and the
 * validators. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "fuzz_reply.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

/* Every validator of this version (json_schema twice: a schema of
 * $dynamicRef and unevaluatedProperties on the output, and the output as
 * a schema), every collector and every dimension source. */
static const char task_text[] =
    "{\"name\":\"run\",\"task_type\":\"agent_run\",\"max_score\":100,\"eval"
    "uation_spec\":{\"name\":\"every\",\"version_number\":1,\"judge_mode\":"
    "\"hybrid\",\"validators\":[{\"key\":\"exact\",\"type\":\"exact_match\""
    ",\"target\":\"final_output\",\"expected_from\":\"case.expectations.ans"
    "wer\"},{\"key\":\"contains\",\"type\":\"contains\",\"target\":\"run.fi"
    "nal_output\",\"expected_from\":\"case.payload.q\"},{\"key\":\"regex\","
    "\"type\":\"regex_match\",\"target\":\"final_output\",\"expected_from\""
    ":\"literal:^(a+)+$\"},{\"key\":\"bool\",\"type\":\"boolean_assert\",\""
    "target\":\"case.inputs.flag\",\"expected_from\":\"literal:yes\"},{\"ke"
    "y\":\"fuzzy\",\"type\":\"fuzzy_match\",\"target\":\"transcript.full\","
    "\"expected_from\":\"challenge_input\",\"config\":{\"case_insensitive\""
    ":true,\"normalize\":true}},{\"key\":\"num\",\"type\":\"numeric_match\""
    ",\"target\":\"final_output\",\"expected_from\":\"case.expectations.num"
    "\",\"config\":{\"extract_number\":true,\"significant_digits\":3,\"rela"
    "tive_tolerance\":0.01}},{\"key\":\"norm\",\"type\":\"normalized_match"
    "\",\"target\":\"transcript.last_n:2\",\"expected_from\":\"artifact.doc"
    ".path\",\"config\":{\"pipeline\":[\"normalize_unicode\",\"lowercase\","
    "\"strip_punctuation\",\"strip_currency\",\"strip_formatting\",\"remove"
    "_articles\",\"sort_words\",\"sort_lines\",\"trim\",\"collapse_whitespa"
    "ce\"]}},{\"key\":\"f1\",\"type\":\"token_f1\",\"target\":\"turn.expect"
    "ations\",\"expected_from\":\"file:out\",\"config\":{\"normalize\":true"
    ",\"remove_articles\":true,\"remove_punctuation\":true}},{\"key\":\"pat"
    "h\",\"type\":\"json_path_match\",\"target\":\"final_output\",\"expecte"
    "d_from\":\"case.expectations.path\"},{\"key\":\"shape\",\"type\":\"jso"
    "n_schema\",\"target\":\"final_output\",\"expected_from\":\"literal:{"
    "\\\"$defs\\\": {\\\"n\\\": {\\\"$dynamicAnchor\\\": \\\"n\\\", \\\"typ"
    "e\\\": \\\"object\\\", \\\"properties\\\": {\\\"c\\\": {\\\"items\\\":"
    " {\\\"$dynamicRef\\\": \\\"#n\\\"}}}}}, \\\"$ref\\\": \\\"#/$defs/n"
    "\\\", \\\"unevaluatedProperties\\\": false}\"},{\"key\":\"schema\",\"t"
    "ype\":\"json_schema\",\"target\":\"case.payload\",\"expected_from\":\""
    "final_output\"}],\"metrics\":[{\"key\":\"lat\",\"type\":\"numeric\",\""
    "collector\":\"run_total_latency_ms\"},{\"key\":\"ttft\",\"type\":\"num"
    "eric\",\"collector\":\"run_ttft_ms\"},{\"key\":\"in\",\"type\":\"numer"
    "ic\",\"collector\":\"run_input_tokens\"},{\"key\":\"agent\",\"type\":"
    "\"numeric\",\"collector\":\"run_agent_tokens\"},{\"key\":\"usd\",\"typ"
    "e\":\"numeric\",\"collector\":\"run_model_cost_usd\"},{\"key\":\"done"
    "\",\"type\":\"boolean\",\"collector\":\"run_completed_successfully\"},"
    "{\"key\":\"fails\",\"type\":\"numeric\",\"collector\":\"run_failure_co"
    "unt\"},{\"key\":\"rate\",\"type\":\"numeric\",\"collector\":\"validato"
    "r_pass_rate\"}],\"llm_judges\":[{\"key\":\"judge\",\"mode\":\"rubric\""
    ",\"rubric\":\"r\",\"model\":\"gpt-4o\"}],\"pricing\":{\"models\":[{\"p"
    "rovider_key\":\"openai\",\"provider_model_id\":\"gpt-4o\",\"input_cost"
    "_per_million_tokens\":2.5,\"output_cost_per_million_tokens\":10}]},\"s"
    "corecard\":{\"strategy\":\"hybrid\",\"pass_threshold\":0.5,\"dimension"
    "s\":[\"correctness\",\"reliability\",{\"key\":\"latency\",\"source\":"
    "\"latency\",\"better_direction\":\"lower\",\"normalization\":{\"target"
    "\":1000,\"max\":60000},\"gate\":true,\"pass_threshold\":0.1},{\"key\":"
    "\"cost\",\"source\":\"cost\",\"better_direction\":\"lower\",\"normaliz"
    "ation\":{\"target\":0.001,\"max\":1}},{\"key\":\"rate\",\"source\":\"m"
    "etric\",\"metric\":\"rate\",\"better_direction\":\"higher\",\"normaliz"
    "ation\":{\"target\":1,\"max\":0},\"weight\":2},{\"key\":\"quality\",\""
    "source\":\"llm_judge\",\"judge_key\":\"judge\"},{\"key\":\"people\",\""
    "source\":\"human_preference\",\"weight\":0}]}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tally_taskset_entry_t entry;
  static tally_taskset_t tasks = {.entries = &entry, .count = 1};
  static tally_engine_t engine;
  static tally_buf_t out;
  static int ready;
  if (!ready) {
    tally_registry_t reg;
    tally_diag_t d;
    if (tally_registry_init(&reg) != 0)
      abort();
    tally_diag_init(&d, "run.json");
    if (tally_task_parse(&reg, task_text, strlen(task_text), &d, &entry.task) !=
        0) {
      fprintf(stderr, "%s\n", d.count ? d.msgs[0] : "task: error");
      abort();
    }
    tally_diag_close(&d);
    tally_registry_close(&reg);
    entry.file = "run.json";
    tally_engine_init(&engine, &tasks);
    engine.default_task = entry.task;
    tally_buf_init(&out);
    ready = 1;
  }
  tally_buf_reset(&out);
  int rc = tally_engine_score(&engine, (const char *)data, size, NULL, &out);
  if (rc != 0 && rc != TALLY_EJOB)
    abort();
  cJSON *reply = fuzz_reply(&out);
  const cJSON *score = cJSON_GetObjectItemCaseSensitive(reply, "score");
  const cJSON *overall =
      cJSON_GetObjectItemCaseSensitive(reply, "overall_score");
  if ((score != NULL && !(cJSON_IsNumber(score) && score->valuedouble >= 0 &&
                          score->valuedouble <= 100)) ||
      (cJSON_IsNumber(overall) &&
       !(overall->valuedouble >= 0 && overall->valuedouble <= 1))) {
    fprintf(stderr, "a score out of range: %s\n", tally_buf_text(&out));
    abort();
  }
  cJSON_Delete(reply);
  if (rc == 0) {
    /* The contestant's view is a JSON object too. */
    tally_buf_reset(&out);
    if (tally_engine_view(&engine, false, &out) != 0)
      abort();
    if (out.len > 0) /* none for a job that names no participant */
      cJSON_Delete(fuzz_reply(&out));
  }
  return 0;
}
