/* The frozen board (docs/scoreboard.md#the-freeze): a participant's
 * public task score counting only the submissions made before the
 * freeze, computed from their place (<p>:{c}:pt:<u>:<t>) with the score
 * modes of contest/scoremode.h, as the contest scripts compute the live
 * one; and an arena's Elo rating from the matches made before it, with
 * contest/elo.h. */
#ifndef TALLY_FROZEN_H
#define TALLY_FROZEN_H

#include <stdbool.h>

#include <hiredis/hiredis.h>

#include "contest/elo.h"

/* flat is the place's HGETALL reply: submission id -> '1' or '0'
 * (tokened) followed by its summary. Sets *score and *partial and returns
 * true when a submission made before freeze (timestamp < freeze) counts;
 * false when none does (the task has no frozen score). The score mode,
 * precision and rounding are those of the newest scored one of them. */
bool tally_frozen_score(const redisReply *flat, double freeze, double *score,
                        bool *partial);

/* flat is the HGETALL reply of a participant's matches in an arena
 * (<p>:{c}:matches:<u>): submission id -> "timestamp result opponent
 * verified attempt memoryless", as the contest scripts keep them. Replays
 * those made before freeze (timestamp < freeze) from the start, in
 * (timestamp, submission id) order, into *e and returns true; false when
 * none was (the participant is not on the frozen board). */
bool tally_frozen_elo(const redisReply *flat, double freeze, tally_elo_t *e);

#endif
