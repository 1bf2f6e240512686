/* The synthetic contest both benchmarks score: a GroupMin task of five
 * subtasks, and jobs whose verdicts look like real submissions', drawn
 * from a fixed-seed generator so that every run sees the same jobs. */
#ifndef TALLY_BENCH_JOBS_H
#define TALLY_BENCH_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "config/jsonw.h"
#include "engine/engine.h"

#define BENCH_NSUBTASKS 5

/* Restarts the generator at its seed. */
void bench_rng_reset(void);

/* A uniform integer in [0, n). */
uint32_t bench_rng_below(uint32_t n);

/* Appends printf-formatted text (at most 255 bytes) to b, or exits with a
 * message when it does not fit or memory runs out. */
void bench_putf(tally_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends the task config "bench": subtask s (from 1) holds testcases
 * "s-01" .. "s-NN", NN = per_subtask, found by the regex "s-", with
 * scores 10, 15, 20, 25 and 30; subtask 1 is all public (the samples), and
 * elsewhere every third testcase is private. */
void bench_write_task(tally_buf_t *b, int per_subtask);

/* Appends "\"evaluations\": {...}" for one submission: as objects with
 * text, time and memory when full, else as bare outcomes. Both forms draw
 * the same numbers, so they carry the same outcomes. Each subtask has its
 * own skill: mostly correct answers, some wrong ones, some partial scores
 * and some timeouts. */
void bench_write_evaluations(tally_buf_t *b, int per_subtask, bool full);

/* Times nruns runs of count jobs each through e on this thread, job i
 * being text[i % njobs] (len[i % njobs] bytes), the output emptied before
 * each job. Prints each run's "unit"/s with the share of a CPU it had,
 * then the median, which it returns. A job that fails stops the program
 * with its error, named by prog: a bench that times error replies
 * measures nothing. */
double bench_engine_runs(const char *prog, tally_engine_t *e, char *const *text,
                         const size_t *len, int njobs, long count, int nruns,
                         const char *unit);

#endif
