/* The direct rescore of a submission (docs/contest.md, "The direct
 * rescore"): what the rescore script writes for one submission that stays
 * in its place, made by tally rescore, so that the script decodes no
 * summary and formats no number of it. */
#ifndef TALLY_CONTEST_RESCOREDIRECT_H
#define TALLY_CONTEST_RESCOREDIRECT_H

#include "contest/placecalc.h"

#include <stdbool.h>
#include <stddef.h>

/* Its texts, each at buf + off[i], len[i] bytes: */
enum {
  TALLY_RDIRECT_CONTEST, /* the place, as idtext writes it */
  TALLY_RDIRECT_PARTICIPANT,
  TALLY_RDIRECT_TASK,
  TALLY_RDIRECT_SCORE,        /* the record's score, as num writes it */
  TALLY_RDIRECT_PUBLIC_SCORE, /* its public_score */
  TALLY_RDIRECT_VERSION,      /* its version */
  TALLY_RDIRECT_CHANGE,       /* the <p>:changes entry; "" when the scores
                                 are the stored ones */
  TALLY_RDIRECT_MOVED,        /* '0' or '1' for the public score, then the
                                 score: whether each moved; then the
                                 tokened flag the record was read with */
  TALLY_RDIRECT_EVENT,        /* the "rescore" event up to its "tokened" */
  TALLY_RDIRECT_VIEW_PUBLIC,  /* the event's view, untokened */
  TALLY_RDIRECT_VIEW_FULL,    /* and tokened */
  TALLY_RDIRECT_COUNT
};

typedef tally_texts_t tally_rescore_direct_t;
_Static_assert(TALLY_RDIRECT_COUNT <= TALLY_TEXTS_MAX,
               "a direct rescore's texts");

/* What the rescore script reads of the stored scores: whether the record
 * is scored ("1"), and its scores then, as tonumber reads them; and
 * whether it was tokened ("1") when read, which the caller sets (false
 * until then). */
typedef struct tally_rescore_old_s {
  bool scored;
  double score, public_score;
  bool tokened;
} tally_rescore_old_t;

/* Whether submission S, whose new summary is text (len bytes), may be
 * rescored directly, as far as the stored fields it was read with tell:
 * summary (NULL: none) and the scored, score and public_score fields
 * (NULL: none), which *old then holds as the script reads them. Not when
 * the stored summary is missing, a rated match or of another place (told
 * from the bytes as the script's same_place does, else decoded), or a
 * stored score is not a plain finite number. tally_rescore_direct checks
 * the new summary. */
bool tally_rescore_direct_applies(const char *text, size_t len,
                                  const char *stored, size_t stored_len,
                                  const char *scored, const char *score,
                                  const char *public_score,
                                  tally_rescore_old_t *old);

/* Makes the direct rescore of submission S (one that applies) into *d.
 * Returns 0, or -1 when it does not apply after all (the new summary is not
 * scored, is a rated match or has no version) or memory is short: the
 * script then rescores it from the summary as before. */
int tally_rescore_direct(const char *text, size_t len, const char *S,
                         const tally_rescore_old_t *old,
                         tally_rescore_direct_t *d);

#endif
