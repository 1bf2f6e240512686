/* The text operations of the string validators, with the reference's
 * meanings: normalization steps (trim, full Unicode case folding, runs of
 * ASCII white space, punctuation and symbols, currency, formatting, NFKC,
 * English articles, sorting words and lines) and splitting into fields.
 * Unicode data comes from utf8proc. Each returns a new string, or NULL
 * when out of memory. */
#ifndef TALLY_ES_TEXTOPS_H
#define TALLY_ES_TEXTOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Applies step (tally_es_step_t) to s. */
char *tally_es_step(int step, const char *s);

/* The fields of s split at runs of Unicode white space (strings.Fields):
 * *fields points into the returned buffer, which the caller frees (also
 * when there are none). Returns NULL when out of memory. */
char *tally_es_fields(const char *s, char ***fields, size_t *n);

/* The code points of s, an invalid byte counting as U+FFFD; *n receives
 * their number. NULL when out of memory. */
int32_t *tally_es_runes(const char *s, size_t *n);

/* Removes every currency symbol and code the reference strips ($, €, £,
 * ¥, ₹, USD, EUR, GBP, JPY, INR). */
char *tally_es_strip_currency(const char *s);

/* The regex limits of the regex validator and JSON Schema patterns. */
#define TALLY_ES_REGEX_MATCH_LIMIT 1000000
#define TALLY_ES_REGEX_DEPTH_LIMIT 10000

/* What tally_es_regex answers. */
enum {
  TALLY_ES_RE_MATCH = 1,
  TALLY_ES_RE_NO_MATCH = 0,
  TALLY_ES_RE_BAD_PATTERN = -1, /* err says why and where */
  TALLY_ES_RE_LIMIT = -2,       /* a limit was hit (err says which) */
  TALLY_ES_RE_NOMEM = -3
};

/* Whether the PCRE2 pattern (UTF-8, invalid bytes tolerated in s; ucp
 * makes \w, \d and \p Unicode-aware) matches somewhere in s, within
 * the limits above. */
int tally_es_regex(const char *pattern, bool ucp, const char *s, char *err,
                   size_t errlen);

#endif
