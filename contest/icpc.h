/* An ICPC-style (pass-fail) scoreboard, as the CCS requirements score
 * one (docs/contest.md#pass-fail-contests): per team and problem the
 * submissions, the pending ones, whether and when it was solved and the
 * penalty; per team the problems solved, the total penalty time and the
 * minute of the last solve; positions by those three, ties sharing one;
 * the first to solve each problem. Pure: the submissions come from the
 * caller (contest/icpc_place.h reads them from a contest's places). */
#ifndef TALLY_ICPC_H
#define TALLY_ICPC_H

#include <stdbool.h>
#include <stddef.h>

/* One submission, as a place's summary gives it. */
typedef struct tally_icpc_sub_s {
  char *participant;
  char *task;
  char *id; /* the submission id: orders equal timestamps (byte order) */
  double timestamp;
  bool official;     /* an unofficial submission counts for nothing */
  char judgement[8]; /* "AC", "WA", "TLE", "RTE", "CE", ...; "": none yet */
} tally_icpc_sub_t;

typedef struct tally_icpc_rules_s {
  double start;         /* the contest's start, seconds since the epoch */
  int penalty_time;     /* minutes per rejected submission before a solve */
  bool compile_penalty; /* CE counts as a rejection (else as nothing) */
  /* Seconds since the epoch: a submission made at or after it is shown
   * pending (counted, its judgement hidden); NAN for no freeze. */
  double freeze;
} tally_icpc_rules_t;

typedef struct tally_icpc_cell_s {
  /* Before and including the solve (none after it count): the judged
   * submissions that count (a compile error only with compile_penalty),
   * and those without a judgement shown (not judged yet, a judging
   * error, or made during the freeze). Tries = judged + pending. */
  unsigned judged;
  unsigned pending;
  bool solved;
  bool first;       /* solved first of all teams (equal timestamps share) */
  long minute;      /* contest minute of the solve; 0 when not solved */
  long penalty;     /* minute + penalty_time per rejection before; or 0 */
  double solved_at; /* the solving submission's timestamp */
} tally_icpc_cell_t;

typedef struct tally_icpc_row_s {
  char *participant;
  unsigned solved;
  long penalty;             /* total penalty time, minutes */
  long last;                /* minute of the last solve; 0 when none */
  size_t rank;              /* 1 + the teams strictly before it */
  tally_icpc_cell_t *cells; /* one per task, in the contest's order */
} tally_icpc_row_t;

typedef struct tally_icpc_board_s {
  tally_icpc_row_t *rows; /* by position; ties by participant byte order */
  size_t nrows;
  size_t ntasks;
} tally_icpc_board_t;

/* The contest minute of a submission made at timestamp: whole minutes
 * from start, rounded down (59.99 s is minute 0); 0 before the start. */
long tally_icpc_minute(double start, double timestamp);

/* Builds b from subs (any order; those of tasks not in tasks are
 * ignored) for the teams of participants and of subs. Returns 0, or -1
 * when out of memory (b empty). */
int tally_icpc_build(tally_icpc_board_t *b, const tally_icpc_rules_t *rules,
                     const char *const *tasks, size_t ntasks,
                     const tally_icpc_sub_t *subs, size_t nsubs,
                     const char *const *participants, size_t nparticipants);
void tally_icpc_board_free(tally_icpc_board_t *b);

struct tally_buf_s;
/* Appends a cell as JSON: {"judged","pending","solved","minute",
 * "penalty","first"}. */
void tally_icpc_cell_json(struct tally_buf_s *b, const tally_icpc_cell_t *c);

/* Whether a judgement counts as a rejection (penalty time): any other
 * than AC, CE (unless compile_penalty) and JE; and whether it gives no
 * judgement at all (pending): "" or JE. */
bool tally_icpc_rejected(const char *judgement, bool compile_penalty);
bool tally_icpc_pending(const char *judgement);

#endif
