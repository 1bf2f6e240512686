/* tallyd in production (issue 17): its HTTP listener, read with curl,
 * /metrics checked by promtool, /healthz and /readyz against a real
 * redis-server that is frozen with SIGSTOP, hostile HTTP clients under a
 * scoring load, and the systemd notify protocol on a socket the test
 * owns. */
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
}

static void teardown(void) {
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_signal(&server, SIGCONT);
  tr_redis_stop(&server);
}

TestSuite(tallyd_ops, .init = setup, .fini = teardown, .timeout = 120);

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The fixture's HTTP helpers, under this file's short names. */
typedef td_http_t http_t;
#define http_port td_http_port
static http_t http(int port, const char *path, const char *extra) {
  return td_http(server.dir, port, path, extra);
}

/* The value of the sample whose line starts with series and a space. */
static double sample(const char *metrics, const char *series) {
  size_t n = strlen(series);
  for (const char *s = metrics; s && *s;
       s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
    if (strncmp(s, series, n) == 0 && s[n] == ' ')
      return strtod(s + n + 1, NULL);
  }
  return -1;
}

/* promtool's verdict on a metrics text: its exit status, its output in
 * out. */
static int promtool(const char *text, char *out, size_t len) {
  char file[512], cmd[1200];
  snprintf(file, sizeof(file), "%s/metrics.txt", server.dir);
  FILE *f = fopen(file, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", file);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void start(const char *const *args, const char *const *env) {
  cr_assert_eq(td_start(&daemon_, &server, "ops", args, env), 0);
}

Test(tallyd_ops, metrics_count_each_outcome_and_pass_promtool) {
  start(NULL, NULL);
  int port = http_port(&daemon_);
  char ids[20][64];
  td_push_many(c, 20, ids);
  td_push(c, "{not json", NULL);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 21, 20000) == 21, "outcomes");
  /* The probe reads Redis once a second. */
  sleep_ms(1500);
  http_t r = http(port, "/metrics", NULL);
  cr_assert_eq(r.status, 200, "%s", r.body);
  const char *m = r.body;
  cr_expect_eq(sample(m, "tally_jobs_total{outcome=\"scored\"}"), 20, "%s", m);
  cr_expect_eq(sample(m, "tally_jobs_total{outcome=\"dead_lettered\"}"), 1);
  cr_expect_eq(sample(m, "tally_jobs_total{outcome=\"retried\"}"), 0);
  cr_expect_eq(sample(m, "tally_jobs_total{outcome=\"late_dropped\"}"), 0);
  cr_expect_eq(sample(m, "tally_jobs_read_total"), 21);
  cr_expect_eq(sample(m, "tally_posts_total"), 21);
  cr_expect(sample(m, "tally_post_batches_total") >= 1);
  cr_expect_eq(sample(m, "tally_post_latency_seconds_count"), 21);
  cr_expect_eq(sample(m, "tally_post_latency_seconds_bucket{le=\"+Inf\"}"), 21);
  cr_expect(sample(m, "tally_worker_batch_seconds_count") >= 1);
  cr_expect_eq(sample(m, "tally_workers_alive"), 2);
  cr_expect_eq(sample(m, "tally_workers_busy"), 0);
  cr_expect_eq(sample(m, "tally_jobs_in_flight"), 0);
  cr_expect_eq(sample(m, "tally_stream_lag"), 0);
  cr_expect_eq(sample(m, "tally_pending_jobs"), 0);
  cr_expect_eq(sample(m, "tally_redis_up{connection=\"read\"}"), 1);
  cr_expect_eq(sample(m, "tally_redis_up{connection=\"write\"}"), 1);
  cr_expect_eq(sample(m, "tally_redis_reconnects_total{connection=\"read\"}"),
               0);
  cr_expect(sample(m, "tally_redis_used_memory_bytes") > 100000);
  cr_expect_eq(sample(m, "tally_build_info{version=\"" TALLY_VERSION "\"}"), 1);
  cr_expect_eq(sample(m, "tally_ready"), 1);
  cr_expect_eq(sample(m, "tally_config_reloads_total{result=\"accepted\"}"), 0);
  /* No submission or participant id is a label. */
  cr_expect_null(strstr(m, "sub-"), "%s", m);
  char verdict[4096];
  cr_expect_eq(promtool(m, verdict, sizeof(verdict)), 0, "%s", verdict);
  free(r.body);

  /* A reload, accepted, is counted. */
  td_signal(&daemon_, SIGHUP);
  for (int i = 0; i < 100; i++) {
    r = http(port, "/metrics", NULL);
    double v =
        sample(r.body, "tally_config_reloads_total{result=\"accepted\"}");
    free(r.body);
    if (v == 1)
      break;
    cr_assert(i < 99, "the reload was not counted");
    sleep_ms(100);
  }
}

/* The rescore gauges follow <p>:rescore as tally rescore writes it: it
 * runs in every state but "done" and "failed". */
Test(tallyd_ops, metrics_follow_a_running_rescore) {
  start(NULL, NULL);
  int port = http_port(&daemon_);
  /* tallyd's own rescore at start writes the same hash: first it ends. */
  for (int i = 0; i < 600 && !td_log_has(&daemon_, "rescore.done") &&
                  !td_log_has(&daemon_, "rescore.failed");
       i++)
    sleep_ms(50);
  cr_assert(td_log_has(&daemon_, "rescore.done"), "tallyd's rescore at start");
  static const char *const states[] = {"selecting", "scoring", "writing",
                                       "done", "failed"};
  for (int k = 0; k < 5; k++) {
    freeReplyObject(redisCommand(c,
                                 "HSET tally:rescore state %s done %d "
                                 "total 10",
                                 states[k], k));
    double running = -1;
    for (int i = 0; i < 40; i++) {
      http_t r = http(port, "/metrics", NULL);
      running = sample(r.body, "tally_rescore_running");
      double done = sample(r.body, "tally_rescore_submissions_done");
      free(r.body);
      if (running == (k < 3) && done == k)
        break;
      sleep_ms(100);
    }
    cr_expect_eq(running, k < 3, "state %s: running %g", states[k], running);
  }
}

Test(tallyd_ops, other_paths_and_methods_are_refused) {
  start(NULL, NULL);
  int port = http_port(&daemon_);
  http_t r = http(port, "/nope", NULL);
  cr_expect_eq(r.status, 404);
  cr_expect(strstr(r.body, "/metrics") != NULL, "%s", r.body);
  free(r.body);
  r = http(port, "/metrics", "-X POST --data x=1");
  cr_expect_eq(r.status, 405);
  cr_expect(strstr(r.body, "only GET and HEAD") != NULL, "%s", r.body);
  free(r.body);
  r = http(port, "/healthz?probe=1", "-I");
  cr_expect_eq(r.status, 200);
  free(r.body);
}

Test(tallyd_ops, readyz_follows_redis_and_healthz_the_loop) {
  start(NULL, NULL);
  int port = http_port(&daemon_);
  http_t r = {0};
  for (int i = 0; i < 100; i++) {
    free(r.body);
    r = http(port, "/readyz", NULL);
    if (r.status == 200)
      break;
    sleep_ms(100);
  }
  cr_assert_eq(r.status, 200, "%s", r.body);
  cr_expect_str_eq(r.body, "ready\n");
  free(r.body);
  r = http(port, "/healthz", NULL);
  cr_expect_eq(r.status, 200);
  cr_expect_str_eq(r.body, "ok\n");
  free(r.body);

  /* Frozen: within the watchdog (5 s) after the next probe (1 s). */
  tr_redis_signal(&server, SIGSTOP);
  long long t0 = now_ms();
  for (;;) {
    r = http(port, "/readyz", NULL);
    if (r.status == 503)
      break;
    free(r.body);
    TD_REQUIRE(&daemon_, now_ms() - t0 < 9000,
               "/readyz still 200 9 s after Redis froze");
    sleep_ms(200);
  }
  cr_expect(strstr(r.body, "Redis") != NULL, "%s", r.body);
  cr_expect_eq(strchr(r.body, '\n'), r.body + strlen(r.body) - 1,
               "one line: %s", r.body);
  free(r.body);
  /* The loop still turns. */
  r = http(port, "/healthz", NULL);
  cr_expect_eq(r.status, 200);
  free(r.body);
  r = http(port, "/metrics", NULL);
  cr_expect_eq(sample(r.body, "tally_ready"), 0);
  free(r.body);

  tr_redis_signal(&server, SIGCONT);
  t0 = now_ms();
  for (;;) {
    r = http(port, "/readyz", NULL);
    if (r.status == 200)
      break;
    free(r.body);
    TD_REQUIRE(&daemon_, now_ms() - t0 < 20000,
               "/readyz not 200 again 20 s after Redis thawed");
    sleep_ms(200);
  }
  free(r.body);
  r = http(port, "/metrics", NULL);
  cr_expect(sample(r.body, "tally_redis_reconnects_total{connection="
                           "\"write\"}") >= 1,
            "%s", r.body);
  free(r.body);
}

/* A connected, non-blocking TCP socket to port. */
static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  cr_assert(fd >= 0, "socket: %s", strerror(errno));
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  connect(fd, (struct sockaddr *)&a, sizeof(a));
  return fd;
}

/* Whether fd was closed by the peer (read gives 0 or a reset) within
 * ms, after reading whatever came. */
static bool closed_within(int fd, int ms, char *got, size_t len) {
  long long t0 = now_ms();
  size_t n = 0;
  while (now_ms() - t0 < ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 100) <= 0)
      continue;
    ssize_t k = read(fd, got + n, len - 1 - n);
    if (k > 0) {
      n += (size_t)k;
      got[n] = '\0';
      if (n + 1 >= len)
        n = 0;
      continue;
    }
    if (k == 0 || (errno != EAGAIN && errno != EINTR))
      return true;
  }
  return false;
}

Test(tallyd_ops, hostile_clients_do_not_stop_scoring, .timeout = 180) {
  start(NULL, NULL);
  int port = http_port(&daemon_);
  enum { IDLE = 1000, JOBS = 2000 };
  /* A request that never ends, and a 10 MB header. */
  int slow = dial(port);
  sleep_ms(200);
  static const char start_line[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX: ";
  send(slow, start_line, sizeof(start_line) - 1, MSG_NOSIGNAL);
  int big = dial(port);
  sleep_ms(200);
  char *header = malloc(10 << 20);
  memset(header, 'a', 10 << 20);
  memcpy(header, "GET / HTTP/1.1\r\nX-Big: ", 23);
  size_t sent = 0;
  long long t0 = now_ms();
  while (sent < (10u << 20) && now_ms() - t0 < 3000) {
    ssize_t k = send(big, header + sent, (10u << 20) - sent, MSG_NOSIGNAL);
    if (k > 0)
      sent += (size_t)k;
    else if (errno != EAGAIN)
      break;
    else
      sleep_ms(5);
  }
  free(header);
  char got[4096] = "";
  cr_expect(closed_within(big, 5000, got, sizeof(got)),
            "a 10 MB header kept its connection");
  cr_expect(sent < (10u << 20), "the 10 MB header was read whole");
  cr_expect(got[0] == '\0' || strstr(got, " 431 ") != NULL ||
                strstr(got, " 413 ") != NULL || strstr(got, " 400 ") != NULL,
            "%s", got);
  close(big);
  /* A thousand idle connections: past the limit (TALLY_HTTP_MAX_CONNECTIONS)
   * they wait in the kernel's queue, not in tallyd. */
  static int idle[IDLE];
  for (int i = 0; i < IDLE; i++)
    idle[i] = dial(port);

  /* Scoring goes on meanwhile, every job exactly once. */
  static char ids[JOBS][64];
  td_push_many(c, JOBS, ids);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, JOBS, 60000) == JOBS,
             "%d jobs were not scored beside the hostile clients", JOBS);
  cr_expect_eq(td_check_exactly_once(c, ids, JOBS), 0);

  /* The never-ending request is cut off after the idle time. */
  cr_expect(closed_within(slow, 15000, got, sizeof(got)),
            "a request that never ends kept its connection");
  close(slow);
  for (int i = 0; i < IDLE; i++)
    close(idle[i]);
  /* With them gone, it answers again. */
  http_t r = {0};
  for (int i = 0; i < 20; i++) {
    free(r.body);
    r = http(port, "/healthz", NULL);
    if (r.status == 200)
      break;
    sleep_ms(100);
  }
  cr_expect_eq(r.status, 200);
  free(r.body);
  TD_REQUIRE(&daemon_, kill(daemon_.pid, 0) == 0, "tallyd died");
}

Test(tallyd_ops, a_port_in_use_or_a_bad_address_stops_tallyd) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  socklen_t alen = sizeof(a);
  getsockname(fd, (struct sockaddr *)&a, &alen);
  listen(fd, 1);
  char addr[64];
  snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(a.sin_port));
  const char *args[] = {"--http", addr, NULL};
  start(args, NULL);
  int st = td_wait(&daemon_, 10000);
  TD_REQUIRE(&daemon_, st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1,
             "tallyd did not exit 1 (%d)", st);
  char want[128];
  snprintf(want, sizeof(want),
           "--http %s: cannot listen: Address already in use", addr);
  TD_REQUIRE(&daemon_, td_log_has(&daemon_, want), "no message naming it");
  close(fd);

  td_daemon_t d2 = {0};
  const char *bad[] = {"--http", "localhost:9464", NULL};
  cr_assert_eq(td_start(&d2, &server, "bad", bad, NULL), 0);
  st = td_wait(&d2, 10000);
  TD_REQUIRE(&d2, st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2,
             "a host name is not refused (%d)", st);
  TD_REQUIRE(&d2, td_log_has(&d2, "--http: \"localhost:9464\" is not IP:PORT"),
             "no message naming the flag");
}

/* A token file that cannot be read stops tallyd at start, with the
 * file named, once the listener, the workers and the dispatcher were
 * set up: each is closed again (under ASan, a leak fails the exit). */
Test(tallyd_ops, an_unreadable_token_file_stops_tallyd) {
  const char *args[] = {"--http-token-file", "/nonexistent/token", NULL};
  start(args, NULL);
  int st = td_wait(&daemon_, 15000);
  TD_REQUIRE(&daemon_, st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2,
             "tallyd did not exit 2 (%d)", st);
  TD_REQUIRE(&daemon_,
             td_log_has(&daemon_,
                        "--http-token-file /nonexistent/token: cannot read it"),
             "no message naming the file");
}

/* Several tallyd on one machine: with --http left to its default, one
 * that finds the default port taken runs without HTTP and says so. */
Test(tallyd_ops, the_default_port_taken_means_no_http_not_no_tallyd) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons(9464),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  /* Taken by us, or already by someone else: taken either way. */
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
    listen(fd, 1);
  daemon_.default_http = true;
  start(NULL, NULL);
  char ids[3][64];
  td_push_many(c, 3, ids);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 3, 20000) == 3,
             "tallyd did not score without its HTTP port");
  TD_REQUIRE(&daemon_,
             td_log_has(&daemon_, "running without HTTP (give --http to "
                                  "choose an address, or off)"),
             "no warning about the port");
  close(fd);
}

/* systemd's side of the notify protocol: a datagram socket at path (an
 * abstract one when it starts with '@'). */
static int notify_socket(const char *path) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(path);
  memcpy(a.sun_path, path, len);
  socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
  if (path[0] == '@')
    a.sun_path[0] = '\0';
  else
    alen++;
  cr_assert_eq(bind(fd, (struct sockaddr *)&a, alen), 0, "%s: %s", path,
               strerror(errno));
  return fd;
}

/* Receives messages until one contains want or ms pass; every message is
 * appended to log (a \x1e between them). Returns whether want came. */
static bool await(int fd, const char *want, int ms, char *log, size_t len) {
  long long t0 = now_ms();
  while (now_ms() - t0 < ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 100) <= 0)
      continue;
    char msg[2048];
    ssize_t n = recv(fd, msg, sizeof(msg) - 1, 0);
    if (n <= 0)
      continue;
    msg[n] = '\0';
    size_t at = strlen(log);
    snprintf(log + at, len - at, "%s\x1e", msg);
    if (strstr(msg, want) != NULL)
      return true;
  }
  return false;
}

static void notify_protocol(const char *path, const char *env_path) {
  int fd = notify_socket(path);
  char env1[200];
  snprintf(env1, sizeof(env1), "NOTIFY_SOCKET=%s", env_path);
  const char *env[] = {env1, "WATCHDOG_USEC=200000", NULL};
  start(NULL, env);
  static char log[1 << 16];
  log[0] = '\0';
  TD_REQUIRE(&daemon_, await(fd, "READY=1", 15000, log, sizeof(log)),
             "no READY=1: %s", log);
  /* Ready means ready: Redis, scripts, workers and HTTP. */
  int port = http_port(&daemon_);
  http_t r = http(port, "/readyz", NULL);
  cr_expect_eq(r.status, 200, "%s", r.body);
  free(r.body);
  /* The workers do not inherit the socket. */
  pid_t kids[8];
  int nk = td_children(&daemon_, kids, 8);
  cr_expect(nk >= 2);
  for (int i = 0; i < nk; i++) {
    char p[64], env[65536];
    snprintf(p, sizeof(p), "/proc/%d/environ", (int)kids[i]);
    FILE *f = fopen(p, "r");
    if (f == NULL)
      continue;
    size_t n = fread(env, 1, sizeof(env) - 1, f);
    fclose(f);
    for (size_t k = 0; k < n; k++)
      if (env[k] == '\0')
        env[k] = '\n';
    env[n] = '\0';
    cr_expect_null(strstr(env, "NOTIFY_SOCKET="), "worker %d", (int)kids[i]);
    cr_expect_null(strstr(env, "WATCHDOG_USEC="), "worker %d", (int)kids[i]);
  }
  /* The watchdog, every 100 ms. */
  log[0] = '\0';
  int pings = 0;
  long long t0 = now_ms();
  while (now_ms() - t0 < 1000)
    if (await(fd, "WATCHDOG=1", 300, log, sizeof(log)))
      pings++;
  cr_expect(pings >= 5, "%d WATCHDOG=1 in 1 s", pings);
  /* STATUS with the rate and the lag. */
  log[0] = '\0';
  cr_expect(await(fd, "STATUS=scoring: ", 8000, log, sizeof(log)), "%s", log);
  cr_expect(strstr(log, "jobs/s, lag ") != NULL, "%s", log);
  /* A reload: RELOADING=1 (with the monotonic time), then READY=1. */
  log[0] = '\0';
  td_signal(&daemon_, SIGHUP);
  cr_expect(await(fd, "RELOADING=1", 5000, log, sizeof(log)), "%s", log);
  cr_expect(strstr(log, "MONOTONIC_USEC=") != NULL, "%s", log);
  log[0] = '\0';
  cr_expect(await(fd, "READY=1", 10000, log, sizeof(log)), "%s", log);
  /* A drain. */
  log[0] = '\0';
  td_signal(&daemon_, SIGTERM);
  cr_expect(await(fd, "STOPPING=1", 5000, log, sizeof(log)), "%s", log);
  int st = td_wait(&daemon_, 15000);
  cr_expect(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d", st);
  close(fd);
}

Test(tallyd_ops, speaks_the_notify_protocol_on_a_path) {
  char path[400];
  snprintf(path, sizeof(path), "%s/notify.sock", server.dir);
  notify_protocol(path, path);
}

Test(tallyd_ops, speaks_the_notify_protocol_on_an_abstract_socket) {
  char path[64];
  snprintf(path, sizeof(path), "@tally-test-notify-%d", (int)getpid());
  notify_protocol(path, path);
}

Test(tallyd_ops, no_watchdog_for_another_pid) {
  char path[400];
  snprintf(path, sizeof(path), "%s/notify.sock", server.dir);
  int fd = notify_socket(path);
  char env1[440];
  snprintf(env1, sizeof(env1), "NOTIFY_SOCKET=%s", path);
  const char *env[] = {env1, "WATCHDOG_USEC=100000", "WATCHDOG_PID=1", NULL};
  start(NULL, env);
  static char log[1 << 16];
  log[0] = '\0';
  TD_REQUIRE(&daemon_, await(fd, "READY=1", 15000, log, sizeof(log)),
             "no READY=1: %s", log);
  log[0] = '\0';
  cr_expect_not(await(fd, "WATCHDOG=1", 1000, log, sizeof(log)), "%s", log);
  close(fd);
}
