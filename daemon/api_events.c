/* The results API's event streams (docs/scoreboard.md#events): one
 * connection follows <p>:public for every stream, a stream that resumes
 * catches up on a connection of its own, a frozen board's events are
 * computed again from before the freeze, and the streams together are
 * held to their memory budget, the slowest ended first. The keep-alive
 * timer also settles each contest's freeze. */
#include "daemon/api.h"
#include "daemon/api_int.h"
#include "daemon/ccs_int.h"
#include "daemon/rws.h"

#include "config/error.h"
#include "contest/frozen.h"
#include "engine/engine.h"
#include "redis/keys.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SSE_BATCH 500
#define SSE_BLOCK_MS "1000"
#define SSE_PACE_MS 50
#define SSE_RETRY_MS 250          /* after an error reply to the tail's read */
#define SSE_BUFFER_MAX (4u << 20) /* a client this far behind is dropped */
#define SSE_BUFFER_MAX_TEXT "4 MiB"
#define SSE_BUDGET_DEFAULT (256ull << 20)
#define SSE_EVENT_BYTES 256 /* about what one event takes in a stream */

struct tally_sse_s {
  tally_http_stream_t stream;
  tally_api_t *a;
  tally_api_tail_t *t; /* the tail of its contest's queue */
  char contest[256];
  unsigned long long at_ms, at_seq; /* the last entry given or skipped */
  bool live;                        /* caught up: the tail feeds it */
  bool waiting;       /* for the tail's first read: where the stream ends */
  char from[48];      /* while waiting: its Last-Event-ID, or "" */
  bool catching;      /* an XRANGE of its own in flight */
  bool gone;          /* its connection closed (freed once nothing waits) */
  bool ended;         /* no more: end the response */
  bool dropped;       /* ended for falling behind: what comes is discarded */
  tally_buf_t buf;    /* bytes not yet pulled */
  size_t sent;        /* of buf, already pulled */
  size_t counted;     /* of buf's memory, in a->sse_bytes */
  uint64_t caught_up; /* when its client last had all (the loop's ms) */
  bool was_behind;    /* it had bytes unsent when the last batch came */
  tally_sse_t *prev, *next;
};

static void sse_account(tally_sse_t *e);
static uint64_t sse_budget(const tally_api_t *a);
static void sse_flush(tally_sse_t *e);

/* Parses a stream ID into (ms, seq); false when it is not one. */
static bool parse_id(const char *id, unsigned long long *ms,
                     unsigned long long *seq) {
  char *end;
  if (id[0] < '0' || id[0] > '9')
    return false;
  *ms = strtoull(id, &end, 10);
  if (*end != '-' || end[1] < '0' || end[1] > '9')
    return false;
  *seq = strtoull(end + 1, &end, 10);
  return *end == '\0';
}

/* Whether e's last entry is before id. */
static bool at_before(const tally_sse_t *e, const char *id) {
  unsigned long long ms, seq;
  if (!parse_id(id, &ms, &seq))
    return false;
  return e->at_ms < ms || (e->at_ms == ms && e->at_seq < seq);
}

/* Brings a->sse_bytes up to date with e's buffer's memory. */
static void sse_account(tally_sse_t *e) {
  size_t now = e->buf.cap;
  if (now >= e->counted)
    __atomic_add_fetch(&e->a->sse_bytes, now - e->counted, __ATOMIC_RELAXED);
  else
    __atomic_sub_fetch(&e->a->sse_bytes, e->counted - now, __ATOMIC_RELAXED);
  e->counted = now;
}

static void sse_free(tally_sse_t *e) {
  tally_buf_close(&e->buf);
  sse_account(e);
  free(e);
}

static void sse_unlink(tally_sse_t *e) {
  tally_api_t *a = e->a;
  if (e->prev != NULL)
    e->prev->next = e->next;
  else if (a->sses == e)
    a->sses = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  e->prev = e->next = NULL;
  __atomic_sub_fetch(&a->nsses, 1, __ATOMIC_RELAXED);
}

static size_t sse_pull(tally_http_stream_t *s, char *buf, size_t max,
                       bool *end) {
  tally_sse_t *e = s->data;
  size_t left = e->buf.len - e->sent;
  if (left == 0) {
    e->caught_up = uv_now(e->a->loop);
    /* All sent: the buffer is given back, so that what the streams hold
     * is what their clients have yet to read (a malloc a batch for each
     * stream costs less than the writes it feeds). */
    tally_buf_close(&e->buf);
    e->sent = 0;
    sse_account(e);
    *end = e->ended;
    return 0;
  }
  size_t n = left < max ? left : max;
  memcpy(buf, e->buf.data + e->sent, n);
  e->sent += n;
  return n;
}

static void sse_closed(tally_http_stream_t *s) {
  tally_sse_t *e = s->data;
  e->gone = true;
  sse_unlink(e);
  if (!e->catching)
    sse_free(e);
}

/* The contest an event names, into num if it is a number; NULL when
 * it names none. */
const char *tally__api_event_contest(const cJSON *ev, char num[32]) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(ev, "contest");
  if (cJSON_IsString(c))
    return c->valuestring;
  if (cJSON_IsNumber(c)) {
    snprintf(num, 32, "%.0f", c->valuedouble);
    return num;
  }
  return NULL;
}

/* A score event's text: participant who's public task score in task. */
static void score_text(tally_buf_t *b, const char *id, const cJSON *who,
                       const cJSON *task, double score, bool partial) {
  tally_buf_puts(b, "id: ");
  tally_buf_puts(b, id);
  tally_buf_puts(b, "\nevent: score\ndata: {\"participant\":");
  tally_json_value(b, who);
  tally_buf_puts(b, ",\"task\":");
  tally_json_value(b, task);
  tally_buf_puts(b, ",\"score\":");
  tally_json_num(b, score);
  tally_buf_puts(b, ",\"partial\":");
  tally_buf_puts(b, partial ? "true}\n\n" : "false}\n\n");
}

/* Writes one stream entry (its id, its event's JSON) as the board's
 * event to b: only what the public board shows. Returns false for an
 * event the board does not show. Built once per entry, whatever the
 * number of streams it goes to. */
static bool event_text(tally_buf_t *b, const char *id, const cJSON *ev) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
  const cJSON *who = cJSON_GetObjectItemCaseSensitive(ev, "participant");
  if (!cJSON_IsString(type) || who == NULL)
    return false;
  if (strcmp(type->valuestring, "rating") == 0) {
    tally_buf_puts(b, "id: ");
    tally_buf_puts(b, id);
    tally_buf_puts(b, "\nevent: rating\ndata: {\"participant\":");
    tally_json_value(b, who);
    static const char *const keys[] = {"rating", "matches", "wins", "draws",
                                       "losses"};
    for (size_t k = 0; k < 5; k++) {
      tally_buf_puts(b, ",\"");
      tally_buf_puts(b, keys[k]);
      tally_buf_puts(b, "\":");
      tally_json_value(b, cJSON_GetObjectItemCaseSensitive(ev, keys[k]));
    }
  } else {
    /* score, token, rescore: the participant's new public task score.
     * Never the view: a tokened one is the full view. */
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "task_score");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(ts, "score");
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(ts, "partial");
    score_text(b, id, who, cJSON_GetObjectItemCaseSensitive(ev, "task"),
               cJSON_IsNumber(sc) ? sc->valuedouble : 0, cJSON_IsTrue(pa));
    return true;
  }
  tally_buf_puts(b, "}\n\n");
  return true;
}

typedef struct {
  tally_api_t *a;
  char contest[256], id[48];
  bool elo; /* a rating event: the matches were read, not a place */
  cJSON *who, *task;
} refreeze_t;

/* A rating event's text, with the rating and counts of e. */
static void rating_text(tally_buf_t *b, const char *id, const cJSON *who,
                        const tally_elo_t *e) {
  tally_buf_puts(b, "id: ");
  tally_buf_puts(b, id);
  tally_buf_puts(b, "\nevent: rating\ndata: {\"participant\":");
  tally_json_value(b, who);
  tally_buf_puts(b, ",\"rating\":");
  tally_json_num(b, e->rating);
  static const char *const keys[] = {"matches", "wins", "draws", "losses"};
  unsigned counts[4] = {e->matches, e->wins, e->draws, e->losses};
  for (size_t k = 0; k < 4; k++) {
    tally_buf_puts(b, ",\"");
    tally_buf_puts(b, keys[k]);
    tally_buf_puts(b, "\":");
    tally_json_num(b, counts[k]);
  }
  tally_buf_puts(b, "}\n\n");
}

static void on_refreeze(tally_cluster_t *k, redisReply *reply, void *priv) {
  refreeze_t *z = priv;
  tally_api_t *a = k->data;
  const tally_contest_t *c =
      a->contests != NULL ? tally_contestset_find(a->contests, z->contest)
                          : NULL;
  double since = tally__api_freeze_since(a, c, tally__api_now());
  if (reply != NULL && c != NULL && !isnan(since) && !a->closing) {
    tally_buf_t b;
    tally_buf_init(&b);
    bool got;
    if (z->elo) {
      tally_elo_t e;
      if ((got = tally_frozen_elo(reply, since, &e)))
        rating_text(&b, z->id, z->who, &e);
    } else {
      double score = 0;
      bool partial = false;
      if ((got = tally_frozen_score(reply, since, &score, &partial)))
        score_text(&b, z->id, z->who, z->task, score, partial);
    }
    for (tally_sse_t *e = a->sses; got && e != NULL; e = e->next) {
      if (!e->live || strcmp(e->contest, z->contest) != 0)
        continue;
      tally_buf_put(&e->buf, b.data, b.len);
      sse_flush(e);
      __atomic_add_fetch(&a->sse_events, 1, __ATOMIC_RELAXED);
    }
    tally_buf_close(&b);
  }
  cJSON_Delete(z->who);
  cJSON_Delete(z->task);
  free(z);
}

/* Reads what an event of frozen contest c needs to be sent as the frozen
 * board has it (on_refreeze): for a task score, the participant's place;
 * for a rating, their matches. */
static void refreeze(tally_api_t *a, const tally_contest_t *c, const char *id,
                     const cJSON *ev, bool elo) {
  const cJSON *who = cJSON_GetObjectItemCaseSensitive(ev, "participant");
  const cJSON *task = cJSON_GetObjectItemCaseSensitive(ev, "task");
  char qprefix[200], base[600], part[800], tpart[800], key[2400];
  if (!cJSON_IsString(who) || (!elo && !cJSON_IsString(task)) ||
      tally_api_contest_prefix(a, c->name, qprefix, sizeof(qprefix)) != 0 ||
      tally_contest_key(base, sizeof(base), qprefix, c->name) != 0 ||
      tally_rescore_key(part, sizeof(part), "", "", who->valuestring) != 0 ||
      (!elo &&
       tally_rescore_key(tpart, sizeof(tpart), "", "", task->valuestring) != 0))
    return;
  refreeze_t *z = calloc(1, sizeof(*z));
  if (z == NULL || (z->who = cJSON_Duplicate(who, true)) == NULL ||
      (!elo && (z->task = cJSON_Duplicate(task, true)) == NULL)) {
    if (z != NULL)
      cJSON_Delete(z->who);
    free(z);
    return;
  }
  z->a = a;
  z->elo = elo;
  snprintf(z->contest, sizeof(z->contest), "%s", c->name);
  snprintf(z->id, sizeof(z->id), "%s", id);
  if (elo)
    snprintf(key, sizeof(key), "%s:matches:%s", base, part);
  else
    snprintf(key, sizeof(key), "%s:pt:%s:%s", base, part, tpart);
  const char *argv[] = {"HGETALL", key};
  size_t lens[2] = {strlen(argv[0]), strlen(key)};
  if (tally_cluster_command(&a->cl, key, lens[1], API_TIMEOUT_MS, on_refreeze,
                            z, 2, argv, lens) != 0) {
    cJSON_Delete(z->who);
    cJSON_Delete(z->task);
    free(z);
  }
}

/* Feeds the entries of an XRANGE or XREAD reply (an array of [id,
 * [field, value, ...]]) to the streams that want them: one stream (only)
 * or every live one. Returns the last ID, or NULL. */
static const char *feed(tally_api_tail_t *t, const redisReply *entries,
                        tally_sse_t *only, bool *stopped) {
  tally_api_t *a = t->a;
  const char *last = NULL;
  *stopped = false;
  uint64_t sent = 0;
  for (size_t i = 0; entries != NULL && i < entries->elements; i++) {
    const redisReply *en = entries->element[i];
    if (en->type != REDIS_REPLY_ARRAY || en->elements != 2 ||
        en->element[0]->type != REDIS_REPLY_STRING)
      continue;
    const char *id = en->element[0]->str;
    last = id;
    const redisReply *f = en->element[1];
    cJSON *ev = NULL;
    for (size_t k = 0; f->type == REDIS_REPLY_ARRAY && k + 1 < f->elements;
         k += 2)
      if (ev == NULL && strcmp(f->element[k]->str, "event") == 0)
        ev = cJSON_Parse(f->element[k + 1]->str);
    /* On a frozen board a score or a rating moves only by what came
     * before the freeze: it is computed again from the place or the
     * matches, in order, and sent from there. */
    char num[32];
    const char *name = ev != NULL ? tally__api_event_contest(ev, num) : NULL;
    const tally_contest_t *fc = NULL;
    if (only == NULL && name != NULL && a->contests != NULL) {
      const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
      fc = tally_contestset_find(a->contests, name);
      if (fc != NULL &&
          (isnan(tally__api_freeze_since(a, fc, tally__api_now())) ||
           !cJSON_IsString(type)))
        fc = NULL;
      if (fc != NULL)
        refreeze(a, fc, id, ev, strcmp(type->valuestring, "rating") == 0);
    }
    tally_buf_reset(&a->scratch);
    bool shown = name != NULL && fc == NULL && event_text(&a->scratch, id, ev);
    unsigned long long ms, seq;
    if (!parse_id(id, &ms, &seq)) {
      cJSON_Delete(ev);
      continue;
    }
    for (tally_sse_t *e = only != NULL ? only : a->sses; e != NULL;
         e = only != NULL ? NULL : e->next) {
      if ((only == NULL && (!e->live || e->t != t)) || e->dropped ||
          e->at_ms > ms || (e->at_ms == ms && e->at_seq >= seq))
        continue;
      if (shown && strcmp(e->contest, name) == 0) {
        tally_buf_put(&e->buf, a->scratch.data, a->scratch.len);
        sse_account(e);
        sent++;
      }
      e->at_ms = ms;
      e->at_seq = seq;
    }
    cJSON_Delete(ev);
    /* Past the budget: the rest of the batch waits for the next read,
     * once the clients have been written to and the slowest can be told
     * from the others. */
    if (only == NULL &&
        __atomic_load_n(&a->sse_bytes, __ATOMIC_RELAXED) > sse_budget(a)) {
      *stopped = true;
      break;
    }
  }
  __atomic_add_fetch(&a->sse_events, sent, __ATOMIC_RELAXED);
  return last;
}

/* Drops a stream that is too far behind, wakes one that has bytes. */
/* Ends stream e, whose client reads too slowly, giving its buffer back:
 * the browser reconnects with Last-Event-ID and catches up from Redis. */
/* Gives e's buffer back, unsent, and wakes it to end. */
static void sse_discard(tally_sse_t *e) {
  tally_buf_close(&e->buf);
  e->sent = 0;
  sse_account(e);
  tally_http_stream_wake(&e->stream);
}

static void sse_drop(tally_sse_t *e, const char *why) {
  tally_api_t *a = e->a;
  size_t behind = e->buf.len - e->sent;
  e->ended = e->dropped = true;
  e->stream.abort = true;
  sse_discard(e);
  uint64_t n = __atomic_add_fetch(&a->sse_dropped, 1, __ATOMIC_RELAXED);
  /* Said for the first and then every 100th: thousands may go at once. */
  if (n == 1 || n % 100 == 0)
    tally_log(a->log, TALLY_LOG_WARN, "api",
              "an event stream of contest %s %zu bytes behind was ended: %s "
              "(%llu so far; the browser reconnects with Last-Event-ID)",
              e->contest, behind, why, (unsigned long long)n);
}

/* While the streams' buffers together hold more than limit bytes, ends
 * the slowest stream (of those behind when the last batch came, with
 * behind_only): the one whose client has gone longest without having all
 * it was sent, then the one furthest behind. */
static void sse_shed(tally_api_t *a, uint64_t limit, bool behind_only) {
  while (__atomic_load_n(&a->sse_bytes, __ATOMIC_RELAXED) > limit) {
    tally_sse_t *worst = NULL;
    for (tally_sse_t *s = a->sses; s != NULL; s = s->next)
      if (!s->ended && s->buf.len - s->sent > 0 &&
          (!behind_only || s->was_behind) &&
          (worst == NULL || s->caught_up < worst->caught_up ||
           (s->caught_up == worst->caught_up &&
            s->buf.len - s->sent > worst->buf.len - worst->sent)))
        worst = s;
    if (worst == NULL)
      break;
    sse_drop(worst, "the event streams' memory budget is spent");
  }
}

static uint64_t sse_budget(const tally_api_t *a) {
  return a->sse_budget > 0 ? a->sse_budget : SSE_BUDGET_DEFAULT;
}

/* Drops a stream that is too far behind, wakes one that has bytes, and
 * holds the streams to their budget by ending those that were already
 * behind when this batch came. Which of the others keep up shows only
 * once their connections have been written to: a batch may take them
 * past the budget for a moment (tail_read sizes batches so that it
 * hardly does), and before the next one (on_tail) the slowest go. */
static void sse_flush(tally_sse_t *e) {
  tally_api_t *a = e->a;
  if (e->dropped) {
    /* Events written to it since it was ended go: its client may never
     * read again, and its connection may linger until MHD gives up. */
    sse_discard(e);
    return;
  }
  sse_account(e);
  if (!e->ended && (e->buf.len - e->sent > SSE_BUFFER_MAX || e->buf.oom))
    sse_drop(e, "more than " SSE_BUFFER_MAX_TEXT " behind");
  sse_shed(a, sse_budget(a), true);
  if (e->buf.len > e->sent || e->ended)
    tally_http_stream_wake(&e->stream);
}

static void catch_up(tally_sse_t *e);

static void on_catch_up(tally_cluster_t *k, redisReply *reply, void *priv) {
  tally_sse_t *e = priv;
  (void)k;
  e->catching = false;
  if (e->gone) {
    sse_free(e);
    return;
  }
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
    /* It cannot catch up: it ends, and the browser comes again. */
    e->ended = true;
    sse_flush(e);
    return;
  }
  bool stopped;
  feed(e->t, reply, e, &stopped);
  sse_flush(e);
  if (reply->elements >= SSE_BATCH || at_before(e, e->t->id))
    catch_up(e);
  else
    e->live = true;
}

/* The entries after e's last one, up to SSE_BATCH, until it reaches the
 * tail. */
static void catch_up(tally_sse_t *e) {
  tally_api_t *a = e->a;
  char key[240], from[64];
  snprintf(key, sizeof(key), "%s:public", e->t->prefix);
  snprintf(from, sizeof(from), "(%llu-%llu", e->at_ms, e->at_seq);
  const char *argv[] = {"XRANGE", key, from, "+", "COUNT", "500"};
  size_t lens[6];
  for (int i = 0; i < 6; i++)
    lens[i] = strlen(argv[i]);
  if (tally_cluster_command(&a->cl, key, lens[1], API_TIMEOUT_MS, on_catch_up,
                            e, 6, argv, lens) == 0)
    e->catching = true;
  else {
    e->ended = true;
    sse_flush(e);
  }
}

static void tail_read(tally_api_tail_t *t);
static void begin_waiting(tally_api_tail_t *t);

static void tail_start(tally_api_tail_t *t);

/* A tail's next read: where its queue's <q>:public ends, until that is
 * known; then what follows it. */
static void tail_follow(tally_api_tail_t *t) {
  if (t->id[0] == '\0')
    tail_start(t);
  else
    tail_read(t);
}

static void on_pace(uv_timer_t *h) {
  tally_api_tail_t *t = h->data;
  if (!t->a->closing)
    tail_follow(t);
}

/* An error reply to a tail's read (LOADING, BUSY, MASTERDOWN, ...):
 * said once until a read succeeds, and asked again in a while. */
static void tail_error(tally_api_tail_t *t, const redisReply *reply) {
  if (!t->failing)
    tally_log(t->a->log, TALLY_LOG_INFO, "api",
              "cannot read the event stream of queue %s yet (asked again "
              "every %d ms): %s",
              t->queue, SSE_RETRY_MS,
              reply->type == REDIS_REPLY_ERROR ? reply->str
                                               : "an unexpected reply");
  t->failing = true;
  uv_timer_start(&t->pace, on_pace, SSE_RETRY_MS, 0);
}

static void on_tail(tally_redis_t *rd, redisReply *reply, void *priv) {
  tally_api_tail_t *t = rd->data;
  tally_api_t *a = t->a;
  (void)priv;
  if (reply == NULL || a->closing)
    return; /* the connection comes up again, and reads again */
  if (reply->type != REDIS_REPLY_ARRAY && reply->type != REDIS_REPLY_NIL) {
    tail_error(t, reply);
    return;
  }
  t->failing = false;
  /* Before the batch: the streams within their budget, the slowest
   * ended first; and which ones are behind as it comes. */
  sse_shed(a, sse_budget(a), false);
  for (tally_sse_t *e = a->sses; e != NULL; e = e->next)
    e->was_behind = e->buf.len > e->sent;
  if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1) {
    const redisReply *s = reply->element[0];
    bool stopped = false;
    const char *last =
        s->elements == 2 ? feed(t, s->element[1], NULL, &stopped) : NULL;
    if (last != NULL)
      snprintf(t->id, sizeof(t->id), "%s", last);
    for (tally_sse_t *e = a->sses; e != NULL; e = e->next)
      if (e->t == t)
        sse_flush(e);
    bool full = stopped ||
                (s->elements == 2 && s->element[1]->type == REDIS_REPLY_ARRAY &&
                 s->element[1]->elements >= t->count);
    if (last != NULL) {
      /* Entries keep coming: let them gather for a moment, so that each
       * stream gets them in one write rather than one each; a full batch
       * has more waiting, and MHD writes it out on the loop's next turn,
       * before the next read is answered. */
      uv_timer_start(&t->pace, on_pace, full ? 0 : SSE_PACE_MS, 0);
      return;
    }
  }
  tail_read(t);
}

static void tail_read(tally_api_tail_t *t) {
  tally_api_t *a = t->a;
  char key[240];
  snprintf(key, sizeof(key), "%s:public", t->prefix);
  /* A batch goes to every stream before any is written to a client, so
   * its size is held to what the budget allows each stream (an event is
   * a few hundred bytes): 500 entries for a few streams, fewer for
   * thousands, 16 at least. */
  uint64_t per = sse_budget(a) / ((uint64_t)a->nsses + 1) / SSE_EVENT_BYTES;
  t->count = per < 16 ? 16 : per > 500 ? 500 : (size_t)per;
  char count[24];
  snprintf(count, sizeof(count), "%zu", t->count);
  const char *argv[] = {"XREAD",      "COUNT",   count, "BLOCK",
                        SSE_BLOCK_MS, "STREAMS", key,   t->id};
  size_t lens[8];
  for (int i = 0; i < 8; i++)
    lens[i] = strlen(argv[i]);
  tally_redis_command(&t->r, API_TIMEOUT_MS + 1000, on_tail, NULL, 8, argv,
                      lens);
}

static void on_tail_start(tally_redis_t *rd, redisReply *reply, void *priv) {
  tally_api_tail_t *t = rd->data;
  tally_api_t *a = t->a;
  (void)priv;
  if (reply == NULL || a->closing)
    return;
  if (reply->type != REDIS_REPLY_ARRAY) {
    /* Redis is loading its data, say: ask again until it answers. */
    tail_error(t, reply);
    return;
  }
  t->failing = false;
  const char *last = reply->elements > 0 &&
                             reply->element[0]->type == REDIS_REPLY_ARRAY &&
                             reply->element[0]->elements == 2
                         ? reply->element[0]->element[0]->str
                         : "0-0";
  snprintf(t->id, sizeof(t->id), "%s", last);
  bool all = true;
  for (size_t i = 0; i < a->ntails && all; i++)
    all = a->tails[i].id[0] != '\0';
  if (all)
    __atomic_store_n(&a->tail_known, true, __ATOMIC_RELEASE);
  begin_waiting(t);
  tail_read(t);
}

/* Where a queue's <q>:public ends now: the first read of its tail. */
static void tail_start(tally_api_tail_t *t) {
  char key[240];
  snprintf(key, sizeof(key), "%s:public", t->prefix);
  const char *argv[] = {"XREVRANGE", key, "+", "-", "COUNT", "1"};
  size_t lens[6];
  for (int i = 0; i < 6; i++)
    lens[i] = strlen(argv[i]);
  tally_redis_command(&t->r, API_TIMEOUT_MS, on_tail_start, NULL, 6, argv,
                      lens);
}

/* On every connect of a tail: where the stream ends now, the first
 * time; then follow it. */
void tally__api_on_tail_up(tally_redis_t *rd) {
  tally_api_tail_t *t = rd->data;
  uv_timer_stop(&t->pace);
  tail_follow(t);
}

/* Settles whether f's contest is frozen now, and from when; when that
 * changed, its open boards reload. */
static void settle(tally_api_t *a, struct tally_api_freeze_s *f, double now) {
  const tally_contest_t *c =
      a->contests != NULL ? tally_contestset_find(a->contests, f->name) : NULL;
  double since = tally__api_freeze_rule(a, c, now);
  if (since == f->since || (isnan(since) && isnan(f->since)))
    return;
  f->since = since;
  for (tally_sse_t *e = a->sses; e != NULL; e = e->next)
    if (strcmp(e->contest, f->name) == 0) {
      tally_buf_puts(&e->buf, "event: reload\ndata: {}\n\n");
      sse_flush(e);
    }
}

/* The freezes again, from the configs and the words as last read: a
 * record for each configured contest with a freeze or a word, each
 * settled. A contest that lost both thaws (its boards reload). */
static void refresh_freezes(tally_api_t *a) {
  const tally_contestset_t *cs = a->contests;
  size_t n = 0;
  for (size_t i = 0; cs != NULL && i < cs->count; i++)
    n += !isnan(cs->contests[i].freeze) ||
         tally__api_word_of(a, cs->contests[i].name) != NULL;
  struct tally_api_freeze_s *fresh = calloc(n + 1, sizeof(*fresh));
  if (fresh == NULL)
    return;
  size_t k = 0;
  double now = tally__api_now();
  for (size_t i = 0; cs != NULL && i < cs->count; i++) {
    const tally_freeze_word_t *w = tally__api_word_of(a, cs->contests[i].name);
    if (isnan(cs->contests[i].freeze) && w == NULL)
      continue;
    snprintf(fresh[k].name, sizeof(fresh[k].name), "%s", cs->contests[i].name);
    struct tally_api_freeze_s *old = tally__api_freeze_of(a, fresh[k].name);
    if (old != NULL) {
      fresh[k].since = old->since;
      old->name[0] = '\0'; /* kept */
    } else {
      /* As answers found it so far: by the rule alone. */
      fresh[k].since = tally__api_freeze_rule(a, &cs->contests[i], now);
    }
    k++;
  }
  /* Neither a freeze nor a word now: the rule finds it thawed. */
  for (size_t i = 0; i < a->nfreezes; i++)
    if (a->freezes[i].name[0] != '\0' && !isnan(a->freezes[i].since))
      settle(a, &a->freezes[i], now);
  free(a->freezes);
  a->freezes = fresh;
  a->nfreezes = k;
  for (size_t i = 0; i < a->nfreezes; i++)
    settle(a, &a->freezes[i], now);
}

void tally__api_free_words(tally_api_t *a) {
  for (size_t i = 0; i < a->nwords; i++)
    free(a->words[i].name);
  free(a->words);
  a->words = NULL;
  a->nwords = 0;
}

/* <p>:freezes read: the operator's words replace the last ones. A value
 * that is not a word counts as none, logged once until all are words
 * again. */
static void on_words(tally_cluster_t *k, redisReply *reply, void *priv) {
  tally_api_t *a = k->data;
  (void)priv;
  a->words_asking = false;
  if (a->closing || reply == NULL || reply->type != REDIS_REPLY_ARRAY)
    return;
  struct tally_api_word_s *w = calloc(reply->elements / 2 + 1, sizeof(*w));
  if (w == NULL)
    return;
  size_t n = 0;
  bool bad = false;
  for (size_t i = 0; i + 1 < reply->elements; i += 2) {
    const redisReply *k = reply->element[i], *v = reply->element[i + 1];
    if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
      continue;
    tally_freeze_word_t word;
    if (tally_freeze_word_parse(v->str, v->len, &word) != 0) {
      if (!bad && !a->words_bad)
        tally_log(a->log, TALLY_LOG_WARN, "api.freeze",
                  "%s:freezes: contest \"%.200s\": \"%.60s\" is not a freeze "
                  "(\"lifted\" or \"at\" and a time): the config's freeze "
                  "holds",
                  a->prefix, k->str, v->str);
      bad = true;
      continue;
    }
    if ((w[n].name = strdup(k->str)) == NULL)
      break;
    w[n++].word = word;
  }
  a->words_bad = bad; /* logged again once mended and broken anew */
  tally__api_free_words(a);
  a->words = w;
  a->nwords = n;
  refresh_freezes(a);
}

/* Every second: the freezes of the configured contests (a reload may
 * change them) and the operator's words (`tally contest freeze`), a page
 * reload for the streams of a contest whose board froze or thawed; every
 * 15 s, a keep-alive on each stream. */
void tally__api_on_keepalive(uv_timer_t *t) {
  tally_api_t *a = t->data;
  tally__api_check_up(a);
  tally__api_ask_secret(a);
  tally__api_publish_configured(a);
  refresh_freezes(a);
  tally__ccs_tick(a);
  tally_rws_tick(a);
  if (!a->words_asking && !a->closing) {
    char key[160];
    snprintf(key, sizeof(key), "%s:freezes", a->prefix);
    const char *argv[] = {"HGETALL", key};
    size_t lens[2] = {7, strlen(key)};
    if (tally_cluster_command(&a->cl, key, lens[1], API_TIMEOUT_MS, on_words,
                              NULL, 2, argv, lens) == 0)
      a->words_asking = true;
  }
  if (++a->ticks % 15 != 0)
    return;
  for (tally_sse_t *e = a->sses; e != NULL; e = e->next) {
    tally_buf_puts(&e->buf, ": keep-alive\n\n");
    sse_flush(e);
  }
}

/* Where stream e starts, once the tail knows where <p>:public ends:
 * from its Last-Event-ID (from, or NULL) if that is an entry ID, else
 * from now. */
static void sse_begin(tally_sse_t *e, const char *from) {
  tally_api_t *a = e->a;
  unsigned long long ms, seq;
  bool resume = from != NULL && parse_id(from, &ms, &seq);
  parse_id(resume ? from : e->t->id, &e->at_ms, &e->at_seq);
  const tally_contest_t *c =
      a->contests != NULL ? tally_contestset_find(a->contests, e->contest)
                          : NULL;
  if (resume && !isnan(tally__api_freeze_since(a, c, tally__api_now()))) {
    /* A frozen board is not replayed event by event: the page loads it
     * again, as it is, and follows from now. */
    tally_buf_puts(&e->buf, "event: reload\ndata: {}\n\n");
    parse_id(e->t->id, &e->at_ms, &e->at_seq);
    e->live = true;
    sse_flush(e);
  } else if (resume && at_before(e, e->t->id)) {
    catch_up(e);
  } else {
    e->live = true;
  }
}

/* A tail has read where its queue's <q>:public ends: the streams that
 * waited for it begin. */
static void begin_waiting(tally_api_tail_t *t) {
  for (tally_sse_t *e = t->a->sses; e != NULL; e = e->next) {
    if (!e->waiting || e->t != t)
      continue;
    e->waiting = false;
    sse_begin(e, e->from[0] != '\0' ? e->from : NULL);
  }
}

/* GET /api/contests/C/events: from Last-Event-ID if the browser gives
 * one (what retention still holds), else from now. Until the tail has
 * first read Redis (tallyd just started, or Redis is not up yet) the
 * stream waits, with its keep-alives: a browser's EventSource does not
 * come back after an error status. */
int tally__api_start_events(tally_api_t *a, tally_http_req_t *r,
                            const char *contest) {
  char qprefix[200];
  tally_api_tail_t *t = NULL;
  if (tally_api_contest_prefix(a, contest, qprefix, sizeof(qprefix)) == 0)
    for (size_t i = 0; i < a->ntails && t == NULL; i++)
      if (strcmp(a->tails[i].prefix, qprefix) == 0)
        t = &a->tails[i];
  if (t == NULL)
    return tally__api_answer_now(r, 503,
                                 "this tallyd does not follow the events of "
                                 "the contest's queue (a queue a reload "
                                 "added): restart it");
  tally_sse_t *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return tally__api_answer_now(r, 503, "out of memory");
  e->a = a;
  e->t = t;
  e->caught_up = uv_now(a->loop);
  snprintf(e->contest, sizeof(e->contest), "%s", contest);
  tally_buf_init(&e->buf);
  e->stream.pull = sse_pull;
  e->stream.closed = sse_closed;
  e->stream.data = e;
  e->next = a->sses;
  if (a->sses != NULL)
    a->sses->prev = e;
  a->sses = e;
  __atomic_add_fetch(&a->nsses, 1, __ATOMIC_RELAXED);
  /* The browser waits a second before it reconnects. */
  tally_buf_puts(&e->buf, "retry: 1000\n\n");
  const char *from = tally_http_header(r, "Last-Event-ID");
  if (t->id[0] != '\0') {
    sse_begin(e, from);
  } else {
    e->waiting = true;
    if (from != NULL && strlen(from) < sizeof(e->from))
      snprintf(e->from, sizeof(e->from), "%s", from);
  }
  r->reply.type = "text/event-stream";
  r->reply.stream = &e->stream;
  return 1;
}

void tally__api_end_streams(tally_api_t *a) {
  tally__ccs_end_feeds(a);
  for (tally_sse_t *e = a->sses; e != NULL; e = e->next) {
    e->ended = true;
    sse_flush(e);
  }
}
