/* The frozen board's readers of what the contest scripts keep
 * (contest/frozen.c): a participant's matches in an arena and their place
 * in a task. The input is lines: a freeze time, then pairs of a
 * submission id and its value (a match text, or '0'/'1' and a summary),
 * as an HGETALL reply gives them. Whatever the bytes, the replay must not
 * crash and must add up: matches = wins + draws + losses, a rating of at
 * least the floor, a result only when a match counted. The first line
 * is also read as an operator's word of <p>:freezes: one that reads
 * must write back as a word that reads the same. */
#include "contest/freezes.h"
#include "contest/frozen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *lines[MAX_LINES];
  size_t n = 0;
  for (char *p = text; p != NULL && n < MAX_LINES;) {
    lines[n++] = p;
    char *nl = strchr(p, '\n');
    if (nl != NULL)
      *nl = '\0';
    p = nl != NULL ? nl + 1 : NULL;
  }
  double freeze = n > 0 ? strtod(lines[0], NULL) : 0;
  redisReply items[MAX_LINES], *ptrs[MAX_LINES];
  size_t k = 0;
  for (size_t i = 1; i < n; i++, k++) {
    memset(&items[k], 0, sizeof(items[k]));
    items[k].type = REDIS_REPLY_STRING;
    items[k].str = lines[i];
    items[k].len = strlen(lines[i]);
    ptrs[k] = &items[k];
  }
  redisReply flat = {.type = REDIS_REPLY_ARRAY, .elements = k, .element = ptrs};
  tally_elo_t e;
  bool any = tally_frozen_elo(&flat, freeze, &e);
  if (e.matches != e.wins + e.draws + e.losses || any != (e.matches > 0) ||
      (any && !(e.rating >= TALLY_ELO_FLOOR)) ||
      (!any && e.rating != TALLY_ELO_START))
    abort();
  tally_elo_t again;
  if (tally_frozen_elo(&flat, freeze, &again) != any ||
      memcmp(&again, &e, sizeof(e)) != 0)
    abort();
  double score;
  bool partial;
  tally_frozen_score(&flat, freeze, &score, &partial);
  tally_freeze_word_t w, back;
  if (n > 0 && tally_freeze_word_parse(lines[0], strlen(lines[0]), &w) == 0) {
    char again[TALLY_FREEZE_WORD_MAX];
    tally_freeze_word_text(&w, again);
    if (tally_freeze_word_parse(again, strlen(again), &back) != 0 ||
        back.kind != w.kind ||
        (w.kind == TALLY_FREEZE_AT &&
         !(back.at - w.at < 0.001 && w.at - back.at < 0.001)))
      abort();
  }
  free(text);
  return 0;
}
