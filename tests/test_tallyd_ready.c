/* Readiness and participant tokens across Redis's own states (issue 24,
 * defects 1 and 2), against a real redis-server: a Redis that answers
 * LOADING for seconds after tallyd starts, a replica promoted under
 * tallyd, restarts on a populated data folder, and a revoked secret. Each
 * first read of the results API is asked again until it succeeds; the
 * secret is read again every second. */
#include "cli_fixture.h"
#include "daemon/embedded.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static char cwd[64];

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  memset(&daemon_, 0, sizeof(daemon_));
  tc_setup(cwd, sizeof(cwd), "ready");
}

static void teardown(void) {
  td_kill(&daemon_);
  tc_teardown();
  tr_redis_stop(&server);
}

TestSuite(tallyd_ready, .init = setup, .fini = teardown, .timeout = 120);

/* The status of GET path (with a bearer token, or none). */
static int status_of(int port, const char *path, const char *token) {
  char extra[200] = "";
  if (token != NULL)
    snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s'", token);
  td_http_t r = td_http(server.dir, port, path, extra);
  free(r.body);
  return r.status;
}

/* Waits up to ms for GET path to answer want. */
static bool becomes(int port, const char *path, const char *token, int want,
                    int ms) {
  for (int waited = 0; waited < ms; waited += 100) {
    if (status_of(port, path, token) == want)
      return true;
    td_sleep_ms(100);
  }
  return false;
}

/* Waits up to ms for text in d's log. */
static bool log_shows(const td_daemon_t *d, const char *text, int ms) {
  for (int waited = 0; waited < ms; waited += 50) {
    if (td_log_has(d, text))
      return true;
    td_sleep_ms(50);
  }
  return false;
}

/* `tally token --participant who` on url, into out (65 bytes). */
static void token_of(const char *url, const char *who, char *out) {
  const char *args[] = {"token", "--redis", url, "--participant", who, NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  t.out[strcspn(t.out, "\n")] = '\0';
  cr_assert_eq(strlen(t.out), 64, "%s", t.out);
  strcpy(out, t.out);
  tc_run_free(&t);
}

/* One scored job of alice's in contest c1, so that her endpoint has
 * something to show: scored by a tallyd of its own when own is set. */
static void score_one(redisContext *c, bool own) {
  td_daemon_t d0;
  memset(&d0, 0, sizeof(d0));
  if (own)
    cr_assert_eq(td_start(&d0, &server, "d0", NULL, NULL), 0);
  td_push(c,
          "{\"submission\": \"s1\", \"task\": \"sum\", \"participant\": "
          "\"alice\", \"contest\": \"c1\", \"evaluations\": {\"0\": 1, \"1\": "
          "1, \"2\": 1, \"3\": 1}}",
          NULL);
  cr_assert_eq(td_wait_outcomes(c, 1, 20000), 1);
  if (own)
    td_kill(&d0);
}

/* Starts redis-server in server's folder as tr_redis_start does, but
 * with args after and without waiting for it to load its data: returns
 * once the socket accepts a connection. */
static void spawn_loading(const char *const *extra) {
  const char *args[32];
  int n = 0;
  const char *base[] = {
      "--port",       "0",  "--dir",       server.dir, "--save", "",
      "--appendonly", "no", "--daemonize", "no",       NULL};
  for (int i = 0; base[i] != NULL; i++)
    args[n++] = base[i];
  for (int i = 0; extra[i] != NULL; i++)
    args[n++] = extra[i];
  args[n] = NULL;
  unlink(server.sock);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0)
    tr_redis_exec(NULL, server.sock, args, NULL);
  server.pid = pid;
  for (int i = 0; i < 500; i++) {
    redisContext *c = redisConnectUnix(server.sock);
    bool up = c != NULL && c->err == 0;
    if (c != NULL)
      redisFree(c);
    if (up)
      return;
    td_sleep_ms(10);
  }
  cr_assert_fail("redis-server did not open its socket");
}

/* Defect 1: tallyd starts while Redis answers LOADING for seconds (a
 * key-load-delay stretches the load of a populated data set). The first
 * reads of the results API (the secret, where the event stream ends)
 * fail with LOADING and are asked again: /readyz turns 200 and a
 * participant's token opens their endpoint. Before, the API asked once
 * and stayed at 503. */
Test(tallyd_ready, becomes_ready_after_redis_answers_loading) {
  redisContext *c = td_connect(&server);
  score_one(c, true);
  char token[80];
  token_of(server.url, "alice", token);
  /* Enough keys that loading takes a few seconds at 200 us each. */
  redisReply *r = redisCommand(
      c, "EVAL %s 0",
      "for i = 1, 15000 do redis.call('SET', 'filler:' .. i, 'x') end");
  cr_assert(r != NULL && r->type != REDIS_REPLY_ERROR);
  freeReplyObject(r);
  r = redisCommand(c, "SAVE");
  freeReplyObject(r);
  redisFree(c);
  tr_redis_kill(&server);
  const char *slow[] = {"--key-load-delay", "200",
                        "--loading-process-events-interval-bytes", "1024",
                        NULL};
  spawn_loading(slow);
  /* Loading, as tallyd starts. */
  c = redisConnectUnix(server.sock);
  r = redisCommand(c, "PING");
  cr_assert(r != NULL && r->type == REDIS_REPLY_ERROR &&
                strncmp(r->str, "LOADING", 7) == 0,
            "the server is not loading");
  freeReplyObject(r);
  redisFree(c);
  cr_assert_eq(td_start(&daemon_, &server, "d1", NULL, NULL), 0);
  int port = td_http_port(&daemon_);
  TD_REQUIRE(&daemon_, log_shows(&daemon_, "LOADING", 10000),
             "tallyd never saw Redis loading");
  TD_REQUIRE(&daemon_, becomes(port, "/readyz", NULL, 200, 40000),
             "never ready after Redis loaded");
  TD_REQUIRE(
      &daemon_,
      becomes(port, "/api/contests/c1/participants/alice", token, 200, 5000),
      "the participant's token is not accepted");
  cr_expect_eq(status_of(port, "/api/contests/c1/participants/alice",
                         "0000000000000000000000000000000000000000000000000000"
                         "000000000000"),
               401);
}

/* Defect 1, on a failover: tallyd follows a replica (its writes and the
 * secret's script refused, READONLY) that is then promoted. Within
 * seconds the participant's token opens the endpoint. */
Test(tallyd_ready, a_promoted_replica_serves_participants_tokens) {
  /* The primary, on a port the replica can follow. */
  tr_redis_kill(&server);
  server.port = tr_free_port();
  cr_assert_eq(tr_redis_restart(&server), 0);
  redisContext *c = td_connect(&server);
  score_one(c, true);
  char token[80];
  token_of(server.url, "alice", token);
  redisFree(c);
  /* The replica, in a folder of its own. */
  tr_redis_t replica;
  cr_assert_eq(tr_redis_start(&replica, 0, false), 0);
  redisContext *rc = redisConnectUnix(replica.sock);
  redisReply *r = redisCommand(rc, "REPLICAOF 127.0.0.1 %d", server.port);
  freeReplyObject(r);
  bool synced = false;
  for (int i = 0; i < 100 && !synced; i++) {
    r = redisCommand(rc, "GET tally:secret");
    synced = r != NULL && r->type == REDIS_REPLY_STRING;
    freeReplyObject(r);
    if (!synced)
      td_sleep_ms(100);
  }
  cr_assert(synced, "the replica never got the secret");
  cr_assert_eq(td_start(&daemon_, &replica, "d1", NULL, NULL), 0);
  int port = td_http_port(&daemon_);
  td_sleep_ms(1500);
  /* The failover: the primary dies, the replica is promoted. */
  tr_redis_kill(&server);
  r = redisCommand(rc, "REPLICAOF NO ONE");
  freeReplyObject(r);
  redisFree(rc);
  bool ok =
      becomes(port, "/api/contests/c1/participants/alice", token, 200, 15000);
  bool ready = becomes(port, "/readyz", NULL, 200, 15000);
  td_kill(&daemon_);
  tr_redis_stop(&replica);
  cr_expect(ok, "the token is refused after the promotion");
  cr_expect(ready, "never ready after the promotion");
}

/* Defect 1: tallyd restarted again and again on its own populated data
 * folder (the embedded Redis loads it each time) becomes ready every
 * time. */
Test(tallyd_ready, restarts_on_a_populated_data_folder_always_become_ready) {
  char data[400];
  snprintf(data, sizeof(data), "%s/data", server.dir);
  tr_redis_t none = server;
  none.url[0] = '\0';
  const char *args[] = {"--data-dir", data, NULL};
  for (int round = 0; round < 8; round++) {
    /* A log of its own each time: td_http_port reads the port from it. */
    memset(&daemon_, 0, sizeof(daemon_));
    char name[16];
    snprintf(name, sizeof(name), "emb%d", round);
    cr_assert_eq(td_start(&daemon_, &none, name, args, NULL), 0);
    int port = td_http_port(&daemon_);
    bool ready = becomes(port, "/readyz", NULL, 200, 30000);
    if (round == 0) {
      /* Populate it once: events and filler enough to take a moment to
       * load. */
      char sock[600];
      snprintf(sock, sizeof(sock), "%s/%s", data, TALLY_EMBEDDED_SOCK);
      redisContext *c = redisConnectUnix(sock);
      cr_assert(c != NULL && c->err == 0, "the embedded Redis's socket");
      redisReply *r = redisCommand(
          c, "EVAL %s 0",
          "for i = 1, 200000 do redis.call('SET', 'filler:' .. i, 'x') end "
          "for i = 1, 2000 do redis.call('XADD', 'tally:public', '*', "
          "'event', '{}') end");
      cr_assert(r != NULL && r->type != REDIS_REPLY_ERROR);
      freeReplyObject(r);
      redisFree(c);
    }
    if (!ready) {
      td_http_t why = td_http(server.dir, port, "/readyz", "");
      cr_log_error("round %d: /readyz says %s", round, why.body);
      free(why.body);
    }
    TD_REQUIRE(&daemon_, ready, "round %d: never ready", round);
    /* tallyd's own server starting (refused, then loading) is no fault:
     * nothing at warn level (issue 24). */
    cr_expect_not(td_log_has(&daemon_, " warn "),
                  "round %d: a warning at start", round);
    td_signal(&daemon_, SIGTERM);
    int st = td_wait(&daemon_, 20000);
    cr_assert(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "round %d: tallyd did not stop cleanly", round);
  }
}

/* Defect 2: DEL tally:secret (the documented revocation) holds within
 * seconds: the old token is refused, the new one from tally token
 * accepted, without a restart, on both of two tallyds. */
Test(tallyd_ready, a_revoked_secret_holds_within_seconds_on_every_tallyd) {
  redisContext *c = td_connect(&server);
  td_daemon_t second;
  memset(&second, 0, sizeof(second));
  cr_assert_eq(td_start(&daemon_, &server, "d1", NULL, NULL), 0);
  cr_assert_eq(td_start(&second, &server, "d2", NULL, NULL), 0);
  score_one(c, false);
  int ports[2] = {td_http_port(&daemon_), td_http_port(&second)};
  char old[80], fresh[80];
  token_of(server.url, "alice", old);
  const char *path = "/api/contests/c1/participants/alice";
  for (int i = 0; i < 2; i++)
    cr_assert(becomes(ports[i], path, old, 200, 10000), "tallyd %d", i);
  redisReply *r = redisCommand(c, "DEL tally:secret");
  freeReplyObject(r);
  token_of(server.url, "alice", fresh);
  cr_assert_str_neq(old, fresh, "the secret was not made anew");
  bool ok[2][2];
  for (int i = 0; i < 2; i++) {
    ok[i][0] = becomes(ports[i], path, old, 401, 3000);
    ok[i][1] = becomes(ports[i], path, fresh, 200, 3000);
  }
  td_kill(&second);
  redisFree(c);
  for (int i = 0; i < 2; i++) {
    cr_expect(ok[i][0], "tallyd %d still takes the revoked token", i);
    cr_expect(ok[i][1], "tallyd %d refuses the new token", i);
  }
  cr_expect(td_log_has(&daemon_, "secret changed"), "not logged");
}
