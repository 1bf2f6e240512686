/* Results people read: tally score and tally results print a line per
 * submission on a terminal (or with --text), its subtasks and testcases,
 * dimensions or validators with --details, and JSON elsewhere or with
 * --json; tally ranking prints its table on a terminal and JSON when
 * piped. */
#include "cli_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXAMPLES TALLY_SOURCE_DIR "/examples"

static char dir[64];

static void setup(void) {
  tc_setup(dir, sizeof(dir), "cli-text");
}

TestSuite(cli_text, .init = setup, .fini = tc_teardown, .timeout = 60);

/* tally score --tasks tasks [a1] [a2] jobs (flags after the files would
 * be read as files). */
static tc_run_t score(const char *a1, const char *a2, const char *tasks,
                      const char *jobs) {
  const char *args[7] = {"score", "--tasks", tasks};
  size_t n = 3;
  if (a1 != NULL)
    args[n++] = a1;
  if (a2 != NULL)
    args[n++] = a2;
  args[n] = jobs;
  return tc_run(args, NULL, NULL);
}

Test(cli_text, score_text_prints_a_line_per_submission) {
  tc_run_t r = score("--text", NULL, EXAMPLES "/tasks", EXAMPLES "/jobs.jsonl");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect_str_eq(r.out, "s-1042  aplusb  alice  20/100  public 0/0\n"
                          "s-1043  aplusb  bob  0/100  public 0/0\n"
                          "s-1044  sum  alice  23.1/42  public 2.1/10.5\n"
                          "s-1045  product  carol  46.5/100  public 15/30\n"
                          "s-1046  speed  bob  50/100  public 50/50\n");
  tc_run_free(&r);
}

Test(cli_text, score_details_show_subtasks_and_testcases) {
  tc_write_file("one.jsonl",
                "{\"submission\": \"s-1042\", \"task\": \"aplusb\", "
                "\"participant\": \"alice\", \"evaluations\": {\"000\": 1.0, "
                "\"001\": {\"outcome\": 0.5, \"text\": [\"Output is "
                "partially correct\"], \"time\": 0.12, \"memory\": 2048}, "
                "\"big_0\": 1, \"big_1\": {\"outcome\": 0, \"text\": "
                "[\"Execution timed out\"], \"time\": 1.5, \"memory\": "
                "4096}}}\n");
  tc_run_t r =
      score("--text", "--details", EXAMPLES "/tasks", tc_at("one.jsonl"));
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect_str_eq(r.out,
                   "s-1042  aplusb  alice  20/100  public 0/0\n"
                   "  subtask 0: 20/40\n"
                   "    000  Correct\n"
                   "    001  Partially correct: Output is partially correct"
                   "  time 0.12 s  memory 2048\n"
                   "  subtask 1: 0/60\n"
                   "    big_0  Correct\n"
                   "    big_1  Not correct: Execution timed out  time 1.5 s"
                   "  memory 4096\n");
  tc_run_free(&r);
}

Test(cli_text, a_job_that_cannot_be_scored_reads_as_its_error) {
  tc_write_file("bad.jsonl", "{\"submission\": \"x\", \"task\": \"sum\", "
                             "\"evaluations\": {\"0\": 2}}\n");
  tc_run_t r = score("--text", NULL, EXAMPLES "/tasks", tc_at("bad.jsonl"));
  cr_expect_eq(r.status, 1);
  cr_expect_str_eq(r.out, "x  error: evaluations[\"0\"]: outcome 2 is "
                          "outside [0, 1]\n");
  tc_run_free(&r);
}

Test(cli_text, challenge_details_show_each_dimension_with_its_weight) {
  tc_run_t r = score("--text", "--details", EXAMPLES "/challenges/tasks",
                     EXAMPLES "/challenges/jobs.jsonl");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out,
                   "m-77  cipher  agent-7  672/1000  public 672/1000"
                   "  draw\n"
                   "  correctness (Correctness): 500 x weight 0.6 = "
                   "300\n"
                   "  speed (Speed): 858.333 x weight 0.2 = 171.667\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);
}

Test(cli_text, agent_run_details_show_validators_metrics_dimensions) {
  tc_run_t r = score("--text", "--details", EXAMPLES "/agent-runs/tasks",
                     EXAMPLES "/agent-runs/jobs.jsonl");
  /* The examples' last run is one that cannot be scored. */
  cr_assert_eq(r.status, 1, "%s", r.err);
  const char *want[] = {
      "run-1  fix-login  agent-alpha  99/100  public 99/100  valid  passed\n",
      "  validator exact (exact_match): pass, score 1\n",
      "  metric latency: 9000 ms\n", "  dimension latency: 0.965217",
      "run-4  error: run.events: must be an array\n"};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.out, want[i]) != NULL, "no %s in:\n%s", want[i], r.out);
  tc_run_free(&r);
}

Test(cli_text, piped_output_is_json_and_json_wins_last) {
  tc_run_t r = score(NULL, NULL, EXAMPLES "/tasks", EXAMPLES "/jobs.jsonl");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strncmp(r.out, "{\"submission\":\"s-1042\"", 22) == 0, "%s", r.out);
  tc_run_free(&r);
  r = score("--text", "--json", EXAMPLES "/tasks", EXAMPLES "/jobs.jsonl");
  cr_expect(strncmp(r.out, "{\"submission\":\"s-1042\"", 22) == 0, "%s", r.out);
  tc_run_free(&r);
}

/* Runs tally with its stdout (and stderr) on a pseudo-terminal, as a
 * person's shell does; returns what it wrote (the caller frees it). */
static char *on_a_terminal(const char *const *args, int *status) {
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  cr_assert_geq(pid, 0, "forkpty");
  if (pid == 0) {
    execv(TC_TALLY, (char *const *)args);
    _exit(127);
  }
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  cr_assert_not_null(out);
  for (;;) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0)
      break;
    ssize_t n = read(master, out + len, cap - len - 1);
    if (n <= 0) /* EIO once the child has closed the terminal */
      break;
    len += (size_t)n;
  }
  out[len] = '\0';
  close(master);
  waitpid(pid, status, 0);
  return out;
}

Test(cli_text, on_a_terminal_score_prints_for_people) {
  int status;
  char *out = on_a_terminal((const char *[]){"tally", "score", "--tasks",
                                             EXAMPLES "/tasks",
                                             EXAMPLES "/jobs.jsonl", NULL},
                            &status);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
  /* The terminal turns each \n into \r\n. */
  cr_expect(strstr(out, "s-1042  aplusb  alice  20/100  public 0/0\r\n"
                        "s-1043  aplusb  bob  0/100  public 0/0\r\n") != NULL,
            "%s", out);
  free(out);
  out = on_a_terminal((const char *[]){"tally", "score", "--json", "--tasks",
                                       EXAMPLES "/tasks",
                                       EXAMPLES "/jobs.jsonl", NULL},
                      &status);
  cr_expect(strncmp(out, "{\"submission\":\"s-1042\"", 22) == 0, "%s", out);
  free(out);
}

Test(cli_text, explain_shows_each_subtask_reduced_under_its_score_type) {
  const char *args[] = {"score",
                        "--explain",
                        "--tasks",
                        EXAMPLES "/tasks",
                        EXAMPLES "/jobs.jsonl",
                        NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *want[] = {
      /* GroupMin, with the testcases' messages */
      "s-1042  aplusb  alice  20/100  public 0/0\n"
      "  GroupMin: a subtask is worth its maximum times the lowest outcome "
      "of its testcases\n"
      "  subtask 0 (max 40): lowest of 000: 1, 001: 0.5 (Output is "
      "partially correct) -> 0.5; 0.5 x 40 = 20\n"
      "  subtask 1 (max 60): lowest of big_0: 1, big_1: 0 (Execution timed "
      "out) -> 0; 0 x 60 = 0\n"
      "  total: the subtasks' sum, 20\n"
      "  public: no subtask has every testcase public, 0\n",
      /* a compilation failure */
      "s-1043  aplusb  bob  0/100  public 0/0\n"
      "  GroupMin: a subtask is worth its maximum times the lowest outcome "
      "of its testcases\n"
      "  the submission did not compile: every subtask scores 0\n",
      /* Sum, and its public testcases */
      "  Sum: each testcase is worth 10.5 times its outcome\n"
      "  outcomes 0: 1, 1: 0.2, 2: 1, 3: 0; their sum 2.2 x 10.5 = 23.1\n"
      "  public testcases 1: 0.2; their sum 0.2 x 10.5 = 2.1\n",
      /* GroupMul, a public subtask */
      "  subtask 1 (max 70): product of s2_a: 1, s2_b: 0.9, s1_a: 0.5 -> "
      "0.45; 0.45 x 70 = 31.5\n"
      "  total: the subtasks' sum, 46.5\n"
      "  public: subtask 0 (every testcase public) count, 15\n",
      /* GroupThreshold */
      "  subtask 1 (max 50, threshold 0.5): large_0: 0.3, large_1: 0.7 -> 0; "
      "0 x 50 = 0\n"};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.out, want[i]) != NULL, "no\n%s\nin:\n%s", want[i],
              r.out);
  tc_run_free(&r);
}

Test(cli_text, explain_rounds_where_the_task_rounds) {
  tc_write_file("third.json",
                "{\"name\": \"third\", \"score_type\": \"GroupMin\", "
                "\"score_type_parameters\": [[10, 1]], \"score_precision\": "
                "2, \"testcases\": {\"a\": true}}");
  tc_write_file("third.jsonl", "{\"submission\": \"t\", \"evaluations\": "
                               "{\"a\": 0.333333}}\n");
  const char *args[] = {
      "score", "--explain", "--task", tc_at("third.json"), tc_at("third.jsonl"),
      NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "  subtask 0 (max 10): lowest of a: 0.333333 -> "
                          "0.333333; 0.333333 x 10 = 3.33333, rounded to "
                          "3.33 (2 decimals)\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);
}

Test(cli_text, explain_shows_dimensions_validators_and_checker_notes) {
  const char *args[] = {"score",
                        "--explain",
                        "--tasks",
                        EXAMPLES "/challenges/tasks",
                        EXAMPLES "/challenges/jobs.jsonl",
                        NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "  speed: 858.333 x weight 0.2 = 171.667\n"
                          "  completeness: 1000 x weight 0.2 = 200\n"
                          "  total: the weighted scores' sum, 671.667 (at "
                          "most 1000), rounded to 672; draw by the task's "
                          "win and draw thresholds\n") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "  error: time_used: the match has no time_used: "
                          "time_decay scores 0\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);

  const char *runs[] = {"score",
                        "--explain",
                        "--tasks",
                        EXAMPLES "/agent-runs/tasks",
                        EXAMPLES "/agent-runs/jobs.jsonl",
                        NULL};
  r = tc_run(runs, NULL, NULL);
  cr_expect_eq(r.status, 1, "%s", r.err); /* the last run is refused */
  const char *want[] = {
      "  validator exact (exact_match): fail, score 0\n"
      "    expected: Fixed the session check in login.py\n"
      "    got: fixed the session check in login.py!\n",
      "  dimension correctness: 1, weight 1, a gate at 0.5\n"
      "  dimension reliability: 1, weight 2\n",
      "  overall: 0.444401 by the hybrid strategy; score = overall x 100 = 44; "
      "hybrid: non-gate weighted score 0.4444 below scorecard pass_threshold "
      "0.6000\n",
      "run-4  error: run.events: must be an array\n"};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.out, want[i]) != NULL, "no\n%s\nin:\n%s", want[i],
              r.out);
  tc_run_free(&r);

  const char *bench[] = {"score",
                         "--explain",
                         "--tasks",
                         EXAMPLES "/benchmarks/tasks",
                         EXAMPLES "/benchmarks/jobs.jsonl",
                         NULL};
  r = tc_run(bench, NULL, NULL);
  cr_expect(strstr(r.out, "model-a-gsm-1-1  gsm-1  model-a  0/1  public 0/1\n"
                          "  Sum: each testcase is worth 1 times its "
                          "outcome\n"
                          "  outcomes answer: 0 (Output isn't correct); their "
                          "sum 0 x 1 = 0\n"
                          "  public testcases answer: 0 (Output isn't "
                          "correct); their sum 0 x 1 = 0\n"
                          "  answer, the checker's note: last number: "
                          "expected \"72\", read \"70\"\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);
}

Test(cli_text, explain_is_refused_with_a_mode_elo_or_pass_fail) {
  const char *args[] = {"score",   "--explain",       "--mode", "max",
                        "--tasks", EXAMPLES "/tasks", NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "--explain: explains each job's result") != NULL,
            "%s", r.err);
  tc_run_free(&r);
}

Test(cli_text, an_agent_runs_public_details_say_each_thing_once_with_weights) {
  const char *args[] = {"score",
                        "--json",
                        "--tasks",
                        EXAMPLES "/agent-runs/tasks",
                        EXAMPLES "/agent-runs/jobs.jsonl",
                        NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_expect_eq(r.status, 1, "%s", r.err); /* the last run is refused */
  char *nl = strchr(r.out, '\n');
  cr_assert_not_null(nl, "%s", r.out);
  *nl = '\0';
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  const cJSON *det = cJSON_GetObjectItem(res, "details");
  const cJSON *pub = cJSON_GetObjectItem(res, "public_details");
  const cJSON *dv =
      cJSON_GetArrayItem(cJSON_GetObjectItem(det, "validator_results"), 0);
  const cJSON *pv =
      cJSON_GetArrayItem(cJSON_GetObjectItem(pub, "validator_results"), 0);
  /* details are the reference's evaluation, raw output included; the
   * public details do not say it all again. */
  cr_expect(cJSON_HasObjectItem(dv, "raw_output"));
  cr_expect_not(cJSON_HasObjectItem(pv, "raw_output"));
  /* (the default feedback, restricted: no values either) */
  cr_expect_not(cJSON_HasObjectItem(pv, "actual_value"));
  const cJSON *dd =
      cJSON_GetArrayItem(cJSON_GetObjectItem(det, "dimension_results"), 1);
  const cJSON *pd =
      cJSON_GetArrayItem(cJSON_GetObjectItem(pub, "dimension_results"), 1);
  cr_expect_not(cJSON_HasObjectItem(dd, "weight"));
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(pd, "dimension")),
                   "reliability");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pd, "weight")), 2);
  cJSON_Delete(res);
  tc_run_free(&r);
}

Test(cli_text, explain_names_a_schemas_failure_and_a_patterns_miss) {
  char *text = tc_slurp(EXAMPLES "/agent-runs/tasks/fix-login.json");
  cJSON *task = cJSON_Parse(text);
  free(text);
  cr_assert_not_null(task);
  cJSON *vs = cJSON_GetObjectItem(cJSON_GetObjectItem(task, "evaluation_spec"),
                                  "validators");
  cJSON_AddItemToArray(
      vs,
      cJSON_Parse("{\"key\":\"shape\",\"type\":\"json_schema\",\"target\":"
                  "\"case.payload\",\"expected_from\":\"literal:{\\\"type\\\":"
                  "\\\"object\\\",\\\"additionalProperties\\\":false,"
                  "\\\"properties\\\":{\\\"ticket\\\":{}}}\"}"));
  cJSON_AddItemToArray(
      vs,
      cJSON_Parse("{\"key\":\"digits\",\"type\":\"regex_match\",\"target\":"
                  "\"final_output\",\"expected_from\":\"literal:^[0-9]+$\"}"));
  char *out = cJSON_Print(task);
  tc_write_file("fix-login.json", out);
  free(out);
  cJSON_Delete(task);
  char *jobs = tc_slurp(EXAMPLES "/agent-runs/jobs.jsonl");
  *strchr(jobs, '\n') = '\0';
  tc_write_file("run.jsonl", jobs);
  free(jobs);
  const char *args[] = {"score",
                        "--explain",
                        "--task",
                        tc_at("fix-login.json"),
                        tc_at("run.jsonl"),
                        NULL};
  tc_run_t r = tc_run(args, NULL, NULL);
  cr_expect_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "  validator shape (json_schema): fail, score 0\n"
                          "    why: json schema validation failed\n") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "    schema: additionalProperties at /repo: \"repo\" "
                          "is not allowed\n") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "  validator digits (regex_match): fail, score 0\n"
                          "    the pattern: ^[0-9]+$\n"
                          "    does not match: Fixed the session check in "
                          "login.py\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);
  /* The public details say why the pattern failed (the reference gives no
   * reason); details keep the reference's evaluation. */
  const char *json[] = {
      "score", "--json", "--task", tc_at("fix-login.json"), tc_at("run.jsonl"),
      NULL};
  r = tc_run(json, NULL, NULL);
  cr_expect(strstr(r.out, "\"key\":\"digits\",\"type\":\"regex_match\"") !=
                NULL,
            "%s", r.out);
  const char *pub = strstr(r.out, "\"public_details\"");
  cr_assert_not_null(pub, "%s", r.out);
  cr_expect(strstr(pub, "\"reason\":\"the value does not match the "
                        "pattern\"") != NULL,
            "%s", pub);
  cr_expect(strstr(r.out, "the value does not match the pattern") >= pub,
            "details keep the reference's: %s", r.out);
  tc_run_free(&r);
}
