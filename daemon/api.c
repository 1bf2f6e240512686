/* The results API: routing, access, and the Redis reads behind each
 * answer. Each request sends its commands at once on the API's own
 * connection (pipelined) and builds its answer when the last reply is
 * in; replies are copied out, since they live only in their callback. */
#include "daemon/api.h"

#include "config/error.h"
#include "redis/keys.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API_TIMEOUT_MS 5000

enum { REQ_LIST, REQ_CONTEST, REQ_RANKING, REQ_PARTICIPANT };

/* One row of a ranking, or one submission of a participant. */
typedef struct row_s {
  char *id;
  double value;
  /* The task scores hash (task, JSON) pairs, or the Elo counts, or a
   * submission's fields: whatever the request asked for, as text. */
  char **fields;
  size_t nfields;
} row_t;

typedef struct areq_s {
  tally_api_t *a;
  tally_http_req_t *r; /* NULL once cancelled */
  int kind;
  char contest[256];
  char participant[256];
  bool private_view; /* the operator's view */
  unsigned waiting;
  bool failed;
  char why[256];
  row_t *rows;
  size_t nrows;
  char **names; /* a set's members: contests, or a contest's tasks */
  size_t nnames;
  row_t self; /* a participant's task scores */
  bool has_self;
} areq_t;

/* Reading the operator token and the secret. */

static char *read_token(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, errlen, "--http-token-file %s: cannot read it", path);
    return NULL;
  }
  char line[512];
  char *token = NULL;
  if (fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strlen(line) >= 16)
      token = strdup(line);
  }
  fclose(f);
  if (token == NULL)
    snprintf(err, errlen,
             "--http-token-file %s: its first line must hold a token of at "
             "least 16 characters",
             path);
  return token;
}

/* Equal strings, in a time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  unsigned char diff = n != m;
  for (size_t i = 0; i < n; i++)
    diff |= (unsigned char)(a[i] ^ b[i % (m ? m : 1)]);
  return diff == 0;
}

/* The bearer token of r, or NULL. */
static const char *bearer(const tally_http_req_t *r) {
  const char *h = tally_http_header(r, "Authorization");
  if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
    return NULL;
  return h + 7;
}

static bool is_operator(const tally_api_t *a, const tally_http_req_t *r) {
  const char *t = bearer(r);
  return t != NULL && a->token != NULL && same_secret(t, a->token);
}

static void on_secret(tally_redis_t *rd, redisReply *reply, void *priv) {
  tally_api_t *a = rd->data;
  (void)priv;
  if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
      reply->len == TALLY_SECRET_HEX)
    memcpy(a->secret, reply->str, reply->len + 1);
  else if (reply != NULL)
    tally_log(a->log, TALLY_LOG_ERROR, "api",
              "cannot read the participant token secret: %s",
              reply->type == REDIS_REPLY_ERROR ? reply->str : "no string");
}

/* On every connect: the secret participant tokens are keyed with, made
 * once (SET NX) by whichever tallyd or tally comes first. */
static void on_up(tally_redis_t *rd) {
  tally_api_t *a = rd->data;
  char hex[TALLY_SECRET_HEX + 1];
  if (tally_secret_new(hex) != 0) {
    tally_log(a->log, TALLY_LOG_ERROR, "api", "getrandom failed");
    return;
  }
  char key[160];
  snprintf(key, sizeof(key), "%s:secret", a->prefix);
  const char *argv[] = {"EVAL", tally_secret_script, "1", key, hex};
  size_t lens[5];
  for (int i = 0; i < 5; i++)
    lens[i] = strlen(argv[i]);
  tally_redis_command(rd, API_TIMEOUT_MS, on_secret, NULL, 5, argv, lens);
}

int tally_api_init(tally_api_t *a, uv_loop_t *loop, const char *url,
                   const char *token_file, char *err, size_t errlen) {
  a->loop = loop;
  a->secret[0] = '\0';
  a->inflight = 0;
  a->closing = false;
  a->close_cb = NULL;
  a->token = NULL;
  if (token_file != NULL &&
      (a->token = read_token(token_file, err, errlen)) == NULL)
    return TALLY_EINVAL;
  if (tally_redis_init(loop, &a->rd, url, err, errlen) != 0) {
    free(a->token);
    a->token = NULL;
    return TALLY_EINVAL;
  }
  a->rd.data = a;
  a->rd.on_up = on_up;
  return 0;
}

void tally_api_start(tally_api_t *a) {
  tally_redis_start(&a->rd);
}

static void on_closed(tally_redis_t *rd) {
  tally_api_t *a = rd->data;
  free(a->token);
  a->token = NULL;
  if (a->close_cb != NULL)
    a->close_cb(a);
}

void tally_api_close(tally_api_t *a, void (*close_cb)(tally_api_t *a)) {
  if (a->closing)
    return;
  a->closing = true;
  a->close_cb = close_cb;
  /* Commands in flight fail: their requests are answered 503. */
  tally_redis_close(&a->rd, on_closed);
}

/* Requests. */

static void free_row(row_t *w) {
  free(w->id);
  for (size_t i = 0; i < w->nfields; i++)
    free(w->fields[i]);
  free(w->fields);
}

static void free_req(areq_t *q) {
  for (size_t i = 0; i < q->nrows; i++)
    free_row(&q->rows[i]);
  free(q->rows);
  for (size_t i = 0; i < q->nnames; i++)
    free(q->names[i]);
  free(q->names);
  free_row(&q->self);
  free(q);
}

static void cancel(tally_http_req_t *r) {
  areq_t *q = r->data;
  q->r = NULL;
}

static void fail(areq_t *q, const char *fmt, const char *what) {
  if (!q->failed)
    snprintf(q->why, sizeof(q->why), fmt, what);
  q->failed = true;
}

/* Copies the strings of an array reply into *out, *n. */
static void copy_strings(const redisReply *reply, char ***out, size_t *n,
                         areq_t *q) {
  *out = NULL;
  *n = 0;
  if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
    fail(q, "Redis did not answer %s", "a read");
    return;
  }
  *out = calloc(reply->elements + 1, sizeof(char *));
  if (*out == NULL) {
    fail(q, "%s", "out of memory");
    return;
  }
  for (size_t i = 0; i < reply->elements; i++) {
    const redisReply *e = reply->element[i];
    (*out)[i] = strdup(e->type == REDIS_REPLY_STRING ? e->str : "");
    if ((*out)[i] == NULL)
      fail(q, "%s", "out of memory");
  }
  *n = reply->elements;
}

static void build(areq_t *q);

static void one_done(areq_t *q) {
  if (--q->waiting > 0)
    return;
  q->a->inflight--;
  if (q->r != NULL)
    build(q);
  free_req(q);
}

static bool send_cmd(areq_t *q, tally_redis_cb cb, void *priv, int argc,
                     const char **argv) {
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_redis_command(&q->a->rd, API_TIMEOUT_MS, cb, priv, argc, argv,
                          lens) != 0) {
    fail(q, "%s", "Redis is not connected");
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
} cb_t;

enum { GOT_ZSET, GOT_NAMES, GOT_FIELDS, GOT_SELF };

static void on_reply(tally_redis_t *rd, redisReply *reply, void *priv) {
  (void)rd;
  cb_t *c = priv;
  areq_t *q = c->q;
  if (reply == NULL)
    fail(q, "Redis did not answer: %.200s", rd->why);
  else if (reply->type == REDIS_REPLY_ERROR)
    fail(q, "Redis refused a read: %.200s", reply->str);
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
  } else {
    row_t *w = c->what == GOT_SELF ? &q->self : c->w;
    copy_strings(reply, &w->fields, &w->nfields, q);
  }
  free(c);
  one_done(q);
}

static bool ask(areq_t *q, int what, row_t *w, int argc, const char **argv) {
  cb_t *c = malloc(sizeof(*c));
  if (c == NULL) {
    fail(q, "%s", "out of memory");
    return false;
  }
  *c = (cb_t){q, w, what};
  if (!send_cmd(q, on_reply, c, argc, argv)) {
    free(c);
    return false;
  }
  return true;
}

static const tally_contest_t *config_of(const areq_t *q) {
  const tally_contestset_t *cs = q->a->contests;
  return cs != NULL ? tally_contestset_find(cs, q->contest) : NULL;
}

/* Writing the answers. */

static void put_time(tally_buf_t *b, double t) {
  if (isnan(t)) {
    tally_buf_puts(b, "null");
    return;
  }
  time_t s = (time_t)floor(t);
  struct tm tm;
  gmtime_r(&s, &tm);
  char text[64];
  strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  double frac = t - floor(t);
  if (frac > 0) {
    char f[16];
    snprintf(f, sizeof(f), "%.3f", frac);
    strncat(text, f + 1, sizeof(text) - strlen(text) - 1);
  }
  strncat(text, "Z", sizeof(text) - strlen(text) - 1);
  tally_json_str(b, text);
}

/* Whether contest c's public board is frozen now. */
static bool frozen_now(const tally_contest_t *c) {
  if (c == NULL || isnan(c->freeze))
    return false;
  double now = (double)time(NULL);
  if (now < c->freeze)
    return false;
  return isnan(c->unfreeze_after) || now < c->end + c->unfreeze_after;
}

static void put_contest(tally_buf_t *b, const char *name,
                        const tally_contest_t *c) {
  tally_buf_puts(b, "{\"name\":");
  tally_json_str(b, name);
  tally_buf_puts(b, ",\"title\":");
  tally_json_str(b, c != NULL ? c->title : name);
  tally_buf_puts(b, ",\"configured\":");
  tally_buf_puts(b, c != NULL ? "true" : "false");
  tally_buf_puts(b, ",\"tasks\":");
  if (c == NULL) {
    tally_buf_puts(b, "null");
  } else {
    tally_buf_putc(b, '[');
    for (size_t i = 0; i < c->ntasks; i++) {
      if (i > 0)
        tally_buf_putc(b, ',');
      tally_json_str(b, c->tasks[i]);
    }
    tally_buf_putc(b, ']');
  }
  tally_buf_puts(b, ",\"start\":");
  put_time(b, c != NULL ? c->start : NAN);
  tally_buf_puts(b, ",\"end\":");
  put_time(b, c != NULL ? c->end : NAN);
  tally_buf_puts(b, ",\"freeze\":");
  put_time(b, c != NULL ? c->freeze : NAN);
  tally_buf_puts(b, ",\"frozen\":");
  tally_buf_puts(b, frozen_now(c) ? "true" : "false");
  tally_buf_puts(b, ",\"score_precision\":");
  tally_json_num(b, c != NULL ? c->score_precision : 0);
  tally_buf_puts(b, ",\"ranking\":");
  tally_json_str(b, c != NULL && c->ranking == TALLY_RANKING_ELO ? "elo"
                                                                 : "total");
  tally_buf_putc(b, '}');
}

static int cmp_names(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

static void build_list(areq_t *q, tally_buf_t *b) {
  const tally_contestset_t *cs = q->a->contests;
  /* The configured ones, then those Redis knows of without a config. */
  tally_buf_puts(b, "{\"contests\":[");
  size_t n = 0;
  for (size_t i = 0; cs != NULL && i < cs->count; i++, n++) {
    if (n > 0)
      tally_buf_putc(b, ',');
    put_contest(b, cs->contests[i].name, &cs->contests[i]);
  }
  if (q->nnames > 1)
    qsort(q->names, q->nnames, sizeof(char *), cmp_names);
  for (size_t i = 0; i < q->nnames; i++) {
    if (cs != NULL && tally_contestset_find(cs, q->names[i]) != NULL)
      continue;
    if (n++ > 0)
      tally_buf_putc(b, ',');
    put_contest(b, q->names[i], NULL);
  }
  tally_buf_puts(b, "]}\n");
}

/* The public (or private) score of a task score's JSON, with partial. */
static void put_task_score(tally_buf_t *b, const char *json,
                           bool private_view) {
  cJSON *j = cJSON_Parse(json);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(
      j, private_view ? "score" : "public_score");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "partial");
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, cJSON_IsNumber(s) ? s->valuedouble : 0);
  if (!private_view) {
    tally_buf_puts(b, ",\"partial\":");
    tally_buf_puts(b, cJSON_IsTrue(p) ? "true" : "false");
  }
  tally_buf_putc(b, '}');
  cJSON_Delete(j);
}

static void put_person(tally_buf_t *b, const areq_t *q, const char *id) {
  const tally_contestset_t *cs = q->a->contests;
  const tally_participant_t *p =
      cs != NULL ? tally_contestset_participant(cs, id) : NULL;
  tally_buf_puts(b, "\"participant\":");
  tally_json_str(b, id);
  tally_buf_puts(b, ",\"name\":");
  tally_json_str(b, p != NULL && p->name != NULL ? p->name : id);
  tally_buf_puts(b, ",\"team\":");
  if (p != NULL && p->team != NULL)
    tally_json_str(b, p->team);
  else
    tally_buf_puts(b, "null");
}

static int cmp_rows(const void *x, const void *y) {
  const row_t *a = x, *b = y;
  if (a->value != b->value)
    return a->value > b->value ? -1 : 1;
  return strcmp(a->id, b->id);
}

static void build_ranking(areq_t *q, tally_buf_t *b) {
  const tally_contest_t *c = config_of(q);
  bool elo = c != NULL && c->ranking == TALLY_RANKING_ELO;
  /* tally's order: by total, ties by id in byte order, sharing a rank. */
  if (q->nrows > 1)
    qsort(q->rows, q->nrows, sizeof(row_t), cmp_rows);
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, q->contest);
  tally_buf_puts(b, ",\"view\":");
  tally_json_str(b, q->private_view ? "private" : "public");
  tally_buf_puts(b, ",\"ranking\":");
  tally_json_str(b, elo ? "elo" : "total");
  tally_buf_puts(b, ",\"frozen\":");
  tally_buf_puts(b, frozen_now(c) ? "true" : "false");
  tally_buf_puts(b, ",\"tasks\":[");
  char **tasks = c != NULL ? c->tasks : q->names;
  size_t ntasks = c != NULL ? c->ntasks : q->nnames;
  if (c == NULL && ntasks > 1)
    qsort(tasks, ntasks, sizeof(char *), cmp_names);
  for (size_t i = 0; i < ntasks; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, tasks[i]);
  }
  tally_buf_puts(b, "],\"rows\":[");
  long rank = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    row_t *w = &q->rows[i];
    if (i == 0 || w->value != q->rows[i - 1].value)
      rank = (long)i + 1;
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, "{\"rank\":");
    tally_json_num(b, (double)rank);
    tally_buf_putc(b, ',');
    put_person(b, q, w->id);
    if (elo) {
      static const char *const names[] = {"matches", "wins", "draws", "losses"};
      tally_buf_puts(b, ",\"rating\":");
      tally_json_num(b, w->value);
      for (size_t k = 0; k < 4; k++) {
        tally_buf_puts(b, ",\"");
        tally_buf_puts(b, names[k]);
        tally_buf_puts(b, "\":");
        tally_json_num(b, k < w->nfields ? strtod(w->fields[k], NULL) : 0);
      }
    } else {
      tally_buf_puts(b, ",\"total\":");
      tally_json_num(b, w->value);
      tally_buf_puts(b, ",\"tasks\":{");
      size_t put = 0;
      for (size_t k = 0; k + 1 < w->nfields; k += 2) {
        if (put++ > 0)
          tally_buf_putc(b, ',');
        tally_json_str(b, w->fields[k]);
        tally_buf_putc(b, ':');
        put_task_score(b, w->fields[k + 1], q->private_view);
      }
      tally_buf_putc(b, '}');
    }
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "]}\n");
}

/* A participant's answer: their task scores in the contest, and each of
 * their submissions to it, with the private score only where a token
 * was used on it (or for the operator). */
static void build_participant(areq_t *q, tally_buf_t *b) {
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, q->contest);
  tally_buf_putc(b, ',');
  put_person(b, q, q->participant);
  tally_buf_puts(b, ",\"tasks\":{");
  for (size_t k = 0; k + 1 < q->self.nfields; k += 2) {
    if (k > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, q->self.fields[k]);
    tally_buf_putc(b, ':');
    put_task_score(b, q->self.fields[k + 1], false);
  }
  tally_buf_puts(b, "},\"submissions\":[");
  size_t put = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    row_t *w = &q->rows[i];
    /* fields: summary, tokened */
    if (w->nfields < 2)
      continue;
    cJSON *s = cJSON_Parse(w->fields[0]);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "contest");
    const char *cname = cJSON_IsString(c) ? c->valuestring : "default";
    char num[32];
    if (cJSON_IsNumber(c)) {
      snprintf(num, sizeof(num), "%.0f", c->valuedouble);
      cname = num;
    }
    if (s == NULL || strcmp(cname, q->contest) != 0) {
      cJSON_Delete(s);
      continue;
    }
    bool tokened = strcmp(w->fields[1], "1") == 0;
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(s, "task");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(s, "timestamp");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
    if (put++ > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, "{\"submission\":");
    tally_json_str(b, w->id);
    tally_buf_puts(b, ",\"task\":");
    tally_json_value(b, task);
    tally_buf_puts(b, ",\"timestamp\":");
    tally_json_num(b, cJSON_IsNumber(ts) ? ts->valuedouble : 0);
    tally_buf_puts(b, ",\"tokened\":");
    tally_buf_puts(b, tokened ? "true" : "false");
    tally_buf_puts(b, ",\"public_score\":");
    if (cJSON_IsNumber(ps))
      tally_json_num(b, ps->valuedouble);
    else
      tally_buf_puts(b, "null");
    if ((tokened || q->private_view) && cJSON_IsNumber(sc)) {
      tally_buf_puts(b, ",\"score\":");
      tally_json_num(b, sc->valuedouble);
    }
    tally_buf_putc(b, '}');
    cJSON_Delete(s);
  }
  tally_buf_puts(b, "]}\n");
}

/* One contest: its config, or what Redis knows of it; false (answered
 * 404) when neither knows it. */
static bool build_contest(areq_t *q, tally_buf_t *b) {
  const tally_contest_t *c = config_of(q);
  bool known = c != NULL;
  for (size_t i = 0; !known && i < q->nnames; i++)
    known = strcmp(q->names[i], q->contest) == 0;
  if (!known) {
    tally_http_req_t *r = q->r;
    r->reply.status = 404;
    tally_buf_puts(b, "{\"error\":");
    char msg[400];
    snprintf(msg, sizeof(msg), "no contest \"%.300s\"", q->contest);
    tally_json_str(b, msg);
    tally_buf_puts(b, "}\n");
    tally_http_answer(r);
    return false;
  }
  put_contest(b, q->contest, c);
  tally_buf_putc(b, '\n');
  return true;
}

static void build(areq_t *q) {
  tally_http_req_t *r = q->r;
  tally_buf_t *b = &r->reply.body;
  if (q->failed) {
    r->reply.status = 503;
    tally_buf_puts(b, "{\"error\":");
    tally_json_str(b, q->why);
    tally_buf_puts(b, "}\n");
  } else {
    r->reply.type = "application/json";
    if (q->kind == REQ_LIST) {
      build_list(q, b);
    } else if (q->kind == REQ_CONTEST) {
      if (!build_contest(q, b))
        return;
    } else if (q->kind == REQ_RANKING) {
      build_ranking(q, b);
    } else {
      build_participant(q, b);
    }
  }
  tally_http_answer(r);
}

/* Routing. */

static int answer_now(tally_http_req_t *r, unsigned status, const char *msg) {
  r->reply.status = status;
  r->reply.type = "application/json";
  tally_buf_puts(&r->reply.body, "{\"error\":");
  tally_json_str(&r->reply.body, msg);
  tally_buf_puts(&r->reply.body, "}\n");
  return 1;
}

/* Copies the next path segment of *p (percent-decoded) into out. Returns
 * false when it is empty or too long. */
static bool segment(const char **p, char *out, size_t len) {
  size_t n = 0;
  const char *s = *p;
  while (*s != '\0' && *s != '/') {
    char ch = *s++;
    if (ch == '%' && s[0] && s[1]) {
      char hex[3] = {s[0], s[1], 0};
      char *end;
      long v = strtol(hex, &end, 16);
      if (*end != '\0')
        return false;
      ch = (char)v;
      s += 2;
    }
    if (n + 1 >= len || ch == '\0')
      return false;
    out[n++] = ch;
  }
  out[n] = '\0';
  *p = s;
  return n > 0;
}

/* After a second round of reads for a ranking or a participant. */
static void after_first(areq_t *q);
static void names_to_rows(areq_t *q);

static void on_first(tally_redis_t *rd, redisReply *reply, void *priv) {
  cb_t *c = priv;
  areq_t *q = c->q;
  q->waiting++; /* held while the second round is sent */
  on_reply(rd, reply, priv);
  if (!q->failed && q->r != NULL)
    after_first(q);
  one_done(q);
}

static void after_first(areq_t *q) {
  char base[600], key[1600], part[800];
  if (tally_contest_key(base, sizeof(base), q->a->prefix, q->contest) != 0) {
    fail(q, "%s", "too long a contest id");
    return;
  }
  const tally_contest_t *c = config_of(q);
  bool elo = c != NULL && c->ranking == TALLY_RANKING_ELO;
  if (q->kind == REQ_PARTICIPANT)
    names_to_rows(q);
  for (size_t i = 0; i < q->nrows && !q->failed; i++) {
    row_t *w = &q->rows[i];
    if (q->kind == REQ_PARTICIPANT) {
      snprintf(key, sizeof(key), "%s:submission:%s", q->a->prefix, w->id);
      const char *argv[] = {"HMGET", key, "summary", "tokened"};
      ask(q, GOT_FIELDS, w, 4, argv);
      continue;
    }
    if (tally_rescore_key(part, sizeof(part), "", "", w->id) != 0)
      continue;
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

static int start(tally_api_t *a, tally_http_req_t *r, areq_t *q) {
  char base[600], key[1600], part[800];
  q->a = a;
  q->r = r;
  r->data = q;
  r->cancel = cancel;
  a->inflight++;
  q->waiting = 1; /* held while the commands are sent */
  if (q->kind == REQ_LIST) {
    snprintf(key, sizeof(key), "%s:contests", a->prefix);
    const char *argv[] = {"SMEMBERS", key};
    ask(q, GOT_NAMES, NULL, 2, argv);
  } else if (tally_contest_key(base, sizeof(base), a->prefix, q->contest) !=
             0) {
    fail(q, "%s", "too long a contest id");
  } else if (q->kind == REQ_CONTEST) {
    snprintf(key, sizeof(key), "%s:contests", a->prefix);
    const char *argv[] = {"SMEMBERS", key};
    ask(q, GOT_NAMES, NULL, 2, argv);
  } else if (q->kind == REQ_RANKING) {
    const tally_contest_t *c = config_of(q);
    if (c != NULL && c->ranking == TALLY_RANKING_ELO)
      snprintf(key, sizeof(key), "%s:elo", base);
    else
      snprintf(key, sizeof(key), "%s:ranking%s", base,
               q->private_view ? "" : ":public");
    cb_t *cb = malloc(sizeof(*cb));
    if (cb != NULL) {
      *cb = (cb_t){q, NULL, GOT_ZSET};
      const char *argv[] = {"ZRANGE", key, "0", "-1", "WITHSCORES"};
      if (!send_cmd(q, on_first, cb, 5, argv))
        free(cb);
    }
    snprintf(key, sizeof(key), "%s:tasks", base);
    const char *names[] = {"SMEMBERS", key};
    ask(q, GOT_NAMES, NULL, 2, names);
  } else {
    if (tally_rescore_key(part, sizeof(part), "", "", q->participant) != 0) {
      fail(q, "%s", "too long a participant id");
    } else {
      snprintf(key, sizeof(key), "%s:taskscores:%s", base, part);
      const char *argv[] = {"HGETALL", key};
      ask(q, GOT_SELF, NULL, 2, argv);
      tally_rescore_key(key, sizeof(key), a->prefix,
                        ":index:participant:", q->participant);
      cb_t *cb = malloc(sizeof(*cb));
      if (cb != NULL) {
        *cb = (cb_t){q, NULL, GOT_NAMES};
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

int tally_api_route(void *api, tally_http_req_t *r) {
  tally_api_t *a = api;
  const char *p = r->path;
  if (strncmp(p, "/api/", 5) != 0 && strcmp(p, "/api") != 0)
    return 0;
  if (a->closing)
    return answer_now(r, 503, "tallyd is stopping");
  areq_t *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return answer_now(r, 503, "out of memory");
  if (strcmp(p, "/api/contests") == 0 || strcmp(p, "/api/contests/") == 0) {
    q->kind = REQ_LIST;
    return start(a, r, q);
  }
  p += strlen("/api/");
  if (strncmp(p, "contests/", 9) != 0 ||
      (p += 9, !segment(&p, q->contest, sizeof(q->contest)))) {
    free(q);
    return answer_now(r, 404,
                      "not found: the API serves /api/contests, "
                      "/api/contests/C, /api/contests/C/ranking and "
                      "/api/contests/C/participants/P");
  }
  if (*p == '\0') {
    q->kind = REQ_CONTEST;
  } else if (strcmp(p, "/ranking") == 0) {
    q->kind = REQ_RANKING;
    const char *view = tally_http_arg(r, "view");
    if (view != NULL && strcmp(view, "private") == 0) {
      if (!is_operator(a, r)) {
        free(q);
        return answer_now(r, a->token == NULL ? 403 : 401,
                          a->token == NULL
                              ? "the private view needs the operator token, "
                                "and this tallyd has none (--http-token-file)"
                              : "the private view needs the operator's "
                                "bearer token");
      }
      q->private_view = true;
    } else if (view != NULL && strcmp(view, "public") != 0) {
      free(q);
      return answer_now(r, 400, "view: must be public or private");
    }
  } else if (strncmp(p, "/participants/", 14) == 0 &&
             (p += 14, segment(&p, q->participant, sizeof(q->participant))) &&
             *p == '\0') {
    q->kind = REQ_PARTICIPANT;
    const char *t = bearer(r);
    char want[TALLY_TOKEN_HEX + 1];
    if (is_operator(a, r)) {
      q->private_view = true;
    } else if (a->secret[0] == '\0') {
      free(q);
      return answer_now(r, 503,
                        "participant tokens cannot be checked yet: "
                        "Redis has not answered");
    } else {
      tally_participant_token(a->secret, q->participant, want);
      if (t == NULL || !same_secret(t, want)) {
        free(q);
        return answer_now(r, 401,
                          "a participant's endpoint needs that participant's "
                          "token (tally token --participant P) or the "
                          "operator's, as a bearer token");
      }
    }
  } else {
    free(q);
    return answer_now(r, 404, "not found");
  }
  return start(a, r, q);
}
