/* Answer tasks through tallyd against a real redis-server
 * (docs/challenges.md): every match scored exactly once, its summary and
 * the contest's ranking kept, a malformed match dead-lettered with its
 * cause, and the public view leaving out a private dimension. */
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define WAIT_MS 40000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400];

static const char cipher[] =
    "{\"name\": \"cipher\", \"task_type\": \"answer\", \"scoring\": {"
    "\"type\": \"deterministic\", \"dimensions\": ["
    "{\"name\": \"correctness\", \"weight\": 0.6, \"primitive\": "
    "\"exact_match_ratio\", \"field\": \"answers\", \"ground_truth_field\": "
    "\"expected_answers\"},"
    "{\"name\": \"speed\", \"weight\": 0.2, \"primitive\": \"time_decay\", "
    "\"time_limit_secs\": 300},"
    "{\"name\": \"completeness\", \"weight\": 0.2, \"primitive\": "
    "\"coverage_ratio\", \"field\": \"attempted\", \"ground_truth_field\": "
    "\"all_questions\", \"public\": false}]},"
    "\"ground_truth\": {\"expected_answers\": [\"a\", \"b\"], "
    "\"all_questions\": [\"q1\", \"q2\"]}}";

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  td_write_file(tasks, "cipher.json", cipher);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_challenges, .init = setup, .fini = teardown, .timeout = 120);

#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

static char *hget(const char *key, const char *field) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  char *v = r && r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
  freeReplyObject(r);
  return v;
}

static double zscore(const char *key, const char *member) {
  redisReply *r = redisCommand(c, "ZSCORE %s %s", key, member);
  double v = r && r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : -1;
  freeReplyObject(r);
  return v;
}

Test(tallyd_challenges, scores_matches_once_and_keeps_the_contest) {
  const char *argv[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
  const char *jobs[] = {
      "{\"submission\": \"m-77\", \"task\": \"cipher\", \"participant\": "
      "\"agent-7\", \"contest\": \"arena\", \"timestamp\": 1, \"answer\": "
      "{\"answers\": [\"a\", \"c\"], \"attempted\": [\"q1\", \"q2\"]}, "
      "\"time_used\": 42.5}",
      "{\"submission\": \"m-78\", \"task\": \"cipher\", \"participant\": "
      "\"agent-8\", \"contest\": \"arena\", \"timestamp\": 2, \"answer\": "
      "{\"answers\": [\"a\", \"b\"], \"attempted\": [\"q1\"]}, "
      "\"time_used\": 12}",
      "{\"submission\": \"m-79\", \"task\": \"cipher\", \"participant\": "
      "\"agent-9\", \"contest\": \"arena\", \"timestamp\": 3, \"answer\": "
      "[\"not an object\"]}",
  };
  char ids[3][64];
  for (int i = 0; i < 3; i++)
    td_push(c, jobs[i], ids[i]);
  require(td_wait_outcomes(c, 3, WAIT_MS) == 3, "three outcomes");
  require(td_check_exactly_once(c, ids, 3) == 0, "exactly once");
  require(td_pending(c) == 0, "nothing pending");

  cJSON *r = td_result_of(c, ids[0]);
  require(r != NULL, "m-77 has a result");
  /* 0.6 x 500 + 0.2 x 858.33 + 0.2 x 1000 = 671.67: a draw. */
  cr_expect_eq(cJSON_GetObjectItem(r, "score")->valuedouble, 672);
  cr_expect_str_eq(cJSON_GetObjectItem(r, "result")->valuestring, "draw");
  cr_expect_eq(cJSON_GetObjectItem(r, "public_score")->valuedouble, 472);
  cJSON_Delete(r);
  r = td_result_of(c, ids[1]);
  require(r != NULL, "m-78 has a result");
  /* 600 + 192 + 100 = 892: a win. */
  cr_expect_eq(cJSON_GetObjectItem(r, "score")->valuedouble, 892);
  cr_expect_str_eq(cJSON_GetObjectItem(r, "result")->valuestring, "win");
  cJSON_Delete(r);
  char *why = td_dead_field(c, ids[2], "error");
  require(why != NULL && strstr(why, "answer: must be an object") != NULL,
          "m-79 is dead-lettered with its cause: %s", why ? why : "(none)");
  free(why);

  char *score = hget("tally:submission:m-77", "score");
  cr_expect(score != NULL && strcmp(score, "672") == 0, "%s", score);
  free(score);
  cr_expect_eq(zscore("tally:{arena}:ranking", "agent-8"), 892);
  cr_expect_eq(zscore("tally:{arena}:ranking", "agent-7"), 672);
  cr_expect_eq(zscore("tally:{arena}:ranking:public", "agent-7"), 472);

  /* The public event leaves the private dimension out. */
  char *text = td_public_text(c);
  require(text[0] != '\0', "public events");
  cr_expect(strstr(text, "completeness") == NULL, "%s", text);
  cr_expect(strstr(text, "correctness") != NULL,
            "an event shows the public breakdown");
  free(text);
}
