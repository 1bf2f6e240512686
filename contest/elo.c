/* Elo ratings of challenge matches: see elo.h. */
#include "contest/elo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double round_half_up(double x) {
  return floor(x + 0.5);
}

void tally_elo_init(tally_elo_t *e) {
  memset(e, 0, sizeof(*e));
  e->rating = TALLY_ELO_START;
}

void tally_elo_play(tally_elo_t *e, const tally_elo_match_t *m) {
  double r = e->rating;
  double expected = 1.0 / (1.0 + pow(10.0, (m->opponent - r) / 400.0));
  double k = e->matches < 30 ? 32 : 16;
  double change = round_half_up(r + k * (m->score - expected)) - r;
  if (m->verified && change > 0)
    change =
        round_half_up(change * (m->attempt == 1 && m->memoryless ? 1.2 : 1.1));
  e->rating = fmax(TALLY_ELO_FLOOR, r + change);
  e->matches++;
  if (m->score >= 1)
    e->wins++;
  else if (m->score > 0)
    e->draws++;
  else
    e->losses++;
}

static int cmp_match(const void *a, const void *b) {
  const tally_elo_match_t *x = a, *y = b;
  if (x->timestamp != y->timestamp)
    return x->timestamp < y->timestamp ? -1 : 1;
  return strcmp(x->submission, y->submission);
}

void tally_elo_replay(tally_elo_match_t *ms, size_t n, tally_elo_t *e) {
  qsort(ms, n, sizeof(*ms), cmp_match);
  tally_elo_init(e);
  for (size_t i = 0; i < n; i++)
    tally_elo_play(e, &ms[i]);
}
