/* The soak test of issue 10: 20,000 jobs through two tallyd against one
 * real redis-server, through connection kills, a Redis restart, an
 * out-of-memory episode, stopped workers and reloads during a rescore.
 * At the end every job has exactly one scored result, nothing is pending,
 * and a dry-run rescore finds nothing to change. Bounded to a few
 * minutes. */
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define JOBS 20000
#define BATCH 4000
#define OUTCOMES_MS 240000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t d1, d2;
static char (*ids)[64];
static char dir[400];

static void setup(void) {
  memset(&d1, 0, sizeof(d1));
  memset(&d2, 0, sizeof(d2));
  cr_assert_eq(tr_redis_start(&server, 0, true), 0);
  c = td_connect(&server);
  ids = calloc(JOBS, sizeof(*ids));
  cr_assert_not_null(ids);
}

static void teardown(void) {
  td_kill(&d1);
  td_kill(&d2);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
  free(ids);
}

TestSuite(soak, .init = setup, .fini = teardown, .timeout = 600);

#define require(cond, ...)                                                     \
  do {                                                                         \
    if (!(cond)) {                                                             \
      td_log_dump(&d1);                                                        \
      td_log_dump(&d2);                                                        \
      cr_assert_fail(__VA_ARGS__);                                             \
    }                                                                          \
  } while (0)

/* Pushes jobs [from, from + n) of task sum, pipelined. */
static void push(int from, int n) {
  char job[256];
  for (int i = from; i < from + n; i++) {
    int len = snprintf(job, sizeof(job),
                       "{\"submission\":\"soak-%d\",\"task\":\"sum\","
                       "\"participant\":\"p%d\",\"timestamp\":%d,"
                       "\"evaluations\":{\"0\":1,\"1\":0.5,\"2\":%d,\"3\":0}}",
                       i, i % 50, i, i % 2);
    redisAppendCommand(c, "XADD tally:jobs * job %b", job, (size_t)len);
  }
  for (int i = from; i < from + n; i++) {
    redisReply *r = NULL;
    require(redisGetReply(c, (void **)&r) == REDIS_OK && r != NULL &&
                r->type == REDIS_REPLY_STRING,
            "XADD %d failed", i);
    snprintf(ids[i], 64, "%s", r->str);
    freeReplyObject(r);
  }
}

static long long outcomes(void) {
  return td_xlen(c, "tally:results") + td_xlen(c, "tally:dead");
}

static void wait_outcomes(long long n) {
  long long got = td_wait_outcomes(c, n, OUTCOMES_MS);
  require(got >= n, "%lld outcomes, waiting for %lld", got, n);
}

static void run_ok(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  require(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", fmt,
          r ? r->str : c->errstr);
  freeReplyObject(r);
}

static long long info_number(const char *field) {
  redisReply *r = redisCommand(c, "INFO memory");
  const char *p =
      r && r->type == REDIS_REPLY_STRING ? strstr(r->str, field) : NULL;
  long long v = p ? atoll(p + strlen(field) + 1) : -1;
  freeReplyObject(r);
  return v;
}

static void write_sum(double points) {
  char text[512];
  snprintf(text, sizeof(text),
           "{\"name\": \"sum\", \"score_type\": \"Sum\", "
           "\"score_type_parameters\": %g, \"testcases\": {\"0\": false, "
           "\"1\": true, \"2\": false, \"3\": false}, \"score_precision\": 1}",
           points);
  td_write_file(dir, "sum.json", text);
}

Test(soak, twenty_thousand_jobs_through_every_fault_score_exactly_once) {
  snprintf(dir, sizeof(dir), "%s/tasks", server.dir);
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           dir);
  cr_assert_eq(system(cmd), 0);
  /* Workers stopped for a while are not timed out: only real failures use
   * up deliveries, and there are none here. */
  const char *const args[] = {
      "--tasks", dir, "--job-timeout", "10000", "--claim-idle", "5000", NULL};
  cr_assert_eq(td_start(&d1, &server, "d1", args, NULL), 0);
  cr_assert_eq(td_start(&d2, &server, "d2", args, NULL), 0);

  /* Connection kills. */
  push(0, BATCH);
  wait_outcomes(BATCH / 2);
  for (int k = 0; k < 3; k++) {
    run_ok("CLIENT KILL TYPE normal");
    td_sleep_ms(300);
  }

  /* Stopped workers. */
  push(BATCH, BATCH);
  pid_t kids[8];
  int n = td_children(&d1, kids, 8);
  for (int k = 0; k < n; k++)
    kill(kids[k], SIGSTOP);
  td_sleep_ms(1500);
  for (int k = 0; k < n; k++)
    kill(kids[k], SIGCONT);

  /* A Redis restart (the AOF keeps every write). */
  wait_outcomes(BATCH + BATCH / 2);
  redisFree(c);
  c = NULL;
  tr_redis_kill(&server);
  td_sleep_ms(500);
  cr_assert_eq(tr_redis_restart(&server), 0);
  c = td_connect(&server);
  push(2 * BATCH, BATCH);

  /* Out of memory, then not. */
  wait_outcomes(2 * BATCH + BATCH / 4);
  long long used = info_number("used_memory");
  require(used > 0, "no used_memory");
  run_ok("CONFIG SET maxmemory %lld", used + 64 * 1024);
  td_sleep_ms(3000);
  run_ok("CONFIG SET maxmemory 0");

  /* Reloads during a rescore: the second SIGHUP comes while the rescore of
   * the first runs. */
  push(3 * BATCH, BATCH);
  wait_outcomes(3 * BATCH + BATCH / 4);
  write_sum(11);
  td_signal(&d1, SIGHUP);
  td_signal(&d2, SIGHUP);
  for (int waited = 0; waited < 10000; waited += 10) {
    if (td_log_has(&d1, "rescore.start") || td_log_has(&d2, "rescore.start"))
      break;
    td_sleep_ms(10);
  }
  write_sum(12);
  td_signal(&d1, SIGHUP);
  push(4 * BATCH, BATCH);
  td_signal(&d2, SIGHUP);
  wait_outcomes(JOBS);

  /* Quiet: no rescore running or owed, nothing stale, for two seconds. */
  int quiet = 0;
  for (int waited = 0; waited < 120000 && quiet < 20; waited += 100) {
    bool idle = td_pending(c) == 0 &&
                tr_redis_int(&server, "EXISTS tally:rescore:lock") == 0 &&
                tr_redis_int(&server, "EXISTS tally:rescore:pending") == 0 &&
                tr_redis_int(&server, "SCARD tally:stale") == 0;
    quiet = idle ? quiet + 1 : 0;
    td_sleep_ms(100);
  }
  require(quiet >= 20, "tallyd never settled (a rescore or stale results "
                       "left)");
  td_signal(&d1, SIGTERM);
  td_signal(&d2, SIGTERM);
  int s1 = td_wait(&d1, 30000), s2 = td_wait(&d2, 30000);
  require(s1 != -1 && WIFEXITED(s1) && WEXITSTATUS(s1) == 0, "d1 %#x", s1);
  require(s2 != -1 && WIFEXITED(s2) && WEXITSTATUS(s2) == 0, "d2 %#x", s2);

  /* Each fault happened. */
  require(td_log_has(&d1, "redis.down") && td_log_has(&d2, "redis.down"),
          "no lost connection");
  require(td_log_has(&d1, "OOM") || td_log_has(&d2, "OOM"),
          "no out-of-memory error reached tallyd");
  require(td_log_has(&d1, "workers are being replaced"), "no reload");
  require(td_log_has(&d1, "rescore.done") || td_log_has(&d2, "rescore.done"),
          "no rescore finished");

  require(td_xlen(c, "tally:dead") == 0, "%lld jobs dead-lettered",
          td_xlen(c, "tally:dead"));
  require(td_check_exactly_once(c, ids, JOBS) == 0, "not exactly once");
  require(td_pending(c) == 0, "%lld entries pending", td_pending(c));
  require(outcomes() == JOBS, "%lld outcomes", outcomes());

  char line[2048];
  snprintf(line, sizeof(line),
           "'%s/tally' rescore --tasks '%s' --redis '%s' --task sum --dry-run "
           "2>&1",
           TALLY_BINARY_DIR, dir, server.url);
  FILE *p = popen(line, "r");
  require(p != NULL, "cannot run tally rescore");
  char out[4096] = "";
  size_t got = fread(out, 1, sizeof(out) - 1, p);
  out[got] = '\0';
  int status = pclose(p);
  require(status == 0, "the dry run failed: %s", out);
  require(strstr(out, ": 0 would change") != NULL, "%s", out);
}
