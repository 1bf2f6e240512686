/* Redis Cluster's readers (redis/slots.c): the first line as a MOVED or
 * ASK error, the others as entries of a CLUSTER SLOTS reply ("FROM TO
 * HOST PORT", numbers as read by strtoll). Whatever the bytes: a
 * redirection read has a slot, a port and a host that fit; a map read is
 * sorted, without overlaps, and its lookup agrees with a scan. */
#include "redis/slots.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *lines[MAX_LINES];
  size_t n = 0;
  for (char *p = text; p != NULL && n < MAX_LINES;) {
    lines[n++] = p;
    char *nl = strchr(p, '\n');
    if (nl != NULL)
      *nl = '\0';
    p = nl != NULL ? nl + 1 : NULL;
  }
  bool ask;
  unsigned slot;
  char host[64];
  int port;
  if (tally_redirect_parse(lines[0], strlen(lines[0]), &ask, &slot, host,
                           &port) &&
      (slot >= TALLY_CLUSTER_SLOTS || port < 1 || port > 65535 ||
       strlen(host) >= 64))
    abort();
  tally_key_slot(lines[0], strlen(lines[0]));
  /* The entries, as hiredis would give them. */
  redisReply items[MAX_LINES][6], *node_el[MAX_LINES][2],
      *entry_el[MAX_LINES][3];
  redisReply *entries[MAX_LINES];
  char hosts[MAX_LINES][80];
  size_t k = 0;
  for (size_t i = 1; i < n; i++, k++) {
    long long from = 0, to = 0, p = 0;
    hosts[k][0] = '\0';
    sscanf(lines[i], "%lld %lld %79s %lld", &from, &to, hosts[k], &p);
    redisReply *it = items[k];
    memset(it, 0, sizeof(items[k]));
    it[0] = (redisReply){.type = REDIS_REPLY_INTEGER, .integer = from};
    it[1] = (redisReply){.type = REDIS_REPLY_INTEGER, .integer = to};
    it[2] = (redisReply){
        .type = REDIS_REPLY_STRING, .str = hosts[k], .len = strlen(hosts[k])};
    it[3] = (redisReply){.type = REDIS_REPLY_INTEGER, .integer = p};
    node_el[k][0] = &it[2];
    node_el[k][1] = &it[3];
    it[4] = (redisReply){
        .type = REDIS_REPLY_ARRAY, .elements = 2, .element = node_el[k]};
    entry_el[k][0] = &it[0];
    entry_el[k][1] = &it[1];
    entry_el[k][2] = &it[4];
    it[5] = (redisReply){
        .type = REDIS_REPLY_ARRAY, .elements = 3, .element = entry_el[k]};
    entries[k] = &it[5];
  }
  redisReply all = {
      .type = REDIS_REPLY_ARRAY, .elements = k, .element = entries};
  tally_slot_map_t m;
  char err[200];
  if (tally_slot_map_read(&all, &m, err, sizeof(err)) == 0) {
    for (size_t i = 0; i < m.n; i++)
      if (m.ranges[i].from > m.ranges[i].to ||
          m.ranges[i].to >= TALLY_CLUSTER_SLOTS ||
          (i > 0 && m.ranges[i].from <= m.ranges[i - 1].to))
        abort();
    for (unsigned s = 0; s < TALLY_CLUSTER_SLOTS; s += 97) {
      const tally_slot_range_t *want = NULL;
      for (size_t i = 0; i < m.n; i++)
        if (m.ranges[i].from <= s && s <= m.ranges[i].to)
          want = &m.ranges[i];
      if (tally_slot_map_find(&m, s) != want)
        abort();
    }
    tally_slot_map_free(&m);
  }
  free(text);
  return 0;
}
