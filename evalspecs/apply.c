/* The validators of evaluation specs applied to resolved texts, with the
 * reference's rules, verdicts, scores and reasons. */
#include "evalspecs/apply.h"
#include "config/error.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/textops.h"
#include "evalspecs/validators.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fuzzy_match refuses inputs longer than this, in code points. */
#define FUZZY_MAX_RUNES 100000

void tally_es_outcome_init(tally_es_outcome_t *o) {
  memset(o, 0, sizeof(*o));
  tally_buf_init(&o->reason);
}

void tally_es_outcome_close(tally_es_outcome_t *o) {
  tally_buf_close(&o->reason);
  cJSON_Delete(o->evidence);
  memset(o, 0, sizeof(*o));
}

static void reasonf(tally_es_outcome_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void reasonf(tally_es_outcome_t *o, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, msg);
}

static void verdict(tally_es_outcome_t *o, bool pass, double score) {
  o->verdict = pass ? TALLY_ES_PASS : TALLY_ES_FAIL;
  o->has_score = true;
  o->score = score;
}

/* validatorError: verdict error, "context: err", evidence.error = err. */
static void error_of(tally_es_outcome_t *o, const char *context,
                     const char *err) {
  o->verdict = TALLY_ES_VERROR;
  o->has_score = false;
  reasonf(o, "%s: %s", context, err);
  cJSON_AddStringToObject(o->evidence, "error", err);
}

/* strconv.ParseFloat: the whole text, Go's syntax; its error text. */
static bool parse_float(const char *s, double *out, char *err, size_t len) {
  char *q = tally_go_quoted(s);
  const char *shown = q ? q : "\"\"";
  char *end = NULL;
  errno = 0;
  /* Go reads no leading space, no "0x" without p exponent... strtod is
   * close; refuse what Go refuses most visibly: spaces and empty text. */
  bool space = s[0] == '\0' || tally_go_is_space((unsigned char)s[0]);
  double v = space ? 0 : strtod(s, &end);
  bool ok = !space && end != NULL && *end == '\0' && end != s;
  if (!ok) {
    snprintf(err, len, "strconv.ParseFloat: parsing %s: invalid syntax", shown);
  } else if (errno == ERANGE && isinf(v)) {
    snprintf(err, len, "strconv.ParseFloat: parsing %s: value out of range",
             shown);
    ok = false;
  }
  free(q);
  *out = v;
  return ok;
}

/* [+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?, leftmost; its span. */
static bool find_number(const char *s, size_t *start, size_t *len) {
  for (size_t i = 0; s[i]; i++) {
    size_t j = i;
    if (s[j] == '+' || s[j] == '-')
      j++;
    size_t d = j;
    while (s[d] >= '0' && s[d] <= '9')
      d++;
    size_t end;
    if (d > j) {
      end = d;
      if (s[d] == '.' && s[d + 1] >= '0' && s[d + 1] <= '9') {
        end = d + 1;
        while (s[end] >= '0' && s[end] <= '9')
          end++;
      }
    } else if (s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9') {
      end = j + 1;
      while (s[end] >= '0' && s[end] <= '9')
        end++;
    } else {
      continue;
    }
    if (s[end] == 'e' || s[end] == 'E') {
      size_t e = end + 1;
      if (s[e] == '+' || s[e] == '-')
        e++;
      if (s[e] >= '0' && s[e] <= '9') {
        while (s[e] >= '0' && s[e] <= '9')
          e++;
        end = e;
      }
    }
    *start = i;
    *len = end - i;
    return true;
  }
  return false;
}

/* parseNumericValue: the number of raw, extracted or whole. Returns true,
 * or false with err set; parsed receives the text parsed. */
static bool numeric_value(const char *raw, bool extract, double *out,
                          char **parsed, char *err, size_t errlen) {
  *parsed = NULL;
  if (extract) {
    char *cur = tally_es_strip_currency(raw);
    if (cur == NULL) {
      snprintf(err, errlen, "out of memory");
      return false;
    }
    size_t k = 0;
    for (size_t i = 0; cur[i]; i++)
      if (cur[i] != ',' && cur[i] != '%')
        cur[k++] = cur[i];
    cur[k] = '\0';
    size_t st, n;
    char *trimmed = tally_go_trimmed(cur);
    free(cur);
    if (trimmed == NULL || !find_number(trimmed, &st, &n)) {
      char *q = tally_go_quoted(raw);
      snprintf(err, errlen, "no numeric value found in %s", q ? q : "\"\"");
      free(q);
      free(trimmed);
      return false;
    }
    memmove(trimmed, trimmed + st, n);
    trimmed[n] = '\0';
    *parsed = trimmed;
  } else {
    *parsed = tally_go_trimmed(raw);
    if (*parsed == NULL) {
      snprintf(err, errlen, "out of memory");
      return false;
    }
  }
  return parse_float(*parsed, out, err, errlen);
}

static double round_significant(double v, long long digits) {
  if (v == 0)
    return 0;
  double d = floor(log10(fabs(v))) + 1;
  double p = pow(10, (double)digits - d);
  return round(v * p) / p;
}

static void numeric_match(const tally_es_validator_t *v, const char *actual,
                          const char *expected, tally_es_outcome_t *o) {
  const tally_es_numeric_t *c = v->state;
  char err[512];
  double a = 0, e = 0;
  char *ap = NULL, *ep = NULL;
  if (!numeric_value(expected, c->extract_number, &e, &ep, err, sizeof(err))) {
    cJSON_AddStringToObject(o->evidence, "expected_raw", expected);
    cJSON_AddBoolToObject(o->evidence, "extract_number", c->extract_number);
    cJSON_AddStringToObject(o->evidence, "expected_parsed", ep ? ep : "");
    error_of(o, "parse expected numeric value", err);
    free(ep);
    return;
  }
  if (!numeric_value(actual, c->extract_number, &a, &ap, err, sizeof(err))) {
    cJSON_AddStringToObject(o->evidence, "actual_raw", actual);
    cJSON_AddBoolToObject(o->evidence, "extract_number", c->extract_number);
    cJSON_AddStringToObject(o->evidence, "actual_parsed", ap ? ap : "");
    error_of(o, "parse actual numeric value", err);
    free(ap);
    free(ep);
    return;
  }
  if (c->has_digits && c->significant_digits > 0) {
    a = round_significant(a, c->significant_digits);
    e = round_significant(e, c->significant_digits);
  }
  double absd = fabs(a - e), reld = 0;
  if (e != 0)
    reld = absd / fabs(e);
  else if (absd != 0)
    reld = INFINITY;
  cJSON *ev = o->evidence;
  cJSON_AddStringToObject(ev, "actual_raw", actual);
  cJSON_AddStringToObject(ev, "expected_raw", expected);
  cJSON_AddStringToObject(ev, "actual_parsed", ap);
  cJSON_AddStringToObject(ev, "expected_parsed", ep);
  cJSON_AddNumberToObject(ev, "actual_numeric", a);
  cJSON_AddNumberToObject(ev, "expected_numeric", e);
  cJSON_AddNumberToObject(ev, "absolute_difference", absd);
  cJSON_AddNumberToObject(ev, "relative_difference", reld);
  cJSON_AddBoolToObject(ev, "extract_number", c->extract_number);
  bool pass = false;
  if (!c->has_abs && !c->has_rel) {
    pass = a == e;
  } else {
    if (c->has_abs) {
      cJSON_AddNumberToObject(ev, "absolute_tolerance", c->abs_tol);
      pass = pass || absd <= c->abs_tol;
    }
    if (c->has_rel) {
      cJSON_AddNumberToObject(ev, "relative_tolerance", c->rel_tol);
      pass = pass || reld <= c->rel_tol;
    }
  }
  verdict(o, pass, pass ? 1 : 0);
  if (!pass) {
    char x[40], y[40];
    tally_go_fmt_v(a, x);
    tally_go_fmt_v(e, y);
    reasonf(o, "actual %s is not within tolerance of expected %s", x, y);
  }
  free(ap);
  free(ep);
}

/* Levenshtein distance over code points, two rows. */
static size_t levenshtein(const int32_t *a, size_t na, const int32_t *b,
                          size_t nb, bool *oom) {
  if (na == 0)
    return nb;
  if (nb == 0)
    return na;
  if (na > nb) {
    const int32_t *t = a;
    a = b;
    b = t;
    size_t tn = na;
    na = nb;
    nb = tn;
  }
  size_t *prev = malloc((na + 1) * sizeof(*prev)),
         *cur = malloc((na + 1) * sizeof(*cur));
  if (prev == NULL || cur == NULL) {
    free(prev);
    free(cur);
    *oom = true;
    return 0;
  }
  for (size_t i = 0; i <= na; i++)
    prev[i] = i;
  for (size_t j = 1; j <= nb; j++) {
    cur[0] = j;
    for (size_t i = 1; i <= na; i++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t x = cur[i - 1] + 1, y = prev[i] + 1, z = prev[i - 1] + cost;
      cur[i] = x < y ? (x < z ? x : z) : (y < z ? y : z);
    }
    size_t *t = prev;
    prev = cur;
    cur = t;
  }
  size_t d = prev[na];
  free(prev);
  free(cur);
  return d;
}

static size_t rune_count(const char *s, size_t limit, bool *over) {
  size_t len = strlen(s), n = 0;
  for (size_t i = 0; i < len; n++) {
    int32_t cp;
    i += tally_go_decode(s + i, len - i, &cp);
    if (n + 1 > limit) {
      *over = true;
      return n + 1;
    }
  }
  return n;
}

static void fuzzy_match(const tally_es_validator_t *v, const char *actual,
                        const char *expected, tally_es_outcome_t *o) {
  const tally_es_fuzzy_t *c = v->state;
  double threshold = c->has_threshold ? c->threshold : 0.8;
  if (threshold < 0)
    threshold = 0;
  if (threshold > 1)
    threshold = 1;
  char *a = strdup(actual), *b = strdup(expected);
  for (int k = 0; k < 2 && a != NULL && b != NULL; k++) {
    int steps[2] = {TALLY_ES_TRIM, TALLY_ES_COLLAPSE_WHITESPACE};
    if (!(k == 0 ? c->normalize : c->case_insensitive))
      continue;
    for (int s = 0; s < (k == 0 ? 2 : 1) && a != NULL && b != NULL; s++) {
      int step = k == 0 ? steps[s] : TALLY_ES_LOWERCASE;
      char *na = tally_es_step(step, a), *nb = tally_es_step(step, b);
      free(a);
      free(b);
      a = na;
      b = nb;
    }
  }
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    reasonf(o, "out of memory");
    o->verdict = TALLY_ES_VERROR;
    return;
  }
  bool over = false;
  size_t la = rune_count(a, FUZZY_MAX_RUNES, &over);
  size_t lb = over ? 0 : rune_count(b, FUZZY_MAX_RUNES, &over);
  if (over) {
    char err[64];
    snprintf(err, sizeof(err), "inputs exceed %d runes", FUZZY_MAX_RUNES);
    error_of(o, "fuzzy_match input too large", err);
    free(a);
    free(b);
    return;
  }
  size_t na, nb;
  int32_t *ra = tally_es_runes(a, &na), *rb = tally_es_runes(b, &nb);
  bool oom = ra == NULL || rb == NULL;
  size_t dist = oom ? 0 : levenshtein(ra, na, rb, nb, &oom);
  free(ra);
  free(rb);
  free(a);
  free(b);
  if (oom) {
    reasonf(o, "out of memory");
    o->verdict = TALLY_ES_VERROR;
    return;
  }
  size_t sum = la + lb;
  double sim = sum == 0 ? 1.0 : (double)(sum - dist) / (double)sum;
  cJSON *ev = o->evidence;
  cJSON_AddNumberToObject(ev, "similarity", sim);
  cJSON_AddNumberToObject(ev, "threshold", threshold);
  cJSON_AddNumberToObject(ev, "distance", (double)dist);
  cJSON_AddNumberToObject(ev, "sum_length", (double)sum);
  cJSON_AddBoolToObject(ev, "case_insensitive", c->case_insensitive);
  cJSON_AddBoolToObject(ev, "normalize", c->normalize);
  verdict(o, sim >= threshold, sim);
  if (sim < threshold)
    reasonf(o, "similarity %.4f is below threshold %.4f", sim, threshold);
}

/* Runs the steps of pipeline over s; NULL when out of memory. */
static char *run_pipeline(const tally_es_pipeline_t *p, const char *s) {
  char *cur = strdup(s);
  for (size_t i = 0; i < p->nsteps && cur != NULL; i++) {
    char *next = tally_es_step(p->steps[i], cur);
    free(cur);
    cur = next;
  }
  return cur;
}

static cJSON *pipeline_names(const tally_es_pipeline_t *p) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr != NULL && i < p->nsteps; i++)
    cJSON_AddItemToArray(arr,
                         cJSON_CreateString(tally_es_step_names[p->steps[i]]));
  return arr;
}

static void normalized_match(const tally_es_validator_t *v, const char *actual,
                             const char *expected, tally_es_outcome_t *o) {
  const tally_es_pipeline_t *p = v->state;
  char *a = run_pipeline(p, actual), *e = run_pipeline(p, expected);
  if (a == NULL || e == NULL) {
    free(a);
    free(e);
    reasonf(o, "out of memory");
    o->verdict = TALLY_ES_VERROR;
    return;
  }
  cJSON_AddStringToObject(o->evidence, "normalized_actual", a);
  cJSON_AddStringToObject(o->evidence, "normalized_expected", e);
  cJSON_AddItemToObject(o->evidence, "pipeline", pipeline_names(p));
  bool pass = strcmp(a, e) == 0;
  verdict(o, pass, pass ? 1 : 0);
  if (!pass)
    reasonf(o, "normalized values do not match");
  free(a);
  free(e);
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Clipped overlap of two token lists (multisets). */
static size_t overlap(char **p, size_t np, char **r, size_t nr) {
  qsort(p, np, sizeof(*p), cmp_str);
  qsort(r, nr, sizeof(*r), cmp_str);
  size_t i = 0, j = 0, n = 0;
  while (i < np && j < nr) {
    int c = strcmp(p[i], r[j]);
    if (c == 0) {
      n++;
      i++;
      j++;
    } else if (c < 0) {
      i++;
    } else {
      j++;
    }
  }
  return n;
}

static cJSON *token_array(char **t, size_t n) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr != NULL && i < n; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(t[i]));
  return arr;
}

static void token_f1(const tally_es_validator_t *v, const char *actual,
                     const char *expected, tally_es_outcome_t *o) {
  const tally_es_pipeline_t *p = v->state;
  char *a = run_pipeline(p, actual), *e = run_pipeline(p, expected);
  char **pt = NULL, **rt = NULL;
  size_t np = 0, nr = 0;
  char *pb = a ? tally_es_fields(a, &pt, &np) : NULL;
  char *rb = e ? tally_es_fields(e, &rt, &nr) : NULL;
  if (pb == NULL || rb == NULL) {
    free(a);
    free(e);
    free(pb);
    free(rb);
    free(pt);
    free(rt);
    reasonf(o, "out of memory");
    o->verdict = TALLY_ES_VERROR;
    return;
  }
  cJSON *ev = o->evidence;
  cJSON_AddStringToObject(ev, "normalized_actual", a);
  cJSON_AddStringToObject(ev, "normalized_expected", e);
  if (p->nsteps > 0)
    cJSON_AddItemToObject(ev, "pipeline", pipeline_names(p));
  else
    cJSON_AddNullToObject(ev, "pipeline");
  cJSON_AddItemToObject(ev, "prediction_tokens", token_array(pt, np));
  cJSON_AddItemToObject(ev, "reference_tokens", token_array(rt, nr));
  cJSON_AddNumberToObject(ev, "prediction_token_count", (double)np);
  cJSON_AddNumberToObject(ev, "reference_token_count", (double)nr);
  double precision = 0, recall = 0, score = 0;
  size_t over = 0;
  if (np == 0 && nr == 0) {
    precision = recall = score = 1;
  } else if (np > 0 && nr > 0) {
    over = overlap(pt, np, rt, nr);
    precision = (double)over / (double)np;
    recall = (double)over / (double)nr;
    if (precision != 0 && recall != 0)
      score = (2 * precision * recall) / (precision + recall);
  }
  cJSON_AddNumberToObject(ev, "overlap_token_count", (double)over);
  cJSON_AddNumberToObject(ev, "precision", precision);
  cJSON_AddNumberToObject(ev, "recall", recall);
  double threshold = p->has_threshold ? p->threshold : 0.5;
  if (threshold < 0)
    threshold = 0;
  if (threshold > 1)
    threshold = 1;
  cJSON_AddNumberToObject(ev, "score", score);
  cJSON_AddNumberToObject(ev, "threshold", threshold);
  verdict(o, score >= threshold, score);
  if (score < threshold)
    reasonf(o, "score %.4f is below threshold %.4f", score, threshold);
  free(a);
  free(e);
  free(pb);
  free(rb);
  free(pt);
  free(rt);
}

static void regex_match(const char *actual, const char *expected,
                        tally_es_outcome_t *o) {
  char err[512];
  int rc = tally_es_regex(expected, false, actual, err, sizeof(err));
  if (rc == TALLY_ES_RE_MATCH || rc == TALLY_ES_RE_NO_MATCH) {
    verdict(o, rc == TALLY_ES_RE_MATCH, rc == TALLY_ES_RE_MATCH);
    return;
  }
  o->verdict = TALLY_ES_VERROR;
  if (rc == TALLY_ES_RE_BAD_PATTERN)
    reasonf(o, "invalid regex pattern: %s", err);
  else
    reasonf(o, "regex_match: %s", err);
}

/* strconvBool: true/1/yes or false/0/no, trimmed, case-insensitive. */
static int boolean_of(const char *s) {
  char *t = tally_go_trimmed(s);
  if (t == NULL)
    return -2;
  for (char *p = t; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
  int v =
      strcmp(t, "true") == 0 || strcmp(t, "1") == 0 || strcmp(t, "yes") == 0 ? 1
      : strcmp(t, "false") == 0 || strcmp(t, "0") == 0 || strcmp(t, "no") == 0
          ? 0
          : -1;
  free(t);
  return v;
}

static void boolean_assert(const char *actual, const char *expected,
                           tally_es_outcome_t *o) {
  int a = boolean_of(actual), e = boolean_of(expected);
  const char *bad = a < 0 ? actual : e < 0 ? expected : NULL;
  if (bad != NULL) {
    char *q = tally_go_quoted(bad);
    o->verdict = TALLY_ES_VERROR;
    reasonf(o, "parse %s boolean assertion value: unsupported boolean value %s",
            a < 0 ? "actual" : "expected", q ? q : "\"\"");
    free(q);
    return;
  }
  verdict(o, a == e, a == e ? 1 : 0);
}

int tally__es_json_path(const char *actual, const char *expected,
                        tally_es_outcome_t *o);
int tally__es_files(const tally_es_validator_t *v, const char *actual,
                    const char *expected, tally_es_outcome_t *o);
int tally__es_bleu(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o);
int tally__es_rouge(const tally_es_validator_t *v, const char *actual,
                    const char *expected, tally_es_outcome_t *o);
int tally__es_chrf(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o);
int tally__es_json_schema(const char *actual, const char *expected,
                          tally_es_outcome_t *o);
int tally__es_math(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o);

int tally_es_apply(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o) {
  tally_buf_reset(&o->reason);
  cJSON_Delete(o->evidence);
  o->evidence = cJSON_CreateObject();
  o->has_score = false;
  o->score = 0;
  if (o->evidence == NULL)
    return TALLY_ENOMEM;
  const char *t = v->type_name;
  if (strcmp(t, "exact_match") == 0) {
    bool pass = strcmp(actual, expected) == 0;
    verdict(o, pass, pass);
  } else if (strcmp(t, "contains") == 0) {
    bool pass = strstr(actual, expected) != NULL;
    verdict(o, pass, pass);
  } else if (strcmp(t, "regex_match") == 0) {
    regex_match(actual, expected, o);
  } else if (strcmp(t, "boolean_assert") == 0) {
    boolean_assert(actual, expected, o);
  } else if (strcmp(t, "fuzzy_match") == 0) {
    fuzzy_match(v, actual, expected, o);
  } else if (strcmp(t, "numeric_match") == 0) {
    numeric_match(v, actual, expected, o);
  } else if (strcmp(t, "normalized_match") == 0) {
    normalized_match(v, actual, expected, o);
  } else if (strcmp(t, "token_f1") == 0) {
    token_f1(v, actual, expected, o);
  } else if (strcmp(t, "json_path_match") == 0) {
    tally__es_json_path(actual, expected, o);
  } else if (strcmp(t, "json_schema") == 0) {
    tally__es_json_schema(actual, expected, o);
  } else if (strcmp(t, "file_exists") == 0 ||
             strcmp(t, "file_content_match") == 0 ||
             strcmp(t, "file_json_schema") == 0 ||
             strcmp(t, "directory_structure") == 0) {
    if (tally__es_files(v, actual, expected, o) != 0)
      return TALLY_ENOMEM;
  } else if (strcmp(t, "bleu_score") == 0) {
    if (tally__es_bleu(v, actual, expected, o) != 0)
      return TALLY_ENOMEM;
  } else if (strcmp(t, "rouge_score") == 0) {
    if (tally__es_rouge(v, actual, expected, o) != 0)
      return TALLY_ENOMEM;
  } else if (strcmp(t, "chrf_score") == 0) {
    if (tally__es_chrf(v, actual, expected, o) != 0)
      return TALLY_ENOMEM;
  } else if (strcmp(t, "math_equivalence") == 0) {
    if (tally__es_math(v, actual, expected, o) != 0)
      return TALLY_ENOMEM;
  } else {
    o->verdict = TALLY_ES_VERROR;
    char *q = tally_go_quoted(t);
    reasonf(o, "unsupported validator type %s", q ? q : "\"\"");
    free(q);
  }
  return o->reason.oom ? TALLY_ENOMEM : 0;
}

bool tally_es_lint(const tally_es_validator_t *v, char *why, size_t len) {
  const char *t = v->type_name;
  bool literal = strncmp(v->expected_from, "literal:", 8) == 0;
  const char *expected = literal ? v->expected_from + 8 : "";
  /* The validator run on a document every schema can read: an error is
   * the pattern's or the schema's own. */
  const char *actual;
  if (strcmp(t, "regex_match") == 0 && literal)
    actual = "";
  else if (strcmp(t, "json_schema") == 0 && literal)
    actual = "{}";
  else if (strcmp(t, "file_json_schema") == 0 && v->config != NULL)
    actual = "{}";
  else
    return false;
  tally_es_outcome_t o;
  tally_es_outcome_init(&o);
  bool flagged = false;
  if (tally_es_apply(v, actual, expected, &o) == 0 &&
      o.verdict == TALLY_ES_VERROR) {
    const char *r = tally_buf_text(&o.reason);
    static const char *const causes[] = {
        "invalid regex pattern", "parse JSON schema", "resolve JSON schema"};
    for (size_t i = 0; i < 3 && !flagged; i++)
      if (strncmp(r, causes[i], strlen(causes[i])) == 0) {
        snprintf(why, len, "%s", r);
        flagged = true;
      }
  }
  tally_es_outcome_close(&o);
  return flagged;
}
