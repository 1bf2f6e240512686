/* The dispatcher taking entries in: new ones, its own history after
 * each (re)connect, and claims of entries other consumers left idle. */
#include "config/error.h"
#include "daemon/dispatch_int.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Taking entries in. */

/* Takes one entry read from the stream: new, re-read from this consumer's
 * history, or claimed. text is NULL when the entry was deleted (len 0) or
 * has no job field (len 1). */
void tally__take(tally_dispatch_t *d, const char *id, size_t id_len,
                 uint32_t deliveries, const char *text, size_t len) {
  if (id_len == 0 || id_len > TALLY_BATCH_ID_MAX)
    return;
  char key[TALLY_BATCH_ID_MAX + 1];
  memcpy(key, id, id_len);
  key[id_len] = '\0';
  tally__job_t **s = tally__slot(d, key);
  if (*s != NULL) {
    /* Already here, from before a reconnect: the re-read counted one more
     * delivery, which the post must now carry. */
    if (deliveries > (*s)->pj.deliveries)
      (*s)->pj.deliveries = deliveries;
    return;
  }
  if (d->njobs + 1 > d->table_size && tally__table_grow(d) == 0)
    s = tally__slot(d, key);
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
  j->pj.queue = d->opt.queue;
  j->pj.queue_len = strlen(d->opt.queue);
  j->d = d;
  j->state = JOB_NEW;
  *s = j;
  d->njobs++;
  d->stats.read++;

  if (text == NULL && len == 0)
    tally__dead_letter(d, j,
                       "the job entry was deleted from the stream while "
                       "pending");
  else if (text == NULL)
    tally__dead_letter(d, j, "the stream entry has no \"job\" field");
  else if (!keep)
    tally__dead_letter(d, j,
                       "the job is %zu bytes, more than --max-job-bytes %llu",
                       len, (unsigned long long)d->opt.max_job_bytes);
  else if (deliveries > d->opt.max_deliveries)
    tally__dead_letter(
        d, j,
        "delivered %u times, more than --max-deliveries %u: each "
        "daemon that took it stopped before posting",
        (unsigned)deliveries, d->opt.max_deliveries);
  else if (d->draining)
    tally__queue_release(d, j);
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
    tally__take(d, id->str, id->len, (uint32_t)dl->integer,
                job->type == REDIS_REPLY_STRING ? job->str : NULL,
                job->type == REDIS_REPLY_STRING ? job->len : 0);
  }
  return n;
}

/* Error replies that mean the server or the group must be set up again:
 * the connection is reset and, after a backoff, initialised again. */
/* How often tallyd says that Redis is full, and its longest backoff. */
#define FULL_SAY_EVERY_MS 10000
#define FULL_BACKOFF_MAX_MS 5000

bool tally__full(tally_dispatch_t *d) {
  return d->full_until > uv_now(d->loop);
}

void tally__room_again(tally_dispatch_t *d) {
  if (d->full_since == 0)
    return;
  tally_log(d->opt.log, TALLY_LOG_INFO, "redis.full.over",
            "Redis has room again: %llu writes were refused over %llu ms, "
            "and are done now",
            (unsigned long long)d->full_refusals,
            (unsigned long long)(uv_now(d->loop) - d->full_since));
  d->full_since = d->full_until = d->full_backoff = d->full_logged = 0;
  d->full_refusals = 0;
}

/* An OOM reply: Redis is at maxmemory and evicts nothing. What was
 * refused is queued again already; nothing is sent for a backoff that
 * doubles to 5 s, the connection stays, and the log says so once every
 * 10 s. */
static void redis_full(tally_dispatch_t *d, const char *what,
                       const redisReply *reply) {
  uint64_t now = uv_now(d->loop);
  if (d->full_since == 0) {
    d->full_since = now;
    d->full_backoff = 250;
  } else if (d->full_backoff < FULL_BACKOFF_MAX_MS) {
    d->full_backoff *= 2;
  }
  if (d->full_backoff > FULL_BACKOFF_MAX_MS)
    d->full_backoff = FULL_BACKOFF_MAX_MS;
  d->full_until = now + d->full_backoff;
  d->full_refusals++;
  if (d->full_logged != 0 && now - d->full_logged < FULL_SAY_EVERY_MS)
    return;
  d->full_logged = now;
  tally_log(d->opt.log, TALLY_LOG_WARN, "redis.full",
            "Redis is full (maxmemory reached and nothing may be evicted): "
            "%s was refused (%.200s); %llu writes refused in %llu ms; the "
            "jobs stay pending and are tried again every %llu ms until "
            "memory is freed (trim streams, raise maxmemory)",
            what, reply->str, (unsigned long long)d->full_refusals,
            (unsigned long long)(now - d->full_since),
            (unsigned long long)d->full_backoff);
}

bool tally__is_oom(const redisReply *reply) {
  return reply->type == REDIS_REPLY_ERROR &&
         (strncmp(reply->str, "OOM", 3) == 0 || strstr(reply->str, " OOM ") ||
          strstr(reply->str, "-OOM "));
}

void tally__reply_error(tally_dispatch_t *d, tally_redis_t *r, const char *what,
                        const redisReply *reply) {
  if (tally__is_oom(reply)) {
    d->stats.oom_refusals++;
    redis_full(d, what, reply);
    return;
  }
  char why[512];
  snprintf(why, sizeof(why), "%s failed: %s", what, reply->str);
  /* tallyd's own server loading its data as it starts is no fault. */
  bool loading = d->opt.embedded && !d->ever_ready &&
                 strncmp(reply->str, "LOADING", 7) == 0;
  tally_log(d->opt.log, loading ? TALLY_LOG_DEBUG : TALLY_LOG_WARN,
            "redis.error", "%s", why);
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
    tally__reply_error(d, r, "XREADGROUP", reply);
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
        tally__take(d, id->str, id->len, 1, NULL, 0);
      } else if (job == NULL || job->type != REDIS_REPLY_STRING) {
        tally__take(d, id->str, id->len, 1, NULL, 1);
      } else {
        tally__take(d, id->str, id->len, 1, job->str, job->len);
      }
    }
  }
  tally__flush(d);
  tally__pump(d);
  tally__check_drained(d);
}

static void read_more(tally_dispatch_t *d) {
  if (!d->ready || !d->history_done || d->reading || d->draining ||
      d->closing || d->rd.state != TALLY_REDIS_UP)
    return;
  size_t n = tally__room(d);
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
    tally__reply_error(d, r, "the history script", reply);
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
  tally__flush(d);
  tally__pump(d);
}

static void history_next(tally_dispatch_t *d) {
  if (!d->ready || d->history_done || d->history_busy || d->closing)
    return;
  size_t n = tally__room(d);
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
    tally__reply_error(d, r, "the claim script", reply);
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
  tally__flush(d);
  tally__pump(d);
}

void tally__claim(tally_dispatch_t *d) {
  if (!d->ready || !d->history_done || d->claiming || d->draining ||
      d->closing || uv_now(d->loop) < d->next_claim)
    return;
  size_t n = tally__room(d);
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
void tally__pump(tally_dispatch_t *d) {
  if (tally__full(d))
    return;
  history_next(d);
  read_more(d);
  tally__claim(d);
}
