/* The result of an answer task's match: the totals, the breakdown by
 * dimension, win, draw or loss, the warnings and the constraints it went
 * over. */
#include "engine/render_answer.h"
#include "engine/render.h"

static void put_key(tally_buf_t *b, const char *key) {
  tally_buf_putc(b, '"');
  tally_buf_puts(b, key);
  tally_buf_puts(b, "\":");
}

/* ,"key":v */
static void put_num(tally_buf_t *b, const char *key, double v) {
  tally_buf_putc(b, ',');
  put_key(b, key);
  tally_json_num(b, v);
}

static void put_breakdown(tally_buf_t *b, const tally_task_t *task,
                          const tally_card_result_t *cr, bool public_only) {
  const tally_scorecard_t *card = task->card;
  tally_buf_putc(b, '{');
  bool first = true;
  for (size_t i = 0; i < card->ndims; i++) {
    const tally_dimension_t *dim = &card->dims[i];
    if (public_only && !dim->is_public)
      continue;
    if (!first)
      tally_buf_putc(b, ',');
    first = false;
    tally_json_str(b, dim->name);
    tally_buf_puts(b, ":{\"label\":");
    tally_json_str(b, dim->label);
    put_num(b, "score", cr->scores[i]);
    put_num(b, "weight", dim->weight);
    put_num(b, "weighted", cr->scores[i] * dim->weight);
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, '}');
}

void tally_render_answer_details(tally_buf_t *b, const tally_task_t *task,
                                 const tally_card_result_t *cr,
                                 bool public_only) {
  tally_buf_puts(b, "{\"score_breakdown\":");
  put_breakdown(b, task, cr, public_only);
  tally_buf_putc(b, '}');
}

static void put_warnings(tally_buf_t *b, const tally_card_result_t *cr) {
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < cr->nwarnings; i++) {
    const tally_card_warning_t *w = &cr->warnings[i];
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, w->error ? "{\"severity\":\"error\",\"field\":"
                               : "{\"severity\":\"warning\",\"field\":");
    if (w->field[0] != '\0')
      tally_json_str(b, w->field);
    else
      tally_buf_puts(b, "null");
    tally_buf_puts(b, ",\"dimension\":");
    if (w->dimension[0] != '\0')
      tally_json_str(b, w->dimension);
    else
      tally_buf_puts(b, "null");
    tally_buf_puts(b, ",\"message\":");
    tally_json_str(b, w->message);
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, ']');
}

int tally_render_answer(tally_buf_t *b, const tally_task_t *task,
                        const tally_job_t *job, const tally_result_t *res,
                        const tally_card_result_t *cr, const char *extra) {
  tally_render_head(b, task, job);
  put_num(b, "score", res->score);
  put_num(b, "max_score", task->max_score);
  put_num(b, "public_score", res->public_score);
  put_num(b, "max_public_score", task->max_public_score);
  tally_buf_puts(b, ",\"result\":");
  tally_json_str(b, tally_match_result_name(cr->result));
  tally_buf_puts(b, ",\"score_breakdown\":");
  put_breakdown(b, task, cr, false);
  tally_buf_puts(b, ",\"submission_warnings\":");
  put_warnings(b, cr);
  tally_buf_puts(b, ",\"constraint_violations\":[");
  for (size_t i = 0; i < cr->nviolations; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, cr->violations[i]);
  }
  tally_buf_puts(b, "],\"details\":");
  tally_render_answer_details(b, task, cr, false);
  tally_buf_puts(b, ",\"public_details\":");
  tally_render_answer_details(b, task, cr, true);
  if (extra != NULL) {
    tally_buf_putc(b, ',');
    tally_buf_puts(b, extra);
  }
  tally_buf_putc(b, '}');
  return b->oom ? TALLY_ENOMEM : 0;
}
