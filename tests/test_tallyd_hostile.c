/* tallyd as a hostile or unlucky operator runs it, against a real
 * redis-server each: reconnects and restarts that must not use up a job's
 * deliveries, and bad ids that must not reach the contest state. */
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTCOMES_MS 40000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;

static void setup(void) {
  memset(&server, 0, sizeof(server));
  memset(&daemon_, 0, sizeof(daemon_));
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_hostile, .init = setup, .fini = teardown, .timeout = 120);

#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

static bool log_shows(const char *text, int timeout_ms) {
  for (int waited = 0;; waited += 50) {
    if (td_log_has(&daemon_, text))
      return true;
    if (waited >= timeout_ms)
      return false;
    td_sleep_ms(50);
  }
}

/* Kills tallyd's connections once both are up. */
static void kill_connections(void) {
  for (int waited = 0; td_other_clients(c) < 2 && waited < 10000; waited += 20)
    td_sleep_ms(20);
  freeReplyObject(redisCommand(c, "CLIENT KILL TYPE normal"));
}

/* The highest delivery count of any pending entry. */
static long long max_deliveries(void) {
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd - + 1000");
  long long most = 0;
  for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
    if (r->element[i]->element[3]->integer > most)
      most = r->element[i]->element[3]->integer;
  freeReplyObject(r);
  return most;
}

/* Starts tallyd with workers that hang on every job and are never timed
 * out, so that the jobs they are given stay in hand. */
static void start_with_hanging_workers(void) {
  const char *const args[] = {
      "--job-timeout", "600000", "--drain-timeout", "500", "--auto-rescore",
      "false",         NULL};
  const char *const env[] = {"TALLY_WORKER_FAULT=hang", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, env), 0);
  require(log_shows("redis.ready", 10000), "tallyd did not start");
}

static void stop_daemon(void) {
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 20000);
  require(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "tallyd did not drain and exit 0 (status %#x)", status);
}

/* Issue 10, defect 1: any number of reconnects and restarts, with no
 * worker failing, never uses up a job's deliveries. */
Test(tallyd_hostile, reconnects_and_restarts_never_dead_letter_a_valid_job) {
  char ids[5][64];
  for (int restart = 0; restart < 4; restart++) {
    start_with_hanging_workers();
    if (restart == 0)
      td_push_many(c, 5, ids);
    for (int waited = 0; td_pending(c) < 5 && waited < 10000; waited += 20)
      td_sleep_ms(20);
    require(td_pending(c) == 5, "%lld pending, not 5", td_pending(c));
    for (int k = 0; k < 5; k++) {
      kill_connections();
      td_sleep_ms(100);
    }
    /* Once the last re-read is done, no count has moved. */
    for (int waited = 0; td_other_clients(c) < 2 && waited < 10000;
         waited += 20)
      td_sleep_ms(20);
    td_sleep_ms(300);
    require(max_deliveries() == 1, "a delivery count reached %lld",
            max_deliveries());
    stop_daemon();
  }
  const char *const args[] = {"--auto-rescore", "false", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  long long got = td_wait_outcomes(c, 5, OUTCOMES_MS);
  require(got == 5, "%lld outcomes of 5", got);
  require(td_xlen(c, "tally:dead") == 0, "%lld jobs dead-lettered",
          td_xlen(c, "tally:dead"));
  require(td_check_exactly_once(c, ids, 5) == 0, "not exactly once");
  stop_daemon();
}

/* The HGET of key's field as a malloc'ed string, or NULL. */
static char *hget(const char *key, const char *field) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  char *v = r && r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
  freeReplyObject(r);
  return v;
}

static long long keys_matching(const char *pattern) {
  redisReply *r = redisCommand(c, "KEYS %s", pattern);
  long long n = r && r->type == REDIS_REPLY_ARRAY ? (long long)r->elements : -1;
  freeReplyObject(r);
  return n;
}

/* Issue 10, defects 4 and 5: ids with a NUL, control characters or
 * invalid UTF-8, a duplicated participant, an unknown task, a number id
 * too large, and a job over --max-job-bytes are dead-lettered with a cause
 * naming the field, and none of them touches the contest state. */
Test(tallyd_hostile, bad_ids_are_dead_letters_and_touch_no_contest_state) {
  const char *const args[] = {"--auto-rescore", "false", "--max-job-bytes",
                              "65536", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  static const char good[] =
      "{\"submission\":\"s-1\",\"participant\":\"alice\",\"task\":\"sum\","
      "\"evaluations\":{\"0\":1,\"1\":1,\"2\":1,\"3\":1}}";
  td_push(c, good, NULL);
  require(td_wait_outcomes(c, 1, OUTCOMES_MS) == 1, "the good job");
  char *before = hget("tally:{default}:taskscores:alice", "sum");
  require(before != NULL, "alice has no task score");

  static const struct {
    const char *job, *cause;
  } bad[] = {
      {"{\"submission\":\"s-2\",\"participant\":\"alice\\u0000evil\","
       "\"task\":\"sum\",\"evaluations\":{\"0\":0,\"1\":0,\"2\":0,\"3\":0}}",
       "participant: holds a control character (U+0000"},
      {"{\"submission\":\"s-3\",\"participant\":\"al\xffice\","
       "\"task\":\"sum\",\"evaluations\":{\"0\":0,\"1\":0,\"2\":0,\"3\":0}}",
       "participant: is not valid UTF-8"},
      {"{\"submission\":\"s-4\",\"participant\":\"bob\","
       "\"participant\":\"alice\",\"task\":\"sum\"}",
       "participant: key appears twice"},
      {"{\"submission\":\"s-5\",\"participant\":\"alice\",\"task\":\"../x\","
       "\"evaluations\":{}}",
       "task: unknown task \"../x\""},
      {"{\"submission\":12345678901234567890123,\"participant\":\"alice\","
       "\"task\":\"sum\",\"evaluations\":{\"0\":0,\"1\":0,\"2\":0,\"3\":0}}",
       "submission: a number id must be an integer below 2^53"},
  };
  size_t n = sizeof(bad) / sizeof(bad[0]);
  char ids[8][64];
  for (size_t i = 0; i < n; i++)
    td_push(c, bad[i].job, ids[i]);
  /* A job over --max-job-bytes that names a submission. */
  size_t big = 200000;
  char *huge = malloc(big + 200);
  int k = snprintf(huge, 200,
                   "{\"submission\":\"s-6\",\"participant\":\"alice\","
                   "\"task\":\"sum\",\"pad\":\"");
  memset(huge + k, 'x', big);
  strcpy(huge + k + big, "\"}");
  td_push(c, huge, ids[n]);
  free(huge);
  require(td_wait_outcomes(c, (long long)n + 2, OUTCOMES_MS) ==
              (long long)n + 2,
          "not every job has an outcome");
  require(td_xlen(c, "tally:dead") == (long long)n + 1,
          "%lld dead letters, not %zu", td_xlen(c, "tally:dead"), n + 1);
  for (size_t i = 0; i < n; i++) {
    char *why = td_dead_field(c, ids[i], "error");
    require(why != NULL && strstr(why, bad[i].cause) != NULL,
            "job %zu: cause %s, expected %s", i, why ? why : "(none)",
            bad[i].cause);
    free(why);
  }
  char *after = hget("tally:{default}:taskscores:alice", "sum");
  require(after != NULL && strcmp(before, after) == 0,
          "alice's task score moved: %s -> %s", before, after);
  free(before);
  free(after);
  require(keys_matching("tally:submission:*") == 1,
          "%lld submission hashes, not 1", keys_matching("tally:submission:*"));
  require(keys_matching("tally:*:taskscores:*") == 1, "another participant");
  require(keys_matching("tally:*:pt:*") == 1, "another place");
  redisReply *r = redisCommand(c, "HKEYS tally:{default}:taskscores:alice");
  require(r && r->elements == 1, "a ranking column for a refused task");
  freeReplyObject(r);
  require(td_xlen(c, "tally:public") == 1, "%lld contestant events, not 1",
          td_xlen(c, "tally:public"));
  stop_daemon();
}

/* Restarts the test's server on a loopback port too; returns the port. */
static int restart_on_tcp(void) {
  redisFree(c);
  tr_redis_stop(&server);
  int port = tr_free_port();
  cr_assert_eq(tr_redis_start(&server, port, false), 0);
  c = td_connect(&server);
  return port;
}

static void run_ok(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  cr_assert(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", fmt,
            r ? r->str : c->errstr);
  freeReplyObject(r);
}

/* Issue 10, defect 7: a server with requirepass, and an ACL user limited
 * to tally's keys and channels (the line docs/operations.md gives). */
Test(tallyd_hostile, logs_in_with_a_password_and_as_a_limited_acl_user) {
  int port = restart_on_tcp();
  run_ok("ACL SETUSER tally on >t4lly-pw resetkeys ~tally:* resetchannels "
         "&tally:* +@all -@admin -@dangerous");
  run_ok("CONFIG SET requirepass s3cret-pw");
  char url[128];
  snprintf(url, sizeof(url), "redis://tally:t4lly-pw@127.0.0.1:%d", port);
  const char *const args[] = {"--redis", url, NULL};
  tr_redis_t noserver = server;
  noserver.url[0] = '\0'; /* the URL is in args */
  cr_assert_eq(td_start(&daemon_, &noserver, "d1", args, NULL), 0);
  char ids[50][64];
  td_push_many(c, 50, ids);
  long long got = td_wait_outcomes(c, 50, OUTCOMES_MS);
  require(got == 50, "%lld outcomes of 50 as an ACL user", got);
  require(td_xlen(c, "tally:dead") == 0, "dead letters");
  require(td_check_exactly_once(c, ids, 50) == 0, "not exactly once");
  require(!td_log_has(&daemon_, "t4lly-pw"), "the password is in the log");
  /* The rescore child logs in too, with the password from tallyd's
   * environment, not its arguments. */
  require(log_shows("rescore.done", 20000), "the start-up rescore failed");
  require(!td_log_has(&daemon_, "rescore.failed"), "a rescore failed");
  stop_daemon();

  /* The default user with requirepass, the password from a file. */
  char pwfile[400];
  snprintf(pwfile, sizeof(pwfile), "%s/pw", server.dir);
  td_write_file(server.dir, "pw", "s3cret-pw\n");
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
  const char *const args2[] = {"--redis", url, "--redis-password-file", pwfile,
                               NULL};
  cr_assert_eq(td_start(&daemon_, &noserver, "d1", args2, NULL), 0);
  td_push_many(c, 10, NULL);
  got = td_wait_outcomes(c, 60, OUTCOMES_MS);
  require(got == 60, "%lld outcomes of 60 with a password file", got);
  stop_daemon();
}

/* A wrong password: the cause names the server and the user, never the
 * password, and tallyd backs off rather than reconnecting 12 times a
 * second on each connection. */
Test(tallyd_hostile, says_who_failed_to_log_in_and_backs_off) {
  int port = restart_on_tcp();
  run_ok("CONFIG SET requirepass right-one");
  char url[128];
  snprintf(url, sizeof(url), "redis://tally:wr0ng-pw@127.0.0.1:%d", port);
  const char *const args[] = {"--redis", url, NULL};
  tr_redis_t noserver = server;
  noserver.url[0] = '\0';
  cr_assert_eq(td_start(&daemon_, &noserver, "d1", args, NULL), 0);
  char want[160];
  snprintf(want, sizeof(want),
           "AUTH as user tally on redis://tally@127.0.0.1:%d", port);
  require(log_shows(want, 5000), "no AUTH failure naming server and user");
  run_ok("CONFIG RESETSTAT");
  td_sleep_ms(3000);
  redisReply *r = redisCommand(c, "INFO stats");
  const char *p =
      r && r->str ? strstr(r->str, "total_connections_received:") : NULL;
  long long conns = p ? atoll(p + 27) : -1;
  freeReplyObject(r);
  /* Four connections (reads, writes, and the results API's two), at
   * most 7 attempts each in 3 s of backoff. */
  require(conns >= 0 && conns <= 28,
          "%lld connections in 3 s with a wrong password", conns);
  require(!td_log_has(&daemon_, "wr0ng-pw"), "the password is in the log");
  stop_daemon();
  require(!td_log_has(&daemon_, "wr0ng-pw"), "the password is in the log");
}

/* Issue 10, defect 3: a FIFO, a device, a folder or a huge file among the
 * task configs is refused by name, without blocking the loop: tallyd goes
 * on scoring and stops at once on SIGTERM. */
Test(tallyd_hostile, a_reload_refuses_fifos_devices_and_huge_configs) {
  char dir[400], cmd[1200];
  snprintf(dir, sizeof(dir), "%s/tasks", server.dir);
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           dir);
  cr_assert_eq(system(cmd), 0);
  const char *const args[] = {"--tasks", dir, "--auto-rescore", "false", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  require(log_shows("redis.ready", 10000), "tallyd did not start");

  snprintf(cmd, sizeof(cmd),
           "cd '%s' && mkfifo x.json && ln -s /dev/zero z.json && mkdir "
           "d.json && head -c 5000000 /dev/zero | tr '\\0' ' ' > big.json",
           dir);
  cr_assert_eq(system(cmd), 0);
  td_signal(&daemon_, SIGHUP);
  require(log_shows("old one stays", 10000), "the reload was not refused");
  require(td_log_has(&daemon_, "x.json: not a regular file (a FIFO)"),
          "the FIFO is not named");
  require(td_log_has(&daemon_, "z.json: not a regular file (a device)"),
          "the device is not named");
  require(td_log_has(&daemon_, "d.json: not a regular file (a folder)"),
          "the folder is not named");
  require(td_log_has(&daemon_, "big.json: 5000000 bytes, more than the limit"),
          "the huge config is not named");
  /* Jobs still flow, and SIGTERM ends it at once. */
  td_push_many(c, 20, NULL);
  require(td_wait_outcomes(c, 20, OUTCOMES_MS) == 20, "jobs stopped");
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 5000);
  require(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "tallyd did not stop within 5 s of SIGTERM");
}

/* Two daemons given one consumer name, or one pid file: the second
 * refuses to run, and the first goes on untouched. */
Test(tallyd_hostile, a_second_daemon_with_the_same_consumer_or_pidfile_stops) {
  char pidfile[400];
  snprintf(pidfile, sizeof(pidfile), "%s/tallyd.pid", server.dir);
  const char *const args[] = {"--pidfile", pidfile, "--auto-rescore", "false",
                              NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  require(log_shows("redis.ready", 10000), "tallyd did not start");

  td_daemon_t second;
  memset(&second, 0, sizeof(second));
  const char *const same_pid[] = {"--pidfile", pidfile, NULL};
  cr_assert_eq(td_start(&second, &server, "d2", same_pid, NULL), 0);
  int status = td_wait(&second, 10000);
  if (status == -1)
    td_kill(&second);
  TD_REQUIRE(&second,
             status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0,
             "a second tallyd ran on a locked pid file");
  TD_REQUIRE(&second, td_log_has(&second, "locked by another running tallyd"),
             "the pid file lock is not named");
  FILE *f = fopen(pidfile, "r");
  int pid = 0;
  require(f != NULL && fscanf(f, "%d", &pid) == 1 && pid == daemon_.pid,
          "the first tallyd's pid file is gone or changed");
  fclose(f);

  td_daemon_t third;
  memset(&third, 0, sizeof(third));
  const char *const same_name[] = {"--consumer", "d1", "--auto-rescore",
                                   "false", NULL};
  cr_assert_eq(td_start(&third, &server, "d3", same_name, NULL), 0);
  status = td_wait(&third, 30000);
  if (status == -1)
    td_kill(&third);
  TD_REQUIRE(&third,
             status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0,
             "a second tallyd ran with the same consumer name");
  TD_REQUIRE(&third, td_log_has(&third, "consumer d1 is held by another"),
             "the consumer clash is not named");
  /* The first still scores, and no count moved. */
  td_push_many(c, 10, NULL);
  require(td_wait_outcomes(c, 10, OUTCOMES_MS) == 10, "the first stopped");
  require(td_xlen(c, "tally:dead") == 0, "dead letters");
  stop_daemon();
  require(access(pidfile, F_OK) != 0, "the pid file outlived its tallyd");
}
