/* Matches a decoded job's evaluations to a task's testcases: decoded as
 * outcomes, or run through the task's type. */
#include "engine/bind.h"
#include "config/json.h"
#include "engine/judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The job error for a buffer that could not grow. */
static int no_memory(char *err, size_t errlen) {
  snprintf(err, errlen, "out of memory");
  return TALLY_EJOB;
}

/* Runs the task type on testcase at (its evaluation v, NULL when
 * missing) and stores what it made in job->evals[at], job->made and
 * job->admin[at]. */
static int evaluate(tally_job_t *job, const tally_task_t *task,
                    const tally_expected_t *target, tally_tt_eval_t *scratch,
                    size_t at, const cJSON *v, char *err, size_t errlen) {
  tally_tt_eval_t *tt = scratch;
  tt->outcome = 0.0;
  tt->extracted = -1;
  tt->failure = NULL;
  tt->time = tt->memory = NULL;
  if (tally_text_set(&tt->message, "", 0) != 0 ||
      tally_text_set(&tt->admin, "", 0) != 0)
    return TALLY_ENOMEM;
  tally_tt_input_t in = {
      .codename = task->testcases[at].codename,
      .eval = v,
      .expected = target != NULL           ? target
                  : task->expected != NULL ? &task->expected[at]
                                           : NULL,
      .comparator = task->comparator,
      .comparator_state = task->comparator_state,
  };
  int rc = task->task_type->evaluate(&in, tt, err, errlen);
  if (rc != 0)
    return rc;
  if (!(tt->outcome >= 0.0 && tt->outcome <= 1.0))
    return tally_job_eval_error(err, errlen, in.codename, NULL,
                                "task type %s gave no outcome in [0, 1]",
                                task->task_type->name);
  if (tt->extracted == 0 || (tt->extracted > 0 && job->extracted < 0))
    job->extracted = tt->extracted;
  if (job->failure == NULL)
    job->failure = tt->failure;
  tally_eval_t *ev = &job->evals[at];
  ev->outcome = tt->outcome;
  ev->time = tt->time;
  ev->memory = tt->memory;
  cJSON *text = cJSON_CreateArray();
  cJSON *msg = cJSON_CreateString(tt->message.data);
  if (text != NULL)
    cJSON_AddItemToArray(job->made, text);
  if (text == NULL || msg == NULL) {
    cJSON_Delete(msg);
    return TALLY_ENOMEM;
  }
  cJSON_AddItemToArray(text, msg);
  ev->text = text;
  job->admin[at] = NULL;
  if (tt->admin.len > 0) {
    cJSON *admin = cJSON_CreateString(tt->admin.data);
    if (admin == NULL)
      return TALLY_ENOMEM;
    cJSON_AddItemToArray(job->made, admin);
    job->admin[at] = admin;
    job->has_admin = true;
  }
  return 0;
}

/* The text of the job key name that the task's from_job names for what:
 * a string, or a number as JSON writes it (into buf, len bytes). Returns
 * NULL with err naming the key when it is missing or of another type, or
 * (with nonempty) empty. */
const char *tally_job_key_text(const tally_job_t *job, const char *name,
                               char *buf, size_t len, size_t *out_len) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(job->root, name);
  if (cJSON_IsString(v)) {
    *out_len = tally_json_strlen(v);
    return v->valuestring;
  }
  if (!cJSON_IsNumber(v))
    return NULL;
  double x = v->valuedouble;
  /* The range first: a cast of a double out of long long's is undefined. */
  if (x > -9007199254740992.0 && x < 9007199254740992.0 && x == floor(x))
    snprintf(buf, len, "%lld", (long long)x);
  else
    snprintf(buf, len, "%.17g", x);
  *out_len = strlen(buf);
  return buf;
}

static const char *job_text(const tally_job_t *job, const tally_task_t *task,
                            const char *name, const char *what, bool nonempty,
                            char *buf, size_t len, size_t *out_len, char *err,
                            size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(job->root, name);
  const char *text = tally_job_key_text(job, name, buf, len, out_len);
  if (text == NULL || (nonempty && *out_len == 0)) {
    snprintf(err, errlen,
             "%s: %s (task \"%s\" takes each sample's %s from the job's "
             "\"%s\")",
             name,
             v == NULL  ? "is missing"
             : nonempty ? "must be a non-empty string or a number"
                        : "must be a string or a number",
             task->name, what, name);
    return NULL;
  }
  return text;
}

/* Writes the error for an out-of-memory code, and passes other codes
 * through. */
static int oom_error(int rc, char *err, size_t errlen) {
  if (rc == TALLY_ENOMEM)
    snprintf(err, errlen, "out of memory");
  return rc;
}

static int bind_evals(tally_job_t *job, const tally_task_t *task,
                      const tally_expected_t *target, tally_tt_eval_t *scratch,
                      char *err, size_t errlen);

/* Sets the outcome of a judged task's one testcase (already evaluated,
 * its evaluation at job->evals[0]) from the job's "judge": its reply's
 * verdict, or unjudged with its error. Without one, the sample needs a
 * judge: the prompt and system message go in job->judge_prompt and
 * job->judge_system, and the outcome is 0 until a verdict comes. */
static int judge_sample(tally_job_t *job, const tally_task_t *task,
                        const tally_expected_t *target, char *err,
                        size_t errlen) {
  const tally_judge_t *jd = task->judge;
  const cJSON *v = job->judge, *reply = NULL, *why = NULL;
  if (v != NULL && !cJSON_IsObject(v)) {
    snprintf(err, errlen,
             "judge: must be an object (the verdict tallyd adds: reply or "
             "error, model, hash)");
    return TALLY_EJOB;
  }
  for (const cJSON *m = v != NULL ? v->child : NULL; m; m = m->next) {
    bool r = strcmp(m->string, "reply") == 0;
    bool e = strcmp(m->string, "error") == 0;
    if (!r && !e && strcmp(m->string, "model") != 0 &&
        strcmp(m->string, "hash") != 0) {
      snprintf(err, errlen,
               "judge.%s: unknown key (judge has reply, error, model and "
               "hash)",
               m->string);
      return TALLY_EJOB;
    }
    if (!cJSON_IsString(m)) {
      snprintf(err, errlen, "judge.%s: must be a string", m->string);
      return TALLY_EJOB;
    }
    if (r)
      reply = m;
    if (e)
      why = m;
  }
  if (v != NULL && (reply == NULL) == (why == NULL)) {
    snprintf(err, errlen, "judge: must hold either reply or error");
    return TALLY_EJOB;
  }
  tally_eval_t *ev = &job->evals[0];
  cJSON *text = cJSON_CreateArray();
  if (text == NULL)
    return no_memory(err, errlen);
  cJSON_AddItemToArray(job->made, text);
  ev->text = text;
  char msg[160];
  double outcome = 0;
  if (reply != NULL) {
    job->judge_state = tally_judge_verdict(
        jd, reply->valuestring, tally_json_strlen(reply), &outcome,
        job->judge_verdict, sizeof(job->judge_verdict));
    if (job->judge_state == TALLY_JUDGE_JUDGED)
      snprintf(msg, sizeof(msg), "Judged %s", job->judge_verdict);
    else
      snprintf(msg, sizeof(msg), "The judge's reply gave no verdict");
  } else if (why != NULL) {
    job->judge_state = TALLY_JUDGE_UNJUDGED;
    snprintf(msg, sizeof(msg), "Not judged");
  } else {
    job->judge_state = TALLY_JUDGE_NEEDED;
    snprintf(msg, sizeof(msg), "Not judged yet");
    size_t rlen = 0, qlen = 0;
    const char *resp = NULL, *q = NULL;
    const cJSON *r = job->response;
    const cJSON *out = job->evaluations->child;
    if (r == NULL && out != NULL)
      r = cJSON_IsString(out) ? out
                              : cJSON_GetObjectItemCaseSensitive(out, "output");
    if (cJSON_IsString(r)) {
      resp = r->valuestring;
      rlen = tally_json_strlen(r);
    }
    char buf[32];
    if (task->job_question != NULL &&
        (q = job_text(job, task, task->job_question, "question", false, buf,
                      sizeof(buf), &qlen, err, errlen)) == NULL)
      return TALLY_EJOB;
    tally_buf_t p;
    tally_buf_init(&p);
    tally_judge_prompt(jd, q, qlen, resp, rlen, target ? target->data : NULL,
                       target ? target->len : 0, &p);
    cJSON *ps = p.oom ? NULL : cJSON_CreateString(tally_buf_text(&p));
    tally_buf_close(&p);
    if (ps == NULL)
      return no_memory(err, errlen);
    cJSON_AddItemToArray(job->made, ps);
    job->judge_prompt = ps->valuestring;
    job->judge_system = jd->system;
  }
  cJSON *m = cJSON_CreateString(msg);
  if (m == NULL)
    return no_memory(err, errlen);
  cJSON_AddItemToArray(text, m);
  ev->outcome = outcome;
  /* The operator's note is the judge's reply or error, not the
   * comparator's. */
  job->admin[0] = NULL;
  job->has_admin = false;
  const cJSON *said = reply != NULL ? reply : why;
  if (said != NULL) {
    char note[256];
    size_t n = tally_json_strlen(said);
    snprintf(note, sizeof(note), "judge %s: %.*s", reply ? "reply" : "error",
             (int)(n > 200 ? 200 : n), said->valuestring);
    cJSON *admin = cJSON_CreateString(note);
    if (admin == NULL)
      return no_memory(err, errlen);
    cJSON_AddItemToArray(job->made, admin);
    job->admin[0] = admin;
    job->has_admin = true;
  }
  return 0;
}

int tally_job_bind(tally_job_t *job, const tally_task_t *task,
                   tally_tt_eval_t *scratch, char *err, size_t errlen) {
  job->has_admin = false;
  job->extracted = -1;
  job->failure = NULL;
  /* What the task's from_job takes from the job must be there. */
  char buf[32];
  size_t len = 0;
  if ((task->job_problem != NULL &&
       job_text(job, task, task->job_problem, "problem id", true, buf,
                sizeof(buf), &len, err, errlen) == NULL) ||
      (task->job_category != NULL &&
       job_text(job, task, task->job_category, "category", true, buf,
                sizeof(buf), &len, err, errlen) == NULL))
    return TALLY_EJOB;
  if (!job->evaluated)
    return 0;
  if (task->job_target == NULL) {
    int rc = bind_evals(job, task, NULL, scratch, err, errlen);
    if (rc == 0 && task->judge != NULL)
      rc = judge_sample(job, task,
                        task->expected != NULL ? &task->expected[0] : NULL, err,
                        errlen);
    return rc;
  }
  /* The expected answer of from_job.target: a string, a number, or an
   * object (a code_sandbox harness) as its JSON text. */
  const cJSON *v =
      cJSON_GetObjectItemCaseSensitive(job->root, task->job_target);
  char *printed = cJSON_IsObject(v) ? cJSON_PrintUnformatted(v) : NULL;
  if (cJSON_IsObject(v) && printed == NULL)
    return no_memory(err, errlen);
  const char *t = printed;
  if (printed != NULL)
    len = strlen(printed);
  else if ((t = job_text(job, task, task->job_target, "expected answer", false,
                         buf, sizeof(buf), &len, err, errlen)) == NULL)
    return TALLY_EJOB;
  /* Read only: the comparators never write the expected output. */
  tally_expected_t target = {.data = (char *)t, .len = len};
  int rc = bind_evals(job, task, &target, scratch, err, errlen);
  if (rc == 0 && task->judge != NULL)
    rc = judge_sample(job, task, &target, err, errlen);
  cJSON_free(printed);
  return rc;
}

/* Binds the evaluations, with target as every testcase's expected output
 * when not NULL. */
static int bind_evals(tally_job_t *job, const tally_task_t *task,
                      const tally_expected_t *target, tally_tt_eval_t *scratch,
                      char *err, size_t errlen) {
  size_t n = task->ntestcases;
  if (n > job->evals_cap) {
    tally_eval_t *evals = realloc(job->evals, n * sizeof(*evals));
    if (evals == NULL)
      return no_memory(err, errlen);
    job->evals = evals;
    unsigned char *seen = realloc(job->seen, n);
    if (seen == NULL)
      return no_memory(err, errlen);
    job->seen = seen;
    const cJSON **admin = realloc(job->admin, n * sizeof(*admin));
    if (admin == NULL)
      return no_memory(err, errlen);
    job->admin = admin;
    job->evals_cap = n;
  }
  memset(job->seen, 0, n);
  bool typed = task->task_type != NULL && task->task_type->evaluate != NULL;
  if (typed) {
    cJSON_Delete(job->made);
    if ((job->made = cJSON_CreateArray()) == NULL)
      return no_memory(err, errlen);
  }

  /* Platforms mostly send evaluations in codename order, so the testcase
   * after the previous one is tried before the binary search. */
  size_t next = 0;
  for (const cJSON *m = job->evaluations->child; m; m = m->next) {
    long at = next < n && strcmp(task->testcases[next].codename, m->string) == 0
                  ? (long)next
                  : tally_task_find_testcase(task, m->string);
    next = at < 0 ? 0 : (size_t)at + 1;
    if (at < 0)
      return tally_job_eval_error(err, errlen, m->string, NULL,
                                  "task %s has no testcase \"%s\"", task->name,
                                  m->string);
    if (job->seen[at])
      return tally_job_eval_error(err, errlen, m->string, NULL,
                                  "testcase appears twice");
    job->seen[at] = 1;
    int rc =
        typed ? evaluate(job, task, target, scratch, (size_t)at, m, err, errlen)
              : tally_job_decode_eval(
                    m, &job->evals[at],
                    (task->type->flags & TALLY_SCORE_UNIT_OUTCOMES) != 0, err,
                    errlen);
    if (rc != 0)
      return oom_error(rc, err, errlen);
  }
  if (typed && (task->task_type->flags & TALLY_TT_MISSING_OK)) {
    for (size_t i = 0; i < n; i++) {
      int rc = job->seen[i]
                   ? 0
                   : evaluate(job, task, target, scratch, i, NULL, err, errlen);
      if (rc != 0)
        return oom_error(rc, err, errlen);
    }
    return 0;
  }
  size_t missing = 0, first = 0;
  for (size_t i = 0; i < n; i++) {
    if (!job->seen[i] && missing++ == 0)
      first = i;
  }
  if (missing == 1)
    return tally_job_eval_error(err, errlen, NULL, NULL,
                                "no evaluation for testcase \"%s\"",
                                task->testcases[first].codename);
  if (missing > 1)
    return tally_job_eval_error(
        err, errlen, NULL, NULL,
        "no evaluation for testcase \"%s\" and %zu others",
        task->testcases[first].codename, missing - 1);
  return 0;
}
