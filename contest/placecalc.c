/* The post script's fast path for a place's task score, in C
 * (placecalc.h). Every step follows redis/lua/contest.lua: entry,
 * merge, finish, round, cache_text and load_cache, in the same order of
 * double operations, so that the script may write what this computes. */
#include "contest/placecalc.h"

#include "config/json.h"
#include "contest/scoremode.h"
#include "scoretypes/scoretype.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The aggregates of one side: under max {best}; under max_tokened_last
 * {best tokened, last's score}; under max_subtask {whole, n, best of
 * subtask 1..n}. */
typedef struct {
  double *v;
  size_t n;
} agg_t;

/* contest.lua's st of a place cache. */
typedef struct {
  int32_t n, subs, unsc;
  double prec, par_ts, last_ts;
  char mode[32], rnd[32];
  tally_score_mode_t kind;      /* mode, parsed (a cache of another is none) */
  const char *par_id, *last_id; /* into the cache or the entry */
  size_t par_len, last_len;
  agg_t aggs[2];
} place_t;

static bool fin(double x) {
  return isfinite(x);
}

char *tally_place_idtext(const cJSON *v) {
  if (cJSON_IsString(v))
    return tally_json_strlen(v) == strlen(v->valuestring)
               ? strdup(v->valuestring)
               : NULL;
  if (!cJSON_IsNumber(v))
    return NULL;
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, v->valuedouble);
  tally_buf_putc(&b, '\0');
  if (b.oom) {
    tally_buf_close(&b);
    return NULL;
  }
  return b.data;
}

int tally_place_id(const char *summary, size_t len, tally_place_id_t *out) {
  cJSON *s = tally_json_parse(summary, len);
  int rc = tally_place_id_tree(s, out);
  cJSON_Delete(s);
  return rc;
}

int tally_place_id_tree(const cJSON *s, tally_place_id_t *out) {
  memset(out, 0, sizeof(*out));
  if (!cJSON_IsObject(s))
    return -1;
  out->participant =
      tally_place_idtext(cJSON_GetObjectItemCaseSensitive(s, "participant"));
  out->task = tally_place_idtext(cJSON_GetObjectItemCaseSensitive(s, "task"));
  out->contest =
      tally_place_idtext(cJSON_GetObjectItemCaseSensitive(s, "contest"));
  if (out->contest == NULL)
    out->contest = strdup("default");
  if (out->participant == NULL || out->task == NULL || out->contest == NULL) {
    tally_place_id_free(out);
    return -1;
  }
  return 0;
}

void tally_place_id_free(tally_place_id_t *id) {
  free(id->contest);
  free(id->participant);
  free(id->task);
  memset(id, 0, sizeof(*id));
}

void tally_place_calc_init(tally_place_calc_t *c) {
  tally_buf_init(&c->cache);
  tally_buf_init(&c->score);
  tally_buf_init(&c->meta);
}

void tally_place_calc_close(tally_place_calc_t *c) {
  tally_buf_close(&c->cache);
  tally_buf_close(&c->score);
  tally_buf_close(&c->meta);
}

/* Little-endian reads and writes, as Redis's struct library packs. */
static int32_t get_i32(const unsigned char *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
  int32_t v;
  memcpy(&v, &u, 4);
  return v;
}

static double get_f64(const unsigned char *p) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; i--)
    u = u << 8 | p[i];
  double v;
  memcpy(&v, &u, 8);
  return v;
}

static void put_i32(tally_buf_t *b, int32_t v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  char p[4] = {(char)(u & 0xff), (char)(u >> 8 & 0xff), (char)(u >> 16 & 0xff),
               (char)(u >> 24 & 0xff)};
  tally_buf_put(b, p, 4);
}

static void put_f64(tally_buf_t *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  char p[8];
  for (int i = 0; i < 8; i++)
    p[i] = (char)(u >> (8 * i) & 0xff);
  tally_buf_put(b, p, 8);
}

/* The string at *i of cache c (an int32 length and its bytes). */
static bool get_str(const unsigned char *c, size_t len, size_t *i,
                    const char **s, size_t *n) {
  if (*i + 4 > len)
    return false;
  int32_t k = get_i32(c + *i);
  if (k < 0 || *i + 4 + (size_t)k > len)
    return false;
  *s = (const char *)c + *i + 4;
  *n = (size_t)k;
  *i += 4 + (size_t)k;
  return true;
}

static bool copy_name(char *dst, size_t cap, const char *s, size_t n) {
  if (n >= cap || memchr(s, '\0', n) != NULL)
    return false;
  memcpy(dst, s, n);
  dst[n] = '\0';
  return true;
}

static void place_free(place_t *p) {
  free(p->aggs[0].v);
  free(p->aggs[1].v);
}

/* load_cache: the place of cache c, or false when c is not one. */
static bool load_cache(const char *cache, size_t len, place_t *p) {
  const unsigned char *c = (const unsigned char *)cache;
  memset(p, 0, sizeof(*p));
  if (len < 37 || c[0] != '2')
    return false;
  p->n = get_i32(c + 1);
  p->subs = get_i32(c + 5);
  p->unsc = get_i32(c + 9);
  p->prec = get_f64(c + 13);
  p->par_ts = get_f64(c + 21);
  p->last_ts = get_f64(c + 29);
  size_t i = 37, n;
  const char *s;
  if (!get_str(c, len, &i, &s, &n) ||
      !copy_name(p->mode, sizeof(p->mode), s, n))
    return false;
  if (tally_score_mode_parse(p->mode, &p->kind) != 0 ||
      !get_str(c, len, &i, &s, &n) ||
      !copy_name(p->rnd, sizeof(p->rnd), s, n) ||
      !get_str(c, len, &i, &p->par_id, &p->par_len) ||
      !get_str(c, len, &i, &p->last_id, &p->last_len))
    return false;
  for (int side = 0; side < 2; side++) {
    if (i + 4 > len)
      goto bad;
    int32_t k = get_i32(c + i);
    i += 4;
    int32_t want = p->kind == TALLY_MODE_MAX                ? 1
                   : p->kind == TALLY_MODE_MAX_TOKENED_LAST ? 2
                                                            : -1;
    if (k < 1 || (want > 0 && k != want) || i + 8 * (size_t)k > len)
      goto bad;
    agg_t *a = &p->aggs[side];
    a->v = malloc(sizeof(double) * ((size_t)k + 1));
    if (a->v == NULL)
      goto bad;
    a->n = (size_t)k;
    for (int32_t m = 0; m < k; m++)
      a->v[m] = get_f64(c + i + 8 * (size_t)m);
    if (p->kind == TALLY_MODE_MAX_SUBTASK &&
        (k < 2 || a->v[1] != (double)(k - 2)))
      goto bad;
    i += 8 * (size_t)k;
  }
  if (i != len)
    goto bad;
  return true;
bad:
  place_free(p);
  return false;
}

/* a < b in byte order, a shorter prefix first (contest.lua's bless). */
static bool bless(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c < 0 || (c == 0 && an < bn);
}

/* Whether (ts, id) comes after (bts, bid). */
static bool later(double ts, const char *id, size_t idn, double bts,
                  const char *bid, size_t bidn) {
  return ts > bts || (ts == bts && bless(bid, bidn, id, idn));
}

/* contest.lua's entry of a scored summary. */
typedef struct {
  const char *id;
  size_t idn;
  double ts, sc, ps, prec;
  bool off, tok, cmp;
  const char *mode, *rnd;
  const cJSON *subs[2]; /* full and public subtask scores */
} entry_t;

/* numbers(): the scores of a non-empty JSON array (others count 0), or
 * false when a is not one. */
static bool numbers(const cJSON *a, double **out, size_t *n) {
  int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
  if (k <= 0)
    return false;
  *out = malloc(sizeof(double) * (size_t)k);
  if (*out == NULL)
    return false;
  size_t m = 0;
  for (const cJSON *x = a->child; x != NULL; x = x->next)
    (*out)[m++] = cJSON_IsNumber(x) ? x->valuedouble : 0.0;
  *n = m;
  return true;
}

/* merge: e into side pub's aggregate a under mode. */
static bool merge(tally_score_mode_t mode, agg_t *a, const entry_t *e, bool pub,
                  bool is_last) {
  double v = pub ? e->ps : e->sc;
  if (mode == TALLY_MODE_MAX) {
    if (v > a->v[0])
      a->v[0] = v;
    return true;
  }
  if (mode == TALLY_MODE_MAX_TOKENED_LAST) {
    if (e->tok && v > a->v[0])
      a->v[0] = v;
    if (is_last)
      a->v[1] = v;
    return true;
  }
  if (!e->cmp)
    return true;
  double *arr = NULL;
  size_t k = 0;
  if (!numbers(e->subs[pub ? 1 : 0], &arr, &k)) {
    if (v > a->v[0])
      a->v[0] = v;
    return true;
  }
  size_t n = (size_t)a->v[1];
  if (2 + k > a->n) {
    double *w = realloc(a->v, sizeof(double) * (2 + k));
    if (w == NULL) {
      free(arr);
      return false;
    }
    a->v = w;
  }
  for (size_t m = 0; m < k; m++) {
    double x = arr[m];
    if (!fin(x)) {
      free(arr);
      return false;
    }
    double best = m < n ? a->v[2 + m] : 0.0;
    if (x > best)
      best = x;
    a->v[2 + m] = best;
  }
  free(arr);
  if (k > n) {
    a->v[1] = (double)k;
    a->n = 2 + k;
  }
  return true;
}

static double finish(tally_score_mode_t mode, const agg_t *a) {
  if (mode == TALLY_MODE_MAX)
    return a->v[0];
  if (mode == TALLY_MODE_MAX_TOKENED_LAST)
    return a->v[0] > a->v[1] ? a->v[0] : a->v[1];
  double total = 0.0;
  for (size_t k = 0; k < (size_t)a->v[1]; k++)
    total = total + a->v[2 + k];
  return total + a->v[0];
}

/* contest.lua's round: tally_round with floor(n), none outside 0..10. */
static double round_to(double x, double n) {
  n = floor(n);
  if (!(n >= 0 && n <= 10))
    return x;
  return tally_round(x, (int)n);
}

static bool word(const char *s) {
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
          (*s >= 'A' && *s <= 'Z')))
      return false;
  return true;
}

/* cache_text of p into b; false when it cannot be kept. p's mode is one
 * (load_cache parsed it). */
static bool cache_text(const place_t *p, tally_buf_t *b) {
  if (!word(p->rnd) || !fin(p->prec) || !fin(p->par_ts) || !fin(p->last_ts))
    return false;
  tally_buf_putc(b, '2');
  put_i32(b, p->n);
  put_i32(b, p->subs);
  put_i32(b, p->unsc);
  put_f64(b, p->prec);
  put_f64(b, p->par_ts);
  put_f64(b, p->last_ts);
  const char *strs[] = {p->mode, p->rnd, p->par_id, p->last_id};
  size_t lens[] = {strlen(p->mode), strlen(p->rnd), p->par_len, p->last_len};
  for (int i = 0; i < 4; i++) {
    put_i32(b, (int32_t)lens[i]);
    tally_buf_put(b, strs[i], lens[i]);
  }
  for (int side = 0; side < 2; side++) {
    const agg_t *a = &p->aggs[side];
    for (size_t k = 0; k < a->n; k++)
      if (!fin(a->v[k]))
        return false;
    put_i32(b, (int32_t)a->n);
    for (size_t k = 0; k < a->n; k++)
      put_f64(b, a->v[k]);
  }
  return !b->oom;
}

static double num_or(const cJSON *v, double d) {
  return cJSON_IsNumber(v) ? v->valuedouble : d;
}

/* The entry of a scored summary s, or false when s is not one the fast
 * path takes. */
static bool read_entry(const cJSON *s, const char *S, bool tok, entry_t *e) {
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
  const cJSON *mode = cJSON_GetObjectItemCaseSensitive(s, "score_mode");
  const cJSON *rnd = cJSON_GetObjectItemCaseSensitive(s, "score_rounding");
  const cJSON *prec = cJSON_GetObjectItemCaseSensitive(s, "score_precision");
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "scored")) ||
      !cJSON_IsNumber(sc) || !cJSON_IsNumber(ps) || !cJSON_IsString(mode) ||
      !cJSON_IsString(rnd) || (prec != NULL && !cJSON_IsNumber(prec)))
    return false;
  e->id = S;
  e->idn = strlen(S);
  e->ts = num_or(cJSON_GetObjectItemCaseSensitive(s, "timestamp"), 0.0);
  e->off = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "official"));
  e->cmp = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "compiled"));
  e->tok = tok;
  e->sc = sc->valuedouble;
  e->ps = ps->valuedouble;
  e->prec = num_or(prec, 0.0);
  e->mode = mode->valuestring;
  e->rnd = rnd->valuestring;
  e->subs[0] = cJSON_GetObjectItemCaseSensitive(s, "subtasks");
  e->subs[1] = cJSON_GetObjectItemCaseSensitive(s, "public_subtasks");
  return fin(e->ts) && fin(e->sc) && fin(e->ps);
}

/* Writes what tally_place_add or tally_place_whole computed, p, into c:
 * the cache, the task score's JSON, and meta: tok (when not 0), '0' or '1'
 * for partial, the field count and ':' (when count), the public task
 * score. Returns 0, or -1 when the cache cannot be kept. */
static int put_computed(const place_t *p, char tok, bool count,
                        tally_place_calc_t *c) {
  double score[2];
  for (int side = 0; side < 2; side++) {
    double x = finish(p->kind, &p->aggs[side]);
    if (strcmp(p->rnd, "none") != 0)
      x = round_to(x, p->prec);
    score[side] = x;
  }
  tally_buf_reset(&c->cache);
  tally_buf_reset(&c->score);
  tally_buf_reset(&c->meta);
  if (!cache_text(p, &c->cache))
    return -1;
  tally_buf_t *b = &c->score;
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, score[0]);
  tally_buf_puts(b, ",\"public_score\":");
  tally_json_num(b, score[1]);
  tally_buf_puts(b, p->unsc > 0 ? ",\"partial\":true" : ",\"partial\":false");
  char n[48];
  snprintf(n, sizeof(n), ",\"submissions\":%d}", (int)p->subs);
  tally_buf_puts(b, n);
  if (tok != 0)
    tally_buf_putc(&c->meta, tok);
  tally_buf_putc(&c->meta, p->unsc > 0 ? '1' : '0');
  if (count) {
    snprintf(n, sizeof(n), "%d:", (int)p->n);
    tally_buf_puts(&c->meta, n);
  }
  tally_json_num(&c->meta, score[1]);
  return c->cache.oom || c->score.oom || c->meta.oom ? -1 : 0;
}

int tally_place_add(const char *old, size_t old_len, const char *S,
                    const char *summary, size_t summary_len,
                    tally_place_calc_t *c) {
  cJSON *s = tally_json_parse(summary, summary_len);
  int rc = tally_place_add_tree(old, old_len, S, s, c);
  cJSON_Delete(s);
  return rc;
}

int tally_place_add_tree(const char *old, size_t old_len, const char *S,
                         const cJSON *s, tally_place_calc_t *c) {
  place_t p;
  if (!load_cache(old, old_len, &p))
    return -1;
  int rc = -1;
  entry_t e;
  bool tok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "tokened"));
  if (!cJSON_IsObject(s) || !read_entry(s, S, tok, &e))
    goto out;
  tally_score_mode_t mode = p.kind;
  if (later(e.ts, e.id, e.idn, p.par_ts, p.par_id, p.par_len)) {
    if (strcmp(e.mode, p.mode) != 0 || e.prec != p.prec ||
        strcmp(e.rnd, p.rnd) != 0)
      goto out;
    p.par_ts = e.ts;
    p.par_id = e.id;
    p.par_len = e.idn;
  }
  if (e.off) {
    bool is_last = later(e.ts, e.id, e.idn, p.last_ts, p.last_id, p.last_len);
    for (int side = 0; side < 2; side++)
      if (!merge(mode, &p.aggs[side], &e, side == 1, is_last))
        goto out;
    if (is_last) {
      p.last_ts = e.ts;
      p.last_id = e.id;
      p.last_len = e.idn;
    }
    p.subs++;
  }
  p.n++;
  rc = put_computed(&p, tok ? '1' : '0', true, c);
out:
  place_free(&p);
  return rc;
}

/* A field of a whole place: its entry, whether it is scored (ok), and its
 * summary's tree (which the entry's strings point into). */
typedef struct {
  entry_t e;
  bool ok;
  cJSON *tree;
} field_t;

/* contest.lua's entry of member m, into *f (f->tree to be freed by the
 * caller); false when the place is left to the script. */
static bool read_field(const tally_place_member_t *m, field_t *f) {
  memset(f, 0, sizeof(*f));
  f->tree = tally_json_parse(m->summary, m->len);
  const cJSON *s = f->tree;
  if (!cJSON_IsObject(s))
    return false;
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
  f->ok = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "scored")) &&
          cJSON_IsNumber(sc) && cJSON_IsNumber(ps);
  if (f->ok)
    return read_entry(s, m->id, m->tokened, &f->e);
  f->e.id = m->id;
  f->e.idn = strlen(m->id);
  f->e.ts = num_or(cJSON_GetObjectItemCaseSensitive(s, "timestamp"), 0.0);
  f->e.off = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "official"));
  f->e.tok = m->tokened;
  return fin(f->e.ts);
}

/* Whether a and b are the same place. */
static bool same_place(const tally_place_id_t *a, const tally_place_id_t *b) {
  return strcmp(a->contest, b->contest) == 0 &&
         strcmp(a->participant, b->participant) == 0 &&
         strcmp(a->task, b->task) == 0;
}

int tally_place_whole(const tally_place_member_t *m, size_t n,
                      tally_place_id_t *id, tally_place_calc_t *c) {
  memset(id, 0, sizeof(*id));
  if (n == 0 || n > INT32_MAX)
    return -1;
  field_t *f = calloc(n, sizeof(*f));
  if (f == NULL)
    return -1;
  place_t p;
  memset(&p, 0, sizeof(p));
  int rc = -1;
  /* contest.lua's compute: par is the newest scored field, last the
   * newest official one (scored or not). */
  const field_t *par = NULL, *last = NULL;
  for (size_t i = 0; i < n; i++) {
    tally_place_id_t at;
    if (!read_field(&m[i], &f[i]) || tally_place_id_tree(f[i].tree, &at) != 0)
      goto out;
    bool same = i == 0 || same_place(id, &at);
    if (i == 0)
      *id = at;
    else
      tally_place_id_free(&at);
    if (!same)
      goto out;
    const entry_t *e = &f[i].e;
    if (f[i].ok && (par == NULL || later(e->ts, e->id, e->idn, par->e.ts,
                                         par->e.id, par->e.idn)))
      par = &f[i];
    if (e->off) {
      p.subs++;
      if (!f[i].ok)
        p.unsc++;
      if (last == NULL ||
          later(e->ts, e->id, e->idn, last->e.ts, last->e.id, last->e.idn))
        last = &f[i];
    }
  }
  if (par == NULL || last == NULL ||
      !copy_name(p.mode, sizeof(p.mode), par->e.mode, strlen(par->e.mode)) ||
      !copy_name(p.rnd, sizeof(p.rnd), par->e.rnd, strlen(par->e.rnd)) ||
      tally_score_mode_parse(p.mode, &p.kind) != 0)
    goto out;
  p.n = (int32_t)n;
  p.prec = par->e.prec;
  p.par_ts = par->e.ts;
  p.par_id = par->e.id;
  p.par_len = par->e.idn;
  p.last_ts = last->e.ts;
  p.last_id = last->e.id;
  p.last_len = last->e.idn;
  for (int side = 0; side < 2; side++) {
    /* contest.lua's aggregate: every official scored field merged in,
     * from {0} under max and {0, 0} otherwise; under max_tokened_last
     * the second is the last official field's score, 0 when it is not
     * scored. */
    agg_t *a = &p.aggs[side];
    a->n = p.kind == TALLY_MODE_MAX ? 1 : 2;
    if ((a->v = calloc(a->n, sizeof(double))) == NULL)
      goto out;
    for (size_t i = 0; i < n; i++)
      if (f[i].e.off && f[i].ok && !merge(p.kind, a, &f[i].e, side == 1, false))
        goto out;
    if (p.kind == TALLY_MODE_MAX_TOKENED_LAST)
      a->v[1] = !last->ok ? 0.0 : side == 1 ? last->e.ps : last->e.sc;
  }
  rc = put_computed(&p, 0, false, c);
out:
  if (rc != 0)
    tally_place_id_free(id);
  for (size_t i = 0; i < n; i++)
    cJSON_Delete(f[i].tree);
  free(f);
  place_free(&p);
  return rc;
}

void tally_texts_init(tally_texts_t *t) {
  memset(t, 0, sizeof(*t));
  tally_buf_init(&t->buf);
}

void tally_texts_close(tally_texts_t *t) {
  tally_buf_close(&t->buf);
}

void tally_texts_mark(tally_texts_t *t, int i, size_t start) {
  t->off[i] = start;
  t->len[i] = t->buf.len - start;
}

void tally_texts_put(tally_texts_t *t, int i, const char *s) {
  size_t start = t->buf.len;
  tally_buf_puts(&t->buf, s);
  tally_texts_mark(t, i, start);
}

void tally_texts_num(tally_texts_t *t, int i, double v) {
  size_t start = t->buf.len;
  tally_json_num(&t->buf, v);
  tally_texts_mark(t, i, start);
}

void tally_lua_json_str(tally_buf_t *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  tally_buf_putc(b, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    const char *esc = NULL;
    switch (ch) {
    case '"':
      esc = "\\\"";
      break;
    case '\\':
      esc = "\\\\";
      break;
    case '/':
      esc = "\\/";
      break;
    case '\b':
      esc = "\\b";
      break;
    case '\t':
      esc = "\\t";
      break;
    case '\n':
      esc = "\\n";
      break;
    case '\f':
      esc = "\\f";
      break;
    case '\r':
      esc = "\\r";
      break;
    default:
      break;
    }
    if (esc != NULL) {
      tally_buf_puts(b, esc);
    } else if (ch < 0x20 || ch == 0x7f) {
      char u[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
      tally_buf_put(b, u, sizeof(u));
    } else {
      tally_buf_putc(b, (char)ch);
    }
  }
  tally_buf_putc(b, '"');
}

/* Appends to the event of d the contestant-visible view: contest.lua's
 * publish, given a view's key, names it; given its JSON, embeds it; given
 * none, brief(s, false) stands for it. */
static void direct_view(tally_place_direct_t *d, const cJSON *s,
                        const char *prefix, const char *pub, size_t pub_len) {
  tally_buf_t *b = &d->buf;
  size_t plen = strlen(prefix);
  if (pub_len > plen && memcmp(pub, prefix, plen) == 0 && pub[plen] == ':') {
    tally_buf_puts(b, ",\"view_key\":");
    tally_lua_json_str(b, pub, pub_len);
    return;
  }
  tally_buf_puts(b, ",\"view\":");
  if (pub_len > 0) {
    tally_buf_put(b, pub, pub_len);
    return;
  }
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
  const cJSON *mx = cJSON_GetObjectItemCaseSensitive(s, "max_public_score");
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, ps->valuedouble);
  tally_buf_puts(b, ",\"max_score\":");
  if (cJSON_IsNumber(mx))
    tally_json_num(b, mx->valuedouble);
  else
    tally_buf_puts(b, "null");
  tally_buf_putc(b, '}');
}

void tally_lua_place_members(tally_buf_t *b, const tally_place_id_t *id,
                             const char *S) {
  const struct {
    const char *name, *value;
  } m[4] = {{"contest", id->contest},
            {"participant", id->participant},
            {"task", id->task},
            {"submission", S}};
  for (int i = 0; i < 4; i++) {
    tally_buf_puts(b, i == 0 ? "\"" : ",\"");
    tally_buf_puts(b, m[i].name);
    tally_buf_puts(b, "\":");
    tally_lua_json_str(b, m[i].value, strlen(m[i].value));
  }
}

int tally_place_direct(const char *summary, size_t summary_len, const char *S,
                       const char *prefix, const char *pub, size_t pub_len,
                       const tally_place_calc_t *c, tally_place_direct_t *d) {
  cJSON *s = tally_json_parse(summary, summary_len);
  int rc = tally_place_direct_tree(s, S, prefix, pub, pub_len, c, d);
  cJSON_Delete(s);
  return rc;
}

int tally_place_direct_tree(const cJSON *s, const char *S, const char *prefix,
                            const char *pub, size_t pub_len,
                            const tally_place_calc_t *c,
                            tally_place_direct_t *d) {
  const char *meta = tally_buf_text(&c->meta);
  const char *colon = memchr(meta, ':', c->meta.len);
  if (c->meta.len < 4 || meta[0] != '0' || colon == NULL)
    return -1;
  int rc = -1;
  tally_place_id_t id = {0};
  char *version = NULL;
  if (!cJSON_IsObject(s))
    goto out;
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
  const cJSON *match = cJSON_GetObjectItemCaseSensitive(s, "match");
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(s, "scored")) ||
      !cJSON_IsNumber(sc) || !cJSON_IsNumber(ps) ||
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "tokened")) ||
      cJSON_IsObject(match) || cJSON_IsArray(match))
    goto out;
  version = tally_place_idtext(cJSON_GetObjectItemCaseSensitive(s, "version"));
  if (version == NULL || tally_place_id_tree(s, &id) != 0)
    goto out;
  tally_buf_reset(&d->buf);
  tally_texts_put(d, TALLY_DIRECT_CONTEST, id.contest);
  tally_texts_put(d, TALLY_DIRECT_PARTICIPANT, id.participant);
  tally_texts_put(d, TALLY_DIRECT_TASK, id.task);
  tally_texts_num(d, TALLY_DIRECT_SCORE, sc->valuedouble);
  tally_texts_num(d, TALLY_DIRECT_PUBLIC_SCORE, ps->valuedouble);
  tally_texts_put(d, TALLY_DIRECT_VERSION, version);
  size_t start = d->buf.len;
  tally_buf_t *b = &d->buf;
  tally_buf_puts(b, "{\"type\":\"score\",");
  tally_lua_place_members(b, &id, S);
  tally_buf_puts(b, ",\"tokened\":false");
  direct_view(d, s, prefix, pub, pub_len);
  tally_buf_puts(b, ",\"task_score\":{\"score\":");
  tally_buf_put(b, colon + 1, c->meta.len - (size_t)(colon + 1 - meta));
  tally_buf_puts(b, meta[1] == '1' ? ",\"partial\":true}}"
                                   : ",\"partial\":false}}");
  tally_texts_mark(d, TALLY_DIRECT_EVENT, start);
  rc = d->buf.oom ? -1 : 0;
out:
  tally_place_id_free(&id);
  free(version);
  return rc;
}
