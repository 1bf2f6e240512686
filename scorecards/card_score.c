/* Scoring one match with a scorecard: each dimension by its primitive,
 * the weighted total, win, draw or loss, the warnings on the submission
 * and the constraints it went over. */
#include "scorecards/scorecard.h"
#include "scoretypes/scoretype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_card_result_init(tally_card_result_t *r) {
  memset(r, 0, sizeof(*r));
}

void tally_card_result_close(tally_card_result_t *r) {
  free(r->warnings);
  free(r->violations);
  memset(r, 0, sizeof(*r));
}

const char *tally_match_result_name(tally_match_result_t r) {
  return r == TALLY_MATCH_WIN ? "win" : r == TALLY_MATCH_DRAW ? "draw" : "loss";
}

static int warn(tally_card_result_t *r, bool error, const char *field,
                const char *dimension, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int warn(tally_card_result_t *r, bool error, const char *field,
                const char *dimension, const char *fmt, ...) {
  if (r->nwarnings == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 8;
    tally_card_warning_t *w = realloc(r->warnings, cap * sizeof(*w));
    if (w == NULL)
      return TALLY_ENOMEM;
    r->warnings = w;
    r->cap = cap;
  }
  tally_card_warning_t *w = &r->warnings[r->nwarnings++];
  w->error = error;
  snprintf(w->field, sizeof(w->field), "%s", field ? field : "");
  snprintf(w->dimension, sizeof(w->dimension), "%s",
           dimension ? dimension : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->message, sizeof(w->message), fmt, ap);
  va_end(ap);
  return 0;
}

static const char *kind_name(tally_json_kind_t k) {
  static const char *const names[] = {"a string", "a number", "a boolean",
                                      "an array", "an object"};
  return names[k];
}

static bool is_kind(const cJSON *v, tally_json_kind_t k) {
  switch (k) {
  case TALLY_KIND_STRING:
    return cJSON_IsString(v);
  case TALLY_KIND_NUMBER:
    return cJSON_IsNumber(v);
  case TALLY_KIND_BOOLEAN:
    return cJSON_IsBool(v);
  case TALLY_KIND_ARRAY:
    return cJSON_IsArray(v);
  case TALLY_KIND_OBJECT:
    return cJSON_IsObject(v);
  }
  return false;
}

/* The ground truth's field: the job's, else the task's, else NULL. */
static const cJSON *truth_of(const tally_scorecard_t *card,
                             const tally_match_t *m, const char *field) {
  const cJSON *v =
      m->ground_truth != NULL
          ? cJSON_GetObjectItemCaseSensitive(m->ground_truth, field)
          : NULL;
  if (v == NULL && card->ground_truth != NULL)
    v = cJSON_GetObjectItemCaseSensitive(card->ground_truth, field);
  return v;
}

/* Whether answer_format makes field a required field the answer broke. */
static bool broken_required(const tally_scorecard_t *card, const cJSON *answer,
                            const char *field) {
  for (size_t i = 0; i < card->nformat; i++) {
    const tally_format_field_t *f = &card->format[i];
    if (!f->required || strcmp(f->name, field) != 0)
      continue;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(answer, field);
    return v == NULL || !is_kind(v, f->kind);
  }
  return false;
}

/* The answer_format checks. */
static int check_format(const tally_scorecard_t *card, const cJSON *answer,
                        tally_card_result_t *r) {
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < card->nformat; i++) {
    const tally_format_field_t *f = &card->format[i];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(answer, f->name);
    if (v == NULL && f->required)
      rc = warn(r, true, f->name, NULL,
                "required field is missing (answer_format)");
    else if (v != NULL && !is_kind(v, f->kind))
      rc = warn(r, f->required, f->name, NULL, "must be %s (answer_format)",
                kind_name(f->kind));
  }
  return rc;
}

/* Warns of the answer's keys that no dimension and no answer_format entry
 * reads. */
static int check_unread(const tally_scorecard_t *card, const cJSON *answer,
                        tally_card_result_t *r) {
  int rc = 0;
  for (const cJSON *k = answer->child; rc == 0 && k != NULL; k = k->next) {
    bool read = false;
    for (size_t i = 0; !read && i < card->ndims; i++)
      read = card->dims[i].field != NULL &&
             strcmp(card->dims[i].field, k->string) == 0;
    for (size_t i = 0; !read && i < card->nformat; i++)
      read = strcmp(card->format[i].name, k->string) == 0;
    if (!read)
      rc = warn(r, false, k->string, NULL,
                "no dimension reads this field: it is ignored");
  }
  return rc;
}

/* A violation of a constraint, "what value over limit". */
static int violation(tally_card_result_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int violation(tally_card_result_t *r, const char *fmt, ...) {
  char(*v)[160] = realloc(r->violations, (r->nviolations + 1) * sizeof(*v));
  if (v == NULL)
    return TALLY_ENOMEM;
  r->violations = v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v[r->nviolations++], sizeof(*v), fmt, ap);
  va_end(ap);
  return 0;
}

static int check_constraints(const tally_scorecard_t *card,
                             const tally_match_t *m, tally_card_result_t *r) {
  int rc = 0;
  double tokens = m->input_tokens + m->output_tokens;
  if (card->time_limit_secs > 0 && m->has_time_used &&
      m->time_used > card->time_limit_secs)
    rc = violation(r, "time_used %.17g s is over time_limit_secs %.17g",
                   m->time_used, card->time_limit_secs);
  if (rc == 0 && card->token_budget > 0 && m->has_usage &&
      tokens > card->token_budget)
    rc = violation(r, "tokens used %.17g are over token_budget %.17g", tokens,
                   card->token_budget);
  if (rc == 0 && card->max_llm_calls > 0 && m->has_usage &&
      m->llm_calls > card->max_llm_calls)
    rc = violation(r, "llm_calls %.17g are over max_llm_calls %.17g",
                   m->llm_calls, card->max_llm_calls);
  return rc;
}

/* Scores dimension i into r->scores[i]. */
static int score_dimension(const tally_scorecard_t *card, size_t i,
                           const tally_match_t *m, tally_card_result_t *r,
                           char *err, size_t errlen) {
  const tally_dimension_t *dim = &card->dims[i];
  const tally_primitive_t *p = dim->prim;
  tally_prim_input_t in = {
      .has_time_used = m->has_time_used,
      .time_used = m->time_used,
      .has_usage = m->has_usage,
      .input_tokens = m->input_tokens,
      .output_tokens = m->output_tokens,
      .llm_calls = m->llm_calls,
      .verified = m->verified,
      .token_budget = card->token_budget,
      .max_llm_calls = card->max_llm_calls,
  };
  r->scores[i] = 0;
  if (p->flags & TALLY_PRIM_FIELD) {
    in.truth = truth_of(card, m, dim->truth_field);
    if (in.truth == NULL) {
      snprintf(err, errlen,
               "ground_truth: no field \"%s\" (dimension %s reads it) in the "
               "job or the task",
               dim->truth_field, dim->name);
      return TALLY_EJOB;
    }
    bool (*truth_ok)(const cJSON *) =
        p->accepts_truth != NULL ? p->accepts_truth : p->accepts;
    if (truth_ok != NULL && !truth_ok(in.truth)) {
      snprintf(err, errlen,
               "ground_truth.%s: of a type primitive %s does not read "
               "(dimension %s)",
               dim->truth_field, p->name, dim->name);
      return TALLY_EJOB;
    }
    in.value = cJSON_GetObjectItemCaseSensitive(m->answer, dim->field);
    if (in.value == NULL)
      return warn(r, true, dim->field, dim->name,
                  "missing from the answer: dimension %s scores 0", dim->name);
    if (p->accepts != NULL && !p->accepts(in.value))
      return warn(r, true, dim->field, dim->name,
                  "of a type primitive %s does not read: dimension %s "
                  "scores 0",
                  p->name, dim->name);
    if (broken_required(card, m->answer, dim->field))
      return 0;
  }
  tally_prim_note_t note = {.error = false, .field = NULL, .message = ""};
  double s = p->score(dim->state, &in, &note);
  r->scores[i] = s >= 0 && s <= 1000 ? s : s > 1000 ? 1000 : 0;
  if (note.message[0] != '\0')
    return warn(r, note.error, note.field ? note.field : dim->field, dim->name,
                "%s", note.message);
  return 0;
}

int tally_scorecard_score(const tally_scorecard_t *card, const tally_match_t *m,
                          int precision, tally_card_result_t *r, char *err,
                          size_t errlen) {
  r->nwarnings = r->nviolations = 0;
  r->total = r->public_total = 0;
  int rc = check_format(card, m->answer, r);
  for (size_t i = 0; rc == 0 && i < card->ndims; i++) {
    rc = score_dimension(card, i, m, r, err, errlen);
    double weighted = r->scores[i] * card->dims[i].weight;
    r->total += weighted;
    if (card->dims[i].is_public)
      r->public_total += weighted;
  }
  if (rc == 0)
    rc = check_unread(card, m->answer, r);
  if (rc == 0)
    rc = check_constraints(card, m, r);
  if (rc == TALLY_ENOMEM)
    snprintf(err, errlen, "out of memory");
  if (rc != 0)
    return rc;
  if (r->total > 1000)
    r->total = 1000;
  if (r->public_total > 1000)
    r->public_total = 1000;
  double rounded = tally_round(r->total, precision);
  r->result = rounded >= card->win_threshold    ? TALLY_MATCH_WIN
              : rounded >= card->draw_threshold ? TALLY_MATCH_DRAW
                                                : TALLY_MATCH_LOSS;
  return 0;
}
