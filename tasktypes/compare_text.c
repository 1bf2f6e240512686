/* The comparators that need the texts to agree: white_diff (CMS's white
 * diff), exact (byte for byte) and normalized (SQuAD's exact match). */
#include "tasktypes/compare_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many bytes of each side an admin text shows. */
#define SHOWN 64

/* Reads the next line of s as Python's readline does (the '\n' is left
 * out; it is white space anyway). Returns false at the end. */
static bool next_line(const char *s, size_t n, size_t *pos,
                      tally__span_t *line) {
  if (*pos >= n)
    return false;
  const char *nl = memchr(s + *pos, '\n', n - *pos);
  size_t end = nl ? (size_t)(nl - s) : n;
  line->p = s + *pos;
  line->len = end - *pos;
  *pos = nl ? end + 1 : n;
  return true;
}

static bool blank(tally__span_t l) {
  for (size_t i = 0; i < l.len; i++)
    if (!tally__cmp_space((unsigned char)l.p[i]))
      return false;
  return true;
}

/* Whether two lines have the same words: CMS compares them after
 * collapsing runs of white space and stripping both ends. */
static bool same_words(tally__span_t a, tally__span_t b) {
  if (a.len == b.len && memcmp(a.p, b.p, a.len) == 0)
    return true;
  size_t i = 0, j = 0;
  for (;;) {
    while (i < a.len && tally__cmp_space((unsigned char)a.p[i]))
      i++;
    while (j < b.len && tally__cmp_space((unsigned char)b.p[j]))
      j++;
    if (i == a.len || j == b.len)
      return i == a.len && j == b.len;
    while (i < a.len && j < b.len && !tally__cmp_space((unsigned char)a.p[i]) &&
           !tally__cmp_space((unsigned char)b.p[j])) {
      if (a.p[i] != b.p[j])
        return false;
      i++;
      j++;
    }
    bool a_end = i == a.len || tally__cmp_space((unsigned char)a.p[i]);
    bool b_end = j == b.len || tally__cmp_space((unsigned char)b.p[j]);
    if (a_end != b_end)
      return false;
  }
}

/* Quotes the canonical form of a line (its words joined by single
 * spaces), cut after SHOWN bytes, or writes "end of output" for NULL. */
static void quote_line(char *dst, size_t cap, const tally__span_t *l) {
  if (l == NULL) {
    snprintf(dst, cap, "end of output");
    return;
  }
  /* One byte more than is shown, so that a cut line ends in "...". */
  char canon[SHOWN + 1];
  size_t n = 0, i = 0;
  for (; i < l->len && n < sizeof(canon); i++) {
    if (!tally__cmp_space((unsigned char)l->p[i]))
      canon[n++] = l->p[i];
    else if (n > 0 && canon[n - 1] != ' ')
      canon[n++] = ' ';
  }
  if (n < sizeof(canon) || blank((tally__span_t){l->p + i, l->len - i}))
    while (n > 0 && canon[n - 1] == ' ')
      n--;
  tally__cmp_quote(dst, cap, canon, n, SHOWN);
}

static void line_admin(tally_compare_result_t *res, size_t line,
                       const tally__span_t *expected,
                       const tally__span_t *read) {
  char e[96], r[96];
  quote_line(e, sizeof(e), expected);
  quote_line(r, sizeof(r), read);
  tally__cmp_admin(res, "line %zu: expected %s, read %s", line, e, r);
}

static int white_diff_compare(const void *state, const char *out,
                              size_t out_len, const char *exp, size_t exp_len,
                              tally_compare_result_t *res, char *err,
                              size_t errlen) {
  (void)state;
  (void)err;
  (void)errlen;
  tally__cmp_begin(res, &out, &exp);
  if (out_len == exp_len && memcmp(out, exp, out_len) == 0) {
    tally__cmp_verdict(res, 1);
    return 0;
  }
  size_t po = 0, pe = 0;
  for (size_t line = 1;; line++) {
    tally__span_t lo, le;
    bool has_o = next_line(out, out_len, &po, &lo);
    bool has_e = next_line(exp, exp_len, &pe, &le);
    if (!has_o && !has_e)
      break;
    /* When one side has ended, the rest of the other must be blank. */
    if (!has_e) {
      if (!blank(lo)) {
        line_admin(res, line, NULL, &lo);
        return 0;
      }
    } else if (!has_o) {
      if (!blank(le)) {
        line_admin(res, line, &le, NULL);
        return 0;
      }
    } else if (!same_words(lo, le)) {
      line_admin(res, line, &le, &lo);
      return 0;
    }
  }
  tally__cmp_verdict(res, 1);
  return 0;
}

const tally_comparator_t tally_comparator_white_diff = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "white_diff",
    .compare = white_diff_compare,
};

/* Writes where a and b first differ into the admin text: the byte offset,
 * its line and column in a, and SHOWN bytes of each side from there. */
static void diff_admin(tally_compare_result_t *res, const char *what,
                       const char *exp, size_t exp_len, const char *out,
                       size_t out_len) {
  size_t k = 0, n = exp_len < out_len ? exp_len : out_len;
  while (k < n && exp[k] == out[k])
    k++;
  size_t line = 1, start = 0;
  for (const char *nl; (nl = memchr(exp + start, '\n', k - start)) != NULL;) {
    line++;
    start = (size_t)(nl - exp) + 1;
  }
  size_t col = k - start + 1;
  char e[80], r[80];
  if (k == exp_len)
    snprintf(e, sizeof(e), "end of %s", what);
  else
    tally__cmp_quote(e, sizeof(e), exp + k, exp_len - k, SHOWN);
  if (k == out_len)
    snprintf(r, sizeof(r), "end of %s", what);
  else
    tally__cmp_quote(r, sizeof(r), out + k, out_len - k, SHOWN);
  tally__cmp_admin(res, "byte %zu (line %zu, column %zu): expected %s, read %s",
                   k, line, col, e, r);
}

static int exact_compare(const void *state, const char *out, size_t out_len,
                         const char *exp, size_t exp_len,
                         tally_compare_result_t *res, char *err,
                         size_t errlen) {
  (void)state;
  (void)err;
  (void)errlen;
  tally__cmp_begin(res, &out, &exp);
  bool same = out_len == exp_len && memcmp(out, exp, out_len) == 0;
  tally__cmp_verdict(res, same ? 1 : 0);
  if (!same)
    diff_admin(res, "output", exp, exp_len, out, out_len);
  return 0;
}

const tally_comparator_t tally_comparator_exact = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "exact",
    .compare = exact_compare,
};

static int normalized_compare(const void *state, const char *out,
                              size_t out_len, const char *exp, size_t exp_len,
                              tally_compare_result_t *res, char *err,
                              size_t errlen) {
  (void)state;
  (void)err;
  (void)errlen;
  tally__cmp_begin(res, &out, &exp);
  tally__normed_t no, ne;
  if (tally__cmp_normalize(TALLY__NORM_UNICODE, out, out_len, &no) != 0)
    return TALLY_ENOMEM;
  if (tally__cmp_normalize(TALLY__NORM_UNICODE, exp, exp_len, &ne) != 0) {
    tally__cmp_normed_free(&no);
    return TALLY_ENOMEM;
  }
  bool same = no.len == ne.len && memcmp(no.p, ne.p, no.len) == 0;
  tally__cmp_verdict(res, same ? 1 : 0);
  if (!same)
    diff_admin(res, "normalized text", ne.p, ne.len, no.p, no.len);
  tally__cmp_normed_free(&no);
  tally__cmp_normed_free(&ne);
  return 0;
}

const tally_comparator_t tally_comparator_normalized = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "normalized",
    .compare = normalized_compare,
};
