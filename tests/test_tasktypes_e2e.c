/* The example batch and output-only tasks end to end: through tally score
 * (the examples' job files) and through tallyd with a real redis-server,
 * whose results stream gets their scores. */
#include "cli_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#define EXAMPLES TALLY_SOURCE_DIR "/examples"

static char dir[64];

static void cli_setup(void) {
  tc_setup(dir, sizeof(dir), "tasktypes");
}

TestSuite(tasktypes_cli, .init = cli_setup, .fini = tc_teardown);

/* Scores the example job file name with the example tasks; returns the
 * results, one per line, parsed into out (at most max). */
static size_t score_examples(const char *name, cJSON **out, size_t max) {
  char jobs[256];
  snprintf(jobs, sizeof(jobs), "%s/%s", EXAMPLES, name);
  tc_run_t r = tc_run(
      (const char *[]){"score", "--tasks", EXAMPLES "/tasks", jobs, NULL}, NULL,
      NULL);
  cr_assert_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
  char *lines[16];
  size_t n = tc_lines_of(r.out, lines, 16);
  cr_assert_leq(n, max);
  for (size_t i = 0; i < n; i++) {
    out[i] = cJSON_Parse(lines[i]);
    cr_assert_not_null(out[i], "%s", lines[i]);
  }
  tc_run_free(&r);
  return n;
}

Test(tasktypes_cli, scores_the_example_batch_jobs) {
  cJSON *res[8];
  size_t n = score_examples("batch-jobs.jsonl", res, 8);
  cr_assert_eq(n, 3);
  cr_expect_eq(ts_num(res[0], "score"), 100);
  cr_expect_eq(ts_num(res[0], "public_score"), 30);
  cr_expect_str_eq(ts_str_at(res[0], "details[1].testcases[1].admin_text"),
                   "pair found at index 7");
  cr_expect_null(ts_at(res[0], "public_details[1].testcases[1].admin_text"));
  cr_expect_eq(ts_num(res[1], "score"), 0);
  cr_expect_str_eq(ts_str_at(res[1], "details[1].testcases[0].text[0]"),
                   "Execution timed out");
  cr_expect_eq(ts_bool_at(res[1], "details[1].testcases[0]."
                                  "time_limit_was_exceeded"),
               1);
  cr_expect_str_eq(ts_str_at(res[1], "details[1].testcases[1].text[0]"),
                   "Execution killed by signal");
  cr_expect_eq(ts_num(res[2], "score"), 15);
  cr_expect_str_eq(ts_str_at(res[2], "details[0].testcases[1].text[0]"),
                   "Output is partially correct");
  cr_expect_str_eq(ts_str_at(res[2], "details[1].testcases[0].text[0]"),
                   "Memory limit exceeded");
  for (size_t i = 0; i < n; i++)
    cJSON_Delete(res[i]);
}

Test(tasktypes_cli, scores_the_example_output_only_jobs) {
  cJSON *res[8];
  size_t n = score_examples("output-only-jobs.jsonl", res, 8);
  cr_assert_eq(n, 2);
  cr_expect_eq(ts_num(res[0], "score"), 100);
  cr_expect_eq(ts_num(res[1], "score"), 25);
  cr_expect_str_eq(ts_str_at(res[1], "details[2].text[0]"),
                   "File not submitted");
  for (size_t i = 0; i < n; i++)
    cJSON_Delete(res[i]);
}

Test(tasktypes_cli, checks_a_missing_expected_output_with_exit_2) {
  tc_write_file("t.json", "{\"name\": \"t\", \"task_type\": \"output_only\", "
                          "\"score_type\": \"Sum\", \"score_type_parameters\":"
                          " 1, \"testcases\": {\"a\": true}}");
  tc_run_t r =
      tc_run((const char *[]){"check", tc_at("t.json"), NULL}, NULL, NULL);
  cr_expect_eq(r.status, 2, "%s", r.err);
  cr_expect(strstr(r.err, "t.data: No such file or directory") != NULL, "%s",
            r.err);
  tc_run_free(&r);
}

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;

static void tallyd_setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
}

static void tallyd_teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tasktypes_tallyd, .init = tallyd_setup, .fini = tallyd_teardown,
          .timeout = 60);

/* Pushes every line of the example job file name; returns how many, with
 * their entry ids in ids. */
static size_t push_examples(const char *name, char (*ids)[64], size_t max) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", EXAMPLES, name);
  char *text = tc_slurp(path);
  char *lines[16];
  size_t n = tc_lines_of(text, lines, 16);
  cr_assert_leq(n, max);
  for (size_t i = 0; i < n; i++)
    td_push(c, lines[i], ids[i]);
  free(text);
  return n;
}

Test(tasktypes_tallyd, posts_the_scores_of_the_example_tasks) {
  char ids[16][64];
  size_t n = push_examples("batch-jobs.jsonl", ids, 16);
  n += push_examples("output-only-jobs.jsonl", ids + n, 16 - n);
  cr_assert_eq(n, 5);
  cr_assert_eq(td_start(&daemon_, &server, "d1", NULL, NULL), 0);
  long long got = td_wait_outcomes(c, (long long)n, 20000);
  if (got != (long long)n)
    td_log_dump(&daemon_);
  cr_assert_eq(got, (long long)n);
  cr_expect_eq(td_xlen(c, "tally:dead"), 0);
  static const double want[] = {100, 0, 15, 100, 25};
  for (size_t i = 0; i < n; i++) {
    cJSON *r = td_result_of(c, ids[i]);
    cr_assert_not_null(r, "a result for %s", ids[i]);
    cr_expect_eq(ts_num(r, "score"), want[i], "job %zu", i);
    if (i == 0)
      cr_expect_str_eq(ts_str_at(r, "details[1].testcases[1].admin_text"),
                       "pair found at index 7");
    cJSON_Delete(r);
  }
  /* The contest state's summaries and contestant events (with their
   * views) never carry the admin text. */
  redisReply *v = redisCommand(c, "HGET tally:submission:b-1 summary");
  cr_assert_eq(v->type, REDIS_REPLY_STRING);
  cr_expect(strstr(v->str, "pair found") == NULL, "%s", v->str);
  freeReplyObject(v);
  char *events = td_public_text(c);
  cr_expect(strstr(events, "pair found") == NULL, "%s", events);
  cr_expect(strstr(events, "\"b-1\"") != NULL, "b-1 has a contestant event");
  free(events);
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 20000);
  cr_expect(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
