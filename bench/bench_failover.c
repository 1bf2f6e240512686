/* tallyd beyond one Redis server, end to end: the throughput of a backlog
 * of jobs with one server, and through Redis Sentinel (a master, two
 * replicas, three sentinels) with --wait-replicas 0 and 1, side by side in
 * one run; Redis CPU per job on the master; and the time from a master's
 * death (SIGKILL) to the first result posted on the promoted replica.
 * Medians of --rounds. */
#include "bench_support.h"
#include "sentinel_fixture.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static ts_group_t group;
static bool group_up;
static pid_t tallyd;

static void stop_all(void) {
  if (tallyd > 0)
    bench_stop(tallyd, SIGKILL, 1000);
  tallyd = 0;
  if (group_up)
    ts_stop(&group);
  group_up = false;
}

/* Pushes n jobs to c, pipelined, and waits until a replica has them when
 * the group has replicas. */
static void push(redisContext *c, long n, bool replicated) {
  char job[256];
  for (long i = 0; i < n; i++) {
    int len = snprintf(job, sizeof(job),
                       "{\"submission\":\"s-%ld\",\"task\":\"sum\","
                       "\"participant\":\"p%ld\",\"evaluations\":{\"0\":1,"
                       "\"1\":0.5,\"2\":%ld,\"3\":0}}",
                       i, i % 500, i % 2);
    redisAppendCommand(c, "XADD tally:jobs * job %b", job, (size_t)len);
    if (i % 1000 == 999 || i == n - 1) {
      for (long k = i - i % 1000; k <= i; k++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK)
          bench_die("XADD: %s", c->errstr);
        freeReplyObject(r);
      }
    }
  }
  if (replicated)
    bench_command(c, "WAIT 1 10000");
}

static void start_tallyd(const char *url, int wait_replicas) {
  char wait[16];
  snprintf(wait, sizeof(wait), "%d", wait_replicas);
  char *argv[] = {(char *)bench_next_to_me("tallyd"),
                  "--tasks",
                  TALLY_SOURCE_DIR "/examples/tasks",
                  "--redis",
                  (char *)url,
                  "--workers",
                  "2",
                  "--log-level",
                  "warn",
                  "--wait-replicas",
                  wait,
                  "--auto-rescore",
                  "false",
                  NULL};
  tallyd = bench_spawn(argv, "tallyd.log", "tallyd.log");
}

static long long xlen(redisContext *c, const char *key) {
  redisReply *r = redisCommand(c, "XLEN %s", key);
  long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return n;
}

typedef struct figures_s {
  double jobs_per_s, redis_us_per_job;
} figures_t;

/* One throughput run: a group of ndata servers and nsentinels sentinels
 * (none: tallyd names the server), a backlog of n jobs, tallyd started,
 * timed until every result is in. */
static figures_t throughput(long n, int ndata, int nsentinels, int wait) {
  if (ts_start(&group, ndata, nsentinels) != 0)
    bench_die("the Redis group did not start");
  group_up = true;
  redisContext *c = ts_connect(&group, 0);
  if (c == NULL)
    bench_die("cannot connect to the master");
  push(c, n, ndata > 1);
  char url[400];
  if (nsentinels > 0)
    snprintf(url, sizeof(url), "%s", group.as_server.url);
  else
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", group.data[0].port);
  double cpu0 = bench_proc_cpu_s(group.data[0].pid, NULL);
  double t0 = bench_now_s();
  start_tallyd(url, wait);
  while (xlen(c, "tally:results") < n) {
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
  double cpu1 = bench_proc_cpu_s(group.data[0].pid, NULL);
  redisFree(c);
  stop_all();
  return (figures_t){(double)n / (t1 - t0), (cpu1 - cpu0) / (double)n * 1e6};
}

/* A master killed under a backlog: the seconds from its death to the
 * first result the promoted replica holds that was posted after it. */
static double failover_time(long backlog) {
  if (ts_start(&group, 3, 3) != 0)
    bench_die("the Redis group did not start");
  group_up = true;
  redisContext *c = ts_connect(&group, 0);
  push(c, backlog, true);
  start_tallyd(group.as_server.url, 1);
  while (xlen(c, "tally:results") < backlog / 10)
    bench_sleep_ms(5);
  redisFree(c);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long long killed_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
  ts_kill(&group.data[0]);
  int now = ts_wait_failover(&group, 0, 60000);
  if (now < 0)
    bench_die("no replica was promoted within 60 s");
  c = ts_connect(&group, now);
  double seconds = -1;
  for (double t0 = bench_now_s(); bench_now_s() - t0 < 60;) {
    redisReply *r = redisCommand(c, "XREVRANGE tally:results + - COUNT 1");
    long long ms = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1
                       ? atoll(r->element[0]->element[0]->str)
                       : 0;
    freeReplyObject(r);
    /* The first entry after the death: the stream's entries are in
     * order, and the newest is after it once any is. */
    if (ms > killed_ms) {
      redisReply *f = redisCommand(c, "XRANGE tally:results %lld +  COUNT 1",
                                   killed_ms + 1);
      long long first = f && f->type == REDIS_REPLY_ARRAY && f->elements == 1
                            ? atoll(f->element[0]->element[0]->str)
                            : ms;
      freeReplyObject(f);
      seconds = (double)(first - killed_ms) / 1000;
      break;
    }
    bench_sleep_ms(5);
  }
  redisFree(c);
  stop_all();
  if (seconds < 0)
    bench_die("no result on the new master within 60 s");
  return seconds;
}

int main(int argc, char **argv) {
  long jobs = 20000;
  int rounds = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
      jobs = atol(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_failover [--jobs N] [--rounds R]\n"
                      "  --jobs N    the backlog of each throughput run "
                      "(default 20000)\n"
                      "  --rounds R  runs of each, for medians (default 3)\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (jobs < 1000 || rounds < 1 || rounds > 20) {
    fprintf(stderr, "bench_failover: --jobs 1000 or more, --rounds 1-20\n");
    return 2;
  }
  bench_begin("bench_failover", stop_all);
  static const struct {
    const char *name;
    int ndata, nsentinels, wait;
  } setups[] = {{"one server", 1, 0, 0},
                {"sentinel, --wait-replicas 0", 3, 3, 0},
                {"sentinel, --wait-replicas 1", 3, 3, 1}};
  enum { NSETUPS = 3 };
  double rate[NSETUPS][20], cpu[NSETUPS][20], fail[20];
  for (int r = 0; r < rounds; r++) {
    for (int s = 0; s < NSETUPS; s++) {
      figures_t f = throughput(jobs, setups[s].ndata, setups[s].nsentinels,
                               setups[s].wait);
      rate[s][r] = f.jobs_per_s;
      cpu[s][r] = f.redis_us_per_job;
      fprintf(stderr,
              "round %d, %s: %.0f jobs/s, %.1f us of master CPU a "
              "job\n",
              r + 1, setups[s].name, f.jobs_per_s, f.redis_us_per_job);
    }
    fail[r] = failover_time(jobs);
    fprintf(stderr, "round %d: failover to the first result %.2f s\n", r + 1,
            fail[r]);
  }
  printf("bench_failover: %ld jobs a run, medians of %d\n", jobs, rounds);
  double base = bench_median(rate[0], rounds);
  for (int s = 0; s < NSETUPS; s++) {
    double m = bench_median(rate[s], rounds);
    printf("  %-30s %8.0f jobs/s (%.2f x one server)  %6.1f us of master "
           "CPU a job\n",
           setups[s].name, m, m / base, bench_median(cpu[s], rounds));
  }
  printf("  master killed -> first result on the promoted replica: %.2f s "
         "(down-after-milliseconds 1000)\n",
         bench_median(fail, rounds));
  return 0;
}
