/* The Lua task score of the post and rescore scripts against the C one:
 * random participants' submissions, scored by tally_task_score and by the
 * scripts' library in a real redis-server, must give the same doubles,
 * bit for bit; the library writes numbers as tally_json_num does and
 * strings as tally_lua_json_str does; and random posts with tallyd's C
 * computations and direct posts leave every key as the script's own
 * computation does (the same posts under a second prefix). */
#include "config/jsonw.h"
#include "contest/frozen.h"
#include "contest/placecalc.h"
#include "contest/scoremode.h"
#include "keyspace.h"
#include "redis/scripts.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_redis_t server;
static redisContext *c;

static void setup(void) {
  cr_assert_not_null(c = tr_redis_start_client(&server));
}

static void teardown(void) {
  tr_redis_stop_client(&server, c);
}

TestSuite(taskscore_lua, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* A whole number below n. */
static unsigned below(unsigned n) {
  return (unsigned)(rnd() % n);
}

/* A score as a result gives one: tenths, thirds, products of fractions
 * and maxima, tiny ones, and plain random doubles. */
static double random_score(void) {
  static const double maxima[] = {10, 20, 30, 33.3, 40, 100, 7};
  double max = maxima[below(7)];
  switch (below(6)) {
  case 0:
    return 0.0;
  case 1:
    return below(1000) / 10.0;
  case 2:
    return max * (below(4) / 3.0);
  case 3:
    return max * (double)(rnd() >> 11) / 9007199254740992.0;
  case 4:
    return max * below(100) * 0.00001;
  default:
    return max * below(11) * 0.1;
  }
}

/* Loads the library with a harness that scores ARGV as a pt hash. */
static void load_harness(char sha[64]) {
  static const char harness[] = "local ts = compute(ARGV)\n"
                                "return {num(ts.score), num(ts.public_score),\n"
                                "        ts.partial and 1 or 0, "
                                "ts.submissions}\n";
  size_t n = strlen(tally_lua_lib) + sizeof(harness);
  char *src = malloc(n);
  cr_assert(src != NULL);
  snprintf(src, n, "%s%s", tally_lua_lib, harness);
  redisReply *r = redisCommand(c, "SCRIPT LOAD %s", src);
  free(src);
  cr_assert(r && r->type == REDIS_REPLY_STRING, "%s", r ? r->str : "");
  snprintf(sha, 64, "%s", r->str);
  freeReplyObject(r);
}

/* Writes side's subtasks as JSON (null for none). */
static void put_subtasks(tally_buf_t *b, const tally_score_side_t *side) {
  if (side->nsubtasks == 0) {
    tally_buf_puts(b, "null");
    return;
  }
  tally_buf_putc(b, '[');
  for (size_t k = 0; k < side->nsubtasks; k++) {
    if (k > 0)
      tally_buf_putc(b, ',');
    tally_json_num(b, side->subtasks[k]);
  }
  tally_buf_putc(b, ']');
}

static void random_side(tally_score_side_t *side, unsigned nsubtasks) {
  side->nsubtasks = nsubtasks;
  if (nsubtasks == 0) {
    side->score = random_score();
    return;
  }
  side->subtasks = calloc(nsubtasks, sizeof(double));
  cr_assert(side->subtasks != NULL);
  side->score = 0.0;
  for (unsigned k = 0; k < nsubtasks; k++) {
    side->subtasks[k] = random_score();
    side->score += side->subtasks[k];
  }
}

typedef struct {
  char id[16];
  tally_submission_t s;
} sub_t;

static int by_time_then_id(const void *a, const void *b) {
  const sub_t *x = a, *y = b;
  if (x->s.timestamp != y->s.timestamp)
    return x->s.timestamp < y->s.timestamp ? -1 : 1;
  return strcmp(x->id, y->id);
}

static void expect_same(const char *text, double want, const char *what,
                        unsigned p) {
  double got = strtod(text, NULL);
  cr_expect(memcmp(&got, &want, sizeof(got)) == 0,
            "participant %u: %s: Lua %s, C %.17g", p, what, text, want);
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, want);
  cr_expect_str_eq(text, b.data, "participant %u: %s written", p, what);
  tally_buf_close(&b);
}

Test(taskscore_lua, agrees_with_tally_task_score_for_random_participants) {
  static const char *const mode_names[] = {"max_subtask", "max",
                                           "max_tokened_last"};
  static const tally_score_mode_t modes[] = {
      TALLY_MODE_MAX_SUBTASK, TALLY_MODE_MAX, TALLY_MODE_MAX_TOKENED_LAST};
  char sha[64];
  load_harness(sha);
  unsigned partials = 0, nonzero = 0;
  for (unsigned p = 0; p < 2000; p++) {
    unsigned m = p % 3;
    bool none = below(2) == 0;
    int precision = (int)below(7);
    unsigned n = below(9);
    sub_t subs[8];
    /* Distinct ids in random order, so that ties in timestamps are
     * broken by id, not by the order given. */
    unsigned first = below(90);
    for (unsigned i = 0; i < n; i++) {
      sub_t *x = &subs[i];
      snprintf(x->id, sizeof(x->id), "s%02u", (first + i * 37) % 100);
      tally_submission_init(&x->s);
      x->s.timestamp = below(4) + (below(3) == 0 ? 0.5 : 0.0);
      x->s.official = below(8) != 0;
      x->s.tokened = below(3) == 0;
      x->s.scored = below(7) != 0;
      if (!x->s.scored)
        continue;
      if (below(10) == 0) {
        x->s.priv.not_compiled = x->s.pub.not_compiled = true;
        continue;
      }
      random_side(&x->s.priv, below(2) ? 1 + below(4) : 0);
      random_side(&x->s.pub, below(2) ? 1 + below(4) : 0);
    }
    /* The pt hash as HGETALL reads it: id, tokened flag and summary. One
     * participant in four has "official" first, which the library reads
     * by decoding the summary rather than by its member order. */
    bool reordered = p % 4 == 3;
    const char *argv[3 + 16];
    size_t argvlen[3 + 16];
    tally_buf_t texts[8];
    argv[0] = "EVALSHA";
    argv[1] = sha;
    argv[2] = "0";
    for (unsigned i = 0; i < n; i++) {
      const sub_t *x = &subs[i];
      tally_buf_t *b = &texts[i];
      tally_buf_init(b);
      tally_buf_puts(b, x->s.tokened ? "1" : "0");
      tally_buf_puts(b, "{\"submission\":");
      tally_json_str(b, x->id);
      tally_buf_puts(b, ",\"participant\":\"u\",\"contest\":\"c\","
                        "\"task\":\"t\"");
      if (reordered)
        tally_buf_puts(b, x->s.official ? ",\"official\":true"
                                        : ",\"official\":false");
      tally_buf_puts(b, ",\"timestamp\":");
      tally_json_num(b, x->s.timestamp);
      if (!reordered)
        tally_buf_puts(b, x->s.official ? ",\"official\":true"
                                        : ",\"official\":false");
      if (!x->s.scored) {
        tally_buf_puts(b, ",\"scored\":false}");
      } else {
        tally_buf_puts(b, ",\"tokened\":false,\"version\":\"v\","
                          "\"score_mode\":\"");
        tally_buf_puts(b, mode_names[m]);
        tally_buf_puts(b, "\",\"score_precision\":");
        tally_json_num(b, precision);
        tally_buf_puts(b, none ? ",\"score_rounding\":\"none\""
                               : ",\"score_rounding\":\"subtask\"");
        tally_buf_puts(b, ",\"score\":");
        tally_json_num(b, x->s.priv.score);
        tally_buf_puts(b, ",\"public_score\":");
        tally_json_num(b, x->s.pub.score);
        tally_buf_puts(b, ",\"max_score\":100,\"max_public_score\":100,"
                          "\"compiled\":");
        tally_buf_puts(b, x->s.priv.not_compiled ? "false" : "true");
        tally_buf_puts(b, ",\"subtasks\":");
        put_subtasks(b, &x->s.priv);
        tally_buf_puts(b, ",\"public_subtasks\":");
        put_subtasks(b, &x->s.pub);
        tally_buf_putc(b, '}');
      }
      argv[3 + 2 * i] = x->id;
      argvlen[3 + 2 * i] = strlen(x->id);
      argv[4 + 2 * i] = b->data;
      argvlen[4 + 2 * i] = b->len;
    }
    for (int i = 0; i < 3; i++)
      argvlen[i] = strlen(argv[i]);
    redisReply *r = redisCommandArgv(c, 3 + 2 * (int)n, argv, argvlen);
    cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 4,
              "participant %u: %s", p, r ? r->str : "no reply");

    qsort(subs, n, sizeof(subs[0]), by_time_then_id);
    tally_submission_t sorted[8];
    for (unsigned i = 0; i < n; i++)
      sorted[i] = subs[i].s;
    tally_task_score_t want;
    cr_assert_eq(tally_task_score(modes[m], precision,
                                  none ? TALLY_ROUND_NONE : TALLY_ROUND_SUBTASK,
                                  sorted, n, &want),
                 0);
    expect_same(r->element[0]->str, want.score, "score", p);
    expect_same(r->element[1]->str, want.public_score, "public score", p);
    cr_expect_eq(r->element[2]->integer, want.partial, "participant %u", p);
    cr_expect_eq((size_t)r->element[3]->integer, want.submissions,
                 "participant %u", p);
    partials += want.partial;
    nonzero += want.score != 0.0;
    freeReplyObject(r);
    for (unsigned i = 0; i < n; i++) {
      tally_buf_close(&texts[i]);
      tally_submission_close(&subs[i].s);
    }
  }
  cr_expect_gt(partials, 100, "the cases cover partial scores");
  cr_expect_gt(nonzero, 1000, "and scores that are not 0");
}

Test(taskscore_lua, writes_numbers_as_the_worker_does) {
  static const char script[] = "local out = {}\n"
                               "for i = 1, #ARGV do\n"
                               "  out[i] = num(tonumber(ARGV[i]))\n"
                               "end\n"
                               "return out\n";
  size_t n = strlen(tally_lua_lib) + sizeof(script);
  char *src = malloc(n);
  cr_assert(src != NULL);
  snprintf(src, n, "%s%s", tally_lua_lib, script);
  enum { N = 500 };
  const char *argv[3 + N];
  size_t argvlen[3 + N];
  char texts[N][32];
  double values[N];
  static const double fixed[] = {20,   0.1,     0.30000000000000004,
                                 1e21, 1e-7,    -2.5,
                                 1e15, 123.456, 9007199254740993.0};
  for (int i = 0; i < N; i++) {
    double v;
    if (i < (int)(sizeof(fixed) / sizeof(fixed[0]))) {
      v = fixed[i];
    } else if (i % 3 == 0) {
      uint64_t bits = rnd();
      memcpy(&v, &bits, sizeof(v));
      if (!isfinite(v))
        v = 1.0;
    } else {
      v = random_score() * (i % 2 ? 1 : -1);
    }
    values[i] = v;
    snprintf(texts[i], sizeof(texts[i]), "%.17g", v);
    argv[3 + i] = texts[i];
    argvlen[3 + i] = strlen(texts[i]);
  }
  argv[0] = "EVAL";
  argv[1] = src;
  argv[2] = "0";
  for (int i = 0; i < 3; i++)
    argvlen[i] = strlen(argv[i]);
  redisReply *r = redisCommandArgv(c, 3 + N, argv, argvlen);
  free(src);
  cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == N);
  for (int i = 0; i < N; i++) {
    tally_buf_t b;
    tally_buf_init(&b);
    tally_json_num(&b, values[i]);
    cr_expect_str_eq(r->element[i]->str, b.data, "%.17g", values[i]);
    tally_buf_close(&b);
  }
  cr_expect_str_eq(r->element[0]->str, "20");
  cr_expect_str_eq(r->element[2]->str, "0.30000000000000004");
  freeReplyObject(r);
}

Test(taskscore_lua, writes_strings_as_the_scripts_cjson_does) {
  /* Every byte alone, then random strings of them: the direct post's
   * event (tally_place_direct) must be the bytes publish would write. */
  enum { N = 256 + 200 };
  const char *argv[3 + N];
  size_t argvlen[3 + N];
  char texts[N][24];
  for (int i = 0; i < N; i++) {
    size_t len = i < 256 ? 1 : 1 + below(23);
    for (size_t k = 0; k < len; k++)
      texts[i][k] = (char)(i < 256 ? i : (int)below(256));
    argv[3 + i] = texts[i];
    argvlen[3 + i] = len;
  }
  argv[0] = "EVAL";
  argv[1] = "local out = {}\n"
            "for i = 1, #ARGV do out[i] = cjson.encode(ARGV[i]) end\n"
            "return out\n";
  argv[2] = "0";
  for (int i = 0; i < 3; i++)
    argvlen[i] = strlen(argv[i]);
  redisReply *r = redisCommandArgv(c, 3 + N, argv, argvlen);
  cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == N);
  for (int i = 0; i < N; i++) {
    tally_buf_t b;
    tally_buf_init(&b);
    tally_lua_json_str(&b, argv[3 + i], argvlen[3 + i]);
    cr_expect(b.len == r->element[i]->len &&
                  memcmp(b.data, r->element[i]->str, b.len) == 0,
              "string %d: %.*s against cjson's %s", i, (int)b.len, b.data,
              r->element[i]->str);
    tally_buf_close(&b);
  }
  freeReplyObject(r);
}

/* ---- The post script's fast path against the full recompute ---------- */

/* A task's config as its summaries carry it. */
typedef struct {
  unsigned mode;
  int precision;
  bool none;
} fp_config_t;

/* One participant with two tasks, t0 and t1: two places. */
typedef struct {
  unsigned user;
  fp_config_t config[2];
  int task_of[100]; /* submission k: -1 unknown, else its task */
  unsigned steps;
} fp_user_t;

static unsigned fp_posts, fp_new_scored, fp_pre_sent, fp_pre_taken, fp_pre_off,
    fp_direct_sent, fp_behind, fp_whole, fp_whole_left;

/* Delivers job to consumer "a" of the streams of prefix and posts one
 * item for it through the real post script, with pre (NULL: none);
 * returns the reply. */
static redisReply *fp_send(const char *prefix, const char *post_sha,
                           const char *job, const char *kind, const char *body,
                           const char *record, const tally_post_extra_t *x,
                           const tally_post_pre_t *pre) {
  redisReply *r = redisCommand(c, "XADD %s:jobs * job %s", prefix, job);
  cr_assert(r && r->type == REDIS_REPLY_STRING);
  char id[64];
  snprintf(id, sizeof(id), "%s", r->str);
  freeReplyObject(r);
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd a COUNT 10 STREAMS %s:jobs >", prefix));
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, post_sha, prefix, "a");
  cr_assert_eq(tally_call_post_pre(call, id, 1, kind, body, strlen(body),
                                   record, x, pre),
               0);
  r = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  free(call);
  cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "%s",
            r && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
  return r;
}

/* Posts one item for job through the real post script, with pre (NULL:
 * none) as tallyd computed it, under prefix "tally"; and the same under
 * prefix "ref" with no pre, so that the script's own computation is
 * there to compare with (fp_same_state). Returns the item's code. A pre
 * the script took is counted. */
static long long fp_post_pre(const char *post_sha, const char *job,
                             const char *kind, const char *body,
                             const char *record, const tally_post_extra_t *x,
                             const tally_post_pre_t *pre) {
  redisReply *r = fp_send("tally", post_sha, job, kind, body, record, x, pre);
  long long code = r->element[0]->integer;
  const redisReply *cache = r->element[1];
  if (pre != NULL && cache->len == pre->cache_len &&
      memcmp(cache->str, pre->cache, cache->len) == 0)
    fp_pre_taken++;
  freeReplyObject(r);
  char ref[128] = "";
  if (record != NULL && record[0] != '\0') {
    cr_assert(strncmp(record, "tally:", 6) == 0);
    snprintf(ref, sizeof(ref), "ref:%s", record + 6);
  }
  r = fp_send("ref", post_sha, job, kind, body, record ? ref : NULL, x, NULL);
  cr_assert_eq(r->element[0]->integer, code, "%s: code %lld, by Lua %lld", kind,
               code, r->element[0]->integer);
  freeReplyObject(r);
  fp_posts++;
  return code;
}

static long long fp_post(const char *post_sha, const char *job,
                         const char *kind, const char *body, const char *record,
                         const tally_post_extra_t *x) {
  return fp_post_pre(post_sha, job, kind, body, record, x, NULL);
}

/* A timestamp for step s: mostly about s, so that most new submissions
 * are the newest, but often earlier, and with ties. */
static double fp_timestamp(unsigned s) {
  if (below(4) == 0)
    return below(2 * s + 2) + (below(3) == 0 ? 0.5 : 0.0);
  return s + below(3) + (below(4) == 0 ? 0.5 : 0.0);
}

/* Posts submission k of u to task t, scored with a random result under
 * t's config; sometimes with its members in another order. */
static void fp_post_result(const char *post_sha, fp_user_t *u, unsigned k,
                           int t) {
  static const char *const mode_names[] = {"max_subtask", "max",
                                           "max_tokened_last"};
  const fp_config_t *cf = &u->config[t];
  char S[32], job[256], rec[64];
  snprintf(S, sizeof(S), "u%u-%02u", u->user, k);
  double ts = fp_timestamp(u->steps);
  bool official = below(6) != 0, tokened = below(6) == 0;
  bool failed = below(10) == 0, reordered = below(8) == 0;
  bool unscored = below(20) == 0;
  snprintf(job, sizeof(job),
           "{\"submission\":\"%s\",\"participant\":\"u%u\",\"task\":\"t%d\","
           "\"contest\":\"c\",\"timestamp\":%.17g}",
           S, u->user, t, ts);
  snprintf(rec, sizeof(rec), "tally:submission:%s", S);
  tally_submission_t s;
  tally_submission_init(&s);
  /* A compilation failure scores 0, but the scripts must add nothing of
   * one whatever its scores: half of them carry some. */
  if (!failed || below(2)) {
    random_side(&s.priv, below(2) ? 1 + below(4) : 0);
    random_side(&s.pub, below(2) ? 1 + below(4) : 0);
  }
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, "{\"submission\":");
  tally_json_str(&b, S);
  char mid[128];
  snprintf(mid, sizeof(mid),
           ",\"participant\":\"u%u\",\"contest\":\"c\",\"task\":\"t%d\"%s",
           u->user, t,
           !reordered ? ""
           : official ? ",\"official\":true"
                      : ",\"official\":false");
  tally_buf_puts(&b, mid);
  tally_buf_puts(&b, ",\"timestamp\":");
  tally_json_num(&b, ts);
  if (!reordered)
    tally_buf_puts(&b, official ? ",\"official\":true" : ",\"official\":false");
  if (unscored) {
    /* A summary without scores counts 0 and makes the task partial. */
    tally_buf_puts(&b, ",\"scored\":false}");
  } else {
    tally_buf_puts(&b, tokened ? ",\"tokened\":true" : ",\"tokened\":false");
    tally_buf_puts(&b, ",\"version\":\"v\",\"score_mode\":\"");
    tally_buf_puts(&b, mode_names[cf->mode]);
    tally_buf_puts(&b, "\",\"score_precision\":");
    tally_json_num(&b, cf->precision);
    tally_buf_puts(&b, cf->none ? ",\"score_rounding\":\"none\""
                                : ",\"score_rounding\":\"subtask\"");
    tally_buf_puts(&b, ",\"score\":");
    tally_json_num(&b, s.priv.score);
    tally_buf_puts(&b, ",\"public_score\":");
    tally_json_num(&b, s.pub.score);
    tally_buf_puts(&b, ",\"max_score\":100,\"max_public_score\":100,"
                       "\"compiled\":");
    tally_buf_puts(&b, failed ? "false" : "true");
    tally_buf_puts(&b, ",\"subtasks\":");
    put_subtasks(&b, &s.priv);
    tally_buf_puts(&b, ",\"public_subtasks\":");
    put_subtasks(&b, &s.pub);
    tally_buf_putc(&b, '}');
  }
  cr_assert(!b.oom);
  if (u->task_of[k] < 0 && !unscored)
    fp_new_scored++;
  tally_post_extra_t x = {b.data, b.len, "", 0, "", 0};
  /* Most results carry their task score as tallyd computes it
   * (contest/placecalc.c) from the place cache found now; some of those
   * from a cache one byte off, which the script must not take. Either
   * way fp_check then compares the place with a full recompute. */
  tally_place_calc_t pc;
  tally_place_calc_init(&pc);
  tally_place_direct_t pd;
  tally_texts_init(&pd);
  tally_post_pre_t pre = {0}, *pp = NULL;
  redisReply *old = redisCommand(c, "GET tally:{c}:ptagg:u%u:t%d", u->user, t);
  cr_assert(old != NULL);
  if (old->type == REDIS_REPLY_STRING && below(4) != 0 &&
      tally_place_add(old->str, old->len, S, b.data, b.len, &pc) == 0) {
    if (below(8) == 0) {
      old->str[old->len - 1] ^= 1;
      fp_pre_off++;
    }
    pre = (tally_post_pre_t){.expect = old->str,
                             .cache = pc.cache.data,
                             .score = pc.score.data,
                             .meta = pc.meta.data,
                             .expect_len = old->len,
                             .cache_len = pc.cache.len,
                             .score_len = pc.score.len,
                             .meta_len = pc.meta.len};
    /* Most of them as a direct post (tally_place_direct). */
    if (below(4) != 0 &&
        tally_place_direct(b.data, b.len, S, "tally", "", 0, &pc, &pd) == 0) {
      for (int i = 0; i < TALLY_POST_DIRECT_ARGS; i++) {
        pre.direct[i] = pd.buf.data + pd.off[i];
        pre.direct_len[i] = pd.len[i];
      }
      fp_direct_sent++;
    }
    pp = &pre;
    fp_pre_sent++;
  }
  fp_post_pre(post_sha, job, "result", "{\"score\":1}", rec, &x, pp);
  freeReplyObject(old);
  tally_place_calc_close(&pc);
  tally_texts_close(&pd);
  tally_buf_close(&b);
  tally_submission_close(&s);
  u->task_of[k] = t;
}

/* Dead-letters a scoring job for submission k of u on task t. */
static void fp_post_dead(const char *post_sha, fp_user_t *u, unsigned k,
                         int t) {
  char job[256];
  snprintf(job, sizeof(job),
           "{\"submission\":\"u%u-%02u\",\"participant\":\"u%u\","
           "\"task\":\"t%d\",\"contest\":\"c\",\"timestamp\":%.17g,"
           "\"official\":%s}",
           u->user, k, u->user, t, fp_timestamp(u->steps),
           below(6) ? "true" : "false");
  fp_post(post_sha, job, "dead", "no such task", NULL, NULL);
  u->task_of[k] = t;
}

/* A token on submission k of u, scored or not yet posted. */
static void fp_post_token(const char *post_sha, fp_user_t *u, unsigned k) {
  char job[128], body[128], rec[64];
  snprintf(job, sizeof(job), "{\"type\":\"token\",\"submission\":\"u%u-%02u\"}",
           u->user, k);
  snprintf(body, sizeof(body),
           "{\"submission\":\"u%u-%02u\",\"participant\":\"u%u\"}", u->user, k,
           u->user);
  snprintf(rec, sizeof(rec), "tally:submission:u%u-%02u", u->user, k);
  fp_post(post_sha, job, "token", body, rec, NULL);
}

/* Checks that place (u, t) holds what a full recompute stores: the task
 * score, bit for bit (num writes every double as its own text), and the
 * place cache. Returns whether the place holds any submission. */
static bool fp_check(const char *recompute_sha, const fp_user_t *u, int t) {
  redisReply *flat =
      redisCommand(c, "HGETALL tally:{c}:pt:u%u:t%d", u->user, t);
  cr_assert(flat && flat->type == REDIS_REPLY_ARRAY);
  redisReply *want = tr_recompute(c, recompute_sha, flat);
  cr_assert_not_null(want, "the recompute harness");
  redisReply *got =
      redisCommand(c, "HGET tally:{c}:taskscores:u%u t%d", u->user, t);
  redisReply *cache =
      redisCommand(c, "GET tally:{c}:ptagg:u%u:t%d", u->user, t);
  const redisReply *ws = want->element[0], *wc = want->element[1];
  cr_assert_eq(got->type, ws->type, "u%u t%d step %u: task score %s, want %s",
               u->user, t, u->steps, got->str, ws->str);
  if (ws->type == REDIS_REPLY_STRING)
    cr_assert_str_eq(got->str, ws->str, "u%u t%d step %u", u->user, t,
                     u->steps);
  cr_assert_eq(cache->type, wc->type, "u%u t%d step %u: cache %s, want %s",
               u->user, t, u->steps, cache->str, wc->str);
  if (wc->type == REDIS_REPLY_STRING)
    cr_assert(cache->len == wc->len &&
                  memcmp(cache->str, wc->str, wc->len) == 0,
              "u%u t%d step %u: cache\n%s\nwant\n%s", u->user, t, u->steps,
              cache->str, wc->str);
  /* The whole place computed in C from the same fields, as tally rescore
   * does (tally_place_whole), is the same task score and cache, or left
   * to the script. */
  tally_place_member_t *m = calloc(flat->elements / 2 + 1, sizeof(*m));
  cr_assert(m != NULL);
  for (size_t i = 0; i + 1 < flat->elements; i += 2)
    m[i / 2] =
        (tally_place_member_t){.id = flat->element[i]->str,
                               .summary = flat->element[i + 1]->str + 1,
                               .len = flat->element[i + 1]->len - 1,
                               .tokened = flat->element[i + 1]->str[0] == '1'};
  tally_place_calc_t pc;
  tally_place_calc_init(&pc);
  tally_place_id_t id;
  if (tally_place_whole(m, flat->elements / 2, &id, &pc) == 0) {
    fp_whole++;
    cr_assert_eq(ws->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(pc.score.data, ws->str, "u%u t%d step %u: whole place",
                     u->user, t, u->steps);
    cr_assert(wc->type == REDIS_REPLY_STRING && pc.cache.len == wc->len &&
                  memcmp(pc.cache.data, wc->str, wc->len) == 0,
              "u%u t%d step %u: whole place's cache", u->user, t, u->steps);
    cJSON *j = cJSON_Parse(ws->str);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "public_score");
    bool part = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "partial"));
    cr_assert(pc.meta.len > 1 && pc.meta.data[0] == (part ? '1' : '0') &&
                  strtod(pc.meta.data + 1, NULL) == ps->valuedouble,
              "u%u t%d step %u: meta %s", u->user, t, u->steps, pc.meta.data);
    cJSON_Delete(j);
    char pk[32];
    snprintf(pk, sizeof(pk), "u%u", u->user);
    cr_assert_str_eq(id.participant, pk);
    tally_place_id_free(&id);
  } else if (wc->type == REDIS_REPLY_STRING) {
    fp_whole_left++;
  }
  tally_place_calc_close(&pc);
  free(m);
  /* The frozen board's C computation (contest/frozen.c), with a freeze
   * after everything, gives the same public task score. */
  double fs = 0;
  bool fp = false;
  bool fgot = tally_frozen_score(flat, INFINITY, &fs, &fp);
  cr_assert_eq(fgot, ws->type == REDIS_REPLY_STRING, "u%u t%d step %u", u->user,
               t, u->steps);
  if (fgot) {
    cJSON *j = cJSON_Parse(ws->str);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "public_score");
    cr_assert(cJSON_IsNumber(ps) && ps->valuedouble == fs,
              "u%u t%d step %u: frozen %.17g, live %s", u->user, t, u->steps,
              fs, ws->str);
    cr_assert_eq(fp,
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "partial")),
                 "u%u t%d step %u: partial", u->user, t, u->steps);
    cJSON_Delete(j);
  }
  bool any = flat->elements > 0;
  freeReplyObject(flat);
  freeReplyObject(want);
  freeReplyObject(got);
  freeReplyObject(cache);
  return any;
}

Test(taskscore_lua, the_post_scripts_fast_path_stores_what_a_recompute_does) {
  enum { USERS = 160, STEPS = 30 };
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
  freeReplyObject(redisCommand(c, "XGROUP CREATE ref:jobs tallyd $ MKSTREAM"));
  redisReply *r =
      redisCommand(c, "SCRIPT LOAD %s", tally_scripts[TALLY_SCRIPT_POST]);
  cr_assert(r && r->type == REDIS_REPLY_STRING);
  char post_sha[64], recompute_sha[64];
  snprintf(post_sha, sizeof(post_sha), "%s", r->str);
  freeReplyObject(r);
  cr_assert_eq(tr_recompute_load(c, recompute_sha), 0);
  freeReplyObject(redisCommand(c, "CONFIG RESETSTAT"));
  fp_posts = fp_new_scored = fp_pre_sent = fp_pre_taken = fp_pre_off =
      fp_direct_sent = fp_behind = fp_whole = fp_whole_left = 0;
  unsigned places_with_submissions = 0;
  for (unsigned i = 0; i < USERS; i++) {
    fp_user_t u = {.user = i};
    for (int t = 0; t < 2; t++)
      u.config[t] = (fp_config_t){below(3), (int)below(4), below(3) == 0};
    for (unsigned k = 0; k < 100; k++)
      u.task_of[k] = -1;
    for (u.steps = 0; u.steps < STEPS; u.steps++) {
      unsigned k = below(100), op = below(100);
      int t = (int)below(2);
      if (op < 55 || (op < 75 && u.task_of[k] < 0)) {
        /* A result: mostly new, sometimes one that replaces k's. */
        fp_post_result(post_sha, &u, k, t);
      } else if (op < 75) {
        /* k again, in its place or moved to the other task. */
        fp_post_result(post_sha, &u, k, below(3) ? u.task_of[k] : t);
      } else if (op < 84) {
        fp_post_token(post_sha, &u, k);
      } else if (op < 92) {
        fp_post_dead(post_sha, &u, k, u.task_of[k] < 0 ? t : u.task_of[k]);
      } else if (op < 96) {
        /* The task's config changes: its next summaries carry another
         * mode, precision or rounding. */
        u.config[t] = (fp_config_t){below(3), (int)below(4), below(3) == 0};
      } else {
        /* Another writer takes a submission out of the place behind the
         * script's back; the next new result must not trust the cache. */
        for (unsigned j = 0; j < 100; j++)
          if (u.task_of[j] == t) {
            freeReplyObject(redisCommand(
                c, "HDEL tally:{c}:pt:u%u:t%d u%u-%02u", i, t, i, j));
            freeReplyObject(redisCommand(c, "HDEL ref:{c}:pt:u%u:t%d u%u-%02u",
                                         i, t, i, j));
            fp_behind++;
            break;
          }
        while (u.task_of[k] >= 0)
          k = (k + 1) % 100;
        fp_post_result(post_sha, &u, k, t);
      }
      for (int p = 0; p < 2; p++)
        fp_check(recompute_sha, &u, p);
    }
    for (int p = 0; p < 2; p++)
      places_with_submissions += fp_check(recompute_sha, &u, p);
  }
  /* HLEN runs only on the fast path, once its cache and summary fit
   * (and in a direct post's checks), under both prefixes. */
  long long fast = tr_command_calls(c, "hlen") / 2;
  cr_log_info("%u posts, %u of new scored submissions, %lld by the fast path",
              fp_posts, fp_new_scored, fast);
  cr_expect_gt(places_with_submissions, USERS);
  /* tally_place_whole computed the places a cache is kept for, but for
   * none at all. */
  cr_log_info("%u places computed whole in C, %u with a cache left to the "
              "script",
              fp_whole, fp_whole_left);
  cr_expect_gt(fp_whole, 1000u);
  cr_expect_eq(fp_whole_left, 0u);
  cr_expect_gt(fast, fp_new_scored / 3,
               "the fast path took %lld of %u new scored submissions", fast,
               fp_new_scored);
  cr_expect_lt(fast, fp_new_scored, "and some of them took a recompute");
  /* Every place given a cache computed from its own ends with that cache
   * (taken, or computed again by the script to the same bytes; that the
   * script takes one is test_contest_scripts'), but after a field was
   * deleted behind the script's back. */
  cr_log_info("%u precomputed, %u of them from a cache one byte off, %u "
              "ending as computed",
              fp_pre_sent, fp_pre_off, fp_pre_taken);
  cr_expect_gt(fp_pre_off, 0);
  cr_expect_geq(fp_pre_taken, fp_pre_sent - fp_pre_off - fp_behind);
  /* What the C computations and the direct posts wrote is what the
   * script computes itself: every key, the records, indexes, rankings,
   * results and events included. */
  char why[1500];
  int diffs = tr_keyspace_diff(c, "tally", "ref", why, sizeof(why));
  cr_expect_eq(diffs, 0, "%d keys differ; %s", diffs, why);
  /* HEXISTS runs only in a direct post whose other checks passed. */
  long long direct = tr_command_calls(c, "hexists");
  cr_log_info("%u direct posts sent, %lld reached their last check",
              fp_direct_sent, direct);
  cr_expect_gt(direct, fp_direct_sent / 3);
  /* Taken or not, the contest and both tasks are in their sets. */
  r = redisCommand(c, "SMEMBERS tally:contests");
  cr_expect(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
            strcmp(r->element[0]->str, "c") == 0);
  freeReplyObject(r);
  r = redisCommand(c, "SCARD tally:{c}:tasks");
  cr_expect(r && r->integer == 2, "the tasks of contest c");
  freeReplyObject(r);
}
