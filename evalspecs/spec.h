/* Evaluation specs (docs/evaluation-specs.md): AgentClash's evaluation_spec
 * block, accepted unchanged in an agent_run task's config and decoded
 * strictly into these structs, then completed (built-in dimensions, default
 * directions and strategy) and checked with the reference's rules. */
#ifndef TALLY_ES_SPEC_H
#define TALLY_ES_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config/diag.h"

/* An optional number: present or not (a JSON null is absent). */
typedef struct tally_es_opt_s {
  bool set;
  double v;
} tally_es_opt_t;

typedef enum tally_es_judge_mode_e {
  TALLY_ES_DETERMINISTIC,
  TALLY_ES_LLM_JUDGE,
  TALLY_ES_HYBRID,
  TALLY_ES_JUDGE_MODE_BAD /* anything else: refused by the checks */
} tally_es_judge_mode_t;

typedef enum tally_es_strategy_e {
  TALLY_ES_WEIGHTED,
  TALLY_ES_BINARY,
  TALLY_ES_HYBRID_STRATEGY,
  TALLY_ES_STRATEGY_BAD
} tally_es_strategy_t;

typedef enum tally_es_source_e {
  TALLY_ES_SRC_NONE, /* not given: a built-in key fills it in */
  TALLY_ES_SRC_VALIDATORS,
  TALLY_ES_SRC_METRIC,
  TALLY_ES_SRC_RELIABILITY,
  TALLY_ES_SRC_LATENCY,
  TALLY_ES_SRC_COST,
  TALLY_ES_SRC_BEHAVIORAL,
  TALLY_ES_SRC_LLM_JUDGE,
  TALLY_ES_SRC_HUMAN_PREFERENCE,
  TALLY_ES_SRC_BAD
} tally_es_source_t;

struct tally_es_vtype_s; /* evalspecs/validators.h */

typedef struct tally_es_validator_s {
  char *key, *type_name, *target, *expected_from; /* "" when absent */
  const struct tally_es_vtype_s *type;            /* NULL: not a known type */
  cJSON *config;                                  /* a copy; NULL when absent */
  void *state;                                    /* the type's parsed config */
} tally_es_validator_t;

typedef struct tally_es_metric_s {
  char *key, *type, *collector, *unit;
} tally_es_metric_t;

typedef struct tally_es_dimension_s {
  char *key;
  tally_es_source_t source;
  char *source_name; /* as written, for messages */
  char **validators;
  size_t nvalidators;
  char *metric, *better_direction, *judge_key;
  bool has_normalization;
  tally_es_opt_t target, max; /* normalization */
  tally_es_opt_t weight, pass_threshold;
  bool gate;
} tally_es_dimension_t;

typedef struct tally_es_signal_s {
  char *key;
  double weight;
  bool gate;
  tally_es_opt_t pass_threshold;
} tally_es_signal_t;

typedef struct tally_es_pricing_s {
  char *provider_key, *provider_model_id;
  double input_per_million, output_per_million;
} tally_es_pricing_t;

typedef struct tally_es_check_s {
  char *key, *type, *path;
  bool recursive;
  int64_t max_size_bytes;
} tally_es_check_t;

typedef struct tally_es_judge_s {
  char *mode, *key, *model;
  char **models;
  size_t nmodels;
  int64_t samples;
  char **context_from;
  size_t ncontext_from;
  cJSON *output_schema;
  bool has_scale;
  double scale_min, scale_max;
  char *rubric, *assertion, *prompt, *reference_from;
  bool has_expect, expect, position_debiasing;
  bool has_consensus;
  char *aggregation;
  double min_agreement_threshold;
  bool flag_on_disagreement;
  char **anti_gaming_clauses;
  size_t nanti_gaming_clauses;
  tally_es_opt_t timeout_ms;
} tally_es_judge_t;

typedef struct tally_es_spec_s {
  char *name;
  int64_t version_number;
  tally_es_judge_mode_t judge_mode;
  char *judge_mode_name;
  tally_es_validator_t *validators;
  size_t nvalidators;
  tally_es_metric_t *metrics;
  size_t nmetrics;
  bool has_behavioral;
  tally_es_signal_t *signals;
  size_t nsignals;
  tally_es_judge_t *judges;
  size_t njudges;
  tally_es_check_t *checks;
  size_t nchecks;
  tally_es_opt_t max_total_tokens, max_cost_usd, max_duration_ms,
      max_iterations; /* runtime_limits */
  tally_es_pricing_t *pricing;
  size_t npricing;
  /* scorecard */
  tally_es_dimension_t *dims;
  size_t ndims;
  tally_es_strategy_t strategy;
  char *strategy_name;
  tally_es_opt_t pass_threshold;
  bool has_latency_norm, has_cost_norm;
  tally_es_opt_t latency_target_ms, latency_max_ms, cost_target_usd,
      cost_max_usd;
  bool has_judge_limits;
  int64_t max_samples_per_judge, max_tokens;
  double max_calls_usd;
} tally_es_spec_t;

/* Decodes the evaluation_spec object v into a new spec, completes it and
 * checks it. Every problem goes to d, named by its JSON path under path
 * (which names v). Returns 0 with *out set, or TALLY_ECONFIG (or
 * TALLY_ENOMEM). */
int tally_es_spec_parse(const cJSON *v, tally_diag_t *d, tally_jpath_t *path,
                        tally_es_spec_t **out);
void tally_es_spec_free(tally_es_spec_t *spec);

/* Whether s is an evidence reference a validator may name (docs). */
bool tally_es_reference_ok(const char *s);

#endif
