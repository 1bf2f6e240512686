/* What the parts of tally rescore share (cli/rescore.c): the run, its
 * workers and items, and the helpers each part offers the others. The
 * parts: rescore.c (the lock, the progress, scoring and writing, the run)
 * and rescore_select.c (which submissions a run takes). */
#ifndef TALLY_RESCORE_INT_H
#define TALLY_RESCORE_INT_H

#include "cli/rescore.h"
#include "config/arena.h"
#include "contest/rescoredirect.h"
#include "engine/engine.h"
#include "redis/scripts.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>

#define CHUNK 256 /* submissions read in one pipeline */
/* The most fields of one place whose task score tally rescore computes;
 * a larger place is left to the script. */
#define CHUNK_MEMBERS 4096
#define TIMEOUT_MS                                                             \
  30000                   /* on every tally__rs_command, script calls included \
                           */
#define LOCK_TTL_MS 30000 /* the lock expires unless refreshed */
#define LOCK_REFRESH_MS 5000 /* how often it is */
#define PROGRESS_MS 500      /* how often <p>:rescore is written */
#define CALLBACK_MS 200      /* how often on_progress runs */
#define MAX_TRIES 100        /* script calls for one submission */
#define NFIELDS 8            /* what is read of a submission: */
enum {
  F_JOB,
  F_REV,
  F_SUMMARY,
  F_VERSION,
  F_SCORE,
  F_PUBLIC,
  F_SCORED,
  F_TOKENED
};

/* Where a submission is in the rescore. */
enum {
  IT_NEW = 0,   /* not read yet */
  IT_SEND,      /* scored, to be written */
  IT_UNCHANGED, /* its summary is the stored one: nothing to write */
  IT_SKIPPED,   /* not to be rescored (rescore.h says which) */
  IT_GONE,      /* deleted meanwhile */
  IT_WRITTEN    /* written */
};

typedef struct item_s {
  char *id;
  char *order;   /* contest, participant, task: the order of the writes */
  char *summary; /* the new summary (IT_SEND), or NULL when unscored */
  char *error;   /* why the job cannot be scored, or NULL */
  char *rev;     /* the rev the job was read at */
  char *kept;    /* an IT_UNCHANGED item's summary, for its place's task
                    score (tally_place_whole), or NULL */
  char *participant, *contest; /* for on_change (dry runs) */
  const char *task;            /* a name in the taskset, or NULL */
  unsigned char state;
  bool direct;  /* sent as a direct rescore, stored as in stored */
  bool tokened; /* the record was tokened when read */
  tally_rescore_old_t stored;
  bool old_scored, new_scored, differs;
  double old_score, old_public, new_score, new_public;
} item_t;

/* A stored task version (<p>:taskversions). */
typedef struct version_s {
  char *task, *version;
} version_t;

typedef struct run_s run_t;

typedef struct worker_s {
  run_t *run;
  redisContext *c;
  tally_engine_t e;
  tally_arena_t arena; /* for the summaries the writing parses */
  tally_buf_t out, sum;
  /* The direct rescores' texts of the call being sent, by item, and the
   * task scores of its whole places. */
  tally_rescore_direct_t direct[TALLY_CALL_MAX_ITEMS];
  tally_place_calc_t places[TALLY_CALL_MAX_ITEMS];
  tally_place_id_t place_ids[TALLY_CALL_MAX_ITEMS];
  tally_place_member_t members[CHUNK_MEMBERS];
  size_t nplaces; /* places[0..nplaces) and their ids are the call's */
  char *judged;   /* the last job given its kept verdict, or NULL */
  tally_call_t call;
  bool *seen; /* per taskset entry: a submission of it was rescored */
  pthread_t thread;
  bool started;
  int status;
  char err[512];
} worker_t;

struct run_s {
  const tally_rescore_opts_t *o;
  item_t *items; /* sorted by id */
  size_t n;
  /* The items to write, in write order (by place), and among them the
   * unchanged items kept for their places' task scores. */
  item_t **send;
  /* The script calls: call k writes send[calls[k]..calls[k + 1]). */
  size_t *calls;
  size_t ncalls;
  size_t nsend;
  version_t *versions; /* stored task versions, for stale */
  size_t nversions;
  version_t *pending; /* <p>:rescore:pending: rescores not yet finished */
  size_t npending;
  bool *finishing; /* per taskset entry: its pending mark is cleared once
                      this run succeeds */
  char sha[48];
  char lock_key[512], progress_key[512], lock_value[256];
  bool locked;
  redisContext *ctl; /* the main thread's: lock, progress, selection */
  worker_t **workers;
  unsigned nworkers;
  atomic_size_t next, scored, done, changed, failed, skipped, gone, retried;
  atomic_uint running;
  atomic_bool stop;
  const char *state;
  double phase_s[3]; /* seconds in selecting, scoring and writing */
  double t0;         /* monotonic seconds when started */
  long long started; /* ms since the epoch */
  char url[512];
};

/* rescore.c */
char *tally__rs_dup(const char *s, size_t n);
int tally__rs_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tally__rs_reply_error(const run_t *run, redisContext *c,
                          const redisReply *reply, const char *what, char *err,
                          size_t errlen);
redisReply *tally__rs_command(const run_t *run, redisContext *c, int type,
                              char *err, size_t errlen, const char *fmt, ...);
const char *tally__rs_stored_version(const run_t *run, const char *task);
const char *tally__rs_reply_str(const redisReply *r);
int tally__rs_cmp_order(const void *a, const void *b);

/* rescore_select.c */
int tally__rs_select_items(run_t *run, char *err, size_t errlen);
int tally__rs_finish_pending(run_t *run, char *err, size_t errlen);

/* The phases' work on each worker (rescore_items.c): reading and scoring
 * the items, then writing the planned calls; and the plan, which splits
 * run->send into script calls that take whole places. */
void *tally__rs_score_main(void *arg);
/* Frees what item it holds but its id, and forgets its direct rescore. */
void tally__rs_item_clear(item_t *it);
void *tally__rs_write_main(void *arg);
int tally__rs_plan_calls(run_t *run);

#endif
