/* The comparators that give partial credit or look for an answer inside
 * the output: fuzzy (normalized Levenshtein similarity), contains,
 * token_f1 (SQuAD's F1), set_overlap (Jaccard or recall of line sets) and
 * element_ratio (line-by-line matches). */
#include "tasktypes/compare_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many bytes of a text an admin text shows. */
#define SHOWN 48

/* Normalizes out and exp at level into no and ne. Returns 0 or
 * TALLY_ENOMEM (nothing to free). */
static int normalize_both(tally__norm_t level, const char *out, size_t out_len,
                          const char *exp, size_t exp_len, tally__normed_t *no,
                          tally__normed_t *ne) {
  if (tally__cmp_normalize(level, out, out_len, no) != 0)
    return TALLY_ENOMEM;
  if (tally__cmp_normalize(level, exp, exp_len, ne) != 0) {
    tally__cmp_normed_free(no);
    return TALLY_ENOMEM;
  }
  return 0;
}

static bool same(tally__span_t a, tally__span_t b) {
  return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

/* Orders spans as memcmp orders bytes, shorter first on a tie. */
static int span_order(const void *x, const void *y) {
  const tally__span_t *a = x, *b = y;
  size_t n = a->len < b->len ? a->len : b->len;
  int c = n ? memcmp(a->p, b->p, n) : 0;
  if (c != 0)
    return c;
  return (a->len > b->len) - (a->len < b->len);
}

/* fuzzy */

typedef struct fuzzy_conf_s {
  int normalize;
  int max_cells;
} fuzzy_conf_t;

static const tally_cfg_key_t fuzzy_keys[] = {
    {.name = "normalize",
     .set = tally_cfg_set_enum,
     .offset = offsetof(fuzzy_conf_t, normalize),
     .choices = tally__norm_choices},
    {.name = "max_cells",
     .set = tally_cfg_set_int,
     .offset = offsetof(fuzzy_conf_t, max_cells),
     .min = 1,
     .max = 2000000000},
    {.name = NULL},
};

static int fuzzy_parse(const cJSON *params, void **state, tally_diag_t *d,
                       tally_jpath_t *path) {
  fuzzy_conf_t conf = {.normalize = TALLY__NORM_CASE, .max_cells = 100000000};
  int rc = tally__cmp_decode(fuzzy_keys, params, &conf, d, path);
  if (rc != 0)
    return rc;
  return tally__cmp_state(&conf, sizeof(conf), state, d, path);
}

/* The Levenshtein distance of a and b (b the shorter), one row of the
 * table at a time. Returns 0 or TALLY_ENOMEM. */
static int levenshtein(const char *a, size_t n, const char *b, size_t m,
                       size_t *dist) {
  size_t *row = malloc((m + 1) * sizeof(*row));
  if (row == NULL)
    return TALLY_ENOMEM;
  for (size_t j = 0; j <= m; j++)
    row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  *dist = row[m];
  free(row);
  return 0;
}

static int fuzzy_compare(const void *state, const char *out, size_t out_len,
                         const char *exp, size_t exp_len,
                         tally_compare_result_t *res, char *err,
                         size_t errlen) {
  (void)err;
  (void)errlen;
  const fuzzy_conf_t *conf = state;
  tally__cmp_begin(res, &out, &exp);
  tally__normed_t no, ne;
  if (normalize_both((tally__norm_t)conf->normalize, out, out_len, exp, exp_len,
                     &no, &ne) != 0)
    return TALLY_ENOMEM;
  /* A common prefix and suffix cost nothing: only the middle is
   * compared cell by cell. */
  const char *a = no.p, *b = ne.p;
  size_t n = no.len, m = ne.len, longest = n > m ? n : m;
  while (n > 0 && m > 0 && a[0] == b[0]) {
    a++, b++;
    n--, m--;
  }
  while (n > 0 && m > 0 && a[n - 1] == b[m - 1])
    n--, m--;
  int rc = 0;
  if (longest == 0 || (n == 0 && m == 0)) {
    tally__cmp_verdict(res, 1);
  } else if (n > 0 && m > 0 && (double)n * (double)m > conf->max_cells) {
    tally__cmp_admin(res,
                     "not compared: the texts differ over %zu and %zu bytes "
                     "after normalization, more than max_cells %d allows",
                     n, m, conf->max_cells);
  } else {
    size_t dist;
    rc = n >= m ? levenshtein(a, n, b, m, &dist)
                : levenshtein(b, m, a, n, &dist);
    if (rc == 0) {
      double sim = 1.0 - (double)dist / (double)longest;
      tally__cmp_verdict(res, sim);
      tally__cmp_admin(res, "similarity %.4f: %zu edits over %zu bytes", sim,
                       dist, longest);
    }
  }
  tally__cmp_normed_free(&no);
  tally__cmp_normed_free(&ne);
  return rc;
}

const tally_comparator_t tally_comparator_fuzzy = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "fuzzy",
    .parse = fuzzy_parse,
    .compare = fuzzy_compare,
    .free = free,
};

/* contains */

static const char *const sources[] = {"whole", "lines", "ignore", NULL};
enum { SOURCE_WHOLE = 0, SOURCE_LINES, SOURCE_IGNORE };

typedef struct contains_conf_s {
  int normalize;
  int expected; /* SOURCE_* */
  bool whole_words;
} contains_conf_t;

static const tally_cfg_key_t contains_keys[] = {
    {.name = "normalize",
     .set = tally_cfg_set_enum,
     .offset = offsetof(contains_conf_t, normalize),
     .choices = tally__norm_choices},
    {.name = "expected",
     .set = tally_cfg_set_enum,
     .offset = offsetof(contains_conf_t, expected),
     .choices = sources},
    {.name = "whole_words",
     .set = tally__cmp_set_bool,
     .offset = offsetof(contains_conf_t, whole_words)},
    {.name = "answers"},  /* decoded by contains_parse */
    {.name = "accepted"}, /* the same list, under the benchmarks' name */
    {.name = NULL},
};

typedef struct contains_state_s {
  contains_conf_t conf;
  tally__normed_t *answers; /* normalized, each owning its copy */
  size_t nanswers;
} contains_state_t;

static void contains_free(void *p) {
  contains_state_t *s = p;
  for (size_t i = 0; i < s->nanswers; i++)
    free(s->answers[i].owned);
  free(s->answers);
  free(s);
}

/* Decodes the answers list into s, each normalized. */
static int decode_answers(contains_state_t *s, const cJSON *list,
                          tally_diag_t *d, tally_jpath_t *path) {
  size_t old = tally_jpath_key(path, list->string);
  int rc = 0;
  int n = cJSON_GetArraySize(list);
  if (!cJSON_IsArray(list) || n == 0) {
    rc = tally_diag_add(d, path, "must be a non-empty list of strings");
    tally_jpath_restore(path, old);
    return rc;
  }
  s->answers = calloc((size_t)n, sizeof(*s->answers));
  if (s->answers == NULL) {
    tally_diag_add(d, path, "out of memory");
    tally_jpath_restore(path, old);
    return TALLY_ENOMEM;
  }
  size_t i = 0;
  for (const cJSON *e = list->child; e; e = e->next, i++) {
    size_t at = tally_jpath_index(path, i);
    tally__normed_t norm;
    if (!cJSON_IsString(e)) {
      rc = tally_diag_add(d, path, "must be a string");
    } else if (tally__cmp_normalize((tally__norm_t)s->conf.normalize,
                                    e->valuestring, strlen(e->valuestring),
                                    &norm) != 0) {
      tally_diag_add(d, path, "out of memory");
      rc = TALLY_ENOMEM;
    } else if (norm.len == 0) {
      tally__cmp_normed_free(&norm);
      rc = tally_diag_add(d, path, "is empty after normalization");
    } else if (norm.owned == NULL && (norm.owned = strdup(norm.p)) == NULL) {
      tally_diag_add(d, path, "out of memory");
      rc = TALLY_ENOMEM;
    } else {
      norm.p = norm.owned;
      s->answers[s->nanswers++] = norm;
    }
    tally_jpath_restore(path, at);
  }
  tally_jpath_restore(path, old);
  return rc;
}

static int contains_parse(const cJSON *params, void **state, tally_diag_t *d,
                          tally_jpath_t *path) {
  contains_state_t *s = calloc(1, sizeof(*s));
  if (s == NULL) {
    tally_diag_add(d, path, "out of memory");
    return TALLY_ENOMEM;
  }
  s->conf.normalize = TALLY__NORM_UNICODE;
  const cJSON *found[6] = {NULL};
  int rc =
      params ? tally_cfg_decode(contains_keys, params, &s->conf, d, path, found)
             : 0;
  if (rc == 0 && found[3] != NULL && found[4] != NULL)
    rc = tally_diag_add(d, path,
                        "give answers or accepted, not both (the same list)");
  if (rc == 0 && (found[3] != NULL || found[4] != NULL))
    rc = decode_answers(s, found[3] != NULL ? found[3] : found[4], d, path);
  if (rc == 0 && s->conf.expected == SOURCE_IGNORE && s->nanswers == 0)
    rc = tally_diag_add(
        d, path, "needs answers (or accepted) when expected is \"ignore\"");
  if (rc != 0) {
    contains_free(s);
    return rc;
  }
  *state = s;
  return 0;
}

static bool word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

/* Whether hay holds needle (non-empty), with no word byte on either side
 * when whole_words is set. */
static bool holds(const char *hay, size_t n, const char *needle, size_t m,
                  bool whole_words) {
  size_t from = 0;
  while (from + m <= n) {
    const char *at = memmem(hay + from, n - from, needle, m);
    if (at == NULL)
      return false;
    size_t i = (size_t)(at - hay);
    if (!whole_words || ((i == 0 || !word_byte((unsigned char)hay[i - 1])) &&
                         (i + m == n || !word_byte((unsigned char)hay[i + m]))))
      return true;
    from = i + 1;
  }
  return false;
}

static int contains_compare(const void *state, const char *out, size_t out_len,
                            const char *exp, size_t exp_len,
                            tally_compare_result_t *res, char *err,
                            size_t errlen) {
  const contains_state_t *s = state;
  tally__norm_t level = (tally__norm_t)s->conf.normalize;
  tally__cmp_begin(res, &out, &exp);
  tally__normed_t no;
  if (tally__cmp_normalize(level, out, out_len, &no) != 0)
    return TALLY_ENOMEM;
  size_t tried = 0;
  bool hit = false;
  for (size_t i = 0; i < s->nanswers && !hit; i++, tried++)
    hit = holds(no.p, no.len, s->answers[i].p, s->answers[i].len,
                s->conf.whole_words);
  int rc = 0;
  if (!hit && s->conf.expected != SOURCE_IGNORE) {
    tally__span_t whole = {exp, exp_len}, *lines = &whole;
    size_t nlines = 1;
    if (s->conf.expected == SOURCE_LINES)
      rc = tally__cmp_lines(exp, exp_len, &lines, &nlines);
    for (size_t i = 0; rc == 0 && i < nlines && !hit; i++) {
      tally__normed_t na;
      if (tally__cmp_normalize(level, lines[i].p, lines[i].len, &na) != 0) {
        rc = TALLY_ENOMEM;
        break;
      }
      if (na.len > 0) {
        tried++;
        hit = holds(no.p, no.len, na.p, na.len, s->conf.whole_words);
      }
      tally__cmp_normed_free(&na);
    }
    if (lines != &whole)
      free(lines);
  }
  tally__cmp_normed_free(&no);
  if (rc != 0)
    return rc;
  if (tried == 0) {
    snprintf(err, errlen, "no accepted answer: the expected output is blank");
    return TALLY_EJOB;
  }
  tally__cmp_verdict(res, hit ? 1 : 0);
  if (!hit)
    tally__cmp_admin(res, "none of the %zu accepted answers is in the output",
                     tried);
  return 0;
}

const tally_comparator_t tally_comparator_contains = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "contains",
    .parse = contains_parse,
    .compare = contains_compare,
    .free = contains_free,
};

/* The comparators below only take "normalize" (and set_overlap a
 * method). */

static const char *const methods[] = {"jaccard", "intersection", NULL};

typedef struct norm_conf_s {
  int normalize;
  int method; /* set_overlap: 0 jaccard, 1 intersection */
} norm_conf_t;

static const tally_cfg_key_t norm_keys[] = {
    {.name = "normalize",
     .set = tally_cfg_set_enum,
     .offset = offsetof(norm_conf_t, normalize),
     .choices = tally__norm_choices},
    {.name = NULL},
};

static const tally_cfg_key_t set_keys[] = {
    {.name = "normalize",
     .set = tally_cfg_set_enum,
     .offset = offsetof(norm_conf_t, normalize),
     .choices = tally__norm_choices},
    {.name = "method",
     .set = tally_cfg_set_enum,
     .offset = offsetof(norm_conf_t, method),
     .choices = methods},
    {.name = NULL},
};

static int norm_parse(const tally_cfg_key_t *keys, tally__norm_t level,
                      const cJSON *params, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  norm_conf_t conf = {.normalize = level};
  int rc = tally__cmp_decode(keys, params, &conf, d, path);
  if (rc != 0)
    return rc;
  return tally__cmp_state(&conf, sizeof(conf), state, d, path);
}

/* token_f1 */

static int f1_parse(const cJSON *params, void **state, tally_diag_t *d,
                    tally_jpath_t *path) {
  return norm_parse(norm_keys, TALLY__NORM_ANSWER, params, state, d, path);
}

/* How many items a and b (both sorted) have in common, as multisets. */
static size_t common(const tally__span_t *a, size_t n, const tally__span_t *b,
                     size_t m) {
  size_t i = 0, j = 0, k = 0;
  while (i < n && j < m) {
    int c = span_order(&a[i], &b[j]);
    if (c == 0)
      k++, i++, j++;
    else if (c < 0)
      i++;
    else
      j++;
  }
  return k;
}

/* A token and how many times the expected output still holds it. */
typedef struct slot_s {
  const char *p; /* NULL for an empty slot */
  size_t len;
  size_t count;
} slot_t;

static uint64_t fnv1a(const char *p, size_t len) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)p[i]) * 1099511628211u;
  return h;
}

/* Finds tok's slot in a table of cap slots (a power of two, never full):
 * its own, or the empty one where it would go. */
static slot_t *slot_of(slot_t *t, size_t cap, tally__span_t tok) {
  size_t i = (size_t)fnv1a(tok.p, tok.len) & (cap - 1);
  while (t[i].p != NULL &&
         !(t[i].len == tok.len && memcmp(t[i].p, tok.p, tok.len) == 0))
    i = (i + 1) & (cap - 1);
  return &t[i];
}

/* How many tokens out and exp have in common, as multisets, in linear
 * time: exp's tokens are counted in a hash table, and out's take from
 * it. Returns 0 or TALLY_ENOMEM. */
static int common_tokens(const tally__span_t *out, size_t n,
                         const tally__span_t *exp, size_t m, size_t *k) {
  size_t cap = 16;
  while (cap < 2 * m)
    cap *= 2;
  slot_t *t = calloc(cap, sizeof(*t));
  if (t == NULL)
    return TALLY_ENOMEM;
  for (size_t j = 0; j < m; j++) {
    slot_t *s = slot_of(t, cap, exp[j]);
    if (s->p == NULL)
      *s = (slot_t){exp[j].p, exp[j].len, 0};
    s->count++;
  }
  *k = 0;
  for (size_t i = 0; i < n; i++) {
    slot_t *s = slot_of(t, cap, out[i]);
    if (s->p != NULL && s->count > 0) {
      s->count--;
      (*k)++;
    }
  }
  free(t);
  return 0;
}

static int f1_compare(const void *state, const char *out, size_t out_len,
                      const char *exp, size_t exp_len,
                      tally_compare_result_t *res, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  const norm_conf_t *conf = state;
  tally__cmp_begin(res, &out, &exp);
  tally__normed_t no, ne;
  if (normalize_both((tally__norm_t)conf->normalize, out, out_len, exp, exp_len,
                     &no, &ne) != 0)
    return TALLY_ENOMEM;
  tally__span_t *to = NULL, *te = NULL;
  size_t n = 0, m = 0;
  int rc = tally__cmp_tokens(no.p, no.len, &to, &n);
  if (rc == 0)
    rc = tally__cmp_tokens(ne.p, ne.len, &te, &m);
  if (rc == 0) {
    /* As SQuAD: when either side has no tokens, F1 is whether both have
     * none. */
    size_t k = 0;
    double f1;
    if (n == 0 || m == 0) {
      f1 = n == m ? 1 : 0;
    } else if ((rc = common_tokens(to, n, te, m, &k)) != 0) {
      f1 = 0;
    } else {
      double p = (double)k / (double)n, r = (double)k / (double)m;
      f1 = k == 0 ? 0 : 2 * p * r / (p + r);
    }
    tally__cmp_verdict(res, f1 > 1 ? 1 : f1);
    if (rc == 0 && f1 < 1)
      tally__cmp_admin(res,
                       "F1 %.4f: %zu tokens in common, %zu read, %zu "
                       "expected",
                       f1, k, n, m);
  }
  free(to);
  free(te);
  tally__cmp_normed_free(&no);
  tally__cmp_normed_free(&ne);
  return rc;
}

const tally_comparator_t tally_comparator_token_f1 = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "token_f1",
    .parse = f1_parse,
    .compare = f1_compare,
    .free = free,
};

/* The lines of a text, each normalized on its own. */
typedef struct nlines_s {
  tally__span_t *lines; /* into text or into buf */
  size_t count;
  char *buf; /* the normalized lines, back to back */
} nlines_t;

static void nlines_free(nlines_t *l) {
  free(l->lines);
  free(l->buf);
}

/* Splits s into lines (as white_diff does) and normalizes each at level.
 * Returns 0 or TALLY_ENOMEM (nothing to free). */
static int nlines(tally__norm_t level, const char *s, size_t n, nlines_t *out) {
  memset(out, 0, sizeof(*out));
  if (tally__cmp_lines(s, n, &out->lines, &out->count) != 0)
    return TALLY_ENOMEM;
  if (level == TALLY__NORM_NONE)
    return 0;
  /* Normalizing never makes a line longer. */
  out->buf = malloc(n + 1);
  if (out->buf == NULL) {
    nlines_free(out);
    return TALLY_ENOMEM;
  }
  size_t used = 0;
  for (size_t i = 0; i < out->count; i++) {
    tally__normed_t nl;
    if (tally__cmp_normalize(level, out->lines[i].p, out->lines[i].len, &nl) !=
        0) {
      nlines_free(out);
      return TALLY_ENOMEM;
    }
    memcpy(out->buf + used, nl.p, nl.len);
    out->lines[i] = (tally__span_t){out->buf + used, nl.len};
    used += nl.len;
    tally__cmp_normed_free(&nl);
  }
  return 0;
}

/* Sorts lines, drops empty ones and duplicates; returns how many stay. */
static size_t line_set(tally__span_t *lines, size_t n) {
  if (n == 0)
    return 0;
  qsort(lines, n, sizeof(*lines), span_order);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (lines[i].len > 0 && (k == 0 || !same(lines[k - 1], lines[i])))
      lines[k++] = lines[i];
  return k;
}

/* set_overlap */

static int set_parse(const cJSON *params, void **state, tally_diag_t *d,
                     tally_jpath_t *path) {
  return norm_parse(set_keys, TALLY__NORM_SPACE, params, state, d, path);
}

static int set_compare(const void *state, const char *out, size_t out_len,
                       const char *exp, size_t exp_len,
                       tally_compare_result_t *res, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  const norm_conf_t *conf = state;
  tally__cmp_begin(res, &out, &exp);
  nlines_t lo, le;
  if (nlines((tally__norm_t)conf->normalize, out, out_len, &lo) != 0)
    return TALLY_ENOMEM;
  if (nlines((tally__norm_t)conf->normalize, exp, exp_len, &le) != 0) {
    nlines_free(&lo);
    return TALLY_ENOMEM;
  }
  size_t a = line_set(lo.lines, lo.count), b = line_set(le.lines, le.count);
  size_t k = common(lo.lines, a, le.lines, b);
  double v;
  if (b == 0)
    v = a == 0 ? 1 : 0;
  else if (conf->method == 0)
    v = (double)k / (double)(a + b - k);
  else
    v = (double)k / (double)b;
  tally__cmp_verdict(res, v);
  if (v < 1)
    tally__cmp_admin(res,
                     "%zu of the %zu expected lines read, and %zu other "
                     "lines",
                     k, b, a - k);
  nlines_free(&lo);
  nlines_free(&le);
  return 0;
}

const tally_comparator_t tally_comparator_set_overlap = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "set_overlap",
    .parse = set_parse,
    .compare = set_compare,
    .free = free,
};

/* element_ratio */

static int ratio_parse(const cJSON *params, void **state, tally_diag_t *d,
                       tally_jpath_t *path) {
  return norm_parse(norm_keys, TALLY__NORM_SPACE, params, state, d, path);
}

/* The number of lines left once trailing empty ones are dropped. */
static size_t trimmed(const nlines_t *l) {
  size_t n = l->count;
  while (n > 0 && l->lines[n - 1].len == 0)
    n--;
  return n;
}

static int ratio_compare(const void *state, const char *out, size_t out_len,
                         const char *exp, size_t exp_len,
                         tally_compare_result_t *res, char *err,
                         size_t errlen) {
  (void)err;
  (void)errlen;
  const norm_conf_t *conf = state;
  tally__cmp_begin(res, &out, &exp);
  nlines_t lo, le;
  if (nlines((tally__norm_t)conf->normalize, out, out_len, &lo) != 0)
    return TALLY_ENOMEM;
  if (nlines((tally__norm_t)conf->normalize, exp, exp_len, &le) != 0) {
    nlines_free(&lo);
    return TALLY_ENOMEM;
  }
  size_t n = trimmed(&lo), m = trimmed(&le);
  size_t most = n > m ? n : m, both = n < m ? n : m, k = 0, first = 0;
  for (size_t i = 0; i < both; i++) {
    if (same(lo.lines[i], le.lines[i]))
      k++;
    else if (first == 0)
      first = i + 1;
  }
  if (first == 0 && n != m)
    first = both + 1;
  tally__cmp_verdict(res, most == 0 ? 1 : (double)k / (double)most);
  if (first > 0) {
    char e[80], r[80];
    if (first <= m)
      tally__cmp_quote(e, sizeof(e), le.lines[first - 1].p,
                       le.lines[first - 1].len, SHOWN);
    else
      snprintf(e, sizeof(e), "end of output");
    if (first <= n)
      tally__cmp_quote(r, sizeof(r), lo.lines[first - 1].p,
                       lo.lines[first - 1].len, SHOWN);
    else
      snprintf(r, sizeof(r), "end of output");
    tally__cmp_admin(res,
                     "%zu of %zu lines match; line %zu: expected %s, read %s",
                     k, most, first, e, r);
  }
  nlines_free(&lo);
  nlines_free(&le);
  return 0;
}

const tally_comparator_t tally_comparator_element_ratio = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "element_ratio",
    .parse = ratio_parse,
    .compare = ratio_compare,
    .free = free,
};
