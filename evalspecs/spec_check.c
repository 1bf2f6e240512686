/* Completing a decoded evaluation spec and checking it with the reference's
 * rules, in the reference's order, each failure named by its JSON path. */
#include "config/error.h"
#include "evalspecs/gostr.h"
#include "evalspecs/jsonschema.h"
#include "evalspecs/spec_int.h"
#include "evalspecs/validators.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Trims s in place. */
static void trim_in_place(char *s) {
  size_t start, n = tally_go_trim(s, strlen(s), &start);
  memmove(s, s + start, n);
  s[n] = '\0';
}

static const char *const source_names[] = {
    "",     "validators", "metric",    "reliability",      "latency",
    "cost", "behavioral", "llm_judge", "human_preference", NULL};

static tally_es_source_t source_of(const char *name) {
  if (name[0] == '\0')
    return TALLY_ES_SRC_NONE;
  for (int i = 1; source_names[i] != NULL; i++)
    if (strcmp(source_names[i], name) == 0)
      return (tally_es_source_t)i;
  return TALLY_ES_SRC_BAD;
}

static bool set_string(char **s, const char *v) {
  char *c = strdup(v);
  if (c == NULL)
    return false;
  free(*s);
  *s = c;
  return true;
}

/* A dimension given as a built-in key: its source, direction and, for
 * latency and cost, the scorecard's legacy normalization. */
static void expand_builtin(tally_es_dimension_t *dim,
                           const tally_es_spec_t *s) {
  const char *k = dim->key;
  if (strcmp(k, "correctness") == 0) {
    dim->source = TALLY_ES_SRC_VALIDATORS;
    set_string(&dim->better_direction, "higher");
  } else if (strcmp(k, "reliability") == 0) {
    dim->source = TALLY_ES_SRC_RELIABILITY;
    set_string(&dim->better_direction, "higher");
  } else if (strcmp(k, "latency") == 0) {
    dim->source = TALLY_ES_SRC_LATENCY;
    set_string(&dim->better_direction, "lower");
    if (!dim->has_normalization && s->has_latency_norm) {
      dim->has_normalization = true;
      dim->target = s->latency_target_ms;
      dim->max = s->latency_max_ms;
      if (!dim->max.set && s->max_duration_ms.set)
        dim->max = s->max_duration_ms;
    }
  } else if (strcmp(k, "cost") == 0) {
    dim->source = TALLY_ES_SRC_COST;
    set_string(&dim->better_direction, "lower");
    if (!dim->has_normalization && s->has_cost_norm) {
      dim->has_normalization = true;
      dim->target = s->cost_target_usd;
      dim->max = s->cost_max_usd;
      if (!dim->max.set && s->max_cost_usd.set)
        dim->max = s->max_cost_usd;
    }
  } else if (strcmp(k, "behavioral") == 0) {
    dim->source = TALLY_ES_SRC_BEHAVIORAL;
    set_string(&dim->better_direction, "higher");
  }
}

void tally__es_complete(tally_es_spec_t *s) {
  trim_in_place(s->name);
  if (s->strategy_name[0] == '\0')
    set_string(&s->strategy_name, "weighted");
  s->strategy = strcmp(s->strategy_name, "weighted") == 0 ? TALLY_ES_WEIGHTED
                : strcmp(s->strategy_name, "binary") == 0 ? TALLY_ES_BINARY
                : strcmp(s->strategy_name, "hybrid") == 0
                    ? TALLY_ES_HYBRID_STRATEGY
                    : TALLY_ES_STRATEGY_BAD;
  const char *m = s->judge_mode_name;
  s->judge_mode = strcmp(m, "deterministic") == 0 ? TALLY_ES_DETERMINISTIC
                  : strcmp(m, "llm_judge") == 0   ? TALLY_ES_LLM_JUDGE
                  : strcmp(m, "hybrid") == 0      ? TALLY_ES_HYBRID
                                                  : TALLY_ES_JUDGE_MODE_BAD;
  for (size_t i = 0; i < s->nvalidators; i++) {
    trim_in_place(s->validators[i].key);
    trim_in_place(s->validators[i].target);
    trim_in_place(s->validators[i].expected_from);
  }
  for (size_t i = 0; i < s->nchecks; i++) {
    trim_in_place(s->checks[i].key);
    trim_in_place(s->checks[i].path);
  }
  for (size_t i = 0; i < s->nmetrics; i++) {
    trim_in_place(s->metrics[i].key);
    trim_in_place(s->metrics[i].collector);
    trim_in_place(s->metrics[i].unit);
  }
  for (size_t i = 0; i < s->npricing; i++) {
    trim_in_place(s->pricing[i].provider_key);
    trim_in_place(s->pricing[i].provider_model_id);
  }
  for (size_t i = 0; i < s->ndims; i++) {
    tally_es_dimension_t *dim = &s->dims[i];
    trim_in_place(dim->key);
    trim_in_place(dim->metric);
    trim_in_place(dim->judge_key);
    dim->source = source_of(dim->source_name);
    if (dim->source == TALLY_ES_SRC_NONE)
      expand_builtin(dim, s);
    if (dim->better_direction[0] == '\0' &&
        (dim->source == TALLY_ES_SRC_VALIDATORS ||
         dim->source == TALLY_ES_SRC_RELIABILITY ||
         dim->source == TALLY_ES_SRC_BEHAVIORAL ||
         dim->source == TALLY_ES_SRC_LLM_JUDGE))
      set_string(&dim->better_direction, "higher");
  }
  for (size_t i = 0; i < s->nsignals; i++)
    trim_in_place(s->signals[i].key);
  for (size_t i = 0; i < s->njudges; i++) {
    tally_es_judge_t *j = &s->judges[i];
    trim_in_place(j->key);
    trim_in_place(j->model);
    trim_in_place(j->reference_from);
    for (size_t k = 0; k < j->nmodels; k++)
      trim_in_place(j->models[k]);
    if (j->samples == 0)
      j->samples = 3;
  }
}

/* The dotted path of a part of the spec: the spec's own path, then what
 * fmt says ("validators[0].key", or "" for the spec itself). */
typedef struct checker_s {
  tally_diag_t *d;
  const tally_jpath_t *root;
  int rc;
} checker_t;

static void err(checker_t *c, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void err(checker_t *c, const char *msg, const char *fmt, ...) {
  tally_jpath_t p = *c->root;
  char sub[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sub, sizeof(sub), fmt, ap);
  va_end(ap);
  if (sub[0] != '\0') {
    size_t room = sizeof(p.buf) - p.len;
    int n = snprintf(p.buf + p.len, room, "%s%s",
                     p.len > 0 && sub[0] != '[' ? "." : "", sub);
    p.len = n < 0 || (size_t)n >= room ? sizeof(p.buf) - 1 : p.len + (size_t)n;
  }
  c->rc = tally_diag_add(c->d, &p, "%s", msg);
}

/* hasValidDottedPathAfterPrefix: the rest after prefix, trimmed, is
 * non-empty and no dot-separated part of it is blank. */
static bool dotted_after(const char *s, const char *prefix) {
  char *rest = tally_go_trimmed(s + strlen(prefix));
  if (rest == NULL)
    return false;
  bool ok = rest[0] != '\0';
  char *part = rest;
  while (ok) {
    char *dot = strchr(part, '.');
    if (dot != NULL)
      *dot = '\0';
    ok = !tally_go_blank(part);
    if (dot == NULL)
      break;
    part = dot + 1;
  }
  free(rest);
  return ok;
}

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* strconv.Atoi of s trimmed, > 0. */
static bool positive_int(const char *s) {
  char *t = tally_go_trimmed(s);
  if (t == NULL)
    return false;
  const char *p = t;
  if (*p == '+' || *p == '-')
    p++;
  bool digits = *p != '\0';
  for (const char *q = p; *q; q++)
    digits = digits && *q >= '0' && *q <= '9';
  bool ok = false;
  if (digits) {
    errno = 0;
    long long v = strtoll(t, NULL, 10);
    ok = v > 0 && errno == 0;
  }
  free(t);
  return ok;
}

bool tally_es_reference_ok(const char *s) {
  if (strcmp(s, "final_output") == 0 || strcmp(s, "run.final_output") == 0 ||
      strcmp(s, "challenge_input") == 0 || strcmp(s, "case.payload") == 0)
    return true;
  static const char *const dotted[] = {"case.payload.", "case.inputs.",
                                       "case.expectations.", "artifact."};
  for (size_t i = 0; i < 4; i++)
    if (starts(s, dotted[i]))
      return dotted_after(s, dotted[i]);
  if (starts(s, "file:"))
    return !tally_go_blank(s + 5);
  if (starts(s, "literal:"))
    return true;
  if (strcmp(s, "transcript.full") == 0 ||
      strcmp(s, "transcript.from_mismatch") == 0 ||
      strcmp(s, "turn.expectations") == 0)
    return true;
  if (starts(s, "transcript.last_n:"))
    return positive_int(s + strlen("transcript.last_n:"));
  return false;
}

/* A set of keys met so far, as a list (specs are small). */
typedef struct keyset_s {
  const char **keys;
  size_t n;
} keyset_t;

static bool has_key(const keyset_t *k, const char *key) {
  for (size_t i = 0; i < k->n; i++)
    if (strcmp(k->keys[i], key) == 0)
      return true;
  return false;
}

static const tally_es_check_t *find_check(const tally_es_spec_t *s,
                                          const char *key) {
  for (size_t i = 0; i < s->nchecks; i++)
    if (strcmp(s->checks[i].key, key) == 0)
      return &s->checks[i];
  return NULL;
}

static bool tool_type(const tally_es_validator_t *v) {
  return strcmp(v->type_name, "tool_call_assertion") == 0;
}

static void check_validators(checker_t *c, tally_es_spec_t *s, keyset_t *keys) {
  for (size_t i = 0; i < s->nvalidators; i++) {
    tally_es_validator_t *v = &s->validators[i];
    if (v->key[0] == '\0') {
      err(c, "is required", "validators[%zu].key", i);
    } else {
      if (has_key(keys, v->key))
        err(c, "must be unique", "validators[%zu].key", i);
      keys->keys[keys->n++] = v->key;
    }
    v->type = tally_es_vtype_find(v->type_name);
    if (v->type == NULL)
      err(c, "is not a supported validator type", "validators[%zu].type", i);
    if (v->type != NULL && v->type->parse != NULL) {
      tally_jpath_t p = *c->root;
      char sub[64];
      snprintf(sub, sizeof(sub), "validators[%zu].config", i);
      size_t room = sizeof(p.buf) - p.len;
      int n = snprintf(p.buf + p.len, room, "%s%s", p.len ? "." : "", sub);
      p.len =
          n < 0 || (size_t)n >= room ? sizeof(p.buf) - 1 : p.len + (size_t)n;
      /* A null config reads as none, but for tool_call_assertion, whose
       * empty config and missing config are different errors. */
      const cJSON *cfg =
          cJSON_IsNull(v->config) && !tool_type(v) ? NULL : v->config;
      if (v->type->parse(cfg, &v->state, c->d, &p) != 0)
        c->rc = TALLY_ECONFIG;
    }
    bool tool = strcmp(v->type_name, "tool_call_assertion") == 0;
    bool post = strcmp(v->type_name, "postcondition") == 0;
    if (v->target[0] == '\0')
      err(c, "is required", "validators[%zu].target", i);
    else if (tool && strcmp(v->target, "tool_calls") != 0)
      err(c, "must be \"tool_calls\" for tool_call_assertion validators",
          "validators[%zu].target", i);
    else if (!tool && !tally_es_reference_ok(v->target))
      err(c, "must be a supported evidence reference", "validators[%zu].target",
          i);
    bool needs = v->type == NULL || (v->type->flags & TALLY_ES_NEEDS_EXPECTED);
    if (needs) {
      if (v->expected_from[0] == '\0')
        err(c, "is required", "validators[%zu].expected_from", i);
      else if (!tally_es_reference_ok(v->expected_from))
        err(c, "must be a supported evidence reference",
            "validators[%zu].expected_from", i);
    } else if ((tool || post) && v->expected_from[0] != '\0') {
      char msg[96];
      snprintf(msg, sizeof(msg), "must be omitted for %s validators",
               v->type_name);
      err(c, msg, "validators[%zu].expected_from", i);
    }
    if (v->type != NULL && (v->type->flags & TALLY_ES_FILE) &&
        v->target[0] != '\0' && !starts(v->target, "file:"))
      err(c, "must use file: prefix for file validators",
          "validators[%zu].target", i);
    const char *ref = starts(v->target, "file:") ? v->target + 5 : v->target;
    if (strcmp(v->type_name, "code_execution") == 0) {
      const tally_es_check_t *chk = find_check(s, ref);
      char msg[300];
      if (chk == NULL) {
        snprintf(msg, sizeof(msg),
                 "references unknown post_execution_check key \"%s\"", ref);
        err(c, msg, "validators[%zu].target", i);
      } else if (strcmp(chk->type, "file_capture") != 0) {
        err(c, "must reference a file_capture post_execution_check",
            "validators[%zu].target", i);
      }
    }
    if (post && starts(v->target, "file:") && s->nchecks == 0) {
      char msg[300];
      snprintf(msg, sizeof(msg),
               "references unknown post_execution_check key \"%s\"", ref);
      err(c, msg, "validators[%zu].target", i);
    }
  }
}

static void check_checks(checker_t *c, const tally_es_spec_t *s) {
  const char *seen[s->nchecks + 1];
  keyset_t keys = {seen, 0};
  for (size_t i = 0; i < s->nchecks; i++) {
    const tally_es_check_t *k = &s->checks[i];
    if (k->key[0] == '\0') {
      err(c, "is required", "post_execution_checks[%zu].key", i);
    } else {
      if (has_key(&keys, k->key))
        err(c, "must be unique", "post_execution_checks[%zu].key", i);
      keys.keys[keys.n++] = k->key;
    }
    if (strcmp(k->type, "file_capture") != 0 &&
        strcmp(k->type, "directory_listing") != 0)
      err(c, "must be file_capture or directory_listing",
          "post_execution_checks[%zu].type", i);
    if (k->path[0] == '\0')
      err(c, "is required", "post_execution_checks[%zu].path", i);
    if (k->max_size_bytes < 0)
      err(c, "must be greater than or equal to 0",
          "post_execution_checks[%zu].max_size_bytes", i);
  }
  for (size_t i = 0; i < s->nvalidators; i++) {
    const char *t = s->validators[i].target;
    if (starts(t, "file:") && s->nchecks > 0 && !has_key(&keys, t + 5)) {
      char msg[300];
      snprintf(msg, sizeof(msg),
               "references unknown post_execution_check key \"%s\"", t + 5);
      err(c, msg, "validators[%zu].target", i);
    }
  }
}

static void check_metrics(checker_t *c, const tally_es_spec_t *s,
                          const keyset_t *validators, keyset_t *keys) {
  for (size_t i = 0; i < s->nmetrics; i++) {
    const tally_es_metric_t *m = &s->metrics[i];
    if (m->key[0] == '\0') {
      err(c, "is required", "metrics[%zu].key", i);
    } else {
      /* Keys are unique across validators, metrics and judges. */
      char msg[300];
      snprintf(msg, sizeof(msg), "collides with validator key \"%s\"", m->key);
      if (has_key(keys, m->key))
        err(c, "must be unique", "metrics[%zu].key", i);
      else if (has_key(validators, m->key))
        err(c, msg, "metrics[%zu].key", i);
      keys->keys[keys->n++] = m->key;
    }
    if (strcmp(m->type, "numeric") != 0 && strcmp(m->type, "text") != 0 &&
        strcmp(m->type, "boolean") != 0)
      err(c, "is not a supported metric type", "metrics[%zu].type", i);
    if (m->collector[0] == '\0')
      err(c, "is required", "metrics[%zu].collector", i);
    else if (strcmp(m->collector, "behavioral_confidence_calibration_score") ==
             0)
      err(c, "is not supported until confidence reporting lands",
          "metrics[%zu].collector", i);
  }
}

static bool signal_key_ok(const char *k) {
  static const char *const keys[] = {
      "recovery_behavior", "exploration_efficiency", "error_cascade",
      "scope_adherence",   "confidence_calibration", NULL};
  for (size_t i = 0; keys[i] != NULL; i++)
    if (strcmp(keys[i], k) == 0)
      return true;
  return false;
}

static void check_threshold(checker_t *c, const tally_es_opt_t *t, bool gated,
                            const char *required_msg, const char *fmt,
                            size_t i) {
  char path[96];
  snprintf(path, sizeof(path), fmt, i);
  if (gated && !t->set)
    err(c, required_msg, "%s", path);
  else if (t->set && (t->v < 0 || t->v > 1))
    err(c, "must be between 0 and 1", "%s", path);
}

static void check_behavioral(checker_t *c, const tally_es_spec_t *s) {
  if (!s->has_behavioral)
    return;
  if (s->nsignals == 0)
    err(c, "must contain at least one signal", "behavioral.signals");
  for (size_t i = 0; i < s->nsignals; i++) {
    const tally_es_signal_t *g = &s->signals[i];
    if (!signal_key_ok(g->key)) {
      err(c,
          "must be one of recovery_behavior, exploration_efficiency, "
          "error_cascade, scope_adherence, confidence_calibration",
          "behavioral.signals[%zu].key", i);
    } else {
      for (size_t j = 0; j < i; j++)
        if (strcmp(s->signals[j].key, g->key) == 0) {
          err(c, "must be unique", "behavioral.signals[%zu].key", i);
          break;
        }
      if (strcmp(g->key, "confidence_calibration") == 0)
        err(c, "is not supported until confidence reporting lands",
            "behavioral.signals[%zu].key", i);
    }
    if (g->weight <= 0)
      err(c, "must be greater than 0", "behavioral.signals[%zu].weight", i);
    check_threshold(c, &g->pass_threshold, g->gate,
                    "is required when the signal is gated",
                    "behavioral.signals[%zu].pass_threshold", i);
  }
}

static void check_pricing(checker_t *c, const tally_es_spec_t *s) {
  for (size_t i = 0; i < s->npricing; i++) {
    const tally_es_pricing_t *m = &s->pricing[i];
    if (m->provider_key[0] == '\0')
      err(c, "is required", "pricing.models[%zu].provider_key", i);
    if (m->provider_model_id[0] == '\0')
      err(c, "is required", "pricing.models[%zu].provider_model_id", i);
    if (m->input_per_million < 0)
      err(c, "must be greater than or equal to 0",
          "pricing.models[%zu].input_cost_per_million_tokens", i);
    if (m->output_per_million < 0)
      err(c, "must be greater than or equal to 0",
          "pricing.models[%zu].output_cost_per_million_tokens", i);
    if (m->provider_key[0] == '\0' || m->provider_model_id[0] == '\0')
      continue;
    for (size_t j = 0; j < i; j++)
      if (strcmp(s->pricing[j].provider_key, m->provider_key) == 0 &&
          strcmp(s->pricing[j].provider_model_id, m->provider_model_id) == 0) {
        err(c, "must be unique by provider_key and provider_model_id",
            "pricing.models[%zu]", i);
        break;
      }
  }
}

/* The provider a judge model names (lowercased prefix), or NULL. */
static const char *judge_provider(const char *model) {
  char *t = tally_go_trimmed(model);
  if (t == NULL)
    return NULL;
  for (char *p = t; *p; p++)
    if (*p >= 'A' && *p <= 'Z')
      *p = (char)(*p - 'A' + 'a');
  const char *provider = NULL;
  if (starts(t, "claude-"))
    provider = "anthropic";
  else if (starts(t, "gpt-") || starts(t, "o1") || starts(t, "o3") ||
           starts(t, "o4") || starts(t, "text-embedding"))
    provider = "openai";
  else if (starts(t, "gemini-"))
    provider = "gemini";
  else if (starts(t, "grok-"))
    provider = "xai";
  else if (starts(t, "mistral-"))
    provider = "mistral";
  else if (strchr(t, '/') != NULL)
    provider = "openrouter";
  free(t);
  return provider;
}

/* path: where the model is, under the spec. */
static void check_model(checker_t *c, const char *model, const char *path) {
  if (judge_provider(model) == NULL)
    err(c,
        "must be inferable to a known judge provider (claude-*, gpt-*, "
        "gemini-*, grok-*, mistral-*, openrouter/* slugs)",
        "%s", path);
}

static bool secret_reference(const char *v) {
  return strstr(v, "${secrets.") != NULL || strstr(v, "${ secrets.") != NULL ||
         strstr(v, "${secrets .") != NULL;
}

static bool one_of(const char *s, const char *const *list) {
  for (size_t i = 0; list[i] != NULL; i++)
    if (strcmp(list[i], s) == 0)
      return true;
  return false;
}

static void check_consensus(checker_t *c, const tally_es_judge_t *j, size_t i) {
  static const char *const aggs[] = {"median", "mean", "majority_vote",
                                     "unanimous", NULL};
  if (!one_of(j->aggregation, aggs)) {
    err(c, "must be one of median, mean, majority_vote, unanimous",
        "llm_judges[%zu].consensus.aggregation", i);
    return;
  }
  bool boolean = strcmp(j->mode, "assertion") == 0;
  char msg[160];
  if ((strcmp(j->aggregation, "median") == 0 ||
       strcmp(j->aggregation, "mean") == 0) &&
      boolean) {
    snprintf(msg, sizeof(msg),
             "\"%s\" aggregation is only valid for numeric modes (rubric, "
             "reference, n_wise)",
             j->aggregation);
    err(c, msg, "llm_judges[%zu].consensus.aggregation", i);
  }
  if (strcmp(j->aggregation, "majority_vote") == 0 && !boolean)
    err(c, "majority_vote aggregation is only valid for assertion mode",
        "llm_judges[%zu].consensus.aggregation", i);
  if (j->min_agreement_threshold < 0 || j->min_agreement_threshold > 1)
    err(c, "must be between 0 and 1",
        "llm_judges[%zu].consensus.min_agreement_threshold", i);
}

/* The judges, checked before the dimensions that name them; their keys go
 * to judges. */
static void check_judges(checker_t *c, const tally_es_spec_t *s,
                         const keyset_t *validators, const keyset_t *metrics,
                         keyset_t *judges) {
  static const char *const modes[] = {"rubric", "assertion", "n_wise",
                                      "reference", NULL};
  char msg[300];
  for (size_t i = 0; i < s->njudges; i++) {
    const tally_es_judge_t *j = &s->judges[i];
    if (j->key[0] == '\0') {
      err(c, "is required", "llm_judges[%zu].key", i);
      continue;
    }
    if (has_key(judges, j->key)) {
      err(c, "must be unique", "llm_judges[%zu].key", i);
      continue;
    }
    if (has_key(validators, j->key) || has_key(metrics, j->key)) {
      snprintf(msg, sizeof(msg), "collides with %s key \"%s\"",
               has_key(validators, j->key) ? "validator" : "metric", j->key);
      err(c, msg, "llm_judges[%zu].key", i);
      continue;
    }
    judges->keys[judges->n++] = j->key;
    if (!one_of(j->mode, modes)) {
      err(c, "must be one of rubric, assertion, n_wise, reference",
          "llm_judges[%zu].mode", i);
      continue;
    }
    if ((strcmp(j->mode, "rubric") == 0 || strcmp(j->mode, "reference") == 0) &&
        tally_go_blank(j->rubric)) {
      snprintf(msg, sizeof(msg), "is required for %s mode", j->mode);
      err(c, msg, "llm_judges[%zu].rubric", i);
    }
    if (strcmp(j->mode, "reference") == 0) {
      if (j->reference_from[0] == '\0')
        err(c, "is required for reference mode",
            "llm_judges[%zu].reference_from", i);
      else if (!tally_es_reference_ok(j->reference_from))
        err(c, "must be a supported evidence reference",
            "llm_judges[%zu].reference_from", i);
    }
    if (strcmp(j->mode, "assertion") == 0 && tally_go_blank(j->assertion))
      err(c, "is required for assertion mode", "llm_judges[%zu].assertion", i);
    if (strcmp(j->mode, "n_wise") == 0 && tally_go_blank(j->prompt))
      err(c, "is required for n_wise mode", "llm_judges[%zu].prompt", i);
    bool single = j->model[0] != '\0', multi = j->nmodels > 0;
    if (!single && !multi)
      err(c, "must set exactly one of model or models", "llm_judges[%zu].model",
          i);
    else if (single && multi)
      err(c, "must set exactly one of model or models, not both",
          "llm_judges[%zu].models", i);
    else if (multi)
      for (size_t k = 0; k < j->nmodels; k++) {
        snprintf(msg, sizeof(msg), "llm_judges[%zu].models[%zu]", i, k);
        if (j->models[k][0] == '\0')
          err(c, "must be a non-empty model identifier", "%s", msg);
        else
          check_model(c, j->models[k], msg);
      }
    else {
      snprintf(msg, sizeof(msg), "llm_judges[%zu].model", i);
      check_model(c, j->model, msg);
    }
    if (j->samples < 0)
      err(c, "must be greater than or equal to 0", "llm_judges[%zu].samples",
          i);
    else if (j->samples > 10)
      err(c, "must be at most 10", "llm_judges[%zu].samples", i);
    if (multi && j->nmodels > 1) {
      if (!j->has_consensus)
        err(c, "is required when multiple models are declared",
            "llm_judges[%zu].consensus", i);
      else
        check_consensus(c, j, i);
    } else if (j->has_consensus) {
      err(c, "is only valid when multiple models are declared",
          "llm_judges[%zu].consensus", i);
    }
    if (j->output_schema != NULL) {
      char why[200];
      tally_js_t *js = tally_js_compile(j->output_schema, why, sizeof(why));
      if (js == NULL) {
        snprintf(msg, sizeof(msg), "must be valid JSON Schema: %s", why);
        err(c, msg, "llm_judges[%zu].output_schema", i);
      }
      tally_js_free(js);
    }
    for (size_t k = 0; k < j->ncontext_from; k++)
      if (!tally_es_reference_ok(j->context_from[k]))
        err(c, "must be a supported evidence reference",
            "llm_judges[%zu].context_from[%zu]", i, k);
    static const char *const texts[] = {"rubric", "assertion", "prompt"};
    const char *values[] = {j->rubric, j->assertion, j->prompt};
    for (size_t k = 0; k < 3; k++)
      if (secret_reference(values[k])) {
        snprintf(msg, sizeof(msg), "llm_judges[%zu].%s", i, texts[k]);
        err(c,
            "must not contain ${secrets.*} references; secrets are not "
            "allowed in judge prompt text",
            "%s", msg);
      }
    if (j->has_scale && j->scale_min >= j->scale_max)
      err(c, "min must be strictly less than max",
          "llm_judges[%zu].score_scale", i);
    if (j->timeout_ms.set && j->timeout_ms.v <= 0)
      err(c, "must be greater than 0", "llm_judges[%zu].timeout_ms", i);
  }
  if (s->has_judge_limits) {
    if (s->max_samples_per_judge < 0 || s->max_samples_per_judge > 10)
      err(c, "must be between 0 and 10",
          "scorecard.judge_limits.max_samples_per_judge");
    if (s->max_calls_usd < 0)
      err(c, "must be greater than or equal to 0",
          "scorecard.judge_limits.max_calls_usd");
    if (s->max_tokens < 0)
      err(c, "must be greater than or equal to 0",
          "scorecard.judge_limits.max_tokens");
  }
}

static const char *judge_mode_of(const tally_es_spec_t *s, const char *key) {
  for (size_t i = 0; i < s->njudges; i++)
    if (strcmp(s->judges[i].key, key) == 0)
      return s->judges[i].mode;
  return NULL;
}

static void check_dimension(checker_t *c, const tally_es_spec_t *s, size_t i,
                            const keyset_t *validators, const keyset_t *metrics,
                            const keyset_t *judges) {
  const tally_es_dimension_t *dim = &s->dims[i];
  const char *dir = dim->better_direction;
  char msg[300];
  switch (dim->source) {
  case TALLY_ES_SRC_VALIDATORS:
    for (size_t j = 0; j < dim->nvalidators; j++)
      if (!has_key(validators, dim->validators[j])) {
        snprintf(msg, sizeof(msg), "references unknown validator key \"%s\"",
                 dim->validators[j]);
        err(c, msg, "scorecard.dimensions[%zu].validators[%zu]", i, j);
      }
    break;
  case TALLY_ES_SRC_METRIC:
    if (dim->metric[0] == '\0') {
      err(c, "is required when source is metric",
          "scorecard.dimensions[%zu].metric", i);
    } else if (!has_key(metrics, dim->metric)) {
      snprintf(msg, sizeof(msg), "references unknown metric key \"%s\"",
               dim->metric);
      err(c, msg, "scorecard.dimensions[%zu].metric", i);
    }
    if (!dim->has_normalization)
      err(c, "is required when source is metric",
          "scorecard.dimensions[%zu].normalization", i);
    break;
  case TALLY_ES_SRC_LATENCY:
  case TALLY_ES_SRC_COST:
    if (!dim->has_normalization) {
      snprintf(msg, sizeof(msg), "is required when source is %s",
               dim->source == TALLY_ES_SRC_LATENCY ? "latency" : "cost");
      err(c, msg, "scorecard.dimensions[%zu].normalization", i);
    }
    break;
  case TALLY_ES_SRC_BEHAVIORAL:
    if (!s->has_behavioral || s->nsignals == 0)
      err(c, "is required when a scorecard dimension uses source behavioral",
          "behavioral");
    break;
  case TALLY_ES_SRC_LLM_JUDGE:
    if (dim->judge_key[0] == '\0') {
      err(c, "is required when source is llm_judge",
          "scorecard.dimensions[%zu].judge_key", i);
    } else if (!has_key(judges, dim->judge_key)) {
      snprintf(msg, sizeof(msg), "references unknown judge key \"%s\"",
               dim->judge_key);
      err(c, msg, "scorecard.dimensions[%zu].judge_key", i);
    } else {
      (void)judge_mode_of(s, dim->judge_key); /* every mode is numeric */
    }
    break;
  default:
    break;
  }
  if ((dim->source == TALLY_ES_SRC_LLM_JUDGE ||
       dim->source == TALLY_ES_SRC_BEHAVIORAL) &&
      dir[0] != '\0' && strcmp(dir, "higher") != 0) {
    snprintf(msg, sizeof(msg), "must be \"higher\" for %s source (got \"%s\")",
             dim->source == TALLY_ES_SRC_LLM_JUDGE ? "llm_judge" : "behavioral",
             dir);
    err(c, msg, "scorecard.dimensions[%zu].better_direction", i);
  }
  if (dim->source != TALLY_ES_SRC_LLM_JUDGE && dim->judge_key[0] != '\0')
    err(c, "must be empty unless source is llm_judge",
        "scorecard.dimensions[%zu].judge_key", i);
  if ((dim->source == TALLY_ES_SRC_VALIDATORS ||
       dim->source == TALLY_ES_SRC_RELIABILITY) &&
      strcmp(dir, "higher") != 0) {
    snprintf(msg, sizeof(msg), "must be \"higher\" for %s source (got \"%s\")",
             dim->source == TALLY_ES_SRC_VALIDATORS ? "validators"
                                                    : "reliability",
             dir);
    err(c, msg, "scorecard.dimensions[%zu].better_direction", i);
  }
  if (dim->source == TALLY_ES_SRC_METRIC ||
      dim->source == TALLY_ES_SRC_LATENCY || dim->source == TALLY_ES_SRC_COST) {
    bool lower = strcmp(dir, "lower") == 0, higher = strcmp(dir, "higher") == 0;
    if (!lower && !higher)
      err(c, "must be higher or lower",
          "scorecard.dimensions[%zu].better_direction", i);
    if (dim->has_normalization) {
      if (!dim->target.set)
        err(c, "is required", "scorecard.dimensions[%zu].normalization.target",
            i);
      if (!dim->max.set)
        err(c, "is required", "scorecard.dimensions[%zu].normalization.max", i);
      if (dim->target.set && dim->max.set) {
        if (lower && dim->max.v <= dim->target.v)
          err(c, "must be greater than target when better_direction is lower",
              "scorecard.dimensions[%zu].normalization.max", i);
        if (higher && dim->max.v >= dim->target.v)
          err(c, "must be less than target when better_direction is higher",
              "scorecard.dimensions[%zu].normalization.max", i);
      }
    }
  }
  if (dim->weight.set && dim->weight.v < 0)
    err(c, "must be greater than or equal to 0",
        "scorecard.dimensions[%zu].weight", i);
  check_threshold(c, &dim->pass_threshold,
                  dim->gate || s->strategy == TALLY_ES_BINARY,
                  "is required when the dimension is gated or strategy is "
                  "binary",
                  "scorecard.dimensions[%zu].pass_threshold", i);
}

int tally__es_check(tally_es_spec_t *s, tally_diag_t *d,
                    const tally_jpath_t *path) {
  checker_t c = {d, path, 0};
  if (s->name[0] == '\0')
    err(&c, "is required", "name");
  if (s->version_number <= 0)
    err(&c, "must be greater than 0", "version_number");
  if (s->judge_mode == TALLY_ES_JUDGE_MODE_BAD)
    err(&c, "must be one of deterministic, llm_judge, hybrid", "judge_mode");
  if (s->nvalidators == 0)
    err(&c, "must contain at least one validator", "validators");
  if (s->ndims == 0)
    err(&c, "must contain at least one dimension", "scorecard.dimensions");
  if (s->strategy == TALLY_ES_STRATEGY_BAD)
    err(&c, "must be one of weighted, binary, hybrid", "scorecard.strategy");
  if (s->max_total_tokens.set && s->max_total_tokens.v <= 0)
    err(&c, "must be greater than 0", "runtime_limits.max_total_tokens");
  if (s->max_cost_usd.set && s->max_cost_usd.v <= 0)
    err(&c, "must be greater than 0", "runtime_limits.max_cost_usd");
  if (s->max_duration_ms.set && s->max_duration_ms.v <= 0)
    err(&c, "must be greater than 0", "runtime_limits.max_duration_ms");
  if (s->max_iterations.set &&
      (s->max_iterations.v <= 0 || s->max_iterations.v > 1000))
    err(&c, "must be between 1 and 1000", "runtime_limits.max_iterations");

  size_t cap = s->nvalidators + s->nmetrics + s->njudges + 1;
  const char **vk = calloc(cap, sizeof(*vk)), **mk = calloc(cap, sizeof(*mk)),
             **jk = calloc(cap, sizeof(*jk));
  if (vk == NULL || mk == NULL || jk == NULL) {
    free(vk);
    free(mk);
    free(jk);
    return tally_diag_add(d, path, "out of memory");
  }
  keyset_t validators = {vk, 0}, metrics = {mk, 0}, judges = {jk, 0};
  check_validators(&c, s, &validators);
  check_checks(&c, s);
  check_metrics(&c, s, &validators, &metrics);
  check_behavioral(&c, s);
  check_pricing(&c, s);
  check_judges(&c, s, &validators, &metrics, &judges);

  for (size_t i = 0; i < s->ndims; i++) {
    const tally_es_dimension_t *dim = &s->dims[i];
    if (dim->key[0] == '\0') {
      err(&c, "is required", "scorecard.dimensions[%zu].key", i);
      continue;
    }
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = s->dims[j].key[0] != '\0' && strcmp(s->dims[j].key, dim->key) == 0;
    if (dup) {
      err(&c, "must be unique", "scorecard.dimensions[%zu]", i);
      continue;
    }
    if (dim->source == TALLY_ES_SRC_NONE || dim->source == TALLY_ES_SRC_BAD) {
      err(&c,
          "must be one of validators, metric, reliability, latency, cost, "
          "behavioral, llm_judge",
          "scorecard.dimensions[%zu].source", i);
      continue;
    }
    check_dimension(&c, s, i, &validators, &metrics, &judges);
  }

  if (s->pass_threshold.set) {
    if (s->strategy == TALLY_ES_BINARY)
      err(&c,
          "must not be set for binary strategy; use per-dimension "
          "pass_threshold instead",
          "scorecard.pass_threshold");
    else if (s->pass_threshold.v < 0 || s->pass_threshold.v > 1)
      err(&c, "must be between 0 and 1", "scorecard.pass_threshold");
  }
  if (s->strategy == TALLY_ES_HYBRID_STRATEGY) {
    bool gate = false;
    for (size_t i = 0; i < s->ndims; i++)
      gate = gate || s->dims[i].gate;
    if (!gate)
      err(&c, "hybrid strategy requires at least one gated dimension",
          "scorecard.strategy");
  }
  if (s->judge_mode == TALLY_ES_DETERMINISTIC && s->njudges > 0)
    err(&c, "must be empty when judge_mode is deterministic", "llm_judges");
  if (s->judge_mode == TALLY_ES_LLM_JUDGE && s->njudges == 0)
    err(&c, "must contain at least one judge when judge_mode is llm_judge",
        "llm_judges");
  if (s->judge_mode == TALLY_ES_HYBRID && s->njudges == 0)
    err(&c, "must contain at least one judge when judge_mode is hybrid",
        "llm_judges");
  free(vk);
  free(mk);
  free(jk);
  return c.rc;
}
