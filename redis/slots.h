/* Redis Cluster's key slots: CRC16 (XMODEM) of a key, or of its hash tag
 * (the part between the first '{' and the next '}', when not empty),
 * modulo 16384, as the cluster specification defines them. The first
 * piece of tally's cluster support (issue 25): which keys may share one
 * command or script. */
#ifndef TALLY_SLOTS_H
#define TALLY_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#define TALLY_CLUSTER_SLOTS 16384

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0). */
uint16_t tally_crc16(const char *s, size_t len);

/* The slot of a key of len bytes. */
unsigned tally_key_slot(const char *key, size_t len);

/* Whether the n keys (NUL-terminated) all hash to one slot, as one
 * command or script on a cluster needs; *slot gets it (n > 0). */
bool tally_keys_one_slot(const char *const *keys, size_t n, unsigned *slot);

/* The slot map of a cluster, as CLUSTER SLOTS gives it: ranges of slots
 * and the address of the master that serves each. */
typedef struct tally_slot_range_s {
  unsigned from, to; /* inclusive */
  char host[64];     /* "" : the node the map was read from */
  int port;
} tally_slot_range_t;

typedef struct tally_slot_map_s {
  tally_slot_range_t *ranges; /* sorted by from, not overlapping */
  size_t n;
} tally_slot_map_t;

/* Reads a CLUSTER SLOTS reply into m (malloc'ed; free with
 * tally_slot_map_free). Returns 0, or -1 with err naming what is wrong
 * (a range out of 0..16383, overlapping ones, a master without an
 * address); slots no range covers are allowed (a cluster being set up). */
int tally_slot_map_read(const redisReply *slots, tally_slot_map_t *m, char *err,
                        size_t errlen);
void tally_slot_map_free(tally_slot_map_t *m);
/* The range that holds slot, or NULL. */
const tally_slot_range_t *tally_slot_map_find(const tally_slot_map_t *m,
                                              unsigned slot);

/* A node's address in a CLUSTER SLOTS reply. */
typedef struct tally_slot_addr_s {
  char host[64];
  int port;
} tally_slot_addr_t;

/* Every distinct node address a CLUSTER SLOTS reply names, masters and
 * replicas, into out (max at most; "?" and malformed entries skipped).
 * Returns how many. */
size_t tally_slot_nodes(const redisReply *slots, tally_slot_addr_t *out,
                        size_t max);

/* Whether an error reply to CLUSTER SLOTS says the server is no cluster
 * node: cluster support disabled, or (for a user not allowed to ask, who
 * cannot be on a cluster either) NOPERM or an unknown command. */
bool tally_slots_disabled(const redisReply *r);

/* Reads a redirection error ("MOVED 3999 127.0.0.1:6381" or "ASK ..."):
 * whether it is ASK, the slot and the address (host 64 bytes; an IPv6
 * address without brackets). Returns false for any other text. */
bool tally_redirect_parse(const char *err, size_t len, bool *ask,
                          unsigned *slot, char *host, int *port);

#endif
