/* Writes results and job errors as the JSON lines tally prints and posts. */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include "config/job.h"
#include "config/jsonw.h"
#include "scoretypes/scoretype.h"

/* Scratch space reused from result to result. */
typedef struct tally_render_s {
  size_t *spans; /* byte ranges of details objects, for public_details */
  size_t cap;
  tally_buf_t plain; /* details without admin texts, when a job has some */
} tally_render_t;

void tally_render_init(tally_render_t *r);
void tally_render_close(tally_render_t *r);

/* Appends the result object of job (scored with task into res) to b, with
 * no newline. extra, if not NULL, is written verbatim as further members
 * ("\"key\":value" pairs, no leading comma). A testcase with an admin
 * text (job->admin) carries it as "admin_text" in details only, never in
 * public_details. Returns 0, or TALLY_ENOMEM. */
int tally_render_result(tally_render_t *r, tally_buf_t *b,
                        const tally_task_t *task, const tally_job_t *job,
                        const tally_result_t *res, const char *extra);

/* Appends to b the details array of the result, as in the result object
 * but without admin texts (these details are what the full view shows),
 * and records in r where each of its entries lies, for
 * tally_render_view_details. Returns 0, or TALLY_ENOMEM. */
int tally_render_details(tally_render_t *r, tally_buf_t *b,
                         const tally_task_t *task, const tally_job_t *job,
                         const tally_result_t *res);

/* Appends to b the details of the public view (docs/contest.md): the
 * public details with only the public testcases that task->feedback_level
 * shows. details is the buffer tally_render_details last wrote res's
 * details to with r (it may be b); the testcases are copied from it. Out
 * of memory sets b->oom. */
void tally_render_view_details(const tally_render_t *r, tally_buf_t *b,
                               const tally_buf_t *details,
                               const tally_task_t *task,
                               const tally_result_t *res);

/* Appends the start of a result object: {"submission" (when the job has
 * one), "task" and "participant" (when the job has one). */
void tally_render_head(tally_buf_t *b, const tally_task_t *task,
                       const tally_job_t *job);

/* Appends {"submission": ..., "error": msg} to b, with submission NULL
 * when unknown. */
void tally_render_error(tally_buf_t *b, const cJSON *submission,
                        const char *msg);

#endif
