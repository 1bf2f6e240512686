/* Renders results in CMS's detail shapes. */
#include "engine/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_render_init(tally_render_t *r) {
  memset(r, 0, sizeof(*r));
  tally_buf_init(&r->plain);
}

void tally_render_close(tally_render_t *r) {
  free(r->spans);
  tally_buf_close(&r->plain);
  memset(r, 0, sizeof(*r));
}

static void put_key(tally_buf_t *b, const char *key) {
  tally_buf_putc(b, '"');
  tally_buf_puts(b, key);
  tally_buf_puts(b, "\":");
}

/* Writes ,"key":v (or "key":v when first). */
static void put_num_member(tally_buf_t *b, const char *key, double v,
                           bool first) {
  if (!first)
    tally_buf_putc(b, ',');
  put_key(b, key);
  tally_json_num(b, v);
}

static void put_bool(tally_buf_t *b, bool v) {
  tally_buf_puts(b, v ? "true" : "false");
}

/* CMS marks a testcase as over its time limit exactly when its text is
 * the list ["Execution timed out"]; a bare string does not count. */
static bool timed_out(const cJSON *text) {
  static const char msg[] = "Execution timed out";
  return cJSON_IsArray(text) && text->child != NULL &&
         text->child->next == NULL && cJSON_IsString(text->child) &&
         strcmp(text->child->valuestring, msg) == 0;
}

/* Writes one testcase of the details; admin, when not NULL, is its
 * private admin text, written last as "admin_text". */
static void put_testcase(tally_buf_t *b, const tally_task_t *task,
                         const tally_eval_t *ev, const tally_tc_result_t *tc,
                         bool grouped, const cJSON *admin) {
  tally_buf_puts(b, "{\"idx\":");
  tally_json_str(b, task->testcases[tc->tc].codename);
  tally_buf_puts(b, ",\"outcome\":");
  tally_json_str(b, tc->label);
  tally_buf_puts(b, ",\"text\":");
  tally_json_value(b, ev->text);
  tally_buf_puts(b, ",\"time\":");
  tally_json_value(b, ev->time);
  if (grouped) {
    tally_buf_puts(b, ",\"time_limit\":");
    if (task->has_time_limit)
      tally_json_num(b, task->time_limit);
    else
      tally_buf_puts(b, "null");
    tally_buf_puts(b, ",\"time_limit_was_exceeded\":");
    put_bool(b, timed_out(ev->text));
  }
  tally_buf_puts(b, ",\"memory\":");
  tally_json_value(b, ev->memory);
  if (grouped) {
    tally_buf_puts(b, ",\"show_in_restricted_feedback\":");
    put_bool(b, tc->show_in_restricted_feedback);
    tally_buf_puts(b, ",\"show_in_oi_restricted_feedback\":");
    put_bool(b, tc->show_in_oi_restricted_feedback);
  }
  if (admin != NULL) {
    tally_buf_puts(b, ",\"admin_text\":");
    tally_json_value(b, admin);
  }
  tally_buf_putc(b, '}');
}

/* The admin text of testcase tc of job, when admin texts are wanted. */
static const cJSON *admin_of(const tally_job_t *job, uint32_t tc, bool admin) {
  return admin && job->has_admin ? job->admin[tc] : NULL;
}

/* Records the byte range [from, to) as *span's, when spans are kept. */
static void mark(size_t *spans, size_t i, size_t from, size_t to) {
  if (spans != NULL) {
    spans[2 * i] = from;
    spans[2 * i + 1] = to;
  }
}

static void put_private_testcase(tally_buf_t *b, const tally_task_t *task,
                                 const tally_tc_result_t *tc) {
  tally_buf_puts(b, "{\"idx\":");
  tally_json_str(b, task->testcases[tc->tc].codename);
  tally_buf_putc(b, '}');
}

/* Copies the bytes of src in span to b. src may be b itself, which
 * reserve may move: the source is found after it. */
static void copy_span(tally_buf_t *b, const tally_buf_t *src,
                      const size_t *span) {
  size_t n = span[1] - span[0];
  if (!tally_buf_reserve(b, n))
    return;
  memcpy(b->data + b->len, src->data + span[0], n);
  b->len += n;
  b->data[b->len] = '\0';
}

/* Writes the head of subtask s up to the opening of its testcases:
 * {"idx":s,"score_fraction":..,"score":..,"max_score":..,"testcases":[
 * with its scores, {"idx":s,"testcases":[ without. */
static void put_subtask_head(tally_buf_t *b, const tally_task_t *task,
                             const tally_result_t *res, size_t s, bool scores) {
  char head[32];
  snprintf(head, sizeof(head), "{\"idx\":%zu,", s);
  tally_buf_puts(b, head);
  if (scores) {
    const tally_st_result_t *st = &res->sts[s];
    put_num_member(b, "score_fraction", st->fraction, true);
    put_num_member(b, "score", st->rounded, false);
    put_num_member(b, "max_score", task->subtasks[s].max_score, false);
    tally_buf_putc(b, ',');
  }
  put_key(b, "testcases");
  tally_buf_putc(b, '[');
}

/* Writes details, recording (when spans is not NULL) in spans[2*i] the
 * byte range of testcase i and, after the testcases, of each subtask.
 * With admin, testcases carry their admin texts. */
static void put_details(tally_buf_t *b, const tally_task_t *task,
                        const tally_job_t *job, const tally_result_t *res,
                        size_t *spans, bool admin) {
  size_t *st_spans = spans != NULL ? spans + 2 * res->ntcs : NULL;
  tally_buf_putc(b, '[');
  if (!res->grouped) {
    for (size_t i = 0; i < res->ntcs; i++) {
      uint32_t tc = res->tcs[i].tc;
      if (i > 0)
        tally_buf_putc(b, ',');
      size_t from = b->len;
      put_testcase(b, task, &job->evals[tc], &res->tcs[i], false,
                   admin_of(job, tc, admin));
      mark(spans, i, from, b->len);
    }
  }
  for (size_t s = 0; res->grouped && s < res->nsts; s++) {
    const tally_st_result_t *st = &res->sts[s];
    if (s > 0)
      tally_buf_putc(b, ',');
    size_t st_from = b->len;
    put_subtask_head(b, task, res, s, true);
    for (uint32_t k = 0; k < st->count; k++) {
      size_t i = st->first + k;
      uint32_t tc = res->tcs[i].tc;
      if (k > 0)
        tally_buf_putc(b, ',');
      size_t from = b->len;
      put_testcase(b, task, &job->evals[tc], &res->tcs[i], true,
                   admin_of(job, tc, admin));
      mark(spans, i, from, b->len);
    }
    tally_buf_puts(b, "]}");
    mark(st_spans, s, st_from, b->len);
  }
  tally_buf_putc(b, ']');
}

/* Whether the feedback level of task shows testcase tc to contestants.
 * A private testcase is never shown. */
static bool shown(const tally_task_t *task, const tally_tc_result_t *tc) {
  if (!task->testcases[tc->tc].is_public)
    return false;
  switch (task->feedback_level) {
  case TALLY_FEEDBACK_FULL:
    return true;
  case TALLY_FEEDBACK_OI_RESTRICTED:
    return tc->show_in_oi_restricted_feedback;
  case TALLY_FEEDBACK_RESTRICTED:
    break;
  }
  return tc->show_in_restricted_feedback;
}

/* Writes the testcases first .. first+count of res as public details do:
 * a public one whole (copied from src), a private one as {idx}; with
 * filter, only those the feedback level shows. */
static void put_public_testcases(tally_buf_t *b, const tally_task_t *task,
                                 const tally_result_t *res,
                                 const tally_buf_t *src, const size_t *spans,
                                 size_t first, size_t count, bool filter) {
  bool any = false;
  for (size_t i = first; i < first + count; i++) {
    const tally_tc_result_t *tc = &res->tcs[i];
    if (filter && !shown(task, tc))
      continue;
    if (any)
      tally_buf_putc(b, ',');
    any = true;
    if (task->testcases[tc->tc].is_public)
      copy_span(b, src, &spans[2 * i]);
    else
      put_private_testcase(b, task, tc);
  }
}

/* Public details: public testcases and all-public subtasks whole, the
 * rest reduced to what a contestant may see, copied from the details in
 * src that spans describe. With filter, the public view's details: only
 * the testcases the feedback level shows, so no private testcase. */
static void put_public_details(tally_buf_t *b, const tally_task_t *task,
                               const tally_result_t *res,
                               const tally_buf_t *src, const size_t *spans,
                               bool filter) {
  const size_t *st_spans = spans + 2 * res->ntcs;
  tally_buf_putc(b, '[');
  if (!res->grouped)
    put_public_testcases(b, task, res, src, spans, 0, res->ntcs, filter);
  for (size_t s = 0; res->grouped && s < res->nsts; s++) {
    const tally_st_result_t *st = &res->sts[s];
    bool all_public = task->subtasks[s].all_public;
    if (s > 0)
      tally_buf_putc(b, ',');
    if (all_public && !filter) {
      copy_span(b, src, &st_spans[2 * s]);
      continue;
    }
    put_subtask_head(b, task, res, s, all_public);
    put_public_testcases(b, task, res, src, spans, st->first, st->count,
                         filter);
    tally_buf_puts(b, "]}");
  }
  tally_buf_putc(b, ']');
}

static void put_ranking_details(tally_buf_t *b, const tally_task_t *task,
                                const tally_result_t *res) {
  tally_buf_putc(b, '[');
  for (size_t s = 0; s < task->nsubtasks; s++) {
    char num[64] = "0";
    if (res->evaluated && s < res->nsts) {
      const tally_st_result_t *st = &res->sts[s];
      double v =
          task->score_rounding == TALLY_ROUND_SUBTASK ? st->rounded : st->score;
      snprintf(num, sizeof(num), "%g", v);
    }
    if (s > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, num);
  }
  tally_buf_putc(b, ']');
}

/* Makes room for the spans of res's details. Returns 0 or TALLY_ENOMEM. */
static int reserve_spans(tally_render_t *r, const tally_result_t *res) {
  size_t need = 2 * (res->ntcs + res->nsts);
  if (need > r->cap) {
    size_t *spans = realloc(r->spans, need * sizeof(*spans));
    if (spans == NULL)
      return TALLY_ENOMEM;
    r->spans = spans;
    r->cap = need;
  }
  return 0;
}

int tally_render_details(tally_render_t *r, tally_buf_t *b,
                         const tally_task_t *task, const tally_job_t *job,
                         const tally_result_t *res) {
  if (reserve_spans(r, res) != 0)
    return TALLY_ENOMEM;
  if (res->evaluated)
    put_details(b, task, job, res, r->spans, false);
  else
    tally_buf_puts(b, "[]");
  return b->oom ? TALLY_ENOMEM : 0;
}

void tally_render_view_details(const tally_render_t *r, tally_buf_t *b,
                               const tally_buf_t *details,
                               const tally_task_t *task,
                               const tally_result_t *res) {
  if (res->evaluated)
    put_public_details(b, task, res, details, r->spans, true);
  else
    tally_buf_puts(b, "[]");
}

void tally_render_head(tally_buf_t *b, const tally_task_t *task,
                       const tally_job_t *job) {
  tally_buf_putc(b, '{');
  if (job->submission != NULL) {
    put_key(b, "submission");
    tally_json_value(b, job->submission);
    tally_buf_putc(b, ',');
  }
  put_key(b, "task");
  tally_json_str(b, task->name);
  if (job->participant != NULL) {
    tally_buf_putc(b, ',');
    put_key(b, "participant");
    tally_json_value(b, job->participant);
  }
}

int tally_render_result(tally_render_t *r, tally_buf_t *b,
                        const tally_task_t *task, const tally_job_t *job,
                        const tally_result_t *res, const char *extra) {
  if (reserve_spans(r, res) != 0)
    return TALLY_ENOMEM;
  tally_render_head(b, task, job);
  put_num_member(b, "score", res->score, false);
  put_num_member(b, "max_score", task->max_score, false);
  put_num_member(b, "public_score", res->public_score, false);
  put_num_member(b, "max_public_score", task->max_public_score, false);
  tally_buf_putc(b, ',');
  put_key(b, "details");
  /* Public details are copied from the details just written, unless these
   * carry admin texts: then from a copy without them, in r->plain. */
  const tally_buf_t *plain = b;
  if (res->evaluated && job->has_admin) {
    tally_buf_reset(&r->plain);
    put_details(&r->plain, task, job, res, r->spans, false);
    put_details(b, task, job, res, NULL, true);
    plain = &r->plain;
    if (r->plain.oom)
      b->oom = true;
  } else if (res->evaluated) {
    put_details(b, task, job, res, r->spans, false);
  } else {
    tally_buf_puts(b, "[]");
  }
  tally_buf_putc(b, ',');
  put_key(b, "public_details");
  if (res->evaluated)
    put_public_details(b, task, res, plain, r->spans, false);
  else
    tally_buf_puts(b, "[]");
  tally_buf_putc(b, ',');
  put_key(b, "ranking_details");
  put_ranking_details(b, task, res);
  tally_buf_putc(b, ',');
  put_key(b, "ranking_headers");
  tally_buf_putc(b, '[');
  for (size_t s = 0; s < task->nsubtasks; s++) {
    if (s > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, task->subtasks[s].header);
  }
  tally_buf_putc(b, ']');
  if (extra != NULL) {
    tally_buf_putc(b, ',');
    tally_buf_puts(b, extra);
  }
  tally_buf_putc(b, '}');
  return b->oom ? TALLY_ENOMEM : 0;
}

void tally_render_error(tally_buf_t *b, const cJSON *submission,
                        const char *msg) {
  tally_buf_puts(b, "{\"submission\":");
  tally_json_value(b, submission);
  tally_buf_puts(b, ",\"error\":");
  tally_json_str(b, msg);
  tally_buf_putc(b, '}');
}
