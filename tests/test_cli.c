/* The tally command line, run as a child process: tally score and tally
 * check, their output streams and exit codes. */
#include "cli_fixture.h"
#include "support.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void setup(void) {
  tc_setup(dir, sizeof(dir), "cli");
}

static void teardown(void) {
  tc_teardown();
}

TestSuite(cli, .init = setup, .fini = teardown);

/* Runs tally in the current folder, stdin read from stdin_name in the
 * test's folder (or /dev/null). */
static tc_run_t run(const char *const *args, const char *stdin_name) {
  return tc_run(args, stdin_name, NULL);
}

#define APLUSB                                                                 \
  "{\"name\": \"aplusb\", \"score_type\": \"GroupMin\", "                      \
  "\"score_type_parameters\": [[40, \"0\"], [60, \"big_\"]], \"testcases\": "  \
  "{\"000\": true, \"001\": false, \"big_0\": false, \"big_1\": true}, "       \
  "\"score_precision\": 2}\n"
#define SUM                                                                    \
  "{\"name\": \"sum\", \"score_type\": \"Sum\", \"score_type_parameters\": "   \
  "10.5, \"testcases\": {\"0\": false, \"1\": true, \"2\": false, \"3\": "     \
  "false}, \"score_precision\": 1}\n"
#define JOB_A(sub, last)                                                       \
  "{\"submission\": \"" sub "\", \"task\": \"aplusb\", \"evaluations\": "      \
  "{\"000\": 1, \"001\": 0.5, \"big_0\": 1, \"big_1\": " last "}}\n"
#define JOB_S(sub)                                                             \
  "{\"submission\": \"" sub "\", \"task\": \"sum\", \"evaluations\": "         \
  "{\"0\": 1, \"1\": 0.2, \"2\": 1, \"3\": 0}}\n"

static void write_tasks(void) {
  cr_assert_eq(mkdir(tc_at("tasks"), 0755), 0);
  tc_write_file("tasks/aplusb.json", APLUSB);
  tc_write_file("tasks/sum.json", SUM);
}

Test(cli, scores_every_job_on_its_own_line_and_exits_0) {
  write_tasks();
  tc_write_file("jobs.jsonl",
                JOB_A("s1", "1") JOB_S("s2") "\n" JOB_A("s3", "0"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.err, "");
  char *lines[8];
  cr_assert_eq(tc_lines_of(r.out, lines, 8), 3, "stdout: %s", r.out);
  static const char *const subs[] = {"s1", "s2", "s3"};
  static const double scores[] = {80, 23.1, 20};
  for (int i = 0; i < 3; i++) {
    cJSON *res = cJSON_Parse(lines[i]);
    cr_assert_not_null(res, "line %d: %s", i, lines[i]);
    cr_expect_str_eq(ts_str_at(res, "submission"), subs[i]);
    cr_expect_eq(ts_num(res, "score"), scores[i], "line %d", i);
    cJSON_Delete(res);
  }
  tc_run_free(&r);
}

Test(cli, prints_the_same_result_as_the_engine) {
  write_tasks();
  tc_write_file("jobs.jsonl", JOB_A("s1", "0.25"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tally_task_t *task = ts_task(APLUSB, NULL, 0);
  cr_assert_not_null(task);
  char *want = ts_score_text(task, JOB_A("s1", "0.25"));
  cr_assert_not_null(want);
  size_t len = strlen(r.out);
  cr_assert(len > 0 && r.out[len - 1] == '\n', "stdout: %s", r.out);
  r.out[len - 1] = '\0';
  cr_expect_str_eq(r.out, want);
  free(want);
  tally_task_free(task);
  tc_run_free(&r);
}

Test(cli, exits_1_when_a_job_fails_yet_prints_every_job_in_order) {
  write_tasks();
  tc_write_file(
      "jobs.jsonl",
      JOB_A("s1", "1") "{\"submission\": \"s2\", \"task\": \"nosuchtask\", "
                       "\"evaluations\": {}}\n" JOB_S("s3")
                           JOB_A("s4", "2") "not json\n" JOB_S("s6"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 1, "stderr: %s", r.err);
  char *lines[8];
  cr_assert_eq(tc_lines_of(r.out, lines, 8), 6, "stdout: %s", r.out);
  static const bool failed[] = {false, true, false, true, true, false};
  for (int i = 0; i < 6; i++) {
    cJSON *res = cJSON_Parse(lines[i]);
    cr_assert_not_null(res, "line %d: %s", i, lines[i]);
    cr_expect_eq(ts_at(res, "error") != NULL, failed[i], "line %d: %s", i,
                 lines[i]);
    cr_expect_eq(ts_at(res, "score") == NULL, failed[i], "line %d", i);
    if (i != 4) {
      char sub[8];
      snprintf(sub, sizeof(sub), "s%d", i + 1);
      cr_expect_str_eq(ts_str_at(res, "submission"), sub);
    }
    cJSON_Delete(res);
  }
  tc_run_free(&r);
}

Test(cli, scores_on_threads_in_input_order_as_one_thread_does) {
  /* More jobs than one batch of a scoring thread (256), with failing,
   * blank, CRLF and NUL-holding lines among them; and a line over a
   * batch's bytes. */
  write_tasks();
  FILE *f = fopen(tc_at("jobs.jsonl"), "w");
  cr_assert_not_null(f);
  for (int i = 0; i < 1500; i++) {
    switch (i % 7) {
    case 0:
      fprintf(f,
              "{\"submission\": \"s%d\", \"task\": \"sum\", "
              "\"evaluations\": {\"0\": %d, \"1\": 0.2, \"2\": 1, "
              "\"3\": 0}}\r\n",
              i, i % 2);
      break;
    case 1:
      fprintf(f, "not json %d\n", i);
      break;
    case 2:
      fputs("   \n", f);
      break;
    case 3:
      fprintf(f, "{\"submission\": \"s%d\"%c}\n", i, '\0');
      break;
    default:
      fprintf(f,
              "{\"submission\": \"s%d\", \"task\": \"aplusb\", "
              "\"evaluations\": {\"000\": 1, \"001\": 0.%d, "
              "\"big_0\": 1, \"big_1\": 1}}\n",
              i, i % 10);
    }
    if (i == 700) {
      fputs("{\"submission\": \"big\", \"task\": \"sum\", \"x\": \"", f);
      for (int k = 0; k < (1 << 20) + 100; k++)
        fputc('a', f);
      fputs("\", \"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
            "\"3\": 1}}\n",
            f);
    }
  }
  fclose(f);
  tc_run_t one =
      run((const char *[]){"score", "--threads", "1", "--tasks", tc_at("tasks"),
                           tc_at("jobs.jsonl"), NULL},
          NULL);
  cr_expect_eq(one.status, 1, "stderr: %s", one.err);
  for (int k = 0; k < 2; k++) {
    const char *n = k == 0 ? "2" : "5";
    tc_run_t many =
        run((const char *[]){"score", "--threads", n, "--tasks", tc_at("tasks"),
                             tc_at("jobs.jsonl"), NULL},
            NULL);
    cr_expect_eq(many.status, one.status, "%s threads: %s", n, many.err);
    cr_expect_str_eq(many.err, one.err);
    cr_expect(strcmp(many.out, one.out) == 0, "%s threads: another output", n);
    tc_run_free(&many);
  }
  char *lines[1500];
  cr_expect_eq(tc_lines_of(one.out, lines, 1500), 1500 - 1500 / 7 + 1,
               "a line per job but the blank ones");
  tc_run_free(&one);
  tc_run_t bad =
      run((const char *[]){"score", "--threads", "0", "--tasks", tc_at("tasks"),
                           tc_at("jobs.jsonl"), NULL},
          NULL);
  cr_expect_eq(bad.status, 2);
  cr_expect(strstr(bad.err, "--threads") != NULL, "%s", bad.err);
  tc_run_free(&bad);
}

Test(cli, exits_2_on_an_invalid_config_and_prints_nothing_to_stdout) {
  write_tasks();
  tc_write_file("tasks/broken.json",
                "{\"name\": \"b\", \"score_type\": \"Sum\", "
                "\"score_type_parameters\": -1, \"testcases\": {\"a\": true}}");
  tc_write_file("jobs.jsonl", JOB_A("s1", "1"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "broken.json: score_type_parameters: Sum takes one "
                          "non-negative number") != NULL,
            "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(cli, exits_2_when_two_configs_use_one_task_name) {
  write_tasks();
  tc_write_file("tasks/again.json", SUM);
  tc_run_t r =
      run((const char *[]){"score", "--tasks", tc_at("tasks"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "task name \"sum\"") != NULL, "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(cli, checks_a_folder_and_prints_every_error_of_every_file) {
  cr_assert_eq(mkdir(tc_at("bad"), 0755), 0);
  tc_write_file("bad/one.json",
                "{\"name\": \"one\", \"score_type\": \"GroupMin\", "
                "\"score_type_parameters\": [[40, 0]], \"testcases\": {\"a\": "
                "true}, \"colour\": 1}");
  tc_write_file("bad/two.json",
                "{\"name\": \"two\", \"score_type\": \"GroupThreshold\", "
                "\"score_type_parameters\": [[40, 1, 0]], \"testcases\": "
                "{\"a\": true}, \"score_precision\": 11}");
  tc_run_t r = run((const char *[]){"check", tc_at("bad"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  const char *want[] = {
      "one.json: colour: unknown key",
      "one.json: score_type_parameters[0][1]: count must be positive",
      "two.json: score_precision: must be between 0 and 10",
      "two.json: score_type_parameters[0][2]: threshold must be a positive "
      "number",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.err, want[i]) != NULL, "missing %s in stderr:\n%s",
              want[i], r.err);
  char *lines[16];
  cr_expect_eq(tc_lines_of(r.err, lines, 16), 4, "one line per error");
  tc_run_free(&r);
}

Test(cli, checks_good_configs_with_one_ok_line_each) {
  write_tasks();
  tc_run_t r = run((const char *[]){"check", tc_at("tasks"), NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "aplusb.json: ok: task aplusb, GroupMin") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "sum.json: ok: task sum, Sum") != NULL, "%s", r.out);
  tc_run_free(&r);
}

/* Issue 24: a literal pattern or schema that cannot be used is valid as
 * the reference reads a spec (so tallyd loads it, and each run is an
 * error, as there), but tally check flags it, naming the file, the
 * validator's path and the cause. */
Test(cli, check_flags_literal_patterns_and_schemas_that_cannot_be_used) {
  tc_write_file(
      "lint.json",
      "{\"name\": \"lint\", \"task_type\": \"agent_run\", "
      "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
      "\"judge_mode\": \"deterministic\", \"validators\": [{\"key\": \"r\", "
      "\"type\": \"regex_match\", \"target\": \"final_output\", "
      "\"expected_from\": \"literal:INC-[0-9\"}, {\"key\": \"s\", \"type\": "
      "\"json_schema\", \"target\": \"final_output\", \"expected_from\": "
      "\"literal:{\\\"minimum\\\": \\\"x\\\"}\"}, {\"key\": \"ok\", "
      "\"type\": \"regex_match\", \"target\": \"final_output\", "
      "\"expected_from\": \"literal:INC-[0-9]+\"}, {\"key\": \"f\", "
      "\"type\": \"file_json_schema\", \"target\": \"file:out\", "
      "\"config\": {\"schema\": {\"properties\": []}}}], \"scorecard\": "
      "{\"dimensions\": [\"correctness\"]}}}");
  tc_run_t r = run((const char *[]){"check", tc_at("lint.json"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  const char *want[] = {
      "lint.json: evaluation_spec.validators[0].expected_from: every run of "
      "validator \"r\" would be an error: invalid regex pattern: missing "
      "terminating ] for character class",
      "lint.json: evaluation_spec.validators[1].expected_from: every run of "
      "validator \"s\" would be an error: parse JSON schema: json: cannot "
      "unmarshal string into Go struct field .minimum of type float64",
      "lint.json: evaluation_spec.validators[3].config.schema: every run of "
      "validator \"f\" would be an error: parse JSON schema: json: cannot "
      "unmarshal array into Go struct field .properties",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.err, want[i]) != NULL, "missing %s in stderr:\n%s",
              want[i], r.err);
  char *lines[16];
  cr_expect_eq(tc_lines_of(r.err, lines, 16), 3, "%s", r.err);
  cr_expect_eq(strstr(r.out, "lint.json: ok"), NULL, "%s", r.out);
  tc_run_free(&r);
}

Test(cli, checks_every_path_it_is_given) {
  write_tasks();
  tc_write_file("broken.json", "{\"name\": \"x\"");
  tc_run_t r = run((const char *[]){"check", tc_at("broken.json"),
                                    tc_at("tasks/sum.json"), NULL},
                   NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "broken.json: invalid JSON") != NULL, "%s", r.err);
  cr_expect(strstr(r.out, "sum.json: ok") != NULL, "%s", r.out);
  tc_run_free(&r);
}

Test(cli, checks_the_example_tasks_clean) {
  tc_run_t r =
      run((const char *[]){"check", TALLY_SOURCE_DIR "/examples/tasks", NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(cli, lets_jobs_omit_the_task_with_a_single_task_file) {
  write_tasks();
  tc_write_file("jobs.jsonl", "{\"submission\": 1, \"evaluations\": {\"0\": 1, "
                              "\"1\": 1, \"2\": 1, \"3\": 1}}\n");
  tc_run_t r = run((const char *[]){"score", "--task", tc_at("tasks/sum.json"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect_str_eq(ts_str_at(res, "task"), "sum");
  cr_expect_eq(ts_num(res, "score"), 42);
  cJSON_Delete(res);
  tc_run_free(&r);
}

Test(cli, needs_the_task_of_a_job_when_several_are_loaded) {
  write_tasks();
  tc_write_file("jobs.jsonl", "{\"submission\": 1, \"evaluations\": {\"0\": 1, "
                              "\"1\": 1, \"2\": 1, \"3\": 1}}\n");
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("jobs.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 1);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect(strstr(ts_str_at(res, "error"), "task: missing") != NULL, "%s",
            r.out);
  cJSON_Delete(res);
  tc_run_free(&r);
}

Test(cli, reads_jobs_from_stdin_given_as_a_dash) {
  write_tasks();
  tc_write_file("jobs.jsonl", JOB_S("s1") JOB_S("s2"));
  tc_run_t r =
      run((const char *[]){"score", "--tasks", tc_at("tasks"), "-", NULL},
          "jobs.jsonl");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[4];
  cr_expect_eq(tc_lines_of(r.out, lines, 4), 2, "%s", r.out);
  tc_run_free(&r);
}

Test(cli, reads_jobs_from_stdin_when_no_file_is_named) {
  write_tasks();
  tc_write_file("jobs.jsonl", JOB_S("s1"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"), NULL},
                   "jobs.jsonl");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "\"submission\":\"s1\"") != NULL, "%s", r.out);
  tc_run_free(&r);
}

Test(cli, scores_several_job_files_in_the_order_given) {
  write_tasks();
  tc_write_file("a.jsonl", JOB_S("s1"));
  tc_write_file("b.jsonl", JOB_S("s2") JOB_S("s3"));
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("b.jsonl"), tc_at("a.jsonl"), NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[4];
  cr_assert_eq(tc_lines_of(r.out, lines, 4), 3, "%s", r.out);
  cr_expect(strstr(lines[0], "\"s2\"") != NULL);
  cr_expect(strstr(lines[1], "\"s3\"") != NULL);
  cr_expect(strstr(lines[2], "\"s1\"") != NULL);
  tc_run_free(&r);
}

Test(cli, fails_on_a_missing_jobs_file_naming_it) {
  write_tasks();
  tc_run_t r = run((const char *[]){"score", "--tasks", tc_at("tasks"),
                                    tc_at("nope.jsonl"), NULL},
                   NULL);
  cr_expect_neq(r.status, 0);
  cr_expect(strstr(r.err, "nope.jsonl") != NULL, "%s", r.err);
  tc_run_free(&r);
}

Test(cli, exits_2_with_usage_without_a_task_option) {
  tc_run_t r = run((const char *[]){"score", NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "usage:") != NULL, "%s", r.err);
  cr_expect_str_eq(r.out, "");
  tc_run_free(&r);
  r = run((const char *[]){"frobnicate", NULL}, NULL);
  cr_expect_eq(r.status, 2);
  tc_run_free(&r);
}

Test(cli, accepts_crlf_line_ends_and_skips_blank_lines) {
  write_tasks();
  tc_write_file("jobs.jsonl", "\r\n" JOB_S("s1") "\r\n   \n");
  tc_write_file("crlf.jsonl", "{\"submission\": \"s2\", \"task\": \"sum\", "
                              "\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
                              "\"3\": 1}}\r\n\r\n");
  tc_run_t r =
      run((const char *[]){"score", "--tasks", tc_at("tasks"),
                           tc_at("jobs.jsonl"), tc_at("crlf.jsonl"), NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
  char *lines[8];
  cr_expect_eq(tc_lines_of(r.out, lines, 8), 2, "%s", r.out);
  tc_run_free(&r);
}

Test(cli, exits_2_when_a_checked_path_does_not_exist) {
  tc_run_t r =
      run((const char *[]){"check", tc_at("nothing-here"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "nothing-here") != NULL, "%s", r.err);
  tc_run_free(&r);
}

Test(cli, exits_2_on_a_folder_without_task_configs) {
  cr_assert_eq(mkdir(tc_at("empty"), 0755), 0);
  tc_run_t r =
      run((const char *[]){"score", "--tasks", tc_at("empty"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "no task configs") != NULL, "%s", r.err);
  tc_run_free(&r);
}

#define GROUPMAX_TASK                                                          \
  "{\"name\": \"m\", \"score_type\": \"GroupMax\", "                           \
  "\"score_type_parameters\": [[40, 1], [60, 2]], \"testcases\": {\"a\": "     \
  "true, \"b\": true, \"c\": true}}"

Test(cli, scores_plugin_types_loaded_with_plugins) {
  tc_write_file("max.json", GROUPMAX_TASK);
  tc_write_file("jobs.jsonl", "{\"evaluations\": {\"a\": 0, \"b\": 0, \"c\": "
                              "1}}\n");
  tc_run_t r = run(
      (const char *[]){"score", "--plugins", TALLY_BINARY_DIR "/plugins",
                       "--task", tc_at("max.json"), tc_at("jobs.jsonl"), NULL},
      NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect_eq(ts_num(res, "score"), 60);
  cJSON_Delete(res);
  tc_run_free(&r);
  r = run((const char *[]){"check", "--plugins", TALLY_BINARY_DIR "/plugins",
                           tc_at("max.json"), NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "ok: task m, GroupMax") != NULL, "%s", r.out);
  tc_run_free(&r);
  /* Without the plugin, the type is unknown. */
  r = run((const char *[]){"check", tc_at("max.json"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "unknown score type \"GroupMax\"") != NULL, "%s",
            r.err);
  tc_run_free(&r);
}

/* Issue 24: tally COMMAND --help prints that command's usage on stdout
 * and exits 0, for every command. */
Test(cli, every_command_answers_help_with_its_usage) {
  const char *commands[] = {"score",   "check",   "submit",  "status",
                            "results", "rescore", "ranking", "reload",
                            "token",   "contest", "report"};
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
    for (int form = 0; form < 2; form++) {
      tc_run_t r = run(
          (const char *[]){commands[i], form ? "-h" : "--help", NULL}, NULL);
      cr_expect_eq(r.status, 0, "tally %s --help: %s", commands[i], r.err);
      char want[64];
      snprintf(want, sizeof(want), "usage: tally %s", commands[i]);
      cr_expect(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
      cr_expect_str_eq(r.err, "");
      tc_run_free(&r);
    }
  }
}
