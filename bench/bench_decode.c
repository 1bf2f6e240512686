/* Decoding time against a job's size, up to the largest job tallyd takes
 * (--max-job-bytes at most 63 MiB): it must grow linearly (issue 24,
 * defect 9; before, an arena that found its own pointers by walking every
 * block made 2,000,000 evaluations take 20.9 s). Two kinds of job, each
 * through tally_engine_score as tally score and the workers run it:
 *   - scored: a Sum task of N testcases, a job with one outcome each;
 *   - refused: the same job for a task of 4 testcases (a job that names
 *     testcases the task does not have), which must fail at once.
 * Prints, for each size, the median of 3 runs and the time per MB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_jobs.h"
#include "engine/engine.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A Sum task "t" of n testcases "0" .. "n-1". */
static tally_task_t *make_task(long n) {
  tally_buf_t b;
  tally_buf_init(&b);
  bench_putf(&b, "{\"name\": \"t\", \"score_type\": \"Sum\", "
                 "\"score_type_parameters\": 1, \"testcases\": {");
  for (long i = 0; i < n; i++)
    bench_putf(&b, "%s\"%ld\": true", i ? ", " : "", i);
  bench_putf(&b, "}}");
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "t.json");
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, b.data, b.len, &d, &task) != 0) {
    fprintf(stderr, "bench_decode: %s\n", d.count ? d.msgs[0] : "no memory");
    exit(1);
  }
  tally_diag_close(&d);
  tally_registry_close(&reg);
  tally_buf_close(&b);
  return task;
}

/* A job with one outcome for each of testcases "0" .. "n-1". */
static void make_job(tally_buf_t *b, long n) {
  tally_buf_reset(b);
  bench_putf(b, "{\"submission\": \"big\", \"task\": \"t\", "
                "\"evaluations\": {");
  for (long i = 0; i < n; i++)
    bench_putf(b, "%s\"%ld\": %d", i ? ", " : "", i, (int)(i % 2));
  bench_putf(b, "}}");
}

/* The median of 3 timed scorings of job with task; sets *failed to
 * whether the engine refused it. */
static double time_job(const tally_task_t *task, const tally_buf_t *job,
                       bool *failed, char *err, size_t errlen) {
  tally_taskset_entry_t entry = {.task = (tally_task_t *)task,
                                 .file = "t.json"};
  tally_taskset_t tasks = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_engine_init(&e, &tasks);
  tally_buf_t out;
  tally_buf_init(&out);
  double t[3];
  for (int r = 0; r < 3; r++) {
    tally_buf_reset(&out);
    double t0 = now_s();
    *failed = tally_engine_score(&e, job->data, job->len, NULL, &out) != 0;
    t[r] = now_s() - t0;
  }
  snprintf(err, errlen, "%s", *failed ? e.err : "");
  tally_buf_close(&out);
  tally_engine_close(&e);
  qsort(t, 3, sizeof(t[0]), cmp_double);
  return t[1];
}

int main(int argc, char **argv) {
  long max = 4000000; /* about 52 MB of job text */
  if (argc > 2 || (argc == 2 && (max = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_decode [MAX_EVALUATIONS]\n");
    return 2;
  }
  tally_task_t *small = make_task(4);
  tally_buf_t job;
  tally_buf_init(&job);
  printf("%12s %10s %12s %10s %12s %10s\n", "evaluations", "MB", "scored s",
         "s/MB", "refused s", "s/MB");
  for (long n = 15625; n <= max; n *= 2) {
    make_job(&job, n);
    double mb = (double)job.len / 1e6;
    tally_task_t *task = make_task(n);
    bool failed;
    char err[600];
    double scored = time_job(task, &job, &failed, err, sizeof(err));
    if (failed) {
      fprintf(stderr, "bench_decode: the job of %ld failed: %s\n", n, err);
      return 1;
    }
    tally_task_free(task);
    double refused = time_job(small, &job, &failed, err, sizeof(err));
    if (!failed) {
      fprintf(stderr, "bench_decode: the job of %ld was scored\n", n);
      return 1;
    }
    printf("%12ld %10.1f %12.4f %10.4f %12.4f %10.4f\n", n, mb, scored,
           scored / mb, refused, refused / mb);
    fflush(stdout);
  }
  tally_buf_close(&job);
  tally_task_free(small);
  return 0;
}
