/* Answers scored per second on one core (docs/performance.md): a
 * six-dimension challenge whose answers hold arrays of 100 elements, each
 * job parsed, scored by every dimension and rendered with its breakdown,
 * as tally score and the workers do. */
#include "bench_jobs.h"
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NJOBS = 1000, NRUNS = 5, N = 100 };

static const char task_text[] =
    "{\"name\": \"bench\", \"task_type\": \"answer\", \"scoring\": {"
    "\"type\": \"deterministic\", \"dimensions\": ["
    "{\"name\": \"correctness\", \"weight\": 0.3, \"primitive\": "
    "\"exact_match_ratio\", \"field\": \"answers\", \"ground_truth_field\": "
    "\"answers\"},"
    "{\"name\": \"completeness\", \"weight\": 0.15, \"primitive\": "
    "\"coverage_ratio\", \"field\": \"attempted\", \"ground_truth_field\": "
    "\"questions\"},"
    "{\"name\": \"precision\", \"weight\": 0.15, \"primitive\": "
    "\"set_overlap\", \"field\": \"findings\", \"ground_truth_field\": "
    "\"findings\", \"method\": \"jaccard\"},"
    "{\"name\": \"analysis\", \"weight\": 0.15, \"primitive\": "
    "\"numeric_tolerance\", \"field\": \"values\", \"ground_truth_field\": "
    "\"values\", \"tolerance\": 0.5},"
    "{\"name\": \"methodology\", \"weight\": 0.1, \"primitive\": "
    "\"fuzzy_string\", \"field\": \"summary\", \"ground_truth_field\": "
    "\"summary\"},"
    "{\"name\": \"speed\", \"weight\": 0.15, \"primitive\": \"time_decay\", "
    "\"time_limit_secs\": 300}]},"
    "\"difficulty\": \"veteran\", \"score_precision\": 1}";

/* The ground truth every job carries: arrays of 100 elements. */
static void write_truth(tally_buf_t *b) {
  bench_putf(b, "\"ground_truth\": {\"answers\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s\"ans-%03d\"", i ? ", " : "", i);
  bench_putf(b, "], \"questions\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s\"q%03d\"", i ? ", " : "", i);
  bench_putf(b, "], \"findings\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s\"f%03d\"", i ? ", " : "", i);
  bench_putf(b, "], \"values\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s%d.25", i ? ", " : "", i);
  bench_putf(b, "], \"summary\": \"the cipher is a shifted alphabet with a "
                "key of seven letters, found by frequency analysis\"}");
}

/* Job n: mostly right answers, some wrong, a share of the findings. */
static void write_job(tally_buf_t *b, const char *truth, int n) {
  bench_putf(b, "{\"submission\": \"m-%d\", \"participant\": \"agent-%d\", ", n,
             n % 50);
  bench_putf(b, "\"answer\": {\"answers\": [");
  for (int i = 0; i < N; i++) {
    bool right = bench_rng_below(10) < 8;
    bench_putf(b, "%s\"%s-%03d\"", i ? ", " : "", right ? "ans" : "bad", i);
  }
  bench_putf(b, "], \"attempted\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s\"q%03d\"", i ? ", " : "", (int)bench_rng_below(N));
  bench_putf(b, "], \"findings\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s\"f%03d\"", i ? ", " : "", (int)bench_rng_below(2 * N));
  bench_putf(b, "], \"values\": [");
  for (int i = 0; i < N; i++)
    bench_putf(b, "%s%d.%d", i ? ", " : "", i, (int)bench_rng_below(10));
  bench_putf(b,
             "], \"summary\": \"The cipher is a shifted alphabet, key of "
             "%d letters, found by frequency analysis.\"}, ",
             (int)bench_rng_below(10));
  tally_buf_puts(b, truth);
  bench_putf(b, ", \"time_used\": %d, \"verified\": true}",
             (int)bench_rng_below(300));
}

int main(int argc, char **argv) {
  long count = 20000;
  if (argc > 2 || (argc == 2 && (count = strtol(argv[1], NULL, 10)) <= 0)) {
    fprintf(stderr, "usage: bench_answer [JOBS_PER_RUN]\n");
    return 2;
  }
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "bench.json");
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, task_text, strlen(task_text), &d, &task) != 0) {
    fprintf(stderr, "bench_answer: %s\n", d.count ? d.msgs[0] : "no memory");
    return 1;
  }
  tally_diag_close(&d);
  tally_registry_close(&reg);
  tally_taskset_entry_t entry = {.task = task, .file = "bench.json"};
  tally_taskset_t tasks = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_engine_init(&e, &tasks);

  tally_buf_t truth;
  tally_buf_init(&truth);
  write_truth(&truth);
  static char *text[NJOBS];
  static size_t len[NJOBS];
  size_t bytes = 0, result_bytes = 0;
  bench_rng_reset();
  tally_buf_t out;
  tally_buf_init(&out);
  for (int n = 0; n < NJOBS; n++) {
    tally_buf_t job;
    tally_buf_init(&job);
    write_job(&job, truth.data, n);
    text[n] = job.data;
    len[n] = job.len;
    bytes += job.len;
    tally_buf_reset(&out);
    if (tally_engine_score(&e, text[n], len[n], NULL, &out) != 0) {
      fprintf(stderr, "bench_answer: job %d failed: %s\n", n, e.err);
      return 1;
    }
    result_bytes += out.len;
  }
  printf("answer task, 6 dimensions over arrays of %d elements, %ld jobs per "
         "run, %d runs, one thread\n",
         N, count, NRUNS);
  printf("%d distinct jobs, %.0f bytes of job JSON and %.0f bytes of result "
         "JSON per job on average\n",
         NJOBS, (double)bytes / NJOBS, (double)result_bytes / NJOBS);
  bench_engine_runs("bench_answer", &e, text, len, NJOBS, count, NRUNS,
                    "answers");
  for (int n = 0; n < NJOBS; n++)
    free(text[n]);
  tally_buf_close(&out);
  tally_buf_close(&truth);
  tally_engine_close(&e);
  tally_task_free(task);
  return 0;
}
