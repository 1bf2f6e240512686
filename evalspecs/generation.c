/* The generation-metric validators of evaluation specs
 * (docs/evaluation-specs.md): bleu_score (sentence BLEU over white space
 * tokens, with method1 smoothing), rouge_score (ROUGE-1, ROUGE-2, ROUGE-L)
 * and chrf_score (character n-gram F-score), with the reference's
 * references, normalization, evidence and reasons. */
#include "config/error.h"
#include "evalspecs/apply.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gomath.h"
#include "evalspecs/gostr.h"
#include "evalspecs/textops.h"
#include "evalspecs/validators.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference's normalizeGenerationText: trimmed and white space runs
 * collapsed with normalize, case-folded with case_insensitive. */
static char *gen_normal(const char *s, const tally_es_gen_t *c) {
  char *t = strdup(s);
  if (t != NULL && c->normalize) {
    char *a = tally_es_step(TALLY_ES_TRIM, t);
    free(t);
    t = a != NULL ? tally_es_step(TALLY_ES_COLLAPSE_WHITESPACE, a) : NULL;
    free(a);
  }
  if (t != NULL && c->case_insensitive) {
    char *a = tally_es_step(TALLY_ES_LOWERCASE, t);
    free(t);
    t = a;
  }
  return t;
}

/* The references of expected: a JSON array of strings is a list (an
 * array of anything else is an error), a blank text is one empty
 * reference, anything else one literal reference. Returns the count
 * (refs malloc'ed, each normalized), or -1 with *why set for an error,
 * or -2 when out of memory. */
static long references(const char *expected, const tally_es_gen_t *c,
                       char ***refs, const char **why) {
  *refs = NULL;
  char *trimmed = tally_go_trimmed(expected);
  if (trimmed == NULL)
    return -2;
  const char *one = expected;
  cJSON *arr = NULL;
  if (trimmed[0] == '\0') {
    one = "";
  } else if (trimmed[0] == '[') {
    char err[128];
    if (tally_go_unmarshal_check(trimmed, err, sizeof(err)))
      arr = cJSON_Parse(trimmed);
    bool strings = cJSON_IsArray(arr);
    for (const cJSON *e = strings ? arr->child : NULL; e != NULL; e = e->next)
      strings = strings && (cJSON_IsString(e) || cJSON_IsNull(e));
    if (arr != NULL && !strings) {
      cJSON_Delete(arr);
      free(trimmed);
      *why = "expected a JSON array of reference strings";
      return -1;
    }
  }
  free(trimmed);
  size_t n = arr != NULL ? (size_t)cJSON_GetArraySize(arr) : 1;
  char **out = calloc(n + 1, sizeof(*out));
  long count = out != NULL ? 0 : -2;
  if (arr != NULL) {
    for (const cJSON *e = arr->child; count >= 0 && e != NULL; e = e->next) {
      /* null decodes to "" in a []string */
      out[count] = gen_normal(cJSON_IsString(e) ? e->valuestring : "", c);
      count = out[count] != NULL ? count + 1 : -2;
    }
  } else if (count == 0) {
    out[0] = gen_normal(one, c);
    count = out[0] != NULL ? 1 : -2;
  }
  cJSON_Delete(arr);
  if (count < 0) {
    for (size_t i = 0; out != NULL && out[i] != NULL; i++)
      free(out[i]);
    free(out);
    return -2;
  }
  *refs = out;
  return count;
}

static void free_refs(char **refs, long n) {
  for (long i = 0; refs != NULL && i < n; i++)
    free(refs[i]);
  free(refs);
}

/* A list of tokens (fields) or code points, as spans of one sequence, for
 * n-gram counting. */
typedef struct toks_s {
  char *buf;    /* tokens' storage, or NULL for runes */
  char **tok;   /* tokens */
  int32_t *cps; /* code points */
  size_t n;
} toks_t;

static int tok_fields(const char *s, toks_t *t) {
  memset(t, 0, sizeof(*t));
  t->buf = tally_es_fields(s, &t->tok, &t->n);
  return t->buf != NULL ? 0 : -1;
}

/* chrF's characters: the code points of s but white space. */
static int tok_runes(const char *s, toks_t *t) {
  memset(t, 0, sizeof(*t));
  size_t n;
  int32_t *cps = tally_es_runes(s, &n);
  if (cps == NULL)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!tally_go_is_space(cps[i]))
      cps[k++] = cps[i];
  t->cps = cps;
  t->n = k;
  return 0;
}

static void tok_free(toks_t *t) {
  free(t->buf);
  free(t->tok);
  free(t->cps);
  memset(t, 0, sizeof(*t));
}

/* Whether the n-grams at i of a and j of b are equal. */
static bool gram_eq(const toks_t *a, size_t i, const toks_t *b, size_t j,
                    size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (a->cps != NULL ? a->cps[i + k] != b->cps[j + k]
                       : strcmp(a->tok[i + k], b->tok[j + k]) != 0)
      return false;
  }
  return true;
}

static int cmp_gram_ctx(const toks_t *t, size_t i, size_t j, size_t n) {
  for (size_t k = 0; k < n; k++) {
    int c;
    if (t->cps != NULL)
      c = (t->cps[i + k] > t->cps[j + k]) - (t->cps[i + k] < t->cps[j + k]);
    else
      c = strcmp(t->tok[i + k], t->tok[j + k]);
    if (c != 0)
      return c;
  }
  return 0;
}

typedef struct gram_sort_s {
  const toks_t *t;
  size_t n;
} gram_sort_t;

static int cmp_gram(const void *x, const void *y, void *ctx) {
  const gram_sort_t *g = ctx;
  return cmp_gram_ctx(g->t, *(const size_t *)x, *(const size_t *)y, g->n);
}

/* The distinct n-grams of t with their counts: starts (sorted) and
 * counts, *m of them. Returns 0 or -1 (out of memory). */
static int gram_counts(const toks_t *t, size_t n, size_t **starts,
                       size_t **counts, size_t *m) {
  *starts = NULL;
  *counts = NULL;
  *m = 0;
  if (t->n < n)
    return 0;
  size_t total = t->n - n + 1;
  size_t *s = malloc(total * sizeof(*s)), *c = malloc(total * sizeof(*c));
  if (s == NULL || c == NULL) {
    free(s);
    free(c);
    return -1;
  }
  for (size_t i = 0; i < total; i++)
    s[i] = i;
  gram_sort_t g = {t, n};
  qsort_r(s, total, sizeof(*s), cmp_gram, &g);
  size_t k = 0;
  for (size_t i = 0; i < total; i++) {
    if (k > 0 && gram_eq(t, s[k - 1], t, s[i], n)) {
      c[k - 1]++;
    } else {
      s[k] = s[i];
      c[k++] = 1;
    }
  }
  *starts = s;
  *counts = c;
  *m = k;
  return 0;
}

/* The count of the n-gram at i of a in b's sorted grams, 0 if absent. */
static size_t count_in(const toks_t *a, size_t i, const toks_t *b,
                       const size_t *starts, const size_t *counts, size_t m,
                       size_t n) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = 0;
    for (size_t k = 0; k < n && c == 0; k++) {
      if (a->cps != NULL)
        c = (b->cps[starts[mid] + k] > a->cps[i + k]) -
            (b->cps[starts[mid] + k] < a->cps[i + k]);
      else
        c = strcmp(b->tok[starts[mid] + k], a->tok[i + k]);
    }
    if (c == 0)
      return counts[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* The clipped matches of cand's n-grams against ref's: the sum over
 * cand's distinct grams of min(count in cand, count in ref). -1 when out
 * of memory. */
static long clipped(const toks_t *cand, const toks_t *ref, size_t n) {
  size_t *cs, *cc, cm, *rs, *rc, rm;
  if (gram_counts(cand, n, &cs, &cc, &cm) != 0)
    return -1;
  if (gram_counts(ref, n, &rs, &rc, &rm) != 0) {
    free(cs);
    free(cc);
    return -1;
  }
  long matches = 0;
  for (size_t i = 0; i < cm; i++) {
    size_t r = count_in(cand, cs[i], ref, rs, rc, rm, n);
    matches += (long)(cc[i] < r ? cc[i] : r);
  }
  free(cs);
  free(cc);
  free(rs);
  free(rc);
  return matches;
}

static double safe_ratio(double num, double den) {
  return den <= 0 ? 0 : num / den;
}

static double f_score(double p, double r, double beta) {
  if (p == 0 && r == 0)
    return 0;
  double b2 = beta * beta;
  return (1 + b2) * p * r / ((b2 * p) + r);
}

static double threshold_of(const tally_es_gen_t *c) {
  if (!c->has_threshold)
    return 0.3;
  return c->threshold < 0 ? 0 : c->threshold > 1 ? 1 : c->threshold;
}

/* The reference's thresholdedOutcome. */
static void thresholded(tally_es_outcome_t *o, double score,
                        const tally_es_gen_t *c) {
  double t = threshold_of(c);
  cJSON_AddNumberToObject(o->evidence, "score", score);
  cJSON_AddNumberToObject(o->evidence, "threshold", t);
  o->has_score = true;
  o->score = score;
  if (score >= t) {
    o->verdict = TALLY_ES_PASS;
    return;
  }
  o->verdict = TALLY_ES_FAIL;
  tally_buf_reset(&o->reason);
  char msg[128];
  snprintf(msg, sizeof(msg), "score %.4f is below threshold %.4f", score, t);
  tally_buf_puts(&o->reason, msg);
}

static void error_out(tally_es_outcome_t *o, const char *what,
                      const char *why) {
  cJSON_AddStringToObject(o->evidence, "error", why);
  o->verdict = TALLY_ES_VERROR;
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, what);
  tally_buf_puts(&o->reason, ": ");
  tally_buf_puts(&o->reason, why);
}

static cJSON *doubles(const double *v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a != NULL && i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
  return a;
}

/* Reads the references into refs, or writes the reference's error. */
static long refs_or_error(const char *what, const char *expected,
                          const tally_es_gen_t *c, char ***refs,
                          tally_es_outcome_t *o) {
  const char *why = NULL;
  long n = references(expected, c, refs, &why);
  if (n == -1) {
    error_out(o, what, why);
    cJSON_AddStringToObject(o->evidence, "expected_raw", expected);
  } else if (n == 0) {
    error_out(o, what, "at least one reference is required");
  }
  return n;
}

int tally__es_bleu(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o) {
  const tally_es_gen_t *c = v->state;
  char *cand_text = gen_normal(actual, c);
  char **refs = NULL;
  long nrefs = cand_text != NULL ? refs_or_error("parse bleu_score references",
                                                 expected, c, &refs, o)
                                 : -2;
  toks_t cand = {0}, *rt = NULL;
  int rc = 0;
  if (nrefs == -2 || (nrefs > 0 && tok_fields(cand_text, &cand) != 0))
    rc = TALLY_ENOMEM;
  if (rc == 0 && nrefs > 0 && (rt = calloc((size_t)nrefs, sizeof(*rt))) == NULL)
    rc = TALLY_ENOMEM;
  for (long i = 0; rc == 0 && i < nrefs; i++)
    if (tok_fields(refs[i], &rt[i]) != 0)
      rc = TALLY_ENOMEM;
  cJSON *ev = o->evidence;
  if (rc == 0 && nrefs > 0) {
    double *lens = malloc((size_t)nrefs * sizeof(*lens));
    size_t cl = cand.n;
    size_t order = (long long)cl < c->max_ngram ? cl : (size_t)c->max_ngram;
    double *prec = malloc((order + 1) * sizeof(*prec));
    if (lens == NULL || prec == NULL)
      rc = TALLY_ENOMEM;
    for (long i = 0; rc == 0 && i < nrefs; i++)
      lens[i] = (double)rt[i].n;
    const char *smoothing = c->method1 ? "method1" : "none";
    if (rc == 0 && cl == 0) {
      double score = nrefs == 1 && rt[0].n == 0 ? 1 : 0;
      cJSON_AddNumberToObject(ev, "candidate_length", 0);
      cJSON_AddItemToObject(ev, "reference_lengths", doubles(lens, nrefs));
      cJSON_AddNumberToObject(ev, "max_ngram", (double)c->max_ngram);
      cJSON_AddStringToObject(ev, "smoothing", smoothing);
      cJSON_AddNumberToObject(ev, "brevity_penalty", score);
      cJSON_AddItemToObject(ev, "precisions", cJSON_CreateArray());
      thresholded(o, score, c);
    } else if (rc == 0) {
      double sum_log = 0;
      bool zero = false;
      for (size_t n = 1; rc == 0 && n <= order; n++) {
        size_t total = cl - n + 1;
        /* The maximum count of each gram over the references. */
        size_t *cs, *cc, cm;
        if (gram_counts(&cand, n, &cs, &cc, &cm) != 0) {
          rc = TALLY_ENOMEM;
          break;
        }
        long matches = 0;
        for (size_t g = 0; g < cm && rc == 0; g++) {
          size_t best = 0;
          for (long r = 0; r < nrefs && rc == 0; r++) {
            size_t *rs, *rcnt, rm;
            if (gram_counts(&rt[r], n, &rs, &rcnt, &rm) != 0) {
              rc = TALLY_ENOMEM;
              break;
            }
            size_t k = count_in(&cand, cs[g], &rt[r], rs, rcnt, rm, n);
            best = k > best ? k : best;
            free(rs);
            free(rcnt);
          }
          matches += (long)(cc[g] < best ? cc[g] : best);
        }
        free(cs);
        free(cc);
        double p = 0;
        if (matches > 0)
          p = (double)matches / (double)total;
        else if (c->method1 && n > 1)
          p = 1.0 / (double)(total + 1);
        prec[n - 1] = p;
        if (p == 0)
          zero = true;
        else if (!zero)
          sum_log += tally_go_log(p);
      }
      if (rc == 0) {
        double geo = zero ? 0 : tally_go_exp(sum_log / (double)order);
        /* The reference length closest to the candidate's, ties to the
         * shorter. */
        long best = 0, dist = 0;
        for (long i = 0; i < nrefs; i++) {
          long rl = (long)rt[i].n, dd = labs((long)cl - rl);
          if (i == 0 || dd < dist || (dd == dist && rl < best)) {
            best = rl;
            dist = dd;
          }
        }
        double bp = 1;
        if ((long)cl < best)
          bp = tally_go_exp(1 - (double)best / (double)cl);
        cJSON_AddNumberToObject(ev, "candidate_length", (double)cl);
        cJSON_AddNumberToObject(ev, "reference_length", (double)best);
        cJSON_AddItemToObject(ev, "reference_lengths", doubles(lens, nrefs));
        cJSON_AddNumberToObject(ev, "max_ngram", (double)c->max_ngram);
        cJSON_AddNumberToObject(ev, "computed_orders", (double)order);
        cJSON_AddStringToObject(ev, "smoothing", smoothing);
        cJSON_AddNumberToObject(ev, "brevity_penalty", bp);
        cJSON_AddItemToObject(ev, "precisions", doubles(prec, order));
        thresholded(o, bp * geo, c);
      }
    }
    free(lens);
    free(prec);
  }
  for (long i = 0; rt != NULL && i < nrefs; i++)
    tok_free(&rt[i]);
  free(rt);
  tok_free(&cand);
  free_refs(refs, nrefs);
  free(cand_text);
  return rc;
}

/* ROUGE-L's longest common subsequence of two token lists. */
static long lcs(const toks_t *a, const toks_t *b) {
  if (a->n == 0 || b->n == 0)
    return 0;
  long *prev = calloc(b->n + 1, sizeof(long)),
       *curr = calloc(b->n + 1, sizeof(long));
  if (prev == NULL || curr == NULL) {
    free(prev);
    free(curr);
    return -1;
  }
  for (size_t i = 1; i <= a->n; i++) {
    for (size_t j = 1; j <= b->n; j++) {
      if (strcmp(a->tok[i - 1], b->tok[j - 1]) == 0)
        curr[j] = prev[j - 1] + 1;
      else
        curr[j] = prev[j] > curr[j - 1] ? prev[j] : curr[j - 1];
    }
    long *t = prev;
    prev = curr;
    curr = t;
    memset(curr, 0, (b->n + 1) * sizeof(long));
  }
  long r = prev[b->n];
  free(prev);
  free(curr);
  return r;
}

/* Scores the candidate against one reference, both tokenized: the score
 * in *score and, when it may be the best, its evidence in *ev (NULL when
 * short of memory). Returns 0 or TALLY_ENOMEM. */
typedef int (*ref_score_fn)(const tally_es_gen_t *c, const toks_t *cand,
                            const toks_t *ref, double *score, cJSON **ev);

/* What rouge_score and chrf_score share: the candidate and each reference
 * normalized and tokenized by tok, each reference scored by fn, the best
 * one's score thresholded with its evidence (references that do not
 * parse: the error refs_or_error gives, named by what). */
static int best_over_refs(const tally_es_validator_t *v, const char *actual,
                          const char *expected, tally_es_outcome_t *o,
                          const char *what, int (*tok)(const char *, toks_t *),
                          ref_score_fn fn) {
  const tally_es_gen_t *c = v->state;
  char *cand_text = gen_normal(actual, c);
  char **refs = NULL;
  long nrefs =
      cand_text != NULL ? refs_or_error(what, expected, c, &refs, o) : -2;
  toks_t cand = {0};
  int rc = 0;
  if (nrefs == -2 || (nrefs > 0 && tok(cand_text, &cand) != 0))
    rc = TALLY_ENOMEM;
  double best = -1;
  cJSON *best_ev = NULL;
  for (long i = 0; rc == 0 && i < nrefs; i++) {
    toks_t ref;
    if (tok(refs[i], &ref) != 0) {
      rc = TALLY_ENOMEM;
      break;
    }
    double score = 0;
    cJSON *ev = NULL;
    rc = fn(c, &cand, &ref, &score, &ev);
    if (rc == 0 && score > best) {
      best = score;
      cJSON_Delete(best_ev);
      best_ev = ev;
      ev = NULL;
    }
    cJSON_Delete(ev);
    tok_free(&ref);
  }
  if (rc == 0 && nrefs > 0) {
    cJSON_Delete(o->evidence);
    o->evidence = best_ev != NULL ? best_ev : cJSON_CreateObject();
    best_ev = NULL;
    thresholded(o, best, c);
  }
  cJSON_Delete(best_ev);
  tok_free(&cand);
  free_refs(refs, nrefs);
  free(cand_text);
  return rc;
}

static int rouge_one(const tally_es_gen_t *c, const toks_t *cand,
                     const toks_t *ref, double *score, cJSON **ev) {
  static const char *const variants[] = {"rouge-1", "rouge-2", "rouge-l"};
  double beta = c->has_beta ? c->beta : 1.0;
  double p, r;
  if (c->variant == 2) {
    long l = lcs(cand, ref);
    if (l < 0)
      return TALLY_ENOMEM;
    p = safe_ratio((double)l, (double)cand->n);
    r = safe_ratio((double)l, (double)ref->n);
  } else {
    size_t n = (size_t)c->variant + 1;
    long m = clipped(cand, ref, n);
    if (m < 0)
      return TALLY_ENOMEM;
    double ct = cand->n >= n ? (double)(cand->n - n + 1) : 0;
    double rt = ref->n >= n ? (double)(ref->n - n + 1) : 0;
    p = safe_ratio((double)m, ct);
    r = safe_ratio((double)m, rt);
  }
  double f = f_score(p, r, beta);
  *score = f;
  cJSON *e = *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "variant", variants[c->variant]);
  cJSON_AddNumberToObject(e, "precision", p);
  cJSON_AddNumberToObject(e, "recall", r);
  cJSON_AddNumberToObject(e, "f_score", f);
  cJSON_AddNumberToObject(e, "candidate_length", (double)cand->n);
  cJSON_AddNumberToObject(e, "reference_length", (double)ref->n);
  cJSON_AddNumberToObject(e, "beta", beta);
  return 0;
}

int tally__es_rouge(const tally_es_validator_t *v, const char *actual,
                    const char *expected, tally_es_outcome_t *o) {
  return best_over_refs(v, actual, expected, o, "parse rouge_score references",
                        tok_fields, rouge_one);
}

static int chrf_one(const tally_es_gen_t *c, const toks_t *cand,
                    const toks_t *ref, double *score, cJSON **ev) {
  double beta = c->has_beta ? c->beta : 2.0;
  size_t order = cand->n < ref->n ? cand->n : ref->n;
  if ((long long)order > c->char_order)
    order = (size_t)c->char_order;
  double *ps = malloc((order + 1) * sizeof(double)),
         *rs = malloc((order + 1) * sizeof(double));
  int rc = ps == NULL || rs == NULL ? TALLY_ENOMEM : 0;
  double mp = 0, mr = 0;
  for (size_t n = 1; rc == 0 && n <= order; n++) {
    long m = clipped(cand, ref, n);
    if (m < 0) {
      rc = TALLY_ENOMEM;
      break;
    }
    ps[n - 1] = safe_ratio((double)m, (double)(cand->n - n + 1));
    rs[n - 1] = safe_ratio((double)m, (double)(ref->n - n + 1));
  }
  if (rc == 0 && order == 0) {
    *score = cand->n == 0 && ref->n == 0 ? 1 : 0;
    mp = mr = *score;
  } else if (rc == 0) {
    for (size_t n = 0; n < order; n++) {
      mp += ps[n];
      mr += rs[n];
    }
    mp /= (double)order;
    mr /= (double)order;
    *score = f_score(mp, mr, beta);
  }
  if (rc == 0) {
    cJSON *e = *ev = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "char_order", (double)c->char_order);
    cJSON_AddNumberToObject(e, "computed_orders", (double)order);
    cJSON_AddNumberToObject(e, "beta", beta);
    cJSON_AddNumberToObject(e, "precision", mp);
    cJSON_AddNumberToObject(e, "recall", mr);
    cJSON_AddNumberToObject(e, "f_score", *score);
    cJSON_AddNumberToObject(e, "candidate_length", (double)cand->n);
    cJSON_AddNumberToObject(e, "reference_length", (double)ref->n);
    cJSON_AddItemToObject(e, "precisions", doubles(ps, order));
    cJSON_AddItemToObject(e, "recalls", doubles(rs, order));
  }
  free(ps);
  free(rs);
  return rc;
}

int tally__es_chrf(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o) {
  return best_over_refs(v, actual, expected, o, "parse chrf_score references",
                        tok_runes, chrf_one);
}
