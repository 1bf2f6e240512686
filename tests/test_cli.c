/* The tally command line, run as a child process: tally score and tally
 * check, their output streams and exit codes. */
#include "support.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define TALLY TALLY_BINARY_DIR "/tally"

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof(dir), "/tmp/tally-cli-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    cr_log_warn("could not remove %s", dir);
}

TestSuite(cli, .init = setup, .fini = teardown);

/* Returns dir/name in a static buffer (one of four, used in turn, so that
 * one call of run() can name up to four paths). */
static const char *at(const char *name) {
  static char bufs[4][256];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, 256, "%s/%s", dir, name);
  return b;
}

static void write_file(const char *name, const char *text) {
  FILE *f = fopen(at(name), "w");
  cr_assert_not_null(f, "%s", at(name));
  fputs(text, f);
  fclose(f);
}

static char *read_file(const char *path) {
  char *text = NULL;
  size_t len = 0;
  char err[256];
  cr_assert_eq(tally_read_file(path, &text, &len, err, sizeof(err)), 0, "%s",
               err);
  return text;
}

typedef struct run_s {
  int status; /* the exit code, or -1 if it did not exit normally */
  char *out;
  char *err;
} run_t;

/* Runs tally with args (NULL-terminated) in dir, stdin read from the file
 * stdin_name in dir (or /dev/null). */
static run_t run(const char *const *args, const char *stdin_name) {
  const char *argv[16] = {TALLY};
  size_t n = 1;
  for (; args[n - 1] != NULL && n < 15; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  /* Not at(): the arguments may live in its buffers. */
  char in_path[256], out_path[256], err_path[256];
  if (stdin_name != NULL)
    snprintf(in_path, sizeof(in_path), "%s/%s", dir, stdin_name);
  else
    snprintf(in_path, sizeof(in_path), "/dev/null");
  snprintf(out_path, sizeof(out_path), "%s/.stdout", dir);
  snprintf(err_path, sizeof(err_path), "%s/.stderr", dir);
  posix_spawn_file_actions_addopen(&fa, 0, in_path, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, TALLY, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(rc, 0, "cannot run %s: %s", TALLY, strerror(rc));
  int ws;
  cr_assert_eq(waitpid(pid, &ws, 0), pid);
  run_t r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, read_file(out_path),
             read_file(err_path)};
  return r;
}

static void run_free(run_t *r) {
  free(r->out);
  free(r->err);
}

/* Splits text into its lines; returns how many, at most max. The lines
 * point into text, which is modified. */
static size_t lines_of(char *text, char **lines, size_t max) {
  size_t n = 0;
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  return n;
}

#define APLUSB                                                                 \
  "{\"name\": \"aplusb\", \"score_type\": \"GroupMin\", "                      \
  "\"score_type_parameters\": [[40, \"0\"], [60, \"big_\"]], \"testcases\": " \
  "{\"000\": true, \"001\": false, \"big_0\": false, \"big_1\": true}, "       \
  "\"score_precision\": 2}\n"
#define SUM                                                                    \
  "{\"name\": \"sum\", \"score_type\": \"Sum\", \"score_type_parameters\": "   \
  "10.5, \"testcases\": {\"0\": false, \"1\": true, \"2\": false, \"3\": "     \
  "false}, \"score_precision\": 1}\n"
#define JOB_A(sub, last)                                                       \
  "{\"submission\": \"" sub "\", \"task\": \"aplusb\", \"evaluations\": "     \
  "{\"000\": 1, \"001\": 0.5, \"big_0\": 1, \"big_1\": " last "}}\n"
#define JOB_S(sub)                                                             \
  "{\"submission\": \"" sub "\", \"task\": \"sum\", \"evaluations\": "        \
  "{\"0\": 1, \"1\": 0.2, \"2\": 1, \"3\": 0}}\n"

static void write_tasks(void) {
  cr_assert_eq(mkdir(at("tasks"), 0755), 0);
  write_file("tasks/aplusb.json", APLUSB);
  write_file("tasks/sum.json", SUM);
}

Test(cli, scores_every_job_on_its_own_line_and_exits_0) {
  write_tasks();
  write_file("jobs.jsonl", JOB_A("s1", "1") JOB_S("s2") "\n" JOB_A("s3", "0"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.err, "");
  char *lines[8];
  cr_assert_eq(lines_of(r.out, lines, 8), 3, "stdout: %s", r.out);
  static const char *const subs[] = {"s1", "s2", "s3"};
  static const double scores[] = {80, 23.1, 20};
  for (int i = 0; i < 3; i++) {
    cJSON *res = cJSON_Parse(lines[i]);
    cr_assert_not_null(res, "line %d: %s", i, lines[i]);
    cr_expect_str_eq(ts_str_at(res, "submission"), subs[i]);
    cr_expect_eq(ts_num(res, "score"), scores[i], "line %d", i);
    cJSON_Delete(res);
  }
  run_free(&r);
}

Test(cli, prints_the_same_result_as_the_engine) {
  write_tasks();
  write_file("jobs.jsonl", JOB_A("s1", "0.25"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), NULL},
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
  run_free(&r);
}

Test(cli, exits_1_when_a_job_fails_yet_prints_every_job_in_order) {
  write_tasks();
  write_file("jobs.jsonl",
             JOB_A("s1", "1")
             "{\"submission\": \"s2\", \"task\": \"nosuchtask\", "
             "\"evaluations\": {}}\n" JOB_S("s3") JOB_A("s4", "2")
             "not json\n" JOB_S("s6"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 1, "stderr: %s", r.err);
  char *lines[8];
  cr_assert_eq(lines_of(r.out, lines, 8), 6, "stdout: %s", r.out);
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
  run_free(&r);
}

Test(cli, exits_2_on_an_invalid_config_and_prints_nothing_to_stdout) {
  write_tasks();
  write_file("tasks/broken.json",
             "{\"name\": \"b\", \"score_type\": \"Sum\", "
             "\"score_type_parameters\": -1, \"testcases\": {\"a\": true}}");
  write_file("jobs.jsonl", JOB_A("s1", "1"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "broken.json: score_type_parameters: Sum takes one "
                          "non-negative number") != NULL,
            "stderr: %s", r.err);
  run_free(&r);
}

Test(cli, exits_2_when_two_configs_use_one_task_name) {
  write_tasks();
  write_file("tasks/again.json", SUM);
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "task name \"sum\"") != NULL, "stderr: %s", r.err);
  run_free(&r);
}

Test(cli, checks_a_folder_and_prints_every_error_of_every_file) {
  cr_assert_eq(mkdir(at("bad"), 0755), 0);
  write_file("bad/one.json",
             "{\"name\": \"one\", \"score_type\": \"GroupMin\", "
             "\"score_type_parameters\": [[40, 0]], \"testcases\": {\"a\": "
             "true}, \"colour\": 1}");
  write_file("bad/two.json",
             "{\"name\": \"two\", \"score_type\": \"GroupThreshold\", "
             "\"score_type_parameters\": [[40, 1, 0]], \"testcases\": "
             "{\"a\": true}, \"score_precision\": 11}");
  run_t r = run((const char *[]){"check", at("bad"), NULL}, NULL);
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
  cr_expect_eq(lines_of(r.err, lines, 16), 4, "one line per error");
  run_free(&r);
}

Test(cli, checks_good_configs_with_one_ok_line_each) {
  write_tasks();
  run_t r = run((const char *[]){"check", at("tasks"), NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "aplusb.json: ok: task aplusb, GroupMin") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "sum.json: ok: task sum, Sum") != NULL, "%s",
            r.out);
  run_free(&r);
}

Test(cli, checks_every_path_it_is_given) {
  write_tasks();
  write_file("broken.json", "{\"name\": \"x\"");
  run_t r = run((const char *[]){"check", at("broken.json"),
                                 at("tasks/sum.json"), NULL},
                NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "broken.json: invalid JSON") != NULL, "%s", r.err);
  cr_expect(strstr(r.out, "sum.json: ok") != NULL, "%s", r.out);
  run_free(&r);
}

Test(cli, checks_the_example_tasks_clean) {
  run_t r = run((const char *[]){"check", TALLY_SOURCE_DIR "/examples/tasks",
                                 NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  run_free(&r);
}

Test(cli, lets_jobs_omit_the_task_with_a_single_task_file) {
  write_tasks();
  write_file("jobs.jsonl", "{\"submission\": 1, \"evaluations\": {\"0\": 1, "
                           "\"1\": 1, \"2\": 1, \"3\": 1}}\n");
  run_t r = run((const char *[]){"score", "--task", at("tasks/sum.json"),
                                 at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect_str_eq(ts_str_at(res, "task"), "sum");
  cr_expect_eq(ts_num(res, "score"), 42);
  cJSON_Delete(res);
  run_free(&r);
}

Test(cli, needs_the_task_of_a_job_when_several_are_loaded) {
  write_tasks();
  write_file("jobs.jsonl", "{\"submission\": 1, \"evaluations\": {\"0\": 1, "
                           "\"1\": 1, \"2\": 1, \"3\": 1}}\n");
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 1);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect(strstr(ts_str_at(res, "error"), "task: missing") != NULL, "%s",
            r.out);
  cJSON_Delete(res);
  run_free(&r);
}

Test(cli, reads_jobs_from_stdin_given_as_a_dash) {
  write_tasks();
  write_file("jobs.jsonl", JOB_S("s1") JOB_S("s2"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"), "-", NULL},
                "jobs.jsonl");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[4];
  cr_expect_eq(lines_of(r.out, lines, 4), 2, "%s", r.out);
  run_free(&r);
}

Test(cli, reads_jobs_from_stdin_when_no_file_is_named) {
  write_tasks();
  write_file("jobs.jsonl", JOB_S("s1"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"), NULL},
                "jobs.jsonl");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "\"submission\":\"s1\"") != NULL, "%s", r.out);
  run_free(&r);
}

Test(cli, scores_several_job_files_in_the_order_given) {
  write_tasks();
  write_file("a.jsonl", JOB_S("s1"));
  write_file("b.jsonl", JOB_S("s2") JOB_S("s3"));
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("b.jsonl"), at("a.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[4];
  cr_assert_eq(lines_of(r.out, lines, 4), 3, "%s", r.out);
  cr_expect(strstr(lines[0], "\"s2\"") != NULL);
  cr_expect(strstr(lines[1], "\"s3\"") != NULL);
  cr_expect(strstr(lines[2], "\"s1\"") != NULL);
  run_free(&r);
}

Test(cli, fails_on_a_missing_jobs_file_naming_it) {
  write_tasks();
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("nope.jsonl"), NULL},
                NULL);
  cr_expect_neq(r.status, 0);
  cr_expect(strstr(r.err, "nope.jsonl") != NULL, "%s", r.err);
  run_free(&r);
}

Test(cli, exits_2_with_usage_without_a_task_option) {
  run_t r = run((const char *[]){"score", NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "usage:") != NULL, "%s", r.err);
  cr_expect_str_eq(r.out, "");
  run_free(&r);
  r = run((const char *[]){"frobnicate", NULL}, NULL);
  cr_expect_eq(r.status, 2);
  run_free(&r);
}

Test(cli, accepts_crlf_line_ends_and_skips_blank_lines) {
  write_tasks();
  write_file("jobs.jsonl", "\r\n" JOB_S("s1") "\r\n   \n");
  write_file("crlf.jsonl", "{\"submission\": \"s2\", \"task\": \"sum\", "
                           "\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
                           "\"3\": 1}}\r\n\r\n");
  run_t r = run((const char *[]){"score", "--tasks", at("tasks"),
                                 at("jobs.jsonl"), at("crlf.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stdout: %s\nstderr: %s", r.out, r.err);
  char *lines[8];
  cr_expect_eq(lines_of(r.out, lines, 8), 2, "%s", r.out);
  run_free(&r);
}

Test(cli, exits_2_when_a_checked_path_does_not_exist) {
  run_t r = run((const char *[]){"check", at("nothing-here"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "nothing-here") != NULL, "%s", r.err);
  run_free(&r);
}

Test(cli, exits_2_on_a_folder_without_task_configs) {
  cr_assert_eq(mkdir(at("empty"), 0755), 0);
  run_t r = run((const char *[]){"score", "--tasks", at("empty"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "no task configs") != NULL, "%s", r.err);
  run_free(&r);
}

#define GROUPMAX_TASK                                                          \
  "{\"name\": \"m\", \"score_type\": \"GroupMax\", "                           \
  "\"score_type_parameters\": [[40, 1], [60, 2]], \"testcases\": {\"a\": "     \
  "true, \"b\": true, \"c\": true}}"

Test(cli, scores_plugin_types_loaded_with_plugins) {
  write_file("max.json", GROUPMAX_TASK);
  write_file("jobs.jsonl", "{\"evaluations\": {\"a\": 0, \"b\": 0, \"c\": "
                           "1}}\n");
  run_t r = run((const char *[]){"score", "--plugins",
                                 TALLY_BINARY_DIR "/plugins", "--task",
                                 at("max.json"), at("jobs.jsonl"), NULL},
                NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *res = cJSON_Parse(r.out);
  cr_assert_not_null(res, "%s", r.out);
  cr_expect_eq(ts_num(res, "score"), 60);
  cJSON_Delete(res);
  run_free(&r);
  r = run((const char *[]){"check", "--plugins", TALLY_BINARY_DIR "/plugins",
                           at("max.json"), NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect(strstr(r.out, "ok: task m, GroupMax") != NULL, "%s", r.out);
  run_free(&r);
  /* Without the plugin, the type is unknown. */
  r = run((const char *[]){"check", at("max.json"), NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "unknown score type \"GroupMax\"") != NULL, "%s",
            r.err);
  run_free(&r);
}
