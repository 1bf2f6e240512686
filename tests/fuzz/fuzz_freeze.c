/* The frozen board's readers of what the contest scripts keep
 * (contest/frozen.c): a participant's matches in an arena and their place
 * in a task. The input is lines: a freeze time, then pairs of a
 * submission id and its value (a match text, or '0'/'1' and a summary),
 * as an HGETALL reply gives them. Whatever the bytes, the replay must not
 * crash and must add up: matches = wins + draws + losses, a rating of at
 * least the floor, a result only when a match counted. The first line
 * is also read as an operator's word of <p>:freezes: one that reads
 * must write back as a word that reads the same. The same place read as
 * a pass-fail board's (contest/icpc_place.c), live and frozen, must give
 * cells that add up: a solved cell has a judged try and a penalty of at
 * least its minute, an unsolved one no penalty, and the row the sums. */
#include "contest/freezes.h"
#include "contest/frozen.h"
#include "contest/icpc_place.h"

#include <cjson/cJSON.h>
#include <math.h>

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
  bool counted = tally_frozen_score(&flat, freeze, &score, &partial);
  /* An opened cell of the same place: JSON members, whose score is the
   * frozen score, on either side, with any public mask. */
  bool mask[3] = {true, false, true};
  for (int full = 0; full < 2; full++) {
    tally_buf_t cell;
    tally_buf_init(&cell);
    tally_buf_putc(&cell, '{');
    if (tally_place_cell(&flat, freeze, full == 1, mask, full ? 0 : 3, &cell) !=
        0)
      abort();
    tally_buf_putc(&cell, '}');
    cJSON *j = cJSON_ParseWithLength(cell.data, cell.len);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "score");
    /* (A score that is not finite is written as null.) */
    bool same = !counted ? cJSON_IsNull(sc)
                : isfinite(score)
                    ? cJSON_IsNumber(sc) && sc->valuedouble == score
                    : cJSON_IsNull(sc);
    if (j == NULL || !cJSON_IsArray(cJSON_GetObjectItem(j, "subtasks")) ||
        (full == 0 && !same))
      abort();
    cJSON_Delete(j);
    tally_buf_close(&cell);
  }
  tally_icpc_subs_t subs = {0};
  if (tally_icpc_place_read(&subs, &flat, "u", "t") != 0 ||
      tally_icpc_place_read(&subs, &flat, "v", "t") != 0)
    abort();
  const char *tasks[] = {"t"};
  for (int view = 0; view < 2; view++) {
    tally_icpc_rules_t rules = {freeze, 20, view == 1,
                                view == 1 ? freeze : NAN};
    tally_icpc_board_t b;
    if (tally_icpc_build(&b, &rules, tasks, 1, subs.subs, subs.n, NULL, 0) != 0)
      abort();
    for (size_t i = 0; i < b.nrows; i++) {
      const tally_icpc_row_t *r = &b.rows[i];
      const tally_icpc_cell_t *c = &r->cells[0];
      if ((c->solved && (c->judged == 0 || c->penalty < c->minute)) ||
          (!c->solved && (c->penalty != 0 || c->first)) ||
          r->solved != (c->solved ? 1u : 0u) || r->penalty != c->penalty ||
          r->rank < 1 || r->rank > i + 1)
        abort();
    }
    /* u and v have the same submissions: the same cells, one rank. */
    if (b.nrows == 2 && (b.rows[0].rank != b.rows[1].rank ||
                         memcmp(&b.rows[0].cells[0], &b.rows[1].cells[0],
                                sizeof(tally_icpc_cell_t)) != 0))
      abort();
    tally_icpc_board_free(&b);
  }
  tally_icpc_subs_free(&subs);
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
