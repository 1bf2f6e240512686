/* Failover with Redis Sentinel (issue 25): a master, two replicas and
 * three redis-sentinel processes on loopback. tallyd and tally find the
 * master through the sentinels; under a load of jobs the master is
 * killed, a replica promoted, and tallyd follows it without a restart:
 * with --wait-replicas 1 every job ends with exactly one result and
 * nothing stays pending. Also: sentinels down, one or all. */
#include "cli_fixture.h"
#include "sentinel_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ts_group_t g;
static td_daemon_t daemon_;

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  cr_assert_eq(ts_start(&g, 3, 3), 0, "the sentinel group did not start");
}

static void teardown(void) {
  td_kill(&daemon_);
  ts_stop(&g);
}

TestSuite(tallyd_sentinel, .init = setup, .fini = teardown, .timeout = 150);

/* Pushes n jobs (submissions TAG-0...) to c, once it has a replica
 * online, and copies their ids, then waits until a replica has them (what
 * a platform that must not lose a job would do). */
static void push(redisContext *c, const char *tag, size_t n, char (*ids)[64]) {
  cr_assert(tr_wait_replica_online(c, 30000),
            "no replica of the master came online within 30 s");
  char job[256];
  for (size_t i = 0; i < n; i++) {
    int len = snprintf(job, sizeof(job),
                       "{\"submission\":\"%s-%zu\",\"task\":\"sum\","
                       "\"participant\":\"p%zu\",\"evaluations\":{\"0\":1,"
                       "\"1\":0.5,\"2\":%zu,\"3\":0}}",
                       tag, i, i % 7, i % 2);
    redisAppendCommand(c, "XADD tally:jobs * job %b", job, (size_t)len);
  }
  for (size_t i = 0; i < n; i++) {
    redisReply *r = NULL;
    redisGetReply(c, (void **)&r);
    snprintf(ids[i], 64, "%s",
             r && r->type == REDIS_REPLY_STRING ? r->str : "");
    cr_assert(ids[i][0] != '\0', "XADD failed");
    freeReplyObject(r);
  }
  redisReply *w = redisCommand(c, "WAIT 1 5000");
  cr_assert(w != NULL && w->type == REDIS_REPLY_INTEGER && w->integer >= 1,
            "no replica got the jobs");
  freeReplyObject(w);
}

static td_http_t readyz(int port) {
  return td_http(g.dir, port, "/readyz", "");
}

static bool wait_ready(int port, const char *want, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    td_http_t r = readyz(port);
    bool ok = r.status == 200 && (want == NULL || strstr(r.body, want));
    free(r.body);
    if (ok)
      return true;
    td_sleep_ms(100);
  }
  return false;
}

Test(tallyd_sentinel, follows_a_failover_under_load_losing_nothing) {
  const char *args[] = {"--wait-replicas", "1", NULL};
  cr_assert_eq(td_start(&daemon_, &g.as_server, "sentinel", args, NULL), 0);
  int port = td_http_port(&daemon_);
  char want[128];
  snprintf(want, sizeof(want), "master " TS_MASTER " at 127.0.0.1:%d",
           g.data[0].port);
  TD_REQUIRE(&daemon_, wait_ready(port, want, 20000), "not ready on %s", want);
  TD_REQUIRE(&daemon_, td_log_has(&daemon_, "following master " TS_MASTER),
             "the log does not name the master");

  static char ids[800][64];
  redisContext *m = ts_connect(&g, 0);
  cr_assert_not_null(m);
  push(m, "before", 400, ids);
  /* Under load: some scored, most not yet. */
  for (int i = 0; i < 200 && td_xlen(m, "tally:results") < 40; i++)
    td_sleep_ms(10);
  redisFree(m);
  ts_kill(&g.data[0]);
  int now = ts_wait_failover(&g, 0, 40000);
  TD_REQUIRE(&daemon_, now > 0, "no replica was promoted");
  redisContext *c = ts_connect(&g, now);
  cr_assert_not_null(c);
  push(c, "after", 400, ids + 400);
  long long got = td_wait_outcomes(c, 800, 60000);
  TD_REQUIRE(&daemon_, got == 800, "%lld outcomes of 800 on the new master",
             got);
  cr_expect_eq(td_check_exactly_once(c, ids, 800), 0,
               "every job exactly one outcome");
  /* Nothing left pending once the last posts are done. */
  long long pending = -1;
  for (int i = 0; i < 100 && pending != 0; i++) {
    pending = td_pending(c);
    if (pending != 0)
      td_sleep_ms(100);
  }
  cr_expect_eq(pending, 0, "entries left pending");
  cr_expect_eq(td_xlen(c, "tally:dead"), 0);

  /* It says which master it follows now, and that it followed one
   * failover. */
  snprintf(want, sizeof(want),
           "master " TS_MASTER " at 127.0.0.1:%d, as the sentinels name it; "
           "failovers followed: 1",
           g.data[now].port);
  cr_expect(wait_ready(port, want, 10000), "/readyz does not say %s", want);
  td_http_t r = td_http(g.dir, port, "/metrics", "");
  char line[200];
  snprintf(line, sizeof(line),
           "tally_redis_master_info{master=\"127.0.0.1:%d\",name=\"" TS_MASTER
           "\"} 1",
           g.data[now].port);
  cr_expect(strstr(r.body, line) != NULL, "%s", r.body);
  cr_expect(strstr(r.body, "tally_redis_failovers_total{connection=\"write\"} "
                           "1") != NULL,
            "%s", r.body);
  free(r.body);
  cr_expect(td_log_has(&daemon_, "failovers followed: 1"));

  /* The CLI finds the new master through the sentinels too. */
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "sentinel");
  const char *st[] = {"results", "--redis", g.as_server.url, "--from", "0",
                      "--count", "1",       "--no-follow",   NULL};
  tc_run_t t = tc_run(st, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"submission\":\"") != NULL, "out: %s err: %s",
            t.out, t.err);
  tc_run_free(&t);
  tc_teardown();
  redisFree(c);
}

/* One sentinel down: tallyd starts through the next one; all down for a
 * while: scoring goes on on the master it follows, and a tallyd started
 * meanwhile waits, not ready, naming the cause, until one is back. */
Test(tallyd_sentinel, works_with_sentinels_down) {
  ts_kill(&g.sentinels[0]);
  cr_assert_eq(td_start(&daemon_, &g.as_server, "sentinel", NULL, NULL), 0);
  int port = td_http_port(&daemon_);
  TD_REQUIRE(&daemon_, wait_ready(port, NULL, 20000), "not ready");
  for (int i = 1; i < 3; i++)
    ts_kill(&g.sentinels[i]);
  static char ids[100][64];
  redisContext *m = ts_connect(&g, 0);
  cr_assert_not_null(m);
  push(m, "alone", 100, ids);
  long long got = td_wait_outcomes(m, 100, 30000);
  TD_REQUIRE(&daemon_, got == 100, "%lld outcomes of 100", got);
  cr_expect_eq(td_check_exactly_once(m, ids, 100), 0);

  /* A second tallyd, started with every sentinel down. */
  td_daemon_t second;
  memset(&second, 0, sizeof(second));
  cr_assert_eq(td_start(&second, &g.as_server, "second", NULL, NULL), 0);
  int port2 = td_http_port(&second);
  td_sleep_ms(1500);
  td_http_t r = readyz(port2);
  cr_expect_eq(r.status, 503, "%s", r.body);
  free(r.body);
  bool named = false;
  for (int i = 0; i < 50 && !named; i++) {
    named = td_log_has(&second, "cannot connect to sentinel 127.0.0.1:");
    if (!named)
      td_sleep_ms(100);
  }
  cr_expect(named, "the log does not name the sentinel it cannot reach");
  for (int i = 0; i < 3; i++)
    cr_assert_eq(ts_restart_sentinel(&g.sentinels[i]), 0);
  cr_expect(wait_ready(port2, NULL, 30000), "the second tallyd never became "
                                            "ready");
  td_kill(&second);
  redisFree(m);
}

/* tally submit --wait-replicas N: the jobs are on N replicas, or it says
 * not and exits 1. */
Test(tallyd_sentinel, submit_waits_for_replicas) {
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "submit");
  tc_write_file("jobs.jsonl", "{\"submission\":\"w1\",\"task\":\"sum\","
                              "\"participant\":\"p\",\"evaluations\":{}}\n");
  const char *two[] = {"submit",
                       "--redis",
                       g.as_server.url,
                       "--wait-replicas",
                       "2",
                       tc_at("jobs.jsonl"),
                       NULL};
  tc_run_t t = tc_run(two, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  tc_run_free(&t);
  ts_kill(&g.data[1]);
  ts_kill(&g.data[2]);
  const char *one[] = {"submit",
                       "--redis",
                       g.as_server.url,
                       "--wait-replicas",
                       "1",
                       tc_at("jobs.jsonl"),
                       NULL};
  t = tc_run(one, NULL, NULL);
  cr_expect_eq(t.status, 1, "%s", t.err);
  cr_expect(strstr(t.err, "the jobs reached 0 of 1 replicas within 5 s") !=
                NULL,
            "%s", t.err);
  tc_run_free(&t);
  const char *bad[] = {"submit", "--wait-replicas", "0", NULL};
  t = tc_run(bad, NULL, NULL);
  cr_expect_eq(t.status, 2, "%s", t.err);
  cr_expect(strstr(t.err, "--wait-replicas 0: must be a number from 1 to "
                          "100") != NULL,
            "%s", t.err);
  tc_run_free(&t);
  tc_teardown();
}

/* The rescore's state in <p>:rescore on the master: its "done" count
 * while it runs (selecting, scoring or writing), else -1. */
static long long rescore_done(redisContext *c) {
  redisReply *r = redisCommand(c, "HMGET tally:rescore state done");
  long long done = -1;
  if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[0]->type == REDIS_REPLY_STRING &&
      strcmp(r->element[0]->str, "done") != 0 &&
      strcmp(r->element[0]->str, "failed") != 0)
    done = r->element[1]->type == REDIS_REPLY_STRING ? atoll(r->element[1]->str)
                                                     : 0;
  freeReplyObject(r);
  return done;
}

/* A failover in the middle of a rescore: the rescore starts again on the
 * new master and ends with every submission rescored. */
Test(tallyd_sentinel, a_rescore_survives_a_failover) {
  char tasks[400], cmd[1000];
  snprintf(tasks, sizeof(tasks), "%s/tasks", g.dir);
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           tasks);
  cr_assert_eq(system(cmd), 0);
  const char *args[] = {"--wait-replicas",
                        "1",
                        "--auto-rescore",
                        "false",
                        "--tasks",
                        tasks,
                        NULL};
  cr_assert_eq(td_start(&daemon_, &g.as_server, "sentinel", args, NULL), 0);
  static char ids[3000][64];
  redisContext *m = ts_connect(&g, 0);
  cr_assert_not_null(m);
  push(m, "r", 3000, ids);
  long long got = td_wait_outcomes(m, 3000, 60000);
  TD_REQUIRE(&daemon_, got == 3000, "%lld outcomes of 3000", got);
  td_write_file(tasks, "sum.json",
                "{\"name\":\"sum\",\"score_type\":\"Sum\","
                "\"score_type_parameters\":20,\"testcases\":{\"0\":false,"
                "\"1\":true,\"2\":false,\"3\":false},\"score_precision\":1}");
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "rescore");
  const char *rescore[] = {"rescore", "--redis", g.as_server.url, "--tasks",
                           tasks,     "--task",  "sum",           "--threads",
                           "1",       NULL};
  pid_t pid = tc_start(rescore, NULL, NULL);
  /* Caught in the middle, held while the master dies. */
  bool caught = false;
  for (int i = 0; i < 2000 && !caught; i++) {
    caught = rescore_done(m) >= 0;
    if (!caught)
      td_sleep_ms(1);
  }
  kill(pid, SIGSTOP);
  cr_assert(caught, "the rescore was not caught running");
  redisFree(m);
  ts_kill(&g.data[0]);
  int now = ts_wait_failover(&g, 0, 40000);
  cr_assert(now > 0, "no replica was promoted");
  kill(pid, SIGCONT);
  tc_run_t t = tc_finish(pid);
  cr_expect_eq(t.status, 0, "%s", t.err);
  /* Most runs stop the rescore with work left, which the failover then
   * interrupts. A clean-clone CI run under ASan, beside the 2,000 clients
   * of test_tallyd_streams, once saw it end with no such message, most
   * likely because this test first saw it running (its progress is
   * written every half second) only when nothing was left but its last
   * progress write, which it does not retry. What it wrote is checked
   * below either way, so this is a note, not a warning: Criterion fails
   * a run that logs a warning, which a clean-clone CI run showed (all
   * four tests passed, the run failed). */
  if (strstr(t.err, "the sentinels may be moving the master: starting "
                    "again") == NULL)
    cr_log_info("the rescore had written everything before the failover "
                "(stderr: %s)",
                t.err);
  cr_expect(strstr(t.out, "rescored 3000 submissions") != NULL, "%s", t.out);
  tc_run_free(&t);
  /* Nothing left to change. */
  const char *dry[] = {"rescore", "--redis", g.as_server.url, "--tasks", tasks,
                       "--task",  "sum",     "--dry-run",     "--json",  NULL};
  t = tc_run(dry, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"submissions\":3000,\"changed\":0") != NULL, "%s",
            t.out);
  tc_run_free(&t);
  tc_teardown();
}
