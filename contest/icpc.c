/* The pass-fail scoreboard (icpc.h). */
#include "contest/icpc.h"

#include "config/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long tally_icpc_minute(double start, double timestamp) {
  double m = floor((timestamp - start) / 60);
  if (!(m > 0))
    return 0;
  return m > 1e15 ? (long)1e15 : (long)m;
}

bool tally_icpc_pending(const char *judgement) {
  return judgement[0] == '\0' || strcmp(judgement, "JE") == 0;
}

bool tally_icpc_rejected(const char *judgement, bool compile_penalty) {
  if (tally_icpc_pending(judgement) || strcmp(judgement, "AC") == 0)
    return false;
  return compile_penalty || strcmp(judgement, "CE") != 0;
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Submissions by participant, task, timestamp, then id. */
static int cmp_sub(const void *x, const void *y) {
  const tally_icpc_sub_t *a = *(const tally_icpc_sub_t *const *)x;
  const tally_icpc_sub_t *b = *(const tally_icpc_sub_t *const *)y;
  int c = strcmp(a->participant, b->participant);
  if (c == 0)
    c = strcmp(a->task, b->task);
  if (c == 0 && a->timestamp != b->timestamp)
    c = a->timestamp < b->timestamp ? -1 : 1;
  return c != 0 ? c : strcmp(a->id, b->id);
}

static int cmp_row(const void *x, const void *y) {
  const tally_icpc_row_t *a = x, *b = y;
  if (a->solved != b->solved)
    return a->solved > b->solved ? -1 : 1;
  if (a->penalty != b->penalty)
    return a->penalty < b->penalty ? -1 : 1;
  if (a->last != b->last)
    return a->last < b->last ? -1 : 1;
  return strcmp(a->participant, b->participant);
}

static bool tied(const tally_icpc_row_t *a, const tally_icpc_row_t *b) {
  return a->solved == b->solved && a->penalty == b->penalty &&
         a->last == b->last;
}

/* One submission into its cell, in order. */
static void count(tally_icpc_cell_t *c, const tally_icpc_rules_t *rules,
                  const tally_icpc_sub_t *s, unsigned *rejected) {
  if (c->solved || !s->official)
    return;
  if (!isnan(rules->freeze) && !(s->timestamp < rules->freeze)) {
    /* Made during the freeze: counted, its judgement hidden, even a
     * compile error that would count for nothing (it would tell). */
    c->pending++;
    return;
  }
  if (tally_icpc_pending(s->judgement)) {
    c->pending++;
    return;
  }
  if (strcmp(s->judgement, "AC") == 0) {
    c->judged++;
    c->solved = true;
    c->solved_at = s->timestamp;
    c->minute = tally_icpc_minute(rules->start, s->timestamp);
    c->penalty = c->minute + (long)rules->penalty_time * (long)*rejected;
    return;
  }
  if (tally_icpc_rejected(s->judgement, rules->compile_penalty)) {
    c->judged++;
    (*rejected)++;
  }
}

void tally_icpc_board_free(tally_icpc_board_t *b) {
  for (size_t i = 0; i < b->nrows; i++) {
    free(b->rows[i].participant);
    free(b->rows[i].cells);
  }
  free(b->rows);
  memset(b, 0, sizeof(*b));
}

int tally_icpc_build(tally_icpc_board_t *b, const tally_icpc_rules_t *rules,
                     const char *const *tasks, size_t ntasks,
                     const tally_icpc_sub_t *subs, size_t nsubs,
                     const char *const *participants, size_t nparticipants) {
  memset(b, 0, sizeof(*b));
  b->ntasks = ntasks;
  /* The teams: every one named, and every one that submitted. */
  const char **names = malloc((nparticipants + nsubs + 1) * sizeof(char *));
  const tally_icpc_sub_t **order = malloc((nsubs + 1) * sizeof(*order));
  if (names == NULL || order == NULL) {
    free(names);
    free(order);
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; i < nparticipants; i++)
    names[n++] = participants[i];
  for (size_t i = 0; i < nsubs; i++) {
    names[n++] = subs[i].participant;
    order[i] = &subs[i];
  }
  qsort(names, n, sizeof(char *), cmp_str);
  qsort(order, nsubs, sizeof(*order), cmp_sub);
  b->rows = calloc(n + 1, sizeof(tally_icpc_row_t));
  int rc = b->rows == NULL ? -1 : 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (b->nrows > 0 &&
        strcmp(b->rows[b->nrows - 1].participant, names[i]) == 0)
      continue;
    tally_icpc_row_t *r = &b->rows[b->nrows];
    r->participant = strdup(names[i]);
    r->cells = calloc(ntasks + 1, sizeof(tally_icpc_cell_t));
    if (r->participant == NULL || r->cells == NULL) {
      free(r->participant);
      free(r->cells);
      rc = -1;
    } else {
      b->nrows++;
    }
  }
  /* Each place's submissions in order; rows and order are both sorted by
   * participant, so one pass finds each row. */
  size_t row = 0;
  for (size_t i = 0; rc == 0 && i < nsubs;) {
    const tally_icpc_sub_t *s = order[i];
    size_t j = i;
    while (j < nsubs && strcmp(order[j]->participant, s->participant) == 0 &&
           strcmp(order[j]->task, s->task) == 0)
      j++;
    while (strcmp(b->rows[row].participant, s->participant) != 0)
      row++;
    size_t t = 0;
    while (t < ntasks && strcmp(tasks[t], s->task) != 0)
      t++;
    if (t < ntasks) {
      unsigned rejected = 0;
      for (size_t k = i; k < j; k++)
        count(&b->rows[row].cells[t], rules, order[k], &rejected);
    }
    i = j;
  }
  free(names);
  free(order);
  if (rc != 0) {
    tally_icpc_board_free(b);
    return -1;
  }
  /* Totals, the first to solve each problem, and the positions. */
  for (size_t t = 0; t < ntasks; t++) {
    double first = INFINITY;
    for (size_t i = 0; i < b->nrows; i++)
      if (b->rows[i].cells[t].solved && b->rows[i].cells[t].solved_at < first)
        first = b->rows[i].cells[t].solved_at;
    for (size_t i = 0; i < b->nrows; i++)
      b->rows[i].cells[t].first =
          b->rows[i].cells[t].solved && b->rows[i].cells[t].solved_at == first;
  }
  for (size_t i = 0; i < b->nrows; i++) {
    tally_icpc_row_t *r = &b->rows[i];
    for (size_t t = 0; t < ntasks; t++) {
      const tally_icpc_cell_t *c = &r->cells[t];
      if (!c->solved)
        continue;
      r->solved++;
      r->penalty += c->penalty;
      if (c->minute > r->last)
        r->last = c->minute;
    }
  }
  qsort(b->rows, b->nrows, sizeof(*b->rows), cmp_row);
  for (size_t i = 0; i < b->nrows; i++)
    b->rows[i].rank = i > 0 && tied(&b->rows[i], &b->rows[i - 1])
                          ? b->rows[i - 1].rank
                          : i + 1;
  return 0;
}

void tally_icpc_cell_json(tally_buf_t *b, const tally_icpc_cell_t *c) {
  char num[96];
  snprintf(num, sizeof(num),
           "{\"judged\":%u,\"pending\":%u,\"solved\":", c->judged, c->pending);
  tally_buf_puts(b, num);
  tally_buf_puts(b, c->solved ? "true" : "false");
  snprintf(num, sizeof(num),
           ",\"minute\":%ld,\"penalty\":%ld,\"first\":", c->minute, c->penalty);
  tally_buf_puts(b, num);
  tally_buf_puts(b, c->first ? "true}" : "false}");
}
