/* Rescoring stored submissions (docs/contest.md): selects submissions
 * through the indexes tallyd keeps, scores their stored jobs again with
 * the loaded task configs on several threads, each with its own
 * synchronous Redis connection, and writes the new summaries, with the
 * task scores and rankings they change, through the rescore script. */
#ifndef TALLY_RESCORE_H
#define TALLY_RESCORE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/taskset.h"
#include "redis/keys.h"

/* How far a rescore is; what its progress callback and the hash
 * <p>:rescore show. */
typedef struct tally_rescore_stats_s {
  const char *state; /* "selecting", "scoring", "writing", "done" */
  size_t total;      /* submissions selected */
  size_t scored;     /* of them, read and scored again so far */
  size_t done;       /* of them, finished: written, unchanged or skipped */
  size_t changed;    /* whose score changed (or would, with dry_run) */
  size_t failed;     /* whose job the loaded config cannot score */
  size_t skipped;    /* not rescored: see tally_rescore_opts_t */
  size_t gone;       /* deleted while the rescore ran */
  size_t retried;    /* script calls redone after a concurrent write */
  double seconds;    /* since the rescore started (after the lock) */
  /* Of them, in each phase: selecting (reading the indexes), scoring
   * (reading the jobs and scoring them), writing (the script calls). */
  double select_seconds, score_seconds, write_seconds;
  char **tasks; /* names of the tasks rescored, sorted; owned */
  size_t ntasks;
} tally_rescore_stats_t;

/* One submission whose score a dry run would change. old_scored is false
 * for a submission without a stored score; new_scored is false for a job
 * the loaded config cannot score, with error saying why. */
typedef struct tally_rescore_change_s {
  const char *submission, *task, *participant, *contest;
  bool old_scored, new_scored;
  double old_score, old_public_score;
  double new_score, new_public_score;
  const char *error;
} tally_rescore_change_t;

/* What to rescore, with what, and whom to tell.
 *
 * The selection: the submissions in every index given (an intersection):
 * task (<p>:index:task:<enc task>), contest, participant, and submission
 * (that one submission). changed and stale are each exclusive with every
 * other selection:
 *   - changed: every loaded task whose version differs from
 *     <p>:taskversions gets its new version written there first, then
 *     each of its submissions whose stored version differs is rescored;
 *   - stale: the members of <p>:stale whose task's version in
 *     <p>:taskversions is the loaded config's (the others stay stale).
 * A submission whose task is not among the loaded configs is skipped, so
 * that a folder with part of the tasks leaves the others alone; a job that
 * the loaded config cannot score is written unscored, with its error.
 *
 * With dry_run nothing is written (no lock, no progress, no version): each
 * submission whose score would change is reported to on_change, in
 * submission id order, after the scoring. */
typedef struct tally_rescore_opts_s {
  const char *url;              /* redis://IP:PORT[/DB] or unix:///PATH */
  const char *prefix;           /* key prefix */
  const tally_taskset_t *tasks; /* the configs; borrowed */
  const char *task, *contest, *participant, *submission; /* or NULL */
  bool changed, stale, dry_run;
  unsigned threads;      /* 0: one per CPU */
  uint64_t lock_wait_ms; /* how long to wait for the lock; 0: forever */
  /* Each callback may be NULL, and runs on the thread that called
   * tally_rescore_run. on_wait: once, when another rescore holds the
   * lock (holder is its lock value). on_progress: about 5 times a second
   * and once at the end. */
  void (*on_wait)(const char *holder, void *data);
  void (*on_progress)(const tally_rescore_stats_t *st, void *data);
  void (*on_change)(const tally_rescore_change_t *ch, void *data);
  void *data;
  /* When not NULL: once *cancel is nonzero (a signal handler sets it),
   * the rescore stops as soon as it can and fails with TALLY_EIO. */
  const volatile sig_atomic_t *cancel;
} tally_rescore_opts_t;

/* The progress hash <p>:rescore holds state, total, scored, done,
 * changed, failed, started (ms since the epoch, when the lock was taken),
 * updated (ms) and rate (submissions done per second), rewritten every
 * half second while a rescore runs. */

/* Runs a rescore. st is filled in either way; free it with
 * tally_rescore_stats_close. Returns 0; TALLY_EINVAL with err naming the
 * problem for a selection that cannot be run (none given, changed or
 * stale with another, a task not among the loaded configs); TALLY_EIO
 * when Redis fails (err names the URL and the cause), the lock is held
 * longer than lock_wait_ms or lost, or *cancel was set; or TALLY_ENOMEM. On an
 * error midway, what was written stays written: each script call is atomic, and
 * a new rescore finishes the job. */
int tally_rescore_run(const tally_rescore_opts_t *o, tally_rescore_stats_t *st,
                      char *err, size_t errlen);

void tally_rescore_stats_close(tally_rescore_stats_t *st);

/* Connects to url (with SELECT of its database), with a timeout of
 * timeout_ms on connecting and on every command; on a cluster, to the
 * master of the slot of the queue whose keys start with prefix. Returns
 * the context, or NULL with err naming the URL and the cause. Free it with
 * redisFree. */
struct redisContext *tally_rescore_connect(const char *url, const char *prefix,
                                           uint64_t timeout_ms, char *err,
                                           size_t errlen);

#endif
