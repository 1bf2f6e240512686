/* tallyd as a hostile or unlucky operator runs it, against a real
 * redis-server each: reconnects and restarts that must not use up a job's
 * deliveries, and bad ids that must not reach the contest state. */
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

/* How many clients but this test's are connected. */
static long long other_clients(void) {
  redisReply *r = redisCommand(c, "CLIENT LIST TYPE normal");
  long long lines = 0;
  for (const char *p = r && r->type == REDIS_REPLY_STRING ? r->str : "";
       (p = strchr(p, '\n')) != NULL; p++)
    lines++;
  freeReplyObject(r);
  return lines - 1;
}

/* Kills tallyd's connections once both are up. */
static void kill_connections(void) {
  for (int waited = 0; other_clients() < 2 && waited < 10000; waited += 20)
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
    for (int waited = 0; other_clients() < 2 && waited < 10000; waited += 20)
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
