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

#include "config/jsonw.h"
#include "contest/elo.h"

/* flat is the place's HGETALL reply: submission id -> '1' or '0'
 * (tokened) followed by its summary. Sets *score and *partial and returns
 * true when a submission made before freeze (timestamp < freeze) counts;
 * false when none does (the task has no frozen score). The score mode,
 * precision and rounding are those of the newest scored one of them. */
bool tally_frozen_score(const redisReply *flat, double freeze, double *score,
                        bool *partial);

/* A cell of a board opened (docs/scoreboard.md): of flat, a place's
 * HGETALL reply as above, the submissions made before freeze (INFINITY:
 * all), counted on the public side or with full on the full one. Appends
 * to out the JSON members "score" (null when none counts), "partial",
 * "score_mode", "submissions" (the official ones) and "subtasks": each
 * subtask's score as the mode counts it, with the submission it comes
 * from (under max_subtask, the first to reach the best; under max, the
 * first best submission; under max_tokened_last, the better of the last
 * official one and the best tokened one). The public side of a task of
 * subtasks counts as one (the sum of those all of whose testcases are
 * public, public_mask[k] for subtask k of nmask): it is shown as the
 * subtasks of the submission that gives the public score, a score of null
 * for one that is not public. [] for a task of one subtask. Returns 0, or
 * TALLY_ENOMEM. */
int tally_place_cell(const redisReply *flat, double freeze, bool full,
                     const bool *public_mask, size_t nmask, tally_buf_t *out);

/* flat is the HGETALL reply of a participant's matches in an arena
 * (<p>:{c}:matches:<u>): submission id -> "timestamp result opponent
 * verified attempt memoryless", as the contest scripts keep them. Replays
 * those made before freeze (timestamp < freeze) from the start, in
 * (timestamp, submission id) order, into *e and returns true; false when
 * none was (the participant is not on the frozen board). */
bool tally_frozen_elo(const redisReply *flat, double freeze, tally_elo_t *e);

#endif
