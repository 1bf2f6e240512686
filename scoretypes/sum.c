/* Sum: each testcase is worth the same parameter, times its outcome. */
#include "scoretypes/scoretype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct sum_state_s {
  double parameter;
} sum_state_t;

static int sum_parse(tally_task_t *task, const cJSON *params, tally_diag_t *d,
                     tally_jpath_t *path) {
  if (!cJSON_IsNumber(params) || !isfinite(params->valuedouble) ||
      params->valuedouble < 0)
    return tally_diag_add(d, path,
                          "Sum takes one non-negative number, the score of "
                          "each testcase");
  sum_state_t *st = malloc(sizeof(*st));
  if (st == NULL)
    return tally_diag_add(d, path, "out of memory");
  st->parameter = params->valuedouble;
  task->state = st;

  /* CMS accumulates one parameter per testcase; so do we, so that the
   * maximum is bit for bit the same float. */
  task->max_score = 0.0;
  task->max_public_score = 0.0;
  for (size_t i = 0; i < task->ntestcases; i++) {
    if (task->testcases[i].is_public)
      task->max_public_score += st->parameter;
    task->max_score += st->parameter;
  }
  return 0;
}

static const char *sum_label(double score, double parameter) {
  if (score <= 0.0)
    return "Not correct";
  if (score >= parameter)
    return "Correct";
  return "Partially correct";
}

static int sum_score(const tally_task_t *task, const tally_eval_t *evals,
                     tally_result_t *res, char *err, size_t errlen) {
  const sum_state_t *st = task->state;
  double score = 0.0, public_score = 0.0;

  /* Testcases are already in codename order. */
  for (size_t i = 0; i < task->ntestcases; i++) {
    double this_score = evals[i].outcome * st->parameter;
    tally_tc_result_t *tc = tally_result_push_tc(res);
    if (tc == NULL) {
      snprintf(err, errlen, "out of memory");
      return TALLY_ENOMEM;
    }
    tc->tc = (uint32_t)i;
    tc->label = sum_label(this_score, st->parameter);
    tc->show_in_restricted_feedback = task->testcases[i].is_public;
    tc->show_in_oi_restricted_feedback = task->testcases[i].is_public;
    score += this_score;
    if (task->testcases[i].is_public)
      public_score += this_score;
  }
  if (task->score_rounding == TALLY_ROUND_SUBTASK) {
    score = tally_round(score, task->score_precision);
    public_score = tally_round(public_score, task->score_precision);
  }
  res->score = score;
  res->public_score = public_score;
  return 0;
}

static void sum_free(void *state) {
  free(state);
}

const tally_score_type_t tally_score_sum = {
    .version = TALLY_SCORE_TYPE_VERSION,
    .name = "Sum",
    .flags = TALLY_SCORE_UNIT_OUTCOMES,
    .parse = sum_parse,
    .score = sum_score,
    .free = sum_free,
};
