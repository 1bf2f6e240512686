/* Elo ratings of challenge matches (docs/challenges.md): a participant's
 * rating in a contest is a pure function of their rated matches, replayed
 * in order of (timestamp, submission id). */
#ifndef TALLY_ELO_H
#define TALLY_ELO_H

#include <stdbool.h>
#include <stddef.h>

#define TALLY_ELO_START 1000
#define TALLY_ELO_FLOOR 100

/* One rated match. */
typedef struct tally_elo_match_s {
  double timestamp;
  const char *submission; /* the id, for the order of equal timestamps */
  double score;           /* S: 1 a win, 0.5 a draw, 0 a loss */
  double opponent;        /* the task's difficulty rating */
  bool verified;
  int attempt; /* 1 the first; 0 when absent */
  bool memoryless;
} tally_elo_match_t;

typedef struct tally_elo_s {
  double rating;
  unsigned matches, wins, draws, losses;
} tally_elo_t;

/* A participant before any match: 1000, nothing played. */
void tally_elo_init(tally_elo_t *e);

/* Plays one match: E = 1 / (1 + 10^((opponent - R) / 400)); K = 32 for
 * the first 30 matches, 16 after; change = round_half_up(R + K(S - E)) -
 * R; a verified match with a gain has it multiplied by 1.2 (a first
 * attempt, memoryless) or 1.1 (else), rounded half up; the new rating is
 * at least 100. */
void tally_elo_play(tally_elo_t *e, const tally_elo_match_t *m);

/* Sorts the n matches by (timestamp, submission id in byte order) and
 * plays them from the start into *e. */
void tally_elo_replay(tally_elo_match_t *ms, size_t n, tally_elo_t *e);

#endif
