/* The place cache's decoder and the task score computed from it
 * (contest/placecalc.c). Input: a byte n, then n bytes of cache, then a
 * summary. Whatever the bytes: no crash, and when a task score is
 * computed, its score is a JSON object, its meta reads as the script
 * reads it, a second summary may be merged into its cache, and a direct
 * post made of it has an event that is a JSON object naming its place;
 * and the summary rescored over the cache's bytes read as a stored
 * summary makes a change entry that is a JSON object; and the two read
 * as the fields of a whole place give a task score that is one too. */
#include "contest/placecalc.h"
#include "contest/rescoredirect.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t n = data[0];
  if (n > size - 1)
    n = size - 1;
  const char *cache = (const char *)data + 1;
  const char *summary = cache + n;
  size_t slen = size - 1 - n;
  tally_place_id_t id;
  if (tally_place_id(summary, slen, &id) == 0)
    tally_place_id_free(&id);
  tally_place_calc_t c, again;
  tally_place_calc_init(&c);
  tally_place_calc_init(&again);
  if (tally_place_add(cache, n, "S", summary, slen, &c) == 0) {
    cJSON *score = cJSON_ParseWithLength(c.score.data, c.score.len);
    if (!cJSON_IsObject(score))
      abort();
    cJSON_Delete(score);
    /* tokened, partial, the field count, ':' and a number. */
    const char *m = c.meta.data;
    if (c.meta.len < 5 || (m[0] != '0' && m[0] != '1') ||
        (m[1] != '0' && m[1] != '1') || memchr(m, ':', c.meta.len) == NULL)
      abort();
    tally_place_add(c.cache.data, c.cache.len, "T", summary, slen, &again);
    tally_place_direct_t d;
    tally_texts_init(&d);
    /* The view: none, inline, or a key. */
    static const char *const views[] = {"", "{\"score\":1}", "p:view:1"};
    const char *view = views[n % 3];
    if (tally_place_direct(summary, slen, "S", "p", view, strlen(view), &c,
                           &d) == 0) {
      cJSON *ev = cJSON_ParseWithLength(d.buf.data + d.off[TALLY_DIRECT_EVENT],
                                        d.len[TALLY_DIRECT_EVENT]);
      if (!cJSON_IsObject(ev) ||
          !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ev, "task")))
        abort();
      cJSON_Delete(ev);
    }
    tally_texts_close(&d);
  }
  /* The summary rescored over the cache's bytes as the stored one: a
   * direct rescore made of them has a change entry that is JSON. */
  tally_rescore_old_t old;
  if (tally_rescore_direct_applies(summary, slen, cache, n, "1", "2.5", "0",
                                   &old)) {
    tally_rescore_direct_t r;
    tally_texts_init(&r);
    if (tally_rescore_direct(summary, slen, "S", &old, &r) == 0 &&
        r.len[TALLY_RDIRECT_CHANGE] > 0) {
      cJSON *ch =
          cJSON_ParseWithLength(r.buf.data + r.off[TALLY_RDIRECT_CHANGE],
                                r.len[TALLY_RDIRECT_CHANGE]);
      if (!cJSON_IsObject(ch))
        abort();
      cJSON_Delete(ch);
    }
    tally_texts_close(&r);
  }
  /* The cache's bytes and the summary as the two fields of a whole
   * place: its task score is a JSON object, its meta a flag and a number,
   * and its cache one the post's fast path reads. */
  tally_place_member_t m[2] = {{"A", cache, n, false},
                               {"B", summary, slen, (n & 1) != 0}};
  tally_place_calc_t w;
  tally_place_calc_init(&w);
  if (tally_place_whole(m, 2, &id, &w) == 0) {
    cJSON *score = cJSON_ParseWithLength(w.score.data, w.score.len);
    if (!cJSON_IsObject(score) || w.meta.len < 2 ||
        (w.meta.data[0] != '0' && w.meta.data[0] != '1') ||
        id.participant == NULL)
      abort();
    cJSON_Delete(score);
    tally_place_id_free(&id);
    tally_place_add(w.cache.data, w.cache.len, "C", summary, slen, &again);
  }
  tally_place_calc_close(&w);
  tally_place_calc_close(&c);
  tally_place_calc_close(&again);
  return 0;
}
