/* The dispatcher: from the jobs stream to the workers and back, each
 * outcome posted once, fenced by the stream scripts. */
#include "daemon/dispatch.h"
#include "config/error.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Script calls in flight on the write connection, at most. */
#define MAX_CALLS 4
/* Jobs in one post call, and their bytes, at most. */
#define POST_ITEMS 64
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
  JOB_CALL     /* in a script call */
} job_state_t;

struct tally__job_s {
  tally_pool_job_t pj; /* pj.data points back here */
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
  char id[];
};

/* One script call in flight, and the jobs it carries. */
typedef struct call_s {
  tally_dispatch_t *d;
  unsigned n;
  tally__job_t *jobs[POST_ITEMS];
  uint32_t deliveries[POST_ITEMS]; /* as sent */
} call_t;

static void flush(tally_dispatch_t *d);
static void pump(tally_dispatch_t *d);
static void check_drained(tally_dispatch_t *d);

/* The job table: chained, keyed by entry id. */

static size_t hash_id(const char *id) {
  size_t h = 1469598103934665603ull;
  for (; *id; id++)
    h = (h ^ (unsigned char)*id) * 1099511628211ull;
  return h;
}

static tally__job_t **slot(tally_dispatch_t *d, const char *id) {
  tally__job_t **p = &d->table[hash_id(id) & (d->table_size - 1)];
  while (*p && strcmp((*p)->id, id) != 0)
    p = &(*p)->hnext;
  return p;
}

static int table_grow(tally_dispatch_t *d) {
  size_t size = d->table_size ? d->table_size * 2 : 256;
  tally__job_t **t = calloc(size, sizeof(*t));
  if (t == NULL)
    return TALLY_ENOMEM;
  for (size_t i = 0; i < d->table_size; i++)
    for (tally__job_t *j = d->table[i], *next; j; j = next) {
      next = j->hnext;
      size_t k = hash_id(j->id) & (size - 1);
      j->hnext = t[k];
      t[k] = j;
    }
  free(d->table);
  d->table = t;
  d->table_size = size;
  return 0;
}

static void job_free(tally_dispatch_t *d, tally__job_t *j) {
  *slot(d, j->id) = j->hnext;
  d->njobs--;
  free(j->text);
  free(j->body);
  free(j->unscored);
  free(j->token);
  free(j->entry);
  free(j->record);
  free(j);
}

/* Frees a job whose story is over, and lets more work in. */
static void job_done(tally_dispatch_t *d, tally__job_t *j) {
  job_free(d, j);
  if (!d->closing) {
    pump(d);
    check_drained(d);
  }
}

static size_t room(const tally_dispatch_t *d) {
  return d->njobs >= d->opt.max_inflight ? 0 : d->opt.max_inflight - d->njobs;
}

/* Queues. */

static void enqueue(tally__job_t **head, tally__job_t **tail, tally__job_t *j) {
  j->qnext = NULL;
  if (*tail)
    (*tail)->qnext = j;
  else
    *head = j;
  *tail = j;
}

static void push_front(tally__job_t **head, tally__job_t **tail,
                       tally__job_t *j) {
  j->qnext = *head;
  *head = j;
  if (*tail == NULL)
    *tail = j;
}

static tally__job_t *dequeue(tally__job_t **head, tally__job_t **tail) {
  tally__job_t *j = *head;
  if (j) {
    *head = j->qnext;
    if (*head == NULL)
      *tail = NULL;
  }
  return j;
}

static void queue_post(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_POST;
  enqueue(&d->post_q, &d->post_tail, j);
}

static void queue_release(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_RELEASE;
  enqueue(&d->release_q, &d->release_tail, j);
}

static void queue_fetch(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_FETCH;
  enqueue(&d->fetch_q, &d->fetch_tail, j);
}

/* Puts the jobs of a failed call back at the front of the queue of state
 * (JOB_POST, JOB_RETRY, JOB_RELEASE or JOB_FETCH), to be sent again when
 * the write connection is back; every call is safe to run twice. */
static void requeue(tally_dispatch_t *d, call_t *c, job_state_t state) {
  tally__job_t **head = state == JOB_POST    ? &d->post_q
                        : state == JOB_RETRY ? &d->retry_q
                        : state == JOB_FETCH ? &d->fetch_q
                                             : &d->release_q;
  tally__job_t **tail = state == JOB_POST    ? &d->post_tail
                        : state == JOB_RETRY ? &d->retry_tail
                        : state == JOB_FETCH ? &d->fetch_tail
                                             : &d->release_tail;
  for (unsigned i = c->n; i-- > 0;) {
    c->jobs[i]->state = state;
    push_front(head, tail, c->jobs[i]);
  }
}

/* Sets j to be dead-lettered with a cause. */
static void dead_letter(tally_dispatch_t *d, tally__job_t *j, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));

static void dead_letter(tally_dispatch_t *d, tally__job_t *j, const char *fmt,
                        ...) {
  char why[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  free(j->body);
  j->body = strdup(why);
  j->body_len = j->body ? strlen(j->body) : 0;
  j->has_extra = j->unscored != NULL;
  if (j->has_extra)
    j->extra = (tally_post_extra_t){.summary = j->unscored,
                                    .summary_len = strlen(j->unscored)};
  j->kind = "dead";
  tally_log(d->opt.log, TALLY_LOG_WARN, "job.dead", "%s: %s", j->id, why);
  queue_post(d, j);
}

/* Taking entries in. */

/* Takes one entry read from the stream: new, re-read from this consumer's
 * history, or claimed. text is NULL when the entry was deleted (len 0) or
 * has no job field (len 1). */
static void take(tally_dispatch_t *d, const char *id, size_t id_len,
                 uint32_t deliveries, const char *text, size_t len) {
  if (id_len == 0 || id_len > TALLY_BATCH_ID_MAX)
    return;
  char key[TALLY_BATCH_ID_MAX + 1];
  memcpy(key, id, id_len);
  key[id_len] = '\0';
  tally__job_t **s = slot(d, key);
  if (*s != NULL) {
    /* Already here, from before a reconnect: the re-read counted one more
     * delivery, which the post must now carry. */
    if (deliveries > (*s)->pj.deliveries)
      (*s)->pj.deliveries = deliveries;
    return;
  }
  if (d->njobs + 1 > d->table_size && table_grow(d) == 0)
    s = slot(d, key);
  tally__job_t *j = calloc(1, sizeof(*j) + id_len + 1);
  bool keep = text != NULL && len <= d->opt.max_job_bytes;
  if (j == NULL || (keep && (j->text = malloc(len + 1)) == NULL)) {
    /* The entry stays pending; this consumer's next start or another
     * daemon's claim takes it. */
    tally_log(d->opt.log, TALLY_LOG_ERROR, "job.oom",
              "%s: out of memory; left pending", key);
    free(j);
    return;
  }
  memcpy(j->id, key, id_len + 1);
  if (keep) {
    memcpy(j->text, text, len);
    j->text[len] = '\0';
  }
  j->pj.id = j->id;
  j->pj.id_len = id_len;
  j->pj.deliveries = deliveries;
  j->pj.text = j->text;
  j->pj.len = len;
  j->pj.data = j;
  j->state = JOB_NEW;
  *s = j;
  d->njobs++;
  d->stats.read++;

  if (text == NULL && len == 0)
    dead_letter(d, j,
                "the job entry was deleted from the stream while "
                "pending");
  else if (text == NULL)
    dead_letter(d, j, "the stream entry has no \"job\" field");
  else if (!keep)
    dead_letter(d, j, "the job is %zu bytes, more than --max-job-bytes %llu",
                len, (unsigned long long)d->opt.max_job_bytes);
  else if (deliveries > d->opt.max_deliveries)
    dead_letter(d, j,
                "delivered %u times, more than --max-deliveries %u: each "
                "daemon that took it stopped before posting",
                (unsigned)deliveries, d->opt.max_deliveries);
  else if (d->draining)
    queue_release(d, j);
  else {
    j->state = JOB_POOL;
    tally_pool_submit(d->opt.pool, &j->pj);
  }
}

/* The job field of a stream entry's field list, or NULL. */
static const redisReply *job_field(const redisReply *fields) {
  if (fields == NULL || fields->type != REDIS_REPLY_ARRAY)
    return NULL;
  for (size_t i = 0; i + 1 < fields->elements; i += 2) {
    const redisReply *k = fields->element[i];
    if (k->type == REDIS_REPLY_STRING && k->len == 3 &&
        memcmp(k->str, "job", 3) == 0)
      return fields->element[i + 1];
  }
  return NULL;
}

/* Triples of (id, deliveries, job or nil), from the history and claim
 * scripts, starting at element first. Returns how many. */
static size_t accept_triples(tally_dispatch_t *d, const redisReply *r,
                             size_t first, bool claimed) {
  size_t n = 0;
  for (size_t i = first; i + 2 < r->elements; i += 3) {
    const redisReply *id = r->element[i], *dl = r->element[i + 1],
                     *job = r->element[i + 2];
    if (id->type != REDIS_REPLY_STRING || dl->type != REDIS_REPLY_INTEGER)
      continue;
    n++;
    if (claimed && job->type == REDIS_REPLY_NIL) {
      /* The claim script dead-lettered it already. */
      d->stats.dead++;
      tally_log(d->opt.log, TALLY_LOG_WARN, "job.dead",
                "%s: the job entry was deleted from the stream while "
                "pending (claimed from a dead consumer)",
                id->str);
      continue;
    }
    if (claimed) {
      d->stats.claimed++;
      tally_log(d->opt.log, TALLY_LOG_INFO, "job.claimed",
                "%s: taken over after %llu ms idle (delivery %lld)", id->str,
                (unsigned long long)d->opt.claim_idle_ms, dl->integer);
    }
    take(d, id->str, id->len, (uint32_t)dl->integer,
         job->type == REDIS_REPLY_STRING ? job->str : NULL,
         job->type == REDIS_REPLY_STRING ? job->len : 0);
  }
  return n;
}

/* Error replies that mean the server or the group must be set up again:
 * the connection is reset and, after a backoff, initialised again. */
static void reply_error(tally_dispatch_t *d, tally_redis_t *r, const char *what,
                        const redisReply *reply) {
  char why[512];
  snprintf(why, sizeof(why), "%s failed: %s", what, reply->str);
  tally_log(d->opt.log, TALLY_LOG_WARN, "redis.error", "%s", why);
  if (strncmp(reply->str, "NOGROUP", 7) == 0 && r != &d->wr)
    tally_redis_reset(&d->wr, why); /* to create the group again */
  tally_redis_reset(r, why);
}

/* Reading. */

static void on_read(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  (void)priv;
  d->reading = false;
  if (reply == NULL || d->closing)
    return; /* on_up reads again */
  if (reply->type == REDIS_REPLY_ERROR) {
    reply_error(d, r, "XREADGROUP", reply);
    return;
  }
  tally_redis_healthy(r);
  if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0) {
    const redisReply *stream = reply->element[0];
    const redisReply *entries =
        stream->type == REDIS_REPLY_ARRAY && stream->elements == 2
            ? stream->element[1]
            : NULL;
    for (size_t i = 0; entries && i < entries->elements; i++) {
      const redisReply *e = entries->element[i];
      if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
          e->element[0]->type != REDIS_REPLY_STRING)
        continue;
      const redisReply *job = job_field(e->element[1]);
      const redisReply *id = e->element[0];
      if (e->element[1]->type == REDIS_REPLY_NIL) {
        take(d, id->str, id->len, 1, NULL, 0);
      } else if (job == NULL || job->type != REDIS_REPLY_STRING) {
        take(d, id->str, id->len, 1, NULL, 1);
      } else {
        take(d, id->str, id->len, 1, job->str, job->len);
      }
    }
  }
  flush(d);
  pump(d);
  check_drained(d);
}

static void read_more(tally_dispatch_t *d) {
  if (!d->ready || !d->history_done || d->reading || d->draining ||
      d->closing || d->rd.state != TALLY_REDIS_UP)
    return;
  size_t n = room(d);
  size_t low = d->opt.max_inflight / 4;
  if (n == 0 || n < (low ? low : 1))
    return;
  char count[24], block[24];
  snprintf(count, sizeof(count), "%zu", n);
  snprintf(block, sizeof(block), "%llu", (unsigned long long)d->opt.block_ms);
  const char *argv[] = {"XREADGROUP", "GROUP",     TALLY_GROUP, d->opt.consumer,
                        "COUNT",      count,       "BLOCK",     block,
                        "STREAMS",    d->jobs_key, ">"};
  size_t lens[11];
  for (int i = 0; i < 11; i++)
    lens[i] = strlen(argv[i]);
  if (tally_redis_command(&d->rd, d->opt.block_ms + d->opt.command_timeout_ms,
                          on_read, NULL, 11, argv, lens) == 0)
    d->reading = true;
}

/* This consumer's own pending entries, after every (re)connect. */

static void history_next(tally_dispatch_t *d);

static void on_history(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  size_t asked = (size_t)(uintptr_t)priv;
  d->history_busy = false;
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    reply_error(d, r, "the history script", reply);
    return;
  }
  if (reply->type != REDIS_REPLY_ARRAY)
    return;
  size_t n = accept_triples(d, reply, 0, false);
  if (n > 0) {
    const redisReply *last = reply->element[reply->elements - 3];
    snprintf(d->history_cursor, sizeof(d->history_cursor), "%s", last->str);
    tally_log(d->opt.log, TALLY_LOG_INFO, "history",
              "re-read %zu pending entries of this consumer", n);
  }
  if (n < asked && d->history_again) {
    d->history_again = false;
    snprintf(d->history_cursor, sizeof(d->history_cursor), "0");
  } else if (n < asked) {
    d->history_done = true;
    tally_log(d->opt.log, TALLY_LOG_DEBUG, "history.done",
              "own pending entries re-read; reading new ones");
  }
  flush(d);
  pump(d);
}

static void history_next(tally_dispatch_t *d) {
  if (!d->ready || d->history_done || d->history_busy || d->closing)
    return;
  size_t n = room(d);
  if (n == 0)
    return; /* once jobs are posted */
  if (n > 256)
    n = 256;
  tally_call_t *c = &d->scratch;
  tally_call_begin(c, TALLY_SCRIPT_HISTORY, d->sha[TALLY_SCRIPT_HISTORY],
                   d->opt.prefix, d->opt.consumer);
  tally_call_history(c, d->history_cursor, (unsigned)n);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_history,
                          (void *)(uintptr_t)n, c->argc, c->argv,
                          c->argvlen) == 0)
    d->history_busy = true;
}

/* Claiming entries that dead consumers left idle. */

static void on_claim(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  (void)priv;
  d->claiming = false;
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    reply_error(d, r, "the claim script", reply);
    return;
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 ||
      reply->element[0]->type != REDIS_REPLY_STRING)
    return;
  snprintf(d->claim_cursor, sizeof(d->claim_cursor), "%s",
           reply->element[0]->str);
  accept_triples(d, reply, 1, true);
  /* Go on at once while the scan has not wrapped. */
  if (strcmp(d->claim_cursor, "-") != 0)
    d->next_claim = uv_now(d->loop);
  flush(d);
  pump(d);
}

static void claim(tally_dispatch_t *d) {
  if (!d->ready || !d->history_done || d->claiming || d->draining ||
      d->closing || uv_now(d->loop) < d->next_claim)
    return;
  size_t n = room(d);
  if (n == 0)
    return;
  if (n > 256)
    n = 256;
  uint64_t every = d->opt.claim_idle_ms / 4;
  d->next_claim = uv_now(d->loop) + (every < 250     ? 250
                                     : every > 10000 ? 10000
                                                     : every);
  tally_call_t *c = &d->scratch;
  tally_call_begin(c, TALLY_SCRIPT_CLAIM, d->sha[TALLY_SCRIPT_CLAIM],
                   d->opt.prefix, d->opt.consumer);
  tally_call_claim(c, d->claim_cursor, d->opt.claim_idle_ms, (unsigned)n);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_claim, NULL,
                          c->argc, c->argv, c->argvlen) == 0)
    d->claiming = true;
}

/* Lets work in: history first, then new entries and claims. */
static void pump(tally_dispatch_t *d) {
  history_next(d);
  read_more(d);
  claim(d);
}

/* Posting, retrying and releasing. */

/* A script call that got no usable reply. Its jobs go back to their
 * queue, to be sent again once the write connection is set up again
 * (every script is safe to run twice); a reply that came but is not
 * usable resets that connection. */
static void call_failed(tally_dispatch_t *d, tally_redis_t *r, call_t *c,
                        job_state_t state, const redisReply *reply) {
  const char *what = state == JOB_POST    ? "the post script"
                     : state == JOB_RETRY ? "the retry script"
                     : state == JOB_FETCH ? "the read of a submission's job"
                                          : "the release script";
  /* Without a reply, a post may have run: if so, the next one finds the
   * jobs gone. */
  for (unsigned i = 0; reply == NULL && state == JOB_POST && i < c->n; i++)
    c->jobs[i]->resent = true;
  requeue(d, c, state);
  free(c);
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    reply_error(d, r, what, reply);
  } else {
    char why[128];
    snprintf(why, sizeof(why), "%s gave an unexpected reply", what);
    tally_redis_reset(r, why);
  }
}

static void count_posted(tally_dispatch_t *d, const tally__job_t *j) {
  if (strcmp(j->kind, "dead") == 0)
    d->stats.dead++;
  else if (strcmp(j->kind, "token") == 0)
    d->stats.tokens++;
  else
    d->stats.scored++;
}

static void on_post(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  d->calls--;
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
      reply->elements != c->n) {
    call_failed(d, r, c, JOB_POST, reply);
    return;
  }
  tally_redis_healthy(r);
  bool stale = false;
  for (unsigned i = 0; i < c->n; i++) {
    tally__job_t *j = c->jobs[i];
    long long code = reply->element[i]->integer;
    bool dead = strcmp(j->kind, "dead") == 0;
    if (code == TALLY_POST_DONE) {
      count_posted(d, j);
      tally_log(d->opt.log, TALLY_LOG_DEBUG, "job.posted", "%s: %s", j->id,
                j->kind);
    } else if (code == TALLY_POST_STALE) {
      /* Scored by a worker that still had the config before a reload. */
      count_posted(d, j);
      d->stats.stale++;
      stale = true;
      tally_log(d->opt.log, TALLY_LOG_DEBUG, "job.posted",
                "%s: %s, stale: scored with another config version than the "
                "current one",
                j->id, j->kind);
    } else if (code == TALLY_POST_NEED_FULL && !j->send_full) {
      /* A tokened submission: its event needs the full view, withheld
       * until now. The script wrote nothing and the entry is still ours. */
      j->send_full = true;
      tally_log(d->opt.log, TALLY_LOG_DEBUG, "job.post",
                "%s: tokened submission, posting again with the full view",
                j->id);
      queue_post(d, j);
      continue;
    } else if (code == TALLY_POST_REDELIVERED &&
               j->pj.deliveries != c->deliveries[i]) {
      /* Re-read from this consumer's history meanwhile: post again with
       * the count the re-read gave. */
      queue_post(d, j);
      continue;
    } else if (code == TALLY_POST_GONE && j->resent) {
      count_posted(d, j);
      tally_log(d->opt.log, TALLY_LOG_INFO, "job.posted",
                "%s: %s already posted, most likely by the earlier call "
                "whose reply was lost",
                j->id, j->kind);
    } else {
      d->stats.dropped++;
      tally_log(d->opt.log, TALLY_LOG_WARN, "job.dropped",
                "%s: %s not posted: %s", j->id, dead ? "dead letter" : j->kind,
                code == TALLY_POST_STOLEN
                    ? "another consumer claimed the job meanwhile"
                : code == TALLY_POST_NEED_FULL
                    ? "the post script asked again for the full view"
                : code == TALLY_POST_REDELIVERED
                    ? "the job was delivered again meanwhile"
                    : "the job is no longer pending (posted by another "
                      "consumer, or deleted)");
    }
    j->state = JOB_NEW;
    job_free(d, j);
  }
  free(c);
  if (stale && !d->closing && d->opt.stale_cb != NULL)
    d->opt.stale_cb(d);
  if (!d->closing) {
    flush(d);
    pump(d);
    check_drained(d);
  }
}

static void on_release(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  d->calls--;
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
      reply->elements != c->n) {
    call_failed(d, r, c, JOB_RELEASE, reply);
    return;
  }
  for (unsigned i = 0; i < c->n; i++) {
    if (reply->element[i]->integer == TALLY_POST_DONE)
      d->stats.released++;
    job_free(d, c->jobs[i]);
  }
  free(c);
  if (!d->closing) {
    flush(d);
    check_drained(d);
  }
}

static void on_retry(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  tally__job_t *j = c->jobs[0];
  d->calls--;
  if (reply == NULL || reply->type != REDIS_REPLY_INTEGER) {
    call_failed(d, r, c, JOB_RETRY, reply);
    return;
  }
  free(c);
  if (reply->integer <= 0) {
    d->stats.dropped++;
    tally_log(d->opt.log, TALLY_LOG_WARN, "job.dropped",
              "%s: not retried: another consumer has it now", j->id);
    job_done(d, j);
    return;
  }
  j->pj.deliveries = (uint32_t)reply->integer;
  if (d->draining) {
    queue_release(d, j);
    flush(d);
    return;
  }
  d->stats.retried++;
  j->pj.alone = true; /* a suspect: alone, so it harms no other job */
  j->state = JOB_POOL;
  tally_pool_submit(d->opt.pool, &j->pj);
}

static bool send_call(tally_dispatch_t *d, call_t *c, tally_redis_cb cb,
                      job_state_t state) {
  tally_call_t *k = &d->scratch;
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, cb, c, k->argc,
                          k->argv, k->argvlen) != 0) {
    requeue(d, c, state);
    free(c);
    return false;
  }
  d->calls++;
  return true;
}

/* The extra parts one post item carries, in *out: a result's full view,
 * which only a tokened submission's event needs (and Lua hashes every
 * byte of an argument), is withheld as "-" until the post script asks
 * for it; a token's is always sent. Returns NULL for none. */
static const tally_post_extra_t *post_extra(const tally__job_t *j,
                                            tally_post_extra_t *out) {
  if (!j->has_extra)
    return NULL;
  *out = j->extra;
  /* "-" is the marker, never a view: a worker's "-" is sent as none. */
  if (out->full_len == 1 && out->full[0] == '-')
    out->full_len = 0;
  if (out->full_len > 0 && !j->send_full && strcmp(j->kind, "result") == 0) {
    out->full = "-";
    out->full_len = 1;
  }
  return out;
}

/* The bytes one post item carries. */
static size_t post_bytes(const tally__job_t *j) {
  tally_post_extra_t x;
  const tally_post_extra_t *e = post_extra(j, &x);
  size_t n = j->body_len + j->token_len;
  if (e != NULL)
    n += e->summary_len + e->pub_len + e->full_len;
  return n;
}

/* A new, empty script call of d, or NULL when memory is short. */
static call_t *call_new(tally_dispatch_t *d) {
  call_t *c = malloc(sizeof(*c));
  if (c != NULL) {
    c->d = d;
    c->n = 0;
  }
  return c;
}

/* Takes the first job of a queue into call c, with the delivery count it
 * is sent with. */
static tally__job_t *call_take(call_t *c, tally__job_t **head,
                               tally__job_t **tail) {
  tally__job_t *j = dequeue(head, tail);
  j->state = JOB_CALL;
  c->jobs[c->n] = j;
  c->deliveries[c->n] = j->pj.deliveries;
  c->n++;
  return j;
}

static bool send_posts(tally_dispatch_t *d) {
  call_t *c = call_new(d);
  if (c == NULL)
    return false;
  tally_call_t *k = &d->scratch;
  tally_call_begin(k, TALLY_SCRIPT_POST, d->sha[TALLY_SCRIPT_POST],
                   d->opt.prefix, d->opt.consumer);
  size_t bytes = 0;
  while (d->post_q && c->n < POST_ITEMS &&
         (c->n == 0 || bytes + post_bytes(d->post_q) <= POST_BYTES)) {
    tally__job_t *j = call_take(c, &d->post_q, &d->post_tail);
    bytes += post_bytes(j);
    /* A token job posts its token; its submission's answer gives the
     * extra parts, when there is one. */
    bool token = strcmp(j->kind, "token") == 0;
    const char *body = token ? j->token : j->body;
    tally_post_extra_t x;
    tally_call_post(k, j->id, j->pj.deliveries, j->kind, body ? body : "",
                    token ? j->token_len : j->body_len, j->record,
                    post_extra(j, &x));
  }
  return send_call(d, c, on_post, JOB_POST);
}

static bool send_releases(tally_dispatch_t *d) {
  call_t *c = call_new(d);
  if (c == NULL)
    return false;
  tally_call_t *k = &d->scratch;
  tally_call_begin(k, TALLY_SCRIPT_RELEASE, d->sha[TALLY_SCRIPT_RELEASE],
                   d->opt.prefix, d->opt.consumer);
  while (d->release_q && c->n < POST_ITEMS) {
    tally__job_t *j = call_take(c, &d->release_q, &d->release_tail);
    tally_call_release(k, j->id, j->pj.deliveries);
  }
  return send_call(d, c, on_release, JOB_RELEASE);
}

static bool send_retry(tally_dispatch_t *d) {
  call_t *c = call_new(d);
  if (c == NULL)
    return false;
  tally__job_t *j = call_take(c, &d->retry_q, &d->retry_tail);
  tally_call_t *k = &d->scratch;
  tally_call_begin(k, TALLY_SCRIPT_RETRY, d->sha[TALLY_SCRIPT_RETRY],
                   d->opt.prefix, d->opt.consumer);
  tally_call_retry(k, j->id, j->pj.deliveries);
  return send_call(d, c, on_retry, JOB_RETRY);
}

/* The token flow: a token job's submission's job is fetched from its
 * record, scored again, and the token posted with that answer's summary
 * and full view. */

static void on_fetch(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  tally__job_t *j = c->jobs[0];
  d->calls--;
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
      reply->elements != 2) {
    call_failed(d, r, c, JOB_FETCH, reply);
    return;
  }
  free(c);
  const redisReply *job = reply->element[0], *entry = reply->element[1];
  free(j->entry);
  j->entry = entry->type == REDIS_REPLY_STRING ? strdup(entry->str) : NULL;
  if (job->type != REDIS_REPLY_STRING) {
    tally_log(d->opt.log, TALLY_LOG_DEBUG, "token.unscored",
              "%s: %s holds no job yet; the token is posted alone", j->id,
              j->record);
    j->kind = "token";
    j->has_extra = false;
    queue_post(d, j);
  } else {
    char *text = malloc(job->len + 1);
    if (text == NULL || (entry->type == REDIS_REPLY_STRING && !j->entry)) {
      /* Fetched again once memory allows. */
      free(text);
      queue_fetch(d, j);
      return;
    }
    memcpy(text, job->str, job->len);
    text[job->len] = '\0';
    free(j->text);
    j->text = text;
    j->pj.text = text;
    j->pj.len = job->len;
    if (d->drain_phase >= 1) {
      queue_release(d, j);
    } else {
      j->state = JOB_POOL;
      tally_pool_submit(d->opt.pool, &j->pj);
    }
  }
  if (!d->closing) {
    flush(d);
    check_drained(d);
  }
}

static bool send_fetch(tally_dispatch_t *d) {
  call_t *c = call_new(d);
  if (c == NULL)
    return false;
  tally__job_t *j = call_take(c, &d->fetch_q, &d->fetch_tail);
  const char *argv[] = {"HMGET", j->record, "job", "entry"};
  size_t lens[] = {5, strlen(j->record), 3, 5};
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_fetch, c, 4,
                          argv, lens) != 0) {
    requeue(d, c, JOB_FETCH);
    free(c);
    return false;
  }
  d->calls++;
  return true;
}

static void flush(tally_dispatch_t *d) {
  /* Once the pool closes, a token job can no longer be scored again: it
   * is handed back, for the next daemon to take from the start. */
  while (d->drain_phase >= 1 && d->fetch_q)
    queue_release(d, dequeue(&d->fetch_q, &d->fetch_tail));
  if (!d->ready || d->closing)
    return;
  while (d->calls < MAX_CALLS && d->post_q && send_posts(d))
    ;
  while (d->calls < MAX_CALLS && d->fetch_q && send_fetch(d))
    ;
  while (d->calls < MAX_CALLS && d->release_q && send_releases(d))
    ;
  while (d->calls < MAX_CALLS && d->retry_q && send_retry(d))
    ;
}

/* The record key of a result: "<prefix>:submission:<S>" when the result
 * names its submission, which the worker writes as its first member. */
static char *record_key(const tally_dispatch_t *d, const char *body,
                        size_t len) {
  static const char lead[] = "{\"submission\":";
  size_t n = sizeof(lead) - 1;
  if (len <= n || memcmp(body, lead, n) != 0)
    return NULL;
  const char *p = body + n, *end = body + len;
  const char *q = p;
  if (*q == '"') {
    for (q++; q < end && *q != '"'; q++)
      if (*q == '\\')
        q++;
    if (q >= end)
      return NULL;
    q++;
  } else {
    while (q < end && *q != ',' && *q != '}')
      q++;
  }
  cJSON *v = cJSON_ParseWithLength(p, (size_t)(q - p));
  char *key = NULL;
  if (cJSON_IsString(v) || cJSON_IsNumber(v)) {
    const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
    char num[64];
    if (s == NULL) {
      snprintf(num, sizeof(num), "%.*s", (int)(q - p), p);
      s = num;
    }
    size_t klen = strlen(d->opt.prefix) + strlen(s) + 13;
    key = malloc(klen);
    if (key)
      snprintf(key, klen, "%s:submission:%s", d->opt.prefix, s);
  }
  cJSON_Delete(v);
  return key;
}

/* Splits the worker's answer, len bytes in j->body, into its parts: the
 * result, the summary, the public view and the full view, one a line. An
 * answer with fewer parts is taken as a result alone. */
static void split_answer(tally__job_t *j, size_t len) {
  const char *part[4], *end = j->body + len;
  size_t n = 0;
  part[0] = j->body;
  while (n < 3) {
    const char *nl = memchr(part[n], '\n', (size_t)(end - part[n]));
    if (nl == NULL)
      break;
    part[++n] = nl + 1;
  }
  j->has_extra = n == 3;
  j->body_len = n > 0 ? (size_t)(part[1] - 1 - part[0]) : len;
  if (!j->has_extra)
    return;
  j->extra = (tally_post_extra_t){
      .summary = part[1],
      .summary_len = (size_t)(part[2] - 1 - part[1]),
      .pub = part[2],
      .pub_len = (size_t)(part[3] - 1 - part[2]),
      .full = part[3],
      .full_len = (size_t)(end - part[3]),
  };
}

/* Adds "entry" (the job entry the extra parts were scored from) to the
 * token j posts, so that the post script can tell whether the submission
 * still holds that job. Returns 0, or TALLY_ENOMEM with j unchanged. */
static int add_entry(tally__job_t *j) {
  static const char member[] = ",\"entry\":\"";
  size_t n = j->token_len, m = sizeof(member) - 1, e = strlen(j->entry);
  if (n == 0 || j->token[n - 1] != '}' || strstr(j->token, member) != NULL)
    return 0;
  char *t = malloc(n + m + e + 2);
  if (t == NULL)
    return TALLY_ENOMEM;
  memcpy(t, j->token, n - 1);
  memcpy(t + n - 1, member, m);
  memcpy(t + n - 1 + m, j->entry, e);
  memcpy(t + n - 1 + m + e, "\"}", 3);
  free(j->token);
  j->token = t;
  j->token_len = n + m + e + 1;
  return 0;
}

/* The error member of a job error body, and the unscored summary on its
 * second line, if any, in j->unscored. */
static void job_error_text(tally__job_t *j, const char *body, size_t len,
                           char *out, size_t outlen) {
  const char *nl = memchr(body, '\n', len);
  free(j->unscored);
  j->unscored = nl != NULL && nl + 1 < body + len
                    ? strndup(nl + 1, (size_t)(body + len - nl - 1))
                    : NULL;
  if (nl != NULL)
    len = (size_t)(nl - body);
  cJSON *v = cJSON_ParseWithLength(body, len);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "error");
  snprintf(out, outlen, "%s",
           cJSON_IsString(e) ? e->valuestring : "the job cannot be scored");
  cJSON_Delete(v);
}

void tally_dispatch_done(tally_pool_t *p, tally_pool_outcome_t *outcomes,
                         size_t n) {
  tally_dispatch_t *d = p->data;
  for (size_t i = 0; i < n; i++) {
    tally_pool_outcome_t *o = &outcomes[i];
    tally__job_t *j = o->job->data;
    char why[1024];
    switch (o->status) {
    case TALLY_POOL_SCORED:
      free(j->body);
      j->body = malloc(o->len + 1);
      j->has_extra = false;
      if (j->body == NULL) {
        /* Retried once memory allows, like a failure. */
        j->body_len = 0;
        j->state = JOB_RETRY;
        enqueue(&d->retry_q, &d->retry_tail, j);
        break;
      }
      memcpy(j->body, o->body, o->len);
      j->body[o->len] = '\0';
      split_answer(j, o->len);
      if (j->token != NULL) {
        /* A token job's submission, scored again: the token goes with its
         * summary and full view, never its public one, and names the job
         * entry they come from. */
        j->kind = "token";
        j->extra.pub = NULL;
        j->extra.pub_len = 0;
        if (j->entry != NULL && add_entry(j) != 0)
          j->has_extra = false; /* out of memory: the token goes alone */
      } else {
        j->kind = "result";
        free(j->record);
        j->record = record_key(d, o->body, o->len);
      }
      queue_post(d, j);
      break;
    case TALLY_POOL_TOKEN:
      if (j->token != NULL) {
        /* The submission's job is a token job itself: nothing to score. */
        j->kind = "token";
        j->has_extra = false;
        queue_post(d, j);
        break;
      }
      j->token = malloc(o->len + 1);
      if (j->token == NULL) {
        j->state = JOB_RETRY;
        enqueue(&d->retry_q, &d->retry_tail, j);
        break;
      }
      memcpy(j->token, o->body, o->len);
      j->token[o->len] = '\0';
      j->token_len = o->len;
      free(j->record);
      j->record = record_key(d, o->body, o->len);
      if (j->record == NULL)
        dead_letter(d, j, "the token names no submission");
      else
        queue_fetch(d, j);
      break;
    case TALLY_POOL_JOB_ERROR:
      job_error_text(j, o->body, o->len, why, sizeof(why));
      if (j->token != NULL) {
        /* The current config cannot score the submission's job: the token
         * goes alone. */
        tally_log(d->opt.log, TALLY_LOG_DEBUG, "token.unscorable",
                  "%s: %s cannot be scored again (%s); the token is posted "
                  "alone",
                  j->id, j->record, why);
        j->kind = "token";
        j->has_extra = false;
        queue_post(d, j);
        break;
      }
      dead_letter(d, j, "%s", why);
      break;
    case TALLY_POOL_FAILED:
      if (d->draining) {
        queue_release(d, j);
        break;
      }
      snprintf(why, sizeof(why), "%.*s", (int)o->len, o->body);
      if (j->pj.deliveries >= d->opt.max_deliveries) {
        dead_letter(d, j,
                    "the worker failed on each of %u deliveries; the last "
                    "time: %s",
                    (unsigned)j->pj.deliveries, why);
      } else {
        tally_log(d->opt.log, TALLY_LOG_WARN, "job.retry",
                  "%s: delivery %u failed: %s; retrying", j->id,
                  (unsigned)j->pj.deliveries, why);
        j->state = JOB_RETRY;
        enqueue(&d->retry_q, &d->retry_tail, j);
      }
      break;
    }
  }
  flush(d);
  check_drained(d);
}

/* Setting up the write connection: the group, the scripts, and a look at
 * the server's settings. */

enum {
  INIT_GROUP = -1,
  INIT_POLICY = -2,
  INIT_AOF = -3,
  INIT_SAVE = -4,
  INIT_LEASE = -5
};

/* Stops the dispatcher's user for good, once. */
static void fatal(tally_dispatch_t *d, const char *why) {
  if (d->fatal)
    return;
  d->fatal = true;
  tally_log(d->opt.log, TALLY_LOG_ERROR, "consumer", "%s", why);
  if (d->opt.fatal_cb != NULL)
    d->opt.fatal_cb(d, why);
}

/* A lease reply: true when this daemon may go on. */
static bool lease_reply(tally_dispatch_t *d, const redisReply *reply,
                        bool starting) {
  if (reply->type == REDIS_REPLY_INTEGER) {
    d->lease_waiting = 0;
    d->lease_next = uv_now(d->loop) + TALLY_LEASE_MS / 3;
    return true;
  }
  char why[768];
  snprintf(why, sizeof(why),
           "consumer %s is held by another tallyd (%s): each running tallyd "
           "needs its own --consumer",
           d->opt.consumer,
           reply->type == REDIS_REPLY_STRING ? reply->str : "?");
  if (!starting) {
    fatal(d, why);
    return false;
  }
  uint64_t now = uv_now(d->loop);
  if (d->lease_waiting == 0) {
    d->lease_waiting = now;
    tally_log(d->opt.log, TALLY_LOG_WARN, "consumer",
              "%s; waiting up to %d ms for the lease of a stopped one to "
              "expire",
              why, TALLY_LEASE_MS + 2000);
  } else if (now - d->lease_waiting > TALLY_LEASE_MS + 2000) {
    fatal(d, why);
  }
  return false;
}

static void init_step_done(tally_dispatch_t *d) {
  if (--d->init_left > 0)
    return;
  d->ready = true;
  d->warned = true;
  d->history_done = false;
  d->history_again = false;
  snprintf(d->history_cursor, sizeof(d->history_cursor), "0");
  tally_log(d->opt.log, TALLY_LOG_INFO, "redis.ready",
            "%s: group %s on %s, consumer %s", d->wr.addr.display, TALLY_GROUP,
            d->jobs_key, d->opt.consumer);
  if (d->opt.ready_cb != NULL)
    d->opt.ready_cb(d);
  pump(d);
  flush(d);
}

/* The value of a CONFIG GET reply, or NULL. */
static const char *config_value(const redisReply *reply) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING)
    return NULL;
  return reply->element[1]->str;
}

static void on_init(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  intptr_t step = (intptr_t)priv;
  if (reply == NULL || d->closing)
    return;
  if (step == INIT_LEASE) {
    if (reply->type == REDIS_REPLY_ERROR) {
      reply_error(d, r, "taking the consumer lease", reply);
      return;
    }
    if (!lease_reply(d, reply, true)) {
      /* Tried again after the backoff, until the lease is free or too
       * long has passed. */
      tally_redis_reset(r, "the consumer name is held by another tallyd");
      return;
    }
    init_step_done(d);
    return;
  }
  if (step <= INIT_POLICY) {
    /* CONFIG may be renamed or refused: then nothing is checked. */
    const char *v = config_value(reply);
    if (reply->type == REDIS_REPLY_ERROR)
      tally_log(d->opt.log, TALLY_LOG_INFO, "redis.config",
                "cannot check the server's settings: %s", reply->str);
    else if (step == INIT_POLICY && v && strcmp(v, "noeviction") != 0)
      tally_log(d->opt.log, TALLY_LOG_WARN, "redis.config",
                "maxmemory-policy is %s: under memory pressure Redis may "
                "evict jobs or results; set it to noeviction",
                v);
    else if (step == INIT_AOF && v && strcmp(v, "no") == 0)
      d->aof_off = true;
    else if (step == INIT_SAVE && v && v[0] == '\0' && d->aof_off)
      tally_log(d->opt.log, TALLY_LOG_WARN, "redis.config",
                "persistence is off (appendonly no, no save points): a "
                "Redis restart loses every job and result");
    init_step_done(d);
    return;
  }
  if (reply->type == REDIS_REPLY_ERROR &&
      !(step == INIT_GROUP && strstr(reply->str, "BUSYGROUP") != NULL)) {
    reply_error(d, r,
                step == INIT_GROUP ? "creating the consumer group"
                                   : "SCRIPT LOAD",
                reply);
    return;
  }
  if (step >= 0) {
    if (reply->type != REDIS_REPLY_STRING) {
      tally_redis_reset(r, "SCRIPT LOAD gave no digest");
      return;
    }
    snprintf(d->sha[step], sizeof(d->sha[step]), "%s", reply->str);
  }
  init_step_done(d);
}

static void init_command(tally_dispatch_t *d, intptr_t step, int argc,
                         const char **argv) {
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_init,
                          (void *)step, argc, argv, lens) == 0)
    d->init_left++;
}

static void on_wr_up(tally_redis_t *r) {
  tally_dispatch_t *d = r->data;
  d->init_left = 1; /* held until every command is sent */
  /* An existing group is left alone without a write, so that a server
   * out of memory (which refuses XGROUP CREATE before it finds the group)
   * still lets tallyd start. */
  const char *group[] = {"EVAL", tally_lua_group, "1", d->jobs_key, TALLY_GROUP};
  init_command(d, INIT_GROUP, 5, group);
  char ttl[24];
  snprintf(ttl, sizeof(ttl), "%d", TALLY_LEASE_MS);
  const char *lease[] = {"EVAL",       tally_lua_lease,   "1",
                         d->lease_key, d->lease_value, ttl};
  init_command(d, INIT_LEASE, 6, lease);
  for (intptr_t s = 0; s < TALLY_SCRIPT_COUNT; s++) {
    const char *load[] = {"SCRIPT", "LOAD", tally_scripts[s]};
    init_command(d, s, 3, load);
  }
  if (!d->warned) {
    const char *policy[] = {"CONFIG", "GET", "maxmemory-policy"};
    const char *aof[] = {"CONFIG", "GET", "appendonly"};
    const char *save[] = {"CONFIG", "GET", "save"};
    init_command(d, INIT_POLICY, 3, policy);
    init_command(d, INIT_AOF, 3, aof);
    init_command(d, INIT_SAVE, 3, save);
  }
  init_step_done(d);
}

static void on_wr_down(tally_redis_t *r, const char *why) {
  tally_dispatch_t *d = r->data;
  d->ready = false;
  d->history_done = false;
  tally_log(d->opt.log, TALLY_LOG_WARN, "redis.down",
            "write connection: %s; reconnecting", why);
}

static void on_redis_retry(tally_redis_t *r, const char *why,
                           uint64_t delay_ms) {
  tally_dispatch_t *d = r->data;
  /* The first retries say it at warn level, later ones at debug, so that
   * a long outage does not flood the log. */
  tally_log(d->opt.log,
            r->streak <= 3 || r->streak % 100 == 0 ? TALLY_LOG_WARN
                                                   : TALLY_LOG_DEBUG,
            "redis.retry", "%s connection: %s; trying again in %llu ms",
            r == &d->rd ? "read" : "write", why, (unsigned long long)delay_ms);
}

static void on_rd_up(tally_redis_t *r) {
  pump(r->data);
}

static void on_rd_down(tally_redis_t *r, const char *why) {
  tally_dispatch_t *d = r->data;
  /* A read whose reply was lost still delivered its entries to this
   * consumer: only a history re-read finds them. */
  if (d->history_busy) {
    d->history_again = true; /* it may have run before that read */
  } else {
    d->history_done = false;
    snprintf(d->history_cursor, sizeof(d->history_cursor), "0");
  }
  tally_log(d->opt.log, TALLY_LOG_WARN, "redis.down",
            "read connection: %s; reconnecting", why);
}

/* The timer: claims, a look at the counters, and the drain deadline. */

static void log_stats(tally_dispatch_t *d) {
  tally_dispatch_stats_t *s = &d->stats;
  if (memcmp(s, &d->last_stats, sizeof(*s)) == 0)
    return;
  d->last_stats = *s;
  tally_log(d->opt.log, TALLY_LOG_INFO, "stats",
            "read %llu, scored %llu, tokens %llu, stale %llu, dead %llu, "
            "dropped %llu, retried %llu, claimed %llu, released %llu; in "
            "flight %zu",
            (unsigned long long)s->read, (unsigned long long)s->scored,
            (unsigned long long)s->tokens, (unsigned long long)s->stale,
            (unsigned long long)s->dead, (unsigned long long)s->dropped,
            (unsigned long long)s->retried, (unsigned long long)s->claimed,
            (unsigned long long)s->released, d->njobs);
}

static void on_lease(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  (void)priv;
  d->lease_busy = false;
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    reply_error(d, r, "refreshing the consumer lease", reply);
    return;
  }
  lease_reply(d, reply, false);
}

static void refresh_lease(tally_dispatch_t *d) {
  if (!d->ready || d->lease_busy || d->closing || d->fatal ||
      uv_now(d->loop) < d->lease_next)
    return;
  char ttl[24];
  snprintf(ttl, sizeof(ttl), "%d", TALLY_LEASE_MS);
  const char *eval[] = {"EVAL",       tally_lua_lease,   "1",
                        d->lease_key, d->lease_value, ttl};
  size_t lens[6];
  for (int i = 0; i < 6; i++)
    lens[i] = strlen(eval[i]);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_lease, NULL, 6,
                          eval, lens) == 0)
    d->lease_busy = true;
}

static void on_tick(uv_timer_t *t) {
  tally_dispatch_t *d = t->data;
  uint64_t now = uv_now(d->loop);
  refresh_lease(d);
  if (now >= d->next_stats) {
    d->next_stats = now + STATS_EVERY_MS;
    log_stats(d);
  }
  pump(d);
  flush(d);
  check_drained(d);
}

int tally_dispatch_init(uv_loop_t *loop, tally_dispatch_t *d,
                        const tally_dispatch_options_t *opt, char *err,
                        size_t errlen) {
  memset(d, 0, sizeof(*d));
  d->loop = loop;
  d->opt = *opt;
  d->opt.url = strdup(opt->url);
  d->opt.prefix = strdup(opt->prefix);
  d->opt.consumer = strdup(opt->consumer);
  if (d->opt.max_inflight == 0)
    d->opt.max_inflight = 64;
  if (d->opt.command_timeout_ms == 0)
    d->opt.command_timeout_ms = 5000;
  if (d->opt.block_ms == 0)
    d->opt.block_ms = 1000;
  int rc = TALLY_ENOMEM;
  if (d->opt.url == NULL || d->opt.prefix == NULL || d->opt.consumer == NULL ||
      table_grow(d) != 0) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  snprintf(d->jobs_key, sizeof(d->jobs_key), "%s:jobs", d->opt.prefix);
  snprintf(d->lease_key, sizeof(d->lease_key), "%s:consumer:%s", d->opt.prefix,
           d->opt.consumer);
  char host[128] = "?";
  gethostname(host, sizeof(host) - 1);
  snprintf(d->lease_value, sizeof(d->lease_value), "%.100s:%d:%llu", host,
           (int)getpid(), (unsigned long long)uv_hrtime());
  snprintf(d->claim_cursor, sizeof(d->claim_cursor), "-");
  /* Both connections parse the same URL, so once the first is set up
   * the second cannot fail but for memory, which is not worth a handle
   * dance: both are set up before the first handle is made. */
  tally_redis_url_t u;
  rc = tally_redis_url_parse(&u, d->opt.url, err, errlen);
  if (rc != 0)
    goto fail;
  tally_redis_url_free(&u);
  rc = tally_redis_init(loop, &d->rd, d->opt.url, err, errlen);
  if (rc == 0)
    rc = tally_redis_init(loop, &d->wr, d->opt.url, err, errlen);
  if (rc != 0)
    abort(); /* out of memory with a timer handle open */
  d->rd.data = d->wr.data = d;
  d->rd.on_up = on_rd_up;
  d->rd.on_down = on_rd_down;
  d->wr.on_up = on_wr_up;
  d->wr.on_down = on_wr_down;
  d->rd.on_retry = d->wr.on_retry = on_redis_retry;
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
  return 0;
fail:
  free((char *)d->opt.url);
  free((char *)d->opt.prefix);
  free((char *)d->opt.consumer);
  free(d->table);
  return rc;
}

void tally_dispatch_start(tally_dispatch_t *d) {
  tally_redis_start(&d->wr);
  tally_redis_start(&d->rd);
  uv_timer_start(&d->timer, on_tick, TICK_MS, TICK_MS);
}

/* Draining: stop reading, post what the workers finish, hand back the
 * rest, close the pool, wait for the last replies. */

static void on_pool_closed(tally_pool_t *p) {
  tally_dispatch_t *d = p->data;
  d->drain_phase = 2;
  d->drain_deadline = uv_now(d->loop) + d->opt.command_timeout_ms;
  flush(d);
  check_drained(d);
}

/* Ends the drain. */
static void drained(tally_dispatch_t *d) {
  void (*cb)(tally_dispatch_t *) = d->drained_cb;
  d->drained_cb = NULL;
  if (cb != NULL)
    cb(d);
}

static void on_lease_released(tally_redis_t *r, redisReply *reply, void *priv) {
  (void)reply;
  (void)priv;
  drained(r->data);
}

static void check_drained(tally_dispatch_t *d) {
  if (!d->draining || d->closing || d->drained_cb == NULL)
    return;
  uint64_t now = uv_now(d->loop);
  bool late = now >= d->drain_deadline;
  if (d->drain_phase == 0) {
    if (!late && (d->njobs > 0 || d->reading))
      return;
    if (late && d->njobs > 0)
      tally_log(d->opt.log, TALLY_LOG_WARN, "drain.late",
                "%zu jobs unfinished at the drain deadline: handing them "
                "back",
                d->njobs);
    d->drain_phase = 1;
    tally_pool_close(d->opt.pool, late ? 0 : 1000, on_pool_closed);
    return;
  }
  if (d->drain_phase == 1 || d->drain_phase == 3)
    return; /* until on_pool_closed, or the lease is released */
  if (!late && (d->njobs > 0 || d->calls > 0))
    return;
  if (d->njobs > 0)
    tally_log(d->opt.log, TALLY_LOG_WARN, "drain.left",
              "%zu jobs could not be handed back (the write connection is "
              "not usable: %s): they stay pending for this consumer's next "
              "start or another daemon's claim",
              d->njobs, d->wr.why[0] ? d->wr.why : "no reply in time");
  d->drain_phase = 3;
  log_stats(d);
  /* The lease goes last, once nothing of this consumer's is in flight;
   * without a connection it simply expires. */
  const char *argv[] = {"EVAL", tally_lua_lease_release, "1", d->lease_key,
                        d->lease_value};
  size_t lens[5];
  for (int i = 0; i < 5; i++)
    lens[i] = strlen(argv[i]);
  if (d->fatal || !d->ready ||
      tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_lease_released,
                          NULL, 5, argv, lens) != 0)
    drained(d);
}

void tally_dispatch_drain(tally_dispatch_t *d, uint64_t timeout_ms,
                          void (*drained_cb)(tally_dispatch_t *d)) {
  if (d->draining)
    return;
  d->draining = true;
  d->drained_cb = drained_cb;
  d->drain_deadline = uv_now(d->loop) + timeout_ms;
  tally_log(d->opt.log, TALLY_LOG_INFO, "drain",
            "stopped reading; %zu jobs in flight, %llu ms to finish them",
            d->njobs, (unsigned long long)timeout_ms);
  tally_pool_release_queued(d->opt.pool);
  flush(d);
  check_drained(d);
}

static void on_closed_part(tally_dispatch_t *d) {
  if (--d->closing_conns > 0)
    return;
  free((char *)d->opt.url);
  free((char *)d->opt.prefix);
  free((char *)d->opt.consumer);
  free(d->table);
  d->table = NULL;
  if (d->close_cb)
    d->close_cb(d);
}

static void on_redis_closed(tally_redis_t *r) {
  on_closed_part(r->data);
}

static void on_timer_closed(uv_handle_t *h) {
  on_closed_part(h->data);
}

void tally_dispatch_close(tally_dispatch_t *d,
                          void (*close_cb)(tally_dispatch_t *d)) {
  d->closing = true;
  d->close_cb = close_cb;
  d->closing_conns = 3;
  tally_redis_close(&d->rd, on_redis_closed);
  tally_redis_close(&d->wr, on_redis_closed);
  /* The calls in flight have failed by now, so every job is in the table
   * and nowhere else; the pool is closed before the dispatcher. */
  for (size_t i = 0; i < d->table_size; i++)
    while (d->table[i])
      job_free(d, d->table[i]);
  uv_close((uv_handle_t *)&d->timer, on_timer_closed);
}
