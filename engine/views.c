/* Summaries, views and token bodies, written with the JSON writer. */
#include "engine/views.h"
#include "engine/judge.h"

#include "config/json.h"
#include "contest/scoremode.h"
#include "engine/bind.h"
#include "engine/judgement.h"
#include "scorecards/scorecard.h"
#include "stats/failure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Cuts b back to len bytes; an out-of-memory flag stays set. */
static void cut(tally_buf_t *b, size_t len) {
  if (b->data != NULL && len <= b->len) {
    b->len = len;
    b->data[len] = '\0';
  }
}

bool tally_views_wanted(const tally_job_t *job) {
  return job->submission != NULL && job->participant != NULL;
}

void tally_views_id(tally_buf_t *b, const cJSON *id) {
  if (cJSON_IsString(id)) {
    tally_json_str(b, id->valuestring);
    return;
  }
  /* The digits of a number never need an escape. */
  tally_buf_putc(b, '"');
  tally_json_num(b, cJSON_IsNumber(id) ? id->valuedouble : NAN);
  tally_buf_putc(b, '"');
}

/* Writes ,"key": (or "key": when first). */
static void put_key(tally_buf_t *b, const char *key, bool first) {
  if (!first)
    tally_buf_putc(b, ',');
  tally_buf_putc(b, '"');
  tally_buf_puts(b, key);
  tally_buf_puts(b, "\":");
}

static void put_bool(tally_buf_t *b, const char *key, bool v) {
  put_key(b, key, false);
  tally_buf_puts(b, v ? "true" : "false");
}

static void put_num(tally_buf_t *b, const char *key, double v) {
  put_key(b, key, false);
  tally_json_num(b, v);
}

/* Writes a side's subtask scores: an array, or null for one subtask. */
static void put_subtasks(tally_buf_t *b, const char *key,
                         const tally_score_side_t *side) {
  put_key(b, key, false);
  if (side->nsubtasks == 0) {
    tally_buf_puts(b, "null");
    return;
  }
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < side->nsubtasks; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_num(b, side->subtasks[i]);
  }
  tally_buf_putc(b, ']');
}

/* Writes {"submission","participant","contest","task","timestamp",
 * "official" of job, the task named by task's name. */
static void put_ids(tally_buf_t *b, const tally_task_t *task,
                    const tally_job_t *job) {
  tally_buf_putc(b, '{');
  put_key(b, "submission", true);
  tally_views_id(b, job->submission);
  put_key(b, "participant", false);
  tally_views_id(b, job->participant);
  put_key(b, "contest", false);
  if (job->contest != NULL)
    tally_views_id(b, job->contest);
  else
    tally_buf_puts(b, "\"default\"");
  put_key(b, "task", false);
  tally_json_str(b, task->name);
  put_num(b, "timestamp", job->timestamp);
  put_bool(b, "official", job->official);
}

int tally_views_unscored(tally_buf_t *b, const tally_task_t *task,
                         const tally_job_t *job) {
  if (!tally_views_wanted(job) || job->type != TALLY_JOB_SCORE)
    return 0;
  size_t mark = b->len;
  put_ids(b, task, job);
  put_bool(b, "tokened", job->tokened);
  tally_buf_puts(b, ",\"scored\":false}");
  if (b->oom) {
    cut(b, mark);
    return TALLY_ENOMEM;
  }
  return 0;
}

/* The model's response of a benchmark sample: the job's "response", or
 * the output of its one evaluation; NULL when there is neither. */
static const char *sample_response(const tally_job_t *job, size_t *len) {
  const cJSON *r = job->response;
  const cJSON *ev = job->evaluations;
  if (r == NULL && cJSON_IsObject(ev) && ev->child != NULL &&
      ev->child->next == NULL)
    r = cJSON_IsString(ev->child)
            ? ev->child
            : cJSON_GetObjectItemCaseSensitive(ev->child, "output");
  if (!cJSON_IsString(r))
    return NULL;
  *len = tally_json_strlen(r);
  return r->valuestring;
}

bool tally_views_is_sample(const tally_task_t *task, const tally_job_t *job) {
  return task->comparator != NULL || task->category != NULL ||
         task->job_problem != NULL || task->job_category != NULL ||
         task->correct_threshold != 1 || task->refusals != NULL ||
         job->response != NULL || job->error != NULL;
}

/* Appends the "sample" member: what a benchmark report reads
 * (docs/benchmarks.md). */
static void put_sample(tally_buf_t *b, const tally_task_t *task,
                       const tally_job_t *job, double score) {
  double thr = task->correct_threshold > 0 ? task->correct_threshold : 1;
  bool correct = task->max_score > 0 && score / task->max_score >= thr;
  size_t len = 0;
  const char *resp = sample_response(job, &len);
  tally_sample_facts_t f = {.error = job->error,
                            .response = resp,
                            .response_len = len,
                            .correct = correct,
                            .extracted = job->extracted,
                            .cause = job->failure};
  const char *failure = tally_failure_classify(
      &f, (const char *const *)task->refusals, task->nrefusals);
  put_key(b, "sample", false);
  tally_buf_putc(b, '{');
  /* The problem (when from_job names it; else the task is the problem)
   * and category of from_job (both checked by tally_job_bind), else the
   * task's category. */
  char buf[32];
  size_t n = 0;
  const char *problem =
      task->job_problem != NULL
          ? tally_job_key_text(job, task->job_problem, buf, sizeof(buf), &n)
          : NULL;
  if (problem != NULL) {
    put_key(b, "problem", true);
    tally_json_strn(b, problem, n);
  }
  const char *category =
      task->job_category != NULL
          ? tally_job_key_text(job, task->job_category, buf, sizeof(buf), &n)
          : NULL;
  put_key(b, "category", problem == NULL);
  if (category != NULL)
    tally_json_strn(b, category, n);
  else
    tally_json_str(b, task->category != NULL ? task->category : "unknown");
  put_num(b, "correct_threshold", thr);
  put_bool(b, "correct", correct);
  put_key(b, "extracted", false);
  tally_buf_puts(b, job->extracted < 0   ? "null"
                    : job->extracted > 0 ? "true"
                                         : "false");
  const char *judged = tally_judge_state_name(job->judge_state);
  if (judged != NULL) {
    put_key(b, "judge", false);
    tally_json_str(b, judged);
    if (job->judge_verdict[0] != '\0') {
      put_key(b, "verdict", false);
      tally_json_str(b, job->judge_verdict);
    }
  }
  put_key(b, "failure", false);
  if (failure == NULL) {
    tally_buf_puts(b, "null");
  } else {
    tally_json_str(b, failure);
    put_key(b, "preview", false);
    size_t n = resp != NULL ? tally_failure_preview_len(resp, len, 200) : 0;
    tally_json_strn(b, resp != NULL ? resp : "", n);
  }
  tally_buf_putc(b, '}');
}

int tally_views_summary(tally_buf_t *b, const tally_task_t *task,
                        const tally_job_t *job, const tally_result_t *res,
                        const char *version, const char *match, char *err,
                        size_t errlen) {
  if (!tally_views_wanted(job))
    return 0;
  tally_submission_t s;
  tally_submission_init(&s);
  if (tally_submission_read_job(&s, job->root, err, errlen) != 0)
    return TALLY_EJOB;
  if (tally_submission_set_result(&s, task, res) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }

  size_t mark = b->len;
  put_ids(b, task, job);
  put_bool(b, "tokened", s.tokened);
  put_key(b, "version", false);
  tally_json_str(b, version != NULL ? version : "");
  put_key(b, "score_mode", false);
  tally_json_str(b, tally_score_mode_name(task->score_mode));
  put_num(b, "score_precision", task->score_precision);
  put_key(b, "score_rounding", false);
  tally_json_str(b,
                 task->score_rounding == TALLY_ROUND_NONE ? "none" : "subtask");
  put_num(b, "score", s.priv.score);
  put_num(b, "public_score", s.pub.score);
  put_num(b, "max_score", task->max_score);
  put_num(b, "max_public_score", task->max_public_score);
  put_bool(b, "compiled", !s.priv.not_compiled);
  put_subtasks(b, "subtasks", &s.priv);
  put_subtasks(b, "public_subtasks", &s.pub);
  put_key(b, "judgement", false);
  tally_json_str(b, tally_judgement(task, job, res));
  /* The language the platform says the submission is in, and its entry
   * point, for the CCS Contest API (docs/scoreboard.md#the-ccs-contest-api). */
  static const char *const told[] = {"language", "entry_point"};
  for (size_t k = 0; k < 2; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job->root, told[k]);
    if (cJSON_IsString(v)) {
      put_key(b, told[k], false);
      tally_json_str(b, v->valuestring);
    }
  }
  if (match != NULL) {
    put_key(b, "match", false);
    tally_buf_putc(b, '{');
    put_key(b, "result", true);
    tally_json_str(b, match);
    put_num(b, "opponent", task->card->difficulty);
    put_bool(b, "verified", job->verified);
    put_num(b, "attempt", job->attempt);
    put_bool(b, "memoryless", job->memoryless);
    tally_buf_putc(b, '}');
  }
  if (tally_views_is_sample(task, job))
    put_sample(b, task, job, s.priv.score);
  tally_buf_putc(b, '}');
  tally_submission_close(&s);
  if (b->oom) {
    cut(b, mark);
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  return 0;
}

int tally_views_view(tally_buf_t *b, const tally_render_t *r,
                     const tally_buf_t *details, const tally_task_t *task,
                     const tally_job_t *job, const tally_result_t *res,
                     bool full) {
  if (!tally_views_wanted(job))
    return 0;
  size_t mark = b->len;
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, full ? res->score : res->public_score);
  tally_buf_puts(b, ",\"max_score\":");
  tally_json_num(b, full ? task->max_score : task->max_public_score);
  tally_buf_puts(b, ",\"details\":");
  if (full)
    tally_buf_put(b, details->data, details->len);
  else
    tally_render_view_details(r, b, details, task, res);
  tally_buf_putc(b, '}');
  if (b->oom) {
    cut(b, mark);
    return TALLY_ENOMEM;
  }
  return 0;
}

int tally_views_token(tally_buf_t *b, const tally_job_t *job) {
  size_t mark = b->len;
  tally_buf_puts(b, "{\"submission\":");
  tally_views_id(b, job->submission);
  tally_buf_puts(b, ",\"participant\":");
  if (job->participant != NULL)
    tally_views_id(b, job->participant);
  else
    tally_buf_puts(b, "null");
  tally_buf_putc(b, '}');
  if (b->oom) {
    cut(b, mark);
    return TALLY_ENOMEM;
  }
  return 0;
}
