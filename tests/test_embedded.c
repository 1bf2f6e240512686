/* The embedded Redis against a real redis-server: start, stop, restart
 * after a crash, a server left over by a tallyd that died, and errors. */
#include "daemon/embedded.h"

#include "redis_fixture.h"
#include "support.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uv_loop_t loop;
static tally_embedded_t emb;
static bool inited;
static int stops;
static char dir[256];
static tally_log_t log_;
static char err[1024];

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs the loop until cond() holds or ms pass. */
static bool run_until(bool (*cond)(void), uint64_t ms) {
  uv_update_time(&loop);
  uint64_t end = uv_now(&loop) + ms;
  while (!cond() && uv_now(&loop) < end) {
    uv_run(&loop, UV_RUN_NOWAIT);
    sleep_ms(5);
    uv_update_time(&loop);
  }
  return cond();
}

/* Runs one command on the Unix socket sock; returns the reply's string
 * (or "" for a non-string reply) in a static buffer, or NULL when the
 * server cannot be reached. */
static const char *command(const char *sock, const char *fmt, ...) {
  static char out[256];
  redisContext *c = redisConnectUnix(sock);
  if (c == NULL || c->err) {
    if (c != NULL)
      redisFree(c);
    return NULL;
  }
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  const char *res = NULL;
  if (r != NULL) {
    const redisReply *s = r;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2)
      s = r->element[1]; /* CONFIG GET: name, value */
    snprintf(out, sizeof(out), "%s", s->str != NULL ? s->str : "");
    res = out;
  }
  freeReplyObject(r);
  redisFree(c);
  return res;
}

static const char *sock_of(const tally_embedded_t *e) {
  return e->url + strlen("unix://");
}

static bool ready(void) {
  if (!emb.running)
    return false;
  const char *r = command(sock_of(&emb), "PING");
  return r != NULL && strcmp(r, "PONG") == 0;
}

static bool stopped(void) {
  return stops > 0;
}

static bool restarted(void) {
  return emb.restarts >= 1 && ready();
}

static bool exited(void) {
  return emb.restarts >= 1 && !emb.running;
}

static void on_stop(tally_embedded_t *e) {
  cr_expect_eq(e, &emb);
  stops++;
}

/* Whether pid has exited: gone, or a zombie that nobody reaps. */
static bool gone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH)
    return true;
  char buf[512];
  const char *state = ts_proc_stat(pid, buf, sizeof(buf));
  return state == NULL || *state == 'Z' || *state == 'X';
}

/* Everything written to the log so far. */
static const char *log_text(void) {
  static char buf[16384];
  fflush(log_.out);
  long pos = ftell(log_.out);
  rewind(log_.out);
  size_t n = fread(buf, 1, sizeof(buf) - 1, log_.out);
  buf[n] = '\0';
  fseek(log_.out, pos, SEEK_SET);
  return buf;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

static void setup(void) {
  cr_assert_eq(uv_loop_init(&loop), 0);
  snprintf(dir, sizeof(dir), "/tmp/tally-embedded-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  tally_log_init(&log_, TALLY_LOG_TEXT);
  log_.level = TALLY_LOG_DEBUG;
  log_.out = tmpfile();
  cr_assert_not_null(log_.out);
  inited = false;
  stops = 0;
}

static void teardown(void) {
  if (inited && emb.running) /* a failed test: leave no server behind */
    kill(emb.proc.pid, SIGKILL);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
  fclose(log_.out);
}

TestSuite(embedded, .init = setup, .fini = teardown, .timeout = 30);

/* Inits emb on path and starts it, or fails the test. */
static void start_on(const char *path, const char *server) {
  cr_assert_eq(
      tally_embedded_init(&loop, &emb, path, server, &log_, err, sizeof(err)),
      0, "%s", err);
  inited = true;
  cr_assert_eq(tally_embedded_start(&emb, err, sizeof(err)), 0, "%s", err);
  cr_assert(run_until(ready, 5000), "the server answers PING; log:\n%s",
            log_text());
}

/* Stops emb and checks that the child is gone and the loop closes. */
static void stop_and_close(uint64_t grace_ms) {
  pid_t pid = emb.running ? emb.proc.pid : 0;
  tally_embedded_stop(&emb, grace_ms, on_stop);
  cr_assert(run_until(stopped, 10000), "stop_cb runs");
  cr_expect_eq(stops, 1);
  cr_expect_eq(emb.handles, 0);
  cr_expect(!emb.running);
  if (pid > 0)
    cr_expect(kill(pid, 0) != 0 && errno == ESRCH,
              "the child is gone and reaped");
  cr_expect_eq(uv_loop_close(&loop), 0, "the loop closes cleanly");
}

/* The arguments tally_embedded_start gives redis-server, for a server
 * that a "previous tallyd" left running in d. */
static pid_t spawn_leftover(const char *d) {
  char sock[300], pidfile[300], logfile[300];
  snprintf(sock, sizeof(sock), "%s/redis.sock", d);
  snprintf(pidfile, sizeof(pidfile), "%s/redis.pid", d);
  snprintf(logfile, sizeof(logfile), "%s/redis.log", d);
  /* Fork twice, so the server is orphaned as when tallyd dies. It is
   * reparented to this process, a subreaper, to be reaped at the end of
   * the test rather than left a zombie of init. */
  cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  pid_t mid = fork();
  cr_assert(mid >= 0);
  if (mid == 0) {
    if (fork() == 0) {
      setsid();
      const char *args[] = {"--port",
                            "0",
                            "--unixsocketperm",
                            "700",
                            "--dir",
                            d,
                            "--appendonly",
                            "yes",
                            "--appendfsync",
                            "everysec",
                            "--save",
                            "",
                            "--pidfile",
                            pidfile,
                            "--daemonize",
                            "no",
                            "--logfile",
                            logfile,
                            "--maxmemory-policy",
                            "noeviction",
                            NULL};
      tr_redis_exec(NULL, sock, args, NULL);
    }
    _exit(0);
  }
  waitpid(mid, NULL, 0);
  for (int i = 0; i < 500; i++) {
    const char *r = command(sock, "PING");
    FILE *f = fopen(pidfile, "r");
    long pid = 0;
    if (f != NULL) {
      if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
      fclose(f);
    }
    if (r != NULL && strcmp(r, "PONG") == 0 && pid > 0)
      return (pid_t)pid;
    sleep_ms(10);
  }
  cr_assert_fail("the leftover redis-server did not start in %s", d);
  return 0;
}

Test(embedded, starts_a_server_that_answers_ping_with_append_only_on) {
  start_on(dir, NULL);
  char url[400];
  snprintf(url, sizeof(url), "unix://%s/redis.sock", dir);
  cr_expect_str_eq(emb.url, url);
  cr_expect_str_eq(command(sock_of(&emb), "CONFIG GET appendonly"), "yes");
  cr_expect_str_eq(command(sock_of(&emb), "CONFIG GET port"), "0");
  cr_expect_str_eq(command(sock_of(&emb), "CONFIG GET maxmemory-policy"),
                   "noeviction");
  cr_expect(strstr(log_text(), "info embedded.start: ") != NULL, "%s",
            log_text());
  stop_and_close(5000);
  cr_expect_eq(emb.restarts, 0);
  char aof[400];
  struct stat st;
  snprintf(aof, sizeof(aof), "%s/appendonlydir", dir);
  cr_expect_eq(stat(aof, &st), 0, "an append-only folder is in %s", dir);
  cr_expect(strstr(log_text(), "embedded.stop") != NULL, "%s", log_text());
  cr_expect(strstr(log_text(), "embedded.exit") == NULL, "%s", log_text());
}

Test(embedded, keeps_its_data_across_a_stop_and_a_new_start) {
  start_on(dir, NULL);
  cr_assert_str_eq(command(sock_of(&emb), "SET k v1"), "OK");
  stop_and_close(5000);
  cr_assert_eq(uv_loop_init(&loop), 0);
  stops = 0;
  start_on(dir, NULL);
  cr_expect_str_eq(command(sock_of(&emb), "GET k"), "v1");
  stop_and_close(5000);
}

Test(embedded, creates_the_data_dir_with_its_parents_private_to_the_user) {
  char path[400], want[PATH_MAX + 32], real[PATH_MAX];
  snprintf(path, sizeof(path), "%s/a/../a/b/data/", dir);
  cr_assert_eq(
      tally_embedded_init(&loop, &emb, path, NULL, &log_, err, sizeof(err)), 0,
      "%s", err);
  inited = true;
  cr_assert_not_null(realpath(dir, real));
  snprintf(want, sizeof(want), "%s/a/b/data", real);
  cr_expect_str_eq(emb.dir, want);
  struct stat st;
  cr_assert_eq(stat(want, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0700);
  /* Stopping a server never started just closes the handles. */
  stop_and_close(1000);
}

Test(embedded, restarts_the_server_after_it_is_killed) {
  start_on(dir, NULL);
  pid_t first = emb.proc.pid;
  cr_assert_str_eq(command(sock_of(&emb), "SET k v"), "OK");
  kill(first, SIGKILL);
  cr_assert(run_until(restarted, 10000), "restarted; log:\n%s", log_text());
  cr_expect_eq(emb.restarts, 1);
  cr_expect_neq(emb.proc.pid, first);
  const char *log = log_text();
  cr_expect(strstr(log, "error embedded.exit: ") != NULL, "%s", log);
  cr_expect(strstr(log, "signal 9") != NULL, "%s", log);
  cr_expect(strstr(log, "redis.log") != NULL, "%s", log);
  cr_expect(strstr(log, "restarting in 200 ms") != NULL, "%s", log);
  cr_expect_eq(count(log, "embedded.start"), 2, "%s", log);
  stop_and_close(5000);
}

static bool restarted_thrice(void) {
  return emb.restarts >= 3;
}

Test(embedded, doubles_the_backoff_while_the_server_keeps_exiting) {
  /* false ignores the arguments and exits at once, with status 1. */
  cr_assert_eq(
      tally_embedded_init(&loop, &emb, dir, "false", &log_, err, sizeof(err)),
      0, "%s", err);
  inited = true;
  cr_assert_eq(tally_embedded_start(&emb, err, sizeof(err)), 0, "%s", err);
  uint64_t t0 = uv_now(&loop);
  cr_assert(run_until(restarted_thrice, 5000), "%s", log_text());
  /* Exits at about 0, 200 and 600 ms: the waits were 200 and 400 ms. */
  cr_expect_geq(uv_now(&loop) - t0, 600);
  const char *log = log_text();
  cr_expect(strstr(log, "exited with status 1") != NULL, "%s", log);
  cr_expect(strstr(log, "restarting in 200 ms") != NULL, "%s", log);
  cr_expect(strstr(log, "restarting in 400 ms") != NULL, "%s", log);
  cr_expect(strstr(log, "restarting in 800 ms") != NULL, "%s", log);
  stop_and_close(1000);
}

Test(embedded, stops_cleanly_while_waiting_to_restart) {
  start_on(dir, NULL);
  kill(emb.proc.pid, SIGKILL);
  cr_assert(run_until(exited, 5000));
  stop_and_close(1000);
  cr_expect_eq(emb.restarts, 1);
  cr_expect_eq(count(log_text(), "embedded.start"), 1, "%s", log_text());
}

Test(embedded, kills_a_server_that_outlives_the_grace_period) {
  start_on(dir, NULL);
  kill(emb.proc.pid, SIGSTOP); /* SIGTERM stays pending; SIGKILL does not */
  uint64_t t0 = uv_now(&loop);
  stop_and_close(300);
  cr_expect_geq(uv_now(&loop) - t0, 300);
  cr_expect(strstr(log_text(), "warn embedded.kill: ") != NULL, "%s",
            log_text());
  cr_expect_eq(emb.restarts, 0);
}

Test(embedded, stops_a_server_left_over_by_a_tallyd_that_died) {
  pid_t old = spawn_leftover(dir);
  start_on(dir, NULL);
  cr_expect(gone(old), "the leftover (pid %d) is stopped", (int)old);
  cr_expect_eq(waitpid(old, NULL, WNOHANG), old);
  cr_expect_neq(emb.proc.pid, old);
  const char *log = log_text();
  cr_expect(strstr(log, "warn embedded.leftover: ") != NULL, "%s", log);
  char pid[32];
  snprintf(pid, sizeof(pid), "pid %d", (int)old);
  cr_expect(strstr(log, pid) != NULL, "%s", log);
  stop_and_close(5000);
}

Test(embedded, leaves_alone_what_the_pid_file_names_in_another_folder) {
  /* A redis-server running in another folder, and a process that is not a
   * redis-server at all, named in turn by the pid file. */
  char other[300], pidfile[300], cmd[400];
  snprintf(other, sizeof(other), "%s/other", dir);
  cr_assert_eq(mkdir(other, 0700), 0);
  pid_t foreign = spawn_leftover(other);
  pid_t child = fork();
  cr_assert(child >= 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  snprintf(pidfile, sizeof(pidfile), "%s/redis.pid", dir);
  pid_t named[] = {foreign, child};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(pidfile, "w");
    cr_assert_not_null(f);
    fprintf(f, "%d\n", (int)named[i]);
    fclose(f);
    cr_assert_eq(
        tally_embedded_init(&loop, &emb, dir, NULL, &log_, err, sizeof(err)), 0,
        "%s", err);
    inited = true;
    cr_expect(!gone(named[i]), "pid %d is left alone", (int)named[i]);
    tally_embedded_stop(&emb, 1000, on_stop);
    cr_assert(run_until(stopped, 5000));
    stops = 0;
  }
  cr_expect(strstr(log_text(), "embedded.leftover") == NULL, "%s", log_text());
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  kill(foreign, SIGKILL);
  cr_expect_eq(waitpid(foreign, NULL, 0), foreign);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", other);
  cr_expect_eq(system(cmd), 0);
  cr_expect_eq(uv_loop_close(&loop), 0);
}

Test(embedded, reports_a_missing_executable_by_name) {
  cr_assert_eq(tally_embedded_init(&loop, &emb, dir,
                                   "/nonexistent/redis-server", &log_, err,
                                   sizeof(err)),
               0, "%s", err);
  inited = true;
  cr_expect_lt(tally_embedded_start(&emb, err, sizeof(err)), 0);
  cr_expect(strstr(err, "/nonexistent/redis-server") != NULL, "%s", err);
  cr_expect(strstr(err, "no such file") != NULL, "%s", err);
  cr_expect(!emb.running);
  stop_and_close(1000);
}

Test(embedded, refuses_a_data_dir_too_long_for_a_socket_path) {
  char path[400];
  int n = snprintf(path, sizeof(path), "%s/", dir);
  memset(path + n, 'a', 100);
  path[n + 100] = '\0';
  cr_expect_lt(
      tally_embedded_init(&loop, &emb, path, NULL, &log_, err, sizeof(err)), 0);
  cr_expect(strstr(err, "limit of 107") != NULL, "%s", err);
  cr_expect(strstr(err, "/redis.sock") != NULL, "%s", err);
  cr_expect_eq(uv_loop_close(&loop), 0, "a failed init leaves no handle");
}
