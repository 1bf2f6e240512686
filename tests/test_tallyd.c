/* tallyd end to end against a real redis-server: every score type through
 * the daemon, the submission records, dead letters for bad input, and a
 * clean drain that leaves no worker behind. */
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd, .init = setup, .fini = teardown, .timeout = 60);

static void start_daemon(const char *const *args) {
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
}

static void stop_daemon(void) {
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 20000);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    td_log_dump(&daemon_);
  cr_assert_neq(status, -1, "tallyd did not stop after SIGTERM");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "tallyd exits 0 after a drain");
}

Test(tallyd, scores_every_score_type_and_stores_the_records) {
  struct {
    const char *job;
    double score;
  } cases[] = {
      /* GroupMin with regexes: 40 x 0.5 + 60 x 0 */
      {"{\"submission\":\"s-1\",\"task\":\"aplusb\",\"participant\":\"a\","
       "\"evaluations\":{\"000\":1,\"001\":0.5,\"big_0\":1,\"big_1\":0}}",
       20},
      /* Sum */
      {"{\"submission\":\"s-2\",\"task\":\"sum\",\"evaluations\":{\"0\":1,"
       "\"1\":0.2,\"2\":1,\"3\":0}}",
       -1},
      /* GroupMul with lists */
      {"{\"submission\":\"s-3\",\"task\":\"product\",\"evaluations\":"
       "{\"s1_a\":0.5,\"s1_b\":1,\"s2_a\":1,\"s2_b\":0.9}}",
       46.5},
      /* GroupThreshold */
      {"{\"submission\":\"s-4\",\"task\":\"speed\",\"evaluations\":"
       "{\"small_0\":0.4,\"small_1\":0.9,\"large_0\":0.3,"
       "\"large_1\":0.7}}",
       50},
      /* a compilation failure */
      {"{\"submission\":7,\"task\":\"aplusb\",\"compilation\":\"failed\"}", 0},
  };
  size_t n = sizeof(cases) / sizeof(cases[0]);
  char ids[8][64];
  for (size_t i = 0; i < n; i++)
    td_push(c, cases[i].job, ids[i]);
  start_daemon(NULL);
  long long got = td_wait_outcomes(c, (long long)n, 20000);
  if (got != (long long)n)
    td_log_dump(&daemon_);
  cr_assert_eq(got, (long long)n);
  cr_expect_eq(td_xlen(c, "tally:dead"), 0);
  for (size_t i = 0; i < n; i++) {
    cJSON *r = td_result_of(c, ids[i]);
    cr_assert(r != NULL, "a result for %s", ids[i]);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(r, "score")));
    cr_expect(cJSON_IsArray(cJSON_GetObjectItem(r, "details")));
    if (cases[i].score >= 0)
      cr_expect_float_eq(cJSON_GetObjectItem(r, "score")->valuedouble,
                         cases[i].score, 1e-9, "job %zu", i);
    cJSON_Delete(r);
  }
  cr_expect_eq(td_pending(c), 0, "nothing stays pending");
  cr_expect_eq(td_xlen(c, "tally:jobs"), 0, "posted jobs are deleted");
  cr_expect_eq(td_check_exactly_once(c, ids, n), 0);

  /* The submission record holds the job verbatim, its summary and
   * scores, and where its result is; not the result itself. */
  redisReply *r = redisCommand(c, "HGET tally:submission:s-1 job");
  cr_assert_eq(r->type, REDIS_REPLY_STRING);
  cr_expect_str_eq(r->str, cases[0].job);
  freeReplyObject(r);
  r = redisCommand(c, "HMGET tally:submission:s-1 score public_score scored "
                      "version summary result_entry result");
  cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
  cr_expect_str_eq(r->element[0]->str, "20");
  cr_expect_str_eq(r->element[1]->str, "0", "no subtask is all public");
  cr_expect_str_eq(r->element[2]->str, "1");
  cr_expect_eq(r->element[3]->len, 16, "a 16-digit version");
  cr_expect(strstr(r->element[4]->str, "\"submission\":\"s-1\"") != NULL, "%s",
            r->element[4]->str);
  cr_assert_eq(r->element[5]->type, REDIS_REPLY_STRING);
  cr_expect_eq(r->element[6]->type, REDIS_REPLY_NIL, "no result field");
  redisReply *e = redisCommand(c, "XRANGE tally:results %s %s",
                               r->element[5]->str, r->element[5]->str);
  cr_assert_eq(e->elements, 1, "result_entry names the result's entry");
  /* The entry is small: the submission, the job's entry and the key of the
   * result, which holds the whole result. */
  const redisReply *f = e->element[0]->element[1];
  cr_assert_eq(f->elements, 6);
  cr_expect_str_eq(f->element[0]->str, "submission");
  cr_expect_str_eq(f->element[1]->str, "s-1");
  cr_expect_str_eq(f->element[2]->str, "entry");
  cr_expect_str_eq(f->element[3]->str, ids[0]);
  cr_expect_str_eq(f->element[4]->str, "body");
  char key[256];
  snprintf(key, sizeof(key), "tally:result:%s:1:", ids[0]);
  cr_expect(strncmp(f->element[5]->str, key, strlen(key)) == 0, "%s",
            f->element[5]->str);
  redisReply *b = redisCommand(c, "GET %s", f->element[5]->str);
  cr_assert_eq(b->type, REDIS_REPLY_STRING);
  cr_expect(strstr(b->str, ids[0]) != NULL, "%s", b->str);
  freeReplyObject(b);
  b = redisCommand(c, "PTTL %s", f->element[5]->str);
  cr_expect_gt(b->integer, 7LL * 24 * 3600 * 1000, "kept past the retention");
  freeReplyObject(b);
  freeReplyObject(e);
  freeReplyObject(r);
  r = redisCommand(c, "HGET tally:submission:7 entry");
  cr_assert_eq(r->type, REDIS_REPLY_STRING, "a numeric submission id too");
  cr_expect_str_eq(r->str, ids[4]);
  freeReplyObject(r);
  stop_daemon();
}

Test(tallyd, dead_letters_bad_input_with_its_cause_and_goes_on) {
  char ids[8][64];
  td_push(c, "{\"task\":\"sum\",\"evaluations\":{\"0\":1,", ids[0]);
  td_push(c, "{\"task\":\"nosuch\",\"evaluations\":{}}", ids[1]);
  td_push(c, "{\"task\":\"sum\",\"evaluations\":{\"0\":1}}", ids[2]);
  td_push(c,
          "{\"task\":\"sum\",\"evaluations\":{\"0\":1,\"1\":1,\"2\":1,"
          "\"3\":1}}",
          ids[3]);
  /* An entry without a job field. */
  redisReply *r = redisCommand(c, "XADD tally:jobs * other x");
  snprintf(ids[4], 64, "%s", r->str);
  freeReplyObject(r);
  /* A job over --max-job-bytes (10 MB). */
  size_t big = 10u * 1024 * 1024;
  char *huge = malloc(big + 1);
  memset(huge, ' ', big);
  memcpy(huge, "{\"task\":\"sum\"", 13);
  huge[big - 1] = '}';
  huge[big] = '\0';
  td_push(c, huge, ids[5]);
  free(huge);
  start_daemon(NULL);
  cr_assert_eq(td_wait_outcomes(c, 6, 20000), 6);
  cr_expect_eq(td_xlen(c, "tally:dead"), 5);
  cr_expect_eq(td_xlen(c, "tally:results"), 1);
  struct {
    int i;
    const char *cause;
  } want[] = {{0, "JSON"},
              {1, "nosuch"},
              {2, "evaluations"},
              {4, "job"},
              {5, "--max-job-bytes"}};
  for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
    char *why = td_dead_field(c, ids[want[k].i], "error");
    cr_assert(why != NULL, "a dead letter for job %d", want[k].i);
    cr_expect(strstr(why, want[k].cause) != NULL, "job %d: %s", want[k].i, why);
    free(why);
  }
  char *job = td_dead_field(c, ids[1], "job");
  cr_expect_str_eq(job, "{\"task\":\"nosuch\",\"evaluations\":{}}",
                   "the job is kept verbatim");
  free(job);
  char *dl = td_dead_field(c, ids[0], "deliveries");
  cr_expect_str_eq(dl, "1");
  free(dl);
  cr_expect_eq(td_pending(c), 0);
  cr_expect_eq(td_check_exactly_once(c, ids, 6), 0);
  stop_daemon();
}

Test(tallyd, dead_letters_a_pending_entry_whose_stream_entry_was_deleted) {
  char ids[2][64];
  td_push(c, "{}", ids[0]);
  /* Another consumer read it, then died, and the entry was deleted. */
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd 0 MKSTREAM"));
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd gone COUNT 10 STREAMS tally:jobs >"));
  freeReplyObject(redisCommand(c, "XDEL tally:jobs %s", ids[0]));
  /* And one of its own, after a restart of this consumer. */
  td_push(c, "{}", ids[1]);
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd d1 COUNT 10 STREAMS tally:jobs >"));
  freeReplyObject(redisCommand(c, "XDEL tally:jobs %s", ids[1]));
  const char *args[] = {"--claim-idle", "1000", NULL};
  start_daemon(args);
  cr_assert_eq(td_wait_outcomes(c, 2, 20000), 2);
  for (int i = 0; i < 2; i++) {
    char *why = td_dead_field(c, ids[i], "error");
    cr_assert(why != NULL, "a dead letter for %d", i);
    cr_expect(strstr(why, "deleted") != NULL, "%s", why);
    free(why);
  }
  cr_expect_eq(td_pending(c), 0);
  stop_daemon();
}

Test(tallyd, drains_on_sigterm_and_leaves_no_worker_behind) {
  char(*ids)[64] = malloc(2000 * sizeof(*ids));
  td_push_many(c, 2000, ids);
  start_daemon(NULL);
  td_wait_outcomes(c, 300, 20000);
  stop_daemon();
  cr_expect_eq(td_marked(&daemon_), 0, "no process of tallyd's is left");
  cr_expect(td_log_has(&daemon_, "draining"));
  cr_expect(td_log_has(&daemon_, "drained"));
  /* What was read and not finished was released: another daemon claims
   * it at once, though its --claim-idle is the default 30 s. */
  td_daemon_t other;
  memset(&other, 0, sizeof(other));
  cr_assert_eq(td_start(&other, &server, "d2", NULL, NULL), 0);
  long long got = td_wait_outcomes(c, 2000, 20000);
  if (got != 2000)
    td_log_dump(&other);
  cr_expect_eq(got, 2000);
  cr_expect_eq(td_check_exactly_once(c, ids, 2000), 0);
  cr_expect_eq(td_pending(c), 0);
  td_signal(&other, SIGTERM);
  cr_expect_neq(td_wait(&other, 20000), -1);
  td_kill(&other);
  free(ids);
}

Test(tallyd, refuses_a_broken_config_at_start_naming_the_error) {
  char dir[300], path[400];
  snprintf(dir, sizeof(dir), "%s/tasks", server.dir);
  snprintf(path, sizeof(path), "%s/bad.json", dir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  FILE *f = fopen(path, "w");
  fputs("{\"name\":\"bad\",\"score_type\":\"Sum\",\"score_type_parameters\":"
        "-1,\"testcases\":{\"0\":true}}",
        f);
  fclose(f);
  const char *args[] = {"--tasks", dir, NULL};
  start_daemon(args);
  int status = td_wait(&daemon_, 10000);
  cr_assert(WIFEXITED(status));
  cr_expect_eq(WEXITSTATUS(status), 2);
  cr_expect(td_log_has(&daemon_, "bad.json: score_type_parameters"));
}
