/* Writes the result of an agent_run task's run (docs/evaluation-specs.md). */
#ifndef TALLY_RENDER_RUN_H
#define TALLY_RENDER_RUN_H

#include "config/job.h"
#include "config/jsonw.h"
#include "evalspecs/evaluate.h"
#include "scoretypes/scoretype.h"

/* Appends the result object of job, scored with task into res (the
 * rounded score) and ev (the evaluation), to b, with no newline; extra as
 * for tally_render_result. Returns 0, or TALLY_ENOMEM. */
int tally_render_run(tally_buf_t *b, const tally_task_t *task,
                     const tally_job_t *job, const tally_result_t *res,
                     const tally_es_eval_t *ev, const char *extra);

/* Appends the view of the run a contestant sees: {"score", "max_score",
 * "passed", "validity", "details"}, the details being the evaluation as
 * the task's feedback level shows it (full, or restricted: no actual or
 * expected values and no raw output), or whole when full is true. */
void tally_render_run_view(tally_buf_t *b, const tally_task_t *task,
                           const tally_result_t *res, const tally_es_eval_t *ev,
                           bool full);

#endif
