/* Matches a job's evaluations to the testcases of its task. */
#ifndef TALLY_BIND_H
#define TALLY_BIND_H

#include "config/job.h"
#include "scoretypes/scoretype.h"
#include "tasktypes/tasktype.h"

/* Matches the job's evaluations to task's testcases, filling job->evals.
 * Returns 0, or TALLY_EJOB with err naming the codename and the problem:
 * a missing or unknown testcase, or an outcome that is not finite or, for
 * types with TALLY_SCORE_UNIT_OUTCOMES, outside [0, 1]. For a task whose
 * task type evaluates, each evaluation goes through the type instead
 * (docs/tasktypes.md), which fills the outcome, a text list with its
 * message, time, memory and the admin texts; a missing testcase is an
 * error only for types without TALLY_TT_MISSING_OK. scratch is the task
 * type's output, kept by the caller from job to job for its buffers
 * (zeroed at first; the caller frees its texts). May also return
 * TALLY_ENOMEM. */
int tally_job_bind(tally_job_t *job, const tally_task_t *task,
                   tally_tt_eval_t *scratch, char *err, size_t errlen);

/* The text of the job's key name: a string (*out_len bytes, which may
 * hold NULs), or a number as an integer or %.17g (into buf, len bytes);
 * NULL when the job has no such key or it is neither. For a task's
 * from_job (docs/benchmarks.md). */
const char *tally_job_key_text(const tally_job_t *job, const char *name,
                               char *buf, size_t len, size_t *out_len);

#endif
