/* The dispatcher posting: results and dead letters, retries, releases,
 * the token flow, and the workers' answers that feed them. */
#include "config/error.h"
#include "daemon/dispatch_int.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
  tally__requeue(d, c, state);
  free(c);
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    if (!tally__is_oom(reply))
      d->stats.script_errors++;
    tally__reply_error(d, r, what, reply);
  } else {
    char why[128];
    snprintf(why, sizeof(why), "%s gave an unexpected reply", what);
    tally_redis_reset(r, why);
  }
}

static void count_posted(tally_dispatch_t *d, const tally__job_t *j) {
  /* The entry's ID is the time Redis added it, in ms (unless the platform
   * chose IDs of its own). */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  double now = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
  tally_hist_observe(&d->latency, (now - strtod(j->id, NULL)) / 1e3);
  if (strcmp(j->kind, "dead") == 0)
    d->stats.dead++;
  else if (strcmp(j->kind, "token") == 0)
    d->stats.tokens++;
  else
    d->stats.scored++;
}

static void posted(tally_dispatch_t *d, call_t *c);

/* WAIT's answer after a post: with the replicas asked for, the post is
 * done; with fewer, its jobs are posted again (the script finds them
 * posted, unless a failover lost the post), and WAITed for again. */
static void on_wait(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  d->calls--;
  if (reply == NULL || reply->type != REDIS_REPLY_INTEGER) {
    call_failed(d, r, c, JOB_POST, reply);
    return;
  }
  if (reply->integer >= (long long)d->opt.wait_replicas) {
    posted(d, c);
    return;
  }
  d->stats.wait_short++;
  tally_log(d->opt.log, TALLY_LOG_WARN, "post.wait",
            "a post of %u jobs reached %lld of %u replicas within %d ms: "
            "posting them again",
            c->n, reply->integer, d->opt.wait_replicas, TALLY_WAIT_MS);
  /* As a post without a reply: its jobs go again, marked resent. */
  call_failed(d, r, c, JOB_POST, NULL);
  if (!d->closing)
    tally__flush(d);
}

static void on_post(tally_redis_t *r, redisReply *reply, void *priv) {
  call_t *c = priv;
  tally_dispatch_t *d = c->d;
  d->calls--;
  /* With bodies, EXEC's reply: the bodies' OKs, then the script's (or its
   * error). Anything else is passed on whole, to be reported. */
  if (c->nbodies > 0 && reply != NULL && reply->type == REDIS_REPLY_ARRAY) {
    if (reply->elements != c->nbodies + 1) {
      call_failed(d, r, c, JOB_POST, reply);
      return;
    }
    reply = reply->element[c->nbodies];
  }
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
      reply->elements != 2 * (size_t)c->n) {
    call_failed(d, r, c, JOB_POST, reply);
    return;
  }
  tally_redis_healthy(r);
  tally__room_again(d);
  d->stats.posts++;
  d->stats.post_items += c->n;
  for (unsigned i = 0; i < c->n; i++)
    c->codes[i] = reply->element[i]->integer;
  tally__learn_places(d, c, reply);
  if (d->opt.wait_replicas == 0) {
    posted(d, c);
    return;
  }
  char n[16], ms[16];
  snprintf(n, sizeof(n), "%u", d->opt.wait_replicas);
  snprintf(ms, sizeof(ms), "%d", TALLY_WAIT_MS);
  const char *argv[] = {"WAIT", n, ms};
  size_t lens[] = {4, strlen(n), strlen(ms)};
  if (tally_redis_command(r, d->opt.command_timeout_ms + TALLY_WAIT_MS, on_wait,
                          c, 3, argv, lens) != 0) {
    call_failed(d, r, c, JOB_POST, NULL);
    return;
  }
  d->calls++;
}

/* What a post's script said of each job, once the post is done. */
static void posted(tally_dispatch_t *d, call_t *c) {
  bool stale = false;
  for (unsigned i = 0; i < c->n; i++) {
    tally__job_t *j = c->jobs[i];
    long long code = c->codes[i];
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
      tally__queue_post(d, j);
      continue;
    } else if (code == TALLY_POST_REDELIVERED &&
               j->pj.deliveries != c->deliveries[i]) {
      /* Re-read from this consumer's history meanwhile: post again with
       * the count the re-read gave. */
      tally__queue_post(d, j);
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
    tally__job_free(d, j);
  }
  free(c);
  if (stale && !d->closing && d->opt.stale_cb != NULL)
    d->opt.stale_cb(d);
  if (!d->closing) {
    tally__flush(d);
    tally__pump(d);
    tally__check_drained(d);
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
    tally__job_free(d, c->jobs[i]);
  }
  free(c);
  if (!d->closing) {
    tally__flush(d);
    tally__check_drained(d);
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
    tally__job_done(d, j);
    return;
  }
  j->pj.deliveries = (uint32_t)reply->integer;
  if (d->draining) {
    tally__queue_release(d, j);
    tally__flush(d);
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
    tally__requeue(d, c, state);
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
static tally_post_extra_t *post_extra(const tally__job_t *j,
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
    c->nbodies = 0;
  }
  return c;
}

/* Takes the first job of a queue into call c, with the delivery count it
 * is sent with. */
static tally__job_t *call_take(call_t *c, tally__job_t **head,
                               tally__job_t **tail) {
  tally__job_t *j = tally__dequeue(head, tail);
  j->state = JOB_CALL;
  c->jobs[c->n] = j;
  c->deliveries[c->n] = j->pj.deliveries;
  c->n++;
  return j;
}

/* Sets up body command i of the post call being sent: SET key bytes under
 * the key of what (tally_result_key), with an expiry when streams are
 * trimmed by age. Returns the key's length (the prefix and the consumer
 * are short enough that it always fits). */
static size_t add_body(tally_dispatch_t *d, unsigned i, const tally__job_t *j,
                       const char *what, const char *body, size_t len) {
  char *key = d->bodies.keys[i];
  size_t klen = tally_result_key(key, TALLY_RESULT_KEY_MAX, d->opt.prefix, what,
                                 j->id, j->pj.deliveries, d->opt.consumer);
  const char **argv = d->bodies.argv[i];
  size_t *lens = d->bodies.lens[i];
  int n = 0;
  argv[n] = "SET", lens[n++] = 3;
  argv[n] = key, lens[n++] = klen;
  argv[n] = body, lens[n++] = len;
  if (d->opt.retain_age_ms > 0) {
    snprintf(d->bodies.ttl, sizeof(d->bodies.ttl), "%llu",
             (unsigned long long)(d->opt.retain_age_ms + TALLY_BODY_GRACE_MS));
    argv[n] = "PX", lens[n++] = 2;
    argv[n] = d->bodies.ttl, lens[n++] = strlen(d->bodies.ttl);
  }
  d->bodies.argc[i] = n;
  return klen;
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
    size_t body_len = token ? j->token_len : j->body_len;
    if (strcmp(j->kind, "result") == 0) {
      /* The body goes to its own key before the script, which sees only
       * the key. */
      body_len =
          add_body(d, c->nbodies++, j, "result", body ? body : "", body_len);
      body = d->bodies.keys[c->nbodies - 1];
    }
    tally_post_extra_t x;
    tally_post_extra_t *e = post_extra(j, &x);
    /* So do large views (a dead letter's, never shown, are not sent). */
    if (e != NULL && strcmp(j->kind, "dead") == 0)
      e->pub_len = e->full_len = 0;
    if (e != NULL && e->pub_len > TALLY_VIEW_INLINE_MAX) {
      e->pub_len = add_body(d, c->nbodies++, j, "view", e->pub, e->pub_len);
      e->pub = d->bodies.keys[c->nbodies - 1];
    }
    if (e != NULL && e->full_len > TALLY_VIEW_INLINE_MAX) {
      e->full_len =
          add_body(d, c->nbodies++, j, "fullview", e->full, e->full_len);
      e->full = d->bodies.keys[c->nbodies - 1];
    }
    const tally_post_pre_t *pre =
        strcmp(j->kind, "result") == 0 ? tally__precompute(d, j, e) : NULL;
    tally_call_post_pre(k, j->id, j->pj.deliveries, j->kind, body ? body : "",
                        body_len, j->record, e, pre);
  }
  /* MULTI, the bodies and views, the script, EXEC. */
  unsigned n = c->nbodies;
  d->bodies.argc[n] = k->argc;
  const char *const *argv[3 * POST_ITEMS + 1];
  const size_t *lens[3 * POST_ITEMS + 1];
  for (unsigned i = 0; i <= n; i++) {
    argv[i] = i < n ? d->bodies.argv[i] : k->argv;
    lens[i] = i < n ? d->bodies.lens[i] : k->argvlen;
  }
  if (n == 0)
    return send_call(d, c, on_post, JOB_POST);
  if (tally_redis_transaction(&d->wr, d->opt.command_timeout_ms, on_post, c,
                              n + 1, d->bodies.argc, argv, lens) != 0) {
    tally__requeue(d, c, JOB_POST);
    free(c);
    return false;
  }
  d->calls++;
  return true;
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
    tally__queue_post(d, j);
  } else {
    char *text = malloc(job->len + 1);
    if (text == NULL || (entry->type == REDIS_REPLY_STRING && !j->entry)) {
      /* Fetched again once memory allows. */
      free(text);
      tally__queue_fetch(d, j);
      return;
    }
    memcpy(text, job->str, job->len);
    text[job->len] = '\0';
    free(j->text);
    j->text = text;
    j->pj.text = text;
    j->pj.len = job->len;
    if (d->drain_phase >= 1) {
      tally__queue_release(d, j);
    } else {
      j->state = JOB_POOL;
      tally_pool_submit(d->opt.pool, &j->pj);
    }
  }
  if (!d->closing) {
    tally__flush(d);
    tally__check_drained(d);
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
    tally__requeue(d, c, JOB_FETCH);
    free(c);
    return false;
  }
  d->calls++;
  return true;
}

void tally__flush(tally_dispatch_t *d) {
  /* Once the pool closes, a token job can no longer be scored again: it
   * is handed back, for the next daemon to take from the start. */
  while (d->drain_phase >= 1 && d->fetch_q)
    tally__queue_release(d, tally__dequeue(&d->fetch_q, &d->fetch_tail));
  if (!d->ready || d->closing || tally__full(d))
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
  tally_dispatch_group_t *g = p->data;
  for (size_t i = 0; i < n; i++) {
    tally_pool_outcome_t *o = &outcomes[i];
    tally__job_t *j = o->job->data;
    tally_dispatch_t *d = j->d;
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
        tally__enqueue(&d->retry_q, &d->retry_tail, j);
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
      tally__queue_post(d, j);
      break;
    case TALLY_POOL_TOKEN:
      if (j->token != NULL) {
        /* The submission's job is a token job itself: nothing to score. */
        j->kind = "token";
        j->has_extra = false;
        tally__queue_post(d, j);
        break;
      }
      j->token = malloc(o->len + 1);
      if (j->token == NULL) {
        j->state = JOB_RETRY;
        tally__enqueue(&d->retry_q, &d->retry_tail, j);
        break;
      }
      memcpy(j->token, o->body, o->len);
      j->token[o->len] = '\0';
      j->token_len = o->len;
      free(j->record);
      j->record = record_key(d, o->body, o->len);
      if (j->record == NULL)
        tally__dead_letter(d, j, "the token names no submission");
      else
        tally__queue_fetch(d, j);
      break;
    case TALLY_POOL_JUDGE:
      /* A sample without its verdict (for a token job, its submission's
       * job): the kept verdict, or the judge's, then scored again. */
      if (d->draining)
        tally__queue_release(d, j);
      else
        tally__judge(d, j, o->body, o->len);
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
        tally__queue_post(d, j);
        break;
      }
      tally__dead_letter(d, j, "%s", why);
      break;
    case TALLY_POOL_FAILED:
      if (d->draining) {
        tally__queue_release(d, j);
        break;
      }
      snprintf(why, sizeof(why), "%.*s", (int)o->len, o->body);
      if (j->pj.deliveries >= d->opt.max_deliveries) {
        tally__dead_letter(
            d, j,
            "the worker failed on each of %u deliveries; the last "
            "time: %s",
            (unsigned)j->pj.deliveries, why);
      } else {
        tally_log(d->opt.log, TALLY_LOG_WARN, "job.retry",
                  "%s: delivery %u failed: %s; retrying", j->id,
                  (unsigned)j->pj.deliveries, why);
        j->state = JOB_RETRY;
        tally__enqueue(&d->retry_q, &d->retry_tail, j);
      }
      break;
    }
  }
  for (size_t k = 0; k < g->n; k++) {
    tally__flush(g->members[k]);
    tally__check_drained(g->members[k]);
  }
}
