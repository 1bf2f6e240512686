/* The task scores a post computes before its call (docs/contest.md, "Task
 * scores computed by tallyd"): each result's from the cache its place was
 * last seen with (daemon/places.h, contest/placecalc.h), checked and
 * written by the post script. */
#include "daemon/dispatch_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Computes result j's task score for its post (contest/placecalc.h) from
 * the cache its place was last seen with, and takes the new cache as the
 * place's from now on, so that the next job of the same place in this
 * call or the next computes from it. Returns j's precomputed arguments,
 * or NULL when there are none (no summary, no place remembered, or the
 * fast path does not apply: the script computes the place itself). */
const tally_post_pre_t *tally__precompute(tally_dispatch_t *d, tally__job_t *j,
                                          const tally_post_extra_t *e) {
  free(j->pre);
  j->pre = NULL;
  size_t plen = strlen(d->opt.prefix);
  if (e == NULL || e->summary_len == 0 || j->record == NULL ||
      strncmp(j->record, d->opt.prefix, plen) != 0 ||
      strncmp(j->record + plen, ":submission:", 12) != 0)
    return NULL;
  /* One tree of the summary for the place, the task score and the direct
   * post. */
  cJSON *s = NULL;
  if (j->place_key == NULL) {
    s = cJSON_ParseWithLength(e->summary, e->summary_len);
    tally_place_id_t id;
    if (tally_place_id_tree(s, &id) != 0) {
      cJSON_Delete(s);
      return NULL;
    }
    j->place_key = tally_places_key(id.contest, id.participant, id.task,
                                    &j->place_key_len);
    tally_place_id_free(&id);
    if (j->place_key == NULL) {
      cJSON_Delete(s);
      return NULL;
    }
  }
  size_t olen;
  const char *old =
      tally_places_get(&d->places, j->place_key, j->place_key_len, &olen);
  tally_place_calc_t *c = &d->calc;
  if (old == NULL) {
    cJSON_Delete(s);
    return NULL;
  }
  if (s == NULL)
    s = cJSON_ParseWithLength(e->summary, e->summary_len);
  const char *S = j->record + plen + 12;
  if (tally_place_add_tree(old, olen, S, s, c) != 0) {
    cJSON_Delete(s);
    return NULL;
  }
  _Static_assert(TALLY_DIRECT_COUNT == TALLY_POST_DIRECT_ARGS,
                 "a direct post's arguments");
  tally_place_direct_t *dp = &d->direct;
  bool direct = tally_place_direct_tree(s, S, d->opt.prefix, e->pub,
                                        e->pub ? e->pub_len : 0, c, dp) == 0;
  cJSON_Delete(s);
  size_t lens[4] = {olen, c->cache.len, c->score.len, c->meta.len};
  size_t dlen = direct ? dp->buf.len : 0;
  char *p = malloc(lens[0] + lens[1] + lens[2] + lens[3] + dlen + 1);
  if (p == NULL)
    return NULL;
  j->pre = p;
  tally_post_pre_t *a = &j->pre_args;
  memset(a, 0, sizeof(*a));
  memcpy(p, old, olen);
  a->expect = p, a->expect_len = olen, p += olen;
  memcpy(p, c->cache.data, c->cache.len);
  a->cache = p, a->cache_len = c->cache.len, p += c->cache.len;
  memcpy(p, c->score.data, c->score.len);
  a->score = p, a->score_len = c->score.len, p += c->score.len;
  memcpy(p, c->meta.data, c->meta.len);
  a->meta = p, a->meta_len = c->meta.len, p += c->meta.len;
  if (direct) {
    memcpy(p, dp->buf.data, dlen);
    for (int i = 0; i < TALLY_POST_DIRECT_ARGS; i++) {
      a->direct[i] = p + dp->off[i];
      a->direct_len[i] = dp->len[i];
    }
  }
  tally_places_put(&d->places, j->place_key, j->place_key_len, a->cache,
                   a->cache_len);
  return a;
}

/* Takes the place caches a post's reply gives after its codes (tally_call_
 * post_pre) as the places' own. */
void tally__learn_places(tally_dispatch_t *d, const call_t *c,
                         const redisReply *reply) {
  for (unsigned i = 0; i < c->n; i++) {
    const tally__job_t *j = c->jobs[i];
    const redisReply *x = reply->element[c->n + i];
    if (j->place_key == NULL || x->type != REDIS_REPLY_STRING)
      continue;
    if (j->pre != NULL &&
        (c->codes[i] == TALLY_POST_DONE || c->codes[i] == TALLY_POST_STALE)) {
      d->stats.precomputed++;
      if (x->len == j->pre_args.cache_len &&
          memcmp(x->str, j->pre_args.cache, x->len) == 0)
        d->stats.precomputed_taken++;
    }
    if (x->len > 0 || c->codes[i] == TALLY_POST_DONE ||
        c->codes[i] == TALLY_POST_STALE)
      tally_places_put(&d->places, j->place_key, j->place_key_len, x->str,
                       x->len);
  }
}
