/* tally ranking of a pass-fail contest: its ICPC board, counted from the
 * contest's places as tallyd's results API counts it (contest/icpc.h),
 * private or public (frozen while a freeze holds). */
#include "cli/cli.h"
#include "contest/icpc_place.h"
#include "redis/keys.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cell as the table shows it: "+" and the tries before the solve, then
 * the minute ("+1 45"); "-2"; "?1/3" (pending of tries); "" for none. */
static const char *cell_text(const tally_icpc_cell_t *c, char *buf,
                             size_t len) {
  unsigned tries = c->judged + c->pending;
  if (c->solved && tries > 1)
    snprintf(buf, len, "+%u %ld", tries - 1, c->minute);
  else if (c->solved)
    snprintf(buf, len, "+ %ld", c->minute);
  else if (c->pending > 0)
    snprintf(buf, len, "?%u/%u", c->pending, tries);
  else if (tries > 0)
    snprintf(buf, len, "-%u", tries);
  else
    snprintf(buf, len, ".");
  return buf;
}

static void board_text(const tally_icpc_board_t *g, char **tasks,
                       double since) {
  char buf[64];
  int wpart = 11, wcell = 6;
  for (size_t k = 0; k < g->nrows; k++) {
    int l = (int)strlen(g->rows[k].participant);
    wpart = l > wpart ? l : wpart;
    for (size_t t = 0; t < g->ntasks; t++) {
      l = (int)strlen(cell_text(&g->rows[k].cells[t], buf, sizeof(buf)));
      wcell = l > wcell ? l : wcell;
    }
  }
  for (size_t t = 0; t < g->ntasks; t++) {
    int l = (int)strlen(tasks[t]);
    wcell = l > wcell ? l : wcell;
  }
  printf("%4s  %-*s  %6s  %7s", "rank", wpart, "participant", "solved",
         "penalty");
  for (size_t t = 0; t < g->ntasks; t++)
    printf("  %*s", wcell, tasks[t]);
  putchar('\n');
  for (size_t k = 0; k < g->nrows; k++) {
    const tally_icpc_row_t *w = &g->rows[k];
    printf("%4zu  %-*s  %6u  %7ld", w->rank, wpart, w->participant, w->solved,
           w->penalty);
    for (size_t t = 0; t < g->ntasks; t++)
      printf("  %*s", wcell, cell_text(&w->cells[t], buf, sizeof(buf)));
    const char *sep = "  ";
    for (size_t t = 0; t < g->ntasks; t++)
      if (w->cells[t].first) {
        printf("%sfirst:%s", sep, tasks[t]);
        sep = " ";
      }
    putchar('\n');
  }
  printf("(+N M: solved at minute M after N rejected tries; -N: N rejected "
         "tries; ?P/N: P of N tries pending)\n");
  if (!isnan(since))
    printf("(frozen since %s: tries made since then are pending on the "
           "public board)\n",
           cli_time_text(since, buf, sizeof(buf)));
}

int cli_ranking_icpc(remote_t *r, const char *contest, const cli_freeze_t *f,
                     bool public, double since, bool json) {
  char key[1024], base[768];
  if (tally_contest_key(base, sizeof(base), r->qprefix, contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  snprintf(key, sizeof(key), "%s:ranking", base);
  redisReply *z = cli_expect(r, remote_cmd(r, "ZRANGE %s 0 -1", key),
                             REDIS_REPLY_ARRAY, "ZRANGE");
  /* The board's columns: the contest's tasks, in its config's order, as
   * tallyd published them with its rules. */
  snprintf(key, sizeof(key), "%s:contest-times", r->prefix);
  redisReply *ts =
      z == NULL ? NULL
                : cli_expect(r, remote_cmd(r, "HGET %s %s", key, contest),
                             REDIS_REPLY_STRING, "HGET");
  cJSON *rules_json =
      ts != NULL ? cJSON_ParseWithLength(ts->str, ts->len) : NULL;
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(rules_json, "tasks");
  if (ts == NULL || !cJSON_IsArray(list)) {
    if (ts != NULL)
      fprintf(stderr,
              "tally: %s: contest \"%s\": no task list (a tallyd older "
              "than pass-fail contests published it)\n",
              key, contest);
    cJSON_Delete(rules_json);
    if (ts != NULL)
      freeReplyObject(ts);
    if (z != NULL)
      freeReplyObject(z);
    return EXIT_JOB_FAILED;
  }
  size_t nt = (size_t)cJSON_GetArraySize(list), nu = z->elements;
  char **tasks = calloc(nt + 1, sizeof(char *));
  const char **named = calloc(nu + 1, sizeof(char *));
  int status = tasks == NULL || named == NULL ? EXIT_JOB_FAILED : 0;
  size_t got = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    if (status == 0 && cJSON_IsString(item))
      tasks[got++] = item->valuestring;
  }
  nt = got;
  /* Every place of every row, pipelined. */
  for (size_t k = 0; status == 0 && k < nu; k++) {
    char part[768], tpart[768];
    named[k] = z->element[k]->str;
    if (tally_rescore_key(part, sizeof(part), "", "", named[k]) != 0)
      part[0] = '\0';
    for (size_t t = 0; status == 0 && t < nt; t++) {
      if (tally_rescore_key(tpart, sizeof(tpart), "", "", tasks[t]) != 0)
        tpart[0] = '\0';
      if (redisAppendCommand(r->c, "HGETALL %s:pt:%s:%s", base, part, tpart) !=
          REDIS_OK)
        status = EXIT_JOB_FAILED;
    }
  }
  tally_icpc_subs_t subs = {0};
  for (size_t k = 0; status == 0 && k < nu; k++)
    for (size_t t = 0; t < nt; t++) {
      void *p = NULL;
      if (redisGetReply(r->c, &p) != REDIS_OK) {
        remote_io_error(r);
        status = EXIT_JOB_FAILED;
        break;
      }
      redisReply *x = cli_expect(r, p, REDIS_REPLY_ARRAY, "HGETALL");
      if (x == NULL) {
        status = EXIT_JOB_FAILED;
        continue;
      }
      if (status == 0 &&
          tally_icpc_place_read(&subs, x, named[k], tasks[t]) != 0)
        status = EXIT_JOB_FAILED;
      freeReplyObject(x);
    }
  tally_icpc_board_t g = {0};
  tally_icpc_rules_t rules = {f->start, f->penalty_time, f->compile_penalty,
                              public ? since : NAN};
  if (status == 0 && tally_icpc_build(&g, &rules, (const char *const *)tasks,
                                      nt, subs.subs, subs.n, named, nu) != 0)
    status = EXIT_JOB_FAILED;
  if (status == 0 && json) {
    tally_buf_t b;
    tally_buf_init(&b);
    tally_buf_puts(&b, "{\"contest\":");
    tally_json_str(&b, contest);
    tally_buf_puts(&b, ",\"scoring\":\"pass-fail\",\"public\":");
    tally_buf_puts(&b, public ? "true" : "false");
    if (public && !isnan(since)) {
      char text[48];
      tally_buf_puts(&b, ",\"frozen\":true,\"frozen_since\":");
      tally_json_str(&b, cli_time_text(since, text, sizeof(text)));
    }
    tally_buf_puts(&b, ",\"tasks\":[");
    for (size_t t = 0; t < nt; t++) {
      if (t > 0)
        tally_buf_putc(&b, ',');
      tally_json_str(&b, tasks[t]);
    }
    tally_buf_puts(&b, "],\"rows\":");
    cli_icpc_rows(&b, &g, (const char *const *)tasks);
    tally_buf_puts(&b, "}\n");
    if (b.oom)
      status = EXIT_JOB_FAILED;
    else
      fwrite(b.data, 1, b.len, stdout);
    tally_buf_close(&b);
  } else if (status == 0) {
    board_text(&g, tasks, public ? since : NAN);
  }
  if (status != 0 && r->c != NULL && r->c->err == 0)
    fprintf(stderr, "tally: out of memory\n");
  tally_icpc_board_free(&g);
  tally_icpc_subs_free(&subs);
  free(tasks);
  free(named);
  cJSON_Delete(rules_json);
  freeReplyObject(ts);
  freeReplyObject(z);
  return status;
}
