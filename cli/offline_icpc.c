/* tally score --pass-fail: the ICPC-style board of each pass-fail contest
 * the job files' submissions are in (docs/contest.md#pass-fail-contests),
 * as tallyd's results API shows it: a later job of a submission replaces
 * the earlier one, and a job tallyd would keep unscored (its ids checked,
 * its task loaded) is a submission without a judgement (pending). */
#include "cli/cli.h"
#include "contest/icpc.h"
#include "engine/engine.h"
#include "engine/judgement.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen_s {
  tally_icpc_sub_t s; /* its strings owned */
  char *contest;
  unsigned long seq; /* input order */
} seen_t;

typedef struct icpc_run_s {
  tally_engine_t *e;
  tally_buf_t *out;
  seen_t *seen;
  size_t n, cap;
  long failed;
  const char *name;
} icpc_run_t;

static int icpc_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  icpc_run_t *r = ctx;
  bool blank;
  int rc = cli_score_line(r->e, r->out, line, len, r->name, lineno,
                          "not judged", &r->failed, &blank);
  if (blank)
    return 0;
  if (rc == TALLY_ENOMEM)
    return TALLY_ENOMEM;
  const tally_job_t *j = &r->e->job;
  /* What tallyd keeps no place for never reaches the board. */
  if (!j->keys_ok || j->type != TALLY_JOB_SCORE || j->submission == NULL ||
      j->participant == NULL || (rc != 0 && r->e->decoded_task == NULL))
    return 0;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    seen_t *s = realloc(r->seen, cap * sizeof(*s));
    if (s == NULL) {
      fprintf(stderr, "tally: out of memory\n");
      return TALLY_ENOMEM;
    }
    r->seen = s;
    r->cap = cap;
  }
  seen_t *s = &r->seen[r->n];
  memset(s, 0, sizeof(*s));
  s->seq = r->n;
  s->s.timestamp = j->timestamp;
  s->s.official = j->official;
  if (rc == 0)
    snprintf(s->s.judgement, sizeof(s->s.judgement), "%s",
             tally_judgement(r->e->task, j, &r->e->res));
  s->s.id = cli_id_text(j->submission, "");
  s->s.participant = cli_id_text(j->participant, "");
  s->s.task = strdup(r->e->decoded_task != NULL ? r->e->decoded_task->name
                                                : r->e->task->name);
  s->contest = cli_id_text(j->contest, "default");
  r->n++;
  if (s->s.id == NULL || s->s.participant == NULL || s->s.task == NULL ||
      s->contest == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return TALLY_ENOMEM;
  }
  return 0;
}

/* Submission ids, then input order. */
static int cmp_by_submission(const void *a, const void *b) {
  const seen_t *x = a, *y = b;
  int c = strcmp(x->s.id, y->s.id);
  if (c != 0)
    return c;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_by_contest(const void *a, const void *b) {
  const seen_t *x = a, *y = b;
  return strcmp(x->contest, y->contest);
}

/* Appends the cells and totals of board b (tasks in the contest's
 * order) as tally ranking's and the results API's rows. */
void cli_icpc_rows(tally_buf_t *b, const tally_icpc_board_t *board,
                   const char *const *tasks) {
  tally_buf_puts(b, "[");
  for (size_t i = 0; i < board->nrows; i++) {
    const tally_icpc_row_t *w = &board->rows[i];
    tally_buf_puts(b, i > 0 ? ",{\"rank\":" : "{\"rank\":");
    tally_json_num(b, (double)w->rank);
    tally_buf_puts(b, ",\"participant\":");
    tally_json_str(b, w->participant);
    cli_json_int(b, "solved", w->solved);
    cli_json_int(b, "penalty", w->penalty);
    cli_json_int(b, "last", w->last);
    tally_buf_puts(b, ",\"tasks\":{");
    for (size_t t = 0; t < board->ntasks; t++) {
      const tally_icpc_cell_t *c = &w->cells[t];
      if (t > 0)
        tally_buf_putc(b, ',');
      tally_json_str(b, tasks[t]);
      tally_buf_putc(b, ':');
      tally_icpc_cell_json(b, c);
    }
    tally_buf_puts(b, "}}");
  }
  tally_buf_puts(b, "]");
}

/* Keeps the last job of each submission and prints one board per
 * pass-fail contest. */
static int icpc_print(icpc_run_t *r, const tally_contestset_t *cs,
                      bool public_view) {
  if (r->n > 1)
    qsort(r->seen, r->n, sizeof(*r->seen), cmp_by_submission);
  size_t kept = 0;
  for (size_t k = 0; k < r->n; k++) {
    bool last =
        k + 1 == r->n || strcmp(r->seen[k].s.id, r->seen[k + 1].s.id) != 0;
    seen_t t = r->seen[kept];
    r->seen[kept] = r->seen[k];
    r->seen[k] = t;
    if (last)
      kept++;
  }
  qsort(r->seen, kept, sizeof(*r->seen), cmp_by_contest);
  tally_icpc_sub_t *subs = calloc(kept + 1, sizeof(*subs));
  if (subs == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  tally_buf_t *b = r->out;
  tally_buf_reset(b);
  int status = 0;
  for (size_t k = 0; k < kept && status == 0;) {
    size_t end = k;
    while (end < kept && strcmp(r->seen[end].contest, r->seen[k].contest) == 0)
      end++;
    const tally_contest_t *c = tally_contestset_find(cs, r->seen[k].contest);
    if (c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL) {
      for (size_t i = k; i < end; i++)
        subs[i - k] = r->seen[i].s;
      tally_icpc_rules_t rules = {c->start, c->penalty_time, c->compile_penalty,
                                  public_view ? c->freeze : NAN};
      tally_icpc_board_t board;
      if (tally_icpc_build(&board, &rules, (const char *const *)c->tasks,
                           c->ntasks, subs, end - k, NULL, 0) != 0) {
        status = EXIT_JOB_FAILED;
        break;
      }
      tally_buf_puts(b, "{\"contest\":");
      tally_json_str(b, c->name);
      tally_buf_puts(b, ",\"scoring\":\"pass-fail\",\"view\":");
      tally_buf_puts(b, public_view ? "\"public\"" : "\"private\"");
      tally_buf_puts(b, ",\"frozen\":");
      tally_buf_puts(b, public_view && !isnan(c->freeze) ? "true" : "false");
      tally_buf_puts(b, ",\"rows\":");
      cli_icpc_rows(b, &board, (const char *const *)c->tasks);
      tally_buf_puts(b, "}\n");
      tally_icpc_board_free(&board);
    }
    k = end;
  }
  free(subs);
  if (status != 0 || b->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  fwrite(b->data, 1, b->len, stdout);
  return 0;
}

int cli_score_icpc(tally_engine_t *e, const tally_contestset_t *cs,
                   bool public_view, int nfiles, char **files,
                   tally_buf_t *out) {
  icpc_run_t r = {.e = e, .out = out, .name = "stdin"};
  int status = cli_each_file_line(nfiles, files, &r.name, icpc_line, &r);
  if (status == 0)
    status = icpc_print(&r, cs, public_view);
  if (status == 0 && r.failed > 0)
    status = EXIT_JOB_FAILED;
  for (size_t k = 0; k < r.n; k++) {
    free(r.seen[k].s.id);
    free(r.seen[k].s.participant);
    free(r.seen[k].s.task);
    free(r.seen[k].contest);
  }
  free(r.seen);
  return status;
}
