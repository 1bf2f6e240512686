/* tally score --explain: for each job, how its score comes out of what it
 * holds, in words and figures: subtask by subtask under the task's score
 * type (the outcomes each one reduces, the fraction, its worth, the
 * rounding), a challenge's dimension by dimension, an agent run's
 * validator by validator and dimension by dimension. Read from the engine
 * right after it scored the job, so that the figures are the ones it
 * used. */
#include "cli/cli.h"
#include "config/json.h"
#include "evalspecs/spec.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void put_json_num(tally_buf_t *b, const cJSON *obj, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
  if (cJSON_IsNumber(v))
    cli_human_num(b, v->valuedouble);
  else if (cJSON_IsString(v))
    tally_buf_puts(b, v->valuestring);
  else
    tally_buf_puts(b, "-");
}

/* "name: outcome", and the testcase's message when it has one. */
static void put_outcome(tally_buf_t *b, const tally_engine_t *e, uint32_t tc) {
  tally_buf_puts(b, e->task->testcases[tc].codename);
  tally_buf_puts(b, ": ");
  cli_human_num(b, e->job.evals[tc].outcome);
  const cJSON *text = e->job.evals[tc].text;
  const cJSON *msg = cJSON_IsArray(text) ? cJSON_GetArrayItem(text, 0) : text;
  if (cJSON_IsString(msg) && msg->valuestring[0] != '\0') {
    tally_buf_puts(b, " (");
    tally_buf_puts(b, msg->valuestring);
    tally_buf_putc(b, ')');
  }
}

static void put_rounding(tally_buf_t *b, const tally_task_t *t, double raw,
                         double rounded) {
  if (fabs(raw - rounded) > 1e-9 * (1 + fabs(raw))) {
    tally_buf_puts(b, ", rounded to ");
    cli_human_num(b, rounded);
    char why[64];
    snprintf(why, sizeof(why), " (%d decimal%s)", t->score_precision,
             t->score_precision == 1 ? "" : "s");
    tally_buf_puts(b, why);
  }
}

/* A group type: each subtask's outcomes, their reduction, its worth. */
static void explain_groups(tally_buf_t *b, const tally_engine_t *e) {
  const tally_task_t *t = e->task;
  const tally_result_t *r = &e->res;
  const char *type = t->type->name;
  bool min = strcmp(type, "GroupMin") == 0;
  bool mul = strcmp(type, "GroupMul") == 0;
  bool thr = strcmp(type, "GroupThreshold") == 0;
  tally_buf_puts(b, "  ");
  tally_buf_puts(b, type);
  tally_buf_puts(
      b, min   ? ": a subtask is worth its maximum times the lowest outcome of "
                 "its testcases\n"
         : mul ? ": a subtask is worth its maximum times the product of its "
                 "testcases' outcomes\n"
         : thr ? ": a subtask is worth its maximum when every outcome of its "
                 "testcases is above 0 and at most its threshold, else 0\n"
               : ": the score type gives each subtask a fraction of its "
                 "maximum\n");
  if (!r->evaluated) {
    tally_buf_puts(b, "  the submission did not compile: every subtask "
                      "scores 0\n");
    return;
  }
  double sum = 0;
  for (size_t k = 0; k < t->nsubtasks && k < r->nsts; k++) {
    const tally_subtask_t *st = &t->subtasks[k];
    const tally_st_result_t *sr = &r->sts[k];
    char head[96];
    snprintf(head, sizeof(head), "  subtask %zu (max ", k);
    tally_buf_puts(b, head);
    cli_human_num(b, st->max_score);
    if (thr) {
      tally_buf_puts(b, ", threshold ");
      cli_human_num(b, st->threshold);
    }
    tally_buf_puts(b, min ? "): lowest of " : mul ? "): product of " : "): ");
    for (size_t j = 0; j < st->ntcs; j++) {
      if (j > 0)
        tally_buf_puts(b, ", ");
      put_outcome(b, e, st->tcs[j]);
    }
    tally_buf_puts(b, st->ntcs == 0 ? "no testcase" : "");
    tally_buf_puts(b, " -> ");
    cli_human_num(b, sr->fraction);
    tally_buf_puts(b, "; ");
    cli_human_num(b, sr->fraction);
    tally_buf_puts(b, " x ");
    cli_human_num(b, st->max_score);
    tally_buf_puts(b, " = ");
    cli_human_num(b, sr->score);
    put_rounding(b, t, sr->score, sr->rounded);
    tally_buf_putc(b, '\n');
    sum += t->score_rounding == TALLY_ROUND_SUBTASK ? sr->rounded : sr->score;
  }
  tally_buf_puts(b, "  total: the subtasks' sum, ");
  cli_human_num(b, r->score);
  if (fabs(sum - r->score) > 1e-9 * (1 + fabs(sum))) {
    tally_buf_puts(b, " (");
    cli_human_num(b, sum);
    tally_buf_puts(b, " before rounding)");
  }
  tally_buf_puts(b, "\n  public: ");
  bool any = false;
  for (size_t k = 0; k < t->nsubtasks && k < r->nsts; k++) {
    if (!t->subtasks[k].all_public)
      continue;
    char name[48];
    snprintf(name, sizeof(name), "%ssubtask %zu", any ? ", " : "", k);
    tally_buf_puts(b, name);
    any = true;
  }
  if (any) {
    tally_buf_puts(b, " (every testcase public) count, ");
    cli_human_num(b, r->public_score);
  } else {
    tally_buf_puts(b, "no subtask has every testcase public, 0");
  }
  tally_buf_putc(b, '\n');
}

/* Sum: each testcase worth the parameter times its outcome. */
static void explain_sum(tally_buf_t *b, const tally_engine_t *e) {
  const tally_task_t *t = e->task;
  double each = t->ntestcases > 0 ? t->max_score / (double)t->ntestcases : 0;
  tally_buf_puts(b, "  Sum: each testcase is worth ");
  cli_human_num(b, each);
  tally_buf_puts(b, " times its outcome\n");
  if (!e->res.evaluated) {
    tally_buf_puts(b, "  the submission did not compile: 0\n");
    return;
  }
  for (int pub = 0; pub < 2; pub++) {
    tally_buf_puts(b, pub ? "  public testcases " : "  outcomes ");
    double total = 0;
    bool any = false;
    for (size_t i = 0; i < t->ntestcases; i++) {
      if (pub && !t->testcases[i].is_public)
        continue;
      tally_buf_puts(b, any ? ", " : "");
      put_outcome(b, e, (uint32_t)i);
      total += e->job.evals[i].outcome;
      any = true;
    }
    if (!any) {
      tally_buf_puts(b, "none, 0\n");
      continue;
    }
    tally_buf_puts(b, "; their sum ");
    cli_human_num(b, total);
    tally_buf_puts(b, " x ");
    cli_human_num(b, each);
    tally_buf_puts(b, " = ");
    cli_human_num(b, total * each);
    double got = pub ? e->res.public_score : e->res.score;
    put_rounding(b, t, total * each, got);
    tally_buf_putc(b, '\n');
  }
}

/* A member of an object as JSON text, cut at 200 bytes. */
static void put_short(tally_buf_t *b, const cJSON *v) {
  tally_buf_t t;
  tally_buf_init(&t);
  if (cJSON_IsString(v))
    tally_buf_puts(&t, v->valuestring);
  else
    tally_json_value(&t, v);
  size_t n = t.len > 200 ? 200 : t.len;
  tally_buf_put(b, t.data != NULL ? t.data : "", n);
  if (n < t.len)
    tally_buf_puts(b, "...");
  tally_buf_close(&t);
}

/* A challenge: each dimension's score times its weight, the total, the
 * result against the thresholds. */
static void explain_card(tally_buf_t *b, const cJSON *res) {
  const cJSON *bd = cJSON_GetObjectItemCaseSensitive(res, "score_breakdown");
  double sum = 0;
  for (const cJSON *d = bd != NULL ? bd->child : NULL; d; d = d->next) {
    tally_buf_puts(b, "  ");
    tally_buf_puts(b, d->string);
    tally_buf_puts(b, ": ");
    put_json_num(b, d, "score");
    tally_buf_puts(b, " x weight ");
    put_json_num(b, d, "weight");
    tally_buf_puts(b, " = ");
    put_json_num(b, d, "weighted");
    tally_buf_putc(b, '\n');
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(d, "weighted");
    sum += cJSON_IsNumber(w) ? w->valuedouble : 0;
  }
  tally_buf_puts(b, "  total: the weighted scores' sum, ");
  cli_human_num(b, sum);
  tally_buf_puts(b, " (at most 1000), rounded to ");
  put_json_num(b, res, "score");
  const char *result =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "result"));
  if (result != NULL) {
    tally_buf_puts(b, "; ");
    tally_buf_puts(b, result);
    tally_buf_puts(b, " by the task's win and draw thresholds");
  }
  tally_buf_putc(b, '\n');
  const char *lists[] = {"submission_warnings", "constraint_violations"};
  for (size_t i = 0; i < 2; i++) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(res, lists[i]);
    for (const cJSON *w = cJSON_IsArray(l) ? l->child : NULL; w; w = w->next) {
      /* {severity, field, dimension, message}, or a text. */
      const char *sev =
          cJSON_GetStringValue(cJSON_GetObjectItem(w, "severity"));
      const char *field = cJSON_GetStringValue(cJSON_GetObjectItem(w, "field"));
      const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(w, "message"));
      tally_buf_puts(b, "  ");
      tally_buf_puts(b, sev != NULL ? sev
                        : i == 0    ? "warning"
                                    : "constraint violated");
      tally_buf_puts(b, ": ");
      if (field != NULL) {
        tally_buf_puts(b, field);
        tally_buf_puts(b, ": ");
      }
      if (msg != NULL)
        tally_buf_puts(b, msg);
      else
        put_short(b, w);
      tally_buf_putc(b, '\n');
    }
  }
}

/* An agent run: each validator's verdict and why, each dimension's score
 * and weight, the strategy's overall score, and the score. */
static void explain_run(tally_buf_t *b, const tally_engine_t *e,
                        const cJSON *res) {
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(res, "details");
  const cJSON *vs = cJSON_GetObjectItemCaseSensitive(ev, "validator_results");
  for (const cJSON *v = cJSON_IsArray(vs) ? vs->child : NULL; v; v = v->next) {
    cli_human_validator(b, v);
    tally_buf_putc(b, '\n');
    const char *verdict =
        cJSON_GetStringValue(cJSON_GetObjectItem(v, "verdict"));
    const cJSON *raw = cJSON_GetObjectItemCaseSensitive(v, "raw_output");
    const char *reason =
        cJSON_GetStringValue(cJSON_GetObjectItem(raw, "reason"));
    if (reason != NULL && reason[0] != '\0') {
      tally_buf_puts(b, "    why: ");
      tally_buf_puts(b, reason);
      tally_buf_putc(b, '\n');
    }
    if (verdict != NULL && strcmp(verdict, "pass") != 0) {
      const char *seen[] = {"expected_value", "actual_value"};
      const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(v, "type"));
      bool regex = type != NULL && strcmp(type, "regex_match") == 0;
      for (size_t i = 0; i < 2; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, seen[i]);
        if (x == NULL)
          continue;
        tally_buf_puts(b, i == 0
                              ? (regex ? "    the pattern: " : "    expected: ")
                              : (regex ? "    does not match: " : "    got: "));
        put_short(b, x);
        tally_buf_putc(b, '\n');
      }
      const cJSON *vr = cJSON_GetObjectItemCaseSensitive(raw, "evidence");
      const cJSON *ve = cJSON_GetObjectItemCaseSensitive(
          cJSON_IsObject(vr) ? vr : raw, "validation_error");
      if (cJSON_IsString(ve)) {
        tally_buf_puts(b, "    schema: ");
        tally_buf_puts(b, ve->valuestring);
        tally_buf_putc(b, '\n');
      }
    }
  }
  const tally_es_spec_t *spec = e->task->spec;
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(ev, "dimension_results");
  for (const cJSON *d = cJSON_IsArray(ds) ? ds->child : NULL; d; d = d->next) {
    const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(d, "dimension"));
    tally_buf_puts(b, "  dimension ");
    tally_buf_puts(b, key != NULL ? key : "?");
    tally_buf_puts(b, ": ");
    put_json_num(b, d, "score");
    for (size_t k = 0; spec != NULL && key != NULL && k < spec->ndims; k++) {
      const tally_es_dimension_t *dim = &spec->dims[k];
      if (strcmp(dim->key, key) != 0)
        continue;
      tally_buf_puts(b, ", weight ");
      cli_human_num(b, dim->weight.set ? dim->weight.v : 1);
      if (dim->gate) {
        tally_buf_puts(b, ", a gate at ");
        cli_human_num(b, dim->pass_threshold.v);
      }
    }
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(d, "reason"));
    if (reason != NULL && reason[0] != '\0') {
      tally_buf_puts(b, ": ");
      tally_buf_puts(b, reason);
    }
    tally_buf_putc(b, '\n');
  }
  tally_buf_puts(b, "  overall: ");
  put_json_num(b, ev, "overall_score");
  const char *strategy =
      cJSON_GetStringValue(cJSON_GetObjectItem(ev, "strategy"));
  if (strategy != NULL) {
    tally_buf_puts(b, " by the ");
    tally_buf_puts(b, strategy);
    tally_buf_puts(b, " strategy");
  }
  tally_buf_puts(b, "; score = overall x ");
  put_json_num(b, res, "max_score");
  tally_buf_puts(b, " = ");
  put_json_num(b, res, "score");
  const char *why =
      cJSON_GetStringValue(cJSON_GetObjectItem(ev, "overall_reason"));
  if (why != NULL && why[0] != '\0') {
    tally_buf_puts(b, "; ");
    tally_buf_puts(b, why);
  }
  tally_buf_putc(b, '\n');
  const char *vreason =
      cJSON_GetStringValue(cJSON_GetObjectItem(ev, "validity_reason"));
  if (vreason != NULL && vreason[0] != '\0') {
    tally_buf_puts(b, "  validity: ");
    tally_buf_puts(b, vreason);
    tally_buf_putc(b, '\n');
  }
}

/* A custom score type: the outcomes it was given. */
static void explain_testcases(tally_buf_t *b, const tally_engine_t *e) {
  const tally_task_t *t = e->task;
  tally_buf_puts(b, "  ");
  tally_buf_puts(b, t->type->name);
  tally_buf_puts(b, ": the score type's own rule, from these outcomes\n");
  for (size_t i = 0; i < t->ntestcases && e->res.evaluated; i++) {
    tally_buf_puts(b, "  ");
    put_outcome(b, e, (uint32_t)i);
    tally_buf_putc(b, '\n');
  }
}

/* What the task type's comparator or checker noted on each testcase, the
 * notes an operator sees (this is the operator's command). */
static void explain_notes(tally_buf_t *b, const tally_engine_t *e) {
  for (size_t i = 0; e->job.has_admin && i < e->task->ntestcases; i++) {
    const cJSON *admin = e->job.admin[i];
    if (!cJSON_IsString(admin) || admin->valuestring[0] == '\0')
      continue;
    tally_buf_puts(b, "  ");
    tally_buf_puts(b, e->task->testcases[i].codename);
    tally_buf_puts(b, ", the checker's note: ");
    tally_buf_puts(b, admin->valuestring);
    tally_buf_putc(b, '\n');
  }
}

int cli_explain(tally_engine_t *e, char *line, size_t len, const char *name,
                unsigned long lineno, tally_buf_t *scratch, tally_buf_t *b,
                long *failed) {
  tally_buf_reset(scratch);
  int rc = tally_engine_score(e, line, len, NULL, scratch);
  if (rc == TALLY_ENOMEM || scratch->oom)
    return TALLY_ENOMEM;
  cJSON *res = cJSON_ParseWithLength(scratch->data, scratch->len);
  if (res == NULL)
    return TALLY_ENOMEM;
  cli_human_result(b, res, false);
  if (rc != 0) {
    char where[512];
    snprintf(where, sizeof(where), "  (%s, line %lu)\n", name, lineno);
    tally_buf_puts(b, where);
    (*failed)++;
  } else if (e->task->card != NULL) {
    explain_card(b, res);
  } else if (e->task->spec != NULL) {
    explain_run(b, e, res);
  } else if (e->task->subtasks != NULL) {
    explain_groups(b, e);
  } else if (strcmp(e->task->type->name, "Sum") == 0) {
    explain_sum(b, e);
    explain_notes(b, e);
  } else {
    explain_testcases(b, e);
    explain_notes(b, e);
  }
  cJSON_Delete(res);
  return b->oom ? TALLY_ENOMEM : 0;
}
