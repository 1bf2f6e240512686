/* Metrics of agent runs (docs/evaluation-specs.md, "Metrics"): each
 * collector over the run's evidence. */
#include "config/error.h"
#include "evalspecs/evaluate.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool tally__es_total_latency(const tally_es_evidence_t *ev, double *ms,
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
bool tally__es_model_cost(const tally_es_evidence_t *ev,
                          const tally_es_spec_t *s, double *usd, char **why,
                          cJSON **meta) {
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
      char *qp = tally_go_quoted(usage[i].provider),
           *qm = tally_go_quoted(usage[i].model);
      *why = tally__es_dupf(
          "model pricing is unavailable for provider %s model %s", qp ? qp : "",
          qm ? qm : "");
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

void tally__es_metric(tally_es_eval_t *e, tally_es_mresult_t *m) {
  const tally_es_evidence_t *ev = &e->ev;
  const char *c = m->decl->collector;
  if (strcmp(c, "run_total_latency_ms") == 0) {
    double ms;
    const char *why;
    cJSON *meta;
    if (tally__es_total_latency(ev, &ms, &why, &meta)) {
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
    if (tally__es_model_cost(ev, e->spec, &usd, &why, &meta)) {
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
  } else if (strcmp(c, "behavioral_recovery_score") == 0 ||
             strcmp(c, "behavioral_exploration_efficiency_score") == 0 ||
             strcmp(c, "behavioral_error_cascade_score") == 0 ||
             strcmp(c, "behavioral_scope_adherence_score") == 0) {
    /* behavioral_<key>_score, recovery_behavior for recovery */
    char key[64];
    size_t len = strlen(c) - strlen("behavioral_") - strlen("_score");
    snprintf(key, sizeof(key), "%.*s", (int)len, c + strlen("behavioral_"));
    if (strcmp(key, "recovery") == 0)
      snprintf(key, sizeof(key), "recovery_behavior");
    double v;
    const char *why;
    int rc = tally__es_signal(e, key, &v, &why);
    if (rc == 1) {
      number(m, v);
      cJSON_AddStringToObject(m->metadata, "signal_key", key);
      cJSON_AddNumberToObject(m->metadata, "trace_len",
                              (double)ev->tool_calls_traced);
    } else {
      char *q = tally_go_quoted(key);
      char *dflt =
          tally__es_dupf("behavioral signal %s is unavailable", q ? q : "");
      unavailable(m, tally__es_first(why, "", dflt ? dflt : ""), NULL);
      free(dflt);
      free(q);
    }
  } else {
    char *q = tally_go_quoted(c);
    char *why = tally__es_dupf("collector %s is not supported", q ? q : "");
    m->state = TALLY_ES_ERROR_STATE;
    m->reason = why;
    m->metadata = simple_meta("error", c, why ? why : "");
    free(q);
  }
  if (m->reason == NULL)
    m->reason = strdup("");
  if (ev->challenge_id != NULL) {
    m->challenge = ev->challenge_id;
    m->case_id = tally__es_case_of(ev, ev->challenge_id);
  }
}
