/* LLM judge results aggregated from raw samples (docs/evaluation-specs.md):
 * each judge mode's parsing, the per-model median or majority, every
 * consensus aggregation, variance, confidence, the per-judge sample
 * limit, the reasons of a judge that could not judge, and the job
 * decoder's rules for samples. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ME "11111111-1111-1111-1111-111111111111"

/* Scores one job whose llm_judge_results are entries (JSON text) against
 * a spec declaring judges (JSON text, the llm_judges members), each with
 * a dimension of the same key; limits is the judge_limits object or "". */
static cJSON *judge_run(const char *judges, const char *keys,
                        const char *limits, const char *entries) {
  char *task = malloc(8192), *job = malloc(16384), dims[1024] = "";
  size_t used = 0;
  char *k = strdup(keys);
  for (char *save = NULL, *t = strtok_r(k, ",", &save); t != NULL;
       t = strtok_r(NULL, ",", &save))
    used += (size_t)snprintf(dims + used, sizeof(dims) - used,
                             "%s{\"key\": \"%s\", \"source\": \"llm_judge\", "
                             "\"judge_key\": \"%s\"}",
                             used ? ", " : "", t, t);
  free(k);
  snprintf(task, 8192,
           "{\"name\": \"t\", \"task_type\": \"agent_run\", "
           "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
           "\"judge_mode\": \"hybrid\", \"validators\": [{\"key\": \"v\", "
           "\"type\": \"exact_match\", \"target\": \"literal:a\", "
           "\"expected_from\": \"literal:a\"}], "
           "\"llm_judges\": [%s], \"scorecard\": {\"dimensions\": [%s]%s%s}}}",
           judges, dims, limits[0] ? ", \"judge_limits\": " : "", limits);
  snprintf(job, 16384,
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"t\", "
           "\"run\": {\"run_agent_id\": \"" ME "\", \"events\": []}, "
           "\"llm_judge_results\": [%s]}",
           entries);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r, "%s", task);
  free(task);
  free(job);
  return r;
}

#define J "details.llm_judge_results[0]."
#define RUBRIC(extra)                                                          \
  "{\"key\": \"q\", \"mode\": \"rubric\", \"rubric\": \"r\", \"model\": "      \
  "\"gpt-4o\"" extra "}"
#define TWO_MODELS(mode, agg)                                                  \
  "{\"key\": \"q\", \"mode\": \"" mode                                         \
  "\", \"rubric\": \"r\", \"assertion\": "                                     \
  "\"a\", \"models\": [\"gpt-4o\", \"claude-3-5-sonnet\"], \"consensus\": "    \
  "{\"aggregation\": \"" agg "\"}}"

Test(judges, rubric_scale_median_variance_and_sanitizing) {
  /* 4 on 1..5 is 0.75; 9 is clamped to 5; a fenced block and an object
   * inside prose are read; the median of 0.75, 1, 0 is 0.75. */
  cJSON *r = judge_run(
      RUBRIC(""), "q", "",
      "{\"judge_key\": \"q\", \"samples\": ["
      "{\"model\": \"gpt-4o\", \"output\": \"```json\\n{\\\"score\\\": 4, "
      "\\\"confidence\\\": \\\" High \\\"}\\n```\"}, "
      "{\"model\": \" gpt-4o \", \"output\": \"Verdict: {\\\"score\\\": 9} "
      "done\"}, "
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": -3}\"}]}");
  cr_expect_float_eq(ts_num_at(r, J "normalized_score"), 0.75, 1e-12);
  cr_expect_str_eq(ts_str_at(r, J "mode"), "rubric");
  cr_expect_str_eq(ts_str_at(r, J "payload.calls[0].confidence"), "high");
  cr_expect_float_eq(ts_num_at(r, J "payload.calls[1].score"), 1, 1e-12);
  cr_expect_float_eq(ts_num_at(r, J "payload.calls[2].score"), 0, 1e-12);
  cr_expect_eq(ts_num_at(r, J "payload.calls[2].sample_index"), 3);
  /* The population variance of 0.75, 1, 0. */
  double m = 1.75 / 3;
  double var = ((0.75 - m) * (0.75 - m) + (1 - m) * (1 - m) + m * m) / 3;
  cr_expect_float_eq(ts_num_at(r, J "variance"), var, 1e-12);
  cr_expect_str_eq(ts_str_at(r, J "confidence"), "single-model");
  cr_expect_eq(ts_num_at(r, J "sample_count"), 3);
  cr_expect_eq(ts_num_at(r, J "model_count"), 1);
  cr_expect_float_eq(ts_num_at(r, "details.dimension_results[0].score"), 0.75,
                     1e-12);
  cJSON_Delete(r);
  /* A score scale of 0..10, and an even count: the mean of the middle. */
  r = judge_run(
      RUBRIC(", \"score_scale\": {\"min\": 0, \"max\": 10}"), "q", "",
      "{\"judge_key\": \"q\", \"samples\": ["
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": 2}\"},"
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": 5}\"}]}");
  cr_expect_float_eq(ts_num_at(r, J "normalized_score"), 0.35, 1e-12);
  cJSON_Delete(r);
}

Test(judges, assertion_verdicts_expect_and_ties) {
  /* Verdict words override pass; a tie between a pass and a fail
   * passes. */
  static const char judge[] =
      "{\"key\": \"q\", \"mode\": \"assertion\", \"assertion\": \"a\", "
      "\"model\": \"gpt-4o\"}";
  cJSON *r = judge_run(
      judge, "q", "",
      "{\"judge_key\": \"q\", \"samples\": ["
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"pass\\\": true, "
      "\\\"verdict\\\": \\\" FAIL \\\"}\"}, "
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"verdict\\\": \\\"yes\\\"}\"}"
      "]}");
  cr_expect_eq(ts_num_at(r, J "payload.calls[0].score"), 0);
  cr_expect_eq(ts_num_at(r, J "payload.calls[1].score"), 1);
  cr_expect_eq(ts_num_at(r, J "normalized_score"), 1);
  cJSON_Delete(r);
  /* expect: false turns each verdict over; an unknown verdict word keeps
   * pass (a key matched ignoring case). */
  r = judge_run("{\"key\": \"q\", \"mode\": \"assertion\", \"assertion\": "
                "\"a\", \"model\": \"gpt-4o\", \"expect\": false}",
                "q", "",
                "{\"judge_key\": \"q\", \"samples\": [{\"model\": \"gpt-4o\", "
                "\"output\": \"{\\\"PASS\\\": true, \\\"verdict\\\": "
                "\\\"maybe\\\"}\"}]}");
  cr_expect_eq(ts_num_at(r, J "normalized_score"), 0);
  cJSON_Delete(r);
}

/* The aggregated score and confidence of two models scoring a and b (on
 * 1..5) under aggregation agg, with threshold t ("" for none). */
static void two(const char *mode, const char *agg, const char *t, double a,
                double b, double want, const char *conf) {
  char judge[512], entries[1024];
  snprintf(judge, sizeof(judge),
           "{\"key\": \"q\", \"mode\": \"%s\", \"rubric\": \"r\", "
           "\"assertion\": \"a\", \"models\": [\"gpt-4o\", "
           "\"claude-3-5-sonnet\"], \"consensus\": {\"aggregation\": "
           "\"%s\"%s%s}}",
           mode, agg, t[0] ? ", \"min_agreement_threshold\": " : "", t);
  const char *key = strcmp(mode, "assertion") == 0 ? "pass" : "score";
  char va[16], vb[16];
  if (strcmp(key, "pass") == 0) {
    snprintf(va, sizeof(va), "%s", a > 0 ? "true" : "false");
    snprintf(vb, sizeof(vb), "%s", b > 0 ? "true" : "false");
  } else {
    snprintf(va, sizeof(va), "%g", a);
    snprintf(vb, sizeof(vb), "%g", b);
  }
  snprintf(entries, sizeof(entries),
           "{\"judge_key\": \"q\", \"samples\": ["
           "{\"model\": \"gpt-4o\", \"output\": \"{\\\"%s\\\": %s}\"}, "
           "{\"model\": \"claude-3-5-sonnet\", \"output\": \"{\\\"%s\\\": "
           "%s}\"}]}",
           key, va, key, vb);
  cJSON *r = judge_run(judge, "q", "", entries);
  cr_expect_float_eq(ts_num_at(r, J "normalized_score"), want, 1e-12,
                     "%s %s %g %g", mode, agg, a, b);
  cr_expect_str_eq(ts_str_at(r, J "confidence"), conf, "%s %s %g %g", mode, agg,
                   a, b);
  cr_expect_eq(ts_num_at(r, J "model_count"), 2);
  cJSON_Delete(r);
}

Test(judges, consensus_and_confidence) {
  two("rubric", "mean", "", 5, 3, 0.75, "low");     /* 1 and 0.5 */
  two("rubric", "median", "", 5, 3, 0.75, "low");   /* two: the mean */
  two("rubric", "mean", "", 5, 4, 0.875, "medium"); /* spread 0.25 */
  two("rubric", "mean", "0.2", 5, 4, 0.875, "low"); /* above 0.2 */
  two("rubric", "mean", "", 2, 2, 0.25, "high");    /* no spread */
  two("rubric", "unanimous", "", 5, 2, 0, "low");   /* 0.25 < 0.5 */
  two("rubric", "unanimous", "", 5, 3, 1, "low");   /* 0.5 counts */
  two("assertion", "majority_vote", "", 1, 0, 1, "low");
  two("assertion", "unanimous", "", 1, 0, 0, "low");
  two("assertion", "unanimous", "", 1, 1, 1, "high");
}

Test(judges, failures_warnings_and_the_sample_limit) {
  /* claude's samples both fail: gpt-4o alone decides, the warnings make
   * the confidence low, and only two samples per model count. */
  cJSON *r = judge_run(
      TWO_MODELS("rubric", "mean"), "q", "{\"max_samples_per_judge\": 2}",
      "{\"judge_key\": \"q\", \"samples\": ["
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": 5}\"}, "
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": 3}\"}, "
      "{\"model\": \"gpt-4o\", \"output\": \"{\\\"score\\\": 1}\"}, "
      "{\"model\": \"claude-3-5-sonnet\", \"error\": \"rate limited\"}, "
      "{\"model\": \"claude-3-5-sonnet\", \"output\": \"{\\\"score\\\": "
      "\\\"high\\\"}\"}, "
      "{\"model\": \"mistral\", \"output\": \"{}\"}]}");
  cr_expect_float_eq(ts_num_at(r, J "normalized_score"), 0.75, 1e-12);
  cr_expect_str_eq(ts_str_at(r, J "confidence"), "low");
  cr_expect_eq(ts_num_at(r, J "payload.ignored_samples"), 1);
  cr_expect_eq(ts_num_at(r, J "payload.undeclared_model_samples"), 1);
  cr_expect_eq(ts_num_at(r, J "sample_count"), 4);
  cr_expect_eq(ts_len_at(r, J "payload.warnings"), 2);
  cr_expect_str_eq(ts_str_at(r, J "payload.warnings[0]"),
                   "llm judge \"q\" model \"claude-3-5-sonnet\" sample 1: "
                   "rate limited");
  cr_expect_str_eq(
      ts_str_at(r, J "payload.calls[3].error"),
      "parse rubric judge response: json: cannot unmarshal string into Go "
      "struct field .score of type float64");
  cJSON_Delete(r);
  /* Nothing parses: no score, the reference's reason, and the dimension
   * is unavailable with it. */
  r = judge_run(RUBRIC(""), "q", "",
                "{\"judge_key\": \"q\", \"samples\": ["
                "{\"model\": \"gpt-4o\", \"output\": \"no json here\"}, "
                "{\"model\": \"gpt-4o\", \"output\": \"[1, 2]\"}]}");
  cr_expect_null(ts_at(r, J "normalized_score"));
  cr_expect_str_eq(ts_str_at(r, J "reason"),
                   "all judge invocations failed or returned unparsable "
                   "output");
  cr_expect_eq(ts_num_at(r, J "payload.unable_to_judge_count"), 2);
  cr_expect_str_eq(ts_str_at(r, J "payload.calls[0].error"),
                   "parse rubric judge response: invalid character 'o' in "
                   "literal null (expecting 'u')");
  cr_expect(strstr(ts_str_at(r, J "payload.calls[1].error"),
                   "cannot unmarshal array into Go value of type struct {") !=
            NULL);
  cr_expect_str_eq(ts_str_at(r, "details.dimension_results[0].state"),
                   "unavailable");
  cr_expect_str_eq(ts_str_at(r, "details.dimension_results[0].reason"),
                   "all judge invocations failed or returned unparsable "
                   "output");
  cJSON_Delete(r);
}

/* The error of one n_wise sample ranking (a JSON array text) over
 * candidates, or NULL when it scored (its score in *score). */
static char *nwise(const char *candidates, const char *ranking, double *score) {
  char entries[1024];
  snprintf(entries, sizeof(entries),
           "{\"judge_key\": \"q\", \"candidates\": %s, \"samples\": "
           "[{\"model\": \"gpt-4o\", \"output\": \"{\\\"ranked_ids\\\": "
           "%s}\"}]}",
           candidates, ranking);
  cJSON *r = judge_run("{\"key\": \"q\", \"mode\": \"n_wise\", \"prompt\": "
                       "\"p\", \"model\": \"gpt-4o\"}",
                       "q", "", entries);
  const char *e = ts_str_at(r, J "payload.calls[0].error");
  char *out = e != NULL ? strdup(e) : NULL;
  *score = ts_num_at(r, J "normalized_score");
  cJSON_Delete(r);
  return out;
}

Test(judges, n_wise_borda_and_its_errors) {
  static const char three[] = "[\"" ME "\", \"b\", \"c\"]";
  double s;
  cr_expect_null(nwise(three, "[\\\"b\\\", \\\"" ME "\\\", \\\"c\\\"]", &s));
  cr_expect_float_eq(s, 0.5, 1e-12);
  cr_expect_null(
      nwise(three, "[\\\" " ME " \\\", \\\"\\\", \\\"c\\\", \\\"b\\\"]", &s));
  cr_expect_float_eq(s, 1, 1e-12);
  static const struct {
    const char *ranking, *error;
  } bad[] = {
      {"[\\\"b\\\", \\\"x\\\"]",
       "n_wise judge returned unknown candidate id \"x\""},
      {"[\\\"b\\\", \\\" b\\\"]",
       "n_wise judge returned duplicate candidate id \"b\""},
      {"[\\\"b\\\", \\\"c\\\"]", "n_wise judge ranked 2 candidates, want 3"},
      {"[]", "n_wise judge response did not include a ranking array"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char *e = nwise(three, bad[i].ranking, &s);
    cr_expect(e != NULL && strcmp(e, bad[i].error) == 0, "%s: %s",
              bad[i].ranking, e ? e : "(none)");
    free(e);
  }
  char *e = nwise("[\"a\", \"b\"]", "[\\\"b\\\", \\\"a\\\"]", &s);
  cr_expect_str_eq(e, "n_wise judge omitted current run agent " ME);
  free(e);
  /* Fewer than two candidates: the reference's reason, no calls. */
  cJSON *r = judge_run("{\"key\": \"q\", \"mode\": \"n_wise\", \"prompt\": "
                       "\"p\", \"model\": \"gpt-4o\"}",
                       "q", "",
                       "{\"judge_key\": \"q\", \"candidates\": [\"" ME
                       "\"], \"samples\": [{\"model\": \"gpt-4o\", \"output\": "
                       "\"{}\"}]}");
  cr_expect_str_eq(ts_str_at(r, J "reason"),
                   "n_wise judges require at least two run agents in the run");
  cJSON_Delete(r);
}

Test(judges, the_job_decoder_checks_samples) {
  static const struct {
    const char *entry, *error;
  } bad[] = {
      {"{\"judge_key\": \"q\", \"samples\": {}}",
       "llm_judge_results[0].samples: must be an array of samples"},
      {"{\"judge_key\": \"q\", \"samples\": [{\"output\": \"x\"}]}",
       "llm_judge_results[0].samples[0]: model: must be a string"},
      {"{\"judge_key\": \"q\", \"samples\": [{\"model\": \"m\", \"output\": "
       "\"x\", \"error\": \"y\"}]}",
       "llm_judge_results[0].samples[0]: must have one of output and error"},
      {"{\"judge_key\": \"q\", \"samples\": [{\"model\": \"m\", \"output\": "
       "1}]}",
       "llm_judge_results[0].samples[0]: output: must be a string"},
      {"{\"judge_key\": \"q\", \"samples\": [], \"normalized_score\": 1}",
       "llm_judge_results[0].normalized_score: is computed from the samples"},
      {"{\"judge_key\": \"q\", \"candidates\": [1]}",
       "llm_judge_results[0].candidates: must be an array of run agent ids"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cJSON *r = judge_run(RUBRIC(""), "q", "", bad[i].entry);
    const char *e = ts_str_at(r, "error");
    cr_expect(e != NULL && strstr(e, bad[i].error) != NULL, "%s: %s",
              bad[i].entry, e ? e : "(no error)");
    cJSON_Delete(r);
  }
  /* Samples of a judge the spec does not declare score nothing. */
  cJSON *r = judge_run(RUBRIC(""), "q", "",
                       "{\"judge_key\": \"other\", \"samples\": []}");
  cr_expect_str_eq(ts_str_at(r, J "reason"),
                   "llm judge \"other\" has samples but is not declared in "
                   "the spec");
  cJSON_Delete(r);
}
