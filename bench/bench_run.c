/* Runs scored per second on one core (docs/performance.md): an agent_run
 * task whose evaluation spec has 8 validators, 3 metrics and 4 dimensions,
 * each run 200 events long; each job parsed, its run decoded, its
 * evidence gathered, validated, scored and rendered with the whole
 * evaluation, as tally score and the workers do. */
#include "bench_jobs.h"
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NJOBS = 200, NRUNS = 5, NEVENTS = 200 };

#define V(key, type, target, expected, config)                                 \
  "{\"key\": \"" key "\", \"type\": \"" type "\", \"target\": \"" target       \
  "\", \"expected_from\": \"" expected "\"" config "}"

static const char
    task_text[] =
        "{\"name\": \"bench\", \"task_type\": \"agent_run\", \"max_score\": "
        "100, "
        "\"evaluation_spec\": {\"name\": \"bench\", \"version_number\": 1, "
        "\"judge_mode\": \"deterministic\", \"validators\": [" V(
            "exact", "exact_match", "final_output", "case.expectations.answer",
            "") "," V("contains",
                      "contains", "final_output", "literal:login.py", "") "," V("regex", "regex_match", "final_output", "literal:session.*login", "") "," V("fuzzy", "fuzzy_match", "final_output", "case.expectations.answer", ", \"config\": {\"case_insensitive\": true, \"normalize\": true}") "," V("norm", "normalized_match", "final_output", "case.expectations.answer", "") "," V("f1",
                                                                                                                                                                                                                                                                                                                                                                                           "token_f1", "final_output", "case.expectations.answer", ", \"config\": {\"normalize\": true, \"remove_articles\": true}") "," V("num", "numeric_match", "case.payload.tests", "case.expectations.tests", ", \"config\": {\"extract_number\": true}") "," V("path",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "json_path_match",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "case.payload",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "literal:{\\\"path\\\": \\\"$.ticket\\\", \\\"comparator\\\": "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "\\\"exists\\\"}",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      "") "], \"metrics\": ["
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"latency\", \"type\": \"numeric\", \"collector\": "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"run_total_latency_ms\"},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"tokens\", \"type\": \"numeric\", \"collector\": "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"run_total_tokens\"},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"cost\", \"type\": \"numeric\", \"collector\": "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"run_model_cost_usd\"}],"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"pricing\": {\"models\": [{\"provider_key\": \"openai\", "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"provider_model_id\": \"gpt-4o\", \"input_cost_per_million_tokens\": "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "2.5, \"output_cost_per_million_tokens\": 10}]},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"scorecard\": {\"strategy\": \"hybrid\", \"pass_threshold\": 0.5, "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"dimensions\": [{\"key\": \"correctness\", \"source\": \"validators\", "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"gate\": true, \"pass_threshold\": 0.3},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"speed\", \"source\": \"metric\", \"metric\": \"latency\", "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"better_direction\": \"lower\", \"normalization\": {\"target\": 30000, "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"max\": 600000}},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"budget\", \"source\": \"metric\", \"metric\": \"tokens\", "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"better_direction\": \"lower\", \"normalization\": {\"target\": 50000, "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"max\": 500000}, \"weight\": 0.5},"
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "{\"key\": \"spend\", \"source\": \"metric\", \"metric\": \"cost\", "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"better_direction\": \"lower\", \"normalization\": {\"target\": 0.05, "
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          "\"max\": 5}}]}}}";

static const char *const outputs[] = {
    "Fixed the session check in login.py",
    "fixed the session check in login.py; all tests pass",
    "Rewrote the login module and the session store",
    "The bug was in login.py: the session token expired too early"};

/* Job n: a run of NEVENTS events: model calls, tool calls, steps, turns,
 * and a final output. */
static void write_job(tally_buf_t *b, int n) {
  bench_putf(b,
             "{\"submission\": \"run-%d\", \"participant\": \"agent-%d\", "
             "\"run\": {\"challenge_inputs\": [{\"challenge_identity_id\": "
             "\"5b1e6f0a-3c1d-4f7e-9a2b-0c4d8e6f1a20\", \"payload\": "
             "{\"ticket\": \"LOGIN-%d\", \"tests\": \"%d tests passed\"}, "
             "\"expectations\": {\"answer\": {\"value\": \"Fixed the "
             "session check in login.py\"}, \"tests\": {\"value\": 12}}}], "
             "\"events\": [",
             n, n % 50, n, 10 + (int)bench_rng_below(4));
  int seq = 1, sec = 0;
  bench_putf(b,
             "{\"type\": \"system.run.started\", \"sequence_number\": %d, "
             "\"occurred_at\": \"2026-11-26T10:00:00Z\", \"payload\": {}}",
             seq++);
  for (int i = 0; i < NEVENTS - 3; i++) {
    sec += (int)bench_rng_below(3);
    const char *type;
    switch (i % 4) {
    case 0:
      type = "model.call.completed";
      bench_putf(b,
                 ", {\"type\": \"%s\", \"sequence_number\": %d, "
                 "\"occurred_at\": \"2026-11-26T10:%02d:%02d.%03dZ\", "
                 "\"payload\": {\"provider_key\": \"openai\", "
                 "\"provider_model_id\": \"gpt-4o\", \"usage\": "
                 "{\"input_tokens\": %d, \"output_tokens\": %d}}}",
                 type, seq++, sec / 60 % 60, sec % 60, i % 1000,
                 500 + (int)bench_rng_below(2000), (int)bench_rng_below(300));
      break;
    case 1:
      bench_putf(b,
                 ", {\"type\": \"tool.call.completed\", \"sequence_number\": "
                 "%d, \"occurred_at\": \"2026-11-26T10:%02d:%02d.%03dZ\", "
                 "\"payload\": {\"tool_name\": \"read_file\", \"arguments\": "
                 "{\"path\": \"src/login.py\"}, \"result\": {\"is_error\": "
                 "%s}}}",
                 seq++, sec / 60 % 60, sec % 60, i % 1000,
                 bench_rng_below(20) == 0 ? "true" : "false");
      break;
    case 2:
      bench_putf(b,
                 ", {\"type\": \"system.step.%s\", \"sequence_number\": %d, "
                 "\"occurred_at\": \"2026-11-26T10:%02d:%02d.%03dZ\", "
                 "\"payload\": {\"step_index\": %d}}",
                 i % 8 == 2 ? "started" : "completed", seq++, sec / 60 % 60,
                 sec % 60, i % 1000, i / 8);
      break;
    default:
      bench_putf(b,
                 ", {\"type\": \"turn.assistant.message\", "
                 "\"sequence_number\": %d, \"occurred_at\": "
                 "\"2026-11-26T10:%02d:%02d.%03dZ\", \"payload\": "
                 "{\"turn_index\": %d, \"content\": \"working on step %d\"}}",
                 seq++, sec / 60 % 60, sec % 60, i % 1000, i / 4, i);
    }
  }
  bench_putf(b,
             ", {\"type\": \"system.output.finalized\", \"sequence_number\": "
             "%d, \"occurred_at\": \"2026-11-26T10:%02d:%02d.900Z\", "
             "\"payload\": {\"final_output\": \"%s\"}}",
             seq++, sec / 60 % 60, sec % 60, outputs[bench_rng_below(4)]);
  bench_putf(b,
             ", {\"type\": \"system.run.completed\", \"sequence_number\": %d, "
             "\"occurred_at\": \"2026-11-26T10:%02d:%02d.950Z\", \"payload\": "
             "{}}]}}",
             seq++, sec / 60 % 60, sec % 60);
}

int main(int argc, char **argv) {
  long count = 2000;
  if (argc > 2 || (argc == 2 && (count = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_run [JOBS_PER_RUN]\n");
    return 2;
  }
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "bench.json");
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, task_text, strlen(task_text), &d, &task) != 0) {
    fprintf(stderr, "bench_run: %s\n", d.count ? d.msgs[0] : "no memory");
    return 1;
  }
  tally_diag_close(&d);
  tally_registry_close(&reg);
  tally_taskset_entry_t entry = {.task = task, .file = "bench.json"};
  tally_taskset_t tasks = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_engine_init(&e, &tasks);
  e.default_task = task;

  static char *text[NJOBS];
  static size_t len[NJOBS];
  size_t bytes = 0, result_bytes = 0;
  bench_rng_reset();
  tally_buf_t out;
  tally_buf_init(&out);
  for (int n = 0; n < NJOBS; n++) {
    tally_buf_t job;
    tally_buf_init(&job);
    write_job(&job, n);
    text[n] = job.data;
    len[n] = job.len;
    bytes += job.len;
    tally_buf_reset(&out);
    if (tally_engine_score(&e, text[n], len[n], NULL, &out) != 0) {
      fprintf(stderr, "bench_run: job %d failed: %s\n", n, e.err);
      return 1;
    }
    result_bytes += out.len;
  }
  printf("agent_run task, 8 validators, 3 metrics, 4 dimensions, %d events a "
         "run, %ld jobs per run, %d runs, one thread\n",
         NEVENTS, count, NRUNS);
  printf("%d distinct jobs, %.0f bytes of job JSON and %.0f bytes of result "
         "JSON per job on average\n",
         NJOBS, (double)bytes / NJOBS, (double)result_bytes / NJOBS);
  bench_engine_runs("bench_run", &e, text, len, NJOBS, count, NRUNS, "runs");
  for (int n = 0; n < NJOBS; n++)
    free(text[n]);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
  return 0;
}
