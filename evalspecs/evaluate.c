/* Scoring a run with an evaluation spec: validators, metrics, dimensions,
 * the strategy's overall score and verdict, validity and warnings, with
 * the reference's rules and reasons. */
#include "evalspecs/evaluate.h"
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/validators.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tally__es_dupf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (s != NULL) {
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return s;
}

/* firstNonEmpty: the first text that is not blank, or "". */
const char *tally__es_first(const char *a, const char *b, const char *c) {
  if (a != NULL && !tally_go_blank(a))
    return a;
  if (b != NULL && !tally_go_blank(b))
    return b;
  return c != NULL ? c : "";
}

static const char *state_name(tally_es_state_t s) {
  return s == TALLY_ES_AVAILABLE     ? "available"
         : s == TALLY_ES_ERROR_STATE ? "error"
                                     : "unavailable";
}

static const char *verdict_name(tally_es_verdict_t v) {
  return v == TALLY_ES_PASS ? "pass" : v == TALLY_ES_FAIL ? "fail" : "error";
}

/* The regression case of a challenge: that of the one input in scope. */
const tally_es_uuid_t *tally__es_case_of(const tally_es_evidence_t *ev,
                                         const tally_es_uuid_t *challenge) {
  if (challenge == NULL || ev->run->ninputs != 1)
    return NULL;
  const tally_es_input_t *in = &ev->run->inputs[0];
  if (memcmp(in->challenge_id.b, challenge->b, 16) != 0 || !in->has_case_id)
    return NULL;
  return &in->case_id;
}

/* The event a target's value came from (resolveEvidenceSource). */
tally_es_source_ref_t tally__es_source_of(const tally_es_evidence_t *ev,
                                          const char *target) {
  tally_es_source_ref_t s = {0};
  if (strcmp(target, "final_output") == 0 ||
      strcmp(target, "run.final_output") == 0) {
    const tally_es_ref_t *r = ev->final_src.set         ? &ev->final_src
                              : ev->last_model_call.set ? &ev->last_model_call
                                                        : NULL;
    if (r != NULL)
      s = (tally_es_source_ref_t){
          true, ev->final_src.set ? "final_output" : "model_call", r->seq,
          r->type, "final_output"};
  } else if (strncmp(target, "file:", 5) == 0) {
    const tally_es_ref_t *r = NULL;
    for (int listing = 0; listing < 2 && r == NULL; listing++)
      for (size_t i = 0; i < ev->ncaptures; i++)
        if ((int)ev->captures[i].listing == listing &&
            strcmp(ev->captures[i].key, target + 5) == 0 &&
            ev->captures[i].src.set)
          r = &ev->captures[i].src;
    if (r != NULL)
      s = (tally_es_source_ref_t){true, "tool_call", r->seq, r->type, target};
  }
  return s;
}

/* outcome_class of a validator result. */
static const char *classify(const tally_es_vresult_t *v) {
  if (v->state == TALLY_ES_AVAILABLE) {
    if (v->has_verdict)
      return v->verdict == TALLY_ES_PASS   ? "pass"
             : v->verdict == TALLY_ES_FAIL ? "fail"
                                           : "evaluator_error";
    return v->has_score ? "fail" : "unavailable";
  }
  if (v->state == TALLY_ES_UNAVAILABLE_STATE)
    return "unavailable";
  /* An error the pack's author made, or tally's (or, for code_execution,
   * the platform's: infra_error). */
  char *r = strdup(v->reason);
  if (r == NULL)
    return "evaluator_error";
  for (char *p = r; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
  if (v->decl != NULL && v->decl->type_name != NULL &&
      strcmp(v->decl->type_name, "code_execution") == 0) {
    bool pack = strncmp(r, "parse code_execution config", 27) == 0 ||
                strstr(r, "pass_at_k requires") != NULL;
    free(r);
    return pack ? "pack_error" : "infra_error";
  }
  static const char *const contains[] = {
      "invalid regex pattern", "unsupported comparator", " config is required",
      "unsupported match_mode", "unsupported validator type"};
  bool pack = false;
  for (size_t i = 0; i < 5 && !pack; i++)
    pack = strstr(r, contains[i]) != NULL;
  pack = pack || (strstr(r, "invalid ") && strstr(r, " config")) ||
         (strstr(r, " config.") && strstr(r, " is required"));
  static const char *const prefixes[] = {
      "parse expected boolean assertion value",
      "parse expected numeric value",
      "parse expected as json",
      "parse fuzzy_match config",
      "parse numeric_match config",
      "parse normalized_match config",
      "parse token_f1 config",
      "parse math_equivalence config",
      "parse bleu_score config",
      "parse bleu_score references",
      "parse rouge_score config",
      "parse rouge_score references",
      "parse chrf_score config",
      "parse chrf_score references",
      "parse tool_call_assertion config",
      "parse json schema",
      "resolve json schema",
      "parse json_path_match expectation",
      "evaluate jsonpath expression",
      "compare jsonpath value"};
  for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !pack; i++)
    pack = strncmp(r, prefixes[i], strlen(prefixes[i])) == 0;
  free(r);
  return pack ? "pack_error" : "evaluator_error";
}

/* raw_output of a result that stopped early: {state, reason}. */
static cJSON *raw_state(tally_es_state_t state, const char *reason) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "state", state_name(state));
  cJSON_AddStringToObject(o, "reason", reason);
  return o;
}

/* Whether v holds a number that is not finite. */
static bool nonfinite(const cJSON *v) {
  if (cJSON_IsNumber(v))
    return !isfinite(v->valuedouble);
  for (const cJSON *x = v != NULL ? v->child : NULL; x != NULL; x = x->next)
    if (nonfinite(x))
      return true;
  return false;
}

static int one_validator(tally_es_eval_t *e, size_t i, tally_buf_t *value,
                         tally_buf_t *reason, tally_buf_t *xvalue,
                         tally_buf_t *xreason, tally_es_outcome_t *o) {
  const tally_es_validator_t *d = &e->spec->validators[i];
  tally_es_vresult_t *r = &e->validators[i];
  r->decl = d;
  /* Scored from the tool-call trace, not from references. */
  if (strcmp(d->type_name, "tool_call_assertion") == 0)
    return tally__es_tool_calls(&e->ev, d, r);
  if (strcmp(d->type_name, "code_execution") == 0)
    return tally__es_code_execution(&e->ev, d, r);
  if (strcmp(d->type_name, "postcondition") == 0)
    return tally__es_postcondition(&e->ev, d, r, value, reason, o);
  const tally_es_uuid_t *ac = NULL, *xc = NULL;
  int got = tally_es_resolve(&e->ev, d->target, value, reason, &ac);
  if (got < 0)
    return TALLY_ENOMEM;
  if (got == TALLY_ES_ERROR) {
    r->state = TALLY_ES_ERROR_STATE;
    r->reason = strdup(tally_buf_text(reason));
    r->raw = raw_state(r->state, r->reason ? r->reason : "");
    return r->reason == NULL || r->raw == NULL ? TALLY_ENOMEM : 0;
  }
  /* A file_exists target that is unavailable is a file that does not
   * exist: a verdict, not missing evidence. */
  if (got != TALLY_ES_FOUND && strcmp(d->type_name, "file_exists") == 0) {
    r->challenge = ac;
    r->case_id = tally__es_case_of(&e->ev, ac);
    r->source = tally__es_source_of(&e->ev, d->target);
    tally_buf_reset(&o->reason);
    tally__es_file_exists_unavailable(d, o);
    r->state = TALLY_ES_AVAILABLE;
    r->has_verdict = true;
    r->verdict = o->verdict;
    r->has_score = o->has_score;
    r->score = o->score;
    r->reason = strdup(tally_buf_text(&o->reason));
    cJSON *raw = cJSON_CreateObject();
    if (raw == NULL || r->reason == NULL) {
      cJSON_Delete(raw);
      return TALLY_ENOMEM;
    }
    cJSON_AddStringToObject(raw, "state", state_name(r->state));
    cJSON_AddStringToObject(raw, "verdict", verdict_name(r->verdict));
    cJSON_AddNumberToObject(raw, "normalized_score", r->score);
    cJSON_AddStringToObject(raw, "reason", r->reason);
    cJSON_AddStringToObject(raw, "target", d->target);
    r->raw = raw;
    return 0;
  }
  bool needs = (d->type->flags & TALLY_ES_NEEDS_EXPECTED) != 0;
  int xgot = TALLY_ES_FOUND;
  if (needs) {
    xgot = tally_es_resolve(&e->ev, d->expected_from, xvalue, xreason, &xc);
    if (xgot < 0)
      return TALLY_ENOMEM;
    if (xgot == TALLY_ES_ERROR) {
      r->state = TALLY_ES_ERROR_STATE;
      r->reason = strdup(tally_buf_text(xreason));
      r->raw = raw_state(r->state, r->reason ? r->reason : "");
      return r->reason == NULL || r->raw == NULL ? TALLY_ENOMEM : 0;
    }
  }
  r->challenge = ac != NULL ? ac : xc;
  r->case_id = tally__es_case_of(&e->ev, r->challenge);
  if (got != TALLY_ES_FOUND || xgot != TALLY_ES_FOUND) {
    r->state = TALLY_ES_UNAVAILABLE_STATE;
    r->reason = strdup(
        tally__es_first(got == TALLY_ES_FOUND ? "" : tally_buf_text(reason),
                        xgot == TALLY_ES_FOUND ? "" : tally_buf_text(xreason),
                        "evidence is unavailable"));
    r->raw = raw_state(r->state, r->reason ? r->reason : "");
    return r->reason == NULL || r->raw == NULL ? TALLY_ENOMEM : 0;
  }
  r->actual = strdup(tally_buf_text(value));
  r->expected = needs ? strdup(tally_buf_text(xvalue)) : NULL;
  r->source = tally__es_source_of(&e->ev, d->target);
  if (r->actual == NULL || (needs && r->expected == NULL) ||
      tally_es_apply(d, r->actual, needs ? r->expected : "", o) != 0)
    return TALLY_ENOMEM;
  r->has_verdict = true;
  r->verdict = o->verdict;
  r->has_score = o->has_score;
  r->score = o->score;
  r->reason = strdup(tally_buf_text(&o->reason));
  r->state =
      o->verdict == TALLY_ES_VERROR ? TALLY_ES_ERROR_STATE : TALLY_ES_AVAILABLE;
  /* raw_output: the result's fields, then the validator's own (a name
   * taken already gets "evidence_" before it). */
  cJSON *raw = cJSON_CreateObject();
  if (raw == NULL || r->reason == NULL)
    return TALLY_ENOMEM;
  cJSON_AddStringToObject(raw, "state", state_name(r->state));
  cJSON_AddStringToObject(raw, "verdict", verdict_name(r->verdict));
  if (r->has_score)
    cJSON_AddNumberToObject(raw, "normalized_score", r->score);
  else
    cJSON_AddNullToObject(raw, "normalized_score");
  cJSON_AddStringToObject(raw, "reason", r->reason);
  cJSON_AddStringToObject(raw, "target", d->target);
  cJSON_AddStringToObject(raw, "expected_from", d->expected_from);
  cJSON_AddStringToObject(raw, "actual_value", r->actual);
  if (r->expected != NULL)
    cJSON_AddStringToObject(raw, "expected_value", r->expected);
  else
    cJSON_AddNullToObject(raw, "expected_value");
  for (cJSON *m = o->evidence ? o->evidence->child : NULL; m != NULL;
       m = m->next) {
    cJSON *copy = cJSON_Duplicate(m, 1);
    if (copy == NULL)
      return TALLY_ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(raw, m->string) != NULL) {
      char name[200];
      snprintf(name, sizeof(name), "evidence_%s", m->string);
      cJSON_AddItemToObject(raw, name, copy);
    } else {
      cJSON_AddItemToObject(raw, m->string, copy);
    }
  }
  /* The reference's marshalling fails on a number that is not finite,
   * and its raw_output is then {} (outcome_class is added later). */
  if (nonfinite(raw)) {
    cJSON_Delete(raw);
    raw = cJSON_CreateObject();
  }
  r->raw = raw;
  return raw == NULL ? TALLY_ENOMEM : 0;
}

static int validators(tally_es_eval_t *e) {
  tally_buf_t value, reason, xvalue, xreason;
  tally_buf_init(&value);
  tally_buf_init(&reason);
  tally_buf_init(&xvalue);
  tally_buf_init(&xreason);
  tally_es_outcome_t o;
  tally_es_outcome_init(&o);
  int rc = 0;
  for (size_t i = 0; i < e->spec->nvalidators && rc == 0; i++) {
    rc = one_validator(e, i, &value, &reason, &xvalue, &xreason, &o);
    tally_es_vresult_t *r = &e->validators[i];
    if (rc == 0) {
      r->outcome_class = classify(r);
      cJSON_AddStringToObject(r->raw, "outcome_class", r->outcome_class);
    }
  }
  tally_es_outcome_close(&o);
  tally_buf_close(&value);
  tally_buf_close(&reason);
  tally_buf_close(&xvalue);
  tally_buf_close(&xreason);
  return rc;
}

/* Dimensions. */

static double lower_is_better(double v, double target, double max) {
  if (v <= target)
    return 1;
  if (v >= max)
    return 0;
  if (max <= target)
    return 0;
  return 1 - ((v - target) / (max - target));
}

static double higher_is_better(double v, double target, double floor_) {
  if (v >= target)
    return 1;
  if (v <= floor_)
    return 0;
  if (target <= floor_)
    return 0;
  return (v - floor_) / (target - floor_);
}

static void dim_set(tally_es_dresult_t *d, tally_es_state_t state,
                    const double *score, char *reason) {
  d->state = state;
  d->has_score = score != NULL;
  d->score = score ? *score : 0;
  d->reason = reason != NULL ? reason : strdup("");
}

static void one_dimension(tally_es_eval_t *e, tally_es_dresult_t *d) {
  const tally_es_dimension_t *dim = d->decl;
  const tally_es_evidence_t *ev = &e->ev;
  double score;
  switch (dim->source) {
  case TALLY_ES_SRC_VALIDATORS: {
    double total = 0;
    size_t n = 0;
    for (size_t i = 0; i < e->spec->nvalidators; i++) {
      const tally_es_vresult_t *v = &e->validators[i];
      bool in_scope = dim->nvalidators == 0;
      for (size_t k = 0; k < dim->nvalidators && !in_scope; k++)
        in_scope = strcmp(dim->validators[k], v->decl->key) == 0;
      if (!in_scope)
        continue;
      n++;
      char *q = tally_go_quoted(v->decl->key);
      if (v->state == TALLY_ES_ERROR_STATE) {
        dim_set(d, TALLY_ES_ERROR_STATE, NULL,
                tally__es_dupf(
                    "validator %s errored: %s", q ? q : "",
                    tally__es_first(v->reason, NULL, "validator error")));
        free(q);
        return;
      }
      if (v->state != TALLY_ES_AVAILABLE || !v->has_score) {
        dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
                tally__es_dupf("validator %s is unavailable: %s", q ? q : "",
                               tally__es_first(v->reason, NULL,
                                               "missing validator evidence")));
        free(q);
        return;
      }
      free(q);
      total += v->score;
    }
    if (n == 0) {
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("no validators in scope"));
      return;
    }
    score = total / (double)n;
    dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    return;
  }
  case TALLY_ES_SRC_RELIABILITY: {
    const tally_es_mresult_t *done = NULL, *fails = NULL;
    for (size_t i = 0; i < e->spec->nmetrics; i++) {
      const char *c = e->metrics[i].decl->collector;
      if (done == NULL && strcmp(c, "run_completed_successfully") == 0)
        done = &e->metrics[i];
      if (fails == NULL && strcmp(c, "run_failure_count") == 0)
        fails = &e->metrics[i];
    }
    if (done == NULL || fails == NULL)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("reliability requires completion and failure-count "
                     "metrics"));
    else if (done->state != TALLY_ES_AVAILABLE || !done->has_bool)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("completion metric is unavailable"));
    else if (fails->state != TALLY_ES_AVAILABLE || !fails->has_number)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("failure-count metric is unavailable"));
    else {
      score = done->boolean && fails->number == 0 ? 1 : 0;
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    return;
  }
  case TALLY_ES_SRC_LATENCY: {
    double ms;
    const char *why;
    cJSON *meta;
    bool ok = tally__es_total_latency(ev, &ms, &why, &meta);
    cJSON_Delete(meta);
    if (!ok)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL, strdup(why));
    else if (!dim->has_normalization || !dim->target.set || !dim->max.set)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("latency normalization config is unavailable"));
    else {
      score = lower_is_better(ms, dim->target.v, dim->max.v);
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    return;
  }
  case TALLY_ES_SRC_COST: {
    double usd;
    char *why;
    cJSON *meta;
    bool ok = tally__es_model_cost(ev, e->spec, &usd, &why, &meta);
    cJSON_Delete(meta);
    if (!ok)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL, why);
    else if (!dim->has_normalization || !dim->target.set || !dim->max.set)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("cost normalization config is unavailable"));
    else {
      score = lower_is_better(usd, dim->target.v, dim->max.v);
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    if (ok)
      free(why);
    return;
  }
  case TALLY_ES_SRC_METRIC: {
    const tally_es_mresult_t *m = NULL;
    for (size_t i = 0; i < e->spec->nmetrics && m == NULL; i++)
      if (strcmp(e->metrics[i].decl->key, dim->metric) == 0)
        m = &e->metrics[i];
    char *q = tally_go_quoted(dim->metric);
    if (dim->metric[0] == '\0')
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              strdup("dimension metric key is not set"));
    else if (m == NULL || m->state != TALLY_ES_AVAILABLE || !m->has_number)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              tally__es_dupf("metric %s is unavailable", q ? q : ""));
    else if (!dim->has_normalization || !dim->target.set || !dim->max.set)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("metric normalization config is unavailable"));
    else if (strcmp(dim->better_direction, "lower") == 0) {
      score = lower_is_better(m->number, dim->target.v, dim->max.v);
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    } else if (strcmp(dim->better_direction, "higher") == 0) {
      score = higher_is_better(m->number, dim->target.v, dim->max.v);
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    } else {
      char *qd = tally_go_quoted(dim->better_direction);
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              tally__es_dupf("unsupported better_direction %s", qd ? qd : ""));
      free(qd);
    }
    free(q);
    return;
  }
  case TALLY_ES_SRC_LLM_JUDGE: {
    char *q = tally_go_quoted(dim->judge_key);
    const tally_es_judge_result_t *j = NULL;
    for (size_t i = 0; i < e->run->njudges && j == NULL; i++)
      if (strcmp(e->run->judges[i].judge_key, dim->judge_key) == 0)
        j = &e->run->judges[i];
    if (dim->judge_key[0] == '\0') {
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              strdup("dimension judge_key is not set"));
    } else if (j == NULL || !j->has_score) {
      char *dflt = tally__es_dupf("llm judge %s is unavailable", q ? q : "");
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup(tally__es_first(j ? j->reason : NULL, NULL,
                                     dflt ? dflt : "")));
      free(dflt);
    } else {
      score = j->score;
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    free(q);
    return;
  }
  case TALLY_ES_SRC_HUMAN_PREFERENCE:
    if (!e->run->has_preference) {
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("human preference evidence is unavailable"));
    } else {
      score = e->run->preference;
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    return;
  case TALLY_ES_SRC_BEHAVIORAL: {
    const tally_es_spec_t *s = e->spec;
    if (!s->has_behavioral || s->nsignals == 0) {
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("behavioral config is unavailable"));
      return;
    }
    double total = 0, sum = 0;
    tally_buf_t gates;
    tally_buf_init(&gates);
    for (size_t i = 0; i < s->nsignals; i++) {
      const tally_es_signal_t *sg = &s->signals[i];
      const char *why;
      double v;
      int rc = tally__es_signal(e, sg->key, &v, &why);
      if (rc != 1) {
        char *q = tally_go_quoted(sg->key);
        dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
                tally__es_dupf(
                    "behavioral signal %s is unavailable: %s", q ? q : "",
                    tally__es_first(why, "", "signal is unavailable")));
        free(q);
        tally_buf_close(&gates);
        return;
      }
      total += sg->weight;
      sum += sg->weight * v;
      if (sg->gate && sg->pass_threshold.set && v < sg->pass_threshold.v) {
        char g[600];
        snprintf(g, sizeof(g), "%s%s=%.3f < %.3f", gates.len ? ", " : "",
                 sg->key, v, sg->pass_threshold.v);
        tally_buf_puts(&gates, g);
      }
    }
    if (total <= 0) {
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup("behavioral weights are unavailable"));
    } else if (gates.len > 0) {
      score = 0;
      dim_set(
          d, TALLY_ES_AVAILABLE, &score,
          tally__es_dupf("behavioral gate failed: %s", tally_buf_text(&gates)));
    } else {
      score = sum / total;
      dim_set(d, TALLY_ES_AVAILABLE, &score, NULL);
    }
    tally_buf_close(&gates);
    return;
  }
  default: {
    char *q = tally_go_quoted(dim->source_name);
    dim_set(d, TALLY_ES_ERROR_STATE, NULL,
            tally__es_dupf("unsupported dimension source %s", q ? q : ""));
    free(q);
    return;
  }
  }
}

/* The overall score and verdict (computeOverallScore). */

static bool gated(const tally_es_spec_t *s, const tally_es_dimension_t *d) {
  return d->gate || s->strategy == TALLY_ES_BINARY;
}

static const char *strategy_word(const tally_es_spec_t *s) {
  return s->strategy == TALLY_ES_BINARY            ? "binary"
         : s->strategy == TALLY_ES_HYBRID_STRATEGY ? "hybrid"
                                                   : "weighted";
}

/* The first required (gated) dimension not available, or NULL. */
static const tally_es_dresult_t *first_unavailable_gate(tally_es_eval_t *e) {
  for (size_t i = 0; i < e->spec->ndims; i++) {
    const tally_es_dresult_t *d = &e->dims[i];
    if (gated(e->spec, d->decl) &&
        (d->state != TALLY_ES_AVAILABLE || !d->has_score))
      return d;
  }
  return NULL;
}

static char *gate_reason(tally_es_eval_t *e, const tally_es_dresult_t *d) {
  const char *s = strategy_word(e->spec);
  bool binary = e->spec->strategy == TALLY_ES_BINARY;
  char *q = tally_go_quoted(d->decl->key);
  char *r = tally__es_dupf(
      "%s: %sdimension %s %s", s, binary ? "" : "gated ", q ? q : "",
      d->state == TALLY_ES_ERROR_STATE ? "has evaluator error"
                                       : "is unavailable");
  free(q);
  return r;
}

static double weighted_average(tally_es_eval_t *e, bool skip_gates) {
  double tw = 0, ws = 0, sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < e->spec->ndims; i++) {
    const tally_es_dresult_t *d = &e->dims[i];
    if (d->state != TALLY_ES_AVAILABLE || !d->has_score)
      continue;
    if (skip_gates && d->decl->gate)
      continue;
    double w = d->decl->weight.set ? d->decl->weight.v : 1.0;
    tw += w;
    ws += w * d->score;
    sum += d->score;
    n++;
  }
  if (tw == 0)
    return sum / (double)n;
  return ws / tw;
}

static void overall(tally_es_eval_t *e) {
  const tally_es_spec_t *s = e->spec;
  size_t available = 0, non_gated = 0;
  const tally_es_dresult_t *failed_gate = NULL;
  for (size_t i = 0; i < s->ndims; i++) {
    const tally_es_dresult_t *d = &e->dims[i];
    if (d->state != TALLY_ES_AVAILABLE || !d->has_score)
      continue;
    available++;
    if (!d->decl->gate)
      non_gated++;
    if (gated(s, d->decl) && d->decl->pass_threshold.set &&
        d->score < d->decl->pass_threshold.v && failed_gate == NULL)
      failed_gate = d;
  }
  const tally_es_dresult_t *missing = first_unavailable_gate(e);
  e->has_overall = e->has_passed = true;
  e->passed = false;
  e->overall = 0;
  if (available == 0) {
    if (s->strategy == TALLY_ES_BINARY ||
        (missing != NULL && s->strategy == TALLY_ES_HYBRID_STRATEGY)) {
      e->overall_reason = missing ? gate_reason(e, missing)
                                  : strdup("required dimension is unavailable");
    } else if (missing != NULL) {
      e->has_overall = false;
      e->overall_reason = gate_reason(e, missing);
    } else {
      e->has_overall = e->has_passed = false;
      e->overall_reason = strdup("no dimensions produced an available score");
    }
    return;
  }
  char *q = failed_gate ? tally_go_quoted(failed_gate->decl->key) : NULL;
  const char *fg = q ? q : "\"\"";
  switch (s->strategy) {
  case TALLY_ES_BINARY:
    e->passed = failed_gate == NULL && missing == NULL;
    e->overall = e->passed ? 1 : 0;
    e->overall_reason =
        missing ? gate_reason(e, missing)
        : !e->passed
            ? tally__es_dupf("binary: dimension %s below pass_threshold", fg)
            : strdup("");
    break;
  case TALLY_ES_HYBRID_STRATEGY:
    if (missing != NULL) {
      e->overall_reason = gate_reason(e, missing);
    } else if (failed_gate != NULL) {
      e->overall_reason =
          tally__es_dupf("hybrid: gated dimension %s below pass_threshold", fg);
    } else if (non_gated == 0) {
      e->overall = 1;
      e->passed = true;
      e->overall_reason = strdup("hybrid: all dimensions are gates and all "
                                 "passed");
    } else {
      e->overall = weighted_average(e, true);
      e->passed = true;
      e->overall_reason = strdup("");
      if (s->pass_threshold.set && e->overall < s->pass_threshold.v) {
        e->passed = false;
        free(e->overall_reason);
        e->overall_reason = tally__es_dupf(
            "hybrid: non-gate weighted score %.4f below scorecard "
            "pass_threshold %.4f",
            e->overall, s->pass_threshold.v);
      }
    }
    break;
  default:
    e->overall = weighted_average(e, false);
    e->passed = failed_gate == NULL && missing == NULL;
    if (missing != NULL)
      e->overall_reason = gate_reason(e, missing);
    else if (!e->passed)
      e->overall_reason = tally__es_dupf(
          "weighted: gated dimension %s below pass_threshold", fg);
    else if (s->pass_threshold.set && e->overall < s->pass_threshold.v) {
      e->passed = false;
      e->overall_reason =
          tally__es_dupf("weighted: overall score %.4f below scorecard "
                         "pass_threshold %.4f",
                         e->overall, s->pass_threshold.v);
    } else {
      e->overall_reason = strdup("");
    }
  }
  free(q);
}

static void validity(tally_es_eval_t *e) {
  const tally_es_spec_t *s = e->spec;
  char *q;
  for (size_t i = 0; i < s->nvalidators; i++)
    if (e->validators[i].state == TALLY_ES_ERROR_STATE) {
      q = tally_go_quoted(e->validators[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason = tally__es_dupf(
          "validator %s errored: %s", q ? q : "",
          tally__es_first(e->validators[i].reason, NULL, "validator error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nmetrics; i++)
    if (e->metrics[i].state == TALLY_ES_ERROR_STATE) {
      q = tally_go_quoted(e->metrics[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason = tally__es_dupf(
          "metric %s errored: %s", q ? q : "",
          tally__es_first(e->metrics[i].reason, NULL, "metric error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->ndims; i++)
    if (e->dims[i].state == TALLY_ES_ERROR_STATE) {
      q = tally_go_quoted(e->dims[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason = tally__es_dupf(
          "dimension %s errored: %s", q ? q : "",
          tally__es_first(e->dims[i].reason, NULL, "dimension error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->ndims; i++)
    if (e->dims[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = tally_go_quoted(e->dims[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason = tally__es_dupf(
          "dimension %s unavailable: %s", q ? q : "",
          tally__es_first(e->dims[i].reason, NULL, "missing scoring evidence"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nvalidators; i++)
    if (e->validators[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = tally_go_quoted(e->validators[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason =
          tally__es_dupf("validator %s unavailable: %s", q ? q : "",
                         tally__es_first(e->validators[i].reason, NULL,
                                         "missing validator evidence"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nmetrics; i++)
    if (e->metrics[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = tally_go_quoted(e->metrics[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason =
          tally__es_dupf("metric %s unavailable: %s", q ? q : "",
                         tally__es_first(e->metrics[i].reason, NULL,
                                         "missing metric evidence"));
      free(q);
      return;
    }
  e->validity_state = TALLY_ES_AVAILABLE;
  e->validity_reason = strdup("");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The evidence warnings (once from the validators, once from the
 * metrics), then the unavailable reasons of the dimensions whose source
 * reads evidence; empty ones dropped, each once, sorted. */
static int warnings(tally_es_eval_t *e) {
  size_t cap = 2 * e->ev.nwarnings + e->spec->ndims + 1, n = 0;
  char **w = calloc(cap, sizeof(*w));
  if (w == NULL)
    return TALLY_ENOMEM;
  for (size_t i = 0; i < e->ev.nwarnings; i++)
    w[n++] = (char *)e->ev.warnings[i];
  for (size_t i = 0; i < e->spec->ndims; i++) {
    const tally_es_dresult_t *d = &e->dims[i];
    tally_es_source_t src = d->decl->source;
    if ((src == TALLY_ES_SRC_LATENCY || src == TALLY_ES_SRC_COST ||
         src == TALLY_ES_SRC_BEHAVIORAL || src == TALLY_ES_SRC_METRIC ||
         src == TALLY_ES_SRC_LLM_JUDGE) &&
        d->state == TALLY_ES_UNAVAILABLE_STATE && d->reason[0] != '\0')
      w[n++] = d->reason;
  }
  qsort(w, n, sizeof(*w), cmp_str);
  e->warnings = calloc(n + 1, sizeof(*e->warnings));
  if (e->warnings == NULL) {
    free(w);
    return TALLY_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    if (w[i][0] == '\0' || (i > 0 && strcmp(w[i], w[i - 1]) == 0))
      continue;
    if ((e->warnings[e->nwarnings] = strdup(w[i])) == NULL) {
      free(w);
      return TALLY_ENOMEM;
    }
    e->nwarnings++;
  }
  free(w);
  return 0;
}

int tally_es_evaluate(tally_es_eval_t *e, const tally_es_spec_t *spec,
                      const tally_es_run_t *run) {
  memset(e, 0, sizeof(*e));
  e->spec = spec;
  e->run = run;
  int rc = tally_es_evidence_build(&e->ev, run);
  if (rc != 0)
    return rc;
  e->validators = calloc(spec->nvalidators + 1, sizeof(*e->validators));
  e->metrics = calloc(spec->nmetrics + 1, sizeof(*e->metrics));
  e->dims = calloc(spec->ndims + 1, sizeof(*e->dims));
  if (e->validators == NULL || e->metrics == NULL || e->dims == NULL)
    return TALLY_ENOMEM;
  if ((rc = validators(e)) != 0)
    return rc;
  for (size_t i = 0; i < spec->nmetrics; i++) {
    e->metrics[i].decl = &spec->metrics[i];
    tally__es_metric(e, &e->metrics[i]);
    if (e->metrics[i].reason == NULL || e->metrics[i].metadata == NULL)
      return TALLY_ENOMEM;
  }
  e->complete = spec->ndims > 0;
  bool any_score = false;
  for (size_t i = 0; i < spec->ndims; i++) {
    e->dims[i].decl = &spec->dims[i];
    one_dimension(e, &e->dims[i]);
    if (e->dims[i].reason == NULL)
      return TALLY_ENOMEM;
    if (e->dims[i].state != TALLY_ES_AVAILABLE)
      e->complete = false;
    any_score = any_score || e->dims[i].has_score;
  }
  if (!any_score)
    e->complete = false;
  overall(e);
  validity(e);
  if (e->overall_reason == NULL || e->validity_reason == NULL)
    return TALLY_ENOMEM;
  return warnings(e);
}

void tally_es_eval_free(tally_es_eval_t *e) {
  for (size_t i = 0; e->validators != NULL && i < e->spec->nvalidators; i++) {
    free(e->validators[i].reason);
    free(e->validators[i].actual);
    free(e->validators[i].expected);
    cJSON_Delete(e->validators[i].raw);
  }
  free(e->validators);
  for (size_t i = 0; e->metrics != NULL && i < e->spec->nmetrics; i++) {
    free(e->metrics[i].reason);
    cJSON_Delete(e->metrics[i].metadata);
  }
  free(e->metrics);
  for (size_t i = 0; e->dims != NULL && i < e->spec->ndims; i++)
    free(e->dims[i].reason);
  free(e->dims);
  free(e->overall_reason);
  free(e->validity_reason);
  for (size_t i = 0; i < e->nwarnings; i++)
    free(e->warnings[i]);
  free(e->warnings);
  tally_es_evidence_free(&e->ev);
  memset(e, 0, sizeof(*e));
}

const char *tally_es_validity_name(const tally_es_eval_t *e) {
  return e->validity_state == TALLY_ES_AVAILABLE           ? "valid"
         : e->validity_state == TALLY_ES_UNAVAILABLE_STATE ? "degraded"
                                                           : "invalid";
}
