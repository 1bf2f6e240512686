/* tally import's decoders: see cli/import.h. lm-evaluation-harness
 * writes one line per document: doc_id, doc, target, arguments, resps (a
 * list per request of the model's responses), filtered_resps, filter,
 * metrics (the names), the hashes, and each metric's value. NeMo
 * Evaluator writes results.jsonl, one line per sample: problem_idx,
 * repeat, reward, scorer_rewards, prompt, model_response,
 * extracted_answer, expected_answer, scoring_details (an "error" there
 * when the model call failed), metadata (its "category"), tokens,
 * latency_ms. */
#include "cli/import.h"
#include "config/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Says why a line cannot be imported; returns 1. */
static int reject(import_t *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int reject(import_t *im, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(im->why, sizeof(im->why), fmt, ap);
  va_end(ap);
  im->rejected++;
  return 1;
}

/* Appends the start of sample k of a document: the ids, and the problem
 * and category that the task's from_job reads; the caller closes it. */
static void put_job(import_t *im, const cJSON *doc_id, long k,
                    const char *category) {
  tally_buf_t *b = &im->out;
  char sub[64];
  tally_buf_t id;
  tally_buf_init(&id);
  tally_buf_puts(&id, im->participant);
  tally_buf_putc(&id, '/');
  tally_buf_puts(&id, im->task);
  tally_buf_putc(&id, '/');
  if (cJSON_IsString(doc_id))
    tally_buf_puts(&id, doc_id->valuestring);
  else
    tally_json_num(&id, doc_id->valuedouble);
  snprintf(sub, sizeof(sub), "/%ld", k);
  tally_buf_puts(&id, sub);
  tally_buf_puts(b, "{\"submission\":");
  tally_json_str(b, tally_buf_text(&id));
  tally_buf_close(&id);
  tally_buf_puts(b, ",\"participant\":");
  tally_json_str(b, im->participant);
  tally_buf_puts(b, ",\"contest\":");
  tally_json_str(b, im->contest);
  tally_buf_puts(b, ",\"task\":");
  tally_json_str(b, im->task);
  tally_buf_puts(b, ",\"problem\":");
  tally_json_value(b, doc_id);
  tally_buf_puts(b, ",\"category\":");
  tally_json_str(b, category != NULL ? category : im->category);
}

/* The reward a line keeps with --metric: a number from 0 to 1 (or a
 * boolean) at the top level, else among NeMo's scorer_rewards as
 * "scorer:<name>"; NAN when missing or another value (*v says which). */
static double metric_of(const import_t *im, const cJSON *s, const cJSON **v) {
  *v = cJSON_GetObjectItemCaseSensitive(s, im->metric);
  if (*v == NULL && im->nemo) {
    char key[300];
    snprintf(key, sizeof(key), "scorer:%s", im->metric);
    *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(s, "scorer_rewards"), key);
  }
  double x = cJSON_IsNumber(*v) ? (*v)->valuedouble
             : cJSON_IsBool(*v) ? (cJSON_IsTrue(*v) ? 1 : 0)
                                : NAN;
  return x >= 0 && x <= 1 ? x : NAN;
}

/* One line of NeMo Evaluator's results.jsonl: one sample. */
static int nemo_line(import_t *im, const cJSON *s) {
  const cJSON *idx = cJSON_GetObjectItemCaseSensitive(s, "problem_idx");
  const cJSON *repeat = cJSON_GetObjectItemCaseSensitive(s, "repeat");
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(s, "model_response");
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(s, "expected_answer");
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(s, "metadata");
  const cJSON *cat = cJSON_GetObjectItemCaseSensitive(meta, "category");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(s, "scoring_details"), "error");
  if (!cJSON_IsNumber(idx) &&
      !(cJSON_IsString(idx) && idx->valuestring[0] != '\0'))
    return reject(im, "problem_idx: %s",
                  idx == NULL ? "is missing"
                              : "must be a number or a non-empty string");
  if (repeat != NULL && !(cJSON_IsNumber(repeat) && repeat->valuedouble >= 0 &&
                          repeat->valuedouble <= 1e9 &&
                          repeat->valuedouble == floor(repeat->valuedouble)))
    return reject(im, "repeat: must be a whole number from 0 to 1000000000");
  if (resp != NULL && !cJSON_IsString(resp))
    return reject(im, "model_response: must be a string");
  const char *category = cJSON_IsString(cat) && cat->valuestring[0] != '\0'
                             ? cat->valuestring
                             : NULL;
  long k = repeat != NULL ? (long)repeat->valuedouble : 0;
  if (im->scorer != NULL) {
    if (!cJSON_IsString(want) && !cJSON_IsNumber(want))
      return reject(im, "expected_answer: %s",
                    want == NULL ? "is missing"
                                 : "must be a string or a number (tally "
                                   "compares a response with one expected "
                                   "answer)");
    put_job(im, idx, k, category);
    tally_buf_puts(&im->out, ",\"target\":");
    tally_json_value(&im->out, want);
    tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
    /* No response (a failed model call): an empty one, scored 0. */
    if (cJSON_IsString(resp))
      tally_json_value(&im->out, resp);
    else
      tally_buf_puts(&im->out, "\"\"");
    tally_buf_putc(&im->out, '}');
  } else {
    const cJSON *v;
    double x = metric_of(im, s, &v);
    if (isnan(x))
      return reject(im, "%s: %s", im->metric,
                    v == NULL ? "is missing"
                              : "must be a number from 0 to 1 (a reward)");
    put_job(im, idx, k, category);
    tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
    tally_json_num(&im->out, x);
    tally_buf_putc(&im->out, '}');
    if (cJSON_IsString(resp)) {
      tally_buf_puts(&im->out, ",\"response\":");
      tally_json_value(&im->out, resp);
    }
  }
  /* The model call's failure, for the failure analysis. */
  if (cJSON_IsString(error) || cJSON_IsNumber(error)) {
    tally_buf_puts(&im->out, ",\"error\":");
    tally_json_value(&im->out, error);
  }
  tally_buf_puts(&im->out, "}\n");
  im->samples++;
  return 0;
}

int tally_import_line(import_t *im, const char *line, size_t len) {
  if (strspn(line, " \t") == len)
    return 0;
  const char *end = NULL;
  cJSON *s = cJSON_ParseWithOpts(line, &end, 1);
  if (!cJSON_IsObject(s)) {
    cJSON_Delete(s);
    return reject(im, "not a JSON object");
  }
  if (im->nemo) {
    int rc = nemo_line(im, s);
    cJSON_Delete(s);
    return rc;
  }
  const cJSON *doc_id = cJSON_GetObjectItemCaseSensitive(s, "doc_id");
  const cJSON *target = cJSON_GetObjectItemCaseSensitive(s, "target");
  const cJSON *resps = cJSON_GetObjectItemCaseSensitive(s, "resps");
  int rc = 0;
  if (!cJSON_IsNumber(doc_id) &&
      !(cJSON_IsString(doc_id) && doc_id->valuestring[0] != '\0')) {
    rc = reject(im, "doc_id: %s",
                doc_id == NULL ? "is missing"
                               : "must be a number or a non-empty string");
    goto done;
  }
  /* The model's responses to the document's first request: a list of
   * texts for a generation task; log-likelihood pairs for a multiple
   * choice one. */
  const cJSON *first = cJSON_IsArray(resps) ? resps->child : NULL;
  bool texts = cJSON_IsArray(first) && first->child != NULL;
  for (const cJSON *r = texts ? first->child : NULL; r != NULL; r = r->next)
    texts = texts && cJSON_IsString(r);
  if (im->scorer != NULL) {
    if (!cJSON_IsString(target) && !cJSON_IsNumber(target)) {
      rc = reject(im, "target: %s",
                  target == NULL ? "is missing"
                                 : "must be a string or a number (tally "
                                   "compares a response with one expected "
                                   "answer)");
      goto done;
    }
    if (!texts) {
      rc = reject(im, "resps: %s",
                  resps == NULL ? "is missing"
                                : "holds no texts (log-likelihoods, as a "
                                  "multiple-choice task's): keep the "
                                  "harness's own metric with --metric");
      goto done;
    }
    /* Each generation is one sample: repeats give pass@k. */
    long k = 0;
    for (const cJSON *r = first->child; r != NULL; r = r->next, k++) {
      put_job(im, doc_id, k, NULL);
      tally_buf_puts(&im->out, ",\"target\":");
      tally_json_value(&im->out, target);
      tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
      tally_json_value(&im->out, r);
      tally_buf_puts(&im->out, "}}\n");
      im->samples++;
    }
  } else {
    const cJSON *v;
    double x = metric_of(im, s, &v);
    if (isnan(x)) {
      rc = reject(im, "%s: %s", im->metric,
                  v == NULL ? "is missing (the metrics of this line are in "
                              "its \"metrics\")"
                            : "must be a number from 0 to 1 (a reward)");
      goto done;
    }
    put_job(im, doc_id, 0, NULL);
    tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
    tally_json_num(&im->out, x);
    tally_buf_putc(&im->out, '}');
    /* The first response, when it is a text, for the failure analysis. */
    if (texts) {
      tally_buf_puts(&im->out, ",\"response\":");
      tally_json_value(&im->out, first->child);
    }
    tally_buf_puts(&im->out, "}\n");
    im->samples++;
  }
  im->docs++;
done:
  cJSON_Delete(s);
  return rc;
}
