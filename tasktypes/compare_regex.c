/* The regex comparator: the output must match a PCRE2 pattern, and an
 * extraction pattern may pull the answer out of it to compare with the
 * expected output. Match, depth and heap limits keep a pattern that
 * backtracks catastrophically from hanging the worker. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tasktypes/compare_util.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most heap one match may use for its backtracking frames, in KiB. */
#define HEAP_LIMIT_KIB (64 * 1024)

/* How many bytes of an answer an admin text shows. */
#define SHOWN 64

static const char *const occurrences[] = {"first", "last", NULL};

typedef struct regex_conf_s {
  char *pattern;
  char *extract;
  int normalize;  /* tally__norm_t */
  int occurrence; /* 0 first, 1 last */
  bool caseless, multiline, dotall, utf;
  int match_limit;
  int depth_limit;
} regex_conf_t;

static const tally_cfg_key_t regex_keys[] = {
    {.name = "pattern",
     .set = tally_cfg_set_string,
     .offset = offsetof(regex_conf_t, pattern)},
    {.name = "extract",
     .set = tally_cfg_set_string,
     .offset = offsetof(regex_conf_t, extract)},
    {.name = "normalize",
     .set = tally_cfg_set_enum,
     .offset = offsetof(regex_conf_t, normalize),
     .choices = tally__norm_choices},
    {.name = "occurrence",
     .set = tally_cfg_set_enum,
     .offset = offsetof(regex_conf_t, occurrence),
     .choices = occurrences},
    {.name = "caseless",
     .set = tally__cmp_set_bool,
     .offset = offsetof(regex_conf_t, caseless)},
    {.name = "multiline",
     .set = tally__cmp_set_bool,
     .offset = offsetof(regex_conf_t, multiline)},
    {.name = "dotall",
     .set = tally__cmp_set_bool,
     .offset = offsetof(regex_conf_t, dotall)},
    {.name = "utf",
     .set = tally__cmp_set_bool,
     .offset = offsetof(regex_conf_t, utf)},
    {.name = "match_limit",
     .set = tally_cfg_set_int,
     .offset = offsetof(regex_conf_t, match_limit),
     .min = 1,
     .max = 2000000000},
    {.name = "depth_limit",
     .set = tally_cfg_set_int,
     .offset = offsetof(regex_conf_t, depth_limit),
     .min = 1,
     .max = 10000000},
    {.name = NULL},
};

typedef struct regex_state_s {
  pcre2_code *pattern; /* NULL when there is none */
  pcre2_code *extract; /* NULL when there is none */
  /* Only read while matching, so threads may share it. */
  pcre2_match_context *mctx;
  tally__norm_t normalize;
  bool last;
  bool utf;
  int match_limit;
  int depth_limit;
} regex_state_t;

static void regex_free(void *p) {
  regex_state_t *s = p;
  pcre2_code_free(s->pattern);
  pcre2_code_free(s->extract);
  pcre2_match_context_free(s->mctx);
  free(s);
}

/* Compiles the pattern of key, reporting a failure at its path. */
static int compile(const char *key, const char *text, uint32_t options,
                   pcre2_code **out, tally_diag_t *d, tally_jpath_t *path) {
  int errcode;
  PCRE2_SIZE erroff;
  *out = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, options,
                       &errcode, &erroff, NULL);
  if (*out != NULL)
    return 0;
  PCRE2_UCHAR msg[160];
  pcre2_get_error_message(errcode, msg, sizeof(msg));
  size_t old = tally_jpath_key(path, key);
  int rc = tally_diag_add(d, path, "does not compile at offset %zu: %s",
                          (size_t)erroff, (const char *)msg);
  tally_jpath_restore(path, old);
  return rc;
}

static int regex_parse(const cJSON *params, void **state, tally_diag_t *d,
                       tally_jpath_t *path) {
  regex_conf_t conf = {.normalize = TALLY__NORM_SPACE,
                       .match_limit = 10000000,
                       .depth_limit = 100000};
  int rc = tally__cmp_decode(regex_keys, params, &conf, d, path);
  if (rc == 0 && conf.pattern == NULL && conf.extract == NULL)
    rc = tally_diag_add(d, path, "needs a pattern, an extract pattern or both");
  regex_state_t *s = NULL;
  if (rc == 0 && (s = calloc(1, sizeof(*s))) == NULL) {
    tally_diag_add(d, path, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc == 0) {
    s->normalize = (tally__norm_t)conf.normalize;
    s->last = conf.occurrence == 1;
    s->utf = conf.utf;
    s->match_limit = conf.match_limit;
    s->depth_limit = conf.depth_limit;
    /* Without utf, a pattern may not turn UTF on with (*UTF): the output
     * is bytes. With it, invalid UTF-8 in the output never matches
     * rather than failing. */
    uint32_t options =
        (conf.caseless ? PCRE2_CASELESS : 0) |
        (conf.multiline ? PCRE2_MULTILINE : 0) |
        (conf.dotall ? PCRE2_DOTALL : 0) |
        (conf.utf ? PCRE2_UTF | PCRE2_MATCH_INVALID_UTF : PCRE2_NEVER_UTF);
    if (conf.pattern != NULL)
      rc = compile("pattern", conf.pattern, options, &s->pattern, d, path);
    if (conf.extract != NULL) {
      int erc = compile("extract", conf.extract, options, &s->extract, d, path);
      rc = rc != 0 ? rc : erc;
    }
    if (rc == 0) {
      s->mctx = pcre2_match_context_create(NULL);
      if (s->mctx == NULL) {
        tally_diag_add(d, path, "out of memory");
        rc = TALLY_ENOMEM;
      } else {
        pcre2_set_match_limit(s->mctx, (uint32_t)conf.match_limit);
        pcre2_set_depth_limit(s->mctx, (uint32_t)conf.depth_limit);
        pcre2_set_heap_limit(s->mctx, HEAP_LIMIT_KIB);
      }
    }
    if (rc != 0)
      regex_free(s);
    else
      *state = s;
  }
  free(conf.pattern);
  free(conf.extract);
  return rc;
}

/* Turns a failed pcre2_match into a job error naming the limit hit. */
static int match_error(const regex_state_t *s, const char *which, int m,
                       char *err, size_t errlen) {
  if (m == PCRE2_ERROR_NOMEMORY)
    return TALLY_ENOMEM;
  if (m == PCRE2_ERROR_MATCHLIMIT)
    snprintf(err, errlen,
             "the %s hit its match limit (match_limit %d) on the "
             "output: it backtracks too much",
             which, s->match_limit);
  else if (m == PCRE2_ERROR_DEPTHLIMIT)
    snprintf(err, errlen,
             "the %s hit its depth limit (depth_limit %d) on the "
             "output: it backtracks too deep",
             which, s->depth_limit);
  else if (m == PCRE2_ERROR_HEAPLIMIT)
    snprintf(err, errlen, "the %s hit the heap limit (%d MiB) on the output",
             which, HEAP_LIMIT_KIB / 1024);
  else {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(m, msg, sizeof(msg));
    snprintf(err, errlen, "the %s fails on the output: %s", which,
             (const char *)msg);
  }
  return TALLY_EJOB;
}

/* Runs code on s from start. Returns 1 for a match (its ovector in md), 0
 * for none, or a job error. */
static int run(const regex_state_t *s, const pcre2_code *code,
               const char *which, const char *subject, size_t len, size_t start,
               pcre2_match_data *md, char *err, size_t errlen) {
  int m = pcre2_match(code, (PCRE2_SPTR)subject, len, start, 0, md, s->mctx);
  if (m == PCRE2_ERROR_NOMATCH)
    return 0;
  if (m < 0)
    return match_error(s, which, m, err, errlen);
  return 1;
}

/* Finds the answer the extract pattern pulls out of out: its first
 * capture group that took part in the match, or the whole match, of the
 * first or the last match. Returns 1 with *ans set, 0 for none, or a job
 * error. */
static int extract(const regex_state_t *s, const char *out, size_t out_len,
                   pcre2_match_data *md, tally__span_t *ans, char *err,
                   size_t errlen) {
  size_t start = 0;
  int found = 0;
  for (;;) {
    int m = run(s, s->extract, "extract pattern", out, out_len, start, md, err,
                errlen);
    if (m <= 0)
      return m < 0 ? m : found;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    uint32_t pairs = pcre2_get_ovector_count(md);
    size_t k = 0;
    for (uint32_t g = 1; g < pairs && k == 0; g++)
      if (ov[2 * g] != PCRE2_UNSET)
        k = g;
    ans->p = out + ov[2 * k];
    ans->len = ov[2 * k + 1] - ov[2 * k];
    found = 1;
    if (!s->last)
      return 1;
    /* The next match starts after this one, or one character on after
     * an empty one. */
    start = ov[1];
    if (ov[1] <= ov[0]) {
      if (start >= out_len)
        return 1;
      start++;
      while (s->utf && start < out_len &&
             ((unsigned char)out[start] & 0xc0) == 0x80)
        start++;
    }
    if (start > out_len)
      return 1;
  }
}

static int regex_compare(const void *state, const char *out, size_t out_len,
                         const char *exp, size_t exp_len,
                         tally_compare_result_t *res, char *err,
                         size_t errlen) {
  const regex_state_t *s = state;
  tally__cmp_begin(res, &out, &exp);
  const pcre2_code *biggest = s->pattern ? s->pattern : s->extract;
  if (s->pattern && s->extract) {
    uint32_t a, b;
    pcre2_pattern_info(s->pattern, PCRE2_INFO_CAPTURECOUNT, &a);
    pcre2_pattern_info(s->extract, PCRE2_INFO_CAPTURECOUNT, &b);
    biggest = a > b ? s->pattern : s->extract;
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(biggest, NULL);
  if (md == NULL)
    return TALLY_ENOMEM;
  int rc = 0;
  if (s->pattern != NULL) {
    rc = run(s, s->pattern, "pattern", out, out_len, 0, md, err, errlen);
    if (rc == 0)
      tally__cmp_admin(res, "the output does not match the pattern");
    if (rc == 0 && s->extract != NULL)
      res->extracted = 0;
    if (rc <= 0 || s->extract == NULL) {
      if (rc == 1)
        tally__cmp_verdict(res, 1);
      pcre2_match_data_free(md);
      return rc < 0 ? rc : 0;
    }
  }
  tally__span_t ans;
  rc = extract(s, out, out_len, md, &ans, err, errlen);
  pcre2_match_data_free(md);
  if (rc <= 0) {
    if (rc == 0) {
      res->extracted = 0;
      tally__cmp_admin(res, "the extract pattern finds no answer in the "
                            "output");
    }
    return rc;
  }
  res->extracted = 1;
  tally__normed_t na, ne;
  if (tally__cmp_normalize(s->normalize, ans.p, ans.len, &na) != 0)
    return TALLY_ENOMEM;
  if (tally__cmp_normalize(s->normalize, exp, exp_len, &ne) != 0) {
    tally__cmp_normed_free(&na);
    return TALLY_ENOMEM;
  }
  if (na.len == ne.len && memcmp(na.p, ne.p, na.len) == 0) {
    tally__cmp_verdict(res, 1);
  } else {
    char e[96], r[96];
    tally__cmp_quote(e, sizeof(e), ne.p, ne.len, SHOWN);
    tally__cmp_quote(r, sizeof(r), na.p, na.len, SHOWN);
    tally__cmp_admin(res, "extracted %s, expected %s", r, e);
  }
  tally__cmp_normed_free(&na);
  tally__cmp_normed_free(&ne);
  return 0;
}

const tally_comparator_t tally_comparator_regex = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "regex",
    .parse = regex_parse,
    .compare = regex_compare,
    .free = regex_free,
};
