/* Scoring a run with an evaluation spec: validators, metrics, dimensions,
 * the strategy's overall score and verdict, validity and warnings, with
 * the reference's rules and reasons. */
#include "evalspecs/evaluate.h"
#include "config/error.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/validators.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dupf(const char *fmt, ...) {
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

/* Go's %q of s, as a new string. */
static char *quote(const char *s) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_go_quote(&b, s);
  char *q = b.oom ? NULL : strdup(tally_buf_text(&b));
  tally_buf_close(&b);
  return q;
}

/* firstNonEmpty: the first text that is not blank, or "". */
static const char *first_non_empty(const char *a, const char *b,
                                   const char *c) {
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
static const tally_es_uuid_t *case_of(const tally_es_evidence_t *ev,
                                      const tally_es_uuid_t *challenge) {
  if (challenge == NULL || ev->run->ninputs != 1)
    return NULL;
  const tally_es_input_t *in = &ev->run->inputs[0];
  if (memcmp(in->challenge_id.b, challenge->b, 16) != 0 || !in->has_case_id)
    return NULL;
  return &in->case_id;
}

/* The event a target's value came from (resolveEvidenceSource). */
static tally_es_source_ref_t source_of(const tally_es_evidence_t *ev,
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
  /* An error the pack's author made, or tally's. */
  char *r = strdup(v->reason);
  if (r == NULL)
    return "evaluator_error";
  for (char *p = r; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
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
  r->case_id = case_of(&e->ev, r->challenge);
  if (got != TALLY_ES_FOUND || xgot != TALLY_ES_FOUND) {
    r->state = TALLY_ES_UNAVAILABLE_STATE;
    r->reason = strdup(
        first_non_empty(got == TALLY_ES_FOUND ? "" : tally_buf_text(reason),
                        xgot == TALLY_ES_FOUND ? "" : tally_buf_text(xreason),
                        "evidence is unavailable"));
    r->raw = raw_state(r->state, r->reason ? r->reason : "");
    return r->reason == NULL || r->raw == NULL ? TALLY_ENOMEM : 0;
  }
  r->actual = strdup(tally_buf_text(value));
  r->expected = needs ? strdup(tally_buf_text(xvalue)) : NULL;
  r->source = source_of(&e->ev, d->target);
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

/* Metrics. */

static void time_member(cJSON *o, const char *name, tally_es_time_t t) {
  char text[40];
  tally_es_time_text(t, text);
  cJSON_AddStringToObject(o, name, text);
}

static cJSON *step_durations(const tally_es_evidence_t *ev) {
  if (ev->nsteps == 0)
    return cJSON_CreateNull();
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr != NULL && i < ev->nsteps; i++) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "step_index", (double)ev->steps[i].index);
    cJSON_AddNumberToObject(s, "duration_ms", ev->steps[i].ms);
    time_member(s, "started_at", ev->steps[i].started);
    time_member(s, "completed_at", ev->steps[i].completed);
    cJSON_AddItemToArray(arr, s);
  }
  return arr;
}

/* The run's total latency (ms), or false with the reason; metadata in
 * *meta either way. */
static bool total_latency(const tally_es_evidence_t *ev, double *ms,
                          const char **why, cJSON **meta) {
  *meta = cJSON_CreateObject();
  if (!ev->has_started || !ev->has_terminal) {
    *why = "latency evidence is unavailable";
    cJSON_AddItemToObject(*meta, "step_durations", step_durations(ev));
    return false;
  }
  *ms = (double)tally_es_ms_between(ev->terminal, ev->started);
  cJSON_AddStringToObject(*meta, "state", "available");
  time_member(*meta, "started_at", ev->started);
  time_member(*meta, "ended_at", ev->terminal);
  cJSON_AddItemToObject(*meta, "step_durations", step_durations(ev));
  if (ev->has_first_output) {
    time_member(*meta, "first_output_at", ev->first_output);
    cJSON_AddNumberToObject(
        *meta, "ttft_ms",
        (double)tally_es_ms_between(ev->first_output, ev->started));
  }
  return true;
}

/* normalizePricedModelID: a trailing -YYYY-MM-DD is dropped. */
static bool dated(const char *id, size_t *cut) {
  size_t n = strlen(id);
  if (n < 11)
    return false;
  const char *t = id + n - 11;
  bool ok = t[0] == '-' && t[5] == '-' && t[8] == '-';
  for (int i = 1; ok && i < 11; i++)
    ok = i == 5 || i == 8 || (t[i] >= '0' && t[i] <= '9');
  /* at least four parts: something before the date */
  if (ok && strchr(id, '-') == t)
    ok = false;
  *cut = n - 11;
  return ok;
}

static const tally_es_pricing_t *
pricing_of(const tally_es_spec_t *s, const char *provider, const char *model) {
  char *trimmed = tally_go_trimmed(model);
  if (trimmed == NULL)
    return NULL;
  for (size_t i = 0; i < s->npricing; i++)
    if (strcmp(s->pricing[i].provider_key, provider) == 0 &&
        strcmp(s->pricing[i].provider_model_id, model) == 0) {
      free(trimmed);
      return &s->pricing[i];
    }
  size_t cut;
  const tally_es_pricing_t *found = NULL;
  const char *norm = trimmed;
  if (dated(trimmed, &cut))
    trimmed[cut] = '\0';
  if (strcmp(norm, model) != 0)
    for (size_t i = 0; i < s->npricing && found == NULL; i++)
      if (strcmp(s->pricing[i].provider_key, provider) == 0 &&
          strcmp(s->pricing[i].provider_model_id, norm) == 0)
        found = &s->pricing[i];
  free(trimmed);
  return found;
}

/* The run's model cost in USD (computeModelCostUSD). */
static bool model_cost(const tally_es_evidence_t *ev, const tally_es_spec_t *s,
                       double *usd, char **why, cJSON **meta) {
  *meta = NULL;
  *why = NULL;
  if (s->npricing == 0) {
    *why = strdup("model pricing is unavailable");
    return false;
  }
  tally_es_usage_t single;
  const tally_es_usage_t *usage = ev->usage;
  size_t n = ev->nusage;
  if (n == 0) {
    if (ev->nmodels != 1) {
      *why = strdup("model usage evidence is unavailable");
      *meta = cJSON_CreateObject();
      cJSON *arr = cJSON_AddArrayToObject(*meta, "observed_models");
      for (size_t i = 0; arr != NULL && i < ev->nmodels; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "ProviderKey", ev->models[i].provider);
        cJSON_AddStringToObject(m, "ProviderModelID", ev->models[i].model);
        cJSON_AddItemToArray(arr, m);
      }
      if (ev->nmodels == 0) {
        cJSON_DeleteItemFromObject(*meta, "observed_models");
        cJSON_AddNullToObject(*meta, "observed_models");
      }
      return false;
    }
    if (!ev->input_tokens.set && !ev->output_tokens.set &&
        !ev->total_tokens.set) {
      *why = strdup("model usage evidence is unavailable");
      *meta = cJSON_CreateObject();
      cJSON_AddStringToObject(*meta, "provider_key", ev->models[0].provider);
      cJSON_AddStringToObject(*meta, "provider_model_id", ev->models[0].model);
      return false;
    }
    single = ev->models[0];
    single.input = ev->input_tokens.set ? ev->input_tokens.v : 0;
    single.output = ev->output_tokens.set ? ev->output_tokens.v : 0;
    single.total = ev->total_tokens.set ? ev->total_tokens.v
                                        : single.input + single.output;
    usage = &single;
    n = 1;
  }
  double total = 0;
  cJSON *rows = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) {
    const tally_es_pricing_t *p =
        pricing_of(s, usage[i].provider, usage[i].model);
    if (p == NULL) {
      char *qp = quote(usage[i].provider), *qm = quote(usage[i].model);
      *why = dupf("model pricing is unavailable for provider %s model %s",
                  qp ? qp : "", qm ? qm : "");
      free(qp);
      free(qm);
      cJSON_Delete(rows);
      *meta = cJSON_CreateObject();
      cJSON_AddStringToObject(*meta, "provider_key", usage[i].provider);
      cJSON_AddStringToObject(*meta, "provider_model_id", usage[i].model);
      return false;
    }
    double cost = (usage[i].input / 1000000) * p->input_per_million +
                  (usage[i].output / 1000000) * p->output_per_million;
    total += cost;
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "provider_key", usage[i].provider);
    cJSON_AddStringToObject(row, "provider_model_id", usage[i].model);
    cJSON_AddNumberToObject(row, "input_tokens", usage[i].input);
    cJSON_AddNumberToObject(row, "output_tokens", usage[i].output);
    cJSON_AddNumberToObject(row, "total_tokens", usage[i].total);
    cJSON_AddNumberToObject(row, "cost_usd", cost);
    cJSON_AddItemToArray(rows, row);
  }
  *usd = total;
  *meta = cJSON_CreateObject();
  cJSON_AddStringToObject(*meta, "state", "available");
  cJSON_AddItemToObject(*meta, "breakdown", rows);
  cJSON_AddNumberToObject(*meta, "total_usd", total);
  cJSON_AddBoolToObject(*meta, "priced_run", true);
  return true;
}

static cJSON *simple_meta(const char *state, const char *collector,
                          const char *reason) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "state", state);
  cJSON_AddStringToObject(o, "collector", collector);
  if (reason != NULL)
    cJSON_AddStringToObject(o, "reason", reason);
  return o;
}

/* A metric made unavailable: metadata of the collector (if any) with
 * state, collector and reason set. */
static void unavailable(tally_es_mresult_t *m, const char *reason,
                        cJSON *meta) {
  m->state = TALLY_ES_UNAVAILABLE_STATE;
  m->reason = strdup(reason);
  if (meta == NULL) {
    m->metadata = simple_meta("unavailable", m->decl->collector, reason);
    return;
  }
  cJSON_DeleteItemFromObject(meta, "state");
  cJSON_DeleteItemFromObject(meta, "collector");
  cJSON_DeleteItemFromObject(meta, "reason");
  cJSON_AddStringToObject(meta, "state", "unavailable");
  cJSON_AddStringToObject(meta, "collector", m->decl->collector);
  cJSON_AddStringToObject(meta, "reason", reason);
  m->metadata = meta;
}

static void number(tally_es_mresult_t *m, double v) {
  m->state = TALLY_ES_AVAILABLE;
  m->has_number = true;
  m->number = v;
  m->metadata = simple_meta("available", m->decl->collector, NULL);
}

static void one_metric(tally_es_eval_t *e, tally_es_mresult_t *m) {
  const tally_es_evidence_t *ev = &e->ev;
  const char *c = m->decl->collector;
  if (strcmp(c, "run_total_latency_ms") == 0) {
    double ms;
    const char *why;
    cJSON *meta;
    if (total_latency(ev, &ms, &why, &meta)) {
      m->state = TALLY_ES_AVAILABLE;
      m->has_number = true;
      m->number = ms;
      m->metadata = meta;
    } else {
      unavailable(m, why, meta);
    }
  } else if (strcmp(c, "run_ttft_ms") == 0) {
    if (!ev->has_started || !ev->has_first_output) {
      unavailable(m, "time-to-first-output evidence is unavailable", NULL);
    } else {
      number(m, (double)tally_es_ms_between(ev->first_output, ev->started));
      cJSON_Delete(m->metadata);
      m->metadata = cJSON_CreateObject();
      cJSON_AddStringToObject(m->metadata, "state", "available");
      time_member(m->metadata, "started_at", ev->started);
      time_member(m->metadata, "first_output_at", ev->first_output);
    }
  } else if (strcmp(c, "run_input_tokens") == 0 ||
             strcmp(c, "run_output_tokens") == 0 ||
             strcmp(c, "run_total_tokens") == 0 ||
             strcmp(c, "run_tool_call_count") == 0) {
    const tally_es_num_t *v = c[4] == 'i'   ? &ev->input_tokens
                              : c[4] == 'o' ? &ev->output_tokens
                              : c[4] == 't' && c[5] == 'o' && c[6] == 't'
                                  ? &ev->total_tokens
                                  : &ev->tool_calls;
    const char *why =
        v == &ev->input_tokens    ? "input token usage is unavailable"
        : v == &ev->output_tokens ? "output token usage is unavailable"
        : v == &ev->total_tokens  ? "total token usage is unavailable"
                                  : "tool call count is unavailable";
    if (v->set)
      number(m, v->v);
    else
      unavailable(m, why, NULL);
  } else if (strcmp(c, "run_agent_tokens") == 0) {
    if (!ev->total_tokens.set) {
      unavailable(m, "agent token usage is unavailable", NULL);
    } else {
      double t = ev->total_tokens.v - ev->race_tokens;
      number(m, t < 0 ? 0 : t);
    }
  } else if (strcmp(c, "run_race_context_tokens") == 0) {
    number(m, ev->race_tokens);
  } else if (strcmp(c, "run_model_cost_usd") == 0) {
    double usd;
    char *why;
    cJSON *meta;
    if (model_cost(ev, e->spec, &usd, &why, &meta)) {
      m->state = TALLY_ES_AVAILABLE;
      m->has_number = true;
      m->number = usd;
      m->metadata = meta;
    } else {
      unavailable(m, why ? why : "", meta);
      free(why);
    }
  } else if (strcmp(c, "run_completed_successfully") == 0) {
    if (ev->completed < 0) {
      unavailable(m, "terminal success evidence is unavailable", NULL);
    } else {
      m->state = TALLY_ES_AVAILABLE;
      m->has_bool = true;
      m->boolean = ev->completed == 1;
      m->metadata = simple_meta("available", c, NULL);
    }
  } else if (strcmp(c, "run_failure_count") == 0) {
    number(m, (double)ev->failures);
  } else if (strcmp(c, "validator_pass_rate") == 0) {
    size_t n = e->spec->nvalidators;
    double total = 0;
    bool all = n > 0;
    for (size_t i = 0; i < n && all; i++) {
      all = e->validators[i].state == TALLY_ES_AVAILABLE &&
            e->validators[i].has_score;
      total += e->validators[i].score;
    }
    if (n == 0)
      unavailable(m, "validator pass rate requires validator results", NULL);
    else if (!all)
      unavailable(m,
                  "validator pass rate requires all validators to be "
                  "available",
                  NULL);
    else
      number(m, total / (double)n);
  } else if (strncmp(c, "behavioral_", 11) == 0) {
    unavailable(m,
                "behavioral signals are not scored by this version of tally "
                "yet",
                NULL);
  } else {
    char *q = quote(c);
    char *why = dupf("collector %s is not supported", q ? q : "");
    m->state = TALLY_ES_ERROR_STATE;
    m->reason = why;
    m->metadata = simple_meta("error", c, why ? why : "");
    free(q);
  }
  if (m->reason == NULL)
    m->reason = strdup("");
  if (ev->challenge_id != NULL) {
    m->challenge = ev->challenge_id;
    m->case_id = case_of(ev, ev->challenge_id);
  }
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
      char *q = quote(v->decl->key);
      if (v->state == TALLY_ES_ERROR_STATE) {
        dim_set(d, TALLY_ES_ERROR_STATE, NULL,
                dupf("validator %s errored: %s", q ? q : "",
                     first_non_empty(v->reason, NULL, "validator error")));
        free(q);
        return;
      }
      if (v->state != TALLY_ES_AVAILABLE || !v->has_score) {
        dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
                dupf("validator %s is unavailable: %s", q ? q : "",
                     first_non_empty(v->reason, NULL,
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
    bool ok = total_latency(ev, &ms, &why, &meta);
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
    bool ok = model_cost(ev, e->spec, &usd, &why, &meta);
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
    char *q = quote(dim->metric);
    if (dim->metric[0] == '\0')
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              strdup("dimension metric key is not set"));
    else if (m == NULL || m->state != TALLY_ES_AVAILABLE || !m->has_number)
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              dupf("metric %s is unavailable", q ? q : ""));
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
      char *qd = quote(dim->better_direction);
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              dupf("unsupported better_direction %s", qd ? qd : ""));
      free(qd);
    }
    free(q);
    return;
  }
  case TALLY_ES_SRC_LLM_JUDGE: {
    char *q = quote(dim->judge_key);
    const tally_es_judge_result_t *j = NULL;
    for (size_t i = 0; i < e->run->njudges && j == NULL; i++)
      if (strcmp(e->run->judges[i].judge_key, dim->judge_key) == 0)
        j = &e->run->judges[i];
    if (dim->judge_key[0] == '\0') {
      dim_set(d, TALLY_ES_ERROR_STATE, NULL,
              strdup("dimension judge_key is not set"));
    } else if (j == NULL || !j->has_score) {
      char *dflt = dupf("llm judge %s is unavailable", q ? q : "");
      dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
              strdup(first_non_empty(j ? j->reason : NULL, NULL,
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
  case TALLY_ES_SRC_BEHAVIORAL:
    dim_set(d, TALLY_ES_UNAVAILABLE_STATE, NULL,
            strdup("behavioral signals are not scored by this version of "
                   "tally yet"));
    return;
  default: {
    char *q = quote(dim->source_name);
    dim_set(d, TALLY_ES_ERROR_STATE, NULL,
            dupf("unsupported dimension source %s", q ? q : ""));
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
  char *q = quote(d->decl->key);
  char *r = dupf("%s: %sdimension %s %s", s, binary ? "" : "gated ", q ? q : "",
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
  char *q = failed_gate ? quote(failed_gate->decl->key) : NULL;
  const char *fg = q ? q : "\"\"";
  switch (s->strategy) {
  case TALLY_ES_BINARY:
    e->passed = failed_gate == NULL && missing == NULL;
    e->overall = e->passed ? 1 : 0;
    e->overall_reason =
        missing      ? gate_reason(e, missing)
        : !e->passed ? dupf("binary: dimension %s below pass_threshold", fg)
                     : strdup("");
    break;
  case TALLY_ES_HYBRID_STRATEGY:
    if (missing != NULL) {
      e->overall_reason = gate_reason(e, missing);
    } else if (failed_gate != NULL) {
      e->overall_reason =
          dupf("hybrid: gated dimension %s below pass_threshold", fg);
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
        e->overall_reason =
            dupf("hybrid: non-gate weighted score %.4f below scorecard "
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
      e->overall_reason =
          dupf("weighted: gated dimension %s below pass_threshold", fg);
    else if (s->pass_threshold.set && e->overall < s->pass_threshold.v) {
      e->passed = false;
      e->overall_reason = dupf("weighted: overall score %.4f below scorecard "
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
      q = quote(e->validators[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason = dupf(
          "validator %s errored: %s", q ? q : "",
          first_non_empty(e->validators[i].reason, NULL, "validator error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nmetrics; i++)
    if (e->metrics[i].state == TALLY_ES_ERROR_STATE) {
      q = quote(e->metrics[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason =
          dupf("metric %s errored: %s", q ? q : "",
               first_non_empty(e->metrics[i].reason, NULL, "metric error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->ndims; i++)
    if (e->dims[i].state == TALLY_ES_ERROR_STATE) {
      q = quote(e->dims[i].decl->key);
      e->validity_state = TALLY_ES_ERROR_STATE;
      e->validity_reason =
          dupf("dimension %s errored: %s", q ? q : "",
               first_non_empty(e->dims[i].reason, NULL, "dimension error"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->ndims; i++)
    if (e->dims[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = quote(e->dims[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason = dupf(
          "dimension %s unavailable: %s", q ? q : "",
          first_non_empty(e->dims[i].reason, NULL, "missing scoring evidence"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nvalidators; i++)
    if (e->validators[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = quote(e->validators[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason = dupf("validator %s unavailable: %s", q ? q : "",
                                first_non_empty(e->validators[i].reason, NULL,
                                                "missing validator evidence"));
      free(q);
      return;
    }
  for (size_t i = 0; i < s->nmetrics; i++)
    if (e->metrics[i].state == TALLY_ES_UNAVAILABLE_STATE) {
      q = quote(e->metrics[i].decl->key);
      e->validity_state = TALLY_ES_UNAVAILABLE_STATE;
      e->validity_reason = dupf("metric %s unavailable: %s", q ? q : "",
                                first_non_empty(e->metrics[i].reason, NULL,
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
    one_metric(e, &e->metrics[i]);
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
