/* The libuv glue for hiredis against a real redis-server: commands,
 * refused and reset connections, a frozen server, and a restart. */
#include "redis/redis.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct probe_s {
  int ups;
  int downs;
  int replies;
  int failed;
  char last[256];
  char down_why[256];
} probe_t;

static uv_loop_t loop;
static tally_redis_t conn;
static probe_t probe;
static tr_redis_t server;

static void on_up(tally_redis_t *r) {
  (void)r;
  probe.ups++;
}

static void on_down(tally_redis_t *r, const char *why) {
  (void)r;
  probe.downs++;
  snprintf(probe.down_why, sizeof(probe.down_why), "%s", why);
}

static void on_reply(tally_redis_t *r, redisReply *reply, void *privdata) {
  (void)privdata;
  if (reply == NULL) {
    probe.failed++;
    snprintf(probe.last, sizeof(probe.last), "%s", r->why);
    return;
  }
  probe.replies++;
  snprintf(probe.last, sizeof(probe.last), "%s", reply->str ? reply->str : "");
}

/* Runs the loop until *flag reaches want or ms pass. */
static bool run_until(const int *flag, int want, uint64_t ms) {
  uint64_t end = uv_now(&loop) + ms;
  while (*flag < want && uv_now(&loop) < end) {
    uv_run(&loop, UV_RUN_NOWAIT);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    uv_update_time(&loop);
  }
  return *flag >= want;
}

static void open_conn(const char *url) {
  char err[256];
  memset(&probe, 0, sizeof(probe));
  cr_assert_eq(uv_loop_init(&loop), 0);
  cr_assert_eq(tally_redis_init(&loop, &conn, url, err, sizeof(err)), 0, "%s",
               err);
  conn.on_up = on_up;
  conn.on_down = on_down;
  conn.backoff_min_ms = 20;
  conn.backoff_max_ms = 200;
  tally_redis_start(&conn);
}

static void close_conn(void) {
  tally_redis_close(&conn, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_expect_eq(uv_loop_close(&loop), 0, "the loop closes cleanly");
}

static void ping(void) {
  const char *argv[] = {"PING"};
  size_t lens[] = {4};
  cr_assert_eq(tally_redis_command(&conn, 1000, on_reply, NULL, 1, argv, lens),
               0);
}

static void start_server(void) {
  cr_assert_eq(tr_redis_start(&server, tr_free_port(), false), 0);
}

static void stop_server(void) {
  tr_redis_stop(&server);
}

TestSuite(redis, .init = start_server, .fini = stop_server, .timeout = 30);

Test(redis, runs_a_command_over_a_unix_socket) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  ping();
  cr_assert(run_until(&probe.replies, 1, 2000));
  cr_expect_str_eq(probe.last, "PONG");
  close_conn();
}

Test(redis, runs_a_command_over_tcp_and_selects_the_database) {
  char url[64];
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d/3", server.port);
  open_conn(url);
  cr_assert(run_until(&probe.ups, 1, 2000), "%s", conn.why);
  const char *argv[] = {"CLIENT", "INFO"};
  size_t lens[] = {6, 4};
  cr_assert_eq(tally_redis_command(&conn, 1000, on_reply, NULL, 2, argv, lens),
               0);
  cr_assert(run_until(&probe.replies, 1, 2000));
  cr_expect(strstr(probe.last, "db=3") != NULL, "%s", probe.last);
  close_conn();
}

/* What a transaction's callback got: the reply's type, its element count
 * and its last element's text (or the error). */
static int tx_type, tx_done;
static size_t tx_elements;
static char tx_text[256];

static void on_tx(tally_redis_t *r, redisReply *reply, void *privdata) {
  (void)r;
  (void)privdata;
  tx_done++;
  tx_type = reply ? reply->type : -1;
  tx_elements = reply && reply->type == REDIS_REPLY_ARRAY ? reply->elements : 0;
  const redisReply *last = reply;
  if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements > 0)
    last = reply->element[reply->elements - 1];
  snprintf(tx_text, sizeof(tx_text), "%s", last && last->str ? last->str : "");
}

/* Sends MULTI, SET k v, INCR n, GET k, EXEC. */
static int send_tx(const char *v) {
  const char *set[] = {"SET", "k", v}, *incr[] = {"INCR", "n"},
             *get[] = {"GET", "k"};
  size_t set_len[] = {3, 1, strlen(v)}, incr_len[] = {4, 1}, get_len[] = {3, 1};
  const int argc[] = {3, 2, 2};
  const char *const *argv[] = {set, incr, get};
  const size_t *const lens[] = {set_len, incr_len, get_len};
  tx_done = 0;
  return tally_redis_transaction(&conn, 1000, on_tx, NULL, 3, argc, argv, lens);
}

Test(redis, runs_a_transaction_with_one_callback_for_exec) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  cr_assert_eq(send_tx("body"), 0);
  cr_assert(run_until(&tx_done, 1, 2000));
  cr_expect_eq(tx_type, REDIS_REPLY_ARRAY);
  cr_expect_eq(tx_elements, 3, "one reply per command, in order");
  cr_expect_str_eq(tx_text, "body");
  /* The connection goes on as before. */
  ping();
  cr_assert(run_until(&probe.replies, 1, 2000));
  cr_expect_str_eq(probe.last, "PONG");
  close_conn();
}

Test(redis, reports_the_refusal_of_a_queued_command_not_execabort) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  /* A full Redis refuses SET when it is queued, which aborts EXEC. */
  redisContext *c = redisConnectUnix(server.sock);
  cr_assert(c != NULL && c->err == 0);
  freeReplyObject(redisCommand(c, "CONFIG SET maxmemory 1"));
  cr_assert_eq(send_tx("body"), 0);
  cr_assert(run_until(&tx_done, 1, 2000));
  cr_expect_eq(tx_type, REDIS_REPLY_ERROR);
  cr_expect(strncmp(tx_text, "OOM", 3) == 0, "%s", tx_text);
  freeReplyObject(redisCommand(c, "CONFIG SET maxmemory 0"));
  /* Nothing of it ran, and the connection still works. */
  redisReply *n = redisCommand(c, "EXISTS k n");
  cr_expect_eq(n->integer, 0);
  freeReplyObject(n);
  redisFree(c);
  cr_assert_eq(send_tx("again"), 0);
  cr_assert(run_until(&tx_done, 1, 2000));
  cr_expect_eq(tx_type, REDIS_REPLY_ARRAY);
  cr_expect_str_eq(tx_text, "again");
  close_conn();
}

Test(redis, fails_a_transaction_once_when_the_connection_is_lost) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  tr_redis_signal(&server, SIGSTOP);
  cr_assert_eq(send_tx("body"), 0);
  tally_redis_close(&conn, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_expect_eq(tx_done, 1, "the callback runs once");
  cr_expect_eq(tx_type, -1, "without a reply");
  cr_expect_eq(uv_loop_close(&loop), 0);
  tr_redis_signal(&server, SIGCONT);
}

Test(redis, sends_no_transaction_while_down) {
  open_conn(server.url);
  tx_done = 0;
  /* Not connected yet: nothing is sent, and the callback never runs. */
  cr_expect_neq(send_tx("body"), 0);
  cr_assert(run_until(&probe.ups, 1, 2000));
  cr_expect_eq(tx_done, 0);
  close_conn();
}

Test(redis, refuses_host_names_and_bad_urls) {
  char err[256];
  uv_loop_t l;
  tally_redis_t r;
  uv_loop_init(&l);
  cr_expect_neq(
      tally_redis_init(&l, &r, "redis://localhost:6379", err, sizeof(err)), 0);
  cr_expect(strstr(err, "host names") != NULL, "%s", err);
  cr_expect_neq(tally_redis_init(&l, &r, "http://x", err, sizeof(err)), 0);
  cr_expect_neq(tally_redis_init(&l, &r, "unix://relative", err, sizeof(err)),
                0);
  cr_expect_eq(uv_loop_close(&l), 0);
}

Test(redis, retries_a_refused_connection_with_backoff_without_spinning) {
  char url[64];
  int port = tr_free_port();
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
  open_conn(url);
  int never = 0;
  run_until(&never, 1, 1000);
  cr_expect_eq(probe.ups, 0);
  /* Backoff from 20 ms doubling to 200 ms: a handful of tries a second,
   * neither one (a hang) nor hundreds (a spin). */
  cr_expect_geq(conn.attempts, 3, "attempts: %llu",
                (unsigned long long)conn.attempts);
  cr_expect_leq(conn.attempts, 40, "attempts: %llu",
                (unsigned long long)conn.attempts);
  cr_expect(strstr(conn.why, "refused") != NULL, "why: %s", conn.why);
  close_conn();
}

Test(redis, retries_a_missing_unix_socket_until_the_server_appears) {
  char url[400];
  snprintf(url, sizeof(url), "unix://%s/nothing.sock", server.dir);
  open_conn(url);
  int never = 0;
  run_until(&never, 1, 300);
  cr_expect_eq(probe.ups, 0);
  cr_expect_geq(conn.attempts, 2);
  close_conn();
}

Test(redis, runs_the_disconnect_path_on_a_connection_reset) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  cr_assert_geq(tr_redis_int(&server, "CLIENT KILL TYPE normal SKIPME yes"), 1);
  cr_assert(run_until(&probe.downs, 1, 2000), "on_down ran");
  cr_expect(strstr(probe.down_why, "connection lost") != NULL, "%s",
            probe.down_why);
  cr_assert(run_until(&probe.ups, 2, 3000), "it reconnects");
  close_conn();
}

Test(redis, fires_the_watchdog_when_the_server_is_frozen) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  tr_redis_signal(&server, SIGSTOP);
  const char *argv[] = {"PING"};
  size_t lens[] = {4};
  cr_assert_eq(tally_redis_command(&conn, 200, on_reply, NULL, 1, argv, lens),
               0);
  cr_assert(run_until(&probe.failed, 1, 2000), "the command failed");
  cr_expect(strstr(probe.last, "not responding") != NULL, "%s", probe.last);
  cr_expect_eq(probe.downs, 1);
  tr_redis_signal(&server, SIGCONT);
  cr_assert(run_until(&probe.ups, 2, 5000), "it reconnects after SIGCONT");
  close_conn();
}

/* A frozen server's kernel still accepts connections: a connection is
 * up only once the server has answered (a PING after any login), so that
 * tallyd is not ready for a moment while Redis is stopped (issue 24, a
 * flaky /readyz under load). */
Test(redis, a_connection_to_a_frozen_server_is_not_up) {
  tr_redis_signal(&server, SIGSTOP);
  open_conn(server.url);
  cr_expect_not(run_until(&probe.ups, 1, 600), "up while the server is frozen");
  cr_expect_neq(conn.state, TALLY_REDIS_UP);
  tr_redis_signal(&server, SIGCONT);
  cr_assert(run_until(&probe.ups, 1, 5000), "up once it answers: %s", conn.why);
  close_conn();
}

Test(redis, reconnects_after_the_server_is_killed_and_restarted) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  ping();
  tr_redis_kill(&server);
  cr_assert(run_until(&probe.downs, 1, 2000));
  cr_expect_leq(probe.replies + probe.failed, 1, "the PING ended once");
  cr_assert_eq(tr_redis_restart(&server), 0);
  cr_assert(run_until(&probe.ups, 2, 5000), "%s", conn.why);
  ping();
  cr_assert(run_until(&probe.replies, 1 + probe.replies, 2000));
  close_conn();
}

Test(redis, fails_commands_in_flight_when_closed) {
  open_conn(server.url);
  cr_assert(run_until(&probe.ups, 1, 2000));
  tr_redis_signal(&server, SIGSTOP);
  ping();
  tally_redis_close(&conn, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_expect_eq(probe.failed, 1);
  cr_expect_eq(uv_loop_close(&loop), 0);
  tr_redis_signal(&server, SIGCONT);
}

/* Issue 10, defect 7 and the loose parsing: every part of a URL is read
 * strictly, user and password percent-decoded, and no error repeats a
 * password. */
typedef struct url_case_s {
  char url[128];
  char host[32], path[32], user[32], password[32];
  int port, db;
  char error[96]; /* a substring of the error; "" when the URL is valid */
} url_case_t;

ParameterizedTestParameters(redis, parses_urls_strictly) {
  static url_case_t cases[] = {
      {"redis://127.0.0.1:6380/2", "127.0.0.1", "", "", "", 6380, 2, ""},
      {"redis://127.0.0.1", "127.0.0.1", "", "", "", 6379, 0, ""},
      {"redis://127.0.0.1/", "127.0.0.1", "", "", "", 6379, 0, ""},
      {"redis://[::1]:7000/1", "::1", "", "", "", 7000, 1, ""},
      {"redis://tally:s3cr%40t@127.0.0.1:6379", "127.0.0.1", "", "tally",
       "s3cr@t", 6379, 0, ""},
      {"redis://:only%3Apw@127.0.0.1:6379", "127.0.0.1", "", "", "only:pw",
       6379, 0, ""},
      {"redis://u@127.0.0.1", "127.0.0.1", "", "u", "", 6379, 0, ""},
      {"unix:///run/r.sock?db=3&password=p%20w", "", "/run/r.sock", "", "p w",
       0, 3, ""},
      {"unix://tally:pw@/run/r.sock", "", "/run/r.sock", "tally", "pw", 0, 0,
       ""},
      {"redis://127.0.0.1:6379/1junk", "", "", "", "", 0, 0,
       "the database must be a number"},
      {"redis://127.0.0.1:6379/-1", "", "", "", "", 0, 0,
       "the database must be a number"},
      {"unix:///r.sock?db=1&pasword=x", "", "", "", "", 0, 0,
       "unknown query parameter"},
      {"unix:///r.sock?db=1&db=2", "", "", "", "", 0, 0, "db is given twice"},
      {"unix:///r.sock?db=x", "", "", "", "", 0, 0,
       "the database must be a number"},
      {"redis://127.0.0.1:6379?password=x", "", "", "", "", 0, 0,
       "takes no query"},
      {"redis://127.0.0.1:0", "", "", "", "", 0, 0, "the port must be"},
      {"redis://127.0.0.1:65536", "", "", "", "", 0, 0, "the port must be"},
      {"redis://127.0.0.1:80x", "", "", "", "", 0, 0, "the port must be"},
      {"redis://u:bad%zz@127.0.0.1", "", "", "", "", 0, 0,
       "bad percent escape"},
      {"rediss://u:hunter2@127.0.0.1:6380", "", "", "", "", 0, 0,
       "no TLS. Put stunnel in front"},
      {"redis://u:hunter2@localhost:6379", "", "", "", "", 0, 0,
       "host names are not resolved"},
      {"redis:///1", "", "", "", "", 0, 0, "names its server"},
  };
  return cr_make_param_array(url_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(url_case_t *c, redis, parses_urls_strictly) {
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  tally_redis_url_t u;
  char err[512] = "";
  int rc = tally_redis_url_parse(&u, c->url, err, sizeof(err));
  if (c->error[0] != '\0') {
    cr_assert_neq(rc, 0, "%s parsed", c->url);
    cr_expect(strstr(err, c->error) != NULL, "%s: %s", c->url, err);
    cr_expect(strstr(err, "hunter2") == NULL, "the password shows: %s", err);
    return;
  }
  cr_assert_eq(rc, 0, "%s: %s", c->url, err);
  cr_expect_str_eq(u.host ? u.host : "", c->host);
  cr_expect_str_eq(u.path ? u.path : "", c->path);
  cr_expect_str_eq(u.user ? u.user : "", c->user);
  cr_expect_str_eq(u.password ? u.password : "", c->password);
  if (c->host[0] != '\0')
    cr_expect_eq(u.port, c->port);
  cr_expect_eq(u.db, c->db);
  if (c->password[0] != '\0')
    cr_expect(strstr(u.display, c->password) == NULL, "%s", u.display);
  tally_redis_url_free(&u);
}

Test(redis, moves_the_password_out_of_the_url_into_the_environment) {
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  char *clean = NULL, err[512];
  cr_assert_eq(tally_redis_credentials("redis://tally:pw%21@127.0.0.1:7/2",
                                       NULL, &clean, err, sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(clean, "redis://tally@127.0.0.1:7/2");
  cr_expect_str_eq(getenv(TALLY_REDIS_PASSWORD_ENV), "pw!");
  free(clean);
  cr_assert_eq(tally_redis_credentials("unix:///s.sock?password=x&db=2", NULL,
                                       &clean, err, sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(clean, "unix:///s.sock?db=2");
  cr_expect_str_eq(getenv(TALLY_REDIS_PASSWORD_ENV), "x");
  free(clean);
  cr_assert_eq(tally_redis_credentials("unix:///s.sock?db=2&password=y", NULL,
                                       &clean, err, sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(clean, "unix:///s.sock?db=2");
  free(clean);
  cr_assert_eq(tally_redis_credentials("redis://:pw@127.0.0.1", NULL, &clean,
                                       err, sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(clean, "redis://127.0.0.1");
  free(clean);

  /* A URL longer than any fixed buffer (a 2,000-byte user name) keeps its
   * tail: the clean URL still names the host. */
  char longurl[2100], want[2100];
  memset(want, 0, sizeof(want));
  strcpy(longurl, "redis://");
  memset(longurl + 8, 'u', 2000);
  strcpy(longurl + 2008, ":pw@127.0.0.1:7/3");
  memcpy(want, longurl, 2008);
  strcpy(want + 2008, "@127.0.0.1:7/3");
  cr_assert_eq(tally_redis_credentials(longurl, NULL, &clean, err, sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(clean, want);
  free(clean);

  /* From a file: its first line. Given twice: an error. */
  char path[] = "/tmp/tally-pw-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, "from file\n", 10), 10);
  close(fd);
  cr_assert_eq(tally_redis_credentials("redis://127.0.0.1", path, &clean, err,
                                       sizeof(err)),
               0, "%s", err);
  cr_expect_str_eq(getenv(TALLY_REDIS_PASSWORD_ENV), "from file");
  free(clean);
  cr_expect_neq(tally_redis_credentials("redis://:pw@127.0.0.1", path, &clean,
                                        err, sizeof(err)),
                0);
  cr_expect(strstr(err, "given twice") != NULL, "%s", err);
  cr_expect(strstr(err, ":pw@") == NULL, "%s", err);
  unlink(path);
  cr_expect_neq(tally_redis_credentials("redis://127.0.0.1", "/nonexistent",
                                        &clean, err, sizeof(err)),
                0);
  cr_expect(strstr(err, "/nonexistent") != NULL, "%s", err);
  cr_expect_neq(tally_redis_credentials("redis://127.0.0.1", "/dev/zero",
                                        &clean, err, sizeof(err)),
                0);
  cr_expect(strstr(err, "not a regular file") != NULL, "%s", err);
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
}

/* sentinel:// URLs (issue 25): the sentinels, the master's name and
 * database, the data nodes' login before the sentinels and the
 * sentinels' own in the query; no password in any message. */
Test(redis, parses_sentinel_urls) {
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  unsetenv(TALLY_SENTINEL_PASSWORD_ENV);
  tally_redis_url_t u;
  char err[512];
  cr_assert_eq(tally_redis_url_parse(
                   &u,
                   "sentinel://app:d%40ta@127.0.0.1:26379,[::1],10.0.0.3:26380"
                   "/tally-master/2?sentinel_user=watch&sentinel_password=s3",
                   err, sizeof(err)),
               0, "%s", err);
  cr_expect_eq(u.nsentinels, 3);
  cr_expect_str_eq(u.sentinels[0].host, "127.0.0.1");
  cr_expect_eq(u.sentinels[0].port, 26379);
  cr_expect_str_eq(u.sentinels[1].host, "::1");
  cr_expect_eq(u.sentinels[1].port, 26379);
  cr_expect_eq(u.sentinels[2].port, 26380);
  cr_expect_str_eq(u.master, "tally-master");
  cr_expect_eq(u.db, 2);
  cr_expect_str_eq(u.user, "app");
  cr_expect_str_eq(u.password, "d@ta");
  cr_expect_str_eq(u.sentinel_user, "watch");
  cr_expect_str_eq(u.sentinel_password, "s3");
  cr_expect_null(u.host, "no master known before the sentinels are asked");
  cr_expect_str_eq(u.display, "sentinel://app@127.0.0.1:26379,[::1],"
                              "10.0.0.3:26380/tally-master/2?sentinel_user="
                              "watch");
  tally_redis_url_free(&u);

  /* The sentinels' password from the environment, the data nodes' too,
   * each its own. */
  setenv(TALLY_SENTINEL_PASSWORD_ENV, "from-env", 1);
  setenv(TALLY_REDIS_PASSWORD_ENV, "data-env", 1);
  cr_assert_eq(
      tally_redis_url_parse(&u, "sentinel://127.0.0.1/m", err, sizeof(err)), 0,
      "%s", err);
  cr_expect_str_eq(u.sentinel_password, "from-env");
  cr_expect_str_eq(u.password, "data-env");
  tally_redis_url_free(&u);
  unsetenv(TALLY_SENTINEL_PASSWORD_ENV);
  unsetenv(TALLY_REDIS_PASSWORD_ENV);

  const struct {
    const char *url, *want;
  } bad[] = {
      {"sentinel://127.0.0.1:26379", "names the master after the sentinels"},
      {"sentinel://127.0.0.1:26379/", "names the master after the sentinels"},
      {"sentinel://127.0.0.1,,127.0.0.2/m", "separated by commas"},
      {"sentinel://localhost/m", "must be an IP address"},
      {"sentinel://127.0.0.1:0/m", "port must be a number"},
      {"sentinel://127.0.0.1/m/x", "database must be a number"},
      {"sentinel://127.0.0.1/m?password=p", "unknown query parameter"},
      {"sentinel:///m", "names its server"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cr_expect_neq(tally_redis_url_parse(&u, bad[i].url, err, sizeof(err)), 0,
                  "%s", bad[i].url);
    cr_expect(strstr(err, bad[i].want) != NULL, "%s: %s", bad[i].url, err);
  }
  /* A bad URL's message masks both passwords. */
  cr_expect_neq(tally_redis_url_parse(&u,
                                      "sentinel://u:SECRET1@127.0.0.1/m?"
                                      "sentinel_password=SECRET2&bogus=1",
                                      err, sizeof(err)),
                0);
  cr_expect(strstr(err, "SECRET") == NULL, "%s", err);
  cr_expect(strstr(err, "u:***@") != NULL && strstr(err, "=***") != NULL, "%s",
            err);
}

/* An empty password masked: "user:@" (the fuzzer found a loop there). */
Test(redis, masks_an_empty_password) {
  tally_redis_url_t u;
  char err[512];
  cr_expect_neq(
      tally_redis_url_parse(&u, "redis://is:@05junk", err, sizeof(err)), 0);
  cr_expect(strstr(err, "redis://is:***@05junk") != NULL, "%s", err);
}

Test(redis, moves_the_sentinels_password_into_its_own_variable) {
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  unsetenv(TALLY_SENTINEL_PASSWORD_ENV);
  char *clean = NULL, *cleaner = NULL, err[512];
  const char *url = "sentinel://app:dpw@127.0.0.1:26379/m?sentinel_user=w&"
                    "sentinel_password=spw";
  cr_assert_eq(tally_redis_credentials(url, NULL, &clean, err, sizeof(err)), 0,
               "%s", err);
  cr_assert_eq(
      tally_redis_sentinel_credentials(clean, NULL, &cleaner, err, sizeof(err)),
      0, "%s", err);
  cr_expect_str_eq(cleaner, "sentinel://app@127.0.0.1:26379/m?sentinel_user=w");
  cr_expect_str_eq(getenv(TALLY_REDIS_PASSWORD_ENV), "dpw");
  cr_expect_str_eq(getenv(TALLY_SENTINEL_PASSWORD_ENV), "spw");
  free(clean);
  free(cleaner);
  /* A file for a URL that has no sentinels is a mistake. */
  cr_expect_neq(tally_redis_sentinel_credentials("redis://127.0.0.1", "/x",
                                                 &clean, err, sizeof(err)),
                0);
  cr_expect(strstr(err, "--sentinel-password-file is for a sentinel://") !=
                NULL,
            "%s", err);
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  unsetenv(TALLY_SENTINEL_PASSWORD_ENV);
}
