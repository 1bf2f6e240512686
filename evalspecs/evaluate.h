/* Scoring a run with an evaluation spec (docs/evaluation-specs.md): the
 * validators, the metrics, the dimensions, the strategy's overall score
 * and verdict, the validity; and the evaluation object in the reference's
 * JSON shape. */
#ifndef TALLY_ES_EVALUATE_H
#define TALLY_ES_EVALUATE_H

#include "evalspecs/apply.h"
#include "evalspecs/evidence.h"

typedef enum tally_es_state_e {
  TALLY_ES_AVAILABLE,
  TALLY_ES_UNAVAILABLE_STATE,
  TALLY_ES_ERROR_STATE
} tally_es_state_t;

typedef struct tally_es_source_ref_s {
  bool set;
  const char *kind; /* "final_output", "model_call", "tool_call" */
  int64_t seq;
  const char *type;
  const char *field;
} tally_es_source_ref_t;

typedef struct tally_es_vresult_s {
  const tally_es_validator_t *decl;
  tally_es_state_t state;
  const char *outcome_class;
  bool has_verdict;
  tally_es_verdict_t verdict;
  bool has_score;
  double score;
  char *reason;            /* "" when none */
  char *actual, *expected; /* NULL when none */
  const tally_es_uuid_t *challenge, *case_id;
  tally_es_source_ref_t source;
  cJSON *raw; /* raw_output */
} tally_es_vresult_t;

typedef struct tally_es_mresult_s {
  const tally_es_metric_t *decl;
  tally_es_state_t state;
  bool has_number, has_bool;
  double number;
  bool boolean;
  char *reason;
  const tally_es_uuid_t *challenge, *case_id;
  cJSON *metadata;
} tally_es_mresult_t;

typedef struct tally_es_dresult_s {
  const tally_es_dimension_t *decl;
  tally_es_state_t state;
  bool has_score;
  double score;
  char *reason;
} tally_es_dresult_t;

typedef struct tally_es_eval_s {
  const tally_es_spec_t *spec;
  const tally_es_run_t *run;
  tally_es_evidence_t ev;
  tally_es_vresult_t *validators;
  tally_es_mresult_t *metrics;
  tally_es_dresult_t *dims;
  bool complete; /* status complete, else partial */
  bool has_overall, has_passed, passed;
  double overall;
  char *overall_reason;
  tally_es_state_t validity_state; /* available: valid, unavailable:
                                      degraded, error: invalid */
  char *validity_reason;
  char **warnings; /* sorted, unique */
  size_t nwarnings;
} tally_es_eval_t;

/* Aggregates the judge entries of run that carry raw samples, as judges
 * declared in spec (judges.c): each gets its mode, normalized score or
 * reason, payload, confidence, variance and counts. Call it once, after
 * tally_es_run_decode and before tally_es_evaluate. Returns 0 or
 * TALLY_ENOMEM. */
int tally_es_judges(const tally_es_spec_t *spec, tally_es_run_t *run);

/* Scores run with spec into e. Returns 0 or TALLY_ENOMEM. */
int tally_es_evaluate(tally_es_eval_t *e, const tally_es_spec_t *spec,
                      const tally_es_run_t *run);
void tally_es_eval_free(tally_es_eval_t *e);

/* How tally_es_render writes the evaluation: as the reference does
 * (details, and a token's full view); for contestants, without the
 * validators' raw_output (their actual and expected values, reason and
 * evidence are in the result already: the reference's raw output says
 * them again) and with each dimension result's weight; or for
 * contestants under restricted feedback, without actual_value and
 * expected_value either. */
typedef enum tally_es_form_e {
  TALLY_ES_REFERENCE = 0,
  TALLY_ES_PUBLIC,
  TALLY_ES_RESTRICTED
} tally_es_form_t;

/* Appends the evaluation object (the reference's RunAgentEvaluation) to b,
 * in form's form. */
void tally_es_render(tally_buf_t *b, const tally_es_eval_t *e,
                     tally_es_form_t form);

/* "valid", "degraded" or "invalid". */
const char *tally_es_validity_name(const tally_es_eval_t *e);

#endif
