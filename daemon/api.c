/* The results API: routing, the Redis reads behind each
 * answer. Each request sends its commands at once on the API's own
 * connection (pipelined) and builds its answer when the last reply is
 * in (api_answers.c); replies are copied out, since they live only in
 * their callback. The event streams are api_events.c's, access
 * (tokens) api_access.c's. */
#include "daemon/api.h"
#include "daemon/api_int.h"
#include "daemon/ccs.h"
#include "daemon/rws.h"

#include "config/error.h"
#include "contest/frozen.h"
#include "engine/engine.h"
#include "engine/queues.h"
#include "redis/keys.h"
#include "redis/scripts.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A participant's submissions are read this many at a time. */
#define API_SUMMARY_CHUNK 200
/* A participant's page of submissions: rows by default, and at most. */
#define API_PAGE_DEFAULT 50
#define API_PAGE_MAX 500
#define API_PAGE_MAX_TEXT "500"

static void on_map(tally_cluster_t *k) {
  tally__api_check_up(k->data);
}

int tally_api_contest_prefix(const tally_api_t *a, const char *contest,
                             char *out, size_t len) {
  const tally_contest_t *c =
      a->contests != NULL ? tally_contestset_find(a->contests, contest) : NULL;
  return tally_queue_prefix(out, len, a->prefix,
                            c != NULL && c->queue != NULL ? c->queue
                                                          : a->default_queue);
}

void tally_scoring_close(tally_scoring_t *s) {
  if (s->ok) {
    tally_taskset_close(&s->tasks);
    tally_registry_close(&s->reg);
  }
  s->ok = false;
}

int tally_api_init(tally_api_t *a, uv_loop_t *loop, const char *url,
                   const char *token_file, const tally_contestset_t *cs,
                   char *err, size_t errlen) {
  a->loop = loop;
  a->secret[0] = '\0';
  a->secret_asking = a->secret_failing = false;
  a->published = a->publishing = a->publish_wait = 0;
  a->publish_ok = false;
  a->words = NULL;
  a->nwords = 0;
  a->words_asking = a->words_bad = false;
  a->inflight = 0;
  a->closing = false;
  a->close_cb = NULL;
  a->token = NULL;
  if (token_file != NULL &&
      (a->token = tally__api_read_token(token_file, err, errlen)) == NULL)
    return TALLY_EINVAL;
  tally_queues_t queues;
  if (tally_queues_pick(&queues, NULL, a->default_queue, cs) != 0 ||
      (a->tails = calloc(queues.n, sizeof(*a->tails))) == NULL) {
    tally_queues_free(&queues);
    free(a->token);
    a->token = NULL;
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  if (tally_cluster_init(loop, &a->cl, url, err, errlen) != 0) {
    tally_queues_free(&queues);
    free(a->tails);
    a->tails = NULL;
    free(a->token);
    a->token = NULL;
    return TALLY_EINVAL;
  }
  a->cl.data = a;
  a->cl.on_map = on_map;
  a->cl_up = false;
  a->ntails = queues.n;
  for (size_t i = 0; i < queues.n; i++) {
    tally_api_tail_t *t = &a->tails[i];
    t->a = a;
    snprintf(t->queue, sizeof(t->queue), "%s", queues.names[i]);
    tally_queue_prefix(t->prefix, sizeof(t->prefix), a->prefix, t->queue);
    /* The cluster parsed the same URL: only memory can fail here. */
    if (tally_redis_init(loop, &t->r, url, err, errlen) != 0)
      abort();
    t->r.data = t;
    t->r.on_up = tally__api_on_tail_up;
    if (t->r.addr.nsentinels == 0)
      t->r.follow_slot = (int)tally_key_slot(t->prefix, strlen(t->prefix));
    uv_timer_init(loop, &t->pace);
    t->pace.data = t;
  }
  tally_queues_free(&queues);
  a->tail_known = a->contests_known = false;
  a->sses = NULL;
  a->ccs_feeds = NULL;
  memset(a->boards, 0, sizeof(a->boards));
  a->nccs_feeds = a->rws_failing = 0;
  a->rws_taken = a->rws_failed = 0;
  a->nsses = 0;
  a->sse_events = a->sse_dropped = 0;
  a->sse_bytes = 0;
  a->ticks = 0;
  a->freezes = NULL;
  a->nfreezes = 0;
  uv_timer_init(loop, &a->keepalive);
  a->keepalive.data = a;
  tally_buf_init(&a->scratch);
  a->handles = 3 + 2 * (int)a->ntails;
  /* The Ranking Web Servers' HTTP client: only memory can fail here, and
   * the handles above could not be closed from this call. */
  if (tally_rws_init(a) != 0)
    abort();
  return 0;
}

void tally_api_start(tally_api_t *a) {
  tally_cluster_start(&a->cl);
  for (size_t i = 0; i < a->ntails; i++)
    tally_redis_start(&a->tails[i].r);
  uv_timer_start(&a->keepalive, tally__api_on_keepalive, 1000, 1000);
}

static void free_boards(tally_api_t *a) {
  for (size_t i = 0; i < sizeof(a->boards) / sizeof(a->boards[0]); i++) {
    free(a->boards[i].body);
    a->boards[i].body = NULL;
    a->boards[i].at = 0;
  }
}

static void one_closed(tally_api_t *a) {
  if (--a->handles > 0)
    return;
  free(a->token);
  a->token = NULL;
  free(a->freezes);
  a->freezes = NULL;
  a->nfreezes = 0;
  tally__api_free_words(a);
  free_boards(a);
  tally_buf_close(&a->scratch);
  free(a->tails);
  a->tails = NULL;
  a->ntails = 0;
  if (a->close_cb != NULL)
    a->close_cb(a);
}

void tally__api_handle_closed(tally_api_t *a) {
  one_closed(a);
}

static void on_tail_closed(tally_redis_t *rd) {
  tally_api_tail_t *t = rd->data;
  one_closed(t->a);
}

static void on_cl_closed(tally_cluster_t *k) {
  one_closed(k->data);
}

static void on_timer_closed(uv_handle_t *h) {
  one_closed(h->data);
}

static void on_pace_closed(uv_handle_t *h) {
  tally_api_tail_t *t = h->data;
  one_closed(t->a);
}

void tally_api_close(tally_api_t *a, void (*close_cb)(tally_api_t *a)) {
  if (a->closing)
    return;
  a->closing = true;
  a->close_cb = close_cb;
  /* The event streams end (the listener closes them); commands in flight
   * fail, and their requests are answered 503. */
  tally__api_end_streams(a);
  tally_rws_stop(a);
  uv_close((uv_handle_t *)&a->keepalive, on_timer_closed);
  for (size_t i = 0; i < a->ntails; i++) {
    uv_close((uv_handle_t *)&a->tails[i].pace, on_pace_closed);
    tally_redis_close(&a->tails[i].r, on_tail_closed);
  }
  tally_cluster_close(&a->cl, on_cl_closed);
}

/* Requests. */

void tally__api_free_row(row_t *w) {
  free(w->id);
  for (size_t i = 0; i < w->nfields; i++)
    free(w->fields[i]);
  free(w->fields);
}

static void free_req(areq_t *q) {
  for (size_t i = 0; i < q->nrows; i++)
    tally__api_free_row(&q->rows[i]);
  free(q->rows);
  for (size_t i = 0; i < q->nnames; i++)
    free(q->names[i]);
  free(q->names);
  tally__api_free_row(&q->self);
  tally_icpc_subs_free(&q->icpc);
  tally_buf_close(&q->cell);
  free(q);
}

static void cancel(tally_http_req_t *r) {
  areq_t *q = r->data;
  q->r = NULL;
}

void tally__api_fail(areq_t *q, const char *fmt, const char *what) {
  if (!q->failed)
    snprintf(q->why, sizeof(q->why), fmt, what);
  q->failed = true;
}

/* Adds the strings of an array reply to q's names, each once. */
static void add_names(const redisReply *reply, areq_t *q) {
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
    tally__api_fail(q, "Redis did not answer %s", "a read");
    return;
  }
  char **grown =
      realloc(q->names, (q->nnames + reply->elements + 1) * sizeof(char *));
  if (grown == NULL) {
    tally__api_fail(q, "%s", "out of memory");
    return;
  }
  q->names = grown;
  for (size_t i = 0; i < reply->elements; i++) {
    const char *name = reply->element[i]->type == REDIS_REPLY_STRING
                           ? reply->element[i]->str
                           : "";
    bool seen = false;
    for (size_t k = 0; k < q->nnames && !seen; k++)
      seen = strcmp(q->names[k], name) == 0;
    if (seen)
      continue;
    if ((q->names[q->nnames] = strdup(name)) == NULL) {
      tally__api_fail(q, "%s", "out of memory");
      return;
    }
    q->nnames++;
  }
}

/* Copies the strings of an array reply into *out, *n. */
static void copy_strings(const redisReply *reply, char ***out, size_t *n,
                         areq_t *q) {
  *out = NULL;
  *n = 0;
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
    tally__api_fail(q, "Redis did not answer %s", "a read");
    return;
  }
  *out = calloc(reply->elements + 1, sizeof(char *));
  if (*out == NULL) {
    tally__api_fail(q, "%s", "out of memory");
    return;
  }
  for (size_t i = 0; i < reply->elements; i++) {
    const redisReply *e = reply->element[i];
    (*out)[i] = strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
    if ((*out)[i] == NULL)
      tally__api_fail(q, "%s", "out of memory");
  }
  *n = reply->elements;
}

static void one_done(areq_t *q) {
  if (--q->waiting > 0)
    return;
  q->a->inflight--;
  if (q->r != NULL)
    tally__api_build(q);
  free_req(q);
}

/* Sends a read of the key argv[1]. */
static bool send_cmd(areq_t *q, tally_cluster_cb cb, void *priv, int argc,
                     const char **argv) {
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_cluster_command(&q->a->cl, argv[1], lens[1], API_TIMEOUT_MS, cb,
                            priv, argc, argv, lens) != 0) {
    tally__api_fail(q, "%s", "Redis is not connected");
    return false;
  }
  q->waiting++;
  return true;
}

/* The callbacks: priv is the request, or a row of it. */

typedef struct {
  areq_t *q;
  row_t *w; /* NULL: the request's own */
  int what;
  char *task; /* GOT_PLACE: the place's task */
  bool last;  /* GOT_SUMMARY: the last of its chunk */
} cb_t;

enum {
  GOT_ZSET,
  GOT_NAMES,
  GOT_MORE_NAMES, /* one queue's contests, added to the others' */
  GOT_FIELDS,
  GOT_SELF,
  GOT_PLACE,
  GOT_ICPC,
  GOT_MATCHES,
  GOT_SUMMARY,
  GOT_JOB,
  GOT_CELL
};

static void summaries(areq_t *q);
static void page_of(areq_t *q);

/* Sets w to a frozen Elo rating: its value, and its counts as the
 * fields an Elo row holds (matches, wins, draws, losses). */
static void set_frozen_elo(areq_t *q, row_t *w, const tally_elo_t *e) {
  unsigned counts[4] = {e->matches, e->wins, e->draws, e->losses};
  char **fields = calloc(4, sizeof(char *));
  for (size_t k = 0; fields != NULL && k < 4; k++) {
    char num[24];
    snprintf(num, sizeof(num), "%u", counts[k]);
    if ((fields[k] = strdup(num)) == NULL) {
      for (size_t j = 0; j < k; j++)
        free(fields[j]);
      free(fields);
      fields = NULL;
    }
  }
  if (fields == NULL) {
    tally__api_fail(q, "%s", "out of memory");
    return;
  }
  w->value = e->rating;
  w->fields = fields;
  w->nfields = 4;
}

/* Appends (task, {"public_score","partial"}) to w's fields: a frozen
 * task score. */
static void add_frozen(areq_t *q, row_t *w, const char *task, double score,
                       bool partial) {
  char **grown = realloc(w->fields, (w->nfields + 2) * sizeof(char *));
  if (grown == NULL) {
    tally__api_fail(q, "%s", "out of memory");
    return;
  }
  w->fields = grown;
  tally_buf_t j;
  tally_buf_init(&j);
  tally_buf_puts(&j, "{\"public_score\":");
  tally_json_num(&j, score);
  tally_buf_puts(&j, partial ? ",\"partial\":true}" : ",\"partial\":false}");
  char *name = strdup(task);
  char *text = j.oom ? NULL : strdup(tally_buf_text(&j));
  tally_buf_close(&j);
  if (name == NULL || text == NULL) {
    free(name);
    free(text);
    tally__api_fail(q, "%s", "out of memory");
    return;
  }
  w->fields[w->nfields++] = name;
  w->fields[w->nfields++] = text;
}

static void on_reply(tally_cluster_t *k, redisReply *reply, void *priv) {
  cb_t *c = priv;
  areq_t *q = c->q;
  if (reply == NULL)
    tally__api_fail(q, "Redis did not answer: %.200s", k->why);
  else if (reply->type == REDIS_REPLY_ERROR)
    tally__api_fail(q, "Redis refused a read: %.200s", reply->str);
  else if (c->what == GOT_ZSET) {
    char **flat;
    size_t n;
    copy_strings(reply, &flat, &n, q);
    q->rows = calloc(n / 2 + 1, sizeof(row_t));
    for (size_t i = 0; q->rows != NULL && i + 1 < n; i += 2) {
      q->rows[q->nrows].id = flat[i];
      q->rows[q->nrows].value = strtod(flat[i + 1], NULL);
      free(flat[i + 1]);
      q->nrows++;
    }
    free(flat);
  } else if (c->what == GOT_NAMES) {
    copy_strings(reply, &q->names, &q->nnames, q);
  } else if (c->what == GOT_MORE_NAMES) {
    add_names(reply, q);
  } else if (c->what == GOT_ICPC) {
    if (tally_icpc_place_read(&q->icpc, reply, c->w->id, c->task) != 0)
      tally__api_fail(q, "%s", "out of memory");
  } else if (c->what == GOT_MATCHES) {
    tally_elo_t e;
    if (tally_frozen_elo(reply, q->freeze, &e))
      set_frozen_elo(q, c->w, &e);
  } else if (c->what == GOT_CELL) {
    const tally_contestset_t *cs = q->a->contests;
    const tally_task_max_t *m =
        cs != NULL ? tally_contestset_max(cs, q->task) : NULL;
    if (tally_place_cell(reply, q->frozen ? q->freeze : INFINITY,
                         q->private_view, m != NULL ? m->subtask_public : NULL,
                         m != NULL ? m->nsubtasks : 0, &q->cell) != 0)
      tally__api_fail(q, "%s", "out of memory");
  } else if (c->what == GOT_PLACE) {
    double score;
    bool partial;
    if (tally_frozen_score(reply, q->freeze, &score, &partial))
      add_frozen(q, c->w, c->task, score, partial);
  } else if (c->what == GOT_JOB) {
    /* The row's summary and tokened are its fields; its job comes third
     * ("" when Redis has none). */
    row_t *w = c->w;
    char **grown = realloc(w->fields, (w->nfields + 1) * sizeof(char *));
    if (grown == NULL) {
      tally__api_fail(q, "%s", "out of memory");
    } else {
      w->fields = grown;
      const redisReply *e =
          reply->type == REDIS_REPLY_ARRAY && reply->elements == 1
              ? reply->element[0]
              : NULL;
      w->fields[w->nfields] =
          strdup(e != NULL && e->type == REDIS_REPLY_STRING ? e->str : "");
      if (w->fields[w->nfields] == NULL)
        tally__api_fail(q, "%s", "out of memory");
      else
        w->nfields++;
    }
  } else {
    row_t *w = c->what == GOT_SELF ? &q->self : c->w;
    copy_strings(reply, &w->fields, &w->nfields, q);
  }
  /* The last summary of a chunk: the next chunk, or the page. */
  if (c->what == GOT_SUMMARY && c->last && !q->failed && q->r != NULL) {
    if (q->next < q->nrows)
      summaries(q);
    else
      page_of(q);
  }
  free(c->task);
  free(c);
  one_done(q);
}

static bool ask(areq_t *q, int what, row_t *w, int argc, const char **argv) {
  cb_t *c = malloc(sizeof(*c));
  if (c == NULL) {
    tally__api_fail(q, "%s", "out of memory");
    return false;
  }
  *c = (cb_t){q, w, what, NULL, false};
  if (!send_cmd(q, on_reply, c, argc, argv)) {
    free(c);
    return false;
  }
  return true;
}

const tally_contest_t *tally__api_config_of_name(const tally_api_t *a,
                                                 const char *name) {
  const tally_contestset_t *cs = a->contests;
  return cs != NULL ? tally_contestset_find(cs, name) : NULL;
}

const tally_contest_t *tally__api_config_of(const areq_t *q) {
  return tally__api_config_of_name(q->a, q->contest);
}

/* Routing. */

int tally__api_answer_now(tally_http_req_t *r, unsigned status,
                          const char *msg) {
  r->reply.status = status;
  r->reply.type = "application/json";
  tally_buf_puts(&r->reply.body, "{\"error\":");
  tally_json_str(&r->reply.body, msg);
  tally_buf_puts(&r->reply.body, "}\n");
  return 1;
}

/* After a second round of reads for a ranking or a participant. */
static void after_first(areq_t *q);
static void names_to_rows(areq_t *q);

static void on_first(tally_cluster_t *k, redisReply *reply, void *priv) {
  cb_t *c = priv;
  areq_t *q = c->q;
  q->waiting++; /* held while the second round is sent */
  on_reply(k, reply, priv);
  if (!q->failed && q->r != NULL)
    after_first(q);
  one_done(q);
}

/* A participant's submissions: each one's summary and tokened flag, a
 * chunk at a time (the next asked once the last reply of this one is
 * in), so that a participant with thousands of submissions holds the
 * API's connection for one chunk at a time, and other requests' commands
 * go between the chunks. */
static void summaries(areq_t *q) {
  char key[2400];
  size_t end = q->next + API_SUMMARY_CHUNK;
  if (end > q->nrows)
    end = q->nrows;
  for (size_t i = q->next; i < end && !q->failed; i++) {
    snprintf(key, sizeof(key), "%s:submission:%s", q->qprefix, q->rows[i].id);
    const char *argv[] = {"HMGET", key, "summary", "tokened"};
    cb_t *c = malloc(sizeof(*c));
    if (c == NULL) {
      tally__api_fail(q, "%s", "out of memory");
      break;
    }
    *c = (cb_t){q, &q->rows[i], GOT_SUMMARY, NULL, i + 1 == end};
    if (!send_cmd(q, on_reply, c, 4, argv))
      free(c);
  }
  q->next = end;
}

/* A submission row's (timestamp, id) and whether it is of q's contest,
 * from its summary. */
static bool row_key(const areq_t *q, const row_t *w, double *ts) {
  if (w->nfields < 2)
    return false;
  cJSON *s = cJSON_Parse(w->fields[0]);
  char num[32];
  const char *cname = s != NULL ? tally__api_event_contest(s, num) : NULL;
  bool mine =
      s != NULL && strcmp(cname != NULL ? cname : "default", q->contest) == 0;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "timestamp");
  *ts = cJSON_IsNumber(t) ? t->valuedouble : 0;
  cJSON_Delete(s);
  return mine;
}

static int cmp_time(const void *x, const void *y) {
  const row_t *a = x, *b = y;
  if (a->value != b->value)
    return a->value < b->value ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* Every summary is in: the contest's submissions in time order (then by
 * id), the page after the cursor, and each page row's job, to rebuild its
 * view from. */
static void page_of(areq_t *q) {
  size_t n = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    double ts;
    if (!row_key(q, &q->rows[i], &ts)) {
      tally__api_free_row(&q->rows[i]);
      continue;
    }
    q->rows[i].value = ts;
    q->rows[n++] = q->rows[i];
  }
  q->nrows = n;
  q->total = n;
  qsort(q->rows, n, sizeof(row_t), cmp_time);
  size_t from = 0;
  while (q->has_cursor && from < n) {
    const row_t *w = &q->rows[from];
    if (w->value > q->cursor_ts ||
        (w->value == q->cursor_ts && strcmp(w->id, q->cursor_id) > 0))
      break;
    from++;
  }
  size_t to = from + q->limit < n ? from + q->limit : n;
  q->more = to < n;
  /* Only the page's rows stay. */
  for (size_t i = 0; i < n; i++)
    if (i < from || i >= to)
      tally__api_free_row(&q->rows[i]);
  memmove(q->rows, q->rows + from, (to - from) * sizeof(row_t));
  q->nrows = to - from;
  char key[2400];
  for (size_t i = 0; i < q->nrows && !q->failed; i++) {
    snprintf(key, sizeof(key), "%s:submission:%s", q->qprefix, q->rows[i].id);
    const char *argv[] = {"HMGET", key, "job"};
    ask(q, GOT_JOB, &q->rows[i], 3, argv);
  }
}

static void after_first(areq_t *q) {
  char base[600], key[2400], part[800];
  if (tally_contest_key(base, sizeof(base), q->qprefix, q->contest) != 0) {
    tally__api_fail(q, "%s", "too long a contest id");
    return;
  }
  const tally_contest_t *c = tally__api_config_of(q);
  bool elo = c != NULL && c->ranking == TALLY_RANKING_ELO;
  if (q->kind == REQ_PARTICIPANT) {
    names_to_rows(q);
    if (q->nrows > 0)
      summaries(q);
    return;
  }
  for (size_t i = 0; i < q->nrows && !q->failed; i++) {
    row_t *w = &q->rows[i];
    if (tally_rescore_key(part, sizeof(part), "", "", w->id) != 0)
      continue;
    if (q->frozen && elo) {
      /* The rating is replayed from the matches made before the freeze. */
      snprintf(key, sizeof(key), "%s:matches:%s", base, part);
      const char *argv[] = {"HGETALL", key};
      ask(q, GOT_MATCHES, w, 2, argv);
      continue;
    }
    bool icpc = c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL;
    if (q->frozen || icpc) {
      /* Each place of the row: to count what came before the freeze, or
       * every submission of a pass-fail board. */
      for (size_t t = 0; c != NULL && t < c->ntasks && !q->failed; t++) {
        char tpart[800];
        if (tally_rescore_key(tpart, sizeof(tpart), "", "", c->tasks[t]) != 0)
          continue;
        snprintf(key, sizeof(key), "%s:pt:%s:%s", base, part, tpart);
        const char *argv[] = {"HGETALL", key};
        cb_t *cb = malloc(sizeof(*cb));
        char *task = strdup(c->tasks[t]);
        if (cb == NULL || task == NULL) {
          free(cb);
          free(task);
          tally__api_fail(q, "%s", "out of memory");
          break;
        }
        *cb = (cb_t){q, w, icpc ? GOT_ICPC : GOT_PLACE, task, false};
        if (!send_cmd(q, on_reply, cb, 2, argv)) {
          free(cb->task);
          free(cb);
        }
      }
      continue;
    }
    if (elo) {
      snprintf(key, sizeof(key), "%s:elo:%s", base, part);
      const char *argv[] = {"HMGET", key, "matches", "wins", "draws", "losses"};
      ask(q, GOT_FIELDS, w, 6, argv);
    } else {
      snprintf(key, sizeof(key), "%s:taskscores:%s", base, part);
      const char *argv[] = {"HGETALL", key};
      ask(q, GOT_FIELDS, w, 2, argv);
    }
  }
}

/* How long a pass-fail ranking is answered again as it was counted. */
#define API_BOARD_TTL_MS 1000

/* Whether two freezes (NAN: none) are the same. */
static bool same_since(double x, double y) {
  return (isnan(x) && isnan(y)) || x == y;
}

/* The kept answer of q's pass-fail ranking when it is fresh, or NULL. */
static struct tally_api_board_s *kept_board(tally_api_t *a, const areq_t *q,
                                            double since) {
  uint64_t now = uv_now(a->loop);
  for (size_t i = 0; i < sizeof(a->boards) / sizeof(a->boards[0]); i++) {
    struct tally_api_board_s *k = &a->boards[i];
    if (k->at != 0 && now - k->at < API_BOARD_TTL_MS &&
        k->private_view == q->private_view && same_since(k->since, since) &&
        strcmp(k->contest, q->contest) == 0)
      return k;
  }
  return NULL;
}

void tally__api_keep_board(tally_api_t *a, const areq_t *q, const char *body,
                           size_t len) {
  struct tally_api_board_s *oldest = &a->boards[0];
  size_t n = sizeof(a->boards) / sizeof(a->boards[0]);
  for (size_t i = 0; i < n; i++) {
    struct tally_api_board_s *k = &a->boards[i];
    if (k->at != 0 && k->private_view == q->private_view &&
        strcmp(k->contest, q->contest) == 0) {
      oldest = k;
      break;
    }
    if (k->at < oldest->at)
      oldest = k;
  }
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return;
  memcpy(copy, body, len);
  copy[len] = '\0';
  free(oldest->body);
  snprintf(oldest->contest, sizeof(oldest->contest), "%s", q->contest);
  oldest->private_view = q->private_view;
  oldest->since = q->frozen ? q->freeze : NAN;
  oldest->at = uv_now(a->loop);
  oldest->body = copy;
  oldest->len = len;
}

/* A public request counts as the board does: frozen while a freeze
 * holds. Returns q's contest config (or NULL). */
static const tally_contest_t *as_the_board(tally_api_t *a, areq_t *q) {
  const tally_contest_t *c = tally__api_config_of(q);
  double since =
      q->private_view ? NAN : tally__api_freeze_since(a, c, tally__api_now());
  if (!isnan(since)) {
    q->frozen = true;
    q->freeze = since;
  }
  return c;
}

static int start(tally_api_t *a, tally_http_req_t *r, areq_t *q) {
  char base[600], key[2400], part[800];
  if (q->kind == REQ_RANKING && !q->html) {
    const tally_contest_t *c = tally__api_config_of_name(a, q->contest);
    double since =
        q->private_view ? NAN : tally__api_freeze_since(a, c, tally__api_now());
    struct tally_api_board_s *k =
        c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL
            ? kept_board(a, q, since)
            : NULL;
    if (k != NULL) {
      r->reply.type = "application/json";
      tally_buf_put(&r->reply.body, k->body, k->len);
      free_req(q);
      return 1;
    }
  }
  q->a = a;
  q->r = r;
  r->data = q;
  r->cancel = cancel;
  a->inflight++;
  q->waiting = 1; /* held while the commands are sent */
  if (q->kind == REQ_LIST) {
    /* Every queue's contests. */
    for (size_t i = 0; i < a->ntails; i++) {
      snprintf(key, sizeof(key), "%s:contests", a->tails[i].prefix);
      const char *argv[] = {"SMEMBERS", key};
      ask(q, GOT_MORE_NAMES, NULL, 2, argv);
    }
  } else if (tally_api_contest_prefix(a, q->contest, q->qprefix,
                                      sizeof(q->qprefix)) != 0 ||
             tally_contest_key(base, sizeof(base), q->qprefix, q->contest) !=
                 0) {
    tally__api_fail(q, "%s", "too long a contest id");
  } else if (q->kind == REQ_CONTEST) {
    snprintf(key, sizeof(key), "%s:contests", q->qprefix);
    const char *argv[] = {"SMEMBERS", key};
    ask(q, GOT_NAMES, NULL, 2, argv);
  } else if (q->kind == REQ_CELL) {
    /* The participant's place on the task: what the board's cell counts. */
    as_the_board(a, q);
    char tpart[800];
    if (tally_rescore_key(part, sizeof(part), "", "", q->participant) != 0 ||
        tally_rescore_key(tpart, sizeof(tpart), "", "", q->task) != 0) {
      tally__api_fail(q, "%s", "too long an id");
    } else {
      snprintf(key, sizeof(key), "%s:pt:%s:%s", base, part, tpart);
      const char *argv[] = {"HGETALL", key};
      ask(q, GOT_CELL, NULL, 2, argv);
    }
  } else if (q->kind == REQ_RANKING) {
    const tally_contest_t *c = as_the_board(a, q);
    if (c != NULL && c->ranking == TALLY_RANKING_ELO)
      snprintf(key, sizeof(key), "%s:elo", base);
    else
      snprintf(key, sizeof(key), "%s:ranking%s", base,
               q->private_view ? "" : ":public");
    cb_t *cb = malloc(sizeof(*cb));
    if (cb != NULL) {
      *cb = (cb_t){q, NULL, GOT_ZSET, NULL, false};
      const char *argv[] = {"ZRANGE", key, "0", "-1", "WITHSCORES"};
      if (!send_cmd(q, on_first, cb, 5, argv))
        free(cb);
    }
    snprintf(key, sizeof(key), "%s:tasks", base);
    const char *names[] = {"SMEMBERS", key};
    ask(q, GOT_NAMES, NULL, 2, names);
  } else {
    if (tally_rescore_key(part, sizeof(part), "", "", q->participant) != 0) {
      tally__api_fail(q, "%s", "too long a participant id");
    } else {
      snprintf(key, sizeof(key), "%s:taskscores:%s", base, part);
      const char *argv[] = {"HGETALL", key};
      ask(q, GOT_SELF, NULL, 2, argv);
      tally_rescore_key(key, sizeof(key), q->qprefix,
                        ":index:participant:", q->participant);
      cb_t *cb = malloc(sizeof(*cb));
      if (cb != NULL) {
        *cb = (cb_t){q, NULL, GOT_NAMES, NULL, false};
        const char *members[] = {"SMEMBERS", key};
        if (!send_cmd(q, on_first, cb, 2, members))
          free(cb);
      }
    }
  }
  one_done(q);
  return 2;
}

/* The submissions of a participant come back as names: make them rows. */
static void names_to_rows(areq_t *q) {
  q->rows = calloc(q->nnames + 1, sizeof(row_t));
  if (q->rows == NULL)
    return;
  for (size_t i = 0; i < q->nnames; i++) {
    q->rows[i].id = q->names[i];
    q->nrows++;
  }
  free(q->names);
  q->names = NULL;
  q->nnames = 0;
}

/* GET / and GET /contests/C. */
static int route_page(tally_api_t *a, tally_http_req_t *r) {
  if (a->closing)
    return tally__api_answer_now(r, 503, "tallyd is stopping");
  areq_t *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return tally__api_answer_now(r, 503, "out of memory");
  q->html = true;
  const char *p = r->raw_path;
  if (strcmp(p, "/") == 0) {
    q->kind = REQ_LIST;
    return start(a, r, q);
  }
  p += strlen("/contests/");
  if (!tally_http_segment(&p, q->contest, sizeof(q->contest)) || *p != '\0') {
    free(q);
    r->reply.status = 404;
    r->reply.type = "text/html; charset=utf-8";
    tally_buf_puts(&r->reply.body,
                   "<!doctype html><title>Not found</title><p>Not found. "
                   "<a href=\"/\">Contests</a></p>\n");
    return 1;
  }
  q->kind = REQ_RANKING;
  return start(a, r, q);
}

/* A participant's page: ?limit= (default API_PAGE_DEFAULT, at most
 * API_PAGE_MAX) and ?cursor= (the next_cursor of the page before, as
 * given: "<timestamp>~<submission>"). Returns NULL, or what is wrong. */
static const char *page_args(const tally_http_req_t *r, areq_t *q) {
  const char *limit = tally_http_arg(r, "limit");
  q->limit = API_PAGE_DEFAULT;
  if (limit != NULL) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(limit, &end, 10);
    if (limit[0] < '0' || limit[0] > '9' || *end != '\0' || errno != 0 ||
        v < 1 || v > API_PAGE_MAX)
      return "limit: must be an integer from 1 to " API_PAGE_MAX_TEXT;
    q->limit = v;
  }
  const char *cursor = tally_http_arg(r, "cursor");
  if (cursor != NULL) {
    const char *tilde = strchr(cursor, '~');
    char *end;
    errno = 0;
    double ts = tilde != NULL ? strtod(cursor, &end) : NAN;
    if (tilde == NULL || end != tilde || errno != 0 || !isfinite(ts) ||
        strlen(tilde + 1) == 0 || strlen(tilde + 1) >= sizeof(q->cursor_id))
      return "cursor: must be a next_cursor this endpoint gave";
    q->has_cursor = true;
    q->cursor_ts = ts;
    snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", tilde + 1);
  }
  return NULL;
}

int tally_api_route(void *api, tally_http_req_t *r) {
  tally_api_t *a = api;
  /* Split as sent: each segment is decoded once, so that an id holding
   * '/' or '%' (sent as %2F, %25) is one segment, read as it was. */
  const char *p = r->raw_path;
  if (strcmp(p, "/") == 0 || strncmp(p, "/contests/", 10) == 0)
    return route_page(a, r);
  int ccs = tally_ccs_route(a, r);
  if (ccs != 0)
    return ccs;
  if (strncmp(p, "/api/", 5) != 0 && strcmp(p, "/api") != 0)
    return 0;
  if (a->closing)
    return tally__api_answer_now(r, 503, "tallyd is stopping");
  areq_t *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return tally__api_answer_now(r, 503, "out of memory");
  if (strcmp(p, "/api/contests") == 0 || strcmp(p, "/api/contests/") == 0) {
    q->kind = REQ_LIST;
    return start(a, r, q);
  }
  /* "/api" alone has no "/" to step over. */
  p += strcmp(p, "/api") == 0 ? strlen("/api") : strlen("/api/");
  if (strncmp(p, "contests/", 9) != 0 ||
      (p += 9, !tally_http_segment(&p, q->contest, sizeof(q->contest)))) {
    free(q);
    return tally__api_answer_now(r, 404,
                                 "not found: the API serves /api/contests, "
                                 "/api/contests/C, /api/contests/C/ranking, "
                                 "/api/contests/C/ranking/P/T and "
                                 "/api/contests/C/participants/P");
  }
  if (*p == '\0') {
    q->kind = REQ_CONTEST;
  } else if (strcmp(p, "/ranking") == 0 ||
             (strncmp(p, "/ranking/", 9) == 0 &&
              (p += 9, tally_http_segment(&p, q->participant,
                                          sizeof(q->participant))) &&
              *p == '/' &&
              (p += 1, tally_http_segment(&p, q->task, sizeof(q->task))) &&
              *p == '\0')) {
    q->kind = q->task[0] != '\0' ? REQ_CELL : REQ_RANKING;
    const char *view = tally_http_arg(r, "view");
    if (view != NULL && strcmp(view, "private") == 0) {
      if (!tally__api_is_operator(a, r)) {
        free(q);
        return tally__api_answer_now(
            r, a->token == NULL ? 403 : 401,
            a->token == NULL ? "the private view needs the operator token, "
                               "and this tallyd has none (--http-token-file)"
                             : "the private view needs the operator's "
                               "bearer token");
      }
      q->private_view = true;
    } else if (view != NULL && strcmp(view, "public") != 0) {
      free(q);
      return tally__api_answer_now(r, 400, "view: must be public or private");
    }
  } else if (strcmp(p, "/events") == 0) {
    char contest[256];
    snprintf(contest, sizeof(contest), "%s", q->contest);
    free(q);
    return tally__api_start_events(a, r, contest);
  } else if (strncmp(p, "/participants/", 14) == 0 &&
             (p += 14,
              tally_http_segment(&p, q->participant, sizeof(q->participant))) &&
             *p == '\0') {
    q->kind = REQ_PARTICIPANT;
    const char *why = page_args(r, q);
    if (why != NULL) {
      free(q);
      return tally__api_answer_now(r, 400, why);
    }
    const char *t = tally__api_bearer(r);
    char want[TALLY_TOKEN_HEX + 1];
    if (tally__api_is_operator(a, r)) {
      q->private_view = true;
    } else if (a->secret[0] == '\0') {
      free(q);
      return tally__api_answer_now(r, 503,
                                   "participant tokens cannot be checked yet: "
                                   "Redis has not answered");
    } else {
      tally_participant_token(a->secret, q->participant, want);
      if (t == NULL || !tally__api_same_secret(t, want)) {
        free(q);
        return tally__api_answer_now(
            r, 401,
            "a participant's endpoint needs that participant's "
            "token (tally token --participant P) or the "
            "operator's, as a bearer token");
      }
    }
  } else {
    free(q);
    return tally__api_answer_now(r, 404, "not found");
  }
  return start(a, r, q);
}
