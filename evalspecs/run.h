/* A run as an agent_run job carries it (docs/evaluation-specs.md): the
 * reference's evaluation input (challenge inputs, events, a human
 * preference score) and the LLM judge results computed upstream, decoded
 * strictly, then the evidence the validators and metrics read. */
#ifndef TALLY_ES_RUN_H
#define TALLY_ES_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "evalspecs/spec.h"

/* An instant: seconds since 1970 (UTC) and nanoseconds. Go's zero time
 * (0001-01-01T00:00:00Z) when an event gives none. */
typedef struct tally_es_time_s {
  int64_t sec;
  int32_t nsec;
} tally_es_time_t;

/* A UUID as 16 bytes; nil (all zero) when absent. */
typedef struct tally_es_uuid_s {
  unsigned char b[16];
} tally_es_uuid_t;

typedef struct tally_es_value_s { /* an input or an expectation */
  char *name;                     /* its key */
  char *kind, *artifact_key, *source, *path;
  const cJSON *value; /* NULL when absent */
} tally_es_value_t;

typedef struct tally_es_artifact_s {
  char *name; /* its key in the map */
  char *key, *kind, *path, *media_type;
} tally_es_artifact_t;

typedef struct tally_es_input_s {
  tally_es_uuid_t challenge_id;
  bool has_case_id;
  tally_es_uuid_t case_id; /* regression_case_id */
  char *challenge_key, *case_key, *item_key;
  const cJSON *payload; /* NULL when absent */
  tally_es_value_t *inputs, *expectations;
  size_t ninputs, nexpectations;
  tally_es_artifact_t *artifacts;
  size_t nartifacts;
} tally_es_input_t;

typedef struct tally_es_event_s {
  char *type, *source;
  int64_t seq;
  tally_es_time_t at;
  const cJSON *payload; /* NULL when absent */
  size_t order;         /* its place in the job, for a stable sort */
} tally_es_event_t;

typedef struct tally_es_judge_result_s {
  char *judge_key, *mode, *reason;
  bool has_score;
  double score;
  const cJSON *payload, *confidence, *variance;
  double sample_count, model_count;
  /* Raw samples in place of a finished result (judges.c aggregates
   * them): [{"model", "output" | "error"}], and for an n_wise judge the
   * run agent judged ("run_agent_id") and the candidates ranked. NULL
   * when absent. */
  const cJSON *samples, *candidates, *current;
  /* What the aggregation made (payload, confidence and variance point
   * into it); NULL for a finished result. */
  cJSON *owned;
} tally_es_judge_result_t;

typedef struct tally_es_run_s {
  /* The job's run and judge results, borrowed: the payloads and values
   * above point into them, so the job must outlive r. */
  const cJSON *root;
  const cJSON *judges_root;
  tally_es_uuid_t run_agent_id, spec_id;
  tally_es_input_t *inputs;
  size_t ninputs;
  tally_es_event_t *events; /* in the reference's order once decoded */
  size_t nevents;
  bool has_preference;
  double preference;
  tally_es_judge_result_t *judges;
  size_t njudges;
  /* The first challenge input's payload as the job's text wrote it
   * (trimmed), which is what the reference compares when the payload is
   * not a string; NULL when unknown. */
  char *payload_raw;
} tally_es_run_t;

/* Decodes run (and judges, an array or NULL) into r, whose own
 * allocations last until tally_es_run_free (run and judges must outlive
 * r); text (len bytes, or NULL) is the job's JSON text, in
 * which the run is the member "run". Returns 0, or TALLY_EJOB with err
 * naming the path ("run.events[2].occurred_at: ..."), or TALLY_ENOMEM. */
int tally_es_run_decode(tally_es_run_t *r, const cJSON *run,
                        const cJSON *judges, const char *text, size_t len,
                        char *err, size_t errlen);
void tally_es_run_free(tally_es_run_t *r);

/* Writes u as 36 characters and a NUL to out. */
void tally_es_uuid_text(const tally_es_uuid_t *u, char out[37]);
bool tally_es_uuid_nil(const tally_es_uuid_t *u);

/* Writes t as Go's RFC 3339 with nanoseconds, in UTC, to out (40 bytes). */
void tally_es_time_text(tally_es_time_t t, char out[40]);

/* t - u in whole milliseconds, truncated toward zero (Go's
 * Duration.Milliseconds). */
int64_t tally_es_ms_between(tally_es_time_t t, tally_es_time_t u);

#endif
