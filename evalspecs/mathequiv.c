/* The math_equivalence validator of evaluation specs
 * (docs/evaluation-specs.md): both texts normalized and parsed
 * (mathexpr.c), compared by canonical keys in symbolic mode, by value
 * within the tolerance in numeric mode or as the symbolic mode's
 * fallback, with the reference's evidence, reasons and errors. A
 * division by zero in a canonical form, where the reference crashes, is
 * a fail with its reason. */
#include "config/error.h"
#include "evalspecs/apply.h"
#include "evalspecs/mathexpr.h"
#include "evalspecs/validators.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Go's %.10g. */
static void g10(double v, char out[40]) {
  if (isnan(v))
    snprintf(out, 40, "NaN");
  else if (isinf(v))
    snprintf(out, 40, "%s", v > 0 ? "+Inf" : "-Inf");
  else
    snprintf(out, 40, "%.10g", v);
}

static void set_error(tally_es_outcome_t *o, const char *context,
                      const char *why) {
  o->verdict = TALLY_ES_VERROR;
  o->has_score = false;
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, context);
  tally_buf_puts(&o->reason, ": ");
  tally_buf_puts(&o->reason, why);
  cJSON_AddStringToObject(o->evidence, "error", why);
}

static void set_verdict(tally_es_outcome_t *o, bool pass, const char *why) {
  o->verdict = pass ? TALLY_ES_PASS : TALLY_ES_FAIL;
  o->has_score = true;
  o->score = pass ? 1 : 0;
  tally_buf_reset(&o->reason);
  if (why != NULL)
    tally_buf_puts(&o->reason, why);
}

/* joinMathErrors of the non-empty texts among n. */
static void join(tally_buf_t *b, const char *const *errs, size_t n) {
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    if (errs[i] == NULL)
      continue;
    if (any)
      tally_buf_puts(b, "; ");
    tally_buf_puts(b, errs[i]);
    any = true;
  }
  if (!any)
    tally_buf_puts(b, "unknown math equivalence error");
}

typedef struct side_s {
  const char *raw;
  char *norm;
  tally_mx_t *expr;
  char parse_err[512]; /* "" when it parsed */
  char *key;
  char num_err[512];
  double value;
} side_t;

/* The parsed side's canonical key; DIV_ZERO or LIMIT with err. */
static int side_key(side_t *s, char *err, size_t errlen) {
  return tally_mx_key(s->expr, &s->key, err, errlen);
}

static int compare(const tally_es_math_t *c, side_t *sd,
                   tally_es_outcome_t *o) {
  cJSON *ev = o->evidence;
  side_t *a = &sd[0], *e = &sd[1];
  static const char *const names[] = {"actual", "expected"};
  for (int i = 0; i < 2; i++) {
    int rc = tally_mx_parse(sd[i].norm, &sd[i].expr, sd[i].parse_err,
                            sizeof(sd[i].parse_err));
    if (rc == TALLY_ENOMEM)
      return rc;
    if (rc == 0)
      sd[i].parse_err[0] = '\0';
  }
  bool a_ok = a->expr != NULL, e_ok = e->expr != NULL;
  if (!c->numeric && a_ok && e_ok) {
    for (int i = 0; i < 2; i++) {
      char why[512];
      int rc = side_key(&sd[i], why, sizeof(why));
      if (rc == TALLY_ENOMEM)
        return rc;
      if (rc == TALLY_MX_DIV_ZERO) {
        char msg[64];
        snprintf(msg, sizeof(msg), "division by zero in the %s expression",
                 names[i]);
        cJSON_AddStringToObject(ev, "canonical_error", why);
        set_verdict(o, false, msg);
        return 0;
      }
      if (rc != 0) {
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "canonicalize %s math expression", names[i]);
        set_error(o, ctx, why);
        return 0;
      }
    }
    cJSON_AddStringToObject(ev, "canonical_actual", a->key);
    cJSON_AddStringToObject(ev, "canonical_expected", e->key);
    if (strcmp(a->key, e->key) == 0) {
      cJSON_AddStringToObject(ev, "mode_used", "symbolic");
      set_verdict(o, true, NULL);
      return 0;
    }
  }
  if (!a_ok)
    cJSON_AddStringToObject(ev, "actual_parse_error", a->parse_err);
  if (!e_ok)
    cJSON_AddStringToObject(ev, "expected_parse_error", e->parse_err);
  if (c->fallback) {
    for (int i = 0; i < 2; i++) {
      if (sd[i].expr == NULL) {
        snprintf(sd[i].num_err, sizeof(sd[i].num_err), "%s", sd[i].parse_err);
        continue;
      }
      int rc = tally_mx_eval(sd[i].expr, &sd[i].value, sd[i].num_err,
                             sizeof(sd[i].num_err));
      if (rc == TALLY_ENOMEM)
        return rc;
      if (rc == 0)
        sd[i].num_err[0] = '\0';
    }
    bool a_num = a->expr != NULL && a->num_err[0] == '\0';
    bool e_num = e->expr != NULL && e->num_err[0] == '\0';
    if (a_num && e_num) {
      double diff = fabs(a->value - e->value);
      cJSON_AddNumberToObject(ev, "numeric_actual", a->value);
      cJSON_AddNumberToObject(ev, "numeric_expected", e->value);
      cJSON_AddNumberToObject(ev, "absolute_difference", diff);
      cJSON_AddStringToObject(ev, "mode_used",
                              c->numeric ? "numeric" : "numeric_fallback");
      if (diff <= c->tolerance) {
        set_verdict(o, true, NULL);
        return 0;
      }
      char d[40], t[40], msg[160];
      g10(diff, d);
      g10(c->tolerance, t);
      snprintf(msg, sizeof(msg),
               "numeric values differ by %s which exceeds tolerance %s", d, t);
      set_verdict(o, false, msg);
      return 0;
    }
    if (!a_num)
      cJSON_AddStringToObject(ev, "actual_numeric_error", a->num_err);
    if (!e_num)
      cJSON_AddStringToObject(ev, "expected_numeric_error", e->num_err);
    if (c->numeric || !a_ok || !e_ok) {
      const char *errs[] = {
          a_ok ? NULL : a->parse_err, e_ok ? NULL : e->parse_err,
          a_num ? NULL : a->num_err, e_num ? NULL : e->num_err};
      tally_buf_t b;
      tally_buf_init(&b);
      join(&b, errs, 4);
      set_error(o, "evaluate math_equivalence expressions",
                b.data != NULL ? b.data : "");
      bool oom = b.oom;
      tally_buf_close(&b);
      return oom ? TALLY_ENOMEM : 0;
    }
  }
  if (!a_ok || !e_ok) {
    const char *errs[] = {a_ok ? NULL : a->parse_err,
                          e_ok ? NULL : e->parse_err};
    tally_buf_t b;
    tally_buf_init(&b);
    join(&b, errs, 2);
    set_error(o, "parse math_equivalence expressions",
              b.data != NULL ? b.data : "");
    bool oom = b.oom;
    tally_buf_close(&b);
    return oom ? TALLY_ENOMEM : 0;
  }
  set_verdict(o, false, "symbolic forms are not equivalent");
  return 0;
}

int tally__es_math(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o) {
  const tally_es_math_t *c = v->state;
  side_t sd[2];
  memset(sd, 0, sizeof(sd));
  sd[0].raw = actual;
  sd[1].raw = expected;
  static const char *const names[] = {"actual", "expected"};
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0; i++) {
    char why[512];
    rc = tally_mx_normalize(sd[i].raw, c->extract, c->delim, &sd[i].norm, why,
                            sizeof(why));
    if (rc == TALLY_ENOMEM)
      break;
    if (rc != 0) {
      char ctx[64], key[32];
      snprintf(ctx, sizeof(ctx), "normalize %s math expression", names[i]);
      snprintf(key, sizeof(key), "%s_raw", names[i]);
      cJSON_AddStringToObject(o->evidence, key, sd[i].raw);
      set_error(o, ctx, why);
      rc = 1;
    }
  }
  if (rc == 0) {
    cJSON *ev = o->evidence;
    cJSON_AddStringToObject(ev, "actual_raw", actual);
    cJSON_AddStringToObject(ev, "expected_raw", expected);
    cJSON_AddStringToObject(ev, "normalized_actual", sd[0].norm);
    cJSON_AddStringToObject(ev, "normalized_expected", sd[1].norm);
    cJSON_AddStringToObject(ev, "comparison_mode",
                            c->numeric ? "numeric" : "symbolic");
    cJSON_AddBoolToObject(ev, "extract_answer", c->extract);
    cJSON_AddStringToObject(ev, "answer_delimiter", c->delim);
    cJSON_AddBoolToObject(ev, "numeric_fallback", c->fallback);
    cJSON_AddNumberToObject(ev, "tolerance", c->tolerance);
    rc = compare(c, sd, o);
  } else if (rc == 1) {
    rc = 0;
  }
  for (int i = 0; i < 2; i++) {
    free(sd[i].norm);
    free(sd[i].key);
    tally_mx_free(sd[i].expr);
  }
  return rc;
}
