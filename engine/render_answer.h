/* Writes the result of an answer task's match (docs/challenges.md). */
#ifndef TALLY_RENDER_ANSWER_H
#define TALLY_RENDER_ANSWER_H

#include "config/job.h"
#include "config/jsonw.h"
#include "scorecards/scorecard.h"
#include "scoretypes/scoretype.h"

/* Appends the result object of job, scored with task into res (the
 * rounded totals) and cr (the dimensions, warnings and violations), to b,
 * with no newline; extra as for tally_render_result. Returns 0, or
 * TALLY_ENOMEM. */
int tally_render_answer(tally_buf_t *b, const tally_task_t *task,
                        const tally_job_t *job, const tally_result_t *res,
                        const tally_card_result_t *cr, const char *extra);

/* Appends the details of the match: {"score_breakdown": {...}}, of every
 * dimension, or of the public ones only. */
void tally_render_answer_details(tally_buf_t *b, const tally_task_t *task,
                                 const tally_card_result_t *cr,
                                 bool public_only);

#endif
