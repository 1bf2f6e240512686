/* The comparators that read numbers: numeric_tolerance (token by token,
 * numbers within a tolerance) and last_number (the last number of the
 * output against the last one of the expected output). */
#include "tasktypes/compare_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many bytes of a token an admin text shows. */
#define SHOWN 48

typedef struct tolerance_s {
  double absolute;
  double relative;
  bool commas; /* last_number only */
} tolerance_t;

static const tally_cfg_key_t tolerance_keys[] = {
    {.name = "absolute",
     .set = tally__cmp_set_tolerance,
     .offset = offsetof(tolerance_t, absolute)},
    {.name = "relative",
     .set = tally__cmp_set_tolerance,
     .offset = offsetof(tolerance_t, relative)},
    {.name = NULL},
};

static const tally_cfg_key_t last_number_keys[] = {
    {.name = "absolute",
     .set = tally__cmp_set_tolerance,
     .offset = offsetof(tolerance_t, absolute)},
    {.name = "relative",
     .set = tally__cmp_set_tolerance,
     .offset = offsetof(tolerance_t, relative)},
    {.name = "commas",
     .set = tally__cmp_set_bool,
     .offset = offsetof(tolerance_t, commas)},
    {.name = NULL},
};

static int parse_with(const tally_cfg_key_t *keys, double absolute,
                      const cJSON *params, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  tolerance_t conf = {.absolute = absolute, .relative = 0, .commas = true};
  int rc = tally__cmp_decode(keys, params, &conf, d, path);
  if (rc != 0)
    return rc;
  return tally__cmp_state(&conf, sizeof(conf), state, d, path);
}

static int tolerance_parse(const cJSON *params, void **state, tally_diag_t *d,
                           tally_jpath_t *path) {
  return parse_with(tolerance_keys, 1e-6, params, state, d, path);
}

static int last_number_parse(const cJSON *params, void **state, tally_diag_t *d,
                             tally_jpath_t *path) {
  /* Exact by default: a benchmark's answer is a number, not a
   * measurement. */
  return parse_with(last_number_keys, 0, params, state, d, path);
}

/* Moves *pos to the next token of s and returns it; false at the end. */
static bool next_token(const char *s, size_t n, size_t *pos,
                       tally__span_t *tok) {
  size_t i = *pos;
  while (i < n && tally__cmp_space((unsigned char)s[i]))
    i++;
  if (i == n) {
    *pos = n;
    return false;
  }
  size_t start = i;
  while (i < n && !tally__cmp_space((unsigned char)s[i]))
    i++;
  tok->p = s + start;
  tok->len = i - start;
  *pos = i;
  return true;
}

static void quote_token(char *dst, size_t cap, const tally__span_t *t) {
  if (t == NULL)
    snprintf(dst, cap, "end of output");
  else
    tally__cmp_quote(dst, cap, t->p, t->len, SHOWN);
}

static void token_admin(tally_compare_result_t *res, size_t k,
                        const tally__span_t *exp, const tally__span_t *out) {
  char e[96], r[96];
  quote_token(e, sizeof(e), exp);
  quote_token(r, sizeof(r), out);
  tally__cmp_admin(res, "token %zu: expected %s, read %s", k, e, r);
}

/* Whether two tokens agree: byte for byte, or as numbers within the
 * tolerances. Returns 1, 0 or TALLY_ENOMEM. */
static int tokens_agree(const tolerance_t *t, tally__span_t out,
                        tally__span_t exp) {
  if (out.len == exp.len && memcmp(out.p, exp.p, out.len) == 0)
    return 1;
  double vo, ve;
  int no = tally__cmp_number(out.p, out.len, &vo);
  if (no != 1)
    return no;
  int ne = tally__cmp_number(exp.p, exp.len, &ve);
  if (ne != 1)
    return ne;
  return tally__cmp_within(vo, ve, t->absolute, t->relative) ? 1 : 0;
}

static int tolerance_compare(const void *state, const char *out, size_t out_len,
                             const char *exp, size_t exp_len,
                             tally_compare_result_t *res, char *err,
                             size_t errlen) {
  (void)err;
  (void)errlen;
  const tolerance_t *t = state;
  tally__cmp_begin(res, &out, &exp);
  size_t po = 0, pe = 0;
  for (size_t k = 1;; k++) {
    tally__span_t to, te;
    bool has_o = next_token(out, out_len, &po, &to);
    bool has_e = next_token(exp, exp_len, &pe, &te);
    if (!has_o && !has_e)
      break;
    int agree = has_o && has_e ? tokens_agree(t, to, te) : 0;
    if (agree < 0)
      return agree;
    if (!agree) {
      token_admin(res, k, has_e ? &te : NULL, has_o ? &to : NULL);
      return 0;
    }
  }
  tally__cmp_verdict(res, 1);
  return 0;
}

const tally_comparator_t tally_comparator_numeric_tolerance = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "numeric_tolerance",
    .parse = tolerance_parse,
    .compare = tolerance_compare,
    .free = free,
};

static bool is_digit(const char *s, size_t n, size_t i) {
  return i < n && s[i] >= '0' && s[i] <= '9';
}

static bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

/* Finds the last number in s: an optional sign (when no letter or digit
 * comes before it), digits with thousands separated by commas (when
 * commas is set), an optional fraction, an optional exponent; or a
 * fraction alone (".5"). Returns false when there is none. */
static bool last_number(const char *s, size_t n, bool commas,
                        tally__span_t *num) {
  bool found = false;
  size_t i = 0;
  while (i < n) {
    bool starts = is_digit(s, n, i) || (s[i] == '.' && is_digit(s, n, i + 1) &&
                                        !(i > 0 && is_digit(s, n, i - 1)));
    if (!starts) {
      i++;
      continue;
    }
    size_t start = i;
    if (start > 0 && (s[start - 1] == '-' || s[start - 1] == '+') &&
        (start == 1 || !is_alnum(s[start - 2])))
      start--;
    while (is_digit(s, n, i))
      i++;
    while (commas && i > start && i < n && s[i] == ',' &&
           is_digit(s, n, i + 1) && is_digit(s, n, i + 2) &&
           is_digit(s, n, i + 3) && !is_digit(s, n, i + 4))
      i += 4;
    if (i < n && s[i] == '.' && is_digit(s, n, i + 1)) {
      i++;
      while (is_digit(s, n, i))
        i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
      size_t j = i + 1;
      if (j < n && (s[j] == '+' || s[j] == '-'))
        j++;
      if (is_digit(s, n, j)) {
        while (is_digit(s, n, j))
          j++;
        i = j;
      }
    }
    num->p = s + start;
    num->len = i - start;
    found = true;
  }
  return found;
}

/* The value of a number last_number found, with its commas left out.
 * Returns 0 or TALLY_ENOMEM. */
static int number_value(tally__span_t num, double *v) {
  char small[128] = {0};
  char *copy = num.len < sizeof(small) ? small : malloc(num.len + 1);
  if (copy == NULL)
    return TALLY_ENOMEM;
  size_t m = 0;
  for (size_t i = 0; i < num.len; i++)
    if (num.p[i] != ',')
      copy[m++] = num.p[i];
  int rc = tally__cmp_number(copy, m, v);
  if (copy != small)
    free(copy);
  return rc < 0 ? rc : 0;
}

static int last_number_compare(const void *state, const char *out,
                               size_t out_len, const char *exp, size_t exp_len,
                               tally_compare_result_t *res, char *err,
                               size_t errlen) {
  const tolerance_t *t = state;
  tally__cmp_begin(res, &out, &exp);
  tally__span_t no, ne;
  if (!last_number(exp, exp_len, t->commas, &ne)) {
    snprintf(err, errlen, "the expected output has no number");
    return TALLY_EJOB;
  }
  res->extracted = 0;
  if (!last_number(out, out_len, t->commas, &no)) {
    tally__cmp_admin(res, "no number in the output");
    return 0;
  }
  res->extracted = 1;
  double vo, ve;
  if (number_value(no, &vo) != 0 || number_value(ne, &ve) != 0)
    return TALLY_ENOMEM;
  if (tally__cmp_within(vo, ve, t->absolute, t->relative)) {
    tally__cmp_verdict(res, 1);
    return 0;
  }
  char e[96], r[96];
  quote_token(e, sizeof(e), &ne);
  quote_token(r, sizeof(r), &no);
  tally__cmp_admin(res, "last number: expected %s, read %s", e, r);
  return 0;
}

const tally_comparator_t tally_comparator_last_number = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "last_number",
    .parse = last_number_parse,
    .compare = last_number_compare,
    .free = free,
};
