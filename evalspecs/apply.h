/* Applying a validator to the actual and expected texts its references
 * resolved to (docs/evaluation-specs.md, "Validators"). */
#ifndef TALLY_ES_APPLY_H
#define TALLY_ES_APPLY_H

#include "config/jsonw.h"
#include "evalspecs/spec.h"

typedef enum tally_es_verdict_e {
  TALLY_ES_PASS,
  TALLY_ES_FAIL,
  TALLY_ES_VERROR
} tally_es_verdict_t;

typedef struct tally_es_outcome_s {
  tally_es_verdict_t verdict;
  bool has_score;
  double score;       /* normalized, 0..1 */
  tally_buf_t reason; /* "" when none */
  cJSON *evidence;    /* the validator's own members of raw_output */
} tally_es_outcome_t;

void tally_es_outcome_init(tally_es_outcome_t *o);
void tally_es_outcome_close(tally_es_outcome_t *o);

/* Applies v to actual and expected into o (reset first). Returns 0, or
 * TALLY_ENOMEM. */
int tally_es_apply(const tally_es_validator_t *v, const char *actual,
                   const char *expected, tally_es_outcome_t *o);

/* What tally check says of validator v before any run (the spec is valid
 * as the reference reads it, but every run of v would error): a
 * regex_match whose literal pattern PCRE2 cannot compile, a json_schema
 * whose literal schema, or a file_json_schema whose config.schema, the
 * reference would refuse. Writes the cause to why and returns true, or
 * returns false. */
bool tally_es_lint(const tally_es_validator_t *v, char *why, size_t len);

#endif
