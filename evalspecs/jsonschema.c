/* JSON Schema 2020-12, compiling: see jsonschema.h. The schema is walked
 * once to register its resources ($id), anchors and each subschema's base
 * URI, which references are resolved against; validation
 * (jsonschema_validate.c) then interprets the schema's JSON directly. */
#include "evalspecs/jsonschema.h"
#include "evalspecs/jsonschema_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char *const tally_js_meta_schemas[];

static const char *keep_uri(tally_js_t *js, char *uri) {
  if (uri == NULL)
    return NULL;
  if (js->nuris == js->capuris) {
    size_t c = js->capuris ? js->capuris * 2 : 16;
    char **l = realloc(js->uris, c * sizeof(*l));
    if (l == NULL) {
      free(uri);
      return NULL;
    }
    js->uris = l;
    js->capuris = c;
  }
  js->uris[js->nuris++] = uri;
  return uri;
}

static bool add_entry(tally_js_t *js, const char *uri, const cJSON *node,
                      bool dynamic) {
  if (js->n == js->cap) {
    size_t c = js->cap ? js->cap * 2 : 32;
    entry_t *l = realloc(js->entries, c * sizeof(*l));
    if (l == NULL)
      return false;
    js->entries = l;
    js->cap = c;
  }
  char *u = strdup(uri);
  if (u == NULL)
    return false;
  js->entries[js->n++] = (entry_t){u, node, dynamic};
  return true;
}

const entry_t *tally__js_find_entry(const tally_js_t *js, const char *uri) {
  for (size_t i = 0; i < js->n; i++)
    if (strcmp(js->entries[i].uri, uri) == 0)
      return &js->entries[i];
  return NULL;
}

static bool add_base(tally_js_t *js, const cJSON *node, const char *uri) {
  if (js->nbases == js->capbases) {
    size_t c = js->capbases ? js->capbases * 2 : 64;
    base_t *l = realloc(js->bases, c * sizeof(*l));
    if (l == NULL)
      return false;
    js->bases = l;
    js->capbases = c;
  }
  js->bases[js->nbases++] = (base_t){node, uri};
  return true;
}

const char *tally__js_base_of(const tally_js_t *js, const cJSON *node) {
  for (size_t i = 0; i < js->nbases; i++)
    if (js->bases[i].node == node)
      return js->bases[i].uri;
  return NULL;
}

/* The keywords whose values are schemas, lists of them or maps of them. */
static const char *const one_schema[] = {"additionalProperties",
                                         "propertyNames",
                                         "items",
                                         "contains",
                                         "if",
                                         "then",
                                         "else",
                                         "not",
                                         "unevaluatedItems",
                                         "unevaluatedProperties",
                                         "contentSchema",
                                         "additionalItems",
                                         NULL};
static const char *const schema_lists[] = {"allOf", "anyOf", "oneOf",
                                           "prefixItems", NULL};
static const char *const schema_maps[] = {"$defs",
                                          "definitions",
                                          "properties",
                                          "patternProperties",
                                          "dependentSchemas",
                                          NULL};

static bool listed(const char *const *l, const char *s) {
  for (size_t i = 0; l[i] != NULL; i++)
    if (strcmp(l[i], s) == 0)
      return true;
  return false;
}

/* Strips a trailing empty fragment ("#"); true when uri had a non-empty
 * one. */
static bool strip_fragment(char *uri) {
  char *h = strchr(uri, '#');
  if (h == NULL)
    return false;
  bool nonempty = h[1] != '\0';
  *h = '\0';
  return nonempty;
}

static bool walk(tally_js_t *js, const cJSON *node, const char *base) {
  if (!cJSON_IsObject(node))
    return true;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(node, "$id");
  if (cJSON_IsString(id)) {
    char *uri = tally__js_uri_resolve(base, id->valuestring);
    if (uri == NULL)
      return false;
    strip_fragment(uri);
    if ((base = keep_uri(js, uri)) == NULL || !add_entry(js, base, node, false))
      return false;
  }
  if (!add_base(js, node, base))
    return false;
  static const char *const anchors[] = {"$anchor", "$dynamicAnchor"};
  for (int k = 0; k < 2; k++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(node, anchors[k]);
    if (!cJSON_IsString(a))
      continue;
    size_t n = strlen(base) + strlen(a->valuestring) + 2;
    char *u = malloc(n);
    if (u == NULL)
      return false;
    snprintf(u, n, "%s#%s", base, a->valuestring);
    bool ok = add_entry(js, u, node, k == 1);
    free(u);
    if (!ok)
      return false;
  }
  for (const cJSON *m = node->child; m != NULL; m = m->next) {
    if (listed(one_schema, m->string)) {
      if (cJSON_IsArray(m)) { /* draft-07 items */
        for (const cJSON *x = m->child; x; x = x->next)
          if (!walk(js, x, base))
            return false;
      } else if (!walk(js, m, base)) {
        return false;
      }
    } else if (listed(schema_lists, m->string) && cJSON_IsArray(m)) {
      for (const cJSON *x = m->child; x; x = x->next)
        if (!walk(js, x, base))
          return false;
    } else if ((listed(schema_maps, m->string) ||
                strcmp(m->string, "dependencies") == 0) &&
               cJSON_IsObject(m)) {
      for (const cJSON *x = m->child; x; x = x->next)
        if (!walk(js, x, base))
          return false;
    }
  }
  return true;
}

static bool add_document(tally_js_t *js, const cJSON *doc, const char *base) {
  const char *b = keep_uri(js, strdup(base));
  if (b == NULL)
    return false;
  /* The document is a resource at base unless its $id says otherwise. */
  if (!cJSON_IsObject(doc) ||
      !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "$id"))) {
    if (!add_entry(js, b, doc, false))
      return false;
  }
  return walk(js, doc, b);
}

int tally__js_schema_fail(tally_js_t *js, const char *fmt, ...) {
  if (!js->schema_error) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(js->err, js->errlen, fmt, ap);
    va_end(ap);
  }
  js->schema_error = true;
  return -1;
}

/* Follows the JSON pointer p (a URI fragment, percent-encoded) from node. */
static const cJSON *pointer(const cJSON *node, const char *p) {
  char tok[512];
  while (*p == '/' && node != NULL) {
    p++;
    size_t k = 0;
    while (*p && *p != '/' && k + 1 < sizeof(tok)) {
      char c = *p++;
      if (c == '%' && p[0] && p[1]) {
        char hex[3] = {p[0], p[1], 0};
        c = (char)strtol(hex, NULL, 16);
        p += 2;
      }
      tok[k++] = c;
    }
    tok[k] = '\0';
    /* ~1 is /, ~0 is ~ */
    size_t w = 0;
    for (size_t r = 0; r < k; r++) {
      if (tok[r] == '~' && tok[r + 1] == '1') {
        tok[w++] = '/';
        r++;
      } else if (tok[r] == '~' && tok[r + 1] == '0') {
        tok[w++] = '~';
        r++;
      } else {
        tok[w++] = tok[r];
      }
    }
    tok[w] = '\0';
    if (cJSON_IsArray(node)) {
      char *end;
      long i = strtol(tok, &end, 10);
      node = *end == '\0' && tok[0] != '\0' ? cJSON_GetArrayItem(node, (int)i)
                                            : NULL;
    } else if (cJSON_IsObject(node)) {
      node = cJSON_GetObjectItemCaseSensitive(node, tok);
    } else {
      node = NULL;
    }
  }
  return node;
}

/* The node a reference names, from the base of the schema that holds it;
 * *dynamic_name receives the fragment when it names an anchor. */
const cJSON *tally__js_resolve_ref(tally_js_t *js, const char *base,
                                   const char *ref, char **full) {
  char *uri = tally__js_uri_resolve(base, ref);
  *full = uri;
  if (uri == NULL)
    return NULL;
  char *hash = strchr(uri, '#');
  const char *frag = hash ? hash + 1 : "";
  if (hash != NULL && frag[0] != '\0' && frag[0] != '/') {
    const entry_t *a = tally__js_find_entry(js, uri);
    return a ? a->node : NULL;
  }
  if (hash != NULL)
    *hash = '\0';
  const entry_t *res = tally__js_find_entry(js, uri);
  if (hash != NULL)
    *hash = '#';
  if (res == NULL)
    return NULL;
  return frag[0] == '/' ? pointer(res->node, frag) : res->node;
}

tally_js_t *tally_js_compile(const cJSON *schema, char *err, size_t errlen) {
  static const char draft7[] = "http://json-schema.org/draft-07/schema#";
  static const char draft7s[] = "https://json-schema.org/draft-07/schema#";
  static const char d2020[] = "https://json-schema.org/draft/2020-12/schema";
  const cJSON *sch =
      cJSON_IsObject(schema) ? tally__js_kw(schema, "$schema") : NULL;
  /* As the reference: no $schema, "" or 2020-12 is 2020-12; draft-07 is
   * read as 2020-12; another draft is refused. */
  if (sch != NULL &&
      (!cJSON_IsString(sch) ||
       (sch->valuestring[0] != '\0' && strcmp(sch->valuestring, draft7) != 0 &&
        strcmp(sch->valuestring, draft7s) != 0 &&
        strcmp(sch->valuestring, d2020) != 0))) {
    snprintf(err, errlen, "unsupported JSON schema draft \"%.300s\"",
             cJSON_IsString(sch) ? sch->valuestring : "(not a string)");
    return NULL;
  }
  if (!cJSON_IsObject(schema) && !cJSON_IsBool(schema)) {
    snprintf(err, errlen, "a schema must be an object or a boolean");
    return NULL;
  }
  tally_js_t *js = calloc(1, sizeof(*js));
  if (js == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  js->root = schema;
  size_t n = 0;
  while (tally_js_meta_schemas[n] != NULL)
    n++;
  js->metas = calloc(n + 1, sizeof(*js->metas));
  bool ok = js->metas != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    js->metas[i] = cJSON_Parse(tally_js_meta_schemas[i]);
    ok = js->metas[i] != NULL;
    js->nmetas = i + 1;
    ok = ok && add_document(js, js->metas[i], ROOT_URI);
  }
  if (!ok || !add_document(js, schema, ROOT_URI)) {
    snprintf(err, errlen, "out of memory");
    tally_js_free(js);
    return NULL;
  }
  return js;
}

void tally_js_free(tally_js_t *js) {
  if (js == NULL)
    return;
  for (size_t i = 0; i < js->nmetas; i++)
    cJSON_Delete(js->metas[i]);
  free(js->metas);
  for (size_t i = 0; i < js->n; i++)
    free(js->entries[i].uri);
  free(js->entries);
  free(js->bases);
  for (size_t i = 0; i < js->nuris; i++)
    free(js->uris[i]);
  free(js->uris);
  free(js);
}
