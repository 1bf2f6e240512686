/* JSON Schema 2020-12 validation for the json_schema validator
 * (docs/evaluation-specs.md). No C library for it is packaged in Debian,
 * so tally has its own: every keyword of the core, applicator,
 * unevaluated and validation vocabularies, $ref to JSON pointers, $id
 * bases (urn: ids too), $anchor, $dynamicRef/$dynamicAnchor, and the
 * 2020-12 meta-schemas shipped inside tally (never fetched). format and
 * the content keywords are annotations, not checked. A draft-07 $schema
 * is read as 2020-12; other drafts are refused. */
#ifndef TALLY_ES_JSONSCHEMA_H
#define TALLY_ES_JSONSCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct tally_js_s tally_js_t;

/* Prepares schema (which must outlive the result) for validation:
 * registers its resources and anchors. Returns NULL with err set for a
 * schema tally refuses (another draft, a reference that resolves to
 * nothing, a bad regular expression) or when out of memory. */
tally_js_t *tally_js_compile(const cJSON *schema, char *err, size_t errlen);
void tally_js_free(tally_js_t *js);

/* Checks root's keyword values as the reference's typed decoding does
 * (AgentClash decodes a schema into google/jsonschema-go's Schema): each
 * keyword it knows must hold its JSON type (a string, a bool, a number, an
 * int32 integer, which may be written 2.0, a schema, an array or map of
 * them...), null standing for an absent keyword except as "type" and as a
 * schema inside an array or a map. Also what resolving refuses first:
 * both $defs and definitions, $vocabulary outside the 2020-12
 * meta-schema. Returns 0, or -1 with err saying what, and *resolve set
 * when the reference would say so when resolving rather than decoding.
 * A root null is not refused: the reference reads it as false. */
int tally_js_check_types(const cJSON *root, char *err, size_t errlen,
                         bool *resolve);

/* Validates instance: 1 valid, 0 invalid (err says where first), -1 an
 * error in the schema met while validating (err says which). */
int tally_js_validate(tally_js_t *js, const cJSON *instance, char *err,
                      size_t errlen);

#endif
