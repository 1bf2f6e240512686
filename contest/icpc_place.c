/* A pass-fail board's submissions from the places (icpc_place.h). */
#include "contest/icpc_place.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_icpc_subs_free(tally_icpc_subs_t *v) {
  for (size_t i = 0; i < v->n; i++) {
    free(v->subs[i].participant);
    free(v->subs[i].task);
    free(v->subs[i].id);
  }
  free(v->subs);
  memset(v, 0, sizeof(*v));
}

/* The judgement a summary gives ("" for none). */
static void judgement_of(const cJSON *j, char out[8]) {
  out[0] = '\0';
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "scored")))
    return;
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "judgement");
  if (cJSON_IsString(g)) {
    snprintf(out, 8, "%s", g->valuestring);
    return;
  }
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "score");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "max_score");
  if (!cJSON_IsNumber(s) || !cJSON_IsNumber(m))
    return;
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "compiled")))
    snprintf(out, 8, "CE");
  else
    snprintf(out, 8,
             m->valuedouble > 0 && s->valuedouble >= m->valuedouble ? "AC"
                                                                    : "WA");
}

int tally_icpc_place_read(tally_icpc_subs_t *v, const redisReply *flat,
                          const char *participant, const char *task) {
  if (flat == NULL || flat->type != REDIS_REPLY_ARRAY)
    return 0;
  for (size_t i = 0; i + 1 < flat->elements; i += 2) {
    const redisReply *k = flat->element[i], *x = flat->element[i + 1];
    if (k->type != REDIS_REPLY_STRING || x->type != REDIS_REPLY_STRING ||
        x->len < 2)
      continue;
    cJSON *j = cJSON_ParseWithLength(x->str + 1, x->len - 1);
    if (j == NULL)
      continue;
    if (v->n == v->cap) {
      size_t cap = v->cap ? v->cap * 2 : 64;
      tally_icpc_sub_t *grown = realloc(v->subs, cap * sizeof(*grown));
      if (grown == NULL) {
        cJSON_Delete(j);
        return -1;
      }
      v->subs = grown;
      v->cap = cap;
    }
    tally_icpc_sub_t *s = &v->subs[v->n];
    memset(s, 0, sizeof(*s));
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "timestamp");
    s->timestamp = cJSON_IsNumber(ts) ? ts->valuedouble : 0;
    s->official =
        !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "official"));
    judgement_of(j, s->judgement);
    cJSON_Delete(j);
    s->participant = strdup(participant);
    s->task = strdup(task);
    s->id = strdup(k->str);
    v->n++;
    if (s->participant == NULL || s->task == NULL || s->id == NULL)
      return -1;
  }
  return 0;
}
