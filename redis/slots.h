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

#define TALLY_CLUSTER_SLOTS 16384

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0). */
uint16_t tally_crc16(const char *s, size_t len);

/* The slot of a key of len bytes. */
unsigned tally_key_slot(const char *key, size_t len);

/* Whether the n keys (NUL-terminated) all hash to one slot, as one
 * command or script on a cluster needs; *slot gets it (n > 0). */
bool tally_keys_one_slot(const char *const *keys, size_t n, unsigned *slot);

#endif
