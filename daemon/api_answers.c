/* The results API's answers (docs/scoreboard.md#results-api): each
 * request's rows, once its reads are in, written as JSON or as the page;
 * a frozen board's figures computed from what came before the freeze. */
#include "daemon/api.h"
#include "daemon/api_int.h"

#include "contest/frozen.h"
#include "daemon/page.h"
#include "engine/engine.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void put_time(tally_buf_t *b, double t) {
  if (isnan(t)) {
    tally_buf_puts(b, "null");
    return;
  }
  char text[64];
  tally_rfc3339_text(t, text, sizeof(text));
  tally_json_str(b, text);
}

/* The freeze record of contest name, or NULL. */
struct tally_api_freeze_s *tally__api_freeze_of(const tally_api_t *a,
                                                const char *name) {
  for (size_t i = 0; i < a->nfreezes; i++)
    if (strcmp(a->freezes[i].name, name) == 0)
      return &a->freezes[i];
  return NULL;
}

/* The operator's word on contest name as last read, or NULL. */
const tally_freeze_word_t *tally__api_word_of(const tally_api_t *a,
                                              const char *name) {
  for (size_t i = 0; i < a->nwords; i++)
    if (strcmp(a->words[i].name, name) == 0)
      return &a->words[i].word;
  return NULL;
}

/* The freeze of contest c in force at now (NAN: none), by its config and
 * the operator's word as last read (contest/freezes.h). */
double tally__api_freeze_rule(const tally_api_t *a, const tally_contest_t *c,
                              double now) {
  if (c == NULL)
    return NAN;
  return tally_freeze_in_force(c->freeze, c->end, c->unfreeze_after,
                               tally__api_word_of(a, c->name), now);
}

/* The time contest c's public board is frozen from (NAN: it is not), as
 * settle() last found, so that every answer agrees with the reload
 * events the boards got; a contest not settled yet (tallyd just started,
 * or a reload or a word just gave it a freeze) by the rule alone. */
double tally__api_freeze_since(const tally_api_t *a, const tally_contest_t *c,
                               double now) {
  if (c == NULL)
    return NAN;
  const struct tally_api_freeze_s *f = tally__api_freeze_of(a, c->name);
  return f != NULL ? f->since : tally__api_freeze_rule(a, c, now);
}

double tally__api_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A contest's object; since is the time its public board is frozen from
 * (NAN: not frozen). */
static void put_contest(tally_buf_t *b, const char *name,
                        const tally_contest_t *c, double since) {
  tally_buf_puts(b, "{\"name\":");
  tally_json_str(b, name);
  tally_buf_puts(b, ",\"title\":");
  tally_json_str(b, c != NULL ? c->title : name);
  tally_buf_puts(b, ",\"configured\":");
  tally_buf_puts(b, c != NULL ? "true" : "false");
  tally_buf_puts(b, ",\"tasks\":");
  if (c == NULL) {
    tally_buf_puts(b, "null");
  } else {
    tally_buf_putc(b, '[');
    for (size_t i = 0; i < c->ntasks; i++) {
      if (i > 0)
        tally_buf_putc(b, ',');
      tally_json_str(b, c->tasks[i]);
    }
    tally_buf_putc(b, ']');
  }
  tally_buf_puts(b, ",\"start\":");
  put_time(b, c != NULL ? c->start : NAN);
  tally_buf_puts(b, ",\"end\":");
  put_time(b, c != NULL ? c->end : NAN);
  tally_buf_puts(b, ",\"freeze\":");
  put_time(b, c != NULL ? c->freeze : NAN);
  /* frozen_since only while frozen: an answer without a freeze reads as
   * it did before operators could freeze a board. */
  tally_buf_puts(b, ",\"frozen\":");
  tally_buf_puts(b, !isnan(since) ? "true" : "false");
  if (!isnan(since)) {
    tally_buf_puts(b, ",\"frozen_since\":");
    put_time(b, since);
  }
  tally_buf_puts(b, ",\"score_precision\":");
  tally_json_num(b, c != NULL ? c->score_precision : 0);
  tally_buf_puts(b, ",\"ranking\":");
  tally_json_str(b, c != NULL && c->ranking == TALLY_RANKING_ELO ? "elo"
                                                                 : "total");
  tally_buf_putc(b, '}');
}

static int cmp_names(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

static void build_list(areq_t *q, tally_buf_t *b) {
  const tally_contestset_t *cs = q->a->contests;
  /* The configured ones, then those Redis knows of without a config. */
  tally_buf_puts(b, "{\"contests\":[");
  size_t n = 0;
  for (size_t i = 0; cs != NULL && i < cs->count; i++, n++) {
    if (n > 0)
      tally_buf_putc(b, ',');
    put_contest(
        b, cs->contests[i].name, &cs->contests[i],
        tally__api_freeze_since(q->a, &cs->contests[i], tally__api_now()));
  }
  if (q->nnames > 1)
    qsort(q->names, q->nnames, sizeof(char *), cmp_names);
  for (size_t i = 0; i < q->nnames; i++) {
    if (cs != NULL && tally_contestset_find(cs, q->names[i]) != NULL)
      continue;
    if (n++ > 0)
      tally_buf_putc(b, ',');
    put_contest(b, q->names[i], NULL, NAN);
  }
  tally_buf_puts(b, "]}\n");
}

/* The public (or private) score of a task score's JSON, with partial. */
static void put_task_score(tally_buf_t *b, const char *json,
                           bool private_view) {
  cJSON *j = cJSON_Parse(json);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(
      j, private_view ? "score" : "public_score");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "partial");
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, cJSON_IsNumber(s) ? s->valuedouble : 0);
  /* Public or private, a task score says whether a submission of it
   * could not be scored. */
  tally_buf_puts(b, ",\"partial\":");
  tally_buf_puts(b, cJSON_IsTrue(p) ? "true" : "false");
  tally_buf_putc(b, '}');
  cJSON_Delete(j);
}

static void put_person(tally_buf_t *b, const areq_t *q, const char *id) {
  const tally_contestset_t *cs = q->a->contests;
  const tally_participant_t *p =
      cs != NULL ? tally_contestset_participant(cs, id) : NULL;
  tally_buf_puts(b, "\"participant\":");
  tally_json_str(b, id);
  tally_buf_puts(b, ",\"name\":");
  tally_json_str(b, p != NULL && p->name != NULL ? p->name : id);
  tally_buf_puts(b, ",\"team\":");
  if (p != NULL && p->team != NULL)
    tally_json_str(b, p->team);
  else
    tally_buf_puts(b, "null");
}

static int cmp_rows(const void *x, const void *y) {
  const row_t *a = x, *b = y;
  if (a->value != b->value)
    return a->value > b->value ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* A frozen arena's rows: those with a match before the freeze. */
static void frozen_ratings(areq_t *q) {
  size_t kept = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    if (q->rows[i].nfields == 0)
      tally__api_free_row(&q->rows[i]);
    else
      q->rows[kept++] = q->rows[i];
  }
  q->nrows = kept;
}

/* A frozen board's rows: each one's total from its frozen task scores,
 * added in task name order as tally adds them; a participant with none
 * before the freeze is not on it. */
static void frozen_totals(areq_t *q) {
  size_t kept = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    row_t *w = &q->rows[i];
    size_t n = w->nfields / 2;
    if (n == 0) {
      tally__api_free_row(w);
      continue;
    }
    /* Pairs sorted by task name, then summed. */
    for (size_t x = 1; x < n; x++)
      for (size_t y = x;
           y > 0 && strcmp(w->fields[2 * y - 2], w->fields[2 * y]) > 0; y--) {
        char *t0 = w->fields[2 * y - 2], *j0 = w->fields[2 * y - 1];
        w->fields[2 * y - 2] = w->fields[2 * y];
        w->fields[2 * y - 1] = w->fields[2 * y + 1];
        w->fields[2 * y] = t0;
        w->fields[2 * y + 1] = j0;
      }
    double total = 0;
    for (size_t k = 0; k < n; k++) {
      cJSON *j = cJSON_Parse(w->fields[2 * k + 1]);
      const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "public_score");
      total += cJSON_IsNumber(ps) ? ps->valuedouble : 0;
      cJSON_Delete(j);
    }
    w->value = total;
    q->rows[kept++] = *w;
  }
  q->nrows = kept;
}

/* The rows of a ranking or board in rank order: a frozen board's first
 * counted again (its ratings or its totals), then tally's order, by
 * value, ties by id in byte order. */
static void rank_rows(areq_t *q, bool elo) {
  if (q->frozen && elo)
    frozen_ratings(q);
  else if (q->frozen)
    frozen_totals(q);
  if (q->nrows > 1)
    qsort(q->rows, q->nrows, sizeof(row_t), cmp_rows);
}

/* A pass-fail contest's ICPC board from its rows' places, as of the
 * freeze on a frozen public board. Returns 0, or -1 when out of memory. */
static int icpc_board(areq_t *q, const tally_contest_t *c,
                      tally_icpc_board_t *board) {
  const char **named = calloc(q->nrows + 1, sizeof(char *));
  if (named == NULL)
    return -1;
  tally_icpc_rules_t rules = {c->start, c->penalty_time, c->compile_penalty,
                              q->frozen ? q->freeze : NAN};
  for (size_t i = 0; i < q->nrows; i++)
    named[i] = q->rows[i].id;
  int rc =
      tally_icpc_build(board, &rules, (const char *const *)c->tasks, c->ntasks,
                       q->icpc.subs, q->icpc.n, named, q->nrows);
  free(named);
  return rc;
}

static void put_icpc_rows(areq_t *q, tally_buf_t *b, const tally_contest_t *c) {
  tally_icpc_board_t board;
  if (icpc_board(q, c, &board) != 0) {
    b->oom = true;
    return;
  }
  for (size_t i = 0; i < board.nrows; i++) {
    const tally_icpc_row_t *w = &board.rows[i];
    tally_buf_puts(b, i > 0 ? ",{\"rank\":" : "{\"rank\":");
    tally_json_num(b, (double)w->rank);
    tally_buf_putc(b, ',');
    put_person(b, q, w->participant);
    tally_buf_puts(b, ",\"solved\":");
    tally_json_num(b, w->solved);
    tally_buf_puts(b, ",\"penalty\":");
    tally_json_num(b, (double)w->penalty);
    tally_buf_puts(b, ",\"last\":");
    tally_json_num(b, (double)w->last);
    tally_buf_puts(b, ",\"tasks\":{");
    for (size_t t = 0; t < board.ntasks; t++) {
      if (t > 0)
        tally_buf_putc(b, ',');
      tally_json_str(b, c->tasks[t]);
      tally_buf_putc(b, ':');
      tally_icpc_cell_json(b, &w->cells[t]);
    }
    tally_buf_puts(b, "}}");
  }
  tally_icpc_board_free(&board);
}

static void build_ranking(areq_t *q, tally_buf_t *b) {
  const tally_contest_t *c = tally__api_config_of(q);
  bool elo = c != NULL && c->ranking == TALLY_RANKING_ELO;
  bool icpc = c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL;
  double since = q->frozen ? q->freeze : NAN;
  if (!icpc)
    rank_rows(q, elo);
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, q->contest);
  tally_buf_puts(b, ",\"view\":");
  tally_json_str(b, q->private_view ? "private" : "public");
  tally_buf_puts(b, ",\"ranking\":");
  tally_json_str(b, elo ? "elo" : "total");
  tally_buf_puts(b, ",\"scoring\":");
  tally_json_str(b, icpc ? "pass-fail" : "score");
  if (icpc) {
    tally_buf_puts(b, ",\"penalty_time\":");
    tally_json_num(b, c->penalty_time);
  }
  tally_buf_puts(b, ",\"frozen\":");
  tally_buf_puts(b, !isnan(since) ? "true" : "false");
  if (!isnan(since)) {
    tally_buf_puts(b, ",\"frozen_since\":");
    put_time(b, since);
  }
  tally_buf_puts(b, ",\"tasks\":[");
  char **tasks = c != NULL ? c->tasks : q->names;
  size_t ntasks = c != NULL ? c->ntasks : q->nnames;
  if (c == NULL && ntasks > 1)
    qsort(tasks, ntasks, sizeof(char *), cmp_names);
  for (size_t i = 0; i < ntasks; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, tasks[i]);
  }
  tally_buf_puts(b, "],\"rows\":[");
  if (icpc) {
    put_icpc_rows(q, b, c);
    tally_buf_puts(b, "]}\n");
    return;
  }
  long rank = 0;
  for (size_t i = 0; i < q->nrows; i++) {
    row_t *w = &q->rows[i];
    if (i == 0 || w->value != q->rows[i - 1].value)
      rank = (long)i + 1;
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, "{\"rank\":");
    tally_json_num(b, (double)rank);
    tally_buf_putc(b, ',');
    put_person(b, q, w->id);
    if (elo) {
      static const char *const names[] = {"matches", "wins", "draws", "losses"};
      tally_buf_puts(b, ",\"rating\":");
      tally_json_num(b, w->value);
      for (size_t k = 0; k < 4; k++) {
        tally_buf_puts(b, ",\"");
        tally_buf_puts(b, names[k]);
        tally_buf_puts(b, "\":");
        tally_json_num(b, k < w->nfields ? strtod(w->fields[k], NULL) : 0);
      }
    } else {
      tally_buf_puts(b, ",\"total\":");
      tally_json_num(b, w->value);
      tally_buf_puts(b, ",\"tasks\":{");
      size_t put = 0;
      for (size_t k = 0; k + 1 < w->nfields; k += 2) {
        if (put++ > 0)
          tally_buf_putc(b, ',');
        tally_json_str(b, w->fields[k]);
        tally_buf_putc(b, ':');
        put_task_score(b, w->fields[k + 1], q->private_view);
      }
      tally_buf_putc(b, '}');
    }
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "]}\n");
}

/* A participant's answer: their task scores in the contest, and each of
 * their submissions to it, with the private score only where a token
 * was used on it (or for the operator). */
static void build_participant(areq_t *q, tally_buf_t *b) {
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, q->contest);
  tally_buf_putc(b, ',');
  put_person(b, q, q->participant);
  tally_buf_puts(b, ",\"tasks\":{");
  for (size_t k = 0; k + 1 < q->self.nfields; k += 2) {
    if (k > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, q->self.fields[k]);
    tally_buf_putc(b, ':');
    put_task_score(b, q->self.fields[k + 1], false);
  }
  tally_buf_puts(b, "},\"submissions\":[");
  size_t put = 0;
  const tally_scoring_t *sc_set = q->a->scoring;
  tally_engine_t engine_s, *engine = NULL;
  if (sc_set != NULL && sc_set->ok) {
    tally_engine_init(&engine_s, &sc_set->tasks);
    engine_s.contests = q->a->contests;
    engine = &engine_s;
  }
  for (size_t i = 0; i < q->nrows; i++) {
    row_t *w = &q->rows[i];
    /* fields: summary, tokened, job; the page holds only this contest's
     * submissions (page_of) */
    if (w->nfields < 2)
      continue;
    cJSON *s = cJSON_Parse(w->fields[0]);
    if (s == NULL)
      continue;
    bool tokened = strcmp(w->fields[1], "1") == 0;
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(s, "task");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(s, "timestamp");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(s, "public_score");
    if (put++ > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, "{\"submission\":");
    tally_json_str(b, w->id);
    tally_buf_puts(b, ",\"task\":");
    tally_json_value(b, task);
    tally_buf_puts(b, ",\"timestamp\":");
    tally_json_num(b, cJSON_IsNumber(ts) ? ts->valuedouble : 0);
    tally_buf_puts(b, ",\"tokened\":");
    tally_buf_puts(b, tokened ? "true" : "false");
    tally_buf_puts(b, ",\"public_score\":");
    if (cJSON_IsNumber(ps))
      tally_json_num(b, ps->valuedouble);
    else
      tally_buf_puts(b, "null");
    if ((tokened || q->private_view) && cJSON_IsNumber(sc)) {
      tally_buf_puts(b, ",\"score\":");
      tally_json_num(b, sc->valuedouble);
    }
    /* The view: public, or full once tokened (or for the operator),
     * rebuilt from the stored job with the current config. */
    if (engine != NULL && w->nfields > 2 && w->fields[2][0] != '\0') {
      tally_buf_t out;
      tally_buf_init(&out);
      if (tally_engine_score(engine, w->fields[2], strlen(w->fields[2]), NULL,
                             &out) == 0) {
        tally_buf_reset(&out);
        if (tally_engine_view(engine, tokened || q->private_view, &out) == 0 &&
            out.len > 0) {
          tally_buf_puts(b, ",\"view\":");
          tally_buf_put(b, out.data, out.len);
        }
      }
      tally_buf_close(&out);
    }
    tally_buf_putc(b, '}');
    cJSON_Delete(s);
  }
  if (engine != NULL)
    tally_engine_close(engine);
  /* The page: how many in all, the limit, and the cursor of the next page
   * (null on the last). */
  tally_buf_puts(b, "],\"total\":");
  tally_json_num(b, (double)q->total);
  tally_buf_puts(b, ",\"limit\":");
  tally_json_num(b, (double)q->limit);
  tally_buf_puts(b, ",\"next_cursor\":");
  if (q->more && q->nrows > 0) {
    const row_t *last = &q->rows[q->nrows - 1];
    tally_buf_t cur;
    tally_buf_init(&cur);
    char ts[40];
    snprintf(ts, sizeof(ts), "%.17g~", last->value);
    tally_buf_puts(&cur, ts);
    tally_buf_puts(&cur, last->id);
    tally_json_str(b, tally_buf_text(&cur));
    tally_buf_close(&cur);
  } else {
    tally_buf_puts(b, "null");
  }
  tally_buf_puts(b, "}\n");
}

/* One contest: its config, or what Redis knows of it; false (answered
 * 404) when neither knows it. */
static bool build_contest(areq_t *q, tally_buf_t *b) {
  const tally_contest_t *c = tally__api_config_of(q);
  bool known = c != NULL;
  for (size_t i = 0; !known && i < q->nnames; i++)
    known = strcmp(q->names[i], q->contest) == 0;
  if (!known) {
    tally_http_req_t *r = q->r;
    r->reply.status = 404;
    tally_buf_puts(b, "{\"error\":");
    char msg[400];
    snprintf(msg, sizeof(msg), "no contest \"%.300s\"", q->contest);
    tally_json_str(b, msg);
    tally_buf_puts(b, "}\n");
    tally_http_answer(r);
    return false;
  }
  put_contest(b, q->contest, c,
              tally__api_freeze_since(q->a, c, tally__api_now()));
  tally_buf_putc(b, '\n');
  return true;
}

/* The pages: the list of contests, or one contest's public board. */
static void build_page(areq_t *q, tally_buf_t *b) {
  const tally_contestset_t *cs = q->a->contests;
  if (q->kind == REQ_LIST) {
    if (q->nnames > 1)
      qsort(q->names, q->nnames, sizeof(char *), cmp_names);
    tally_page_index(b, cs, q->names, q->nnames);
    return;
  }
  const tally_contest_t *c = tally__api_config_of(q);
  bool elo = c != NULL && c->ranking == TALLY_RANKING_ELO;
  tally_icpc_board_t icpc;
  bool pass_fail = c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL;
  if (pass_fail && icpc_board(q, c, &icpc) != 0) {
    b->oom = true;
    return;
  }
  if (!pass_fail)
    rank_rows(q, elo);
  char **tasks = c != NULL ? c->tasks : q->names;
  size_t ntasks = c != NULL ? c->ntasks : q->nnames;
  if (c == NULL && ntasks > 1)
    qsort(tasks, ntasks, sizeof(char *), cmp_names);
  tally_board_row_t *rows = calloc(q->nrows + 1, sizeof(*rows));
  if (rows == NULL) {
    if (pass_fail)
      tally_icpc_board_free(&icpc);
    b->oom = true;
    return;
  }
  for (size_t i = 0; i < q->nrows; i++)
    rows[i] = (tally_board_row_t){q->rows[i].id, q->rows[i].value,
                                  q->rows[i].fields, q->rows[i].nfields};
  tally_board_t board = {.contest = q->contest,
                         .config = c,
                         .cs = cs,
                         .tasks = tasks,
                         .ntasks = ntasks,
                         .elo = elo,
                         .rows = rows,
                         .nrows = q->nrows,
                         .frozen = q->frozen,
                         .icpc = pass_fail ? &icpc : NULL};
  tally_page_board(b, &board);
  free(rows);
  if (pass_fail)
    tally_icpc_board_free(&icpc);
}

/* A cell of the board opened: a participant's score on a task, subtask
 * by subtask, with the headers and maxima the task config gives. */
static void build_cell(areq_t *q, tally_buf_t *b) {
  const tally_contestset_t *cs = q->a->contests;
  const tally_task_max_t *m =
      cs != NULL ? tally_contestset_max(cs, q->task) : NULL;
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, q->contest);
  tally_buf_puts(b, ",\"participant\":");
  tally_json_str(b, q->participant);
  tally_buf_puts(b, ",\"task\":");
  tally_json_str(b, q->task);
  tally_buf_puts(b, q->private_view ? ",\"view\":\"private\""
                                    : ",\"view\":\"public\"");
  tally_buf_puts(b, q->frozen ? ",\"frozen\":true" : ",\"frozen\":false");
  tally_buf_puts(b, ",\"max_score\":");
  if (m != NULL)
    tally_json_num(b, q->private_view ? m->max_score : m->max_public_score);
  else
    tally_buf_puts(b, "null");
  tally_buf_puts(b, ",\"headers\":[");
  for (size_t i = 0; m != NULL && i < m->nheaders; i++) {
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, m->headers[i]);
  }
  tally_buf_puts(b, "],");
  tally_buf_put(b, q->cell.data != NULL ? q->cell.data : "", q->cell.len);
  tally_buf_puts(b, "}\n");
}

void tally__api_build(areq_t *q) {
  tally_http_req_t *r = q->r;
  tally_buf_t *b = &r->reply.body;
  if (q->failed) {
    r->reply.status = 503;
    tally_buf_puts(b, "{\"error\":");
    tally_json_str(b, q->why);
    tally_buf_puts(b, "}\n");
  } else {
    r->reply.type = "application/json";
    if (q->html) {
      r->reply.type = "text/html; charset=utf-8";
      r->reply.csp = tally_page_csp();
      build_page(q, b);
    } else if (q->kind == REQ_LIST) {
      build_list(q, b);
    } else if (q->kind == REQ_CONTEST) {
      if (!build_contest(q, b))
        return;
    } else if (q->kind == REQ_RANKING) {
      build_ranking(q, b);
      const tally_contest_t *c = tally__api_config_of(q);
      if (c != NULL && c->scoring == TALLY_SCORING_PASS_FAIL && !b->oom)
        tally__api_keep_board(q->a, q, b->data, b->len);
    } else if (q->kind == REQ_CELL) {
      build_cell(q, b);
    } else {
      build_participant(q, b);
    }
  }
  tally_http_answer(r);
}
