/* The job decoder: the top-level fields, and one evaluation at a time
 * (engine/bind.c matches evaluations to a task's testcases). Unknown
 * top-level keys are ignored, so platforms may carry their own metadata;
 * the keys tally reads may appear once, and evaluation objects are
 * strict. */
#include "config/job.h"
#include "config/diag.h"
#include "config/error.h"
#include "config/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_job_init(tally_job_t *job) {
  memset(job, 0, sizeof(*job));
}

/* Drops job's tree, which goes with the arena's reset: the tree is read,
 * never changed, after the parse (a node added to it would not be
 * freed). */
static void drop_root(tally_job_t *job) {
  job->root = NULL;
}

void tally_job_close(tally_job_t *job) {
  drop_root(job);
  tally_arena_free(&job->arena);
  cJSON_Delete(job->made);
  free(job->evals);
  free(job->seen);
  free(job->admin);
  memset(job, 0, sizeof(*job));
}

/* Writes "path: message" to err and returns TALLY_EJOB. */
static int job_verror(char *err, size_t errlen, const tally_jpath_t *path,
                      const char *fmt, va_list ap) {
  size_t used = 0;
  if (path != NULL && path->len > 0) {
    int n = snprintf(err, errlen, "%s: ", path->buf);
    used = n > 0 && (size_t)n < errlen ? (size_t)n : 0;
  }
  vsnprintf(err + used, errlen - used, fmt, ap);
  return TALLY_EJOB;
}

/* Writes "path: message" (a fixed message) and returns TALLY_EJOB. */
static int job_verror_path(char *err, size_t errlen, const tally_jpath_t *path,
                           const char *msg) {
  snprintf(err, errlen, "%s: %s", path->buf, msg);
  return TALLY_EJOB;
}

/* Writes a message about the job as a whole and returns TALLY_EJOB. */
static int job_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int job_error(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = job_verror(err, errlen, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

/* The path is built here, on the error path only: a valid job formats
 * none. */
int tally_job_eval_error(char *err, size_t errlen, const char *codename,
                         const char *sub, const char *fmt, ...) {
  tally_jpath_t path;
  tally_jpath_init(&path);
  tally_jpath_key(&path, "evaluations");
  if (codename != NULL)
    tally_jpath_key(&path, codename);
  if (sub != NULL)
    tally_jpath_key(&path, sub);
  va_list ap;
  va_start(ap, fmt);
  int rc = job_verror(err, errlen, &path, fmt, ap);
  va_end(ap);
  return rc;
}

/* Checks the id under key (NULL when absent); numbers says whether a
 * number may serve. A number's text is found in the job's text, to refuse
 * an exponent or a fraction. */
static int check_id(const char *key, const cJSON *v, bool numbers,
                    const char *text, size_t len, char *err, size_t errlen) {
  if (v == NULL)
    return 0;
  const char *raw = NULL;
  size_t raw_len = 0;
  if (cJSON_IsNumber(v) &&
      !tally_json_member_text(text, len, key, &raw, &raw_len))
    raw = NULL;
  char buf[128];
  const char *bad =
      tally_json_id_error(v, numbers, raw, raw_len, buf, sizeof(buf));
  if (bad != NULL)
    return job_error(err, errlen, "%s: %s", key, bad);
  return 0;
}

/* A non-negative finite number member of usage into *out. */
static int usage_number(const cJSON *usage, const char *key, double *out,
                        char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, key);
  if (v == NULL)
    return 0;
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0))
    return job_error(err, errlen, "usage.%s: must be a number, at least 0",
                     key);
  *out = v->valuedouble;
  return 0;
}

/* The members of a job for an answer task (docs/challenges.md): answer,
 * ground_truth, time_used, usage, verified, attempt and memoryless. */
static int decode_match(tally_job_t *job, const cJSON *compilation,
                        const cJSON *time_used, const cJSON *usage,
                        const cJSON *verified, const cJSON *attempt,
                        const cJSON *memoryless, char *err, size_t errlen) {
  if (job->answer == NULL)
    return job_error(err, errlen,
                     "answer: missing (a job with ground_truth "
                     "is for an answer task)");
  if (!cJSON_IsObject(job->answer))
    return job_error(err, errlen,
                     "answer: must be an object of the answer's fields");
  if (job->evaluations != NULL || compilation != NULL)
    return job_error(err, errlen, "%s: a job with an answer has none",
                     job->evaluations != NULL ? "evaluations" : "compilation");
  if (job->ground_truth != NULL && !cJSON_IsObject(job->ground_truth))
    return job_error(err, errlen, "ground_truth: must be an object");
  /* Objects compared as values need each key once (exact_match). */
  static const char *const compared[] = {"answer", "ground_truth"};
  const cJSON *roots[] = {job->answer, job->ground_truth};
  for (size_t k = 0; k < 2; k++) {
    tally_jpath_t at;
    tally_jpath_init(&at);
    tally_jpath_key(&at, compared[k]);
    bool oom = false;
    if (roots[k] != NULL && tally_json_find_duplicate(roots[k], &at, &oom))
      return job_verror_path(err, errlen, &at, "key appears twice");
    if (oom)
      return job_error(err, errlen, "out of memory");
  }
  if (time_used != NULL) {
    if (!cJSON_IsNumber(time_used))
      return job_error(err, errlen, "time_used: must be a number (seconds)");
    job->has_time_used = true;
    job->time_used = time_used->valuedouble;
  }
  if (usage != NULL) {
    if (!cJSON_IsObject(usage))
      return job_error(err, errlen,
                       "usage: must be an object with input_tokens, "
                       "output_tokens and llm_calls");
    for (const cJSON *m = usage->child; m != NULL; m = m->next) {
      if (strcmp(m->string, "input_tokens") != 0 &&
          strcmp(m->string, "output_tokens") != 0 &&
          strcmp(m->string, "llm_calls") != 0)
        return job_error(err, errlen,
                         "usage.%s: unknown key (usage has input_tokens, "
                         "output_tokens and llm_calls)",
                         m->string);
      for (const cJSON *k = usage->child; k != m; k = k->next)
        if (strcmp(k->string, m->string) == 0)
          return job_error(err, errlen, "usage.%s: key appears twice",
                           m->string);
    }
    int rc =
        usage_number(usage, "input_tokens", &job->input_tokens, err, errlen);
    if (rc == 0)
      rc = usage_number(usage, "output_tokens", &job->output_tokens, err,
                        errlen);
    if (rc == 0)
      rc = usage_number(usage, "llm_calls", &job->llm_calls, err, errlen);
    if (rc != 0)
      return rc;
    job->has_usage = true;
  }
  if (verified != NULL && !cJSON_IsBool(verified))
    return job_error(err, errlen, "verified: must be true or false");
  if (memoryless != NULL && !cJSON_IsBool(memoryless))
    return job_error(err, errlen, "memoryless: must be true or false");
  job->verified = cJSON_IsTrue(verified);
  job->memoryless = cJSON_IsTrue(memoryless);
  if (attempt != NULL) {
    if (!cJSON_IsNumber(attempt) || attempt->valuedouble < 1 ||
        attempt->valuedouble > 1e9 ||
        attempt->valuedouble != (double)(int)attempt->valuedouble)
      return job_error(err, errlen,
                       "attempt: must be a whole number from 1 (the first)");
    job->attempt = (int)attempt->valuedouble;
  }
  job->evaluated = true;
  return 0;
}

int tally_job_parse(tally_job_t *job, const char *text, size_t len, char *err,
                    size_t errlen) {
  drop_root(job);
  tally_arena_reset(&job->arena);
  job->submission = job->participant = job->contest = job->evaluations = NULL;
  job->answer = job->ground_truth = NULL;
  job->run = job->llm_judge_results = NULL;
  job->response = job->error = job->judge = NULL;
  job->judge_state = 0;
  job->judge_verdict[0] = '\0';
  job->judge_prompt = job->judge_system = NULL;
  job->extracted = -1;
  job->failure = NULL;
  job->has_time_used = job->has_usage = false;
  job->time_used = job->input_tokens = job->output_tokens = job->llm_calls = 0;
  job->verified = job->memoryless = false;
  job->attempt = 0;
  job->task = NULL;
  job->type = TALLY_JOB_SCORE;
  job->evaluated = true;
  job->timestamp = 0;
  job->official = true;
  job->tokened = false;
  job->keys_ok = false;

  /* The tree comes from the job's arena: no heap block per value, and no
   * free of each node before the next job. */
  const char *end = NULL;
  tally_arena_t *was = tally_arena_use(&job->arena);
  job->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  tally_arena_use(was);
  if (job->root != NULL)
    tally_json_mark_arena(job->root);
  if (job->root == NULL) {
    size_t off = end ? (size_t)(end - text) : 0;
    if (tally_json_too_deep(text, len))
      return job_error(err, errlen,
                       "nesting too deep (more than %d levels of arrays and "
                       "objects)",
                       CJSON_NESTING_LIMIT);
    return job_error(err, errlen, "invalid JSON at byte %zu", off);
  }
  while ((size_t)(end - text) < len && strchr(" \t\r\n", *end) && *end)
    end++;
  if ((size_t)(end - text) < len)
    return job_error(err, errlen, "unexpected text after the job at byte %zu",
                     (size_t)(end - text));
  if (!cJSON_IsObject(job->root))
    return job_error(err, errlen, "a job must be a JSON object");
  tally_jpath_t at;
  tally_jpath_init(&at);
  if (tally_json_find_overflow(job->root, &at))
    return job_verror_path(err, errlen, &at, TALLY_JSON_OVERFLOW);

  const cJSON *compilation = NULL, *type = NULL, *task = NULL;
  const cJSON *timestamp = NULL, *official = NULL, *tokened = NULL;
  const cJSON *time_used = NULL, *usage = NULL, *verified = NULL;
  const cJSON *attempt = NULL, *memoryless = NULL;
  for (const cJSON *m = job->root->child; m; m = m->next) {
    static const char *const keys[] = {"submission",
                                       "participant",
                                       "contest",
                                       "evaluations",
                                       "compilation",
                                       "type",
                                       "task",
                                       "timestamp",
                                       "official",
                                       "tokened",
                                       "answer",
                                       "ground_truth",
                                       "time_used",
                                       "usage",
                                       "verified",
                                       "attempt",
                                       "memoryless",
                                       "run",
                                       "llm_judge_results",
                                       "response",
                                       "error",
                                       "judge"};
    const cJSON **slots[] = {&job->submission,
                             &job->participant,
                             &job->contest,
                             &job->evaluations,
                             &compilation,
                             &type,
                             &task,
                             &timestamp,
                             &official,
                             &tokened,
                             &job->answer,
                             &job->ground_truth,
                             &time_used,
                             &usage,
                             &verified,
                             &attempt,
                             &memoryless,
                             &job->run,
                             &job->llm_judge_results,
                             &job->response,
                             &job->error,
                             &job->judge};
    const cJSON **slot = NULL;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !slot; k++)
      if (strcmp(m->string, keys[k]) == 0)
        slot = slots[k];
    if (slot == NULL)
      continue;
    if (*slot != NULL)
      return job_error(err, errlen, "%s: key appears twice", m->string);
    *slot = m;
  }
  int rc =
      check_id("submission", job->submission, true, text, len, err, errlen);
  if (rc != 0) {
    job->submission = NULL;
    return rc;
  }
  if ((rc = check_id("participant", job->participant, true, text, len, err,
                     errlen)) != 0 ||
      (rc = check_id("contest", job->contest, true, text, len, err, errlen)) !=
          0 ||
      (rc = check_id("task", task, false, text, len, err, errlen)) != 0)
    return rc;
  /* What cJSON reads but JSON is not: numbers such as 01 or 1., and
   * strings that are not UTF-8, which results, views and contestants'
   * events would echo. Checked once the ids are known (and
   * checked with messages of their own), so that the dead letter names
   * the submission. */
  size_t bad;
  bool utf8;
  const char *why = tally_json_text_error(text, len, &bad, &utf8);
  if (why != NULL) {
    bool key = false;
    if (!utf8 || !tally_json_find_bad_utf8(job->root, &at, &key))
      return job_error(err, errlen, "invalid JSON at byte %zu: %s", bad, why);
    return job_verror_path(err, errlen, &at,
                           key ? "a key is not valid UTF-8"
                               : "is not valid UTF-8: every string of a job "
                                 "must be");
  }
  job->task = task != NULL ? task->valuestring : NULL;
  if (timestamp != NULL &&
      (!cJSON_IsNumber(timestamp) || !isfinite(timestamp->valuedouble)))
    return job_error(err, errlen, "timestamp: must be a number (seconds)");
  if (official != NULL && !cJSON_IsBool(official))
    return job_error(err, errlen, "official: must be true or false");
  if (tokened != NULL && !cJSON_IsBool(tokened))
    return job_error(err, errlen, "tokened: must be true or false");
  if (job->response != NULL && cJSON_IsNull(job->response))
    job->response = NULL;
  if (job->response != NULL && !cJSON_IsString(job->response))
    return job_error(err, errlen,
                     "response: must be a string (the model's response)");
  if (job->error != NULL && cJSON_IsNull(job->error))
    job->error = NULL;
  if (job->error != NULL && !cJSON_IsString(job->error) &&
      !(cJSON_IsNumber(job->error) && isfinite(job->error->valuedouble)))
    return job_error(err, errlen,
                     "error: must be a string or a number (the model call's "
                     "error text or status)");
  job->timestamp = timestamp != NULL ? timestamp->valuedouble : 0;
  job->official = official == NULL || cJSON_IsTrue(official);
  job->tokened = tokened != NULL && cJSON_IsTrue(tokened);
  if (type != NULL) {
    if (!cJSON_IsString(type) || (strcmp(type->valuestring, "score") != 0 &&
                                  strcmp(type->valuestring, "token") != 0))
      return job_error(err, errlen, "type: must be \"score\" or \"token\"");
    if (strcmp(type->valuestring, "token") == 0)
      job->type = TALLY_JOB_TOKEN;
  }
  job->keys_ok = true;
  if (job->type == TALLY_JOB_TOKEN) {
    if (job->submission == NULL)
      return job_error(err, errlen,
                       "submission: missing (a token job names the "
                       "submission the token was used on)");
    return 0;
  }
  if (compilation != NULL) {
    if (!cJSON_IsString(compilation) ||
        (strcmp(compilation->valuestring, "ok") != 0 &&
         strcmp(compilation->valuestring, "failed") != 0))
      return job_error(err, errlen,
                       "compilation: must be \"ok\" or \"failed\"");
    job->evaluated = strcmp(compilation->valuestring, "ok") == 0;
  }
  if (job->run != NULL || job->llm_judge_results != NULL) {
    if (job->run == NULL)
      return job_error(err, errlen,
                       "run: missing (llm_judge_results come with a run)");
    if (!cJSON_IsObject(job->run))
      return job_error(err, errlen, "run: must be an object");
    if (job->llm_judge_results != NULL &&
        !cJSON_IsArray(job->llm_judge_results))
      return job_error(err, errlen, "llm_judge_results: must be an array");
    static const char *const other[] = {"evaluations", "compilation", "answer",
                                        "ground_truth"};
    const cJSON *given[] = {job->evaluations, compilation, job->answer,
                            job->ground_truth};
    for (size_t k = 0; k < 4; k++)
      if (given[k] != NULL)
        return job_error(err, errlen,
                         "%s: a job that carries a run takes no %s", other[k],
                         other[k]);
    return 0;
  }
  if (job->answer != NULL ||
      (job->ground_truth != NULL && job->evaluations == NULL))
    return decode_match(job, compilation, time_used, usage, verified, attempt,
                        memoryless, err, errlen);
  if (!job->evaluated) {
    if (job->evaluations != NULL)
      return job_error(err, errlen,
                       "evaluations: a submission whose compilation failed "
                       "has no evaluations");
    return 0;
  }
  if (job->evaluations == NULL)
    return job_error(err, errlen,
                     "evaluations: missing (or set \"compilation\": "
                     "\"failed\"; a job for an answer task carries "
                     "\"answer\")");
  if (!cJSON_IsObject(job->evaluations))
    return job_error(err, errlen,
                     "evaluations: must be an object mapping codenames to "
                     "outcomes");
  return 0;
}

int tally_job_decode_eval(const cJSON *v, tally_eval_t *ev, bool unit,
                          char *err, size_t errlen) {
  const char *name = v->string;
  const char *at = NULL; /* the member the outcome came from */
  const cJSON *outcome = v;
  ev->text = ev->time = ev->memory = NULL;
  if (cJSON_IsObject(v)) {
    outcome = NULL;
    for (const cJSON *m = v->child; m; m = m->next) {
      const cJSON **slot = NULL;
      if (strcmp(m->string, "outcome") == 0)
        slot = &outcome;
      else if (strcmp(m->string, "text") == 0)
        slot = &ev->text;
      else if (strcmp(m->string, "time") == 0)
        slot = &ev->time;
      else if (strcmp(m->string, "memory") == 0)
        slot = &ev->memory;
      if (slot == NULL)
        return tally_job_eval_error(
            err, errlen, name, m->string,
            "unknown key (an evaluation has outcome, text, "
            "time and memory)");
      if (*slot != NULL)
        return tally_job_eval_error(err, errlen, name, m->string,
                                    "key appears twice");
      *slot = m;
      if (slot == &ev->text && !cJSON_IsString(m) && !cJSON_IsNull(m)) {
        if (!cJSON_IsArray(m))
          return tally_job_eval_error(err, errlen, name, m->string,
                                      "must be a string or a list of strings");
        for (const cJSON *e = m->child; e; e = e->next)
          if (!cJSON_IsString(e))
            return tally_job_eval_error(
                err, errlen, name, m->string,
                "must be a string or a list of strings");
      }
      if ((slot == &ev->time || slot == &ev->memory) && !cJSON_IsNull(m) &&
          (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) ||
           m->valuedouble < 0))
        return tally_job_eval_error(err, errlen, name, m->string,
                                    "must be a non-negative number or null");
    }
    if (outcome == NULL)
      return tally_job_eval_error(err, errlen, name, NULL,
                                  "outcome is missing");
    at = "outcome";
  }
  if (!cJSON_IsNumber(outcome) || !isfinite(outcome->valuedouble))
    return tally_job_eval_error(err, errlen, name, at,
                                "outcome must be a finite number");
  ev->outcome = outcome->valuedouble;
  if (unit && (ev->outcome < 0.0 || ev->outcome > 1.0)) {
    /* The shortest digits that name the value exactly, so 1.0000001 is
     * not shown as 1. */
    char num[32];
    snprintf(num, sizeof(num), "%.15g", ev->outcome);
    if (strtod(num, NULL) != ev->outcome)
      snprintf(num, sizeof(num), "%.17g", ev->outcome);
    return tally_job_eval_error(err, errlen, name, at,
                                "outcome %s is outside [0, 1]", num);
  }
  return 0;
}
