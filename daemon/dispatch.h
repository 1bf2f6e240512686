/* The dispatcher: reads jobs from the Redis stream through the consumer
 * group, hands them to the worker pool, and posts each outcome exactly
 * once with the stream scripts. It owns two Redis connections: one for
 * blocking reads, one for everything else. A scored answer is posted with
 * its summary and views; a token job's submission's stored job is read
 * and scored again, and the token posted with that summary and full view
 * (docs/contest.md). */
#ifndef TALLY_DISPATCH_H
#define TALLY_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "contest/placecalc.h"
#include "daemon/judge.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "daemon/places.h"
#include "daemon/pool.h"
#include "redis/redis.h"
#include "redis/scripts.h"

typedef struct tally__job_s tally__job_t;
typedef struct tally_dispatch_s tally_dispatch_t;

/* The dispatchers of one tallyd, one per queue, sharing one worker pool:
 * the pool's done_cb is tally_dispatch_done and its data the group. In a
 * drain, the queued jobs are handed back once every member drains, and
 * the pool closes once every member has finished its jobs. */
typedef struct tally_dispatch_group_s {
  tally_dispatch_t **members;
  size_t n;
  size_t draining; /* members that have begun a drain */
  size_t waiting;  /* members whose drain waits for the pool to close */
  bool late;       /* one of those reached its drain deadline */
} tally_dispatch_group_t;

typedef struct tally_dispatch_options_s {
  const char *url;      /* the Redis server */
  const char *prefix;   /* key prefix: the queue's (redis/keys.h) */
  const char *queue;    /* the queue's name, which the workers check each
                           job's contest against */
  const char *consumer; /* this process's consumer name */
  uint64_t claim_idle_ms;
  unsigned max_deliveries;
  uint64_t max_job_bytes;
  unsigned max_inflight;       /* jobs read and not yet posted, at most */
  uint64_t command_timeout_ms; /* watchdog of every command but reads */
  uint64_t block_ms;           /* BLOCK of each read */
  /* After each post: WAIT for this many replicas (0: no WAIT), at most
   * TALLY_WAIT_MS; a post that reached fewer is posted again. */
  unsigned wait_replicas;
  /* Retention (trim.lua): the age in ms and the counts of the results,
   * public, changes and dead streams, 0 for no limit; retain_every_ms 0
   * trims never. */
  uint64_t retain_age_ms;
  uint64_t retain_counts[4];
  uint64_t retain_every_ms;
  tally_log_t *log;
  /* The server is tallyd's own, starting as the connections are made:
   * until they are first up, a refused or loading connection is its
   * start, logged at debug, not a fault. */
  bool embedded;
  tally_pool_t *pool; /* borrowed; its done_cb must be tally_dispatch_done
                         and its data group */
  tally_dispatch_group_t *group; /* borrowed; d must be one of its members */
  /* The judge client (borrowed; NULL: no judge, and a sample without a
   * kept verdict is scored as unjudged). */
  tally_judge_client_t *judge;
  /* Optional hooks, NULL-checked. ready_cb runs each time the write
   * connection is set up (at start and after each reconnect); stale_cb
   * after a post call in which the script found results scored with a
   * config version other than the current one (TALLY_POST_STALE). */
  void (*ready_cb)(tally_dispatch_t *d);
  void (*stale_cb)(tally_dispatch_t *d);
  /* Called once when the dispatcher cannot go on: another live daemon
   * holds this consumer name (why says which). The caller should stop. */
  void (*fatal_cb)(tally_dispatch_t *d, const char *why);
} tally_dispatch_options_t;

/* The consumer lease, <p>:consumer:<name>: held while a daemon runs with
 * that consumer name, refreshed every third of it, released on a drain. */
#define TALLY_LEASE_MS 10000
/* How long a post waits for its replicas (WAIT's timeout). */
#define TALLY_WAIT_MS 1000
/* Jobs in one post call, at most. */
#define TALLY_DISPATCH_POST_ITEMS 64
/* How much longer than the retention age a result's body lives: its entry
 * is trimmed first, and the body with it; the expiry only clears a body
 * no entry names (written by a delivery that lost its job). */
#define TALLY_BODY_GRACE_MS (24ull * 3600 * 1000)

/* Counters, for the log and the tests. */
typedef struct tally_dispatch_stats_s {
  uint64_t read;              /* entries taken: new, own history or claimed */
  uint64_t trimmed;           /* stream entries removed by retention */
  uint64_t scored;            /* results posted */
  uint64_t tokens;            /* token jobs posted */
  uint64_t stale;             /* results posted but scored with an old config */
  uint64_t dead;              /* dead letters posted */
  uint64_t dropped;           /* posts refused: the entry was claimed or gone */
  uint64_t retried;           /* jobs sent again after a worker failure */
  uint64_t released;          /* jobs handed back when draining */
  uint64_t claimed;           /* entries taken over from other consumers */
  uint64_t posts;             /* post script calls that answered */
  uint64_t post_items;        /* jobs in them */
  uint64_t script_errors;     /* error replies to the job scripts, but OOM */
  uint64_t oom_refusals;      /* writes refused because Redis is full */
  uint64_t wait_short;        /* posts that reached fewer replicas than asked */
  uint64_t verdicts_kept;     /* samples whose verdict was in <p>:verdicts */
  uint64_t judge_asked;       /* samples sent to the judge */
  uint64_t judge_failed;      /* samples the judge could not answer */
  uint64_t precomputed;       /* results posted with their task score computed
                                 by tallyd (dispatch_places.c) */
  uint64_t precomputed_taken; /* of those, the ones whose place cache the
                                 script wrote as computed */
} tally_dispatch_stats_t;

/* How often the write connection reads what /metrics shows of Redis. */
#define TALLY_PROBE_EVERY_MS 1000

/* What the last probe read; NaN where it could not tell. */
typedef struct tally_dispatch_probe_s {
  double lag;           /* entries of the jobs stream the group has not
                           read (XINFO GROUPS) */
  double pending;       /* entries pending for this consumer */
  double used_memory;   /* INFO memory: used_memory, bytes */
  double rescore_done;  /* <p>:rescore: done and total, */
  double rescore_total; /* and whether it is running */
  double rescore_running;
} tally_dispatch_probe_t;

struct tally_dispatch_s {
  tally_dispatch_options_t opt; /* strings copied */
  tally_dispatch_stats_t stats;
  tally_hist_t latency; /* a job's entry time to its post, seconds */
  tally_dispatch_probe_t probe;
  void *data; /* the user's */
  /* Private. */
  uv_loop_t *loop;
  tally_redis_t rd, wr;
  int closing_conns;
  char sha[TALLY_SCRIPT_COUNT][48];
  char jobs_key[96];
  bool ready;        /* wr is up with the group and the scripts */
  bool ever_ready;   /* it has been, once */
  int init_left;     /* init replies still awaited */
  bool warned;       /* the server's settings were checked */
  bool history_done; /* own pending entries re-read since ready */
  bool history_busy;
  bool history_again; /* the read connection dropped during a history read */
  char history_cursor[64];
  bool reading; /* an XREADGROUP in flight on rd */
  bool claiming;
  char claim_cursor[64];
  bool draining;
  int drain_phase; /* 0 finishing, 1 closing the pool, 2 last replies */
  bool closing;
  bool aof_off;
  char lease_key[320];
  char lease_value[320];  /* host:pid:start, this daemon's */
  uint64_t lease_next;    /* when to refresh the lease */
  uint64_t lease_waiting; /* since when another holds it at start; 0 */
  bool lease_busy;        /* a refresh in flight */
  uint64_t retain_next;   /* when to trim the streams next */
  /* Redis full (OOM replies): since when, until when nothing is sent,
   * the backoff, when it was last said, and the refusals since. */
  uint64_t full_since, full_until, full_backoff, full_logged;
  uint64_t full_refusals;
  bool retain_busy;     /* a trim in flight */
  unsigned probing;     /* probe commands in flight */
  uint64_t probe_next;  /* when to probe next */
  bool fatal;           /* fatal_cb has run */
  tally_call_t scratch; /* arguments of the call being sent */
  /* The place caches last seen written, and the task score computed from
   * them for the post being sent (docs/contest.md, "Task scores computed by
   * tallyd"), and its direct post ("The direct post"). */
  tally_places_t places;
  tally_place_calc_t calc;
  tally_place_direct_t direct;
  /* The result bodies and large views of the post call being sent,
   * written before the script in the same transaction: SET key bytes
   * [PX ttl], up to three per job. */
  struct {
    char keys[3 * TALLY_DISPATCH_POST_ITEMS][TALLY_RESULT_KEY_MAX];
    const char *argv[3 * TALLY_DISPATCH_POST_ITEMS + 1][5];
    size_t lens[3 * TALLY_DISPATCH_POST_ITEMS + 1][5];
    int argc[3 * TALLY_DISPATCH_POST_ITEMS + 1];
    char ttl[24];
  } bodies;
  tally__job_t **table; /* jobs by entry id */
  size_t table_size;    /* a power of two */
  size_t njobs;
  tally__job_t *post_q, *post_tail;       /* outcomes waiting to be posted */
  tally__job_t *retry_q, *retry_tail;     /* failed jobs to count and resend */
  tally__job_t *release_q, *release_tail; /* jobs to hand back */
  tally__job_t *fetch_q, *fetch_tail;     /* token jobs whose submission's job
                                             is to be fetched */
  unsigned calls;                         /* script calls in flight on wr */
  uv_timer_t timer; /* claims, stats, the drain deadline */
  uint64_t next_claim, next_stats, drain_deadline;
  uint64_t next_hold; /* when the judged samples' entries are held next */
  tally_dispatch_stats_t last_stats;
  void (*drained_cb)(tally_dispatch_t *d);
  void (*close_cb)(tally_dispatch_t *d);
};

/* Copies opt and prepares d; nothing connects before tally_dispatch_start.
 * Returns 0, or a negative code with err naming the cause (a bad URL). On
 * error d needs no close. */
int tally_dispatch_init(uv_loop_t *loop, tally_dispatch_t *d,
                        const tally_dispatch_options_t *opt, char *err,
                        size_t errlen);

/* Connects, creates the group if missing, loads the scripts, re-reads this
 * consumer's own pending entries, then reads new ones and claims idle
 * entries of dead consumers. Retries forever while Redis is away. */
void tally_dispatch_start(tally_dispatch_t *d);

/* The pool's done_cb. */
void tally_dispatch_done(tally_pool_t *p, tally_pool_outcome_t *outcomes,
                         size_t n);

/* Stops reading, lets the jobs in the workers finish and post, hands back
 * the queued ones, and after timeout_ms hands back whatever is left. Then
 * drained_cb runs; the connections stay open until tally_dispatch_close. */
void tally_dispatch_drain(tally_dispatch_t *d, uint64_t timeout_ms,
                          void (*drained_cb)(tally_dispatch_t *d));

/* Whether d can score: both connections up, the group and scripts set
 * up, and not draining. When not, why (whylen bytes) says what is
 * missing, in one line. */
bool tally_dispatch_ready(const tally_dispatch_t *d, char *why, size_t whylen);

/* Closes both connections and frees every job left (they stay pending in
 * Redis, for this consumer's next start or another daemon's claim).
 * close_cb runs once every handle is closed. */
void tally_dispatch_close(tally_dispatch_t *d,
                          void (*close_cb)(tally_dispatch_t *d));

#endif
