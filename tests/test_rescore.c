/* tally rescore and tally ranking, run as child processes against a real
 * redis-server holding submissions stored in the layout of
 * docs/contest.md. */
#include "cli_fixture.h"
#include "keyspace.h"
#include "redis/scripts.h"
#include "redis_fixture.h"
#include "support.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static tr_redis_t srv;
static char dir[64];
static redisContext *rc;

/* Task alpha: subtask 1 (40, its one testcase public) and subtask 2 (60,
 * private). Task beta: Sum, 10 a testcase. */
#define ALPHA(first)                                                           \
  "{\"name\": \"alpha\", \"score_type\": \"GroupMin\",\n"                      \
  " \"score_type_parameters\": [[" first ", \"^a\"], [60, \"^b\"]],\n"         \
  " \"testcases\": {\"a1\": true, \"b1\": false}, \"score_precision\": 2}\n"
#define BETA                                                                   \
  "{\"name\": \"beta\", \"score_type\": \"Sum\", \"score_type_parameters\": "  \
  "10,\n \"testcases\": {\"0\": true, \"1\": true}}\n"

static void setup(void) {
  tc_setup(dir, sizeof(dir), "rescore");
  cr_assert_eq(tr_redis_start(&srv, 0, false), 0);
  rc = redisConnectUnix(srv.sock);
  cr_assert(rc != NULL && rc->err == 0);
  cr_assert_eq(system(NULL) != 0, 1);
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "mkdir -p '%s/tasks'", dir);
  cr_assert_eq(system(cmd), 0);
  tc_write_file("tasks/alpha.json", ALPHA("40"));
  tc_write_file("tasks/beta.json", BETA);
}

static void teardown(void) {
  redisFree(rc);
  tr_redis_stop(&srv);
  tc_teardown();
}

TestSuite(rescore, .init = setup, .fini = teardown, .timeout = 90);

/* Runs a command on the test server; returns the reply (the caller frees
 * it), asserting that it is not an error. */
static redisReply *cmd(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(rc, fmt, ap);
  va_end(ap);
  cr_assert_not_null(r, "%s: no reply", fmt);
  cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", fmt, r->str);
  return r;
}

/* A string reply's text in a malloc'ed string, or NULL for nil. */
static char *cmd_str(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(rc, fmt, ap);
  va_end(ap);
  cr_assert_not_null(r);
  char *s = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
  freeReplyObject(r);
  return s;
}

static long long cmd_int(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(rc, fmt, ap);
  va_end(ap);
  cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
  long long n = r->integer;
  freeReplyObject(r);
  return n;
}

/* Stores a scoring job for submission S as tallyd keeps it: the job in
 * the submission hash, S in the three indexes; no summary yet. */
static void store(const char *S, const char *u, const char *c, const char *t,
                  int ts, const char *evals) {
  char job[512];
  snprintf(job, sizeof(job),
           "{\"submission\": \"%s\", \"participant\": \"%s\", \"contest\": "
           "\"%s\", \"task\": \"%s\", \"timestamp\": %d, \"evaluations\": %s}",
           S, u, c, t, ts, evals);
  freeReplyObject(cmd("HSET tally:submission:%s job %s", S, job));
  freeReplyObject(cmd("SADD tally:index:task:%s %s", t, S));
  freeReplyObject(cmd("SADD tally:index:contest:%s %s", c, S));
  freeReplyObject(cmd("SADD tally:index:participant:%s %s", u, S));
}

/* The contest c1: alice 100, bob 60, Carl 60, dave 40 on alpha (public
 * 40, 0, 0, 40); alice and bob also on beta. eve's job lacks a testcase,
 * so it cannot be scored. */
static void store_contest(void) {
  store("s1", "alice", "c1", "alpha", 1, "{\"a1\": 1, \"b1\": 1}");
  store("s2", "bob", "c1", "alpha", 2, "{\"a1\": 0, \"b1\": 1}");
  store("s3", "Carl", "c1", "alpha", 3, "{\"a1\": 0, \"b1\": 1}");
  store("s4", "dave", "c1", "alpha", 4, "{\"a1\": 1, \"b1\": 0}");
  store("s5", "alice", "c1", "beta", 5, "{\"0\": 1, \"1\": 0.5}");
  store("s6", "bob", "c1", "beta", 6, "{\"0\": 1, \"1\": 1}");
  store("s7", "eve", "c1", "alpha", 7, "{\"a1\": 1}");
  store("x1", "alice", "c2", "alpha", 8, "{\"a1\": 1, \"b1\": 0}");
}

/* Runs tally rescore --tasks FOLDER/tasks --redis URL ARGS... in the test
 * folder. */
static tc_run_t rescore_with(const char *tasks, const char *a1, const char *a2,
                             const char *a3, const char *a4) {
  const char *args[16] = {"rescore", "--tasks", tc_at(tasks), "--redis",
                          srv.url};
  size_t n = 5;
  const char *more[] = {a1, a2, a3, a4};
  for (size_t k = 0; k < 4 && more[k] != NULL; k++)
    args[n++] = more[k];
  args[n] = NULL;
  return tc_run(args, NULL, dir);
}

static tc_run_t rescore(const char *a1, const char *a2, const char *a3,
                        const char *a4) {
  return rescore_with("tasks", a1, a2, a3, a4);
}

static void rescore_ok(const char *a1, const char *a2, const char *a3,
                       const char *a4) {
  tc_run_t r = rescore(a1, a2, a3, a4);
  cr_assert_eq(r.status, 0, "rescore exited %d: %s", r.status, r.err);
  tc_run_free(&r);
}

/* A submission's score field, or NULL when it has none. */
static char *score_of(const char *S) {
  return cmd_str("HGET tally:submission:%s score", S);
}

static void assert_score(const char *S, const char *want) {
  char *got = score_of(S);
  if (want == NULL)
    cr_assert_null(got, "%s: score %s, wanted none", S, got);
  else
    cr_assert(got != NULL && strcmp(got, want) == 0, "%s: score %s, not %s", S,
              got ? got : "none", want);
  free(got);
}

/* Every key and its DUMP, in key order, as one string to compare. */
static char *snapshot(void) {
  redisReply *keys = cmd("KEYS *");
  char **names = calloc(keys->elements + 1, sizeof(char *));
  for (size_t k = 0; k < keys->elements; k++)
    names[k] = keys->element[k]->str;
  for (size_t i = 1; i < keys->elements; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  for (size_t k = 0; k < keys->elements; k++) {
    redisReply *d = cmd("DUMP %s", names[k]);
    size_t need = strlen(names[k]) + 2 * d->len + 4;
    while (len + need >= cap)
      out = realloc(out, cap *= 2);
    len += (size_t)sprintf(out + len, "%s=", names[k]);
    for (size_t b = 0; b < d->len; b++)
      len += (size_t)sprintf(out + len, "%02x", (unsigned char)d->str[b]);
    out[len++] = '\n';
    out[len] = '\0';
    freeReplyObject(d);
  }
  free(names);
  freeReplyObject(keys);
  return out;
}

Test(rescore, scores_the_stored_submissions_of_a_task_the_first_time) {
  store_contest();
  tc_run_t r = rescore("--task", "alpha", NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 6 submissions of task alpha:") != NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "1 failed") != NULL, "%s", r.out);
  cr_assert_null(strchr(r.err, '\r'), "a bar when not on a terminal");
  tc_run_free(&r);
  assert_score("s1", "100");
  assert_score("s2", "60");
  assert_score("s4", "40");
  assert_score("x1", "40");
  assert_score("s5", NULL); /* beta: not selected */
  char *err = cmd_str("HGET tally:submission:s7 error");
  cr_assert(err != NULL && strstr(err, "b1") != NULL, "%s", err);
  free(err);
  char *scored = cmd_str("HGET tally:submission:s7 scored");
  cr_assert_str_eq(scored, "0");
  free(scored);
  char *ts = cmd_str("HGET tally:{c1}:taskscores:alice alpha");
  cr_assert(ts != NULL && strstr(ts, "\"score\":100") != NULL, "%s", ts);
  free(ts);
  ts = cmd_str("HGET tally:{c1}:taskscores:eve alpha");
  cr_assert(ts != NULL && strstr(ts, "\"partial\":true") != NULL, "%s", ts);
  free(ts);
  char *total = cmd_str("ZSCORE tally:{c1}:ranking bob");
  cr_assert_str_eq(total, "60");
  free(total);
  char *version = cmd_str("HGET tally:submission:s1 version");
  cr_assert(version != NULL && strlen(version) == 16, "%s", version);
  free(version);
}

/* Writes task gamma (max_tokened_last): subtask 1 (its testcase public)
 * worth first points, subtask 2 (private) 50. */
static void write_gamma(int first) {
  char gamma[512];
  snprintf(gamma, sizeof(gamma),
           "{\"name\": \"gamma\", \"score_type\": \"GroupMin\", "
           "\"score_type_parameters\": [[%d, \"^a\"], [50, \"^b\"]], "
           "\"testcases\": {\"a1\": true, \"b1\": false}, "
           "\"score_mode\": \"max_tokened_last\"}\n",
           first);
  tc_write_file("tasks/gamma.json", gamma);
}

/* Evaluations for the tasks of the place tests (testcases a1 and b1); the
 * last cannot be scored. */
static const char *const place_evals[5] = {
    "{\"a1\": 1, \"b1\": 1}", "{\"a1\": 0, \"b1\": 1}",
    "{\"a1\": 1, \"b1\": 0}", "{\"a1\": 0.5, \"b1\": 0.25}", "{\"a1\": \"x\"}"};

/* Checks that every place of contest c1 holds the task score and cache
 * the scripts compute from its fields; returns how many places. */
static int check_places(void) {
  char sha[64];
  cr_assert_eq(tr_recompute_load(rc, sha), 0);
  redisReply *keys = cmd("KEYS tally:{c1}:pt:*");
  int n = 0;
  for (size_t k = 0; k < keys->elements; k++) {
    const char *pk = keys->element[k]->str;
    redisReply *flat = cmd("HGETALL %s", pk);
    redisReply *want = tr_recompute(rc, sha, flat);
    cr_assert_not_null(want, "%s: the recompute harness", pk);
    /* tally:{c1}:pt:USER:TASK: the task score is in
     * tally:{c1}:taskscores:USER, field TASK; the cache in ptagg. */
    const char *user = pk + strlen("tally:{c1}:pt:");
    const char *colon = strrchr(user, ':');
    char tk[256];
    snprintf(tk, sizeof(tk), "tally:{c1}:taskscores:%.*s", (int)(colon - user),
             user);
    char *got = cmd_str("HGET %s %s", tk, colon + 1);
    redisReply *cache = cmd("GET tally:{c1}:ptagg:%s", user);
    cr_assert_eq(want->element[0]->type, REDIS_REPLY_STRING, "%s", pk);
    cr_assert(got != NULL && strcmp(got, want->element[0]->str) == 0,
              "%s: task score %s, the scripts compute %s", pk, got,
              want->element[0]->str);
    const redisReply *wc = want->element[1];
    cr_assert_eq(cache->type, wc->type, "%s: cache", pk);
    cr_assert(wc->type != REDIS_REPLY_STRING ||
                  (cache->len == wc->len &&
                   memcmp(cache->str, wc->str, wc->len) == 0),
              "%s: cache", pk);
    free(got);
    freeReplyObject(cache);
    freeReplyObject(want);
    freeReplyObject(flat);
    n++;
  }
  freeReplyObject(keys);
  return n;
}

Test(rescore, the_task_scores_it_computes_are_the_scripts) {
  /* 12 participants with 30 submissions each over alpha (max), beta
   * (max_subtask) and gamma (max_tokened_last), some tokened, some that
   * cannot be scored; rescored, then rescored again after a change of
   * alpha's and gamma's subtasks, when most places are computed by tally
   * (tally_place_whole) and checked by the script. */
  tc_write_file("tasks/beta.json",
                "{\"name\": \"beta\", \"score_type\": \"GroupMin\", "
                "\"score_type_parameters\": [[30, \"^a\"], [70, \"^b\"]], "
                "\"testcases\": {\"a1\": true, \"b1\": true}, "
                "\"score_mode\": \"max_subtask\"}\n");
  write_gamma(50);
  static const char *const task[3] = {"alpha", "beta", "gamma"};
  unsigned seed = 7;
  for (int i = 0; i < 360; i++) {
    char S[16], u[16];
    snprintf(S, sizeof(S), "r%03d", i);
    snprintf(u, sizeof(u), "p%02d", i % 12);
    seed = seed * 1103515245u + 12345u;
    /* Only p00 has jobs that cannot be scored, which keep a rescore
     * from computing a place (they are written every time). */
    store(S, u, "c1", task[(seed >> 8) % 3], i % 50,
          place_evals[(seed >> 12) % (i % 12 == 0 ? 5 : 4)]);
    if ((seed >> 16) % 7 == 0)
      freeReplyObject(cmd("HSET tally:submission:%s tokened 1", S));
  }
  rescore_ok("--task", "alpha", NULL, NULL);
  rescore_ok("--task", "beta", NULL, NULL);
  rescore_ok("--task", "gamma", NULL, NULL);
  cr_assert_eq(check_places(), 36);
  tc_write_file("tasks/alpha.json", ALPHA("30"));
  write_gamma(20);
  freeReplyObject(cmd("CONFIG RESETSTAT"));
  rescore_ok("--task", "alpha", NULL, NULL);
  rescore_ok("--task", "gamma", NULL, NULL);
  /* HLEN runs in a rescore only to check a place tally computed. */
  cr_expect_gt(tr_command_calls(rc, "hlen"), 15);
  cr_assert_eq(check_places(), 36);
}

/* Whether process pid is still running (not gone, not a zombie). */
static bool running(pid_t pid) {
  char stat[512];
  const char *state = ts_proc_stat(pid, stat, sizeof(stat));
  return state != NULL && *state != 'Z';
}

/* Posts one item through the real post script, as tallyd would: the job
 * (its stream entry is delivered to consumer "a"), a kind, a body and,
 * for a result, its summary. */
static void post_item(const char *job, const char *kind, const char *body,
                      const char *S, const char *summary) {
  redisReply *x = cmd("XADD tally:jobs * job %s", job);
  char id[64], rec[96];
  snprintf(id, sizeof(id), "%s", x->str);
  freeReplyObject(x);
  freeReplyObject(
      cmd("XREADGROUP GROUP tallyd a COUNT 100 STREAMS tally:jobs >"));
  snprintf(rec, sizeof(rec), "tally:submission:%s", S);
  tally_post_extra_t e = {summary, summary ? strlen(summary) : 0, "", 0, "", 0};
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, "tally", "a");
  cr_assert_eq(tally_call_post(call, id, 1, kind, body, strlen(body), rec, &e),
               0);
  redisReply *r = redisCommandArgv(rc, call->argc, call->argv, call->argvlen);
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "%s",
            r && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
  freeReplyObject(r);
  free(call);
}

Test(rescore, places_written_under_it_while_it_runs_end_as_the_scripts_compute,
     .timeout = 180) {
  /* 40 participants with 100 submissions each on gamma
   * (max_tokened_last), rescored after a change while new results and
   * tokens are posted to the same places: whatever interleaving came,
   * every place ends with the task score the scripts compute from it. */
  write_gamma(50);
  enum { USERS = 40, EACH = 100 };
  for (int i = 0; i < USERS * EACH; i++) {
    char S[16], u[16];
    snprintf(S, sizeof(S), "g%04d", i);
    snprintf(u, sizeof(u), "p%02d", i % USERS);
    store(S, u, "c1", "gamma", i, place_evals[i * 7 % 4]);
  }
  rescore_ok("--task", "gamma", NULL, NULL);
  freeReplyObject(cmd("XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
  write_gamma(20);
  const char *args[] = {"rescore", "--tasks", tc_at("tasks"), "--redis",
                        srv.url,   "--task",  "gamma",        NULL};
  pid_t pid = tc_start(args, NULL, dir);
  int posts = 0;
  for (unsigned k = 0; running(pid) && k < 100000; k++, posts++) {
    char S[16], u[16], job[512], body[128];
    unsigned user = k * 13 % USERS;
    snprintf(u, sizeof(u), "p%02u", user);
    if (k % 2 == 0) {
      /* A token for a stored submission of the participant. */
      snprintf(S, sizeof(S), "g%04u", (k * 37 % EACH) * USERS + user);
      snprintf(job, sizeof(job),
               "{\"submission\":\"%s\",\"participant\":\"%s\"}", S, u);
      snprintf(body, sizeof(body),
               "{\"submission\":\"%s\",\"participant\":\"%s\"}", S, u);
      post_item(job, "token", body, S, NULL);
    } else {
      /* A new result in the participant's place. */
      char sum[1024];
      snprintf(S, sizeof(S), "n%05u", k);
      snprintf(job, sizeof(job),
               "{\"submission\":\"%s\",\"participant\":\"%s\","
               "\"contest\":\"c1\",\"task\":\"gamma\",\"timestamp\":%u,"
               "\"evaluations\":{\"a1\":1,\"b1\":0}}",
               S, u, 5000 + k);
      snprintf(sum, sizeof(sum),
               "{\"submission\":\"%s\",\"participant\":\"%s\","
               "\"contest\":\"c1\",\"task\":\"gamma\",\"timestamp\":%u,"
               "\"official\":true,\"tokened\":false,\"version\":\"v\","
               "\"score_mode\":\"max_tokened_last\",\"score_precision\":0,"
               "\"score_rounding\":\"subtask\",\"score\":%u,"
               "\"public_score\":%u,\"max_score\":100,"
               "\"max_public_score\":50,\"compiled\":true,"
               "\"subtasks\":null,\"public_subtasks\":null}",
               S, u, 5000 + k, k % 100, k % 50);
      post_item(job, "result", job, S, sum);
    }
  }
  tc_run_t r = tc_finish(pid);
  cr_assert_eq(r.status, 0, "rescore exited %d: %s", r.status, r.err);
  tc_run_free(&r);
  cr_log_info("%d posts while the rescore ran", posts);
  cr_expect_gt(posts, 0);
  cr_assert_eq(check_places(), USERS);
}

Test(rescore, selects_the_intersection_of_the_indexes_given) {
  store_contest();
  rescore_ok("--participant", "alice", "--contest", "c1");
  assert_score("s1", "100");
  assert_score("s5", "15");
  assert_score("x1", NULL); /* contest c2 */
  assert_score("s2", NULL);

  rescore_ok("--submission", "s2", NULL, NULL);
  assert_score("s2", "60");
  assert_score("s3", NULL);

  rescore_ok("--contest", "c2", NULL, NULL);
  assert_score("x1", "40");
  assert_score("s3", NULL);

  rescore_ok("--task", "beta", "--participant", "bob");
  assert_score("s6", "20");
  assert_score("s3", NULL);

  /* A submission outside an index given is not rescored. */
  tc_run_t r = rescore("--submission", "s3", "--task", "beta");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 0 submissions") != NULL, "%s", r.out);
  tc_run_free(&r);
  assert_score("s3", NULL);
}

Test(rescore, rejects_a_bad_selection_with_status_2) {
  store_contest();
  tc_run_t r = rescore(NULL, NULL, NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "nothing to rescore") != NULL, "%s", r.err);
  tc_run_free(&r);
  r = rescore("--changed", "--task", "alpha", NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "--changed goes alone") != NULL, "%s", r.err);
  tc_run_free(&r);
  r = rescore("--task", "gamma", NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "task \"gamma\" is not among") != NULL, "%s", r.err);
  tc_run_free(&r);
  r = rescore("--threads", "0", "--task", "alpha");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "usage:") != NULL, "%s", r.err);
  tc_run_free(&r);
  assert_score("s1", NULL);
}

Test(rescore, exits_1_naming_redis_when_it_cannot_connect) {
  const char *args[] = {"rescore",
                        "--tasks",
                        tc_at("tasks"),
                        "--redis",
                        "unix:///nonexistent/redis.sock",
                        "--task",
                        "alpha",
                        NULL};
  tc_run_t r = tc_run(args, NULL, dir);
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "cannot connect to Redis at "
                          "unix:///nonexistent/redis.sock") != NULL,
            "%s", r.err);
  tc_run_free(&r);
}

Test(rescore, a_dry_run_writes_nothing_and_reports_the_changes) {
  store_contest();
  rescore_ok("--task", "alpha", NULL, NULL);
  tc_write_file("tasks/alpha.json", ALPHA("50"));
  char *before = snapshot();
  tc_run_t r = rescore("--task", "alpha", "--dry-run", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char *after = snapshot();
  cr_assert(strcmp(before, after) == 0, "a dry run changed Redis");
  char *lines[16];
  size_t n = tc_lines_of(r.out, lines, 16);
  cr_assert_eq(n, 4, "%s", r.out);
  cr_assert_str_eq(lines[0], "s1: task alpha, participant alice: 100 \u2192 "
                             "110 (public 40 \u2192 50)");
  cr_assert_str_eq(lines[1], "s4: task alpha, participant dave: 40 \u2192 50 "
                             "(public 40 \u2192 50)");
  cr_assert_str_eq(lines[2], "x1: task alpha, participant alice: 40 \u2192 50 "
                             "(public 40 \u2192 50)");
  const char *total = "dry run: would rescore 6 submissions of task alpha: "
                      "3 would change, 1 failed, in ";
  cr_assert(strncmp(lines[3], total, strlen(total)) == 0, "%s", lines[3]);
  tc_run_free(&r);

  /* The same as JSON. */
  r = rescore("--submission", "s4", "--dry-run", "--json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  cr_assert_eq(ts_bool_at(j, "dry_run"), 1);
  cr_assert_eq(ts_num_at(j, "submissions"), 1);
  cr_assert_eq(ts_num_at(j, "changed"), 1);
  cr_assert_str_eq(ts_str_at(j, "changes[0].participant"), "dave");
  cr_assert_eq(ts_num_at(j, "changes[0].old.score"), 40);
  cr_assert_eq(ts_num_at(j, "changes[0].new.score"), 50);
  cr_assert_eq(ts_num_at(j, "changes[0].new.public_score"), 50);
  cJSON_Delete(j);
  tc_run_free(&r);
  char *again = snapshot();
  cr_assert(strcmp(before, again) == 0, "a dry run changed Redis");
  free(before);
  free(after);
  free(again);
}

Test(rescore, a_config_with_errors_exits_2_naming_the_file_and_writes_nothing) {
  store_contest();
  tc_write_file("tasks/alpha.json",
                "{\"name\": \"alpha\", \"score_type\": \"GroupMin\",\n"
                " \"score_type_parameters\": [[40, \"^a\"], [\"x\", \"^b\"]],\n"
                " \"testcases\": {\"a1\": true, \"b1\": false}}\n");
  char *before = snapshot();
  tc_run_t r = rescore("--task", "alpha", NULL, NULL);
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "alpha.json") != NULL, "%s", r.err);
  cr_assert(strstr(r.err, "score_type_parameters[1]") != NULL, "%s", r.err);
  tc_run_free(&r);
  char *after = snapshot();
  cr_assert(strcmp(before, after) == 0, "a broken config wrote to Redis");
  free(before);
  free(after);
}

Test(rescore, writes_a_change_event_for_each_score_that_changed) {
  store_contest();
  rescore_ok("--task", "alpha", NULL, NULL);
  long long events = cmd_int("XLEN tally:changes");
  tc_write_file("tasks/alpha.json", ALPHA("50"));
  tc_run_t r = rescore("--task", "alpha", NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 6 submissions of task alpha: 3 changed, "
                          "1 failed, in ") != NULL,
            "%s", r.out);
  tc_run_free(&r);
  cr_assert_eq(cmd_int("XLEN tally:changes"), events + 3);
  redisReply *x = cmd("XRANGE tally:changes - +");
  bool found = false;
  for (size_t k = 0; k < x->elements; k++) {
    const redisReply *f = x->element[k]->element[1];
    cJSON *ch = cJSON_Parse(f->element[1]->str);
    cr_assert_not_null(ch, "%s", f->element[1]->str);
    if (strcmp(ts_str_at(ch, "submission"), "s4") == 0 &&
        ts_num_at(ch, "new.score") == 50) {
      found = true;
      cr_assert_eq(ts_num_at(ch, "old.score"), 40);
      cr_assert_eq(ts_num_at(ch, "old.public_score"), 40);
      cr_assert_eq(ts_num_at(ch, "new.public_score"), 50);
      cr_assert_str_eq(ts_str_at(ch, "participant"), "dave");
      cr_assert_str_eq(ts_str_at(ch, "contest"), "c1");
      cr_assert_str_eq(ts_str_at(ch, "task"), "alpha");
    }
    cJSON_Delete(ch);
  }
  freeReplyObject(x);
  cr_assert(found, "no change event 40 -> 50 for s4");
  assert_score("s1", "110");
  char *total = cmd_str("ZSCORE tally:{c1}:ranking alice");
  cr_assert_str_eq(total, "110");
  free(total);
  /* Rescoring again changes nothing. */
  r = rescore("--task", "alpha", NULL, NULL);
  cr_assert(strstr(r.out, ": 0 changed,") != NULL, "%s", r.out);
  tc_run_free(&r);
}

Test(rescore,
     changed_records_the_new_versions_and_rescores_only_changed_tasks) {
  store_contest();
  rescore_ok("--contest", "c1", NULL, NULL);
  rescore_ok("--contest", "c2", NULL, NULL);
  char *alpha_v = cmd_str("HGET tally:taskversions alpha");
  char *beta_v = cmd_str("HGET tally:taskversions beta");
  cr_assert_not_null(alpha_v);
  cr_assert_not_null(beta_v);
  char *rev_beta = cmd_str("HGET tally:submission:s5 rev");

  tc_write_file("tasks/alpha.json", ALPHA("50"));
  tc_run_t r = rescore("--changed", NULL, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 6 submissions of task alpha: 3 changed") !=
                NULL,
            "%s", r.out);
  tc_run_free(&r);
  char *alpha_v2 = cmd_str("HGET tally:taskversions alpha");
  cr_assert(strcmp(alpha_v, alpha_v2) != 0, "the version stayed %s", alpha_v);
  char *stored = cmd_str("HGET tally:submission:s1 version");
  cr_assert_str_eq(stored, alpha_v2);
  char *rev_beta2 = cmd_str("HGET tally:submission:s5 rev");
  cr_assert_str_eq(rev_beta, rev_beta2);
  assert_score("s4", "50");

  /* Nothing changed since: nothing to do. */
  r = rescore("--changed", NULL, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 0 submissions") != NULL, "%s", r.out);
  tc_run_free(&r);
  free(alpha_v);
  free(beta_v);
  free(alpha_v2);
  free(stored);
  free(rev_beta);
  free(rev_beta2);
}

Test(rescore, stale_rescores_the_submissions_of_tasks_now_current) {
  store_contest();
  rescore_ok("--contest", "c1", NULL, NULL);
  /* The current alpha config gives 50 to subtask 1; s2 is then scored
   * with the old one, and so is stale. beta's current version is one
   * this folder does not have. */
  tc_write_file("tasks/alpha.json", ALPHA("50"));
  rescore_ok("--changed", NULL, NULL, NULL);
  char cmdline[256];
  snprintf(cmdline, sizeof(cmdline), "mkdir -p '%s/old'", dir);
  cr_assert_eq(system(cmdline), 0);
  tc_write_file("old/alpha.json", ALPHA("40"));
  tc_run_t r = rescore_with("old", "--submission", "s2", NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  tc_run_free(&r);
  cr_assert_eq(cmd_int("SISMEMBER tally:stale s2"), 1);
  /* s4 is current, but marked stale all the same: it leaves the set. */
  freeReplyObject(cmd("SADD tally:stale s5 s4"));
  freeReplyObject(cmd("HSET tally:taskversions beta ffffffffffffffff"));

  r = rescore("--stale", NULL, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "rescored 2 submissions of task alpha: 0 changed") !=
                NULL,
            "%s", r.out);
  tc_run_free(&r);
  cr_assert_eq(cmd_int("SISMEMBER tally:stale s4"), 0);
  assert_score("s2", "60");
  r = rescore("--stale", NULL, NULL, NULL);
  cr_assert(strstr(r.out, "rescored 0 submissions") != NULL, "%s", r.out);
  tc_run_free(&r);
  char *version = cmd_str("HGET tally:submission:s2 version");
  char *current = cmd_str("HGET tally:taskversions alpha");
  cr_assert_str_eq(version, current);
  free(version);
  free(current);
  cr_assert_eq(cmd_int("SISMEMBER tally:stale s2"), 0);
  cr_assert_eq(cmd_int("SISMEMBER tally:stale s5"), 1);
}

Test(rescore, waits_for_the_lock_of_another_rescore) {
  store_contest();
  freeReplyObject(cmd("SET tally:rescore:lock other:1:2 PX 60000"));
  const char *args[] = {"rescore", "--tasks", tc_at("tasks"), "--redis",
                        srv.url,   "--task",  "alpha",        NULL};
  pid_t pid = tc_start(args, NULL, dir);
  struct timespec ts = {1, 0};
  nanosleep(&ts, NULL);
  assert_score("s1", NULL);
  freeReplyObject(cmd("DEL tally:rescore:lock"));
  tc_run_t r = tc_finish(pid);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.err, "another rescore holds the lock (other:1:2); "
                          "waiting") != NULL,
            "%s", r.err);
  tc_run_free(&r);
  assert_score("s1", "100");
  /* The lock is released, and the progress says done. */
  cr_assert_eq(cmd_int("EXISTS tally:rescore:lock"), 0);
  char *state = cmd_str("HGET tally:rescore state");
  cr_assert_str_eq(state, "done");
  free(state);
  char *total = cmd_str("HGET tally:rescore total");
  cr_assert_str_eq(total, "6");
  free(total);

  /* With --wait, it gives up. */
  freeReplyObject(cmd("SET tally:rescore:lock other:1:3 PX 60000"));
  r = rescore("--task", "alpha", "--wait", "1");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "another rescore holds the lock tally:rescore:lock; "
                          "gave up after 1.0 s") != NULL,
            "%s", r.err);
  tc_run_free(&r);
}

/* tally ranking */

static tc_run_t ranking(const char *a1, const char *a2) {
  const char *args[] = {"ranking", "--redis", srv.url, "--contest", "c1",
                        "--text",  a1,        a2,      NULL};
  return tc_run(args, NULL, dir);
}

Test(rescore, ranking_shares_ranks_between_equal_totals) {
  store_contest();
  rescore_ok("--contest", "c1", NULL, NULL);
  tc_run_t r = ranking(NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char *lines[16];
  size_t n = tc_lines_of(r.out, lines, 16);
  cr_assert_eq(n, 7, "%s", r.out);
  cr_assert_str_eq(lines[0], "rank  participant  total  alpha  beta");
  cr_assert_str_eq(lines[1], "   1  alice          115    100    15");
  cr_assert_str_eq(lines[2], "   2  bob             80     60    20");
  cr_assert_str_eq(lines[3], "   3  Carl            60     60     -");
  cr_assert_str_eq(lines[4], "   4  dave            40     40     -");
  cr_assert_str_eq(lines[5], "   5  eve              0     0*     -");
  tc_run_free(&r);

  /* Piped without --text, the same ranking is JSON. */
  const char *piped[] = {"ranking",   "--redis", srv.url,
                         "--contest", "c1",      NULL};
  r = tc_run(piped, NULL, dir);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strncmp(r.out, "{\"contest\":\"c1\"", 15) == 0, "%s", r.out);
  tc_run_free(&r);

  /* Public: ties listed in byte order. */
  r = ranking("--public", "--json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  cr_assert_str_eq(ts_str_at(j, "contest"), "c1");
  cr_assert_eq(ts_bool_at(j, "public"), 1);
  cr_assert_str_eq(ts_str_at(j, "tasks[0]"), "alpha");
  cr_assert_str_eq(ts_str_at(j, "tasks[1]"), "beta");
  /* alice 40 + 15, dave 40, bob 0 + 20, Carl 0, eve 0 (partial). */
  const char *want[][2] = {
      {"alice", "1"}, {"dave", "2"}, {"bob", "3"}, {"Carl", "4"}, {"eve", "4"}};
  cr_assert_eq(ts_len_at(j, "rows"), 5, "%s", r.out);
  for (int k = 0; k < 5; k++) {
    char path[64];
    snprintf(path, sizeof(path), "rows[%d].participant", k);
    cr_assert_str_eq(ts_str_at(j, path), want[k][0], "%s", r.out);
    snprintf(path, sizeof(path), "rows[%d].rank", k);
    cr_assert_eq(ts_num_at(j, path), atoi(want[k][1]), "%s", r.out);
  }
  cr_assert_eq(ts_num_at(j, "rows[0].total"), 55);
  cr_assert_eq(ts_num_at(j, "rows[0].tasks.beta.score"), 15);
  cr_assert_eq(ts_bool_at(j, "rows[4].tasks.alpha.partial"), 1);
  cr_assert_eq(ts_bool_at(j, "rows[1].tasks.alpha.partial"), 0);
  cJSON_Delete(j);
  tc_run_free(&r);
}

Test(rescore, ranking_lists_ties_by_participant_id_in_byte_order) {
  store("t1", "bob", "c1", "alpha", 1, "{\"a1\": 0, \"b1\": 1}");
  store("t2", "Carl", "c1", "alpha", 1, "{\"a1\": 0, \"b1\": 1}");
  store("t3", "alice", "c1", "alpha", 1, "{\"a1\": 1, \"b1\": 1}");
  store("t4", "Zed", "c1", "alpha", 1, "{\"a1\": 1, \"b1\": 0}");
  store("t5", "abe", "c1", "alpha", 1, "{\"a1\": 1, \"b1\": 0}");
  rescore_ok("--contest", "c1", NULL, NULL);
  tc_run_t r = ranking("--json", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  /* 100; 60, 60; 40, 40: ranks 1, 2, 2, 4, 4. */
  const char *who[] = {"alice", "Carl", "bob", "Zed", "abe"};
  const int rank[] = {1, 2, 2, 4, 4};
  for (int k = 0; k < 5; k++) {
    char path[64];
    snprintf(path, sizeof(path), "rows[%d].participant", k);
    cr_assert_str_eq(ts_str_at(j, path), who[k], "%s", r.out);
    snprintf(path, sizeof(path), "rows[%d].rank", k);
    cr_assert_eq(ts_num_at(j, path), rank[k], "%s", r.out);
  }
  cJSON_Delete(j);
  tc_run_free(&r);
}

/* The CLI finds the keys the scripts write for an id with the characters
 * the hash tag encodes. */
Test(rescore, ranking_reads_a_contest_whose_id_needs_encoding) {
  const char *id = "a:{b}%";
  store("t1", "bob", id, "alpha", 1, "{\"a1\": 1, \"b1\": 1}");
  store("t2", "ann", id, "alpha", 1, "{\"a1\": 1, \"b1\": 0}");
  /* The index as tallyd names it (store writes the id as is). */
  freeReplyObject(cmd("SADD tally:index:contest:a%%3A{b}%%25 t1 t2"));
  rescore_ok("--contest", id, NULL, NULL);
  cr_assert_eq(cmd_int("EXISTS tally:{a%%3A%%7Bb%%7D%%25}:ranking"), 1);
  const char *args[] = {"ranking", "--redis", srv.url, "--contest",
                        id,        "--json",  NULL};
  tc_run_t r = tc_run(args, NULL, dir);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  cr_assert_str_eq(ts_str_at(j, "contest"), id);
  cr_assert_str_eq(ts_str_at(j, "rows[0].participant"), "bob", "%s", r.out);
  cr_assert_eq(ts_num_at(j, "rows[0].total"), 100, "%s", r.out);
  cr_assert_eq(ts_num_at(j, "rows[0].tasks.alpha.score"), 100, "%s", r.out);
  cr_assert_str_eq(ts_str_at(j, "rows[1].participant"), "ann", "%s", r.out);
  cJSON_Delete(j);
  tc_run_free(&r);
}

Test(rescore, ranking_of_an_unknown_contest_fails) {
  const char *args[] = {"ranking",   "--redis", srv.url,
                        "--contest", "nope",    NULL};
  tc_run_t r = tc_run(args, NULL, dir);
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "no contest \"nope\"") != NULL, "%s", r.err);
  tc_run_free(&r);
}

Test(rescore, draws_a_progress_bar_on_a_terminal) {
  store_contest();
  char tasks[256];
  snprintf(tasks, sizeof(tasks), "%s", tc_at("tasks"));
  int master = -1;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    execl(TC_TALLY, TC_TALLY, "rescore", "--tasks", tasks, "--redis", srv.url,
          "--task", "alpha", (char *)NULL);
    _exit(127);
  }
  char out[8192];
  size_t len = 0;
  ssize_t n;
  while (len + 1 < sizeof(out) &&
         (n = read(master, out + len, sizeof(out) - 1 - len)) > 0)
    len += (size_t)n;
  out[len] = '\0';
  close(master);
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
  cr_assert(strstr(out, "\rdone      [##############################] 6/6 ") !=
                NULL,
            "%s", out);
  cr_assert(strstr(out, "/s  ETA 0:00") != NULL, "%s", out);
  cr_assert(strstr(out, "rescored 6 submissions of task alpha") != NULL, "%s",
            out);
}

Test(rescore, help_lists_rescore_ranking_and_reload) {
  const char *args[] = {"--help", NULL};
  tc_run_t r = tc_run(args, NULL, dir);
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "tally rescore [REDIS] --tasks DIR") != NULL, "%s",
            r.out);
  cr_assert(strstr(r.out, "tally ranking [REDIS] --contest C") != NULL, "%s",
            r.out);
  cr_assert(strstr(r.out, "tally reload (--pid N | --pidfile FILE)") != NULL,
            "%s", r.out);
  cr_assert(strstr(r.out, "SELECTION:") != NULL, "%s", r.out);
  tc_run_free(&r);
}

/* Issue 10, defect 2: a rescore killed at any point leaves a mark that the
 * next trigger (--changed or --stale) takes up, so that no submission is
 * left scored with an older config. */
static void kill_rescores_then_finish(const char *finisher) {
  char S[32], u[32];
  for (int i = 0; i < 3000; i++) {
    snprintf(S, sizeof(S), "k%d", i);
    snprintf(u, sizeof(u), "u%d", i % 300);
    store(S, u, "c1", "alpha", i,
          i % 3 ? "{\"a1\": 1, \"b1\": 1}" : "{\"a1\": 0, \"b1\": 1}");
  }
  rescore_ok("--task", "alpha", NULL, NULL);
  unsigned seed = 12345;
  for (int round = 0; round < 6; round++) {
    char first[8];
    snprintf(first, sizeof(first), "%d", 41 + round);
    char json[512];
    snprintf(json, sizeof(json),
             "{\"name\": \"alpha\", \"score_type\": \"GroupMin\",\n"
             " \"score_type_parameters\": [[%s, \"^a\"], [60, \"^b\"]],\n"
             " \"testcases\": {\"a1\": true, \"b1\": false}, "
             "\"score_precision\": 2}\n",
             first);
    tc_write_file("tasks/alpha.json", json);
    const char *args[] = {"rescore", "--tasks", tc_at("tasks"),
                          "--redis", srv.url,   "--changed",
                          NULL};
    char *before = cmd_str("HGET tally:taskversions alpha");
    pid_t pid = tc_start(args, NULL, dir);
    /* The last rescore is killed only once it has recorded its version:
     * one killed before that left nothing to finish (the version still
     * differs, which the next --changed takes up), and --stale finishes
     * only what a --changed began. */
    for (int waited = 0; round == 5 && waited < 3000; waited++) {
      char *now = cmd_str("HGET tally:taskversions alpha");
      bool moved = now != NULL && (before == NULL || strcmp(now, before) != 0);
      free(now);
      if (moved)
        break;
      struct timespec tick = {0, 10 * 1000000L};
      nanosleep(&tick, NULL);
    }
    free(before);
    seed = seed * 1103515245u + 12345u;
    struct timespec ts = {0, (long)(5 + (seed >> 16) % 200) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* The lock of a killed rescore expires; here at once. */
    freeReplyObject(cmd("DEL tally:rescore:lock"));
  }
  rescore_ok(finisher, NULL, NULL, NULL);
  tc_run_t r = rescore("--task", "alpha", "--dry-run", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, ": 0 would change") != NULL, "%s", r.out);
  tc_run_free(&r);
  char *current = cmd_str("HGET tally:taskversions alpha");
  cr_assert_not_null(current);
  for (int i = 0; i < 3000; i++) {
    char *v = cmd_str("HGET tally:submission:k%d version", i);
    cr_assert(v != NULL && strcmp(v, current) == 0,
              "k%d is at version %s, not %s", i, v ? v : "none", current);
    free(v);
  }
  free(current);
  cr_assert_eq(cmd_int("EXISTS tally:rescore:pending"), 0,
               "the mark outlived the rescore that finished");
}

Test(rescore, a_killed_rescore_is_finished_by_the_next_changed) {
  kill_rescores_then_finish("--changed");
}

Test(rescore, a_killed_rescore_is_finished_by_the_next_stale) {
  kill_rescores_then_finish("--stale");
}
