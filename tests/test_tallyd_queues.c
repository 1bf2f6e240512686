/* Queues on one server (issue 25): tallyd consumes the default queue and
 * every queue a contest config names, each in keys of its own
 * (<p>:{q}:...); a job read from another queue than its contest's is
 * dead-lettered naming both; --queues narrows what one tallyd takes and
 * it says which configured contest it leaves to others. Through a real
 * redis-server and tallyd. */
#include "cli_fixture.h"
#include "redis_fixture.h"
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
static redisContext *c;
static char tasks[512];

static void put(const char *name, const char *text) {
  td_put(tasks, name, text);
}

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  td_copy_tasks(server.dir, tasks, sizeof(tasks));
  put("c1.contest.json",
      "{\"name\": \"c1\", \"tasks\": [\"sum\"], \"queue\": \"q1\"}");
  put("c2.contest.json",
      "{\"name\": \"c2\", \"tasks\": [\"sum\"], \"queue\": \"q2\"}");
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_queues, .init = setup, .fini = teardown, .timeout = 120);

static void push(const char *stream, const char *contest, const char *sub) {
  char job[300];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"task\":\"sum\",\"participant\":\"p\","
           "\"contest\":\"%s\",\"evaluations\":{\"0\":1,\"1\":1,\"2\":0,"
           "\"3\":0}}",
           sub, contest);
  redisReply *r = redisCommand(c, "XADD %s * job %s", stream, job);
  cr_assert(r != NULL && r->type == REDIS_REPLY_STRING, "XADD %s", stream);
  freeReplyObject(r);
}

/* Waits until key (a stream) has n entries. */
static bool wait_len(const char *key, long long n, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    if (td_xlen(c, key) >= n)
      return true;
    usleep(50000);
  }
  return false;
}

static long long exists(const char *key) {
  redisReply *r = redisCommand(c, "EXISTS %s", key);
  long long v = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

static void start(const char *const *more) {
  const char *args[12] = {"--tasks", tasks};
  size_t n = 2;
  for (size_t i = 0; more != NULL && more[i] != NULL; i++)
    args[n++] = more[i];
  args[n] = NULL;
  cr_assert_eq(td_start(&daemon_, &server, "queues", args, NULL), 0);
  int port = td_http_port(&daemon_);
  int status = 0;
  for (int i = 0; i < 400 && status != 200; i++) {
    td_http_t r = td_http(server.dir, port, "/readyz", "");
    status = r.status;
    free(r.body);
    if (status != 200)
      usleep(50000);
  }
  TD_REQUIRE(&daemon_, status == 200, "tallyd never became ready");
}

Test(tallyd_queues, each_contest_in_its_queue_and_a_stray_job_dead_lettered) {
  /* A named queue's contest channel is a shard channel, main's a plain
   * one, on one server too. */
  redisContext *shard = td_connect(&server), *plain = td_connect(&server);
  freeReplyObject(redisCommand(shard, "SSUBSCRIBE tally:{q1}:{c1}:events"));
  freeReplyObject(redisCommand(plain, "SUBSCRIBE tally:{default}:events"));
  start(NULL);
  TD_REQUIRE(&daemon_, td_log_has(&daemon_, "queues main,q1,q2"),
             "the default queues are main and those the configs name");
  push("tally:{q1}:jobs", "c1", "a");
  push("tally:{q2}:jobs", "c2", "b");
  push("tally:jobs", "default", "m");
  /* c1's job on q2's stream. */
  push("tally:{q2}:jobs", "c1", "stray");
  TD_REQUIRE(&daemon_, wait_len("tally:{q1}:results", 1, 20000), "q1");
  TD_REQUIRE(&daemon_, wait_len("tally:{q2}:results", 1, 20000), "q2");
  TD_REQUIRE(&daemon_, wait_len("tally:results", 1, 20000), "main");
  TD_REQUIRE(&daemon_, wait_len("tally:{q2}:dead", 1, 20000), "stray");
  redisReply *r = redisCommand(c, "XRANGE tally:{q2}:dead - +");
  cr_assert(r != NULL && r->elements == 1);
  const redisReply *f = r->element[0]->element[1];
  bool named = false;
  for (size_t k = 0; k + 1 < f->elements; k += 2)
    if (strcmp(f->element[k]->str, "error") == 0)
      named = strcmp(f->element[k + 1]->str,
                     "contest: contest \"c1\" belongs to queue \"q1\", but the "
                     "job came from queue \"q2\"") == 0;
  cr_expect(named, "the dead letter names both queues");
  freeReplyObject(r);
  /* Each contest's state in its queue's keys, nothing under another's. */
  cr_expect_eq(exists("tally:{q1}:{c1}:ranking"), 1);
  cr_expect_eq(exists("tally:{q2}:{c2}:ranking"), 1);
  cr_expect_eq(exists("tally:{default}:ranking"), 1,
               "the main queue keeps the layout of before");
  cr_expect_eq(exists("tally:{c1}:ranking"), 0);
  cr_expect_eq(exists("tally:{q2}:{c1}:ranking"), 0);
  cr_expect_eq(exists("tally:{q1}:submission:a"), 1);
  cr_expect_eq(exists("tally:submission:a"), 0);
  cr_expect_eq(td_xlen(c, "tally:dead"), 0);
  cr_expect_eq(td_xlen(c, "tally:{q1}:dead"), 0);
  const char *kinds[] = {"smessage", "message"};
  redisContext *subs[] = {shard, plain};
  for (int k = 0; k < 2; k++) {
    void *m = NULL;
    cr_assert_eq(redisGetReply(subs[k], &m), REDIS_OK, "no %s", kinds[k]);
    redisReply *e = m;
    cr_expect(e->type == REDIS_REPLY_ARRAY && e->elements == 3 &&
                  strcmp(e->element[0]->str, kinds[k]) == 0,
              "a %s", kinds[k]);
    freeReplyObject(e);
    redisFree(subs[k]);
  }

  int port = td_http_port(&daemon_);
  td_http_t m = td_http(server.dir, port, "/metrics", "");
  cr_expect(strstr(m.body, "tally_queue_jobs_total{queue=\"q2\",outcome="
                           "\"dead_lettered\"} 1") != NULL,
            "%s", m.body);
  cr_expect(strstr(m.body, "tally_queue_jobs_total{queue=\"q1\",outcome="
                           "\"scored\"} 1") != NULL,
            "%s", m.body);
  cr_expect(strstr(m.body, "tally_jobs_total{outcome=\"scored\"} 3") != NULL,
            "the totals add the queues up: %s", m.body);
  free(m.body);
  td_http_t ready = td_http(server.dir, port, "/readyz", "");
  cr_expect_eq(ready.status, 200);
  cr_expect(strstr(ready.body, "queue q1\n") != NULL, "%s", ready.body);
  free(ready.body);

  /* A clean stop drains every queue. */
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 20000);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

/* The results API reads each contest from its queue's keys, and follows
 * each queue's event stream. */
Test(tallyd_queues, the_api_reads_each_contest_from_its_queue) {
  start(NULL);
  int port = td_http_port(&daemon_);
  char out[600], cmd[1400];
  snprintf(out, sizeof(out), "%s/events-c2.txt", server.dir);
  snprintf(cmd, sizeof(cmd),
           "curl -s -N --max-time 6 -o '%s' "
           "'http://127.0.0.1:%d/api/contests/c2/events' &",
           out, port);
  cr_assert_eq(system(cmd), 0);
  usleep(700000);
  push("tally:{q1}:jobs", "c1", "a");
  push("tally:{q2}:jobs", "c2", "b");
  push("tally:jobs", "default", "m");
  TD_REQUIRE(&daemon_, wait_len("tally:{q2}:results", 1, 20000), "q2");
  TD_REQUIRE(&daemon_, wait_len("tally:results", 1, 20000), "main");
  td_http_t r = td_http(server.dir, port, "/api/contests", "");
  cr_expect_eq(r.status, 200);
  cr_expect(strstr(r.body, "\"c1\"") && strstr(r.body, "\"c2\"") &&
                strstr(r.body, "\"default\""),
            "every queue's contests: %s", r.body);
  free(r.body);
  r = td_http(server.dir, port, "/api/contests/c1/ranking", "");
  cr_expect_eq(r.status, 200);
  cr_expect(strstr(r.body, "\"p\"") != NULL, "c1's ranking from q1: %s",
            r.body);
  free(r.body);
  r = td_http(server.dir, port, "/api/contests/default/ranking", "");
  cr_expect(strstr(r.body, "\"p\"") != NULL, "%s", r.body);
  free(r.body);
  /* c2's board got its score from q2's event stream. */
  bool got = false;
  for (int i = 0; i < 100 && !got; i++) {
    FILE *f = fopen(out, "r");
    char text[4096] = "";
    size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
    text[n] = '\0';
    if (f != NULL)
      fclose(f);
    got = strstr(text, "\"participant\":\"p\"") != NULL;
    if (!got)
      usleep(100000);
  }
  cr_expect(got, "no event for c2");
  /* Each contest's queue, published for tally and the platforms. */
  redisReply *q = redisCommand(c, "HGET tally:queues c2");
  cr_expect(q != NULL && q->type == REDIS_REPLY_STRING &&
                strcmp(q->str, "q2") == 0,
            "tally:queues c2");
  freeReplyObject(q);
}

/* The tally command finds each contest's queue: submit routes each job
 * to its contest's queue, ranking and report read the contest from it,
 * status and results take --queue, and rescore goes over every queue. */
Test(tallyd_queues, the_tally_command_follows_each_contests_queue) {
  start(NULL);
  /* tallyd publishes the contests' queues. */
  bool published = false;
  for (int i = 0; i < 100 && !published; i++) {
    published = exists("tally:queues") == 1;
    if (!published)
      usleep(100000);
  }
  cr_assert(published, "tally:queues not published");
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "queues");
  tc_write_file("jobs.jsonl",
                "{\"submission\":\"s1\",\"task\":\"sum\",\"participant\":"
                "\"ann\",\"contest\":\"c1\",\"evaluations\":{\"0\":1,\"1\":1,"
                "\"2\":1,\"3\":1}}\n"
                "{\"submission\":\"s2\",\"task\":\"sum\",\"participant\":"
                "\"bob\",\"contest\":\"c2\",\"evaluations\":{\"0\":1,\"1\":0,"
                "\"2\":0,\"3\":0}}\n"
                "{\"submission\":\"s3\",\"task\":\"sum\",\"participant\":"
                "\"cy\",\"evaluations\":{\"0\":0,\"1\":0,\"2\":0,\"3\":1}}"
                "\n");
  const char *submit[] = {"submit", "--redis", server.url, tc_at("jobs.jsonl"),
                          NULL};
  tc_run_t t = tc_run(submit, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  tc_run_free(&t);
  TD_REQUIRE(&daemon_, wait_len("tally:{q1}:results", 1, 20000), "q1");
  TD_REQUIRE(&daemon_, wait_len("tally:{q2}:results", 1, 20000), "q2");
  TD_REQUIRE(&daemon_, wait_len("tally:results", 1, 20000), "main");
  cr_expect_eq(td_xlen(c, "tally:{q1}:dead") + td_xlen(c, "tally:{q2}:dead") +
                   td_xlen(c, "tally:dead"),
               0, "every job went to its contest's queue");

  const char *ranking[] = {"ranking",   "--redis", server.url, "--json",
                           "--contest", "c1",      NULL};
  t = tc_run(ranking, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"ann\"") != NULL, "c1 from q1: %s", t.out);
  tc_run_free(&t);

  const char *status[] = {"status", "--redis", server.url, "--queue",
                          "q2",     "--json",  NULL};
  t = tc_run(status, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"queue\":\"q2\"") != NULL, "%s", t.out);
  tc_run_free(&t);

  const char *results[] = {"results", "--redis", server.url,    "--queue", "q2",
                           "--from",  "0",       "--no-follow", NULL};
  t = tc_run(results, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"submission\":\"s2\"") != NULL, "%s", t.out);
  cr_expect(strstr(t.out, "s1") == NULL, "only q2's: %s", t.out);
  tc_run_free(&t);

  const char *bad[] = {"status", "--redis", server.url, "--queue", "a:b", NULL};
  t = tc_run(bad, NULL, NULL);
  cr_expect_eq(t.status, 2);
  cr_expect(strstr(t.err, "\"a:b\" is not a queue name") != NULL, "%s", t.err);
  tc_run_free(&t);

  /* A rescore goes over every queue. */
  const char *rescore[] = {"rescore", "--redis", server.url, "--tasks",
                           tasks,     "--task",  "sum",      NULL};
  t = tc_run(rescore, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.err, "queue q1:") != NULL &&
                strstr(t.err, "queue q2:") != NULL &&
                strstr(t.err, "queue main:") != NULL,
            "%s", t.err);
  tc_run_free(&t);
  tc_teardown();
}

Test(tallyd_queues, queues_narrows_what_one_tallyd_takes) {
  const char *more[] = {"--queues", "q1", NULL};
  start(more);
  push("tally:{q1}:jobs", "c1", "a");
  push("tally:{q2}:jobs", "c2", "b");
  TD_REQUIRE(&daemon_, wait_len("tally:{q1}:results", 1, 20000), "q1");
  usleep(500000);
  cr_expect_eq(td_xlen(c, "tally:{q2}:results"), 0, "q2 is left alone");
  cr_expect(td_log_has(&daemon_, "contest c2 belongs to queue q2, which this "
                                 "tallyd does not consume"));
  cr_expect(td_log_has(&daemon_, "queues q1,"));
}

Test(tallyd_queues, refuses_bad_queue_settings) {
  const char *bad[][4] = {{"--queues", "q1,q1", NULL},
                          {"--queues", "a{b}", NULL},
                          {"--default-queue", "a,b", NULL}};
  const char *want[] = {"queue q1 is listed twice",
                        "\"a{b}\" is not a queue name",
                        "\"a,b\" is not a queue name"};
  for (size_t i = 0; i < 3; i++) {
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "%s/tallyd --tasks '%s' %s '%s' 2>&1",
             TALLY_BINARY_DIR, tasks, bad[i][0], bad[i][1]);
    FILE *p = popen(cmd, "r");
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s: %d", cmd,
              status);
    cr_expect(strstr(out, want[i]) != NULL, "%s: %s", cmd, out);
  }
}
