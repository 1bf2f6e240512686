/* Redis key names that tallyd and the tally command both build
 * (docs/contest.md#key-encoding). */
#ifndef TALLY_KEYS_H
#define TALLY_KEYS_H

#include <stddef.h>

#include "engine/contests.h"

/* Writes the key <prefix><rest...> with enc() applied to each part after
 * the first (docs/contest.md: % as %25, : as %3A) into out (outlen
 * bytes): tally_rescore_key(out, n, "tally", ":index:task:", "a:b") gives
 * "tally:index:task:a%3Ab". Returns 0, or TALLY_E2BIG when it does not
 * fit. */
int tally_rescore_key(char *out, size_t outlen, const char *prefix,
                      const char *middle, const char *part);

/* Writes the common prefix of every key of contest c, <prefix>:{<c>}
 * (docs/contest.md: the id in a Redis Cluster hash tag, with %, :, { and
 * } percent-encoded; the empty id as %), into out (outlen bytes). Returns
 * 0, or TALLY_E2BIG when it does not fit. */
int tally_contest_key(char *out, size_t outlen, const char *prefix,
                      const char *c);

/* Writes the prefix of queue q's keys into out (outlen bytes): the prefix
 * itself for the main queue, <prefix>:{<q>} for any other, so that every
 * key of a named queue shares one Redis Cluster slot. Returns 0, or
 * TALLY_E2BIG when it does not fit. */
int tally_queue_prefix(char *out, size_t outlen, const char *prefix,
                       const char *q);

#endif
