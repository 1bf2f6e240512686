/* FNV-1a, 64 bits: a fast hash for the hash tables of tally's own (not
 * for anything an attacker may choose to collide on, where a table must
 * bound its chains itself). */
#ifndef TALLY_CONFIG_HASH_H
#define TALLY_CONFIG_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t tally_fnv1a(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

#endif
