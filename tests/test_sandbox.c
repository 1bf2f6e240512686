/* The sandbox (sandbox/sandbox.h) and the code_sandbox scorer (issue 26)
 * against hostile programs: each is contained and reported as a failure
 * with its reason. Real bwrap, real python3. */
#include "cli_fixture.h"
#include "sandbox/sandbox.h"
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static tally_sandbox_opts_t opts;

static void setup(void) {
  tally_sandbox_defaults(&opts);
  opts.wall_s = 5;
  opts.cpu_s = 2;
}

TestSuite(sandbox, .init = setup, .timeout = 120);

/* Runs a Python program; asserts the sandbox itself ran. */
static tally_sandbox_result_t run(const char *program) {
  tally_sandbox_result_t r;
  char err[512];
  int rc =
      tally_sandbox_run(&opts, program, strlen(program), &r, err, sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
  return r;
}

static void expect_failure(const char *program, tally_sandbox_end_t end,
                           const char *reason, const char *output) {
  tally_sandbox_result_t r = run(program);
  cr_expect(!r.passed, "%s passed: %s", program, r.output);
  cr_expect_eq(r.end, end, "%s: %s (%s)", program, r.reason, r.output);
  cr_expect(strstr(r.reason, reason) != NULL, "%s: %s", program, r.reason);
  if (output != NULL)
    cr_expect(r.output != NULL && strstr(r.output, output) != NULL, "%s: %s",
              program, r.output);
  tally_sandbox_result_free(&r);
}

Test(sandbox, a_program_that_passes) {
  tally_sandbox_result_t r = run("print('hello')\n");
  cr_expect(r.passed, "%s: %s", r.reason, r.output);
  cr_expect_str_eq(r.reason, "exit status 0");
  cr_expect_str_eq(r.output, "hello\n");
  tally_sandbox_result_free(&r);
  expect_failure("import sys\nsys.exit(3)\n", TALLY_SANDBOX_EXITED,
                 "exit status 3", NULL);
}

Test(sandbox, no_network) {
  /* A port on the host that does listen: the sandbox cannot reach it. */
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
  cr_assert_eq(listen(s, 1), 0);
  socklen_t len = sizeof(a);
  getsockname(s, (struct sockaddr *)&a, &len);
  char program[300];
  snprintf(program, sizeof(program),
           "import socket\ns = socket.socket()\ns.settimeout(2)\n"
           "s.connect(('127.0.0.1', %d))\nprint('CONNECTED')\n",
           ntohs(a.sin_port));
  expect_failure(program, TALLY_SANDBOX_EXITED, "exit status 1", "Error");
  close(s);
}

Test(sandbox, no_view_of_the_host_files_or_environment) {
  expect_failure("print(open('/etc/shadow').read())\n", TALLY_SANDBOX_EXITED,
                 "exit status 1", "Error");
  /* A file of the host's, as the data folder and the token secret are. */
  char dir[] = "/tmp/tally-secret-XXXXXX", path[64], program[200];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/secret", dir);
  FILE *f = fopen(path, "w");
  fputs("s3cr3t", f);
  fclose(f);
  snprintf(program, sizeof(program), "print(open('%s').read())\n", path);
  expect_failure(program, TALLY_SANDBOX_EXITED, "exit status 1",
                 "FileNotFoundError");
  unlink(path);
  rmdir(dir);
  setenv("TALLY_REDIS_PASSWORD", "hunter2", 1);
  expect_failure("import os\nassert 'hunter2' not in str(os.environ), "
                 "'LEAK'\nassert os.environ.get('HOME') == '/sandbox'\n"
                 "raise SystemExit(7)\n",
                 TALLY_SANDBOX_EXITED, "exit status 7", NULL);
  unsetenv("TALLY_REDIS_PASSWORD");
}

Test(sandbox, writes_only_its_scratch_folder) {
  expect_failure("open('/usr/evil', 'w')\n", TALLY_SANDBOX_EXITED,
                 "exit status 1", "Read-only file system");
  expect_failure("open('/evil', 'w')\n", TALLY_SANDBOX_EXITED, "exit status 1",
                 "Error");
  /* Its own folder and /tmp are writable, within the file size. */
  tally_sandbox_result_t r =
      run("open('here', 'w').write('x')\nopen('/tmp/t', 'w').write('y')\n");
  cr_expect(r.passed, "%s: %s", r.reason, r.output);
  tally_sandbox_result_free(&r);
  opts.file_size = 1 << 20;
  /* Python ignores SIGXFSZ: the write fails. */
  expect_failure("open('big', 'wb').write(b'x' * (8 << 20))\n",
                 TALLY_SANDBOX_EXITED, "exit status 1", "File too large");
}

Test(sandbox, bombs_and_loops_are_cut_short) {
  expect_failure("import os\nwhile True:\n    os.fork()\n",
                 TALLY_SANDBOX_EXITED, "exit status 1", "BlockingIOError");
  expect_failure("x = bytearray(8 << 30)\n", TALLY_SANDBOX_EXITED,
                 "exit status 1", "MemoryError");
  expect_failure("while True:\n    pass\n", TALLY_SANDBOX_CPU,
                 "CPU time over 2 s", NULL);
  expect_failure("import time\ntime.sleep(60)\n", TALLY_SANDBOX_WALL,
                 "wall time over 5 s", NULL);
  expect_failure("import sys\nwhile True:\n    sys.stdout.write('x' * "
                 "65536)\n",
                 TALLY_SANDBOX_OUTPUT, "output over 1048576 bytes", NULL);
  expect_failure("import os, signal\nos.kill(os.getpid(), "
                 "signal.SIGKILL)\n",
                 TALLY_SANDBOX_SIGNALED, "killed by signal 9 (SIGKILL)", NULL);
}

/* Whether any process of uid runs on the machine. */
static int processes_of(unsigned uid) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    char path[300];
    struct stat sb;
    snprintf(path, sizeof(path), "/proc/%s", e->d_name);
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && stat(path, &sb) == 0 &&
        sb.st_uid == uid)
      n++;
  }
  if (d != NULL)
    closedir(d);
  return n;
}

Test(sandbox, its_parent_is_out_of_reach_and_nothing_stays_behind) {
  expect_failure("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
                 TALLY_SANDBOX_EXITED, "exit status 1", "Operation not");
  /* A child left sleeping when the program exits dies with the run. */
  tally_sandbox_result_t r =
      run("import os, time\nif os.fork() == 0:\n    time.sleep(600)\n"
          "print('left one behind')\n");
  cr_expect(r.passed, "%s", r.reason);
  tally_sandbox_result_free(&r);
  if (geteuid() == 0) {
    int left = 1;
    for (int i = 0; i < 50 && left > 0; i++) {
      left = processes_of(opts.uid);
      if (left > 0)
        usleep(100000);
    }
    cr_expect_eq(left, 0, "a process of the sandbox's user survived");
  }
}

/* The scorer: the last fenced block, joined with the harness. */
Test(sandbox, the_code_sandbox_scorer) {
  const char *task =
      "{\"name\": \"he\", \"task_type\": \"output_only\", \"score_type\": "
      "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": "
      "true}, \"comparator\": \"code_sandbox\", \"comparator_parameters\": "
      "{\"wall_time\": 5, \"cpu_time\": 2}, \"from_job\": {\"target\": "
      "\"harness\", \"problem\": \"task_id\"}}";
  tally_task_t *t = ts_task(task, NULL, 0);
  cr_assert_not_null(t);
  static const struct {
    const char *answer;
    double score;
    const char *admin;
  } cases[] = {
      {"First try:\\n```python\\n    return a - b\\n```\\nFixed:\\n"
       "```python\\n    return a + b\\n```",
       1, NULL},
      {"```python\\n    return a - b\\n```", 0,
       "sandbox: exit status 1; last output: \\\"AssertionError\\\""},
      /* No fence: the whole response is the code. */
      {"    return a + b\\n", 1, NULL},
      {"```python\\n    while True: pass\\n```", 0,
       "sandbox: CPU time over 2 s"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char job[1024];
    snprintf(job, sizeof(job),
             "{\"submission\": \"s\", \"participant\": \"m\", \"task\": "
             "\"he\", \"task_id\": \"HE/0\", \"harness\": {\"prompt\": \"def "
             "add(a, b):\\n\", \"test\": \"def check(f):\\n    assert f(1, 2) "
             "== 3\\n\", \"entry_point\": \"add\"}, \"evaluations\": "
             "{\"answer\": \"%s\"}}",
             cases[i].answer);
    cJSON *r = ts_score(t, job);
    cr_assert_not_null(r);
    cr_expect_float_eq(ts_num(r, "score"), cases[i].score, 1e-9, "%s: %s",
                       cases[i].answer, cJSON_PrintUnformatted(r));
    const char *admin = ts_str_at(r, "details[0].admin_text");
    if (cases[i].admin != NULL)
      cr_expect(admin != NULL && strstr(admin, "sandbox: ") != NULL, "%s",
                cJSON_PrintUnformatted(r));
    cJSON_Delete(r);
  }
  /* A harness that is not one is a job error naming it. */
  cJSON *r = ts_score(t, "{\"submission\": \"s\", \"participant\": \"m\", "
                         "\"task\": \"he\", \"task_id\": 1, \"harness\": "
                         "\"assert True\", \"evaluations\": {\"answer\": "
                         "\"x\"}}");
  const char *e = ts_str_at(r, "error");
  cr_expect(e != NULL && strstr(e, "code_sandbox: the expected answer must be "
                                   "the problem's harness") != NULL,
            "%s", e);
  cJSON_Delete(r);
  tally_task_free(t);
  char *errors = ts_task_errors(
      "{\"name\": \"he\", \"task_type\": \"output_only\", \"score_type\": "
      "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": "
      "true}, \"comparator\": \"code_sandbox\", \"comparator_parameters\": "
      "{\"wall_time\": 0, \"network\": true, \"command\": []}, "
      "\"from_job\": {\"target\": \"harness\"}}");
  cr_expect(strstr(errors, "comparator_parameters.wall_time: must be a "
                           "number of seconds from 0.01 to 600") != NULL,
            "%s", errors);
  cr_expect(strstr(errors, "comparator_parameters.network: unknown key") !=
                NULL,
            "%s", errors);
  cr_expect(strstr(errors, "comparator_parameters.command: must be a list") !=
                NULL,
            "%s", errors);
  free(errors);
}

/* examples/code: a small HumanEval-style benchmark written for tally (four
 * problems, two models, three samples each), run in the sandbox by tally
 * report --results: pass@k by hand. model-b solves code/0 twice in
 * three, code/1 once, the others never. */
Test(sandbox, the_example_benchmark_gives_pass_at_k, .timeout = 120) {
  char dir[64];
  tc_setup(dir, sizeof(dir), "code-example");
  const char *args[] = {"report",
                        "--results",
                        TALLY_SOURCE_DIR "/examples/code/jobs.jsonl",
                        "--tasks",
                        TALLY_SOURCE_DIR "/examples/code/tasks",
                        "--k",
                        "1,2,3",
                        "--json",
                        NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cJSON *r = cJSON_Parse(t.out);
  cr_assert_not_null(r, "%s", t.out);
  cr_expect_eq(ts_num(r, "samples"), 24);
  cr_expect_eq(ts_num(r, "problems"), 4);
  static const double want[2][3] = {{0.5, 5.0 / 6, 1}, {0.25, 5.0 / 12, 0.5}};
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 3; k++) {
      char path[64];
      snprintf(path, sizeof(path), "participants[%d].pass_at_k[%d].value", p,
               k);
      cr_expect_float_eq(ts_num_at(r, path), want[p][k], 1e-9, "%s", path);
    }
  /* Each failed run's reason in the failure analysis: a failed check, the
   * two loops past their CPU limit; the two refusals come first. */
  static const struct {
    const char *path;
    double count;
  } fails[] = {
      {"failure_analysis.categories.test_failure.count", 11},
      {"failure_analysis.categories.execution_timeout.count", 2},
      {"failure_analysis.categories.refusal.count", 2},
      {"failure_analysis.total_failures", 15},
  };
  for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
    cr_expect_eq(ts_num_at(r, fails[i].path), fails[i].count, "%s: %g",
                 fails[i].path, ts_num_at(r, fails[i].path));
  cJSON_Delete(r);
  tc_run_free(&t);
  tc_teardown();
}
