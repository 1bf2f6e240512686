/* Task types: batch execution results with CMS's messages, checker
 * verdicts, output-only submissions, admin texts kept private, the task
 * keys and data folders, and the table of task types. */
#include "engine/views.h"
#include "support.h"
#include "tasktypes/execution.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static tally_registry_t reg;
static tally_taskset_t ts;
static tally_engine_t engine;
static tally_buf_t out;

/* Writes text to dir/name, making dir/sub folders as needed (one level). */
static void put(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  mkdir(path, 0700);
  *slash = '/';
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* Writes len bytes to dir/name (NUL bytes and all). */
static void put_bytes(const char *name, const char *bytes, size_t len) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  cr_assert_eq(fwrite(bytes, 1, len, f), len);
  fclose(f);
}

/* A batch task over "003" and "004" in one GroupMin subtask, with expected
 * outputs; a batch task without a data folder (checker verdicts only);
 * and an output-only task. */
static void write_tasks(void) {
  put("b.json", "{\"name\": \"b\", \"task_type\": \"batch\", \"score_type\": "
                "\"GroupMin\", \"score_type_parameters\": [[100, 2]], "
                "\"testcases\": {\"003\": true, \"004\": true}, "
                "\"time_limit\": 1}");
  put("b.data/003.out", "1 2\n");
  put("b.data/004.out", "x\n");
  put("c.json", "{\"name\": \"c\", \"task_type\": \"batch\", \"score_type\": "
                "\"Sum\", \"score_type_parameters\": 100, "
                "\"testcases\": {\"003\": true}}");
  put("o.json", "{\"name\": \"o\", \"task_type\": \"output_only\", "
                "\"score_type\": \"Sum\", \"score_type_parameters\": 10, "
                "\"testcases\": {\"a\": true, \"b\": false}}");
  put("o.data/a.out", "42\n");
  put("o.data/b.out", "yes\n");
  /* Expected outputs holding NUL bytes, and an empty one. */
  put("n.json", "{\"name\": \"n\", \"task_type\": \"output_only\", "
                "\"score_type\": \"Sum\", \"score_type_parameters\": 1, "
                "\"testcases\": {\"e\": true, \"z\": true}}");
  put("n.data/e.out", "");
  put_bytes("n.data/z.out", "a\0b\n", 4);
  put("nb.json", "{\"name\": \"nb\", \"task_type\": \"batch\", "
                 "\"score_type\": \"Sum\", \"score_type_parameters\": 1, "
                 "\"testcases\": {\"z\": true}}");
  put("nb.data/y.txt", "");
  put_bytes("nb.data/z.out", "a\0b\n", 4);
}

static void setup(void) {
  snprintf(dir, sizeof(dir), "/tmp/tally-tasktypes-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  write_tasks();
  cr_assert_eq(tally_registry_init(&reg), 0);
  tally_taskset_init(&ts);
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  int rc = tally_taskset_load(&ts, &reg, dir, &d);
  cr_assert_eq(rc, 0, "%s", d.count ? d.msgs[0] : "?");
  tally_diag_close(&d);
  tally_engine_init(&engine, &ts);
  tally_buf_init(&out);
}

static void teardown(void) {
  tally_buf_close(&out);
  tally_engine_close(&engine);
  tally_taskset_close(&ts);
  tally_registry_close(&reg);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(tasktypes, .init = setup, .fini = teardown);

/* Scores job with the engine; returns the result (or error) object. */
static cJSON *score(const char *job) {
  tally_buf_reset(&out);
  tally_engine_score(&engine, job, strlen(job), NULL, &out);
  cJSON *r = cJSON_Parse(out.data);
  cr_assert_not_null(r, "%s", out.data);
  return r;
}

/* The job error of job, in a static buffer; "" when it was scored. */
static const char *error_of(const char *job) {
  static char msg[512];
  cJSON *r = score(job);
  const char *e = ts_str_at(r, "error");
  snprintf(msg, sizeof(msg), "%s", e ? e : "");
  cJSON_Delete(r);
  return msg;
}

/* A job for task b with the given evaluation of "003" ("004" is right). */
static const char *b_job(const char *eval) {
  static char job[2048];
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"p\", \"task\": \"b\", "
           "\"evaluations\": {\"003\": %s, \"004\": {\"status\": \"ok\", "
           "\"output\": \"x\"}}}",
           eval);
  return job;
}

/* Strings by value: Criterion hands parameters to a new process. */
typedef struct status_case_s {
  char status[16];
  char message[64];
  bool timed_out;
} status_case_t;

ParameterizedTestParameters(tasktypes, failed_runs_score_0_with_cms_messages) {
  static status_case_t cases[] = {
      {"timeout", "Execution timed out", true},
      {"wall_timeout", "Execution timed out (wall clock limit exceeded)",
       false},
      {"memory", "Memory limit exceeded", false},
      {"signal", "Execution killed by signal", false},
      {"nonzero_exit", "Execution failed because the return code was nonzero",
       false},
      {"output_limit", "Execution killed by signal", false},
  };
  return cr_make_param_array(status_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(status_case_t *c, tasktypes,
                  failed_runs_score_0_with_cms_messages) {
  char eval[256];
  snprintf(eval, sizeof(eval),
           "{\"status\": \"%s\", \"time\": 1.5, \"wall_time\": 3, "
           "\"memory\": 4096, \"exit_code\": 1, \"signal\": 9, "
           "\"output\": \"1 2\"}",
           c->status);
  cJSON *r = score(b_job(eval));
  const char *tc = "details[0].testcases[0]";
  char path[128];
  snprintf(path, sizeof(path), "%s.outcome", tc);
  cr_expect_str_eq(ts_str_at(r, path), "Not correct");
  snprintf(path, sizeof(path), "%s.text", tc);
  cr_expect_eq(ts_len_at(r, path), 1, "a list of one string, as CMS");
  snprintf(path, sizeof(path), "%s.text[0]", tc);
  cr_expect_str_eq(ts_str_at(r, path), c->message);
  snprintf(path, sizeof(path), "%s.time_limit_was_exceeded", tc);
  cr_expect_eq(ts_bool_at(r, path), c->timed_out);
  snprintf(path, sizeof(path), "%s.time", tc);
  cr_expect_eq(ts_num_at(r, path), 1.5, "time is echoed");
  snprintf(path, sizeof(path), "%s.memory", tc);
  cr_expect_eq(ts_num_at(r, path), 4096, "memory is echoed");
  cr_expect_eq(ts_num(r, "score"), 0);
  cJSON_Delete(r);
}

Test(tasktypes, compares_an_ok_runs_output_with_the_expected_one) {
  cJSON *r = score(b_job("{\"status\": \"ok\", \"time\": 0.1, "
                         "\"output\": \"1   2\\r\\n\\n\"}"));
  cr_expect_eq(ts_num(r, "score"), 100);
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                   "Output is correct");
  cr_expect_null(ts_at(r, "details[0].testcases[0].admin_text"));
  cJSON_Delete(r);

  r = score(b_job("{\"status\": \"ok\", \"output\": \"1 3\"}"));
  cr_expect_eq(ts_num(r, "score"), 0);
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                   "Output isn't correct");
  cr_expect_not_null(ts_str_at(r, "details[0].testcases[0].admin_text"),
                     "white_diff says where the difference is");
  cr_expect_null(ts_at(r, "public_details[0].testcases[0].admin_text"));
  cJSON_Delete(r);
}

Test(tasktypes, takes_a_checkers_verdict_and_translates_its_message) {
  cJSON *r = score(b_job("{\"status\": \"ok\", \"checker\": {\"stdout\": "
                         "\" 0.5 \\nignored\", \"stderr\": "
                         "\"translate:partial\\n\"}}"));
  cr_expect_eq(ts_num_at(r, "details[0].score_fraction"), 0.5);
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                   "Output is partially correct");
  cJSON_Delete(r);

  static const char *const stock[][2] = {
      {"translate:success", "Output is correct"},
      {"translate: wrong ", "Output isn't correct"},
      {"translate:other", "translate:other"},
      {"", ""},
      {"  Well done  \nsecond line", "Well done"},
  };
  for (size_t i = 0; i < sizeof(stock) / sizeof(stock[0]); i++) {
    char eval[256];
    snprintf(eval, sizeof(eval),
             "{\"status\": \"ok\", \"checker\": {\"stdout\": \"1\", "
             "\"stderr\": \"%s\"}}",
             stock[i][0]);
    r = score(b_job(eval));
    cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                     stock[i][1], "stderr %s", stock[i][0]);
    cJSON_Delete(r);
  }
}

Test(tasktypes, accepts_decimal_outcomes_in_range_only) {
  static const char *const good[] = {"1",  "0",   "0.0", "1e-1",
                                     ".5", "+1.", "-0",  "1.000"};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    char eval[256];
    snprintf(eval, sizeof(eval),
             "{\"status\": \"ok\", \"checker\": {\"stdout\": \"%s\\n\"}}",
             good[i]);
    cr_expect_str_eq(error_of(b_job(eval)), "", "outcome %s", good[i]);
  }
  static const char *const bad[][2] = {
      {"abc", "evaluations[\"003\"].checker.stdout: the first line must be "
              "the outcome, a number in [0, 1], not \"abc\""},
      {"", "evaluations[\"003\"].checker.stdout: the first line must be the "
           "outcome, a number in [0, 1], but it is empty"},
      {"1.5", "evaluations[\"003\"].checker.stdout: the outcome 1.5 is "
              "outside [0, 1]"},
      {"-0.1", "evaluations[\"003\"].checker.stdout: the outcome -0.1 is "
               "outside [0, 1]"},
      {"nan", "evaluations[\"003\"].checker.stdout: the first line must be "
              "the outcome, a number in [0, 1], not \"nan\""},
      {"inf", NULL},
      {"0x1p-1", NULL},
      {"0.5 0.5", NULL},
      {"1_0", NULL},
      {"1e", NULL},
      {"1e999", "evaluations[\"003\"].checker.stdout: the outcome 1e999 is "
                "outside [0, 1]"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char eval[256];
    snprintf(eval, sizeof(eval),
             "{\"status\": \"ok\", \"checker\": {\"stdout\": \"%s\\n\", "
             "\"stderr\": \"\"}}",
             bad[i][0]);
    const char *e = error_of(b_job(eval));
    if (bad[i][1] != NULL)
      cr_expect_str_eq(e, bad[i][1]);
    else
      cr_expect(strstr(e, "evaluations[\"003\"].checker.stdout: the first "
                          "line must be the outcome") == e,
                "outcome %s: %s", bad[i][0], e);
  }
}

Test(tasktypes, escapes_control_characters_and_drops_ansi_escapes) {
  cJSON *r = score(b_job("{\"status\": \"ok\", \"checker\": {\"stdout\": "
                         "\"0\", \"stderr\": \"bad\\u0001\\u001b[31mred"
                         "\\u001b[0m\\ttab\\u007f\"}}"));
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                   "bad\001red\ttab\177");
  cJSON_Delete(r);
  /* The raw line carries the bytes escaped, never as they are. */
  cr_expect(strstr(out.data, "bad\\u0001red\\ttab") != NULL, "%s", out.data);
  for (const char *p = out.data; *p; p++)
    cr_expect((unsigned char)*p >= 0x20, "a raw control byte in the result");
}

/* Whether text contains the admin text of the checker below. */
static bool leaks(const char *text) {
  return strstr(text, "secret") != NULL || strstr(text, "admin_text") != NULL;
}

Test(tasktypes,
     keeps_admin_messages_out_of_public_details_views_and_summaries) {
  cJSON *r = score(
      b_job("{\"status\": \"ok\", \"checker\": {\"stdout\": \"0\", \"stderr\": "
            "\"translate:wrong\\nADMIN_MESSAGE: secret one \\nnoise\\n"
            "ADMIN_MESSAGE:secret two\\nADMIN_MESSAGE\\n\"}}"));
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].admin_text"),
                   "secret one\nsecret two");
  cr_expect_str_eq(ts_str_at(r, "details[0].testcases[0].text[0]"),
                   "Output isn't correct");
  char *pub = ts_json_at(r, "public_details");
  cr_expect(!leaks(pub), "%s", pub);
  free(pub);
  cJSON_Delete(r);

  for (int full = 0; full <= 1; full++) {
    tally_buf_t view;
    tally_buf_init(&view);
    cr_assert_eq(tally_engine_view(&engine, full, &view), 0);
    cr_expect(view.len > 0);
    cr_expect(!leaks(view.data), "%s view: %s", full ? "full" : "public",
              view.data);
    tally_buf_close(&view);
  }
  tally_buf_t summary;
  tally_buf_init(&summary);
  cr_assert_eq(tally_engine_summary(&engine, &summary), 0);
  cr_expect(!leaks(summary.data), "%s", summary.data);
  tally_buf_close(&summary);

  /* The next job of the engine has no admin text left over. */
  r = score(b_job("{\"status\": \"ok\", \"output\": \"1 2\"}"));
  cr_expect(!leaks(out.data), "%s", out.data);
  cJSON_Delete(r);
}

Test(tasktypes, decodes_execution_results_strictly) {
  static const char *const cases[][2] = {
      {"{\"status\": \"crashed\"}",
       "evaluations[\"003\"].status: must be one of ok, timeout, "
       "wall_timeout, memory, signal, nonzero_exit, output_limit"},
      {"{\"time\": 1}", "evaluations[\"003\"].status: is missing"},
      {"{\"status\": \"ok\", \"stdout\": \"1\"}",
       "evaluations[\"003\"].stdout: unknown key (an execution result has "
       "status, time, wall_time, memory, exit_code, signal, output and "
       "checker)"},
      {"{\"status\": \"ok\", \"status\": \"ok\"}",
       "evaluations[\"003\"].status: key appears twice"},
      {"{\"status\": \"timeout\", \"time\": -1}",
       "evaluations[\"003\"].time: must be a non-negative number or null"},
      {"{\"status\": \"signal\", \"signal\": 1.5}",
       "evaluations[\"003\"].signal: must be a whole number or null"},
      {"{\"status\": \"ok\", \"output\": 12}",
       "evaluations[\"003\"].output: must be a string"},
      {"{\"status\": \"ok\", \"output\": \"\", \"checker\": {\"stdout\": "
       "\"1\"}}",
       "evaluations[\"003\"].checker: output and checker exclude each other"},
      {"{\"status\": \"ok\", \"checker\": {\"stderr\": \"\"}}",
       "evaluations[\"003\"].checker.stdout: is missing"},
      {"{\"status\": \"ok\", \"checker\": {\"stdout\": \"1\", \"x\": 1}}",
       "evaluations[\"003\"].checker.x: unknown key (a checker has stdout "
       "and stderr)"},
      {"{\"status\": \"ok\"}",
       "evaluations[\"003\"]: a run with status ok needs its output or its "
       "checker's verdict (checker)"},
      {"0.5", "evaluations[\"003\"]: must be an execution result, an object "
              "with status"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    cr_expect_str_eq(error_of(b_job(cases[i][0])), cases[i][1]);
  cr_expect_str_eq(error_of("{\"task\": \"b\", \"evaluations\": {\"003\": "
                            "{\"status\": \"timeout\"}}}"),
                   "evaluations: no evaluation for testcase \"004\"",
                   "a batch run missing is a job error");
}

Test(tasktypes, a_batch_task_without_data_takes_only_checker_verdicts) {
  cJSON *r = score("{\"task\": \"c\", \"evaluations\": {\"003\": {\"status\": "
                   "\"ok\", \"checker\": {\"stdout\": \"0.25\"}}}}");
  cr_expect_eq(ts_num(r, "score"), 25);
  cJSON_Delete(r);
  cr_expect_str_eq(
      error_of("{\"task\": \"c\", \"evaluations\": {\"003\": {\"status\": "
               "\"ok\", \"output\": \"1\"}}}"),
      "evaluations[\"003\"].output: the task has no expected outputs (no "
      "data folder), so a run must send its checker's verdict");
}

Test(tasktypes, output_only_scores_missing_files_0_file_not_submitted) {
  cJSON *r = score("{\"task\": \"o\", \"evaluations\": {\"a\": \"42\"}}");
  cr_expect_eq(ts_num(r, "score"), 10);
  cr_expect_str_eq(ts_str_at(r, "details[0].text[0]"), "Output is correct");
  cr_expect_str_eq(ts_str_at(r, "details[1].idx"), "b");
  cr_expect_str_eq(ts_str_at(r, "details[1].outcome"), "Not correct");
  cr_expect_str_eq(ts_str_at(r, "details[1].text[0]"), "File not submitted");
  cJSON_Delete(r);

  r = score("{\"task\": \"o\", \"evaluations\": {}}");
  cr_expect_eq(ts_num(r, "score"), 0);
  cr_expect_str_eq(ts_str_at(r, "details[0].text[0]"), "File not submitted");
  cJSON_Delete(r);

  r = score("{\"task\": \"o\", \"evaluations\": {\"b\": {\"output\": "
            "\"yes\"}, \"a\": \"41\"}}");
  cr_expect_eq(ts_num(r, "score"), 10);
  cr_expect_str_eq(ts_str_at(r, "details[0].text[0]"), "Output isn't correct");
  cJSON_Delete(r);

  cr_expect_str_eq(
      error_of("{\"task\": \"o\", \"evaluations\": {\"a\": 1}}"),
      "evaluations.a: must be the output, a string or {\"output\": string}");
  cr_expect_str_eq(
      error_of("{\"task\": \"o\", \"evaluations\": {\"a\": {\"out\": \"\"}}}"),
      "evaluations.a.out: unknown key (an output-only evaluation has only "
      "output)");
  cr_expect_str_eq(
      error_of("{\"task\": \"o\", \"evaluations\": {\"z\": \"1\"}}"),
      "evaluations.z: task o has no testcase \"z\"");
}

Test(tasktypes, loads_expected_outputs_into_the_task_once) {
  const tally_task_t *o = tally_taskset_find(&ts, "o");
  cr_assert_not_null(o);
  cr_assert_not_null(o->expected);
  cr_expect_eq(o->expected[0].len, 3);
  cr_expect_str_eq(o->expected[0].data, "42\n");
  cr_expect_str_eq(o->expected[1].data, "yes\n");
  cr_expect_null(tally_taskset_find(&ts, "c")->expected);
  cr_expect_str_eq(tally_taskset_find(&ts, "o")->comparator->name, "white_diff",
                   "the default comparator");
}

/* Loads dir again into a fresh set and returns its errors joined by
 * newlines (malloc'ed); "" when it loads. */
static char *load_errors(void) {
  tally_taskset_t other;
  tally_diag_t d;
  tally_taskset_init(&other);
  tally_diag_init(&d, NULL);
  tally_taskset_load(&other, &reg, dir, &d);
  size_t need = 1;
  for (size_t i = 0; i < d.count; i++)
    need += strlen(d.msgs[i]) + 1;
  char *all = calloc(1, need);
  for (size_t i = 0; i < d.count; i++) {
    strcat(all, d.msgs[i]);
    strcat(all, "\n");
  }
  tally_diag_close(&d);
  tally_taskset_close(&other);
  return all;
}

Test(tasktypes, a_missing_expected_output_is_a_config_error_naming_the_file) {
  char path[128], want[512];
  snprintf(path, sizeof(path), "%s/o.data/b.out", dir);
  cr_assert_eq(unlink(path), 0);
  char *errs = load_errors();
  snprintf(want, sizeof(want),
           "%s/o.json: %s: No such file or directory (the expected output of "
           "testcase \"b\")\n",
           dir, path);
  cr_expect_str_eq(errs, want);
  free(errs);
}

Test(tasktypes, an_output_only_task_needs_its_data_folder) {
  char cmd[128], want[512];
  snprintf(cmd, sizeof(cmd), "rm -r '%s/o.data'", dir);
  cr_assert_eq(system(cmd), 0);
  char *errs = load_errors();
  snprintf(want, sizeof(want),
           "%s/o.json: %s/o.data: No such file or directory (a task of type "
           "output_only needs a data folder with an expected output per "
           "testcase)\n",
           dir, dir);
  cr_expect_str_eq(errs, want);
  free(errs);
}

Test(tasktypes, a_batch_task_naming_a_comparator_needs_its_data_folder) {
  put("c.json", "{\"name\": \"c\", \"task_type\": \"batch\", \"comparator\": "
                "\"exact\", \"score_type\": \"Sum\", \"score_type_parameters\""
                ": 100, \"testcases\": {\"003\": true}}");
  char *errs = load_errors();
  cr_expect(strstr(errs, "/c.json: ") != NULL &&
                strstr(errs, "/c.data: No such file or directory (the task "
                             "names a comparator") != NULL,
            "%s", errs);
  free(errs);
}

Test(tasktypes, finds_the_data_folder_through_data_dir) {
  put("o.json", "{\"name\": \"o\", \"task_type\": \"output_only\", "
                "\"data_dir\": \"shared\", \"score_type\": \"Sum\", "
                "\"score_type_parameters\": 10, \"testcases\": {\"a\": true}}");
  put("shared/a.out", "7\n");
  char *errs = load_errors();
  cr_expect_str_eq(errs, "");
  free(errs);

  put("o.json", "{\"name\": \"o\", \"task_type\": \"output_only\", "
                "\"data_dir\": \"nowhere\", \"score_type\": \"Sum\", "
                "\"score_type_parameters\": 10, \"testcases\": {\"a\": true}}");
  errs = load_errors();
  cr_expect(strstr(errs, "/o.json: data_dir: ") != NULL &&
                strstr(errs, "/nowhere: No such file or directory") != NULL,
            "%s", errs);
  free(errs);
}

Test(tasktypes, refuses_codenames_that_cannot_name_a_data_file) {
  put("o.json", "{\"name\": \"o\", \"task_type\": \"output_only\", "
                "\"score_type\": \"Sum\", \"score_type_parameters\": 10, "
                "\"testcases\": {\"a\": true, \"../x\": true}}");
  char *errs = load_errors();
  cr_expect(strstr(errs, "o.json: testcases[\"../x\"]: the codename of a task "
                         "with expected outputs names a file") != NULL,
            "%s", errs);
  free(errs);
}

Test(tasktypes, changes_the_version_when_an_expected_output_changes) {
  char before[TALLY_VERSION_LEN + 1];
  snprintf(before, sizeof(before), "%s",
           tally_taskset_version(&ts, tally_taskset_find(&ts, "o")));
  put("o.data/b.out", "no\n");
  tally_taskset_t other;
  tally_diag_t d;
  tally_taskset_init(&other);
  tally_diag_init(&d, NULL);
  cr_assert_eq(tally_taskset_load(&other, &reg, dir, &d), 0);
  cr_expect_str_neq(
      tally_taskset_version(&other, tally_taskset_find(&other, "o")), before);
  cr_expect_str_eq(
      tally_taskset_version(&other, tally_taskset_find(&other, "c")),
      tally_taskset_version(&ts, tally_taskset_find(&ts, "c")),
      "a task without data keeps its version");
  tally_diag_close(&d);
  tally_taskset_close(&other);
}

/* Task-key errors, with the file and the JSON path. */
Test(tasktypes, reports_bad_task_keys_with_their_paths) {
  static const char *const cases[][2] = {
      {"\"task_type\": \"interactive\"",
       "task.json: task_type: unknown task type \"interactive\" (known: "
       "outcomes, batch, output_only, answer, agent_run)"},
      {"\"task_type\": 3", "task.json: task_type: must be a string"},
      {"\"comparator\": \"exact\"",
       "task.json: comparator: a task of type outcomes has no expected "
       "outputs to compare (only batch and output_only tasks do)"},
      {"\"task_type\": \"outcomes\", \"data_dir\": \"d\"",
       "task.json: data_dir: a task of type outcomes has no expected outputs "
       "to compare (only batch and output_only tasks do)"},
      {"\"task_type\": \"batch\", \"comparator\": \"no_such\"",
       NULL /* unknown comparator, with the known ones */},
      {"\"task_type\": \"batch\", \"comparator\": \"exact\", "
       "\"comparator_parameters\": {\"x\": 1}",
       "task.json: comparator_parameters: comparator exact takes no "
       "parameters"},
      {"\"task_type\": \"batch\", \"comparator\": \"numeric_tolerance\", "
       "\"comparator_parameters\": {\"absolute\": -1}",
       "task.json: comparator_parameters.absolute: must be a finite number, "
       "0 or more"},
      {"\"task_type\": \"output_only\", \"data_dir\": \"../up\"",
       "task.json: data_dir: must be a folder under the task file's folder "
       "(a relative path without ..)"},
      {"\"task_type\": \"output_only\", \"data_dir\": \"/abs\"",
       "task.json: data_dir: must be a folder under the task file's folder "
       "(a relative path without ..)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char json[512];
    snprintf(json, sizeof(json),
             "{\"name\": \"t\", \"score_type\": \"Sum\", "
             "\"score_type_parameters\": 1, \"testcases\": {\"a\": true}, "
             "%s}",
             cases[i][0]);
    char *errs = ts_task_errors(json);
    if (cases[i][1] != NULL)
      cr_expect_str_eq(errs, cases[i][1], "%s", cases[i][0]);
    else
      cr_expect(strstr(errs, "task.json: comparator: unknown comparator "
                             "\"no_such\" (known: white_diff, exact") == errs,
                "%s", errs);
    free(errs);
  }
}

Test(tasktypes, keeps_one_table_of_task_types_and_comparators) {
  cr_expect_eq(tally_registry_find_task_type(&reg, "batch"),
               &tally_task_type_batch);
  cr_expect_eq(tally_registry_find_task_type(&reg, "outcomes"),
               &tally_task_type_outcomes);
  cr_expect_null(tally_registry_find_task_type(&reg, "nope"));
  cr_expect_not_null(tally_registry_find_comparator(&reg, "white_diff"));
  char err[256];
  size_t n = reg.ntask_types;
  cr_expect_eq(tally_registry_add_task_type(&reg, &tally_task_type_batch, err,
                                            sizeof(err)),
               TALLY_EEXIST);
  cr_expect_str_eq(err, "task type batch is already registered");
  static const tally_task_type_t old = {
      .version = 0, .name = "old", .evaluate = NULL};
  cr_expect_eq(tally_registry_add_task_type(&reg, &old, err, sizeof(err)),
               TALLY_EINVAL);
  cr_expect_str_eq(err, "task type version 0, but tally expects version 1");
  static const tally_task_type_t lazy = {
      .version = TALLY_TASK_TYPE_VERSION, .name = "lazy", .evaluate = NULL};
  cr_expect_eq(tally_registry_add_task_type(&reg, &lazy, err, sizeof(err)),
               TALLY_EINVAL);
  cr_expect_str_eq(err, "task type lazy must set evaluate");
  cr_expect_eq(reg.ntask_types, n, "nothing changes on error");
  const tally_comparator_t *wd =
      tally_registry_find_comparator(&reg, "white_diff");
  cr_expect_eq(tally_registry_add_comparator(&reg, wd, err, sizeof(err)),
               TALLY_EEXIST);
  cr_expect_str_eq(err, "comparator white_diff is already registered");
}

Test(tasktypes, parses_checker_output_on_its_own) {
  tally_tt_eval_t ev;
  memset(&ev, 0, sizeof(ev));
  char err[256];
  static const char so[] = "0.75\r\n";
  static const char se[] = "\033[1mNearly\033[0m there\r\n"
                           "ADMIN_MESSAGE:  off by one\r\n";
  cr_assert_eq(tally_checker_parse(so, strlen(so), se, strlen(se), "x", &ev,
                                   err, sizeof(err)),
               0);
  cr_expect_eq(ev.outcome, 0.75);
  cr_expect_str_eq(ev.message.data, "Nearly there");
  cr_expect_str_eq(ev.admin.data, "off by one");
  tally_text_free(&ev.message);
  tally_text_free(&ev.admin);
  cr_expect_str_eq(tally_exec_status_name(TALLY_EXEC_WALL_TIMEOUT),
                   "wall_timeout");
}

/* Issue 10, defect 8: outputs are bytes, NUL included, as CMS compares
 * them: "\u0000" is not an empty file, and "a\u0000b" matches a\0b\n. */
Test(tasktypes, compares_outputs_holding_nul_bytes_as_bytes) {
  static const struct {
    const char *job;
    double score;
  } cases[] = {
      {"{\"task\": \"n\", \"evaluations\": {\"e\": \"\\u0000\", \"z\": "
       "\"a\\u0000b\"}}",
       1},
      {"{\"task\": \"n\", \"evaluations\": {\"e\": \"\", \"z\": "
       "\"a\\u0000b\\n\"}}",
       2},
      {"{\"task\": \"n\", \"evaluations\": {\"e\": \"\", \"z\": \"a\"}}", 1},
      {"{\"task\": \"n\", \"evaluations\": {\"e\": \"\", \"z\": "
       "\"a\\u0000c\"}}",
       1},
      {"{\"task\": \"nb\", \"evaluations\": {\"z\": {\"status\": \"ok\", "
       "\"output\": \"a\\u0000b\"}}}",
       1},
      {"{\"task\": \"nb\", \"evaluations\": {\"z\": {\"status\": \"ok\", "
       "\"output\": \"a\"}}}",
       0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cJSON *r = score(cases[i].job);
    cr_expect_eq(ts_num(r, "score"), cases[i].score, "case %zu: %s", i,
                 cases[i].job);
    cJSON_Delete(r);
  }
}
