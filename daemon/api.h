/* The results API (docs/scoreboard.md): read-only JSON over tallyd's HTTP
 * listener, from a Redis connection of its own.
 *
 *   GET /api/contests                          every contest
 *   GET /api/contests/C                        one contest
 *   GET /api/contests/C/ranking[?view=private] its ranking
 *   GET /api/contests/C/participants/P         one participant's scores
 *   GET /api/contests/C/events                 its board's changes, as
 *                                              Server-Sent Events
 *
 * Public answers hold public scores only. The private ranking needs the
 * operator's bearer token (--http-token-file); a participant's own
 * endpoint needs that token or the participant's, an HMAC-SHA256 of the
 * id keyed with a secret kept in Redis (<p>:secret). */
#ifndef TALLY_API_H
#define TALLY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "contest/freezes.h"
#include "daemon/curluv.h"
#include "daemon/http.h"
#include "daemon/log.h"
#include "engine/contests.h"
#include "engine/registry.h"
#include "engine/taskset.h"
#include "redis/cluster.h"
#include "redis/redis.h"
#include "redis/tokens.h"

typedef struct tally_sse_s tally_sse_t;

/* The task configs tallyd checked, kept to rebuild a submission's view
 * for its participant's endpoint (from the stored job, with the current
 * config). Only without plugins: a plugin runs in the workers alone, so
 * that its crash never takes tallyd down. */
typedef struct tally_scoring_s {
  bool ok;
  tally_registry_t reg;
  tally_taskset_t tasks;
} tally_scoring_t;

/* Frees s's configs, if it holds any. */
void tally_scoring_close(tally_scoring_t *s);

typedef struct tally_api_s tally_api_t;

/* The event stream of one queue (<q>:public, q the queue's prefix): a
 * connection that follows it (on a cluster, to the master of the queue's
 * slot), the last entry it read, and its pace. */
typedef struct tally_api_tail_s {
  tally_api_t *a;
  tally_redis_t r;
  char queue[TALLY_QUEUE_NAME_MAX + 1];
  char prefix[200];
  char id[48];     /* "" until known */
  bool failing;    /* its last read failed */
  size_t count;    /* the entries its last read asked for */
  uv_timer_t pace; /* it reads again after this, not at once */
} tally_api_tail_t;

struct tally_api_s {
  const char *prefix;        /* borrowed: the keys' prefix (global keys) */
  const char *default_queue; /* borrowed: the queue of contests whose
                                config names none */
  const tally_contestset_t
      *contests;                  /* borrowed: tallyd's, replaced on reload */
  unsigned contests_gen;          /* moved on by each replacement */
  const tally_scoring_t *scoring; /* borrowed, replaced on reload; NULL */
  tally_log_t *log;
  char *token; /* the operator's, or NULL: no private view */
  /* Private. */
  uv_loop_t *loop;
  /* Every read and write but the tails': on a cluster, each key's master. */
  tally_cluster_t cl;
  bool cl_up; /* it was ready at the last keep-alive */
  /* The event streams: one tail per queue known (the default queue and
   * those the configs name at start), the streams open, and their
   * keep-alive. */
  tally_api_tail_t *tails;
  size_t ntails;
  bool tail_known; /* atomic, for /readyz: every tail's id has been read */
  /* atomic, for /readyz: the configured contests (and their queues) have
   * been published once, so that tally submit finds where their jobs go. */
  bool contests_known;
  tally_sse_t *sses;
  /* For /metrics, read from the main loop: atomic. The streams open,
   * the events written to them (one per stream), and the streams ended
   * for falling too far behind. */
  unsigned nsses;
  uint64_t sse_events, sse_dropped;
  /* What the streams' buffers hold together (atomic, read by /metrics),
   * and the most they may: set before tally_api_init (0: 256 MiB). Past
   * it, the stream furthest behind is ended, and so on until it fits. */
  uint64_t sse_bytes, sse_budget;
  /* The generation of the configs whose contests are in <p>:configured
   * and <p>:contest-times (0: none yet), the one being written, and the
   * writes of it still to answer. */
  unsigned published, publishing, publish_wait;
  bool publish_ok;
  tally_buf_t scratch;  /* one event's text, built once for every stream */
  uv_timer_t keepalive; /* every second: the freezes; keep-alives */
  unsigned ticks;
  int handles; /* open: cl, keepalive, rws_curl, and each tail's connection
                  and pace */
  /* The freezes: each configured contest with a freeze or an operator's
   * word (`tally contest freeze|unfreeze`, <p>:freezes), and the freeze
   * in force at the last settle (NAN: not frozen). */
  struct tally_api_freeze_s {
    char name[256];
    double since;
  } * freezes;
  size_t nfreezes;
  /* The words of <p>:freezes as last read (every second), and whether a
   * read of them is in flight. */
  struct tally_api_word_s {
    char *name;
    tally_freeze_word_t word;
  } * words;
  size_t nwords;
  bool words_asking;
  bool words_bad;                    /* a value that is not a word was logged */
  char secret[TALLY_SECRET_HEX + 1]; /* "" until read; read each second */
  bool secret_asking;                /* a read of it in flight */
  bool secret_failing;               /* its last read failed (logged) */
  unsigned inflight;                 /* requests waiting on Redis */
  struct tally_ccs_feed_s *ccs_feeds; /* the CCS event feeds open */
  /* The pushes to Ranking Web Servers (daemon/rws.h), and their HTTP
   * client. */
  struct tally_rws_push_s *rws;
  tally_curluv_t rws_curl;
  bool rws_closed;
  /* For /metrics (atomic): the CCS event feeds open; the PUTs the Ranking
   * Web Servers took and those that failed; the servers failing now. */
  unsigned nccs_feeds;
  /* Pass-fail rankings answered within the last second, by contest and
   * view: each one counts every place of the contest, so a burst of
   * boards re-reading it after an event costs one count. */
  struct tally_api_board_s {
    char contest[256];
    bool private_view;
    double since; /* the freeze it was counted at, or NAN */
    uint64_t at;  /* loop time; 0: empty */
    char *body;
    size_t len;
  } boards[8];
  uint64_t rws_taken, rws_failed;
  unsigned rws_failing;
  bool closing;
  void (*close_cb)(struct tally_api_s *a);
};

/* Prepares a on loop for the Redis server at url (any node of a
 * cluster), with a tail for the default queue and each queue of cs;
 * token_file (or NULL) holds the operator token on its first line.
 * Returns 0, or a negative code with err naming the cause. */
int tally_api_init(tally_api_t *a, uv_loop_t *loop, const char *url,
                   const char *token_file, const tally_contestset_t *cs,
                   char *err, size_t errlen);

/* The prefix of contest's keys (its queue's: redis/keys.h) into out
 * (len bytes). Returns 0, or TALLY_E2BIG. */
int tally_api_contest_prefix(const tally_api_t *a, const char *contest,
                             char *out, size_t len);
void tally_api_start(tally_api_t *a);

/* For tally_ops_t's api_cb: 0 for a path not under /api/, 1 when the
 * reply is filled, 2 when it will be (tally_http_answer). */
int tally_api_route(void *a, tally_http_req_t *r);

/* Answers every waiting request 503 and closes the connection; close_cb
 * runs once it is closed. */
void tally_api_close(tally_api_t *a, void (*close_cb)(tally_api_t *a));

#endif
