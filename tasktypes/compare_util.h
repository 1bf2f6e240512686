/* Helpers the built-in comparators share: spans of bytes, lines and
 * tokens, normalization, numbers, parameter decoding and admin texts. */
#ifndef TALLY_COMPARE_UTIL_H
#define TALLY_COMPARE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/cfg.h"
#include "tasktypes/comparator.h"

/* A run of bytes inside a buffer someone else owns. */
typedef struct tally__span_s {
  const char *p;
  size_t len;
} tally__span_t;

/* CMS's white space: space, \t, \n, \v, \f and \r. */
static inline bool tally__cmp_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Starts a comparison: res says wrong with no admin text, and a NULL
 * output or expected (of length 0) points at "". */
void tally__cmp_begin(tally_compare_result_t *res, const char **output,
                      const char **expected);

/* Sets outcome and the message that goes with it. */
void tally__cmp_verdict(tally_compare_result_t *res, double outcome);

/* Formats res->admin, cut to its size. */
void tally__cmp_admin(tally_compare_result_t *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes s (len bytes) into dst (cap bytes, cap >= 8) between double
 * quotes: printable ASCII and valid UTF-8 stay, '"' and '\\' get a
 * backslash, every other byte becomes \xNN. At most max bytes of s are
 * shown; a cut text ends in "...". dst is always NUL-terminated. */
void tally__cmp_quote(char *dst, size_t cap, const char *s, size_t len,
                      size_t max);

/* Splits text into lines as Python's readline does: each ends after a
 * '\n' (which stays out of the span) or at the end of the text; "" has no
 * lines. On success, *lines is malloc'ed (the caller frees it; NULL when
 * there are none). Returns 0 or TALLY_ENOMEM. */
int tally__cmp_lines(const char *s, size_t n, tally__span_t **lines,
                     size_t *count);

/* Splits text into runs of non-white-space bytes. Like tally__cmp_lines. */
int tally__cmp_tokens(const char *s, size_t n, tally__span_t **tokens,
                      size_t *count);

/* How much text is normalized before it is compared, in increasing
 * order; the names are the values of the "normalize" parameter. */
typedef enum tally__norm_e {
  TALLY__NORM_NONE = 0, /* "none": as it is */
  TALLY__NORM_SPACE,    /* "whitespace": runs of white space collapsed to
                           one space, both ends stripped */
  TALLY__NORM_CASE,     /* "case": whitespace, and ASCII lowercase */
  TALLY__NORM_ANSWER,   /* "answer": case, then ASCII punctuation removed
                           and the words a, an and the dropped (SQuAD's
                           normalize_answer) */
  TALLY__NORM_UNICODE   /* "unicode": NFKD, lowercase, the words a, an and
                           the replaced by a space, ASCII punctuation
                           removed, Unicode white space collapsed
                           (compare_unicode.c) */
} tally__norm_t;

extern const char *const tally__norm_choices[];

/* The normalized form of a text: either the text itself (owned NULL) or a
 * malloc'ed copy. */
typedef struct tally__normed_s {
  const char *p;
  size_t len;
  char *owned;
} tally__normed_t;

/* Normalizes s at level into *out. Returns 0 or TALLY_ENOMEM. Free with
 * tally__cmp_normed_free. */
int tally__cmp_normalize(tally__norm_t level, const char *s, size_t n,
                         tally__normed_t *out);
void tally__cmp_normed_free(tally__normed_t *n);

/* Level "unicode" (compare_unicode.c). Invalid UTF-8 bytes count as
 * U+FFFD. Returns 0 or TALLY_ENOMEM; out is always a malloc'ed copy. */
int tally__cmp_normalize_unicode(const char *s, size_t n, tally__normed_t *out);

/* Whether s (len bytes) is a decimal number as a whole: an optional sign,
 * digits with an optional fraction (or a fraction alone), and an optional
 * exponent. No hex, no inf, no nan. *v receives its value (which may be
 * infinite when it overflows). Returns 1 for a number, 0 for any other
 * token, TALLY_ENOMEM. */
int tally__cmp_number(const char *s, size_t len, double *v);

/* Whether output is within the tolerances of expected: |output - expected|
 * at most absolute, or at most relative times |expected|, with room for
 * rounding. Infinities only match themselves. */
bool tally__cmp_within(double output, double expected, double absolute,
                       double relative);

/* Decodes params against keys into conf, as tally_cfg_decode does; NULL
 * params leave conf at its defaults. */
int tally__cmp_decode(const tally_cfg_key_t *keys, const cJSON *params,
                      void *conf, tally_diag_t *d, tally_jpath_t *path);

/* Setters for the parameters: a bool, and a finite number of at least
 * 0 (a double). */
const char *tally__cmp_set_bool(const tally_cfg_key_t *k, const cJSON *v,
                                void *conf);
const char *tally__cmp_set_tolerance(const tally_cfg_key_t *k, const cJSON *v,
                                     void *conf);

/* Copies a small conf struct into a malloc'ed state. Reports running out
 * of memory at path. */
int tally__cmp_state(const void *conf, size_t size, void **state,
                     tally_diag_t *d, tally_jpath_t *path);

#endif
