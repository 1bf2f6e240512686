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

/* Every validator type (json_schema twice: a schema of $dynamicRef and
 * unevaluatedProperties on the output, and the output as a schema), every
 * behavioral signal, the collectors, every dimension source and a judge
 * of each mode, whose raw samples a job may carry. */
static const char task_text[] =
    "{\"name\":\"run\",\"task_type\":\"agent_run\",\"max_score\":100,\"evalua"
    "tion_spec\":{\"name\":\"every\",\"version_number\":1,\"judge_mode\":\"hy"
    "brid\",\"validators\":[{\"key\":\"exact\",\"type\":\"exact_match\",\"tar"
    "get\":\"final_output\",\"expected_from\":\"case.expectations.answer\"},{"
    "\"key\":\"contains\",\"type\":\"contains\",\"target\":\"run.final_output"
    "\",\"expected_from\":\"case.payload.q\"},{\"key\":\"regex\",\"type\":\"r"
    "egex_match\",\"target\":\"final_output\",\"expected_from\":\"literal:^(a"
    "+)+$\"},{\"key\":\"bool\",\"type\":\"boolean_assert\",\"target\":\"case."
    "inputs.flag\",\"expected_from\":\"literal:yes\"},{\"key\":\"fuzzy\",\"ty"
    "pe\":\"fuzzy_match\",\"target\":\"transcript.full\",\"expected_from\":\""
    "challenge_input\",\"config\":{\"case_insensitive\":true,\"normalize\":tr"
    "ue}},{\"key\":\"num\",\"type\":\"numeric_match\",\"target\":\"final_outp"
    "ut\",\"expected_from\":\"case.expectations.num\",\"config\":{\"extract_n"
    "umber\":true,\"significant_digits\":3,\"relative_tolerance\":0.01}},{\"k"
    "ey\":\"norm\",\"type\":\"normalized_match\",\"target\":\"transcript.last"
    "_n:2\",\"expected_from\":\"artifact.doc.path\",\"config\":{\"pipeline\":"
    "[\"normalize_unicode\",\"lowercase\",\"strip_punctuation\",\"strip_curre"
    "ncy\",\"strip_formatting\",\"remove_articles\",\"sort_words\",\"sort_lin"
    "es\",\"trim\",\"collapse_whitespace\"]}},{\"key\":\"f1\",\"type\":\"toke"
    "n_f1\",\"target\":\"turn.expectations\",\"expected_from\":\"file:out\","
    "\"config\":{\"normalize\":true,\"remove_articles\":true,\"remove_punctua"
    "tion\":true}},{\"key\":\"path\",\"type\":\"json_path_match\",\"target\":"
    "\"final_output\",\"expected_from\":\"case.expectations.path\"},{\"key\":"
    "\"shape\",\"type\":\"json_schema\",\"target\":\"final_output\",\"expecte"
    "d_from\":\"literal:{\\\"$defs\\\": {\\\"n\\\": {\\\"$dynamicAnchor\\\": "
    "\\\"n\\\", \\\"type\\\": \\\"object\\\", \\\"properties\\\": {\\\"c\\\":"
    " {\\\"items\\\": {\\\"$dynamicRef\\\": \\\"#n\\\"}}}}}, \\\"$ref\\\": \\"
    "\"#/$defs/n\\\", \\\"unevaluatedProperties\\\": false}\"},{\"key\":\"sch"
    "ema\",\"type\":\"json_schema\",\"target\":\"case.payload\",\"expected_fr"
    "om\":\"final_output\"},{\"key\":\"bleu\",\"type\":\"bleu_score\",\"targe"
    "t\":\"final_output\",\"expected_from\":\"case.expectations.answer\",\"co"
    "nfig\":{\"smoothing\":\"method1\",\"max_ngram\":3}},{\"key\":\"rouge\","
    "\"type\":\"rouge_score\",\"target\":\"final_output\",\"expected_from\":"
    "\"case.payload.q\",\"config\":{\"variant\":\"rouge-2\"}},{\"key\":\"chrf"
    "\",\"type\":\"chrf_score\",\"target\":\"transcript.full\",\"expected_fro"
    "m\":\"challenge_input\"},{\"key\":\"math\",\"type\":\"math_equivalence\""
    ",\"target\":\"final_output\",\"expected_from\":\"case.expectations.num\""
    ",\"config\":{\"extract_answer\":true}},{\"key\":\"mathn\",\"type\":\"mat"
    "h_equivalence\",\"target\":\"case.payload.q\",\"expected_from\":\"final_"
    "output\",\"config\":{\"comparison_mode\":\"numeric\"}},{\"key\":\"tools"
    "\",\"type\":\"tool_call_assertion\",\"target\":\"tool_calls\",\"config\""
    ":{\"tool_name\":\"read\",\"min_count\":1,\"arguments_contain\":{\"path\""
    ":\"a\"},\"ordered_tools\":[\"read\",\"write\"],\"order_mode\":\"subseque"
    "nce\"}},{\"key\":\"fexists\",\"type\":\"file_exists\",\"target\":\"file:"
    "out\"},{\"key\":\"fcontent\",\"type\":\"file_content_match\",\"target\":"
    "\"file:out\",\"expected_from\":\"literal:done\",\"config\":{\"match_mode"
    "\":\"regex\"}},{\"key\":\"fschema\",\"type\":\"file_json_schema\",\"targ"
    "et\":\"file:out\",\"config\":{\"schema\":{\"type\":\"object\",\"required"
    "\":[\"a\"]}}},{\"key\":\"dirs\",\"type\":\"directory_structure\",\"targe"
    "t\":\"file:listing\",\"config\":{\"required_files\":[\"a.txt\"],\"forbid"
    "den_files\":[\"secret\"],\"required_directories\":[\"src/\"]}},{\"key\":"
    "\"post\",\"type\":\"postcondition\",\"target\":\"file:out\",\"config\":{"
    "\"condition\":\"json_path_match\",\"json_path\":\"$.a\",\"value\":1}},{"
    "\"key\":\"code\",\"type\":\"code_execution\",\"target\":\"file:out\",\"c"
    "onfig\":{\"test_command\":\"make test\",\"scoring\":\"fraction_passed\","
    "\"pass_threshold\":0.5}}],\"metrics\":[{\"key\":\"lat\",\"type\":\"numer"
    "ic\",\"collector\":\"run_total_latency_ms\"},{\"key\":\"ttft\",\"type\":"
    "\"numeric\",\"collector\":\"run_ttft_ms\"},{\"key\":\"in\",\"type\":\"nu"
    "meric\",\"collector\":\"run_input_tokens\"},{\"key\":\"agent\",\"type\":"
    "\"numeric\",\"collector\":\"run_agent_tokens\"},{\"key\":\"usd\",\"type"
    "\":\"numeric\",\"collector\":\"run_model_cost_usd\"},{\"key\":\"done\","
    "\"type\":\"boolean\",\"collector\":\"run_completed_successfully\"},{\"ke"
    "y\":\"fails\",\"type\":\"numeric\",\"collector\":\"run_failure_count\"},"
    "{\"key\":\"rate\",\"type\":\"numeric\",\"collector\":\"validator_pass_ra"
    "te\"},{\"key\":\"brec\",\"type\":\"numeric\",\"collector\":\"behavioral_"
    "recovery_score\"},{\"key\":\"bexp\",\"type\":\"numeric\",\"collector\":"
    "\"behavioral_exploration_efficiency_score\"}],\"llm_judges\":[{\"key\":"
    "\"judge\",\"mode\":\"rubric\",\"rubric\":\"r\",\"model\":\"gpt-4o\"},{\""
    "key\":\"verdict\",\"mode\":\"assertion\",\"assertion\":\"a\",\"models\":"
    "[\"gpt-4o\",\"claude-3-5-sonnet\"],\"consensus\":{\"aggregation\":\"unan"
    "imous\",\"min_agreement_threshold\":0.1},\"expect\":false},{\"key\":\"ra"
    "nk\",\"mode\":\"n_wise\",\"prompt\":\"p\",\"model\":\"gpt-4o\"},{\"key\""
    ":\"ref\",\"mode\":\"reference\",\"rubric\":\"r\",\"reference_from\":\"ca"
    "se.expectations.answer\",\"models\":[\"gpt-4o\",\"gemini-1.5-pro\"],\"co"
    "nsensus\":{\"aggregation\":\"median\"},\"score_scale\":{\"min\":0,\"max"
    "\":10}}],\"pricing\":{\"models\":[{\"provider_key\":\"openai\",\"provide"
    "r_model_id\":\"gpt-4o\",\"input_cost_per_million_tokens\":2.5,\"output_c"
    "ost_per_million_tokens\":10}]},\"scorecard\":{\"strategy\":\"hybrid\",\""
    "pass_threshold\":0.5,\"dimensions\":[\"correctness\",\"reliability\",{\""
    "key\":\"latency\",\"source\":\"latency\",\"better_direction\":\"lower\","
    "\"normalization\":{\"target\":1000,\"max\":60000},\"gate\":true,\"pass_t"
    "hreshold\":0.1},{\"key\":\"cost\",\"source\":\"cost\",\"better_direction"
    "\":\"lower\",\"normalization\":{\"target\":0.001,\"max\":1}},{\"key\":\""
    "rate\",\"source\":\"metric\",\"metric\":\"rate\",\"better_direction\":\""
    "higher\",\"normalization\":{\"target\":1,\"max\":0},\"weight\":2},{\"key"
    "\":\"quality\",\"source\":\"llm_judge\",\"judge_key\":\"judge\"},{\"key"
    "\":\"people\",\"source\":\"human_preference\",\"weight\":0},{\"key\":\"b"
    "eh\",\"source\":\"behavioral\"},{\"key\":\"v2\",\"source\":\"llm_judge\""
    ",\"judge_key\":\"verdict\"},{\"key\":\"r2\",\"source\":\"llm_judge\",\"j"
    "udge_key\":\"rank\"},{\"key\":\"f2\",\"source\":\"llm_judge\",\"judge_ke"
    "y\":\"ref\"}],\"judge_limits\":{\"max_samples_per_judge\":3}},\"post_exe"
    "cution_checks\":[{\"key\":\"out\",\"type\":\"file_capture\",\"path\":\"/"
    "w/out.json\"},{\"key\":\"listing\",\"type\":\"directory_listing\",\"path"
    "\":\"/w\"}],\"behavioral\":{\"signals\":[{\"key\":\"recovery_behavior\","
    "\"weight\":1},{\"key\":\"exploration_efficiency\",\"weight\":1},{\"key\""
    ":\"error_cascade\",\"weight\":1,\"gate\":true,\"pass_threshold\":0.2},{"
    "\"key\":\"scope_adherence\",\"weight\":2}]}}}";

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
