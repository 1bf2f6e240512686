/* Text operations of the string validators: see textops.h. */
#include "evalspecs/textops.h"
#include "evalspecs/gostr.h"
#include "evalspecs/validators.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* A growing string. */
typedef struct sb_s {
  char *p;
  size_t n, cap;
  bool oom;
} sb_t;

static void sb_put(sb_t *b, const char *s, size_t n) {
  if (b->oom)
    return;
  if (b->n + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 64;
    while (c < b->n + n + 1)
      c *= 2;
    char *p = realloc(b->p, c);
    if (p == NULL) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = c;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static char *sb_done(sb_t *b) {
  if (!b->oom && b->p == NULL)
    sb_put(b, "", 0);
  if (b->oom) {
    free(b->p);
    return NULL;
  }
  return b->p;
}

static char *trim(const char *s) {
  return tally_go_trimmed(s);
}

/* Full Unicode case folding (Go's cases.Fold); a string that is not valid
 * UTF-8 is folded rune by rune, an invalid byte kept as U+FFFD. */
static char *fold(const char *s) {
  sb_t b = {0};
  size_t len = strlen(s);
  for (size_t i = 0; i < len;) {
    int32_t cp;
    size_t n = tally_go_decode(s + i, len - i, &cp);
    if (cp < 0) {
      sb_put(&b, "\xef\xbf\xbd", 3);
    } else {
      utf8proc_int32_t out[8];
      utf8proc_ssize_t k =
          utf8proc_decompose_char(cp, out, 8, UTF8PROC_CASEFOLD, NULL);
      if (k < 0 || k > 8) {
        sb_put(&b, s + i, n);
      } else {
        for (utf8proc_ssize_t j = 0; j < k; j++) {
          utf8proc_uint8_t enc[4];
          utf8proc_ssize_t m = utf8proc_encode_char(out[j], enc);
          sb_put(&b, (const char *)enc, (size_t)m);
        }
      }
    }
    i += n;
  }
  return sb_done(&b);
}

/* Go's regexp \s: [\t\n\f\r ]. */
static bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static char *collapse(const char *s) {
  sb_t b = {0};
  for (const char *p = s; *p;) {
    if (ascii_space(*p)) {
      while (ascii_space(*p))
        p++;
      sb_put(&b, " ", 1);
    } else {
      sb_put(&b, p++, 1);
    }
  }
  return sb_done(&b);
}

/* Drops punctuation (P*) and symbols (S*); an invalid byte reads as
 * U+FFFD, a symbol, so it goes too. */
static char *strip_punct(const char *s) {
  sb_t b = {0};
  size_t len = strlen(s);
  for (size_t i = 0; i < len;) {
    int32_t cp;
    size_t n = tally_go_decode(s + i, len - i, &cp);
    bool drop = cp < 0;
    if (!drop) {
      utf8proc_category_t c = utf8proc_category(cp);
      drop = (c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO) ||
             (c >= UTF8PROC_CATEGORY_SM && c <= UTF8PROC_CATEGORY_SO);
    }
    if (!drop)
      sb_put(&b, s + i, n);
    i += n;
  }
  return sb_done(&b);
}

static char *strip_any(const char *s, const char *const *olds, size_t nolds) {
  sb_t b = {0};
  for (const char *p = s; *p;) {
    size_t hit = 0;
    for (size_t k = 0; k < nolds && hit == 0; k++)
      if (strncmp(p, olds[k], strlen(olds[k])) == 0)
        hit = strlen(olds[k]);
    if (hit > 0)
      p += hit;
    else
      sb_put(&b, p++, 1);
  }
  return sb_done(&b);
}

char *tally_es_strip_currency(const char *s) {
  static const char *const olds[] = {
      "$",   "\xe2\x82\xac", "\xc2\xa3", "\xc2\xa5", "\xe2\x82\xb9",
      "USD", "EUR",          "GBP",      "JPY",      "INR"};
  return strip_any(s, olds, sizeof(olds) / sizeof(olds[0]));
}

static char *strip_formatting(const char *s) {
  static const char *const olds[] = {",", "(", ")", "[", "]"};
  return strip_any(s, olds, 5);
}

static char *nfkc(const char *s) {
  utf8proc_uint8_t *out = NULL;
  utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)s, 0, &out,
                                    UTF8PROC_NULLTERM | UTF8PROC_STABLE |
                                        UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  if (n < 0) {
    /* Not valid UTF-8: left as it is. */
    free(out);
    return strdup(s);
  }
  return (char *)out;
}

/* Go's \w: [0-9A-Za-z_]. */
static bool word(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '_';
}

/* \b(a|an|the)\b replaced by a space, leftmost first, without overlap. */
static char *remove_articles(const char *s) {
  static const char *const alts[] = {"a", "an", "the"};
  sb_t b = {0};
  size_t len = strlen(s);
  for (size_t i = 0; i < len;) {
    bool at_boundary = (i == 0 || !word(s[i - 1])) && word(s[i]);
    size_t hit = 0;
    for (size_t k = 0; k < 3 && at_boundary && hit == 0; k++) {
      size_t l = strlen(alts[k]);
      if (strncmp(s + i, alts[k], l) == 0 && !word(s[i + l]))
        hit = l;
    }
    if (hit > 0) {
      sb_put(&b, " ", 1);
      i += hit;
    } else {
      sb_put(&b, s + i, 1);
      i++;
    }
  }
  return sb_done(&b);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *tally_es_fields(const char *s, char ***fields, size_t *n) {
  size_t len = strlen(s);
  char *copy = malloc(len + 1);
  char **list = calloc(len / 2 + 2, sizeof(*list));
  if (copy == NULL || list == NULL) {
    free(copy);
    free(list);
    return NULL;
  }
  memcpy(copy, s, len + 1);
  size_t count = 0;
  for (size_t i = 0; i < len;) {
    int32_t cp;
    size_t k = tally_go_decode(copy + i, len - i, &cp);
    if (tally_go_is_space(cp)) {
      for (size_t j = 0; j < k; j++)
        copy[i + j] = '\0';
      i += k;
      continue;
    }
    if (i == 0 || copy[i - 1] == '\0')
      list[count++] = copy + i;
    i += k;
  }
  *fields = list;
  *n = count;
  return copy;
}

static char *sort_words(const char *s) {
  char **f;
  size_t n;
  char *buf = tally_es_fields(s, &f, &n);
  if (buf == NULL)
    return NULL;
  qsort(f, n, sizeof(*f), cmp_str);
  sb_t b = {0};
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      sb_put(&b, " ", 1);
    sb_put(&b, f[i], strlen(f[i]));
  }
  free(f);
  free(buf);
  return sb_done(&b);
}

static char *sort_lines(const char *s) {
  /* "\r\n" becomes "\n", then the lines are sorted. */
  size_t len = strlen(s);
  char *copy = malloc(len + 1);
  char **lines = calloc(len + 2, sizeof(*lines));
  if (copy == NULL || lines == NULL) {
    free(copy);
    free(lines);
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\r' && s[i + 1] == '\n')
      continue;
    copy[k++] = s[i];
  }
  copy[k] = '\0';
  size_t n = 0;
  lines[n++] = copy;
  for (size_t i = 0; i < k; i++)
    if (copy[i] == '\n') {
      copy[i] = '\0';
      lines[n++] = copy + i + 1;
    }
  qsort(lines, n, sizeof(*lines), cmp_str);
  sb_t b = {0};
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      sb_put(&b, "\n", 1);
    sb_put(&b, lines[i], strlen(lines[i]));
  }
  free(lines);
  free(copy);
  return sb_done(&b);
}

char *tally_es_step(int step, const char *s) {
  switch (step) {
  case TALLY_ES_TRIM:
    return trim(s);
  case TALLY_ES_LOWERCASE:
    return fold(s);
  case TALLY_ES_COLLAPSE_WHITESPACE:
    return collapse(s);
  case TALLY_ES_STRIP_PUNCTUATION:
    return strip_punct(s);
  case TALLY_ES_STRIP_CURRENCY:
    return tally_es_strip_currency(s);
  case TALLY_ES_STRIP_FORMATTING:
    return strip_formatting(s);
  case TALLY_ES_NORMALIZE_UNICODE:
    return nfkc(s);
  case TALLY_ES_REMOVE_ARTICLES:
    return remove_articles(s);
  case TALLY_ES_SORT_WORDS:
    return sort_words(s);
  case TALLY_ES_SORT_LINES:
    return sort_lines(s);
  default:
    return strdup(s);
  }
}

int32_t *tally_es_runes(const char *s, size_t *n) {
  size_t len = strlen(s), k = 0;
  int32_t *out = malloc((len + 1) * sizeof(*out));
  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < len;) {
    int32_t cp;
    size_t step = tally_go_decode(s + i, len - i, &cp);
    out[k++] = cp < 0 ? 0xfffd : cp;
    i += step;
  }
  *n = k;
  return out;
}

int tally_es_regex(const char *pattern, bool ucp, const char *s, char *err,
                   size_t errlen) {
  int code;
  PCRE2_SIZE off;
  uint32_t options =
      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (ucp ? PCRE2_UCP : 0);
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                 options, &code, &off, NULL);
  if (re == NULL) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof(msg));
    snprintf(err, errlen, "%s at offset %zu", (char *)msg, (size_t)off);
    return TALLY_ES_RE_BAD_PATTERN;
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  pcre2_match_context *mc = pcre2_match_context_create(NULL);
  int rc = TALLY_ES_RE_NOMEM;
  if (md == NULL || mc == NULL) {
    snprintf(err, errlen, "out of memory");
  } else {
    pcre2_set_match_limit(mc, TALLY_ES_REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(mc, TALLY_ES_REGEX_DEPTH_LIMIT);
    int m = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, mc);
    if (m >= 0) {
      rc = TALLY_ES_RE_MATCH;
    } else if (m == PCRE2_ERROR_NOMATCH) {
      rc = TALLY_ES_RE_NO_MATCH;
    } else {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(m, msg, sizeof(msg));
      snprintf(err, errlen,
               "the pattern hit tally's limit (match limit %d, depth limit "
               "%d): %s",
               TALLY_ES_REGEX_MATCH_LIMIT, TALLY_ES_REGEX_DEPTH_LIMIT,
               (char *)msg);
      rc = TALLY_ES_RE_LIMIT;
    }
  }
  pcre2_match_context_free(mc);
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  return rc;
}
