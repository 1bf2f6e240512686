/* The code_execution validator (docs/evaluation-specs.md): the platform
 * runs the test command and sends its record as a
 * grader.verification.code_executed event; tally scores the record as
 * the reference does (fraction of tests passed, all or nothing, or the
 * exit code). A record without test counts gets them from its output as
 * the reference's executor derives them: a JSON object, else JUnit XML
 * attributes (read with expat), else "N passed/failed/errors" text. */
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/validators.h"

#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One record, as Go's json.Unmarshal fills CodeExecutionResult. */
typedef struct record_s {
  const char *validator_key, *target, *target_path, *test_command;
  const char *out, *err, *execution_error, *scoring;
  long long timeout_ms;
  bool has_exit, timed_out;
  long long exit_code;
  bool has[4]; /* passed, failed, error, total tests */
  long long n[4];
} record_t;

/* A whole number that Go decodes into an int: integral and in range. */
static bool go_int(const cJSON *v, long long *out) {
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
      fabs(v->valuedouble) >= 9.2e18)
    return false;
  *out = (long long)v->valuedouble;
  return true;
}

/* Decodes payload; false when Go's Unmarshal would fail (the event is
 * then skipped, as the reference skips it). */
static bool decode(const cJSON *payload, record_t *r) {
  memset(r, 0, sizeof(*r));
  r->validator_key = r->target = r->target_path = r->test_command = "";
  r->out = r->err = r->execution_error = r->scoring = "";
  if (cJSON_IsNull(payload))
    return true;
  if (!cJSON_IsObject(payload))
    return false;
  static const char *const strs[] = {"validator_key",   "target", "target_path",
                                     "test_command",    "stdout", "stderr",
                                     "execution_error", "scoring"};
  const char **sdst[] = {&r->validator_key,   &r->target, &r->target_path,
                         &r->test_command,    &r->out,    &r->err,
                         &r->execution_error, &r->scoring};
  static const char *const counts[] = {"passed_tests", "failed_tests",
                                       "error_tests", "total_tests"};
  for (const cJSON *m = payload->child; m != NULL; m = m->next) {
    const char *k = m->string;
    if (cJSON_IsNull(m))
      continue;
    bool known = false;
    for (size_t i = 0; i < 8; i++)
      if (strcasecmp(k, strs[i]) == 0) {
        if (!cJSON_IsString(m))
          return false;
        *sdst[i] = m->valuestring;
        known = true;
      }
    for (size_t i = 0; i < 4 && !known; i++)
      if (strcasecmp(k, counts[i]) == 0) {
        if (!go_int(m, &r->n[i]))
          return false;
        r->has[i] = true;
        known = true;
      }
    if (known)
      continue;
    if (strcasecmp(k, "timeout_ms") == 0) {
      if (!go_int(m, &r->timeout_ms))
        return false;
    } else if (strcasecmp(k, "exit_code") == 0) {
      if (!go_int(m, &r->exit_code))
        return false;
      r->has_exit = true;
    } else if (strcasecmp(k, "timed_out") == 0) {
      if (!cJSON_IsBool(m))
        return false;
      r->timed_out = cJSON_IsTrue(m);
    } else if (strcasecmp(k, "pass_threshold") == 0) {
      if (!cJSON_IsNumber(m))
        return false;
    }
  }
  return true;
}

/* The counts of a JSON object: passed, failed, errors (else error),
 * total; numbers truncated toward zero. */
static bool counts_json(const char *text, long long n[4]) {
  char err[64];
  if (!tally_go_unmarshal_check(text, err, sizeof(err)))
    return false;
  cJSON *o = cJSON_Parse(text);
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return false;
  }
  static const char *const keys[] = {"passed", "failed", "errors", "total"};
  bool found = false;
  n[0] = n[1] = n[2] = n[3] = 0;
  for (int i = 0; i < 4; i++) {
    const cJSON *v = tally_go_member(o, keys[i]);
    if (i == 2 && !cJSON_IsNumber(v))
      v = tally_go_member(o, "error");
    if (cJSON_IsNumber(v)) {
      double x = v->valuedouble;
      n[i] = fabs(x) < 9.2e18 ? (long long)x : 0;
      found = true;
    }
  }
  cJSON_Delete(o);
  if (!found)
    return false;
  if (n[3] <= 0)
    n[3] = n[0] + n[1] + n[2];
  return n[3] > 0;
}

/* JUnit XML: the root's attributes tests, failures and errors, and those
 * of its testsuite children, as Go's encoding/xml reads them into ints. */
typedef struct junit_s {
  XML_Parser p;
  int depth;
  bool bad;
  long long root[3];
  long long sum[3];
} junit_t;

/* Go's xml int: empty is 0, else ParseInt of the trimmed value. */
static bool xml_int(const char *v, long long *out) {
  while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
    v++;
  if (*v == '\0') {
    *out = 0;
    return true;
  }
  char *end;
  long long x = strtoll(v, &end, 10);
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
    end++;
  if (*end != '\0' || end == v)
    return false;
  *out = x;
  return true;
}

/* The local part of a name expat gives as "uri|local". */
static const char *local(const char *name) {
  const char *bar = strrchr(name, '|');
  return bar != NULL ? bar + 1 : name;
}

static void attrs(junit_t *j, const char **a, long long out[3]) {
  static const char *const names[] = {"tests", "failures", "errors"};
  for (size_t i = 0; a[i] != NULL; i += 2)
    for (int k = 0; k < 3; k++)
      if (strcmp(local(a[i]), names[k]) == 0 && !xml_int(a[i + 1], &out[k]))
        j->bad = true;
}

static void on_start(void *data, const char *name, const char **a) {
  junit_t *j = data;
  if (j->depth == 0) {
    attrs(j, a, j->root);
  } else if (j->depth == 1 && strcmp(local(name), "testsuite") == 0) {
    long long s[3] = {0, 0, 0};
    attrs(j, a, s);
    for (int k = 0; k < 3; k++)
      j->sum[k] += s[k];
  }
  j->depth++;
}

static void on_end(void *data, const char *name) {
  junit_t *j = data;
  (void)name;
  if (--j->depth == 0)
    XML_StopParser(j->p, XML_FALSE); /* Go reads no further */
}

static bool counts_xml(const char *text, long long n[4]) {
  if (text[0] != '<')
    return false;
  junit_t j;
  memset(&j, 0, sizeof(j));
  j.p = XML_ParserCreateNS(NULL, '|');
  if (j.p == NULL)
    return false;
  XML_SetUserData(j.p, &j);
  XML_SetElementHandler(j.p, on_start, on_end);
  enum XML_Status st = XML_Parse(j.p, text, (int)strlen(text), XML_TRUE);
  bool ended = j.depth == 0 && XML_GetErrorCode(j.p) == XML_ERROR_ABORTED;
  bool ok = (st == XML_STATUS_OK || ended) && !j.bad;
  XML_ParserFree(j.p);
  if (!ok)
    return false;
  long long *use = j.root[0] > 0 ? j.root : j.sum;
  if (use[0] <= 0)
    return false;
  n[3] = use[0];
  n[1] = use[1];
  n[2] = use[2];
  n[0] = n[3] - n[1] - n[2];
  return true;
}

/* "N passed", "N failed", "N error(s)", any case, summed. */
static bool counts_text(const char *s, long long n[4]) {
  n[0] = n[1] = n[2] = 0;
  bool any = false;
  for (size_t i = 0; s[i] != '\0';) {
    if (s[i] < '0' || s[i] > '9') {
      i++;
      continue;
    }
    size_t d = i;
    unsigned long long v = 0;
    while (s[d] >= '0' && s[d] <= '9')
      v = v * 10 + (unsigned long long)(s[d++] - '0');
    size_t w = d;
    while (s[w] == ' ' || s[w] == '\t' || s[w] == '\n' || s[w] == '\f' ||
           s[w] == '\r')
      w++;
    static const char *const words[] = {"passed", "failed", "errors", "error"};
    int hit = -1;
    size_t wl = 0;
    if (w > d) {
      for (int k = 0; k < 4 && hit < 0; k++) {
        size_t l = strlen(words[k]);
        if (strncasecmp(s + w, words[k], l) != 0)
          continue; /* the word is there before what follows it is read */
        char next = s[w + l];
        bool boundary =
            !((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
              (next >= '0' && next <= '9') || next == '_');
        if (boundary) {
          hit = k;
          wl = l;
        }
      }
    }
    if (hit >= 0) {
      n[hit > 2 ? 2 : hit] += (long long)v;
      any = true;
      i = w + wl;
    } else {
      /* The regex tries the next start inside the digits too, which can
       * only match from the same run's later digits: they lead to the
       * same white space and word, so the run is done. */
      i = d;
    }
  }
  n[3] = n[0] + n[1] + n[2];
  return any && n[3] > 0;
}

/* The counts the executor derives from stdout and stderr. */
static bool derive_counts(const record_t *r, long long n[4]) {
  size_t lo = strlen(r->out), le = strlen(r->err);
  char *all = malloc(lo + le + 2);
  if (all == NULL)
    return false;
  memcpy(all, r->out, lo);
  all[lo] = '\n';
  memcpy(all + lo + 1, r->err, le + 1);
  char *t = tally_go_trimmed(all);
  free(all);
  if (t == NULL)
    return false;
  bool ok = t[0] != '\0' &&
            (counts_json(t, n) || counts_xml(t, n) || counts_text(t, n));
  free(t);
  return ok;
}

static cJSON *opt_int(bool has, long long v) {
  return has ? cJSON_CreateNumber((double)v) : cJSON_CreateNull();
}

int tally__es_code_execution(const tally_es_evidence_t *ev,
                             const tally_es_validator_t *v,
                             tally_es_vresult_t *r) {
  const tally_es_code_t *c = v->state;
  record_t rec, got;
  memset(&rec, 0, sizeof(rec));
  /* The last record for this validator; the source is the last such
   * event with a sequence number (the reference keeps both in maps). */
  const tally_es_event_t *from = NULL, *src = NULL;
  for (size_t i = 0; i < ev->run->nevents; i++) {
    const tally_es_event_t *e = &ev->run->events[i];
    if (strcmp(e->type, "grader.verification.code_executed") == 0 &&
        decode(e->payload, &got) && got.validator_key[0] != '\0' &&
        strcmp(got.validator_key, v->key) == 0) {
      rec = got;
      from = e;
      if (e->seq > 0)
        src = e;
    }
  }
  if (from == NULL) {
    r->state = TALLY_ES_UNAVAILABLE_STATE;
    char *q = tally_go_quoted(v->key);
    r->reason = tally__es_dupf(
        "code execution result for validator %s is unavailable", q ? q : "");
    free(q);
    r->raw = cJSON_CreateObject();
    if (r->reason == NULL || r->raw == NULL)
      return TALLY_ENOMEM;
    cJSON_AddStringToObject(r->raw, "state", "unavailable");
    cJSON_AddStringToObject(r->raw, "reason", r->reason);
    return 0;
  }
  if (!rec.has[0] && !rec.has[1] && !rec.has[2] && !rec.has[3] &&
      rec.execution_error[0] == '\0' && !rec.timed_out) {
    long long n[4];
    if (derive_counts(&rec, n))
      for (int k = 0; k < 4; k++) {
        rec.has[k] = true;
        rec.n[k] = n[k];
      }
  }
  if (src != NULL)
    r->source = (tally_es_source_ref_t){true, "tool_call", src->seq, src->type,
                                        v->target};
  /* The score, as ComputeCodeExecutionScore gives it. */
  bool has_score = false;
  double score = 0;
  char reason[512];
  tally_es_state_t state = TALLY_ES_AVAILABLE;
  long long total = 0;
  bool counted = false;
  if (rec.has[3] && rec.n[3] > 0) {
    total = rec.n[3];
    counted = true;
  } else {
    bool seen = false;
    for (int k = 0; k < 3; k++)
      if (rec.has[k]) {
        total += rec.n[k];
        seen = true;
      }
    counted = seen && total > 0;
  }
  if (!tally_go_blank(rec.execution_error)) {
    state = TALLY_ES_ERROR_STATE;
    snprintf(reason, sizeof(reason), "%s", rec.execution_error);
  } else if (rec.timed_out) {
    has_score = true;
    snprintf(reason, sizeof(reason), "test command timed out");
  } else if (c->pass_at_k) {
    state = TALLY_ES_ERROR_STATE;
    snprintf(reason, sizeof(reason),
             "pass_at_k requires multi-sample execution and is not supported "
             "for single run-agent scoring");
  } else if (counted && total > 0 && (c->all_or_nothing || rec.has[0])) {
    has_score = true;
    if (c->all_or_nothing)
      score = (!rec.has[1] || rec.n[1] == 0) && (!rec.has[2] || rec.n[2] == 0);
    else
      score = (double)rec.n[0] / (double)total;
    /* summarizeCodeExecutionCounts */
    char parts[256] = "";
    size_t used = 0;
    if (rec.has[0])
      used += (size_t)snprintf(parts + used, sizeof(parts) - used,
                               "%lld passed", rec.n[0]);
    if (rec.has[1] && rec.n[1] > 0)
      used += (size_t)snprintf(parts + used, sizeof(parts) - used,
                               "%s%lld failed", used ? ", " : "", rec.n[1]);
    if (rec.has[2] && rec.n[2] > 0)
      used += (size_t)snprintf(parts + used, sizeof(parts) - used, "%s%lld %s",
                               used ? ", " : "", rec.n[2],
                               rec.n[2] == 1 ? "error" : "errors");
    if (used == 0)
      snprintf(reason, sizeof(reason), "%lld tests observed", total);
    else
      snprintf(reason, sizeof(reason), "%s (%lld total)", parts, total);
  } else if (rec.has_exit) {
    has_score = true;
    score = rec.exit_code == 0;
    snprintf(reason, sizeof(reason), "test command exited with code %lld",
             rec.exit_code);
  } else {
    state = TALLY_ES_UNAVAILABLE_STATE;
    snprintf(reason, sizeof(reason), "code execution result is unavailable");
  }
  r->state = state;
  r->has_score = has_score;
  r->score = score;
  r->reason = strdup(reason);
  if (has_score) {
    r->has_verdict = true;
    r->verdict = score >= c->pass_threshold ? TALLY_ES_PASS : TALLY_ES_FAIL;
  } else if (state == TALLY_ES_ERROR_STATE) {
    r->has_verdict = true;
    r->verdict = TALLY_ES_VERROR;
  }
  cJSON *raw = cJSON_CreateObject();
  if (raw == NULL || r->reason == NULL) {
    cJSON_Delete(raw);
    return TALLY_ENOMEM;
  }
  static const char *const states[] = {"available", "unavailable", "error"};
  static const char *const verdicts[] = {"pass", "fail", "error"};
  cJSON_AddStringToObject(raw, "state", states[state]);
  cJSON_AddStringToObject(raw, "verdict",
                          r->has_verdict ? verdicts[r->verdict] : "");
  if (has_score)
    cJSON_AddNumberToObject(raw, "normalized_score", score);
  else
    cJSON_AddNullToObject(raw, "normalized_score");
  cJSON_AddStringToObject(raw, "reason", reason);
  cJSON_AddStringToObject(raw, "validator_key", rec.validator_key);
  cJSON_AddStringToObject(raw, "target", rec.target);
  cJSON_AddStringToObject(raw, "target_path", rec.target_path);
  cJSON_AddStringToObject(raw, "test_command", rec.test_command);
  cJSON_AddNumberToObject(raw, "timeout_ms", (double)rec.timeout_ms);
  cJSON_AddItemToObject(raw, "exit_code", opt_int(rec.has_exit, rec.exit_code));
  cJSON_AddStringToObject(raw, "stdout", rec.out);
  cJSON_AddStringToObject(raw, "stderr", rec.err);
  cJSON_AddBoolToObject(raw, "timed_out", rec.timed_out);
  cJSON_AddStringToObject(raw, "execution_error", rec.execution_error);
  static const char *const cn[] = {"passed_tests", "failed_tests",
                                   "error_tests", "total_tests"};
  for (int k = 0; k < 4; k++)
    cJSON_AddItemToObject(raw, cn[k], opt_int(rec.has[k], rec.n[k]));
  cJSON_AddNumberToObject(raw, "pass_threshold", c->pass_threshold);
  cJSON_AddStringToObject(raw, "scoring", c->scoring);
  r->raw = raw;
  return 0;
}
