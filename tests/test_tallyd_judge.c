/* Issue 26's judge pipeline through tallyd, against a judge model the test
 * starts on loopback (tests/judge_server.py): answers, malformed replies,
 * 429 with Retry-After, 500s, slow replies and dropped connections; every
 * flagged sample ends with exactly one verdict, a prompt is asked once
 * (kept in <p>:verdicts), a rescore and a restart after SIGKILL ask no
 * kept prompt again, the report counts judged, unparseable and unjudged
 * samples, and the key goes to the judge but never to the log. Nothing
 * leaves the machine. */
#include "cli_fixture.h"
#include "redis_fixture.h"
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

#define KEY "sk-test-6f1e2d"

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;
static pid_t judge_pid;
static char judge_url[128], judge_log[600], tasks[600];

static void start_judge(const char *key) {
  char port_file[600];
  snprintf(port_file, sizeof(port_file), "%s/judge.port", server.dir);
  snprintf(judge_log, sizeof(judge_log), "%s/judge.log", server.dir);
  char script[600];
  snprintf(script, sizeof(script), "%s/tests/judge_server.py",
           TALLY_SOURCE_DIR);
  judge_pid = fork();
  cr_assert_neq(judge_pid, -1);
  if (judge_pid == 0) {
    setpgid(0, 0); /* killed as a group: python3 may be a wrapper */
    execlp("python3", "python3", script, port_file, judge_log, key,
           (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200; i++) {
    FILE *f = fopen(port_file, "r");
    int port = 0;
    if (f != NULL && fscanf(f, "%d", &port) == 1) {
      fclose(f);
      snprintf(judge_url, sizeof(judge_url), "http://127.0.0.1:%d/v1", port);
      return;
    }
    if (f != NULL)
      fclose(f);
    td_sleep_ms(50);
  }
  cr_assert_fail("the judge server did not start");
}

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  td_put(tasks, "sqa.json",
         "{\"name\": \"sqa\", \"task_type\": \"output_only\", \"score_type\": "
         "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": "
         "true}, \"from_job\": {\"target\": \"target\", \"problem\": \"id\", "
         "\"question\": \"problem\"}, \"judge\": {\"system\": \"Grade.\"}}");
  td_put(server.dir, "key", KEY "\n");
  start_judge(KEY);
}

static void teardown(void) {
  td_kill(&daemon_);
  if (judge_pid > 0) {
    kill(-judge_pid, SIGKILL);
    waitpid(judge_pid, NULL, 0);
    judge_pid = 0;
  }
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_judge, .init = setup, .fini = teardown, .timeout = 240);

/* One line of the judge's log. */
typedef struct {
  double at;
  char hash[72], said[16];
} hit_t;

static size_t read_hits(hit_t *hits, size_t max) {
  FILE *f = fopen(judge_log, "r");
  size_t n = 0;
  while (f != NULL && n < max &&
         fscanf(f, "%lf %71s %15s", &hits[n].at, hits[n].hash, hits[n].said) ==
             3)
    n++;
  if (f != NULL)
    fclose(f);
  return n;
}

/* Pushes the job of sample i: problem "q<p>?", target, answer. */
static void push_sample(int i, int p, const char *target, const char *answer,
                        char *id) {
  char job[600];
  snprintf(job, sizeof(job),
           "{\"submission\": \"m/%d\", \"participant\": \"m\", \"contest\": "
           "\"bench\", \"task\": \"sqa\", \"id\": %d, \"problem\": "
           "\"q%d?\", \"target\": \"%s\", \"evaluations\": {\"answer\": "
           "\"%s\"}}",
           i, p, p, target, answer);
  td_push(c, job, id);
}

static double score_of(const char *id) {
  cJSON *r = td_result_of(c, id);
  double s = r != NULL ? ts_num(r, "score") : -1;
  cJSON_Delete(r);
  return s;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cJSON *report_judge(void) {
  char dir[64];
  tc_setup(dir, sizeof(dir), "tallyd-judge");
  const char *rep[] = {"report", "--redis", server.url, "--contest",
                       "bench",  "--json",  NULL};
  tc_run_t t = tc_run(rep, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cJSON *r = cJSON_Parse(t.out);
  cr_assert_not_null(r, "%s", t.out);
  tc_run_free(&t);
  cJSON *j = cJSON_DetachItemFromObjectCaseSensitive(
      cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "participants"),
                         0),
      "judge");
  cJSON_Delete(r);
  cr_assert_not_null(j);
  return j;
}

Test(tallyd_judge, every_flagged_sample_gets_exactly_one_verdict) {
  static const struct {
    int problem;
    const char *target, *answer;
    double score;
  } s[] = {
      {0, "Ann", "Ann", 1},
      {1, "Ann", "Bob", 0},
      {2, "Ann", "Ann[429]", 1},
      {3, "Ann", "Ann[500]", 1},
      {4, "Ann", "Ann[slow]", 1},
      {5, "Ann", "Ann[drop]", 1},
      {6, "Ann", "Ann[malformed]", 1},
      {7, "Ann", "[garbage]", 0},
      {8, "Ann", "[always500]", 0},
      /* A reply with bytes that are not UTF-8: made valid, still read. */
      {9, "Ann", "Ann[badutf8]", 1},
      /* The prompt of sample 0 again, twice: asked once. */
      {0, "Ann", "Ann", 1},
      {0, "Ann", "Ann", 1},
  };
  enum { N = sizeof(s) / sizeof(s[0]) };
  char ids[N][64];
  const char *args[] = {"--tasks",
                        tasks,
                        "--judge-url",
                        judge_url,
                        "--judge-model",
                        "judge-1",
                        "--judge-key-file",
                        NULL,
                        "--judge-timeout",
                        "1500",
                        "--judge-backoff",
                        "100",
                        "--judge-attempts",
                        "4",
                        "--judge-concurrency",
                        "3",
                        NULL};
  char keyfile[600];
  snprintf(keyfile, sizeof(keyfile), "%s/key", server.dir);
  args[7] = keyfile;
  cr_assert_eq(td_start(&daemon_, &server, "judge", args, NULL), 0);
  for (int i = 0; i < N; i++)
    push_sample(i, s[i].problem, s[i].target, s[i].answer, ids[i]);
  long long got = td_wait_outcomes(c, N, 60000);
  TD_REQUIRE(&daemon_, got == N, "%lld outcomes of %d", got, N);
  cr_expect_eq(td_check_exactly_once(c, ids, N), 0);
  for (int i = 0; i < N; i++)
    cr_expect_eq(score_of(ids[i]), s[i].score, "sample %d (%s): %g", i,
                 s[i].answer, score_of(ids[i]));

  /* The judge's side: each prompt answered once; 429 waited out its
   * Retry-After (1 s, the backoff being 0.1 s); 500 retried until the
   * attempts ran out. */
  hit_t hits[200];
  size_t n = read_hits(hits, 200);
  cr_assert_gt(n, 0);
  int oks = 0, five = 0;
  for (size_t i = 0; i < n; i++) {
    oks += strcmp(hits[i].said, "ok") == 0;
    for (size_t k = 0; k < i; k++)
      if (strcmp(hits[i].hash, hits[k].hash) == 0 &&
          strcmp(hits[k].said, "ok") == 0)
        cr_expect_fail("prompt %s asked again after its answer", hits[i].hash);
    if (strcmp(hits[i].said, "429") == 0)
      for (size_t k = i + 1; k < n; k++)
        if (strcmp(hits[k].hash, hits[i].hash) == 0) {
          cr_expect_geq(hits[k].at - hits[i].at, 0.9,
                        "429 then again after %.3f s", hits[k].at - hits[i].at);
          break;
        }
    five += strcmp(hits[i].said, "500") == 0;
  }
  /* 10 prompts: all but [always500] answered. */
  cr_expect_eq(oks, 9, "%d answers", oks);
  cr_expect_eq(five, 2 + 4, "%d 500s", five);
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:verdicts"), 9);

  cJSON *j = report_judge();
  cr_expect_eq(ts_num(j, "judged"), N - 2);
  cr_expect_eq(ts_num(j, "unparseable"), 1);
  cr_expect_eq(ts_num(j, "unjudged"), 1);
  cJSON_Delete(j);
  cr_expect(!td_log_has(&daemon_, KEY), "the key is in the log");
  cr_expect(td_log_has(&daemon_, "the judge was asked 4 times; the last: "
                                 "HTTP 500"));

  /* A token on a judged sample: its submission is scored again with the
   * kept verdict, nothing asked. */
  char tok[64];
  td_push(c,
          "{\"type\": \"token\", \"submission\": \"m/0\", "
          "\"participant\": \"m\"}",
          tok);
  for (int i = 0; i < 200; i++) {
    redisReply *r = redisCommand(c, "HGET tally:submission:m/0 tokened");
    bool done =
        r != NULL && r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0;
    freeReplyObject(r);
    if (done)
      break;
    td_sleep_ms(50);
  }
  cr_expect_eq(tr_redis_int(&server, "XLEN tally:dead"), 0);
  redisReply *tr = redisCommand(c, "HGET tally:submission:m/0 tokened");
  cr_expect(tr != NULL && tr->type == REDIS_REPLY_STRING &&
                strcmp(tr->str, "1") == 0,
            "the token was not applied");
  freeReplyObject(tr);
  cr_expect_eq(read_hits(hits, 200), n);

  /* A rescore asks nothing and changes nothing. */
  char dir[64];
  tc_setup(dir, sizeof(dir), "tallyd-judge-rescore");
  const char *rs[] = {"rescore", "--redis", server.url, "--tasks",
                      tasks,     "--task",  "sqa",      NULL};
  tc_run_t t = tc_run(rs, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_expect(strstr(t.out, "0 changed") != NULL, "%s", t.out);
  tc_run_free(&t);
  cr_expect_eq(read_hits(hits, 200), n);
}

Test(tallyd_judge, a_restart_after_sigkill_asks_no_kept_prompt_again) {
  /* Every first answer takes 3 s: tallyd is killed with requests in
   * flight. */
  enum { N = 12 };
  char ids[N][64];
  const char *args[] = {"--tasks",
                        tasks,
                        "--judge-url",
                        judge_url,
                        "--judge-model",
                        "judge-1",
                        "--judge-timeout",
                        "10000",
                        "--judge-concurrency",
                        "4",
                        NULL};
  const char *env[] = {"TALLY_JUDGE_KEY=" KEY, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "judge", args, env), 0);
  for (int i = 0; i < N; i++)
    push_sample(i, i, "Ann", i % 2 ? "Bob[slow]" : "Ann[slow]", ids[i]);
  /* Until some verdicts are kept and more are asked. */
  long long kept = 0;
  for (int i = 0; i < 200 && kept < 4; i++) {
    td_sleep_ms(50);
    kept = tr_redis_int(&server, "HLEN tally:verdicts");
  }
  TD_REQUIRE(&daemon_, kept >= 4, "%lld verdicts kept", kept);
  td_kill(&daemon_);
  kept = tr_redis_int(&server, "HLEN tally:verdicts");
  cr_assert_lt(kept, N, "every verdict was kept before the kill");
  double restart = now_s();
  cr_assert_eq(td_start(&daemon_, &server, "judge", args, env), 0);
  long long got = td_wait_outcomes(c, N, 90000);
  TD_REQUIRE(&daemon_, got == N, "%lld outcomes of %d", got, N);
  cr_expect_eq(td_check_exactly_once(c, ids, N), 0);
  for (int i = 0; i < N; i++)
    cr_expect_eq(score_of(ids[i]), i % 2 ? 0 : 1, "sample %d", i);
  /* After the restart, only the prompts without a kept verdict. */
  hit_t hits[200];
  size_t n = read_hits(hits, 200);
  long long after = 0;
  for (size_t i = 0; i < n; i++)
    after += hits[i].at >= restart;
  cr_expect_eq(after, N - kept, "%lld asked after the restart, %lld kept",
               after, kept);
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:verdicts"), N);
  cJSON *j = report_judge();
  cr_expect_eq(ts_num(j, "judged"), N);
  cJSON_Delete(j);
}

Test(tallyd_judge, without_a_judge_or_with_a_wrong_key_samples_are_unjudged) {
  char ids[2][64];
  /* No --judge-url: unjudged at once, with the cause. */
  const char *args[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "judge", args, NULL), 0);
  push_sample(0, 0, "Ann", "Ann", ids[0]);
  long long got = td_wait_outcomes(c, 1, 30000);
  TD_REQUIRE(&daemon_, got == 1, "%lld outcomes", got);
  cr_expect_eq(score_of(ids[0]), 0);
  char *sum = NULL;
  redisReply *r = redisCommand(c, "HGET tally:submission:m/0 summary");
  if (r != NULL && r->type == REDIS_REPLY_STRING)
    sum = strdup(r->str);
  freeReplyObject(r);
  cr_assert_not_null(sum);
  cr_expect(strstr(sum, "\"judge\":\"unjudged\"") != NULL, "%s", sum);
  free(sum);
  td_kill(&daemon_);

  /* A wrong key: 401 is not retried. */
  const char *args2[] = {"--tasks",       tasks,     "--judge-url", judge_url,
                         "--judge-model", "judge-1", NULL};
  const char *env[] = {"TALLY_JUDGE_KEY=wrong-key", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "judge", args2, env), 0);
  push_sample(1, 1, "Ann", "Ann", ids[1]);
  got = td_wait_outcomes(c, 2, 30000);
  TD_REQUIRE(&daemon_, got == 2, "%lld outcomes", got);
  cr_expect_eq(score_of(ids[1]), 0);
  cr_expect(td_log_has(&daemon_, "the judge was asked 1 time; the last: "
                                 "HTTP 401"));
  cr_expect(!td_log_has(&daemon_, "wrong-key"));
  /* Nothing kept from a failure: the next job of the prompt asks again. */
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:verdicts"), 0);
}

Test(tallyd_judge, a_sample_waiting_for_its_verdict_is_not_claimed) {
  /* Two tallyds that claim entries idle for a second; each first answer
   * takes 3 s. Held while they wait, no entry is taken over, so no
   * prompt is asked twice. */
  enum { N = 8 };
  char ids[N][64];
  const char *args[] = {"--tasks",
                        tasks,
                        "--judge-url",
                        judge_url,
                        "--judge-model",
                        "judge-1",
                        "--claim-idle",
                        "1000",
                        "--judge-timeout",
                        "10000",
                        NULL};
  const char *env[] = {"TALLY_JUDGE_KEY=" KEY, NULL};
  td_daemon_t other;
  memset(&other, 0, sizeof(other));
  cr_assert_eq(td_start(&daemon_, &server, "judge-a", args, env), 0);
  cr_assert_eq(td_start(&other, &server, "judge-b", args, env), 0);
  for (int i = 0; i < N; i++)
    push_sample(i, i, "Ann", "Ann[slow]", ids[i]);
  long long got = td_wait_outcomes(c, N, 60000);
  if (got != N)
    td_log_dump(&other);
  TD_REQUIRE(&daemon_, got == N, "%lld outcomes of %d", got, N);
  cr_expect_eq(td_check_exactly_once(c, ids, N), 0);
  td_sleep_ms(3500); /* a request taken over would be logged by now */
  hit_t hits[200];
  size_t n = read_hits(hits, 200);
  cr_expect_eq(n, N, "%zu requests for %d prompts", n, N);
  cr_expect(!td_log_has(&daemon_, "job.claimed"));
  cr_expect(!td_log_has(&other, "job.claimed"));
  td_kill(&other);
}
