/* JSON Schema validation (see jsonschema.h): the document checked against
 * the schema jsonschema.c registered, keyword by keyword, carrying the
 * evaluated properties and items that unevaluated* read and the dynamic
 * scope that $dynamicRef reads; and what the first failure says (the
 * schema's keyword by its path, the document's place, why). */
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/jsonschema.h"
#include "evalspecs/jsonschema_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends "/seg" to a path (len of cap bytes), seg escaped as a JSON
 * pointer's token, as far as it fits; returns the length before. */
static size_t path_push(char *path, size_t *len, size_t cap, const char *seg) {
  size_t before = *len;
  if (*len + 1 < cap)
    path[(*len)++] = '/';
  for (const char *c = seg; *c != '\0' && *len + 2 < cap; c++) {
    if (*c == '~' || *c == '/') {
      path[(*len)++] = '~';
      path[(*len)++] = *c == '~' ? '0' : '1';
    } else {
      path[(*len)++] = *c;
    }
  }
  /* Never end inside a UTF-8 sequence cut short. */
  while (*len > before && (unsigned char)path[*len - 1] >= 0x80) {
    size_t start = *len - 1;
    while (start > before && ((unsigned char)path[start] & 0xC0) == 0x80)
      start--;
    unsigned char lead = (unsigned char)path[start];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (*len - start >= need)
      break;
    *len = start;
  }
  path[*len] = '\0';
  return before;
}

static size_t spush(tally_js_t *js, const char *seg) {
  return path_push(js->spath, &js->slen, sizeof(js->spath), seg);
}

static size_t ipush(tally_js_t *js, const char *seg) {
  return path_push(js->ipath, &js->ilen, sizeof(js->ipath), seg);
}

static size_t ipush_index(tally_js_t *js, size_t i) {
  char num[24];
  snprintf(num, sizeof(num), "%zu", i);
  return ipush(js, num);
}

static void spop(tally_js_t *js, size_t len) {
  js->slen = len;
  js->spath[len] = '\0';
}

static void ipop(tally_js_t *js, size_t len) {
  js->ilen = len;
  js->ipath[len] = '\0';
}

static void miss(tally_js_t *js, const char *keyword, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drops from s, in place, the bytes of any UTF-8 sequence a cut left
 * incomplete (every text here is UTF-8 before it is cut). */
static void keep_utf8(char *s) {
  size_t r = 0, w = 0;
  while (s[r] != '\0') {
    unsigned char c = (unsigned char)s[r];
    size_t need = c < 0x80    ? 1
                  : c >= 0xF0 ? 4
                  : c >= 0xE0 ? 3
                  : c >= 0xC0 ? 2
                              : 0;
    size_t k = 1;
    while (need > 1 && k < need && ((unsigned char)s[r + k] & 0xC0) == 0x80)
      k++;
    if (need == 0 || k < need) { /* a stray or cut sequence */
      r += need == 0 ? 1 : k;
      continue;
    }
    memmove(s + w, s + r, need);
    w += need;
    r += need;
  }
  s[w] = '\0';
}

/* Notes the document's first failure, unless it is a branch's: which
 * keyword of the schema (its path), at which member of the document, and
 * why. */
static void miss(tally_js_t *js, const char *keyword, const char *fmt, ...) {
  if (js->quiet > 0 || js->noted)
    return;
  char why[360];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  snprintf(js->note, sizeof(js->note), "%.300s%s%s at %.300s: %s",
           js->slen > 0 ? js->spath + 1 : "",
           js->slen > 0 && keyword ? "/" : "",
           keyword ? keyword : (js->slen > 0 ? "" : "the schema"),
           js->ilen > 0 ? js->ipath : "the document's root", why);
  keep_utf8(js->note);
  js->noted = true;
}

/* A value of the document as a message quotes it: JSON, cut to about 60
 * bytes at a character's start. */
static const char *shown(const tally_js_t *js, const cJSON *v, char out[80]) {
  if (js->quiet > 0 || js->noted) { /* not to be said: not printed */
    out[0] = '\0';
    return out;
  }
  char *text = cJSON_PrintUnformatted(v);
  size_t n = text != NULL ? strlen(text) : 0;
  if (n > 60) {
    n = 60;
    while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
      n--;
  }
  snprintf(out, 80, "%.*s%s", (int)n, text != NULL ? text : "?",
           text != NULL && strlen(text) > n ? "..." : "");
  cJSON_free(text);
  return out;
}

static const char *kind_of(const cJSON *v) {
  return cJSON_IsObject(v)   ? "an object"
         : cJSON_IsArray(v)  ? "an array"
         : cJSON_IsString(v) ? "a string"
         : cJSON_IsNumber(v) ? "a number"
         : cJSON_IsBool(v)   ? "a boolean"
                             : "null";
}

/* Annotations: what an object's or array's schemas evaluated. */
typedef struct ann_s {
  const cJSON **props; /* members of the instance */
  size_t nprops, capprops;
  bool *items;
  size_t nitems;
} ann_t;

static void ann_free(ann_t *a) {
  free(a->props);
  free(a->items);
  memset(a, 0, sizeof(*a));
}

static bool ann_prop(ann_t *a, const cJSON *m) {
  for (size_t i = 0; i < a->nprops; i++)
    if (a->props[i] == m)
      return true;
  if (a->nprops == a->capprops) {
    size_t c = a->capprops ? a->capprops * 2 : 8;
    const cJSON **l = realloc(a->props, c * sizeof(*l));
    if (l == NULL)
      return false;
    a->props = l;
    a->capprops = c;
  }
  a->props[a->nprops++] = m;
  return true;
}

static bool ann_item(ann_t *a, const cJSON *inst, size_t i) {
  if (a->items == NULL) {
    a->nitems = (size_t)cJSON_GetArraySize(inst);
    if ((a->items = calloc(a->nitems + 1, 1)) == NULL)
      return false;
  }
  if (i < a->nitems)
    a->items[i] = true;
  return true;
}

static bool ann_merge(ann_t *a, const ann_t *b, const cJSON *inst) {
  for (size_t i = 0; i < b->nprops; i++)
    if (!ann_prop(a, b->props[i]))
      return false;
  for (size_t i = 0; b->items != NULL && i < b->nitems; i++)
    if (b->items[i] && !ann_item(a, inst, i))
      return false;
  return true;
}

static bool has_prop(const ann_t *a, const cJSON *m) {
  for (size_t i = 0; i < a->nprops; i++)
    if (a->props[i] == m)
      return true;
  return false;
}

static bool is_integer(const cJSON *v) {
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
         v->valuedouble == floor(v->valuedouble);
}

static bool type_is(const cJSON *inst, const char *t) {
  if (strcmp(t, "object") == 0)
    return cJSON_IsObject(inst);
  if (strcmp(t, "array") == 0)
    return cJSON_IsArray(inst);
  if (strcmp(t, "string") == 0)
    return cJSON_IsString(inst);
  if (strcmp(t, "number") == 0)
    return cJSON_IsNumber(inst);
  if (strcmp(t, "integer") == 0)
    return is_integer(inst);
  if (strcmp(t, "boolean") == 0)
    return cJSON_IsBool(inst);
  if (strcmp(t, "null") == 0)
    return cJSON_IsNull(inst);
  return false;
}

static size_t code_points(const char *s) {
  size_t n = 0, len = strlen(s);
  for (size_t i = 0; i < len; n++) {
    int32_t cp;
    i += tally_go_decode(s + i, len - i, &cp);
  }
  return n;
}

static int validate(tally_js_t *js, const cJSON *schema, const cJSON *inst,
                    ann_t *ann);

static double num(const cJSON *v) {
  return v->valuedouble;
}

/* Member k of an instance, null or not. */
static const cJSON *member(const cJSON *inst, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(inst, k);
}

/* Validates inst against sub with fresh annotations, merged into ann when
 * valid (and ann is not NULL). */
static int apply(tally_js_t *js, const cJSON *sub, const cJSON *inst,
                 ann_t *ann) {
  ann_t a = {0};
  int rc = validate(js, sub, inst, &a);
  if (rc == 1 && ann != NULL && !ann_merge(ann, &a, inst))
    rc = tally__js_schema_fail(js, "out of memory");
  ann_free(&a);
  return rc;
}

/* Validates inst against sub, the subschema at the schema's keyword s1
 * (and under it s2), inst being the document's member ikey or item iidx
 * (neither: the same place); with merge, as apply does. */
static int descend(tally_js_t *js, const char *s1, const char *s2,
                   const char *ikey, long iidx, const cJSON *sub,
                   const cJSON *inst, ann_t *ann, bool merge) {
  size_t sl = spush(js, s1);
  if (s2 != NULL)
    spush(js, s2);
  size_t il = js->ilen;
  if (ikey != NULL)
    ipush(js, ikey);
  else if (iidx >= 0)
    ipush_index(js, (size_t)iidx);
  int rc = merge ? apply(js, sub, inst, ann) : validate(js, sub, inst, ann);
  spop(js, sl);
  ipop(js, il);
  return rc;
}

/* The index of a subschema in its keyword's array, as a path segment. */
static const char *nth(int i, char out[16]) {
  snprintf(out, 16, "%d", i);
  return out;
}

/* The in-place and reference applicators. */
static int applicators(tally_js_t *js, const cJSON *s, const cJSON *inst,
                       ann_t *ann, const char *base) {
  int valid = 1, rc;
  const cJSON *k;
  if ((k = tally__js_kw(s, "$ref")) != NULL && cJSON_IsString(k)) {
    char *full;
    const cJSON *t = tally__js_resolve_ref(js, base, k->valuestring, &full);
    if (t == NULL) {
      rc = tally__js_schema_fail(js,
                                 "resolve json schema: $ref %s: nothing there",
                                 full ? full : k->valuestring);
      free(full);
      return rc;
    }
    free(full);
    if ((rc = descend(js, "$ref", NULL, NULL, -1, t, inst, ann, true)) < 0)
      return rc;
    valid &= rc;
  }
  if ((k = tally__js_kw(s, "$dynamicRef")) != NULL && cJSON_IsString(k)) {
    char *full;
    const cJSON *t = tally__js_resolve_ref(js, base, k->valuestring, &full);
    if (t == NULL) {
      rc = tally__js_schema_fail(js,
                                 "resolve json schema: $dynamicRef %s: nothing "
                                 "there",
                                 full ? full : k->valuestring);
      free(full);
      return rc;
    }
    const char *hash = full ? strchr(full, '#') : NULL;
    const char *name = hash ? hash + 1 : "";
    const entry_t *e = full ? tally__js_find_entry(js, full) : NULL;
    if (name[0] != '\0' && name[0] != '/' && e != NULL && e->dynamic) {
      /* The outermost resource in the dynamic scope with this dynamic
       * anchor wins. */
      for (size_t i = 0; i < js->nscope; i++) {
        size_t n = strlen(js->scope[i]) + strlen(name) + 2;
        char *u = malloc(n);
        if (u == NULL)
          break;
        snprintf(u, n, "%s#%s", js->scope[i], name);
        const entry_t *d = tally__js_find_entry(js, u);
        free(u);
        if (d != NULL && d->dynamic) {
          t = d->node;
          break;
        }
      }
    }
    free(full);
    if ((rc = descend(js, "$dynamicRef", NULL, NULL, -1, t, inst, ann, true)) <
        0)
      return rc;
    valid &= rc;
  }
  char num[16];
  int j = 0;
  if ((k = tally__js_kw(s, "allOf")) != NULL)
    for (const cJSON *x = k->child; x; x = x->next, j++) {
      if ((rc = descend(js, "allOf", nth(j, num), NULL, -1, x, inst, ann,
                        true)) < 0)
        return rc;
      valid &= rc;
    }
  if ((k = tally__js_kw(s, "anyOf")) != NULL) {
    int any = 0;
    js->quiet++;
    j = 0;
    for (const cJSON *x = k->child; x; x = x->next, j++) {
      if ((rc = descend(js, "anyOf", nth(j, num), NULL, -1, x, inst, ann,
                        true)) < 0) {
        js->quiet--;
        return rc;
      }
      any |= rc;
    }
    js->quiet--;
    if (!any)
      miss(js, "anyOf", "matches none of its %d subschemas", j);
    valid &= any;
  }
  if ((k = tally__js_kw(s, "oneOf")) != NULL) {
    int count = 0;
    ann_t keep = {0};
    js->quiet++;
    j = 0;
    for (const cJSON *x = k->child; x; x = x->next, j++) {
      ann_t a = {0};
      if ((rc = descend(js, "oneOf", nth(j, num), NULL, -1, x, inst, &a,
                        false)) < 0) {
        js->quiet--;
        ann_free(&a);
        ann_free(&keep);
        return rc;
      }
      if (rc == 1 && ++count == 1) {
        ann_free(&keep);
        keep = a;
      } else {
        ann_free(&a);
      }
    }
    js->quiet--;
    if (count == 1 && !ann_merge(ann, &keep, inst))
      valid = tally__js_schema_fail(js, "out of memory");
    ann_free(&keep);
    if (count == 0)
      miss(js, "oneOf", "matches none of its %d subschemas", j);
    else if (count > 1)
      miss(js, "oneOf", "matches %d of its %d subschemas, not one", count, j);
    valid &= count == 1;
  }
  if ((k = tally__js_kw(s, "not")) != NULL) {
    js->quiet++;
    rc = descend(js, "not", NULL, NULL, -1, k, inst, NULL, true);
    js->quiet--;
    if (rc < 0)
      return rc;
    if (rc)
      miss(js, "not", "matches the schema it must not");
    valid &= !rc;
  }
  if ((k = tally__js_kw(s, "if")) != NULL) {
    ann_t a = {0};
    js->quiet++;
    rc = descend(js, "if", NULL, NULL, -1, k, inst, &a, false);
    js->quiet--;
    if (rc < 0) {
      ann_free(&a);
      return rc;
    }
    if (rc == 1 && !ann_merge(ann, &a, inst)) {
      ann_free(&a);
      return tally__js_schema_fail(js, "out of memory");
    }
    ann_free(&a);
    const char *then = rc ? "then" : "else";
    const cJSON *branch = tally__js_kw(s, then);
    if (branch != NULL) {
      if ((rc = descend(js, then, NULL, NULL, -1, branch, inst, ann, true)) < 0)
        return rc;
      valid &= rc;
    }
  }
  if ((k = tally__js_kw(s, "dependentSchemas")) != NULL && cJSON_IsObject(inst))
    for (const cJSON *d = k->child; d; d = d->next)
      if (member(inst, d->string) != NULL) {
        if ((rc = descend(js, "dependentSchemas", d->string, NULL, -1, d, inst,
                          ann, true)) < 0)
          return rc;
        valid &= rc;
      }
  return valid;
}

static int object_keywords(tally_js_t *js, const cJSON *s, const cJSON *inst,
                           ann_t *ann) {
  int valid = 1, rc;
  const cJSON *k;
  size_t count = (size_t)cJSON_GetArraySize(inst);
  if ((k = tally__js_kw(s, "maxProperties")) != NULL && count > num(k)) {
    miss(js, "maxProperties", "%zu properties, more than %g", count, num(k));
    valid = 0;
  }
  if ((k = tally__js_kw(s, "minProperties")) != NULL && count < num(k)) {
    miss(js, "minProperties", "%zu properties, fewer than %g", count, num(k));
    valid = 0;
  }
  if ((k = tally__js_kw(s, "required")) != NULL)
    for (const cJSON *r = k->child; r; r = r->next)
      if (cJSON_IsString(r) && member(inst, r->valuestring) == NULL) {
        miss(js, "required", "\"%.200s\" is missing", r->valuestring);
        valid = 0;
      }
  if ((k = tally__js_kw(s, "dependentRequired")) != NULL)
    for (const cJSON *d = k->child; d; d = d->next)
      if (member(inst, d->string) != NULL)
        for (const cJSON *r = d->child; r; r = r->next)
          if (cJSON_IsString(r) && member(inst, r->valuestring) == NULL) {
            miss(js, "dependentRequired",
                 "\"%.200s\" is there, so \"%.200s\" must be too", d->string,
                 r->valuestring);
            valid = 0;
          }
  const cJSON *props = tally__js_kw(s, "properties"),
              *pats = tally__js_kw(s, "patternProperties"),
              *extra = tally__js_kw(s, "additionalProperties");
  for (const cJSON *m = inst->child; m; m = m->next) {
    bool matched = false;
    const cJSON *p = props ? tally__js_kw(props, m->string) : NULL;
    if (p != NULL) {
      matched = true;
      if ((rc = descend(js, "properties", m->string, m->string, -1, p, m, NULL,
                        false)) < 0)
        return rc;
      valid &= rc;
    }
    for (const cJSON *pp = pats ? pats->child : NULL; pp; pp = pp->next) {
      int hit = tally__js_regex_match(pp->string, m->string);
      if (hit < 0)
        return tally__js_schema_fail(
            js,
            "parse json schema: patternProperties %s: not "
            "a regular expression tally reads",
            pp->string);
      if (!hit)
        continue;
      matched = true;
      if ((rc = descend(js, "patternProperties", pp->string, m->string, -1, pp,
                        m, NULL, false)) < 0)
        return rc;
      valid &= rc;
    }
    if (!matched && cJSON_IsFalse(extra)) {
      /* The common case, said as such. */
      size_t il = ipush(js, m->string);
      miss(js, "additionalProperties", "\"%.200s\" is not allowed", m->string);
      ipop(js, il);
      valid = 0;
      matched = true;
    } else if (!matched && extra != NULL) {
      if ((rc = descend(js, "additionalProperties", NULL, m->string, -1, extra,
                        m, NULL, false)) < 0)
        return rc;
      valid &= rc;
      matched = true;
    }
    if (matched && !ann_prop(ann, m))
      return tally__js_schema_fail(js, "out of memory");
  }
  if ((k = tally__js_kw(s, "propertyNames")) != NULL)
    for (const cJSON *m = inst->child; m; m = m->next) {
      cJSON *name = cJSON_CreateString(m->string);
      if (name == NULL)
        return tally__js_schema_fail(js, "out of memory");
      rc = descend(js, "propertyNames", NULL, m->string, -1, k, name, NULL,
                   false);
      cJSON_Delete(name);
      if (rc < 0)
        return rc;
      valid &= rc;
    }
  /* draft-07's dependencies, read as dependentRequired/Schemas */
  if ((k = tally__js_kw(s, "dependencies")) != NULL)
    for (const cJSON *d = k->child; d; d = d->next) {
      if (member(inst, d->string) == NULL)
        continue;
      if (cJSON_IsArray(d)) {
        for (const cJSON *r = d->child; r; r = r->next)
          if (cJSON_IsString(r) && member(inst, r->valuestring) == NULL) {
            miss(js, "dependencies",
                 "\"%.200s\" is there, so \"%.200s\" must be too", d->string,
                 r->valuestring);
            valid = 0;
          }
      } else {
        if ((rc = descend(js, "dependencies", d->string, NULL, -1, d, inst, ann,
                          true)) < 0)
          return rc;
        valid &= rc;
      }
    }
  return valid;
}

static int array_keywords(tally_js_t *js, const cJSON *s, const cJSON *inst,
                          ann_t *ann) {
  int valid = 1, rc;
  const cJSON *k;
  size_t n = (size_t)cJSON_GetArraySize(inst);
  if ((k = tally__js_kw(s, "maxItems")) != NULL && n > num(k)) {
    miss(js, "maxItems", "%zu items, more than %g", n, num(k));
    valid = 0;
  }
  if ((k = tally__js_kw(s, "minItems")) != NULL && n < num(k)) {
    miss(js, "minItems", "%zu items, fewer than %g", n, num(k));
    valid = 0;
  }
  bool unique = (k = tally__js_kw(s, "uniqueItems")) != NULL && cJSON_IsTrue(k);
  size_t ia = 0;
  for (const cJSON *a = unique ? inst->child : NULL; a && unique;
       a = a->next, ia++) {
    size_t ib = ia + 1;
    for (const cJSON *b = a->next; b && unique; b = b->next, ib++)
      if (tally_go_json_equal(a, b)) {
        miss(js, "uniqueItems", "items %zu and %zu are equal", ia, ib);
        valid = 0;
        unique = false;
      }
  }
  size_t i = 0;
  const cJSON *x = inst->child;
  const cJSON *prefix = tally__js_kw(s, "prefixItems"),
              *items = tally__js_kw(s, "items");
  const char *pname = "prefixItems", *iname = "items";
  if (cJSON_IsArray(items)) { /* draft-07 array form */
    prefix = items;
    items = tally__js_kw(s, "additionalItems");
    pname = "items";
    iname = "additionalItems";
  }
  char num_[16];
  for (const cJSON *p = prefix ? prefix->child : NULL; p && x;
       p = p->next, x = x->next, i++) {
    if ((rc = descend(js, pname, nth((int)i, num_), NULL, (long)i, p, x, NULL,
                      false)) < 0)
      return rc;
    valid &= rc;
    if (!ann_item(ann, inst, i))
      return tally__js_schema_fail(js, "out of memory");
  }
  if (items != NULL)
    for (; x; x = x->next, i++) {
      if ((rc = descend(js, iname, NULL, NULL, (long)i, items, x, NULL,
                        false)) < 0)
        return rc;
      valid &= rc;
      if (!ann_item(ann, inst, i))
        return tally__js_schema_fail(js, "out of memory");
    }
  if ((k = tally__js_kw(s, "contains")) != NULL) {
    size_t matches = 0;
    i = 0;
    js->quiet++;
    for (x = inst->child; x; x = x->next, i++) {
      if ((rc = descend(js, "contains", NULL, NULL, (long)i, k, x, NULL,
                        false)) < 0) {
        js->quiet--;
        return rc;
      }
      if (rc) {
        matches++;
        if (!ann_item(ann, inst, i))
          return tally__js_schema_fail(js, "out of memory");
      }
    }
    js->quiet--;
    const cJSON *min = tally__js_kw(s, "minContains"),
                *max = tally__js_kw(s, "maxContains");
    double lo = cJSON_IsNumber(min) ? num(min) : 1;
    if (matches < lo) {
      miss(js, "contains", "%zu items match it, fewer than %g", matches, lo);
      valid = 0;
    }
    if (cJSON_IsNumber(max) && matches > num(max)) {
      miss(js, "maxContains", "%zu items match contains, more than %g", matches,
           num(max));
      valid = 0;
    }
  }
  return valid;
}

static int scalar_keywords(tally_js_t *js, const cJSON *s, const cJSON *inst) {
  int valid = 1;
  const cJSON *k;
  if (cJSON_IsNumber(inst)) {
    double v = inst->valuedouble;
    if ((k = tally__js_kw(s, "maximum")) != NULL && cJSON_IsNumber(k) &&
        v > num(k)) {
      miss(js, "maximum", "%.17g is more than %.17g", v, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "minimum")) != NULL && cJSON_IsNumber(k) &&
        v < num(k)) {
      miss(js, "minimum", "%.17g is less than %.17g", v, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "exclusiveMaximum")) != NULL &&
        cJSON_IsNumber(k) && v >= num(k)) {
      miss(js, "exclusiveMaximum", "%.17g is not less than %.17g", v, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "exclusiveMinimum")) != NULL &&
        cJSON_IsNumber(k) && v <= num(k)) {
      miss(js, "exclusiveMinimum", "%.17g is not more than %.17g", v, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "multipleOf")) != NULL && cJSON_IsNumber(k) &&
        num(k) > 0) {
      double q = v / num(k);
      /* A quotient past the doubles' range: the remainder decides. */
      if (!isfinite(q) ? fmod(v, num(k)) != 0
                       : fabs(q - nearbyint(q)) > 1e-9 * fmax(1, fabs(q))) {
        miss(js, "multipleOf", "%.17g is not a multiple of %.17g", v, num(k));
        valid = 0;
      }
    }
  }
  if (cJSON_IsString(inst)) {
    size_t n = code_points(inst->valuestring);
    char v[80];
    if ((k = tally__js_kw(s, "maxLength")) != NULL && n > num(k)) {
      miss(js, "maxLength", "%s has %zu characters, more than %g",
           shown(js, inst, v), n, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "minLength")) != NULL && n < num(k)) {
      miss(js, "minLength", "%s has %zu characters, fewer than %g",
           shown(js, inst, v), n, num(k));
      valid = 0;
    }
    if ((k = tally__js_kw(s, "pattern")) != NULL && cJSON_IsString(k)) {
      int m = tally__js_regex_match(k->valuestring, inst->valuestring);
      if (m < 0)
        return -1;
      if (!m)
        miss(js, "pattern", "%s does not match %.200s", shown(js, inst, v),
             k->valuestring);
      valid &= m;
    }
  }
  return valid;
}

static int validate(tally_js_t *js, const cJSON *s, const cJSON *inst,
                    ann_t *ann) {
  if (cJSON_IsBool(s)) {
    if (cJSON_IsFalse(s))
      miss(js, NULL, "not allowed (the schema here is false)");
    return cJSON_IsTrue(s);
  }
  if (!cJSON_IsObject(s))
    return tally__js_schema_fail(
        js, "parse json schema: a schema must be an object or "
            "a boolean");
  if (js->depth > MAX_DEPTH)
    return tally__js_schema_fail(
        js,
        "resolve json schema: references nest deeper than "
        "%d",
        MAX_DEPTH);
  ann_t local = {0};
  if (ann == NULL)
    ann = &local;
  const char *base = tally__js_base_of(js, s);
  if (base == NULL)
    base = ROOT_URI;
  /* Entering a new resource extends the dynamic scope. */
  bool pushed = false;
  if (js->nscope == 0 || strcmp(js->scope[js->nscope - 1], base) != 0) {
    js->scope[js->nscope++] = base;
    pushed = true;
  }
  js->depth++;
  int valid = 1, rc;
  const cJSON *k;
  if ((k = tally__js_kw(s, "type")) != NULL) {
    int ok = 0;
    if (cJSON_IsString(k))
      ok = type_is(inst, k->valuestring);
    for (const cJSON *t = cJSON_IsArray(k) ? k->child : NULL; t; t = t->next)
      ok |= cJSON_IsString(t) && type_is(inst, t->valuestring);
    if (!ok) {
      char v[80], want[80];
      miss(js, "type", "%s is %s, not %s", shown(js, inst, v), kind_of(inst),
           shown(js, k, want));
    }
    valid &= ok;
  }
  if ((k = tally__js_kw(s, "enum")) != NULL) {
    int ok = 0;
    for (const cJSON *e = k->child; e && !ok; e = e->next)
      ok = tally_go_json_equal(e, inst);
    if (!ok) {
      char v[80];
      miss(js, "enum", "%s is none of its values", shown(js, inst, v));
    }
    valid &= ok;
  }
  if ((k = tally__js_kw(s, "const")) != NULL) {
    int ok = tally_go_json_equal(k, inst);
    if (!ok) {
      char v[80], want[80];
      miss(js, "const", "%s is not %s", shown(js, inst, v), shown(js, k, want));
    }
    valid &= ok;
  }
  rc = scalar_keywords(js, s, inst);
  if (rc < 0) {
    rc = tally__js_schema_fail(js,
                               "parse json schema: pattern %s: not a regular "
                               "expression tally reads",
                               tally__js_kw(s, "pattern")->valuestring);
    goto done;
  }
  valid &= rc;
  if ((rc = applicators(js, s, inst, ann, base)) < 0)
    goto done;
  valid &= rc;
  if (cJSON_IsObject(inst)) {
    if ((rc = object_keywords(js, s, inst, ann)) < 0)
      goto done;
    valid &= rc;
    if ((k = tally__js_kw(s, "unevaluatedProperties")) != NULL)
      for (const cJSON *m = inst->child; m; m = m->next) {
        if (has_prop(ann, m))
          continue;
        if ((rc = descend(js, "unevaluatedProperties", NULL, m->string, -1, k,
                          m, NULL, false)) < 0)
          goto done;
        valid &= rc;
        if (!ann_prop(ann, m)) {
          rc = tally__js_schema_fail(js, "out of memory");
          goto done;
        }
      }
  }
  if (cJSON_IsArray(inst)) {
    if ((rc = array_keywords(js, s, inst, ann)) < 0)
      goto done;
    valid &= rc;
    if ((k = tally__js_kw(s, "unevaluatedItems")) != NULL) {
      size_t i = 0;
      for (const cJSON *x = inst->child; x; x = x->next, i++) {
        if (ann->items != NULL && i < ann->nitems && ann->items[i])
          continue;
        if ((rc = descend(js, "unevaluatedItems", NULL, NULL, (long)i, k, x,
                          NULL, false)) < 0)
          goto done;
        valid &= rc;
        if (!ann_item(ann, inst, i)) {
          rc = tally__js_schema_fail(js, "out of memory");
          goto done;
        }
      }
    }
  }
  rc = valid;
done:
  js->depth--;
  if (pushed)
    js->nscope--;
  ann_free(&local);
  return rc;
}

int tally_js_validate(tally_js_t *js, const cJSON *instance, char *err,
                      size_t errlen) {
  js->err = err;
  js->errlen = errlen;
  js->schema_error = false;
  js->nscope = 0;
  js->depth = 0;
  js->slen = js->ilen = 0;
  js->spath[0] = js->ipath[0] = '\0';
  js->quiet = 0;
  js->noted = false;
  int rc = validate(js, js->root, instance, NULL);
  if (rc == 0)
    snprintf(err, errlen, "%s",
             js->noted ? js->note : "the value does not match the schema");
  return rc;
}
