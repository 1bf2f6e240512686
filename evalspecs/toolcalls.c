/* The tool_call_assertion validator (docs/evaluation-specs.md): the
 * run's tool-call trace, from tool.call.completed and tool.call.failed
 * events, against a tool name, presence, counts, an arguments subset and
 * an order, as the reference asserts them. Failed calls never match, and
 * the order is that of the successful calls. */
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/validators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Go's reflect.DeepEqual on decoded JSON scalars, and the reference's
 * jsonContains for objects (every key of the fragment, recursively) and
 * arrays (each fragment element matched to a distinct actual one, the
 * first free that contains it). */
static bool contains(const cJSON *actual, const cJSON *want) {
  if (cJSON_IsObject(want)) {
    if (!cJSON_IsObject(actual))
      return false;
    for (const cJSON *m = want->child; m != NULL; m = m->next) {
      /* A repeated key: Go's map keeps the last. */
      if (tally_go_member(want, m->string) != m)
        continue;
      const cJSON *a = tally_go_member(actual, m->string);
      if (a == NULL || !contains(a, m))
        return false;
    }
    return true;
  }
  if (cJSON_IsArray(want)) {
    if (!cJSON_IsArray(actual))
      return false;
    int na = cJSON_GetArraySize(actual), nw = cJSON_GetArraySize(want);
    if (nw > na)
      return false;
    bool *used = calloc((size_t)na + 1, sizeof(bool));
    if (used == NULL)
      return false;
    bool ok = true;
    for (const cJSON *w = want->child; w != NULL && ok; w = w->next) {
      bool found = false;
      int i = 0;
      for (const cJSON *a = actual->child; a != NULL && !found;
           a = a->next, i++) {
        if (!used[i] && contains(a, w)) {
          used[i] = true;
          found = true;
        }
      }
      ok = found;
    }
    free(used);
    return ok;
  }
  if (cJSON_IsNumber(want))
    return cJSON_IsNumber(actual) && actual->valuedouble == want->valuedouble;
  if (cJSON_IsString(want))
    return cJSON_IsString(actual) &&
           strcmp(actual->valuestring, want->valuestring) == 0;
  if (cJSON_IsBool(want))
    return cJSON_IsBool(actual) && cJSON_IsTrue(actual) == cJSON_IsTrue(want);
  return cJSON_IsNull(want) && cJSON_IsNull(actual);
}

/* Go's %v of a []string: [a b c]. */
static void put_list(tally_buf_t *b, char *const *names, size_t n) {
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      tally_buf_putc(b, ' ');
    tally_buf_puts(b, names[i]);
  }
  tally_buf_putc(b, ']');
}

static void reason_sep(tally_buf_t *b) {
  if (b->len > 0)
    tally_buf_puts(b, "; ");
}

static cJSON *count_or_null(bool has, long long v) {
  return has ? cJSON_CreateNumber((double)v) : cJSON_CreateNull();
}

int tally__es_tool_calls(const tally_es_evidence_t *ev,
                         const tally_es_validator_t *v, tally_es_vresult_t *r) {
  const tally_es_tool_t *c = v->state;
  size_t n = ev->tool_calls_traced;
  size_t *match = malloc((n + 1) * sizeof(*match));
  char **ok_names = malloc((n + 1) * sizeof(*ok_names));
  tally_buf_t reason;
  tally_buf_init(&reason);
  if (match == NULL || ok_names == NULL) {
    free(match);
    free(ok_names);
    return TALLY_ENOMEM;
  }
  size_t nmatch = 0, nok = 0;
  for (size_t i = 0; i < n; i++) {
    const tally_es_call_t *call = &ev->calls[i];
    if (call->failed)
      continue;
    ok_names[nok++] = call->tool;
    if (c->tool_name[0] != '\0' && strcmp(call->tool, c->tool_name) != 0)
      continue;
    if (c->args != NULL && !contains(call->args, c->args))
      continue;
    match[nmatch++] = i;
  }
  bool pass = true;
  bool counts = c->has_count || c->has_min || c->has_max;
  bool presence = c->must_call >= 0 ||
                  (!counts && (c->tool_name[0] != '\0' || c->args != NULL));
  if (presence) {
    bool must = c->must_call != 0; /* true unless must_call is false */
    if (must && nmatch == 0) {
      pass = false;
      reason_sep(&reason);
      tally_buf_puts(&reason, "expected matching tool call was not observed");
    }
    if (!must && nmatch > 0) {
      pass = false;
      reason_sep(&reason);
      tally_buf_puts(&reason, "forbidden matching tool call was observed");
    }
  }
  char num[128];
  if (c->has_count && (long long)nmatch != c->count) {
    pass = false;
    reason_sep(&reason);
    snprintf(num, sizeof(num), "matched tool call count %zu != expected %lld",
             nmatch, c->count);
    tally_buf_puts(&reason, num);
  }
  if (c->has_min && (long long)nmatch < c->min) {
    pass = false;
    reason_sep(&reason);
    snprintf(num, sizeof(num), "matched tool call count %zu < min_count %lld",
             nmatch, c->min);
    tally_buf_puts(&reason, num);
  }
  if (c->has_max && (long long)nmatch > c->max) {
    pass = false;
    reason_sep(&reason);
    snprintf(num, sizeof(num), "matched tool call count %zu > max_count %lld",
             nmatch, c->max);
    tally_buf_puts(&reason, num);
  }
  if (c->nordered > 0) {
    bool exact = strcmp(c->order_mode, "exact") == 0;
    bool order_ok;
    if (exact) {
      order_ok = nok == c->nordered;
      for (size_t i = 0; order_ok && i < nok; i++)
        order_ok = strcmp(ok_names[i], c->ordered[i]) == 0;
    } else {
      size_t next = 0;
      for (size_t i = 0; i < nok && next < c->nordered; i++)
        if (strcmp(ok_names[i], c->ordered[next]) == 0)
          next++;
      order_ok = next == c->nordered;
    }
    if (!order_ok) {
      pass = false;
      reason_sep(&reason);
      tally_buf_puts(&reason, "observed tool order ");
      put_list(&reason, ok_names, nok);
      tally_buf_puts(&reason, exact
                                  ? " does not exactly match expected order "
                                  : " does not contain expected subsequence ");
      put_list(&reason, c->ordered, c->nordered);
    }
  }
  r->state = TALLY_ES_AVAILABLE;
  r->has_verdict = true;
  r->verdict = pass ? TALLY_ES_PASS : TALLY_ES_FAIL;
  r->has_score = true;
  r->score = pass ? 1 : 0;
  r->reason = strdup(tally_buf_text(&reason));
  if (nmatch > 0 && ev->calls[match[0]].seq > 0)
    r->source =
        (tally_es_source_ref_t){true, "tool_call", ev->calls[match[0]].seq,
                                ev->calls[match[0]].event_type, "tool_calls"};
  cJSON *raw = cJSON_CreateObject();
  if (raw != NULL && r->reason != NULL) {
    cJSON_AddStringToObject(raw, "state", "available");
    cJSON_AddStringToObject(raw, "verdict", pass ? "pass" : "fail");
    cJSON_AddNumberToObject(raw, "normalized_score", r->score);
    cJSON_AddStringToObject(raw, "reason", r->reason);
    cJSON_AddStringToObject(raw, "target", v->target);
    if (c->tool_name[0] != '\0')
      cJSON_AddStringToObject(raw, "tool_name", c->tool_name);
    else
      cJSON_AddNullToObject(raw, "tool_name");
    cJSON_AddNumberToObject(raw, "observed_count", (double)nok);
    cJSON_AddNumberToObject(raw, "failed_count", (double)(n - nok));
    cJSON_AddNumberToObject(raw, "matched_count", (double)nmatch);
    cJSON *idx = cJSON_AddArrayToObject(raw, "matched_indices");
    for (size_t i = 0; idx != NULL && i < nmatch; i++)
      cJSON_AddItemToArray(idx, cJSON_CreateNumber((double)match[i]));
    cJSON *names = cJSON_AddArrayToObject(raw, "observed_tool_names");
    for (size_t i = 0; names != NULL && i < nok; i++)
      cJSON_AddItemToArray(names, cJSON_CreateString(ok_names[i]));
    cJSON_AddItemToObject(raw, "expected_count",
                          count_or_null(c->has_count, c->count));
    cJSON_AddItemToObject(raw, "expected_min_count",
                          count_or_null(c->has_min, c->min));
    cJSON_AddItemToObject(raw, "expected_max_count",
                          count_or_null(c->has_max, c->max));
    if (c->nordered > 0) {
      cJSON *order = cJSON_AddArrayToObject(raw, "expected_order");
      for (size_t i = 0; order != NULL && i < c->nordered; i++)
        cJSON_AddItemToArray(order, cJSON_CreateString(c->ordered[i]));
    } else {
      cJSON_AddNullToObject(raw, "expected_order");
    }
    if (c->order_mode[0] != '\0')
      cJSON_AddStringToObject(raw, "expected_order_mode", c->order_mode);
    else
      cJSON_AddNullToObject(raw, "expected_order_mode");
    cJSON_AddBoolToObject(raw, "arguments_contain_set", c->args != NULL);
  }
  r->raw = raw;
  free(match);
  free(ok_names);
  bool oom = reason.oom || raw == NULL || r->reason == NULL;
  tally_buf_close(&reason);
  return oom ? TALLY_ENOMEM : 0;
}
