/* Unicode text rules tally's scorers share with Python's str, which
 * benchmark harnesses use (docs/comparators.md): white space, and
 * decoding any bytes with U+FFFD for an invalid byte. utf8proc gives the
 * character properties. */
#ifndef TALLY_UTEXT_H
#define TALLY_UTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Python's str.isspace for one code point: bidirectional class WS, B or
 * S, or category Zs. */
bool tally_utext_space(int32_t c);

/* The code point at s[*i] (n bytes in all), moving *i past it; an
 * invalid byte is U+FFFD and moves one byte. */
int32_t tally_utext_next(const char *s, size_t n, size_t *i);

/* Where s (n bytes) stops being valid UTF-8 (utf8proc's rules: no
 * surrogates, no overlong forms, nothing above U+10FFFF): n when all of
 * it is valid, else the offset of the first byte that is not. */
size_t tally_utext_invalid_at(const char *s, size_t n);

/* The value of the hex digit c (0-9, a-f, A-F), or -1. */
static inline int tally_hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Whether s is empty or only white space (Python's not s.strip()). */
bool tally_utext_blank(const char *s, size_t n);

#endif
