/* tally-worker as tallyd runs it: a child process on pipes, spoken to in
 * frames, that answers batches and exits as docs/worker-protocol.md says. */
#include "engine/taskset.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKER TALLY_BINARY_DIR "/tally-worker"
#define TASKS TALLY_SOURCE_DIR "/examples/tasks"

/* Generous, for sanitizer builds on a loaded machine; a passing test
 * never waits this long. */
#define TIMEOUT_MS 20000

#define JOB_APLUSB                                                             \
  "{\"submission\": \"s-1042\", \"task\": \"aplusb\", \"participant\": "       \
  "\"alice\", \"evaluations\": {\"000\": 1.0, \"001\": {\"outcome\": 0.5, "    \
  "\"text\": [\"Output is partially correct\"], \"time\": 0.12, "              \
  "\"memory\": 2048}, \"big_0\": 1, \"big_1\": {\"outcome\": 0, \"text\": "    \
  "[\"Execution timed out\"], \"time\": 1.5, \"memory\": 4096}}}"
#define JOB_SUM                                                                \
  "{\"submission\": \"s-1044\", \"task\": \"sum\", \"evaluations\": "          \
  "{\"0\": 1, \"1\": 0.2, \"2\": 1, \"3\": 0}}"
#define JOB_UNKNOWN_TASK                                                       \
  "{\"submission\": \"s-1047\", \"task\": \"nope\", \"evaluations\": {}}"

/* A running worker and our ends of its pipes. */
typedef struct child_s {
  pid_t pid;
  int in, out, err;
  tally_frame_reader_t frames;
} child_t;

static void ignore_sigpipe(void) {
  /* Writing to a worker that died must fail, not kill the test. */
  signal(SIGPIPE, SIG_IGN);
}

TestSuite(worker, .init = ignore_sigpipe, .timeout = 120);

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Starts the worker with args (NULL: --tasks examples/tasks) and env, a
 * NULL-terminated list of "NAME=value" added to ours. */
static void child_start(child_t *c, const char *const *args,
                        const char *const *env) {
  static const char *const default_args[] = {"--tasks", TASKS, NULL};
  const char *argv[16] = {WORKER};
  const char *envp[512];
  size_t n = 0;
  args = args ? args : default_args;
  for (size_t i = 0; args[i] != NULL; i++)
    argv[i + 1] = args[i];
  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    envp[n++] = env[i];
  for (size_t i = 0; environ[i] != NULL && n + 1 < 512; i++)
    envp[n++] = environ[i];
  envp[n] = NULL;

  int in[2], out[2], err[2];
  cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
  cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
  cr_assert_eq(pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  int rc = posix_spawn(&c->pid, WORKER, &fa, NULL, (char *const *)argv,
                       (char *const *)envp);
  posix_spawn_file_actions_destroy(&fa);
  cr_assert_eq(rc, 0, "cannot start %s: %s", WORKER, strerror(rc));
  close(in[0]);
  close(out[1]);
  close(err[1]);
  c->in = in[1];
  c->out = out[0];
  c->err = err[0];
  tally_frame_reader_init(&c->frames);
}

/* Kills the worker if it still runs, and frees everything. */
static void child_stop(child_t *c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
  }
  if (c->in >= 0)
    close(c->in);
  close(c->out);
  close(c->err);
  tally_frame_reader_close(&c->frames);
}

static void child_send(child_t *c, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(c->in, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    cr_assert_gt(n, 0, "write to the worker: %s", strerror(errno));
    data += n;
    len -= (size_t)n;
  }
}

/* Ends the worker's stdin. */
static void child_close_stdin(child_t *c) {
  close(c->in);
  c->in = -1;
}

/* Waits for the worker to exit and returns its wait status. */
static int child_wait(child_t *c) {
  int status;
  long deadline = now_ms() + TIMEOUT_MS;
  for (;;) {
    pid_t p = waitpid(c->pid, &status, WNOHANG);
    if (p == c->pid)
      break;
    cr_assert_lt(now_ms(), deadline, "the worker did not exit");
    usleep(2000);
  }
  c->pid = -1;
  return status;
}

/* Waits for the worker to exit and returns its exit code, or fails when
 * it was killed by a signal. */
static int child_exit_code(child_t *c) {
  int status = child_wait(c);
  cr_assert(WIFEXITED(status), "the worker died of signal %d",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return WEXITSTATUS(status);
}

/* Everything the worker wrote to stderr, once it has exited. The caller
 * frees it. */
static char *child_stderr(child_t *c) {
  tally_buf_t b;
  char chunk[4096];
  ssize_t n;
  tally_buf_init(&b);
  tally_buf_puts(&b, "");
  while ((n = read(c->err, chunk, sizeof(chunk))) > 0)
    tally_buf_put(&b, chunk, (size_t)n);
  return b.data;
}

/* Reads the next response frame within timeout_ms. Returns 1 with the
 * payload, 0 at the end of the worker's stdout, -1 on a timeout, or the
 * reader's framing error. */
static int child_read_frame(child_t *c, const char **payload, size_t *len,
                            int timeout_ms) {
  long deadline = now_ms() + timeout_ms;
  for (;;) {
    int rc = tally_frame_reader_next(&c->frames, payload, len);
    if (rc != 0)
      return rc;
    long left = deadline - now_ms();
    if (left <= 0)
      return -1;
    struct pollfd pfd = {.fd = c->out, .events = POLLIN};
    if (poll(&pfd, 1, (int)left) <= 0)
      continue;
    char *buf;
    size_t avail;
    cr_assert_eq(tally_frame_reader_space(&c->frames, 65536, &buf, &avail), 0);
    ssize_t n = read(c->out, buf, avail);
    if (n < 0 && errno == EINTR)
      continue;
    cr_assert_geq(n, 0, "read from the worker: %s", strerror(errno));
    if (n == 0)
      return 0;
    tally_frame_reader_commit(&c->frames, (size_t)n);
  }
}

/* One job of a request. */
typedef struct req_job_s {
  const char *id;
  const char *json;
} req_job_t;

/* The queue each job of the next request comes from (NULL: none). */
static const char *const *req_queues;

/* Encodes n jobs as one request frame at the end of b. */
static void encode_request(tally_buf_t *b, const req_job_t *jobs, size_t n) {
  tally_batch_writer_t w;
  tally_batch_writer_begin(&w, b);
  for (size_t i = 0; i < n; i++)
    tally_batch_put_job(&w, jobs[i].id, strlen(jobs[i].id), 1,
                        req_queues ? req_queues[i] : "",
                        req_queues ? strlen(req_queues[i]) : 0, jobs[i].json,
                        strlen(jobs[i].json));
  cr_assert_eq(tally_batch_writer_end(&w), 0);
}

static void send_request(child_t *c, const req_job_t *jobs, size_t n) {
  tally_buf_t b;
  tally_buf_init(&b);
  encode_request(&b, jobs, n);
  child_send(c, b.data, b.len);
  tally_buf_close(&b);
}

/* Reads one response and checks it has count results. */
static void read_response(child_t *c, tally_batch_reader_t *br,
                          uint32_t count) {
  const char *p;
  size_t len;
  int rc = child_read_frame(c, &p, &len, TIMEOUT_MS);
  cr_assert_eq(rc, 1, "no response frame (%d): %s", rc, c->frames.err);
  cr_assert_eq(tally_batch_reader_init(br, p, len), 0, "%s", br->err);
  cr_assert_eq(br->count, count);
}

/* The parts of a scored body: the result, the summary, the public view
 * and the full view, each NUL-terminated (malloc'ed; free parts[0]). */
typedef struct parts_s {
  char *part[4];
} parts_t;

/* Takes the next result, checks its id and status, and splits its body:
 * a scored body into its four parts, any other into one part. */
static void next_parts(tally_batch_reader_t *br, const char *id,
                       tally_batch_status_t status, parts_t *parts) {
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_next_result(br, &res), 1, "%s", br->err);
  cr_assert_eq(res.id_len, strlen(id));
  cr_assert(memcmp(res.id, id, res.id_len) == 0, "id %.*s, not %s",
            (int)res.id_len, res.id, id);
  cr_assert_eq(res.status, status, "%.*s", (int)res.body_len, res.body);
  char *body = malloc(res.body_len + 1);
  cr_assert_not_null(body);
  memcpy(body, res.body, res.body_len);
  body[res.body_len] = '\0';
  memset(parts, 0, sizeof(*parts));
  parts->part[0] = body;
  int n = 1;
  for (char *nl = strchr(body, '\n'); nl != NULL; nl = strchr(nl + 1, '\n')) {
    cr_assert_lt(n, 4, "too many parts: %s", body);
    *nl = '\0';
    parts->part[n++] = nl + 1;
  }
  cr_assert_eq(n, status == TALLY_BATCH_SCORED ? 4 : 1, "%d parts", n);
}

/* Takes the next result, checks its id and status, and returns its body
 * (its first part, the result, when scored) parsed, refusing any text
 * after it (free with cJSON_Delete). */
static cJSON *next_result(tally_batch_reader_t *br, const char *id,
                          tally_batch_status_t status) {
  parts_t parts;
  next_parts(br, id, status, &parts);
  cJSON *body = cJSON_ParseWithOpts(parts.part[0], NULL, 1);
  cr_assert_not_null(body, "%s", parts.part[0]);
  free(parts.part[0]);
  return body;
}

static double num(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  cr_assert(cJSON_IsNumber(v), "no number %s", key);
  return v->valuedouble;
}

static const char *str(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  cr_assert(cJSON_IsString(v), "no string %s", key);
  return v->valuestring;
}

Test(worker, scores_a_batch_and_answers_with_ids_statuses_and_results) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t jobs[] = {{"1700000000000-0", JOB_APLUSB},
                            {"1700000000000-1", JOB_UNKNOWN_TASK},
                            {"1700000000001-0", JOB_SUM}};
  send_request(&c, jobs, 3);
  tally_batch_reader_t br;
  read_response(&c, &br, 3);

  cJSON *r = next_result(&br, "1700000000000-0", TALLY_BATCH_SCORED);
  cr_expect_str_eq(str(r, "id"), "1700000000000-0");
  cr_expect_str_eq(str(r, "submission"), "s-1042");
  cr_expect_float_eq(num(r, "score"), 20, 1e-9);
  cJSON_Delete(r);
  r = next_result(&br, "1700000000000-1", TALLY_BATCH_JOB_ERROR);
  cr_expect_str_eq(str(r, "submission"), "s-1047");
  cr_expect(strstr(str(r, "error"), "nope") != NULL, "%s", str(r, "error"));
  cJSON_Delete(r);
  r = next_result(&br, "1700000000001-0", TALLY_BATCH_SCORED);
  cr_expect_str_eq(str(r, "id"), "1700000000001-0");
  cr_expect_float_eq(num(r, "score"), 23.1, 1e-9);
  cJSON_Delete(r);
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_next_result(&br, &res), 0, "%s", br.err);

  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

/* The version of the example task name, as the worker computes it. */
static void example_version(const char *name, char version[17]) {
  char path[512], err[256], *text;
  size_t len;
  snprintf(path, sizeof(path), "%s/%s.json", TASKS, name);
  cr_assert_eq(tally_read_file(path, &text, &len, err, sizeof(err)), 0, "%s",
               err);
  cr_assert_eq(tally_config_version(text, len, version), 0);
  free(text);
}

Test(worker, answers_a_scored_job_with_result_summary_and_views) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t jobs[] = {{"5-0", JOB_APLUSB}, {"6-0", JOB_SUM}};
  send_request(&c, jobs, 2);
  tally_batch_reader_t br;
  read_response(&c, &br, 2);
  char version[17];
  example_version("aplusb", version);

  parts_t p;
  next_parts(&br, "5-0", TALLY_BATCH_SCORED, &p);
  cJSON *result = cJSON_ParseWithOpts(p.part[0], NULL, 1);
  cr_assert_not_null(result, "%s", p.part[0]);
  /* id, then version, end the result. */
  char tail[64];
  snprintf(tail, sizeof(tail), ",\"id\":\"5-0\",\"version\":\"%s\"}", version);
  cr_expect_str_eq(p.part[0] + strlen(p.part[0]) - strlen(tail), tail);
  char want[1024];
  snprintf(want, sizeof(want),
           "{\"submission\":\"s-1042\",\"participant\":\"alice\","
           "\"contest\":\"default\",\"task\":\"aplusb\",\"timestamp\":0,"
           "\"official\":true,\"tokened\":false,\"version\":\"%s\","
           "\"score_mode\":\"max_subtask\",\"score_precision\":2,"
           "\"score_rounding\":\"subtask\",\"score\":20,"
           "\"public_score\":0,\"max_score\":100,\"max_public_score\":0,"
           "\"compiled\":true,\"subtasks\":[20,0],"
           "\"public_subtasks\":null,\"judgement\":\"WA\"}",
           version);
  cr_expect_str_eq(p.part[1], want);
  /* The public view: no private testcase (big_0) and no private score. */
  cJSON *pub = cJSON_ParseWithOpts(p.part[2], NULL, 1);
  cr_assert_not_null(pub, "%s", p.part[2]);
  cr_expect_float_eq(num(pub, "score"), 0, 1e-9);
  cr_expect_null(strstr(p.part[2], "big_0"), "%s", p.part[2]);
  cr_expect_null(strstr(p.part[2], "\"score\":20"), "%s", p.part[2]);
  cr_expect_not_null(strstr(p.part[2], "big_1"), "%s", p.part[2]);
  cJSON_Delete(pub);
  /* The full view: the result's details, whole. */
  cJSON *full = cJSON_ParseWithOpts(p.part[3], NULL, 1);
  cr_assert_not_null(full, "%s", p.part[3]);
  cr_expect_float_eq(num(full, "score"), 20, 1e-9);
  char *d1 = cJSON_PrintUnformatted(
      cJSON_GetObjectItemCaseSensitive(result, "details"));
  char *d2 =
      cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(full, "details"));
  cr_expect_str_eq(d1, d2);
  free(d1);
  free(d2);
  cJSON_Delete(full);
  cJSON_Delete(result);
  free(p.part[0]);

  /* Without a participant, the job has no contest parts. */
  next_parts(&br, "6-0", TALLY_BATCH_SCORED, &p);
  cr_expect_str_eq(p.part[1], "");
  cr_expect_str_eq(p.part[2], "");
  cr_expect_str_eq(p.part[3], "");
  free(p.part[0]);

  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

Test(worker, answers_token_jobs_with_status_2_and_bad_ones_with_errors) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t jobs[] = {
      {"1-0", "{\"type\": \"token\", \"submission\": \"s-1042\", "
              "\"participant\": \"alice\"}"},
      {"2-0", "{\"type\": \"token\", \"submission\": 17}"},
      {"3-0", "{\"type\": \"token\", \"participant\": \"alice\"}"},
      {"4-0", "{\"type\": \"tokn\", \"submission\": \"s-9\"}"},
      {"5-0", "{\"submission\": \"s-1\", \"participant\": \"u\", "
              "\"task\": \"sum\", \"contest\": false, \"evaluations\": "
              "{\"0\": 1, \"1\": 0.2, \"2\": 1, \"3\": 0}}"},
  };
  send_request(&c, jobs, 5);
  tally_batch_reader_t br;
  read_response(&c, &br, 5);
  parts_t p;
  next_parts(&br, "1-0", TALLY_BATCH_TOKEN, &p);
  cr_expect_str_eq(p.part[0],
                   "{\"submission\":\"s-1042\",\"participant\":\"alice\"}");
  free(p.part[0]);
  next_parts(&br, "2-0", TALLY_BATCH_TOKEN, &p);
  cr_expect_str_eq(p.part[0], "{\"submission\":\"17\",\"participant\":null}");
  free(p.part[0]);
  cJSON *r = next_result(&br, "3-0", TALLY_BATCH_JOB_ERROR);
  cr_expect(strncmp(str(r, "error"), "submission: missing", 19) == 0, "%s",
            str(r, "error"));
  cJSON_Delete(r);
  r = next_result(&br, "4-0", TALLY_BATCH_JOB_ERROR);
  cr_expect_str_eq(str(r, "submission"), "s-9");
  cr_expect_str_eq(str(r, "error"), "type: must be \"score\" or \"token\"");
  cJSON_Delete(r);
  /* A contest key of the wrong type makes a scored job a job error. */
  r = next_result(&br, "5-0", TALLY_BATCH_JOB_ERROR);
  cr_expect_str_eq(str(r, "submission"), "s-1");
  cr_expect_str_eq(str(r, "error"), "contest: must be a string or a number");
  cJSON_Delete(r);
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

Test(worker, answers_each_request_frame_with_one_response_in_order) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t jobs[] = {
      {"1-0", JOB_SUM}, {"2-0", JOB_APLUSB}, {"3-0", JOB_SUM}};
  tally_buf_t b;
  tally_buf_init(&b);
  for (size_t i = 0; i < 3; i++)
    encode_request(&b, &jobs[i], 1);
  /* The first frame and a piece of the second, then the rest. */
  size_t first = TALLY_FRAME_HEADER + 4 + 4 + 3 + 4 + 4 + strlen(JOB_SUM);
  child_send(&c, b.data, first + 10);
  usleep(50000);
  child_send(&c, b.data + first + 10, b.len - first - 10);
  tally_buf_close(&b);
  for (size_t i = 0; i < 3; i++) {
    tally_batch_reader_t br;
    read_response(&c, &br, 1);
    cJSON_Delete(next_result(&br, jobs[i].id, TALLY_BATCH_SCORED));
  }
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

Test(worker, answers_a_batch_with_no_jobs_with_an_empty_response) {
  child_t c;
  child_start(&c, NULL, NULL);
  send_request(&c, NULL, 0);
  tally_batch_reader_t br;
  read_response(&c, &br, 0);
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_next_result(&br, &res), 0, "%s", br.err);
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

Test(worker, scores_a_large_batch_in_one_frame) {
  enum { N = 2000 };
  static char ids[N][16];
  static req_job_t jobs[N];
  for (int i = 0; i < N; i++) {
    snprintf(ids[i], sizeof(ids[i]), "%d-0", i);
    jobs[i] = (req_job_t){ids[i], JOB_SUM};
  }
  child_t c;
  child_start(&c, NULL, NULL);
  send_request(&c, jobs, N);
  tally_batch_reader_t br;
  read_response(&c, &br, N);
  for (int i = 0; i < N; i++) {
    cJSON *r = next_result(&br, ids[i], TALLY_BATCH_SCORED);
    cr_assert_str_eq(str(r, "id"), ids[i]);
    cr_assert_float_eq(num(r, "score"), 23.1, 1e-9);
    cJSON_Delete(r);
  }
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
}

Test(worker, exits_0_when_stdin_ends_before_any_frame) {
  child_t c;
  child_start(&c, NULL, NULL);
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  const char *p;
  size_t len;
  cr_assert_eq(child_read_frame(&c, &p, &len, TIMEOUT_MS), 0);
  child_stop(&c);
}

/* Sends bytes that break the protocol, and checks that the worker exits
 * with status 1 and a message holding want. */
static void expect_protocol_error(const char *bytes, size_t len,
                                  const char *want) {
  child_t c;
  child_start(&c, NULL, NULL);
  child_send(&c, bytes, len);
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 1);
  char *err = child_stderr(&c);
  cr_assert(strstr(err, want) != NULL, "stderr: %s", err);
  free(err);
  const char *p;
  size_t n;
  cr_assert_eq(child_read_frame(&c, &p, &n, TIMEOUT_MS), 0);
  child_stop(&c);
}

Test(worker, exits_1_with_a_message_on_an_oversized_frame) {
  expect_protocol_error("\xff\xff\xff\xff", 4, "over the limit");
}

Test(worker, exits_1_with_a_message_when_stdin_ends_inside_a_frame) {
  expect_protocol_error("\0\0\0\10\0\0", 6, "ended inside a frame");
}

Test(worker, exits_1_with_a_message_on_a_malformed_batch) {
  /* A batch of one job whose id runs past the end of the frame. */
  expect_protocol_error("\0\0\0\x0d"
                        "\0\0\0\1"
                        "\0\0\0\x7f"
                        "abcde",
                        17, "id runs past");
}

Test(worker, exits_1_when_a_bad_batch_follows_a_good_one) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t job = {"1-0", JOB_SUM};
  send_request(&c, &job, 1);
  child_send(&c, "\0\0\0\4\0\0\0\1", 8);
  tally_batch_reader_t br;
  read_response(&c, &br, 1);
  cJSON_Delete(next_result(&br, "1-0", TALLY_BATCH_SCORED));
  cr_assert_eq(child_exit_code(&c), 1);
  child_stop(&c);
}

/* Runs the worker with args and checks it exits with 2 and a message
 * holding want, without reading stdin. */
static void expect_config_error(const char *const *args, const char *const *env,
                                const char *want) {
  child_t c;
  child_start(&c, args, env);
  cr_assert_eq(child_exit_code(&c), 2);
  char *err = child_stderr(&c);
  cr_assert(strstr(err, want) != NULL, "stderr: %s", err);
  free(err);
  child_stop(&c);
}

Test(worker, exits_2_for_an_invalid_task_folder) {
  char dir[] = "/tmp/tally-test-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof(path), "%s/bad.json", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("{\"name\": 7}", f);
  fclose(f);
  const char *const args[] = {"--tasks", dir, NULL};
  expect_config_error(args, NULL, "bad.json");
  unlink(path);
  rmdir(dir);
}

Test(worker, exits_2_for_a_missing_task_folder_or_bad_usage) {
  const char *const missing[] = {"--tasks", "/nonexistent/tally", NULL};
  expect_config_error(missing, NULL, "/nonexistent/tally");
  const char *const none[] = {NULL};
  expect_config_error(none, NULL, "usage");
  const char *const extra[] = {"--tasks", TASKS, "--frobnicate", NULL};
  expect_config_error(extra, NULL, "usage");
}

Test(worker, exits_2_for_an_unknown_fault_hook) {
  const char *const env[] = {"TALLY_WORKER_FAULT=explode", NULL};
  expect_config_error(NULL, env, "TALLY_WORKER_FAULT");
  const char *const env2[] = {"TALLY_WORKER_FAULT=crash",
                              "TALLY_WORKER_FAULT_AFTER=two", NULL};
  expect_config_error(NULL, env2, "TALLY_WORKER_FAULT_AFTER");
}

/* Sends job alone and checks that the worker aborts on it without
 * answering; then stops it. */
static void expect_crash_on(child_t *c, const req_job_t *job) {
  send_request(c, job, 1);
  const char *p;
  size_t len;
  cr_assert_eq(child_read_frame(c, &p, &len, TIMEOUT_MS), 0);
  int status = child_wait(c);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x",
            status);
  child_stop(c);
}

/* Sends job alone and checks that the worker answers with bytes no frame
 * reader accepts; then stops it. */
static void expect_garbage_on(child_t *c, const req_job_t *job) {
  send_request(c, job, 1);
  const char *p;
  size_t len;
  cr_assert_eq(child_read_frame(c, &p, &len, TIMEOUT_MS), TALLY_E2BIG);
  child_stop(c);
}

Test(worker, crash_hook_aborts_after_the_given_number_of_jobs) {
  const char *const env[] = {"TALLY_WORKER_FAULT=crash",
                             "TALLY_WORKER_FAULT_AFTER=2", NULL};
  child_t c;
  child_start(&c, NULL, env);
  const req_job_t jobs[] = {
      {"1-0", JOB_SUM}, {"2-0", JOB_SUM}, {"3-0", JOB_SUM}};
  send_request(&c, jobs, 2);
  tally_batch_reader_t br;
  read_response(&c, &br, 2);
  expect_crash_on(&c, jobs + 2);
}

Test(worker, hang_hook_stops_answering_but_keeps_running) {
  const char *const env[] = {"TALLY_WORKER_FAULT=hang", NULL};
  child_t c;
  child_start(&c, NULL, env);
  const req_job_t job = {"1-0", JOB_SUM};
  send_request(&c, &job, 1);
  const char *p;
  size_t len;
  cr_assert_eq(child_read_frame(&c, &p, &len, 300), -1);
  cr_assert_eq(waitpid(c.pid, NULL, WNOHANG), 0);
  child_stop(&c);
}

Test(worker, garbage_hook_breaks_the_response_stream) {
  const char *const env[] = {"TALLY_WORKER_FAULT=garbage",
                             "TALLY_WORKER_FAULT_AFTER=1", NULL};
  child_t c;
  child_start(&c, NULL, env);
  const req_job_t jobs[] = {{"1-0", JOB_SUM}, {"2-0", JOB_SUM}};
  send_request(&c, jobs, 1);
  tally_batch_reader_t br;
  read_response(&c, &br, 1);
  expect_garbage_on(&c, jobs + 1);
}

Test(worker, match_hook_crashes_on_each_job_holding_the_substring) {
  const char *const env[] = {"TALLY_WORKER_FAULT=crash",
                             "TALLY_WORKER_FAULT_AFTER=0",
                             "TALLY_WORKER_FAULT_MATCH=poison-marker", NULL};
  const char poison[] = "{\"submission\": \"s-9\", \"task\": \"sum\", "
                        "\"x\": \"poison-marker\", \"evaluations\": {}}";
  /* Jobs without the substring are scored, whatever the count says. */
  child_t c;
  child_start(&c, NULL, env);
  const req_job_t jobs[] = {
      {"1-0", JOB_SUM}, {"2-0", JOB_APLUSB}, {"3-0", poison}};
  send_request(&c, jobs, 2);
  tally_batch_reader_t br;
  read_response(&c, &br, 2);
  cJSON_Delete(next_result(&br, "1-0", TALLY_BATCH_SCORED));
  cJSON_Delete(next_result(&br, "2-0", TALLY_BATCH_SCORED));
  expect_crash_on(&c, jobs + 2);

  /* A fresh worker crashes on it again, even as its first job. */
  child_start(&c, NULL, env);
  expect_crash_on(&c, jobs + 2);
}

Test(worker, match_hook_writes_garbage_before_a_matching_job_only) {
  const char *const env[] = {"TALLY_WORKER_FAULT=garbage",
                             "TALLY_WORKER_FAULT_MATCH=\"1\": 0.2", NULL};
  child_t c;
  child_start(&c, NULL, env);
  const req_job_t jobs[] = {{"1-0", JOB_APLUSB}, {"2-0", JOB_SUM}};
  send_request(&c, jobs, 1);
  tally_batch_reader_t br;
  read_response(&c, &br, 1);
  cJSON_Delete(next_result(&br, "1-0", TALLY_BATCH_SCORED));
  expect_garbage_on(&c, jobs + 1);
}

/* The queue a job was read from: a job whose contest belongs to another
 * queue is a job error naming both; --default-queue says which queue
 * holds the contests no config places. */
Test(worker, refuses_a_job_read_from_another_queue_than_its_contests) {
  child_t c;
  child_start(&c, NULL, NULL);
  const req_job_t jobs[] = {
      {"1-0", JOB_SUM}, {"1-1", JOB_SUM}, {"1-2", JOB_SUM}};
  const char *const queues[] = {"q1", "main", ""};
  req_queues = queues;
  send_request(&c, jobs, 3);
  tally_batch_reader_t br;
  read_response(&c, &br, 3);
  cJSON *r = next_result(&br, "1-0", TALLY_BATCH_JOB_ERROR);
  cr_expect_str_eq(str(r, "error"),
                   "contest: contest \"default\" belongs to queue \"main\", "
                   "but the job came from queue \"q1\"");
  cJSON_Delete(r);
  cJSON_Delete(next_result(&br, "1-1", TALLY_BATCH_SCORED));
  cJSON_Delete(next_result(&br, "1-2", TALLY_BATCH_SCORED));
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);

  const char *const args[] = {"--tasks", TASKS, "--default-queue", "q1", NULL};
  child_start(&c, args, NULL);
  send_request(&c, jobs, 2);
  read_response(&c, &br, 2);
  cJSON_Delete(next_result(&br, "1-0", TALLY_BATCH_SCORED));
  r = next_result(&br, "1-1", TALLY_BATCH_JOB_ERROR);
  cr_expect(strstr(str(r, "error"), "belongs to queue \"q1\"") != NULL, "%s",
            str(r, "error"));
  cJSON_Delete(r);
  child_close_stdin(&c);
  cr_assert_eq(child_exit_code(&c), 0);
  child_stop(&c);
  req_queues = NULL;
}
