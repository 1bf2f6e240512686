/* The one scoring path shared by `tally score`, the workers and the tests:
 * a job's JSON text in, one result (or error) JSON object out. */
#ifndef TALLY_ENGINE_H
#define TALLY_ENGINE_H

#include "render.h"
#include "taskset.h"

typedef struct tally_engine_s {
  const tally_taskset_t *tasks; /* borrowed */
  /* With one task given (tally score --task), jobs may omit "task". */
  const tally_task_t *default_task;
  tally_job_t job;
  tally_result_t res;
  tally_render_t render;
  char err[512];
} tally_engine_t;

/* tasks must outlive the engine, or be replaced with tally_engine_use. */
void tally_engine_init(tally_engine_t *e, const tally_taskset_t *tasks);
void tally_engine_close(tally_engine_t *e);
void tally_engine_use(tally_engine_t *e, const tally_taskset_t *tasks);

/* Scores the job in text (len bytes) and appends its result object to
 * out, with extra (if not NULL) as further members. Returns 0 when scored;
 * TALLY_EJOB when the job cannot be scored, after appending
 * {"submission", "error"} instead and leaving the message in e->err; or
 * TALLY_ENOMEM. */
int tally_engine_score(tally_engine_t *e, const char *text, size_t len,
                       const char *extra, tally_buf_t *out);

#endif
