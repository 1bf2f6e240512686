/* The generation-metric validators of evaluation specs
 * (docs/evaluation-specs.md): bleu_score, rouge_score and chrf_score on
 * hand-computed values and the check value, their references,
 * normalization, evidence and errors, their config rules with paths, and
 * Go's Exp and Log, which BLEU's figures are built from. */
#include "evalspecs/gomath.h"
#include "support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scores one validator (JSON text) on a run without events; returns the
 * result (the caller deletes it). */
static cJSON *one(const char *validator) {
  char task[4096];
  snprintf(
      task, sizeof(task),
      "{\"name\": \"t\", \"task_type\": \"agent_run\", \"evaluation_spec\": "
      "{\"name\": \"e\", \"version_number\": 1, \"judge_mode\": "
      "\"deterministic\", \"validators\": [%s], \"scorecard\": "
      "{\"dimensions\": [\"correctness\"]}}}",
      validator);
  cJSON *r = ts_run(task, "{\"submission\": \"s\", \"participant\": \"p\", "
                          "\"task\": \"t\", \"run\": {\"events\": []}}");
  cr_assert_not_null(r, "%s", task);
  return r;
}

#define V(type, actual, expected, config)                                      \
  "{\"key\": \"g\", \"type\": \"" type "\", \"target\": \"literal:" actual     \
  "\", \"expected_from\": \"literal:" expected "\"" config "}"

#define RAW "details.validator_results[0].raw_output."
#define SCORE "details.validator_results[0].normalized_score"

static double near(double a, double b) {
  return fabs(a - b) < 5e-7;
}

Test(generation, chrf_check_value_and_orders) {
  /* The check value: "kitten" against "sitting" is 0.190251. */
  cJSON *r = one(V("chrf_score", "kitten", "sitting", ""));
  double s = ts_num_at(r, SCORE);
  cr_expect(near(s, 0.190251), "chrF %.9f", s);
  cr_expect_eq(ts_num_at(r, RAW "computed_orders"), 6);
  cr_expect_eq(ts_num_at(r, RAW "candidate_length"), 6);
  cr_expect_eq(ts_num_at(r, RAW "reference_length"), 7);
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "fail");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "score 0.1903 is below threshold 0.3000");
  cJSON_Delete(r);
  /* White space is not a character; the best reference wins. */
  r = one(V("chrf_score", "a b c", "[\\\"xyz\\\", \\\"abc\\\"]", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 1);
  cr_expect_eq(ts_num_at(r, RAW "reference_length"), 3);
  cJSON_Delete(r);
  /* Two empty texts score 1; one empty text 0. */
  r = one(V("chrf_score", "", "", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 1);
  cJSON_Delete(r);
  r = one(V("chrf_score", "abc", " ", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 0);
  cJSON_Delete(r);
}

Test(generation, bleu_by_hand) {
  /* candidate "the cat sat on the mat", reference "the cat is on the
   * mat": p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0 -> 0 without smoothing. */
  cJSON *r = one(
      V("bleu_score", "the cat sat on the mat", "the cat is on the mat", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 0);
  cr_expect_eq(ts_num_at(r, RAW "brevity_penalty"), 1);
  const cJSON *p = ts_at(r, RAW "precisions");
  cr_assert_eq(cJSON_GetArraySize(p), 4);
  cr_expect(near(cJSON_GetArrayItem(p, 0)->valuedouble, 5.0 / 6));
  cr_expect(near(cJSON_GetArrayItem(p, 1)->valuedouble, 3.0 / 5));
  cr_expect(near(cJSON_GetArrayItem(p, 2)->valuedouble, 1.0 / 4));
  cJSON_Delete(r);
  /* method1 smooths p4 to 1/(3+1): the geometric mean of 5/6, 3/5, 1/4,
   * 1/4. */
  r = one(V("bleu_score", "the cat sat on the mat", "the cat is on the mat",
            ", \"config\": {\"smoothing\": \"method1\"}"));
  double want = pow(5.0 / 6 * 3.0 / 5 * 1.0 / 4 * 1.0 / 4, 0.25);
  cr_expect(near(ts_num_at(r, SCORE), want), "%.9f vs %.9f",
            ts_num_at(r, SCORE), want);
  cJSON_Delete(r);
  /* Brevity: 2 tokens against 4 gives exp(1 - 2) at max_ngram 2. */
  r = one(
      V("bleu_score", "a b", "a b c d", ", \"config\": {\"max_ngram\": 2}"));
  cr_expect(near(ts_num_at(r, SCORE), exp(-1)), "%.9f", ts_num_at(r, SCORE));
  cr_expect_eq(ts_num_at(r, RAW "computed_orders"), 2);
  cJSON_Delete(r);
  /* The closest reference length, ties to the shorter. */
  r = one(V("bleu_score", "a b c", "[\\\"a b\\\", \\\"a b c d\\\"]", ""));
  cr_expect_eq(ts_num_at(r, RAW "reference_length"), 2);
  cJSON_Delete(r);
  /* An empty candidate scores 1 only against one empty reference. */
  r = one(V("bleu_score", " ", "", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 1);
  cJSON_Delete(r);
  r = one(V("bleu_score", "", "[\\\"\\\", \\\"\\\"]", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 0);
  cJSON_Delete(r);
  /* Case folding and white space, when asked. */
  r = one(V("bleu_score", "THE  Straße", "the strasse",
            ", \"config\": {\"case_insensitive\": true, \"normalize\": true, "
            "\"max_ngram\": 2}"));
  cr_expect_eq(ts_num_at(r, SCORE), 1);
  cJSON_Delete(r);
}

Test(generation, rouge_variants) {
  /* ROUGE-L: LCS of "the cat sat on the mat" and "the cat on a mat" is
   * 4: P = 4/6, R = 4/5. */
  cJSON *r =
      one(V("rouge_score", "the cat sat on the mat", "the cat on a mat", ""));
  double p = 4.0 / 6, rc = 4.0 / 5;
  cr_expect(near(ts_num_at(r, SCORE), 2 * p * rc / (p + rc)));
  cr_expect_str_eq(ts_str_at(r, RAW "variant"), "rouge-l");
  cJSON_Delete(r);
  /* ROUGE-2 with beta 2: bigrams matched "the cat" only: P 1/5, R 1/4. */
  r = one(V("rouge_score", "the cat sat on the mat", "the cat on a mat",
            ", \"config\": {\"variant\": \"rouge-2\", \"beta\": 2}"));
  p = 1.0 / 5;
  rc = 1.0 / 4;
  cr_expect(near(ts_num_at(r, SCORE), 5 * p * rc / (4 * p + rc)));
  cJSON_Delete(r);
  /* ROUGE-1 clips repeated tokens. */
  r = one(V("rouge_score", "the the the", "the cat",
            ", \"config\": {\"variant\": \"rouge-1\"}"));
  p = 1.0 / 3;
  rc = 1.0 / 2;
  cr_expect(near(ts_num_at(r, SCORE), 2 * p * rc / (p + rc)));
  cJSON_Delete(r);
  /* Two empty texts score 0. */
  r = one(V("rouge_score", "", "", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 0);
  cJSON_Delete(r);
}

Test(generation, references_and_their_errors) {
  /* An array of non-strings is an error of the pack. */
  cJSON *r = one(V("bleu_score", "x", "[1, 2]", ""));
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].verdict"),
                   "error");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "parse bleu_score references: expected a JSON array of "
                   "reference strings");
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].outcome_class"),
                   "pack_error");
  cr_expect_str_eq(ts_str_at(r, RAW "expected_raw"), "[1, 2]");
  cJSON_Delete(r);
  r = one(V("rouge_score", "x", "[]", ""));
  cr_expect_str_eq(ts_str_at(r, "details.validator_results[0].reason"),
                   "parse rouge_score references: at least one reference is "
                   "required");
  cJSON_Delete(r);
  /* Text that starts with "[" but is no JSON is one literal reference. */
  r = one(V("chrf_score", "[x] y", "[x] y", ""));
  cr_expect_eq(ts_num_at(r, SCORE), 1);
  cJSON_Delete(r);
}

Test(generation, config_rules_with_paths) {
  struct {
    const char *config, *want;
  } cases[] = {
      {"\"bleu_score\", \"config\": {\"max_ngram\": 0}",
       "config.max_ngram: must be greater than 0"},
      {"\"bleu_score\", \"config\": {\"smoothing\": \"method2\"}",
       "config.smoothing: must be \"none\" or \"method1\""},
      {"\"bleu_score\", \"config\": {\"threshold\": 1.5}",
       "config.threshold: must be between 0 and 1"},
      {"\"bleu_score\", \"config\": {\"max_ngram\": 2.5}",
       "config.max_ngram: must be a whole number"},
      {"\"rouge_score\", \"config\": {\"variant\": \"rouge-3\"}",
       "config.variant: must be \"rouge-1\", \"rouge-2\", or \"rouge-l\""},
      {"\"rouge_score\", \"config\": {\"beta\": 0}",
       "config.beta: must be greater than 0"},
      {"\"chrf_score\", \"config\": {\"char_order\": -1}",
       "config.char_order: must be greater than 0"},
      {"\"chrf_score\", \"config\": {\"order\": 3}",
       "config.order: unknown key"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char task[2048];
    snprintf(task, sizeof(task),
             "{\"name\": \"t\", \"task_type\": \"agent_run\", "
             "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
             "\"judge_mode\": \"deterministic\", \"validators\": [{\"key\": "
             "\"g\", \"type\": %s, \"target\": \"final_output\", "
             "\"expected_from\": \"literal:x\"}], \"scorecard\": "
             "{\"dimensions\": [\"correctness\"]}}}",
             cases[i].config);
    char *errs = ts_task_errors(task);
    cr_expect(errs != NULL && strstr(errs, cases[i].want) != NULL,
              "case %zu: wanted \"%s\" in %s", i, cases[i].want,
              errs ? errs : "(accepted)");
    free(errs);
  }
}

static uint64_t bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof(b));
  return b;
}

Test(generation, go_exp_and_log_bits) {
  /* The bits Go 1.19's amd64 Exp (its FMA path and, with
   * GODEBUG=cpu.fma=off, the other) and Log give for 0.3331234698572598,
   * where glibc gives ...ac and ...af: each is one ulp from the others. */
  double x = 0.3331234698572598;
  cr_expect_eq(bits(tally_go_exp_path(x, true)), 0x3ff6533a9c6ec2abull);
  cr_expect_eq(bits(tally_go_exp_path(x, false)), 0x3ff6533a9c6ec2aaull);
  cr_expect_eq(bits(tally_go_log(x)), 0xbff1967edc4b2bb0ull);
  cr_expect_eq(tally_go_log(1), 0);
  cr_expect(isinf(tally_go_log(0)) && tally_go_log(0) < 0);
  cr_expect(isnan(tally_go_log(-1)));
  cr_expect_eq(tally_go_exp(0), 1);
  cr_expect_eq(tally_go_exp(-INFINITY), 0);
  cr_expect(isinf(tally_go_exp(710)));
  cr_expect_eq(tally_go_exp(-746), 0);
  for (int fused = 0; fused < 2; fused++) {
    double worst = 0;
    for (double x = -700; x < 700; x += 0.7431) {
      double e = tally_go_exp_path(x, fused), g = exp(x);
      double ulps = fabs(e - g) / (nextafter(g, INFINITY) - g);
      worst = ulps > worst ? ulps : worst;
    }
    cr_expect(worst <= 1, "path %d: %g ulps from glibc", fused, worst);
  }
}
