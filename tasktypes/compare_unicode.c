/* The "unicode" normalization level of the comparators
 * (docs/comparators.md): the answer normalization of model benchmarks,
 * in this order: NFKD, lowercase, the whole words a, an and the replaced
 * by a space, ASCII punctuation removed, white space runs joined by one
 * space, both ends trimmed. utf8proc gives the decomposition and the
 * character properties; the word and space rules are Python's (str.lower,
 * re's \b, str.split), which benchmark harnesses use. */
#include "config/utext.h"
#include "tasktypes/compare_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

/* A byte of an invalid UTF-8 sequence stands for itself, as Python's
 * surrogateescape does: U+DC80 + byte - 0x80, written back as the byte.
 * So two different invalid bytes never normalize alike. */
#define ESCAPE_LO 0xDC80
#define ESCAPE_HI 0xDCFF

/* Decodes s (n bytes, any bytes) into code points, each byte of an
 * invalid sequence escaped. *cps is malloc'ed. */
static int decode(const char *s, size_t n, utf8proc_int32_t **cps,
                  size_t *count) {
  utf8proc_int32_t *out = malloc((n + 1) * sizeof(*out));
  if (out == NULL)
    return TALLY_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t used = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                             (utf8proc_ssize_t)(n - i), &cp);
    if (used <= 0) {
      cp = ESCAPE_LO + ((unsigned char)s[i] & 0x7f);
      used = 1;
    }
    out[k++] = cp;
    i += (size_t)used;
  }
  *cps = out;
  *count = k;
  return 0;
}

/* NFKD of cps, with canonical ordering of combining marks. */
static int nfkd(const utf8proc_int32_t *cps, size_t n, utf8proc_int32_t **dst,
                size_t *count) {
  const utf8proc_option_t opts = UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  size_t cap = n + 16, k = 0;
  utf8proc_int32_t *out = malloc(cap * sizeof(*out));
  if (out == NULL)
    return TALLY_ENOMEM;
  int boundclass = UTF8PROC_BOUNDCLASS_START;
  for (size_t i = 0; i < n; i++) {
    /* No decomposition is longer than 18 code points. */
    if (cap - k < 32) {
      size_t ncap = cap * 2 + 32;
      utf8proc_int32_t *grown = realloc(out, ncap * sizeof(*out));
      if (grown == NULL) {
        free(out);
        return TALLY_ENOMEM;
      }
      out = grown;
      cap = ncap;
    }
    if (cps[i] >= ESCAPE_LO && cps[i] <= ESCAPE_HI) {
      out[k++] = cps[i];
      continue;
    }
    utf8proc_ssize_t got = utf8proc_decompose_char(
        cps[i], out + k, (utf8proc_ssize_t)(cap - k), opts, &boundclass);
    if (got < 0 || (size_t)got > cap - k)
      out[k++] = 0xFFFD;
    else
      k += (size_t)got;
  }
  /* Canonical ordering: a stable sort of each run of marks by class. */
  for (size_t i = 1; i < k; i++) {
    const utf8proc_property_t *p = utf8proc_get_property(out[i]);
    if (p->combining_class == 0)
      continue;
    size_t j = i;
    while (j > 0) {
      const utf8proc_property_t *q = utf8proc_get_property(out[j - 1]);
      if (q->combining_class <= p->combining_class)
        break;
      utf8proc_int32_t t = out[j - 1];
      out[j - 1] = out[j];
      out[j] = t;
      j--;
    }
  }
  *dst = out;
  *count = k;
  return 0;
}

static bool category_in(utf8proc_int32_t c, const utf8proc_category_t *set,
                        size_t n) {
  utf8proc_category_t cat = utf8proc_category(c);
  for (size_t i = 0; i < n; i++)
    if (cat == set[i])
      return true;
  return false;
}

/* A character of Python's \w: a letter, a number, or '_'. */
static bool word_char(utf8proc_int32_t c) {
  static const utf8proc_category_t w[] = {
      UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT,
      UTF8PROC_CATEGORY_LM, UTF8PROC_CATEGORY_LO, UTF8PROC_CATEGORY_ND,
      UTF8PROC_CATEGORY_NL, UTF8PROC_CATEGORY_NO};
  return c == '_' || category_in(c, w, sizeof(w) / sizeof(w[0]));
}

static bool cased(utf8proc_int32_t c) {
  static const utf8proc_category_t l[] = {
      UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT};
  return category_in(c, l, 3) || utf8proc_tolower(c) != c ||
         utf8proc_toupper(c) != c;
}

static bool case_ignorable(utf8proc_int32_t c) {
  static const utf8proc_category_t ign[] = {
      UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_ME, UTF8PROC_CATEGORY_CF,
      UTF8PROC_CATEGORY_LM, UTF8PROC_CATEGORY_SK};
  return c == '\'' || c == '.' || c == ':' || c == '^' || c == '`' ||
         c == 0xB7 || c == 0x2018 || c == 0x2019 || c == 0x2024 ||
         c == 0x2027 || category_in(c, ign, sizeof(ign) / sizeof(ign[0]));
}

/* Python's lowercase of the capital sigma at i: final (U+03C2) after a
 * cased letter and not before one, case-ignorable characters skipped. */
static utf8proc_int32_t lower_sigma(const utf8proc_int32_t *cps, size_t n,
                                    size_t i) {
  size_t j = i;
  while (j > 0 && case_ignorable(cps[j - 1]))
    j--;
  if (j == 0 || !cased(cps[j - 1]))
    return 0x03C3;
  j = i + 1;
  while (j < n && case_ignorable(cps[j]))
    j++;
  return j < n && cased(cps[j]) ? 0x03C3 : 0x03C2;
}

static bool ascii_punct(utf8proc_int32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') ||
         (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static bool is_article(const utf8proc_int32_t *w, size_t n) {
  return (n == 1 && w[0] == 'a') || (n == 2 && w[0] == 'a' && w[1] == 'n') ||
         (n == 3 && w[0] == 't' && w[1] == 'h' && w[2] == 'e');
}

int tally__cmp_normalize_unicode(const char *s, size_t n,
                                 tally__normed_t *out) {
  out->p = s;
  out->len = n;
  out->owned = NULL;
  utf8proc_int32_t *raw = NULL, *cps = NULL;
  size_t nraw = 0, m = 0;
  if (decode(s, n, &raw, &nraw) != 0)
    return TALLY_ENOMEM;
  int rc = nfkd(raw, nraw, &cps, &m);
  free(raw);
  if (rc != 0)
    return rc;
  /* Lowercase, in place: the sigma rule looks at the original letters. */
  utf8proc_int32_t *low = malloc((m + 1) * sizeof(*low));
  if (low == NULL) {
    free(cps);
    return TALLY_ENOMEM;
  }
  for (size_t i = 0; i < m; i++)
    low[i] =
        cps[i] == 0x03A3 ? lower_sigma(cps, m, i) : utf8proc_tolower(cps[i]);
  free(cps);
  /* Articles (whole runs of word characters) become a space; then ASCII
   * punctuation goes. */
  size_t k = 0;
  for (size_t i = 0; i < m;) {
    if (!word_char(low[i])) {
      if (!ascii_punct(low[i]))
        low[k++] = low[i];
      i++;
      continue;
    }
    size_t start = i;
    while (i < m && word_char(low[i]))
      i++;
    if (is_article(low + start, i - start)) {
      low[k++] = ' ';
      continue;
    }
    for (size_t j = start; j < i; j++)
      if (!ascii_punct(low[j])) /* '_' is punctuation */
        low[k++] = low[j];
  }
  /* Words joined by single spaces, as UTF-8. */
  char *buf = malloc(k * 4 + 1);
  if (buf == NULL) {
    free(low);
    return TALLY_ENOMEM;
  }
  size_t o = 0;
  bool gap = false;
  for (size_t i = 0; i < k; i++) {
    if (tally_utext_space(low[i])) {
      gap = o > 0;
      continue;
    }
    if (gap)
      buf[o++] = ' ';
    gap = false;
    if (low[i] >= ESCAPE_LO && low[i] <= ESCAPE_HI)
      buf[o++] = (char)(0x80 + (low[i] - ESCAPE_LO));
    else
      o += (size_t)utf8proc_encode_char(low[i], (utf8proc_uint8_t *)buf + o);
  }
  free(low);
  buf[o] = '\0';
  out->p = buf;
  out->len = o;
  out->owned = buf;
  return 0;
}
