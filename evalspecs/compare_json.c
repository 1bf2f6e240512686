/* The json_answer comparator (docs/comparators.md): the first JSON object
 * in a model's response, bare or inside a fenced code block, validated
 * against a JSON Schema (the json_schema validator's, jsonschema.h) and,
 * with "field", that member compared with the expected answer. It lives
 * here, beside the validator it uses; engine/registry.c adds it to the
 * comparators. */
#include "evalspecs/compare_json.h"
#include "evalspecs/gojson.h"
#include "evalspecs/jsonschema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many bytes the search for an object may parse in all, as a
 * multiple of the response's length (plus a floor): a response full of
 * '{' that never closes cannot take quadratic time. */
#define SEARCH_FACTOR 16
#define SEARCH_FLOOR (1u << 20)

typedef struct json_answer_s {
  cJSON *schema; /* owned; NULL: any object */
  tally_js_t *js;
  char *field; /* NULL: the object alone */
} json_answer_t;

static void json_answer_free(void *p) {
  json_answer_t *s = p;
  tally_js_free(s->js);
  cJSON_Delete(s->schema);
  free(s->field);
  free(s);
}

static int json_answer_parse(const cJSON *params, void **state, tally_diag_t *d,
                             tally_jpath_t *path) {
  json_answer_t *s = calloc(1, sizeof(*s));
  if (s == NULL) {
    tally_diag_add(d, path, "out of memory");
    return TALLY_ENOMEM;
  }
  int rc = 0;
  if (params != NULL && !cJSON_IsObject(params))
    rc = tally_diag_add(d, path, "must be an object");
  for (const cJSON *m = params ? params->child : NULL; rc == 0 && m;
       m = m->next) {
    size_t old = tally_jpath_key(path, m->string);
    if (strcmp(m->string, "schema") == 0) {
      char err[512];
      if (s->schema != NULL)
        rc = tally_diag_add(d, path, "key appears twice");
      else if (!cJSON_IsObject(m) && !cJSON_IsBool(m))
        rc = tally_diag_add(d, path, "must be a JSON Schema (an object)");
      else if ((s->schema = cJSON_Duplicate(m, true)) == NULL) {
        tally_diag_add(d, path, "out of memory");
        rc = TALLY_ENOMEM;
      } else if ((s->js = tally_js_compile(s->schema, err, sizeof(err))) ==
                 NULL)
        rc = tally_diag_add(d, path, "%s", err);
    } else if (strcmp(m->string, "field") == 0) {
      if (s->field != NULL)
        rc = tally_diag_add(d, path, "key appears twice");
      else if (!cJSON_IsString(m) || m->valuestring[0] == '\0')
        rc = tally_diag_add(d, path, "must be a non-empty string");
      else if ((s->field = strdup(m->valuestring)) == NULL) {
        tally_diag_add(d, path, "out of memory");
        rc = TALLY_ENOMEM;
      }
    } else {
      rc = tally_diag_add(d, path, "unknown key");
    }
    tally_jpath_restore(path, old);
  }
  if (rc != 0) {
    json_answer_free(s);
    return rc;
  }
  *state = s;
  return 0;
}

/* Parses the first JSON object in s: the first '{' at which one parses.
 * Returns it (the caller deletes it) or NULL; *gave_up says the search
 * stopped at its budget. Sets *oom when out of memory. */
static cJSON *first_object(const char *s, size_t n, bool *gave_up, bool *oom) {
  size_t budget = n * SEARCH_FACTOR + SEARCH_FLOOR, spent = 0;
  *gave_up = *oom = false;
  for (const char *p = s; p < s + n;) {
    const char *brace = memchr(p, '{', (size_t)(s + n - p));
    if (brace == NULL)
      return NULL;
    const char *end = NULL;
    cJSON *v =
        cJSON_ParseWithLengthOpts(brace, (size_t)(s + n - brace), &end, false);
    if (v != NULL)
      return v;
    if (end == NULL) { /* cJSON says nothing: out of memory */
      *oom = true;
      return NULL;
    }
    spent += (size_t)(end - brace) + 1;
    if (spent > budget) {
      *gave_up = true;
      return NULL;
    }
    p = brace + 1;
  }
  return NULL;
}

/* Whether member answers the expected output e: equal to e read as JSON,
 * or a string equal to e's text (both without their end white space). */
static bool answers(const cJSON *member, const char *e, size_t n) {
  while (n > 0 && strchr(" \t\r\n\v\f", e[n - 1]))
    n--;
  while (n > 0 && strchr(" \t\r\n\v\f", e[0])) {
    e++;
    n--;
  }
  if (cJSON_IsString(member) && strlen(member->valuestring) == n &&
      memcmp(member->valuestring, e, n) == 0)
    return true;
  cJSON *want = cJSON_ParseWithLength(e, n);
  bool same = want != NULL && tally_go_json_equal(member, want);
  cJSON_Delete(want);
  return same;
}

static int json_answer_compare(const void *state, const char *out,
                               size_t out_len, const char *exp, size_t exp_len,
                               tally_compare_result_t *res, char *err,
                               size_t errlen) {
  const json_answer_t *s = state;
  res->outcome = 0;
  res->message = TALLY_COMPARE_WRONG;
  res->admin[0] = '\0';
  if (out == NULL)
    out = "";
  if (exp == NULL)
    exp = "";
  bool gave_up, oom;
  cJSON *obj = first_object(out, out_len, &gave_up, &oom);
  if (oom)
    return TALLY_ENOMEM;
  if (obj == NULL) {
    res->extracted = 0;
    snprintf(res->admin, sizeof(res->admin), "%s",
             gave_up ? "no JSON object in the output (the search stopped at "
                       "its budget)"
                     : "no JSON object in the output");
    return 0;
  }
  res->extracted = 1;
  char why[200] = "";
  int valid =
      s->js != NULL ? tally_js_validate(s->js, obj, why, sizeof(why)) : 1;
  if (valid < 0) {
    cJSON_Delete(obj);
    snprintf(err, errlen, "the schema cannot be applied: %s", why);
    return TALLY_EJOB;
  }
  bool ok = valid == 1;
  if (!ok)
    snprintf(res->admin, sizeof(res->admin),
             "the JSON object does not match the schema: %s", why);
  if (ok && s->field != NULL) {
    const cJSON *m = tally_go_member(obj, s->field);
    if (m == NULL) {
      ok = false;
      snprintf(res->admin, sizeof(res->admin),
               "the JSON object has no member \"%.64s\"", s->field);
    } else if (!answers(m, exp, exp_len)) {
      ok = false;
      snprintf(res->admin, sizeof(res->admin),
               "member \"%.64s\" is not the expected answer", s->field);
    }
  }
  cJSON_Delete(obj);
  if (ok) {
    res->outcome = 1;
    res->message = TALLY_COMPARE_CORRECT;
  }
  return 0;
}

const tally_comparator_t tally_comparator_json_answer = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "json_answer",
    .parse = json_answer_parse,
    .compare = json_answer_compare,
    .free = json_answer_free,
};
