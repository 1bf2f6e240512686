/* Shared by evaluate.c and metrics.c: the helpers of scoring a run. */
#ifndef TALLY_ES_EVALUATE_INT_H
#define TALLY_ES_EVALUATE_INT_H

#include "evalspecs/apply.h"
#include "evalspecs/evaluate.h"

/* A new string of printf's fmt; NULL when out of memory. */
char *tally__es_dupf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* firstNonEmpty: the first of a, b that is not blank, else c ("" when
 * NULL). */
const char *tally__es_first(const char *a, const char *b, const char *c);

/* The regression case of a challenge: that of the one input in scope. */
const tally_es_uuid_t *tally__es_case_of(const tally_es_evidence_t *ev,
                                         const tally_es_uuid_t *challenge);

/* The run's total latency in ms, or false with the reason in *why; the
 * collector's metadata in *meta either way (the caller owns it). */
bool tally__es_total_latency(const tally_es_evidence_t *ev, double *ms,
                             const char **why, cJSON **meta);

/* The run's model cost in USD from the spec's pricing, or false with the
 * reason (a new string) in *why; metadata in *meta (may be NULL). */
bool tally__es_model_cost(const tally_es_evidence_t *ev,
                          const tally_es_spec_t *s, double *usd, char **why,
                          cJSON **meta);

/* Scores a tool_call_assertion validator v over ev's tool-call trace
 * into r (toolcalls.c). Returns 0 or TALLY_ENOMEM. */
int tally__es_tool_calls(const tally_es_evidence_t *ev,
                         const tally_es_validator_t *v, tally_es_vresult_t *r);

/* The file validators (files.c): applied to what the target resolved to,
 * and file_exists's verdict when it resolved to nothing. */
int tally__es_files(const tally_es_validator_t *v, const char *actual,
                    const char *expected, tally_es_outcome_t *o);
void tally__es_file_exists_unavailable(const tally_es_validator_t *v,
                                       tally_es_outcome_t *o);

/* Where the value of the reference target came from (the event), for a
 * result's source. */
tally_es_source_ref_t tally__es_source_of(const tally_es_evidence_t *ev,
                                          const char *target);

/* Scores a postcondition validator v into r (postcondition.c), with
 * scratch buffers and outcome. Returns 0 or TALLY_ENOMEM. */
int tally__es_postcondition(const tally_es_evidence_t *ev,
                            const tally_es_validator_t *v,
                            tally_es_vresult_t *r, tally_buf_t *value,
                            tally_buf_t *reason, tally_es_outcome_t *o);

/* Scores a code_execution validator v from its record (codeexec.c). */
int tally__es_code_execution(const tally_es_evidence_t *ev,
                             const tally_es_validator_t *v,
                             tally_es_vresult_t *r);

/* The behavioral signal key of the run e scores (behavioral.c): 1 with
 * *score (and *why, "" or the reason a score carries), 0 when it is
 * unavailable (*why says why), or TALLY_ENOMEM. */
int tally__es_signal(const tally_es_eval_t *e, const char *key, double *score,
                     const char **why);

/* Collects metric m (its decl set) of the run e scores. */
void tally__es_metric(tally_es_eval_t *e, tally_es_mresult_t *m);

#endif
