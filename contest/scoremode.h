/* CMS's score modes: a participant's score on a task, computed from the
 * scores of their submissions to it. */
#ifndef TALLY_SCOREMODE_H
#define TALLY_SCOREMODE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "scoretypes/scoretype.h"

/* tally_score_mode_t, the task key score_mode, is in scoretype.h. */

/* Sets *mode from its name. Returns 0, or TALLY_EINVAL (and leaves *mode
 * alone) for a name that is not one of the three. */
int tally_score_mode_parse(const char *name, tally_score_mode_t *mode);

/* The name of mode, in static storage; NULL for a value not in the enum. */
const char *tally_score_mode_name(tally_score_mode_t mode);

/* One side of a submission's result: its full scores, or its public ones.
 * What max_subtask needs is the score of each subtask. A result whose
 * details do not give one for every entry (Sum, whose details list
 * testcases; public details in which some subtask has a private testcase)
 * counts as one subtask worth the whole score, as in CMS. */
typedef struct tally_score_side_s {
  double score;
  double *subtasks; /* the score of subtask idx at [idx]; owned */
  size_t nsubtasks; /* 0: the result is one subtask, worth score */
  /* details [] with a score of 0: how CMS tells a compilation failure,
   * which adds nothing to any subtask under max_subtask. */
  bool not_compiled;
} tally_score_side_t;

/* What a score mode needs to know of one submission. */
typedef struct tally_submission_s {
  double timestamp; /* seconds; only the order matters */
  bool official;    /* only official submissions count */
  bool tokened;
  bool scored; /* false: not scored yet, or it could not be */
  tally_score_side_t priv;
  tally_score_side_t pub;
} tally_submission_t;

/* tally_submission_init makes an official, untokened, unscored submission
 * at timestamp 0; it never fails. tally_submission_close frees the
 * subtask arrays; the struct itself belongs to the caller. */
void tally_submission_init(tally_submission_t *s);
void tally_submission_close(tally_submission_t *s);

/* Reads the job keys a score mode uses from job, a job object:
 * "timestamp" (a number, default 0), "official" (a bool, default true)
 * and "tokened" (a bool, default false). Returns 0, or TALLY_EINVAL with
 * err naming the key when one has the wrong type; s is then unchanged. */
int tally_submission_read_job(tally_submission_t *s, const cJSON *job,
                              char *err, size_t errlen);

/* Fills both sides of s from result, a result object as tally writes it
 * (docs/protocol.md), and marks s scored. The subtask scores come from
 * details and public_details: each entry's "score", rounded to the task's
 * score_precision whatever its score_rounding, as CMS's task_score reads
 * them. Returns 0; TALLY_EINVAL with a message in err when score or
 * public_score is not a number; or TALLY_ENOMEM. On error s is left
 * unscored, its sides empty. */
int tally_submission_read_result(tally_submission_t *s, const cJSON *result,
                                 char *err, size_t errlen);

/* Fills both sides of s from res, the result of a job scored with task,
 * exactly as tally_submission_read_result would from the result object
 * tally writes for it (engine/render.c), without writing and reading that
 * text; marks s scored. Returns 0, or TALLY_ENOMEM with s unscored and
 * its sides empty. */
int tally_submission_set_result(tally_submission_t *s, const tally_task_t *task,
                                const tally_result_t *res);

/* A participant's score on a task. */
typedef struct tally_task_score_s {
  double score;        /* from the full scores */
  double public_score; /* from the public scores */
  bool partial;        /* some official submission is not scored */
  size_t submissions;  /* the official submissions counted */
} tally_task_score_t;

/* Computes the task score of subs (n of them, in any order: they are
 * ordered by timestamp, ties in the order given) under mode, as CMS's
 * task_score does:
 *   - only official submissions count; an unscored one counts as 0 and
 *     makes the score partial; no score is below 0;
 *   - max: the best score;
 *   - max_subtask: the sum over subtasks of each one's best score;
 *   - max_tokened_last: the better of the last submission's score and the
 *     best score of a tokened submission.
 * With TALLY_ROUND_SUBTASK the result is rounded to precision digits
 * (tally_round); with TALLY_ROUND_NONE it is not rounded. Returns 0, or
 * TALLY_EINVAL for a mode not in the enum; it allocates nothing. */
int tally_task_score(tally_score_mode_t mode, int precision,
                     tally_rounding_t rounding, const tally_submission_t *subs,
                     size_t n, tally_task_score_t *out);

#endif
