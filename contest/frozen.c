/* A frozen board's figures (frozen.h): a place's task score and an
 * arena's Elo table from what was submitted before the freeze. */
#include "contest/frozen.h"

#include "contest/scoremode.h"

#include <cjson/cJSON.h>
#include <math.h>
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

bool tally_frozen_score(const redisReply *flat, double freeze, double *score,
                        bool *partial) {
  if (flat == NULL || flat->type != REDIS_REPLY_ARRAY || flat->elements < 2)
    return false;
  size_t cap = flat->elements / 2, n = 0;
  entry_t *e = calloc(cap, sizeof(*e));
  if (e == NULL)
    return false;
  const cJSON *newest = NULL;
  double newest_ts = -INFINITY;
  const char *newest_id = "";
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
    entry_t *x = &e[n++];
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
      if (t > newest_ts || (t == newest_ts && strcmp(x->id, newest_id) > 0)) {
        newest = j;
        newest_ts = t;
        newest_id = x->id;
      }
    }
  }
  bool got = false;
  if (n > 0) {
    qsort(e, n, sizeof(*e), cmp_entry);
    tally_submission_t *subs = calloc(n, sizeof(*subs));
    tally_score_mode_t mode = TALLY_MODE_MAX_SUBTASK;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(newest, "score_mode");
    if (cJSON_IsString(m))
      tally_score_mode_parse(m->valuestring, &mode);
    const cJSON *p =
        cJSON_GetObjectItemCaseSensitive(newest, "score_precision");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(newest, "score_rounding");
    tally_rounding_t rounding =
        cJSON_IsString(r) && strcmp(r->valuestring, "none") == 0
            ? TALLY_ROUND_NONE
            : TALLY_ROUND_SUBTASK;
    tally_task_score_t ts;
    if (subs != NULL) {
      for (size_t i = 0; i < n; i++)
        subs[i] = e[i].s;
      /* Any submission before the freeze gives the task a score, as a
       * place with any submission does on the live board. */
      if (tally_task_score(mode, cJSON_IsNumber(p) ? (int)p->valuedouble : 0,
                           rounding, subs, n, &ts) == 0) {
        *score = ts.public_score;
        *partial = ts.partial;
        got = true;
      }
      free(subs);
    }
  }
  for (size_t i = 0; i < n; i++) {
    tally_submission_close(&e[i].s);
    cJSON_Delete(e[i].json);
  }
  free(e);
  return got;
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
