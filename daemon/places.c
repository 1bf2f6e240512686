/* The place memory (places.h): a direct-mapped table, FNV-1a hashed. */
#include "daemon/places.h"

#include "config/hash.h"

#include <stdlib.h>
#include <string.h>

void tally_places_init(tally_places_t *p) {
  p->slots = NULL;
}

void tally_places_close(tally_places_t *p) {
  for (size_t i = 0; p->slots != NULL && i < TALLY_PLACES_SLOTS; i++)
    free(p->slots[i].key);
  free(p->slots);
  p->slots = NULL;
}

char *tally_places_key(const char *contest, const char *participant,
                       const char *task, size_t *len) {
  size_t a = strlen(contest), b = strlen(participant), c = strlen(task);
  char *k = malloc(a + b + c + 3);
  if (k == NULL)
    return NULL;
  memcpy(k, contest, a);
  k[a] = '\0';
  memcpy(k + a + 1, participant, b);
  k[a + 1 + b] = '\0';
  memcpy(k + a + b + 2, task, c + 1);
  *len = a + b + c + 2;
  return k;
}

static tally_places_slot_t *slot_of(const tally_places_t *p, uint64_t h) {
  return &p->slots[h % TALLY_PLACES_SLOTS];
}

const char *tally_places_get(const tally_places_t *p, const char *key,
                             size_t key_len, size_t *len) {
  *len = 0;
  if (p->slots == NULL)
    return NULL;
  uint64_t h = tally_fnv1a(key, key_len);
  const tally_places_slot_t *s = slot_of(p, h);
  if (s->key == NULL || s->hash != h || s->key_len != key_len ||
      memcmp(s->key, key, key_len) != 0)
    return NULL;
  *len = s->cache_len;
  return s->key + key_len;
}

void tally_places_put(tally_places_t *p, const char *key, size_t key_len,
                      const char *cache, size_t len) {
  if (p->slots == NULL && len > 0)
    p->slots = calloc(TALLY_PLACES_SLOTS, sizeof(*p->slots));
  if (p->slots == NULL)
    return;
  uint64_t h = tally_fnv1a(key, key_len);
  tally_places_slot_t *s = slot_of(p, h);
  bool mine = s->key != NULL && s->hash == h && s->key_len == key_len &&
              memcmp(s->key, key, key_len) == 0;
  if (len == 0) {
    if (mine) {
      free(s->key);
      memset(s, 0, sizeof(*s));
    }
    return;
  }
  char *k = malloc(key_len + len);
  if (k == NULL)
    return;
  memcpy(k, key, key_len);
  memcpy(k + key_len, cache, len);
  free(s->key);
  *s = (tally_places_slot_t){h, k, key_len, len};
}
