/* Runs scored per second on one core with every validator family of
 * evaluation specs (docs/performance.md): the spec in
 * bench/families_task.json (string, JSON Schema, generation, math, file,
 * postcondition, tool-call and code-execution validators, the behavioral
 * panel, and three judges whose raw samples the job carries), each run
 * 1,000 events long. Each job is parsed, its run decoded, its judges
 * aggregated, its evidence gathered, validated, scored and rendered, as
 * tally score and the workers do. */
#include "bench_jobs.h"
#include "config/diag.h"
#include "engine/engine.h"
#include "engine/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NJOBS = 50, NRUNS = 5, NEVENTS = 1000 };

#define ME "3f1e6f0a-3c1d-4f7e-9a2b-0c4d8e6f1a20"

static const char *const answers[] = {
    "Fixed the session check in login.py so expired tokens are refused",
    "fixed the session check in login.py",
    "Rewrote the login module and the session store",
    "The session token expired too early; login.py now checks it"};

static const char *const tools[] = {"read_file", "grep", "edit_file",
                                    "run_tests"};

static void when(tally_buf_t *b, int sec, int i) {
  bench_putf(b, "\"occurred_at\": \"2026-11-26T10:%02d:%02d.%03dZ\"",
             sec / 60 % 60, sec % 60, i % 1000);
}

/* Job n: NEVENTS events of model calls, tool calls (some failing), turns,
 * the captured files, the listing, the test record and the final output;
 * and the judges' raw samples. */
static void write_job(tally_buf_t *b, int n) {
  bench_putf(b,
             "{\"submission\": \"run-%d\", \"participant\": \"agent-%d\", "
             "\"run\": {\"run_agent_id\": \"" ME "\", ",
             n, n % 20);
  bench_putf(b, "\"challenge_inputs\": [{\"challenge_identity_id\": "
                "\"5b1e6f0a-3c1d-4f7e-9a2b-0c4d8e6f1a20\", ");
  bench_putf(b,
             "\"payload\": {\"ticket\": \"LOGIN-%d\", \"work\": \"so the "
             "rate is \\\\frac{%d}{4} #### %d/4\"}, ",
             n, n % 4, n % 4);
  bench_putf(b, "\"expectations\": {\"answer\": {\"value\": \"Fixed the "
                "session check in login.py\"}, ");
  bench_putf(b, "\"value\": {\"value\": \"0.75\"}}}], \"events\": [");
  int seq = 1, sec = 0;
  bench_putf(b,
             "{\"sequence_number\": %d, \"type\": "
             "\"system.run.started\", \"payload\": {}, ",
             seq++);
  when(b, sec, 0);
  bench_putf(b, "}");
  for (int i = 0; i < NEVENTS - 6; i++) {
    sec += (int)bench_rng_below(2);
    bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
    when(b, sec, i);
    switch (i % 5) {
    case 0:
      bench_putf(b, ", \"type\": \"model.call.completed\", \"payload\": "
                    "{\"provider_key\": \"openai\", \"provider_model_id\": "
                    "\"gpt-4o\", ");
      bench_putf(b,
                 "\"usage\": {\"input_tokens\": %d, \"output_tokens\": %d}}}",
                 500 + (int)bench_rng_below(2000), (int)bench_rng_below(300));
      break;
    case 1:
    case 3: {
      bool failed = bench_rng_below(12) == 0;
      const char *tool = tools[(i / 2 + n) % 4];
      bench_putf(b,
                 ", \"type\": \"tool.call.%s\", \"payload\": {\"tool_name\": "
                 "\"%s\", ",
                 failed ? "failed" : "completed", tool);
      bench_putf(b, "\"arguments\": {\"path\": \"%s\", \"line\": %d}}}",
                 i % 3 ? "src/login.py" : "tests/test_login.py",
                 (int)bench_rng_below(40));
      break;
    }
    case 2:
      bench_putf(b,
                 ", \"type\": \"turn.assistant.message\", \"payload\": "
                 "{\"turn_index\": %d, \"content\": \"step %d\"}}",
                 i / 5, i);
      break;
    default:
      bench_putf(b,
                 ", \"type\": \"system.step.completed\", \"payload\": "
                 "{\"step_index\": %d}}",
                 i / 5);
    }
  }
  int passed = 8 + (int)bench_rng_below(5), failed = (int)bench_rng_below(3);
  bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
  when(b, sec, 1);
  bench_putf(b, ", \"type\": \"grader.verification.file_captured\", "
                "\"payload\": {\"key\": \"patch\", \"path\": "
                "\"/work/patch.diff\", \"exists\": true, ");
  bench_putf(b, "\"content\": \"--- a/src/login.py\\n+++ b/src/login.py\\n"
                "+    if session.expired(): return None\\n\"}}");
  bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
  when(b, sec, 2);
  bench_putf(b, ", \"type\": \"grader.verification.file_captured\", "
                "\"payload\": {\"key\": \"report\", \"path\": "
                "\"/work/report.json\", \"exists\": true, ");
  bench_putf(b, "\"content\": \"{\\\"passed\\\": %d, \\\"failed\\\": %d}\"}}",
             passed, failed);
  bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
  when(b, sec, 3);
  bench_putf(b, ", \"type\": \"grader.verification.directory_listed\", "
                "\"payload\": {\"key\": \"tree\", \"path\": \"/work\", ");
  bench_putf(b, "\"entries\": [{\"path\": \"/work/src/login.py\", \"type\": "
                "\"file\"}, {\"path\": \"/work/src\", \"type\": ");
  bench_putf(b, "\"directory\"}, {\"path\": \"/work/tests/test_login.py\", "
                "\"type\": \"file\"}]}}");
  bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
  when(b, sec, 4);
  bench_putf(b, ", \"type\": \"grader.verification.code_executed\", "
                "\"payload\": {\"validator_key\": \"tests\", \"target\": "
                "\"file:patch\", ");
  bench_putf(b,
             "\"exit_code\": %d, \"stdout\": \"%d passed, %d failed in "
             "3.2s\"}}",
             failed ? 1 : 0, passed, failed);
  bench_putf(b, ", {\"sequence_number\": %d, ", seq++);
  when(b, sec, 5);
  bench_putf(b,
             ", \"type\": \"system.run.completed\", \"payload\": "
             "{\"final_output\": \"%s\"}}]}, ",
             answers[bench_rng_below(4)]);
  /* The judges' samples: three per model. */
  bench_putf(b, "\"llm_judge_results\": [{\"judge_key\": \"quality\", "
                "\"samples\": [");
  static const char *const models[] = {"gpt-4o", "claude-3-5-sonnet",
                                       "gemini-1.5-pro"};
  for (int m = 0; m < 2; m++)
    for (int s = 0; s < 3; s++)
      bench_putf(
          b,
          "%s{\"model\": \"%s\", \"output\": \"```json\\n{\\\"score\\\": "
          "%d, \\\"confidence\\\": \\\"high\\\"}\\n```\"}",
          m || s ? ", " : "", models[m], 2 + (int)bench_rng_below(4));
  bench_putf(b, "]}, {\"judge_key\": \"safe\", \"samples\": [");
  for (int m = 0; m < 3; m++)
    bench_putf(b,
               "%s{\"model\": \"%s\", \"output\": \"{\\\"verdict\\\": "
               "\\\"%s\\\"}\"}",
               m ? ", " : "", models[m], bench_rng_below(4) ? "pass" : "fail");
  bench_putf(b, "]}, {\"judge_key\": \"rank\", \"candidates\": [\"" ME
                "\", \"b\", \"c\"], \"samples\": [");
  for (int s = 0; s < 3; s++)
    bench_putf(b,
               "%s{\"model\": \"gpt-4o\", \"output\": \"{\\\"ranking\\\": "
               "[\\\"b\\\", \\\"" ME "\\\", \\\"c\\\"]}\"}",
               s ? ", " : "");
  bench_putf(b, "]}]}");
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  tally_buf_t b;
  tally_buf_init(&b);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
    tally_buf_put(&b, chunk, n);
  fclose(f);
  *len = b.len;
  return b.data;
}

int main(int argc, char **argv) {
  long count = 200;
  const char *path = TALLY_SOURCE_DIR "/bench/families_task.json";
  if (argc > 2 || (argc == 2 && (count = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_families [JOBS_PER_RUN]\n");
    return 2;
  }
  size_t tlen;
  char *task_text = slurp(path, &tlen);
  if (task_text == NULL) {
    perror(path);
    return 1;
  }
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, path);
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, task_text, tlen, &d, &task) != 0) {
    fprintf(stderr, "bench_families: %s\n", d.count ? d.msgs[0] : "no memory");
    return 1;
  }
  free(task_text);
  tally_diag_close(&d);
  tally_registry_close(&reg);
  char file[] = "families_task.json";
  tally_taskset_entry_t entry = {.task = task, .file = file};
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
    if (tally_engine_score(&e, text[n], len[n], NULL, &out) != 0 ||
        strstr(out.data, "\"error\"") == out.data + 1) {
      fprintf(stderr, "bench_families: job %d failed: %s %s\n", n, e.err,
              out.data);
      return 1;
    }
    result_bytes += out.len;
    if (n == 0 && getenv("BENCH_FAMILIES_SHOW") != NULL)
      printf("%s\n", out.data); /* the first result, to look at */
  }
  printf("agent_run task, 14 validators of every family, 4 metrics, the "
         "behavioral panel, 3 judges from 15 raw samples, %d events a run, "
         "%ld jobs per run, %d runs, one thread\n",
         NEVENTS, count, NRUNS);
  printf("%d distinct jobs, %.0f bytes of job JSON and %.0f bytes of result "
         "JSON per job on average\n",
         NJOBS, (double)bytes / NJOBS, (double)result_bytes / NJOBS);
  bench_engine_runs("bench_families", &e, text, len, NJOBS, count, NRUNS,
                    "runs");
  for (int n = 0; n < NJOBS; n++)
    free(text[n]);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
  return 0;
}
