/* agent_run tasks through tallyd against a real redis-server
 * (docs/evaluation-specs.md): every run scored exactly once, its score,
 * verdict and validity in the result, the contest's ranking kept, a
 * malformed run dead-lettered with its cause, and the contestant's event
 * showing the restricted evaluation (no actual or expected values, no raw
 * output). */
#include "scoretypes/scoretype.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WAIT_MS 40000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400];

static const char fix_login[] =
    "{\"name\": \"fix-login\", \"task_type\": \"agent_run\", \"max_score\": "
    "100, \"evaluation_spec\": {\"name\": \"fix-login\", \"version_number\": "
    "1, \"judge_mode\": \"deterministic\", \"validators\": ["
    "{\"key\": \"exact\", \"type\": \"exact_match\", \"target\": "
    "\"final_output\", \"expected_from\": \"case.expectations.answer\"},"
    "{\"key\": \"fuzzy\", \"type\": \"fuzzy_match\", \"target\": "
    "\"final_output\", \"expected_from\": \"case.expectations.answer\", "
    "\"config\": {\"case_insensitive\": true}}],"
    "\"metrics\": [{\"key\": \"latency\", \"type\": \"numeric\", "
    "\"collector\": \"run_total_latency_ms\"}],"
    "\"scorecard\": {\"dimensions\": [\"correctness\", {\"key\": \"speed\", "
    "\"source\": \"metric\", \"metric\": \"latency\", \"better_direction\": "
    "\"lower\", \"normalization\": {\"target\": 1000, \"max\": 11000}}]}}}";

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  td_write_file(tasks, "fix-login.json", fix_login);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_runs, .init = setup, .fini = teardown, .timeout = 120);

#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

/* A run whose final output is output, 6 s long. */
static void run_job(char *buf, size_t len, const char *S, const char *u,
                    const char *output) {
  snprintf(buf, len,
           "{\"submission\": \"%s\", \"task\": \"fix-login\", "
           "\"participant\": \"%s\", \"contest\": \"arena\", \"run\": {"
           "\"challenge_inputs\": [{\"challenge_identity_id\": "
           "\"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee\", \"payload\": \"fix it\", "
           "\"expectations\": {\"answer\": {\"value\": \"Fixed the login "
           "bug\"}}}], \"events\": ["
           "{\"type\": \"system.run.started\", \"sequence_number\": 1, "
           "\"occurred_at\": \"2026-01-01T00:00:00Z\"},"
           "{\"type\": \"system.output.finalized\", \"sequence_number\": 2, "
           "\"occurred_at\": \"2026-01-01T00:00:05Z\", \"payload\": "
           "{\"final_output\": \"%s\"}},"
           "{\"type\": \"system.run.completed\", \"sequence_number\": 3, "
           "\"occurred_at\": \"2026-01-01T00:00:06Z\"}]}}",
           S, u, output);
}

Test(tallyd_runs, scores_runs_once_and_keeps_the_contest) {
  const char *argv[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
  char jobs[3][2048], ids[3][64];
  run_job(jobs[0], sizeof(jobs[0]), "r-1", "agent-1", "Fixed the login bug");
  run_job(jobs[1], sizeof(jobs[1]), "r-2", "agent-2", "fixed the logon bug");
  snprintf(jobs[2], sizeof(jobs[2]),
           "{\"submission\": \"r-3\", \"task\": \"fix-login\", "
           "\"participant\": \"agent-3\", \"contest\": \"arena\", \"run\": "
           "{\"events\": {\"not\": \"an array\"}}}");
  for (int i = 0; i < 3; i++)
    td_push(c, jobs[i], ids[i]);
  require(td_wait_outcomes(c, 3, WAIT_MS) == 3, "three outcomes");
  require(td_check_exactly_once(c, ids, 3) == 0, "exactly once");
  require(td_pending(c) == 0, "nothing pending");

  /* r-1: both validators pass (correctness 1), latency 6000 ms: speed
   * 1 - 5000/10000 = 0.5; overall 0.75 of 100. */
  cJSON *r = td_result_of(c, ids[0]);
  require(r != NULL, "r-1 has a result");
  cr_expect_eq(cJSON_GetObjectItem(r, "score")->valuedouble, 75);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(r, "passed")));
  cr_expect_str_eq(cJSON_GetObjectItem(r, "validity")->valuestring, "valid");
  const cJSON *details = cJSON_GetObjectItem(r, "details");
  cr_expect_eq(cJSON_GetObjectItem(details, "overall_score")->valuedouble,
               0.75);
  cJSON_Delete(r);
  /* r-2: exact fails (0), fuzzy similarity 37/39 passes: correctness
   * (0 + 37/39) / 2; overall (that + 0.5) / 2. */
  r = td_result_of(c, ids[1]);
  require(r != NULL, "r-2 has a result");
  double correctness = (0 + 37.0 / 39.0) / 2;
  double want = tally_round((correctness + 0.5) / 2 * 100, 0);
  cr_expect_eq(cJSON_GetObjectItem(r, "score")->valuedouble, want, "%g",
               cJSON_GetObjectItem(r, "score")->valuedouble);
  cJSON_Delete(r);
  char *why = td_dead_field(c, ids[2], "error");
  require(why != NULL && strstr(why, "run.events: must be an array") != NULL,
          "r-3 is dead-lettered with its cause: %s", why ? why : "(none)");
  free(why);

  redisReply *z = redisCommand(c, "ZSCORE tally:{arena}:ranking agent-1");
  cr_expect(z && z->type == REDIS_REPLY_STRING && strtod(z->str, NULL) == 75);
  freeReplyObject(z);

  /* The contestant's events show the restricted evaluation. */
  cJSON *events = td_public_events(c);
  require(cJSON_GetArraySize(events) >= 2, "public events");
  const cJSON *e;
  cJSON_ArrayForEach(e, events) {
    char *text = cJSON_PrintUnformatted(e);
    cr_expect(strstr(text, "actual_value") == NULL, "%s", text);
    cr_expect(strstr(text, "raw_output") == NULL, "%s", text);
    cr_expect(strstr(text, "dimension_results") != NULL, "%s", text);
    free(text);
  }
  cJSON_Delete(events);
}
