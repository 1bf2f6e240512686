/* The benchmarks' synthetic task and jobs: see bench_jobs.h. */
#include "bench_jobs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SEED 0x9e3779b97f4a7c15u

static const int subtask_scores[BENCH_NSUBTASKS] = {10, 15, 20, 25, 30};

/* xorshift64* */
static uint64_t rng_state = SEED;

void bench_rng_reset(void) {
  rng_state = SEED;
}

uint32_t bench_rng_below(uint32_t n) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1du) >> 32) % n;
}

void bench_putf(tally_buf_t *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp)) {
    fprintf(stderr, "%s: formatting failed\n", program_invocation_short_name);
    exit(1);
  }
  tally_buf_put(b, tmp, (size_t)n);
  if (b->oom) {
    fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
    exit(1);
  }
}

void bench_write_task(tally_buf_t *b, int per_subtask) {
  bench_putf(b, "{\"name\": \"bench\", \"score_type\": \"GroupMin\", "
                "\"score_type_parameters\": [");
  for (int s = 0; s < BENCH_NSUBTASKS; s++)
    bench_putf(b, "%s[%d, \"%d-\"]", s ? ", " : "", subtask_scores[s], s + 1);
  bench_putf(b, "], \"testcases\": {");
  for (int i = 0; i < BENCH_NSUBTASKS * per_subtask; i++) {
    int s = i / per_subtask, t = i % per_subtask;
    bool public = s == 0 || t % 3 != 2;
    bench_putf(b, "%s\"%d-%02d\": %s", i ? ", " : "", s + 1, t + 1,
               public ? "true" : "false");
  }
  bench_putf(b, "}, \"score_precision\": 2, \"score_rounding\": \"subtask\", "
                "\"time_limit\": 1.0}");
}

/* One testcase's simulated verdict. */
typedef struct verdict_s {
  double outcome;
  const char *text;
  unsigned time_ms;
  unsigned long memory;
} verdict_t;

/* Draws a verdict for a submission that solves its subtask with the given
 * skill (0 to 100). */
static verdict_t draw_verdict(int skill, unsigned long base_memory) {
  verdict_t v;
  uint32_t roll = bench_rng_below(100);
  v.memory = base_memory + bench_rng_below(1u << 20) * 4ul;
  v.time_ms = 5 + bench_rng_below(900);
  if ((int)roll < skill) {
    v.outcome = 1.0;
    v.text = "Output is correct";
  } else if (roll < 100 - (100 - (uint32_t)skill) / 2) {
    v.outcome = 0.0;
    v.text = "Output isn't correct";
  } else if (roll % 2 == 0) {
    v.outcome = (double)(1 + bench_rng_below(99)) / 100.0;
    v.text = "Output is partially correct";
  } else {
    v.outcome = 0.0;
    v.text = "Execution timed out";
    v.time_ms = 1000 + bench_rng_below(200);
  }
  return v;
}

void bench_write_evaluations(tally_buf_t *b, int per_subtask, bool full) {
  bench_putf(b, "\"evaluations\": {");
  unsigned long base_memory = (1ul + bench_rng_below(256)) << 20;
  for (int s = 0; s < BENCH_NSUBTASKS; s++) {
    /* Skill drops for later, harder subtasks. */
    int skill = 100 - (int)bench_rng_below(20 + 20 * (uint32_t)s);
    if (bench_rng_below(4) == 0)
      skill = 100; /* a clean full solve of this subtask */
    for (int t = 0; t < per_subtask; t++) {
      verdict_t v = draw_verdict(skill, base_memory);
      const char *sep = s || t ? ", " : "";
      if (full)
        bench_putf(b,
                   "%s\"%d-%02d\": {\"outcome\": %g, \"text\": [\"%s\"], "
                   "\"time\": %u.%03u, \"memory\": %lu}",
                   sep, s + 1, t + 1, v.outcome, v.text, v.time_ms / 1000,
                   v.time_ms % 1000, v.memory);
      else
        bench_putf(b, "%s\"%d-%02d\": %g", sep, s + 1, t + 1, v.outcome);
    }
  }
  bench_putf(b, "}");
}

static double clock_s(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_engine_runs(const char *prog, tally_engine_t *e, char *const *text,
                         const size_t *len, int njobs, long count, int nruns,
                         const char *unit) {
  double *rates = malloc((size_t)nruns * sizeof(*rates));
  if (rates == NULL) {
    fprintf(stderr, "%s: out of memory\n", prog);
    exit(1);
  }
  tally_buf_t out;
  tally_buf_init(&out);
  for (int r = 0; r < nruns; r++) {
    /* Wall-clock time; the thread's CPU time beside it shows whether
     * other programs took the CPU away during the run. */
    double start = clock_s(CLOCK_MONOTONIC);
    double cpu_start = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < count; i++) {
      int n = (int)(i % njobs);
      tally_buf_reset(&out);
      if (tally_engine_score(e, text[n], len[n], NULL, &out) != 0) {
        fprintf(stderr, "%s: job %d failed: %s\n", prog, n, e->err);
        exit(1);
      }
    }
    double secs = clock_s(CLOCK_MONOTONIC) - start;
    double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    rates[r] = (double)count / secs;
    printf("  run %d: %ld %s in %.3f s (%.0f%% CPU): %.0f %s/s\n", r + 1, count,
           unit, secs, 100.0 * cpu / secs, rates[r], unit);
  }
  qsort(rates, (size_t)nruns, sizeof(rates[0]), cmp_double);
  double median = rates[nruns / 2];
  printf("  median: %.0f %s/s\n", median, unit);
  fflush(stdout);
  free(rates);
  tally_buf_close(&out);
  return median;
}
