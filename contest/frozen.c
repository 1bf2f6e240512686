/* A frozen board's figures (frozen.h): a place's task score and an
 * arena's Elo table from what was submitted before the freeze. */
#include "contest/frozen.h"

#include "config/error.h"
#include "config/jsonw.h"
#include "contest/scoremode.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  tally_submission_t s;
  const char *id;
  cJSON *json;
} entry_t;

static int cmp_entry(const void *x, const void *y) {
  const entry_t *a = x, *b = y;
  if (a->s.timestamp != b->s.timestamp)
    return a->s.timestamp < b->s.timestamp ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* One side from a summary's score and subtasks (null: one subtask). */
static bool side(tally_score_side_t *d, const cJSON *score, const cJSON *subs,
                 bool compiled) {
  d->score = score->valuedouble;
  d->not_compiled = !compiled;
  if (!cJSON_IsArray(subs))
    return true;
  int n = cJSON_GetArraySize(subs);
  d->subtasks = calloc((size_t)n + 1, sizeof(double));
  if (d->subtasks == NULL)
    return false;
  for (const cJSON *v = subs->child; v != NULL; v = v->next)
    d->subtasks[d->nsubtasks++] = cJSON_IsNumber(v) ? v->valuedouble : 0;
  return true;
}

/* A place's submissions made before freeze, sorted by time (then id),
 * and how they are counted: the score mode, precision and rounding of the
 * newest scored one. */
typedef struct place_s {
  entry_t *e;
  size_t n;
  tally_score_mode_t mode;
  int precision;
  tally_rounding_t rounding;
} place_t;

static void place_close(place_t *pl) {
  for (size_t i = 0; i < pl->n; i++) {
    tally_submission_close(&pl->e[i].s);
    cJSON_Delete(pl->e[i].json);
  }
  free(pl->e);
}

/* Reads flat (see tally_frozen_score) into pl (no submission when flat
 * is not a place); false when out of memory. */
static bool place_read(const redisReply *flat, double freeze, place_t *pl) {
  memset(pl, 0, sizeof(*pl));
  pl->mode = TALLY_MODE_MAX_SUBTASK;
  pl->rounding = TALLY_ROUND_SUBTASK;
  if (flat == NULL || flat->type != REDIS_REPLY_ARRAY || flat->elements < 2)
    return true;
  pl->e = calloc(flat->elements / 2, sizeof(*pl->e));
  if (pl->e == NULL)
    return false;
  const cJSON *newest = NULL;
  double newest_ts = -INFINITY;
  const char *newest_id = "";
  bool ok = true;
  for (size_t i = 0; i + 1 < flat->elements; i += 2) {
    const redisReply *k = flat->element[i], *v = flat->element[i + 1];
    if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
        v->len < 2)
      continue;
    cJSON *j = cJSON_ParseWithLength(v->str + 1, v->len - 1);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "timestamp");
    double t = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
    if (j == NULL || !(t < freeze)) {
      cJSON_Delete(j);
      continue;
    }
    entry_t *x = &pl->e[pl->n++];
    tally_submission_init(&x->s);
    x->id = k->str;
    x->json = j;
    x->s.timestamp = t;
    x->s.official =
        !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "official"));
    x->s.tokened = v->str[0] == '1';
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "score");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "public_score");
    bool scored =
        !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "scored")) &&
        cJSON_IsNumber(sc) && cJSON_IsNumber(ps);
    if (scored) {
      bool compiled =
          !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "compiled"));
      x->s.scored =
          side(&x->s.priv, sc, cJSON_GetObjectItemCaseSensitive(j, "subtasks"),
               compiled) &&
          side(&x->s.pub, ps,
               cJSON_GetObjectItemCaseSensitive(j, "public_subtasks"),
               compiled);
      ok = ok && x->s.scored;
      if (t > newest_ts || (t == newest_ts && strcmp(x->id, newest_id) > 0)) {
        newest = j;
        newest_ts = t;
        newest_id = x->id;
      }
    }
  }
  qsort(pl->e, pl->n, sizeof(*pl->e), cmp_entry);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(newest, "score_mode");
  if (cJSON_IsString(m))
    tally_score_mode_parse(m->valuestring, &pl->mode);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(newest, "score_precision");
  pl->precision = cJSON_IsNumber(p) ? (int)p->valuedouble : 0;
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(newest, "score_rounding");
  if (cJSON_IsString(r) && strcmp(r->valuestring, "none") == 0)
    pl->rounding = TALLY_ROUND_NONE;
  return ok;
}

/* The task score of pl's submissions; false when there is none (or no
 * memory). */
static bool place_score(const place_t *pl, tally_task_score_t *ts) {
  if (pl->n == 0)
    return false;
  tally_submission_t *subs = calloc(pl->n, sizeof(*subs));
  if (subs == NULL)
    return false;
  for (size_t i = 0; i < pl->n; i++)
    subs[i] = pl->e[i].s;
  /* Any submission before the freeze gives the task a score, as a place
   * with any submission does on the live board. */
  bool got = tally_task_score(pl->mode, pl->precision, pl->rounding, subs,
                              pl->n, ts) == 0;
  free(subs);
  return got;
}

bool tally_frozen_score(const redisReply *flat, double freeze, double *score,
                        bool *partial) {
  place_t pl;
  tally_task_score_t ts;
  bool got = place_read(flat, freeze, &pl) && place_score(&pl, &ts);
  if (got) {
    *score = ts.public_score;
    *partial = ts.partial;
  }
  place_close(&pl);
  return got;
}

static const tally_score_side_t *side_of(const entry_t *x, bool full) {
  return full ? &x->s.priv : &x->s.pub;
}

/* The submission whose subtasks make the task score under max (the first
 * best) or max_tokened_last (the better of the last official one and the
 * best tokened one), or NULL. */
static const entry_t *chosen(const place_t *pl, bool full) {
  const entry_t *best = NULL, *last = NULL, *tokened = NULL;
  for (size_t i = 0; i < pl->n; i++) {
    const entry_t *x = &pl->e[i];
    if (!x->s.official)
      continue;
    last = x;
    if (!x->s.scored)
      continue;
    double v = side_of(x, full)->score;
    if (best == NULL || v > side_of(best, full)->score)
      best = x;
    if (x->s.tokened && (tokened == NULL || v > side_of(tokened, full)->score))
      tokened = x;
  }
  if (pl->mode == TALLY_MODE_MAX)
    return best;
  if (last != NULL && !last->s.scored)
    last = NULL;
  if (tokened != NULL && (last == NULL || side_of(tokened, full)->score >
                                              side_of(last, full)->score))
    return tokened;
  return last;
}

static void put_id(tally_buf_t *out, const entry_t *x) {
  if (x != NULL)
    tally_json_str(out, x->id);
  else
    tally_buf_puts(out, "null");
}

/* The first submission with the best score on the side asked for. */
static const entry_t *best_of(const place_t *pl, bool full) {
  const entry_t *best = NULL;
  for (size_t i = 0; i < pl->n; i++) {
    const entry_t *x = &pl->e[i];
    if (x->s.official && x->s.scored &&
        (best == NULL || side_of(x, full)->score > side_of(best, full)->score))
      best = x;
  }
  return best;
}

int tally_place_cell(const redisReply *flat, double freeze, bool full,
                     const bool *public_mask, size_t nmask, tally_buf_t *out) {
  place_t pl;
  tally_task_score_t ts;
  if (!place_read(flat, freeze, &pl)) {
    place_close(&pl);
    return TALLY_ENOMEM;
  }
  bool counted = place_score(&pl, &ts);
  tally_buf_puts(out, "\"score\":");
  if (counted)
    tally_json_num(out, full ? ts.score : ts.public_score);
  else
    tally_buf_puts(out, "null");
  tally_buf_puts(out, counted && ts.partial ? ",\"partial\":true"
                                            : ",\"partial\":false");
  tally_buf_puts(out, ",\"score_mode\":");
  tally_json_str(out, tally_score_mode_name(pl.mode));
  size_t official = 0, nsub = 0;
  for (size_t i = 0; i < pl.n; i++) {
    if (!pl.e[i].s.official)
      continue;
    official++;
    const tally_score_side_t *d = side_of(&pl.e[i], full);
    if (pl.e[i].s.scored && d->nsubtasks > nsub)
      nsub = d->nsubtasks;
  }
  char num[32];
  snprintf(num, sizeof(num), ",\"submissions\":%zu", official);
  tally_buf_puts(out, num);
  /* The public side of a grouped task counts as one subtask (the sum of
   * the subtasks whose testcases are all public): it is shown as those
   * subtasks' scores in the submission that gives the public score. */
  bool split = !full && nsub == 0 && nmask > 0;
  const entry_t *one = NULL;
  if (split)
    one = pl.mode == TALLY_MODE_MAX_TOKENED_LAST ? chosen(&pl, false)
                                                 : best_of(&pl, false);
  else if (pl.mode != TALLY_MODE_MAX_SUBTASK)
    one = chosen(&pl, full);
  tally_buf_puts(out, ",\"subtasks\":[");
  size_t count = split ? nmask : nsub;
  for (size_t k = 0; counted && k < count; k++) {
    const entry_t *from = one;
    double v = 0;
    bool shown = true;
    if (split) {
      shown = public_mask[k];
      if (one != NULL && k < one->s.priv.nsubtasks)
        v = one->s.priv.subtasks[k];
    } else if (pl.mode == TALLY_MODE_MAX_SUBTASK) {
      for (size_t i = 0; i < pl.n; i++) {
        const entry_t *x = &pl.e[i];
        const tally_score_side_t *d = side_of(x, full);
        if (!x->s.official || !x->s.scored || d->not_compiled ||
            k >= d->nsubtasks)
          continue;
        if (from == NULL || d->subtasks[k] > v) {
          from = x;
          v = d->subtasks[k];
        }
      }
    } else if (one != NULL && k < side_of(one, full)->nsubtasks) {
      v = side_of(one, full)->subtasks[k];
    }
    tally_buf_puts(out, k > 0 ? ",{\"score\":" : "{\"score\":");
    if (shown)
      tally_json_num(out, v);
    else
      tally_buf_puts(out, "null");
    tally_buf_puts(out, ",\"submission\":");
    put_id(out, shown ? from : NULL);
    tally_buf_putc(out, '}');
  }
  tally_buf_putc(out, ']');
  place_close(&pl);
  return out->oom ? TALLY_ENOMEM : 0;
}

/* A number of a match text, up to the next space or its end. */
static bool match_num(const char **p, double *out) {
  char *end;
  *out = strtod(*p, &end);
  if (end == *p || !isfinite(*out) || (*end != ' ' && *end != '\0'))
    return false;
  *p = *end == ' ' ? end + 1 : end;
  return true;
}

/* A flag of a match text: "0" or "1", then a space or its end. */
static bool match_flag(const char **p, bool *out) {
  const char *t = *p;
  if ((t[0] != '0' && t[0] != '1') || (t[1] != ' ' && t[1] != '\0'))
    return false;
  *out = t[0] == '1';
  *p = t[1] == ' ' ? t + 2 : t + 1;
  return true;
}

/* Reads "timestamp result opponent verified attempt memoryless"; false
 * for a text the scripts would not read either. */
static bool parse_match(const char *text, tally_elo_match_t *m) {
  const char *p = text;
  double attempt;
  if (!match_num(&p, &m->timestamp))
    return false;
  size_t n = strcspn(p, " ");
  if (n == 3 && strncmp(p, "win", 3) == 0)
    m->score = 1;
  else if (n == 4 && strncmp(p, "draw", 4) == 0)
    m->score = 0.5;
  else if (n == 4 && strncmp(p, "loss", 4) == 0)
    m->score = 0;
  else
    return false;
  if (p[n] != ' ')
    return false;
  p += n + 1;
  if (!match_num(&p, &m->opponent) || *p == '\0' ||
      !match_flag(&p, &m->verified) || !match_num(&p, &attempt) || *p == '\0' ||
      !match_flag(&p, &m->memoryless) || *p != '\0')
    return false;
  /* Only a first attempt counts for more, as the scripts check it. */
  m->attempt = attempt == 1 ? 1 : 0;
  return true;
}

bool tally_frozen_elo(const redisReply *flat, double freeze, tally_elo_t *e) {
  tally_elo_init(e);
  if (flat == NULL || flat->type != REDIS_REPLY_ARRAY || flat->elements < 2)
    return false;
  tally_elo_match_t *ms = calloc(flat->elements / 2, sizeof(*ms));
  if (ms == NULL)
    return false;
  size_t n = 0;
  for (size_t i = 0; i + 1 < flat->elements; i += 2) {
    const redisReply *id = flat->element[i], *text = flat->element[i + 1];
    if (id->type != REDIS_REPLY_STRING || text->type != REDIS_REPLY_STRING)
      continue;
    tally_elo_match_t m = {.submission = id->str};
    if (parse_match(text->str, &m) && m.timestamp < freeze)
      ms[n++] = m;
  }
  tally_elo_replay(ms, n, e);
  free(ms);
  return n > 0;
}
