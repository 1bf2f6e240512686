/* Decoding a run strictly: the reference's evaluation input and the LLM
 * judge results beside it, each error naming its path. */
#include "evalspecs/run.h"
#include "config/error.h"
#include "config/json.h"
#include "config/utext.h"
#include "evalspecs/gojson.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rdec_s {
  char path[256];
  size_t len;
  char *err;
  size_t errlen;
  int rc;
} rdec_t;

static size_t push(rdec_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static size_t push(rdec_t *r, const char *fmt, ...) {
  size_t old = r->len;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(r->path + r->len, sizeof(r->path) - r->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    r->len += (size_t)n < sizeof(r->path) - r->len
                  ? (size_t)n
                  : sizeof(r->path) - 1 - r->len;
  return old;
}

static void pop(rdec_t *r, size_t old) {
  r->len = old;
  r->path[old] = '\0';
}

static int bad(rdec_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad(rdec_t *r, const char *fmt, ...) {
  if (r->rc != 0)
    return r->rc;
  char msg[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  snprintf(r->err, r->errlen, "%s: %s", r->path, msg);
  r->rc = TALLY_EJOB;
  return r->rc;
}

static int oom(rdec_t *r) {
  if (r->rc == 0) {
    snprintf(r->err, r->errlen, "out of memory");
    r->rc = TALLY_ENOMEM;
  }
  return r->rc;
}

/* Checks that obj is an object with only the given keys (and each once);
 * found[i] is member i, or NULL when absent or null. */
static bool members(rdec_t *r, const cJSON *obj, const char *const *keys,
                    const cJSON **found) {
  for (size_t i = 0; keys[i] != NULL; i++)
    found[i] = NULL;
  if (!cJSON_IsObject(obj)) {
    bad(r, "must be an object");
    return false;
  }
  for (const cJSON *m = obj->child; m != NULL; m = m->next) {
    size_t i = 0;
    while (keys[i] != NULL && strcmp(keys[i], m->string) != 0)
      i++;
    /* A key given twice: one of the known keys, already found (or met
     * as null before). */
    bool twice = false;
    for (const cJSON *n = keys[i] != NULL && found[i] == NULL ? obj->child
                                                              : NULL;
         n != NULL && n != m && !twice; n = n->next)
      twice = strcmp(n->string, m->string) == 0;
    twice = twice || (keys[i] != NULL && found[i] != NULL);
    if (keys[i] == NULL || twice) {
      size_t old = push(r, ".%s", m->string);
      bad(r, keys[i] == NULL ? "unknown key" : "key appears twice");
      pop(r, old);
    }
    if (keys[i] != NULL && !cJSON_IsNull(m))
      found[i] = m;
  }
  return r->rc == 0;
}

static char *text_of(rdec_t *r, const cJSON *v, const char *key) {
  if (v == NULL) {
    char *e = strdup("");
    if (e == NULL)
      oom(r);
    return e;
  }
  if (!cJSON_IsString(v)) {
    size_t old = push(r, ".%s", key);
    bad(r, "must be a string");
    pop(r, old);
    return NULL;
  }
  char *s = strdup(v->valuestring);
  if (s == NULL)
    oom(r);
  return s;
}

/* A UUID in the forms Go's uuid package reads: 36 characters, the same
 * with "urn:uuid:" before or in braces, or 32 hex digits. */
static bool parse_uuid(const char *s, tally_es_uuid_t *u) {
  size_t n = strlen(s);
  if (n == 45 && strncmp(s, "urn:uuid:", 9) == 0) {
    s += 9;
    n = 36;
  } else if (n == 38 && s[0] == '{' && s[37] == '}') {
    s++;
    n = 36;
  }
  bool dashed = n == 36;
  if (!dashed && n != 32)
    return false;
  if (dashed && (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-'))
    return false;
  size_t k = 0;
  for (size_t i = 0; i < n && k < 16;) {
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      i++;
      continue;
    }
    int a = tally_hex_value(s[i]), b = tally_hex_value(s[i + 1]);
    if (a < 0 || b < 0)
      return false;
    u->b[k++] = (unsigned char)(a * 16 + b);
    i += 2;
  }
  return k == 16;
}

static void uuid_of(rdec_t *r, const cJSON *v, const char *key,
                    tally_es_uuid_t *u, bool *has) {
  memset(u, 0, sizeof(*u));
  if (has != NULL)
    *has = false;
  if (v == NULL)
    return;
  size_t old = push(r, ".%s", key);
  if (!cJSON_IsString(v) || !parse_uuid(v->valuestring, u))
    bad(r, "must be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
  else if (has != NULL)
    *has = true;
  pop(r, old);
}

void tally_es_uuid_text(const tally_es_uuid_t *u, char out[37]) {
  static const char digits[] = "0123456789abcdef";
  size_t k = 0;
  for (size_t i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out[k++] = '-';
    out[k++] = digits[u->b[i] >> 4];
    out[k++] = digits[u->b[i] & 15];
  }
  out[k] = '\0';
}

bool tally_es_uuid_nil(const tally_es_uuid_t *u) {
  for (size_t i = 0; i < 16; i++)
    if (u->b[i] != 0)
      return false;
  return true;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static bool digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

/* RFC 3339 as Go's time package reads it: YYYY-MM-DDTHH:MM:SS, an
 * optional fraction of up to 9 digits, then Z or +hh:mm/-hh:mm. */
static bool parse_time(const char *s, tally_es_time_t *t) {
  int y, mo, d, h, mi, se;
  if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' ||
      !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
      s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
      !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &se))
    return false;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
      (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || se > 59)
    return false;
  const char *p = s + 19;
  int32_t ns = 0;
  if (*p == '.') {
    p++;
    int n = 0;
    while (p[n] >= '0' && p[n] <= '9')
      n++;
    if (n == 0 || n > 9)
      return false;
    for (int i = 0; i < 9; i++)
      ns = ns * 10 + (i < n ? p[i] - '0' : 0);
    p += n;
  }
  int64_t off = 0;
  if (*p == 'Z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om;
    if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) ||
        oh > 23 || om > 59)
      return false;
    off = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return false;
  }
  if (*p != '\0')
    return false;
  t->sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
  t->nsec = ns;
  return true;
}

/* Go's zero time: 0001-01-01T00:00:00Z. */
static tally_es_time_t zero_time(void) {
  tally_es_time_t t = {days_from_civil(1, 1, 1) * 86400, 0};
  return t;
}

void tally_es_time_text(tally_es_time_t t, char out[40]) {
  int64_t days = t.sec >= 0 ? t.sec / 86400 : -((-t.sec + 86399) / 86400);
  int64_t rem = t.sec - days * 86400;
  /* civil_from_days */
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2;
  int n = snprintf(out, 40, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld",
                   (long long)y, (long long)m, (long long)d,
                   (long long)(rem / 3600), (long long)(rem / 60 % 60),
                   (long long)(rem % 60));
  if (t.nsec > 0 && n > 0 && n < 28) {
    char frac[12];
    snprintf(frac, sizeof(frac), ".%09d", (int)t.nsec);
    size_t l = strlen(frac);
    while (l > 1 && frac[l - 1] == '0')
      frac[--l] = '\0';
    strcat(out, frac);
  }
  strcat(out, "Z");
}

int64_t tally_es_ms_between(tally_es_time_t t, tally_es_time_t u) {
  /* Go's Sub saturates at the int64 range of nanoseconds. */
  long double ns = ((long double)t.sec - (long double)u.sec) * 1e9L +
                   ((long double)t.nsec - (long double)u.nsec);
  if (ns >= 9223372036854775807.0L)
    return INT64_MAX / 1000000;
  if (ns <= -9223372036854775808.0L)
    return INT64_MIN / 1000000;
  int64_t whole = (int64_t)ns;
  return whole / 1000000;
}

/* {"kind","value","artifact_key","source","path"} under the key name. */
static void decode_value(rdec_t *r, const cJSON *v, tally_es_value_t *out) {
  static const char *const keys[] = {"kind",   "value", "artifact_key",
                                     "source", "path",  NULL};
  const cJSON *f[5];
  out->name = strdup(v->string);
  if (out->name == NULL) {
    oom(r);
    return;
  }
  if (!members(r, v, keys, f))
    return;
  out->kind = text_of(r, f[0], "kind");
  /* A null value is a value (the text null), as the reference keeps it. */
  out->value = cJSON_GetObjectItemCaseSensitive(v, "value");
  out->artifact_key = text_of(r, f[2], "artifact_key");
  out->source = text_of(r, f[3], "source");
  out->path = text_of(r, f[4], "path");
}

static void decode_values(rdec_t *r, const cJSON *v, const char *key,
                          tally_es_value_t **out, size_t *n) {
  if (v == NULL)
    return;
  size_t old = push(r, ".%s", key);
  if (!cJSON_IsObject(v)) {
    bad(r, "must be an object");
  } else {
    size_t count = (size_t)cJSON_GetArraySize(v);
    *out = calloc(count + 1, sizeof(**out));
    if (*out == NULL)
      oom(r);
    for (const cJSON *m = v->child; m != NULL && r->rc == 0; m = m->next) {
      size_t o2 = push(r, ".%s", m->string);
      decode_value(r, m, &(*out)[(*n)++]);
      pop(r, o2);
    }
  }
  pop(r, old);
}

static void decode_artifacts(rdec_t *r, const cJSON *v, tally_es_input_t *in) {
  if (v == NULL)
    return;
  size_t old = push(r, ".artifacts");
  if (!cJSON_IsObject(v)) {
    bad(r, "must be an object");
  } else {
    size_t count = (size_t)cJSON_GetArraySize(v);
    in->artifacts = calloc(count + 1, sizeof(*in->artifacts));
    if (in->artifacts == NULL)
      oom(r);
    static const char *const keys[] = {"key", "kind", "path", "media_type",
                                       NULL};
    for (const cJSON *m = v->child; m != NULL && r->rc == 0; m = m->next) {
      size_t o2 = push(r, ".%s", m->string);
      tally_es_artifact_t *a = &in->artifacts[in->nartifacts++];
      const cJSON *f[4];
      if ((a->name = strdup(m->string)) == NULL)
        oom(r);
      if (members(r, m, keys, f)) {
        a->key = text_of(r, f[0], "key");
        a->kind = text_of(r, f[1], "kind");
        a->path = text_of(r, f[2], "path");
        a->media_type = text_of(r, f[3], "media_type");
      }
      pop(r, o2);
    }
  }
  pop(r, old);
}

static void decode_input(rdec_t *r, const cJSON *v, tally_es_input_t *in) {
  static const char *const keys[] = {"challenge_identity_id",
                                     "regression_case_id",
                                     "challenge_key",
                                     "case_key",
                                     "item_key",
                                     "payload",
                                     "inputs",
                                     "expectations",
                                     "artifacts",
                                     NULL};
  const cJSON *f[9];
  if (!members(r, v, keys, f))
    return;
  uuid_of(r, f[0], "challenge_identity_id", &in->challenge_id, NULL);
  uuid_of(r, f[1], "regression_case_id", &in->case_id, &in->has_case_id);
  in->challenge_key = text_of(r, f[2], "challenge_key");
  in->case_key = text_of(r, f[3], "case_key");
  in->item_key = text_of(r, f[4], "item_key");
  in->payload = cJSON_GetObjectItemCaseSensitive(v, "payload");
  decode_values(r, f[6], "inputs", &in->inputs, &in->ninputs);
  decode_values(r, f[7], "expectations", &in->expectations, &in->nexpectations);
  decode_artifacts(r, f[8], in);
}

static void decode_event(rdec_t *r, const cJSON *v, tally_es_event_t *e) {
  static const char *const keys[] = {
      "type", "source", "sequence_number", "occurred_at", "payload", NULL};
  const cJSON *f[5];
  e->at = zero_time();
  if (!members(r, v, keys, f))
    return;
  e->type = text_of(r, f[0], "type");
  e->source = text_of(r, f[1], "source");
  if (f[2] != NULL) {
    size_t old = push(r, ".sequence_number");
    double x = f[2]->valuedouble;
    if (!cJSON_IsNumber(f[2]) || x != floor(x) || fabs(x) > 9.007e15)
      bad(r, "must be a whole number");
    else
      e->seq = (int64_t)x;
    pop(r, old);
  }
  if (f[3] != NULL) {
    size_t old = push(r, ".occurred_at");
    if (!cJSON_IsString(f[3]) || !parse_time(f[3]->valuestring, &e->at))
      bad(r, "must be an RFC 3339 time (2026-01-02T15:04:05Z, with an "
             "optional fraction and offset)");
    pop(r, old);
  }
  e->payload = f[4];
}

static int cmp_time(tally_es_time_t a, tally_es_time_t b) {
  if (a.sec != b.sec)
    return a.sec < b.sec ? -1 : 1;
  return (a.nsec > b.nsec) - (a.nsec < b.nsec);
}

/* The reference's order: events with a positive sequence number first, by
 * it; then by time; then by type; ties keep the job's order. */
static int cmp_event(const void *pa, const void *pb) {
  const tally_es_event_t *a = pa, *b = pb;
  bool sa = a->seq > 0, sb = b->seq > 0;
  if (sa != sb)
    return sa ? -1 : 1;
  if (sa && a->seq != b->seq)
    return a->seq < b->seq ? -1 : 1;
  int c = cmp_time(a->at, b->at);
  if (c != 0)
    return c;
  c = strcmp(a->type, b->type);
  if (c != 0)
    return c;
  return (a->order > b->order) - (a->order < b->order);
}

static void decode_judge(rdec_t *r, const cJSON *v,
                         tally_es_judge_result_t *j) {
  static const char *const keys[] = {
      "judge_key",  "mode",     "normalized_score", "payload",
      "confidence", "variance", "sample_count",     "model_count",
      "reason",     "samples",  "candidates",       "run_agent_id",
      NULL};
  const cJSON *f[12];
  if (!members(r, v, keys, f))
    return;
  /* Raw samples: [{"model", "output" or "error"}]. */
  if (f[9] != NULL) {
    size_t old = push(r, ".samples");
    if (!cJSON_IsArray(f[9])) {
      bad(r, "must be an array of samples");
    } else {
      size_t i = 0;
      for (const cJSON *x = f[9]->child; x != NULL; x = x->next, i++) {
        size_t o2 = push(r, "[%zu]", i);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(x, "model");
        const cJSON *out = cJSON_GetObjectItemCaseSensitive(x, "output");
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(x, "error");
        if (!cJSON_IsObject(x))
          bad(r, "must be an object");
        else if (!cJSON_IsString(m))
          bad(r, "model: must be a string");
        else if ((out == NULL) == (err == NULL))
          bad(r, "must have one of output and error");
        else if (!cJSON_IsString(out != NULL ? out : err))
          bad(r, "%s: must be a string", out != NULL ? "output" : "error");
        pop(r, o2);
      }
    }
    j->samples = f[9];
    pop(r, old);
    for (int k = 2; k <= 7; k++)
      if (f[k] != NULL) {
        size_t o3 = push(r, ".%s", keys[k]);
        bad(r, "is computed from the samples: give one or the other");
        pop(r, o3);
      }
  }
  if (f[10] != NULL) {
    size_t old = push(r, ".candidates");
    bool ok = cJSON_IsArray(f[10]);
    for (const cJSON *x = ok ? f[10]->child : NULL; x != NULL; x = x->next)
      ok = ok && cJSON_IsString(x);
    if (!ok)
      bad(r, "must be an array of run agent ids");
    j->candidates = f[10];
    pop(r, old);
  }
  if (f[11] != NULL) {
    size_t old = push(r, ".run_agent_id");
    if (!cJSON_IsString(f[11]))
      bad(r, "must be a string");
    j->current = f[11];
    pop(r, old);
  }
  j->judge_key = text_of(r, f[0], "judge_key");
  j->mode = text_of(r, f[1], "mode");
  j->reason = text_of(r, f[8], "reason");
  if (f[2] != NULL) {
    size_t old = push(r, ".normalized_score");
    if (!cJSON_IsNumber(f[2]))
      bad(r, "must be a number");
    j->has_score = true;
    j->score = f[2]->valuedouble;
    pop(r, old);
  }
  j->payload = f[3];
  j->confidence = f[4];
  j->variance = f[5];
  static const char *const counts[] = {"sample_count", "model_count"};
  double *dst[] = {&j->sample_count, &j->model_count};
  for (int k = 0; k < 2; k++) {
    const cJSON *c = f[6 + k];
    if (c == NULL)
      continue;
    size_t old = push(r, ".%s", counts[k]);
    if (!cJSON_IsNumber(c) || c->valuedouble != floor(c->valuedouble) ||
        fabs(c->valuedouble) > 2147483647.0)
      bad(r, "must be a whole number");
    else
      *dst[k] = c->valuedouble;
    pop(r, old);
  }
  if (j->confidence != NULL && !cJSON_IsString(j->confidence)) {
    size_t old = push(r, ".confidence");
    bad(r, "must be a string");
    pop(r, old);
  }
  if (j->variance != NULL && !cJSON_IsNumber(j->variance)) {
    size_t old = push(r, ".variance");
    bad(r, "must be a number");
    pop(r, old);
  }
}

int tally_es_run_decode(tally_es_run_t *r, const cJSON *run,
                        const cJSON *judges, const char *text, size_t len,
                        char *err, size_t errlen) {
  memset(r, 0, sizeof(*r));
  rdec_t d = {.err = err, .errlen = errlen};
  r->root = run;
  r->judges_root = judges;
  push(&d, "run");
  static const char *const keys[] = {
      "run_agent_id", "evaluation_spec_id",     "challenge_inputs",
      "events",       "human_preference_score", NULL};
  const cJSON *f[5];
  if (!members(&d, r->root, keys, f))
    return d.rc;
  uuid_of(&d, f[0], "run_agent_id", &r->run_agent_id, NULL);
  uuid_of(&d, f[1], "evaluation_spec_id", &r->spec_id, NULL);
  if (f[2] != NULL) {
    size_t old = push(&d, ".challenge_inputs");
    if (!cJSON_IsArray(f[2])) {
      bad(&d, "must be an array");
    } else {
      size_t n = (size_t)cJSON_GetArraySize(f[2]);
      if ((r->inputs = calloc(n + 1, sizeof(*r->inputs))) == NULL)
        return oom(&d);
      for (const cJSON *x = f[2]->child; x != NULL && d.rc == 0; x = x->next) {
        size_t o2 = push(&d, "[%zu]", r->ninputs);
        decode_input(&d, x, &r->inputs[r->ninputs++]);
        pop(&d, o2);
      }
    }
    pop(&d, old);
  }
  if (f[3] != NULL) {
    size_t old = push(&d, ".events");
    if (!cJSON_IsArray(f[3])) {
      bad(&d, "must be an array");
    } else {
      size_t n = (size_t)cJSON_GetArraySize(f[3]);
      if ((r->events = calloc(n + 1, sizeof(*r->events))) == NULL)
        return oom(&d);
      for (const cJSON *x = f[3]->child; x != NULL && d.rc == 0; x = x->next) {
        size_t o2 = push(&d, "[%zu]", r->nevents);
        r->events[r->nevents].order = r->nevents;
        decode_event(&d, x, &r->events[r->nevents++]);
        pop(&d, o2);
      }
    }
    pop(&d, old);
  }
  if (f[4] != NULL) {
    size_t old = push(&d, ".human_preference_score");
    if (!cJSON_IsNumber(f[4]))
      bad(&d, "must be a number");
    r->has_preference = true;
    r->preference = f[4]->valuedouble;
    pop(&d, old);
  }
  if (d.rc == 0 && r->judges_root != NULL) {
    pop(&d, 0);
    size_t n = (size_t)cJSON_GetArraySize(r->judges_root);
    if ((r->judges = calloc(n + 1, sizeof(*r->judges))) == NULL)
      return oom(&d);
    for (const cJSON *x = r->judges_root->child; x != NULL && d.rc == 0;
         x = x->next) {
      size_t o2 = push(&d, "llm_judge_results[%zu]", r->njudges);
      decode_judge(&d, x, &r->judges[r->njudges++]);
      pop(&d, o2);
    }
  }
  if (d.rc == 0 && r->nevents > 1)
    qsort(r->events, r->nevents, sizeof(*r->events), cmp_event);
  static const char *const raw_path[] = {"run", "challenge_inputs", "#0",
                                         "payload", NULL};
  size_t start, n;
  if (d.rc == 0 && text != NULL && r->ninputs == 1 &&
      r->inputs[0].payload != NULL &&
      tally_go_raw_span(text, len, raw_path, &start, &n)) {
    if ((r->payload_raw = malloc(n + 1)) == NULL)
      return oom(&d);
    memcpy(r->payload_raw, text + start, n);
    r->payload_raw[n] = '\0';
  }
  return d.rc;
}

static void free_value(tally_es_value_t *v) {
  free(v->name);
  free(v->kind);
  free(v->artifact_key);
  free(v->source);
  free(v->path);
}

void tally_es_run_free(tally_es_run_t *r) {
  for (size_t i = 0; r->inputs != NULL && i < r->ninputs; i++) {
    tally_es_input_t *in = &r->inputs[i];
    free(in->challenge_key);
    free(in->case_key);
    free(in->item_key);
    for (size_t k = 0; k < in->ninputs; k++)
      free_value(&in->inputs[k]);
    for (size_t k = 0; k < in->nexpectations; k++)
      free_value(&in->expectations[k]);
    free(in->inputs);
    free(in->expectations);
    for (size_t k = 0; k < in->nartifacts; k++) {
      free(in->artifacts[k].name);
      free(in->artifacts[k].key);
      free(in->artifacts[k].kind);
      free(in->artifacts[k].path);
      free(in->artifacts[k].media_type);
    }
    free(in->artifacts);
  }
  free(r->inputs);
  for (size_t i = 0; r->events != NULL && i < r->nevents; i++) {
    free(r->events[i].type);
    free(r->events[i].source);
  }
  free(r->events);
  for (size_t i = 0; r->judges != NULL && i < r->njudges; i++) {
    free(r->judges[i].judge_key);
    free(r->judges[i].mode);
    free(r->judges[i].reason);
    cJSON_Delete(r->judges[i].owned);
  }
  free(r->judges);
  free(r->payload_raw);
  memset(r, 0, sizeof(*r));
}
