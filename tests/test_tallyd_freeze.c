/* The operator's freeze (issue 24): tally contest freeze freezes a board
 * now or at a chosen time, restores the configured one, unfreeze lifts
 * any; the results API, the board and tally ranking --public all show
 * the frozen ranking (marked frozen) while one holds. Through a real
 * redis-server, tallyd and the tally command. */
#include "cli_fixture.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;
static char tasks[512];
static int port;
static char cwd[64];

static void put(const char *name, const char *text) {
  char path[700];
  snprintf(path, sizeof(path), "%s/%s", tasks, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  char cmd[1400];
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           tasks);
  cr_assert_eq(system(cmd), 0);
  /* live: no freeze configured; cfg: frozen since 2026-01-01T12:00:00Z
   * (1767268800) until 2099. */
  put("live.contest.json",
      "{\"name\": \"live\", \"tasks\": [\"sum\"], \"start\": "
      "\"2026-01-01T00:00:00Z\", \"end\": \"2099-01-01T00:00:00Z\", "
      "\"score_precision\": 1}");
  put("cfg.contest.json",
      "{\"name\": \"cfg\", \"tasks\": [\"sum\"], \"start\": "
      "\"2026-01-01T00:00:00Z\", \"end\": \"2099-01-01T00:00:00Z\", "
      "\"freeze\": \"2026-01-01T12:00:00Z\", \"score_precision\": 1}");
  const char *args[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "freeze", args, NULL), 0);
  port = td_http_port(&daemon_);
  int status = 0;
  for (int i = 0; i < 400 && status != 200; i++) {
    td_http_t r = td_http(server.dir, port, "/readyz", "");
    status = r.status;
    free(r.body);
    if (status != 200)
      usleep(50000);
  }
  cr_assert_eq(status, 200, "tallyd never became ready");
  /* The configured contests and their times reach Redis within a second
   * or two. */
  bool published = false;
  for (int i = 0; i < 50 && !published; i++) {
    redisReply *r = redisCommand(c, "HEXISTS tally:contest-times cfg");
    published = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!published)
      usleep(100000);
  }
  cr_assert(published, "the contests' times were not published");
  tc_setup(cwd, sizeof(cwd), "freeze");
}

static void teardown(void) {
  tc_teardown();
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_freeze, .init = setup, .fini = teardown, .timeout = 120);

static bool has(const char *text, const char *what) {
  return text != NULL && strstr(text, what) != NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A job of contest on sum by who at timestamp ts: 42 in all (10.5
 * public) when pass, else 0. */
static void push(const char *contest, const char *sub, const char *who, long ts,
                 bool pass) {
  char job[512];
  int v = pass ? 1 : 0;
  snprintf(job, sizeof(job),
           "{\"submission\": \"%s\", \"participant\": \"%s\", \"task\": "
           "\"sum\", \"contest\": \"%s\", \"timestamp\": %ld, "
           "\"evaluations\": {\"0\": %d, \"1\": %d, \"2\": %d, \"3\": %d}}",
           sub, who, contest, ts, v, v, v, v);
  td_push(c, job, NULL);
}

/* Runs tally with the arguments up to the first NULL, --redis added
 * after the command. */
static tc_run_t tally(const char *a0, const char *a1, const char *a2,
                      const char *a3, const char *a4) {
  const char *args[10] = {a0, "--redis", server.url};
  const char *rest[] = {a1, a2, a3, a4};
  size_t n = 3;
  for (size_t i = 0; i < 4 && rest[i] != NULL; i++)
    args[n++] = rest[i];
  args[n] = NULL;
  return tc_run(args, NULL, NULL);
}

static td_http_t get(const char *path) {
  return td_http(server.dir, port, path, "");
}

/* Waits (up to 5 s) until the public ranking of contest holds want and,
 * if not NULL, not lacks. */
static bool ranking_becomes(const char *contest, const char *want,
                            const char *lacks) {
  char path[200];
  snprintf(path, sizeof(path), "/api/contests/%s/ranking", contest);
  for (int i = 0; i < 50; i++) {
    td_http_t r = get(path);
    bool ok = has(r.body, want) && (lacks == NULL || !has(r.body, lacks));
    free(r.body);
    if (ok)
      return true;
    usleep(100000);
  }
  td_http_t r = get(path);
  cr_log_error("the ranking: %s", r.body);
  free(r.body);
  return false;
}

Test(tallyd_freeze, freezes_a_board_now_for_the_api_the_page_and_the_cli) {
  long t0 = (long)now_s();
  push("live", "a1", "alice", t0 - 100, true);
  push("live", "c1", "carol", t0 - 90, false);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 2, 20000) == 2, "outcomes");
  cr_assert(ranking_becomes("live", "\"frozen\":false", NULL));

  tc_run_t t = tally("contest", "freeze", "live", NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "live: the public board is frozen since 20"), "%s",
            t.out);
  tc_run_free(&t);
  redisReply *w = redisCommand(c, "HGET tally:freezes live");
  cr_assert(w != NULL && w->type == REDIS_REPLY_STRING, "no word");
  double at = strtod(w->str + 3, NULL);
  cr_expect(strncmp(w->str, "at ", 3) == 0 && fabs(at - now_s()) < 10, "%s",
            w->str);
  freeReplyObject(w);

  /* After the freeze: bob's first submission and carol's better one. */
  push("live", "b1", "bob", t0 + 100, true);
  push("live", "c2", "carol", t0 + 100, true);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 4, 20000) == 4, "outcomes");
  cr_expect(ranking_becomes("live", "\"frozen\":true,\"frozen_since\":\"20",
                            "\"bob\""));
  td_http_t r = get("/api/contests/live/ranking");
  cr_expect(has(r.body, "\"participant\":\"carol\",\"name\":\"carol\","
                        "\"team\":null,\"total\":0"),
            "%s", r.body);
  free(r.body);
  r = get("/contests/live");
  cr_expect(has(r.body, "The board is frozen"), "%s", r.body);
  cr_expect(!has(r.body, "data-p=\"bob\""), "%s", r.body);
  free(r.body);
  r = get("/api/contests/live");
  cr_expect(has(r.body, "\"frozen\":true,\"frozen_since\":\"20"), "%s", r.body);
  free(r.body);

  /* tally ranking --public: what the public sees, marked frozen; the
   * private ranking is live. */
  t = tally("ranking", "--contest", "live", "--public", "--text");
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "alice") && has(t.out, "carol") && !has(t.out, "bob"),
            "%s", t.out);
  cr_expect(has(t.out, "(frozen since 20"), "%s", t.out);
  tc_run_free(&t);
  t = tally("ranking", "--contest", "live", "--public", "--json");
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "\"public\":true,\"frozen\":true,\"frozen_since\":"
                       "\"20"),
            "%s", t.out);
  cr_expect(has(t.out, "{\"rank\":1,\"participant\":\"alice\",\"total\":10.5,"
                       "\"tasks\":{\"sum\":{\"score\":10.5,\"partial\":false}"
                       "}},{\"rank\":2,\"participant\":\"carol\",\"total\":0"),
            "%s", t.out);
  cr_expect(!has(t.out, "bob"), "%s", t.out);
  tc_run_free(&t);
  t = tally("ranking", "--contest", "live", "--text", NULL);
  cr_expect(has(t.out, "bob") && !has(t.out, "frozen"), "%s", t.out);
  tc_run_free(&t);

  /* Frozen already: nothing moves (a later freeze would show more). */
  t = tally("contest", "freeze", "live", NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "already frozen since"), "%s", t.out);
  tc_run_free(&t);

  t = tally("contest", "unfreeze", "live", NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "unfrozen: it shows every submission"), "%s", t.out);
  tc_run_free(&t);
  cr_expect(ranking_becomes("live", "\"frozen\":false", NULL));
  t = tally("ranking", "--contest", "live", "--public", "--json");
  cr_expect(!has(t.out, "frozen"), "%s", t.out);
  cr_expect(has(t.out, "\"participant\":\"bob\""), "%s", t.out);
  tc_run_free(&t);
}

Test(tallyd_freeze, freezes_at_a_chosen_time_and_withdraws_it) {
  /* 2026-01-01T10:00:00Z is 1767261600. */
  push("live", "a1", "alice", 1767261000, true); /* before 10:00 */
  push("live", "b1", "bob", 1767262000, true);   /* after */
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 2, 20000) == 2, "outcomes");
  tc_run_t t =
      tally("contest", "freeze", "--at", "2026-01-01T10:00:00Z", "live");
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "frozen since 2026-01-01T10:00:00Z"), "%s", t.out);
  tc_run_free(&t);
  cr_expect(ranking_becomes(
      "live", "\"frozen\":true,\"frozen_since\":\"2026-01-01T10:00:00Z\"",
      "\"bob\""));

  /* A time to come: not frozen until then. */
  t = tally("contest", "freeze", "--at", "2098-06-01T08:30:00+02:00", "live");
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "live: the public board freezes at "
                       "2098-06-01T06:30:00Z"),
            "%s", t.out);
  tc_run_free(&t);
  cr_expect(ranking_becomes("live", "\"frozen\":false", NULL));
  t = tally("contest", "show", "live", NULL, NULL);
  cr_expect(has(t.out, "freezes at 2098-06-01T06:30:00Z"), "%s", t.out);
  tc_run_free(&t);

  /* --configured withdraws the word: live has no freeze of its own. */
  t = tally("contest", "freeze", "--configured", "live", NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "not frozen (no freeze configured)"), "%s", t.out);
  tc_run_free(&t);
  redisReply *x = redisCommand(c, "HEXISTS tally:freezes live");
  cr_expect(x != NULL && x->integer == 0);
  freeReplyObject(x);

  /* Bad uses: each names its cause, and nothing is written. */
  t = tally("contest", "freeze", "--at", "tomorrow", "live");
  cr_expect_eq(t.status, 2);
  cr_expect(has(t.err, "--at tomorrow: must be now or an RFC 3339 time"), "%s",
            t.err);
  tc_run_free(&t);
  t = tally("contest", "freeze", "--at", "now", "--configured");
  cr_expect_eq(t.status, 2);
  tc_run_free(&t);
  t = tally("contest", "unfreeze", "--at", "now", "live");
  cr_expect_eq(t.status, 2);
  cr_expect(has(t.err, "options of tally contest freeze"), "%s", t.err);
  tc_run_free(&t);
  x = redisCommand(c, "HEXISTS tally:freezes live");
  cr_expect(x != NULL && x->integer == 0);
  freeReplyObject(x);
}

/* A configured freeze that an operator lifted comes back with a plain
 * freeze (its own time, not now), as tally contest freeze always did. */
Test(tallyd_freeze, restores_a_configured_freeze_after_an_unfreeze) {
  push("cfg", "a1", "alice", 1767200000, true); /* before the freeze */
  push("cfg", "b1", "bob", 1767300000, true);   /* after */
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 2, 20000) == 2, "outcomes");
  cr_expect(ranking_becomes(
      "cfg", "\"frozen\":true,\"frozen_since\":\"2026-01-01T12:00:00Z\"",
      "\"bob\""));
  tc_run_t t = tally("contest", "unfreeze", "cfg", NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  tc_run_free(&t);
  cr_expect(ranking_becomes("cfg", "\"bob\"", NULL));
  t = tally("contest", "freeze", "cfg", NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.out, "frozen since 2026-01-01T12:00:00Z"), "%s", t.out);
  tc_run_free(&t);
  cr_expect(ranking_becomes(
      "cfg", "\"frozen\":true,\"frozen_since\":\"2026-01-01T12:00:00Z\"",
      "\"bob\""));
  t = tally("ranking", "--contest", "cfg", "--public", "--text");
  cr_expect(has(t.out, "alice") && !has(t.out, "bob") &&
                has(t.out, "(frozen since 2026-01-01T12:00:00Z"),
            "%s", t.out);
  tc_run_free(&t);
  /* An operator's freeze beats the config's: --at now shows bob's. */
  t = tally("contest", "unfreeze", "cfg", NULL, NULL);
  tc_run_free(&t);
  t = tally("contest", "freeze", "--at", "now", "cfg");
  cr_expect_eq(t.status, 0, "%s", t.err);
  tc_run_free(&t);
  cr_expect(ranking_becomes("cfg", "\"bob\"", "\"frozen\":false"));
}

/* A value in <p>:freezes that is not a freeze is logged by tallyd and
 * named by tally; the config's freeze holds meanwhile. */
Test(tallyd_freeze, a_word_that_is_not_a_freeze_is_named_and_ignored) {
  redisReply *x = redisCommand(c, "HSET tally:freezes cfg at-noon");
  freeReplyObject(x);
  for (int i = 0; i < 50 && !td_log_has(&daemon_, "is not a freeze"); i++)
    usleep(100000);
  cr_expect(td_log_has(&daemon_, "tally:freezes: contest \"cfg\": "
                                 "\"at-noon\" is not a freeze"));
  cr_expect(ranking_becomes("cfg", "\"frozen\":true", NULL));
  tc_run_t t = tally("contest", "show", "cfg", NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(has(t.err, "\"at-noon\" is not a freeze"), "%s", t.err);
  cr_expect(has(t.out, "frozen since 2026-01-01T12:00:00Z"), "%s", t.out);
  tc_run_free(&t);
  /* The times tallyd publishes. */
  x = redisCommand(c, "HGET tally:contest-times cfg");
  cr_assert(x != NULL && x->type == REDIS_REPLY_STRING);
  cr_expect_str_eq(x->str, "{\"start\":1767225600,\"end\":4070908800,"
                           "\"freeze\":1767268800,\"unfreeze_after\":null}");
  freeReplyObject(x);
}
