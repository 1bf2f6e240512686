/* A board's opened cell (contest/frozen.c, tally_place_cell): a
 * participant's score on a task subtask by subtask under each score mode,
 * the submission each subtask's score comes from, the public side broken
 * down by the public subtasks, and the freeze. */
#include "config/jsonw.h"
#include "contest/frozen.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A place's HGETALL reply: id, then '0' or '1' (tokened) and a summary. */
typedef struct {
  redisReply top;
  redisReply *els[32];
  redisReply items[32];
  char texts[32][512];
} place_t;

static void add(place_t *p, const char *id, bool tokened, double ts,
                const char *mode, double score, const char *subs, double pub,
                const char *pubsubs) {
  size_t i = p->top.elements;
  snprintf(p->texts[i], sizeof(p->texts[i]), "%s", id);
  snprintf(p->texts[i + 1], sizeof(p->texts[i + 1]),
           "%c{\"submission\":\"%s\",\"timestamp\":%g,\"official\":true,"
           "\"score_mode\":\"%s\",\"score_precision\":2,\"score\":%g,"
           "\"public_score\":%g,\"compiled\":true,\"subtasks\":%s,"
           "\"public_subtasks\":%s}",
           tokened ? '1' : '0', id, ts, mode, score, pub, subs, pubsubs);
  for (size_t k = i; k < i + 2; k++) {
    p->items[k].type = REDIS_REPLY_STRING;
    p->items[k].str = p->texts[k];
    p->items[k].len = strlen(p->texts[k]);
    p->els[k] = &p->items[k];
  }
  p->top.type = REDIS_REPLY_ARRAY;
  p->top.element = p->els;
  p->top.elements = i + 2;
}

static char *cell(place_t *p, double freeze, bool full, const bool *mask,
                  size_t n) {
  tally_buf_t b;
  tally_buf_init(&b);
  cr_assert_eq(tally_place_cell(&p->top, freeze, full, mask, n, &b), 0);
  tally_buf_putc(&b, '\0');
  return b.data;
}

Test(place_cell, max_subtask_takes_each_subtasks_best_and_names_it) {
  place_t p = {0};
  add(&p, "a", false, 1, "max_subtask", 50, "[40,10]", 0, "null");
  add(&p, "b", false, 2, "max_subtask", 60, "[0,60]", 0, "null");
  add(&p, "c", false, 3, "max_subtask", 40, "[40,0]", 0, "null");
  char *got = cell(&p, INFINITY, true, NULL, 0);
  cr_expect_str_eq(got, "\"score\":100,\"partial\":false,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":3,\"subtasks\":["
                        "{\"score\":40,\"submission\":\"a\"},"
                        "{\"score\":60,\"submission\":\"b\"}]");
  free(got);
  /* Frozen at 2: b does not count. */
  got = cell(&p, 2, true, NULL, 0);
  cr_expect_str_eq(got, "\"score\":50,\"partial\":false,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":1,\"subtasks\":["
                        "{\"score\":40,\"submission\":\"a\"},"
                        "{\"score\":10,\"submission\":\"a\"}]");
  free(got);
}

Test(place_cell, max_shows_the_first_best_submission) {
  place_t p = {0};
  add(&p, "a", false, 1, "max", 50, "[40,10]", 0, "null");
  add(&p, "b", false, 2, "max", 60, "[0,60]", 0, "null");
  add(&p, "c", false, 3, "max", 60, "[60,0]", 0, "null");
  char *got = cell(&p, INFINITY, true, NULL, 0);
  cr_expect_str_eq(got, "\"score\":60,\"partial\":false,\"score_mode\":"
                        "\"max\",\"submissions\":3,\"subtasks\":["
                        "{\"score\":0,\"submission\":\"b\"},"
                        "{\"score\":60,\"submission\":\"b\"}]");
  free(got);
}

Test(place_cell, max_tokened_last_shows_the_better_of_last_and_tokened) {
  place_t p = {0};
  add(&p, "a", true, 1, "max_tokened_last", 70, "[40,30]", 0, "null");
  add(&p, "b", false, 2, "max_tokened_last", 20, "[20,0]", 0, "null");
  char *got = cell(&p, INFINITY, true, NULL, 0);
  cr_expect(strstr(got, "\"score\":70,") == got, "%s", got);
  cr_expect(strstr(got, "{\"score\":40,\"submission\":\"a\"},{\"score\":30,"
                        "\"submission\":\"a\"}") != NULL,
            "%s", got);
  free(got);
  /* The last one better than the tokened one: the last. */
  place_t q = {0};
  add(&q, "a", true, 1, "max_tokened_last", 20, "[20,0]", 0, "null");
  add(&q, "b", false, 2, "max_tokened_last", 70, "[40,30]", 0, "null");
  got = cell(&q, INFINITY, true, NULL, 0);
  cr_expect(strstr(got, "{\"score\":40,\"submission\":\"b\"}") != NULL, "%s",
            got);
  free(got);
}

Test(place_cell, the_public_side_shows_the_public_subtasks_of_the_best) {
  place_t p = {0};
  /* Subtask 0 is public, 1 is not: the public score is subtask 0's. */
  add(&p, "a", false, 1, "max_subtask", 50, "[20,30]", 20, "null");
  add(&p, "b", false, 2, "max_subtask", 40, "[40,0]", 40, "null");
  bool mask[] = {true, false};
  char *got = cell(&p, INFINITY, false, mask, 2);
  cr_expect_str_eq(got, "\"score\":40,\"partial\":false,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":2,\"subtasks\":["
                        "{\"score\":40,\"submission\":\"b\"},"
                        "{\"score\":null,\"submission\":null}]");
  free(got);
}

Test(place_cell, an_unscored_submission_makes_it_partial_and_none_null) {
  place_t p = {0};
  add(&p, "a", false, 1, "max_subtask", 10, "null", 10, "null");
  /* An unscored one, as the worker stores it. */
  size_t i = p.top.elements;
  snprintf(p.texts[i], sizeof(p.texts[i]), "x");
  snprintf(p.texts[i + 1], sizeof(p.texts[i + 1]),
           "0{\"submission\":\"x\",\"timestamp\":2,\"official\":true,"
           "\"scored\":false}");
  for (size_t k = i; k < i + 2; k++) {
    p.items[k].type = REDIS_REPLY_STRING;
    p.items[k].str = p.texts[k];
    p.items[k].len = strlen(p.texts[k]);
    p.els[k] = &p.items[k];
  }
  p.top.elements = i + 2;
  char *got = cell(&p, INFINITY, false, NULL, 0);
  cr_expect_str_eq(got, "\"score\":10,\"partial\":true,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":2,\"subtasks\":[]");
  free(got);
  /* Frozen before the first: nothing counts. */
  got = cell(&p, 0.5, false, NULL, 0);
  cr_expect_str_eq(got, "\"score\":null,\"partial\":false,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":0,\"subtasks\":[]");
  free(got);
  redisReply empty = {.type = REDIS_REPLY_ARRAY};
  tally_buf_t b;
  tally_buf_init(&b);
  cr_expect_eq(tally_place_cell(&empty, INFINITY, false, NULL, 0, &b), 0);
  tally_buf_putc(&b, '\0');
  cr_expect(strncmp(b.data, "\"score\":null,", 13) == 0, "%s", b.data);
  tally_buf_close(&b);
}
