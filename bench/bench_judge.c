/* The judge pipeline's cost through tallyd (docs/benchmarks.md#answers-
 * sent-to-a-judge-model): samples per second of a judged task whose
 * prompts are all new (each one asked of a loopback judge,
 * tests/judge_server.py), of the same prompts again (every verdict kept
 * in <p>:verdicts: nothing asked), and of the same jobs as a plain task
 * compared by white_diff, one after the other in one run on one tallyd;
 * medians of --rounds, and the ratios. The first figure is bounded by the
 * stand-in judge (Python's http.server), not by tallyd. */
#include "bench_support.h"
#include "redis_fixture.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static tr_redis_t server;
static bool server_up;
static pid_t tallyd, judge;

static void stop_all(void) {
  if (tallyd > 0)
    bench_stop(tallyd, SIGKILL, 1000);
  if (judge > 0)
    bench_stop(judge, SIGKILL, 1000);
  tallyd = judge = 0;
  if (server_up)
    tr_redis_stop(&server);
  server_up = false;
}

static void put(const char *name, const char *text) {
  char path[600];
  snprintf(path, sizeof(path), "%s/%s", bench_dir(), name);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    bench_die("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Pushes n samples of task, submissions <tag>-<i>, prompts by i. */
static void push(redisContext *c, const char *task, const char *tag, long n) {
  char job[512];
  for (long i = 0; i < n; i++) {
    int len = snprintf(
        job, sizeof(job),
        "{\"submission\":\"%s-%ld\",\"participant\":\"m%ld\",\"contest\":"
        "\"b\",\"task\":\"%s\",\"id\":%ld,\"problem\":\"What is %ld + "
        "%ld?\",\"target\":\"%ld\",\"evaluations\":{\"answer\":\"%ld\"}}",
        tag, i, i % 10, task, i, i, i, 2 * i, i % 3 ? 2 * i : i);
    redisAppendCommand(c, "XADD tally:jobs * job %b", job, (size_t)len);
  }
  for (long i = 0; i < n; i++) {
    redisReply *r = NULL;
    if (redisGetReply(c, (void **)&r) != REDIS_OK)
      bench_die("XADD: %s", c->errstr);
    freeReplyObject(r);
  }
}

static long long xlen(redisContext *c) {
  return bench_command_int(c, "XLEN tally:results");
}

/* Pushes n samples and times them until every result is in. */
static double timed(redisContext *c, const char *task, const char *tag,
                    long n) {
  long long before = xlen(c);
  double t0 = bench_now_s();
  push(c, task, tag, n);
  while (xlen(c) < before + n) {
    if (waitpid(tallyd, NULL, WNOHANG) == tallyd) {
      tallyd = 0;
      bench_show_log("tallyd.log");
      bench_die("tallyd exited");
    }
    if (bench_now_s() - t0 > 600)
      bench_die("the results did not all come within 600 s");
    bench_sleep_ms(2);
  }
  return (double)n / (bench_now_s() - t0);
}

int main(int argc, char **argv) {
  long n = 2000;
  int rounds = 3;
  const char *conc = getenv("BENCH_JUDGE_CONCURRENCY");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--samples") == 0)
      n = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--rounds") == 0)
      rounds = atoi(argv[i + 1]);
  }
  if (n < 1 || rounds < 1 || rounds > 50) {
    fprintf(stderr, "usage: bench_judge [--samples N] [--rounds R]\n");
    return 2;
  }
  bench_begin("bench_judge", stop_all);
  char tasks[600];
  snprintf(tasks, sizeof(tasks), "%s/tasks", bench_dir());
  if (mkdir(tasks, 0700) != 0)
    bench_die("mkdir %s", tasks);
  static const char common[] =
      "\"task_type\": \"output_only\", \"score_type\": \"Sum\", "
      "\"score_type_parameters\": 1, \"testcases\": {\"answer\": true}, "
      "\"from_job\": {\"target\": \"target\", \"problem\": \"id\", "
      "\"question\": \"problem\"}";
  char text[1024];
  snprintf(text, sizeof(text), "{\"name\": \"judged\", %s, \"judge\": {}}",
           common);
  put("tasks/judged.json", text);
  snprintf(text, sizeof(text), "{\"name\": \"plain\", %s}", common);
  put("tasks/plain.json", text);

  double asked[50], kept[50], plain[50];
  for (int r = 0; r < rounds; r++) {
    if (tr_redis_start(&server, 0, false) != 0)
      bench_die("redis-server did not start");
    server_up = true;
    char port_file[600], log[600], script[600];
    snprintf(port_file, sizeof(port_file), "%s/judge.port", bench_dir());
    snprintf(log, sizeof(log), "%s/judge.log", bench_dir());
    snprintf(script, sizeof(script), "%s/tests/judge_server.py",
             TALLY_SOURCE_DIR);
    unlink(port_file);
    char *jargv[] = {"python3", script, port_file, log, NULL};
    judge = bench_spawn(jargv, "judge.out", "judge.out");
    int port = 0;
    for (int i = 0; i < 200 && port == 0; i++) {
      FILE *f = fopen(port_file, "r");
      if (f == NULL || fscanf(f, "%d", &port) != 1)
        port = 0;
      if (f != NULL)
        fclose(f);
      bench_sleep_ms(50);
    }
    if (port == 0)
      bench_die("the judge did not start");
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", port);
    char *targv[] = {(char *)bench_next_to_me("tallyd"),
                     "--tasks",
                     tasks,
                     "--redis",
                     server.url,
                     "--workers",
                     "2",
                     "--log-level",
                     "warn",
                     "--auto-rescore",
                     "false",
                     "--http",
                     "off",
                     "--judge-url",
                     url,
                     "--judge-model",
                     "bench",
                     "--judge-concurrency",
                     conc != NULL ? (char *)conc : "16",
                     NULL};
    tallyd = bench_spawn(targv, "tallyd.log", "tallyd.log");
    redisContext *c = bench_connect(server.sock);
    /* A first job, so that tallyd is up before the clocks start. */
    timed(c, "plain", "warm", 1);
    asked[r] = timed(c, "judged", "a", n);
    kept[r] = timed(c, "judged", "k", n);
    plain[r] = timed(c, "plain", "p", n);
    if (bench_command_int(c, "HLEN tally:verdicts") != n)
      bench_die("%lld verdicts kept, not %ld",
                bench_command_int(c, "HLEN tally:verdicts"), n);
    printf("round %d: asked %.0f/s, kept %.0f/s, plain %.0f/s\n", r + 1,
           asked[r], kept[r], plain[r]);
    redisFree(c);
    stop_all();
  }
  double a = bench_median(asked, rounds), k = bench_median(kept, rounds),
         p = bench_median(plain, rounds);
  printf("%ld samples, median of %d rounds:\n", n, rounds);
  printf("  judged, every prompt asked:    %8.0f samples/s\n", a);
  printf("  judged, every verdict kept:    %8.0f samples/s\n", k);
  printf("  plain (white_diff), same jobs: %8.0f samples/s\n", p);
  printf("  kept / plain: %.2f; asked / kept: %.2f\n", k / p, a / k);
  return 0;
}
