/* Results as people read them: what tally score and tally results print
 * on a terminal (a line per submission, and with --details its subtasks
 * and testcases, dimensions or validators) instead of a JSON line. */
#include "cli/cli.h"
#include "config/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_out_human(const cli_out_t *o) {
  return o->form == CLI_OUT_TEXT ||
         (o->form == CLI_OUT_AUTO && isatty(STDOUT_FILENO));
}

/* A member's text, or NULL when it is not a string. */
static const char *str_of(const cJSON *obj, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

void cli_human_num(tally_buf_t *b, double x) {
  char num[64];
  snprintf(num, sizeof(num), "%.6g", x);
  if (strchr(num, 'e') != NULL && fabs(x) >= 1 && fabs(x) < 1e15)
    snprintf(num, sizeof(num), "%.0f", x);
  tally_buf_puts(b, num);
}

/* Appends a member's value as a person reads it: a number to six
 * significant digits (a score's precision is in its JSON form), a string
 * as it is, anything else as JSON. */
static void put_value(tally_buf_t *b, const cJSON *v) {
  if (v == NULL) {
    tally_buf_puts(b, "-");
  } else if (cJSON_IsString(v)) {
    tally_buf_puts(b, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    cli_human_num(b, v->valuedouble);
  } else {
    tally_json_value(b, v);
  }
}

static void put_member(tally_buf_t *b, const cJSON *obj, const char *name) {
  put_value(b, cJSON_GetObjectItemCaseSensitive(obj, name));
}

/* "score/max", of the members given. */
static void put_fraction(tally_buf_t *b, const cJSON *obj, const char *score,
                         const char *max) {
  put_member(b, obj, score);
  tally_buf_putc(b, '/');
  put_member(b, obj, max);
}

/* A testcase: its codename, label, texts, time and memory. */
static void put_testcase(tally_buf_t *b, const cJSON *t, const char *indent) {
  tally_buf_puts(b, indent);
  put_member(b, t, "idx");
  const char *outcome = str_of(t, "outcome");
  if (outcome == NULL) {
    tally_buf_puts(b, "  (private)\n");
    return;
  }
  tally_buf_puts(b, "  ");
  tally_buf_puts(b, outcome);
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(t, "text");
  if (cJSON_IsArray(text) && cJSON_GetArraySize(text) > 0) {
    tally_buf_puts(b, ": ");
    put_value(b, cJSON_GetArrayItem(text, 0)); /* CMS: a message, then args */
    for (const cJSON *a = cJSON_GetArrayItem(text, 1); a; a = a->next) {
      tally_buf_puts(b, a == cJSON_GetArrayItem(text, 1) ? " (" : ", ");
      put_value(b, a);
      if (a->next == NULL)
        tally_buf_putc(b, ')');
    }
  } else if (cJSON_IsString(text)) {
    tally_buf_puts(b, ": ");
    tally_buf_puts(b, text->valuestring);
  }
  const cJSON *time = cJSON_GetObjectItemCaseSensitive(t, "time");
  if (cJSON_IsNumber(time)) {
    tally_buf_puts(b, "  time ");
    put_value(b, time);
    tally_buf_puts(b, " s");
  }
  const cJSON *mem = cJSON_GetObjectItemCaseSensitive(t, "memory");
  if (cJSON_IsNumber(mem)) {
    tally_buf_puts(b, "  memory ");
    put_value(b, mem);
  }
  tally_buf_putc(b, '\n');
}

/* details as CMS has them: subtasks with their testcases, or testcases. */
static void put_cms_details(tally_buf_t *b, const cJSON *details) {
  for (const cJSON *d = details->child; d; d = d->next) {
    const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(d, "testcases");
    if (!cJSON_IsArray(tcs)) {
      put_testcase(b, d, "  ");
      continue;
    }
    tally_buf_puts(b, "  subtask ");
    put_member(b, d, "idx");
    tally_buf_puts(b, ": ");
    put_fraction(b, d, "score", "max_score");
    tally_buf_putc(b, '\n');
    for (const cJSON *t = tcs->child; t; t = t->next)
      put_testcase(b, t, "    ");
  }
}

/* A challenge's dimensions: score × weight = weighted. */
static void put_breakdown(tally_buf_t *b, const cJSON *breakdown) {
  for (const cJSON *d = breakdown->child; d; d = d->next) {
    tally_buf_puts(b, "  ");
    tally_buf_puts(b, d->string);
    const char *label = str_of(d, "label");
    if (label != NULL && strcmp(label, d->string) != 0) {
      tally_buf_puts(b, " (");
      tally_buf_puts(b, label);
      tally_buf_putc(b, ')');
    }
    tally_buf_puts(b, ": ");
    put_member(b, d, "score");
    tally_buf_puts(b, " x weight ");
    put_member(b, d, "weight");
    tally_buf_puts(b, " = ");
    put_member(b, d, "weighted");
    tally_buf_putc(b, '\n');
  }
}

void cli_human_validator(tally_buf_t *b, const cJSON *r) {
  tally_buf_puts(b, "  validator ");
  put_member(b, r, "key");
  tally_buf_puts(b, " (");
  put_member(b, r, "type");
  tally_buf_puts(b, "): ");
  put_member(b, r, "verdict");
  tally_buf_puts(b, ", score ");
  put_member(b, r, "normalized_score");
}

/* An agent run's evaluation: validators, metrics, dimensions. */
static void put_evaluation(tally_buf_t *b, const cJSON *ev) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, "validator_results");
  for (const cJSON *r = cJSON_IsArray(v) ? v->child : NULL; r; r = r->next) {
    cli_human_validator(b, r);
    const cJSON *raw = cJSON_GetObjectItemCaseSensitive(r, "raw_output");
    const char *reason = str_of(raw, "reason");
    if (reason != NULL && reason[0] != '\0') {
      tally_buf_puts(b, ": ");
      tally_buf_puts(b, reason);
    }
    tally_buf_putc(b, '\n');
  }
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(ev, "metric_results");
  for (const cJSON *r = cJSON_IsArray(m) ? m->child : NULL; r; r = r->next) {
    tally_buf_puts(b, "  metric ");
    put_member(b, r, "key");
    tally_buf_puts(b, ": ");
    const char *kinds[] = {"numeric_value", "boolean_value", "text_value"};
    const cJSON *val = NULL;
    for (size_t i = 0; i < 3 && val == NULL; i++)
      val = cJSON_GetObjectItemCaseSensitive(r, kinds[i]);
    put_value(b, val);
    const char *unit = str_of(r, "unit");
    if (unit != NULL && unit[0] != '\0') {
      tally_buf_putc(b, ' ');
      tally_buf_puts(b, unit);
    }
    tally_buf_putc(b, '\n');
  }
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "dimension_results");
  for (const cJSON *r = cJSON_IsArray(d) ? d->child : NULL; r; r = r->next) {
    tally_buf_puts(b, "  dimension ");
    put_member(b, r, "dimension");
    tally_buf_puts(b, ": ");
    put_member(b, r, "score");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "weight");
    if (w != NULL) {
      tally_buf_puts(b, " x weight ");
      put_value(b, w);
    }
    const char *reason = str_of(r, "reason");
    if (reason != NULL && reason[0] != '\0') {
      tally_buf_puts(b, ": ");
      tally_buf_puts(b, reason);
    }
    tally_buf_putc(b, '\n');
  }
}

/* A dead letter of tally results --dead: {id, error, deliveries, job}. */
static void put_dead(tally_buf_t *b, const cJSON *dl) {
  tally_buf_puts(b, "dead ");
  put_member(b, dl, "id");
  const char *job = str_of(dl, "job");
  cJSON *j = job != NULL ? cJSON_Parse(job) : NULL;
  const char *sub = str_of(j, "submission");
  if (sub != NULL) {
    tally_buf_puts(b, "  ");
    tally_buf_puts(b, sub);
  }
  cJSON_Delete(j);
  tally_buf_puts(b, "  after ");
  put_member(b, dl, "deliveries");
  tally_buf_puts(b, " deliveries: ");
  put_member(b, dl, "error");
  tally_buf_putc(b, '\n');
}

void cli_human_result(tally_buf_t *b, const cJSON *res, bool details) {
  if (cJSON_HasObjectItem(res, "deliveries") &&
      cJSON_HasObjectItem(res, "job")) {
    put_dead(b, res);
    return;
  }
  const char *names[] = {"submission", "task", "participant"};
  bool any = false;
  for (size_t i = 0; i < 3; i++) {
    const char *s = str_of(res, names[i]);
    if (s != NULL) {
      tally_buf_puts(b, any ? "  " : "");
      tally_buf_puts(b, s);
      any = true;
    }
  }
  tally_buf_puts(b, any ? "  " : "");
  const char *error = str_of(res, "error");
  if (error != NULL) {
    tally_buf_puts(b, "error: ");
    tally_buf_puts(b, error);
    tally_buf_putc(b, '\n');
    return;
  }
  put_fraction(b, res, "score", "max_score");
  tally_buf_puts(b, "  public ");
  put_fraction(b, res, "public_score", "max_public_score");
  const char *extra[] = {"result", "judgement", "validity"};
  for (size_t i = 0; i < 3; i++) {
    const char *s = str_of(res, extra[i]);
    if (s != NULL) {
      tally_buf_puts(b, "  ");
      tally_buf_puts(b, s);
    }
  }
  const cJSON *passed = cJSON_GetObjectItemCaseSensitive(res, "passed");
  if (cJSON_IsBool(passed))
    tally_buf_puts(b, cJSON_IsTrue(passed) ? "  passed" : "  not passed");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "rebuilt")))
    tally_buf_puts(b, "  (rebuilt)");
  tally_buf_putc(b, '\n');
  if (!details)
    return;
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(res, "details");
  const cJSON *breakdown =
      cJSON_GetObjectItemCaseSensitive(res, "score_breakdown");
  if (cJSON_IsObject(breakdown))
    put_breakdown(b, breakdown);
  else if (cJSON_IsArray(d))
    put_cms_details(b, d);
  else if (cJSON_IsObject(d))
    put_evaluation(b, d);
}

int cli_write_results(const cli_out_t *o, const char *data, size_t len) {
  if (!cli_out_human(o))
    return fwrite(data, 1, len, stdout) == len ? 0 : -1;
  tally_buf_t b;
  tally_buf_init(&b);
  const char *end = data + len;
  for (const char *p = data; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
    cJSON *res = cJSON_ParseWithLength(p, n);
    if (cJSON_IsObject(res)) {
      cli_human_result(&b, res, o->details);
    } else if (n > 0) { /* not a result: as it is */
      tally_buf_put(&b, p, n);
      tally_buf_putc(&b, '\n');
    }
    cJSON_Delete(res);
    p += n + 1;
  }
  int rc = b.oom || fwrite(b.data, 1, b.len, stdout) != b.len ? -1 : 0;
  tally_buf_close(&b);
  return rc;
}

void cli_out_resolve(cli_out_t *o) {
  if (o->form == CLI_OUT_AUTO)
    o->form = isatty(STDOUT_FILENO) ? CLI_OUT_TEXT : CLI_OUT_JSON;
}

bool cli_out_flag(cli_out_t *o, const char *arg) {
  if (strcmp(arg, "--json") == 0)
    o->form = CLI_OUT_JSON;
  else if (strcmp(arg, "--text") == 0)
    o->form = CLI_OUT_TEXT;
  else if (strcmp(arg, "--details") == 0)
    o->details = true;
  else
    return false;
  return true;
}
