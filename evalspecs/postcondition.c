/* The postcondition validator (docs/evaluation-specs.md): a condition on
 * what a file:KEY target resolved to after the run (exists, not_exists,
 * contains, not_contains, regex_match, equals, json_path_match), with the
 * reference's rules for a target that is missing versus one whose
 * evidence is unavailable. */
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/textops.h"
#include "evalspecs/validators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tally__es_json_path(const char *actual, const char *expected,
                        tally_es_outcome_t *o);

static void set(tally_es_outcome_t *o, bool pass, const char *yes,
                const char *no) {
  o->verdict = pass ? TALLY_ES_PASS : TALLY_ES_FAIL;
  o->has_score = true;
  o->score = pass ? 1 : 0;
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, pass ? yes : no);
}

static void error(tally_es_outcome_t *o, const char *context, const char *why) {
  cJSON_AddStringToObject(o->evidence, "error", why);
  o->verdict = TALLY_ES_VERROR;
  o->has_score = false;
  tally_buf_reset(&o->reason);
  tally_buf_puts(&o->reason, context);
  tally_buf_puts(&o->reason, ": ");
  tally_buf_puts(&o->reason, why);
}

/* The condition applied to actual (NULL: the target does not exist). */
static int apply(const tally_es_post_t *c, const char *actual,
                 tally_es_outcome_t *o) {
  const char *a = actual != NULL ? actual : "";
  const char *cond = c->condition;
  const char *text =
      cJSON_IsString(c->value) ? c->value->valuestring : ""; /* null: "" */
  if (strcmp(cond, "exists") == 0) {
    set(o, actual != NULL, "postcondition target exists",
        "postcondition target does not exist");
  } else if (strcmp(cond, "not_exists") == 0) {
    set(o, actual == NULL, "postcondition target does not exist",
        "postcondition target exists");
  } else if (strcmp(cond, "contains") == 0) {
    set(o, strstr(a, text) != NULL, "target contains expected text",
        "target does not contain expected text");
    cJSON_AddStringToObject(o->evidence, "expected", text);
  } else if (strcmp(cond, "not_contains") == 0) {
    set(o, strstr(a, text) == NULL, "target does not contain forbidden text",
        "target contains forbidden text");
    cJSON_AddStringToObject(o->evidence, "forbidden", text);
  } else if (strcmp(cond, "regex_match") == 0) {
    char err[512];
    int rc = tally_es_regex(text, false, a, err, sizeof(err));
    if (rc == TALLY_ES_RE_BAD_PATTERN) {
      cJSON_AddStringToObject(o->evidence, "pattern", text);
      error(o, "compile postcondition regex", err);
    } else if (rc == TALLY_ES_RE_MATCH || rc == TALLY_ES_RE_NO_MATCH) {
      set(o, rc == TALLY_ES_RE_MATCH, "target matches regex",
          "target does not match regex");
      cJSON_AddStringToObject(o->evidence, "pattern", text);
    } else if (rc == TALLY_ES_RE_NOMEM) {
      return TALLY_ENOMEM;
    } else {
      error(o, "postcondition regex", err);
    }
  } else if (strcmp(cond, "equals") == 0) {
    if (cJSON_IsString(c->value)) {
      set(o, strcmp(a, text) == 0, "target equals expected string",
          "target does not equal expected string");
      cJSON_AddStringToObject(o->evidence, "expected", text);
      return 0;
    }
    char err[512];
    size_t start, end;
    if (!tally_go_decode_one(a, &start, &end, err, sizeof(err))) {
      error(o, "parse postcondition target as JSON", err);
      return 0;
    }
    cJSON *got = cJSON_ParseWithLength(a + start, end - start);
    if (got == NULL)
      return TALLY_ENOMEM;
    bool eq = cJSON_IsNull(c->value) ? cJSON_IsNull(got)
                                     : tally_go_json_equal(got, c->value);
    cJSON_Delete(got);
    set(o, eq, "target JSON equals expected value",
        "target JSON does not equal expected value");
    cJSON *want = cJSON_Duplicate(c->value, true);
    if (want == NULL)
      return TALLY_ENOMEM;
    cJSON_AddItemToObject(o->evidence, "expected", want);
  } else { /* json_path_match: the expectation the reference marshals */
    cJSON *exp = cJSON_CreateObject();
    if (exp == NULL)
      return TALLY_ENOMEM;
    cJSON_AddStringToObject(exp, "path", c->json_path);
    cJSON_AddStringToObject(exp, "comparator", "equals");
    cJSON_AddItemToObject(exp, "value", cJSON_Duplicate(c->value, true));
    char *t = cJSON_PrintUnformatted(exp);
    cJSON_Delete(exp);
    if (t == NULL)
      return TALLY_ENOMEM;
    int rc = tally__es_json_path(a, t, o);
    free(t);
    return rc;
  }
  return 0;
}

static cJSON *raw_base(const char *state, const char *reason,
                       const tally_es_validator_t *v,
                       const tally_es_post_t *c) {
  cJSON *raw = cJSON_CreateObject();
  if (raw == NULL)
    return NULL;
  cJSON_AddStringToObject(raw, "state", state);
  cJSON_AddStringToObject(raw, "reason", reason);
  cJSON_AddStringToObject(raw, "target", v->target);
  cJSON_AddStringToObject(raw, "condition", c->condition);
  return raw;
}

int tally__es_postcondition(const tally_es_evidence_t *ev,
                            const tally_es_validator_t *v,
                            tally_es_vresult_t *r, tally_buf_t *value,
                            tally_buf_t *reason, tally_es_outcome_t *o) {
  const tally_es_post_t *c = v->state;
  const tally_es_uuid_t *ac = NULL;
  int got = tally_es_resolve(ev, v->target, value, reason, &ac);
  if (got < 0)
    return TALLY_ENOMEM;
  if (got == TALLY_ES_ERROR) {
    r->state = TALLY_ES_ERROR_STATE;
    r->reason = strdup(tally_buf_text(reason));
    if (r->reason == NULL)
      return TALLY_ENOMEM;
    r->raw = cJSON_CreateObject();
    if (r->raw == NULL)
      return TALLY_ENOMEM;
    cJSON_AddStringToObject(r->raw, "state", "error");
    cJSON_AddStringToObject(r->raw, "reason", r->reason);
    return 0;
  }
  r->challenge = ac;
  r->case_id = tally__es_case_of(ev, ac);
  r->source = tally__es_source_of(ev, v->target);
  bool found = got == TALLY_ES_FOUND;
  if (found && (r->actual = strdup(tally_buf_text(value))) == NULL)
    return TALLY_ENOMEM;
  bool missing_ok = strcmp(c->condition, "exists") == 0 ||
                    strcmp(c->condition, "not_exists") == 0;
  if (!found &&
      (strstr(tally_buf_text(reason), "unavailable") != NULL || !missing_ok)) {
    r->state = TALLY_ES_UNAVAILABLE_STATE;
    r->reason = strdup(tally__es_first(tally_buf_text(reason), "",
                                       "postcondition target evidence is "
                                       "unavailable"));
    if (r->reason == NULL)
      return TALLY_ENOMEM;
    r->raw = raw_base("unavailable", r->reason, v, c);
    return r->raw == NULL ? TALLY_ENOMEM : 0;
  }
  tally_buf_reset(&o->reason);
  cJSON_Delete(o->evidence);
  if ((o->evidence = cJSON_CreateObject()) == NULL)
    return TALLY_ENOMEM;
  if (apply(c, found ? r->actual : NULL, o) != 0)
    return TALLY_ENOMEM;
  r->has_verdict = true;
  r->verdict = o->verdict;
  r->has_score = o->has_score;
  r->score = o->score;
  r->state =
      o->verdict == TALLY_ES_VERROR ? TALLY_ES_ERROR_STATE : TALLY_ES_AVAILABLE;
  r->reason = strdup(tally_buf_text(&o->reason));
  if (r->reason == NULL)
    return TALLY_ENOMEM;
  cJSON *raw = cJSON_CreateObject();
  if (raw == NULL)
    return TALLY_ENOMEM;
  static const char *const verdicts[] = {"pass", "fail", "error"};
  cJSON_AddStringToObject(
      raw, "state", r->state == TALLY_ES_AVAILABLE ? "available" : "error");
  cJSON_AddStringToObject(raw, "verdict", verdicts[r->verdict]);
  if (r->has_score)
    cJSON_AddNumberToObject(raw, "normalized_score", r->score);
  else
    cJSON_AddNullToObject(raw, "normalized_score");
  cJSON_AddStringToObject(raw, "reason", r->reason);
  cJSON_AddStringToObject(raw, "target", v->target);
  cJSON_AddStringToObject(raw, "condition", c->condition);
  if (r->actual != NULL)
    cJSON_AddStringToObject(raw, "actual_value", r->actual);
  else
    cJSON_AddNullToObject(raw, "actual_value");
  for (cJSON *m = o->evidence->child; m != NULL; m = m->next) {
    cJSON *copy = cJSON_Duplicate(m, true);
    if (copy == NULL) {
      cJSON_Delete(raw);
      return TALLY_ENOMEM;
    }
    if (cJSON_GetObjectItemCaseSensitive(raw, m->string) != NULL) {
      char name[200];
      snprintf(name, sizeof(name), "evidence_%s", m->string);
      cJSON_AddItemToObject(raw, name, copy);
    } else {
      cJSON_AddItemToObject(raw, m->string, copy);
    }
  }
  r->raw = raw;
  return 0;
}
