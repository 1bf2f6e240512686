/* A submission's judgement as an ICPC contest gives it (the CCS
 * requirements' "Judge Responses"): accepted, wrong answer, time limit
 * exceeded, run-time error or compile error, from its testcases' outcomes
 * and texts and its task type (docs/contest.md#pass-fail-contests). */
#ifndef TALLY_JUDGEMENT_H
#define TALLY_JUDGEMENT_H

#include "config/job.h"
#include "scoretypes/scoretype.h"

/* The judgement of job, scored with task into res: "AC", "WA", "TLE",
 * "RTE" or "CE" (static strings).
 * - A job whose compilation failed is CE.
 * - A task with testcases: the judgement of the first testcase, in
 *   codename byte order, that is not accepted (outcome below 1), or AC
 *   when every one is. A testcase's text decides its kind: CMS's "timed
 *   out" texts give TLE; its texts for a run killed by a signal, ended
 *   with a nonzero code or over the memory limit give RTE; anything else
 *   (a wrong or partial output, a file not submitted, an output over its
 *   limit) gives WA.
 * - A task without testcases (answer, agent_run): AC when its score
 *   reaches a positive max_score, WA otherwise. */
const char *tally_judgement(const tally_task_t *task, const tally_job_t *job,
                            const tally_result_t *res);

/* The judgement a testcase with this outcome and text gets. */
const char *tally_judgement_testcase(double outcome, const cJSON *text);

#endif
