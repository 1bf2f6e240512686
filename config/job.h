/* Decodes jobs: one submission's testcase outcomes, as a platform sends
 * them. */
#ifndef TALLY_JOB_H
#define TALLY_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/arena.h"

/* One testcase's evaluation. text, time and memory point into the job's
 * JSON tree and are echoed verbatim into details; NULL means absent. */
typedef struct tally_eval_s {
  double outcome;
  const cJSON *text;
  const cJSON *time;
  const cJSON *memory;
} tally_eval_t;

/* The job key "type": a job to score, or a token used on a submission. */
typedef enum tally_job_type_e {
  TALLY_JOB_SCORE = 0, /* "score", the default */
  TALLY_JOB_TOKEN      /* "token" */
} tally_job_type_t;

typedef struct tally_job_s {
  cJSON *root;         /* its nodes are in arena; read-only once parsed */
  tally_arena_t arena; /* config/arena.h */
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
  /* A job for an answer task (docs/challenges.md): answer, an object,
   * replaces evaluations; the rest is optional. */
  const cJSON *answer;
  const cJSON *ground_truth; /* an object, or NULL */
  bool has_time_used;
  double time_used;
  bool has_usage;
  double input_tokens, output_tokens, llm_calls;
  bool verified, memoryless;
  int attempt; /* 0 when absent */
  /* A job for an agent_run task (docs/evaluation-specs.md): run, an
   * object, replaces evaluations; llm_judge_results (an array, or NULL)
   * beside it. Their contents are decoded when the run is scored. */
  const cJSON *run;
  const cJSON *llm_judge_results;
  /* After tally_job_bind (engine/bind.h): one per testcase. */
  tally_eval_t *evals;
  size_t evals_cap;
  unsigned char *seen; /* scratch for tally_job_bind */
  /* For task types that evaluate (batch, output_only), after
   * tally_job_bind: made owns the text lists evals point to and the admin
   * texts; admin[i] is testcase i's admin text (a string node), or NULL.
   * has_admin says whether any testcase has one. */
  cJSON *made;
  const cJSON **admin;
  bool has_admin;
  /* After tally_job_bind: whether the comparators pulled answers out of
   * the outputs (tally_compare_result_t.extracted): -1 none of them
   * extracts, 0 one found nothing, 1 every one that extracts found an
   * answer. */
  signed char extracted;
  /* After tally_job_bind: the first failure category a comparator named
   * (tally_compare_result_t.failure), or NULL. */
  const char *failure;
  /* The optional keys of a model benchmark's sample
   * (docs/benchmarks.md): response, a string, and error, a string or a
   * number; NULL when absent. */
  const cJSON *response;
  const cJSON *error;
  /* A judged task's verdict, which tallyd adds to the job
   * (docs/benchmarks.md): {"reply": text} or {"error": text}, with
   * "model" and "hash"; NULL when absent. Decoded by tally_job_bind. */
  const cJSON *judge;
  /* After tally_job_bind of a judged task: what became of the sample
   * (engine/judge.h's tally_judge_state_t; 0 for another task), its
   * verdict's text, and the prompt and system message a judge request
   * carries (in made, NULL when none is needed). */
  int judge_state;
  char judge_verdict[48];
  const char *judge_prompt;
  const char *judge_system;
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

/* Decodes one evaluation v (a bare outcome, or an object with outcome,
 * text, time and memory) into ev. unit: an outcome outside [0, 1] is an
 * error. Returns 0, or TALLY_EJOB with err naming evaluations[codename]
 * and the member. */
int tally_job_decode_eval(const cJSON *v, tally_eval_t *ev, bool unit,
                          char *err, size_t errlen);

/* Writes "evaluations[codename].sub: message" (codename and sub may be
 * NULL) to err and returns TALLY_EJOB. */
int tally_job_eval_error(char *err, size_t errlen, const char *codename,
                         const char *sub, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
