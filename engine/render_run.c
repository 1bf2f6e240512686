/* The result of an agent_run task's run: its score out of max_score, the
 * verdict and validity, and the evaluation object (as the reference writes
 * it in details; in public_details and the views, for contestants:
 * without the validators' raw output, with the dimensions' weights, and
 * under restricted feedback without the actual and expected values). */
#include "engine/render_run.h"
#include "engine/render.h"

static void put_num(tally_buf_t *b, const char *key, double v) {
  tally_buf_puts(b, ",\"");
  tally_buf_puts(b, key);
  tally_buf_puts(b, "\":");
  tally_json_num(b, v);
}

static void put_verdict(tally_buf_t *b, const tally_es_eval_t *ev) {
  tally_buf_puts(b, ",\"passed\":");
  tally_buf_puts(b, !ev->has_passed ? "null" : ev->passed ? "true" : "false");
  tally_buf_puts(b, ",\"validity\":");
  tally_json_str(b, tally_es_validity_name(ev));
}

int tally_render_run(tally_buf_t *b, const tally_task_t *task,
                     const tally_job_t *job, const tally_result_t *res,
                     const tally_es_eval_t *ev, const char *extra) {
  tally_render_head(b, task, job);
  put_num(b, "score", res->score);
  put_num(b, "max_score", task->max_score);
  put_num(b, "public_score", res->public_score);
  put_num(b, "max_public_score", task->max_public_score);
  put_verdict(b, ev);
  tally_buf_puts(b, ",\"overall_score\":");
  if (ev->has_overall)
    tally_json_num(b, ev->overall);
  else
    tally_buf_puts(b, "null");
  if (!ev->has_overall) {
    /* Nothing could be scored: the score is 0, and this says why. */
    tally_buf_puts(b, ",\"score_reason\":");
    tally_json_str(b, ev->overall_reason[0] != '\0'
                          ? ev->overall_reason
                          : "no overall score: nothing was available");
  }
  tally_buf_puts(b, ",\"details\":");
  tally_es_render(b, ev, TALLY_ES_REFERENCE);
  tally_buf_puts(b, ",\"public_details\":");
  tally_es_render(b, ev,
                  task->feedback_level != TALLY_FEEDBACK_FULL
                      ? TALLY_ES_RESTRICTED
                      : TALLY_ES_PUBLIC);
  if (extra != NULL) {
    tally_buf_putc(b, ',');
    tally_buf_puts(b, extra);
  }
  tally_buf_putc(b, '}');
  return b->oom ? TALLY_ENOMEM : 0;
}

void tally_render_run_view(tally_buf_t *b, const tally_task_t *task,
                           const tally_result_t *res, const tally_es_eval_t *ev,
                           bool full) {
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, full ? res->score : res->public_score);
  put_num(b, "max_score", full ? task->max_score : task->max_public_score);
  put_verdict(b, ev);
  tally_buf_puts(b, ",\"details\":");
  tally_es_render(b, ev,
                  full ? TALLY_ES_PUBLIC
                  : task->feedback_level != TALLY_FEEDBACK_FULL
                      ? TALLY_ES_RESTRICTED
                      : TALLY_ES_PUBLIC);
  tally_buf_putc(b, '}');
}
