/* Measures how many jobs per second one core scores end to end (job JSON
 * in, result JSON with full details out) for a 100-testcase, 5-subtask
 * GroupMin task. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker/engine.h"

enum {
  NSUBTASKS = 5,
  PER_SUBTASK = 20,
  NTESTCASES = NSUBTASKS * PER_SUBTASK,
  NJOBS = 2000, /* distinct jobs, cycled */
  NRUNS = 5
};

/* The subtask scores, summing to 100, as a contest would set them. */
static const int subtask_scores[NSUBTASKS] = {10, 15, 20, 25, 30};

/* A fixed-seed xorshift64* generator, so every run scores the same jobs. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1du) >> 32);
}

/* Returns a uniform integer in [0, n). */
static uint32_t rng_below(uint32_t n) {
  return rng() % n;
}

/* Appends printf-formatted text to b, or exits when out of memory. */
static void putf(tally_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void putf(tally_buf_t *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp)) {
    fprintf(stderr, "bench_score: formatting failed\n");
    exit(1);
  }
  tally_buf_put(b, tmp, (size_t)n);
  if (b->oom) {
    fprintf(stderr, "bench_score: out of memory\n");
    exit(1);
  }
}

/* Writes the task config: subtask s holds testcases "s-01" .. "s-20";
 * subtask 1 is all public (the samples), and elsewhere every third
 * testcase is private. */
static void write_task(tally_buf_t *b) {
  putf(b, "{\"name\": \"bench\", \"score_type\": \"GroupMin\", "
          "\"score_type_parameters\": [");
  for (int s = 0; s < NSUBTASKS; s++)
    putf(b, "%s[%d, \"%d-\"]", s ? ", " : "", subtask_scores[s], s + 1);
  putf(b, "], \"testcases\": {");
  for (int i = 0; i < NTESTCASES; i++) {
    int s = i / PER_SUBTASK, t = i % PER_SUBTASK;
    bool public = s == 0 || t % 3 != 2;
    putf(b, "%s\"%d-%02d\": %s", i ? ", " : "", s + 1, t + 1,
         public ? "true" : "false");
  }
  putf(b, "}, \"score_precision\": 2, \"score_rounding\": \"subtask\", "
          "\"time_limit\": 1.0}");
}

/* One testcase's simulated verdict. */
typedef struct verdict_s {
  double outcome;
  const char *text;
  unsigned time_ms;
  unsigned long memory;
} verdict_t;

/* Draws testcase i's verdict for a submission that solves each subtask
 * with the given skill (0 to 100): mostly correct answers, some wrong
 * ones, some partial scores and some timeouts, as real submissions do. */
static verdict_t draw_verdict(int skill, unsigned long base_memory) {
  verdict_t v;
  uint32_t roll = rng_below(100);
  v.memory = base_memory + rng_below(1u << 20) * 4ul;
  v.time_ms = 5 + rng_below(900);
  if ((int)roll < skill) {
    v.outcome = 1.0;
    v.text = "Output is correct";
  } else if (roll < 100 - (100 - (uint32_t)skill) / 2) {
    v.outcome = 0.0;
    v.text = "Output isn't correct";
  } else if (roll % 2 == 0) {
    v.outcome = (double)(1 + rng_below(99)) / 100.0;
    v.text = "Output is partially correct";
  } else {
    v.outcome = 0.0;
    v.text = "Execution timed out";
    v.time_ms = 1000 + rng_below(200);
  }
  return v;
}

/* Writes job n: a submission with evaluations as objects (full) or as
 * bare outcomes. Both forms of job n carry the same outcomes. */
static void write_job(tally_buf_t *b, int n, bool full) {
  putf(b, "{\"submission\": \"s-%d\", \"task\": \"bench\", "
          "\"participant\": \"user%03d\", \"evaluations\": {",
       100000 + n, n % 500);
  unsigned long base_memory = (1ul + rng_below(256)) << 20;
  for (int s = 0; s < NSUBTASKS; s++) {
    /* Skill drops for later, harder subtasks. */
    int skill = 100 - (int)rng_below(20 + 20 * (uint32_t)s);
    if (skill < 0)
      skill = 0;
    if (rng_below(4) == 0)
      skill = 100; /* a clean full solve of this subtask */
    for (int t = 0; t < PER_SUBTASK; t++) {
      verdict_t v = draw_verdict(skill, base_memory);
      const char *sep = s || t ? ", " : "";
      if (full)
        putf(b, "%s\"%d-%02d\": {\"outcome\": %g, \"text\": [\"%s\"], "
                "\"time\": %u.%03u, \"memory\": %lu}",
             sep, s + 1, t + 1, v.outcome, v.text, v.time_ms / 1000,
             v.time_ms % 1000, v.memory);
      else
        putf(b, "%s\"%d-%02d\": %g", sep, s + 1, t + 1, v.outcome);
    }
  }
  putf(b, "}}");
}

/* A set of distinct job texts. */
typedef struct jobs_s {
  char *text[NJOBS];
  size_t len[NJOBS];
  size_t bytes; /* all texts together */
} jobs_t;

static void make_jobs(jobs_t *jobs, bool full) {
  rng_state = 0x9e3779b97f4a7c15u;
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

/* Returns the time of clock in seconds. */
static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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

  double rates[NRUNS];
  printf("%s: %d distinct jobs, %.0f bytes of job JSON and %.0f bytes of "
         "result JSON per job on average\n",
         label, NJOBS, (double)jobs->bytes / NJOBS,
         (double)result_bytes / NJOBS);
  for (int r = 0; r < NRUNS; r++) {
    /* The figure is wall-clock time; the thread's CPU time beside it
     * shows whether other programs took the CPU away during the run. */
    double start = now(CLOCK_MONOTONIC);
    double cpu_start = now(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < count; i++)
      score_one(e, jobs, i, &out);
    double secs = now(CLOCK_MONOTONIC) - start;
    double cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    rates[r] = (double)count / secs;
    printf("  run %d: %ld jobs in %.3f s (%.0f%% CPU): %.0f jobs/s\n",
           r + 1, count, secs, 100.0 * cpu / secs, rates[r]);
  }
  qsort(rates, NRUNS, sizeof(rates[0]), cmp_double);
  printf("  median: %.0f jobs/s\n", rates[NRUNS / 2]);
  fflush(stdout);
  tally_buf_close(&out);
}

int main(int argc, char **argv) {
  long count = 200000;
  if (argc > 2 || (argc == 2 && (count = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_score [JOBS_PER_RUN]\n");
    return 2;
  }

  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_buf_t text;
  tally_buf_init(&text);
  write_task(&text);
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
         NTESTCASES, NSUBTASKS, count, NRUNS);
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
