/* The worker pool against real tally-worker processes: batches, spreading,
 * crashes, hangs, garbage, failed starts, reloads and closing. */
#include "daemon/pool.h"
#include "support.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKER TALLY_BINARY_DIR "/tally-worker"
#define TASKS TALLY_SOURCE_DIR "/examples/tasks"
#define JOBS TALLY_SOURCE_DIR "/examples/jobs.jsonl"
#define BAD_JOBS TALLY_SOURCE_DIR "/examples/bad-jobs.jsonl"

/* Generous, for sanitizer builds on a loaded machine; a passing test
 * never waits this long. */
#define TIMEOUT_MS 30000

/* One job and what came back for it. */
typedef struct rec_s {
  tally_pool_job_t job;
  char id[32];
  int handed;   /* times handed back for good */
  int failures; /* FAILED outcomes that were retried */
  tally_pool_status_t status;
  char *body;        /* the last body, NUL-terminated, malloc'ed */
  char failure[512]; /* the last FAILED body that was retried */
} rec_t;

/* Everything one test uses; each test runs in its own process. */
static struct {
  uv_loop_t loop;
  uv_timer_t watchdog;
  bool expired;
  tally_log_t log;
  FILE *logf;
  tally_pool_t pool;
  bool started, closed;
  rec_t *recs;
  size_t n;
  size_t done;      /* jobs handed back for good */
  size_t calls;     /* done_cb calls */
  size_t sizes[64]; /* the size of each of the first done_cb calls */
  unsigned retries; /* retry a FAILED job up to this many times */
  bool alone_on_retry;
  char *lines[16]; /* the example jobs */
  size_t nlines;
  char dir[64]; /* for fake workers, or "" */
  char script[128];
} t;

static void on_watchdog(uv_timer_t *h) {
  (void)h;
  t.expired = true;
}

static void setup(void) {
  /* A write to a worker that has died must fail, not kill the test. */
  signal(SIGPIPE, SIG_IGN);
  memset(&t, 0, sizeof(t));
  cr_assert_eq(uv_loop_init(&t.loop), 0);
  uv_timer_init(&t.loop, &t.watchdog);
  t.logf = tmpfile();
  cr_assert_not_null(t.logf);
  tally_log_init(&t.log, TALLY_LOG_TEXT);
  t.log.out = t.logf;
  t.log.level = TALLY_LOG_DEBUG;
  unsetenv("TALLY_WORKER_FAULT");
  unsetenv("TALLY_WORKER_FAULT_AFTER");
  unsetenv("TALLY_WORKER_FAULT_MATCH");
}

static void on_closed(tally_pool_t *p) {
  (void)p;
  t.closed = true;
}

static bool is_closed(void) {
  return t.closed;
}

/* Runs the loop until cond holds or ms pass. Returns cond(). */
static bool run_until(bool (*cond)(void), uint64_t ms) {
  t.expired = false;
  uv_timer_start(&t.watchdog, on_watchdog, ms, 0);
  while (!cond() && !t.expired)
    uv_run(&t.loop, UV_RUN_ONCE);
  uv_timer_stop(&t.watchdog);
  return cond();
}

static bool four_spawned(void) {
  return t.pool.spawned >= 4;
}

static bool never(void) {
  return false;
}

/* Closes the pool if the test left it open, and checks that the loop
 * then closes cleanly: no handle of the pool is left behind. */
static void teardown(void) {
  if (t.started && !t.closed) {
    tally_pool_close(&t.pool, 1000, on_closed);
    run_until(is_closed, TIMEOUT_MS);
  }
  uv_close((uv_handle_t *)&t.watchdog, NULL);
  uv_run(&t.loop, UV_RUN_DEFAULT);
  cr_expect_eq(uv_loop_close(&t.loop), 0, "a handle is left open");
  for (size_t i = 0; i < t.n; i++) {
    free((char *)t.recs[i].job.text);
    free(t.recs[i].body);
  }
  free(t.recs);
  for (size_t i = 0; i < t.nlines; i++)
    free(t.lines[i]);
  fclose(t.logf);
  if (t.dir[0] != '\0') {
    unlink(t.script);
    rmdir(t.dir);
  }
}

TestSuite(pool, .init = setup, .fini = teardown, .timeout = 120);

/* The log so far, malloc'ed; the caller frees it. */
static char *log_text(void) {
  fflush(t.logf);
  long len = ftell(t.logf);
  char *text = malloc((size_t)len + 1);
  rewind(t.logf);
  size_t n = fread(text, 1, (size_t)len, t.logf);
  text[n] = '\0';
  fseek(t.logf, 0, SEEK_END);
  return text;
}

static bool log_has(const char *s) {
  char *text = log_text();
  bool found = strstr(text, s) != NULL;
  free(text);
  return found;
}

/* The pids that the log says were started, in order; returns the count. */
static size_t logged_pids(pid_t *pids, size_t max) {
  char *text = log_text();
  size_t n = 0;
  for (const char *s = text; n < max && (s = strstr(s, "worker pid "));) {
    s += strlen("worker pid ");
    char *end;
    long pid = strtol(s, &end, 10);
    if (strncmp(end, " started", 8) == 0)
      pids[n++] = (pid_t)pid;
  }
  free(text);
  return n;
}

/* Whether pid is a process whose parent is this one. */
static bool is_our_child(pid_t pid) {
  char stat[512];
  const char *s = ts_proc_stat(pid, stat, sizeof(stat));
  int ppid = 0;
  return s != NULL && sscanf(s, "%*c %d", &ppid) == 1 && ppid == getpid();
}

/* Checks that every process the pool started is gone, reaped: no child
 * is left, running or zombie, and no logged pid is there still (or it is
 * some other process's now). */
static void expect_all_reaped(void) {
  pid_t pids[64];
  size_t n = logged_pids(pids, 64);
  cr_expect_gt(n, 0, "no worker was logged as started");
  for (size_t i = 0; i < n; i++)
    cr_expect((kill(pids[i], 0) == -1 && errno == ESRCH) ||
                  !is_our_child(pids[i]),
              "worker pid %d is still there", (int)pids[i]);
  cr_expect(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD,
            "a child process is left");
}

/* Writes a shell script that stands in for the worker, and returns its
 * path. */
static const char *fake_worker(const char *text) {
  strcpy(t.dir, "/tmp/tally-pool-XXXXXX");
  cr_assert_not_null(mkdtemp(t.dir));
  snprintf(t.script, sizeof(t.script), "%s/worker", t.dir);
  FILE *f = fopen(t.script, "w");
  cr_assert_not_null(f);
  fprintf(f, "#!/bin/sh\n%s", text);
  fclose(f);
  cr_assert_eq(chmod(t.script, 0755), 0);
  return t.script;
}

static void read_lines(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  char buf[4096];
  while (t.nlines < 16 && fgets(buf, sizeof(buf), f) != NULL) {
    buf[strcspn(buf, "\n")] = '\0';
    if (buf[0] != '\0')
      t.lines[t.nlines++] = strdup(buf);
  }
  fclose(f);
}

/* Makes n jobs with ids "1-0", "2-0", ..., cycling through the lines of
 * path. */
static void make_jobs(size_t n, const char *path) {
  read_lines(path);
  t.recs = calloc(n, sizeof(rec_t));
  t.n = n;
  for (size_t i = 0; i < n; i++) {
    rec_t *r = &t.recs[i];
    snprintf(r->id, sizeof(r->id), "%zu-0", i + 1);
    r->job.id = r->id;
    r->job.id_len = strlen(r->id);
    r->job.deliveries = 1;
    r->job.text = strdup(t.lines[i % t.nlines]);
    r->job.len = strlen(r->job.text);
    r->job.data = r;
  }
}

/* Makes n jobs with ids "1-0", "2-0", ... from the given texts. */
static void make_jobs_of(const char *const *texts, size_t n) {
  t.recs = calloc(n, sizeof(rec_t));
  t.n = n;
  for (size_t i = 0; i < n; i++) {
    rec_t *r = &t.recs[i];
    snprintf(r->id, sizeof(r->id), "%zu-0", i + 1);
    r->job.id = r->id;
    r->job.id_len = strlen(r->id);
    r->job.deliveries = 1;
    r->job.text = strdup(texts[i]);
    r->job.len = strlen(r->job.text);
    r->job.data = r;
  }
}

static void submit_all(void) {
  for (size_t i = 0; i < t.n; i++)
    tally_pool_submit(&t.pool, &t.recs[i].job);
}

static bool all_done(void) {
  return t.done == t.n;
}

static bool some_done(void) {
  return t.done > 0;
}

static bool twenty_done(void) {
  return t.done >= 20;
}

static void on_done(tally_pool_t *p, tally_pool_outcome_t *outcomes, size_t n) {
  cr_assert_eq(p, &t.pool);
  if (t.calls < 64)
    t.sizes[t.calls] = n;
  t.calls++;
  for (size_t i = 0; i < n; i++) {
    rec_t *r = outcomes[i].job->data;
    int len = outcomes[i].len < 511 ? (int)outcomes[i].len : 511;
    if (outcomes[i].status == TALLY_POOL_FAILED &&
        r->job.deliveries <= t.retries) {
      /* A retry, from inside done_cb. */
      snprintf(r->failure, sizeof(r->failure), "%.*s", len, outcomes[i].body);
      r->failures++;
      r->job.deliveries++;
      r->job.alone = t.alone_on_retry;
      tally_pool_submit(p, &r->job);
      continue;
    }
    r->handed++;
    r->status = outcomes[i].status;
    free(r->body);
    r->body = strndup(outcomes[i].body, outcomes[i].len);
    t.done++;
  }
}

static void start_with(const tally_pool_options_t *extra) {
  tally_pool_options_t o = *extra;
  o.worker = o.worker ? o.worker : WORKER;
  o.tasks = o.tasks ? o.tasks : TASKS;
  o.log = &t.log;
  o.done_cb = on_done;
  char err[512];
  int rc = tally_pool_init(&t.loop, &t.pool, &o, err, sizeof(err));
  cr_assert_eq(rc, 0, "tally_pool_init: %s", err);
  t.started = true;
}

static void start(unsigned workers, unsigned batch, uint64_t timeout_ms) {
  start_with(&(tally_pool_options_t){
      .workers = workers, .batch = batch, .job_timeout_ms = timeout_ms});
}

static void close_pool(uint64_t grace_ms) {
  tally_pool_close(&t.pool, grace_ms, on_closed);
  cr_assert(run_until(is_closed, TIMEOUT_MS), "the pool did not close");
}

static const char *status_name(tally_pool_status_t s) {
  return s == TALLY_POOL_SCORED      ? "scored"
         : s == TALLY_POOL_JOB_ERROR ? "job error"
         : s == TALLY_POOL_TOKEN     ? "token"
                                     : "failed";
}

static void expect_status(size_t i, tally_pool_status_t s) {
  const rec_t *r = &t.recs[i];
  cr_assert_eq(r->handed, 1, "job %s was handed back %d times", r->id,
               r->handed);
  cr_expect_eq(r->status, s, "job %s: %s, not %s: %s", r->id,
               status_name(r->status), status_name(s), r->body);
}

static void expect_scored(size_t i) {
  char want[64];
  expect_status(i, TALLY_POOL_SCORED);
  snprintf(want, sizeof(want), "\"id\":\"%s\"", t.recs[i].id);
  cr_expect(strstr(t.recs[i].body, want) != NULL, "job %s: %s", t.recs[i].id,
            t.recs[i].body);
}

static void expect_failed(size_t i, const char *cause) {
  expect_status(i, TALLY_POOL_FAILED);
  cr_expect(strstr(t.recs[i].body, cause) != NULL,
            "job %s failed with \"%s\", which does not say \"%s\"",
            t.recs[i].id, t.recs[i].body, cause);
}

static void expect_drained(void) {
  cr_expect_eq(t.pool.queued, 0);
  cr_expect_eq(t.pool.inflight, 0);
}

Test(pool, scores_many_jobs_across_two_workers_each_handed_back_once) {
  start(2, 16, 10000);
  make_jobs(500, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS), "%zu of %zu jobs came back",
            t.done, t.n);
  for (size_t i = 0; i < t.n; i++)
    expect_scored(i);
  expect_drained();
  cr_expect_eq(t.pool.spawned, 2);
  cr_expect_eq(t.pool.replaced, 0);
  for (size_t i = 0; i < t.calls && i < 64; i++)
    cr_expect_leq(t.sizes[i], 16, "a batch of %zu jobs", t.sizes[i]);
  cr_expect_geq(t.calls, 500 / 16);
  cr_expect_not(log_has(" error "), "an error was logged");
}

Test(pool, splits_a_burst_evenly_between_idle_workers) {
  start(4, 16, 10000);
  make_jobs(10, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  /* ceil(10 / 4) = 3, then ceil(7 / 3) = 3, ceil(4 / 2) = 2, and 2. */
  size_t count[17] = {0};
  for (size_t i = 0; i < t.calls; i++)
    count[t.sizes[i]]++;
  cr_expect_eq(t.calls, 4);
  cr_expect_eq(count[3], 2);
  cr_expect_eq(count[2], 2);
  for (size_t i = 0; i < t.n; i++)
    expect_scored(i);
}

Test(pool, keeps_batches_within_the_byte_budget_and_alone_jobs_alone) {
  make_jobs(7, JOBS);
  /* Every job the same text, so that two fit in the budget. */
  size_t len = t.recs[0].job.len;
  for (size_t i = 1; i < t.n; i++) {
    free((char *)t.recs[i].job.text);
    t.recs[i].job.text = strdup(t.recs[0].job.text);
    t.recs[i].job.len = len;
  }
  t.recs[2].job.alone = true;
  start_with(&(tally_pool_options_t){.workers = 1,
                                     .batch = 16,
                                     .batch_bytes = 2 * len,
                                     .job_timeout_ms = 10000});
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  /* [1 2] [3 alone] [4 5] [6 7] */
  cr_expect_eq(t.calls, 4);
  cr_expect_eq(t.sizes[0], 2);
  cr_expect_eq(t.sizes[1], 1);
  cr_expect_eq(t.sizes[2], 2);
  cr_expect_eq(t.sizes[3], 2);
  for (size_t i = 0; i < t.n; i++)
    expect_scored(i);
}

Test(pool, sends_a_job_larger_than_the_byte_budget_alone) {
  make_jobs(3, JOBS);
  start_with(&(tally_pool_options_t){
      .workers = 1, .batch = 16, .batch_bytes = 10, .job_timeout_ms = 10000});
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  cr_expect_eq(t.calls, 3);
  for (size_t i = 0; i < t.n; i++)
    expect_scored(i);
}

Test(pool, hands_back_a_job_error_as_a_job_error) {
  start(1, 4, 10000);
  make_jobs(2, BAD_JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  for (size_t i = 0; i < t.n; i++) {
    expect_status(i, TALLY_POOL_JOB_ERROR);
    cr_expect(strstr(t.recs[i].body, "\"error\"") != NULL, "%s",
              t.recs[i].body);
  }
  cr_expect_eq(t.pool.replaced, 0);
}

Test(pool, hands_back_a_token_job_as_a_token_with_its_body) {
  start(1, 4, 10000);
  const char *jobs[] = {
      "{\"type\":\"token\",\"submission\":\"s-9\",\"participant\":"
      "\"alice\"}",
      "{\"type\":\"token\",\"submission\":\"s-10\"}",
  };
  make_jobs_of(jobs, 2);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  expect_status(0, TALLY_POOL_TOKEN);
  cr_expect_str_eq(t.recs[0].body,
                   "{\"submission\":\"s-9\",\"participant\":\"alice\"}");
  expect_status(1, TALLY_POOL_TOKEN);
  cr_expect_str_eq(t.recs[1].body,
                   "{\"submission\":\"s-10\",\"participant\":null}");
  cr_expect_eq(t.pool.replaced, 0);
}

Test(pool, maps_the_token_status_of_a_response_to_a_token_outcome) {
  /* One token result for job "1-0", whatever the request: status 2, body
   * {"submission":"x"} (18 bytes), 34 bytes of payload. */
  const char *worker = fake_worker(
      "head -c 4 >/dev/null\n"
      "printf '\\000\\000\\000\\042\\000\\000\\000\\001\\000\\000\\000\\0031-0"
      "\\002\\000\\000\\000\\022{\"submission\":\"x\"}'\n"
      "exec sleep 30\n");
  start_with(&(tally_pool_options_t){
      .worker = worker, .workers = 1, .batch = 1, .job_timeout_ms = 10000});
  make_jobs(1, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  expect_status(0, TALLY_POOL_TOKEN);
  cr_expect_str_eq(t.recs[0].body, "{\"submission\":\"x\"}");
  cr_expect_eq(t.pool.replaced, 0);
  close_pool(200);
  expect_all_reaped();
}

Test(pool, refuses_an_invalid_job_id_at_once) {
  start(1, 4, 10000);
  make_jobs(1, JOBS);
  t.recs[0].job.id_len = 0;
  submit_all();
  cr_expect_eq(t.done, 1);
  expect_status(0, TALLY_POOL_JOB_ERROR);
  cr_expect_eq(t.pool.queued, 0);
}

Test(pool, fails_the_batch_of_a_crashed_worker_and_replaces_it) {
  setenv("TALLY_WORKER_FAULT", "crash", 1);
  setenv("TALLY_WORKER_FAULT_AFTER", "5", 1);
  start(1, 2, 10000);
  unsetenv("TALLY_WORKER_FAULT");
  unsetenv("TALLY_WORKER_FAULT_AFTER");
  make_jobs(8, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  /* The first worker answers [1 2] and [3 4], scores job 5 of [5 6] and
   * aborts before job 6; its replacement starts without the fault. */
  for (size_t i = 0; i < 4; i++)
    expect_scored(i);
  expect_failed(4, "was killed by signal 6");
  expect_failed(5, "was killed by signal 6");
  cr_expect(strstr(t.recs[4].body, "worker pid ") == t.recs[4].body);
  expect_scored(6);
  expect_scored(7);
  expect_drained();
  cr_expect_eq(t.pool.spawned, 2);
  cr_expect_eq(t.pool.replaced, 1);
  cr_expect(log_has("worker.exit: worker pid "));
}

Test(pool, retries_from_done_cb_after_crashes_until_every_job_is_scored) {
  setenv("TALLY_WORKER_FAULT", "crash", 1);
  setenv("TALLY_WORKER_FAULT_AFTER", "3", 1);
  t.retries = 20;
  t.alone_on_retry = true;
  start(2, 2, 10000);
  make_jobs(20, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS), "%zu of %zu jobs came back",
            t.done, t.n);
  int failures = 0;
  for (size_t i = 0; i < t.n; i++) {
    expect_scored(i);
    failures += t.recs[i].failures;
    if (t.recs[i].failures > 0)
      cr_expect(strstr(t.recs[i].failure, "was killed by signal 6") != NULL,
                "%s", t.recs[i].failure);
  }
  cr_expect_gt(failures, 0);
  cr_expect_geq(t.pool.replaced, 1);
  cr_expect_eq(t.pool.spawned, 2 + t.pool.replaced);
  expect_drained();
}

Test(pool, kills_a_worker_that_hangs_and_names_the_timeout) {
  setenv("TALLY_WORKER_FAULT", "hang", 1);
  setenv("TALLY_WORKER_FAULT_AFTER", "2", 1);
  /* Long enough for a worker to start under a sanitizer on a busy
   * machine: the deadline of the first batch covers the start. */
  start(1, 1, 1500);
  make_jobs(4, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  /* Every worker scores two jobs, then hangs on the third. */
  expect_scored(0);
  expect_scored(1);
  expect_failed(2, "timed out after 1500 ms on a batch of 1 job");
  expect_scored(3);
  cr_expect_eq(t.pool.replaced, 1);
  cr_expect(log_has("worker.timeout"));
}

Test(pool, gives_a_batch_of_n_jobs_n_times_the_job_timeout) {
  setenv("TALLY_WORKER_FAULT", "hang", 1);
  start(1, 3, 100);
  make_jobs(3, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  for (size_t i = 0; i < 3; i++)
    expect_failed(i, "timed out after 300 ms on a batch of 3 jobs");
}

Test(pool, kills_a_worker_that_breaks_the_framing_and_retries_elsewhere) {
  setenv("TALLY_WORKER_FAULT", "garbage", 1);
  setenv("TALLY_WORKER_FAULT_AFTER", "2", 1);
  t.retries = 20;
  start(1, 1, 10000);
  make_jobs(10, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  int failures = 0;
  for (size_t i = 0; i < t.n; i++) {
    expect_scored(i);
    failures += t.recs[i].failures;
    if (t.recs[i].failures > 0)
      cr_expect(strstr(t.recs[i].failure, "broke the framing: ") != NULL, "%s",
                t.recs[i].failure);
  }
  /* Each worker scores two jobs, then garbles the third answer. */
  cr_expect_geq(failures, 4);
  cr_expect_eq(t.pool.replaced, (uint64_t)failures);
  cr_expect(log_has("worker.framing"));
}

Test(pool, fails_to_start_with_a_worker_that_does_not_exist) {
  tally_pool_options_t o = {.worker = TALLY_BINARY_DIR "/no-such-worker",
                            .tasks = TASKS,
                            .workers = 2,
                            .batch = 4,
                            .log = &t.log,
                            .done_cb = on_done};
  char err[512] = "";
  int rc = tally_pool_init(&t.loop, &t.pool, &o, err, sizeof(err));
  cr_expect_lt(rc, 0);
  cr_expect(strstr(err, "no-such-worker") != NULL, "%s", err);
  /* The failed spawn's handles close on the next run; teardown checks. */
}

Test(pool, refuses_zero_workers) {
  tally_pool_options_t o = {
      .worker = WORKER, .tasks = TASKS, .workers = 0, .done_cb = on_done};
  char err[512] = "";
  cr_expect_lt(tally_pool_init(&t.loop, &t.pool, &o, err, sizeof(err)), 0);
  cr_expect_neq(err[0], '\0');
}

Test(pool, respawns_workers_that_cannot_load_their_configs_with_backoff) {
  start_with(&(tally_pool_options_t){
      .workers = 2, .batch = 4, .tasks = TALLY_SOURCE_DIR "/no-such-dir"});
  run_until(never, 1100);
  /* Spawns at 0, about 200 and about 1000 ms: not a spin. */
  cr_expect_leq(t.pool.spawned, 8, "spawned %" PRIu64, t.pool.spawned);
  cr_expect(run_until(four_spawned, TIMEOUT_MS), "no respawn");
  cr_expect(log_has("error worker.exit: worker pid "));
  cr_expect(log_has("exited with status 2"));
  cr_expect(log_has("warn worker.stderr: worker pid "));
  close_pool(1000);
  expect_all_reaped();
}

Test(pool, reload_replaces_idle_workers_at_once_and_busy_ones_after) {
  start(2, 4, 10000);
  make_jobs(100, JOBS);
  for (size_t i = 0; i < 20; i++)
    tally_pool_submit(&t.pool, &t.recs[i].job);
  cr_assert(run_until(twenty_done, TIMEOUT_MS));
  cr_expect_eq(t.pool.spawned, 2);
  /* Idle: both go now. */
  tally_pool_reload(&t.pool, NULL);
  cr_expect_eq(t.pool.spawned, 4);
  /* Busy: the next two go once their batches are answered. */
  for (size_t i = 20; i < t.n; i++)
    tally_pool_submit(&t.pool, &t.recs[i].job);
  uv_run(&t.loop, UV_RUN_NOWAIT);
  cr_assert_gt(t.pool.inflight, 0);
  tally_pool_reload(&t.pool, NULL);
  cr_assert(run_until(all_done, TIMEOUT_MS));
  for (size_t i = 0; i < t.n; i++)
    expect_scored(i);
  cr_expect_eq(t.pool.spawned, 6);
  cr_expect_eq(t.pool.replaced, 0);
  cr_expect_not(log_has(" error "), "an error was logged");
  cr_expect_not(log_has("warn worker.exit"), "an exit was logged");
  close_pool(1000);
  expect_all_reaped();
}

Test(pool, close_hands_back_queued_jobs_as_released_and_reaps_every_worker) {
  start(1, 1, 10000);
  make_jobs(51, JOBS);
  for (size_t i = 0; i < 50; i++)
    tally_pool_submit(&t.pool, &t.recs[i].job);
  cr_assert(run_until(some_done, TIMEOUT_MS));
  tally_pool_close(&t.pool, 5000, on_closed);
  cr_expect_eq(t.pool.queued, 0);
  /* While the pool closes, a new job comes back at once. */
  size_t before = t.done;
  tally_pool_submit(&t.pool, &t.recs[50].job);
  cr_expect_eq(t.done, before + 1);
  expect_failed(50, "released");
  cr_assert(run_until(is_closed, TIMEOUT_MS), "the pool did not close");
  cr_assert_eq(t.done, t.n);
  /* The batch in flight at the close is answered; the rest is released. */
  size_t scored = 0;
  while (scored < t.n && t.recs[scored].status == TALLY_POOL_SCORED)
    expect_scored(scored++);
  cr_expect_geq(scored, 2);
  cr_expect_leq(scored, 3);
  for (size_t i = scored; i < t.n; i++)
    expect_failed(i, "released");
  cr_expect_eq(t.recs[scored].body[strlen("released")], '\0');
  expect_drained();
  expect_all_reaped();
  cr_expect_not(log_has(" error "), "an error was logged");
  cr_expect_not(log_has("warn worker.exit"), "an exit was logged");
}

Test(pool, close_kills_a_worker_still_busy_after_the_grace_period) {
  setenv("TALLY_WORKER_FAULT", "hang", 1);
  start(2, 1, 60000);
  make_jobs(2, JOBS);
  submit_all();
  uv_run(&t.loop, UV_RUN_NOWAIT);
  cr_assert_eq(t.pool.inflight, 2);
  close_pool(200);
  for (size_t i = 0; i < t.n; i++)
    expect_failed(i, "was still busy 200 ms after the pool began to close");
  expect_drained();
  expect_all_reaped();
}

Test(pool, release_queued_hands_back_only_what_is_not_sent) {
  start(1, 1, 10000);
  make_jobs(6, JOBS);
  for (size_t i = 0; i < 5; i++)
    tally_pool_submit(&t.pool, &t.recs[i].job);
  uv_run(&t.loop, UV_RUN_NOWAIT);
  cr_assert_eq(t.pool.inflight, 1);
  tally_pool_release_queued(&t.pool);
  cr_expect_eq(t.done, 4);
  cr_expect_eq(t.pool.queued, 0);
  /* The pool still takes work. */
  tally_pool_submit(&t.pool, &t.recs[5].job);
  cr_assert(run_until(all_done, TIMEOUT_MS));
  expect_scored(0);
  for (size_t i = 1; i < 5; i++)
    expect_failed(i, "released");
  expect_scored(5);
}

Test(pool, kills_a_worker_that_answers_for_the_wrong_job) {
  /* One result, for job "x-0", whatever the request. */
  const char *worker = fake_worker(
      "head -c 4 >/dev/null\n"
      "printf '\\000\\000\\000\\022\\000\\000\\000\\001\\000\\000\\000\\003x-0"
      "\\000\\000\\000\\000\\002{}'\n"
      "exec sleep 30\n");
  start_with(&(tally_pool_options_t){
      .worker = worker, .workers = 1, .batch = 1, .job_timeout_ms = 10000});
  make_jobs(1, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  expect_failed(0, "broke the framing: result 1 is for job \"x-0\", not "
                   "\"1-0\"");
  cr_expect_eq(t.pool.replaced, 1);
  close_pool(200);
  expect_all_reaped();
}

Test(pool, kills_a_worker_that_closes_its_stdout_but_does_not_exit) {
  const char *worker = fake_worker("exec >&-\nexec sleep 30\n");
  start_with(&(tally_pool_options_t){
      .worker = worker, .workers = 1, .batch = 1, .job_timeout_ms = 60000});
  make_jobs(1, JOBS);
  submit_all();
  cr_assert(run_until(all_done, TIMEOUT_MS));
  expect_failed(0, "closed its stdout but did not exit");
  close_pool(200);
  expect_all_reaped();
}

Test(pool, backs_off_from_workers_that_break_the_framing_at_once) {
  /* An empty result batch, unasked. */
  const char *worker = fake_worker(
      "printf '\\000\\000\\000\\004\\000\\000\\000\\000'\nexec sleep 30\n");
  start_with(&(tally_pool_options_t){.worker = worker, .workers = 1});
  run_until(never, 1100);
  cr_expect_geq(t.pool.spawned, 2);
  cr_expect_leq(t.pool.spawned, 6, "spawned %" PRIu64, t.pool.spawned);
  cr_expect(log_has("a response with no batch outstanding"));
  close_pool(200);
  expect_all_reaped();
}
