/* tallyd under faults, against a real redis-server each: workers that
 * crash, hang or write garbage, a poison job, a Redis that dies, refuses,
 * resets or freezes, a broken config on SIGHUP, and a drain on SIGINT. */
#include "support.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Long enough for an ASan build on a loaded 2-core machine; a passing
 * test never waits this long. */
#define OUTCOMES_MS 40000

static tr_redis_t server;
static tr_redis_t logdir; /* a folder for the log when no server runs yet */
static redisContext *c;
static td_daemon_t daemon_;
static char (*ids)[64];

static void setup(void) {
  memset(&server, 0, sizeof(server));
  memset(&logdir, 0, sizeof(logdir));
  memset(&daemon_, 0, sizeof(daemon_));
  c = NULL;
  ids = NULL;
}

static void teardown(void) {
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  if (server.dir[0] != '\0')
    tr_redis_stop(&server);
  if (logdir.dir[0] != '\0')
    tr_redis_stop(&logdir);
  free(ids);
}

TestSuite(tallyd_faults, .init = setup, .fini = teardown, .timeout = 90);

/* Fails the test after printing the daemon's log. */
#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

/* One job a batch slows tallyd down to a few thousand jobs a second, so
 * that a fault lands while jobs flow rather than after the last one. */
static const char *const slow[] = {"--batch", "1", NULL};

static void redis_up(int port, bool aof) {
  cr_assert_eq(tr_redis_start(&server, port, aof), 0);
  c = td_connect(&server);
}

static void start_daemon(const char *const *args, const char *const *env) {
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, env), 0);
}

/* Pushes n small jobs, their ids kept in ids. */
static void push(size_t n) {
  ids = malloc(n * sizeof(*ids));
  cr_assert_not_null(ids);
  td_push_many(c, n, ids);
}

static void wait_outcomes(long long n) {
  long long got = td_wait_outcomes(c, n, OUTCOMES_MS);
  require(got == n, "%lld outcomes of %lld", got, n);
}

/* Drains the daemon with sig and checks that it exits 0. */
static void stop_daemon(int sig) {
  td_signal(&daemon_, sig);
  int status = td_wait(&daemon_, 20000);
  require(status != -1, "tallyd did not stop after signal %d", sig);
  require(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "tallyd stopped with status %#x", status);
}

/* Checks that each of the n jobs got exactly one outcome, and that
 * nothing is left pending or in the jobs stream. */
static void check_all_done(size_t n) {
  int problems = td_check_exactly_once(c, ids, n);
  require(problems == 0, "%d problems with exactly once", problems);
  long long pending = td_pending(c);
  require(pending == 0, "%lld entries still pending", pending);
  long long left = td_xlen(c, "tally:jobs");
  require(left == 0, "%lld entries left in the jobs stream", left);
}

/* The score in the result of the job with entry id, or -1. */
static double score_of(const char *id) {
  cJSON *r = td_result_of(c, id);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "score");
  double score = cJSON_IsNumber(s) ? s->valuedouble : -1;
  cJSON_Delete(r);
  return score;
}

/* Waits up to timeout_ms for text in the daemon's log. */
static bool log_shows(const char *text, int timeout_ms) {
  for (int waited = 0;; waited += 50) {
    if (td_log_has(&daemon_, text))
      return true;
    if (waited >= timeout_ms)
      return false;
    td_sleep_ms(50);
  }
}

/* The CPU time a process has used, in seconds, from /proc/PID/stat. */
static double cpu_seconds(pid_t pid) {
  char buf[1024];
  const char *p = ts_proc_stat(pid, buf, sizeof(buf));
  cr_assert_not_null(p, "no /proc/%d/stat", (int)pid);
  /* utime and stime are fields 14 and 15, after the state (field 3). */
  unsigned long utime = 0, stime = 0;
  int got = sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                   &utime, &stime);
  cr_assert_eq(got, 2, "cannot parse /proc/%d/stat", (int)pid);
  return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Writes text to path, replacing it. */
static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Workers. A fault hook fires in every worker process the pool starts,
 * so a worker breaks every K jobs, and now and then a retried job is the
 * one a fresh worker breaks on: --max-deliveries 10 keeps such bad luck
 * from dead-lettering it, which is not what these tests are about. */
static const char *const patient[] = {"--max-deliveries", "10", NULL};

Test(tallyd_faults, retries_the_batch_of_a_worker_that_crashes_mid_batch) {
  redis_up(0, false);
  push(500);
  const char *const env[] = {"TALLY_WORKER_FAULT=crash",
                             "TALLY_WORKER_FAULT_AFTER=70", NULL};
  start_daemon(patient, env);
  wait_outcomes(500);
  stop_daemon(SIGTERM);
  check_all_done(500);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
  require(td_log_has(&daemon_, "killed by signal"), "no crash in the log");
  require(td_log_has(&daemon_, "retrying"), "no retry in the log");
}

Test(tallyd_faults, kills_a_worker_that_hangs_and_retries_its_jobs) {
  redis_up(0, false);
  push(200);
  const char *const args[] = {"--job-timeout",    "500", "--batch", "4",
                              "--max-deliveries", "10",  NULL};
  const char *const env[] = {"TALLY_WORKER_FAULT=hang",
                             "TALLY_WORKER_FAULT_AFTER=60", NULL};
  start_daemon(args, env);
  wait_outcomes(200);
  stop_daemon(SIGTERM);
  check_all_done(200);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
  require(td_log_has(&daemon_, "timed out"), "no timeout in the log");
  require(td_log_has(&daemon_, "retrying"), "no retry in the log");
}

Test(tallyd_faults, replaces_a_worker_that_writes_garbage_and_retries) {
  redis_up(0, false);
  push(500);
  const char *const env[] = {"TALLY_WORKER_FAULT=garbage",
                             "TALLY_WORKER_FAULT_AFTER=70", NULL};
  start_daemon(patient, env);
  wait_outcomes(500);
  stop_daemon(SIGTERM);
  check_all_done(500);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
  require(td_log_has(&daemon_, "broke the framing"),
          "no framing error in the log");
  require(td_log_has(&daemon_, "retrying"), "no retry in the log");
}

Test(tallyd_faults, dead_letters_a_poison_job_after_three_deliveries) {
  redis_up(0, false);
  ids = malloc(301 * sizeof(*ids));
  td_push_many(c, 150, ids);
  td_push(c,
          "{\"submission\":\"sub-poison\",\"task\":\"sum\",\"participant\":"
          "\"p0\",\"evaluations\":{\"0\":1,\"1\":0.5,\"2\":1,\"3\":0},"
          "\"note\":\"poison-marker\"}",
          ids[150]);
  td_push_many(c, 150, ids + 151);
  const char *const env[] = {"TALLY_WORKER_FAULT=crash",
                             "TALLY_WORKER_FAULT_MATCH=poison-marker", NULL};
  start_daemon(NULL, env);
  wait_outcomes(301);
  stop_daemon(SIGTERM);
  check_all_done(301);
  require(td_xlen(c, "tally:dead") == 1, "%lld dead letters, not 1",
          td_xlen(c, "tally:dead"));
  char *deliveries = td_dead_field(c, ids[150], "deliveries");
  char *why = td_dead_field(c, ids[150], "error");
  char signal_text[64];
  snprintf(signal_text, sizeof(signal_text), "killed by signal %d", SIGABRT);
  bool ok = deliveries != NULL && strcmp(deliveries, "3") == 0 && why != NULL &&
            strstr(why, "3 deliveries") != NULL &&
            strstr(why, signal_text) != NULL;
  if (!ok)
    fprintf(stderr, "deliveries %s, error %s\n", deliveries, why);
  free(deliveries);
  free(why);
  require(ok, "the dead letter names 3 deliveries and the crash");
}

/* Redis. */

Test(tallyd_faults, finishes_exactly_once_after_redis_is_killed_and_restarted) {
  redis_up(0, true);
  push(3000);
  start_daemon(slow, NULL);
  long long before = td_wait_outcomes(c, 1000, OUTCOMES_MS);
  require(before >= 1000 && before < 3000, "%lld outcomes before the kill",
          before);
  redisFree(c);
  c = NULL;
  tr_redis_kill(&server);
  require(log_shows("redis.down", 5000), "the daemon saw no loss");
  td_sleep_ms(300);
  cr_assert_eq(tr_redis_restart(&server), 0);
  c = td_connect(&server);
  wait_outcomes(3000);
  stop_daemon(SIGTERM);
  check_all_done(3000);
}

/* Starts tallyd on a loopback port where nothing listens, its log in a
 * folder of its own. Returns the port. */
static int start_refused(void) {
  snprintf(logdir.dir, sizeof(logdir.dir), "/tmp/tally-test-XXXXXX");
  cr_assert_not_null(mkdtemp(logdir.dir));
  int port = tr_free_port();
  cr_assert_gt(port, 0);
  snprintf(logdir.url, sizeof(logdir.url), "redis://127.0.0.1:%d", port);
  cr_assert_eq(td_start(&daemon_, &logdir, "d1", NULL, NULL), 0);
  return port;
}

Test(tallyd_faults, waits_for_a_redis_that_refuses_without_spinning) {
  int port = start_refused();
  td_sleep_ms(2000);
  require(td_wait(&daemon_, 0) == -1, "tallyd exited while Redis refused");
  double cpu = cpu_seconds(daemon_.pid);
  require(cpu < 0.5, "tallyd used %.2f s of CPU in 2 s", cpu);
  redis_up(port, false);
  push(200);
  wait_outcomes(200);
  stop_daemon(SIGTERM);
  check_all_done(200);
}

/* The refused connects are retried, and each says why in the log. */
Test(tallyd_faults, logs_why_it_cannot_connect_while_redis_refuses) {
  start_refused();
  require(log_shows("Connection refused", 3000),
          "no refused connect in the log");
}

Test(tallyd_faults, reconnects_after_redis_resets_its_connections) {
  redis_up(0, false);
  push(2000);
  start_daemon(slow, NULL);
  for (int round = 1; round <= 2; round++) {
    long long got = td_wait_outcomes(c, 300 * round, OUTCOMES_MS);
    require(got >= 300 * round && got < 2000, "%lld outcomes at reset %d", got,
            round);
    /* Both of tallyd's connections are up (again). */
    for (int waited = 0; td_other_clients(c) < 2 && waited < 10000;
         waited += 20)
      td_sleep_ms(20);
    redisReply *r = redisCommand(c, "CLIENT KILL TYPE normal");
    require(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 2,
            "CLIENT KILL killed fewer than tallyd's two connections");
    freeReplyObject(r);
  }
  wait_outcomes(2000);
  stop_daemon(SIGTERM);
  check_all_done(2000);
  require(td_log_has(&daemon_, "redis.down"), "no disconnect logged");
  require(td_log_has(&daemon_, "reconnecting"), "no reconnect logged");
}

Test(tallyd_faults, resets_a_frozen_redis_and_finishes_once_it_thaws) {
  redis_up(0, false);
  push(2000);
  start_daemon(slow, NULL);
  long long got = td_wait_outcomes(c, 300, OUTCOMES_MS);
  require(got >= 300 && got < 2000, "%lld outcomes before the freeze", got);
  /* Past both watchdogs: 5 s for a command, 1 + 5 s for a read. */
  tr_redis_signal(&server, SIGSTOP);
  bool noticed = log_shows("not responding", 9000);
  td_sleep_ms(noticed ? 2500 : 0);
  tr_redis_signal(&server, SIGCONT);
  require(noticed, "the watchdog did not fire while Redis was stopped");
  wait_outcomes(2000);
  stop_daemon(SIGTERM);
  check_all_done(2000);
}

/* Signals. */

/* sum.json broken (a negative parameter), and fixed with a parameter of
 * 21 where examples/tasks has 10.5. */
static const char sum_broken[] =
    "{\"name\":\"sum\",\"score_type\":\"Sum\",\"score_type_parameters\":-1,"
    "\"testcases\":{\"0\":true}}";
static const char sum_doubled[] =
    "{\"name\":\"sum\",\"score_type\":\"Sum\",\"score_type_parameters\":21,"
    "\"testcases\":{\"0\":false,\"1\":true,\"2\":false,\"3\":false},"
    "\"score_precision\":1}";

/* Copies examples/tasks into the server's folder; dir receives the copy
 * and sum its sum.json (both 400 bytes). */
static void copy_tasks(char *dir, char *sum) {
  char cmd[1000];
  snprintf(dir, 400, "%s/tasks", server.dir);
  snprintf(sum, 400, "%s/sum.json", dir);
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           dir);
  cr_assert_eq(system(cmd), 0);
}

Test(tallyd_faults, keeps_the_old_config_when_a_reload_finds_errors) {
  redis_up(0, false);
  char dir[400], sum[400];
  copy_tasks(dir, sum);
  const char *const args[] = {"--tasks", dir, NULL};
  start_daemon(args, NULL);
  ids = malloc(41 * sizeof(*ids));

  /* Job 0 of td_push_many: Sum 10.5 x (1 + 0.5), at precision 1. */
  td_push_many(c, 1, ids);
  wait_outcomes(1);
  double before = score_of(ids[0]);
  require(before > 15.7 && before < 15.9, "score %g before the reload", before);

  write_file(sum, sum_broken);
  td_signal(&daemon_, SIGHUP);
  require(log_shows("old one stays", 10000), "no rejection logged");
  require(td_log_has(&daemon_, "sum.json: score_type_parameters"),
          "the error does not name the file and key");
  td_push_many(c, 20, ids + 1);
  wait_outcomes(21);
  double kept = score_of(ids[1]);
  require(kept == before, "score %g with the old config kept", kept);

  write_file(sum, sum_doubled);
  td_signal(&daemon_, SIGHUP);
  require(log_shows("replaced with the new config", 10000), "no reload logged");
  td_push_many(c, 20, ids + 21);
  wait_outcomes(41);
  double after = score_of(ids[21]);
  require(after == 31.5, "score %g with the new config", after);
  stop_daemon(SIGTERM);
  check_all_done(41);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
}

/* A worker started after a rejected reload (here, after a crash) loads
 * the old configs, from tallyd's snapshot, not the broken files on disk. */
Test(tallyd_faults, keeps_the_old_config_for_workers_started_later) {
  redis_up(0, false);
  char dir[400], sum[400];
  copy_tasks(dir, sum);
  const char *const args[] = {"--tasks", dir, NULL};
  const char *const env[] = {"TALLY_WORKER_FAULT=crash",
                             "TALLY_WORKER_FAULT_AFTER=70", NULL};
  start_daemon(args, env);
  require(log_shows("redis.ready", 10000), "tallyd did not start");
  write_file(sum, sum_broken);
  td_signal(&daemon_, SIGHUP);
  require(log_shows("old one stays", 10000), "no rejection logged");
  push(300);
  wait_outcomes(300);
  stop_daemon(SIGTERM);
  check_all_done(300);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
}

Test(tallyd_faults, drains_on_sigint_and_leaves_no_process_behind) {
  redis_up(0, false);
  push(2000);
  start_daemon(slow, NULL);
  long long got = td_wait_outcomes(c, 300, OUTCOMES_MS);
  require(got >= 300 && got < 2000, "%lld outcomes before SIGINT", got);
  stop_daemon(SIGINT);
  require(td_log_has(&daemon_, "Interrupt: draining"), "no drain logged");
  require(td_log_has(&daemon_, "drained"), "the drain did not finish");
  int left = td_marked(&daemon_);
  require(left == 0, "%d processes of tallyd's are left", left);
  /* Every job is posted, or still in the stream for the next daemon. */
  long long total = td_xlen(c, "tally:results") + td_xlen(c, "tally:dead") +
                    td_xlen(c, "tally:jobs");
  require(total == 2000, "%lld jobs accounted for, not 2000", total);
  require(td_xlen(c, "tally:dead") == 0, "a job was dead-lettered");
}

/* How many times the daemon's log says text. */
static int log_count(const char *text) {
  FILE *f = fopen(daemon_.log, "r");
  char *log = calloc(1, 1 << 22);
  if (f != NULL) {
    log[fread(log, 1, (1 << 22) - 1, f)] = '\0';
    fclose(f);
  }
  int n = 0;
  for (const char *p = log; (p = strstr(p, text)) != NULL; p++)
    n++;
  free(log);
  return n;
}

/* The entries of the results stream in field, as one string. */
static char *results_in(const char *field) {
  redisReply *r = redisCommand(c, "XRANGE tally:results - +");
  size_t cap = 4096, len = 0;
  char *out = calloc(1, cap);
  for (size_t i = 0; r && i < r->elements; i++) {
    redisReply *f = r->element[i]->element[1];
    for (size_t k = 0; k + 1 < f->elements; k += 2)
      if (strcmp(f->element[k]->str, field) == 0 &&
          len + f->element[k + 1]->len + 2 < cap)
        len += (size_t)snprintf(out + len, cap - len, "%s\n",
                                f->element[k + 1]->str);
  }
  freeReplyObject(r);
  return out;
}

Test(tallyd_faults,
     keeps_a_token_job_whose_submission_read_fails_until_it_works) {
  redis_up(0, false);
  /* The submission's record is not a hash: reading its job fails. */
  freeReplyObject(redisCommand(c, "SET tally:submission:s-9 broken"));
  start_daemon(NULL, NULL);
  char id[64];
  td_push(c, "{\"type\":\"token\",\"submission\":\"s-9\"}", id);
  /* The connection is set up again and the read retried, not lost. */
  const char *failed = "write connection: the read of a submission's job "
                       "failed: WRONGTYPE";
  int n = 0;
  for (int waited = 0; (n = log_count(failed)) < 2 && waited < 20000;
       waited += 50)
    td_sleep_ms(50);
  require(n >= 2, "the read failed %d times, not twice", n);
  freeReplyObject(redisCommand(c, "DEL tally:submission:s-9"));
  wait_outcomes(1);
  char *tokens = results_in("token");
  char want[160];
  snprintf(want, sizeof(want),
           "{\"submission\":\"s-9\",\"id\":\"%s\",\"state\":\"pending\"}\n",
           id);
  require(strcmp(tokens, want) == 0, "token entries: %s", tokens);
  free(tokens);
  /* Its submission comes: the token kept takes effect. */
  td_push(c,
          "{\"submission\":\"s-9\",\"participant\":\"p\",\"task\":\"sum\","
          "\"evaluations\":{\"0\":1,\"1\":1,\"2\":1,\"3\":1}}",
          NULL);
  wait_outcomes(2);
  redisReply *r = redisCommand(c, "HGET tally:submission:s-9 tokened");
  require(r && r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0,
          "s-9 is not tokened");
  freeReplyObject(r);
  require(td_pending(c) == 0, "entries left pending");
  stop_daemon(SIGTERM);
}
