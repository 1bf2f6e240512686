/* Redis Cluster's key slots (slots.h). */
#include "redis/slots.h"

#include <string.h>

uint16_t tally_crc16(const char *s, size_t len) {
  uint16_t crc = 0;
  for (size_t i = 0; i < len; i++) {
    crc ^= (uint16_t)((uint8_t)s[i] << 8);
    for (int b = 0; b < 8; b++)
      crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021)
                           : (uint16_t)(crc << 1);
  }
  return crc;
}

unsigned tally_key_slot(const char *key, size_t len) {
  const char *open = memchr(key, '{', len);
  if (open != NULL) {
    size_t from = (size_t)(open - key) + 1;
    const char *close = memchr(open + 1, '}', len - from);
    /* "{}" (an empty tag) hashes the whole key. */
    if (close != NULL && close > open + 1)
      return tally_crc16(open + 1, (size_t)(close - open - 1)) %
             TALLY_CLUSTER_SLOTS;
  }
  return tally_crc16(key, len) % TALLY_CLUSTER_SLOTS;
}

bool tally_keys_one_slot(const char *const *keys, size_t n, unsigned *slot) {
  for (size_t i = 0; i < n; i++) {
    unsigned s = tally_key_slot(keys[i], strlen(keys[i]));
    if (i == 0)
      *slot = s;
    else if (s != *slot)
      return false;
  }
  return true;
}
