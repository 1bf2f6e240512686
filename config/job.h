/* Decodes jobs: one submission's testcase outcomes, as a platform sends
 * them. */
#ifndef TALLY_JOB_H
#define TALLY_JOB_H

#include "scoretypes/scoretype.h"
#include "tasktypes/tasktype.h"

/* The job key "type": a job to score, or a token used on a submission. */
typedef enum tally_job_type_e {
  TALLY_JOB_SCORE = 0, /* "score", the default */
  TALLY_JOB_TOKEN      /* "token" */
} tally_job_type_t;

typedef struct tally_job_s {
  cJSON *root; /* owned */
  tally_job_type_t type;
  const cJSON *submission;  /* string or number, or NULL when absent */
  const cJSON *participant; /* string or number, or NULL when absent */
  const cJSON *contest;     /* string or number, or NULL when absent */
  const char *task;         /* NULL when absent */
  double timestamp;         /* 0 when absent */
  bool official;            /* true when absent */
  bool tokened;             /* false when absent */
  /* After tally_job_parse, even one that failed later on (evaluations):
   * the ids, timestamp, official, tokened and type passed their checks. */
  bool keys_ok;
  bool evaluated;           /* false: "compilation": "failed" */
  const cJSON *evaluations; /* the object, when evaluated */
  tally_eval_t *evals;      /* after tally_job_bind: one per testcase */
  size_t evals_cap;
  unsigned char *seen; /* scratch for tally_job_bind */
  /* For task types that evaluate (batch, output_only), after
   * tally_job_bind: made owns the text lists evals point to and the admin
   * texts; admin[i] is testcase i's admin text (a string node), or NULL.
   * has_admin says whether any testcase has one. */
  cJSON *made;
  const cJSON **admin;
  bool has_admin;
  tally_tt_eval_t tt; /* scratch for the task type */
} tally_job_t;

/* A job struct is reused from job to job; close frees its buffers. */
void tally_job_init(tally_job_t *job);
void tally_job_close(tally_job_t *job);

/* Parses the job JSON text (len bytes), dropping any previous job. On
 * error returns TALLY_EJOB with a message naming the field in err; if the
 * JSON itself was valid and the submission id is, job->submission is
 * still set for the reply. The ids
 * (submission, participant, contest, task) must pass
 * tally_json_id_error; timestamp, official and tokened are checked too. A
 * token job ("type": "token") needs only submission (and may name its
 * participant); its evaluations are neither read nor checked. */
int tally_job_parse(tally_job_t *job, const char *text, size_t len, char *err,
                    size_t errlen);

/* Matches the job's evaluations to task's testcases, filling job->evals.
 * Returns 0, or TALLY_EJOB with err naming the codename and the problem:
 * a missing or unknown testcase, or an outcome that is not finite or, for
 * types with TALLY_SCORE_UNIT_OUTCOMES, outside [0, 1]. For a task whose
 * task type evaluates, each evaluation goes through the type instead
 * (docs/tasktypes.md), which fills the outcome, a text list with its
 * message, time, memory and the admin texts; a missing testcase is an
 * error only for types without TALLY_TT_MISSING_OK. May also return
 * TALLY_ENOMEM. */
int tally_job_bind(tally_job_t *job, const tally_task_t *task, char *err,
                   size_t errlen);

#endif
