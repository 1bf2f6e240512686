/* tallyd end to end with the contest state (docs/contest.md), against a
 * real redis-server: task scores and rankings under each score mode, token
 * jobs, what the public stream and channel may carry, unscored
 * submissions, the automatic rescore child, and the pid file. */
#include "cli_fixture.h"
#include "contest/scoremode.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Long enough for an ASan build on a loaded 2-core machine. */
#define WAIT_MS 40000

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400]; /* the task configs of the test */

/* Three tasks, one per score mode. A subtask with a private testcase has
 * no public score, so each task's public maximum is its public subtask. */
static const char alpha[] =
    "{\"name\":\"alpha\",\"score_type\":\"GroupMin\","
    "\"score_type_parameters\":[[30,[\"a0\"]],[70,[\"b0\",\"b1\"]]],"
    "\"testcases\":{\"a0\":true,\"b0\":true,\"b1\":false},"
    "\"score_mode\":\"max_subtask\",\"feedback_level\":\"full\"}";
static const char beta[] =
    "{\"name\":\"beta\",\"score_type\":\"GroupMin\","
    "\"score_type_parameters\":[[40,[\"x\"]],[60,[\"y\"]]],"
    "\"testcases\":{\"x\":true,\"y\":false},\"score_mode\":\"max\","
    "\"feedback_level\":\"full\"}";
static const char gamma_[] =
    "{\"name\":\"gamma\",\"score_type\":\"Sum\",\"score_type_parameters\":10,"
    "\"testcases\":{\"p\":true,\"q\":false},"
    "\"score_mode\":\"max_tokened_last\",\"feedback_level\":\"full\"}";

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  td_write_file(tasks, "alpha.json", alpha);
  td_write_file(tasks, "beta.json", beta);
  td_write_file(tasks, "gamma.json", gamma_);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_contest, .init = setup, .fini = teardown, .timeout = 120);

/* Fails the test after printing the daemon's log. */
#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

/* Starts tallyd on the test's tasks, with args after. */
static void start_daemon(const char *const *args) {
  const char *argv[24] = {"--tasks", tasks};
  int n = 2;
  for (int i = 0; args && args[i] && n < 23; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
}

static void stop_daemon(void) {
  td_signal(&daemon_, SIGTERM);
  int status = td_wait(&daemon_, 30000);
  require(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "tallyd stopped with status %#x", status);
}

static void wait_outcomes(long long n) {
  long long got = td_wait_outcomes(c, n, WAIT_MS);
  require(got == n, "%lld outcomes of %lld", got, n);
}

/* Waits until the log has text. */
static void wait_log(const char *text) {
  for (int waited = 0; waited < WAIT_MS && !td_log_has(&daemon_, text);
       waited += 20)
    td_sleep_ms(20);
  require(td_log_has(&daemon_, text), "the log never said \"%s\"", text);
}

/* A scoring job of contest c1. */
static void push_job(const char *sub, const char *user, const char *task,
                     int ts, const char *evals) {
  char job[2048];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"%s\","
           "\"contest\":\"c1\",\"timestamp\":%d,\"evaluations\":%s}",
           sub, user, task, ts, evals);
  td_push(c, job, NULL);
}

static void push_token(const char *sub, const char *user) {
  char job[512];
  snprintf(job, sizeof(job),
           "{\"type\":\"token\",\"submission\":\"%s\",\"participant\":"
           "\"%s\"}",
           sub, user);
  td_push(c, job, NULL);
}

/* HGET, as a malloc'ed string, or NULL. */
static char *hget(const char *key, const char *field) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  char *v = r && r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
  freeReplyObject(r);
  return v;
}

static char *sub_field(const char *sub, const char *field) {
  char key[128];
  snprintf(key, sizeof(key), "tally:submission:%s", sub);
  return hget(key, field);
}

/* The task score of user on task in c1, parsed, or NULL. */
static cJSON *taskscore(const char *user, const char *task) {
  char key[128];
  snprintf(key, sizeof(key), "tally:{c1}:taskscores:%s", user);
  char *v = hget(key, task);
  cJSON *j = v ? cJSON_Parse(v) : NULL;
  free(v);
  return j;
}

static double num(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void expect_taskscore(const char *user, const char *task, double score,
                             double pub, bool partial) {
  cJSON *j = taskscore(user, task);
  cr_assert_not_null(j, "no task score for %s on %s", user, task);
  cr_expect_float_eq(num(j, "score"), score, 1e-9, "%s on %s: score", user,
                     task);
  cr_expect_float_eq(num(j, "public_score"), pub, 1e-9,
                     "%s on %s: public score", user, task);
  cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItem(j, "partial")), partial,
               "%s on %s: partial", user, task);
  cJSON_Delete(j);
}

/* ZSCORE of user in a ranking of c1, or -1. */
static double ranked(const char *user, bool public_) {
  redisReply *r = redisCommand(c, "ZSCORE tally:{c1}:ranking%s %s",
                               public_ ? ":public" : "", user);
  double v = r && r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : -1;
  freeReplyObject(r);
  return v;
}

/* Waits until field of sub's record equals want. */
static bool wait_field(const char *sub, const char *field, const char *want) {
  for (int waited = 0; waited < WAIT_MS; waited += 20) {
    char *v = sub_field(sub, field);
    bool same = v && strcmp(v, want) == 0;
    free(v);
    if (same)
      return true;
    td_sleep_ms(20);
  }
  return false;
}

/* Every event of the public stream, in order, as a JSON array, with each
 * view kept at a key read into "view". */
static cJSON *public_events(void) {
  return td_public_events(c);
}

/* The last public event of type for sub, or NULL (owned by events). */
static const cJSON *last_event(const cJSON *events, const char *type,
                               const char *sub) {
  const cJSON *found = NULL, *e;
  cJSON_ArrayForEach(e, events) {
    const cJSON *t = cJSON_GetObjectItem(e, "type");
    const cJSON *s = cJSON_GetObjectItem(e, "submission");
    if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0 &&
        cJSON_IsString(s) && strcmp(s->valuestring, sub) == 0)
      found = e;
  }
  return found;
}

/* The token entries of the results stream, as JSON, in order. */
static cJSON *token_entries(void) {
  cJSON *all = cJSON_CreateArray();
  redisReply *r = redisCommand(c, "XRANGE tally:results - +");
  for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements;
       i++) {
    redisReply *f = r->element[i]->element[1];
    for (size_t k = 0; k + 1 < f->elements; k += 2)
      if (strcmp(f->element[k]->str, "token") == 0)
        cJSON_AddItemToArray(all, cJSON_Parse(f->element[k + 1]->str));
  }
  freeReplyObject(r);
  return all;
}

static const char *str(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* The contest of the score-mode tests: alice and bob on three tasks. */
static void push_contest(void) {
  /* alpha, max_subtask: alice's two submissions each solve one subtask
   * (30 + 70 = 100, where max would give 70); bob gets 30 + 35. */
  push_job("s-a1", "alice", "alpha", 1, "{\"a0\":1,\"b0\":0,\"b1\":0}");
  push_job("s-a2", "alice", "alpha", 2, "{\"a0\":0,\"b0\":1,\"b1\":1}");
  push_job("s-b1", "bob", "alpha", 1, "{\"a0\":1,\"b0\":1,\"b1\":0.5}");
  /* beta, max: alice's best is 60 (max_subtask would give 100). */
  push_job("s-a3", "alice", "beta", 3, "{\"x\":1,\"y\":0}");
  push_job("s-a4", "alice", "beta", 4, "{\"x\":0,\"y\":1}");
  push_job("s-b2", "bob", "beta", 2, "{\"x\":1,\"y\":1}");
  /* gamma, max_tokened_last: alice's last one scores 0. */
  push_job("s-a5", "alice", "gamma", 5, "{\"p\":1,\"q\":1}");
  push_job("s-a6", "alice", "gamma", 6, "{\"p\":0,\"q\":0}");
}

Test(tallyd_contest, keeps_task_scores_and_rankings_under_each_score_mode) {
  push_contest();
  start_daemon(NULL);
  wait_outcomes(8);
  cr_expect_eq(td_xlen(c, "tally:dead"), 0);

  expect_taskscore("alice", "alpha", 100, 30, false);
  expect_taskscore("bob", "alpha", 65, 30, false);
  expect_taskscore("alice", "beta", 60, 40, false);
  expect_taskscore("bob", "beta", 100, 40, false);
  expect_taskscore("alice", "gamma", 0, 0, false);
  cr_expect_null(taskscore("bob", "gamma"), "bob sent nothing for gamma");

  cr_expect_float_eq(ranked("alice", false), 160, 1e-9);
  cr_expect_float_eq(ranked("bob", false), 165, 1e-9);
  cr_expect_float_eq(ranked("alice", true), 70, 1e-9);
  cr_expect_float_eq(ranked("bob", true), 70, 1e-9);

  /* The record holds the scores and the version, not the result. */
  char *score = sub_field("s-a2", "score");
  char *version = sub_field("s-a2", "version");
  char *result = sub_field("s-a2", "result");
  char *entry = sub_field("s-a2", "result_entry");
  cr_expect_str_eq(score ? score : "", "70");
  cr_expect(version && strlen(version) == 16, "version %s", version);
  cr_expect_null(result);
  cr_expect_not_null(entry);
  free(score);
  free(version);
  free(result);
  free(entry);

  /* A token on alice's best gamma submission counts under
   * max_tokened_last, and turns the ranking. */
  push_token("s-a5", "alice");
  wait_outcomes(9);
  require(wait_field("s-a5", "tokened", "1"), "s-a5 is never tokened");
  expect_taskscore("alice", "gamma", 20, 10, false);
  cr_expect_float_eq(ranked("alice", false), 180, 1e-9);
  cr_expect_float_eq(ranked("alice", true), 80, 1e-9);
  stop_daemon();
}

Test(tallyd_contest, applies_a_token_and_publishes_the_full_details) {
  push_job("s-1", "alice", "gamma", 1,
           "{\"p\":1,\"q\":{\"outcome\":0.5,\"text\":\"SECRET-q\"}}");
  start_daemon(NULL);
  wait_outcomes(1);
  push_token("s-1", "alice");
  wait_outcomes(2);
  cJSON *tokens = token_entries();
  require(cJSON_GetArraySize(tokens) == 1, "one token entry");
  const cJSON *t = cJSON_GetArrayItem(tokens, 0);
  cr_expect_str_eq(str(t, "submission"), "s-1");
  cr_expect_str_eq(str(t, "state"), "applied");
  cJSON_Delete(tokens);

  cJSON *events = public_events();
  const cJSON *score = last_event(events, "score", "s-1");
  const cJSON *token = last_event(events, "token", "s-1");
  cr_assert_not_null(score);
  cr_assert_not_null(token, "a token event");
  /* Before: the public view only. After: the full score and details. */
  const cJSON *sv = cJSON_GetObjectItem(score, "view");
  cr_expect_float_eq(num(sv, "score"), 10, 1e-9);
  cr_expect_float_eq(num(sv, "max_score"), 10, 1e-9);
  const cJSON *tv = cJSON_GetObjectItem(token, "view");
  cr_expect_float_eq(num(tv, "score"), 15, 1e-9);
  cr_expect_float_eq(num(tv, "max_score"), 20, 1e-9);
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(tv, "details")), 2);
  char *text = cJSON_PrintUnformatted(token);
  cr_expect(strstr(text, "SECRET-q") != NULL, "the full details: %s", text);
  free(text);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(token, "tokened")));
  cJSON_Delete(events);
  require(wait_field("s-1", "tokened", "1"), "s-1 is never tokened");
  stop_daemon();
}

Test(tallyd_contest, keeps_a_token_for_an_unscored_submission_until_it_is) {
  start_daemon(NULL);
  push_token("s-2", "bob");
  wait_outcomes(1);
  cJSON *tokens = token_entries();
  require(cJSON_GetArraySize(tokens) == 1, "one token entry");
  cr_expect_str_eq(str(cJSON_GetArrayItem(tokens, 0), "state"), "pending");
  cJSON_Delete(tokens);

  push_job("s-2", "bob", "gamma", 1,
           "{\"p\":1,\"q\":{\"outcome\":1,\"text\":\"SECRET-q2\"}}");
  wait_outcomes(2);
  require(wait_field("s-2", "tokened", "1"), "the token never took effect");
  /* Its full score and details reach bob in its score event (posted again
   * with the full view, which tallyd withholds at first), and it counts as
   * tokened. */
  cJSON *events = public_events();
  const cJSON *e = last_event(events, "score", "s-2");
  cr_assert_not_null(e);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(e, "tokened")));
  const cJSON *v = cJSON_GetObjectItem(e, "view");
  cr_expect_float_eq(num(v, "score"), 20, 1e-9);
  cr_expect_float_eq(num(v, "max_score"), 20, 1e-9);
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(v, "details")), 2);
  char *text = cJSON_PrintUnformatted(e);
  cr_expect(strstr(text, "SECRET-q2") != NULL, "the full details: %s", text);
  free(text);
  cr_expect_null(last_event(events, "token", "s-2"));
  cJSON_Delete(events);
  expect_taskscore("bob", "gamma", 20, 10, false);
  stop_daemon();
}

/* Reads n messages published on the channel into out, or fewer if the
 * channel stays silent for 5 s. A view kept at a key ("view_key") is read
 * into "view", as a subscriber does. */
static void read_channel(redisContext *sub, int n, cJSON *out) {
  struct timeval tv = {5, 0};
  redisSetTimeout(sub, tv);
  while (cJSON_GetArraySize(out) < n) {
    redisReply *r = NULL;
    if (redisGetReply(sub, (void **)&r) != REDIS_OK)
      return;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        strcmp(r->element[0]->str, "message") == 0) {
      cJSON *e = cJSON_Parse(r->element[2]->str);
      const cJSON *k = cJSON_GetObjectItem(e, "view_key");
      if (cJSON_IsString(k)) {
        redisReply *v = redisCommand(c, "GET %s", k->valuestring);
        cJSON_AddItemToObject(e, "view",
                              v && v->type == REDIS_REPLY_STRING
                                  ? cJSON_Parse(v->str)
                                  : cJSON_CreateNull());
        freeReplyObject(v);
      }
      cJSON_AddItemToArray(out, e);
    }
    freeReplyObject(r);
  }
}

/* Checks that no untokened event shows a private outcome, text or score. */
static void expect_nothing_private(const cJSON *events, const char *where) {
  const cJSON *e;
  cJSON_ArrayForEach(e, events) {
    char *text = cJSON_PrintUnformatted(e);
    bool tokened = cJSON_IsTrue(cJSON_GetObjectItem(e, "tokened"));
    if (!tokened) {
      cr_expect(strstr(text, "SECRET") == NULL, "%s: %s", where, text);
      const cJSON *v = cJSON_GetObjectItem(e, "view");
      const char *sub = str(e, "submission");
      char *pub = sub_field(sub, "public_score");
      cr_expect(pub != NULL && num(v, "score") == strtod(pub, NULL),
                "%s: %s shows %g, not its public score %s", where, sub,
                num(v, "score"), pub);
      free(pub);
    }
    free(text);
  }
}

Test(tallyd_contest, a_large_view_is_kept_at_a_key_that_the_event_names) {
  start_daemon(NULL);
  /* b0 is public, so its 1,000-byte text makes the public view larger
   * than what tallyd passes inline. */
  char evals[1200], big[1001];
  memset(big, 'v', 1000);
  big[1000] = '\0';
  snprintf(evals, sizeof(evals),
           "{\"a0\":1,\"b0\":{\"outcome\":1,\"text\":\"%s\"},"
           "\"b1\":{\"outcome\":0.5,\"text\":\"SECRET-b1\"}}",
           big);
  push_job("s-big", "alice", "alpha", 1, evals);
  push_job("s-small", "bob", "beta", 1, "{\"x\":1,\"y\":1}");
  wait_outcomes(2);
  redisReply *r = redisCommand(c, "XRANGE tally:public - +");
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
  int keyed = 0, inline_views = 0;
  for (size_t i = 0; i < r->elements; i++) {
    const redisReply *f = r->element[i]->element[1];
    cJSON *e = cJSON_Parse(f->element[1]->str);
    const cJSON *k = cJSON_GetObjectItem(e, "view_key");
    if (strcmp(str(e, "submission"), "s-big") == 0) {
      cr_assert(cJSON_IsString(k), "%s", f->element[1]->str);
      cr_expect(strstr(f->element[1]->str, big) == NULL, "not copied");
      cr_assert_eq(f->elements, 4, "the entry names the key too");
      cr_expect_str_eq(f->element[2]->str, "view");
      cr_expect_str_eq(f->element[3]->str, k->valuestring);
      redisReply *v = redisCommand(c, "GET %s", k->valuestring);
      cr_assert_eq(v->type, REDIS_REPLY_STRING);
      cr_expect(strstr(v->str, big) != NULL);
      cr_expect(strstr(v->str, "SECRET") == NULL, "%s", v->str);
      freeReplyObject(v);
      keyed++;
    } else if (strcmp(str(e, "submission"), "s-small") == 0) {
      cr_expect_null(k, "a small view stays inline: %s", f->element[1]->str);
      cr_expect(cJSON_IsObject(cJSON_GetObjectItem(e, "view")));
      inline_views++;
    }
    cJSON_Delete(e);
  }
  freeReplyObject(r);
  cr_expect_eq(keyed, 1);
  cr_expect_eq(inline_views, 1);
  r = redisCommand(c, "KEYS tally:fullview:*");
  cr_expect_eq(r->elements, 0,
               "no full view is kept for an untokened submission");
  freeReplyObject(r);
  stop_daemon();
}

Test(tallyd_contest, never_publishes_a_private_outcome_or_score_untokened) {
  redisContext *sub = td_connect(&server);
  redisReply *r = redisCommand(sub, "SUBSCRIBE tally:{c1}:events");
  freeReplyObject(r);
  start_daemon(NULL);
  push_job("s-a1", "alice", "alpha", 1,
           "{\"a0\":1,\"b0\":{\"outcome\":1,\"text\":\"public-b0\"},"
           "\"b1\":{\"outcome\":0.5,\"text\":\"SECRET-b1\"}}");
  push_job("s-b1", "bob", "beta", 1,
           "{\"x\":{\"outcome\":1,\"text\":\"public-x\"},"
           "\"y\":{\"outcome\":1,\"text\":\"SECRET-y\"}}");
  push_job("s-b2", "bob", "gamma", 2,
           "{\"p\":0,\"q\":{\"outcome\":1,\"text\":\"SECRET-q\"}}");
  wait_outcomes(3);
  /* A token on s-b2 shows it whole; the others stay private. */
  push_token("s-b2", "bob");
  wait_outcomes(4);
  require(wait_field("s-b2", "tokened", "1"), "s-b2 is never tokened");

  cJSON *stream = public_events();
  cJSON *published = cJSON_CreateArray();
  read_channel(sub, cJSON_GetArraySize(stream), published);
  cr_expect_geq(cJSON_GetArraySize(stream), 4, "a score event each, a token");
  cr_expect_eq(cJSON_GetArraySize(published), cJSON_GetArraySize(stream),
               "the channel carries what the stream does");
  expect_nothing_private(stream, "stream");
  expect_nothing_private(published, "channel");
  /* The public details are there. */
  char *all = cJSON_PrintUnformatted(stream);
  cr_expect(strstr(all, "public-b0") != NULL, "%s", all);
  cr_expect(strstr(all, "public-x") != NULL, "%s", all);
  free(all);
  /* The tokened one shows its private testcase. */
  const cJSON *t = last_event(stream, "token", "s-b2");
  cr_assert_not_null(t);
  char *text = cJSON_PrintUnformatted(t);
  cr_expect(strstr(text, "SECRET-q") != NULL, "%s", text);
  free(text);
  cJSON_Delete(stream);
  cJSON_Delete(published);
  redisFree(sub);
  stop_daemon();
}

Test(tallyd_contest, counts_a_job_error_as_unscored_and_the_task_as_partial) {
  start_daemon(NULL);
  push_job("s-a1", "alice", "alpha", 1, "{\"a0\":1,\"b0\":1,\"b1\":1}");
  /* No outcome for b1: the worker cannot score it. */
  push_job("s-a2", "alice", "alpha", 2, "{\"a0\":1,\"b0\":1}");
  wait_outcomes(2);
  cr_expect_eq(td_xlen(c, "tally:dead"), 1);
  require(wait_field("s-a2", "scored", "0"), "s-a2 is not stored unscored");
  char *error = sub_field("s-a2", "error");
  cr_expect(error && strstr(error, "b1") != NULL, "error %s", error);
  free(error);
  expect_taskscore("alice", "alpha", 100, 30, true);
  stop_daemon();
}

/* A stand-in for tally that records each run's arguments, one line per
 * run, and takes a while, so that runs would overlap if they could. */
static void stand_in(char *path, size_t len, char *record, size_t rlen,
                     int status) {
  snprintf(path, len, "%s/fake-tally", server.dir);
  snprintf(record, rlen, "%s/runs", server.dir);
  char script[1024];
  snprintf(script, sizeof(script),
           "#!/bin/sh\necho \"start $*\" >> %s\nsleep 0.3\necho end >> %s\n"
           "exit %d\n",
           record, record, status);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(script, f);
  fclose(f);
  cr_assert_eq(chmod(path, 0755), 0);
}

/* The lines the stand-in wrote, malloc'ed ("" when none). */
static char *runs(const char *record) {
  FILE *f = fopen(record, "r");
  char *text = calloc(1, 65536);
  if (f != NULL) {
    size_t n = fread(text, 1, 65535, f);
    text[n] = '\0';
    fclose(f);
  }
  return text;
}

/* Whether the lines of text go "start ...", "end", "start ...", "end":
 * no run began before the one before had ended. */
static bool one_at_a_time(const char *text) {
  bool started = false;
  for (const char *s = text; *s; s = strchr(s, '\n') + 1) {
    bool start = strncmp(s, "start ", 6) == 0;
    if (start == started || (!start && strncmp(s, "end\n", 4) != 0))
      return false;
    started = start;
    if (strchr(s, '\n') == NULL)
      return false;
  }
  return !started;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *s = text; (s = strstr(s, what)) != NULL; s++)
    n++;
  return n;
}

/* Waits until the log says text n times. */
static void wait_log_count(const char *text, int n) {
  for (int waited = 0; waited < WAIT_MS; waited += 20) {
    FILE *f = fopen(daemon_.log, "r");
    char *log = calloc(1, 1 << 20);
    if (f != NULL) {
      log[fread(log, 1, (1 << 20) - 1, f)] = '\0';
      fclose(f);
    }
    int got = count(log, text);
    free(log);
    if (got >= n)
      return;
    td_sleep_ms(20);
  }
  require(false, "the log never said \"%s\" %d times", text, n);
}

Test(tallyd_contest, rescores_a_task_whose_config_changed_after_sighup) {
  push_contest();
  start_daemon(NULL);
  wait_outcomes(8);
  wait_log_count("rescore.done", 1);
  expect_taskscore("alice", "gamma", 0, 0, false);
  push_token("s-a5", "alice");
  wait_outcomes(9);
  expect_taskscore("alice", "gamma", 20, 10, false);
  /* gamma's testcases are worth twice as much now. */
  td_write_file(tasks, "gamma.json",
                "{\"name\":\"gamma\",\"score_type\":\"Sum\","
                "\"score_type_parameters\":20,\"testcases\":{\"p\":true,"
                "\"q\":false},\"score_mode\":\"max_tokened_last\","
                "\"feedback_level\":\"full\"}");
  td_signal(&daemon_, SIGHUP);
  wait_log_count("rescore.done", 2);
  expect_taskscore("alice", "gamma", 40, 20, false);
  cr_expect_float_eq(ranked("alice", false), 200, 1e-9);
  cr_expect_float_eq(ranked("alice", true), 90, 1e-9);
  char *score = sub_field("s-a5", "score");
  cr_expect_str_eq(score ? score : "", "40");
  free(score);
  /* One change entry for s-a5 (s-a6 scores 0 either way), and a rescore
   * event with its full score, since it is tokened. */
  redisReply *r = redisCommand(c, "XRANGE tally:changes - +");
  cr_assert(r && r->type == REDIS_REPLY_ARRAY);
  cr_expect_eq(r->elements, 1);
  if (r->elements == 1)
    cr_expect(strstr(r->element[0]->element[1]->element[1]->str,
                     "\"submission\":\"s-a5\"") != NULL);
  freeReplyObject(r);
  cJSON *events = public_events();
  const cJSON *e = last_event(events, "rescore", "s-a5");
  cr_assert_not_null(e, "a rescore event");
  cr_expect_float_eq(num(cJSON_GetObjectItem(e, "view"), "score"), 40, 1e-9);
  cJSON_Delete(events);
  cr_expect(td_log_has(&daemon_, "exited with status 0"));
  stop_daemon();
}

Test(tallyd_contest, runs_the_rescore_child_at_start_and_after_each_reload) {
  char tally[400], record[400];
  stand_in(tally, sizeof(tally), record, sizeof(record), 0);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log_count("rescore.done", 1);
  char *text = runs(record);
  char want[1200];
  snprintf(
      want, sizeof(want),
      "start rescore --redis %s --prefix tally --default-queue main --tasks ",
      server.url);
  cr_expect(strstr(text, want) == text, "%s", text);
  cr_expect(strstr(text, " --changed\nend\n") != NULL, "%s", text);
  /* The snapshot, not the operator's folder. */
  cr_expect(strstr(text, "/tallyd-") != NULL, "%s", text);
  free(text);

  /* Two reloads at once: two more runs, one after the other. */
  td_write_file(tasks, "gamma.json",
                "{\"name\":\"gamma\",\"score_type\":\"Sum\","
                "\"score_type_parameters\":20,\"testcases\":{\"p\":true,"
                "\"q\":false},\"score_mode\":\"max_tokened_last\"}");
  td_signal(&daemon_, SIGHUP);
  wait_log_count("rescore.start", 2);
  td_signal(&daemon_, SIGHUP);
  wait_log_count("rescore.done", 3);
  text = runs(record);
  cr_expect_eq(count(text, "start rescore"), 3, "%s", text);
  cr_expect_eq(count(text, "--changed"), 3, "%s", text);
  cr_expect(one_at_a_time(text), "one run at a time: %s", text);
  free(text);
  cr_expect(td_log_has(&daemon_, "exited with status 0"));
  stop_daemon();
}

static int log_count(const char *text);

/* A reload replaces the snapshot a running rescore child reads: the old
 * one stays until that child has exited (it used to be removed at once,
 * and a slow child then failed to read its configs: exit status 2). */
Test(tallyd_contest, keeps_the_snapshot_a_running_rescore_reads) {
  char tally[400], record[400];
  snprintf(tally, sizeof(tally), "%s/slow-tally", server.dir);
  snprintf(record, sizeof(record), "%s/runs", server.dir);
  char script[2048];
  snprintf(script, sizeof(script),
           "#!/bin/sh\necho \"start $*\" >> %s\nsleep 1\n"
           "prev=; tasks=; for a in \"$@\"; do [ \"$prev\" = --tasks ] && "
           "tasks=$a; prev=$a; done\n"
           "if ls \"$tasks\"/*.json >/dev/null 2>&1; then echo there >> %s; "
           "exit 0; fi\necho gone >> %s\nexit 4\n",
           record, record, record);
  FILE *f = fopen(tally, "w");
  cr_assert_not_null(f);
  fputs(script, f);
  fclose(f);
  cr_assert_eq(chmod(tally, 0755), 0);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log_count("rescore.start", 1);
  td_write_file(tasks, "gamma.json",
                "{\"name\":\"gamma\",\"score_type\":\"Sum\","
                "\"score_type_parameters\":20,\"testcases\":{\"p\":true,"
                "\"q\":false}}");
  td_signal(&daemon_, SIGHUP);
  wait_log("workers are being replaced");
  wait_log_count("rescore.start", 2);
  int ended = 0;
  for (int waited = 0; waited < WAIT_MS && ended < 2; waited += 100) {
    ended = log_count("rescore.done") + log_count("rescore.failed");
    td_sleep_ms(100);
  }
  char *text = runs(record);
  require(count(text, "there") == 2 && count(text, "gone") == 0,
          "each child read its snapshot: %s", text);
  free(text);
  require(!td_log_has(&daemon_, "rescore.failed"), "no rescore failed");
  stop_daemon();
}

Test(tallyd_contest, runs_no_rescore_after_a_reload_with_a_broken_config) {
  char tally[400], record[400];
  stand_in(tally, sizeof(tally), record, sizeof(record), 0);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log_count("rescore.done", 1);
  td_write_file(tasks, "gamma.json", "{\"name\":\"gamma\"");
  td_signal(&daemon_, SIGHUP);
  wait_log("the old one stays in force");
  td_sleep_ms(800);
  char *text = runs(record);
  cr_expect_eq(count(text, "start rescore"), 1, "%s", text);
  free(text);
  stop_daemon();
}

/* The log file's text, malloc'ed ("" when none). */
static char *log_text(void) {
  FILE *f = fopen(daemon_.log, "r");
  char *log = calloc(1, 1 << 20);
  if (f != NULL) {
    log[fread(log, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
  }
  return log;
}

/* What the child writes goes into the log in the log's format, a line an
 * event, before the exit; a grandchild that keeps the pipes open does not
 * hold the next run back. It used to go raw into tallyd's stderr. */
Test(tallyd_contest, logs_what_the_rescore_child_writes_in_the_log_format) {
  char tally[400];
  snprintf(tally, sizeof(tally), "%s/chatty-tally", server.dir);
  FILE *f = fopen(tally, "w");
  cr_assert_not_null(f);
  fputs("#!/bin/sh\necho 'rescored 3 submissions'\n"
        "printf 'bad\\033[31m config\\r\\n'\nprintf 'half a line' >&2\n"
        "head -c 3000 /dev/zero | tr '\\0' x\necho\n"
        "sleep 3 &\nexit 0\n",
        f);
  fclose(f);
  cr_assert_eq(chmod(tally, 0755), 0);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log_count("rescore.done", 1);
  char *log = log_text();
  const char *out = strstr(log, " info rescore.output: tally rescore "
                                "--changed (pid ");
  require(out != NULL, "%s", log);
  const char *line = strstr(log, "): rescored 3 submissions\n");
  cr_expect(line != NULL && line > out, "%s", log);
  cr_expect(strstr(log, "): bad\\x1b[31m config\n") != NULL, "%s", log);
  cr_expect(strstr(log, " warn rescore.stderr: tally rescore --changed "
                        "(pid ") != NULL,
            "%s", log);
  cr_expect(strstr(log, "): half a line\n") != NULL, "%s", log);
  /* 3,000 x's: a piece of 2,048, then the rest, each its own event. */
  cr_expect_eq(count(log, "info rescore.output"), 4, "%s", log);
  cr_expect(strstr(log, "x\n") != NULL);
  /* Every line of the log is an event (none raw), and the exit comes after
   * what the child wrote. */
  for (const char *s = log; *s; s = strchr(s, '\n') + 1) {
    cr_expect(strncmp(s, "20", 2) == 0 && s[10] == 'T', "a raw line: %.60s", s);
    if (strchr(s, '\n') == NULL)
      break;
  }
  cr_expect(strstr(log, "rescore.done") > strstr(log, "half a line"));
  free(log);
  stop_daemon();
}

Test(tallyd_contest, logs_a_rescore_child_that_fails_with_its_status) {
  char tally[400], record[400];
  stand_in(tally, sizeof(tally), record, sizeof(record), 3);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log("rescore.failed");
  cr_expect(td_log_has(&daemon_, "exited with status 3"));
  stop_daemon();
}

Test(tallyd_contest, runs_no_rescore_child_with_auto_rescore_off) {
  char tally[400], record[400];
  stand_in(tally, sizeof(tally), record, sizeof(record), 0);
  const char *args[] = {"--tally", tally, "--auto-rescore", "false", NULL};
  start_daemon(args);
  wait_log("redis.ready");
  td_signal(&daemon_, SIGHUP);
  wait_log("workers are being replaced");
  td_sleep_ms(800);
  char *text = runs(record);
  cr_expect_str_eq(text, "");
  free(text);
  cr_expect_not(td_log_has(&daemon_, "rescore."));
  stop_daemon();
}

Test(tallyd_contest, runs_a_stale_rescore_when_a_result_comes_back_stale) {
  char tally[400], record[400];
  stand_in(tally, sizeof(tally), record, sizeof(record), 0);
  const char *args[] = {"--tally", tally, NULL};
  /* The current version of alpha is another one than the workers': as
   * just after a reload, before the workers are replaced. */
  freeReplyObject(
      redisCommand(c, "HSET tally:taskversions alpha 0123456789abcdef"));
  start_daemon(args);
  wait_log_count("rescore.done", 1);
  push_job("s-a1", "alice", "alpha", 1, "{\"a0\":1,\"b0\":1,\"b1\":1}");
  wait_outcomes(1);
  wait_log("--stale");
  wait_log_count("rescore.done", 2);
  char *text = runs(record);
  cr_expect(strstr(text, " --stale\n") != NULL, "%s", text);
  free(text);
  stop_daemon();
}

Test(tallyd_contest, stops_a_running_rescore_child_when_it_stops) {
  char tally[400];
  snprintf(tally, sizeof(tally), "%s/slow-tally", server.dir);
  FILE *f = fopen(tally, "w");
  cr_assert_not_null(f);
  fprintf(f, "#!/bin/sh\nexec sleep 60\n");
  fclose(f);
  cr_assert_eq(chmod(tally, 0755), 0);
  const char *args[] = {"--tally", tally, NULL};
  start_daemon(args);
  wait_log("rescore.start");
  stop_daemon();
  cr_expect(td_log_has(&daemon_, "killed by signal 15"));
  cr_expect_eq(td_marked(&daemon_), 0, "no process of tallyd's is left");
}

Test(tallyd_contest, writes_its_pid_file_and_removes_it_at_exit) {
  char pidfile[400];
  snprintf(pidfile, sizeof(pidfile), "%s/tallyd.pid", server.dir);
  const char *args[] = {"--pidfile", pidfile, "--auto-rescore", "false", NULL};
  start_daemon(args);
  wait_log("redis.ready");
  FILE *f = fopen(pidfile, "r");
  cr_assert_not_null(f);
  char line[64] = "";
  cr_expect_not_null(fgets(line, sizeof(line), f));
  fclose(f);
  char want[64];
  snprintf(want, sizeof(want), "%d\n", (int)daemon_.pid);
  cr_expect_str_eq(line, want);
  stop_daemon();
  cr_expect_neq(access(pidfile, F_OK), 0, "the pid file is removed");
}

/* From-scratch recomputation: the task scores and rankings of contest c1
 * worked out again from the pt hashes with tally_task_score, and the pt
 * hashes checked against the submission records. */

typedef struct entry_s {
  char id[64];
  double timestamp;
  tally_submission_t sub;
  cJSON *summary;
} entry_t;

static int by_time_then_id(const void *a, const void *b) {
  const entry_t *x = a, *y = b;
  if (x->timestamp != y->timestamp)
    return x->timestamp < y->timestamp ? -1 : 1;
  return strcmp(x->id, y->id);
}

static void read_side(tally_score_side_t *side, const cJSON *summary,
                      const char *score, const char *subtasks) {
  side->score = num(summary, score);
  const cJSON *subs = cJSON_GetObjectItem(summary, subtasks);
  side->not_compiled = cJSON_IsFalse(cJSON_GetObjectItem(summary, "compiled"));
  if (cJSON_IsArray(subs) && cJSON_GetArraySize(subs) > 0) {
    side->nsubtasks = (size_t)cJSON_GetArraySize(subs);
    side->subtasks = calloc(side->nsubtasks, sizeof(double));
    for (size_t i = 0; i < side->nsubtasks; i++)
      side->subtasks[i] = cJSON_GetArrayItem(subs, (int)i)->valuedouble;
  }
}

/* Recomputes the task score of user on task from its pt hash, checking
 * each entry against the submission record; returns the number of
 * problems, printed. */
static int recompute(const char *user, const char *task,
                     tally_task_score_t *out) {
  redisReply *r = redisCommand(c, "HGETALL tally:{c1}:pt:%s:%s", user, task);
  cr_assert(r && r->type == REDIS_REPLY_ARRAY);
  size_t n = r->elements / 2;
  entry_t *e = calloc(n ? n : 1, sizeof(*e));
  int problems = 0;
  for (size_t i = 0; i < n; i++) {
    const char *id = r->element[2 * i]->str, *v = r->element[2 * i + 1]->str;
    snprintf(e[i].id, sizeof(e[i].id), "%s", id);
    e[i].summary = cJSON_Parse(v + 1);
    cr_assert_not_null(e[i].summary, "%s: %s", id, v);
    char *stored = sub_field(id, "summary");
    char *tokened = sub_field(id, "tokened");
    if (stored == NULL || strcmp(stored, v + 1) != 0 || tokened == NULL ||
        tokened[0] != v[0]) {
      problems++;
      fprintf(stderr, "pt entry of %s is %s; its record: %s, tokened %s\n", id,
              v, stored, tokened);
    }
    free(stored);
    free(tokened);
    tally_submission_init(&e[i].sub);
    e[i].timestamp = num(e[i].summary, "timestamp");
    e[i].sub.timestamp = e[i].timestamp;
    e[i].sub.official =
        !cJSON_IsFalse(cJSON_GetObjectItem(e[i].summary, "official"));
    e[i].sub.tokened = v[0] == '1';
    e[i].sub.scored =
        !cJSON_IsFalse(cJSON_GetObjectItem(e[i].summary, "scored"));
    if (e[i].sub.scored) {
      read_side(&e[i].sub.priv, e[i].summary, "score", "subtasks");
      read_side(&e[i].sub.pub, e[i].summary, "public_score", "public_subtasks");
    }
  }
  freeReplyObject(r);
  qsort(e, n, sizeof(*e), by_time_then_id);
  /* The mode of the newest scored summary. */
  tally_score_mode_t mode = TALLY_MODE_MAX_SUBTASK;
  int precision = 0;
  tally_rounding_t rounding = TALLY_ROUND_SUBTASK;
  for (size_t i = n; i-- > 0;) {
    if (!e[i].sub.scored)
      continue;
    cr_assert_eq(tally_score_mode_parse(str(e[i].summary, "score_mode"), &mode),
                 0);
    precision = (int)num(e[i].summary, "score_precision");
    rounding = strcmp(str(e[i].summary, "score_rounding"), "none") == 0
                   ? TALLY_ROUND_NONE
                   : TALLY_ROUND_SUBTASK;
    break;
  }
  tally_submission_t *subs = calloc(n ? n : 1, sizeof(*subs));
  for (size_t i = 0; i < n; i++)
    subs[i] = e[i].sub;
  cr_assert_eq(tally_task_score(mode, precision, rounding, subs, n, out), 0);
  free(subs);
  for (size_t i = 0; i < n; i++) {
    tally_submission_close(&e[i].sub);
    cJSON_Delete(e[i].summary);
  }
  free(e);
  return problems;
}

/* Checks every task score and both rankings of c1 against a recomputation;
 * returns the number of problems, printed. */
static int check_contest_state(void) {
  int problems = 0;
  redisReply *tasks_r = redisCommand(c, "SORT tally:{c1}:tasks ALPHA");
  redisReply *users = redisCommand(c, "ZRANGE tally:{c1}:ranking 0 -1");
  cr_assert(tasks_r && tasks_r->type == REDIS_REPLY_ARRAY);
  cr_assert(users && users->type == REDIS_REPLY_ARRAY);
  cr_expect_gt(users->elements, 0);
  for (size_t u = 0; u < users->elements; u++) {
    const char *user = users->element[u]->str;
    double total = 0, public_total = 0;
    for (size_t t = 0; t < tasks_r->elements; t++) {
      const char *task = tasks_r->element[t]->str;
      tally_task_score_t want;
      problems += recompute(user, task, &want);
      cJSON *got = taskscore(user, task);
      if (got == NULL) {
        if (want.submissions > 0 || want.partial) {
          problems++;
          fprintf(stderr, "%s on %s: no task score\n", user, task);
        }
        continue;
      }
      if (num(got, "score") != want.score ||
          num(got, "public_score") != want.public_score ||
          cJSON_IsTrue(cJSON_GetObjectItem(got, "partial")) != want.partial) {
        problems++;
        char *text = cJSON_PrintUnformatted(got);
        fprintf(stderr, "%s on %s: %s, recomputed %.17g, %.17g, %d\n", user,
                task, text, want.score, want.public_score, want.partial);
        free(text);
      }
      total += num(got, "score");
      public_total += num(got, "public_score");
      cJSON_Delete(got);
    }
    double rank = ranked(user, false), public_rank = ranked(user, true);
    if (rank != total || public_rank != public_total) {
      problems++;
      fprintf(stderr,
              "%s: ranked %.17g and %.17g, task scores sum %.17g and "
              "%.17g\n",
              user, rank, public_rank, total, public_total);
    }
  }
  freeReplyObject(tasks_r);
  freeReplyObject(users);
  return problems;
}

/* A job with random outcomes for a random participant of c1. */
static void push_random(unsigned *seed, int i) {
  static const char *const users[] = {"u1", "u2", "u3", "u4", "u5"};
  static const char *const outcomes[] = {"0", "0.5", "1", "1"};
  const char *user = users[rand_r(seed) % 5];
  char sub[32], evals[256];
  /* Every tenth job replaces an earlier submission. */
  snprintf(sub, sizeof(sub), "r-%d", i % 10 == 9 ? (int)(rand_r(seed) % i) : i);
  int task = (int)(rand_r(seed) % 3);
  const char *o[3];
  for (int k = 0; k < 3; k++)
    o[k] = outcomes[rand_r(seed) % 4];
  if (task == 0)
    snprintf(evals, sizeof(evals), "{\"a0\":%s,\"b0\":%s,\"b1\":%s}", o[0],
             o[1], o[2]);
  else if (task == 1)
    snprintf(evals, sizeof(evals), "{\"x\":%s,\"y\":%s}", o[0], o[1]);
  else
    snprintf(evals, sizeof(evals), "{\"p\":%s,\"q\":%s}", o[0], o[1]);
  char job[512];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"%s\","
           "\"contest\":\"c1\",\"timestamp\":%u,\"official\":%s,"
           "\"evaluations\":%s}",
           sub, user,
           task == 0   ? "alpha"
           : task == 1 ? "beta"
                       : "gamma",
           rand_r(seed) % 40, rand_r(seed) % 8 == 0 ? "false" : "true", evals);
  td_push(c, job, NULL);
  if (i % 25 == 24) {
    /* A token, on a submission that may not be scored yet. */
    char token[128];
    snprintf(token, sizeof(token),
             "{\"type\":\"token\",\"submission\":\"r-%d\"}",
             (int)(rand_r(seed) % (unsigned)(i + 5)));
    td_push(c, token, NULL);
  }
}

/* How many submissions <p>:stale holds, printing them when asked. */
static int stale_left(bool print) {
  redisReply *r = redisCommand(c, "SMEMBERS tally:stale");
  int left = r && r->type == REDIS_REPLY_ARRAY ? (int)r->elements : -1;
  for (int i = 0; print && i < left; i++) {
    char *summary = sub_field(r->element[i]->str, "summary");
    fprintf(stderr, "stale: %s: %s\n", r->element[i]->str, summary);
    free(summary);
  }
  freeReplyObject(r);
  return left;
}

static int log_count(const char *text) {
  char *log = tc_slurp(daemon_.log);
  int n = count(log, text);
  free(log);
  return n;
}

Test(tallyd_contest, agrees_with_a_recomputation_after_a_rescore_among_posts) {
  unsigned seed = 20261121;
  int jobs = 0;
  for (; jobs < 300; jobs++)
    push_random(&seed, jobs);
  const char *args[] = {"--batch", "2", NULL};
  start_daemon(args);
  td_wait_outcomes(c, 100, WAIT_MS);
  /* A new config for two tasks, while jobs are being posted. */
  td_write_file(
      tasks, "alpha.json",
      "{\"name\":\"alpha\",\"score_type\":\"GroupMin\","
      "\"score_type_parameters\":[[50,[\"a0\"]],[50,[\"b0\",\"b1\"]]],"
      "\"testcases\":{\"a0\":true,\"b0\":true,\"b1\":false},"
      "\"score_mode\":\"max_subtask\"}");
  td_write_file(tasks, "gamma.json",
                "{\"name\":\"gamma\",\"score_type\":\"Sum\","
                "\"score_type_parameters\":20,\"testcases\":{\"p\":true,"
                "\"q\":false},\"score_mode\":\"max_tokened_last\"}");
  td_signal(&daemon_, SIGHUP);
  for (; jobs < 600; jobs++)
    push_random(&seed, jobs);
  wait_outcomes(600 + 600 / 25);
  /* Every rescore asked for has run, and nothing is left stale. */
  wait_log_count("rescore.start", 2);
  int quiet = 0;
  for (int waited = 0; waited < WAIT_MS && quiet < 10; waited += 100) {
    int started = log_count("rescore.start");
    int ended = log_count("rescore.done") + log_count("rescore.failed");
    quiet = started == ended && stale_left(false) == 0 ? quiet + 1 : 0;
    td_sleep_ms(100);
  }
  if (quiet < 10)
    stale_left(true);
  require(quiet >= 10, "the rescores never settled");
  /* (require prints tallyd's log, which holds the child's own words.) */
  require(!td_log_has(&daemon_, "rescore.failed"), "a rescore failed");

  /* A rescore from scratch would change nothing... */
  char dir[64];
  tc_setup(dir, sizeof(dir), "contest");
  const char *argv[] = {"rescore",   "--redis", server.url,  "--tasks", tasks,
                        "--contest", "c1",      "--dry-run", "--json",  NULL};
  tc_run_t run = tc_run(argv, NULL, NULL);
  cr_expect_eq(run.status, 0, "%s", run.err);
  cr_expect(strstr(run.out, "\"changed\":0,") != NULL, "%s", run.out);
  tc_run_free(&run);
  tc_teardown();
  /* ...and the task scores and rankings are what the pt hashes give. */
  int problems = check_contest_state();
  require(problems == 0, "%d problems in the contest state", problems);
  stop_daemon();
}
