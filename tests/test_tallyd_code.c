/* Issue 26 through tallyd: examples/code's samples scored by code_sandbox
 * in the worker processes (each program in bubblewrap), stored, and
 * reported from Redis with the pass@k the offline report gives; a
 * from_job task's job without its target dead-lettered naming the key. */
#include "cli_fixture.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;

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

TestSuite(tallyd_code, .init = setup, .fini = teardown, .timeout = 180);

Test(tallyd_code, code_samples_run_in_the_workers_sandbox) {
  char tasks[600], cmd[1400];
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/code/tasks' '%s'",
           TALLY_SOURCE_DIR, tasks);
  cr_assert_eq(system(cmd), 0);
  td_put(tasks, "mmlu.json",
         "{\"name\": \"mmlu\", \"task_type\": \"output_only\", \"score_type\": "
         "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": "
         "true}, \"comparator\": \"last_number\", \"from_job\": {\"target\": "
         "\"target\", \"problem\": \"doc_id\"}}");
  /* A sample runs up to 2 s (wall_time): a job gets 5. */
  const char *args[] = {"--tasks", tasks, "--job-timeout", "5000", "--batch",
                        "2",       NULL};
  cr_assert_eq(td_start(&daemon_, &server, "code", args, NULL), 0);
  char path[600];
  snprintf(path, sizeof(path), "%s/examples/code/jobs.jsonl", TALLY_SOURCE_DIR);
  int n = td_push_file(c, path);
  char stray[64];
  td_push(c,
          "{\"submission\": \"m/0/0\", \"participant\": \"m\", \"task\": "
          "\"mmlu\", \"doc_id\": 0, \"evaluations\": {\"answer\": \"3\"}}",
          stray);
  cr_assert_eq(n, 24);
  long long got = td_wait_outcomes(c, n + 1, 120000);
  TD_REQUIRE(&daemon_, got == n + 1, "%lld outcomes of %d", got, n + 1);
  cr_expect_eq(td_xlen(c, "tally:results"), n);
  char *why = td_dead_field(c, stray, "error");
  cr_expect(why != NULL && strstr(why, "target: is missing (task \"mmlu\" "
                                       "takes each sample's expected answer "
                                       "from the job's \"target\")") != NULL,
            "%s", why ? why : "no dead letter");
  free(why);

  /* The report from Redis: the offline report's pass@k. */
  char dir[64];
  tc_setup(dir, sizeof(dir), "tallyd-code");
  const char *rep[] = {"report", "--redis", server.url, "--contest", "code",
                       "--k",    "1,2,3",   "--json",   NULL};
  tc_run_t t = tc_run(rep, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cJSON *r = cJSON_Parse(t.out);
  cr_assert_not_null(r, "%s", t.out);
  cr_expect_eq(ts_num(r, "samples"), 24, "%s", t.out);
  cr_expect_eq(ts_num(r, "problems"), 4, "%s", t.out);
  static const double want[2][3] = {{0.5, 5.0 / 6, 1}, {0.25, 5.0 / 12, 0.5}};
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 3; k++) {
      char at[64];
      snprintf(at, sizeof(at), "participants[%d].pass_at_k[%d].value", p, k);
      cr_expect_float_eq(ts_num_at(r, at), want[p][k], 1e-9, "%s", at);
    }
  cJSON_Delete(r);
  tc_run_free(&t);
  tc_teardown();
}
