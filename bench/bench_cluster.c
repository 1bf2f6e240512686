/* tallyd on a Redis Cluster, end to end: a backlog of jobs spread over six
 * queues (one contest each), scored by one tallyd given one node, with one
 * server (the same six queues) and with clusters of 1, 2 and 3 masters,
 * side by side in one run. For each: jobs/s, the Redis CPU a job costs
 * (all masters together), the busiest master's share, and what Redis
 * alone would allow with one core per master. Medians of --rounds. */
#include "bench_support.h"
#include "cluster_fixture.h"
#include "redis/slots.h"
#include "redis_fixture.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NQ 6

static tk_cluster_t kc;
static bool cluster_up;
static pid_t tallyd, server;
static char tasks[600];

static void stop_all(void) {
  if (tallyd > 0)
    bench_stop(tallyd, SIGKILL, 1000);
  tallyd = 0;
  if (server > 0)
    bench_stop(server, SIGKILL, 1000);
  server = 0;
  if (cluster_up)
    tk_stop(&kc);
  cluster_up = false;
}

/* The task configs with six contests, c1..c6 in queues q1..q6. */
static void make_tasks(void) {
  snprintf(tasks, sizeof(tasks), "%s/tasks", bench_dir());
  char cmd[1400];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s/examples/tasks' '%s'",
           tasks, TALLY_SOURCE_DIR, tasks);
  if (system(cmd) != 0)
    bench_die("cannot copy the example tasks");
  for (int q = 1; q <= NQ; q++) {
    char path[700];
    snprintf(path, sizeof(path), "%s/c%d.contest.json", tasks, q);
    FILE *f = fopen(path, "w");
    if (f == NULL)
      bench_die("%s: cannot write", path);
    fprintf(f, "{\"name\": \"c%d\", \"tasks\": [\"sum\"], \"queue\": \"q%d\"}",
            q, q);
    fclose(f);
  }
}

/* Pushes n jobs to queue q through c, pipelined. */
static void push(redisContext *c, int q, long n) {
  char job[300], key[32];
  snprintf(key, sizeof(key), "tally:{q%d}:jobs", q);
  for (long i = 0; i < n; i++) {
    int len = snprintf(job, sizeof(job),
                       "{\"submission\":\"q%d-%ld\",\"task\":\"sum\","
                       "\"participant\":\"p%ld\",\"contest\":\"c%d\","
                       "\"evaluations\":{\"0\":1,\"1\":0.5,\"2\":%ld,\"3\":0}}",
                       q, i, i % 500, q, i % 2);
    redisAppendCommand(c, "XADD %s * job %b", key, job, (size_t)len);
    if (i % 1000 == 999 || i == n - 1)
      for (long k = i - i % 1000; k <= i; k++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK)
          bench_die("XADD: %s", c->errstr);
        if (r->type == REDIS_REPLY_ERROR)
          bench_die("XADD %s: %s", key, r->str);
        freeReplyObject(r);
      }
  }
}

static void start_tallyd(const char *url) {
  char *argv[] = {(char *)bench_next_to_me("tallyd"),
                  "--tasks",
                  tasks,
                  "--redis",
                  (char *)url,
                  "--workers",
                  "2",
                  "--log-level",
                  "warn",
                  "--default-queue",
                  "q1",
                  "--http",
                  "off",
                  "--auto-rescore",
                  "false",
                  NULL};
  tallyd = bench_spawn(argv, "tallyd.log", "tallyd.log");
}

typedef struct figures_s {
  double jobs_per_s, redis_us_per_job, busiest_share, redis_bound;
} figures_t;

/* Where each queue lives: a connection, and the pid of its server. */
typedef struct placed_s {
  redisContext *c[NQ + 1];
  pid_t pid[NQ + 1];
} placed_t;

static long long results(const placed_t *p) {
  long long n = 0;
  for (int q = 1; q <= NQ; q++) {
    redisReply *r = redisCommand(p->c[q], "XLEN tally:{q%d}:results", q);
    n += r && r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
  }
  return n;
}

/* One run: masters 0 for one server (not a cluster), else a cluster of
 * that many masters; n jobs spread evenly over the queues. */
static figures_t run(long n, int masters) {
  placed_t p;
  memset(&p, 0, sizeof(p));
  char url[820];
  pid_t pids[TK_MAX];
  int npids = 0;
  if (masters == 0) {
    char sock[800], dir[700];
    snprintf(dir, sizeof(dir), "%s/one", bench_dir());
    mkdir(dir, 0700);
    snprintf(sock, sizeof(sock), "%s/redis.sock", dir);
    const char *args[] = {"--port",       "0",  "--dir", dir, "--save", "",
                          "--appendonly", "no", NULL};
    server = tr_redis_spawn(NULL, sock, args, NULL);
    if (server <= 0)
      bench_die("redis-server did not start");
    pids[npids++] = server;
    snprintf(url, sizeof(url), "unix://%s", sock);
    for (int q = 1; q <= NQ; q++) {
      p.c[q] = bench_connect(sock);
      p.pid[q] = server;
    }
  } else {
    if (tk_start(&kc, masters, 0) != 0)
      bench_die("the cluster did not start");
    cluster_up = true;
    for (int i = 0; i < masters; i++)
      pids[npids++] = kc.nodes[i].pid;
    snprintf(url, sizeof(url), "%s", kc.url);
    for (int q = 1; q <= NQ; q++) {
      char key[32];
      snprintf(key, sizeof(key), "tally:{q%d}:jobs", q);
      int owner = tk_owner(&kc, tally_key_slot(key, strlen(key)));
      if (owner < 0)
        bench_die("no master for q%d", q);
      p.c[q] = tk_connect(&kc, owner);
      p.pid[q] = kc.nodes[owner].pid;
    }
  }
  for (int q = 1; q <= NQ; q++)
    push(p.c[q], q, n / NQ);
  double cpu0[TK_MAX];
  for (int i = 0; i < npids; i++)
    cpu0[i] = bench_proc_cpu_s(pids[i], NULL);
  double t0 = bench_now_s();
  start_tallyd(url);
  long want = n / NQ * NQ;
  while (results(&p) < want) {
    if (waitpid(tallyd, NULL, WNOHANG) == tallyd) {
      tallyd = 0;
      bench_show_log("tallyd.log");
      bench_die("tallyd exited");
    }
    if (bench_now_s() - t0 > 600)
      bench_die("the results did not all come within 600 s");
    bench_sleep_ms(5);
  }
  double t1 = bench_now_s();
  double total = 0, busiest = 0;
  for (int i = 0; i < npids; i++) {
    double used = bench_proc_cpu_s(pids[i], NULL) - cpu0[i];
    total += used;
    if (used > busiest)
      busiest = used;
  }
  for (int q = 1; q <= NQ; q++)
    redisFree(p.c[q]);
  stop_all();
  figures_t f;
  f.jobs_per_s = (double)want / (t1 - t0);
  f.redis_us_per_job = total / (double)want * 1e6;
  f.busiest_share = total > 0 ? busiest / total : 0;
  /* One core per master: the busiest master saturates first. */
  f.redis_bound = busiest > 0 ? (double)want / busiest : 0;
  return f;
}

/* A cluster of three masters with a replica each under a backlog; queue
 * q1's master killed (SIGKILL) once a tenth of q1's jobs is scored: the
 * seconds from its death to the first result of q1 the promoted replica
 * holds that was posted after it. */
static double failover_time(long n) {
  if (tk_start(&kc, 3, 1) != 0)
    bench_die("the cluster did not start");
  cluster_up = true;
  char key[32];
  snprintf(key, sizeof(key), "tally:{q1}:jobs");
  unsigned slot = tally_key_slot(key, strlen(key));
  int owner = tk_owner(&kc, slot);
  if (owner < 0)
    bench_die("no master for q1");
  for (int q = 1; q <= NQ; q++) {
    char k[32];
    snprintf(k, sizeof(k), "tally:{q%d}:jobs", q);
    redisContext *c =
        tk_connect(&kc, tk_owner(&kc, tally_key_slot(k, strlen(k))));
    push(c, q, n / NQ);
    freeReplyObject(redisCommand(c, "WAIT 1 5000"));
    redisFree(c);
  }
  start_tallyd(kc.url);
  redisContext *c = tk_connect(&kc, owner);
  for (double t0 = bench_now_s();;) {
    redisReply *r = redisCommand(c, "XLEN tally:{q1}:results");
    long long done = r && r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    if (done >= n / NQ / 10)
      break;
    if (bench_now_s() - t0 > 120)
      bench_die("q1's results did not come within 120 s");
    bench_sleep_ms(5);
  }
  redisFree(c);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long long killed_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
  tk_kill(&kc, owner);
  int now = tk_wait_owner_change(&kc, slot, owner, 60000);
  if (now < 0)
    bench_die("no replica took over within 60 s");
  c = tk_connect(&kc, now);
  double seconds = -1;
  for (double t0 = bench_now_s(); c != NULL && bench_now_s() - t0 < 60;) {
    redisReply *r = redisCommand(c, "XRANGE tally:{q1}:results %lld + COUNT 1",
                                 killed_ms + 1);
    long long first = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1
                          ? atoll(r->element[0]->element[0]->str)
                          : 0;
    freeReplyObject(r);
    if (first > 0) {
      seconds = (double)(first - killed_ms) / 1000;
      break;
    }
    bench_sleep_ms(5);
  }
  if (c != NULL)
    redisFree(c);
  stop_all();
  if (seconds < 0)
    bench_die("no result on the new master within 60 s");
  return seconds;
}

int main(int argc, char **argv) {
  long jobs = 24000;
  int rounds = 3;
  bool failover = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
      jobs = atol(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--failover") == 0)
      failover = true;
    else {
      fprintf(stderr,
              "usage: bench_cluster [--jobs N] [--rounds R] [--failover]\n"
              "  --jobs N    the backlog of each run, over six "
              "queues (default 24000)\n"
              "  --rounds R  runs of each, for medians (default 3)\n"
              "  --failover  instead: the time from a master's death to the "
              "first result\n"
              "              on its promoted replica (3 masters, a replica "
              "each)\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (jobs < 600 || rounds < 1 || rounds > 20) {
    fprintf(stderr, "bench_cluster: --jobs 600 or more, --rounds 1-20\n");
    return 2;
  }
  bench_begin("bench_cluster", stop_all);
  make_tasks();
  if (failover) {
    double secs[20];
    for (int r = 0; r < rounds; r++) {
      secs[r] = failover_time(jobs);
      fprintf(stderr, "round %d: failover to the first result %.2f s\n", r + 1,
              secs[r]);
    }
    double lo = secs[0], hi = secs[0];
    for (int r = 1; r < rounds; r++) {
      lo = secs[r] < lo ? secs[r] : lo;
      hi = secs[r] > hi ? secs[r] : hi;
    }
    printf("bench_cluster --failover: 3 masters with a replica each, "
           "cluster-node-timeout 1000 ms, medians of %d\n"
           "  master killed -> first result on the promoted replica: %.2f s "
           "(%.2f-%.2f s)\n",
           rounds, bench_median(secs, rounds), lo, hi);
    return 0;
  }
  static const struct {
    const char *name;
    int masters;
  } setups[] = {{"one server, 6 queues", 0},
                {"cluster, 1 master", 1},
                {"cluster, 2 masters", 2},
                {"cluster, 3 masters", 3}};
  enum { NSETUPS = 4 };
  double rate[NSETUPS][20], cpu[NSETUPS][20], share[NSETUPS][20],
      bound[NSETUPS][20];
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < NSETUPS; s++) {
      figures_t f = run(jobs, setups[s].masters);
      rate[s][r] = f.jobs_per_s;
      cpu[s][r] = f.redis_us_per_job;
      share[s][r] = f.busiest_share;
      bound[s][r] = f.redis_bound;
      fprintf(stderr,
              "round %d, %s: %.0f jobs/s, %.1f us of Redis CPU a job, "
              "busiest master %.0f%%\n",
              r + 1, setups[s].name, f.jobs_per_s, f.redis_us_per_job,
              f.busiest_share * 100);
    }
  printf("bench_cluster: %ld jobs a run over %d queues, one tallyd (2 "
         "workers), medians of %d\n",
         jobs / NQ * NQ, NQ, rounds);
  double base = bench_median(rate[0], rounds);
  for (int s = 0; s < NSETUPS; s++) {
    double m = bench_median(rate[s], rounds);
    printf("  %-22s %7.0f jobs/s (%.2f x one server)  %6.1f us of Redis CPU "
           "a job  busiest master %3.0f%%  Redis alone, a core per master: "
           "%6.0f jobs/s\n",
           setups[s].name, m, m / base, bench_median(cpu[s], rounds),
           bench_median(share[s], rounds) * 100,
           bench_median(bound[s], rounds));
  }
  return 0;
}
