/* tally migrate (issue 25): a database written in queue main (the layout
 * of before queues) is moved into a named queue, the step before a Redis
 * Cluster. Populated by a real tallyd on a real redis-server: results
 * with their bodies, public events naming large views, a token, pending
 * jobs; then migrated, and a tallyd on the new queue carries on from
 * where the old one stopped, answering as before. */
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

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  td_copy_tasks(server.dir, tasks, sizeof(tasks));
  td_put(tasks, "c1.contest.json", "{\"name\": \"c1\", \"tasks\": [\"sum\"]}");
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(migrate, .init = setup, .fini = teardown, .timeout = 120);

/* Job sub of participant who in contest, with a long public text on
 * testcase 0 when long_text (its view goes to a key of its own). */
static void push(const char *contest, const char *sub, const char *who,
                 bool long_text) {
  char text[700] = "";
  if (long_text) {
    memset(text, 'x', 600);
    text[600] = '\0';
  }
  char job[1200];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"task\":\"sum\",\"participant\":\"%s\","
           "\"contest\":\"%s\",\"evaluations\":{\"0\":{\"outcome\":1,"
           "\"text\":\"%s\"},\"1\":1,\"2\":0,\"3\":1}}",
           sub, who, contest, text);
  td_push(c, job, NULL);
}

static void start(const char *name, const char *const *more) {
  const char *args[12] = {"--tasks", tasks};
  size_t n = 2;
  for (size_t i = 0; more != NULL && more[i] != NULL; i++)
    args[n++] = more[i];
  args[n] = NULL;
  cr_assert_eq(td_start(&daemon_, &server, name, args, NULL), 0);
  char why[512];
  TD_REQUIRE(&daemon_,
             td_wait_ready(&daemon_, server.dir, 20000, why, sizeof(why)),
             "tallyd never became ready: %s", why);
}

static void stop(void) {
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 20000);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  memset(&daemon_, 0, sizeof(daemon_));
}

static tc_run_t tally(const char *const *args) {
  return tc_run(args, NULL, NULL);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every key under tally:, sorted, one a line. */
static char *keys_now(void) {
  redisReply *r = redisCommand(c, "KEYS tally:*");
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
  size_t total = 1;
  for (size_t i = 0; i < r->elements; i++)
    total += r->element[i]->len + 1;
  char **names = calloc(r->elements + 1, sizeof(char *));
  for (size_t i = 0; i < r->elements; i++)
    names[i] = r->element[i]->str;
  qsort(names, r->elements, sizeof(char *), cmp_str);
  char *out = calloc(total, 1);
  for (size_t i = 0; i < r->elements; i++) {
    strcat(out, names[i]);
    strcat(out, "\n");
  }
  free(names);
  freeReplyObject(r);
  return out;
}

static long long exists(const char *key) {
  redisReply *r = redisCommand(c, "EXISTS %s", key);
  long long v = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

static td_http_t get(const char *path, const char *extra) {
  return td_http(server.dir, td_http_port(&daemon_), path, extra);
}

Test(migrate, moves_a_populated_main_queue_into_a_named_one) {
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "migrate");
  start("before", NULL);
  push("c1", "s1", "alice", true);
  push("c1", "s2", "bob", false);
  push("odd:{x}%", "s3", "alice", false);
  /* A contest of main named like another queue, q2, whose jobs stream
   * exists: the queue's keys are not the contest's. */
  push("q2", "s6", "dave", false);
  cr_assert_eq(td_wait_outcomes(c, 4, 20000), 4);
  freeReplyObject(redisCommand(c, "XADD tally:{q2}:jobs * job {}"));
  /* A token on s1 shows alice its whole result. */
  td_push(c,
          "{\"type\":\"token\",\"submission\":\"s1\",\"participant\":"
          "\"alice\"}",
          NULL);
  for (int i = 0; i < 200 && td_xlen(c, "tally:results") < 5; i++)
    usleep(50000);
  cr_assert_eq(td_xlen(c, "tally:results"), 5);

  const char *tok[] = {"token",    "--data-dir",    server.dir, "--redis",
                       server.url, "--participant", "alice",    NULL};
  tc_run_t t = tally(tok);
  cr_assert_eq(t.status, 0, "%s", t.err);
  char bearer[200];
  snprintf(bearer, sizeof(bearer), "-H 'Authorization: Bearer %.*s'",
           (int)strcspn(t.out, "\n"), t.out);
  tc_run_free(&t);
  td_http_t ranking = get("/api/contests/c1/ranking", "");
  td_http_t odd = get("/api/contests/odd%3A%7Bx%7D%25/ranking", "");
  td_http_t mine = get("/api/contests/c1/participants/alice", bearer);
  cr_assert_eq(ranking.status, 200, "%s", ranking.body);
  cr_assert_eq(odd.status, 200, "%s", odd.body);
  cr_assert_eq(mine.status, 200, "%s", mine.body);
  cr_assert(strstr(mine.body, "xxxxxxxxxx") != NULL,
            "the long text is in alice's view: %s", mine.body);
  const char *res[] = {"results", "--redis",     server.url, "--from",
                       "0",       "--no-follow", NULL};
  tc_run_t before = tally(res);
  cr_assert_eq(before.status, 0, "%s", before.err);
  /* A large view went to a key of its own. */
  redisReply *vk = redisCommand(c, "KEYS tally:*view:*");
  cr_assert(vk != NULL && vk->elements >= 1, "no view key");
  freeReplyObject(vk);
  stop();

  /* Jobs pushed while no tallyd runs wait in the stream. */
  push("c1", "s4", "carol", false);
  push("odd:{x}%", "s5", "carol", false);

  /* A lease says a tallyd runs: nothing moves. */
  freeReplyObject(redisCommand(c, "SET tally:consumer:other x"));
  const char *mig[] = {"migrate",    "--redis", server.url,
                       "--to-queue", "q1",      NULL};
  t = tally(mig);
  cr_expect_eq(t.status, 1);
  cr_expect(strstr(t.err, "tally:consumer:other exists") != NULL, "%s", t.err);
  tc_run_free(&t);
  freeReplyObject(redisCommand(c, "DEL tally:consumer:other"));
  char *keys0 = keys_now();
  const char *dry[] = {"migrate", "--redis",   server.url, "--to-queue",
                       "q1",      "--dry-run", NULL};
  t = tally(dry);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "would move") != NULL, "%s", t.out);
  tc_run_free(&t);
  char *keys1 = keys_now();
  cr_expect_str_eq(keys1, keys0, "a dry run changes nothing");
  free(keys0);
  free(keys1);
  const char *bad[] = {"migrate",    "--redis", server.url,
                       "--to-queue", "main",    NULL};
  t = tally(bad);
  cr_expect_eq(t.status, 2);
  tc_run_free(&t);

  t = tally(mig);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "moved ") != NULL &&
                strstr(t.out, "into queue q1 (3 contests;") != NULL,
            "%s", t.out);
  cr_expect_eq(td_xlen(c, "tally:{q2}:jobs"), 1, "queue q2's stream stays");
  cr_expect_eq(exists("tally:{q1}:{q2}:ranking"), 1, "contest q2 moved");
  tc_run_free(&t);
  /* Nothing of queue main is left: only the global keys and q1's. */
  char *keys2 = keys_now();
  static const char *const global[] = {"tally:secret\n", "tally:configured\n",
                                       "tally:contest-times\n",
                                       "tally:queues\n", "tally:freezes\n"};
  for (char *line = keys2; *line;) {
    size_t n = strcspn(line, "\n") + 1;
    bool ok = strncmp(line, "tally:{q1}:", 11) == 0 ||
              strncmp(line, "tally:{q2}:", 11) == 0;
    for (size_t g = 0; !ok && g < sizeof(global) / sizeof(global[0]); g++)
      ok = strncmp(line, global[g], n) == 0;
    cr_expect(ok, "left in queue main: %.*s", (int)n - 1, line);
    line += n;
  }
  free(keys2);
  /* Again: nothing more to move. */
  t = tally(mig);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "moved 0 keys") != NULL, "%s", t.out);
  tc_run_free(&t);

  /* tallyd on queue q1 goes on: the waiting jobs are scored into the
   * moved state, and everything reads as before. */
  td_put(tasks, "c1.contest.json",
         "{\"name\": \"c1\", \"tasks\": [\"sum\"], \"queue\": \"q1\"}");
  const char *more[] = {"--default-queue", "q1", NULL};
  start("after", more);
  for (int i = 0; i < 200 && td_xlen(c, "tally:{q1}:results") < 7; i++)
    usleep(50000);
  cr_assert_eq(td_xlen(c, "tally:{q1}:results"), 7);
  const char *res_q[] = {"results", "--redis",     server.url, "--queue",
                         "q1",      "--from",      "0",        "--count",
                         "7",       "--no-follow", NULL};
  t = tally(res_q);
  cr_expect_eq(t.status, 0, "%s", t.err);
  /* The same entries first (IDs kept), bodies and all; then the new. */
  cr_expect(strncmp(t.out, before.out, strlen(before.out)) == 0 &&
                strlen(t.out) > strlen(before.out),
            "the same results, bodies and all:\n%s\nthen:\n%s", before.out,
            t.out);
  tc_run_free(&t);
  tc_run_free(&before);
  td_http_t mine2 = get("/api/contests/c1/participants/alice", bearer);
  cr_expect_eq(mine2.status, 200, "%s", mine2.body);
  cr_expect_str_eq(mine2.body, mine.body, "alice sees what she saw");
  td_http_t ranking2 = get("/api/contests/c1/ranking", "");
  cr_expect(strstr(ranking2.body, "\"carol\"") != NULL, "%s", ranking2.body);
  cr_expect(strstr(ranking2.body, "\"alice\"") != NULL &&
                strstr(ranking2.body, "\"bob\"") != NULL,
            "%s", ranking2.body);
  td_http_t odd2 = get("/api/contests/odd%3A%7Bx%7D%25/ranking", "");
  cr_expect(strstr(odd2.body, "\"carol\"") != NULL, "%s", odd2.body);
  /* The public events still name readable views. */
  redisReply *ev = redisCommand(c, "XRANGE tally:{q1}:public - +");
  cr_assert(ev != NULL && ev->type == REDIS_REPLY_ARRAY);
  int views = 0;
  for (size_t i = 0; i < ev->elements; i++) {
    const redisReply *f = ev->element[i]->element[1];
    for (size_t k = 0; k + 1 < f->elements; k += 2)
      if (strcmp(f->element[k]->str, "view") == 0) {
        views++;
        cr_expect(strncmp(f->element[k + 1]->str, "tally:{q1}:", 11) == 0, "%s",
                  f->element[k + 1]->str);
        redisReply *e = redisCommand(c, "EXISTS %s", f->element[k + 1]->str);
        cr_expect_eq(e->integer, 1, "%s", f->element[k + 1]->str);
        freeReplyObject(e);
      } else if (strcmp(f->element[k]->str, "event") == 0 &&
                 strstr(f->element[k + 1]->str, "view_key") != NULL) {
        cr_expect(strstr(f->element[k + 1]->str,
                         "\"view_key\":\"tally:{q1}:") != NULL,
                  "%s", f->element[k + 1]->str);
      }
  }
  cr_expect_geq(views, 1);
  freeReplyObject(ev);
  /* The contests' queue is published. */
  redisReply *q = redisCommand(c, "HGET tally:queues odd:{x}%%");
  cr_expect(q != NULL && q->type == REDIS_REPLY_STRING &&
                strcmp(q->str, "q1") == 0,
            "odd's queue");
  freeReplyObject(q);
  free(ranking.body);
  free(odd.body);
  free(mine.body);
  free(mine2.body);
  free(ranking2.body);
  free(odd2.body);
  tc_teardown();
}
