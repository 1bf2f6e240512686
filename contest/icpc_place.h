/* A pass-fail board's submissions, read from a contest's places
 * (<p>:{c}:pt:<u>:<t>, docs/contest.md): each summary's timestamp,
 * official flag and judgement. */
#ifndef TALLY_ICPC_PLACE_H
#define TALLY_ICPC_PLACE_H

#include <hiredis/hiredis.h>

#include "contest/icpc.h"

/* A growing list of submissions, each of whose strings it owns. */
typedef struct tally_icpc_subs_s {
  tally_icpc_sub_t *subs;
  size_t n, cap;
} tally_icpc_subs_t;

/* Appends the submissions of flat, the place's HGETALL reply (submission
 * id -> '1' or '0' (tokened) followed by its summary), to v as
 * participant's on task. An unscored summary has no judgement (pending);
 * a scored one from before judgements were kept is CE when not
 * compiled, AC at its full score and WA otherwise. A reply that is not
 * an array adds nothing. Returns 0, or -1 when out of memory. */
int tally_icpc_place_read(tally_icpc_subs_t *v, const redisReply *flat,
                          const char *participant, const char *task);
void tally_icpc_subs_free(tally_icpc_subs_t *v);

#endif
