/* What cJSON does not say about a decoded document: the byte length of a
 * string that holds NUL bytes, the text a member was written as, and
 * whether a value may serve as an id. */
#ifndef TALLY_JSON_H
#define TALLY_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The byte length of a string node's value, NUL bytes ("\u0000") included.
 * cJSON keeps no length, so tally installs allocation hooks (once, before
 * main) that fill each new block with 0xff: a parsed string ends at the
 * last NUL before that fill. Exact for strings cJSON parsed or created;
 * strlen for anything else. */
size_t tally_json_strlen(const cJSON *s);

/* Marks every string node of tree, which was parsed inside an arena's
 * window (config/arena.h), with its length, so that tally_json_strlen
 * never asks malloc about an arena's memory. The decoder calls it on each
 * job it parses; a tree deeper than cJSON's nesting limit is never one. */
void tally_json_mark_arena(cJSON *tree);

/* cJSON_ParseWithLength of text (len bytes), marked as above when this
 * thread is inside an arena's window, so that it may be parsed into an
 * arena by any caller that opens one; NULL when not JSON. */
cJSON *tally_json_parse(const char *text, size_t len);

/* Finds the text of member key of the JSON object text (len bytes), which
 * must already have parsed: each key and value is measured by cJSON. Sets
 * *at and *n to the first such member's value and returns true, or returns
 * false. */
bool tally_json_member_text(const char *text, size_t len, const char *key,
                            const char **at, size_t *n);

/* Whether text (len bytes) nests arrays and objects deeper than cJSON
 * parses (CJSON_NESTING_LIMIT): the cause to name when a parse fails. */
bool tally_json_too_deep(const char *text, size_t len);

/* Finds the first number of root (depth first) that cJSON read as an
 * infinity: its text was beyond a double's range (1e309). Returns true
 * with its JSON path in path, or false. */
struct tally_jpath_s;
bool tally_json_find_overflow(const cJSON *root, struct tally_jpath_s *path);

/* Finds the first object under root (root included, depth first) that
 * holds a key twice. Returns true with the path of the second one in
 * path (which starts at root's own path), or false, or false with *oom
 * set when memory ran out. */
bool tally_json_find_duplicate(const cJSON *root, struct tally_jpath_s *path,
                               bool *oom);

/* What in text (len bytes, which cJSON parsed) is not JSON as RFC 8259
 * has it, though cJSON reads it: a number written otherwise than
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (such as 01, 1. or 1.e5),
 * or bytes that are not UTF-8. One pass over the text. Returns NULL, or
 * a message with *at set to the offending byte; *utf8 says whether it is
 * the encoding (to be named by its path: tally_json_find_bad_utf8). */
const char *tally_json_text_error(const char *text, size_t len, size_t *at,
                                  bool *utf8);

/* Finds the first key or string of root (depth first) that is not valid
 * UTF-8. Returns true with its path in path and *key set when it is a
 * member's key (the path then ends with the member's place, [i], since
 * the key cannot be written), or false. */
bool tally_json_find_bad_utf8(const cJSON *root, struct tally_jpath_s *path,
                              bool *key);

/* The message for such a number. */
#define TALLY_JSON_OVERFLOW                                                    \
  "number out of range (a double holds at most about 1.8e308)"

/* Ids (submission, participant, contest, task) are at most this long. */
#define TALLY_ID_MAX 1024

/* Checks that v may name a submission, participant, contest or task: a
 * string of 1 to TALLY_ID_MAX bytes of valid UTF-8 with no control
 * character (NUL, U+0001-U+001F, U+007F-U+009F), or, when numbers is true,
 * an integer below 2^53 in magnitude written in plain digits (raw, its
 * text in the job). Returns NULL, or what is wrong (in buf, buflen bytes,
 * or a static text). */
const char *tally_json_id_error(const cJSON *v, bool numbers, const char *raw,
                                size_t raw_len, char *buf, size_t buflen);

#endif
