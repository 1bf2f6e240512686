/* Math answers as the reference's math_equivalence reads them
 * (docs/evaluation-specs.md): the normalization of LaTeX and Unicode
 * notation into a plain expression, its grammar, exact-rational
 * canonical keys, and numeric evaluation with Go's float64 arithmetic.
 * Exact values are GMP rationals. Where the reference crashes or hangs
 * (division by zero in a canonical form, deep nesting, huge literals and
 * values), these functions stop with a reason instead. */
#ifndef TALLY_ES_MATHEXPR_H
#define TALLY_ES_MATHEXPR_H

#include <stdbool.h>
#include <stddef.h>

/* Limits: an expression's length in bytes, its nesting (parentheses,
 * unary signs and powers), and the bits of its exact values. */
#define TALLY_MX_MAX_BYTES 65536
#define TALLY_MX_MAX_DEPTH 500
#define TALLY_MX_MAX_BITS (1L << 22)

/* What the functions below return besides 0 (and TALLY_ENOMEM). */
enum {
  TALLY_MX_ERROR = 1,    /* the reference's error, its text in err */
  TALLY_MX_DIV_ZERO = 2, /* an exact zero raised to a negative power */
  TALLY_MX_LIMIT = 3     /* past one of the limits above, err says which */
};

typedef struct tally_mx_s tally_mx_t;

/* normalizeMathExpression: raw trimmed, the text after the last delim
 * when extract is set, outer $ or $$ stripped, line breaks, commas,
 * Unicode operators and LaTeX spacing rewritten, \boxed, \frac, \sqrt
 * (with an optional root index) and the Unicode root rewritten, braces
 * made parentheses, white space collapsed. *out is a new string. */
int tally_mx_normalize(const char *raw, bool extract, const char *delim,
                       char **out, char *err, size_t errlen);

/* Parses a normalized expression into *out (free with tally_mx_free). */
int tally_mx_parse(const char *s, tally_mx_t **out, char *err, size_t errlen);

/* The canonical form's key ("add(num:1/2,sym:x)"), a new string. */
int tally_mx_key(tally_mx_t *e, char **key, char *err, size_t errlen);

/* The expression's value as the reference computes it in float64. */
int tally_mx_eval(const tally_mx_t *e, double *v, char *err, size_t errlen);

void tally_mx_free(tally_mx_t *e);

/* Go's math.Pow (pure Go on amd64, with Go's Exp and Log). */
double tally_go_pow(double x, double y);

#endif
