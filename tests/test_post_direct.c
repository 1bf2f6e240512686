/* The direct post (docs/contest.md, "The direct post"): a result whose task
 * score and texts tallyd made (tally_place_add, tally_place_direct) must
 * leave Redis exactly as the post script leaves it computing everything
 * itself. Each case posts the same jobs under prefix "tally" with the direct
 * post and under prefix "ref" without, and compares the two keyspaces; ids
 * with characters the keys encode or JSON escapes, and views inline, by
 * key and absent, are among them. */
#include "contest/placecalc.h"
#include "keyspace.h"
#include "redis/scripts.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_redis_t server;
static redisContext *c;

static void setup(void) {
  cr_assert_not_null(c = tr_redis_start_client(&server));
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
  freeReplyObject(redisCommand(c, "XGROUP CREATE ref:jobs tallyd $ MKSTREAM"));
}

static void teardown(void) {
  tr_redis_stop_client(&server, c);
}

TestSuite(post_direct, .init = setup, .fini = teardown, .timeout = 60);

/* One result to post: its place (JSON string bodies, escapes included),
 * submission, time, scores, and how its public view goes. */
typedef struct {
  const char *contest, *user, *task, *sub, *version;
  double ts, score, pub;
  enum { VIEW_INLINE, VIEW_KEY, VIEW_NONE } view;
} res_t;

/* The place cache of the last post under "tally", by place (one place per
 * case is enough: the cases post to one place each). */
static char cache[4096];
static size_t cache_len;

/* Direct posts the script took: their reply's cache is the one given. */
static int taken;

/* Posts r under prefix, with the direct post when direct (and a cache is
 * known). Returns the item's code. */
static long long post_as(const char *prefix, const res_t *r, bool direct) {
  char sum[2048], job[512], rec[128], body[128], view[512], key[256];
  snprintf(sum, sizeof(sum),
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"contest\":\"%s\","
           "\"task\":\"%s\",\"timestamp\":%.17g,\"official\":true,"
           "\"tokened\":false,\"version\":\"%s\",\"score_mode\":\"max\","
           "\"score_precision\":2,\"score_rounding\":\"subtask\","
           "\"score\":%.17g,\"public_score\":%.17g,\"max_score\":100,"
           "\"max_public_score\":50,\"compiled\":true,\"subtasks\":null,"
           "\"public_subtasks\":null}",
           r->sub, r->user, r->contest, r->task, r->ts, r->version, r->score,
           r->pub);
  snprintf(job, sizeof(job), "{\"submission\":\"%s\"}", r->sub);
  redisReply *x = redisCommand(c, "XADD %s:jobs * job %s", prefix, job);
  cr_assert(x && x->type == REDIS_REPLY_STRING);
  char id[64];
  snprintf(id, sizeof(id), "%s", x->str);
  freeReplyObject(x);
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd a COUNT 10 STREAMS %s:jobs >", prefix));
  snprintf(rec, sizeof(rec), "%s:submission:%s", prefix, r->sub);
  snprintf(body, sizeof(body), "{\"submission\":\"%s\"}", r->sub);
  snprintf(view, sizeof(view), "{\"score\":%.17g,\"max_score\":50}", r->pub);
  tally_post_extra_t e = {sum, strlen(sum), "", 0, "-", 1};
  if (r->view == VIEW_INLINE) {
    e.pub = view, e.pub_len = strlen(view);
  } else if (r->view == VIEW_KEY) {
    /* As tallyd writes a large view: to a key of its own, set before the
     * script (named here by the submission, so that the two prefixes'
     * keys pair). */
    snprintf(key, sizeof(key), "%s:view:%s:1:a", prefix, r->sub);
    freeReplyObject(redisCommand(c, "SET %s %s", key, view));
    e.pub = key, e.pub_len = strlen(key);
  }
  tally_place_calc_t pc;
  tally_place_direct_t pd;
  tally_place_calc_init(&pc);
  tally_texts_init(&pd);
  tally_post_pre_t pre = {0}, *pp = NULL;
  if (direct && cache_len > 0 &&
      tally_place_add(cache, cache_len, r->sub, sum, strlen(sum), &pc) == 0 &&
      tally_place_direct(sum, strlen(sum), r->sub, prefix, e.pub, e.pub_len,
                         &pc, &pd) == 0) {
    pre = (tally_post_pre_t){.expect = cache,
                             .cache = pc.cache.data,
                             .score = pc.score.data,
                             .meta = pc.meta.data,
                             .expect_len = cache_len,
                             .cache_len = pc.cache.len,
                             .score_len = pc.score.len,
                             .meta_len = pc.meta.len};
    for (int i = 0; i < TALLY_POST_DIRECT_ARGS; i++) {
      pre.direct[i] = pd.buf.data + pd.off[i];
      pre.direct_len[i] = pd.len[i];
    }
    pp = &pre;
  }
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, prefix, "a");
  cr_assert_eq(tally_call_post_pre(call, id, 1, "result", body, strlen(body),
                                   rec, &e, pp),
               0);
  x = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  free(call);
  cr_assert(x && x->type == REDIS_REPLY_ARRAY && x->elements == 2, "%s",
            x && x->type == REDIS_REPLY_ERROR ? x->str : "no reply");
  long long code = x->element[0]->integer;
  if (direct) {
    if (pp != NULL && x->element[1]->len == pre.cache_len &&
        memcmp(x->element[1]->str, pre.cache, pre.cache_len) == 0)
      taken++;
    cr_assert_lt(x->element[1]->len, sizeof(cache));
    memcpy(cache, x->element[1]->str, x->element[1]->len);
    cache_len = x->element[1]->len;
  }
  freeReplyObject(x);
  tally_place_calc_close(&pc);
  tally_texts_close(&pd);
  return code;
}

/* Posts r both ways and checks the codes agree. */
static void post_both(const res_t *r) {
  long long a = post_as("tally", r, true), b = post_as("ref", r, false);
  cr_assert_eq(a, b, "%s: code %lld, by Lua %lld", r->sub, a, b);
}

static void expect_same_state(void) {
  char why[1500];
  int diffs = tr_keyspace_diff(c, "tally", "ref", why, sizeof(why));
  cr_expect_eq(diffs, 0, "%d keys differ; %s", diffs, why);
}

Test(post_direct, writes_what_the_script_computes_for_odd_ids_and_views) {
  static const struct {
    const char *contest, *user, *task;
  } places[] = {
      {"c1", "u", "t"},
      {"a:b{x}%", "u:1%2", "t:a"},
      {"\\/slash\\\"quote", "tab\\there", "nl\\n\\u0001\\u007f"},
      {"", "é", "ü:%"},
  };
  int posts = 0;
  for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
    cache_len = 0;
    for (int k = 0; k < 6; k++) {
      char sub[32];
      snprintf(sub, sizeof(sub), "s%zu-%d", p, k);
      res_t r = {places[p].contest,
                 places[p].user,
                 places[p].task,
                 sub,
                 "v1",
                 10.0 + k * (k % 2 ? -1 : 1),
                 10.5 * k,
                 3.25 * k,
                 k % 3 == 0   ? VIEW_INLINE
                 : k % 3 == 1 ? VIEW_KEY
                              : VIEW_NONE};
      post_both(&r);
      posts++;
    }
  }
  /* The first post of each place has no cache to compute from, and the
   * first of a task none of its version: all the others are direct. */
  cr_expect_geq(taken, posts - 8, "%d of %d posts taken", taken, posts);
  cr_expect_geq(tr_command_calls(c, "hexists"), posts - 8,
                "direct posts checked");
  expect_same_state();
}

Test(post_direct, refused_when_the_state_is_not_the_one_assumed) {
  res_t r = {"c1", "u", "t", "s0", "v1", 1, 10, 5, VIEW_INLINE};
  post_both(&r);
  r.sub = "s1";
  post_both(&r);
  /* Each of these makes the state differ from what tallyd assumed: the
   * script must compute the post itself, and so agree with "ref". */
  const char *const *changes[] = {
      /* The record holds a summary already (a replacement). */
      (const char *const[]){"HSET %s:submission:s2 summary x", NULL},
      /* It holds a token kept for it. */
      (const char *const[]){"HSET %s:submission:s3 tokened 1", NULL},
      /* It holds an error. */
      (const char *const[]){"HSET %s:submission:s4 error e", NULL},
      /* The task has another version now. */
      (const char *const[]){"HSET %s:taskversions t v2", NULL},
      /* The place lost a field behind the script's back. */
      (const char *const[]){"HDEL %s:{c1}:pt:u:t s0", NULL},
  };
  const char *subs[] = {"s2", "s3", "s4", "s5", "s6"};
  long long before = tr_command_calls(c, "hexists");
  for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
    for (const char *const *cmd = changes[i]; *cmd; cmd++) {
      freeReplyObject(redisCommand(c, *cmd, "tally"));
      freeReplyObject(redisCommand(c, *cmd, "ref"));
    }
    r.sub = subs[i];
    r.ts = 2 + (double)i;
    post_both(&r);
    expect_same_state();
  }
  /* None of them passed the first checks of a direct post (HEXISTS is
   * its last). */
  cr_expect_eq(tr_command_calls(c, "hexists"), before);
}

/* Posts results of task "t" with the given versions in one call under
 * "tally" (no precomputation) and returns the codes in codes. */
static void post_versions(const char *const *subs, const char *const *vers,
                          int n, long long *codes) {
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, "tally", "a");
  char ids[8][64], sums[8][512], recs[8][64];
  tally_post_extra_t e[8];
  cr_assert(n <= 8);
  for (int i = 0; i < n; i++) {
    redisReply *x = redisCommand(c, "XADD tally:jobs * job {}");
    snprintf(ids[i], sizeof(ids[i]), "%s", x->str);
    freeReplyObject(x);
    snprintf(sums[i], sizeof(sums[i]),
             "{\"submission\":\"%s\",\"participant\":\"u\",\"task\":\"t\","
             "\"timestamp\":1,\"official\":true,\"tokened\":false,"
             "\"version\":\"%s\",\"score\":1,\"public_score\":0}",
             subs[i], vers[i]);
    snprintf(recs[i], sizeof(recs[i]), "tally:submission:%s", subs[i]);
    e[i] = (tally_post_extra_t){sums[i], strlen(sums[i]), "", 0, "", 0};
  }
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd a COUNT 10 STREAMS tally:jobs >"));
  for (int i = 0; i < n; i++)
    cr_assert_eq(
        tally_call_post(call, ids[i], 1, "result", "{}", 2, recs[i], &e[i]), 0);
  redisReply *r = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  free(call);
  cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2u * n);
  for (int i = 0; i < n; i++)
    codes[i] = r->element[i]->integer;
  freeReplyObject(r);
}

static long long stale_count(void) {
  redisReply *r = redisCommand(c, "SCARD tally:stale");
  long long n = r->integer;
  freeReplyObject(r);
  return n;
}

Test(post_direct, one_call_keeps_versions_and_the_stale_set_exact) {
  /* The first result sets the task's version; in the same call one of
   * another version is stale and one of this version is not. */
  long long codes[4];
  post_versions((const char *const[]){"s1", "s2", "s3"},
                (const char *const[]){"v1", "v2", "v1"}, 3, codes);
  cr_expect_eq(codes[0], TALLY_POST_DONE);
  cr_expect_eq(codes[1], TALLY_POST_STALE);
  cr_expect_eq(codes[2], TALLY_POST_DONE);
  cr_expect_eq(stale_count(), 1);
  /* A call that finds the stale set not empty takes a submission out of
   * it, and a call that finds it empty adds to it again. */
  post_versions((const char *const[]){"s4", "s2"},
                (const char *const[]){"v1", "v1"}, 2, codes);
  cr_expect_eq(codes[0], TALLY_POST_DONE);
  cr_expect_eq(codes[1], TALLY_POST_DONE);
  cr_expect_eq(stale_count(), 0);
  post_versions((const char *const[]){"s5", "s6"},
                (const char *const[]){"v1", "v3"}, 2, codes);
  cr_expect_eq(codes[1], TALLY_POST_STALE);
  cr_expect_eq(stale_count(), 1);
}
