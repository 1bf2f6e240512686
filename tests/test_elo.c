/* The Elo rule of challenge matches against sequences computed by hand
 * from the rule's text (docs/challenges.md), and replay against order. */
#include "contest/elo.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define WIN 1.0
#define DRAW 0.5
#define LOSS 0.0

typedef struct step_s {
  double score, opponent;
  bool verified;
  int attempt;
  bool memoryless;
  double rating; /* after the match */
} step_t;

static void play_all(const step_t *steps, size_t n) {
  tally_elo_t e;
  tally_elo_init(&e);
  for (size_t i = 0; i < n; i++) {
    tally_elo_match_t m = {.timestamp = (double)i,
                           .submission = "s",
                           .score = steps[i].score,
                           .opponent = steps[i].opponent,
                           .verified = steps[i].verified,
                           .attempt = steps[i].attempt,
                           .memoryless = steps[i].memoryless};
    tally_elo_play(&e, &m);
    cr_expect_eq(e.rating, steps[i].rating, "match %zu: %g, wanted %g", i + 1,
                 e.rating, steps[i].rating);
  }
}

Test(elo, moves_by_each_difficulty_and_result) {
  /* E = 0.5 against an equal rating: a win is +16. */
  play_all((step_t[]){{WIN, 1000, false, 0, false, 1016}}, 1);
  /* Against a newcomer (800), E = 0.7597: a loss is -24. */
  play_all((step_t[]){{LOSS, 800, true, 1, true, 976}}, 1);
  /* Against a legendary (1400), E = 1/11: a draw is +13. */
  play_all((step_t[]){{DRAW, 1400, false, 0, false, 1013}}, 1);
  /* A sequence: veteran win (verified, first, memoryless: 24 x 1.2 = 29),
   * contender loss, newcomer draw (verified, third attempt: loses, no
   * bonus), legendary win (verified, not memoryless: 29 x 1.1 = 32). */
  play_all((step_t[]){{WIN, 1200, true, 1, true, 1029},
                      {LOSS, 1000, false, 0, false, 1012},
                      {DRAW, 800, true, 3, false, 1003},
                      {WIN, 1400, true, 1, false, 1035}},
           4);
}

Test(elo, gives_the_bonus_only_to_verified_gains) {
  play_all((step_t[]){{WIN, 1000, true, 1, true, 1019}}, 1);  /* 16 x 1.2 */
  play_all((step_t[]){{WIN, 1000, true, 2, true, 1018}}, 1);  /* 16 x 1.1 */
  play_all((step_t[]){{WIN, 1000, true, 1, false, 1018}}, 1); /* 16 x 1.1 */
  play_all((step_t[]){{WIN, 1000, false, 1, true, 1016}}, 1);
}

Test(elo, halves_k_from_the_31st_match) {
  step_t steps[31];
  for (int i = 0; i < 30; i++)
    steps[i] = (step_t){DRAW, 1000, false, 0, false, 1000};
  steps[30] = (step_t){WIN, 1000, false, 0, false, 1008};
  play_all(steps, 31);
}

Test(elo, never_falls_below_100) {
  step_t steps[41];
  double r = 1000;
  for (int i = 0; i < 40; i++) {
    /* Against a rating far below, E is about 1: each loss is -32 (K is 16
     * from the 31st match, but the floor holds by then). */
    r = r - 32 < 100 ? 100 : r - 32;
    steps[i] = (step_t){LOSS, -2000, false, 0, false, r};
  }
  steps[40] = (step_t){WIN, 100, false, 0, false, 108};
  play_all(steps, 41);
}

Test(elo, replays_matches_in_timestamp_then_id_order) {
  tally_elo_match_t in_order[] = {
      {1, "a", WIN, 1200, true, 1, true},
      {2, "a", LOSS, 1000, false, 0, false},
      {2, "b", DRAW, 800, true, 3, false},
      {5, "0", WIN, 1400, true, 1, false},
  };
  tally_elo_t want;
  tally_elo_replay(in_order, 4, &want);
  cr_expect_eq(want.rating, 1035);
  cr_expect_eq(want.matches, 4);
  cr_expect_eq(want.wins, 2);
  cr_expect_eq(want.draws, 1);
  cr_expect_eq(want.losses, 1);
  unsigned seed = 7;
  for (int round = 0; round < 100; round++) {
    tally_elo_match_t shuffled[4];
    memcpy(shuffled, in_order, sizeof(shuffled));
    for (int i = 3; i > 0; i--) {
      seed = seed * 1103515245u + 12345u;
      int j = (int)((seed >> 16) % (unsigned)(i + 1));
      tally_elo_match_t t = shuffled[i];
      shuffled[i] = shuffled[j];
      shuffled[j] = t;
    }
    tally_elo_t got;
    tally_elo_replay(shuffled, 4, &got);
    cr_expect_eq(got.rating, want.rating);
  }
}
