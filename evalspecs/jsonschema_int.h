/* Shared by jsonschema.c (the registry), jsonschema_validate.c,
 * jsonschema_uri.c and jsonschema_regex.c. */
#ifndef TALLY_ES_JSONSCHEMA_INT_H
#define TALLY_ES_JSONSCHEMA_INT_H

#include "evalspecs/jsonschema.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cjson/cJSON.h>

#define ROOT_URI "tally:///schema.json"
#define MAX_DEPTH 200

/* The registry: resources by URI (no fragment), anchors by URI#name, and
 * the base URI of every schema object met. */

typedef struct entry_s {
  char *uri; /* without fragment, or with #anchor */
  const cJSON *node;
  bool dynamic; /* a $dynamicAnchor */
} entry_t;

typedef struct base_s {
  const cJSON *node;
  const char *uri; /* one of the entries' resource uris */
} base_t;

struct tally_js_s {
  const cJSON *root;
  cJSON **metas; /* the meta-schemas, parsed */
  size_t nmetas;
  entry_t *entries;
  size_t n, cap;
  base_t *bases;
  size_t nbases, capbases;
  char **uris; /* owned base strings */
  size_t nuris, capuris;
  /* validation state */
  const char *scope[MAX_DEPTH + 8];
  size_t nscope;
  int depth;
  char *err;
  size_t errlen;
  bool schema_error;
  /* Where validation is: the schema's keywords (spath) and the
   * document's members and items (ipath) that led here, as JSON
   * pointers; quiet > 0 inside a subschema whose failure is not the
   * document's (a branch of anyOf, oneOf, not, if, contains); and the
   * first failure that is, once noted. */
  char spath[1024], ipath[1024];
  size_t slen, ilen;
  int quiet;
  bool noted;
  char note[1024];
};

/* jsonschema.c: a schema error (not the document's), said once in the
 * validation's err; returns -1. */
int tally__js_schema_fail(tally_js_t *js, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The registered resource or anchor at uri, or NULL. */
const entry_t *tally__js_find_entry(const tally_js_t *js, const char *uri);
/* The base URI of a schema object, or NULL when it has none registered. */
const char *tally__js_base_of(const tally_js_t *js, const cJSON *node);
/* The node a reference names, from the base of the schema that holds it;
 * *full receives the resolved URI (owned by the caller, may be NULL). */
const cJSON *tally__js_resolve_ref(tally_js_t *js, const char *base,
                                   const char *ref, char **full);

/* Keyword k of schema s, or NULL. A keyword whose value is null is absent,
 * as the reference's typed decoding reads it (tally_js_check_types has
 * refused those where null is an error), except const, where null is the
 * value to equal. */
static inline const cJSON *tally__js_kw(const cJSON *s, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, k);
  return cJSON_IsNull(v) && strcmp(k, "const") != 0 ? NULL : v;
}

/* jsonschema_validate.c holds tally_js_validate. */

/* The reference ref resolved against the absolute URI base (RFC 3986,
 * section 5.2.2), as a new string; NULL when out of memory. */
char *tally__js_uri_resolve(const char *base, const char *ref);

/* Whether s matches the ECMA-262 pattern p (PCRE2, Unicode); -1 for a
 * pattern PCRE2 refuses. */
int tally__js_regex_match(const char *p, const char *s);

#endif
