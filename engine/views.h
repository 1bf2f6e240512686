/* Writes what tallyd's contest state keeps of a scored job: its summary,
 * its public and full views, and the body of a token job
 * (docs/contest.md). */
#ifndef TALLY_VIEWS_H
#define TALLY_VIEWS_H

#include "engine/render.h"

/* Whether job takes part in the contest state: it names both its
 * submission and its participant. The summary and the views of a job
 * that does not are empty. */
bool tally_views_wanted(const tally_job_t *job);

/* Appends id, a string or a finite number, as a JSON string: a number is
 * written as the JSON text tally writes for it (so 7 and 7.0 are "7"). */
void tally_views_id(tally_buf_t *b, const cJSON *id);

/* Appends the summary of job, scored with task into res, to b (compact
 * JSON, members in the order of docs/contest.md), with version as the
 * task config's version. match is the match's result ("win", "draw" or
 * "loss") of an answer task, which adds the "match" member Elo ratings
 * read (docs/challenges.md), or NULL. Appends nothing when
 * tally_views_wanted is
 * false. Returns 0; TALLY_EJOB with err naming the key when timestamp,
 * official or tokened has the wrong type (which a job tally_job_parse
 * accepted never has); or TALLY_ENOMEM. On error b is cut back to its
 * length on entry. */
int tally_views_summary(tally_buf_t *b, const tally_task_t *task,
                        const tally_job_t *job, const tally_result_t *res,
                        const char *version, const char *match, char *err,
                        size_t errlen);

/* Whether the summary of job carries the "sample" member of benchmark
 * reports (docs/benchmarks.md): the task compares outputs (batch,
 * output_only) or has a category, a correct_threshold or
 * refusal_phrases, or the job has a response or an error. */
bool tally_views_is_sample(const tally_task_t *task, const tally_job_t *job);

/* Appends the summary of job as an unscored submission of task to b:
 * {"submission","participant","contest","task","timestamp","official",
 * "tokened","scored":false}, every field as the job decoder checked it.
 * Appends nothing when tally_views_wanted is false or job is a token
 * job. Returns 0 or TALLY_ENOMEM (b cut back). */
int tally_views_unscored(tally_buf_t *b, const tally_task_t *task,
                         const tally_job_t *job);

/* Appends a view of res to b: the full view (score, max_score, details)
 * or the public one (public score and max, the details the feedback level
 * shows). details is the buffer tally_render_details last wrote res's
 * details to with r. Appends nothing when tally_views_wanted(job) is
 * false. Returns 0 or TALLY_ENOMEM. */
int tally_views_view(tally_buf_t *b, const tally_render_t *r,
                     const tally_buf_t *details, const tally_task_t *task,
                     const tally_job_t *job, const tally_result_t *res,
                     bool full);

/* Appends the body of a token job, {"submission":"S","participant":"u"},
 * with ids written by tally_views_id and participant null when absent.
 * Returns 0 or TALLY_ENOMEM. */
int tally_views_token(tally_buf_t *b, const tally_job_t *job);

#endif
