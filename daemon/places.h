/* What tallyd last saw written to the place caches it posts to
 * (docs/contest.md, "Task scores computed by tallyd"): a bounded memory from a
 * place (contest, participant and task) to the bytes of its cache, so that the
 * next post to the place can compute its task score in C
 * (contest/placecalc.h) for the post script to check and write. It is a
 * guess, never the truth: the script uses what it is given only when the
 * cache it reads is these very bytes. */
#ifndef TALLY_DAEMON_PLACES_H
#define TALLY_DAEMON_PLACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Places remembered, at most: a slot per hash, a new place taking the
 * slot of another (a cache is about 150 bytes: 16,384 places take
 * about 3 MiB). */
#define TALLY_PLACES_SLOTS 16384

typedef struct tally_places_slot_s {
  uint64_t hash;
  char *key; /* key bytes, then the cache bytes */
  size_t key_len, cache_len;
} tally_places_slot_t;

typedef struct tally_places_s {
  tally_places_slot_t *slots; /* TALLY_PLACES_SLOTS, made by the first put
                                 (NULL until then, or when memory is
                                 short: nothing is remembered) */
} tally_places_t;

void tally_places_init(tally_places_t *p);
void tally_places_close(tally_places_t *p);

/* The place key of contest, participant and task: the three joined by
 * NUL bytes into a new string, its length in *len; NULL when memory is
 * short. */
char *tally_places_key(const char *contest, const char *participant,
                       const char *task, size_t *len);

/* The cache remembered for key, or NULL (*len then 0). Valid until the
 * next put. */
const char *tally_places_get(const tally_places_t *p, const char *key,
                             size_t key_len, size_t *len);

/* Remembers cache (len bytes) for key; len 0 forgets the place. */
void tally_places_put(tally_places_t *p, const char *key, size_t key_len,
                      const char *cache, size_t len);

#endif
