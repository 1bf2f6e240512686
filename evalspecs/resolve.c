/* Evidence references resolved to the text a validator compares, as the
 * reference resolves them: found, unavailable with a reason, or an
 * error. */
#include "evalspecs/evidence.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct res_s {
  const tally_es_evidence_t *ev;
  tally_buf_t *value, *reason;
  const tally_es_uuid_t **challenge;
} res_t;

static int why(res_t *r, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int why(res_t *r, int kind, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  tally_buf_reset(r->reason);
  tally_buf_puts(r->reason, msg);
  return r->reason->oom ? -1 : kind;
}

static int found(res_t *r) {
  return r->value->oom ? -1 : TALLY_ES_FOUND;
}

/* Go's %q of s, in buf (cut at len). */
static const char *quoted(const char *s, char *buf, size_t len) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_go_quote(&b, s);
  snprintf(buf, len, "%s", b.oom ? "\"?\"" : tally_buf_text(&b));
  tally_buf_close(&b);
  return buf;
}

/* strconv.Atoi: an optional sign, then decimal digits. */
static bool atoi_go(const char *s, long long *out) {
  const char *p = s;
  if (*p == '+' || *p == '-')
    p++;
  if (*p == '\0')
    return false;
  for (const char *q = p; *q; q++)
    if (*q < '0' || *q > '9')
      return false;
  errno = 0;
  *out = strtoll(s, NULL, 10);
  return errno == 0;
}

/* Walks v down the segments (dot-separated, count n) and stringifies
 * what it finds. */
static int walk(res_t *r, const cJSON *v, char **seg, size_t n) {
  for (size_t i = 0; i < n && v != NULL; i++) {
    if (cJSON_IsObject(v)) {
      v = tally_go_member(v, seg[i]);
    } else if (cJSON_IsArray(v)) {
      long long k;
      if (!atoi_go(seg[i], &k) || k < 0 || k >= cJSON_GetArraySize(v))
        v = NULL;
      else
        v = cJSON_GetArrayItem(v, (int)k);
    } else {
      v = NULL;
    }
  }
  if (v == NULL)
    return why(r, TALLY_ES_UNAVAILABLE, "evidence path is unavailable");
  tally_buf_reset(r->value);
  tally_go_stringify(r->value, v);
  return found(r);
}

static int artifact_value(res_t *r, const tally_es_artifact_t *a, char **seg,
                          size_t n) {
  if (n == 0) {
    tally_buf_reset(r->value);
    tally_buf_puts(r->value, a->path);
    return found(r);
  }
  cJSON *o = cJSON_CreateObject();
  if (o == NULL || !cJSON_AddStringToObject(o, "key", a->key) ||
      !cJSON_AddStringToObject(o, "kind", a->kind) ||
      !cJSON_AddStringToObject(o, "path", a->path) ||
      !cJSON_AddStringToObject(o, "media_type", a->media_type)) {
    cJSON_Delete(o);
    return -1;
  }
  int rc = walk(r, o, seg, n);
  cJSON_Delete(o);
  return rc;
}

static const tally_es_artifact_t *artifact_named(const tally_es_input_t *in,
                                                 const char *name) {
  const tally_es_artifact_t *f = NULL;
  for (size_t i = 0; i < in->nartifacts; i++)
    if (strcmp(in->artifacts[i].name, name) == 0)
      f = &in->artifacts[i];
  return f;
}

static const tally_es_value_t *value_named(const tally_es_value_t *list,
                                           size_t n, const char *name) {
  const tally_es_value_t *f = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i].name, name) == 0)
      f = &list[i];
  return f;
}

static int field(res_t *r, const tally_es_input_t *in,
                 const tally_es_value_t *v, char **seg, size_t n, int depth) {
  char q[600];
  if (depth > 8)
    return why(r, TALLY_ES_ERROR,
               "evidence reference chain exceeds maximum depth");
  if (v->value != NULL)
    return walk(r, v->value, seg, n);
  if (v->source[0] != '\0') {
    bool input = strncmp(v->source, "input:", 6) == 0;
    bool artifact = strncmp(v->source, "artifact:", 9) == 0;
    if (!input && !artifact)
      return why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
                 quoted(v->source, q, sizeof(q)));
    char *key = tally_go_trimmed(v->source + (input ? 6 : 9));
    if (key == NULL)
      return -1;
    int rc;
    if (key[0] == '\0') {
      rc = why(r, TALLY_ES_UNAVAILABLE, "referenced %s is unavailable",
               input ? "input" : "artifact");
    } else if (input) {
      const tally_es_value_t *next = value_named(in->inputs, in->ninputs, key);
      rc = next == NULL
               ? why(r, TALLY_ES_UNAVAILABLE, "case input %s is unavailable",
                     quoted(key, q, sizeof(q)))
               : field(r, in, next, seg, n, depth + 1);
    } else {
      const tally_es_artifact_t *a = artifact_named(in, key);
      rc = a == NULL
               ? why(r, TALLY_ES_UNAVAILABLE, "artifact %s is unavailable",
                     quoted(key, q, sizeof(q)))
               : artifact_value(r, a, seg, n);
    }
    free(key);
    return rc;
  }
  if (v->artifact_key[0] != '\0') {
    const tally_es_artifact_t *a = artifact_named(in, v->artifact_key);
    if (a == NULL)
      return why(r, TALLY_ES_UNAVAILABLE, "artifact %s is unavailable",
                 quoted(v->artifact_key, q, sizeof(q)));
    return artifact_value(r, a, seg, n);
  }
  if (!tally_go_blank(v->path)) {
    cJSON *s = cJSON_CreateString(v->path);
    if (s == NULL)
      return -1;
    int rc = walk(r, s, seg, n);
    cJSON_Delete(s);
    return rc;
  }
  return why(r, TALLY_ES_UNAVAILABLE, "evidence is unavailable");
}

/* case.* and artifact.* of the one case in scope. */
static int case_ref(res_t *r, const char *ref) {
  const tally_es_input_t *in = r->ev->case_input;
  char q[600];
  *r->challenge =
      tally_es_uuid_nil(&in->challenge_id) ? NULL : &in->challenge_id;
  char *copy = strdup(ref);
  char **seg = calloc(strlen(ref) + 2, sizeof(*seg));
  if (copy == NULL || seg == NULL) {
    free(copy);
    free(seg);
    return -1;
  }
  size_t n = 0;
  for (char *p = copy;;) {
    seg[n++] = p;
    char *dot = strchr(p, '.');
    if (dot == NULL)
      break;
    *dot = '\0';
    p = dot + 1;
  }
  int rc;
  if (strcmp(seg[0], "artifact") == 0) {
    const tally_es_artifact_t *a =
        n >= 2 && !tally_go_blank(seg[1]) ? artifact_named(in, seg[1]) : NULL;
    if (n < 2 || tally_go_blank(seg[1]))
      rc = why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
               quoted(ref, q, sizeof(q)));
    else if (a == NULL)
      rc = why(r, TALLY_ES_UNAVAILABLE, "artifact %s is unavailable",
               quoted(seg[1], q, sizeof(q)));
    else
      rc = artifact_value(r, a, seg + 2, n - 2);
  } else if (n >= 2 && strcmp(seg[1], "payload") == 0) {
    if (in->payload == NULL)
      rc = why(r, TALLY_ES_UNAVAILABLE, "evidence is unavailable");
    else
      rc = walk(r, in->payload, seg + 2, n - 2);
  } else if (n >= 2 && (strcmp(seg[1], "inputs") == 0 ||
                        strcmp(seg[1], "expectations") == 0)) {
    bool inputs = seg[1][0] == 'i';
    const tally_es_value_t *v = NULL;
    if (n < 3 || tally_go_blank(seg[2]))
      rc = why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
               quoted(ref, q, sizeof(q)));
    else if ((v = inputs ? value_named(in->inputs, in->ninputs, seg[2])
                         : value_named(in->expectations, in->nexpectations,
                                       seg[2])) == NULL)
      rc = why(r, TALLY_ES_UNAVAILABLE, "case %s %s is unavailable",
               inputs ? "input" : "expectation", quoted(seg[2], q, sizeof(q)));
    else
      rc = field(r, in, v, seg + 3, n - 3, 0);
  } else {
    rc = why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
             quoted(ref, q, sizeof(q)));
  }
  free(seg);
  free(copy);
  return rc;
}

/* file:KEY: a captured file's content, or a directory listing as JSON. */
static int file_ref(res_t *r, const char *key) {
  char q[600], q2[600];
  const tally_es_capture_t *file = NULL, *dir = NULL;
  for (size_t i = 0; i < r->ev->ncaptures; i++)
    if (strcmp(r->ev->captures[i].key, key) == 0) {
      if (r->ev->captures[i].listing)
        dir = &r->ev->captures[i];
      else
        file = &r->ev->captures[i];
    }
  if (file != NULL) {
    const cJSON *exists = tally_go_member(file->payload, "exists");
    if (!cJSON_IsTrue(exists)) {
      const cJSON *path = tally_go_member(file->payload, "path");
      return why(r, TALLY_ES_UNAVAILABLE,
                 "captured file %s does not exist at path %s",
                 quoted(key, q, sizeof(q)),
                 quoted(cJSON_IsString(path) ? path->valuestring : "", q2,
                        sizeof(q2)));
    }
    const cJSON *content = tally_go_member(file->payload, "content");
    tally_buf_reset(r->value);
    tally_buf_puts(r->value,
                   cJSON_IsString(content) ? content->valuestring : "");
    return found(r);
  }
  if (dir != NULL) {
    /* {"key","path","entries":[{"path","size","is_dir" when true}]} */
    tally_buf_t *b = r->value;
    tally_buf_reset(b);
    const cJSON *k = tally_go_member(dir->payload, "key"),
                *p = tally_go_member(dir->payload, "path"),
                *en = tally_go_member(dir->payload, "entries");
    tally_buf_puts(b, "{\"key\":");
    const char *ks = cJSON_IsString(k) ? k->valuestring : "";
    tally_go_json_string(b, ks, strlen(ks));
    tally_buf_puts(b, ",\"path\":");
    const char *ps = cJSON_IsString(p) ? p->valuestring : "";
    tally_go_json_string(b, ps, strlen(ps));
    tally_buf_puts(b, ",\"entries\":");
    if (!cJSON_IsArray(en)) {
      tally_buf_puts(b, "null");
    } else {
      tally_buf_putc(b, '[');
      for (const cJSON *e = en->child; e != NULL; e = e->next) {
        if (e != en->child)
          tally_buf_putc(b, ',');
        const cJSON *ep = cJSON_IsObject(e) ? tally_go_member(e, "path") : NULL,
                    *es = cJSON_IsObject(e) ? tally_go_member(e, "size") : NULL,
                    *ed =
                        cJSON_IsObject(e) ? tally_go_member(e, "is_dir") : NULL;
        const char *eps = cJSON_IsString(ep) ? ep->valuestring : "";
        tally_buf_puts(b, "{\"path\":");
        tally_go_json_string(b, eps, strlen(eps));
        tally_buf_puts(b, ",\"size\":");
        tally_go_json_float(b, cJSON_IsNumber(es) ? es->valuedouble : 0);
        if (cJSON_IsTrue(ed))
          tally_buf_puts(b, ",\"is_dir\":true");
        tally_buf_putc(b, '}');
      }
      tally_buf_putc(b, ']');
    }
    tally_buf_putc(b, '}');
    return found(r);
  }
  return why(r, TALLY_ES_UNAVAILABLE, "file capture key %s is unavailable",
             quoted(key, q, sizeof(q)));
}

/* The transcript turns from..: "user[N]: ..." and "assistant[N]: ..."
 * lines. */
static int transcript_text(res_t *r, size_t from) {
  const tally_es_evidence_t *ev = r->ev;
  if (from >= ev->nturns)
    return why(r, TALLY_ES_UNAVAILABLE, "transcript evidence is unavailable");
  tally_buf_t *b = r->value;
  tally_buf_reset(b);
  bool first = true;
  char head[64];
  for (size_t i = from; i < ev->nturns; i++) {
    const tally_es_turn_t *t = &ev->turns[i];
    const char *texts[] = {t->user, t->assistant};
    const char *who[] = {"user", "assistant"};
    for (int k = 0; k < 2; k++) {
      if (tally_go_blank(texts[k]))
        continue;
      if (!first)
        tally_buf_putc(b, '\n');
      first = false;
      snprintf(head, sizeof(head), "%s[%lld]: ", who[k], (long long)t->index);
      tally_buf_puts(b, head);
      tally_buf_puts(b, texts[k]);
    }
  }
  return found(r);
}

static int transcript_ref(res_t *r, const char *ref) {
  const tally_es_evidence_t *ev = r->ev;
  char q[600];
  if (strcmp(ref, "transcript.full") == 0)
    return transcript_text(r, 0);
  if (strcmp(ref, "turn.expectations") == 0) {
    if (ev->nturns == 0)
      return why(r, TALLY_ES_UNAVAILABLE,
                 "turn expectations evidence is unavailable");
    tally_buf_t *b = r->value;
    tally_buf_reset(b);
    tally_buf_putc(b, '[');
    char num[32];
    for (size_t i = 0; i < ev->nturns; i++) {
      const tally_es_turn_t *t = &ev->turns[i];
      snprintf(num, sizeof(num), "%lld", (long long)t->index);
      tally_buf_puts(b, i ? ",{\"turn_index\":" : "{\"turn_index\":");
      tally_buf_puts(b, num);
      if (t->phase[0] != '\0') {
        tally_buf_puts(b, ",\"phase_id\":");
        tally_go_json_string(b, t->phase, strlen(t->phase));
      }
      tally_buf_puts(b, t->mismatch ? ",\"mismatch\":true}"
                                    : ",\"mismatch\":false}");
    }
    tally_buf_putc(b, ']');
    return found(r);
  }
  if (strcmp(ref, "transcript.from_mismatch") == 0) {
    for (size_t i = 0; i < ev->nturns; i++)
      if (ev->turns[i].mismatch)
        return transcript_text(r, i);
    return why(r, TALLY_ES_UNAVAILABLE,
               "transcript mismatch evidence is unavailable");
  }
  if (strncmp(ref, "transcript.last_n:", 18) != 0)
    return why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
               quoted(ref, q, sizeof(q)));
  char *t = tally_go_trimmed(ref + strlen("transcript.last_n:"));
  long long n = 0;
  bool ok = t != NULL && atoi_go(t, &n) && n > 0;
  free(t);
  if (!ok)
    return why(r, TALLY_ES_ERROR, "unsupported evidence source %s",
               quoted(ref, q, sizeof(q)));
  if (ev->nturns == 0)
    return why(r, TALLY_ES_UNAVAILABLE, "transcript evidence is unavailable");
  size_t from =
      (unsigned long long)n >= ev->nturns ? 0 : ev->nturns - (size_t)n;
  return transcript_text(r, from);
}

int tally_es_resolve(const tally_es_evidence_t *ev, const char *ref,
                     tally_buf_t *value, tally_buf_t *reason,
                     const tally_es_uuid_t **challenge) {
  res_t r = {ev, value, reason, challenge};
  char q[600];
  *challenge = NULL;
  tally_buf_reset(value);
  tally_buf_reset(reason);
  if (strcmp(ref, "final_output") == 0 ||
      strcmp(ref, "run.final_output") == 0) {
    *challenge = ev->challenge_id;
    if (ev->final_output == NULL)
      return why(&r, TALLY_ES_UNAVAILABLE,
                 "final output evidence is unavailable");
    tally_buf_puts(value, ev->final_output);
    return found(&r);
  }
  if (strcmp(ref, "challenge_input") == 0) {
    *challenge = ev->challenge_id;
    if (ev->challenge_input == NULL)
      return why(&r, TALLY_ES_UNAVAILABLE,
                 "challenge input evidence is unavailable");
    tally_buf_puts(value, ev->challenge_input);
    return found(&r);
  }
  if (strncmp(ref, "case.", 5) == 0 || strncmp(ref, "artifact.", 9) == 0) {
    if (ev->case_input == NULL) {
      *challenge = ev->challenge_id;
      return why(&r, TALLY_ES_UNAVAILABLE, "%s", ev->case_reason);
    }
    return case_ref(&r, ref);
  }
  if (strncmp(ref, "file:", 5) == 0)
    return file_ref(&r, ref + 5);
  if (strncmp(ref, "literal:", 8) == 0) {
    tally_buf_puts(value, ref + 8);
    return found(&r);
  }
  if (strncmp(ref, "transcript.", 11) == 0 ||
      strcmp(ref, "turn.expectations") == 0)
    return transcript_ref(&r, ref);
  return why(&r, TALLY_ES_ERROR, "unsupported evidence source %s",
             quoted(ref, q, sizeof(q)));
}
