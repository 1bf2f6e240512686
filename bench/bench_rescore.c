/* Rescoring a task of many stored submissions, end to end through Redis:
 * stores the submissions in the layout tallyd writes, times the first
 * rescore (which computes every summary, task score and ranking), then
 * changes a subtask's max_score and times the rescore of the task. */
#include "bench_jobs.h"
#include "bench_support.h"
#include "redis_fixture.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PER_SUBTASK 10 /* 5 subtasks x 10 = 50 testcases */
#define PIPELINE 1000  /* submissions stored per pipeline */

typedef struct opts_s {
  long submissions;
  long participants;
  int runs;
  const char *threads; /* passed on to tally rescore, or NULL */
  const char *tally;
  const char *redis_server;
} opts_t;

static pid_t redis_pid;

/* At exit, before the temporary folder goes: stops redis-server. */
static void stop_redis(void) {
  if (redis_pid > 0)
    bench_stop(redis_pid, SIGTERM, 10000);
  redis_pid = 0;
}

static void on_signal(int sig) {
  (void)sig;
  exit(130);
}

static void start_redis(const opts_t *o, const char *sock) {
  char log[PATH_MAX + 32];
  snprintf(log, sizeof(log), "%s/redis.log", bench_dir());
  const char *args[] = {
      "--port", "0", "--unixsocketperm", "700", "--dir", bench_dir(),
      "--save", "",  "--appendonly",     "no",  NULL};
  redis_pid = tr_redis_spawn(o->redis_server, sock, args, log);
  if (redis_pid < 0)
    bench_die("redis-server did not start");
}

/* Writes the task config with subtask 1 worth first points. */
static void write_task(const char *path, int first) {
  tally_buf_t b;
  tally_buf_init(&b);
  bench_write_task(&b, PER_SUBTASK);
  char *at = strstr(b.data, "[10, \"1-\"]");
  if (at == NULL)
    bench_die("the bench task has no subtask [10, \"1-\"]");
  FILE *f = fopen(path, "w");
  if (f == NULL)
    bench_die("%s: %s", path, strerror(errno));
  fprintf(f, "%.*s[%d, \"1-\"]%s\n", (int)(at - b.data), b.data, first,
          at + strlen("[10, \"1-\"]"));
  fclose(f);
  tally_buf_close(&b);
}

/* Stores n submissions as tallyd would before their first scoring: the
 * job in the submission hash, and the indexes. */
static void store(redisContext *c, const opts_t *o) {
  tally_buf_t job;
  tally_buf_init(&job);
  bench_rng_reset();
  long pending = 0;
  for (long i = 0; i < o->submissions; i++) {
    char sub[32], user[32];
    snprintf(sub, sizeof(sub), "b%07ld", i);
    snprintf(user, sizeof(user), "u%05ld", i % o->participants);
    tally_buf_reset(&job);
    bench_putf(&job,
               "{\"submission\": \"%s\", \"participant\": \"%s\", "
               "\"contest\": \"bench\", \"task\": \"bench\", \"timestamp\": "
               "%ld, ",
               sub, user, i);
    bench_write_evaluations(&job, PER_SUBTASK, false);
    bench_putf(&job, "}");
    redisAppendCommand(c, "HSET tally:submission:%s job %b", sub, job.data,
                       job.len);
    redisAppendCommand(c, "SADD tally:index:task:bench %s", sub);
    redisAppendCommand(c, "SADD tally:index:contest:bench %s", sub);
    redisAppendCommand(c, "SADD tally:index:participant:%s %s", user, sub);
    if (++pending == PIPELINE || i + 1 == o->submissions) {
      for (long k = 0; k < pending * 4; k++) {
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
  tally_buf_close(&job);
}

/* Redis's used_memory, in MB. */
static double used_memory_mb(redisContext *c) {
  redisReply *r = redisCommand(c, "INFO memory");
  if (r == NULL || r->type != REDIS_REPLY_STRING)
    bench_die("Redis: INFO: %s", r ? r->str : c->errstr);
  const char *p = strstr(r->str, "used_memory:");
  double mb = p ? strtod(p + 12, NULL) / 1048576.0 : 0;
  freeReplyObject(r);
  return mb;
}

/* What one tally rescore reported (its --json line). */
typedef struct result_s {
  double wall, seconds, select, score, write;
  long submissions, changed, failed;
  double redis_cpu;   /* redis-server's CPU seconds during the rescore */
  double tally_cpu;   /* tally rescore's */
  double script_usec; /* the rescore script's (EVALSHA's) microseconds */
  long script_calls;
} result_t;

/* The microseconds and calls of EVALSHA since the last CONFIG RESETSTAT,
 * from INFO commandstats. */
static double evalsha_usec(redisContext *c, long *calls) {
  redisReply *r = bench_command(c, "INFO commandstats");
  const char *p = strstr(r->str, "cmdstat_evalsha:");
  const char *n = p ? strstr(p, "calls=") : NULL,
             *u = p ? strstr(p, "usec=") : NULL;
  *calls = n ? strtol(n + 6, NULL, 10) : 0;
  double usec = u ? strtod(u + 5, NULL) : 0;
  freeReplyObject(r);
  return usec;
}

static char *slurp(const char *name) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof(path), "%s/%s", bench_dir(), name);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return strdup("");
  char *text = calloc(1, 1 << 16);
  if (text != NULL)
    text[fread(text, 1, (1 << 16) - 1, f)] = '\0';
  fclose(f);
  return text;
}

/* Runs tally rescore --task bench and returns its figures. */
static result_t rescore(const opts_t *o, const char *tasks, const char *url,
                        redisContext *c) {
  char *argv[16] = {(char *)o->tally, "rescore", "--tasks",
                    (char *)tasks,    "--redis", (char *)url,
                    "--task",         "bench",   "--json"};
  int argc = 9;
  if (o->threads != NULL) {
    argv[argc++] = "--threads";
    argv[argc++] = (char *)o->threads;
  }
  argv[argc] = NULL;
  freeReplyObject(bench_command(c, "CONFIG RESETSTAT"));
  double cpu0 = bench_proc_cpu_s(redis_pid, NULL);
  double t0 = bench_now_s();
  pid_t pid = bench_spawn(argv, "rescore.out", "rescore.err");
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid)
    bench_die("wait4: %s", strerror(errno));
  result_t res = {.wall = bench_now_s() - t0,
                  .redis_cpu = bench_proc_cpu_s(redis_pid, NULL) - cpu0};
  res.script_usec = evalsha_usec(c, &res.script_calls);
  res.tally_cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  char *out = slurp("rescore.out"), *err = slurp("rescore.err");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    bench_die("tally rescore failed:\n%s%s", out, err);
  cJSON *j = cJSON_Parse(out);
  if (j == NULL)
    bench_die("tally rescore printed no JSON:\n%s", out);
  res.seconds = cJSON_GetObjectItem(j, "seconds")->valuedouble;
  res.select = cJSON_GetObjectItem(j, "select_seconds")->valuedouble;
  res.score = cJSON_GetObjectItem(j, "score_seconds")->valuedouble;
  res.write = cJSON_GetObjectItem(j, "write_seconds")->valuedouble;
  res.submissions = (long)cJSON_GetObjectItem(j, "submissions")->valuedouble;
  res.changed = (long)cJSON_GetObjectItem(j, "changed")->valuedouble;
  res.failed = (long)cJSON_GetObjectItem(j, "failed")->valuedouble;
  cJSON_Delete(j);
  free(out);
  free(err);
  return res;
}

static void print_result(const char *what, const result_t *r) {
  printf("%-28s %ld submissions in %.2f s (%.0f/s; %.2f s with the process "
         "start), %ld changed, %ld failed\n",
         what, r->submissions, r->seconds,
         r->seconds > 0 ? (double)r->submissions / r->seconds : 0, r->wall,
         r->changed, r->failed);
  printf("%-28s selecting %.2f s, reading and scoring %.2f s, writing %.2f "
         "s\n",
         "", r->select, r->score, r->write);
  double per = r->changed > 0 ? 1e6 / (double)r->changed : 0;
  printf("%-28s redis-server CPU %.2f s (%.1f us per changed submission), "
         "the rescore script %.2f s in %ld calls (%.1f us per changed); "
         "tally rescore's CPU %.2f s\n",
         "", r->redis_cpu, r->redis_cpu * per, r->script_usec / 1e6,
         r->script_calls, r->script_usec / 1e6 * per, r->tally_cpu);
  fflush(stdout);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const char usage[] =
    "usage: bench_rescore [--submissions N] [--participants N] [--runs N]\n"
    "                     [--threads N] [--tally PATH] [--redis-server "
    "PATH]\n"
    "  --submissions N      stored submissions (default 1000000)\n"
    "  --participants N     spread over N participants (default 10000)\n"
    "  --runs N             timed rescores after the config change "
    "(default 1)\n"
    "  --threads N          tally rescore --threads (default: its own)\n"
    "  --tally PATH         default: tally next to this program\n"
    "  --redis-server PATH  default: redis-server on PATH\n";

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
  opts_t o = {.submissions = 1000000, .participants = 10000, .runs = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--submissions") == 0 && v)
      o.submissions = number(argv[++i]);
    else if (strcmp(a, "--participants") == 0 && v)
      o.participants = number(argv[++i]);
    else if (strcmp(a, "--runs") == 0 && v)
      o.runs = (int)number(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && v && number(v) > 0)
      o.threads = argv[++i];
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
  bench_begin("bench_rescore", stop_redis);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  char sock[PATH_MAX + 32], url[PATH_MAX + 64], tasks[PATH_MAX + 32],
      task[PATH_MAX + 64];
  snprintf(sock, sizeof(sock), "%s/redis.sock", bench_dir());
  snprintf(url, sizeof(url), "unix://%s", sock);
  snprintf(tasks, sizeof(tasks), "%s/tasks", bench_dir());
  snprintf(task, sizeof(task), "%s/bench.json", tasks);
  if (mkdir(tasks, 0700) != 0)
    bench_die("%s: %s", tasks, strerror(errno));
  write_task(task, 10);
  start_redis(&o, sock);
  redisContext *c = redisConnectUnix(sock);
  if (c == NULL || c->err)
    bench_die("cannot connect to %s", sock);

  printf("bench_rescore: %ld submissions of a GroupMin task of %d testcases "
         "(%d subtasks), %ld participants, bare outcomes; tally rescore "
         "--threads %s\n",
         o.submissions, BENCH_NSUBTASKS * PER_SUBTASK, BENCH_NSUBTASKS,
         o.participants, o.threads ? o.threads : "(one per CPU)");
  double t0 = bench_now_s();
  store(c, &o);
  printf("%-28s %ld submissions in %.2f s; Redis used_memory %.0f MB\n",
         "stored (jobs and indexes)", o.submissions, bench_now_s() - t0,
         used_memory_mb(c));
  result_t first = rescore(&o, tasks, url, c);
  print_result("first rescore (all new)", &first);
  printf("%-28s used_memory %.0f MB\n", "after the first rescore",
         used_memory_mb(c));

  double *secs = calloc((size_t)o.runs, sizeof(double));
  if (secs == NULL)
    bench_die("out of memory");
  for (int k = 0; k < o.runs; k++) {
    /* Subtask 1 goes from 10 to 20 points, and back on the next run. */
    write_task(task, k % 2 == 0 ? 20 : 10);
    result_t r = rescore(&o, tasks, url, c);
    char what[64];
    snprintf(what, sizeof(what), "rescore after a change (%d)", k + 1);
    print_result(what, &r);
    secs[k] = r.seconds;
    if (r.submissions != o.submissions)
      bench_die("rescored %ld submissions of %ld", r.submissions,
                o.submissions);
  }
  qsort(secs, (size_t)o.runs, sizeof(double), cmp_double);
  double median = secs[o.runs / 2];
  printf("median rescore after a change: %.2f s, %.0f submissions/s; Redis "
         "used_memory %.0f MB\n",
         median, (double)o.submissions / median, used_memory_mb(c));
  free(secs);
  redisFree(c);
  return 0;
}
