/* Pass-fail contests through tallyd (docs/contest.md#pass-fail-contests):
 * the results API's ranking and the board of a pass-fail contest equal
 * the board tally score --pass-fail computes offline from the same jobs,
 * live and frozen (the public view of a contest whose configured freeze
 * holds). Through a real redis-server, tallyd and the tally command. */
#include "cli_fixture.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;
static char tasks[512];
static int port;
static char cwd[64];

/* 2026-01-01T10:00:00Z */
#define START 1767261600L

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  td_copy_tasks(server.dir, tasks, sizeof(tasks));
  /* wf: no freeze; wff: frozen from 10:30 until 2099. */
  td_put(tasks, "wf.contest.json",
         "{\"name\": \"wf\", \"tasks\": [\"sum\", \"product\"], \"scoring\": "
         "\"pass-fail\", \"start\": \"2026-01-01T10:00:00Z\", \"end\": "
         "\"2099-01-01T00:00:00Z\", \"penalty_time\": 15}");
  td_put(tasks, "wff.contest.json",
         "{\"name\": \"wff\", \"tasks\": [\"sum\", \"product\"], \"scoring\": "
         "\"pass-fail\", \"start\": \"2026-01-01T10:00:00Z\", \"end\": "
         "\"2099-01-01T00:00:00Z\", \"freeze\": \"2026-01-01T10:30:00Z\", "
         "\"compile_penalty\": true}");
  const char *args[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "icpc", args, NULL), 0);
  port = td_http_port(&daemon_);
  char why[256];
  cr_assert(td_wait_ready(&daemon_, server.dir, 20000, why, sizeof(why)), "%s",
            why);
  tc_setup(cwd, sizeof(cwd), "icpc");
}

static void teardown(void) {
  tc_teardown();
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_icpc, .init = setup, .fini = teardown, .timeout = 120);

/* The rows of a board without the names and teams the API adds. */
static char *rows_of(const char *text) {
  cJSON *j = cJSON_Parse(text);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
  cJSON *w;
  cJSON_ArrayForEach(w, rows) {
    cJSON_DeleteItemFromObjectCaseSensitive(w, "name");
    cJSON_DeleteItemFromObjectCaseSensitive(w, "team");
  }
  char *out = rows != NULL ? cJSON_PrintUnformatted(rows) : strdup("none");
  cJSON_Delete(j);
  return out;
}

/* The line of contest in tally score --pass-fail's output. */
static char *offline(const char *jobs, const char *contest, bool pub) {
  const char *args[] = {"score", "--pass-fail", "--tasks", tasks,
                        jobs,    NULL,          NULL};
  if (pub) {
    args[4] = "--public";
    args[5] = jobs;
  }
  tc_run_t t = tc_run(args, NULL, NULL);
  char want[64];
  snprintf(want, sizeof(want), "{\"contest\":\"%s\"", contest);
  char *line = strstr(t.out, want);
  cr_assert_not_null(line, "%s %s", t.out, t.err);
  char *end = strchr(line, '\n');
  if (end != NULL)
    *end = '\0';
  char *rows = rows_of(line);
  tc_run_free(&t);
  return rows;
}

Test(tallyd_icpc, the_api_and_the_board_equal_the_offline_board) {
  /* Every kind of judgement, ties, compile errors, unofficial tries,
   * submissions during wff's freeze, and one unscored (pending). */
  char path[700];
  snprintf(path, sizeof(path), "%s/jobs.jsonl", server.dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  const char *who[] = {"ann", "bob", "cat", "dan", "eve"};
  unsigned seed = 7;
  for (int k = 0; k < 120; k++) {
    seed = seed * 1103515245u + 12345u;
    const char *contest = k % 2 ? "wf" : "wff";
    const char *u = who[(seed >> 8) % 5];
    long ts = START + (long)((seed >> 4) % 3600) - 30;
    int kind = (int)((seed >> 16) % 7);
    char ev[300];
    if (kind == 0)
      snprintf(ev, sizeof(ev), "\"compilation\": \"failed\"");
    else if (kind == 1)
      snprintf(ev, sizeof(ev),
               "\"evaluations\": {\"0\": 1, \"1\": {\"outcome\": 0, "
               "\"text\": [\"Execution timed out\"]}, \"2\": 1, \"3\": 1}");
    else if (kind == 2)
      snprintf(ev, sizeof(ev),
               "\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 0, \"3\": 1}");
    else if (kind == 3 && k % 11 == 0)
      snprintf(ev, sizeof(ev), "\"evaluations\": {\"0\": 1}"); /* unscored */
    else
      snprintf(ev, sizeof(ev),
               "\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, \"3\": 1}");
    fprintf(f,
            "{\"submission\": \"s%d\", \"participant\": \"%s\", \"contest\": "
            "\"%s\", \"task\": \"sum\", \"timestamp\": %ld, \"official\": "
            "%s, %s}\n",
            k, u, contest, ts, k % 13 == 5 ? "false" : "true", ev);
  }
  /* zed: a wrong answer before wff's freeze, then one accepted after it
   * (a pending cell), and a compile error (counted: compile_penalty). */
  fprintf(f,
          "{\"submission\": \"z1\", \"participant\": \"zed\", "
          "\"contest\": \"wff\", \"task\": \"product\", "
          "\"timestamp\": %ld, \"compilation\": \"failed\"}\n",
          START + 60);
  fprintf(f,
          "{\"submission\": \"z2\", \"participant\": \"zed\", "
          "\"contest\": \"wff\", \"task\": \"sum\", \"timestamp\": "
          "%ld, \"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, \"3\": "
          "1}}\n",
          START + 2400);
  fclose(f);
  int n = td_push_file(c, path);
  cr_assert_eq(n, 122);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 122, 30000) == 122, "outcomes");

  const char *contests[] = {"wf", "wff"};
  for (int i = 0; i < 2; i++) {
    char url[100];
    snprintf(url, sizeof(url), "/api/contests/%s/ranking", contests[i]);
    td_http_t r = td_http(server.dir, port, url, "");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_expect(strstr(r.body, "\"scoring\":\"pass-fail\"") != NULL, "%s",
              r.body);
    cr_expect(strstr(r.body, i == 0 ? "\"frozen\":false" : "\"frozen\":true") !=
                  NULL,
              "%s", r.body);
    char *got = rows_of(r.body);
    char *want = offline(path, contests[i], i == 1);
    cr_expect_str_eq(got, want, "%s", contests[i]);
    free(got);
    /* tally ranking: the same board, from the rules tallyd published. */
    const char *args[] = {"ranking",   "--redis",  server.url, "--contest",
                          contests[i], "--public", "--json",   NULL};
    tc_run_t t = tc_run(args, NULL, NULL);
    cr_expect_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\"scoring\":\"pass-fail\"") != NULL, "%s", t.out);
    got = rows_of(t.out);
    cr_expect_str_eq(got, want, "tally ranking %s: %s", contests[i], t.out);
    free(got);
    tc_run_free(&t);
    free(want);
    free(r.body);
    /* The page: ICPC cells, a column per task, the ranking's kind for
     * its script. */
    snprintf(url, sizeof(url), "/contests/%s", contests[i]);
    r = td_http(server.dir, port, url, "");
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body, "data-ranking=\"pass-fail\"") != NULL, "%s",
              r.body);
    cr_expect(strstr(r.body, "<th>Solved</th><th>Penalty</th>") != NULL);
    cr_expect(strstr(r.body, "class=\"icpc solved") != NULL, "%s", r.body);
    if (i == 1)
      cr_expect(strstr(r.body, "The board is frozen") != NULL &&
                    strstr(r.body, "<td class=\"icpc pending\">?1<small>1 "
                                   "try</small></td>") != NULL &&
                    strstr(r.body, "<td class=\"icpc rejected\">-1</td>") !=
                        NULL,
                "%s", r.body);
    free(r.body);
  }

  /* A pass-fail ranking is counted at most once a second: a read right
   * after a change may be the kept one, a read a second later is not. */
  td_push(c,
          "{\"submission\": \"y1\", \"participant\": \"yan\", \"contest\": "
          "\"wf\", \"task\": \"sum\", \"timestamp\": 1767261660, "
          "\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, \"3\": 1}}",
          NULL);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 123, 30000) == 123, "outcomes");
  td_sleep_ms(1200);
  td_http_t r = td_http(server.dir, port, "/api/contests/wf/ranking", "");
  cr_expect(strstr(r.body, "\"participant\":\"yan\"") != NULL, "%s", r.body);
  free(r.body);
}
