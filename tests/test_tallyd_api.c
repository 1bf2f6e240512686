/* The results API (issue 18) through tallyd and curl against a real
 * redis-server: contests from their configs and from Redis, rankings
 * public and private, a participant's own endpoint, every access rule,
 * and the job a contest does not list dead-lettered. No answer without a
 * token may hold a private score or a private outcome ("SECRET-..."). */
#include "cli_fixture.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKEN "operator-token-for-tests-0123456789"

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;
static char tasks[512];
static int port;

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
  put("c1.contest.json",
      "{\"name\": \"c1\", \"title\": \"Contest One\", \"tasks\": [\"sum\", "
      "\"aplusb\"], \"start\": \"2026-01-01T09:00:00Z\", \"end\": "
      "\"2026-01-01T14:00:00Z\", \"score_precision\": 1}");
  /* An arena: an answer task, ranked by Elo. */
  snprintf(cmd, sizeof(cmd),
           "cp '%s/examples/challenges/tasks/cipher.json' '%s'",
           TALLY_SOURCE_DIR, tasks);
  cr_assert_eq(system(cmd), 0);
  put("arena.contest.json",
      "{\"name\": \"arena\", \"tasks\": [\"cipher\"], \"ranking\": "
      "\"elo\"}");
  /* Frozen since 2026-01-01T12:00:00Z (1767268800) until 2099. */
  put("c2.contest.json",
      "{\"name\": \"c2\", \"tasks\": [\"sum\"], \"start\": "
      "\"2026-01-01T00:00:00Z\", \"end\": \"2099-01-01T00:00:00Z\", "
      "\"freeze\": \"2026-01-01T12:00:00Z\", \"score_precision\": 1}");
  /* Two more arenas: arenaf frozen since 2026-01-01T12:00:00Z, and
   * arenaref, which gets only arenaf's matches from before the freeze. */
  put("arenaf.contest.json",
      "{\"name\": \"arenaf\", \"tasks\": [\"cipher\"], \"ranking\": "
      "\"elo\", \"start\": \"2026-01-01T00:00:00Z\", \"end\": "
      "\"2099-01-01T00:00:00Z\", \"freeze\": \"2026-01-01T12:00:00Z\"}");
  put("arenaref.contest.json",
      "{\"name\": \"arenaref\", \"tasks\": [\"cipher\"], \"ranking\": "
      "\"elo\"}");
  /* A task whose testcases are all private, in a contest of its own. */
  put("hidden.json", "{\"name\": \"hidden\", \"score_type\": \"Sum\", "
                     "\"score_type_parameters\": 5, \"testcases\": {\"a\": "
                     "false, \"b\": false}}");
  put("hid.contest.json",
      "{\"name\": \"hid\", \"tasks\": [\"sum\", \"hidden\"]}");
  put("participants.json",
      "{\"alice\": {\"name\": \"Alice Liddell\", \"team\": \"Red\"}}");
  char token[700];
  snprintf(token, sizeof(token), "%s/token", server.dir);
  FILE *f = fopen(token, "w");
  fputs(TOKEN "\n", f);
  fclose(f);
  const char *args[] = {"--tasks", tasks, "--http-token-file", token, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "api", args, NULL), 0);
  port = td_http_port(&daemon_);
  /* Ready: the results API has found where the event stream ends. */
  int status = 0;
  for (int i = 0; i < 400 && status != 200; i++) {
    td_http_t r = td_http(server.dir, port, "/readyz", "");
    status = r.status;
    free(r.body);
    if (status != 200)
      usleep(50000);
  }
  cr_assert_eq(status, 200, "tallyd never became ready");
}

static void teardown(void) {
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_api, .init = setup, .fini = teardown, .timeout = 90);

static td_http_t get(const char *path, const char *token) {
  char extra[300] = "";
  if (token != NULL)
    snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s'", token);
  return td_http(server.dir, port, path, extra);
}

/* The jobs: alice's sum gets 42 privately but 10.5 publicly, with a
 * private outcome's text; bob's gets 10.5 both ways (a public tie);
 * carol's aplusb; dave's product, which c1 does not list. */
static void push_jobs(void) {
  td_push(c,
          "{\"submission\": \"s1\", \"task\": \"sum\", \"participant\": "
          "\"alice\", \"contest\": \"c1\", \"timestamp\": 10, \"evaluations\": "
          "{\"0\": 1, \"1\": 1, \"2\": 1, \"3\": {\"outcome\": 1, \"text\": "
          "[\"SECRET-alice-outcome\"]}}}",
          NULL);
  td_push(c,
          "{\"submission\": \"s2\", \"task\": \"sum\", \"participant\": "
          "\"bob\", \"contest\": \"c1\", \"timestamp\": 11, \"evaluations\": "
          "{\"0\": 0, \"1\": 1, \"2\": 0, \"3\": {\"outcome\": 0, \"text\": "
          "[\"SECRET-bob-outcome\"]}}}",
          NULL);
  td_push(c,
          "{\"submission\": \"s3\", \"task\": \"aplusb\", \"participant\": "
          "\"carol\", \"contest\": \"c1\", \"timestamp\": 12, \"evaluations\": "
          "{\"000\": 1, \"001\": 1, \"big_0\": 1, \"big_1\": 0}}",
          NULL);
  char dead[64];
  td_push(c,
          "{\"submission\": \"s4\", \"task\": \"product\", \"participant\": "
          "\"dave\", \"contest\": \"c1\", \"evaluations\": {}}",
          dead);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 4, 20000) == 4, "outcomes");
  char *why = td_dead_field(c, dead, "error");
  cr_expect(why != NULL && strstr(why, "task: \"product\" is not a task of "
                                       "contest \"c1\" (its tasks: sum, "
                                       "aplusb)") != NULL,
            "%s", why ? why : "(no dead letter)");
  free(why);
}

static bool has(const char *body, const char *text) {
  return strstr(body, text) != NULL;
}

/* Whether body holds alice's private 42 as a score or total (and not
 * merely the digits 42, which an entry ID may hold). */
static bool has_private(const char *body) {
  return has(body, "\"score\":42") || has(body, "\"total\":42") ||
         has(body, "\"max_score\":42");
}

Test(tallyd_api, serves_contests_rankings_and_a_participants_scores) {
  push_jobs();
  td_http_t r = get("/api/contests", NULL);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "{\"name\":\"c1\",\"title\":\"Contest One\","
                        "\"configured\":true,\"tasks\":[\"sum\",\"aplusb\"],"
                        "\"start\":\"2026-01-01T09:00:00Z\",\"end\":"
                        "\"2026-01-01T14:00:00Z\",\"freeze\":null,\"frozen\":"
                        "false,\"score_precision\":1,\"ranking\":\"total\"}"),
            "%s", r.body);
  free(r.body);
  r = get("/api/contests/c1", NULL);
  cr_expect_eq(r.status, 200);
  cr_expect(has(r.body, "\"title\":\"Contest One\""), "%s", r.body);
  free(r.body);
  r = get("/api/contests/nope", NULL);
  cr_expect_eq(r.status, 404);
  cr_expect(has(r.body, "no contest \\\"nope\\\""), "%s", r.body);
  free(r.body);

  /* Public: alice and bob tie at 10.5 (rank 1, 1), names and teams. */
  r = get("/api/contests/c1/ranking", NULL);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cJSON *j = cJSON_Parse(r.body);
  cr_assert_not_null(j, "%s", r.body);
  cr_expect_str_eq(ts_str_at(j, "view"), "public");
  cr_expect_str_eq(ts_str_at(j, "tasks[0]"), "sum");
  int alice = -1, bob = -1;
  for (int k = 0; k < ts_len_at(j, "rows"); k++) {
    char path[64];
    snprintf(path, sizeof(path), "rows[%d].participant", k);
    if (strcmp(ts_str_at(j, path), "alice") == 0)
      alice = k;
    if (strcmp(ts_str_at(j, path), "bob") == 0)
      bob = k;
  }
  cr_assert(alice >= 0 && bob >= 0, "%s", r.body);
  char path[80];
  snprintf(path, sizeof(path), "rows[%d].total", alice);
  cr_expect_eq(ts_num_at(j, path), 10.5, "the public total, not 42");
  snprintf(path, sizeof(path), "rows[%d].rank", alice);
  double ra = ts_num_at(j, path);
  snprintf(path, sizeof(path), "rows[%d].rank", bob);
  cr_expect_eq(ra, ts_num_at(j, path), "a tie shares its rank");
  snprintf(path, sizeof(path), "rows[%d].name", alice);
  cr_expect_str_eq(ts_str_at(j, path), "Alice Liddell");
  snprintf(path, sizeof(path), "rows[%d].team", alice);
  cr_expect_str_eq(ts_str_at(j, path), "Red");
  snprintf(path, sizeof(path), "rows[%d].tasks.sum.score", alice);
  cr_expect_eq(ts_num_at(j, path), 10.5);
  cJSON_Delete(j);
  cr_expect_not(has_private(r.body), "a private score: %s", r.body);
  free(r.body);

  /* Private, with the operator's token. */
  r = get("/api/contests/c1/ranking?view=private", TOKEN);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "\"view\":\"private\""), "%s", r.body);
  cr_expect(has(r.body, "\"participant\":\"alice\",\"name\":\"Alice "
                        "Liddell\",\"team\":\"Red\",\"total\":42"),
            "%s", r.body);
  /* The private view keeps the partial flag too (issue 24). */
  cr_expect(has(r.body, "\"sum\":{\"score\":42,\"partial\":false}"), "%s",
            r.body);
  free(r.body);

  /* A participant's own endpoint, with their token. */
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "api");
  const char *args[] = {"token",         "--redis", server.url,
                        "--participant", "alice",   NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  t.out[strcspn(t.out, "\n")] = '\0';
  cr_expect_eq(strlen(t.out), 64);
  r = get("/api/contests/c1/participants/alice", t.out);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "\"submission\":\"s1\",\"task\":\"sum\","
                        "\"timestamp\":10,\"tokened\":false,"
                        "\"public_score\":10.5,\"view\":{"),
            "%s", r.body);
  cr_expect_not(has_private(r.body), "untokened: no private score: %s", r.body);
  /* Its public view, rebuilt from the stored job: no private outcome. */
  cr_expect(has(r.body, "\"view\":{\"score\":10.5,\"max_score\":10.5"), "%s",
            r.body);
  cr_expect_not(has(r.body, "SECRET"), "%s", r.body);
  free(r.body);
  /* After a token, the private score of that submission shows. */
  td_push(c,
          "{\"type\": \"token\", \"submission\": \"s1\", \"participant\": "
          "\"alice\"}",
          NULL);
  bool seen = false;
  for (int i = 0; i < 100 && !seen; i++) {
    r = get("/api/contests/c1/participants/alice", t.out);
    seen = has(r.body, "\"tokened\":true,\"public_score\":10.5,\"score\":42");
    free(r.body);
    if (!seen)
      usleep(100000);
  }
  cr_expect(seen, "the tokened submission's score");
  /* Tokened: the full view, private outcomes and all, for alice. */
  r = get("/api/contests/c1/participants/alice", t.out);
  cr_expect(has(r.body, "\"view\":{\"score\":42,\"max_score\":42"), "%s",
            r.body);
  cr_expect(has(r.body, "SECRET-alice-outcome"), "%s", r.body);
  free(r.body);
  /* The token of one participant opens no other's endpoint. */
  r = get("/api/contests/c1/participants/bob", t.out);
  cr_expect_eq(r.status, 401, "%s", r.body);
  free(r.body);
  tc_run_free(&t);
  tc_teardown();
}

Test(tallyd_api, no_endpoint_gives_a_private_score_or_outcome_without_a_token) {
  push_jobs();
  static const struct {
    const char *path;
    int status;
  } cases[] = {
      {"/api/contests", 200},
      {"/api/contests/c1", 200},
      {"/api/contests/c1/ranking", 200},
      {"/api/contests/c1/ranking?view=public", 200},
      {"/api/contests/c1/ranking?view=private", 401},
      {"/api/contests/c1/ranking?view=secret", 400},
      {"/api/contests/c1/participants/alice", 401},
      {"/api/contests/c1/participants/bob", 401},
      {"/api/contests/c1/participants/", 404},
      {"/api/contests/c1/nothing", 404},
      {"/api", 404},
      {"/api/other", 404},
  };
  const char *tokens[] = {NULL, "wrong-token-0123456789",
                          "operator-token-for-tests-012345678"};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    for (size_t k = 0; k < 3; k++) {
      td_http_t r = get(cases[i].path, tokens[k]);
      cr_expect_eq(r.status, cases[i].status, "%s (token %s): %d %s",
                   cases[i].path, tokens[k] ? tokens[k] : "none", r.status,
                   r.body);
      cr_expect_not(has(r.body, "SECRET"), "%s: %s", cases[i].path, r.body);
      cr_expect_not(has_private(r.body), "%s: a private score: %s",
                    cases[i].path, r.body);
      free(r.body);
    }
  }
  /* With the operator's token, the private ones open: the operator sees
   * the full view. */
  td_http_t r = get("/api/contests/c1/participants/bob", TOKEN);
  cr_expect_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "SECRET-bob-outcome"), "%s", r.body);
  free(r.body);
}

Test(tallyd_api, a_contest_without_a_config_keeps_todays_behaviour) {
  td_push(c,
          "{\"submission\": \"x1\", \"task\": \"product\", \"participant\": "
          "\"eve\", \"contest\": \"open\", \"evaluations\": {\"s1_a\": 1, "
          "\"s1_b\": "
          "1, \"s2_a\": 1, \"s2_b\": 1}}",
          NULL);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 1, 20000) == 1, "outcome");
  cr_expect_eq(td_xlen(c, "tally:dead"), 0, "scored, not dead-lettered");
  td_http_t r = get("/api/contests/open", NULL);
  cr_expect_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "\"configured\":false,\"tasks\":null"), "%s", r.body);
  free(r.body);
  r = get("/api/contests/open/ranking", NULL);
  cr_expect(has(r.body, "\"tasks\":[\"product\"]"), "%s", r.body);
  cr_expect(has(r.body, "\"participant\":\"eve\",\"name\":\"eve\","
                        "\"team\":null"),
            "%s", r.body);
  free(r.body);
}

/* A job of contest c2 by who at timestamp ts, its sum task's four
 * testcases all passed (42 in all, 10.5 public) or all failed. */
static void push_c2(const char *sub, const char *who, long ts, bool pass) {
  char job[512];
  int v = pass ? 1 : 0;
  snprintf(job, sizeof(job),
           "{\"submission\": \"%s\", \"participant\": \"%s\", \"task\": "
           "\"sum\", \"contest\": \"c2\", \"timestamp\": %ld, "
           "\"evaluations\": {\"0\": %d, \"1\": %d, \"2\": %d, \"3\": %d}}",
           sub, who, ts, v, v, v, v);
  td_push(c, job, NULL);
}

static void contest_cmd(const char *what) {
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "freeze");
  const char *args[] = {"contest", what, "--redis", server.url, "c2", NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  tc_run_free(&t);
  tc_teardown();
}

/* The public board after a freeze counts only what was submitted before
 * it, whenever it was judged; the private view does not freeze; a
 * participant's own endpoint stays live; tally contest unfreeze lifts it
 * and freeze puts it back. */
Test(tallyd_api, the_public_board_freezes_as_domjudge_does) {
  push_c2("f1", "alice", 1767200000, true);  /* before the freeze */
  push_c2("f2", "bob", 1767300000, true);    /* after it */
  push_c2("f3", "carol", 1767268799, false); /* just before */
  push_c2("f4", "carol", 1767268800, true);  /* at it: not shown */
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 4, 20000) == 4, "outcomes");
  td_http_t r = get("/api/contests/c2/ranking", NULL);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "\"frozen\":true"), "%s", r.body);
  cr_expect(has(r.body, "\"participant\":\"alice\",\"name\":\"Alice "
                        "Liddell\",\"team\":\"Red\",\"total\":10.5"),
            "%s", r.body);
  cr_expect(has(r.body, "\"participant\":\"carol\",\"name\":\"carol\","
                        "\"team\":null,\"total\":0"),
            "%s", r.body);
  cr_expect_not(has(r.body, "\"bob\""), "bob submitted after: %s", r.body);
  free(r.body);
  r = get("/contests/c2", NULL);
  cr_expect(has(r.body, "The board is frozen"), "%s", r.body);
  cr_expect_not(has(r.body, "data-p=\"bob\""), "%s", r.body);
  free(r.body);
  /* The private view and bob's own endpoint are live. */
  r = get("/api/contests/c2/ranking?view=private", TOKEN);
  cr_expect(has(r.body, "\"participant\":\"bob\""), "%s", r.body);
  cr_expect(has(r.body, "\"frozen\":false"), "%s", r.body);
  free(r.body);
  r = get("/api/contests/c2/participants/bob", TOKEN);
  cr_expect(has(r.body, "\"submission\":\"f2\""), "%s", r.body);
  free(r.body);
  /* An opened cell counts as its board: frozen in public, live with the
   * operator's token. */
  r = get("/api/contests/c2/ranking/bob/sum", NULL);
  cr_expect_eq(r.status, 200, "%s", r.body);
  cr_expect(has(r.body, "\"view\":\"public\",\"frozen\":true,"
                        "\"max_score\":10.5,\"headers\":[],\"score\":null,"),
            "%s", r.body);
  free(r.body);
  r = get("/api/contests/c2/ranking/carol/sum", NULL);
  cr_expect(has(r.body, "\"score\":0,\"partial\":false,\"score_mode\":"
                        "\"max_subtask\",\"submissions\":1,"),
            "%s", r.body);
  free(r.body);
  r = get("/api/contests/c2/ranking/bob/sum?view=private", TOKEN);
  cr_expect(has(r.body, "\"view\":\"private\",\"frozen\":false,"
                        "\"max_score\":42,\"headers\":[],\"score\":42,"),
            "%s", r.body);
  free(r.body);
  r = get("/api/contests/c2/ranking/bob/sum?view=private", NULL);
  cr_expect_eq(r.status, 401, "%s", r.body);
  free(r.body);
  r = get("/api/contests/c2/ranking/bob/", NULL);
  cr_expect_eq(r.status, 404, "%s", r.body);
  free(r.body);

  contest_cmd("unfreeze");
  bool thawed = false;
  for (int i = 0; i < 50 && !thawed; i++) {
    usleep(100000);
    r = get("/api/contests/c2/ranking", NULL);
    thawed = has(r.body, "\"frozen\":false") && has(r.body, "\"bob\"") &&
             has(r.body, "\"participant\":\"carol\",\"name\":\"carol\","
                         "\"team\":null,\"total\":10.5");
    free(r.body);
  }
  cr_expect(thawed, "tally contest unfreeze did not lift the freeze");
  contest_cmd("freeze");
  bool frozen = false;
  for (int i = 0; i < 50 && !frozen; i++) {
    usleep(100000);
    r = get("/api/contests/c2/ranking", NULL);
    frozen = has(r.body, "\"frozen\":true") && !has(r.body, "\"bob\"");
    free(r.body);
  }
  cr_expect(frozen, "tally contest freeze did not put it back");
}

/* The value of a sample without labels in /metrics, or -1. */
static double metric(const char *name) {
  return td_metric(server.dir, port, name);
}

/* Follows contest's events with curl in the background for seconds,
 * into the file out names, once its first line came. */
static void follow(const char *contest, int seconds, char *out, size_t outlen) {
  char cmd[1400];
  snprintf(out, outlen, "%s/events-%s.txt", server.dir, contest);
  snprintf(cmd, sizeof(cmd),
           "curl -s -N --max-time %d -o '%s' "
           "'http://127.0.0.1:%d/api/contests/%s/events' &",
           seconds, out, port, contest);
  cr_assert_eq(system(cmd), 0);
  for (int i = 0; i < 100; i++) {
    FILE *g = fopen(out, "r");
    char line[64] = "";
    bool up = g != NULL && fgets(line, sizeof(line), g) != NULL;
    if (g != NULL)
      fclose(g);
    if (up)
      return;
    usleep(50000);
  }
  cr_assert_fail("the event stream of %s never answered", contest);
}

/* The event stream: what it sends (public task scores, never a view or
 * a private score), and a client that comes back with Last-Event-ID gets
 * what it missed, from Redis, before the live events. */
Test(tallyd_api, events_resume_from_last_event_id) {
  char out[700];
  follow("c1", 5, out, sizeof(out));
  cr_expect_geq(metric("tally_event_streams"), 1);
  push_jobs();
  usleep(4000000);
  cr_expect_geq(metric("tally_event_stream_events_total"), 3);
  cr_expect_eq(metric("tally_event_streams_dropped_total"), 0);
  char *text = tc_slurp(out);
  cr_assert_not_null(text, "%s", out);
  cr_expect(has(text, "retry: 1000\n"), "%s", text);
  cr_expect(has(text, "event: score\ndata: {\"participant\":\"alice\","
                      "\"task\":\"sum\",\"score\":10.5,\"partial\":false}"),
            "%s", text);
  cr_expect_not(has(text, "SECRET"), "%s", text);
  cr_expect_not(has_private(text), "a private score: %s", text);
  cr_expect_not(has(text, "\"view"), "a view: %s", text);
  /* The first event's id, and the number of events. */
  const char *first = strstr(text, "id: ");
  cr_assert_not_null(first, "%s", text);
  char id[64];
  sscanf(first + 4, "%63s", id);
  int events = 0;
  for (const char *p = text; (p = strstr(p, "\nid: ")) != NULL; p++)
    events++;
  events += strncmp(text, "id: ", 4) == 0;
  cr_expect_eq(events, 3, "alice, bob and carol: %s", text);

  char extra[200];
  snprintf(extra, sizeof(extra), "-N --max-time 2 -H 'Last-Event-ID: %s'", id);
  td_http_t r = td_http(server.dir, port, "/api/contests/c1/events", extra);
  /* The workers finish in either order: whoever came first is not sent
   * again, the two others are. */
  cr_expect_not(has(r.body, id), "the event it had already: %s", r.body);
  const char *who[] = {"alice", "bob", "carol"};
  const char *after = strstr(first, "\"participant\":\"");
  cr_assert_not_null(after);
  for (int k = 0; k < 3; k++) {
    char want[64];
    snprintf(want, sizeof(want), "\"participant\":\"%s\"", who[k]);
    bool was_first = strncmp(after, want, strlen(want)) == 0;
    cr_expect_eq(has(r.body, want), !was_first, "%s: %s", who[k], r.body);
  }
  free(r.body);
  free(text);
}

/* An arena contest's board is its Elo table: rating, matches, W/D/L. */
Test(tallyd_api, an_arena_ranks_by_elo_with_wins_draws_and_losses) {
  char path[700];
  snprintf(path, sizeof(path), "%s/examples/challenges/jobs.jsonl",
           TALLY_SOURCE_DIR);
  int n = td_push_file(c, path);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, n, 20000) == n, "outcomes");
  td_http_t r = get("/api/contests/arena/ranking", NULL);
  cr_assert_eq(r.status, 200, "%s", r.body);
  cJSON *j = cJSON_Parse(r.body);
  cr_assert_not_null(j, "%s", r.body);
  cr_expect_str_eq(ts_str_at(j, "ranking"), "elo");
  cr_assert(ts_len_at(j, "rows") >= 1, "%s", r.body);
  cr_expect(ts_num_at(j, "rows[0].rating") > 0, "%s", r.body);
  cr_expect(ts_num_at(j, "rows[0].matches") >= 1, "%s", r.body);
  cr_expect_eq(ts_num_at(j, "rows[0].rank"), 1);
  /* The rating is the one tallyd keeps. */
  char key[200];
  snprintf(key, sizeof(key), "tally:{arena}:elo");
  redisReply *z =
      redisCommand(c, "ZSCORE %s %s", key, ts_str_at(j, "rows[0].participant"));
  cr_expect(z && z->type == REDIS_REPLY_STRING &&
                strtod(z->str, NULL) == ts_num_at(j, "rows[0].rating"),
            "%s", r.body);
  freeReplyObject(z);
  cJSON_Delete(j);
  free(r.body);
  r = get("/contests/arena", NULL);
  cr_expect(has(r.body, "<th>Rating</th><th>Matches</th><th>W/D/L</th>"), "%s",
            r.body);
  cr_expect(has(r.body, "data-ranking=\"elo\""), "%s", r.body);
  free(r.body);
}

/* The API runs on a thread of its own: a reload hands it the new contest
 * configs, which it then serves, while every request meanwhile is
 * answered by one config or the other. */
Test(tallyd_api, a_reload_puts_new_contest_configs_in_force) {
  td_http_t r = get("/api/contests/c3", NULL);
  cr_expect_eq(r.status, 404, "%s", r.body);
  cr_expect(has(r.body, "no contest \\\"c3\\\""), "%s", r.body);
  free(r.body);
  put("c3.contest.json",
      "{\"name\": \"c3\", \"title\": \"Contest Three\", \"tasks\": "
      "[\"aplusb\"]}");
  put("c1.contest.json",
      "{\"name\": \"c1\", \"title\": \"Contest One, renamed\", \"tasks\": "
      "[\"sum\", \"aplusb\"], \"score_precision\": 1}");
  td_signal(&daemon_, SIGHUP);
  int i = 0;
  for (; i < 200; i++) {
    r = get("/api/contests", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    bool one = has(r.body, "\"title\":\"Contest One\",");
    bool both = has(r.body, "\"title\":\"Contest One, renamed\"") &&
                has(r.body, "\"title\":\"Contest Three\"");
    cr_assert(one || both, "neither config whole: %s", r.body);
    if (both)
      break;
    free(r.body);
    usleep(50000);
  }
  cr_assert(i < 200, "the reload never reached the API: %s", r.body);
  free(r.body);
  r = get("/api/contests/c3", NULL);
  cr_expect(has(r.body, "\"configured\":true,\"tasks\":[\"aplusb\"]"), "%s",
            r.body);
  free(r.body);
  /* A job for a task c3 does not list is dead-lettered by the workers,
   * which got the same configs. */
  char dead[64];
  td_push(c,
          "{\"submission\": \"s9\", \"task\": \"sum\", \"participant\": "
          "\"erin\", \"contest\": \"c3\", \"evaluations\": {}}",
          dead);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 1, 20000) == 1, "outcomes");
  char *why = td_dead_field(c, dead, "error");
  cr_expect(why != NULL && strstr(why, "not a task of contest \"c3\""), "%s",
            why ? why : "(no dead letter)");
  free(why);
}

/* A match of the cipher task: a win, a draw or a loss by kind, verified
 * or not, a first attempt or not. */
static void push_match(const char *contest, const char *sub, const char *who,
                       long ts, int kind) {
  static const char *const answers[] = {"[\"a\", \"b\"]", "[\"a\", \"c\"]",
                                        "[\"c\", \"d\"]"};
  char job[1024];
  snprintf(job, sizeof(job),
           "{\"submission\": \"%s\", \"task\": \"cipher\", \"participant\": "
           "\"%s\", \"contest\": \"%s\", \"timestamp\": %ld, \"answer\": "
           "{\"answers\": %s, \"attempted\": [\"q1\", \"q2\"]}, "
           "\"ground_truth\": {\"expected_answers\": [\"a\", \"b\"]}, "
           "\"verified\": %s, \"attempt\": %d, \"memoryless\": true}",
           sub, who, contest, ts, answers[kind % 3],
           kind % 2 ? "true" : "false", kind % 4 == 0 ? 1 : 2);
  td_push(c, job, NULL);
}

/* The rows of a ranking, by participant: "p rank rating matches w d l". */
static void elo_rows(cJSON *j, char out[][128], int *n) {
  *n = ts_len_at(j, "rows");
  for (int i = 0; i < *n && i < 8; i++) {
    char at[64];
    double v[6];
    static const char *const keys[] = {"rank", "rating", "matches",
                                       "wins", "draws",  "losses"};
    for (int k = 0; k < 6; k++) {
      snprintf(at, sizeof(at), "rows[%d].%s", i, keys[k]);
      v[k] = ts_num_at(j, at);
    }
    snprintf(at, sizeof(at), "rows[%d].participant", i);
    snprintf(out[i], 128, "%s %g %g %g %g %g %g", ts_str_at(j, at), v[0], v[1],
             v[2], v[3], v[4], v[5]);
  }
}

/* A frozen arena: its public Elo table holds the ratings replayed from
 * the matches submitted before the freeze, whenever they were judged
 * (exactly what an arena that only got those matches has, as the
 * contest scripts compute it), and its events carry those; the private
 * view stays live. */
Test(tallyd_api, a_frozen_arena_rates_only_matches_from_before_the_freeze) {
  const long freeze = 1767268800;
  char events[700];
  follow("arenaf", 8, events, sizeof(events));
  int jobs = 0;
  for (int i = 0; i < 24; i++) {
    char who[8], sub[16];
    snprintf(who, sizeof(who), "p%d", i % 3);
    bool before = i % 2 == 0;
    long ts = before ? freeze - 10000 + i * 100 : freeze + 100 + i * 100;
    snprintf(sub, sizeof(sub), "af%d", i);
    push_match("arenaf", sub, who, ts, i / 2);
    jobs++;
    if (before) {
      snprintf(sub, sizeof(sub), "ar%d", i);
      push_match("arenaref", sub, who, ts, i / 2);
      jobs++;
    }
  }
  /* p3 plays after the freeze only; p0's last match before it is judged
   * last of all. */
  push_match("arenaf", "af-p3", "p3", freeze + 50, 0);
  push_match("arenaf", "af-late", "p0", freeze - 1, 0);
  push_match("arenaref", "ar-late", "p0", freeze - 1, 0);
  jobs += 3;
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, jobs, 30000) == jobs, "outcomes");

  td_http_t f = get("/api/contests/arenaf/ranking", NULL);
  td_http_t ref = get("/api/contests/arenaref/ranking", NULL);
  td_http_t live = get("/api/contests/arenaf/ranking?view=private", TOKEN);
  cJSON *jf = cJSON_Parse(f.body), *jr = cJSON_Parse(ref.body),
        *jl = cJSON_Parse(live.body);
  cr_assert(jf != NULL && jr != NULL && jl != NULL, "%s\n%s\n%s", f.body,
            ref.body, live.body);
  cr_expect(has(f.body, "\"frozen\":true"), "%s", f.body);
  char rf[8][128], rr[8][128], rl[8][128];
  int nf, nr, nl;
  elo_rows(jf, rf, &nf);
  elo_rows(jr, rr, &nr);
  elo_rows(jl, rl, &nl);
  cr_expect_eq(nf, 3, "p0, p1, p2 and not p3: %s", f.body);
  cr_expect_eq(nr, 3, "%s", ref.body);
  for (int i = 0; i < nf && i < nr; i++)
    cr_expect_str_eq(rf[i], rr[i], "row %d", i);
  cr_expect_eq(nl, 4, "the private view has p3: %s", live.body);
  bool moved = false;
  for (int i = 0; i < nl && i < 3; i++)
    moved |= strcmp(rl[i], i < nf ? rf[i] : "") != 0;
  cr_expect(moved, "the live table is the frozen one: %s", live.body);
  cJSON_Delete(jf);
  cJSON_Delete(jr);
  cJSON_Delete(jl);
  free(f.body);
  free(ref.body);
  free(live.body);

  td_http_t page = get("/contests/arenaf", NULL);
  cr_expect(has(page.body, "The board is frozen"), "%s", page.body);
  cr_expect(has(page.body, "data-p=\"p0\""), "%s", page.body);
  cr_expect_not(has(page.body, "data-p=\"p3\""), "%s", page.body);
  free(page.body);

  /* The events: no rating of p3, and each participant's last rating is
   * the frozen one. */
  usleep(1500000);
  char *text = tc_slurp(events);
  cr_assert_not_null(text, "%s", events);
  cr_expect(has(text, "event: rating"), "%s", text);
  cr_expect_not(has(text, "\"participant\":\"p3\""), "%s", text);
  for (int i = 0; i < nr; i++) {
    char who[16];
    double rank, rating;
    sscanf(rr[i], "%15s %lf %lf", who, &rank, &rating);
    char want[64];
    snprintf(want, sizeof(want), "{\"participant\":\"%s\",\"rating\":", who);
    const char *last = NULL;
    for (const char *p = text; (p = strstr(p, want)) != NULL; p++)
      last = p;
    cr_assert_not_null(last, "no rating event of %s: %s", who, text);
    cr_expect_eq(strtod(last + strlen(want), NULL), rating, "%s: %s", who,
                 last);
  }
  free(text);
}

/* A path that decodes to a NUL byte, holds a bad escape or decodes to
 * bytes that are not UTF-8 is refused (issue 24): before, MHD decoded
 * it and the NUL cut it short, so /metrics%00.css served /metrics. */
Test(tallyd_api, a_path_with_a_nul_or_not_utf8_is_a_400) {
  push_jobs();
  const char *bad[] = {"/contests/c1%00evil",
                       "/metrics%00.css",
                       "/api/contests/c1%00/participants/alice",
                       "/api/contests/c1%00",
                       "/contests/%ff%fe",
                       "/api/contests/%c3",
                       "/api/contests/c1%2",
                       "/api/contests/%zz/ranking",
                       "/healthz%00"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    td_http_t r = get(bad[i], TOKEN);
    cr_expect_eq(r.status, 400, "%s: %d %s", bad[i], r.status, r.body);
    cr_expect(has(r.body, "bad request: "), "%s: %s", bad[i], r.body);
    cr_expect_not(has(r.body, "Contest One"), "%s: %s", bad[i], r.body);
    free(r.body);
  }
  /* The same paths without the NUL still answer. */
  td_http_t r = get("/metrics", NULL);
  cr_expect_eq(r.status, 200);
  free(r.body);
  r = get("/contests/c1", NULL);
  cr_expect_eq(r.status, 200);
  free(r.body);
}

/* Every id with '/', '%', '?', '#', a space or non-ASCII: the index's
 * links open each board, each API path finds its contest, and a
 * participant "50%off" opens their own endpoint with their own token.
 * Each segment is decoded once: x%2541 is the contest "x%41", not "xA". */
Test(tallyd_api, every_path_segment_is_decoded_once_and_links_round_trip) {
  const char *ids[] = {"a/b",       "50%off", "q?x",  "h#1",
                       "two words", "café",   "x%41", "xA"};
  size_t n = sizeof(ids) / sizeof(ids[0]);
  for (size_t i = 0; i < n; i++) {
    char job[600];
    snprintf(job, sizeof(job),
             "{\"submission\": \"p%zu\", \"task\": \"product\", "
             "\"participant\": \"%s\", \"contest\": \"%s\", \"evaluations\": "
             "{\"s1_a\": 1, \"s1_b\": 1, \"s2_a\": 1, \"s2_b\": %d}}",
             i, ids[i], ids[i], (int)(i % 2));
    td_push(c, job, NULL);
  }
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, (int)n, 20000) == (int)n,
             "outcomes");
  /* The index links every contest; each link opens its own board. */
  td_http_t index = get("/", NULL);
  cr_assert_eq(index.status, 200);
  char tc[64];
  tc_setup(tc, sizeof(tc), "paths");
  for (size_t i = 0; i < n; i++) {
    /* The link the index wrote for ids[i]: each byte not unreserved,
     * percent-encoded. */
    char link[300] = "/contests/";
    for (const unsigned char *s = (const unsigned char *)ids[i]; *s; s++) {
      size_t k = strlen(link);
      if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || strchr("-_.~", *s) != NULL)
        link[k] = (char)*s, link[k + 1] = '\0';
      else
        snprintf(link + k, sizeof(link) - k, "%%%02X", *s);
    }
    char href[320];
    snprintf(href, sizeof(href), "href=\"%s\"", link);
    cr_expect(has(index.body, href), "the index links %s as %s", ids[i], link);
    td_http_t r = get(link, NULL);
    cr_expect_eq(r.status, 200, "%s: %d", link, r.status);
    /* The board is the contest's own: its data-contest attribute. */
    char attr[300];
    snprintf(attr, sizeof(attr), "data-contest=\"%s\"", ids[i]);
    cr_expect(has(r.body, attr), "%s opens %s", link, ids[i]);
    free(r.body);
    /* The API, ranking and participant endpoints. */
    char api[700];
    snprintf(api, sizeof(api), "/api%s/ranking", link);
    r = get(api, NULL);
    cr_expect_eq(r.status, 200, "%s", api);
    cJSON *j = cJSON_Parse(r.body);
    cr_expect(j != NULL && strcmp(ts_str_at(j, "contest"), ids[i]) == 0,
              "%s: %s", api, r.body);
    cr_expect(j != NULL && ts_len_at(j, "rows") == 1 &&
                  strcmp(ts_str_at(j, "rows[0].participant"), ids[i]) == 0,
              "%s: %s", api, r.body);
    cJSON_Delete(j);
    free(r.body);
    const char *args[] = {"token",         "--redis", server.url,
                          "--participant", ids[i],    NULL};
    tc_run_t t = tc_run(args, NULL, NULL);
    cr_assert_eq(t.status, 0, "%s", t.err);
    t.out[strcspn(t.out, "\n")] = '\0';
    snprintf(api, sizeof(api), "/api%s/participants/%s", link,
             link + strlen("/contests/"));
    r = get(api, t.out);
    cr_expect_eq(r.status, 200, "%s: %d %s", api, r.status, r.body);
    char sub[64];
    snprintf(sub, sizeof(sub), "\"submission\":\"p%zu\"", i);
    cr_expect(has(r.body, sub), "%s: %s", api, r.body);
    free(r.body);
    tc_run_free(&t);
  }
  free(index.body);
  /* x%2541 names "x%41", which is not "xA": each has its own board. */
  td_http_t r = get("/api/contests/x%2541/ranking", NULL);
  cr_expect(has(r.body, "\"contest\":\"x%41\""), "%s", r.body);
  free(r.body);
  tc_teardown();
}

/* Every answer says nosniff; a page's policy allows its own script and
 * style sheet only, by hash; every other answer loads nothing. */
Test(tallyd_api, answers_carry_nosniff_and_a_content_security_policy) {
  push_jobs();
  const char *paths[] = {
      "/",        "/contests/c1", "/api/contests",
      "/metrics", "/nowhere",     "/api/contests/c1/ranking"};
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    char headers[600], extra[700];
    snprintf(headers, sizeof(headers), "%s/headers", server.dir);
    snprintf(extra, sizeof(extra), "-D '%s'", headers);
    td_http_t r = td_http(server.dir, port, paths[i], extra);
    char *h = tc_slurp(headers);
    cr_assert_not_null(h);
    cr_expect(strcasestr(h, "X-Content-Type-Options: nosniff") != NULL,
              "%s: %s", paths[i], h);
    char *csp = strcasestr(h, "Content-Security-Policy: ");
    cr_assert_not_null(csp, "%s: %s", paths[i], h);
    csp[strcspn(csp, "\r\n")] = '\0';
    cr_expect(strstr(csp, "default-src 'none'") != NULL, "%s", csp);
    cr_expect(strstr(csp, "unsafe-inline") == NULL, "%s", csp);
    bool page = i < 2;
    cr_expect_eq(strstr(csp, "script-src 'sha256-") != NULL, page, "%s: %s",
                 paths[i], csp);
    cr_expect_eq(strstr(csp, "style-src 'sha256-") != NULL, page, "%s: %s",
                 paths[i], csp);
    if (page)
      cr_expect_not(has(r.body, " style=\""), "no inline style attribute");
    free(h);
    free(r.body);
  }
}

/* Issue 24, defect 3: a participant's endpoint pages its submissions in
 * time order (then by id): ?limit= (default 50, at most 500) and the
 * next_cursor of the page before; the pages together hold each
 * submission once. Bad arguments are 400s, and large requests side by
 * side leave the others answered. */
Test(tallyd_api, a_participants_submissions_come_in_pages_in_time_order) {
  enum { N = 130 };
  for (int i = 0; i < N; i++) {
    char job[400];
    /* Timestamps out of order, two submissions sharing each of some. */
    snprintf(job, sizeof(job),
             "{\"submission\": \"pg-%03d\", \"task\": \"sum\", "
             "\"participant\": \"pager\", \"contest\": \"pg\", \"timestamp\": "
             "%d, \"evaluations\": {\"0\": 1, \"1\": %d, \"2\": 0, \"3\": 1}}",
             i, (i * 37) % 100, i % 2);
    td_push(c, job, NULL);
  }
  /* And one of another contest, which this contest's page leaves out. */
  td_push(c,
          "{\"submission\": \"other\", \"task\": \"sum\", \"participant\": "
          "\"pager\", \"contest\": \"elsewhere\", \"evaluations\": {\"0\": 1, "
          "\"1\": 1, \"2\": 1, \"3\": 1}}",
          NULL);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, N + 1, 30000) == N + 1, "outcomes");
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "pages");
  const char *args[] = {"token",         "--redis", server.url,
                        "--participant", "pager",   NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  t.out[strcspn(t.out, "\n")] = '\0';
  char cursor[600] = "";
  int seen = 0, pages = 0;
  double last_ts = -1;
  char last_id[64] = "";
  bool ids[N] = {false};
  for (;;) {
    char path[900] = "/api/contests/pg/participants/pager";
    if (cursor[0] != '\0') {
      /* The cursor, percent-encoded as a client would. */
      size_t k = strlen(path);
      k += (size_t)snprintf(path + k, sizeof(path) - k, "?cursor=");
      for (const char *s = cursor; *s && k + 4 < sizeof(path); s++)
        k += (size_t)snprintf(path + k, sizeof(path) - k, "%%%02X",
                              (unsigned char)*s);
    }
    td_http_t r = get(path, t.out);
    cr_assert_eq(r.status, 200, "%s: %s", path, r.body);
    cJSON *j = cJSON_Parse(r.body);
    cr_assert_not_null(j, "%s", r.body);
    cr_expect_eq(ts_num_at(j, "total"), N);
    cr_expect_eq(ts_num_at(j, "limit"), 50);
    int n = ts_len_at(j, "submissions");
    cr_expect(n <= 50);
    for (int k = 0; k < n; k++) {
      char at[64];
      snprintf(at, sizeof(at), "submissions[%d].submission", k);
      const char *id = ts_str_at(j, at);
      snprintf(at, sizeof(at), "submissions[%d].timestamp", k);
      double ts = ts_num_at(j, at);
      cr_assert(strncmp(id, "pg-", 3) == 0, "%s", id);
      int i = atoi(id + 3);
      cr_expect_not(ids[i], "%s twice", id);
      ids[i] = true;
      cr_expect(ts > last_ts || (ts == last_ts && strcmp(id, last_id) > 0),
                "%s at %g after %s at %g", id, ts, last_id, last_ts);
      last_ts = ts;
      snprintf(last_id, sizeof(last_id), "%s", id);
      seen++;
    }
    pages++;
    const cJSON *next = ts_at(j, "next_cursor");
    if (cJSON_IsNull(next)) {
      cJSON_Delete(j);
      free(r.body);
      break;
    }
    cr_assert(cJSON_IsString(next), "%s", r.body);
    snprintf(cursor, sizeof(cursor), "%s", next->valuestring);
    cJSON_Delete(j);
    free(r.body);
    cr_assert(pages < 10, "pages never end");
  }
  cr_expect_eq(seen, N);
  cr_expect_eq(pages, 3);
  /* All in one page, at the largest limit. */
  td_http_t r = get("/api/contests/pg/participants/pager?limit=500", t.out);
  cJSON *j = cJSON_Parse(r.body);
  cr_expect_eq(ts_len_at(j, "submissions"), N);
  cr_expect(cJSON_IsNull(ts_at(j, "next_cursor")));
  cJSON_Delete(j);
  free(r.body);
  const char *bad[] = {"?limit=0",        "?limit=501",       "?limit=abc",
                       "?limit=-1",       "?cursor=nonsense", "?cursor=12~",
                       "?cursor=x~pg-001"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char path[200];
    snprintf(path, sizeof(path), "/api/contests/pg/participants/pager%s",
             bad[i]);
    r = get(path, t.out);
    cr_expect_eq(r.status, 400, "%s: %d %s", bad[i], r.status, r.body);
    cr_expect(has(r.body, bad[i][1] == 'l' ? "limit: " : "cursor: "), "%s",
              r.body);
    free(r.body);
  }
  /* Eight of the largest pages side by side, and a ranking among them:
   * every one answered. */
  char cmd[4000];
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && for i in 1 2 3 4 5 6 7 8; do curl -s -o /dev/null -w "
           "'%%{http_code}\\n' --max-time 20 -H 'Authorization: Bearer %s' "
           "'http://127.0.0.1:%d/api/contests/pg/participants/"
           "pager?limit=500' > big-$i & done; curl -s -o /dev/null -w "
           "'%%{http_code}\\n' --max-time 20 "
           "'http://127.0.0.1:%d/api/contests/pg/ranking' > ranking; wait; "
           "cat big-* ranking",
           server.dir, t.out, port, port);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char line[64];
  int ok = 0, lines = 0;
  while (fgets(line, sizeof(line), p) != NULL) {
    lines++;
    ok += strncmp(line, "200", 3) == 0;
  }
  pclose(p);
  cr_expect_eq(lines, 9);
  cr_expect_eq(ok, 9, "%d of 9 answered 200", ok);
  tc_run_free(&t);
  tc_teardown();
}

/* Issue 24: tally contest freeze/unfreeze of an unknown contest fails
 * and names the known ones: those with submissions and those a tallyd
 * has the config of (c2 is configured and has none here). */
Test(tallyd_api, freezing_an_unknown_contest_fails_naming_the_known_ones) {
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "unknown");
  /* The configured names reach <p>:configured within a second or two. */
  bool listed = false;
  for (int i = 0; i < 50 && !listed; i++) {
    redisReply *r = redisCommand(c, "SISMEMBER tally:configured c2");
    listed = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!listed)
      usleep(100000);
  }
  cr_assert(listed, "the configured contests were not published");
  for (int k = 0; k < 2; k++) {
    const char *what = k ? "unfreeze" : "freeze";
    const char *args[] = {"contest", what, "--redis", server.url, "nope", NULL};
    tc_run_t t = tc_run(args, NULL, NULL);
    cr_expect_eq(t.status, 1, "%s", t.err);
    cr_expect(strstr(t.err, "no contest \"nope\"") != NULL, "%s", t.err);
    cr_expect(strstr(t.err, "\"arena\", \"arenaf\", \"arenaref\", \"c1\", "
                            "\"c2\"") != NULL,
              "%s", t.err);
    tc_run_free(&t);
    /* A configured contest without submissions is known. */
    const char *ok[] = {"contest", what, "--redis", server.url, "c2", NULL};
    t = tc_run(ok, NULL, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    tc_run_free(&t);
  }
  tc_teardown();
}

/* Issue 24: the board says when a task's testcases are all private (its
 * column is 0 for everyone), and when none of a task's score is public
 * for another reason (aplusb: a private testcase in each subtask); only
 * for those tasks. */
Test(tallyd_api, the_board_says_when_a_tasks_testcases_are_all_private) {
  const char *pages[] = {"/contests/hid", "/contests/c1"};
  const char *tasks[] = {"hidden", "aplusb"};
  for (int i = 0; i < 2; i++) {
    td_http_t r = get(pages[i], NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    const char *th = strstr(r.body, "<th class=\"private\"");
    cr_assert_not_null(th, "%s", r.body);
    char want[100];
    snprintf(want, sizeof(want), "%s<br><small>not public</small></th>",
             tasks[i]);
    cr_expect(strncmp(strchr(th, '>') + 1, want, strlen(want)) == 0, "%.200s",
              th);
    cr_expect(has(r.body, "<th>sum</th>"), "%s", r.body);
    cr_expect(has(r.body, "none of that task's score is public"), "%s", r.body);
    free(r.body);
  }
}
