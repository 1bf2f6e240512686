/* Job text to result text: decode, bind to the task, score, render. */
#include "engine.h"

#include <stdio.h>
#include <string.h>

void tally_engine_init(tally_engine_t *e, const tally_taskset_t *tasks) {
  memset(e, 0, sizeof(*e));
  tally_job_init(&e->job);
  tally_result_init(&e->res);
  tally_render_init(&e->render);
  tally_engine_use(e, tasks);
}

void tally_engine_close(tally_engine_t *e) {
  tally_job_close(&e->job);
  tally_result_close(&e->res);
  tally_render_close(&e->render);
}

void tally_engine_use(tally_engine_t *e, const tally_taskset_t *tasks) {
  e->tasks = tasks;
  e->default_task = tasks->count == 1 ? tasks->entries[0].task : NULL;
}

/* Finds the job's task; with a single task loaded, jobs may omit it. */
static const tally_task_t *job_task(tally_engine_t *e) {
  const char *name = e->job.task;
  if (name == NULL) {
    if (e->default_task == NULL)
      snprintf(e->err, sizeof(e->err), "task: missing");
    return e->default_task;
  }
  const tally_task_t *task = tally_taskset_find(e->tasks, name);
  if (task == NULL)
    snprintf(e->err, sizeof(e->err), "task: unknown task \"%s\"", name);
  return task;
}

int tally_engine_score(tally_engine_t *e, const char *text, size_t len,
                       const char *extra, tally_buf_t *out) {
  const tally_task_t *task = NULL;
  int rc = tally_job_parse(&e->job, text, len, e->err, sizeof(e->err));
  if (rc == 0 && (task = job_task(e)) == NULL)
    rc = TALLY_EJOB;
  if (rc == 0)
    rc = tally_job_bind(&e->job, task, e->err, sizeof(e->err));
  if (rc == 0)
    rc = tally_score(task, e->job.evals, e->job.evaluated, &e->res, e->err,
                     sizeof(e->err));
  if (rc == 0) {
    size_t mark = out->len;
    rc = tally_render_result(&e->render, out, task, &e->job, &e->res, extra);
    if (rc != 0) {
      out->len = mark;
      snprintf(e->err, sizeof(e->err), "out of memory");
      return rc;
    }
    return 0;
  }
  if (rc == TALLY_ENOMEM)
    return rc;
  tally_render_error(out, e->job.submission, e->err);
  return out->oom ? TALLY_ENOMEM : TALLY_EJOB;
}
