/* Writes results and job errors as the JSON lines tally prints and posts. */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include "../config/job.h"
#include "jsonw.h"

/* Scratch space reused from result to result. */
typedef struct tally_render_s {
  size_t *spans; /* byte ranges of details objects, for public_details */
  size_t cap;
} tally_render_t;

void tally_render_init(tally_render_t *r);
void tally_render_close(tally_render_t *r);

/* Appends the result object of job (scored with task into res) to b, with
 * no newline. extra, if not NULL, is written verbatim as further members
 * ("\"key\":value" pairs, no leading comma). Returns 0, or TALLY_ENOMEM. */
int tally_render_result(tally_render_t *r, tally_buf_t *b,
                        const tally_task_t *task, const tally_job_t *job,
                        const tally_result_t *res, const char *extra);

/* Appends {"submission": ..., "error": msg} to b, with submission NULL
 * when unknown. */
void tally_render_error(tally_buf_t *b, const cJSON *submission,
                        const char *msg);

#endif
