/* The scoreboard's HTML (docs/scoreboard.md#the-page): the list of
 * contests and one contest's board, complete as a static table, with an
 * inline script that keeps it live from the contest's events. One page,
 * nothing fetched from elsewhere. */
#ifndef TALLY_PAGE_H
#define TALLY_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "config/jsonw.h"
#include "contest/icpc.h"
#include "engine/contests.h"

typedef struct tally_board_row_s {
  const char *id;
  double value; /* the total, or the Elo rating */
  /* (task, task score JSON) pairs; or matches, wins, draws, losses. */
  char *const *fields;
  size_t nfields;
} tally_board_row_t;

typedef struct tally_board_s {
  const char *contest;
  const tally_contest_t *config; /* or NULL */
  const tally_contestset_t *cs;  /* names, teams, task maxima */
  char *const *tasks;            /* the columns */
  size_t ntasks;
  bool elo;
  const tally_board_row_t *rows; /* in rank order */
  size_t nrows;
  bool frozen; /* the public board, frozen: the page says so */
  /* A pass-fail contest's board (rows above unused), or NULL. */
  const tally_icpc_board_t *icpc;
} tally_board_t;

/* The Content-Security-Policy of the pages: their own inline script and
 * style sheet (by hash), event streams from the same origin, nothing
 * else. */
const char *tally_page_csp(void);

/* GET /: every contest, linked to its board. */
void tally_page_index(tally_buf_t *b, const tally_contestset_t *cs,
                      char *const *names, size_t n);

/* GET /contests/C: the public board. */
void tally_page_board(tally_buf_t *b, const tally_board_t *board);

#endif
