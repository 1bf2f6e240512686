/* Group score types: subtasks decoded from score_type_parameters, scored by
 * a reduce function, with CMS's details and restricted-feedback flags. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "scoretypes/scoretype.h"

#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum target_form_e {
  FORM_NONE = 0,
  FORM_COUNT,
  FORM_REGEX,
  FORM_LIST
} target_form_t;

static const char *form_name(target_form_t f) {
  switch (f) {
  case FORM_COUNT:
    return "a count";
  case FORM_REGEX:
    return "a regex";
  case FORM_LIST:
    return "a list of codenames";
  default:
    return "nothing";
  }
}

static target_form_t form_of(const cJSON *t) {
  if (cJSON_IsNumber(t))
    return FORM_COUNT;
  if (cJSON_IsString(t))
    return FORM_REGEX;
  if (cJSON_IsArray(t))
    return FORM_LIST;
  return FORM_NONE;
}

/* Decoding state shared by the entries of one task. */
typedef struct group_ctx_s {
  tally_task_t *task;
  tally_diag_t *d;
  tally_jpath_t *path;
  target_form_t form;
  size_t form_entry; /* the entry that fixed form */
  size_t consumed;   /* counts: testcases taken so far */
  pcre2_match_data *md;
  pcre2_match_context *mctx;
} group_ctx_t;

static int targets_count(group_ctx_t *g, const cJSON *t, tally_subtask_t *st) {
  double v = t->valuedouble;
  size_t n = g->task->ntestcases;
  if (!isfinite(v) || v != floor(v))
    return tally_diag_add(g->d, g->path, "count must be a whole number");
  if (v <= 0)
    return tally_diag_add(g->d, g->path, "count must be positive, got %g", v);
  if (v > (double)(n - g->consumed))
    return tally_diag_add(g->d, g->path,
                          "counts ask for at least %.0f testcases but the "
                          "task has %zu",
                          (double)g->consumed + v, n);
  st->ntcs = (size_t)v;
  st->tcs = malloc(st->ntcs * sizeof(*st->tcs));
  if (st->tcs == NULL)
    return tally_diag_add(g->d, g->path, "out of memory");
  for (size_t i = 0; i < st->ntcs; i++)
    st->tcs[i] = (uint32_t)(g->consumed + i);
  g->consumed += st->ntcs;
  return 0;
}

/* Selects the codenames the regex matches at their start, like Python's
 * re.match, in codename order. */
static int targets_regex(group_ctx_t *g, const cJSON *t, tally_subtask_t *st) {
  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re = pcre2_compile(
      (PCRE2_SPTR)t->valuestring, PCRE2_ZERO_TERMINATED,
      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &errcode, &erroff, NULL);
  if (re == NULL) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(errcode, msg, sizeof(msg));
    return tally_diag_add(g->d, g->path,
                          "regex does not compile at offset %zu: %s",
                          (size_t)erroff, (const char *)msg);
  }
  size_t n = g->task->ntestcases;
  st->tcs = malloc((n ? n : 1) * sizeof(*st->tcs));
  if (st->tcs == NULL) {
    pcre2_code_free(re);
    return tally_diag_add(g->d, g->path, "out of memory");
  }
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = g->task->testcases[i].codename;
    int m = pcre2_match(re, (PCRE2_SPTR)name, strlen(name), 0, PCRE2_ANCHORED,
                        g->md, g->mctx);
    if (m >= 0) {
      st->tcs[st->ntcs++] = (uint32_t)i;
    } else if (m != PCRE2_ERROR_NOMATCH) {
      PCRE2_UCHAR msg[160];
      pcre2_get_error_message(m, msg, sizeof(msg));
      rc = tally_diag_add(g->d, g->path, "regex fails on codename \"%s\": %s",
                          name, (const char *)msg);
      break;
    }
  }
  pcre2_code_free(re);
  if (rc == 0 && st->ntcs == 0)
    rc = tally_diag_add(g->d, g->path, "regex \"%s\" matches no testcase",
                        t->valuestring);
  return rc;
}

static int targets_list(group_ctx_t *g, const cJSON *t, tally_subtask_t *st) {
  int n = cJSON_GetArraySize(t);
  if (n == 0)
    return tally_diag_add(g->d, g->path, "list of testcases is empty");
  st->tcs = malloc((size_t)n * sizeof(*st->tcs));
  if (st->tcs == NULL)
    return tally_diag_add(g->d, g->path, "out of memory");
  int rc = 0;
  size_t i = 0;
  for (const cJSON *e = t->child; e; e = e->next, i++) {
    size_t old = tally_jpath_index(g->path, i);
    long at = -1;
    if (!cJSON_IsString(e)) {
      rc = tally_diag_add(g->d, g->path, "codename must be a string");
    } else if ((at = tally_task_find_testcase(g->task, e->valuestring)) < 0) {
      rc = tally_diag_add(g->d, g->path, "unknown testcase \"%s\"",
                          e->valuestring);
    } else {
      bool dup = false;
      for (size_t k = 0; k < st->ntcs; k++)
        dup = dup || st->tcs[k] == (uint32_t)at;
      if (dup)
        rc = tally_diag_add(g->d, g->path, "testcase \"%s\" is listed twice",
                            e->valuestring);
      else
        st->tcs[st->ntcs++] = (uint32_t)at;
    }
    tally_jpath_restore(g->path, old);
  }
  return rc;
}

static int decode_targets(group_ctx_t *g, size_t entry, const cJSON *t,
                          tally_subtask_t *st) {
  target_form_t form = form_of(t);
  if (form == FORM_NONE)
    return tally_diag_add(g->d, g->path,
                          "testcases must be a count, a regex or a list of "
                          "codenames");
  if (g->form == FORM_NONE) {
    g->form = form;
    g->form_entry = entry;
  } else if (form != g->form) {
    return tally_diag_add(g->d, g->path,
                          "testcases is %s but subtask %zu uses %s; all "
                          "subtasks must use the same form",
                          form_name(form), g->form_entry, form_name(g->form));
  }
  switch (form) {
  case FORM_COUNT:
    return targets_count(g, t, st);
  case FORM_REGEX:
    return targets_regex(g, t, st);
  default:
    return targets_list(g, t, st);
  }
}

static int decode_max_score(group_ctx_t *g, const cJSON *v, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
    return tally_diag_add(g->d, g->path,
                          "max score must be a non-negative finite number");
  *out = v->valuedouble;
  return 0;
}

static int decode_threshold(group_ctx_t *g, const cJSON *v, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0)
    return tally_diag_add(g->d, g->path, "threshold must be a positive number");
  *out = v->valuedouble;
  return 0;
}

/* Decodes [max_score, testcases(, threshold)]. */
static int decode_entry_array(group_ctx_t *g, size_t entry, const cJSON *e,
                              tally_subtask_t *st) {
  bool threshold = g->task->type->flags & TALLY_SCORE_THRESHOLD;
  int want = threshold ? 3 : 2;
  int n = cJSON_GetArraySize(e);
  int rc = 0;
  if (n < want) {
    return tally_diag_add(g->d, g->path,
                          "%s subtask entries are [max_score, testcases%s]%s",
                          g->task->type->name, threshold ? ", threshold" : "",
                          n == 2 && threshold ? ": threshold is missing" : "");
  }
  size_t old = tally_jpath_index(g->path, 0);
  rc |= decode_max_score(g, cJSON_GetArrayItem(e, 0), &st->max_score);
  tally_jpath_restore(g->path, old);
  tally_jpath_index(g->path, 1);
  rc |= decode_targets(g, entry, cJSON_GetArrayItem(e, 1), st);
  tally_jpath_restore(g->path, old);
  if (threshold) {
    tally_jpath_index(g->path, 2);
    rc |= decode_threshold(g, cJSON_GetArrayItem(e, 2), &st->threshold);
    tally_jpath_restore(g->path, old);
  }
  for (int i = want; i < n; i++) {
    tally_jpath_index(g->path, (size_t)i);
    rc |= tally_diag_add(g->d, g->path,
                         "extra element: %s subtask entries are "
                         "[max_score, testcases%s]",
                         g->task->type->name, threshold ? ", threshold" : "");
    tally_jpath_restore(g->path, old);
  }
  return rc ? TALLY_ECONFIG : 0;
}

/* Decodes {"max_score", "testcases", "threshold"?, "always_show_testcases"?}.
 */
static int decode_entry_object(group_ctx_t *g, size_t entry, const cJSON *e,
                               tally_subtask_t *st) {
  bool threshold = g->task->type->flags & TALLY_SCORE_THRESHOLD;
  bool seen_max = false, seen_tcs = false, seen_threshold = false;
  bool seen_show = false;
  int rc = 0;
  for (const cJSON *m = e->child; m; m = m->next) {
    size_t old = tally_jpath_key(g->path, m->string);
    bool *seen = strcmp(m->string, "max_score") == 0   ? &seen_max
                 : strcmp(m->string, "testcases") == 0 ? &seen_tcs
                 : strcmp(m->string, "threshold") == 0 && threshold
                     ? &seen_threshold
                 : strcmp(m->string, "always_show_testcases") == 0 ? &seen_show
                                                                   : NULL;
    if (seen != NULL && *seen) {
      rc |= tally_diag_add(g->d, g->path, "key appears twice");
    } else if (seen == &seen_max) {
      seen_max = true;
      rc |= decode_max_score(g, m, &st->max_score);
    } else if (seen == &seen_tcs) {
      seen_tcs = true;
      rc |= decode_targets(g, entry, m, st);
    } else if (seen == &seen_threshold) {
      seen_threshold = true;
      rc |= decode_threshold(g, m, &st->threshold);
    } else if (seen == &seen_show) {
      seen_show = true;
      if (!cJSON_IsBool(m))
        rc |= tally_diag_add(g->d, g->path,
                             "always_show_testcases must be true or false");
      else
        st->always_show_testcases = cJSON_IsTrue(m);
    } else {
      rc |= tally_diag_add(g->d, g->path, "unknown key for a %s subtask",
                           g->task->type->name);
    }
    tally_jpath_restore(g->path, old);
  }
  if (!seen_max)
    rc |= tally_diag_add(g->d, g->path, "max_score is missing");
  if (!seen_tcs)
    rc |= tally_diag_add(g->d, g->path, "testcases is missing");
  if (threshold && !seen_threshold)
    rc |= tally_diag_add(g->d, g->path, "threshold is missing");
  return rc ? TALLY_ECONFIG : 0;
}

int tally__group_parse(tally_task_t *task, const cJSON *params, tally_diag_t *d,
                       tally_jpath_t *path) {
  if (!cJSON_IsArray(params))
    return tally_diag_add(d, path, "%s takes a list with one entry per subtask",
                          task->type->name);
  int n = cJSON_GetArraySize(params);
  if (n == 0)
    return tally_diag_add(d, path, "%s needs at least one subtask",
                          task->type->name);
  task->subtasks = calloc((size_t)n, sizeof(*task->subtasks));
  if (task->subtasks == NULL)
    return tally_diag_add(d, path, "out of memory");
  task->nsubtasks = (size_t)n;

  group_ctx_t g = {.task = task, .d = d, .path = path};
  g.md = pcre2_match_data_create(1, NULL);
  g.mctx = pcre2_match_context_create(NULL);
  if (g.md == NULL || g.mctx == NULL) {
    pcre2_match_data_free(g.md);
    pcre2_match_context_free(g.mctx);
    return tally_diag_add(d, path, "out of memory");
  }
  pcre2_set_match_limit(g.mctx, 1000000);
  pcre2_set_depth_limit(g.mctx, 10000);

  int rc = 0;
  size_t i = 0;
  for (const cJSON *e = params->child; e; e = e->next, i++) {
    tally_subtask_t *st = &task->subtasks[i];
    size_t old = tally_jpath_index(path, i);
    if (cJSON_IsArray(e))
      rc |= decode_entry_array(&g, i, e, st);
    else if (cJSON_IsObject(e))
      rc |= decode_entry_object(&g, i, e, st);
    else
      rc |=
          tally_diag_add(d, path, "subtask entry must be a list or an object");
    tally_jpath_restore(path, old);
  }
  pcre2_match_data_free(g.md);
  pcre2_match_context_free(g.mctx);
  if (rc)
    return TALLY_ECONFIG;

  /* Sums start from 0.0 and go in subtask order, as in CMS. */
  task->max_score = 0.0;
  task->max_public_score = 0.0;
  for (i = 0; i < task->nsubtasks; i++) {
    tally_subtask_t *st = &task->subtasks[i];
    st->all_public = true;
    for (size_t k = 0; k < st->ntcs; k++)
      st->all_public = st->all_public && task->testcases[st->tcs[k]].is_public;
    task->max_score += st->max_score;
    if (st->all_public)
      task->max_public_score += st->max_score;
    char header[64];
    snprintf(header, sizeof(header), "Subtask %zu (%g)", i, st->max_score);
    st->header = strdup(header);
    if (st->header == NULL)
      return tally_diag_add(d, path, "out of memory");
  }
  return 0;
}

void tally__group_free(tally_task_t *task) {
  for (size_t i = 0; i < task->nsubtasks; i++) {
    free(task->subtasks[i].tcs);
    free(task->subtasks[i].header);
  }
  free(task->subtasks);
  task->subtasks = NULL;
  task->nsubtasks = 0;
}

int tally__group_score(const tally_task_t *task, const tally_eval_t *evals,
                       tally_result_t *res, char *err, size_t errlen) {
  const tally_score_type_t *type = task->type;
  double score = 0.0, public_score = 0.0;
  bool round_subtasks = task->score_rounding == TALLY_ROUND_SUBTASK;

  for (size_t s = 0; s < task->nsubtasks; s++) {
    const tally_subtask_t *sub = &task->subtasks[s];
    if (sub->ntcs > res->scratch_cap) {
      double *grown = realloc(res->scratch, sub->ntcs * sizeof(double));
      if (grown == NULL)
        goto nomem;
      res->scratch = grown;
      res->scratch_cap = sub->ntcs;
    }
    uint32_t first = (uint32_t)res->ntcs;
    size_t lowest = SIZE_MAX; /* position of the first strictly lowest */
    double lowest_outcome = 0.0;
    for (size_t k = 0; k < sub->ntcs; k++) {
      uint32_t tc = sub->tcs[k];
      double o = evals[tc].outcome;
      bool pub = task->testcases[tc].is_public;
      tally_tc_result_t *r = tally_result_push_tc(res);
      if (r == NULL)
        goto nomem;
      r->tc = tc;
      r->label = type->label(o, sub);
      r->show_in_restricted_feedback = pub;
      r->show_in_oi_restricted_feedback = pub;
      res->scratch[k] = o;
      if (pub && (lowest == SIZE_MAX || o < lowest_outcome)) {
        lowest = k;
        lowest_outcome = o;
      }
    }
    double fraction = type->reduce(res->scratch, sub->ntcs, sub);
    if (lowest != SIZE_MAX && fraction < 1.0 && !sub->always_show_testcases) {
      for (size_t k = 0; k < sub->ntcs; k++) {
        tally_tc_result_t *r = &res->tcs[first + k];
        if (!task->testcases[r->tc].is_public)
          continue;
        r->show_in_restricted_feedback = k <= lowest;
        r->show_in_oi_restricted_feedback = k == lowest;
      }
    }
    tally_st_result_t *st = tally_result_push_st(res);
    if (st == NULL)
      goto nomem;
    st->fraction = fraction;
    st->score = fraction * sub->max_score;
    st->rounded = tally_round(st->score, task->score_precision);
    st->first = first;
    st->count = (uint32_t)sub->ntcs;
    double counted = round_subtasks ? st->rounded : st->score;
    score += counted;
    if (sub->all_public)
      public_score += counted;
  }
  if (round_subtasks) {
    score = tally_round(score, task->score_precision);
    public_score = tally_round(public_score, task->score_precision);
  }
  res->score = score;
  res->public_score = public_score;
  return 0;

nomem:
  snprintf(err, errlen, "out of memory");
  return TALLY_ENOMEM;
}

/* GroupMin, GroupMul and GroupThreshold, as in CMS. */

static const char *unit_label(double outcome, const tally_subtask_t *st) {
  (void)st;
  if (outcome <= 0.0)
    return "Not correct";
  if (outcome >= 1.0)
    return "Correct";
  return "Partially correct";
}

static double min_reduce(const double *o, size_t n, const tally_subtask_t *st) {
  (void)st;
  double m = o[0];
  for (size_t i = 1; i < n; i++)
    if (o[i] < m)
      m = o[i];
  return m;
}

static double mul_reduce(const double *o, size_t n, const tally_subtask_t *st) {
  (void)st;
  double p = o[0];
  for (size_t i = 1; i < n; i++)
    p *= o[i];
  return p;
}

static bool within_threshold(double o, const tally_subtask_t *st) {
  return 0.0 < o && o <= st->threshold;
}

static const char *threshold_label(double o, const tally_subtask_t *st) {
  return within_threshold(o, st) ? "Correct" : "Not correct";
}

static double threshold_reduce(const double *o, size_t n,
                               const tally_subtask_t *st) {
  for (size_t i = 0; i < n; i++)
    if (!within_threshold(o[i], st))
      return 0.0;
  return 1.0;
}

const tally_score_type_t tally_score_group_min = {
    .version = TALLY_SCORE_TYPE_VERSION,
    .name = "GroupMin",
    .flags = TALLY_SCORE_UNIT_OUTCOMES,
    .reduce = min_reduce,
    .label = unit_label,
};

const tally_score_type_t tally_score_group_mul = {
    .version = TALLY_SCORE_TYPE_VERSION,
    .name = "GroupMul",
    .flags = TALLY_SCORE_UNIT_OUTCOMES,
    .reduce = mul_reduce,
    .label = unit_label,
};

const tally_score_type_t tally_score_group_threshold = {
    .version = TALLY_SCORE_TYPE_VERSION,
    .name = "GroupThreshold",
    .flags = TALLY_SCORE_THRESHOLD,
    .reduce = threshold_reduce,
    .label = threshold_label,
};
