/* The evidence of a run (docs/evaluation-specs.md, "Evidence"): what its
 * ordered events and challenge inputs say, gathered once, and the values
 * evidence references name. */
#ifndef TALLY_ES_EVIDENCE_H
#define TALLY_ES_EVIDENCE_H

#include "config/jsonw.h"
#include "evalspecs/run.h"

typedef struct tally_es_ref_s { /* the event that produced a value */
  bool set;
  int64_t seq;
  const char *type;
} tally_es_ref_t;

typedef struct tally_es_usage_s {
  const char *provider, *model;
  double input, output, total;
} tally_es_usage_t;

typedef struct tally_es_step_ev_s {
  int64_t index;
  double ms;
  tally_es_time_t started, completed;
} tally_es_step_ev_t;

typedef struct tally_es_turn_s {
  int64_t index;
  const char *phase, *actor, *user, *assistant; /* "" when none */
  bool mismatch;
} tally_es_turn_t;

typedef struct tally_es_capture_s {
  const char *key;
  bool listing; /* a directory listing, else a file */
  const cJSON *payload;
  tally_es_ref_t src;
} tally_es_capture_t;

typedef struct tally_es_opt_num_s {
  bool set;
  double v;
} tally_es_num_t;

/* One entry of the tool-call trace: a tool.call.completed or
 * tool.call.failed event that names its tool, in event order. */
typedef struct tally_es_call_s {
  char *tool;  /* trimmed; owned */
  cJSON *args; /* the arguments (an empty object when absent); owned */
  bool failed; /* a failed event, or result.is_error */
  int64_t seq;
  const char *event_type;
  char *origin; /* failure_origin, trimmed; owned, "" when none */
  char *error;  /* the error of result.content, trimmed; owned */
} tally_es_call_t;

typedef struct tally_es_evidence_s {
  const tally_es_run_t *run;
  const char *final_output; /* NULL: unavailable */
  tally_es_ref_t final_src, last_model_call;
  char *challenge_input;                         /* owned; NULL: unavailable */
  const tally_es_uuid_t *challenge_id, *case_id; /* NULL: none */
  const tally_es_input_t *case_input;            /* NULL: see case_reason */
  const char *case_reason;
  bool has_started, has_first_output, has_terminal;
  tally_es_time_t started, first_output, terminal;
  int completed; /* -1 unknown, else 0 or 1 */
  int64_t failures;
  tally_es_num_t input_tokens, output_tokens, total_tokens, tool_calls;
  size_t tool_calls_traced; /* tool call events that name their tool */
  tally_es_call_t *calls;   /* the trace, tool_calls_traced of them */
  double race_tokens;
  tally_es_usage_t *usage; /* by provider then model */
  size_t nusage;
  tally_es_usage_t *models; /* observed: provider and model only */
  size_t nmodels;
  tally_es_step_ev_t *steps;
  size_t nsteps;
  tally_es_capture_t *captures;
  size_t ncaptures;
  tally_es_turn_t *turns; /* by turn index */
  size_t nturns;
  const char *warnings[4];
  size_t nwarnings;
} tally_es_evidence_t;

/* Gathers the evidence of run (decoded). Returns 0 or TALLY_ENOMEM. */
int tally_es_evidence_build(tally_es_evidence_t *ev, const tally_es_run_t *run);
void tally_es_evidence_free(tally_es_evidence_t *ev);

/* What a reference resolves to. */
typedef enum tally_es_res_e {
  TALLY_ES_FOUND,       /* value holds it */
  TALLY_ES_UNAVAILABLE, /* reason holds why */
  TALLY_ES_ERROR        /* reason holds the error */
} tally_es_res_t;

/* Resolves the reference ref: the value into value (reset first), or the
 * reason into reason; *challenge receives the challenge it belongs to
 * (NULL when none). Returns TALLY_ES_FOUND, _UNAVAILABLE or _ERROR, or -1
 * when out of memory. */
int tally_es_resolve(const tally_es_evidence_t *ev, const char *ref,
                     tally_buf_t *value, tally_buf_t *reason,
                     const tally_es_uuid_t **challenge);

#endif
