/* The typed decoding of a JSON Schema, as the reference's engine does it
 * (AgentClash decodes a schema into google/jsonschema-go v0.3.0's Schema
 * with Go's encoding/json, then resolves it): a keyword whose value has
 * the wrong JSON type is an error before any document is validated, not
 * a schema that passes or fails everything (docs/evaluation-specs.md). */
#include "evalspecs/gojson.h"
#include "evalspecs/jsonschema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the reference's Schema type holds under each keyword it knows. */
typedef enum {
  K_STRING,     /* string */
  K_BOOL,       /* bool */
  K_FLOAT,      /* *float64 */
  K_INT,        /* *integer (int32; 2.0 reads as 2) */
  K_ANY,        /* any value */
  K_ARRAY,      /* []any */
  K_STRINGS,    /* []string */
  K_SCHEMA,     /* *Schema */
  K_SCHEMAS,    /* []*Schema */
  K_SCHEMA_MAP, /* map[string]*Schema */
  K_DEP_REQ,    /* map[string][]string */
  K_VOCAB,      /* map[string]bool */
  K_TYPE        /* a string or an array of strings */
} kind_t;

static const struct {
  const char *name;
  kind_t kind;
} keywords[] = {
    {"$id", K_STRING},
    {"$schema", K_STRING},
    {"$ref", K_STRING},
    {"$comment", K_STRING},
    {"$defs", K_SCHEMA_MAP},
    {"definitions", K_SCHEMA_MAP},
    {"$anchor", K_STRING},
    {"$dynamicAnchor", K_STRING},
    {"$dynamicRef", K_STRING},
    {"$vocabulary", K_VOCAB},
    {"title", K_STRING},
    {"description", K_STRING},
    {"default", K_ANY},
    {"deprecated", K_BOOL},
    {"readOnly", K_BOOL},
    {"writeOnly", K_BOOL},
    {"examples", K_ARRAY},
    {"type", K_TYPE},
    {"enum", K_ARRAY},
    {"const", K_ANY},
    {"multipleOf", K_FLOAT},
    {"minimum", K_FLOAT},
    {"maximum", K_FLOAT},
    {"exclusiveMinimum", K_FLOAT},
    {"exclusiveMaximum", K_FLOAT},
    {"minLength", K_INT},
    {"maxLength", K_INT},
    {"pattern", K_STRING},
    {"prefixItems", K_SCHEMAS},
    {"items", K_SCHEMA},
    {"minItems", K_INT},
    {"maxItems", K_INT},
    {"additionalItems", K_SCHEMA},
    {"uniqueItems", K_BOOL},
    {"contains", K_SCHEMA},
    {"minContains", K_INT},
    {"maxContains", K_INT},
    {"unevaluatedItems", K_SCHEMA},
    {"minProperties", K_INT},
    {"maxProperties", K_INT},
    {"required", K_STRINGS},
    {"dependentRequired", K_DEP_REQ},
    {"properties", K_SCHEMA_MAP},
    {"patternProperties", K_SCHEMA_MAP},
    {"additionalProperties", K_SCHEMA},
    {"propertyNames", K_SCHEMA},
    {"unevaluatedProperties", K_SCHEMA},
    {"allOf", K_SCHEMAS},
    {"anyOf", K_SCHEMAS},
    {"oneOf", K_SCHEMAS},
    {"not", K_SCHEMA},
    {"if", K_SCHEMA},
    {"then", K_SCHEMA},
    {"else", K_SCHEMA},
    {"dependentSchemas", K_SCHEMA_MAP},
    {"contentEncoding", K_STRING},
    {"contentMediaType", K_STRING},
    {"contentSchema", K_SCHEMA},
    {"format", K_STRING},
};

typedef struct check_s {
  char *err;
  size_t errlen;
  bool resolve; /* the error is one of resolving, not of decoding */
  int depth;
} check_t;

static bool mismatch(check_t *c, const cJSON *v, const char *field,
                     const char *type) {
  snprintf(c->err, c->errlen,
           "json: cannot unmarshal %s into Go struct field .%s of type %s",
           tally_go_kind(v), field, type);
  return false;
}

/* A number's text as Go reads it: the shortest form that reads back. */
static bool integral_text(const cJSON *v) {
  /* cJSON keeps no text; a number written with a point or an exponent
   * reads the same as the integer it equals, so the value decides,
   * except that Go's int decoder refuses an exponent without a point
   * (1e3): tally cannot tell 1e3 from 1000 here and takes both. */
  double x = v->valuedouble;
  return isfinite(x) && x == floor(x);
}

static bool schema(check_t *c, const cJSON *s, const char *at, bool top);

/* A value where the reference wants a schema (*Schema): an object or a
 * boolean; null is absent where allowed (a field) and nil, an error of
 * resolving, in an array or a map. */
static bool subschema(check_t *c, const cJSON *v, const char *at,
                      bool null_ok) {
  if (cJSON_IsNull(v)) {
    if (null_ok)
      return true;
    snprintf(c->err, c->errlen, "jsonschema: schema at %s is nil", at);
    c->resolve = true;
    return false;
  }
  if (!cJSON_IsObject(v) && !cJSON_IsBool(v)) {
    snprintf(c->err, c->errlen,
             "json: cannot unmarshal %s into Go value of type "
             "jsonschema.Schema",
             tally_go_kind(v));
    return false;
  }
  return schema(c, v, at, false);
}

/* A JSON pointer's segment for key: ~ as ~0, / as ~1. */
static void pointer_append(char *out, size_t len, const char *at, const char *a,
                           const char *b) {
  size_t n =
      (size_t)snprintf(out, len, "%s/%s", strcmp(at, "root") == 0 ? "" : at, a);
  if (b != NULL && n < len) {
    n += (size_t)snprintf(out + n, len - n, "/");
    for (; *b != '\0' && n + 3 < len; b++) {
      if (*b == '~' || *b == '/') {
        out[n++] = '~';
        out[n++] = *b == '~' ? '0' : '1';
      } else {
        out[n++] = *b;
      }
    }
    out[n < len ? n : len - 1] = '\0';
  }
}

static bool keyword(check_t *c, const cJSON *v, kind_t kind, const char *at) {
  const char *name = v->string;
  char sub[512];
  if (cJSON_IsNull(v) && kind != K_TYPE)
    return true; /* Go leaves the field as it was: absent */
  switch (kind) {
  case K_STRING:
    return cJSON_IsString(v) || mismatch(c, v, name, "string");
  case K_BOOL:
    return cJSON_IsBool(v) || mismatch(c, v, name, "bool");
  case K_FLOAT:
    if (!cJSON_IsNumber(v))
      return mismatch(c, v, name, "float64");
    if (!isfinite(v->valuedouble)) {
      snprintf(c->err, c->errlen,
               "json: cannot unmarshal number into Go struct field .%s of "
               "type float64",
               name);
      return false;
    }
    return true;
  case K_INT:
    if (!cJSON_IsNumber(v)) {
      snprintf(c->err, c->errlen, "%s",
               cJSON_IsString(v) ? "not a number"
                                 : "cannot be unmarshaled into an int");
      return false;
    }
    if (!integral_text(v)) {
      snprintf(c->err, c->errlen, "not an integer value");
      return false;
    }
    if (v->valuedouble < -2147483648.0 || v->valuedouble > 2147483647.0) {
      snprintf(c->err, c->errlen, "integer is out of range");
      return false;
    }
    return true;
  case K_ANY:
    return true;
  case K_ARRAY:
    return cJSON_IsArray(v) || mismatch(c, v, name, "[]interface {}");
  case K_STRINGS:
    if (!cJSON_IsArray(v))
      return mismatch(c, v, name, "[]string");
    for (const cJSON *e = v->child; e != NULL; e = e->next)
      if (!cJSON_IsString(e) && !cJSON_IsNull(e)) {
        snprintf(c->err, c->errlen,
                 "json: cannot unmarshal %s into Go struct field .%s of "
                 "type string",
                 tally_go_kind(e), name);
        return false;
      }
    return true;
  case K_TYPE:
    if (cJSON_IsString(v))
      return true;
    if (cJSON_IsArray(v)) {
      for (const cJSON *e = v->child; e != NULL; e = e->next)
        if (!cJSON_IsString(e) && !cJSON_IsNull(e)) {
          snprintf(c->err, c->errlen,
                   "json: cannot unmarshal %s into Go value of type string",
                   tally_go_kind(e));
          return false;
        }
      return true;
    }
    {
      char *text = cJSON_PrintUnformatted(v);
      snprintf(c->err, c->errlen, "invalid value for \"type\": \"%.200s\"",
               text != NULL ? text : "?");
      cJSON_free(text);
    }
    return false;
  case K_SCHEMA:
    pointer_append(sub, sizeof(sub), at, name, NULL);
    return subschema(c, v, sub, true);
  case K_SCHEMAS: {
    if (!cJSON_IsArray(v))
      return mismatch(c, v, name, "[]*jsonschema.Schema");
    int i = 0;
    for (const cJSON *e = v->child; e != NULL; e = e->next, i++) {
      char idx[24];
      snprintf(idx, sizeof(idx), "%d", i);
      pointer_append(sub, sizeof(sub), at, name, idx);
      if (!subschema(c, e, sub, false))
        return false;
    }
    return true;
  }
  case K_SCHEMA_MAP:
    if (!cJSON_IsObject(v))
      return mismatch(c, v, name, "map[string]*jsonschema.Schema");
    for (const cJSON *e = v->child; e != NULL; e = e->next) {
      pointer_append(sub, sizeof(sub), at, name, e->string);
      if (!subschema(c, e, sub, false))
        return false;
    }
    return true;
  case K_DEP_REQ:
    if (!cJSON_IsObject(v))
      return mismatch(c, v, name, "map[string][]string");
    for (const cJSON *e = v->child; e != NULL; e = e->next) {
      if (cJSON_IsNull(e))
        continue;
      if (!cJSON_IsArray(e))
        return mismatch(c, e, name, "[]string");
      for (const cJSON *x = e->child; x != NULL; x = x->next)
        if (!cJSON_IsString(x) && !cJSON_IsNull(x))
          return mismatch(c, x, name, "string");
    }
    return true;
  case K_VOCAB:
    if (!cJSON_IsObject(v))
      return mismatch(c, v, name, "map[string]bool");
    for (const cJSON *e = v->child; e != NULL; e = e->next)
      if (!cJSON_IsBool(e) && !cJSON_IsNull(e))
        return mismatch(c, e, name, "bool");
    return true;
  }
  return true;
}

static bool schema(check_t *c, const cJSON *s, const char *at, bool top) {
  (void)top;
  if (cJSON_IsBool(s))
    return true;
  if (++c->depth > 200) {
    /* Deeper than any schema needs; the validator bounds its own depth
     * too. */
    c->depth--;
    return true;
  }
  bool ok = true;
  bool defs = false, definitions = false, vocabulary = false;
  const char *draft = NULL;
  for (const cJSON *m = s->child; ok && m != NULL; m = m->next) {
    for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++) {
      if (strcmp(m->string, keywords[k].name) != 0)
        continue;
      ok = keyword(c, m, keywords[k].kind, at);
      if (!cJSON_IsNull(m)) {
        defs |= strcmp(m->string, "$defs") == 0;
        definitions |= strcmp(m->string, "definitions") == 0;
        vocabulary |= strcmp(m->string, "$vocabulary") == 0;
      }
      if (strcmp(m->string, "$schema") == 0 && cJSON_IsString(m))
        draft = m->valuestring;
      break;
    }
  }
  c->depth--;
  if (!ok)
    return false;
  /* What resolving checks of each schema before any validation. */
  if (defs && definitions) {
    snprintf(c->err, c->errlen,
             "both Defs and Definitions are set; at most one should be");
    c->resolve = true;
    return false;
  }
  if (vocabulary &&
      (draft == NULL ||
       strcmp(draft, "https://json-schema.org/draft/2020-12/schema") != 0)) {
    snprintf(c->err, c->errlen,
             "jsonschema.Schema: %s: cannot validate a schema with "
             "$vocabulary",
             "<anonymous schema>");
    c->resolve = true;
    return false;
  }
  return true;
}

int tally_js_check_types(const cJSON *root, char *err, size_t errlen,
                         bool *resolve) {
  check_t c = {err, errlen, false, 0};
  *resolve = false;
  if (!cJSON_IsObject(root) && !cJSON_IsBool(root) && !cJSON_IsNull(root)) {
    snprintf(err, errlen,
             "json: cannot unmarshal %s into Go value of type "
             "jsonschema.Schema",
             tally_go_kind(root));
    return -1;
  }
  if (!cJSON_IsObject(root) || schema(&c, root, "root", true))
    return 0;
  *resolve = c.resolve;
  return -1;
}
