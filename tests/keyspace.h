/* Two prefixes' Redis state compared key by key: what a test runs twice,
 * once each way, must leave the same keys with the same contents. */
#ifndef TALLY_TESTS_KEYSPACE_H
#define TALLY_TESTS_KEYSPACE_H

#include <hiredis/hiredis.h>
#include <stddef.h>

/* Compares every key under "<a>:" with the key of the same name under
 * "<b>:" and the other way round: strings, hashes and sets (sorted: a
 * hash's order is Redis's own), sorted sets (with scores) and streams
 * (entries in order, their ids left out). In every value, a stream id
 * (13 digits, '-', digits) counts as any other, since the two runs'
 * clocks differ, and a key's name as the other prefix's. Returns the number of
 * keys that differ, the first of them described in why. */
int tr_keyspace_diff(redisContext *c, const char *a, const char *b, char *why,
                     size_t why_len);

/* How many times the server on c ran command name (lower case) since it
 * started or its last CONFIG RESETSTAT, by INFO commandstats. */
long long tr_command_calls(redisContext *c, const char *name);

/* Loads on c the contest library (redis/lua/contest.lua) with a harness
 * that recomputes one place from its fields, as the scripts' own compute
 * does; its sha into sha. Returns 0, or -1 when Redis refused it. */
int tr_recompute_load(redisContext *c, char sha[64]);

/* That harness run (by sha) over flat, a place's fields as HGETALL gives
 * them: an array of the task score's JSON and the place cache, each nil
 * when there is none; NULL when Redis did not answer so. The caller frees
 * it. */
redisReply *tr_recompute(redisContext *c, const char *sha,
                         const redisReply *flat);

#endif
