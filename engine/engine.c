/* Job text to result text: decode, bind to the task, score, render; and
 * the summary and views of the job just scored. */
#include "engine/engine.h"
#include "engine/bind.h"
#include "engine/judge.h"
#include "engine/render_answer.h"
#include "engine/render_run.h"
#include "engine/views.h"

#include <stdio.h>
#include <string.h>

/* Frees the last job's run and evaluation. */
static void drop_eval(tally_engine_t *e) {
  if (e->has_eval)
    tally_es_eval_free(&e->eval);
  tally_es_run_free(&e->run);
  e->has_eval = false;
}

void tally_engine_init(tally_engine_t *e, const tally_taskset_t *tasks) {
  memset(e, 0, sizeof(*e));
  tally_job_init(&e->job);
  tally_result_init(&e->res);
  tally_card_result_init(&e->card);
  tally_render_init(&e->render);
  tally_buf_init(&e->details);
  tally_buf_init(&e->extra);
  tally_engine_use(e, tasks);
}

void tally_engine_close(tally_engine_t *e) {
  tally_job_close(&e->job);
  tally_text_free(&e->tt.message);
  tally_text_free(&e->tt.admin);
  tally_result_close(&e->res);
  tally_card_result_close(&e->card);
  drop_eval(e);
  tally_render_close(&e->render);
  tally_buf_close(&e->details);
  tally_buf_close(&e->extra);
}

void tally_engine_use(tally_engine_t *e, const tally_taskset_t *tasks) {
  e->tasks = tasks;
  e->default_task = tasks->count == 1 ? tasks->entries[0].task : NULL;
  e->task = NULL;
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

/* Whether the job's contest, when a config describes it, lists task;
 * when not, e->err says so. */
/* The job's contest id ("default" when it names none); num (32 bytes)
 * holds a number's text. */
static const char *job_contest(const tally_engine_t *e, char *num) {
  const cJSON *c = e->job.contest;
  if (cJSON_IsString(c))
    return c->valuestring;
  if (cJSON_IsNumber(c)) {
    snprintf(num, 32, "%.0f", c->valuedouble);
    return num;
  }
  return "default";
}

/* Whether the job's contest belongs to the queue it came from (when the
 * engine is told one); when not, e->err names both. */
static bool queue_ok(tally_engine_t *e) {
  if (e->queue == NULL)
    return true;
  char num[32];
  const char *name = job_contest(e, num);
  const tally_contest_t *c =
      e->contests != NULL ? tally_contestset_find(e->contests, name) : NULL;
  const char *want = c != NULL && c->queue != NULL ? c->queue
                     : e->default_queue != NULL    ? e->default_queue
                                                   : TALLY_MAIN_QUEUE;
  if (strcmp(want, e->queue) == 0)
    return true;
  snprintf(e->err, sizeof(e->err),
           "contest: contest \"%s\" belongs to queue \"%s\", but the job "
           "came from queue \"%s\"",
           name, want, e->queue);
  return false;
}

static bool contest_lists(tally_engine_t *e, const tally_task_t *task) {
  if (e->contests == NULL || e->contests->count == 0)
    return true;
  char num[32];
  const char *name = job_contest(e, num);
  const tally_contest_t *contest = tally_contestset_find(e->contests, name);
  if (contest == NULL || tally_contest_has_task(contest, task->name))
    return true;
  int n = snprintf(e->err, sizeof(e->err),
                   "task: \"%s\" is not a task of contest \"%s\" (its "
                   "tasks: ",
                   task->name, contest->name);
  for (size_t i = 0; i < contest->ntasks && n > 0 && (size_t)n < sizeof(e->err);
       i++)
    n += snprintf(e->err + n, sizeof(e->err) - (size_t)n, "%s%s",
                  i > 0 ? ", " : "", contest->tasks[i]);
  if (n > 0 && (size_t)n < sizeof(e->err))
    snprintf(e->err + n, sizeof(e->err) - (size_t)n, ")");
  return false;
}

/* The version of task's config, "" when it has none. */
static const char *task_version(const tally_engine_t *e,
                                const tally_task_t *task) {
  const char *version = tally_taskset_version(e->tasks, task);
  return version != NULL ? version : "";
}

/* extra followed by the "version" member, in e->extra; NULL when out of
 * memory. */
static const char *with_version(tally_engine_t *e, const char *extra,
                                const tally_task_t *task) {
  tally_buf_reset(&e->extra);
  if (extra != NULL) {
    tally_buf_puts(&e->extra, extra);
    tally_buf_putc(&e->extra, ',');
  }
  tally_buf_puts(&e->extra, "\"version\":");
  tally_json_str(&e->extra, task_version(e, task));
  return e->extra.oom ? NULL : e->extra.data;
}

/* Renders the result of the job just scored, or returns TALLY_ENOMEM with
 * out as it was. */
static int render(tally_engine_t *e, const tally_task_t *task,
                  const char *extra, tally_buf_t *out) {
  if (e->summary_only)
    return 0;
  size_t mark = out->len;
  int rc = 0;
  if (e->add_version && (extra = with_version(e, extra, task)) == NULL)
    rc = TALLY_ENOMEM;
  if (rc == 0 && task->spec != NULL)
    rc = tally_render_run(out, task, &e->job, &e->res, &e->eval, extra);
  else if (rc == 0 && task->card != NULL)
    rc = tally_render_answer(out, task, &e->job, &e->res, &e->card, extra);
  else if (rc == 0)
    rc = tally_render_result(&e->render, out, task, &e->job, &e->res, extra);
  if (rc != 0) {
    out->len = mark;
    if (out->data != NULL)
      out->data[mark] = '\0';
    snprintf(e->err, sizeof(e->err), "out of memory");
  }
  return rc;
}

/* Scores the answer of the job just decoded with task's scorecard, into
 * e->card and, rounded, e->res. */
static int score_answer(tally_engine_t *e, const tally_task_t *task) {
  const tally_job_t *j = &e->job;
  tally_match_t m = {
      .answer = j->answer,
      .ground_truth = j->ground_truth,
      .has_time_used = j->has_time_used,
      .time_used = j->time_used,
      .has_usage = j->has_usage,
      .input_tokens = j->input_tokens,
      .output_tokens = j->output_tokens,
      .llm_calls = j->llm_calls,
      .verified = j->verified,
  };
  int rc = tally_scorecard_score(task->card, &m, task->score_precision,
                                 &e->card, e->err, sizeof(e->err));
  if (rc != 0)
    return rc;
  tally_result_reset(&e->res);
  e->res.score = tally_round(e->card.total, task->score_precision);
  e->res.public_score =
      tally_round(e->card.public_total, task->score_precision);
  return 0;
}

/* Scores the run of the job just decoded with task's evaluation spec into
 * e->eval and, as score out of max_score, e->res. */
static int score_run(tally_engine_t *e, const tally_task_t *task,
                     const char *text, size_t len) {
  drop_eval(e);
  int rc = tally_es_run_decode(&e->run, e->job.run, e->job.llm_judge_results,
                               text, len, e->err, sizeof(e->err));
  if (rc == 0) {
    rc = tally_es_judges(task->spec, &e->run);
    if (rc == 0)
      rc = tally_es_evaluate(&e->eval, task->spec, &e->run);
    e->has_eval = true;
    if (rc != 0)
      snprintf(e->err, sizeof(e->err), "out of memory");
  }
  if (rc != 0)
    return rc;
  tally_result_reset(&e->res);
  double overall = e->eval.has_overall ? e->eval.overall : 0;
  e->res.score = tally_round(overall * task->max_score, task->score_precision);
  e->res.public_score = e->res.score;
  return 0;
}

/* The judge request of the job just bound: {"submission", "prompt",
 * "system"}. */
static int judge_request(tally_engine_t *e, tally_buf_t *out) {
  size_t mark = out->len;
  tally_buf_puts(out, "{\"submission\":");
  if (e->job.submission != NULL)
    tally_json_value(out, e->job.submission);
  else
    tally_buf_puts(out, "null");
  tally_buf_puts(out, ",\"prompt\":");
  tally_json_str(out, e->job.judge_prompt);
  tally_buf_puts(out, ",\"system\":");
  if (e->job.judge_system != NULL)
    tally_json_str(out, e->job.judge_system);
  else
    tally_buf_puts(out, "null");
  tally_buf_putc(out, '}');
  if (out->oom) {
    out->len = mark;
    snprintf(e->err, sizeof(e->err), "out of memory");
    return TALLY_ENOMEM;
  }
  return TALLY_ENGINE_JUDGE;
}

int tally_engine_score(tally_engine_t *e, const char *text, size_t len,
                       const char *extra, tally_buf_t *out) {
  const tally_task_t *task = NULL;
  /* The last run's evaluation points into the last job: it goes first. */
  drop_eval(e);
  e->task = e->decoded_task = NULL;
  e->details_ready = false;
  int rc = tally_job_parse(&e->job, text, len, e->err, sizeof(e->err));
  if (rc == 0 && e->job.type == TALLY_JOB_TOKEN) {
    if (e->accept_tokens) {
      if (tally_views_token(out, &e->job) != 0) {
        snprintf(e->err, sizeof(e->err), "out of memory");
        return TALLY_ENOMEM;
      }
      return TALLY_ENGINE_TOKEN;
    }
    snprintf(e->err, sizeof(e->err), "a token job has nothing to score");
    rc = TALLY_EJOB;
  }
  if (rc == 0 && (task = job_task(e)) == NULL)
    rc = TALLY_EJOB;
  if (rc == 0 && !contest_lists(e, task))
    rc = TALLY_EJOB;
  /* A job of another queue's contest leaves this queue's contest state
   * alone: no unscored summary either. */
  bool foreign = rc == 0 && !queue_ok(e);
  if (foreign)
    rc = TALLY_EJOB;
  if (rc != 0 && e->job.keys_ok && e->job.type == TALLY_JOB_SCORE)
    task = e->job.task != NULL ? tally_taskset_find(e->tasks, e->job.task)
                               : e->default_task;
  e->decoded_task = foreign ? NULL : task;
  if (rc == 0 && (task->card != NULL) != (e->job.answer != NULL)) {
    snprintf(e->err, sizeof(e->err),
             task->card != NULL
                 ? "answer: missing (task %s is an answer task: its jobs "
                   "carry an answer, not evaluations)"
                 : "answer: task %s takes evaluations, not an answer",
             task->name);
    rc = TALLY_EJOB;
  }
  if (rc == 0 && (task->spec != NULL) != (e->job.run != NULL)) {
    snprintf(e->err, sizeof(e->err),
             task->spec != NULL
                 ? "run: missing (task %s is an agent_run task: its jobs "
                   "carry a run, not evaluations)"
                 : "run: task %s does not score runs (only an agent_run "
                   "task does)",
             task->name);
    rc = TALLY_EJOB;
  }
  if (rc == 0 && task->spec != NULL) {
    rc = score_run(e, task, text, len);
  } else if (rc == 0 && task->card != NULL) {
    rc = score_answer(e, task);
  } else if (rc == 0) {
    rc = tally_job_bind(&e->job, task, &e->tt, e->err, sizeof(e->err));
    if (rc == 0 && e->job.judge_state == TALLY_JUDGE_NEEDED) {
      if (e->accept_judge)
        return judge_request(e, out);
      e->job.judge_state = TALLY_JUDGE_UNJUDGED;
    }
    if (rc == 0)
      rc = tally_score(task, e->job.evals, e->job.evaluated, &e->res, e->err,
                       sizeof(e->err));
  }
  if (rc == 0) {
    rc = render(e, task, extra, out);
    if (rc == 0)
      e->task = task;
    return rc;
  }
  if (rc == TALLY_ENOMEM)
    return rc;
  tally_render_error(out, e->job.submission, e->err);
  return out->oom ? TALLY_ENOMEM : TALLY_EJOB;
}

/* Refuses the contest parts when no job has just been scored. */
static int check_scored(tally_engine_t *e) {
  if (e->task != NULL)
    return 0;
  snprintf(e->err, sizeof(e->err), "no job has just been scored");
  return TALLY_EINVAL;
}

int tally_engine_summary(tally_engine_t *e, tally_buf_t *out) {
  int rc = check_scored(e);
  if (rc != 0)
    return rc;
  const char *match =
      e->task->card != NULL ? tally_match_result_name(e->card.result) : NULL;
  return tally_views_summary(out, e->task, &e->job, &e->res,
                             task_version(e, e->task), match, e->err,
                             sizeof(e->err));
}

int tally_engine_unscored(tally_engine_t *e, tally_buf_t *out) {
  if (e->decoded_task == NULL)
    return 0;
  return tally_views_unscored(out, e->decoded_task, &e->job);
}

/* The view of an answer task's match: its score and breakdown, of the
 * public dimensions only unless full. */
static int answer_view(tally_engine_t *e, bool full, tally_buf_t *out) {
  size_t mark = out->len;
  tally_buf_puts(out, "{\"score\":");
  tally_json_num(out, full ? e->res.score : e->res.public_score);
  tally_buf_puts(out, ",\"max_score\":");
  tally_json_num(out, full ? e->task->max_score : e->task->max_public_score);
  tally_buf_puts(out, ",\"result\":");
  tally_json_str(out, tally_match_result_name(e->card.result));
  tally_buf_puts(out, ",\"details\":");
  tally_render_answer_details(out, e->task, &e->card, !full);
  tally_buf_putc(out, '}');
  if (out->oom) {
    out->len = mark;
    if (out->data != NULL)
      out->data[mark] = '\0';
    snprintf(e->err, sizeof(e->err), "out of memory");
    return TALLY_ENOMEM;
  }
  return 0;
}

int tally_engine_view(tally_engine_t *e, bool full, tally_buf_t *out) {
  int rc = check_scored(e);
  if (rc != 0 || !tally_views_wanted(&e->job))
    return rc;
  if (e->task->spec != NULL) {
    size_t mark = out->len;
    tally_render_run_view(out, e->task, &e->res, &e->eval, full);
    if (out->oom) {
      out->len = mark;
      snprintf(e->err, sizeof(e->err), "out of memory");
      return TALLY_ENOMEM;
    }
    return 0;
  }
  if (e->task->card != NULL)
    return answer_view(e, full, out);
  if (!e->details_ready) {
    tally_buf_reset(&e->details);
    rc = tally_render_details(&e->render, &e->details, e->task, &e->job,
                              &e->res);
    if (rc != 0) {
      snprintf(e->err, sizeof(e->err), "out of memory");
      return rc;
    }
    e->details_ready = true;
  }
  rc = tally_views_view(out, &e->render, &e->details, e->task, &e->job, &e->res,
                        full);
  if (rc != 0)
    snprintf(e->err, sizeof(e->err), "out of memory");
  return rc;
}

bool tally_engine_rated(const tally_engine_t *e, tally_elo_match_t *m) {
  const tally_job_t *j = &e->job;
  if (e->task == NULL || e->task->card == NULL || !j->official ||
      !tally_views_wanted(j))
    return false;
  static const double points[] = {
      [TALLY_MATCH_LOSS] = 0, [TALLY_MATCH_DRAW] = 0.5, [TALLY_MATCH_WIN] = 1};
  *m = (tally_elo_match_t){.timestamp = j->timestamp,
                           .score = points[e->card.result],
                           .opponent = e->task->card->difficulty,
                           .verified = j->verified,
                           .attempt = j->attempt,
                           .memoryless = j->memoryless};
  return true;
}
