/* The evaluation object in the reference's JSON shape (RunAgentEvaluation:
 * members in its order, the optional ones left out when empty). */
#include "evalspecs/evaluate.h"
#include "evalspecs/gojson.h"

#include <stdlib.h>
#include <string.h>

static void key(tally_buf_t *b, const char *name, bool *first) {
  if (!*first)
    tally_buf_putc(b, ',');
  *first = false;
  tally_go_json_string(b, name, strlen(name));
  tally_buf_putc(b, ':');
}

static void str_member(tally_buf_t *b, const char *name, const char *v,
                       bool *first) {
  key(b, name, first);
  tally_go_json_string(b, v, strlen(v));
}

static void num_member(tally_buf_t *b, const char *name, double v,
                       bool *first) {
  key(b, name, first);
  tally_go_json_float(b, v);
}

static void uuid_member(tally_buf_t *b, const char *name,
                        const tally_es_uuid_t *u, bool *first) {
  char text[37];
  tally_es_uuid_text(u, text);
  str_member(b, name, text, first);
}

static const char *state_name(tally_es_state_t s) {
  return s == TALLY_ES_AVAILABLE     ? "available"
         : s == TALLY_ES_ERROR_STATE ? "error"
                                     : "unavailable";
}

static void validator(tally_buf_t *b, const tally_es_vresult_t *v,
                      tally_es_form_t form) {
  bool public = form == TALLY_ES_RESTRICTED;
  bool first = true;
  tally_buf_putc(b, '{');
  str_member(b, "key", v->decl->key, &first);
  str_member(b, "type", v->decl->type_name, &first);
  str_member(b, "state", state_name(v->state), &first);
  if (v->outcome_class != NULL)
    str_member(b, "outcome_class", v->outcome_class, &first);
  if (v->has_verdict)
    str_member(b, "verdict",
               v->verdict == TALLY_ES_PASS   ? "pass"
               : v->verdict == TALLY_ES_FAIL ? "fail"
                                             : "error",
               &first);
  if (v->has_score)
    num_member(b, "normalized_score", v->score, &first);
  str_member(b, "target", v->decl->target, &first);
  str_member(b, "expected_from", v->decl->expected_from, &first);
  if (!public && v->actual != NULL)
    str_member(b, "actual_value", v->actual, &first);
  if (!public && v->expected != NULL)
    str_member(b, "expected_value", v->expected, &first);
  if (v->challenge != NULL)
    uuid_member(b, "challenge_identity_id", v->challenge, &first);
  if (v->case_id != NULL)
    uuid_member(b, "regression_case_id", v->case_id, &first);
  if (v->reason != NULL && v->reason[0] != '\0') {
    str_member(b, "reason", v->reason, &first);
  } else if (form != TALLY_ES_REFERENCE && v->has_verdict &&
             v->verdict == TALLY_ES_FAIL &&
             strcmp(v->decl->type_name, "regex_match") == 0) {
    /* The reference gives no reason for a pattern that did not match:
     * contestants read what did not match what (the values themselves
     * only where the feedback shows them). */
    key(b, "reason", &first);
    if (form == TALLY_ES_PUBLIC && v->actual != NULL && v->expected != NULL) {
      tally_buf_t t;
      tally_buf_init(&t);
      tally_buf_puts(&t, "the value does not match the pattern ");
      tally_buf_puts(&t, v->expected);
      tally_json_str(b, t.oom ? "" : tally_buf_text(&t));
      tally_buf_close(&t);
    } else {
      tally_json_str(b, "the value does not match the pattern");
    }
  }
  if (v->source.set) {
    key(b, "source", &first);
    bool f2 = true;
    tally_buf_putc(b, '{');
    str_member(b, "kind", v->source.kind, &f2);
    if (v->source.seq != 0)
      num_member(b, "sequence", (double)v->source.seq, &f2);
    if (v->source.type != NULL && v->source.type[0] != '\0')
      str_member(b, "event_type", v->source.type, &f2);
    if (v->source.field != NULL && v->source.field[0] != '\0')
      str_member(b, "field_path", v->source.field, &f2);
    tally_buf_putc(b, '}');
  }
  if (form == TALLY_ES_REFERENCE) {
    key(b, "raw_output", &first);
    if (v->raw != NULL)
      tally_go_marshal(b, v->raw);
    else
      tally_buf_puts(b, "null");
  }
  tally_buf_putc(b, '}');
}

static void metric(tally_buf_t *b, const tally_es_mresult_t *m) {
  bool first = true;
  tally_buf_putc(b, '{');
  str_member(b, "key", m->decl->key, &first);
  str_member(b, "type", m->decl->type, &first);
  str_member(b, "state", state_name(m->state), &first);
  str_member(b, "collector", m->decl->collector, &first);
  if (m->decl->unit[0] != '\0')
    str_member(b, "unit", m->decl->unit, &first);
  if (m->has_number)
    num_member(b, "numeric_value", m->number, &first);
  if (m->has_bool) {
    key(b, "boolean_value", &first);
    tally_buf_puts(b, m->boolean ? "true" : "false");
  }
  if (m->challenge != NULL)
    uuid_member(b, "challenge_identity_id", m->challenge, &first);
  if (m->case_id != NULL)
    uuid_member(b, "regression_case_id", m->case_id, &first);
  if (m->reason != NULL && m->reason[0] != '\0')
    str_member(b, "reason", m->reason, &first);
  key(b, "metadata", &first);
  if (m->metadata != NULL)
    tally_go_marshal(b, m->metadata);
  else
    tally_buf_puts(b, "null");
  tally_buf_putc(b, '}');
}

static void judge(tally_buf_t *b, const tally_es_judge_result_t *j) {
  bool first = true;
  tally_buf_putc(b, '{');
  str_member(b, "judge_key", j->judge_key, &first);
  str_member(b, "mode", j->mode, &first);
  if (j->has_score)
    num_member(b, "normalized_score", j->score, &first);
  key(b, "payload", &first);
  if (j->payload != NULL)
    tally_go_marshal(b, j->payload);
  else
    tally_buf_puts(b, "null");
  if (cJSON_IsString(j->confidence))
    str_member(b, "confidence", j->confidence->valuestring, &first);
  if (cJSON_IsNumber(j->variance))
    num_member(b, "variance", j->variance->valuedouble, &first);
  num_member(b, "sample_count", j->sample_count, &first);
  num_member(b, "model_count", j->model_count, &first);
  if (j->reason[0] != '\0')
    str_member(b, "reason", j->reason, &first);
  tally_buf_putc(b, '}');
}

static int cmp_dim(const void *pa, const void *pb) {
  const tally_es_dresult_t *a = *(const tally_es_dresult_t *const *)pa,
                           *b = *(const tally_es_dresult_t *const *)pb;
  return strcmp(a->decl->key, b->decl->key);
}

void tally_es_render(tally_buf_t *b, const tally_es_eval_t *e,
                     tally_es_form_t form) {
  const tally_es_spec_t *s = e->spec;
  bool first = true;
  tally_buf_putc(b, '{');
  uuid_member(b, "run_agent_id", &e->run->run_agent_id, &first);
  uuid_member(b, "evaluation_spec_id", &e->run->spec_id, &first);
  str_member(b, "status", e->complete ? "complete" : "partial", &first);
  key(b, "validator_results", &first);
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < s->nvalidators; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    validator(b, &e->validators[i], form);
  }
  tally_buf_putc(b, ']');
  if (e->run->njudges > 0) {
    key(b, "llm_judge_results", &first);
    tally_buf_putc(b, '[');
    for (size_t i = 0; i < e->run->njudges; i++) {
      if (i > 0)
        tally_buf_putc(b, ',');
      judge(b, &e->run->judges[i]);
    }
    tally_buf_putc(b, ']');
  }
  key(b, "metric_results", &first);
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < s->nmetrics; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    metric(b, &e->metrics[i]);
  }
  tally_buf_puts(b, "]");
  key(b, "dimension_results", &first);
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < s->ndims; i++) {
    const tally_es_dresult_t *d = &e->dims[i];
    bool f2 = true;
    tally_buf_puts(b, i > 0 ? ",{" : "{");
    str_member(b, "dimension", d->decl->key, &f2);
    if (d->has_score)
      num_member(b, "score", d->score, &f2);
    str_member(b, "state", state_name(d->state), &f2);
    if (d->reason[0] != '\0')
      str_member(b, "reason", d->reason, &f2);
    if (d->decl->better_direction[0] != '\0')
      str_member(b, "better_direction", d->decl->better_direction, &f2);
    if (form != TALLY_ES_REFERENCE) /* absent counts 1 */
      num_member(b, "weight", d->decl->weight.set ? d->decl->weight.v : 1, &f2);
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, ']');
  /* dimension_scores: a map, so its keys sorted. */
  key(b, "dimension_scores", &first);
  const tally_es_dresult_t *sorted[s->ndims + 1];
  for (size_t i = 0; i < s->ndims; i++)
    sorted[i] = &e->dims[i];
  qsort(sorted, s->ndims, sizeof(sorted[0]), cmp_dim);
  tally_buf_putc(b, '{');
  bool f3 = true;
  for (size_t i = 0; i < s->ndims; i++) {
    key(b, sorted[i]->decl->key, &f3);
    if (sorted[i]->has_score)
      tally_go_json_float(b, sorted[i]->score);
    else
      tally_buf_puts(b, "null");
  }
  tally_buf_putc(b, '}');
  if (e->has_overall)
    num_member(b, "overall_score", e->overall, &first);
  if (e->has_passed) {
    key(b, "passed", &first);
    tally_buf_puts(b, e->passed ? "true" : "false");
  }
  if (e->overall_reason[0] != '\0')
    str_member(b, "overall_reason", e->overall_reason, &first);
  str_member(b, "validity", tally_es_validity_name(e), &first);
  if (e->validity_reason[0] != '\0')
    str_member(b, "validity_reason", e->validity_reason, &first);
  str_member(b, "strategy", s->strategy_name, &first);
  if (e->nwarnings > 0) {
    key(b, "warnings", &first);
    tally_buf_putc(b, '[');
    for (size_t i = 0; i < e->nwarnings; i++) {
      if (i > 0)
        tally_buf_putc(b, ',');
      tally_go_json_string(b, e->warnings[i], strlen(e->warnings[i]));
    }
    tally_buf_putc(b, ']');
  }
  tally_buf_putc(b, '}');
}
