/* What the two parts of bench_tallyd share: its sizes, the jobs' corpus
 * and the bare cycle (bench_tallyd_bare.c). */
#ifndef TALLY_BENCH_TALLYD_H
#define TALLY_BENCH_TALLYD_H

#include <stdbool.h>
#include <stddef.h>

enum {
  PER_SUBTASK = 10,
  NDISTINCT = 2000,   /* distinct evaluation sets, cycled */
  PUSH_CHUNK = 256,   /* XADDs per pipelined write, as fast as possible */
  READ_COUNT = 1000,  /* results per XREAD of the follower */
  BARE_COUNT = 64,    /* entries per XREADGROUP of the bare cycle */
  WARMUP_JOBS = 2000, /* untimed jobs before each consumer's runs */
  STALL_S = 30        /* no result for this long fails the run */
};

/* The start of the bare cycle's result for job n (see JOB_HEAD). */
#define RESULT_HEAD "{\"submission\":\"s-%ld\""

typedef struct bench_corpus_s {
  char *job_tail[NDISTINCT];
  size_t job_tail_len[NDISTINCT];
  char *result_tail[NDISTINCT]; /* from "," after the submission to
                                   before the closing brace */
  size_t result_tail_len[NDISTINCT];
  size_t eval_off[NDISTINCT]; /* where "evaluations" starts in job_tail */
  double job_bytes;           /* average, for job numbers of 6 digits */
} bench_corpus_t;
extern bench_corpus_t corpus;

/* The bare cycle, in a child process until SIGTERM: one connection reads
 * batches (XREADGROUP COUNT BARE_COUNT BLOCK), the other posts each
 * batch; see bench_tallyd_bare.c. Does not return. */
void bare_main(const char *sock, unsigned depth, bool plain)
    __attribute__((noreturn));

#endif
