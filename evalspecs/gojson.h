/* Text as the reference writes it (Go's fmt and encoding/json), where that
 * text reaches a result: a number in a reason ("%v", "%g"), a JSON value
 * turned into the string a validator compares (keys sorted, Go's number
 * forms and escapes). */
#ifndef TALLY_ES_GOJSON_H
#define TALLY_ES_GOJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/jsonw.h"

/* Go's %v (and %g) of a float64: the shortest digits, with an exponent
 * ("1e+06", "1.5e-07") when it is below -4 or at least 6. out holds 40
 * bytes. */
void tally_go_fmt_v(double v, char out[40]);

/* A float64 as encoding/json writes it ("1e+21", "1e-7", "0.5"). */
void tally_go_json_float(tally_buf_t *b, double v);

/* A string as encoding/json escapes it (<, > and & as \u003c ...). */
void tally_go_json_string(tally_buf_t *b, const char *s, size_t len);

/* v as json.Marshal writes the value json.Unmarshal made of it: objects
 * with their keys sorted (the last of a repeated key), compact. */
void tally_go_marshal(tally_buf_t *b, const cJSON *v);

/* extractLooseString: a string; an object's "value", "content", "text"
 * or "answer" (the first that is loose); a one-element array's element.
 * Returns the string (inside v), or NULL. */
const char *tally_go_loose_string(const cJSON *v);

/* stringifyEvidenceValue of v into b: a loose string as it is, a boolean
 * or null as its word, a number as %v, anything else marshalled. */
void tally_go_stringify(tally_buf_t *b, const cJSON *v);

/* The member key of obj as a Go map holds it (the last of a repeated
 * key), or NULL (also when obj is not an object). */
const cJSON *tally_go_member(const cJSON *obj, const char *key);

/* JSON equality as Go compares decoded values: numbers by value (1 and
 * 1.0, 0 and -0 equal), strings byte for byte, arrays in order, objects
 * by their members (as maps); types must agree otherwise. */
bool tally_go_json_equal(const cJSON *a, const cJSON *b);

/* Reads one JSON value from s as Go's json.Decoder does, then checks that
 * no other follows (Decoder.More). Returns true with the value's span
 * [*start, *end), or false with Go's error text in err ("EOF",
 * "unexpected EOF", "invalid character 'x' looking for beginning of
 * value", "multiple JSON values are not allowed", ...). */
bool tally_go_decode_one(const char *s, size_t *start, size_t *end, char *err,
                         size_t errlen);

/* Go's name for a JSON value's kind in its unmarshal errors ("string",
 * "number", "bool", "array", "object"). */
const char *tally_go_kind(const cJSON *v);

/* Checks s as json.Unmarshal does before decoding: one value and only
 * white space after it. Returns true, or false with Go's error text
 * ("unexpected end of JSON input", "invalid character 'x' after top-level
 * value", ...). */
bool tally_go_unmarshal_check(const char *s, char *err, size_t errlen);

/* The span of the raw text of the value at path in the JSON text s (len
 * bytes, valid JSON): path names object keys, or "#N" for element N of
 * an array, NULL-terminated. The first of a repeated key counts. */
bool tally_go_raw_span(const char *s, size_t len, const char *const *path,
                       size_t *start, size_t *n);

#endif
