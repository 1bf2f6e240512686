/* Measures how many jobs per second one core scores end to end (job JSON
 * in, result JSON with full details out) for a 100-testcase, 5-subtask
 * GroupMin task. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_jobs.h"
#include "engine/engine.h"

enum {
  PER_SUBTASK = 20,
  NJOBS = 2000, /* distinct jobs, cycled */
  NRUNS = 5
};

/* Writes job n: a submission with evaluations as objects (full) or as
 * bare outcomes. Both forms of job n carry the same outcomes. */
static void write_job(tally_buf_t *b, int n, bool full) {
  bench_putf(b,
             "{\"submission\": \"s-%d\", \"task\": \"bench\", "
             "\"participant\": \"user%03d\", ",
             100000 + n, n % 500);
  bench_write_evaluations(b, PER_SUBTASK, full);
  bench_putf(b, "}");
}

/* A set of distinct job texts. */
typedef struct jobs_s {
  char *text[NJOBS];
  size_t len[NJOBS];
  size_t bytes; /* all texts together */
} jobs_t;

static void make_jobs(jobs_t *jobs, bool full) {
  bench_rng_reset();
  jobs->bytes = 0;
  for (int n = 0; n < NJOBS; n++) {
    tally_buf_t b;
    tally_buf_init(&b);
    write_job(&b, n, full);
    jobs->text[n] = b.data;
    jobs->len[n] = b.len;
    jobs->bytes += b.len;
  }
}

static void free_jobs(jobs_t *jobs) {
  for (int n = 0; n < NJOBS; n++)
    free(jobs->text[n]);
}

/* Scores one job into out (emptied first), exiting if it fails: a
 * benchmark that times error replies measures nothing. */
static void score_one(tally_engine_t *e, const jobs_t *jobs, long i,
                      tally_buf_t *out) {
  int n = (int)(i % NJOBS);
  tally_buf_reset(out);
  if (tally_engine_score(e, jobs->text[n], jobs->len[n], NULL, out) != 0) {
    fprintf(stderr, "bench_score: job %d failed: %s\n", n, e->err);
    exit(1);
  }
}

/* Runs NRUNS timed runs of count jobs each and prints their figures. */
static void bench(const char *label, tally_engine_t *e, const jobs_t *jobs,
                  long count) {
  tally_buf_t out;
  tally_buf_init(&out);

  /* One untimed pass over the distinct jobs checks them, measures the
   * result size and warms the caches and the engine's buffers. */
  size_t result_bytes = 0;
  for (long i = 0; i < NJOBS; i++) {
    score_one(e, jobs, i, &out);
    result_bytes += out.len;
  }

  printf("%s: %d distinct jobs, %.0f bytes of job JSON and %.0f bytes of "
         "result JSON per job on average\n",
         label, NJOBS, (double)jobs->bytes / NJOBS,
         (double)result_bytes / NJOBS);
  tally_buf_close(&out);
  bench_engine_runs("bench_score", e, jobs->text, jobs->len, NJOBS, count,
                    NRUNS, "jobs");
}

/* Writes the task (DIR/bench.json) and n jobs with evaluations as objects
 * (DIR/jobs.jsonl, the distinct jobs cycled, one per line), for timing a
 * whole `tally score` process on the same jobs. Returns an exit status. */
static int write_files(const char *dir, long n) {
  char path[4096];
  tally_buf_t b;
  tally_buf_init(&b);
  bench_write_task(&b, PER_SUBTASK);
  snprintf(path, sizeof(path), "%s/bench.json", dir);
  FILE *f = fopen(path, "w");
  if (f == NULL || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
    fprintf(stderr, "bench_score: cannot write %s\n", path);
    return 1;
  }
  tally_buf_close(&b);
  static jobs_t jobs;
  make_jobs(&jobs, true);
  snprintf(path, sizeof(path), "%s/jobs.jsonl", dir);
  f = fopen(path, "w");
  bool ok = f != NULL;
  for (long i = 0; ok && i < n; i++) {
    int k = (int)(i % NJOBS);
    if (memchr(jobs.text[k], '\n', jobs.len[k]) != NULL) {
      fprintf(stderr, "bench_score: job %d spans lines\n", k);
      return 1;
    }
    ok = fwrite(jobs.text[k], 1, jobs.len[k], f) == jobs.len[k] &&
         fputc('\n', f) != EOF;
  }
  if (f == NULL || fclose(f) != 0 || !ok) {
    fprintf(stderr, "bench_score: cannot write %s\n", path);
    return 1;
  }
  free_jobs(&jobs);
  printf("wrote %s/bench.json and %ld jobs to %s\n", dir, n, path);
  return 0;
}

int main(int argc, char **argv) {
  long count = 200000;
  if (argc == 4 && strcmp(argv[1], "--write") == 0 &&
      (count = strtol(argv[3], NULL, 10)) > 0)
    return write_files(argv[2], count);
  if (argc > 2 || (argc == 2 && (count = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_score [JOBS_PER_RUN]\n"
                    "       bench_score --write DIR JOBS\n");
    return 2;
  }

  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_buf_t text;
  tally_buf_init(&text);
  bench_write_task(&text, PER_SUBTASK);
  tally_diag_init(&d, "bench.json");
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, text.data, text.len, &d, &task) != 0) {
    fprintf(stderr, "bench_score: %s\n", d.count ? d.msgs[0] : "no memory");
    return 1;
  }
  tally_diag_close(&d);
  tally_registry_close(&reg);
  tally_buf_close(&text);

  /* One task, as with tally score --task. */
  tally_taskset_entry_t entry = {.task = task, .file = "bench.json"};
  tally_taskset_t tasks = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_engine_init(&e, &tasks);

  printf("GroupMin, %d testcases in %d subtasks, %ld jobs per run, "
         "%d runs, one thread\n",
         BENCH_NSUBTASKS * PER_SUBTASK, BENCH_NSUBTASKS, count, NRUNS);
  static jobs_t jobs;
  make_jobs(&jobs, true);
  bench("evaluations as objects", &e, &jobs, count);
  free_jobs(&jobs);
  make_jobs(&jobs, false);
  bench("evaluations as bare numbers", &e, &jobs, count);
  free_jobs(&jobs);

  tally_engine_close(&e);
  tally_task_free(task);
  return 0;
}
