/* tally reload, and tally rescore while tallyd posts, against a real
 * tallyd and redis-server: the reload is followed until its rescore is
 * done, and a rescore among concurrent posts ends where a rescore from
 * scratch of the same jobs does. */
#include "cli_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Long enough for an ASan build on a loaded 2-core machine. */
#define WAIT_MS 60000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400], pidfile[400];
static char dir[64]; /* where tally's output goes */

#define ALPHA(first)                                                           \
  "{\"name\": \"alpha\", \"score_type\": \"GroupMin\",\n"                      \
  " \"score_type_parameters\": [[" first ", \"^a\"], [60, \"^b\"]],\n"         \
  " \"testcases\": {\"a1\": true, \"b1\": false}, \"score_precision\": 2}\n"

static void put_file(const char *name, const char *text) {
  td_write_file(tasks, name, text);
}

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  tc_setup(dir, sizeof(dir), "cli-contest");
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  snprintf(pidfile, sizeof(pidfile), "%s/tallyd.pid", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  put_file("alpha.json", ALPHA("40"));
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
  tc_teardown();
}

TestSuite(cli_contest, .init = setup, .fini = teardown, .timeout = 180);

/* Fails the test after printing the daemon's log. */
#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

static void start_daemon(const char *auto_rescore) {
  const char *argv[] = {"--tasks",        tasks,        "--pidfile", pidfile,
                        "--auto-rescore", auto_rescore, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
  for (int waited = 0; waited < WAIT_MS && access(pidfile, F_OK) != 0;
       waited += 20)
    td_sleep_ms(20);
  require(access(pidfile, F_OK) == 0, "no pid file");
}

static char *hget(const char *key, const char *field) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  char *v = r && r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
  freeReplyObject(r);
  return v;
}

/* Waits until the progress hash says a rescore is done. */
static void wait_rescore_done(void) {
  char *state = NULL;
  for (int waited = 0; waited < WAIT_MS; waited += 50) {
    free(state);
    state = hget("tally:rescore", "state");
    if (state != NULL && strcmp(state, "done") == 0)
      break;
    td_sleep_ms(50);
  }
  require(state != NULL && strcmp(state, "done") == 0, "no rescore done: %s",
          state ? state : "none");
  free(state);
}

static void push_job(const char *sub, const char *user, int ts,
                     const char *evals) {
  char job[512];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"alpha\","
           "\"contest\":\"c1\",\"timestamp\":%d,\"evaluations\":%s}",
           sub, user, ts, evals);
  td_push(c, job, NULL);
}

static tc_run_t reload(const char *wait) {
  const char *args[] = {"reload",   "--pidfile", pidfile, "--redis",
                        server.url, "--wait",    wait,    NULL};
  return tc_run(args, NULL, server.dir);
}

Test(cli_contest, reload_waits_for_the_rescore_the_reload_starts) {
  start_daemon("true");
  push_job("s1", "alice", 1, "{\"a1\": 1, \"b1\": 1}");
  push_job("s2", "bob", 2, "{\"a1\": 1, \"b1\": 0}");
  require(td_wait_outcomes(c, 2, WAIT_MS) == 2, "no outcomes");
  wait_rescore_done();
  char *score = hget("tally:submission:s1", "score");
  cr_assert_str_eq(score, "100");
  free(score);

  put_file("alpha.json", ALPHA("50"));
  tc_run_t r = reload("60");
  require(r.status == 0, "reload exited %d: %s", r.status, r.err);
  cr_assert(strstr(r.out, "reloaded tallyd (pid ") != NULL, "%s", r.out);
  cr_assert(strstr(r.out, "its rescore went over 2 submissions: 2 changed, "
                          "0 failed") != NULL,
            "%s", r.out);
  tc_run_free(&r);
  /* Done means written. */
  score = hget("tally:submission:s1", "score");
  cr_assert_str_eq(score, "110");
  free(score);
  char *total = NULL;
  redisReply *z = redisCommand(c, "ZSCORE tally:{c1}:ranking bob");
  total = z && z->type == REDIS_REPLY_STRING ? strdup(z->str) : NULL;
  freeReplyObject(z);
  cr_assert_str_eq(total, "50");
  free(total);

  /* A broken config is refused: reload says so within a second, with
   * the daemon's error, and exits 2 (issue 24; before, it waited for a
   * rescore that never came). */
  put_file("alpha.json", "{\"name\": \"alpha\",");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r = reload("60");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double took =
      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "refused the new config and keeps the old one: ") !=
                NULL,
            "%s", r.err);
  cr_assert(strstr(r.err, "alpha.json: invalid JSON") != NULL, "%s", r.err);
  cr_expect_lt(took, 1.5, "it took %.2f s", took);
  tc_run_free(&r);

  /* Without Redis, it only signals. */
  char pid[32];
  snprintf(pid, sizeof(pid), "%d", (int)daemon_.pid);
  const char *args[] = {"reload", "--pid", pid, NULL};
  r = tc_run(args, NULL, server.dir);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char want[64];
  snprintf(want, sizeof(want), "sent SIGHUP to tallyd (pid %s)\n", pid);
  cr_assert_str_eq(r.out, want);
  tc_run_free(&r);
}

Test(cli_contest, reload_rejects_a_missing_pid_file_and_bad_usage) {
  const char *args[] = {"reload", "--pidfile", "/nonexistent/tallyd.pid", NULL};
  tc_run_t r = tc_run(args, NULL, server.dir);
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "/nonexistent/tallyd.pid: No such file") != NULL,
            "%s", r.err);
  tc_run_free(&r);
  const char *none[] = {"reload", NULL};
  r = tc_run(none, NULL, server.dir);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "usage:") != NULL, "%s", r.err);
  tc_run_free(&r);
  const char *both[] = {"reload", "--pid", "123", "--pidfile", "x", NULL};
  r = tc_run(both, NULL, server.dir);
  cr_assert_eq(r.status, 2);
  tc_run_free(&r);
}

/* Consistency. */

#define STORED 4000
#define USERS 40

/* The evaluations of job k, drawn from k. */
static const char *evals_of(unsigned k) {
  static const char *const e[] = {
      "{\"a1\": 1, \"b1\": 1}", "{\"a1\": 0, \"b1\": 1}",
      "{\"a1\": 1, \"b1\": 0}", "{\"a1\": 0.5, \"b1\": 1}",
      "{\"a1\": 1, \"b1\": 0.25}"};
  return e[(k * 2654435761u >> 7) % 5];
}

/* Stores job text for S under prefix p as tallyd does before its first
 * scoring: the job and the indexes, pipelined (the caller reads 4
 * replies). */
static void store_job(const char *p, const char *S, const char *u,
                      const char *job) {
  redisAppendCommand(c, "HSET %s:submission:%s job %s", p, S, job);
  redisAppendCommand(c, "SADD %s:index:task:alpha %s", p, S);
  redisAppendCommand(c, "SADD %s:index:contest:c1 %s", p, S);
  redisAppendCommand(c, "SADD %s:index:participant:%s %s", p, u, S);
}

static void read_replies(size_t n) {
  for (size_t k = 0; k < n; k++) {
    void *r = NULL;
    cr_assert_eq(redisGetReply(c, &r), REDIS_OK);
    cr_assert_neq(((redisReply *)r)->type, REDIS_REPLY_ERROR, "%s",
                  ((redisReply *)r)->str);
    freeReplyObject(r);
  }
}

static char *job_text(unsigned k, const char *S, const char *u) {
  static char job[512];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"alpha\","
           "\"contest\":\"c1\",\"timestamp\":%u,\"evaluations\":%s}",
           S, u, k, evals_of(k));
  return job;
}

/* A flat reply (HGETALL, ZRANGE WITHSCORES) as text, pairs sorted. */
static char *flat_text(const char *fmt, const char *a, const char *b) {
  redisReply *r = redisCommand(c, fmt, a, b);
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
  size_t n = r->elements / 2;
  char **pairs = calloc(n + 1, sizeof(char *));
  size_t len = 1;
  for (size_t k = 0; k < n; k++) {
    size_t l = r->element[2 * k]->len + r->element[2 * k + 1]->len + 3;
    pairs[k] = malloc(l);
    snprintf(pairs[k], l, "%s=%s\n", r->element[2 * k]->str,
             r->element[2 * k + 1]->str);
    len += l;
  }
  freeReplyObject(r);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(pairs[j - 1], pairs[j]) > 0; j--) {
      char *t = pairs[j];
      pairs[j] = pairs[j - 1];
      pairs[j - 1] = t;
    }
  char *out = calloc(1, len);
  for (size_t k = 0; k < n; k++) {
    strcat(out, pairs[k]);
    free(pairs[k]);
  }
  free(pairs);
  return out;
}

Test(cli_contest, a_rescore_among_posts_ends_as_a_rescore_from_scratch) {
  for (unsigned k = 0; k < STORED; k++) {
    char S[32], u[32];
    snprintf(S, sizeof(S), "s%u", k);
    snprintf(u, sizeof(u), "u%u", k % USERS);
    store_job("tally", S, u, job_text(k, S, u));
    if (k % 500 == 499)
      read_replies(4 * 500);
  }
  start_daemon("false");

  /* The rescore runs while tallyd posts new submissions and new jobs for
   * stored ones. */
  const char *args[] = {"rescore",   "--tasks", tasks,    "--redis", server.url,
                        "--contest", "c1",      "--json", NULL};
  pid_t pid = tc_start(args, NULL, server.dir);
  unsigned pushed = 0;
  for (;;) {
    siginfo_t info = {0};
    waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    if (info.si_pid == pid && pushed >= 50)
      break;
    for (int k = 0; k < 10; k++, pushed++) {
      unsigned n = STORED + pushed;
      char S[32], u[32];
      /* Every other job replaces a stored submission. */
      snprintf(S, sizeof(S), "s%u", pushed % 2 ? n : (pushed * 37) % STORED);
      snprintf(u, sizeof(u), "u%u",
               pushed % 2 ? n % USERS : ((pushed * 37) % STORED) % USERS);
      td_push(c, job_text(n, S, u), NULL);
    }
    td_sleep_ms(5);
  }
  tc_run_t r = tc_finish(pid);
  require(r.status == 0, "rescore: %s%s", r.out, r.err);
  cr_assert(strstr(r.out, "\"failed\":0") != NULL, "%s", r.out);
  cr_log_info("%u jobs posted during the rescore: %s", pushed, r.out);
  tc_run_free(&r);
  require(td_wait_outcomes(c, pushed, WAIT_MS) == pushed, "not every post");

  /* From scratch: the same jobs under another prefix, rescored. */
  redisReply *keys = redisCommand(c, "KEYS tally:submission:*");
  cr_assert(keys != NULL && keys->type == REDIS_REPLY_ARRAY);
  cr_assert_geq(keys->elements, STORED);
  for (size_t k = 0; k < keys->elements; k++) {
    const char *S = keys->element[k]->str + strlen("tally:submission:");
    char *job = hget(keys->element[k]->str, "job");
    cJSON *j = cJSON_Parse(job);
    const char *u = ts_str_at(j, "participant");
    cr_assert_not_null(u, "%s", job);
    store_job("fresh", S, u, job);
    read_replies(4);
    cJSON_Delete(j);
    free(job);
  }
  freeReplyObject(keys);
  const char *again[] = {"rescore",  "--tasks",  tasks,   "--redis",
                         server.url, "--prefix", "fresh", "--contest",
                         "c1",       NULL};
  r = tc_run(again, NULL, server.dir);
  cr_assert_eq(r.status, 0, "%s", r.err);
  tc_run_free(&r);

  /* Every participant's task scores, and both rankings, agree. */
  for (int u = 0; u < USERS; u++) {
    char a[64], b[64];
    snprintf(a, sizeof(a), "tally:{c1}:taskscores:u%d", u);
    snprintf(b, sizeof(b), "fresh:{c1}:taskscores:u%d", u);
    char *x = flat_text("HGETALL %s", a, NULL);
    char *y = flat_text("HGETALL %s", b, NULL);
    cr_assert(strlen(x) > 0, "u%d has no task score", u);
    cr_assert_str_eq(x, y, "u%d", u);
    free(x);
    free(y);
  }
  const char *rk[][2] = {
      {"tally:{c1}:ranking", "fresh:{c1}:ranking"},
      {"tally:{c1}:ranking:public", "fresh:{c1}:ranking:public"}};
  for (int k = 0; k < 2; k++) {
    char *x = flat_text("ZRANGE %s 0 -1 WITHSCORES", rk[k][0], NULL);
    char *y = flat_text("ZRANGE %s 0 -1 WITHSCORES", rk[k][1], NULL);
    cr_assert(strlen(x) > 0);
    cr_assert_str_eq(x, y, "%s", rk[k][0]);
    free(x);
    free(y);
  }
}
