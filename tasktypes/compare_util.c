/* The helpers the built-in comparators share (compare_util.h). */
#include "tasktypes/compare_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(conf, k, type) ((type *)((char *)(conf) + (k)->offset))

const char *const tally__norm_choices[] = {"none",   "whitespace", "case",
                                           "answer", "unicode",    NULL};

void tally__cmp_begin(tally_compare_result_t *res, const char **output,
                      const char **expected) {
  res->outcome = 0;
  res->message = TALLY_COMPARE_WRONG;
  res->admin[0] = '\0';
  res->extracted = -1;
  if (*output == NULL)
    *output = "";
  if (*expected == NULL)
    *expected = "";
}

void tally__cmp_verdict(tally_compare_result_t *res, double outcome) {
  res->outcome = outcome;
  res->message = outcome >= 1.0   ? TALLY_COMPARE_CORRECT
                 : outcome <= 0.0 ? TALLY_COMPARE_WRONG
                                  : TALLY_COMPARE_PARTIAL;
}

void tally__cmp_admin(tally_compare_result_t *res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->admin, sizeof(res->admin), fmt, ap);
  va_end(ap);
}

/* The length of the valid UTF-8 sequence of two or more bytes at s, or 0
 * when there is none (overlong forms and surrogates are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t len;
  uint32_t cp;
  if (s[0] >= 0xc2 && s[0] <= 0xdf) {
    len = 2;
    cp = s[0] & 0x1f;
  } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
    len = 3;
    cp = s[0] & 0x0f;
  } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
    len = 4;
    cp = s[0] & 0x07;
  } else {
    return 0;
  }
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

void tally__cmp_quote(char *dst, size_t cap, const char *s, size_t len,
                      size_t max) {
  const unsigned char *u = (const unsigned char *)s;
  size_t o = 0, i = 0;
  /* Room for the closing quote, "..." and the NUL. */
  size_t end = cap - 5;
  dst[o++] = '"';
  while (i < len && i < max) {
    char piece[8];
    size_t plen, take = 1;
    size_t u8 = u[i] >= 0x80 ? utf8_len(u + i, len - i) : 0;
    if (u[i] == '"' || u[i] == '\\') {
      piece[0] = '\\';
      piece[1] = (char)u[i];
      plen = 2;
    } else if (u[i] >= 0x20 && u[i] < 0x7f) {
      piece[0] = (char)u[i];
      plen = 1;
    } else if (u8 > 0) {
      memcpy(piece, u + i, u8);
      plen = take = u8;
    } else {
      snprintf(piece, sizeof(piece), "\\x%02x", u[i]);
      plen = 4;
    }
    if (o + plen > end || i + take > max)
      break;
    memcpy(dst + o, piece, plen);
    o += plen;
    i += take;
  }
  dst[o++] = '"';
  if (i < len) {
    memcpy(dst + o, "...", 3);
    o += 3;
  }
  dst[o] = '\0';
}

/* Grows *spans to hold one more, doubling. */
static int span_push(tally__span_t **spans, size_t *count, size_t *cap,
                     const char *p, size_t len) {
  if (*count == *cap) {
    size_t ncap = *cap ? *cap * 2 : 16;
    tally__span_t *n = realloc(*spans, ncap * sizeof(*n));
    if (n == NULL)
      return TALLY_ENOMEM;
    *spans = n;
    *cap = ncap;
  }
  (*spans)[(*count)++] = (tally__span_t){p, len};
  return 0;
}

int tally__cmp_lines(const char *s, size_t n, tally__span_t **lines,
                     size_t *count) {
  size_t cap = 0;
  *lines = NULL;
  *count = 0;
  size_t i = 0;
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t end = nl ? (size_t)(nl - s) : n;
    if (span_push(lines, count, &cap, s + i, end - i) != 0) {
      free(*lines);
      *lines = NULL;
      *count = 0;
      return TALLY_ENOMEM;
    }
    i = nl ? end + 1 : n;
  }
  return 0;
}

int tally__cmp_tokens(const char *s, size_t n, tally__span_t **tokens,
                      size_t *count) {
  size_t cap = 0;
  *tokens = NULL;
  *count = 0;
  size_t i = 0;
  for (;;) {
    while (i < n && tally__cmp_space((unsigned char)s[i]))
      i++;
    if (i == n)
      return 0;
    size_t start = i;
    while (i < n && !tally__cmp_space((unsigned char)s[i]))
      i++;
    if (span_push(tokens, count, &cap, s + start, i - start) != 0) {
      free(*tokens);
      *tokens = NULL;
      *count = 0;
      return TALLY_ENOMEM;
    }
  }
}

/* Whether s is already in "whitespace" form: no white space but single
 * spaces between words. */
static bool is_collapsed(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!tally__cmp_space(c))
      continue;
    if (c != ' ' || i == 0 || i == n - 1 || s[i + 1] == ' ')
      return false;
  }
  return true;
}

/* Python's string.punctuation: every printable ASCII byte that is not a
 * letter, a digit or a space. */
static bool is_punct(unsigned char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') ||
         (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static bool is_article(const char *w, size_t n) {
  return (n == 1 && w[0] == 'a') || (n == 2 && memcmp(w, "an", 2) == 0) ||
         (n == 3 && memcmp(w, "the", 3) == 0);
}

int tally__cmp_normalize(tally__norm_t level, const char *s, size_t n,
                         tally__normed_t *out) {
  out->p = s;
  out->len = n;
  out->owned = NULL;
  if (level == TALLY__NORM_NONE ||
      (level == TALLY__NORM_SPACE && is_collapsed(s, n)))
    return 0;
  if (level == TALLY__NORM_UNICODE)
    return tally__cmp_normalize_unicode(s, n, out);
  char *buf = malloc(n + 1);
  if (buf == NULL)
    return TALLY_ENOMEM;
  /* First the bytes that change one by one, then the words. */
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (level >= TALLY__NORM_CASE && c >= 'A' && c <= 'Z')
      c = (unsigned char)(c - 'A' + 'a');
    if (level == TALLY__NORM_ANSWER && is_punct(c))
      continue;
    buf[m++] = (char)c;
  }
  size_t o = 0, i = 0;
  for (;;) {
    while (i < m && tally__cmp_space((unsigned char)buf[i]))
      i++;
    if (i == m)
      break;
    size_t start = i;
    while (i < m && !tally__cmp_space((unsigned char)buf[i]))
      i++;
    if (level == TALLY__NORM_ANSWER && is_article(buf + start, i - start))
      continue;
    if (o > 0)
      buf[o++] = ' ';
    memmove(buf + o, buf + start, i - start);
    o += i - start;
  }
  buf[o] = '\0';
  out->p = buf;
  out->len = o;
  out->owned = buf;
  return 0;
}

void tally__cmp_normed_free(tally__normed_t *n) {
  free(n->owned);
  n->owned = NULL;
}

static size_t digits(const char *s, size_t i, size_t len) {
  size_t start = i;
  while (i < len && s[i] >= '0' && s[i] <= '9')
    i++;
  return i - start;
}

int tally__cmp_number(const char *s, size_t len, double *v) {
  size_t i = 0;
  if (i < len && (s[i] == '+' || s[i] == '-'))
    i++;
  size_t whole = digits(s, i, len);
  i += whole;
  size_t frac = 0;
  if (i < len && s[i] == '.') {
    i++;
    frac = digits(s, i, len);
    i += frac;
  }
  if (whole == 0 && frac == 0)
    return 0;
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-'))
      i++;
    size_t exp = digits(s, i, len);
    if (exp == 0)
      return 0;
    i += exp;
  }
  if (i != len)
    return 0;
  /* strtod needs a NUL; short numbers are copied on the stack. */
  char small[128];
  char *copy = len < sizeof(small) ? small : malloc(len + 1);
  if (copy == NULL)
    return TALLY_ENOMEM;
  memcpy(copy, s, len);
  copy[len] = '\0';
  *v = strtod(copy, NULL);
  if (copy != small)
    free(copy);
  return 1;
}

bool tally__cmp_within(double output, double expected, double absolute,
                       double relative) {
  if (!isfinite(output) || !isfinite(expected))
    return output == expected;
  double limit = fmax(absolute, relative * fabs(expected));
  /* A tolerance written in decimal is rarely exact in binary: 1.1 - 1.0
   * is a little over 0.1. */
  return fabs(output - expected) <= limit * (1 + 1e-12);
}

int tally__cmp_decode(const tally_cfg_key_t *keys, const cJSON *params,
                      void *conf, tally_diag_t *d, tally_jpath_t *path) {
  if (params == NULL)
    return 0;
  return tally_cfg_decode(keys, params, conf, d, path, NULL);
}

const char *tally__cmp_set_bool(const tally_cfg_key_t *k, const cJSON *v,
                                void *conf) {
  if (!cJSON_IsBool(v))
    return "must be true or false";
  *FIELD(conf, k, bool) = cJSON_IsTrue(v);
  return NULL;
}

const char *tally__cmp_set_tolerance(const tally_cfg_key_t *k, const cJSON *v,
                                     void *conf) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
    return "must be a finite number, 0 or more";
  *FIELD(conf, k, double) = v->valuedouble;
  return NULL;
}

int tally__cmp_state(const void *conf, size_t size, void **state,
                     tally_diag_t *d, tally_jpath_t *path) {
  void *copy = malloc(size);
  if (copy == NULL) {
    tally_diag_add(d, path, "out of memory");
    return TALLY_ENOMEM;
  }
  memcpy(copy, conf, size);
  *state = copy;
  return 0;
}
