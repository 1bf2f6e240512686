/* The contest state the post and rescore scripts keep, against a real
 * redis-server: task scores under each score mode (the tables of issue
 * 4), rankings, contestant events, tokens, stale versions, submissions
 * that move, and rescores. */
#include "contest/placecalc.h"
#include "engine/views.h"
#include "keyspace.h"
#include "redis/scripts.h"
#include "redis_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_redis_t server;
static redisContext *c;

static void setup(void) {
  cr_assert_not_null(c = tr_redis_start_client(&server));
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
}

static void teardown(void) {
  tr_redis_stop_client(&server, c);
}

TestSuite(contest_scripts, .init = setup, .fini = teardown, .timeout = 30);

/* One submission's summary, as a worker writes it. NULL strings take the
 * defaults in brackets. */
typedef struct {
  const char *sub;
  const char *user;      /* ["u"] */
  const char *task;      /* ["t"] */
  const char *contest;   /* ["c1"] */
  const char *mode;      /* ["max_subtask"] */
  const char *precision; /* ["2"] */
  const char *rounding;  /* ["subtask"] */
  const char *version;   /* ["v1"] */
  double ts;
  double score;
  double pub;
  bool tokened;
  bool unofficial;
  bool not_compiled;
  const char *subtasks;     /* JSON array, [null] */
  const char *pub_subtasks; /* JSON array, [null] */
} sm_t;

#define OR(s, d) ((s) ? (s) : (d))

static void summary_of(const sm_t *s, char *buf, size_t len) {
  snprintf(buf, len,
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"contest\":\"%s\","
           "\"task\":\"%s\",\"timestamp\":%.17g,\"official\":%s,"
           "\"tokened\":%s,\"version\":\"%s\",\"score_mode\":\"%s\","
           "\"score_precision\":%s,\"score_rounding\":\"%s\","
           "\"score\":%.17g,\"public_score\":%.17g,\"max_score\":100,"
           "\"max_public_score\":50,\"compiled\":%s,\"subtasks\":%s,"
           "\"public_subtasks\":%s}",
           s->sub, OR(s->user, "u"), OR(s->contest, "c1"), OR(s->task, "t"),
           s->ts, s->unofficial ? "false" : "true",
           s->tokened ? "true" : "false", OR(s->version, "v1"),
           OR(s->mode, "max_subtask"), OR(s->precision, "2"),
           OR(s->rounding, "subtask"), s->score, s->pub,
           s->not_compiled ? "false" : "true", OR(s->subtasks, "null"),
           OR(s->pub_subtasks, "null"));
}

/* Adds a job and delivers it to consumer "a"; id gets its entry id. */
static void deliver(const char *job, char id[64]) {
  redisReply *r = redisCommand(c, "XADD tally:jobs * job %s", job);
  cr_assert(r && r->type == REDIS_REPLY_STRING);
  snprintf(id, 64, "%s", r->str);
  freeReplyObject(r);
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd a COUNT 100 STREAMS tally:jobs >"));
}

static redisReply *run(tally_call_t *call) {
  redisReply *r = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  cr_assert(r != NULL);
  cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s", r->str);
  return r;
}

/* The precomputed task score the next post_one sends (NULL: none). */
static const tally_post_pre_t *next_pre;

/* Runs a post call of one item and returns its code. */
static long long post_one(const char *job, const char *kind, const char *body,
                          const char *record, const tally_post_extra_t *x) {
  char id[64];
  deliver(job, id);
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, "tally", "a");
  cr_assert_eq(tally_call_post_pre(call, id, 1, kind, body, strlen(body),
                                   record, x, next_pre),
               0);
  next_pre = NULL;
  redisReply *r = run(call);
  free(call);
  cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
  long long code = r->element[0]->integer;
  freeReplyObject(r);
  return code;
}

/* Posts s's result with its summary and views: the public view shows
 * "pub" details, the full one "SECRET" ones. */
static long long post(const sm_t *s) {
  char job[512], sum[1024], pubv[256], fullv[256], body[128], rec[128];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"%s\","
           "\"contest\":\"%s\",\"timestamp\":%.17g}",
           s->sub, OR(s->user, "u"), OR(s->task, "t"), OR(s->contest, "c1"),
           s->ts);
  summary_of(s, sum, sizeof(sum));
  snprintf(pubv, sizeof(pubv),
           "{\"score\":%.17g,\"max_score\":50,\"details\":[\"pub\"]}", s->pub);
  snprintf(fullv, sizeof(fullv),
           "{\"score\":%.17g,\"max_score\":100,\"details\":[\"SECRET\"]}",
           s->score);
  snprintf(body, sizeof(body), "{\"submission\":\"%s\",\"score\":1}", s->sub);
  snprintf(rec, sizeof(rec), "tally:submission:%s", s->sub);
  tally_post_extra_t x = {sum,          strlen(sum), pubv,
                          strlen(pubv), fullv,       strlen(fullv)};
  return post_one(job, "result", body, rec, &x);
}

/* Posts a dead letter for job with the unscored summary a worker writes
 * of a job it decoded but could not score (tally_views_unscored), or with
 * none when the decoder refuses the job. */
static long long post_dead(const char *job, const char *error) {
  tally_job_t j;
  tally_job_init(&j);
  tally_buf_t b;
  tally_buf_init(&b);
  char err[256];
  tally_job_parse(&j, job, strlen(job), err, sizeof(err));
  if (j.keys_ok && j.task != NULL) {
    tally_task_t task = {.name = (char *)j.task};
    cr_assert_eq(tally_views_unscored(&b, &task, &j), 0);
  }
  tally_post_extra_t x = {.summary = b.data ? b.data : "",
                          .summary_len = b.len};
  long long code = post_one(job, "dead", error, NULL, &x);
  tally_buf_close(&b);
  tally_job_close(&j);
  return code;
}

/* Posts a dead letter as tallyd does when no worker decoded the job (a
 * crash, too many deliveries, a job too large): with no summary. */
static long long post_dead_alone(const char *job, const char *error) {
  return post_one(job, "dead", error, NULL, NULL);
}

/* Posts a token job on sub, for participant user (NULL: none given), with
 * full as the full view (NULL: none). */
static long long post_token(const char *sub, const char *user,
                            const char *full) {
  char job[256], body[256], rec[128];
  snprintf(job, sizeof(job), "{\"type\":\"token\",\"submission\":\"%s\"}", sub);
  if (user)
    snprintf(body, sizeof(body),
             "{\"submission\":\"%s\",\"participant\":\"%s\"}", sub, user);
  else
    snprintf(body, sizeof(body), "{\"submission\":\"%s\",\"participant\":null}",
             sub);
  snprintf(rec, sizeof(rec), "tally:submission:%s", sub);
  tally_post_extra_t x = {
      "", 0, "", 0, full ? full : "", full ? strlen(full) : 0};
  return post_one(job, "token", body, rec, &x);
}

typedef struct {
  bool exists;
  double score;
  double pub;
  bool partial;
  int submissions;
} ts_t;

/* The stored task score of (contest, user, task). */
static ts_t task_score(const char *contest, const char *user,
                       const char *task) {
  ts_t t = {0};
  redisReply *r =
      redisCommand(c, "HGET tally:{%s}:taskscores:%s %s", contest, user, task);
  if (r->type == REDIS_REPLY_STRING) {
    cJSON *j = cJSON_Parse(r->str);
    cr_assert(j != NULL, "%s", r->str);
    t.exists = true;
    t.score = cJSON_GetObjectItem(j, "score")->valuedouble;
    t.pub = cJSON_GetObjectItem(j, "public_score")->valuedouble;
    t.partial = cJSON_IsTrue(cJSON_GetObjectItem(j, "partial"));
    t.submissions = cJSON_GetObjectItem(j, "submissions")->valueint;
    cJSON_Delete(j);
  }
  freeReplyObject(r);
  return t;
}

/* A participant's total in a ranking, or NAN when not ranked. */
static double total(const char *contest, const char *user, bool pub) {
  redisReply *r = redisCommand(c, "ZSCORE tally:{%s}:ranking%s %s", contest,
                               pub ? ":public" : "", user);
  double v = r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : NAN;
  freeReplyObject(r);
  return v;
}

/* A field of a hash, copied into out ("" when absent). */
static void hget(const char *key, const char *field, char *out, size_t len) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  snprintf(out, len, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
  freeReplyObject(r);
}

/* The value of field in the stream entry at index i (negative: from the
 * end) of key, copied into out. */
static void entry_field(const char *key, long i, const char *field, char *out,
                        size_t len) {
  redisReply *r = redisCommand(c, "XRANGE %s - +", key);
  cr_assert(r->type == REDIS_REPLY_ARRAY);
  long n = (long)r->elements;
  if (i < 0)
    i += n;
  cr_assert(i >= 0 && i < n, "%s has %ld entries", key, n);
  redisReply *f = r->element[i]->element[1];
  out[0] = '\0';
  for (size_t k = 0; k + 1 < f->elements; k += 2)
    if (strcmp(f->element[k]->str, field) == 0)
      snprintf(out, len, "%s", f->element[k + 1]->str);
  freeReplyObject(r);
}

static long long xlen(const char *key) {
  return tr_redis_int(&server, "XLEN %s", key);
}

/* One submission of an issue table: at time t, score (or not scored). */
typedef struct {
  double t;
  double score;
  bool tokened;
  bool unscored;
} row_t;

/* Posts the rows as submissions of user to task "t", each a result or,
 * when unscored, a dead letter. */
static void post_rows(const char *user, const char *mode, const row_t *rows,
                      int n) {
  for (int i = 0; i < n; i++) {
    char sub[64];
    snprintf(sub, sizeof(sub), "%s-%d", user, i);
    if (rows[i].unscored) {
      char job[256];
      snprintf(job, sizeof(job),
               "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"t\","
               "\"contest\":\"c1\",\"timestamp\":%g,\"tokened\":%s}",
               sub, user, rows[i].t, rows[i].tokened ? "true" : "false");
      cr_assert_eq(post_dead(job, "the worker crashed"), TALLY_POST_DONE);
      continue;
    }
    sm_t s = {.sub = sub,
              .user = user,
              .mode = mode,
              .ts = rows[i].t,
              .score = rows[i].score,
              .pub = rows[i].score,
              .tokened = rows[i].tokened};
    cr_assert_eq(post(&s), TALLY_POST_DONE);
  }
}

Test(contest_scripts, max_tokened_last_follows_the_issue_tables) {
  static const struct {
    row_t rows[3];
    int n;
    double want;
    bool partial;
  } cases[] = {
      {{{1, 44.4, true, false}, {2, 66.6, true, false}}, 2, 66.6, false},
      {{{1, 66.6, true, false}, {2, 44.4, true, false}}, 2, 66.6, false},
      {{{1, 44.4, true, false},
        {2, 66.6, false, false},
        {3, 11.1, false, false}},
       3,
       44.4,
       false},
      {{{1, 44.4, true, false},
        {2, 66.6, false, false},
        {3, 55.5, false, false}},
       3,
       55.5,
       false},
      {{{1, 66.6, false, false}, {2, 44.4, false, false}}, 2, 44.4, false},
      {{{2, 66.6, false, false}, {1, 44.4, false, false}}, 2, 66.6, false},
      {{{1, 0, true, true}, {2, 66.6, false, false}, {3, 55.5, false, false}},
       3,
       55.5,
       true},
      {{{1, 66.6, true, false}, {2, 0, false, true}}, 2, 66.6, true},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    char user[16];
    snprintf(user, sizeof(user), "p%zu", k);
    post_rows(user, "max_tokened_last", cases[k].rows, cases[k].n);
    ts_t t = task_score("c1", user, "t");
    cr_assert(t.exists, "case %zu", k);
    cr_expect_eq(t.score, cases[k].want, "case %zu: %.17g", k, t.score);
    cr_expect_eq(t.pub, cases[k].want, "case %zu", k);
    cr_expect_eq(t.partial, cases[k].partial, "case %zu", k);
    cr_expect_eq(t.submissions, cases[k].n, "case %zu", k);
    cr_expect_eq(total("c1", user, false), cases[k].want, "case %zu", k);
  }
}

Test(contest_scripts, max_subtask_adds_each_subtasks_best) {
  sm_t a = {.sub = "a",
            .ts = 1,
            .score = 29,
            .pub = 29,
            .subtasks = "[3,20,6]",
            .pub_subtasks = "[3,20,6]"};
  sm_t b = a;
  b.sub = "b";
  b.ts = 2;
  b.subtasks = b.pub_subtasks = "[6,20,3]";
  post(&a);
  post(&b);
  ts_t t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 32);
  cr_expect_eq(t.pub, 32);
  cr_expect_not(t.partial);
}

Test(contest_scripts, max_subtask_rounds_the_sum_to_the_precision) {
  sm_t a = {.sub = "a",
            .precision = "4",
            .ts = 1,
            .score = 80.0002,
            .subtasks = "[80,0.0002]"};
  sm_t b = {.sub = "b",
            .precision = "4",
            .ts = 2,
            .score = 0.0004,
            .subtasks = "[0,0.0004]"};
  post(&a);
  post(&b);
  cr_expect_eq(task_score("c1", "u", "t").score, 80.0004);
  char ts[256];
  hget("tally:{c1}:taskscores:u", "t", ts, sizeof(ts));
  cr_expect_str_eq(ts, "{\"score\":80.0004,\"public_score\":0,"
                       "\"partial\":false,\"submissions\":2}");
}

Test(contest_scripts, max_takes_the_best_score) {
  static const row_t rows[] = {
      {1, 30, false, false}, {2, 50, false, false}, {3, 40, false, false}};
  post_rows("u", "max", rows, 3);
  cr_expect_eq(task_score("c1", "u", "t").score, 50);
}

Test(contest_scripts, unofficial_submissions_do_not_count) {
  sm_t a = {.sub = "a", .ts = 1, .score = 30};
  sm_t b = {.sub = "b", .ts = 2, .score = 90, .unofficial = true};
  post(&a);
  post(&b);
  ts_t t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 30);
  cr_expect_eq(t.submissions, 1);
}

Test(contest_scripts, a_compilation_failure_adds_nothing_but_is_the_last) {
  sm_t ok = {.sub = "ok", .ts = 1, .score = 10, .subtasks = "[10,0]"};
  sm_t ce = {.sub = "ce", .ts = 2, .not_compiled = true};
  post(&ok);
  post(&ce);
  ts_t t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 10);
  cr_expect_eq(t.submissions, 2);

  ok.user = ce.user = "v";
  ok.sub = "ok2";
  ce.sub = "ce2";
  ok.mode = ce.mode = "max_tokened_last";
  post(&ok);
  post(&ce);
  cr_expect_eq(task_score("c1", "v", "t").score, 0,
               "the last submission did not compile");
}

Test(contest_scripts, a_dead_letter_stores_the_submission_unscored) {
  sm_t a = {.sub = "1042", .user = "7", .ts = 1, .score = 40, .tokened = true};
  post(&a);
  cr_expect_eq(
      post_dead("{\"submission\":1042,\"participant\":7,\"task\":\"t\","
                "\"contest\":\"c1\",\"timestamp\":3}",
                "the worker crashed"),
      TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:dead"), 1, "still dead-lettered");
  char v[512];
  hget("tally:submission:1042", "summary", v, sizeof(v));
  cr_expect_str_eq(v, "{\"submission\":\"1042\",\"participant\":\"7\","
                      "\"contest\":\"c1\",\"task\":\"t\",\"timestamp\":3,"
                      "\"official\":true,\"tokened\":false,"
                      "\"scored\":false}");
  hget("tally:submission:1042", "scored", v, sizeof(v));
  cr_expect_str_eq(v, "0");
  hget("tally:submission:1042", "error", v, sizeof(v));
  cr_expect_str_eq(v, "the worker crashed");
  hget("tally:submission:1042", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "1", "a token once used stays used");
  hget("tally:submission:1042", "rev", v, sizeof(v));
  cr_expect_str_eq(v, "2");
  hget("tally:submission:1042", "score", v, sizeof(v));
  cr_expect_str_eq(v, "", "no score kept");
  ts_t t = task_score("c1", "7", "t");
  cr_expect_eq(t.score, 0);
  cr_expect(t.partial);
  cr_expect_eq(t.submissions, 1);

  /* A job that names no participant, or a token job, is only a dead
   * letter. */
  post_dead("{\"submission\":\"x\",\"task\":\"t\"}", "bad");
  post_dead("{\"type\":\"token\",\"submission\":\"y\",\"participant\":\"7\","
            "\"task\":\"t\"}",
            "bad");
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:submission:x"), 0);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:submission:y"), 0);
  cr_expect_eq(xlen("tally:dead"), 3);
}

/* Issue 10, defect 5: only what the C decoder checked reaches the contest
 * state. Jobs it refuses, and jobs no worker decoded, get their dead
 * letter and nothing else, however plausible their text. */
Test(contest_scripts, a_dead_letter_without_a_decoded_summary_is_only_that) {
  sm_t a = {.sub = "s1", .user = "alice", .ts = 1, .score = 40};
  post(&a);
  ts_t before = task_score("c1", "alice", "t");
  static const char *const refused[] = {
      /* A duplicated participant: Lua's cjson would take the last. */
      "{\"submission\":\"s2\",\"participant\":\"bob\","
      "\"participant\":\"alice\",\"task\":\"t\",\"contest\":\"c1\"}",
      /* A NUL in an id. */
      "{\"submission\":\"s3\",\"participant\":\"alice\\u0000x\","
      "\"task\":\"t\",\"contest\":\"c1\"}",
      /* An id rewritten by its float. */
      "{\"submission\":12345678901234567890123,\"participant\":\"alice\","
      "\"task\":\"t\",\"contest\":\"c1\"}",
  };
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
    cr_assert_eq(post_dead(refused[i], "refused"), TALLY_POST_DONE);
  /* Valid, but no worker decoded it: a crash. */
  cr_assert_eq(post_dead_alone("{\"submission\":\"s4\",\"participant\":"
                               "\"alice\",\"task\":\"../x\",\"contest\":"
                               "\"c1\"}",
                               "the worker failed on each of 3 deliveries"),
               TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:dead"), 4, "every job dead-lettered");
  for (const char *const *k = (const char *const[]){"s2", "s3", "s4", NULL}; *k;
       k++)
    cr_expect_eq(tr_redis_int(&server, "EXISTS tally:submission:%s", *k), 0,
                 "%s stored", *k);
  cr_expect_eq(tr_redis_int(&server, "KEYS tally:submission:1.2*"), -1);
  ts_t after = task_score("c1", "alice", "t");
  cr_expect_eq(after.score, before.score);
  cr_expect_eq(after.partial, before.partial);
  cr_expect_eq(after.submissions, 1);
  cr_expect_eq(task_score("c1", "bob", "t").exists, false);
  cr_expect_eq(
      tr_redis_int(&server, "HEXISTS tally:{c1}:taskscores:alice ../x"), 0);
}

Test(contest_scripts, rankings_sum_task_scores_in_task_order_and_tie) {
  static const char *const tasks[] = {"c", "b", "a"};
  static const double scores[] = {0.3, 0.2, 0.1};
  /* Posted in two orders: the totals add a, b, c all the same. */
  for (int k = 0; k < 3; k++) {
    sm_t s = {.sub = "x",
              .user = "alice",
              .task = tasks[k],
              .mode = "max",
              .rounding = "none",
              .score = scores[k],
              .pub = scores[k] / 2};
    char sub[16];
    snprintf(sub, sizeof(sub), "alice-%d", k);
    s.sub = sub;
    post(&s);
    snprintf(sub, sizeof(sub), "bob-%d", k);
    s.user = "bob";
    s.task = tasks[2 - k];
    s.score = scores[2 - k];
    s.pub = scores[2 - k] / 2;
    post(&s);
  }
  double want = (0.1 + 0.2) + 0.3;
  cr_expect_eq(total("c1", "alice", false), want, "%.17g",
               total("c1", "alice", false));
  cr_expect_eq(total("c1", "bob", false), want);
  cr_expect_eq(total("c1", "alice", true), (0.05 + 0.1) + 0.15);
  sm_t carol = {.sub = "carol-0", .user = "carol", .score = 0.5, .pub = 1};
  post(&carol);
  redisReply *r = redisCommand(c, "ZREVRANGE tally:{c1}:ranking 0 -1");
  cr_assert_eq(r->elements, 3);
  cr_expect_str_eq(r->element[2]->str, "carol");
  freeReplyObject(r);
  cr_expect_eq(total("c1", "carol", true), 1, "first in public");
}

/* Reads n published messages from sub and returns them joined. */
static void read_messages(redisContext *sub, int n, char *out, size_t len) {
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(sub, (void **)&r), REDIS_OK, "message %d", i);
    cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 3);
    cr_expect_str_eq(r->element[1]->str, "tally:{c1}:events");
    strncat(out, r->element[2]->str, len - strlen(out) - 1);
    strncat(out, "\n", len - strlen(out) - 1);
    freeReplyObject(r);
  }
}

/* Posts s's result with both views given by keys (as tallyd gives large
 * ones), the keys written first. */
static long long post_keyed(const sm_t *s) {
  char job[512], sum[1024], body[128], rec[128];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"u\",\"task\":\"t\","
           "\"contest\":\"c1\",\"timestamp\":%.17g}",
           s->sub, s->ts);
  summary_of(s, sum, sizeof(sum));
  freeReplyObject(redisCommand(c, "SET tally:view:%s %s", s->sub,
                               "{\"details\":[\"pub\"]}"));
  freeReplyObject(redisCommand(c, "SET tally:fullview:%s %s", s->sub,
                               "{\"details\":[\"SECRET\"]}"));
  char pubk[64], fullk[64];
  snprintf(pubk, sizeof(pubk), "tally:view:%s", s->sub);
  snprintf(fullk, sizeof(fullk), "tally:fullview:%s", s->sub);
  snprintf(body, sizeof(body), "tally:result:%s", s->sub);
  snprintf(rec, sizeof(rec), "tally:submission:%s", s->sub);
  tally_post_extra_t x = {sum,          strlen(sum), pubk,
                          strlen(pubk), fullk,       strlen(fullk)};
  return post_one(job, "result", body, rec, &x);
}

Test(contest_scripts, a_view_given_by_its_key_is_named_not_copied) {
  sm_t a = {.sub = "k1", .ts = 1, .score = 30, .pub = 10};
  cr_expect_eq(post_keyed(&a), TALLY_POST_DONE);
  char ev[1024], v[128];
  entry_field("tally:public", -1, "event", ev, sizeof(ev));
  cr_expect_str_eq(ev, "{\"type\":\"score\",\"contest\":\"c1\","
                       "\"participant\":\"u\",\"task\":\"t\","
                       "\"submission\":\"k1\",\"tokened\":false,"
                       "\"view_key\":\"tally:view:k1\","
                       "\"task_score\":{\"score\":10,\"partial\":false}}");
  entry_field("tally:public", -1, "view", v, sizeof(v));
  cr_expect_str_eq(v, "tally:view:k1", "the retention deletes it with it");
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:view:k1"), 1);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:fullview:k1"), 0,
               "the view not shown is deleted");
  /* A tokened submission shows the full view; the public one goes. */
  cr_expect_eq(post_token("k2", "u", NULL), TALLY_POST_DONE);
  sm_t b = {.sub = "k2", .ts = 2, .score = 40, .pub = 20};
  cr_expect_eq(post_keyed(&b), TALLY_POST_DONE);
  entry_field("tally:public", -1, "event", ev, sizeof(ev));
  cr_expect(strstr(ev, "\"view_key\":\"tally:fullview:k2\"") != NULL, "%s", ev);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:view:k2"), 0);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:fullview:k2"), 1);
}

Test(contest_scripts, events_show_the_public_view_until_a_token) {
  redisContext *sub = redisConnectUnix(server.sock);
  cr_assert(sub && sub->err == 0);
  struct timeval tv = {5, 0};
  redisSetTimeout(sub, tv);
  freeReplyObject(redisCommand(sub, "SUBSCRIBE tally:{c1}:events"));

  sm_t a = {.sub = "s1", .ts = 1, .score = 77.125, .pub = 10};
  cr_expect_eq(post(&a), TALLY_POST_DONE);
  char ev[1024];
  entry_field("tally:public", -1, "event", ev, sizeof(ev));
  cr_expect_str_eq(ev, "{\"type\":\"score\",\"contest\":\"c1\","
                       "\"participant\":\"u\",\"task\":\"t\","
                       "\"submission\":\"s1\",\"tokened\":false,"
                       "\"view\":{\"score\":10,\"max_score\":50,"
                       "\"details\":[\"pub\"]},"
                       "\"task_score\":{\"score\":10,\"partial\":false}}");
  char got[4096];
  read_messages(sub, 1, got, sizeof(got));
  cr_expect_null(strstr(got, "SECRET"));
  cr_expect_null(strstr(got, "77.125"));
  cr_expect(strstr(got, "\"details\":[\"pub\"]") != NULL);

  /* The token reveals the full view, on the stream and the channel. */
  cr_expect_eq(post_token("s1", "u",
                          "{\"score\":77.125,\"details\":"
                          "[\"SECRET\"]}"),
               TALLY_POST_DONE);
  entry_field("tally:public", -1, "event", ev, sizeof(ev));
  cr_expect(strstr(ev, "\"type\":\"token\"") != NULL, "%s", ev);
  cr_expect(strstr(ev, "\"tokened\":true") != NULL);
  cr_expect(
      strstr(ev, "\"view\":{\"score\":77.125,\"details\":[\"SECRET\"]}") !=
      NULL);
  read_messages(sub, 1, got, sizeof(got));
  cr_expect(strstr(got, "SECRET") != NULL);

  /* Untokened s2: its private score stays out of every event. */
  sm_t b = {.sub = "s2", .ts = 2, .score = 91.5, .pub = 12};
  post(&b);
  read_messages(sub, 1, got, sizeof(got));
  cr_expect_null(strstr(got, "SECRET"));
  cr_expect_null(strstr(got, "91.5"));
  redisReply *r = redisCommand(c, "XRANGE tally:public - +");
  cr_assert_eq(r->elements, 3);
  for (size_t i = 0; i < r->elements; i++) {
    const char *e = r->element[i]->element[1]->element[1]->str;
    cr_expect_null(strstr(e, "91.5"), "%s", e);
    if (i != 1)
      cr_expect_null(strstr(e, "SECRET"), "%s", e);
  }
  freeReplyObject(r);
  redisFree(sub);
}

Test(contest_scripts, a_token_applies_to_a_scored_submission) {
  sm_t a = {.sub = "s1", .mode = "max_tokened_last", .ts = 1, .score = 66.6};
  sm_t b = {.sub = "s2", .mode = "max_tokened_last", .ts = 2, .score = 44.4};
  post(&a);
  post(&b);
  cr_expect_eq(task_score("c1", "u", "t").score, 44.4);
  cr_expect_eq(post_token("s1", NULL, NULL), TALLY_POST_DONE);
  cr_expect_eq(task_score("c1", "u", "t").score, 66.6);
  cr_expect_eq(total("c1", "u", false), 66.6);
  char v[512];
  entry_field("tally:results", -1, "token", v, sizeof(v));
  cr_expect(strstr(v, "{\"submission\":\"s1\",\"id\":\"") == v, "%s", v);
  cr_expect(strstr(v, "\"state\":\"applied\"}") != NULL, "%s", v);
  hget("tally:submission:s1", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "1");
  /* Without a full view, the event shows the stored full score. */
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "\"view\":{\"score\":66.6,\"max_score\":100}") != NULL,
            "%s", v);
}

Test(contest_scripts, a_token_before_the_result_waits_for_it) {
  cr_expect_eq(post_token("s1", "u", NULL), TALLY_POST_DONE);
  char v[512];
  entry_field("tally:results", -1, "token", v, sizeof(v));
  cr_expect(strstr(v, "\"state\":\"pending\"}") != NULL, "%s", v);
  hget("tally:submission:s1", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "1");
  cr_expect_eq(xlen("tally:public"), 0);

  sm_t a = {.sub = "s1", .mode = "max_tokened_last", .ts = 1, .score = 66.6};
  sm_t b = {.sub = "s2", .mode = "max_tokened_last", .ts = 2, .score = 44.4};
  post(&a);
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "\"tokened\":true") != NULL, "%s", v);
  cr_expect(strstr(v, "SECRET") != NULL, "the full view: %s", v);
  post(&b);
  cr_expect_eq(task_score("c1", "u", "t").score, 66.6, "s1 counts as tokened");
}

/* Posts s's result (as post does) under entry id, already delivered, with
 * full as its full view: "-" withholds it. Returns the item's code. */
static long long post_at(const sm_t *s, const char *id, const char *full) {
  char sum[1024], pubv[256], body[128], rec[128];
  summary_of(s, sum, sizeof(sum));
  snprintf(pubv, sizeof(pubv),
           "{\"score\":%.17g,\"max_score\":50,\"details\":[\"pub\"]}", s->pub);
  snprintf(body, sizeof(body), "{\"submission\":\"%s\",\"score\":1}", s->sub);
  snprintf(rec, sizeof(rec), "tally:submission:%s", s->sub);
  tally_post_extra_t x = {sum,          strlen(sum), pubv,
                          strlen(pubv), full,        strlen(full)};
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, "tally", "a");
  cr_assert_eq(
      tally_call_post(call, id, 1, "result", body, strlen(body), rec, &x), 0);
  redisReply *r = run(call);
  free(call);
  cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
  long long code = r->element[0]->integer;
  freeReplyObject(r);
  return code;
}

/* Delivers s's job; id gets its entry id. */
static void deliver_of(const sm_t *s, char id[64]) {
  char job[512];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"task\":\"%s\","
           "\"contest\":\"%s\",\"timestamp\":%.17g}",
           s->sub, OR(s->user, "u"), OR(s->task, "t"), OR(s->contest, "c1"),
           s->ts);
  deliver(job, id);
}

static long long pending(void) {
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd");
  cr_assert(r && r->type == REDIS_REPLY_ARRAY);
  long long n = r->element[0]->integer;
  freeReplyObject(r);
  return n;
}

#define FULL_VIEW "{\"score\":66.6,\"max_score\":100,\"details\":[\"SECRET\"]}"

Test(contest_scripts,
     a_withheld_full_view_of_a_tokened_submission_is_asked_for) {
  /* Tokened by a token before the result: stored tokened=1. */
  cr_expect_eq(post_token("s1", "u", NULL), TALLY_POST_DONE);
  long long results = xlen("tally:results");
  char rev[32], v[1024], id[64];
  hget("tally:submission:s1", "rev", rev, sizeof(rev));
  sm_t a = {.sub = "s1", .ts = 1, .score = 66.6, .pub = 10};
  deliver_of(&a, id);
  cr_expect_eq(post_at(&a, id, "-"), TALLY_POST_NEED_FULL);
  /* Nothing written, and the entry is still pending. */
  cr_expect_eq(xlen("tally:results"), results);
  cr_expect_eq(xlen("tally:public"), 0);
  hget("tally:submission:s1", "rev", v, sizeof(v));
  cr_expect_str_eq(v, rev);
  hget("tally:submission:s1", "summary", v, sizeof(v));
  cr_expect_str_eq(v, "");
  cr_expect_eq(task_score("c1", "u", "t").exists, false);
  cr_expect_eq(pending(), 1);
  cr_expect_eq(xlen("tally:jobs"), 1);

  /* The same entry again, with the full view: published. */
  cr_expect_eq(post_at(&a, id, FULL_VIEW), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), results + 1);
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "\"tokened\":true") != NULL, "%s", v);
  cr_expect(strstr(v, "\"view\":" FULL_VIEW) != NULL, "%s", v);
  cr_expect_eq(task_score("c1", "u", "t").score, 66.6);
  cr_expect_eq(pending(), 0);
  cr_expect_eq(xlen("tally:jobs"), 0);

  /* Tokened by its own summary: asked for too. */
  sm_t b = {.sub = "s2", .ts = 2, .score = 20, .pub = 5, .tokened = true};
  deliver_of(&b, id);
  cr_expect_eq(post_at(&b, id, "-"), TALLY_POST_NEED_FULL);
  cr_expect_eq(xlen("tally:results"), results + 1);
  cr_expect_eq(xlen("tally:public"), 1);
  hget("tally:submission:s2", "rev", v, sizeof(v));
  cr_expect_str_eq(v, "");
  cr_expect_eq(post_at(&b, id, FULL_VIEW), TALLY_POST_DONE);
  hget("tally:submission:s2", "rev", v, sizeof(v));
  cr_expect_str_eq(v, "1");
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "\"submission\":\"s2\"") != NULL, "%s", v);
  cr_expect(strstr(v, "SECRET") != NULL, "%s", v);
}

Test(contest_scripts, a_withheld_full_view_is_not_needed_untokened) {
  sm_t a = {.sub = "s1", .ts = 1, .score = 77.125, .pub = 10};
  char id[64], v[1024];
  deliver_of(&a, id);
  cr_expect_eq(post_at(&a, id, "-"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1);
  cr_expect_eq(pending(), 0);
  hget("tally:submission:s1", "rev", v, sizeof(v));
  cr_expect_str_eq(v, "1");
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect_str_eq(v, "{\"type\":\"score\",\"contest\":\"c1\","
                      "\"participant\":\"u\",\"task\":\"t\","
                      "\"submission\":\"s1\",\"tokened\":false,"
                      "\"view\":{\"score\":10,\"max_score\":50,"
                      "\"details\":[\"pub\"]},"
                      "\"task_score\":{\"score\":10,\"partial\":false}}");
}

Test(contest_scripts, a_token_of_another_participant_is_dead_lettered) {
  sm_t a = {.sub = "s1", .user = "alice", .score = 10};
  post(&a);
  cr_expect_eq(post_token("s1", "mallory", NULL), TALLY_POST_DONE);
  char v[512];
  entry_field("tally:dead", -1, "error", v, sizeof(v));
  cr_expect(strstr(v, "mallory") && strstr(v, "alice"), "%s", v);
  hget("tally:submission:s1", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "0");
  cr_expect_eq(xlen("tally:results"), 1, "no token entry");
  cr_expect_eq(xlen("tally:jobs"), 0, "acknowledged and deleted");
}

Test(contest_scripts, a_result_of_another_version_is_marked_stale) {
  sm_t a = {.sub = "s1", .score = 10};
  cr_expect_eq(post(&a), TALLY_POST_DONE);
  char v[64];
  hget("tally:taskversions", "t", v, sizeof(v));
  cr_expect_str_eq(v, "v1", "the first version becomes the task's");
  freeReplyObject(redisCommand(c, "HSET tally:taskversions t v2"));
  sm_t b = {.sub = "s2", .score = 20};
  cr_expect_eq(post(&b), TALLY_POST_STALE);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:stale s2"), 1);
  cr_expect_eq(task_score("c1", "u", "t").score, 20, "written all the same");
  b.version = "v2";
  cr_expect_eq(post(&b), TALLY_POST_DONE);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:stale s2"), 0);
}

Test(contest_scripts, a_submission_that_moves_leaves_its_old_place) {
  sm_t a = {.sub = "s1", .user = "alice", .score = 30};
  post(&a);
  cr_expect_eq(total("c1", "alice", false), 30);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:index:participant:alice "
                                     "s1"),
               1);
  a.user = "bob";
  a.score = 40;
  post(&a);
  cr_expect_not(task_score("c1", "alice", "t").exists);
  cr_expect(isnan(total("c1", "alice", false)), "alice is not ranked");
  cr_expect_eq(task_score("c1", "bob", "t").score, 40);
  cr_expect_eq(total("c1", "bob", true), 0);
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:{c1}:pt:alice:t"), 0);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:index:participant:alice "
                                     "s1"),
               0);
  cr_expect_eq(
      tr_redis_int(&server, "SISMEMBER tally:index:participant:bob s1"), 1);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:index:task:t s1"), 1);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:contests c1"), 1);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:{c1}:tasks t"), 1);
}

Test(contest_scripts, keys_encode_colons_and_percents) {
  sm_t a = {.sub = "s1", .user = "a:b%", .contest = "c:1", .score = 5};
  post(&a);
  cr_expect_eq(
      tr_redis_int(&server, "HEXISTS tally:{c%%3A1}:pt:a%%3Ab%%25:t s1"), 1);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{c%%3A1}:ranking"), 1);
  cr_expect_eq(tr_redis_int(&server, "SISMEMBER tally:contests c:1"), 1);
}

/* Every key of one contest carries the contest in one Redis Cluster hash
 * tag (docs/contest.md): braces in the id are encoded so the tag ends at
 * the id's end, and the empty id has a tag of its own. */
Test(contest_scripts, keys_of_a_contest_share_one_hash_tag) {
  sm_t a = {.sub = "s1", .user = "u", .contest = "x{y}", .score = 5};
  post(&a);
  sm_t b = {.sub = "s2", .user = "u", .contest = "", .score = 7};
  post(&b);
  const char *keys[] = {"ranking", "ranking:public", "taskscores:u",
                        "pt:u:t",  "ptagg:u:t",      "tasks"};
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
    cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{x%%7By%%7D}:%s", keys[k]),
                 1, "%s", keys[k]);
    cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{%%}:%s", keys[k]), 1,
                 "%s", keys[k]);
  }
  const char *globs[] = {"*ranking*", "*:pt:*", "*ptagg*", "*taskscores*",
                         "*:tasks"};
  for (size_t g = 0; g < sizeof(globs) / sizeof(globs[0]); g++) {
    redisReply *r = redisCommand(c, "KEYS %s", globs[g]);
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_expect_eq(r->elements, g == 0 ? 4 : 2, "%s", globs[g]);
    for (size_t k = 0; k < r->elements; k++) {
      const char *key = r->element[k]->str;
      cr_expect(strncmp(key, "tally:{", 7) == 0 &&
                    (strncmp(key + 7, "x%7By%7D}:", 10) == 0 ||
                     strncmp(key + 7, "%}:", 3) == 0),
                "%s has no contest tag", key);
    }
    freeReplyObject(r);
  }
}

/* Runs a rescore call of the given items (submission, rev, summary,
 * error), n of them, and copies the codes into codes. */
static void rescore(const char *const (*items)[4], int n, long long *codes) {
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_rescore_begin(call, NULL, "tally");
  for (int i = 0; i < n; i++)
    cr_assert_eq(tally_call_rescore(call, items[i][0], items[i][1], items[i][2],
                                    strlen(items[i][2]), items[i][3]),
                 0);
  redisReply *r = run(call);
  free(call);
  cr_assert(r->type == REDIS_REPLY_ARRAY && r->elements == (size_t)n);
  for (int i = 0; i < n; i++)
    codes[i] = r->element[i]->integer;
  freeReplyObject(r);
}

Test(contest_scripts, rescore_writes_changes_and_updates_the_rankings) {
  sm_t a = {.sub = "s1", .ts = 1, .score = 10, .pub = 5};
  sm_t b = {.sub = "s2", .ts = 2, .score = 20, .pub = 5};
  post(&a);
  post(&b);
  long long public_before = xlen("tally:public");
  char rev1[32], rev2[32], sum1[1024], sum2[1024];
  hget("tally:submission:s1", "rev", rev1, sizeof(rev1));
  hget("tally:submission:s2", "rev", rev2, sizeof(rev2));
  a.score = 60;
  a.version = b.version = "v2";
  summary_of(&a, sum1, sizeof(sum1));
  summary_of(&b, sum2, sizeof(sum2));
  freeReplyObject(redisCommand(c, "HSET tally:taskversions t v2"));
  const char *const items[][4] = {{"s1", rev1, sum1, ""},
                                  {"s2", rev2, sum2, ""},
                                  {"s1", rev1, sum1, ""},
                                  {"nope", "1", sum1, ""}};
  long long codes[4];
  rescore(items, 4, codes);
  cr_expect_eq(codes[0], TALLY_RESCORED_CHANGED);
  cr_expect_eq(codes[1], TALLY_RESCORED_SAME);
  cr_expect_eq(codes[2], TALLY_RESCORED_MOVED, "rev moved on");
  cr_expect_eq(codes[3], TALLY_RESCORED_GONE);
  cr_expect_eq(task_score("c1", "u", "t").score, 60);
  cr_expect_eq(total("c1", "u", false), 60);
  char v[1024];
  hget("tally:submission:s1", "version", v, sizeof(v));
  cr_expect_str_eq(v, "v2");
  hget("tally:submission:s1", "rev", v, sizeof(v));
  cr_expect_eq(atoi(v), atoi(rev1) + 1);
  cr_expect_eq(xlen("tally:changes"), 1);
  entry_field("tally:changes", 0, "change", v, sizeof(v));
  cr_expect_str_eq(v, "{\"contest\":\"c1\",\"participant\":\"u\","
                      "\"task\":\"t\",\"submission\":\"s1\","
                      "\"version\":\"v2\",\"old\":{\"score\":10,"
                      "\"public_score\":5},\"new\":{\"score\":60,"
                      "\"public_score\":5}}");
  cr_expect_eq(xlen("tally:public"), public_before,
               "the contestant sees no change: the public score is the same");

  /* A public change is an event; the job no longer scores: unscored. */
  hget("tally:submission:s2", "rev", rev2, sizeof(rev2));
  b.pub = 7;
  summary_of(&b, sum2, sizeof(sum2));
  hget("tally:submission:s1", "rev", rev1, sizeof(rev1));
  /* tally rescore sends the unscored summary of a job that decodes but no
   * longer scores (tally_engine_unscored). */
  const char *const more[][4] = {
      {"s2", rev2, sum2, ""},
      {"s1", rev1,
       "{\"submission\":\"s1\",\"participant\":\"u\",\"contest\":\"c1\","
       "\"task\":\"t\",\"timestamp\":1,\"official\":true,\"tokened\":false,"
       "\"scored\":false}",
       "no such testcase"}};
  rescore(more, 2, codes);
  cr_expect_eq(codes[0], TALLY_RESCORED_CHANGED);
  cr_expect_eq(codes[1], TALLY_RESCORED_CHANGED);
  cr_expect_eq(xlen("tally:public"), public_before + 2,
               "both public scores changed");
  entry_field("tally:public", -2, "event", v, sizeof(v));
  cr_expect_str_eq(v, "{\"type\":\"rescore\",\"contest\":\"c1\","
                      "\"participant\":\"u\",\"task\":\"t\","
                      "\"submission\":\"s2\",\"tokened\":false,"
                      "\"view\":{\"score\":7,\"max_score\":50},"
                      "\"task_score\":{\"score\":7,\"partial\":true}}");
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "\"view\":{\"score\":null,\"max_score\":null}") != NULL,
            "%s", v);
  entry_field("tally:changes", -1, "change", v, sizeof(v));
  cr_expect(strstr(v, "\"submission\":\"s1\"") != NULL, "%s", v);
  cr_expect(strstr(v, "\"new\":null") != NULL, "%s", v);
  hget("tally:submission:s1", "error", v, sizeof(v));
  cr_expect_str_eq(v, "no such testcase");
  hget("tally:submission:s1", "scored", v, sizeof(v));
  cr_expect_str_eq(v, "0");
  ts_t t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 20);
  cr_expect(t.partial);
  cr_expect_eq(total("c1", "u", true), 7);
  cr_expect_eq(tr_redis_int(&server, "SCARD tally:stale"), 0);
}

Test(contest_scripts, rescore_finds_the_place_a_summary_leaves) {
  /* The same place: the stored summary is not decoded, the place is
   * recomputed once. */
  sm_t a = {.sub = "s1", .user = "alice", .ts = 1, .score = 10, .pub = 5};
  post(&a);
  char rev[32], sum[1024];
  hget("tally:submission:s1", "rev", rev, sizeof(rev));
  a.score = 30;
  summary_of(&a, sum, sizeof(sum));
  const char *const same[][4] = {{"s1", rev, sum, ""}};
  long long code;
  rescore(same, 1, &code);
  cr_expect_eq(code, TALLY_RESCORED_CHANGED);
  cr_expect_eq(task_score("c1", "alice", "t").score, 30);
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:{c1}:pt:alice:t"), 1);
  /* Another participant: the summary leaves alice's place. */
  hget("tally:submission:s1", "rev", rev, sizeof(rev));
  a.user = "bob";
  summary_of(&a, sum, sizeof(sum));
  const char *const moved[][4] = {{"s1", rev, sum, ""}};
  rescore(moved, 1, &code);
  cr_expect_not(task_score("c1", "alice", "t").exists);
  cr_expect_eq(tr_redis_int(&server, "HLEN tally:{c1}:pt:alice:t"), 0);
  cr_expect_eq(task_score("c1", "bob", "t").score, 30);
  cr_expect_eq(
      tr_redis_int(&server, "SISMEMBER tally:index:participant:alice s1"), 0);
  cr_expect_eq(
      tr_redis_int(&server, "SISMEMBER tally:index:participant:bob s1"), 1);
}

Test(contest_scripts, a_new_job_without_a_summary_is_a_new_revision) {
  /* A rescore that read the record before must not write a summary scored
   * from the job the post replaced. */
  sm_t a = {.sub = "s1", .ts = 1, .score = 10, .pub = 5};
  post(&a);
  char rev[32], sum[1024], now[32];
  hget("tally:submission:s1", "rev", rev, sizeof(rev));
  summary_of(&a, sum, sizeof(sum));
  cr_assert_eq(post_one("{\"submission\":\"s1\"}", "result", "{}",
                        "tally:submission:s1", NULL),
               TALLY_POST_DONE);
  hget("tally:submission:s1", "rev", now, sizeof(now));
  cr_expect_eq(atoi(now), atoi(rev) + 1);
  const char *const items[][4] = {{"s1", rev, sum, ""}};
  long long code;
  rescore(items, 1, &code);
  cr_expect_eq(code, TALLY_RESCORED_MOVED);
  cr_expect_eq(tr_redis_int(&server, "HEXISTS tally:submission:s1 summary"), 0);
}

Test(contest_scripts, a_new_submission_merges_into_the_place_cache) {
  sm_t a = {.sub = "s1",
            .ts = 1,
            .score = 30,
            .pub = 10,
            .subtasks = "[10,20]",
            .pub_subtasks = "[10,0]"};
  post(&a);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{c1}:ptagg:u:t"), 1);

  /* New submissions, later and earlier, a compilation failure among
   * them: no place is read whole, only the totals' task scores. */
  freeReplyObject(redisCommand(c, "CONFIG RESETSTAT"));
  sm_t b = {.sub = "s2",
            .ts = 2,
            .score = 25,
            .subtasks = "[0,25]",
            .pub_subtasks = "[0,0]"};
  sm_t f = {.sub = "s3", .ts = 3, .score = 5, .pub = 5, .not_compiled = true};
  sm_t d = {.sub = "s4", .ts = 0.5, .score = 12, .pub = 12};
  post(&b);
  post(&f);
  post(&d);
  cr_expect_eq(tr_command_calls(c, "hgetall"), 3,
               "one HGETALL a post, for the totals");
  cr_expect_eq(tr_command_calls(c, "hlen"), 3,
               "the fast path checks the place's size");
  ts_t t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 10 + 25 + 12, "subtask bests, then the whole one");
  cr_expect_eq(t.pub, 10 + 0 + 12);
  cr_expect_eq(t.submissions, 4);
  cr_expect_not(t.partial);
  cr_expect_eq(total("c1", "u", false), 47);

  /* A replacement, and a newer summary of another mode: recomputed. */
  freeReplyObject(redisCommand(c, "CONFIG RESETSTAT"));
  b.score = 0;
  b.subtasks = "[0,0]";
  post(&b);
  cr_expect_eq(tr_command_calls(c, "hgetall"), 2, "the place and the totals");
  cr_expect_eq(task_score("c1", "u", "t").score, 10 + 20 + 12);
  sm_t e = {.sub = "s5", .ts = 9, .mode = "max", .score = 50, .pub = 1};
  post(&e);
  cr_expect_eq(tr_command_calls(c, "hgetall"), 4);
  cr_expect_eq(tr_command_calls(c, "hlen"), 0);
  t = task_score("c1", "u", "t");
  cr_expect_eq(t.score, 50);
  cr_expect_eq(t.pub, 12);

  /* A place left empty keeps no cache. */
  sm_t x = {.sub = "x1", .task = "t2", .score = 1};
  post(&x);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{c1}:ptagg:u:t2"), 1);
  x.task = "t";
  post(&x);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{c1}:ptagg:u:t2"), 0);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:{c1}:ptagg:u:t"), 1);
}

/* Posts s with a task score computed as tallyd does from cache (len
 * bytes, the one the place is expected to have), then with the score's
 * JSON replaced by fake (NULL: as computed) and the meta's first bytes by
 * meta (NULL: as computed). */
static void post_computed(const sm_t *s, const char *cache, size_t len,
                          const char *fake, const char *meta) {
  char sum[1024], rec[64];
  summary_of(s, sum, sizeof(sum));
  snprintf(rec, sizeof(rec), "tally:submission:%s", s->sub);
  tally_place_calc_t pc;
  tally_place_calc_init(&pc);
  cr_assert_eq(tally_place_add(cache, len, s->sub, sum, strlen(sum), &pc), 0);
  if (meta != NULL)
    memcpy(pc.meta.data, meta, strlen(meta));
  tally_post_pre_t pre = {.expect = cache,
                          .cache = pc.cache.data,
                          .score = fake ? fake : pc.score.data,
                          .meta = pc.meta.data,
                          .expect_len = len,
                          .cache_len = pc.cache.len,
                          .score_len = fake ? strlen(fake) : pc.score.len,
                          .meta_len = pc.meta.len};
  next_pre = &pre;
  post(s);
  tally_place_calc_close(&pc);
}

Test(contest_scripts, a_precomputed_task_score_is_written_only_from_its_cache) {
  sm_t a = {.sub = "s1", .ts = 1, .score = 30, .pub = 10};
  post(&a);
  redisReply *c1 = redisCommand(c, "GET tally:{c1}:ptagg:u:t");
  cr_assert(c1 && c1->type == REDIS_REPLY_STRING);
  /* From the place's own cache: written as given (here a score no
   * summary has, to tell). */
  static const char fake[] = "{\"score\":999,\"public_score\":998,"
                             "\"partial\":false,\"submissions\":2}";
  sm_t b = {.sub = "s2", .ts = 2, .score = 40, .pub = 5};
  post_computed(&b, c1->str, c1->len, fake, NULL);
  cr_expect_eq(task_score("c1", "u", "t").score, 999, "taken as given");
  cr_expect_eq(total("c1", "u", false), 999);
  /* From a cache the place no longer has: computed by the script. */
  sm_t d = {.sub = "s3", .ts = 3, .score = 50, .pub = 7};
  post_computed(&d, c1->str, c1->len, fake, NULL);
  cr_expect_eq(task_score("c1", "u", "t").score, 50);
  cr_expect_eq(task_score("c1", "u", "t").pub, 10);
  redisReply *c3 = redisCommand(c, "GET tally:{c1}:ptagg:u:t");
  cr_assert(c3 && c3->type == REDIS_REPLY_STRING);
  /* With another tokened flag, or another field count: computed. */
  sm_t e = {.sub = "s4", .ts = 4, .score = 60, .pub = 8};
  post_computed(&e, c3->str, c3->len, fake, "1");
  cr_expect_eq(task_score("c1", "u", "t").score, 60);
  redisReply *c4 = redisCommand(c, "GET tally:{c1}:ptagg:u:t");
  cr_assert(c4 && c4->type == REDIS_REPLY_STRING);
  sm_t f = {.sub = "s5", .ts = 5, .score = 70, .pub = 9};
  post_computed(&f, c4->str, c4->len, fake, "009");
  cr_expect_eq(task_score("c1", "u", "t").score, 70);
  cr_expect_eq(task_score("c1", "u", "t").submissions, 5);
  freeReplyObject(c1);
  freeReplyObject(c3);
  freeReplyObject(c4);
}

/* Posts a max_subtask summary of submission sub whose public subtasks are
 * pub and whose members after them are tail. */
static void post_subtasks(const char *sub, double ts, const char *pub,
                          const char *tail) {
  char job[256], sum[1024], rec[64];
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"u\",\"task\":\"t\","
           "\"contest\":\"c1\",\"timestamp\":%g}",
           sub, ts);
  snprintf(sum, sizeof(sum),
           "{\"submission\":\"%s\",\"participant\":\"u\",\"contest\":"
           "\"c1\",\"task\":\"t\",\"timestamp\":%g,\"official\":true,"
           "\"tokened\":false,\"version\":\"v1\",\"score_mode\":"
           "\"max_subtask\",\"score_precision\":2,\"score_rounding\":"
           "\"subtask\",\"score\":30,\"public_score\":15,\"max_score\":100,"
           "\"max_public_score\":50,\"compiled\":true,\"subtasks\":[10,20,0],"
           "\"public_subtasks\":%s%s}",
           sub, ts, pub, tail);
  snprintf(rec, sizeof(rec), "tally:submission:%s", sub);
  tally_post_extra_t x = {sum, strlen(sum), "", 0, "", 0};
  cr_assert_eq(post_one(job, "result", "{}", rec, &x), TALLY_POST_DONE);
}

Test(contest_scripts, public_subtasks_are_read_to_the_end_of_their_array) {
  /* Members after public_subtasks are not subtasks: a language of
   * "x,5 ,y" adds no subtask scoring 5. */
  post_subtasks("s1", 1, "[10,0,0]",
                ",\"judgement\":\"WA\",\"language\":\"x,5 ,y\"");
  cr_expect_eq(task_score("c1", "u", "t").pub, 10);
  /* A null counts 0 and the scores after it count (recomputed, then
   * merged by the fast path). */
  post_subtasks("s2", 2, "[0,null,7]", ",\"judgement\":\"WA\"");
  cr_expect_eq(task_score("c1", "u", "t").pub, 17);
  post_subtasks("s3", 3, "[0,4,null]", "");
  cr_expect_eq(task_score("c1", "u", "t").pub, 10 + 4 + 7);
  cr_expect_eq(task_score("c1", "u", "t").score, 30);
}

Test(contest_scripts, a_cache_of_another_format_or_cut_short_is_recomputed) {
  sm_t a = {.sub = "s1", .ts = 1, .score = 30, .pub = 10};
  post(&a);
  redisReply *r = redisCommand(c, "GET tally:{c1}:ptagg:u:t");
  cr_assert_eq(r->type, REDIS_REPLY_STRING);
  cr_expect_eq(r->str[0], '2', "the binary format");
  /* The same cache cut short, and a cache in the text format of earlier
   * versions: each is refused and the place read whole (the place and
   * the totals), then the cache written again. */
  char cut[64];
  memcpy(cut, r->str, 40);
  freeReplyObject(r);
  static const char *const bad[] = {
      NULL, "1 1 1 0 max 0 none 1 1 2 2 30 10\ns1s1", "2", ""};
  for (int i = 0; i < 4; i++) {
    if (bad[i] == NULL)
      freeReplyObject(
          redisCommand(c, "SET tally:{c1}:ptagg:u:t %b", cut, (size_t)40));
    else
      freeReplyObject(redisCommand(c, "SET tally:{c1}:ptagg:u:t %s", bad[i]));
    freeReplyObject(redisCommand(c, "CONFIG RESETSTAT"));
    char sub[16];
    snprintf(sub, sizeof(sub), "n%d", i);
    sm_t b = {.sub = sub, .ts = 2 + i, .score = 40 + i, .pub = 10};
    post(&b);
    cr_expect_eq(tr_command_calls(c, "hgetall"), 2, "case %d: recomputed", i);
    cr_expect_eq(task_score("c1", "u", "t").score, 40 + i, "case %d", i);
    r = redisCommand(c, "GET tally:{c1}:ptagg:u:t");
    cr_expect(r->type == REDIS_REPLY_STRING && r->str[0] == '2',
              "case %d: written again", i);
    freeReplyObject(r);
  }
}

/* Issue 10, defect 6: a token kept for a submission not scored yet names
 * its participant, checked when the submission comes; kept tokens are
 * bounded per participant; a repeated token shows nothing more. */
Test(contest_scripts, a_kept_token_of_another_participant_is_refused) {
  cr_assert_eq(post_token("s-late", "mallory", NULL), TALLY_POST_DONE);
  cr_expect_eq(tr_redis_int(&server, "SCARD tally:pendingtokens:mallory"), 1);
  sm_t a = {.sub = "s-late", .user = "alice", .ts = 1, .score = 70, .pub = 7};
  cr_assert_eq(post(&a), TALLY_POST_DONE, "posted without the full view");
  char v[512];
  hget("tally:submission:s-late", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "0", "the token of mallory was applied to alice's");
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "SECRET") == NULL, "full details published: %s", v);
  cr_expect(strstr(v, "\"tokened\":false") != NULL, "%s", v);
  cr_expect_eq(tr_redis_int(&server, "SCARD tally:pendingtokens:mallory"), 0);
  redisReply *r = redisCommand(c, "XRANGE tally:dead - +");
  cr_assert(r != NULL && r->elements == 1, "no dead letter for the token");
  redisReply *f = r->element[0]->element[1];
  bool named = false;
  for (size_t k = 0; k + 1 < f->elements; k += 2)
    if (strcmp(f->element[k]->str, "error") == 0)
      named = strstr(f->element[k + 1]->str, "token for participant "
                                             "\"mallory\", but submission "
                                             "\"s-late\" is of participant "
                                             "\"alice\"") != NULL;
  cr_expect(named, "the dead letter does not name the mismatch");
  freeReplyObject(r);

  /* Its own participant's kept token is applied. */
  cr_assert_eq(post_token("s-mine", "bob", NULL), TALLY_POST_DONE);
  sm_t b = {.sub = "s-mine", .user = "bob", .ts = 1, .score = 70, .pub = 7};
  cr_assert_eq(post(&b), TALLY_POST_DONE);
  hget("tally:submission:s-mine", "tokened", v, sizeof(v));
  cr_expect_str_eq(v, "1");
  entry_field("tally:public", -1, "event", v, sizeof(v));
  cr_expect(strstr(v, "SECRET") != NULL, "the full view was not shown: %s", v);
}

Test(contest_scripts, kept_tokens_are_bounded_per_participant) {
  char sub[32];
  for (int i = 0; i < 100; i++) {
    snprintf(sub, sizeof(sub), "nx-%d", i);
    cr_assert_eq(post_token(sub, "mallory", NULL), TALLY_POST_DONE);
  }
  cr_expect_eq(xlen("tally:dead"), 0);
  cr_assert_eq(post_token("nx-100", "mallory", NULL), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:dead"), 1, "the 101st kept token was accepted");
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:submission:nx-100"), 0);
  cr_expect_eq(tr_redis_int(&server, "SCARD tally:pendingtokens:mallory"), 100);
  /* Another participant is not held up by mallory's. */
  cr_assert_eq(post_token("ok-1", "alice", NULL), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:dead"), 1);
}

Test(contest_scripts, repeated_tokens_on_one_submission_show_once) {
  sm_t a = {.sub = "s-1", .user = "alice", .ts = 1, .score = 70, .pub = 7};
  cr_assert_eq(post(&a), TALLY_POST_DONE);
  long long events = xlen("tally:public");
  for (int i = 0; i < 50; i++)
    cr_assert_eq(post_token("s-1", "alice",
                            "{\"score\":70,\"max_score\":100,"
                            "\"details\":[\"SECRET\"]}"),
                 TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:public"), events + 1,
               "%lld events for 50 tokens on one submission",
               xlen("tally:public") - events);
  /* Kept tokens too: one hash, one set member. */
  for (int i = 0; i < 50; i++)
    cr_assert_eq(post_token("s-2", "bob", NULL), TALLY_POST_DONE);
  cr_expect_eq(tr_redis_int(&server, "SCARD tally:pendingtokens:bob"), 1);
  cr_expect_eq(xlen("tally:dead"), 0);
}
