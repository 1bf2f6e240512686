/* tally report over what tallyd stored in a real redis-server
 * (docs/benchmarks.md): the benchmark example's jobs posted through
 * tallyd give the same report, figure for figure, as the same jobs scored
 * offline; so do a participant's report, a new refusal list, and a
 * rescore after a task's config changed. Bad arguments get a message
 * that names them. */
#include "cli_fixture.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 60000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400], jobs[400], dir[64];

#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  tc_setup(dir, sizeof(dir), "tallyd-report");
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  snprintf(jobs, sizeof(jobs), "%s/examples/benchmarks/jobs.jsonl",
           TALLY_SOURCE_DIR);
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/benchmarks/tasks' '%s'",
           TALLY_SOURCE_DIR, tasks);
  cr_assert_eq(system(cmd), 0);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
  tc_teardown();
}

TestSuite(tallyd_report, .init = setup, .fini = teardown, .timeout = 240);

/* Pushes every line of the job file; returns how many. */
static long long push_file(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  char line[8192];
  long long n = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0')
      continue;
    char id[64];
    td_push(c, line, id);
    n++;
  }
  fclose(f);
  return n;
}

/* The output of tally report with args, which must succeed. */
static char *report(const char *const *args) {
  const char *argv[24] = {"report"};
  size_t n = 1;
  for (; args[n - 1] != NULL; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  tc_run_t run = tc_run(argv, NULL, NULL);
  require(run.status == 0, "tally report exited %d: %s", run.status, run.err);
  char *out = run.out;
  run.out = NULL;
  tc_run_free(&run);
  return out;
}

static void same(const char *what, const char *from_redis,
                 const char *offline) {
  require(strcmp(from_redis, offline) == 0,
          "%s: the report from Redis differs from the offline one:\n%s\n%s",
          what, from_redis, offline);
}

Test(tallyd_report, from_redis_equals_offline) {
  const char *argv[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
  long long n = push_file(jobs);
  require(td_wait_outcomes(c, n, WAIT_MS) == n, "every job");

  char *a = report((const char *[]){"--redis", server.url, "--contest", "bench",
                                    "--json", NULL});
  char *b = report((const char *[]){"--results", jobs, "--tasks", tasks,
                                    "--contest", "bench", "--json", NULL});
  same("the whole contest", a, b);
  cJSON *r = cJSON_Parse(a);
  cr_assert_not_null(r);
  cr_expect_eq(cJSON_GetObjectItem(r, "samples")->valuedouble, 240);
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "participants")), 3);
  cr_expect_gt(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "failure_analysis"),
                                   "total_failures")
                   ->valuedouble,
               0);
  cJSON_Delete(r);
  free(a);
  free(b);

  a = report((const char *[]){"--redis", server.url, "--contest", "bench",
                              "--participant", "model-b", "--json", "--k",
                              "1,2,3", "--bootstrap", "500", "--seed", "7",
                              "--confidence", "0.9", NULL});
  b = report((const char *[]){"--results", jobs, "--tasks", tasks, "--contest",
                              "bench", "--participant", "model-b", "--json",
                              "--k", "1,2,3", "--bootstrap", "500", "--seed",
                              "7", "--confidence", "0.9", NULL});
  same("one participant", a, b);
  cr_expect(strstr(a, "\"model-a\"") == NULL);
  free(a);
  free(b);

  /* A new refusal list reads the stored jobs again. */
  tc_write_file("refusals.txt", "Eiffel\n\nJupiter\n");
  char list[400];
  snprintf(list, sizeof(list), "%s", tc_at("refusals.txt"));
  a = report((const char *[]){"--redis", server.url, "--contest", "bench",
                              "--refusals", list, "--json", NULL});
  b = report((const char *[]){"--results", jobs, "--tasks", tasks, "--contest",
                              "bench", "--refusals", list, "--json", NULL});
  same("a new refusal list", a, b);
  r = cJSON_Parse(a);
  const cJSON *refusal = cJSON_GetObjectItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(r, "failure_analysis"),
                          "categories"),
      "refusal");
  require(refusal != NULL &&
              cJSON_GetObjectItem(refusal, "count")->valuedouble > 13,
          "the new phrases find refusals: %s", a);
  cJSON_Delete(r);
  free(a);
  free(b);

  /* A task's threshold and category change; a rescore brings the stored
   * summaries in line with the new configs. */
  char path[600], text[1024];
  snprintf(path, sizeof(path), "%s/mcq-1.json", tasks);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  snprintf(text, sizeof(text),
           "{\"name\": \"mcq-1\", \"task_type\": \"output_only\", "
           "\"score_type\": \"Sum\", \"score_type_parameters\": 1, "
           "\"testcases\": {\"answer\": true}, \"comparator\": "
           "\"multichoice\", \"category\": \"quiz\"}\n");
  fputs(text, f);
  fclose(f);
  tc_run_t run = tc_run((const char *[]){"rescore", "--tasks", tasks, "--redis",
                                         server.url, "--changed", NULL},
                        NULL, NULL);
  require(run.status == 0, "rescore: %s", run.err);
  tc_run_free(&run);
  a = report((const char *[]){"--redis", server.url, "--contest", "bench",
                              "--json", NULL});
  b = report((const char *[]){"--results", jobs, "--tasks", tasks, "--contest",
                              "bench", "--json", NULL});
  same("after a rescore", a, b);
  cr_expect(strstr(a, "\"quiz\"") != NULL);
  free(a);
  free(b);
}

Test(tallyd_report, bad_arguments_are_named) {
  struct {
    const char *args[8];
    const char *want;
  } cases[] = {
      {{"--contest", "c", "--k", "0", NULL}, "--k 0: a list of different"},
      {{"--contest", "c", "--k", "1,1", NULL}, "--k 1,1:"},
      {{"--contest", "c", "--bootstrap", "0", NULL}, "--bootstrap 0:"},
      {{"--contest", "c", "--confidence", "1", NULL}, "--confidence 1:"},
      {{"--contest", "c", "--seed", "-1", NULL}, "--seed -1:"},
      {{"--contest", "c", "--by", "task", NULL}, "--by task:"},
      {{"--contest", "c", "--json", "--html", "x.html", NULL},
       "--json and --html"},
      {{"--results", "x.jsonl", NULL}, "--results: scores job files"},
      {{"--contest", "c", "--tasks", "t", NULL}, "--tasks: only with"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const char *argv[12] = {"report"};
    size_t n = 1;
    for (; cases[i].args[n - 1] != NULL; n++)
      argv[n] = cases[i].args[n - 1];
    argv[n] = NULL;
    tc_run_t run = tc_run(argv, NULL, NULL);
    cr_expect_eq(run.status, 2, "case %zu: exit %d", i, run.status);
    cr_expect(strstr(run.err, cases[i].want) != NULL, "case %zu: %s", i,
              run.err);
    tc_run_free(&run);
  }
  /* An unknown contest is an error, not an empty report. */
  tc_run_t run = tc_run((const char *[]){"report", "--redis", server.url,
                                         "--contest", "nope", NULL},
                        NULL, NULL);
  cr_expect_eq(run.status, 1);
  cr_expect(strstr(run.err, "no contest \"nope\"") != NULL, "%s", run.err);
  tc_run_free(&run);
}
