/* The answer scorers of model benchmarks (docs/comparators.md):
 * multichoice (a letter pulled out of a chat model's response) and
 * answer_line (an "Answer:" line, compared after math normalization).
 * Both may take a PCRE2 pattern with one capture group; a pattern runs
 * with the regex comparator's match, depth and heap limits. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "config/utext.h"
#include "tasktypes/compare_util.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <utf8proc.h>

#define HEAP_LIMIT_KIB (64 * 1024)
#define MATCH_LIMIT 10000000
#define DEPTH_LIMIT 100000
#define SHOWN 64

/* A compiled pattern with its limits; NULL code when there is none. */
typedef struct pattern_s {
  pcre2_code *code;
  pcre2_match_context *mctx;
} pattern_t;

static void pattern_free(pattern_t *p) {
  pcre2_code_free(p->code);
  pcre2_match_context_free(p->mctx);
}

/* Compiles text as Python's re would read it on a str: UTF-8, Unicode
 * classes; invalid UTF-8 in a response never matches a character. The
 * pattern needs a capture group. Reports a failure at path.key. */
static int pattern_compile(pattern_t *p, const char *key, const char *text,
                           tally_diag_t *d, tally_jpath_t *path) {
  int errcode;
  PCRE2_SIZE erroff;
  size_t old = tally_jpath_key(path, key);
  int rc = 0;
  p->code = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                          &errcode, &erroff, NULL);
  uint32_t groups = 0;
  if (p->code == NULL) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(errcode, msg, sizeof(msg));
    rc = tally_diag_add(d, path, "does not compile at offset %zu: %s",
                        (size_t)erroff, (const char *)msg);
  } else if (pcre2_pattern_info(p->code, PCRE2_INFO_CAPTURECOUNT, &groups) !=
                 0 ||
             groups < 1) {
    rc = tally_diag_add(d, path,
                        "needs a capture group: the answer is its group 1");
  } else if ((p->mctx = pcre2_match_context_create(NULL)) == NULL) {
    tally_diag_add(d, path, "out of memory");
    rc = TALLY_ENOMEM;
  } else {
    pcre2_set_match_limit(p->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(p->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(p->mctx, HEAP_LIMIT_KIB);
  }
  tally_jpath_restore(path, old);
  return rc;
}

/* The group 1 of the first match of p in s: 1 found (an unset group is
 * the empty answer), 0 none, or a job error naming the limit hit. */
static int pattern_first(const pattern_t *p, const char *s, size_t n,
                         tally__span_t *ans, char *err, size_t errlen) {
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->code, NULL);
  if (md == NULL)
    return TALLY_ENOMEM;
  int m = pcre2_match(p->code, (PCRE2_SPTR)s, n, 0, 0, md, p->mctx);
  int rc = 1;
  if (m == PCRE2_ERROR_NOMATCH) {
    rc = 0;
  } else if (m == PCRE2_ERROR_NOMEMORY) {
    rc = TALLY_ENOMEM;
  } else if (m < 0) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(m, msg, sizeof(msg));
    snprintf(err, errlen, "the pattern fails on the output: %s",
             (const char *)msg);
    rc = TALLY_EJOB;
  } else {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    ans->p = s;
    ans->len = 0;
    if (ov[2] != PCRE2_UNSET) {
      ans->p = s + ov[2];
      ans->len = ov[3] - ov[2];
    }
  }
  pcre2_match_data_free(md);
  return rc;
}

/* s without the Unicode white space at both ends (Python's str.strip). */
static tally__span_t strip(tally__span_t s) {
  size_t i = 0;
  while (i < s.len) {
    size_t j = i;
    if (!tally_utext_space(tally_utext_next(s.p, s.len, &j)))
      break;
    i = j;
  }
  size_t end = s.len;
  while (end > i) {
    size_t start = end - 1;
    while (start > i && ((unsigned char)s.p[start] & 0xc0) == 0x80 &&
           end - start < 4)
      start--;
    size_t j = start;
    int32_t cp = tally_utext_next(s.p, end, &j);
    if (j != end) { /* not one whole character: an invalid byte */
      start = end - 1;
      cp = 0xFFFD;
    }
    if (!tally_utext_space(cp))
      break;
    end = start;
  }
  return (tally__span_t){s.p + i, end - i};
}

static bool letter_at(const char *s, size_t n, size_t i) {
  return i < n &&
         ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'));
}

static bool word_at(const char *s, size_t n, size_t i) {
  return letter_at(s, n, i) ||
         (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
                    (unsigned char)s[i] >= 0x80));
}

static char upper(char c) {
  return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* multichoice */

typedef struct multichoice_conf_s {
  char *letters;
  char *pattern;
} multichoice_conf_t;

static const tally_cfg_key_t multichoice_keys[] = {
    {.name = "letters",
     .set = tally_cfg_set_string,
     .offset = offsetof(multichoice_conf_t, letters)},
    {.name = "pattern",
     .set = tally_cfg_set_string,
     .offset = offsetof(multichoice_conf_t, pattern)},
    {.name = NULL},
};

typedef struct multichoice_s {
  char letters[27]; /* upper case */
  pattern_t pattern;
} multichoice_t;

static void multichoice_free(void *p) {
  multichoice_t *s = p;
  pattern_free(&s->pattern);
  free(s);
}

static int multichoice_parse(const cJSON *params, void **state, tally_diag_t *d,
                             tally_jpath_t *path) {
  multichoice_conf_t conf = {0};
  int rc = tally__cmp_decode(multichoice_keys, params, &conf, d, path);
  multichoice_t *s = NULL;
  if (rc == 0 && (s = calloc(1, sizeof(*s))) == NULL) {
    tally_diag_add(d, path, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc == 0) {
    const char *letters = conf.letters != NULL ? conf.letters : "ABCD";
    size_t n = strlen(letters);
    bool ok = n >= 1 && n <= 26;
    for (size_t i = 0; ok && i < n; i++) {
      char c = upper(letters[i]);
      ok = letter_at(letters, n, i) && strchr(s->letters, c) == NULL;
      s->letters[i] = c;
    }
    if (!ok) {
      size_t old = tally_jpath_key(path, "letters");
      rc = tally_diag_add(d, path,
                          "must be 1 to 26 different ASCII letters, as "
                          "\"ABCD\"");
      tally_jpath_restore(path, old);
    }
  }
  if (rc == 0 && conf.pattern != NULL)
    rc = pattern_compile(&s->pattern, "pattern", conf.pattern, d, path);
  free(conf.letters);
  free(conf.pattern);
  if (rc != 0) {
    if (s != NULL)
      multichoice_free(s);
    return rc;
  }
  *state = s;
  return 0;
}

static bool is_choice(const multichoice_t *s, char c) {
  return c != '\0' && strchr(s->letters, upper(c)) != NULL;
}

/* The letter the response gives without a pattern: of every "Answer: X",
 * "**X**", "(X)", "\boxed{X}" and "$X$" after the word "answer", the one
 * that ends last, or a last line that is only the letter. '\0' for none. */
static char find_letter(const multichoice_t *s, const char *t, size_t n) {
  char best = '\0';
  size_t best_end = 0;
  bool seen_answer = false;
  for (size_t i = 0; i < n; i++) {
    char c = '\0';
    size_t end = 0;
    if (n - i >= 6 && strncasecmp(t + i, "answer", 6) == 0) {
      size_t j = i + 6;
      seen_answer = true;
      while (j < n && tally__cmp_space((unsigned char)t[j]))
        j++;
      if (j < n && t[j] == ':') {
        j++;
        while (j < n && tally__cmp_space((unsigned char)t[j]))
          j++;
        if (is_choice(s, j < n ? t[j] : '\0') && !word_at(t, n, j + 1)) {
          c = t[j];
          end = j + 1;
        }
      }
    } else if (n - i >= 5 && memcmp(t + i, "**", 2) == 0 &&
               is_choice(s, t[i + 2]) && memcmp(t + i + 3, "**", 2) == 0) {
      c = t[i + 2];
      end = i + 5;
    } else if (n - i >= 3 && t[i] == '(' && is_choice(s, t[i + 1]) &&
               t[i + 2] == ')') {
      c = t[i + 1];
      end = i + 3;
    } else if (n - i >= 9 && memcmp(t + i, "\\boxed{", 7) == 0 &&
               is_choice(s, t[i + 7]) && t[i + 8] == '}') {
      c = t[i + 7];
      end = i + 9;
    } else if (seen_answer && n - i >= 3 && t[i] == '$' &&
               is_choice(s, t[i + 1]) && t[i + 2] == '$') {
      c = t[i + 1];
      end = i + 3;
    }
    if (c != '\0' && end >= best_end) {
      best = c;
      best_end = end;
    }
  }
  /* The last line, if it is just a letter. */
  tally__span_t all = strip((tally__span_t){t, n});
  const char *nl = all.len > 0 ? memrchr(all.p, '\n', all.len) : NULL;
  tally__span_t last = {nl ? nl + 1 : all.p,
                        nl ? all.len - (size_t)(nl + 1 - all.p) : all.len};
  last = strip(last);
  if (last.len == 1 && is_choice(s, last.p[0]))
    best = last.p[0];
  return best;
}

static int multichoice_compare(const void *state, const char *out,
                               size_t out_len, const char *exp, size_t exp_len,
                               tally_compare_result_t *res, char *err,
                               size_t errlen) {
  const multichoice_t *s = state;
  tally__cmp_begin(res, &out, &exp);
  tally__span_t want = strip((tally__span_t){exp, exp_len});
  tally__span_t got = {NULL, 0};
  char letter = '\0';
  if (s->pattern.code != NULL) {
    int rc = pattern_first(&s->pattern, out, out_len, &got, err, errlen);
    if (rc < 0)
      return rc;
    if (rc > 0)
      got = strip(got);
    else
      got.p = NULL;
  } else {
    if (want.len != 1 || !is_choice(s, want.p[0])) {
      char e[96];
      tally__cmp_quote(e, sizeof(e), want.p, want.len, SHOWN);
      snprintf(err, errlen,
               "the expected output %s is not one of the letters %s", e,
               s->letters);
      return TALLY_EJOB;
    }
    letter = find_letter(s, out, out_len);
    if (letter != '\0')
      got = (tally__span_t){&letter, 1};
  }
  char e[96];
  tally__cmp_quote(e, sizeof(e), want.p, want.len, SHOWN);
  if (got.p == NULL) {
    res->extracted = 0;
    tally__cmp_admin(res, "no answer letter in the output, expected %s", e);
    return 0;
  }
  res->extracted = 1;
  bool same = got.len == want.len;
  for (size_t i = 0; same && i < got.len; i++)
    same = upper(got.p[i]) == upper(want.p[i]);
  tally__cmp_verdict(res, same ? 1 : 0);
  char r[96];
  tally__cmp_quote(r, sizeof(r), got.p, got.len, SHOWN);
  tally__cmp_admin(res, "extracted %s, expected %s", r, e);
  return 0;
}

const tally_comparator_t tally_comparator_multichoice = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "multichoice",
    .parse = multichoice_parse,
    .compare = multichoice_compare,
    .free = multichoice_free,
};

/* answer_line */

#define ANSWER_LINE "(?i)Answer\\s*:\\s*([^\\n]+)"

typedef struct answer_line_conf_s {
  char *pattern;
} answer_line_conf_t;

static const tally_cfg_key_t answer_line_keys[] = {
    {.name = "pattern",
     .set = tally_cfg_set_string,
     .offset = offsetof(answer_line_conf_t, pattern)},
    {.name = NULL},
};

static void answer_line_free(void *p) {
  pattern_free(p);
  free(p);
}

static int answer_line_parse(const cJSON *params, void **state, tally_diag_t *d,
                             tally_jpath_t *path) {
  answer_line_conf_t conf = {0};
  int rc = tally__cmp_decode(answer_line_keys, params, &conf, d, path);
  pattern_t *p = NULL;
  if (rc == 0 && (p = calloc(1, sizeof(*p))) == NULL) {
    tally_diag_add(d, path, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc == 0)
    rc = pattern_compile(p, "pattern",
                         conf.pattern != NULL ? conf.pattern : ANSWER_LINE, d,
                         path);
  free(conf.pattern);
  if (rc != 0) {
    if (p != NULL)
      answer_line_free(p);
    return rc;
  }
  *state = p;
  return 0;
}

/* Math normalization into a malloc'ed string: stripped, lowercased,
 * ',' '$' '%' and ' ' removed, trailing '.' removed. */
static char *math_normal(tally__span_t s, size_t *len) {
  s = strip(s);
  char *buf = malloc(s.len * 4 + 1);
  if (buf == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < s.len;) {
    int32_t cp = utf8proc_tolower(tally_utext_next(s.p, s.len, &i));
    if (cp == ',' || cp == '$' || cp == '%' || cp == ' ')
      continue;
    o += (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)buf + o);
  }
  while (o > 0 && buf[o - 1] == '.')
    o--;
  buf[o] = '\0';
  *len = o;
  return buf;
}

static int answer_line_compare(const void *state, const char *out,
                               size_t out_len, const char *exp, size_t exp_len,
                               tally_compare_result_t *res, char *err,
                               size_t errlen) {
  const pattern_t *p = state;
  tally__cmp_begin(res, &out, &exp);
  tally__span_t ans;
  int rc = pattern_first(p, out, out_len, &ans, err, errlen);
  if (rc < 0)
    return rc;
  if (rc == 0) { /* the last non-empty line */
    tally__span_t all = strip((tally__span_t){out, out_len});
    const char *nl = all.len > 0 ? memrchr(all.p, '\n', all.len) : NULL;
    ans.p = nl ? nl + 1 : all.p;
    ans.len = all.len - (size_t)(ans.p - all.p);
  }
  size_t nlen, elen;
  char *na = math_normal(ans, &nlen);
  char *ne =
      na != NULL ? math_normal((tally__span_t){exp, exp_len}, &elen) : NULL;
  if (ne == NULL) {
    free(na);
    return TALLY_ENOMEM;
  }
  res->extracted = rc > 0 || strip(ans).len > 0;
  bool same = nlen == elen && memcmp(na, ne, nlen) == 0;
  tally__cmp_verdict(res, same ? 1 : 0);
  char e[96], r[96];
  tally__cmp_quote(e, sizeof(e), ne, elen, SHOWN);
  tally__cmp_quote(r, sizeof(r), na, nlen, SHOWN);
  tally__cmp_admin(res, "%s %s, expected %s", rc > 0 ? "answer" : "last line",
                   r, e);
  free(na);
  free(ne);
  return 0;
}

const tally_comparator_t tally_comparator_answer_line = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "answer_line",
    .parse = answer_line_parse,
    .compare = answer_line_compare,
    .free = answer_line_free,
};
