/* The primitives that read how the match ran rather than the answer:
 * time_decay (time_used against a limit), token_efficiency and
 * call_efficiency (usage against the task's constraints). */
#include "primitives/primitive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const time_params[] = {"time_limit_secs", NULL};

static int time_parse(const cJSON *dim, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(dim, "time_limit_secs");
  size_t old = tally_jpath_key(path, "time_limit_secs");
  int rc = 0;
  if (t == NULL)
    rc = tally_diag_add(d, path, "is missing (time_decay needs it)");
  else if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) ||
           t->valuedouble <= 0)
    rc = tally_diag_add(d, path, "must be a positive number of seconds");
  tally_jpath_restore(path, old);
  if (rc != 0)
    return rc;
  double *s = malloc(sizeof(*s));
  if (s == NULL)
    return tally_diag_add(d, path, "out of memory");
  *s = t->valuedouble;
  *state = s;
  return 0;
}

static double time_score(const void *state, const tally_prim_input_t *in,
                         tally_prim_note_t *note) {
  double limit = *(const double *)state;
  if (!in->has_time_used) {
    note->error = true;
    note->field = "time_used";
    snprintf(note->message, sizeof(note->message),
             "the match has no time_used: time_decay scores 0");
    return 0;
  }
  if (in->time_used <= 0)
    return 1000.0;
  double s = 1000.0 * (1.0 - in->time_used / limit);
  return s > 0 ? s : 0.0;
}

const tally_primitive_t tally_prim_time_decay = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "time_decay",
    .flags = TALLY_PRIM_TIME,
    .params = time_params,
    .parse = time_parse,
    .score = time_score,
    .free = free,
};

/* Why an efficiency primitive scores 0 for this match, or NULL. */
static const char *unusable(const tally_prim_input_t *in) {
  if (!in->verified)
    return "the match is not verified";
  if (!in->has_usage)
    return "the match has no usage";
  return NULL;
}

/* max(0, 1 - used / budget) x 1000, or 0 with a note. */
static double efficiency(const tally_prim_input_t *in, double used,
                         double budget, const char *name,
                         tally_prim_note_t *note) {
  const char *why = unusable(in);
  if (why != NULL) {
    note->field = in->has_usage ? "verified" : "usage";
    snprintf(note->message, sizeof(note->message), "%s: %s scores 0", why,
             name);
    return 0;
  }
  double s = 1.0 - used / budget;
  return s > 0 ? s * 1000.0 : 0.0;
}

static double token_score(const void *state, const tally_prim_input_t *in,
                          tally_prim_note_t *note) {
  (void)state;
  return efficiency(in, in->input_tokens + in->output_tokens, in->token_budget,
                    "token_efficiency", note);
}

const tally_primitive_t tally_prim_token_efficiency = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "token_efficiency",
    .flags = TALLY_PRIM_TOKENS,
    .score = token_score,
};

static double call_score(const void *state, const tally_prim_input_t *in,
                         tally_prim_note_t *note) {
  (void)state;
  return efficiency(in, in->llm_calls, in->max_llm_calls, "call_efficiency",
                    note);
}

const tally_primitive_t tally_prim_call_efficiency = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "call_efficiency",
    .flags = TALLY_PRIM_CALLS,
    .score = call_score,
};
