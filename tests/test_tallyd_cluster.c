/* tallyd on a Redis Cluster (issue 25): three masters with a replica each,
 * six queues (one contest each), three tallyd processes given each a
 * different node and nothing else about the cluster. Under a load of
 * jobs a master is SIGKILLed and its replica takes over; a queue's slot
 * is migrated key by key while its jobs flow, then another's by
 * redis-cli --cluster reshard (with thousands of slots around it).
 * Every job ends with exactly one outcome, a result, nothing stays
 * pending, and the rankings equal those of one server scoring the same
 * jobs. */
#include "cli_fixture.h"
#include "cluster_fixture.h"
#include "config/jsonw.h"
#include "redis/slots.h"
#include "redis_fixture.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NQ 6
#define PER_ROUND 40 /* jobs per queue per round */
#define ROUNDS 4

static tk_cluster_t kc;
static bool have_cluster;
static tr_redis_t as_server; /* the cluster's folder, for the logs */
static td_daemon_t daemons[3];
static char tasks[512];
/* Every job pushed, by queue. */
static char ids[NQ][PER_ROUND * ROUNDS][64];
static size_t nids[NQ];
/* The master of each queue's slot as last found, plus one (0: not yet). */
static int owner_of[NQ + 1];

static void put(const char *name, const char *text) {
  td_put(tasks, name, text);
}

static void setup(void) {
  memset(daemons, 0, sizeof(daemons));
  memset(owner_of, 0, sizeof(owner_of));
  memset(nids, 0, sizeof(nids));
  cr_assert_eq(tk_start(&kc, 3, 1), 0, "the cluster did not start");
  have_cluster = true;
  memset(&as_server, 0, sizeof(as_server));
  snprintf(as_server.dir, sizeof(as_server.dir), "%s", kc.dir);
  td_copy_tasks(kc.dir, tasks, sizeof(tasks));
  for (int q = 1; q <= NQ; q++) {
    char name[64], text[200];
    snprintf(name, sizeof(name), "c%d.contest.json", q);
    snprintf(text, sizeof(text),
             "{\"name\": \"c%d\", \"tasks\": [\"sum\"], \"queue\": \"q%d\"}", q,
             q);
    put(name, text);
  }
}

static void teardown(void) {
  for (int i = 0; i < 3; i++)
    td_kill(&daemons[i]);
  if (have_cluster)
    tk_stop(&kc);
}

TestSuite(tallyd_cluster, .init = setup, .fini = teardown, .timeout = 300);

static void jobs_key(int q, char *key, size_t len) {
  snprintf(key, len, "tally:{q%d}:jobs", q);
}

static unsigned slot_of(int q) {
  char key[64];
  jobs_key(q, key, sizeof(key));
  return tally_key_slot(key, strlen(key));
}

/* A command on the master of queue q's slot now (NULL when none). */
static redisReply *on_queue(int q, const char *fmt, const char *a) {
  int owner = tk_owner(&kc, slot_of(q));
  redisContext *c = owner >= 0 ? tk_connect(&kc, owner) : NULL;
  if (c == NULL)
    return NULL;
  redisReply *r = redisCommand(c, fmt, a);
  redisFree(c);
  return r;
}

/* Job k of queue q (participants p0..p6 of contest cq). */
static void job_text(int q, int k, char *job, size_t len) {
  snprintf(job, len,
           "{\"submission\":\"q%d-%d\",\"task\":\"sum\",\"participant\":"
           "\"p%d\",\"contest\":\"c%d\",\"timestamp\":%d,\"evaluations\":"
           "{\"0\":1,\"1\":%s,\"2\":%d,\"3\":0}}",
           q, k, k % 7, q, k, k % 2 ? "0.5" : "1", k % 3 == 0);
}

/* XADD of job to queue q's stream on the master of its slot, following
 * a migration under way (ASK: the importing node; MOVED, TRYAGAIN: the
 * owner again, a moment later). The new id goes to id (64 bytes). */
static void xadd(int q, const char *job, char *id) {
  char key[64];
  jobs_key(q, key, sizeof(key));
  char why[300] = "no master";
  for (int attempt = 0; attempt < 200; attempt++) {
    if (attempt > 0 || owner_of[q] == 0)
      owner_of[q] = 1 + tk_owner(&kc, slot_of(q));
    int node = owner_of[q] - 1;
    bool ask = false;
    for (int hop = 0; hop < 2 && node >= 0; hop++) {
      redisContext *c = tk_connect(&kc, node);
      if (c == NULL)
        break;
      if (ask)
        freeReplyObject(redisCommand(c, "ASKING"));
      redisReply *r = redisCommand(c, "XADD %s * job %s", key, job);
      bool done = r != NULL && r->type == REDIS_REPLY_STRING;
      if (done)
        snprintf(id, 64, "%s", r->str);
      snprintf(why, sizeof(why), "%s", r && r->str ? r->str : "no reply");
      char host[64];
      int port = 0;
      ask = r != NULL && r->type == REDIS_REPLY_ERROR &&
            sscanf(r->str, "ASK %*u %63[^:]:%d", host, &port) == 2;
      node = -1;
      for (int i = 0; ask && i < kc.n; i++)
        if (kc.nodes[i].port == port)
          node = i;
      freeReplyObject(r);
      redisFree(c);
      if (done)
        return;
    }
    usleep(50000);
  }
  cr_assert_fail("XADD %s: %s", key, why);
}

/* Pushes PER_ROUND jobs to each queue. With replicated, each queue's
 * master has a replica online first and a replica must have its jobs
 * before the next queue's (a master is killed after that round: a job
 * only the dead master had would never be scored). */
static void push_round(int round, bool replicated) {
  for (int q = 1; q <= NQ; q++) {
    if (replicated) {
      int owner = tk_owner(&kc, slot_of(q));
      redisContext *c = owner >= 0 ? tk_connect(&kc, owner) : NULL;
      cr_assert_not_null(c, "q%d has no master", q);
      cr_assert(tr_wait_replica_online(c, 30000),
                "q%d: no replica of its master came online within 30 s", q);
      redisFree(c);
    }
    for (int i = 0; i < PER_ROUND; i++) {
      char job[300];
      job_text(q, round * PER_ROUND + i, job, sizeof(job));
      xadd(q, job, ids[q - 1][nids[q - 1]++]);
    }
    /* On the replica too, as a platform that must not lose a job does. */
    int owner = tk_owner(&kc, slot_of(q));
    redisContext *c = owner >= 0 ? tk_connect(&kc, owner) : NULL;
    redisReply *w = c != NULL ? redisCommand(c, "WAIT 1 5000") : NULL;
    cr_assert(!replicated || (w != NULL && w->type == REDIS_REPLY_INTEGER &&
                              w->integer >= 1),
              "q%d: no replica got round %d's jobs", q, round);
    freeReplyObject(w);
    if (c != NULL)
      redisFree(c);
  }
}

/* A live master other than node not. */
static int other_master(int not ) {
  int found = -1;
  for (int i = 0; i < kc.n && found < 0; i++) {
    redisContext *c = tk_connect(&kc, i);
    redisReply *role = c ? redisCommand(c, "ROLE") : NULL;
    if (i != not &&role != NULL && role->type == REDIS_REPLY_ARRAY &&
        strcmp(role->element[0]->str, "master") == 0)
      found = i;
    freeReplyObject(role);
    if (c)
      redisFree(c);
  }
  return found;
}

/* The job ids the outcomes of queue q name (results' "entry", dead
 * letters' "id"), counted into seen (indexed like ids[q]); returns the
 * outcomes found. */
static long long outcomes(int q, unsigned *seen) {
  long long total = 0;
  const char *streams[] = {"tally:{q%d}:results", "tally:{q%d}:dead"};
  const char *fields[] = {"entry", "id"};
  for (int s = 0; s < 2; s++) {
    char key[64];
    snprintf(key, sizeof(key), streams[s], q);
    redisReply *r = on_queue(q, "XRANGE %s - +", key);
    for (size_t i = 0;
         r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
      const redisReply *f = r->element[i]->element[1];
      for (size_t k = 0; k + 1 < f->elements; k += 2) {
        if (strcmp(f->element[k]->str, fields[s]) != 0)
          continue;
        total++;
        for (size_t j = 0; seen != NULL && j < nids[q - 1]; j++)
          if (strcmp(ids[q - 1][j], f->element[k + 1]->str) == 0)
            seen[j]++;
      }
    }
    freeReplyObject(r);
  }
  return total;
}

static bool wait_all(int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 200) {
    bool all = true;
    for (int q = 1; q <= NQ && all; q++)
      all = outcomes(q, NULL) >= (long long)nids[q - 1];
    if (all)
      return true;
    usleep(200000);
  }
  return false;
}

static void start_daemons(void) {
  for (int i = 0; i < 3; i++) {
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", kc.nodes[i].port);
    snprintf(as_server.url, sizeof(as_server.url), "%s", url);
    /* The first one serves HTTP (the results API on the cluster). */
    daemons[i].default_http = i > 0;
    char name[16];
    snprintf(name, sizeof(name), "t%d", i);
    const char *args[] = {"--tasks",
                          tasks,
                          "--default-queue",
                          "q1",
                          "--wait-replicas",
                          "1",
                          i > 0 ? "--http" : NULL,
                          "off",
                          NULL};
    cr_assert_eq(td_start(&daemons[i], &as_server, name, args, NULL), 0);
  }
  char why[512];
  TD_REQUIRE(&daemons[0],
             td_wait_ready(&daemons[0], kc.dir, 30000, why, sizeof(why)),
             "not ready on the cluster: %s", why);
  for (int i = 0; i < 3; i++) {
    bool up = false;
    for (int k = 0; k < 300 && !up; k++) {
      up = td_log_has(&daemons[i], "queue q6: following the master");
      if (!up)
        usleep(100000);
    }
    TD_REQUIRE(&daemons[i], up, "tallyd %d never followed queue q6", i);
  }
}

Test(tallyd_cluster, exactly_once_across_a_failover_and_a_migration) {
  start_daemons();

  /* Round 0, then a master SIGKILLed while it is scored. */
  push_round(0, true);
  int victim = tk_owner(&kc, slot_of(1));
  cr_assert(victim >= 0);
  tk_kill(&kc, victim);
  int now = tk_wait_owner_change(&kc, slot_of(1), victim, 30000);
  cr_assert(now >= 0, "no replica took over");
  push_round(1, false);

  /* Round 2 while queue q2's slot moves to another master, key by key. */
  unsigned slot = slot_of(2);
  int from = tk_owner(&kc, slot), to = other_master(from);
  cr_assert(to >= 0);
  cr_assert_eq(tk_migration_begin(&kc, slot, from, to), 0);
  push_round(2, false);
  int moved;
  while ((moved = tk_migration_move(&kc, slot, from, to, 5)) > 0)
    usleep(50000);
  cr_assert_eq(moved, 0, "a MIGRATE failed");
  cr_assert_eq(tk_migration_end(&kc, slot, to), 0);

  /* Round 3 while redis-cli --cluster reshard moves queue q4's slot (and
   * every slot below it on its master) to another master. */
  unsigned slot4 = slot_of(4);
  int from4 = tk_owner(&kc, slot4), to4 = other_master(from4);
  cr_assert(from4 >= 0 && to4 >= 0);
  pid_t reshard = tk_reshard_start(&kc, slot4, from4, to4);
  cr_assert(reshard > 0);
  push_round(3, false);
  cr_assert_eq(tk_reshard_wait(&kc, reshard, 180000), 0,
               "redis-cli --cluster reshard failed: %s/reshard.log", kc.dir);
  cr_expect_eq(tk_owner(&kc, slot4), to4, "q4's slot did not move");

  bool done = wait_all(120000);
  for (int i = 0; i < 3 && !done; i++)
    td_log_dump(&daemons[i]);
  for (int q = 1; q <= NQ && !done; q++) {
    unsigned seen[PER_ROUND * ROUNDS] = {0};
    outcomes(q, seen);
    for (size_t j = 0; j < nids[q - 1]; j++)
      if (seen[j] == 0)
        fprintf(stderr, "q%d: job %zu (%s, round %zu) has no outcome\n", q, j,
                ids[q - 1][j], j / PER_ROUND);
  }
  cr_assert(done, "not every job has an outcome");
  for (int q = 1; q <= NQ; q++) {
    unsigned seen[PER_ROUND * ROUNDS] = {0};
    long long n = outcomes(q, seen);
    cr_expect_eq(n, (long long)nids[q - 1], "q%d: %lld outcomes of %zu", q, n,
                 nids[q - 1]);
    for (size_t j = 0; j < nids[q - 1]; j++)
      cr_expect_eq(seen[j], 1, "q%d: job %s has %u outcomes", q, ids[q - 1][j],
                   seen[j]);
    char key[64];
    snprintf(key, sizeof(key), "tally:{q%d}:dead", q);
    redisReply *r = on_queue(q, "XLEN %s", key);
    cr_expect(r != NULL && r->integer == 0, "q%d has dead letters", q);
    freeReplyObject(r);
    /* Nothing left pending once the last posts are done. */
    long long pending = -1;
    jobs_key(q, key, sizeof(key));
    for (int i = 0; i < 100 && pending != 0; i++) {
      r = on_queue(q, "XPENDING %s tallyd", key);
      pending = r != NULL && r->type == REDIS_REPLY_ARRAY
                    ? r->element[0]->integer
                    : -1;
      freeReplyObject(r);
      if (pending != 0)
        usleep(100000);
    }
    cr_expect_eq(pending, 0, "q%d: entries left pending", q);
  }
  cr_expect_eq(tk_owner(&kc, slot), to, "the slot did not move");
  /* The daemons followed both, without a restart. */
  char moved_to[120], failed_to[120];
  snprintf(moved_to, sizeof(moved_to),
           "queue q2: following the master of its slot %u at 127.0.0.1:%d",
           slot, kc.nodes[to].port);
  snprintf(failed_to, sizeof(failed_to),
           "queue q1: following the master of its slot %u at 127.0.0.1:%d",
           slot_of(1), kc.nodes[now].port);
  bool saw_move = false, saw_failover = false;
  for (int i = 0; i < 3; i++) {
    saw_move = saw_move || td_log_has(&daemons[i], moved_to);
    saw_failover = saw_failover || td_log_has(&daemons[i], failed_to);
  }
  cr_expect(saw_move, "no daemon said: %s", moved_to);
  cr_expect(saw_failover, "no daemon said: %s", failed_to);
  /* The results API answers from the cluster: every queue's contests,
   * and a ranking from the master that took the migrated slot. */
  int port = td_http_port(&daemons[0]);
  td_http_t r = td_http(kc.dir, port, "/api/contests", "");
  cr_expect_eq(r.status, 200, "%s", r.body);
  cr_expect(strstr(r.body, "\"c6\"") != NULL && strstr(r.body, "\"c1\""), "%s",
            r.body);
  free(r.body);
  r = td_http(kc.dir, port, "/api/contests/c2/ranking", "");
  cr_expect_eq(r.status, 200, "%s", r.body);
  cr_expect(strstr(r.body, "\"p6\"") != NULL, "%s", r.body);
  free(r.body);
  /* Ready again once every queue's connections are back (their backoff
   * grew while the slot migrated). */
  bool ready = false;
  for (int k = 0; k < 150 && !ready; k++) {
    r = td_http(kc.dir, port, "/readyz", "");
    ready = r.status == 200;
    if (!ready && k == 149)
      cr_expect_fail("not ready after the migration: %s", r.body);
    free(r.body);
    if (!ready)
      usleep(100000);
  }

  /* The tally command reaches a queue's master from any node. */
  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "cluster");
  const char *st[] = {"status", "--redis", kc.url, "--queue",
                      "q3",     "--json",  NULL};
  tc_run_t t = tc_run(st, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"queue\":\"q3\"") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *rk[] = {"ranking", "--redis",   kc.url, "--queue", "q2",
                      "--json",  "--contest", "c2",   NULL};
  t = tc_run(rk, NULL, NULL);
  cr_expect_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "\"p6\"") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *main_q[] = {"status", "--redis", kc.url, "--queue", "main", NULL};
  t = tc_run(main_q, NULL, NULL);
  cr_expect_neq(t.status, 0);
  cr_expect(strstr(t.err, "cannot live") != NULL, "%s", t.err);
  tc_run_free(&t);
  tc_teardown();

  /* The same jobs on one server: the same rankings, private and public. */
  tr_redis_t one;
  cr_assert_eq(tr_redis_start(&one, 0, false), 0);
  td_daemon_t single;
  memset(&single, 0, sizeof(single));
  const char *args[] = {"--tasks", tasks, "--default-queue", "q1", NULL};
  cr_assert_eq(td_start(&single, &one, "single", args, NULL), 0);
  redisContext *c = td_connect(&one);
  for (int q = 1; q <= NQ; q++)
    for (int k = 0; k < PER_ROUND * ROUNDS; k++) {
      char key[64], job[300];
      jobs_key(q, key, sizeof(key));
      job_text(q, k, job, sizeof(job));
      freeReplyObject(redisCommand(c, "XADD %s * job %s", key, job));
    }
  for (int q = 1; q <= NQ; q++) {
    char key[64];
    snprintf(key, sizeof(key), "tally:{q%d}:results", q);
    long long n = 0;
    for (int i = 0; i < 600 && n < PER_ROUND * ROUNDS; i++) {
      n = td_xlen(c, key);
      if (n < PER_ROUND * ROUNDS)
        usleep(50000);
    }
    TD_REQUIRE(&single, n == PER_ROUND * ROUNDS, "q%d on one server", q);
    for (int pub = 0; pub < 2; pub++) {
      snprintf(key, sizeof(key), "tally:{q%d}:{c%d}:ranking%s", q, q,
               pub ? ":public" : "");
      redisReply *a = on_queue(q, "ZRANGE %s 0 -1 WITHSCORES", key);
      redisReply *b = redisCommand(c, "ZRANGE %s 0 -1 WITHSCORES", key);
      cr_assert(a != NULL && b != NULL && a->type == REDIS_REPLY_ARRAY &&
                b->type == REDIS_REPLY_ARRAY);
      cr_expect_eq(a->elements, 14, "%s: 7 participants", key);
      cr_expect_eq(a->elements, b->elements, "%s", key);
      for (size_t i = 0; i < a->elements && i < b->elements; i++)
        cr_expect_str_eq(a->element[i]->str, b->element[i]->str, "%s [%zu]",
                         key, i);
      freeReplyObject(a);
      freeReplyObject(b);
    }
  }
  redisFree(c);
  td_kill(&single);
  tr_redis_stop(&one);
}

/* Waits up to 30 s until queue q's results stream, on its slot's master,
 * holds want entries; returns how many it holds. */
static long long wait_results(int q, long long want) {
  char key[64];
  snprintf(key, sizeof(key), "tally:{q%d}:results", q);
  long long n = 0;
  for (int i = 0; i < 300 && n < want; i++) {
    redisReply *r = on_queue(q, "XLEN %s", key);
    n = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    if (n < want)
      usleep(100000);
  }
  return n;
}

/* A tally command's run, asserted to exit with want. */
static tc_run_t cli_ok(const char *const *args, int want) {
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_expect_eq(t.status, want, "tally %s %s: exit %d: %s%s", args[0],
               args[1] ? args[1] : "", t.status, t.out, t.err);
  return t;
}

/* The sum of a ranking's scores, read from its slot's master. */
static double ranking_sum(int q) {
  char key[64];
  snprintf(key, sizeof(key), "tally:{q%d}:{c%d}:ranking", q, q);
  redisReply *r = on_queue(q, "ZRANGE %s 0 -1 WITHSCORES", key);
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "%s", key);
  double sum = 0;
  for (size_t i = 1; i < r->elements; i += 2)
    sum += strtod(r->element[i]->str, NULL);
  freeReplyObject(r);
  return sum;
}

/* Every command of the tally CLI against a cluster, given any node's
 * URL: submit routes each job to its contest's queue on its slot's
 * master; status and results read one queue; ranking, report, contest
 * and token mix a queue's keys with global ones (freezes, the secret,
 * <p>:queues) that live on other masters; rescore goes over every
 * queue. */
Test(tallyd_cluster, every_cli_command_on_a_cluster) {
  const char *args[] = {"--tasks", tasks, "--default-queue", "q1", NULL};
  snprintf(as_server.url, sizeof(as_server.url), "%s", kc.url);
  cr_assert_eq(td_start(&daemons[0], &as_server, "t0", args, NULL), 0);
  int port = td_http_port(&daemons[0]);
  char why[512];
  TD_REQUIRE(&daemons[0],
             td_wait_ready(&daemons[0], kc.dir, 30000, why, sizeof(why)),
             "not ready on the cluster: %s", why);

  /* A named queue's contest channel is a shard channel, on the master of
   * the queue's slot. */
  int owner = tk_owner(&kc, slot_of(3));
  redisContext *shard = owner >= 0 ? tk_connect(&kc, owner) : NULL;
  cr_assert_not_null(shard);
  freeReplyObject(redisCommand(shard, "SSUBSCRIBE tally:{q3}:{c3}:events"));

  char cwd[64];
  tc_setup(cwd, sizeof(cwd), "cluster-cli");
  tally_buf_t jobs;
  tally_buf_init(&jobs);
  for (int k = 0; k < 10; k++)
    for (int q = 1; q <= NQ; q++) {
      char job[300];
      job_text(q, k, job, sizeof(job));
      tally_buf_puts(&jobs, job);
      tally_buf_putc(&jobs, '\n');
    }
  tc_write_file("jobs.jsonl", jobs.data);
  tally_buf_close(&jobs);
  const char *sub[] = {
      "submit", "--redis",           kc.url, "--ids", "--wait-replicas",
      "1",      tc_at("jobs.jsonl"), NULL};
  tc_run_t t = cli_ok(sub, 0);
  cr_expect(strstr(t.err, "submitted 60 jobs (0 rejected)") != NULL, "%s",
            t.err);
  char *lines[80];
  cr_expect_eq(tc_lines_of(t.out, lines, 80), 60, "one ID a job");
  tc_run_free(&t);
  for (int q = 1; q <= NQ; q++) {
    long long n = wait_results(q, 10);
    TD_REQUIRE(&daemons[0], n == 10, "q%d: %lld results of 10", q, n);
  }

  /* Each of c3's ten score events came on its channel. */
  int events = 0;
  for (;;) {
    void *m = NULL;
    if (redisGetReply(shard, &m) != REDIS_OK)
      break;
    redisReply *e = m;
    if (e->type == REDIS_REPLY_ARRAY && e->elements == 3 &&
        strcmp(e->element[0]->str, "smessage") == 0) {
      cr_expect_str_eq(e->element[1]->str, "tally:{q3}:{c3}:events");
      cr_expect(strstr(e->element[2]->str, "\"contest\":\"c3\"") != NULL, "%s",
                e->element[2]->str);
      events++;
    }
    freeReplyObject(e);
    if (events == 10)
      break;
  }
  if (events != 10)
    td_log_dump(&daemons[0]);
  cr_expect_eq(events, 10, "c3's events on its shard channel");
  redisFree(shard);

  /* While a queue's slot migrates, its keys already moved: the old master
   * answers ASK, and submit sends each job again to the new one (ASKING
   * first), while the replies of another queue on the same master, on
   * the same pipelined connection, are still read in order. Two queues
   * of one master: qa stays, qb moves. */
  int qa = 0, qb = 0;
  for (int a = 1; a <= NQ && qb == 0; a++)
    for (int b = a + 1; b <= NQ && qb == 0; b++)
      if (tk_owner(&kc, slot_of(a)) == tk_owner(&kc, slot_of(b))) {
        qa = a;
        qb = b;
      }
  cr_assert(qb > 0, "six queues on three masters: two share one");
  unsigned slot4 = slot_of(qb);
  int from4 = tk_owner(&kc, slot4), to4 = other_master(from4);
  cr_assert(from4 >= 0 && to4 >= 0);
  cr_assert_eq(tk_migration_begin(&kc, slot4, from4, to4), 0);
  int moved;
  while ((moved = tk_migration_move(&kc, slot4, from4, to4, 100)) > 0)
    ;
  cr_assert_eq(moved, 0, "a MIGRATE failed");
  tally_buf_t more;
  tally_buf_init(&more);
  for (int k = 10; k < 15; k++)
    for (int q = qa; q <= qb; q += qb - qa) {
      char job[300];
      job_text(q, k, job, sizeof(job));
      tally_buf_puts(&more, job);
      tally_buf_putc(&more, '\n');
    }
  tc_write_file("more.jsonl", more.data);
  tally_buf_close(&more);
  const char *sub2[] = {"submit", "--redis",           kc.url,
                        "--ids",  tc_at("more.jsonl"), NULL};
  t = cli_ok(sub2, 0);
  cr_expect(strstr(t.err, "submitted 10 jobs (0 rejected)") != NULL, "%s",
            t.err);
  cr_assert_eq(tc_lines_of(t.out, lines, 80), 10, "%s", t.out);
  /* Each ID printed is its own job's, in input order: qa, qb, qa, ... */
  for (int i = 0; i < 10; i++) {
    int q = i % 2 ? qb : qa;
    int node = q == qb ? to4 : tk_owner(&kc, slot_of(qa));
    redisContext *qc = tk_connect(&kc, node);
    cr_assert_not_null(qc);
    if (q == qb)
      freeReplyObject(redisCommand(qc, "ASKING"));
    char key[64];
    jobs_key(q, key, sizeof(key));
    snprintf(key, sizeof(key), "tally:{q%d}:submission:q%d-%d", q, q,
             10 + i / 2);
    redisReply *rec = redisCommand(qc, "HGET %s entry", key);
    /* Scored already, or still in the stream: the ID is that job's. */
    bool ok = rec != NULL && rec->type == REDIS_REPLY_STRING &&
              strcmp(rec->str, lines[i]) == 0;
    if (!ok) {
      jobs_key(q, key, sizeof(key));
      if (q == qb)
        freeReplyObject(redisCommand(qc, "ASKING"));
      redisReply *e =
          redisCommand(qc, "XRANGE %s %s %s", key, lines[i], lines[i]);
      char want[64];
      snprintf(want, sizeof(want), "\"submission\":\"q%d-%d\"", q, 10 + i / 2);
      ok = e != NULL && e->type == REDIS_REPLY_ARRAY && e->elements == 1 &&
           strstr(e->element[0]->element[1]->element[1]->str, want) != NULL;
      freeReplyObject(e);
    }
    cr_expect(ok, "ID %s (line %d) is not job q%d-%d's", lines[i], i, q,
              10 + i / 2);
    freeReplyObject(rec);
    redisFree(qc);
  }
  tc_run_free(&t);
  cr_assert_eq(tk_migration_end(&kc, slot4, to4), 0);
  for (int q = qa; q <= qb; q += qb - qa) {
    long long n = wait_results(q, 15);
    TD_REQUIRE(&daemons[0], n == 15, "q%d: %lld results of 15", q, n);
  }

  /* One queue's streams: main cannot be one on a cluster. */
  const char *st_main[] = {"status", "--redis", kc.url, NULL};
  t = cli_ok(st_main, 2);
  cr_expect(strstr(t.err, "cannot live") != NULL, "%s", t.err);
  tc_run_free(&t);
  const char *st[] = {"status", "--redis", kc.url, "--default-queue",
                      "q4",     "--json",  NULL};
  t = cli_ok(st, 0);
  cr_expect(strstr(t.out, "\"queue\":\"q4\"") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *res[] = {"results", "--redis",     kc.url, "--queue",
                       "q5",      "--from",      "0",    "--count",
                       "3",       "--no-follow", NULL};
  t = cli_ok(res, 0);
  cr_expect_eq(tc_lines_of(t.out, lines, 80), 3, "%s", t.out);
  tc_run_free(&t);

  /* A contest's commands find its queue in <p>:queues. */
  const char *rk[] = {"ranking", "--redis", kc.url, "--contest",
                      "c5",      "--json",  NULL};
  t = cli_ok(rk, 0);
  cr_expect(strstr(t.out, "\"p6\"") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *fr[] = {"contest", "freeze", "--redis", kc.url, "c5", NULL};
  t = cli_ok(fr, 0);
  tc_run_free(&t);
  const char *sh[] = {"contest", "show", "--redis", kc.url, "c5", NULL};
  t = cli_ok(sh, 0);
  cr_expect(strstr(t.out, "is frozen since") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *pub[] = {"ranking", "--redis",  kc.url,   "--contest",
                       "c5",      "--public", "--json", NULL};
  t = cli_ok(pub, 0);
  cr_expect(strstr(t.out, "\"frozen\":true") != NULL, "%s", t.out);
  tc_run_free(&t);
  const char *unfr[] = {"contest", "unfreeze", "--redis", kc.url, "c5", NULL};
  t = cli_ok(unfr, 0);
  tc_run_free(&t);
  const char *nosuch[] = {"contest", "show", "--redis", kc.url, "c9", NULL};
  t = tc_run(nosuch, NULL, NULL);
  cr_expect_neq(t.status, 0);
  cr_expect(strstr(t.err, "no contest \"c9\"") != NULL, "%s", t.err);
  tc_run_free(&t);
  const char *rep[] = {"report", "--redis", kc.url, "--contest",
                       "c3",     "--json",  NULL};
  t = cli_ok(rep, 0);
  tc_run_free(&t);

  /* A participant's token opens their endpoint on the cluster. */
  const char *tok[] = {"token", "--redis", kc.url, "--participant", "p2", NULL};
  t = cli_ok(tok, 0);
  char bearer[200];
  snprintf(bearer, sizeof(bearer), "-H 'Authorization: Bearer %.*s'",
           (int)strcspn(t.out, "\n"), t.out);
  tc_run_free(&t);
  td_http_t h = {0};
  for (int k = 0; k < 50 && h.status != 200; k++) {
    free(h.body);
    h = td_http(kc.dir, port, "/api/contests/c6/participants/p2", bearer);
    if (h.status != 200)
      usleep(200000); /* the API reads the secret again every second */
  }
  cr_expect_eq(h.status, 200, "%s", h.body);
  free(h.body);

  /* A rescore over every queue, each on its master: the task's maximum
   * doubled doubles every ranking. */
  double before[NQ + 1];
  for (int q = 1; q <= NQ; q++)
    before[q] = ranking_sum(q);
  char path[600];
  snprintf(path, sizeof(path), "%s/sum.json", tasks);
  char *text = tc_slurp(path);
  char *at = strstr(text, "10.5");
  cr_assert_not_null(at);
  memcpy(at, "21.0", 4);
  put("sum.json", text);
  free(text);
  const char *rs[] = {"rescore", "--redis", kc.url, "--tasks",
                      tasks,     "--task",  "sum",  NULL};
  t = cli_ok(rs, 0);
  for (int q = 1; q <= NQ; q++) {
    char said[32];
    snprintf(said, sizeof(said), "queue q%d:", q);
    cr_expect(strstr(t.err, said) != NULL, "%s", t.err);
  }
  cr_expect(strstr(t.err, "queue main") == NULL, "%s", t.err);
  tc_run_free(&t);
  for (int q = 1; q <= NQ; q++) {
    cr_expect(before[q] > 0, "q%d", q);
    /* Each task score rounded to one decimal. */
    double after = ranking_sum(q);
    cr_expect_float_eq(after, 2 * before[q], 0.5, "q%d: %g then %g", q,
                       before[q], after);
  }
  tc_teardown();
}
