/* String helpers with the reference's (Go's) meaning, on UTF-8 text: what
 * counts as white space (unicode.IsSpace), trimming it, and splitting
 * into fields. Invalid UTF-8 bytes are never white space. */
#ifndef TALLY_ES_GOSTR_H
#define TALLY_ES_GOSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/jsonw.h"

/* unicode.IsSpace: U+0009..U+000D, U+0020, U+0085, U+00A0 and the other
 * White_Space code points. */
bool tally_go_is_space(int32_t cp);

/* Decodes one code point of s (n bytes left) into *cp; returns its length
 * (1 for an invalid byte, with *cp = -1). */
size_t tally_go_decode(const char *s, size_t n, int32_t *cp);

/* The span of s (len bytes) without leading and trailing white space:
 * *start and the returned length. */
size_t tally_go_trim(const char *s, size_t len, size_t *start);

/* Whether s, trimmed, is empty. */
bool tally_go_blank(const char *s);

/* A malloc'ed copy of s trimmed, or NULL when out of memory. */
char *tally_go_trimmed(const char *s);

/* unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the
 * ASCII space. */
bool tally_go_printable(int32_t cp);

/* Go's %q of s (strconv.Quote) appended to b. */
void tally_go_quote(tally_buf_t *b, const char *s);

/* The same as a new string; NULL when out of memory. */
char *tally_go_quoted(const char *s);

#endif
