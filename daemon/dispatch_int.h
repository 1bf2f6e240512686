/* What the parts of the dispatcher share (daemon/dispatch.c): the job
 * record, the script calls, and the functions each part offers the
 * others. The parts: dispatch_jobs.c (the job table and the queues),
 * dispatch_read.c (taking entries in), dispatch_post.c (posting,
 * retrying, releasing and the token flow), dispatch.c (the connections,
 * the lease, the timer and the drain). */
#ifndef TALLY_DISPATCH_INT_H
#define TALLY_DISPATCH_INT_H

#include "daemon/dispatch.h"

/* Script calls in flight on the write connection, at most. */
#define MAX_CALLS 4
/* Jobs in one post call, and their bytes, at most. */
#define POST_ITEMS TALLY_DISPATCH_POST_ITEMS
#define POST_BYTES (16u * 1024 * 1024)
/* How often the counters are logged (when they moved). */
#define STATS_EVERY_MS 10000
#define TICK_MS 100

typedef enum job_state_e {
  JOB_NEW,     /* just read */
  JOB_POOL,    /* with the pool */
  JOB_POST,    /* outcome queued for posting */
  JOB_RETRY,   /* queued to count a delivery and go back to the pool */
  JOB_RELEASE, /* queued to be handed back */
  JOB_FETCH,   /* a token job, queued to fetch its submission's job */
  JOB_CALL,    /* in a script call */
  JOB_JUDGE    /* a sample waiting for its verdict (dispatch_judge.c) */
} job_state_t;

struct tally__job_s {
  tally_pool_job_t pj; /* pj.data points back here */
  tally_dispatch_t *d; /* the dispatcher of the queue it came from */
  tally__job_t *hnext; /* in the table */
  tally__job_t *qnext; /* in one of the queues */
  job_state_t state;
  const char *kind; /* "result", "dead" or "token" */
  char *body;       /* the worker's answer, or the cause of the dead letter */
  size_t body_len;  /* of the result part of the answer, or of the cause */
  tally_post_extra_t extra; /* the other parts of the answer, in body */
  bool has_extra;
  bool send_full; /* a result posts its full view: the post script asked
                     for it (TALLY_POST_NEED_FULL) */
  char *token;    /* a token job's token, kept while its submission's job is
                     fetched and scored again; NULL for other jobs */
  size_t token_len;
  char *entry;    /* for a token job: the submission's job entry when its job
                     was fetched, or NULL */
  char *record;   /* the submission record's key, or NULL */
  char *text;     /* the job (for a token job, then its submission's job), or
                     NULL when not kept */
  char *unscored; /* a dead letter's unscored summary (the worker's), or
                     NULL: the dead letter is then all that is posted */
  bool resent;    /* posted again after a call whose reply was lost */
  /* A result's place (tally_places_key), and the task score computed for
   * its post in one block: expect, cache, score and meta, with their
   * lengths (NULL: none). */
  char *place_key;
  size_t place_key_len;
  char *pre;
  tally_post_pre_t pre_args;
  /* A sample waiting for its verdict: the request to the judge (NULL
   * while Redis is asked), and the hash of its prompt. */
  struct tally_judge_req_s *judge_req;
  char judge_hash[65];
  bool judge_keeping; /* its verdict is being kept (HSETNX in flight) */
  char id[];
};

/* One script call in flight, and the jobs it carries. */
typedef struct call_s {
  tally_dispatch_t *d;
  unsigned n;
  tally__job_t *jobs[POST_ITEMS];
  uint32_t deliveries[POST_ITEMS]; /* as sent */
  unsigned nbodies; /* the SETs before a post script, in one transaction */
  long long codes[POST_ITEMS]; /* the post script's, kept while WAIT runs */
} call_t;

/* dispatch_jobs.c: the job table and the queues. */
tally__job_t **tally__slot(tally_dispatch_t *d, const char *id);
int tally__table_grow(tally_dispatch_t *d);
void tally__job_free(tally_dispatch_t *d, tally__job_t *j);
void tally__job_done(tally_dispatch_t *d, tally__job_t *j);
size_t tally__room(const tally_dispatch_t *d);
void tally__enqueue(tally__job_t **head, tally__job_t **tail, tally__job_t *j);
tally__job_t *tally__dequeue(tally__job_t **head, tally__job_t **tail);
void tally__queue_post(tally_dispatch_t *d, tally__job_t *j);
void tally__queue_release(tally_dispatch_t *d, tally__job_t *j);
void tally__queue_fetch(tally_dispatch_t *d, tally__job_t *j);
void tally__requeue(tally_dispatch_t *d, call_t *c, job_state_t state);
void tally__dead_letter(tally_dispatch_t *d, tally__job_t *j, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));

/* dispatch_read.c: taking entries in. */
void tally__take(tally_dispatch_t *d, const char *id, size_t id_len,
                 uint32_t deliveries, const char *text, size_t len);
void tally__reply_error(tally_dispatch_t *d, tally_redis_t *r, const char *what,
                        const redisReply *reply);
void tally__claim(tally_dispatch_t *d);
/* Reads what /metrics shows of Redis, once per TALLY_PROBE_EVERY_MS
 * (dispatch_probe.c). */
void tally__probe(tally_dispatch_t *d, uint64_t now);
/* Whether an error reply says that Redis is full. */
bool tally__is_oom(const redisReply *reply);
void tally__pump(tally_dispatch_t *d);
/* Redis is full: true while writes wait out the backoff of OOM replies;
 * tally__room_again after a write that went through. */
bool tally__full(tally_dispatch_t *d);
void tally__room_again(tally_dispatch_t *d);

/* dispatch_post.c: sending the queued script calls. */
void tally__flush(tally_dispatch_t *d);

/* dispatch_places.c: result j's task score computed for its post (NULL:
 * none), and the place caches a post's reply gives. */
const tally_post_pre_t *tally__precompute(tally_dispatch_t *d, tally__job_t *j,
                                          const tally_post_extra_t *e);
void tally__learn_places(tally_dispatch_t *d, const call_t *c,
                         const redisReply *reply);

/* dispatch_judge.c: a sample that needs a verdict (body: the worker's
 * request, len bytes): from <qprefix>:verdicts, else from the judge, then
 * scored again with it. */
void tally__judge(tally_dispatch_t *d, tally__job_t *j, const char *body,
                  size_t len);
/* Keeps the entries of the samples waiting for a verdict from looking
 * idle to other daemons' claims: every third of --claim-idle. */
void tally__judge_hold(tally_dispatch_t *d, uint64_t now);
/* Hands back the samples waiting for a judge's answer (a drain). */
void tally__judge_drain(tally_dispatch_t *d);

/* dispatch.c: ends a drain once nothing is left. */
void tally__check_drained(tally_dispatch_t *d);

#endif
