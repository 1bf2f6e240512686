/* tally report over a large benchmark stored in Redis: stores the
 * summaries tallyd keeps for 1,000,000 samples (1,000 problems, 10
 * participants, 100 samples each, 10 categories, failures of every kind)
 * with the contest's index, then times `tally report --json` with 10,000
 * bootstrap resamples, several runs, and prints the median. */
#include "bench_support.h"
#include "redis_fixture.h"
#include "stats/estimates.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define PIPELINE 2000

typedef struct opts_s {
  long problems, participants, samples;
  long resamples;
  int runs;
  const char *tally, *redis_server;
} opts_t;

static pid_t redis_pid;

static void stop_redis(void) {
  if (redis_pid > 0)
    bench_stop(redis_pid, SIGTERM, 10000);
  redis_pid = 0;
}

static void on_signal(int sig) {
  (void)sig;
  exit(130);
}

static const char *const failures[] = {
    "server_error", "rate_limit",   "timeout",     "refusal",
    "empty",        "format_error", "model_error", "context_window_exceeded"};

/* Stores every sample's summary and the contest index, as tallyd does. */
static void store(redisContext *c, const opts_t *o) {
  uint64_t g = 1;
  long pending = 0, total = o->problems * o->participants * o->samples, n = 0;
  char summary[1024];
  redisAppendCommand(c, "SADD tally:contests bench");
  pending++;
  for (long m = 0; m < o->participants; m++) {
    double skill = 0.2 + 0.6 * (double)m / (double)o->participants;
    for (long p = 0; p < o->problems; p++) {
      double ease = (double)(p % 17) / 16.0;
      for (long s = 0; s < o->samples; s++, n++) {
        char id[80];
        snprintf(id, sizeof(id), "m%02ld-p%04ld-%03ld", m, p, s);
        double u = (double)(tally_splitmix64(&g) >> 11) / 9007199254740992.0;
        bool correct = u < skill * 0.5 + ease * 0.5;
        double f = (double)(tally_splitmix64(&g) >> 11) / 9007199254740992.0;
        const char *failure = !correct && f < 0.3 ? failures[n % 8] : NULL;
        char fail[96] = "null";
        if (failure != NULL)
          snprintf(fail, sizeof(fail),
                   "\"%s\",\"preview\":\"I'm sorry, the answer is\"", failure);
        int len = snprintf(
            summary, sizeof(summary),
            "{\"submission\":\"%s\",\"participant\":\"model-%02ld\","
            "\"contest\":\"bench\",\"task\":\"p%04ld\",\"timestamp\":%ld,"
            "\"official\":true,\"tokened\":false,\"version\":"
            "\"0123456789abcdef\",\"score_mode\":\"max\","
            "\"score_precision\":0,\"score_rounding\":\"subtask\","
            "\"score\":%d,\"public_score\":%d,\"max_score\":1,"
            "\"max_public_score\":1,\"compiled\":true,\"subtasks\":null,"
            "\"public_subtasks\":null,\"sample\":{\"category\":\"cat%ld\","
            "\"correct_threshold\":1,\"correct\":%s,\"extracted\":true,"
            "\"failure\":%s}}",
            id, m, p, s, correct, correct, p % 10, correct ? "true" : "false",
            fail);
        redisAppendCommand(c, "HSET tally:submission:%s summary %b", id,
                           summary, (size_t)len);
        redisAppendCommand(c, "SADD tally:index:contest:bench %s", id);
        pending += 2;
        if (pending >= PIPELINE || n + 1 == total) {
          for (long k = 0; k < pending; k++) {
            void *r = NULL;
            if (redisGetReply(c, &r) != REDIS_OK)
              bench_die("Redis: %s", c->errstr);
            if (((redisReply *)r)->type == REDIS_REPLY_ERROR)
              bench_die("Redis: %s", ((redisReply *)r)->str);
            freeReplyObject(r);
          }
          pending = 0;
        }
      }
    }
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Redis's CPU time so far (user + system), in seconds. */
static double redis_cpu_s(redisContext *c) {
  redisReply *r = redisCommand(c, "INFO cpu");
  if (r == NULL || r->type != REDIS_REPLY_STRING)
    bench_die("Redis: INFO cpu failed");
  const char *u = strstr(r->str, "used_cpu_user:");
  const char *s = strstr(r->str, "used_cpu_sys:");
  double t = (u ? strtod(u + 14, NULL) : 0) + (s ? strtod(s + 13, NULL) : 0);
  freeReplyObject(r);
  return t;
}

/* Runs tally report once; returns its wall time (and its CPU time in
 * *cpu) and checks its output. */
static double report(const opts_t *o, const char *url, long want, double *cpu) {
  char resamples[32];
  snprintf(resamples, sizeof(resamples), "%ld", o->resamples);
  char *argv[] = {(char *)o->tally, "report", "--redis", (char *)url,
                  "--contest",      "bench",  "--json",  "--bootstrap",
                  resamples,        NULL};
  double t0 = bench_now_s();
  pid_t pid = bench_spawn(argv, "report.out", "report.err");
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid)
    bench_die("wait4: %s", strerror(errno));
  double secs = bench_now_s() - t0;
  *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    bench_show_log("report.err");
    bench_die("tally report failed");
  }
  char path[PATH_MAX + 32], head[256] = "";
  snprintf(path, sizeof(path), "%s/report.out", bench_dir());
  FILE *f = fopen(path, "r");
  if (f == NULL || fread(head, 1, sizeof(head) - 1, f) == 0)
    bench_die("tally report printed nothing");
  fclose(f);
  char samples[64];
  snprintf(samples, sizeof(samples), "\"samples\":%ld,", want);
  if (strstr(head, samples) == NULL)
    bench_die("tally report read another count than %ld: %s", want, head);
  return secs;
}

static const char usage[] =
    "usage: bench_report [--problems N] [--participants N] [--samples N]\n"
    "                    [--bootstrap N] [--runs N] [--tally PATH]\n"
    "                    [--redis-server PATH]\n"
    "  defaults: 1000 problems, 10 participants, 100 samples each, 10000\n"
    "  resamples, 3 runs\n";

static long number(const char *s) {
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || n <= 0) {
    fputs(usage, stderr);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv) {
  opts_t o = {.problems = 1000,
              .participants = 10,
              .samples = 100,
              .resamples = 10000,
              .runs = 3};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool v = i + 1 < argc;
    if (strcmp(a, "--problems") == 0 && v)
      o.problems = number(argv[++i]);
    else if (strcmp(a, "--participants") == 0 && v)
      o.participants = number(argv[++i]);
    else if (strcmp(a, "--samples") == 0 && v)
      o.samples = number(argv[++i]);
    else if (strcmp(a, "--bootstrap") == 0 && v)
      o.resamples = number(argv[++i]);
    else if (strcmp(a, "--runs") == 0 && v)
      o.runs = (int)number(argv[++i]);
    else if (strcmp(a, "--tally") == 0 && v)
      o.tally = argv[++i];
    else if (strcmp(a, "--redis-server") == 0 && v)
      o.redis_server = argv[++i];
    else {
      fputs(usage, stderr);
      return 2;
    }
  }
  if (o.tally == NULL)
    o.tally = bench_next_to_me("tally");
  bench_begin("bench_report", stop_redis);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  char sock[PATH_MAX + 32], url[PATH_MAX + 64], log[PATH_MAX + 32];
  snprintf(sock, sizeof(sock), "%s/redis.sock", bench_dir());
  snprintf(url, sizeof(url), "unix://%s", sock);
  snprintf(log, sizeof(log), "%s/redis.log", bench_dir());
  const char *args[] = {
      "--port", "0", "--unixsocketperm", "700", "--dir", bench_dir(),
      "--save", "",  "--appendonly",     "no",  NULL};
  redis_pid = tr_redis_spawn(o.redis_server, sock, args, log);
  if (redis_pid < 0)
    bench_die("redis-server did not start");
  redisContext *c = redisConnectUnix(sock);
  if (c == NULL || c->err)
    bench_die("cannot connect to %s", sock);
  long total = o.problems * o.participants * o.samples;
  printf("bench_report: %ld samples (%ld problems, %ld participants, %ld "
         "samples each), %ld bootstrap resamples\n",
         total, o.problems, o.participants, o.samples, o.resamples);
  double t0 = bench_now_s();
  store(c, &o);
  printf("stored in %.1f s\n", bench_now_s() - t0);
  fflush(stdout);
  double *secs = calloc((size_t)o.runs, sizeof(double));
  if (secs == NULL)
    bench_die("out of memory");
  for (int k = 0; k < o.runs; k++) {
    double cpu, r0 = redis_cpu_s(c);
    secs[k] = report(&o, url, total, &cpu);
    printf("run %d: %.2f s (%.0f samples/s); CPU: tally %.2f s, "
           "redis-server %.2f s\n",
           k + 1, secs[k], (double)total / secs[k], cpu, redis_cpu_s(c) - r0);
    fflush(stdout);
  }
  qsort(secs, (size_t)o.runs, sizeof(double), cmp_double);
  printf("median: %.2f s for %ld samples with %ld resamples\n",
         secs[o.runs / 2], total, o.resamples);
  free(secs);
  redisFree(c);
  return 0;
}
