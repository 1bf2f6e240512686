/* The direct rescore of a submission (rescoredirect.h): the texts the
 * rescore script's rescore_one would make, made here the way it makes
 * them (redis/lua/rescore.lua, contest.lua). */
#include "contest/rescoredirect.h"

#include "config/json.h"
#include "contest/placecalc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A summary's place and whether it can be rescored directly: an object
 * with a place and no rated match (a "match" that Lua decodes to a table). */
typedef struct {
  cJSON *s;
  tally_place_id_t id;
} side_t;

static bool side_read(side_t *x, const char *text, size_t len) {
  memset(x, 0, sizeof(*x));
  x->s = tally_json_parse(text, len);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(x->s, "match");
  return !cJSON_IsObject(m) && !cJSON_IsArray(m) &&
         tally_place_id_tree(x->s, &x->id) == 0;
}

static void side_free(side_t *x) {
  tally_place_id_free(&x->id);
  cJSON_Delete(x->s);
}

/* A stored number as the script's tonumber reads it, when it is plain:
 * all of s a finite decimal. */
static bool stored_num(const char *s, double *v) {
  if (s == NULL || *s == '\0' || strchr(s, 'x') || strchr(s, 'X'))
    return false;
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return *end == '\0' && isfinite(*v);
}

/* The script's scores(sc, ps): {"score":..,"public_score":..}. */
static void scores(tally_buf_t *b, double sc, double ps) {
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, sc);
  tally_buf_puts(b, ",\"public_score\":");
  tally_json_num(b, ps);
  tally_buf_putc(b, '}');
}

/* The script's brief(s, tok) of a scored summary. */
static void brief(tally_rescore_direct_t *d, int i, const cJSON *s,
                  const char *score, const char *max) {
  size_t start = d->buf.len;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, score);
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, max);
  tally_buf_puts(&d->buf, "{\"score\":");
  tally_json_num(&d->buf, v->valuedouble);
  tally_buf_puts(&d->buf, ",\"max_score\":");
  if (cJSON_IsNumber(m))
    tally_json_num(&d->buf, m->valuedouble);
  else
    tally_buf_puts(&d->buf, "null");
  tally_buf_putc(&d->buf, '}');
  tally_texts_mark(d, i, start);
}

/* Whether stored summary a is of the same place as summary b and has no
 * match, told without decoding either, as the rescore script's
 * same_place does: the same bytes up to b's timestamp member, and neither
 * names a participant, task or contest after it. false only means "decode
 * them". */
static bool same_place_bytes(const char *a, size_t alen, const char *b,
                             size_t blen) {
  static const char ts[] = ",\"timestamp\":";
  const char *t = memmem(b, blen, ts, sizeof(ts) - 1);
  if (t == NULL)
    return false;
  size_t i = (size_t)(t - b);
  if (alen <= i || memcmp(a, b, i + 1) != 0 ||
      memmem(a, alen, "\"match\":", 8) != NULL)
    return false;
  static const char *const keys[3] = {
      "\"participant\":", "\"task\":", "\"contest\":"};
  for (int k = 0; k < 3; k++) {
    size_t kl = strlen(keys[k]);
    if (memmem(a + i, alen - i, keys[k], kl) != NULL ||
        memmem(b + i, blen - i, keys[k], kl) != NULL)
      return false;
  }
  return true;
}

bool tally_rescore_direct_applies(const char *text, size_t len,
                                  const char *stored, size_t stored_len,
                                  const char *scored, const char *score,
                                  const char *public_score,
                                  tally_rescore_old_t *old) {
  memset(old, 0, sizeof(*old));
  if (stored == NULL)
    return false;
  if (!same_place_bytes(stored, stored_len, text, len)) {
    side_t now, was;
    memset(&was, 0, sizeof(was));
    bool same =
        side_read(&now, text, len) && side_read(&was, stored, stored_len);
    same = same && strcmp(now.id.contest, was.id.contest) == 0 &&
           strcmp(now.id.participant, was.id.participant) == 0 &&
           strcmp(now.id.task, was.id.task) == 0;
    side_free(&now);
    side_free(&was);
    if (!same)
      return false;
  }
  /* The stored scores, as the script reads them: only a scored record's. */
  old->scored = scored != NULL && strcmp(scored, "1") == 0;
  old->score = old->public_score = 0;
  return !old->scored || (stored_num(score, &old->score) &&
                          stored_num(public_score, &old->public_score));
}

int tally_rescore_direct(const char *text, size_t len, const char *S,
                         const tally_rescore_old_t *old,
                         tally_rescore_direct_t *d) {
  side_t now;
  int rc = -1;
  char *version = NULL;
  if (!side_read(&now, text, len))
    goto out;
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(now.s, "score");
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(now.s, "public_score");
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(now.s, "scored")) ||
      !cJSON_IsNumber(sc) || !cJSON_IsNumber(ps) ||
      !isfinite(sc->valuedouble) || !isfinite(ps->valuedouble))
    goto out;
  version =
      tally_place_idtext(cJSON_GetObjectItemCaseSensitive(now.s, "version"));
  if (version == NULL)
    goto out;
  bool was = old->scored;
  double os = old->score, ops = old->public_score;
  double ns = sc->valuedouble, nps = ps->valuedouble;
  tally_buf_reset(&d->buf);
  tally_buf_t *b = &d->buf;
  tally_texts_put(d, TALLY_RDIRECT_CONTEST, now.id.contest);
  tally_texts_put(d, TALLY_RDIRECT_PARTICIPANT, now.id.participant);
  tally_texts_put(d, TALLY_RDIRECT_TASK, now.id.task);
  size_t start = b->len;
  tally_json_num(b, ns);
  tally_texts_mark(d, TALLY_RDIRECT_SCORE, start);
  start = b->len;
  tally_json_num(b, nps);
  tally_texts_mark(d, TALLY_RDIRECT_PUBLIC_SCORE, start);
  tally_texts_put(d, TALLY_RDIRECT_VERSION, version);
  start = b->len;
  if (!was || os != ns || ops != nps) {
    tally_buf_puts(b, "{");
    tally_lua_place_members(b, &now.id, S);
    tally_buf_puts(b, ",\"version\":");
    tally_lua_json_str(b, version, strlen(version));
    tally_buf_puts(b, ",\"old\":");
    if (was)
      scores(b, os, ops);
    else
      tally_buf_puts(b, "null");
    tally_buf_puts(b, ",\"new\":");
    scores(b, ns, nps);
    tally_buf_putc(b, '}');
  }
  tally_texts_mark(d, TALLY_RDIRECT_CHANGE, start);
  start = b->len;
  tally_buf_putc(b, !was || ops != nps ? '1' : '0');
  tally_buf_putc(b, !was || os != ns ? '1' : '0');
  tally_buf_putc(b, old->tokened ? '1' : '0');
  tally_texts_mark(d, TALLY_RDIRECT_MOVED, start);
  start = b->len;
  tally_buf_puts(b, "{\"type\":\"rescore\",");
  tally_lua_place_members(b, &now.id, S);
  tally_buf_puts(b, ",\"tokened\":");
  tally_texts_mark(d, TALLY_RDIRECT_EVENT, start);
  brief(d, TALLY_RDIRECT_VIEW_PUBLIC, now.s, "public_score",
        "max_public_score");
  brief(d, TALLY_RDIRECT_VIEW_FULL, now.s, "score", "max_score");
  rc = b->oom ? -1 : 0;
out:
  free(version);
  side_free(&now);
  return rc;
}
