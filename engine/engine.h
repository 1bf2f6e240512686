/* The one scoring path shared by `tally score`, the workers and the tests:
 * a job's JSON text in, one result (or error) JSON object out, and, for
 * tallyd's contest state, the job's summary and views. */
#ifndef TALLY_ENGINE_H
#define TALLY_ENGINE_H

#include "contest/elo.h"
#include "engine/contests.h"
#include "engine/render.h"
#include "engine/taskset.h"
#include "evalspecs/evaluate.h"
#include "scorecards/scorecard.h"

/* tally_engine_score's answer for a token job, when the engine takes
 * them (accept_tokens). A positive code: it is not an error. */
#define TALLY_ENGINE_TOKEN 1
/* tally_engine_score's answer for a sample of a judged task that has no
 * verdict yet, when the engine takes them (accept_judge). */
#define TALLY_ENGINE_JUDGE 2

/* An engine holds no global state: each thread may use one of its own. */
typedef struct tally_engine_s {
  const tally_taskset_t *tasks; /* borrowed */
  /* The contest configs (borrowed; NULL: none): a job for a task its
   * contest does not list is refused. */
  const tally_contestset_t *contests;
  /* The queue the jobs come from (borrowed; NULL: not checked), and the
   * queue of contests whose config names none (NULL: TALLY_MAIN_QUEUE):
   * a job whose contest belongs to another queue is refused. */
  const char *queue;
  const char *default_queue;
  /* With one task given (tally score --task), jobs may omit "task". */
  const tally_task_t *default_task;
  /* Options, false after init; the caller sets them. accept_tokens: a
   * token job gets TALLY_ENGINE_TOKEN rather than a job error.
   * add_version: a result carries "version" (the task config's version)
   * after the extra members. */
  bool accept_tokens;
  bool add_version;
  /* accept_judge: a sample of a judged task (engine/judge.h) without a
   * verdict in its job gets TALLY_ENGINE_JUDGE, after appending the
   * request {"submission","prompt","system"}; without, it is scored as
   * unjudged (outcome 0). */
  bool accept_judge;
  /* summary_only: a scored job's result is not rendered (out gets nothing
   * for it); what the contest parts (tally_engine_summary) need is kept as
   * ever. tally rescore, which writes summaries only, sets it. */
  bool summary_only;
  tally_job_t job;
  tally_tt_eval_t tt; /* the task type's output, reused (engine/bind.h) */
  tally_result_t res;
  tally_card_result_t card; /* an answer task's match */
  /* An agent_run task's run and its evaluation; has_eval says that both
   * hold the last job's. */
  tally_es_run_t run;
  tally_es_eval_t eval;
  bool has_eval;
  tally_render_t render;
  /* The last job scored: its task (NULL when it was not scored), and its
   * details once a view needed them. */
  const tally_task_t *task;
  /* The last job's task when the job decoded and named a known task,
   * scored or not; NULL otherwise. */
  const tally_task_t *decoded_task;
  tally_buf_t details;
  bool details_ready;
  tally_buf_t extra; /* extra members plus "version" */
  char err[512];
} tally_engine_t;

/* tasks must outlive the engine, or be replaced with tally_engine_use. */
void tally_engine_init(tally_engine_t *e, const tally_taskset_t *tasks);
void tally_engine_close(tally_engine_t *e);
void tally_engine_use(tally_engine_t *e, const tally_taskset_t *tasks);

/* Scores the job in text (len bytes) and appends its result object to
 * out, with extra (if not NULL) as further members, then "version" when
 * add_version is set. Returns 0 when scored; TALLY_EJOB when the job
 * cannot be scored, after appending {"submission", "error"} instead and
 * leaving the message in e->err; or TALLY_ENOMEM.
 *
 * A token job ("type": "token") has nothing to score. With accept_tokens
 * set, it returns TALLY_ENGINE_TOKEN after appending the token body,
 * {"submission":"S","participant":"u"} (ids as strings, participant null
 * when absent). Without, it is a job error, "a token job has nothing to
 * score", so a caller that knows only 0, TALLY_EJOB and TALLY_ENOMEM
 * (tally score) prints it as one. */
int tally_engine_score(tally_engine_t *e, const char *text, size_t len,
                       const char *extra, tally_buf_t *out);

/* The contest state's parts of the job tally_engine_score last scored;
 * call them only after it returned 0 for that job (otherwise they return
 * TALLY_EINVAL and append nothing). Both append nothing, and return 0,
 * when the job lacks submission or participant.
 *
 * tally_engine_summary appends the summary (docs/contest.md, "Summary").
 * Returns 0; TALLY_EJOB with e->err naming the key when contest,
 * timestamp, official or tokened has the wrong type (the job is then a job
 * error for tallyd, though tally score printed its result); or
 * TALLY_ENOMEM. */
int tally_engine_summary(tally_engine_t *e, tally_buf_t *out);

/* Appends the unscored summary (tally_views_unscored) of the job
 * tally_engine_score last refused, when it decoded and named a known
 * task; appends nothing otherwise, or for a token job, or a job without
 * participant. This is all of a refused job that may reach the contest
 * state. Returns 0 or TALLY_ENOMEM. */
int tally_engine_unscored(tally_engine_t *e, tally_buf_t *out);

/* Appends the full view (full) or the public view of the last result
 * (docs/contest.md, "Views"). Returns 0 or TALLY_ENOMEM. */
int tally_engine_view(tally_engine_t *e, bool full, tally_buf_t *out);

/* Whether the job just scored is a rated match (docs/challenges.md): an
 * official, scored job of an answer task that names its submission and
 * participant. If so, fills m (m->submission is NULL: the caller names
 * the match) with its timestamp, result, the task's difficulty and the
 * job's verified, attempt and memoryless. */
bool tally_engine_rated(const tally_engine_t *e, tally_elo_match_t *m);

#endif
