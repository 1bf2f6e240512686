/* The CCS Contest API's routes, its reads of a contest's submissions, and
 * its event feed's stream (ccs.h). */
#include "daemon/ccs.h"
#include "daemon/ccs_int.h"

#include "redis/keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Submissions read at once: the API's connection serves other requests
 * between chunks. */
#define CCS_CHUNK 256
/* An open feed with nothing to say sends a newline this often (the
 * specification asks for one at least every 120 s). */
#define CCS_KEEPALIVE_MS 60000
/* Each open feed reads its whole contest each second: at most this many
 * are open at once (the rest are refused, 503), and one whose client has
 * left this much unread is ended (it reconnects with since_token). */
#define CCS_FEEDS_MAX 64
#define CCS_FEED_UNREAD_MAX (64u << 20)

typedef struct ccs_req_s {
  ccs_read_t rd;
  tally_http_req_t *r; /* NULL once cancelled */
  int kind;
  char object[256];
  bool has_object;
  bool operator_view;
  bool has_since;
  unsigned long long since_ms, since_seq;
} ccs_req_t;

/* An open event feed: read again each second, what changed sent. */
struct tally_ccs_feed_s {
  tally_http_stream_t stream;
  tally_api_t *a;
  char contest[256];
  bool operator_view;
  bool has_since;
  unsigned long long since_ms, since_seq;
  ccs_sent_t *sent;
  tally_buf_t out;
  size_t off;
  uint64_t last_write;
  bool reading, gone, ended, linked;
  struct tally_ccs_feed_s *prev, *next;
};
typedef struct tally_ccs_feed_s ccs_feed_t;

void tally__ccs_read_free(ccs_read_t *rd) {
  for (size_t i = 0; i < rd->nids; i++)
    free(rd->ids[i]);
  free(rd->ids);
  for (size_t i = 0; i < rd->nsubs; i++)
    tally__ccs_sub_free(&rd->subs[i]);
  free(rd->subs);
  rd->ids = NULL;
  rd->subs = NULL;
  rd->nids = rd->nsubs = 0;
}

static void read_fail(ccs_read_t *rd, const char *fmt, const char *what) {
  if (!rd->failed)
    snprintf(rd->why, sizeof(rd->why), fmt, what);
  rd->failed = true;
}

static void one_done(ccs_read_t *rd);
static void next_chunk(ccs_read_t *rd);

/* A summary into a submission; false for one the board does not count
 * (unofficial, or not a submission of the read's contest). */
bool tally__ccs_sub_of(ccs_read_t *rd, const char *id,
                       const redisReply *summary, const redisReply *entry,
                       const redisReply *tokened, ccs_sub_t *s) {
  if (summary == NULL || summary->type != REDIS_REPLY_STRING)
    return false;
  cJSON *j = cJSON_ParseWithLength(summary->str, summary->len);
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "participant");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "task");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "contest");
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "timestamp");
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "judgement");
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(j, "language");
  const cJSON *ep = cJSON_GetObjectItemCaseSensitive(j, "entry_point");
  bool ok = cJSON_IsString(u) && cJSON_IsString(t) && cJSON_IsString(c) &&
            strcmp(c->valuestring, rd->contest) == 0 &&
            !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "official"));
  if (ok) {
    memset(s, 0, sizeof(*s));
    s->id = strdup(id);
    s->participant = strdup(u->valuestring);
    s->task = strdup(t->valuestring);
    s->language = cJSON_IsString(lang) ? strdup(lang->valuestring) : NULL;
    s->entry_point = cJSON_IsString(ep) ? strdup(ep->valuestring) : NULL;
    s->timestamp = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
    bool scored = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "scored"));
    if (scored && cJSON_IsString(g))
      snprintf(s->judgement, sizeof(s->judgement), "%s", g->valuestring);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "public_score");
    s->scored = scored && cJSON_IsNumber(ps);
    s->public_score = cJSON_IsNumber(ps) ? ps->valuedouble : 0;
    const cJSON *pst = cJSON_GetObjectItemCaseSensitive(j, "public_subtasks");
    if (cJSON_IsArray(pst) &&
        (s->public_subtasks = cJSON_PrintUnformatted(pst)) == NULL)
      read_fail(rd, "%s", "out of memory");
    s->tokened = tokened != NULL && tokened->type == REDIS_REPLY_STRING &&
                 strcmp(tokened->str, "1") == 0;
    if (entry != NULL && entry->type == REDIS_REPLY_STRING &&
        sscanf(entry->str, "%llu-%llu", &s->ems, &s->eseq) != 2)
      s->ems = s->eseq = 0;
    if (s->id == NULL || s->participant == NULL || s->task == NULL) {
      tally__ccs_sub_free(s);
      read_fail(rd, "%s", "out of memory");
      ok = false;
    }
  }
  cJSON_Delete(j);
  return ok;
}

typedef struct {
  ccs_read_t *rd;
  size_t i;  /* the id's index */
  bool last; /* the chunk's last */
} chunk_cb_t;

static void on_summary(tally_cluster_t *k, redisReply *reply, void *priv) {
  chunk_cb_t *cb = priv;
  ccs_read_t *rd = cb->rd;
  if (reply == NULL)
    read_fail(rd, "Redis did not answer: %.200s", k->why);
  else if (reply->type == REDIS_REPLY_ERROR)
    read_fail(rd, "Redis refused a read: %.200s", reply->str);
  else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
           !rd->failed) {
    ccs_sub_t s;
    if (tally__ccs_sub_of(rd, rd->ids[cb->i], reply->element[0],
                          reply->element[1], reply->element[2], &s))
      rd->subs[rd->nsubs++] = s;
  }
  if (cb->last && !rd->failed)
    next_chunk(rd);
  free(cb);
  one_done(rd);
}

static bool send_read(ccs_read_t *rd, tally_cluster_cb cb, void *priv, int argc,
                      const char **argv) {
  size_t lens[5];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_cluster_command(&rd->a->cl, argv[1], lens[1], API_TIMEOUT_MS, cb,
                            priv, argc, argv, lens) != 0) {
    read_fail(rd, "%s", "Redis is not connected");
    return false;
  }
  rd->waiting++;
  return true;
}

static void next_chunk(ccs_read_t *rd) {
  size_t end =
      rd->next + CCS_CHUNK < rd->nids ? rd->next + CCS_CHUNK : rd->nids;
  for (size_t i = rd->next; i < end && !rd->failed; i++) {
    char key[2400];
    snprintf(key, sizeof(key), "%s:submission:%s", rd->qprefix, rd->ids[i]);
    const char *argv[] = {"HMGET", key, "summary", "result_entry", "tokened"};
    chunk_cb_t *cb = malloc(sizeof(*cb));
    if (cb == NULL) {
      read_fail(rd, "%s", "out of memory");
      break;
    }
    *cb = (chunk_cb_t){rd, i, i + 1 == end};
    if (!send_read(rd, on_summary, cb, 5, argv))
      free(cb);
  }
  rd->next = end;
}

static void on_ids(tally_cluster_t *k, redisReply *reply, void *priv) {
  ccs_read_t *rd = priv;
  if (reply == NULL)
    read_fail(rd, "Redis did not answer: %.200s", k->why);
  else if (reply->type == REDIS_REPLY_ERROR)
    read_fail(rd, "Redis refused a read: %.200s", reply->str);
  else if (reply->type == REDIS_REPLY_ARRAY) {
    rd->ids = calloc(reply->elements + 1, sizeof(char *));
    rd->subs = calloc(reply->elements + 1, sizeof(ccs_sub_t));
    if (rd->ids == NULL || rd->subs == NULL)
      read_fail(rd, "%s", "out of memory");
    for (size_t i = 0; !rd->failed && i < reply->elements; i++) {
      const redisReply *e = reply->element[i];
      rd->ids[rd->nids] = strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
      if (rd->ids[rd->nids] == NULL)
        read_fail(rd, "%s", "out of memory");
      else
        rd->nids++;
    }
    if (!rd->failed)
      next_chunk(rd);
  }
  one_done(rd);
}

static void one_done(ccs_read_t *rd) {
  if (--rd->waiting > 0)
    return;
  rd->a->inflight--;
  rd->done(rd);
}

/* Starts reading rd's contest (contest and a set); rd->done follows, from
 * the loop. */
void tally__ccs_read_start(ccs_read_t *rd) {
  tally_api_t *a = rd->a;
  a->inflight++;
  rd->waiting = 1; /* held while the first command is sent */
  char key[2400];
  if (tally_api_contest_prefix(a, rd->contest, rd->qprefix,
                               sizeof(rd->qprefix)) != 0 ||
      tally_rescore_key(key, sizeof(key), rd->qprefix,
                        ":index:contest:", rd->contest) != 0) {
    read_fail(rd, "%s", "too long a contest id");
  } else {
    const char *argv[] = {"SMEMBERS", key};
    send_read(rd, on_ids, rd, 2, argv);
  }
  one_done(rd);
}

/* The configured pass-fail contest whose CCS id is id, or NULL. */
static const tally_contest_t *contest_of(const tally_api_t *a, const char *id) {
  const tally_contestset_t *cs = a->contests;
  for (size_t i = 0; cs != NULL && i < cs->count; i++) {
    char cid[CCS_ID_MAX + 1];
    if (cs->contests[i].scoring == TALLY_SCORING_PASS_FAIL &&
        strcmp(tally__ccs_id(cs->contests[i].name, cid), id) == 0)
      return &cs->contests[i];
  }
  return NULL;
}

/* The configured pass-fail contest called name, or NULL. */
static const tally_contest_t *contest_named(const tally_api_t *a,
                                            const char *name) {
  const tally_contest_t *c = tally__api_config_of_name(a, name);
  return c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL ? c : NULL;
}

static int answer_error(tally_http_req_t *r, unsigned status, const char *msg) {
  r->reply.status = status;
  r->reply.type = "application/json";
  char code[32];
  snprintf(code, sizeof(code), "{\"code\":%u,\"message\":", status);
  tally_buf_puts(&r->reply.body, code);
  tally_json_str(&r->reply.body, msg);
  tally_buf_puts(&r->reply.body, "}\n");
  return 1;
}

/* The endpoints under a contest, by name. */
static const struct {
  const char *name;
  int kind;
} endpoints[] = {
    {"judgement-types", CCS_JTYPES},  {"languages", CCS_LANGUAGES},
    {"problems", CCS_PROBLEMS},       {"groups", CCS_GROUPS},
    {"organizations", CCS_ORGS},      {"teams", CCS_TEAMS},
    {"submissions", CCS_SUBMISSIONS}, {"judgements", CCS_JUDGEMENTS},
    {"scoreboard", CCS_SCOREBOARD},   {"state", CCS_STATE},
    {"awards", CCS_AWARDS},           {"event-feed", CCS_FEED},
    {"access", CCS_ACCESS},
};

/* The properties of the objects, as /access lists them. */
static const char access_json[] =
    "{\"capabilities\":[],\"endpoints\":["
    "{\"type\":\"contest\",\"properties\":[\"id\",\"name\",\"formal_name\","
    "\"start_time\",\"duration\",\"scoreboard_freeze_duration\","
    "\"scoreboard_thaw_time\",\"scoreboard_type\",\"penalty_time\"]},"
    "{\"type\":\"judgement-types\",\"properties\":[\"id\",\"name\","
    "\"penalty\",\"solved\"]},"
    "{\"type\":\"languages\",\"properties\":[\"id\",\"name\","
    "\"entry_point_required\",\"extensions\"]},"
    "{\"type\":\"problems\",\"properties\":[\"id\",\"label\",\"name\","
    "\"ordinal\",\"time_limit\",\"test_data_count\"]},"
    "{\"type\":\"groups\",\"properties\":[\"id\",\"name\"]},"
    "{\"type\":\"organizations\",\"properties\":[\"id\",\"name\"]},"
    "{\"type\":\"teams\",\"properties\":[\"id\",\"name\",\"label\","
    "\"display_name\",\"organization_id\",\"group_ids\"]},"
    "{\"type\":\"state\",\"properties\":[\"started\",\"frozen\",\"ended\","
    "\"thawed\",\"finalized\",\"end_of_updates\"]},"
    "{\"type\":\"submissions\",\"properties\":[\"id\",\"language_id\","
    "\"problem_id\",\"team_id\",\"time\",\"contest_time\","
    "\"entry_point\",\"files\"]},"
    "{\"type\":\"judgements\",\"properties\":[\"id\",\"submission_id\","
    "\"judgement_type_id\",\"start_time\",\"start_contest_time\","
    "\"end_time\",\"end_contest_time\"]},"
    "{\"type\":\"awards\",\"properties\":[\"id\",\"citation\","
    "\"team_ids\"]}]}\n";

/* Keeps the objects of a collection answer whose ID properties equal the
 * request's query arguments of the same name (the specification's
 * filtering); text is the answer. Returns 0 or -1 (out of memory). */
static int filter(const tally_http_req_t *r, int kind, tally_buf_t *b) {
  static const char *const props[] = {"team_id",           "problem_id",
                                      "language_id",       "submission_id",
                                      "judgement_type_id", "organization_id"};
  const char *want[6];
  bool any = false;
  for (size_t i = 0; i < 6; i++)
    any |= (want[i] = tally_http_arg(r, props[i])) != NULL;
  if (!any || kind == CCS_SCOREBOARD || kind == CCS_STATE)
    return 0;
  cJSON *list = cJSON_ParseWithLength(b->data, b->len);
  if (!cJSON_IsArray(list)) {
    cJSON_Delete(list);
    return 0;
  }
  for (cJSON *item = list->child, *next; item != NULL; item = next) {
    next = item->next;
    bool keep = true;
    for (size_t i = 0; i < 6 && keep; i++) {
      if (want[i] == NULL)
        continue;
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, props[i]);
      /* An empty argument asks for null (or absent). */
      keep = want[i][0] == '\0'
                 ? v == NULL || cJSON_IsNull(v)
                 : cJSON_IsString(v) && strcmp(v->valuestring, want[i]) == 0;
    }
    if (!keep)
      cJSON_Delete(cJSON_DetachItemViaPointer(list, item));
  }
  char *text = cJSON_PrintUnformatted(list);
  cJSON_Delete(list);
  if (text == NULL)
    return -1;
  tally_buf_reset(b);
  tally_buf_puts(b, text);
  tally_buf_putc(b, '\n');
  free(text);
  return 0;
}

static void req_cancel(tally_http_req_t *r) {
  ccs_req_t *q = r->data;
  q->r = NULL;
}

static void req_done(ccs_read_t *rd) {
  ccs_req_t *q = rd->owner;
  tally_http_req_t *r = q->r;
  const tally_contest_t *c = contest_named(rd->a, rd->contest);
  if (r != NULL) {
    tally_buf_t *b = &r->reply.body;
    r->reply.type = "application/json";
    ccs_model_t m;
    if (rd->failed) {
      answer_error(r, 503, rd->why);
    } else if (c == NULL) {
      answer_error(r, 404, "the contest is no longer configured");
    } else if (tally__ccs_model(&m, rd->a, c, q->operator_view, rd->subs,
                                rd->nsubs) != 0) {
      rd->subs = NULL;
      rd->nsubs = 0;
      answer_error(r, 503, "out of memory");
    } else {
      rd->subs = NULL;
      rd->nsubs = 0;
      if (q->kind == CCS_FEED) {
        r->reply.type = "application/x-ndjson";
        if (tally__ccs_feed(&m, NULL, q->has_since, q->since_ms, q->since_seq,
                            b) != 0)
          b->oom = true;
      } else {
        r->reply.status =
            tally__ccs_answer(&m, q->kind, q->has_object ? q->object : NULL, b);
        if (r->reply.status == 200 && !q->has_object &&
            filter(r, q->kind, b) != 0)
          b->oom = true;
      }
      tally__ccs_model_free(&m);
    }
    tally_http_answer(r);
  }
  tally__ccs_read_free(rd);
  free(q);
}

/* The event feed's stream. */

static void feed_free(ccs_feed_t *f) {
  tally__ccs_sent_free(f->sent);
  tally_buf_close(&f->out);
  free(f);
}

static void feed_unlink(ccs_feed_t *f) {
  if (f->linked)
    __atomic_sub_fetch(&f->a->nccs_feeds, 1, __ATOMIC_RELAXED);
  f->linked = false;
  if (f->prev != NULL)
    f->prev->next = f->next;
  else if (f->a->ccs_feeds == f)
    f->a->ccs_feeds = f->next;
  if (f->next != NULL)
    f->next->prev = f->prev;
  f->prev = f->next = NULL;
}

static size_t feed_pull(tally_http_stream_t *s, char *buf, size_t max,
                        bool *end) {
  ccs_feed_t *f = s->data;
  size_t left = f->out.len - f->off;
  if (left == 0) {
    tally_buf_reset(&f->out);
    f->off = 0;
    *end = f->ended;
    return 0;
  }
  size_t n = left < max ? left : max;
  memcpy(buf, f->out.data + f->off, n);
  f->off += n;
  f->last_write = uv_now(f->a->loop);
  return n;
}

static void feed_closed(tally_http_stream_t *s) {
  ccs_feed_t *f = s->data;
  f->gone = true;
  feed_unlink(f);
  if (!f->reading)
    feed_free(f);
}

static void feed_done(ccs_read_t *rd) {
  ccs_feed_t *f = rd->owner;
  f->reading = false;
  const tally_contest_t *c = contest_named(rd->a, rd->contest);
  ccs_model_t m;
  if (!f->gone && !rd->failed && c != NULL &&
      tally__ccs_model(&m, rd->a, c, f->operator_view, rd->subs, rd->nsubs) ==
          0) {
    rd->subs = NULL;
    rd->nsubs = 0;
    size_t before = f->out.len;
    if (tally__ccs_feed(&m, f->sent, f->has_since, f->since_ms, f->since_seq,
                        &f->out) != 0 ||
        f->out.oom) {
      /* Out of memory: the client reconnects and reads anew. */
      f->ended = true;
      f->stream.abort = true;
    }
    tally__ccs_model_free(&m);
    if (f->out.len - f->off > CCS_FEED_UNREAD_MAX) {
      tally_log(f->a->log, TALLY_LOG_WARN, "ccs",
                "an event feed of contest %s left %zu bytes unread: ended",
                f->contest, f->out.len - f->off);
      f->ended = true;
      f->stream.abort = true;
    }
    if (f->out.len > before || f->ended)
      tally_http_stream_wake(&f->stream);
  } else if (!f->gone && c == NULL) {
    f->ended = true;
    tally_http_stream_wake(&f->stream);
  }
  tally__ccs_read_free(rd);
  free(rd);
  if (f->gone)
    feed_free(f);
}

/* Reads f's contest again, unless a read is in flight. */
static void feed_read(ccs_feed_t *f) {
  if (f->reading || f->gone || f->ended || f->a->closing)
    return;
  ccs_read_t *rd = calloc(1, sizeof(*rd));
  if (rd == NULL)
    return;
  rd->a = f->a;
  snprintf(rd->contest, sizeof(rd->contest), "%s", f->contest);
  rd->done = feed_done;
  rd->owner = f;
  f->reading = true;
  tally__ccs_read_start(rd);
}

void tally__ccs_tick(tally_api_t *a) {
  uint64_t now = uv_now(a->loop);
  for (ccs_feed_t *f = a->ccs_feeds; f != NULL; f = f->next) {
    if (f->off == f->out.len && now - f->last_write >= CCS_KEEPALIVE_MS) {
      tally_buf_putc(&f->out, '\n');
      tally_http_stream_wake(&f->stream);
      f->last_write = now;
    }
    feed_read(f);
  }
}

void tally__ccs_end_feeds(tally_api_t *a) {
  for (ccs_feed_t *f = a->ccs_feeds; f != NULL; f = f->next) {
    f->ended = true;
    tally_http_stream_wake(&f->stream);
  }
}

static int start_feed(tally_api_t *a, tally_http_req_t *r, const char *contest,
                      const ccs_req_t *q) {
  if (__atomic_load_n(&a->nccs_feeds, __ATOMIC_RELAXED) >= CCS_FEEDS_MAX)
    return answer_error(r, 503,
                        "too many event feeds are open: read the feed with "
                        "stream=false, or through a Contest Data Server");
  ccs_feed_t *f = calloc(1, sizeof(*f));
  if (f == NULL || (f->sent = tally__ccs_sent_new()) == NULL) {
    free(f);
    return answer_error(r, 503, "out of memory");
  }
  f->a = a;
  snprintf(f->contest, sizeof(f->contest), "%s", contest);
  f->operator_view = q->operator_view;
  f->has_since = q->has_since;
  f->since_ms = q->since_ms;
  f->since_seq = q->since_seq;
  f->last_write = uv_now(a->loop);
  tally_buf_init(&f->out);
  f->stream.pull = feed_pull;
  f->stream.closed = feed_closed;
  f->stream.data = f;
  f->next = a->ccs_feeds;
  if (a->ccs_feeds != NULL)
    a->ccs_feeds->prev = f;
  a->ccs_feeds = f;
  f->linked = true;
  __atomic_add_fetch(&a->nccs_feeds, 1, __ATOMIC_RELAXED);
  r->reply.type = "application/x-ndjson";
  r->reply.stream = &f->stream;
  feed_read(f);
  return 1;
}

int tally_ccs_route(tally_api_t *a, tally_http_req_t *r) {
  const char *p = r->raw_path;
  if (strncmp(p, "/ccs", 4) != 0 || (p[4] != '\0' && p[4] != '/'))
    return 0;
  p += 4;
  if (a->closing)
    return answer_error(r, 503, "tallyd is stopping");
  r->reply.type = "application/json";
  tally_buf_t *b = &r->reply.body;
  if (*p == '\0' || strcmp(p, "/") == 0) {
    tally_buf_puts(b, "{\"version\":\"2023-06\",\"version_url\":"
                      "\"https://ccs-specs.icpc.io/2023-06/contest_api\","
                      "\"provider\":{\"name\":\"tally\"}}\n");
    return 1;
  }
  bool operator_view = tally__api_is_operator(a, r);
  if (strcmp(p, "/contests") == 0 || strcmp(p, "/contests/") == 0) {
    tally_buf_putc(b, '[');
    const tally_contestset_t *cs = a->contests;
    bool first = true;
    for (size_t i = 0; cs != NULL && i < cs->count; i++) {
      if (cs->contests[i].scoring != TALLY_SCORING_PASS_FAIL)
        continue;
      ccs_model_t m = {.c = &cs->contests[i]};
      if (!first)
        tally_buf_putc(b, ',');
      first = false;
      tally__ccs_answer(&m, CCS_CONTEST, NULL, b);
      b->len--; /* its newline */
    }
    tally_buf_puts(b, "]\n");
    return 1;
  }
  char cid[256], endpoint[64];
  if (strncmp(p, "/contests/", 10) != 0 ||
      (p += 10, !tally_http_segment(&p, cid, sizeof(cid))))
    return answer_error(r, 404,
                        "not found: the CCS Contest API serves /ccs, "
                        "/ccs/contests and /ccs/contests/ID/...");
  const tally_contest_t *c = contest_of(a, cid);
  if (c == NULL)
    return answer_error(r, 404,
                        "no such contest: the CCS Contest API serves the "
                        "configured pass-fail contests, by their CCS ids");
  if (*p == '\0' || strcmp(p, "/") == 0) {
    ccs_model_t m = {.c = c};
    tally__ccs_answer(&m, CCS_CONTEST, NULL, b);
    return 1;
  }
  int kind = -1;
  if (*p == '/' && (p++, tally_http_segment(&p, endpoint, sizeof(endpoint))))
    for (size_t i = 0; i < sizeof(endpoints) / sizeof(endpoints[0]); i++)
      if (strcmp(endpoints[i].name, endpoint) == 0)
        kind = endpoints[i].kind;
  if (kind < 0)
    return answer_error(r, 404, "no such endpoint");
  ccs_req_t *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return answer_error(r, 503, "out of memory");
  q->kind = kind;
  q->operator_view = operator_view;
  if (*p == '/' && p[1] != '\0') {
    p++;
    bool single = kind != CCS_SCOREBOARD && kind != CCS_STATE &&
                  kind != CCS_FEED && kind != CCS_ACCESS;
    if (!single || !tally_http_segment(&p, q->object, sizeof(q->object)) ||
        *p != '\0') {
      free(q);
      return answer_error(r, 404, "no such object");
    }
    q->has_object = true;
  } else if (strcmp(p, "/") != 0 && *p != '\0') {
    free(q);
    return answer_error(r, 404, "no such endpoint");
  }
  if (kind == CCS_ACCESS) {
    free(q);
    tally_buf_puts(b, access_json);
    return 1;
  }
  const char *since = tally_http_arg(r, "since_token");
  if (kind == CCS_FEED && since != NULL) {
    char tail;
    if (sscanf(since, "%llu-%llu%c", &q->since_ms, &q->since_seq, &tail) != 2) {
      free(q);
      return answer_error(r, 400,
                          "since_token: not a token of this feed (a result "
                          "entry's id, \"<ms>-<seq>\")");
    }
    q->has_since = true;
  }
  const char *stream = tally_http_arg(r, "stream");
  if (kind == CCS_FEED && (stream == NULL || strcmp(stream, "false") != 0)) {
    int rc = start_feed(a, r, c->name, q);
    free(q);
    return rc;
  }
  q->r = r;
  q->rd.a = a;
  snprintf(q->rd.contest, sizeof(q->rd.contest), "%s", c->name);
  q->rd.done = req_done;
  q->rd.owner = q;
  r->data = q;
  r->cancel = req_cancel;
  tally__ccs_read_start(&q->rd);
  return 2;
}
