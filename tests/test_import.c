/* tally import (issue 26): lm-evaluation-harness's per-sample outputs as
 * tally jobs of one task for the whole benchmark, rescored by a tally
 * scorer or keeping the harness's metric; every line it cannot read
 * named; and the report over what it wrote. */
#include "cli_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];

static void setup(void) {
  tc_setup(dir, sizeof(dir), "import");
}

TestSuite(import, .init = setup, .fini = tc_teardown);

/* A generation task's samples: three responses to each of three
 * documents, then two lines it cannot take. */
static const char gsm[] =
    "{\"doc_id\": 0, \"doc\": {\"question\": \"1+1\"}, \"target\": \"2\", "
    "\"arguments\": {}, \"resps\": [[\"so 2.\", \"it is 3\", \"2\"]], "
    "\"filtered_resps\": [\"2\"], \"filter\": \"strict-match\", \"metrics\": "
    "[\"exact_match\"], \"doc_hash\": \"a\", \"prompt_hash\": \"b\", "
    "\"target_hash\": \"c\", \"exact_match\": 1.0}\n"
    "{\"doc_id\": 1, \"target\": \"10\", \"resps\": [[\"10\", \"10\", "
    "\"ten\"]], \"exact_match\": 1.0}\n"
    "{\"doc_id\": 2, \"target\": 7, \"resps\": [[\"7\", \"6\", \"5\"]], "
    "\"exact_match\": 0.0}\n"
    "\n"
    "{\"doc_id\": 3, \"target\": [\"a\"], \"resps\": [[\"a\"]]}\n"
    "{\"doc_id\": 4, \"target\"\n";

/* A multiple-choice task's: log-likelihoods, and the harness's acc. */
static const char mc[] =
    "{\"doc_id\": 0, \"target\": 1, \"resps\": [[[-1.5, false]], [[-0.2, "
    "true]]], \"filtered_resps\": [[-1.5, false], [-0.2, true]], "
    "\"metrics\": [\"acc\"], \"acc\": 1.0}\n"
    "{\"doc_id\": 1, \"target\": 0, \"resps\": [[[-1.5, false]], [[-0.2, "
    "true]]], \"metrics\": [\"acc\"], \"acc\": 0.0}\n"
    "{\"doc_id\": 2, \"target\": 0, \"resps\": [], \"acc\": 3}\n";

static tc_run_t run(const char *const *args) {
  return tc_run(args, NULL, NULL);
}

static size_t lines(char *text) {
  char *l[64];
  return tc_lines_of(text, l, 64);
}

Test(import, rescores_each_response_with_a_tally_scorer) {
  tc_write_file("samples_gsm8k_2026-11-29T10-00-00.jsonl", gsm);
  const char *args[] = {"import",
                        "--from",
                        "lm-eval",
                        "--participant",
                        "llama",
                        "--scorer",
                        "last_number",
                        "--task-dir",
                        tc_at("tasks"),
                        tc_at("samples_gsm8k_2026-11-29T10-00-00.jsonl"),
                        NULL};
  tc_run_t t = run(args);
  cr_expect_eq(t.status, 1, "a line rejected: %s", t.err);
  cr_expect(strstr(t.err, "samples_gsm8k_2026-11-29T10-00-00.jsonl:5: "
                          "target: must be a string or a number") != NULL,
            "%s", t.err);
  cr_expect(strstr(t.err, ".jsonl:6: not a JSON object") != NULL, "%s", t.err);
  cr_expect(strstr(t.err, "imported 9 samples of 3 documents (rescored by "
                          "tally's scorer), 2 lines rejected") != NULL,
            "%s", t.err);
  /* One job per response, the target and problem carried along. */
  char *first = strdup(t.out);
  cr_expect_eq(lines(first), 9, "%s", t.out);
  free(first);
  cr_expect(strstr(t.out,
                   "{\"submission\":\"llama/gsm8k/2/1\",\"participant\":"
                   "\"llama\",\"contest\":\"benchmark\",\"task\":"
                   "\"gsm8k\",\"problem\":2,\"category\":\"gsm8k\","
                   "\"target\":7,\"evaluations\":{\"answer\":\"6\"}}") != NULL,
            "%s", t.out);
  FILE *f = fopen(tc_at("jobs.jsonl"), "w");
  fputs(t.out, f);
  fclose(f);
  tc_run_free(&t);
  char *task = tc_slurp(tc_at("tasks/gsm8k.json"));
  cr_expect(strstr(task, "\"from_job\": {\"target\": \"target\"") != NULL, "%s",
            task);
  free(task);

  /* The report: three problems, pass@1 = (2/3 + 2/3 + 1/3) / 3. */
  const char *rep[] = {"report",  "--results",    tc_at("jobs.jsonl"),
                       "--tasks", tc_at("tasks"), "--json",
                       NULL};
  t = run(rep);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cJSON *r = cJSON_Parse(t.out);
  char *all = cJSON_PrintUnformatted(r);
  cr_expect(strstr(all, "\"problems\":3") != NULL, "%s", all);
  cr_expect(strstr(all, "\"samples\":9") != NULL, "%s", all);
  cr_expect(strstr(all, "0.5555555555555") != NULL, "%s", all);
  free(all);
  cJSON_Delete(r);
  tc_run_free(&t);
}

Test(import, keeps_the_harness_metric_as_the_reward) {
  tc_write_file("samples_mmlu_anatomy_2026-11-29T10-00-00.jsonl", mc);
  const char *args[] = {
      "import",  "--from",
      "lm-eval", "--participant",
      "llama",   "--metric",
      "acc",     "--contest",
      "bench",   tc_at("samples_mmlu_anatomy_2026-11-29T10-00-00.jsonl"),
      NULL};
  tc_run_t t = run(args);
  cr_expect_eq(t.status, 1, "%s", t.err);
  cr_expect(strstr(t.err, ":3: acc: must be a number from 0 to 1") != NULL,
            "%s", t.err);
  cr_expect(strstr(t.out, "\"task\":\"mmlu_anatomy\",\"problem\":1,"
                          "\"category\":\"mmlu_anatomy\",\"evaluations\":"
                          "{\"answer\":0}}") != NULL,
            "%s", t.out);
  tc_run_free(&t);
  /* Log-likelihoods cannot be rescored. */
  const char *rescore[] = {
      "import",      "--from",
      "lm-eval",     "--participant",
      "llama",       "--scorer",
      "multichoice", tc_at("samples_mmlu_anatomy_2026-11-29T10-00-00.jsonl"),
      NULL};
  t = run(rescore);
  cr_expect_eq(t.status, 1);
  cr_expect(strstr(t.err, ":1: resps: holds no texts") != NULL, "%s", t.err);
  tc_run_free(&t);
}

Test(import, refuses_what_it_cannot_do) {
  tc_write_file("results.jsonl", gsm);
  static const struct {
    const char *args[12];
    const char *want;
  } cases[] = {
      {{"import", "--from", "helm", "--participant", "m", "--metric", "acc",
        "x.jsonl", NULL},
       "--from helm: unknown harness"},
      {{"import", "--from", "lm-eval", "--participant", "m", "--scorer", "nope",
        "x.jsonl", NULL},
       "--scorer nope: no such comparator"},
      {{"import", "--from", "lm-eval", "--participant", "m", "--metric", "acc",
        "results.jsonl", NULL},
       "not named samples_<task>_<date>.jsonl: give --task"},
      {{"import", "--from", "lm-eval", "--participant", "m", "--metric", "acc",
        "--scorer", "last_number", "results.jsonl", NULL},
       "usage:"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tc_run_t t = run(cases[i].args);
    cr_expect_eq(t.status, 2, "%s", cases[i].want);
    cr_expect(strstr(t.err, cases[i].want) != NULL, "wanted %s: %s",
              cases[i].want, t.err);
    tc_run_free(&t);
  }
  /* A task file of another shape is never overwritten. */
  tc_write_file("samples_gsm8k_x.jsonl", gsm);
  const char *twice[] = {"import",      "--from",
                         "lm-eval",     "--participant",
                         "m",           "--metric",
                         "exact_match", "--task-dir",
                         tc_at("t"),    tc_at("samples_gsm8k_x.jsonl"),
                         NULL};
  tc_run_t t = run(twice);
  tc_run_free(&t);
  const char *other[] = {"import",      "--from",
                         "lm-eval",     "--participant",
                         "m",           "--scorer",
                         "last_number", "--task-dir",
                         tc_at("t"),    tc_at("samples_gsm8k_x.jsonl"),
                         NULL};
  t = run(other);
  cr_expect_eq(t.status, 2);
  cr_expect(strstr(t.err, "exists and differs") != NULL, "%s", t.err);
  tc_run_free(&t);
}

/* NeMo Evaluator's results.jsonl: a line per sample (problem_idx,
 * repeat), its reward, response, expected answer, category in metadata
 * and a failed model call's error in scoring_details. */
static const char nemo[] =
    "{\"problem_idx\": 0, \"repeat\": 0, \"reward\": 1.0, \"scorer_rewards\": "
    "{\"scorer:exact\": 1.0}, \"prompt\": \"1+1?\", \"model_response\": "
    "\"so 2\", \"extracted_answer\": \"2\", \"expected_answer\": \"2\", "
    "\"scoring_details\": {}, \"metadata\": {\"category\": \"arith\"}, "
    "\"tokens\": 5, \"latency_ms\": 30}\n"
    "{\"problem_idx\": 0, \"repeat\": 1, \"reward\": 0.0, \"scorer_rewards\": "
    "{\"scorer:exact\": 0.0}, \"model_response\": \"3\", "
    "\"expected_answer\": \"2\", \"metadata\": {\"category\": \"arith\"}}\n"
    "{\"problem_idx\": 1, \"repeat\": 0, \"reward\": 0.0, \"model_response\": "
    "\"\", \"expected_answer\": \"4\", \"scoring_details\": {\"error\": "
    "\"timeout\", \"error_category\": \"infra_error\"}, \"metadata\": {}}\n"
    "{\"problem_idx\": 2, \"repeat\": -1, \"reward\": 0.5}\n";

Test(import, reads_nemo_evaluator_results) {
  tc_write_file("results.jsonl", nemo);
  const char *args[] = {
      "import", "--from",   "nemo",     "--participant", "m",
      "--task", "simpleqa", "--scorer", "last_number",   tc_at("results.jsonl"),
      NULL};
  tc_run_t t = run(args);
  cr_expect_eq(t.status, 1, "%s", t.err);
  cr_expect(strstr(t.err, "results.jsonl:4: repeat: must be a whole number "
                          "from 0") != NULL,
            "%s", t.err);
  cr_expect(strstr(t.err, "imported 3 samples (rescored by tally's scorer), "
                          "1 line rejected") != NULL,
            "%s", t.err);
  cr_expect(strstr(t.out, "{\"submission\":\"m/simpleqa/0/1\",\"participant\":"
                          "\"m\",\"contest\":\"benchmark\",\"task\":"
                          "\"simpleqa\",\"problem\":0,\"category\":\"arith\","
                          "\"target\":\"2\",\"evaluations\":{\"answer\":"
                          "\"3\"}}") != NULL,
            "%s", t.out);
  cr_expect(strstr(t.out, "\"problem\":1,\"category\":\"simpleqa\",\"target\":"
                          "\"4\",\"evaluations\":{\"answer\":\"\"},\"error\":"
                          "\"timeout\"}") != NULL,
            "%s", t.out);
  tc_run_free(&t);
  /* The harness's reward, or one of its scorers'. */
  const char *metric[] = {
      "import",   "--from",   "nemo",  "--participant",        "m", "--task",
      "simpleqa", "--metric", "exact", tc_at("results.jsonl"), NULL};
  t = run(metric);
  cr_expect(strstr(t.out, "\"problem\":0,\"category\":\"arith\","
                          "\"evaluations\":{\"answer\":1},\"response\":"
                          "\"so 2\"}") != NULL,
            "%s", t.out);
  cr_expect(strstr(t.err, ":3: exact: is missing") != NULL, "%s", t.err);
  tc_run_free(&t);
  const char *no_task[] = {
      "import", "--from",   "nemo",   "--participant",
      "m",      "--metric", "reward", tc_at("results.jsonl"),
      NULL};
  t = run(no_task);
  cr_expect_eq(t.status, 2);
  cr_expect(strstr(t.err, "name no benchmark: give --task") != NULL, "%s",
            t.err);
  tc_run_free(&t);
}
