/* json_path_match: "$" with .name, [N] and ["key"] steps into the actual
 * JSON document, compared with equals, contains, greater_than, less_than
 * or exists, as the reference does. A path that finds nothing fails; it
 * is not an error. */
#include "evalspecs/apply.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/jsonschema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail_with(tally_es_outcome_t *o, const char *context,
                      const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_with(tally_es_outcome_t *o, const char *context,
                      const char *fmt, ...) {
  char err[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, sizeof(err), fmt, ap);
  va_end(ap);
  o->verdict = TALLY_ES_VERROR;
  o->has_score = false;
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, context);
  tally_buf_puts(&o->reason, ": ");
  tally_buf_puts(&o->reason, err);
  cJSON_AddStringToObject(o->evidence, "error", err);
}

static bool ident_char(char c) {
  return c == '_' || c == '-' || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* strconv.Unquote of a "..." literal (JSON's escapes are Go's too, for
 * what property names hold) or a '...' rune literal of one character. */
static char *unquote(const char *s, size_t n) {
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    char *text = malloc(n + 1);
    if (text == NULL)
      return NULL;
    memcpy(text, s, n);
    text[n] = '\0';
    cJSON *v = cJSON_Parse(text);
    free(text);
    char *out = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
    cJSON_Delete(v);
    return out;
  }
  if (n >= 3 && s[0] == '\'' && s[n - 1] == '\'') {
    int32_t cp;
    size_t k = tally_go_decode(s + 1, n - 2, &cp);
    if (cp >= 0 && cp != '\'' && cp != '\\' && k == n - 2) {
      char *out = malloc(k + 1);
      if (out != NULL) {
        memcpy(out, s + 1, k);
        out[k] = '\0';
      }
      return out;
    }
  }
  return NULL;
}

/* Walks path (trimmed, starting with $) through doc. Returns 1 with *out,
 * 0 when the path finds nothing, -1 with err for a bad path. */
static int walk(const cJSON *doc, const char *path, const cJSON **out,
                char *err, size_t errlen) {
  size_t len = strlen(path), i = 1;
  const cJSON *cur = doc;
  if (len == 0) {
    snprintf(err, errlen, "path is empty");
    return -1;
  }
  if (path[0] != '$') {
    snprintf(err, errlen, "path must start with '$'");
    return -1;
  }
  while (i < len) {
    if (path[i] == '.') {
      size_t start = ++i;
      while (i < len && ident_char(path[i]))
        i++;
      if (start == i) {
        snprintf(err, errlen, "missing property name at position %zu", start);
        return -1;
      }
      char name[256];
      snprintf(name, sizeof(name), "%.*s", (int)(i - start), path + start);
      if (!cJSON_IsObject(cur) || (cur = tally_go_member(cur, name)) == NULL)
        return 0;
    } else if (path[i] == '[') {
      size_t end = i + 1;
      while (end < len && path[end] != ']')
        end++;
      if (end >= len) {
        snprintf(err, errlen, "unterminated bracket expression at position %zu",
                 i);
        return -1;
      }
      size_t cs;
      size_t cn = tally_go_trim(path + i + 1, end - i - 1, &cs);
      const char *content = path + i + 1 + cs;
      if (cn == 0) {
        snprintf(err, errlen, "empty bracket expression at position %zu", i);
        return -1;
      }
      size_t at = i;
      i = end + 1;
      char *prop = NULL;
      if (content[0] == '\'' || content[0] == '"') {
        prop = unquote(content, cn);
        if (prop == NULL) {
          tally_buf_t q;
          tally_buf_init(&q);
          char raw[256];
          snprintf(raw, sizeof(raw), "%.*s", (int)cn, content);
          tally_go_quote(&q, raw);
          snprintf(err, errlen, "invalid quoted property %s: invalid syntax",
                   q.oom ? raw : tally_buf_text(&q));
          tally_buf_close(&q);
          (void)at;
          return -1;
        }
      } else {
        char text[64];
        bool number = cn < sizeof(text);
        if (number) {
          memcpy(text, content, cn);
          text[cn] = '\0';
          const char *p = text + (text[0] == '+' || text[0] == '-');
          number = *p != '\0';
          for (; number && *p; p++)
            number = *p >= '0' && *p <= '9';
        }
        if (number) {
          errno = 0;
          long long k = strtoll(text, NULL, 10);
          if (errno != 0)
            number = false;
          else if (!cJSON_IsArray(cur) || k < 0 || k >= cJSON_GetArraySize(cur))
            return 0;
          else {
            cur = cJSON_GetArrayItem(cur, (int)k);
            continue;
          }
        }
        prop = malloc(cn + 1);
        if (prop == NULL) {
          snprintf(err, errlen, "out of memory");
          return -1;
        }
        memcpy(prop, content, cn);
        prop[cn] = '\0';
      }
      const cJSON *next =
          cJSON_IsObject(cur) ? tally_go_member(cur, prop) : NULL;
      free(prop);
      if (next == NULL)
        return 0;
      cur = next;
    } else {
      snprintf(err, errlen, "unexpected token '%c' at position %zu", path[i],
               i);
      return -1;
    }
  }
  *out = cur;
  return 1;
}

static char *marshal(const cJSON *v) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_go_marshal(&b, v);
  char *s = b.oom ? NULL : strdup(tally_buf_text(&b));
  tally_buf_close(&b);
  return s;
}

/* One JSON value of text, read as Go's decoder reads it; NULL with Go's
 * error text in err. */
static cJSON *read_one(const char *text, char *err, size_t errlen) {
  size_t start, end;
  if (!tally_go_decode_one(text, &start, &end, err, errlen))
    return NULL;
  cJSON *v = cJSON_ParseWithLength(text + start, end - start);
  if (v == NULL)
    snprintf(err, errlen, "out of memory");
  return v;
}

int tally__es_json_path(const char *actual, const char *expected,
                        tally_es_outcome_t *o) {
  char perr[600];
  cJSON *doc = read_one(actual, perr, sizeof(perr));
  if (doc == NULL) {
    fail_with(o, "parse actual JSON document", "%s", perr);
    return 0;
  }
  char *trimmed = tally_go_trimmed(expected);
  cJSON *exp = NULL;
  const char *path = NULL, *comparator = NULL;
  const cJSON *want = NULL;
  char err[600];
  if (trimmed == NULL || trimmed[0] == '\0') {
    fail_with(o, "parse json_path_match expectation", "expectation is empty");
    goto done;
  }
  if (trimmed[0] == '$') {
    path = trimmed;
    comparator = "exists";
  } else {
    exp = read_one(trimmed, perr, sizeof(perr));
    if (exp == NULL) {
      fail_with(o, "parse json_path_match expectation", "%s", perr);
      goto done;
    }
    if (!cJSON_IsObject(exp) && !cJSON_IsNull(exp)) {
      fail_with(o, "parse json_path_match expectation",
                "json: cannot unmarshal %s into Go value of type "
                "scoring.jsonPathExpectation",
                tally_go_kind(exp));
      goto done;
    }
    /* As Go decodes into the struct: the last of a repeated key. */
    const cJSON *p = NULL, *c = NULL, *val = NULL;
    for (const cJSON *m = cJSON_IsObject(exp) ? exp->child : NULL; m != NULL;
         m = m->next) {
      if (strcmp(m->string, "path") == 0)
        p = m;
      else if (strcmp(m->string, "comparator") == 0)
        c = m;
      else if (strcmp(m->string, "value") == 0)
        val = m;
    }
    const cJSON *bad = p && !cJSON_IsString(p) && !cJSON_IsNull(p)   ? p
                       : c && !cJSON_IsString(c) && !cJSON_IsNull(c) ? c
                                                                     : NULL;
    if (bad != NULL) {
      fail_with(o, "parse json_path_match expectation",
                "json: cannot unmarshal %s into Go struct field "
                "jsonPathExpectation.%s of type string",
                tally_go_kind(bad), bad->string);
      goto done;
    }
    if (!cJSON_IsString(p) || tally_go_blank(p->valuestring)) {
      fail_with(o, "parse json_path_match expectation", "path is required");
      goto done;
    }
    path = p->valuestring;
    want = cJSON_IsNull(val) ? NULL : val;
    comparator = cJSON_IsString(c) ? c->valuestring : "";
  }
  char *cpath = tally_go_trimmed(path), *ccomp = tally_go_trimmed(comparator);
  if (cpath == NULL || ccomp == NULL) {
    free(cpath);
    free(ccomp);
    goto done;
  }
  if (ccomp[0] == '\0') {
    free(ccomp);
    ccomp = strdup(want == NULL ? "exists" : "equals");
  }
  static const char *const known[] = {"equals", "contains", "greater_than",
                                      "less_than", "exists"};
  bool ok = false;
  for (size_t k = 0; ccomp != NULL && k < 5; k++)
    ok = ok || strcmp(ccomp, known[k]) == 0;
  if (!ok) {
    tally_buf_t q;
    tally_buf_init(&q);
    tally_go_quote(&q, ccomp ? ccomp : "");
    fail_with(o, "parse json_path_match expectation",
              "unsupported comparator %s", q.oom ? "" : tally_buf_text(&q));
    tally_buf_close(&q);
    free(cpath);
    free(ccomp);
    goto done;
  }
  const cJSON *got = NULL;
  int found = walk(doc, cpath, &got, err, sizeof(err));
  if (found < 0) {
    cJSON_AddStringToObject(o->evidence, "path", cpath);
    fail_with(o, "evaluate JSONPath expression", "%s", err);
    free(cpath);
    free(ccomp);
    goto done;
  }
  bool pass = false;
  const char *why = "json path did not resolve to a value";
  const char *error = NULL;
  if (found == 0) {
    pass = false;
  } else if (strcmp(ccomp, "exists") == 0) {
    pass = true;
  } else if (strcmp(ccomp, "equals") == 0) {
    pass = want != NULL ? tally_go_json_equal(got, want) : cJSON_IsNull(got);
    why = "json path value did not equal expected value";
  } else if (strcmp(ccomp, "contains") == 0) {
    if (cJSON_IsString(got)) {
      if (!cJSON_IsString(want)) {
        error = "expected value must be a string for contains comparator";
      } else {
        pass = strstr(got->valuestring, want->valuestring) != NULL;
        why = "json path value did not contain expected substring";
      }
    } else if (cJSON_IsArray(got)) {
      for (const cJSON *x = got->child; x != NULL && !pass; x = x->next)
        pass = want != NULL ? tally_go_json_equal(x, want) : cJSON_IsNull(x);
      why = "json path array did not contain expected value";
    } else {
      char *a = marshal(got), *b = want ? marshal(want) : strdup("null");
      pass = a != NULL && b != NULL && strstr(a, b) != NULL;
      free(a);
      free(b);
      why = "json path value did not contain expected value";
    }
  } else {
    bool greater = ccomp[0] == 'g';
    if (!cJSON_IsNumber(got)) {
      error = "actual value is not numeric";
    } else if (!cJSON_IsNumber(want)) {
      error = "expected value is not numeric";
    } else {
      pass = greater ? got->valuedouble > want->valuedouble
                     : got->valuedouble < want->valuedouble;
      why = greater ? "json path value was not greater than expected value"
                    : "json path value was not less than expected value";
    }
  }
  cJSON_AddStringToObject(o->evidence, "path", cpath);
  cJSON_AddStringToObject(o->evidence, "comparator", ccomp);
  if (error != NULL) {
    cJSON_AddItemToObject(o->evidence, "actual",
                          got ? cJSON_Duplicate(got, 1) : cJSON_CreateNull());
    cJSON_AddBoolToObject(o->evidence, "exists", found == 1);
    fail_with(o, "compare JSONPath value", "%s", error);
  } else {
    cJSON_AddItemToObject(o->evidence, "expected",
                          want ? cJSON_Duplicate(want, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(o->evidence, "actual",
                          got ? cJSON_Duplicate(got, 1) : cJSON_CreateNull());
    cJSON_AddBoolToObject(o->evidence, "exists", found == 1);
    o->verdict = pass ? TALLY_ES_PASS : TALLY_ES_FAIL;
    o->has_score = true;
    o->score = pass ? 1 : 0;
    tally_buf_reset(&o->reason);
    if (!pass)
      tally_buf_puts(&o->reason, why);
  }
  free(cpath);
  free(ccomp);
done:
  cJSON_Delete(exp);
  cJSON_Delete(doc);
  free(trimmed);
  return 0;
}

/* json_schema: the actual text must be valid against the expected text, a
 * JSON Schema (2020-12; a draft-07 $schema is read as 2020-12). */
int tally__es_json_schema(const char *actual, const char *expected,
                          tally_es_outcome_t *o) {
  char perr[600];
  cJSON *doc = read_one(actual, perr, sizeof(perr));
  if (doc == NULL) {
    fail_with(o, "parse actual JSON document", "%s", perr);
    return 0;
  }
  cJSON *schema = NULL;
  tally_js_t *js = NULL;
  if (!tally_go_unmarshal_check(expected, perr, sizeof(perr))) {
    fail_with(o, "parse JSON schema", "%s", perr);
    goto done;
  }
  if ((schema = cJSON_Parse(expected)) == NULL) {
    fail_with(o, "parse JSON schema", "out of memory");
    goto done;
  }
  const cJSON *sch = cJSON_IsObject(schema)
                         ? cJSON_GetObjectItemCaseSensitive(schema, "$schema")
                         : NULL;
  const char *draft = cJSON_IsString(sch) && sch->valuestring[0] != '\0'
                          ? sch->valuestring
                          : "https://json-schema.org/draft/2020-12/schema";
  if (cJSON_IsNull(schema)) {
    /* The reference's decoder reads null as the schema false. */
    cJSON_Delete(schema);
    schema = cJSON_CreateFalse();
    if (schema == NULL) {
      fail_with(o, "parse JSON schema", "out of memory");
      goto done;
    }
  }
  /* The keyword values' types, as the reference's typed decoding checks
   * them (before the draft); what its resolving refuses comes after the
   * draft's check. */
  char terr[600];
  bool resolving = false;
  int trc = tally_js_check_types(schema, terr, sizeof(terr), &resolving);
  if (trc != 0 && !resolving) {
    fail_with(o, "parse JSON schema", "%s", terr);
    goto done;
  }
  if ((js = tally_js_compile(schema, perr, sizeof(perr))) == NULL || trc != 0) {
    if (js != NULL)
      snprintf(perr, sizeof(perr), "%s", terr);
    bool draft_error = strncmp(perr, "unsupported JSON schema draft", 29) == 0;
    if (!draft_error)
      cJSON_AddStringToObject(o->evidence, "schema_draft", draft);
    fail_with(o, draft_error ? "parse JSON schema" : "resolve JSON schema",
              "%s", perr);
    goto done;
  }
  cJSON_AddStringToObject(o->evidence, "schema_draft", draft);
  int rc = tally_js_validate(js, doc, perr, sizeof(perr));
  if (rc < 0) {
    fail_with(o, "resolve JSON schema", "%s", perr);
  } else {
    o->verdict = rc ? TALLY_ES_PASS : TALLY_ES_FAIL;
    o->has_score = true;
    o->score = rc ? 1 : 0;
    tally_buf_reset(&o->reason);
    if (!rc) {
      tally_buf_puts(&o->reason, "json schema validation failed");
      cJSON_AddStringToObject(o->evidence, "validation_error", perr);
      cJSON_AddStringToObject(o->evidence, "validation_target", "actual_value");
    }
  }
done:
  tally_js_free(js);
  cJSON_Delete(schema);
  cJSON_Delete(doc);
  return 0;
}
