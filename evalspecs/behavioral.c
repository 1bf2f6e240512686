/* The behavioral signals of evaluation specs (docs/evaluation-specs.md),
 * computed from the run's tool-call trace (and, for recovery in a
 * multi-turn run, its transcript) as the reference computes them:
 * recovery_behavior, exploration_efficiency, error_cascade and
 * scope_adherence. They feed the behavioral dimension and the
 * behavioral_*_score collectors. */
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A call's signature: its tool, a NUL, and its arguments marshalled as
 * Go marshals them (keys sorted), both trimmed. A new string (with the
 * NUL inside), its length in *n; NULL when out of memory. */
static char *signature(const tally_es_call_t *c, size_t *n) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, c->tool);
  tally_buf_putc(&b, '\0');
  /* Marshalled text has no white space at its ends to trim. */
  tally_go_marshal(&b, c->args);
  if (b.oom) {
    tally_buf_close(&b);
    return NULL;
  }
  *n = b.len;
  return b.data;
}

static bool same_call(const tally_es_call_t *a, const tally_es_call_t *b,
                      bool *oom) {
  size_t na, nb;
  char *sa = signature(a, &na), *sb = signature(b, &nb);
  *oom = sa == NULL || sb == NULL;
  bool same = !*oom && na == nb && memcmp(sa, sb, na) == 0;
  free(sa);
  free(sb);
  return same;
}

/* validatorBinaryOutcome: 1 when every validator is available and scored
 * 1, 0 when one scored less; false with *why when one is not available. */
static bool binary_outcome(const tally_es_eval_t *e, double *out,
                           const char **why) {
  size_t n = e->spec->nvalidators;
  if (n == 0) {
    *why = "validator outcome is unavailable";
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    const tally_es_vresult_t *v = &e->validators[i];
    if (v->state != TALLY_ES_AVAILABLE || !v->has_score) {
      *why = "validator outcome requires all validators to be available";
      return false;
    }
    if (v->score < 1) {
      *out = 0;
      return true;
    }
  }
  *out = 1;
  return true;
}

/* A signature and its length (it holds a NUL). */
typedef struct sig_s {
  char *s;
  size_t n;
} sig_t;

static int cmp_sig(const void *a, const void *b) {
  const sig_t *x = a, *y = b;
  int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
  return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

int tally__es_signal(const tally_es_eval_t *e, const char *key, double *score,
                     const char **why) {
  const tally_es_evidence_t *ev = &e->ev;
  const tally_es_call_t *t = ev->calls;
  size_t n = ev->tool_calls_traced;
  *why = "";
  if (strcmp(key, "recovery_behavior") == 0) {
    if (ev->nturns > 0) {
      bool mismatch = false;
      for (size_t i = 0; i < ev->nturns && !mismatch; i++)
        mismatch = ev->turns[i].mismatch;
      if (!mismatch) {
        *score = 1;
        return 1;
      }
      double outcome;
      if (!binary_outcome(e, &outcome, why))
        return 0;
      *score = outcome >= 1 ? 1 : 0;
      if (*score == 0)
        *why = "conversation mismatch without final validator recovery";
      return 1;
    }
    size_t failures = 0, attempts = 0, adaptive = 0;
    for (size_t i = 0; i < n; i++) {
      if (!t[i].failed)
        continue;
      failures++;
      if (i + 1 >= n)
        continue;
      attempts++;
      bool oom;
      bool same = same_call(&t[i], &t[i + 1], &oom);
      if (oom)
        return TALLY_ENOMEM;
      adaptive += !same;
    }
    if (failures == 0) {
      *score = 1;
    } else if (attempts == 0) {
      *score = 0;
      *why = "no recovery attempts followed the observed failures";
    } else {
      *score = (double)adaptive / (double)attempts;
    }
    return 1;
  }
  if (strcmp(key, "exploration_efficiency") == 0) {
    if (n == 0) {
      *score = 1;
      return 1;
    }
    /* Duplicates: signatures seen before, counted by sorting them. */
    sig_t *sigs = calloc(n, sizeof(*sigs));
    if (sigs == NULL)
      return TALLY_ENOMEM;
    int rc = 1;
    for (size_t i = 0; i < n && rc == 1; i++)
      if ((sigs[i].s = signature(&t[i], &sigs[i].n)) == NULL)
        rc = TALLY_ENOMEM;
    if (rc == 1) {
      qsort(sigs, n, sizeof(*sigs), cmp_sig);
      size_t dup = 0;
      for (size_t i = 1; i < n; i++)
        dup += cmp_sig(&sigs[i - 1], &sigs[i]) == 0;
      *score = 1 - (double)dup / (double)n;
    }
    for (size_t i = 0; i < n; i++)
      free(sigs[i].s);
    free(sigs);
    return rc;
  }
  if (strcmp(key, "error_cascade") == 0) {
    size_t longest = 0, streak = 0;
    for (size_t i = 0; i < n; i++) {
      streak = t[i].failed ? streak + 1 : 0;
      longest = streak > longest ? streak : longest;
    }
    *score = longest == 0 ? 1 : 1 / (double)longest;
    return 1;
  }
  if (strcmp(key, "scope_adherence") == 0) {
    if (n == 0) {
      *score = 1;
      return 1;
    }
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
      if (!t[i].failed)
        continue;
      char *low = strdup(t[i].error);
      if (low == NULL)
        return TALLY_ENOMEM;
      for (char *p = low; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
          *p = (char)(*p - 'A' + 'a');
      out += strcasecmp(t[i].origin, "policy") == 0 ||
             strstr(low, "tool is not allowed in this runtime") != NULL ||
             strstr(low, "tool is not available in this runtime") != NULL;
      free(low);
    }
    *score = 1 - (double)out / (double)n;
    return 1;
  }
  *why = "unsupported behavioral signal";
  return 0;
}
