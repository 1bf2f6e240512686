/* The table of built-in task types, the outcomes task type, and the
 * helpers task types share: texts, errors and comparisons. */
#include "tasktypes/comparators.h"
#include "tasktypes/tasktype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outcomes: evaluations carry outcomes, decoded by config/job.c. */
const tally_task_type_t tally_task_type_outcomes = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "outcomes",
    .flags = 0,
    .evaluate = NULL,
};

/* Answer: a challenge's structured answer, scored by the task's dimensions
 * (docs/challenges.md) rather than through testcases. */
const tally_task_type_t tally_task_type_answer = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "answer",
    .flags = TALLY_TT_ANSWER,
    .evaluate = NULL,
};

/* Agent run: a run of an AI agent, scored by the task's evaluation spec
 * (docs/evaluation-specs.md) rather than through testcases. */
const tally_task_type_t tally_task_type_agent_run = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "agent_run",
    .flags = TALLY_TT_AGENT_RUN,
    .evaluate = NULL,
};

const tally_task_type_t *const tally_task_types[] = {
    &tally_task_type_outcomes,    &tally_task_type_batch,
    &tally_task_type_output_only, &tally_task_type_answer,
    &tally_task_type_agent_run,   NULL,
};

int tally_text_set(tally_text_t *t, const char *s, size_t n) {
  size_t len = t->len;
  t->len = 0;
  int rc = tally_text_append(t, s, n);
  if (rc != 0)
    t->len = len;
  return rc;
}

int tally_text_append(tally_text_t *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->len + n + 1)
      cap *= 2;
    char *data = realloc(t->data, cap);
    if (data == NULL)
      return TALLY_ENOMEM;
    t->data = data;
    t->cap = cap;
  }
  if (n > 0)
    memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
  return 0;
}

void tally_text_free(tally_text_t *t) {
  free(t->data);
  memset(t, 0, sizeof(*t));
}

int tally_tt_error(char *err, size_t errlen, const char *codename,
                   const char *member, const char *fmt, ...) {
  tally_jpath_t path;
  tally_jpath_init(&path);
  tally_jpath_key(&path, "evaluations");
  tally_jpath_key(&path, codename);
  /* A nested member ("checker.stdout") is one key per part. */
  while (member != NULL && *member != '\0') {
    char part[64];
    size_t n = strcspn(member, ".");
    snprintf(part, sizeof(part), "%.*s", (int)n, member);
    tally_jpath_key(&path, part);
    member += n + (member[n] == '.');
  }
  int used = snprintf(err, errlen, "%s: ", path.buf);
  if (used < 0 || (size_t)used >= errlen)
    return TALLY_EJOB;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
  va_end(ap);
  return TALLY_EJOB;
}

int tally_tt_compare(const tally_tt_input_t *in, const char *output,
                     size_t output_len, tally_tt_eval_t *out, char *err,
                     size_t errlen) {
  tally_compare_result_t res;
  char why[384] = "";
  memset(&res, 0, sizeof(res));
  res.extracted = -1;
  int rc = in->comparator->compare(in->comparator_state, output, output_len,
                                   in->expected->data, in->expected->len, &res,
                                   why, sizeof(why));
  if (rc == TALLY_ENOMEM)
    return rc;
  if (rc != 0)
    return tally_tt_error(err, errlen, in->codename, "output",
                          "comparator %s: %s", in->comparator->name,
                          why[0] ? why : tally_strerror(rc));
  /* A comparator outside its contract is a job error, not a score. */
  if (!(res.outcome >= 0.0 && res.outcome <= 1.0) || res.message == NULL)
    return tally_tt_error(err, errlen, in->codename, "output",
                          "comparator %s gave no outcome in [0, 1]",
                          in->comparator->name);
  out->outcome = res.outcome;
  out->extracted = res.extracted < 0 ? -1 : res.extracted > 0;
  out->failure = res.outcome < 1 ? res.failure : NULL;
  res.admin[sizeof(res.admin) - 1] = '\0';
  if (tally_text_set(&out->message, res.message, strlen(res.message)) != 0 ||
      tally_text_set(&out->admin, res.admin, strlen(res.admin)) != 0)
    return TALLY_ENOMEM;
  return 0;
}
