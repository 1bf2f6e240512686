/* Redis Cluster's key slots (slots.h). */
#include "redis/slots.h"

#include <stdio.h>
#include <stdlib.h>
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

static int cmp_range(const void *a, const void *b) {
  const tally_slot_range_t *x = a, *y = b;
  return (x->from > y->from) - (x->from < y->from);
}

/* An integer element of a reply, within 0..max. */
static bool int_in(const redisReply *r, long long max, unsigned *out) {
  if (r->type != REDIS_REPLY_INTEGER || r->integer < 0 || r->integer > max)
    return false;
  *out = (unsigned)r->integer;
  return true;
}

int tally_slot_map_read(const redisReply *slots, tally_slot_map_t *m, char *err,
                        size_t errlen) {
  m->ranges = NULL;
  m->n = 0;
  if (slots == NULL || slots->type != REDIS_REPLY_ARRAY) {
    snprintf(err, errlen, "CLUSTER SLOTS: not an array");
    return -1;
  }
  m->ranges = calloc(slots->elements + 1, sizeof(*m->ranges));
  if (m->ranges == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < slots->elements; i++) {
    const redisReply *e = slots->element[i];
    tally_slot_range_t *r = &m->ranges[m->n];
    const redisReply *node =
        e->type == REDIS_REPLY_ARRAY && e->elements >= 3 ? e->element[2] : NULL;
    if (node == NULL ||
        !int_in(e->element[0], TALLY_CLUSTER_SLOTS - 1, &r->from) ||
        !int_in(e->element[1], TALLY_CLUSTER_SLOTS - 1, &r->to) ||
        r->from > r->to) {
      snprintf(err, errlen,
               "CLUSTER SLOTS: entry %zu is not a range of slots 0-16383 "
               "with its master",
               i);
      goto bad;
    }
    unsigned port = 0;
    if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
        node->element[0]->type != REDIS_REPLY_STRING ||
        node->element[0]->len >= sizeof(r->host) ||
        !int_in(node->element[1], 65535, &port) || port == 0) {
      snprintf(err, errlen,
               "CLUSTER SLOTS: the master of slots %u-%u has no address",
               r->from, r->to);
      goto bad;
    }
    memcpy(r->host, node->element[0]->str, node->element[0]->len);
    r->host[node->element[0]->len] = '\0';
    /* "?" stands for an address the node does not know. */
    if (strcmp(r->host, "?") == 0)
      r->host[0] = '\0';
    r->port = (int)port;
    m->n++;
  }
  qsort(m->ranges, m->n, sizeof(*m->ranges), cmp_range);
  for (size_t i = 1; i < m->n; i++)
    if (m->ranges[i].from <= m->ranges[i - 1].to) {
      snprintf(err, errlen, "CLUSTER SLOTS: slots %u-%u and %u-%u overlap",
               m->ranges[i - 1].from, m->ranges[i - 1].to, m->ranges[i].from,
               m->ranges[i].to);
      goto bad;
    }
  return 0;
bad:
  tally_slot_map_free(m);
  return -1;
}

void tally_slot_map_free(tally_slot_map_t *m) {
  free(m->ranges);
  m->ranges = NULL;
  m->n = 0;
}

const tally_slot_range_t *tally_slot_map_find(const tally_slot_map_t *m,
                                              unsigned slot) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->ranges[mid].to < slot)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->n && m->ranges[lo].from <= slot ? &m->ranges[lo] : NULL;
}

size_t tally_slot_nodes(const redisReply *slots, tally_slot_addr_t *out,
                        size_t max) {
  size_t n = 0;
  if (slots == NULL || slots->type != REDIS_REPLY_ARRAY)
    return 0;
  for (size_t i = 0; i < slots->elements; i++) {
    const redisReply *e = slots->element[i];
    for (size_t k = 2; e->type == REDIS_REPLY_ARRAY && k < e->elements; k++) {
      const redisReply *node = e->element[k];
      unsigned port = 0;
      if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
          node->element[0]->type != REDIS_REPLY_STRING ||
          node->element[0]->len == 0 ||
          node->element[0]->len >= sizeof(out->host) ||
          strcmp(node->element[0]->str, "?") == 0 ||
          !int_in(node->element[1], 65535, &port) || port == 0)
        continue;
      bool seen = false;
      for (size_t j = 0; j < n && !seen; j++)
        seen = out[j].port == (int)port &&
               strcmp(out[j].host, node->element[0]->str) == 0;
      if (seen || n == max)
        continue;
      snprintf(out[n].host, sizeof(out[n].host), "%s", node->element[0]->str);
      out[n++].port = (int)port;
    }
  }
  return n;
}

bool tally_slots_disabled(const redisReply *r) {
  return r->type == REDIS_REPLY_ERROR &&
         (strstr(r->str, "cluster support disabled") != NULL ||
          strncmp(r->str, "NOPERM", 6) == 0 ||
          strncmp(r->str, "ERR unknown command", 19) == 0);
}

bool tally_redirect_parse(const char *err, size_t len, bool *ask,
                          unsigned *slot, char *host, int *port) {
  size_t skip;
  if (len >= 6 && memcmp(err, "MOVED ", 6) == 0) {
    *ask = false;
    skip = 6;
  } else if (len >= 4 && memcmp(err, "ASK ", 4) == 0) {
    *ask = true;
    skip = 4;
  } else {
    return false;
  }
  const char *p = err + skip, *end = err + len;
  unsigned s = 0;
  size_t digits = 0;
  for (; p < end && *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
    s = s * 10 + (unsigned)(*p - '0');
  if (digits == 0 || s >= TALLY_CLUSTER_SLOTS || p == end || *p != ' ')
    return false;
  p++;
  /* HOST:PORT, the port after the last ':' (an IPv6 host has colons). */
  const char *colon = NULL;
  for (const char *q = p; q < end; q++)
    if (*q == ':')
      colon = q;
  if (colon == NULL || (size_t)(colon - p) >= 64 || colon + 1 == end)
    return false;
  long v = 0;
  for (const char *q = colon + 1; q < end; q++) {
    if (*q < '0' || *q > '9' || (v = v * 10 + (*q - '0')) > 65535)
      return false;
  }
  if (v == 0)
    return false;
  memcpy(host, p, (size_t)(colon - p));
  host[colon - p] = '\0';
  *slot = s;
  *port = (int)v;
  return true;
}
