/* The text operations of the string validators, with the reference's
 * meanings: normalization steps (trim, full Unicode case folding, runs of
 * ASCII white space, punctuation and symbols, currency, formatting, NFKC,
 * English articles, sorting words and lines) and splitting into fields.
 * Unicode data comes from utf8proc. Each returns a new string, or NULL
 * when out of memory. */
#ifndef TALLY_ES_TEXTOPS_H
#define TALLY_ES_TEXTOPS_H

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

#endif
