/* The direct rescore (docs/contest.md, "The direct rescore"): a rescored
 * submission whose texts tally rescore made (contest/rescoredirect.h) must
 * leave Redis exactly as the rescore script leaves it computing them
 * itself. Random submissions are posted under prefixes "tally" and "ref"
 * alike, some tokened, some not scored; then rescored in rounds, under
 * "tally" with the direct texts wherever they apply and under "ref"
 * without, with new scores, versions, places, unchanged scores, odd ids;
 * and the two keyspaces are compared after every round. */
#include "contest/rescoredirect.h"
#include "keyspace.h"
#include "redis/scripts.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
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

TestSuite(rescore_direct, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t seed = 0x2545f4914f6cdd1dULL;

static unsigned below(unsigned n) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return (unsigned)(seed % n);
}

/* Participants and tasks, some with characters the keys encode or JSON
 * escapes (as JSON string bodies). */
static const char *const users[] = {"u1", "u:2%", "\\\"q\\/", "é"};
static const char *const tasks[] = {"t1", "t:2"};
static const char *const versions[] = {"v1", "v2"};

/* One submission as the test knows it. */
typedef struct {
  char id[16];
  int user, task, version;
  double score, pub;
  bool unscored;
} sub_t;

static void summary_of(const sub_t *s, char *buf, size_t len) {
  if (s->unscored) {
    snprintf(buf, len,
             "{\"submission\":\"%s\",\"participant\":\"%s\","
             "\"contest\":\"c\",\"task\":\"%s\",\"timestamp\":1,"
             "\"official\":true,\"tokened\":false,\"scored\":false}",
             s->id, users[s->user], tasks[s->task]);
    return;
  }
  snprintf(buf, len,
           "{\"submission\":\"%s\",\"participant\":\"%s\",\"contest\":\"c\","
           "\"task\":\"%s\",\"timestamp\":1,\"official\":true,"
           "\"tokened\":false,\"version\":\"%s\",\"score_mode\":\"max\","
           "\"score_precision\":2,\"score_rounding\":\"subtask\","
           "\"score\":%.17g,\"public_score\":%.17g,\"max_score\":100,"
           "\"max_public_score\":50,\"compiled\":true,\"subtasks\":null,"
           "\"public_subtasks\":null}",
           s->id, users[s->user], tasks[s->task], versions[s->version],
           s->score, s->pub);
}

static redisReply *run_call(tally_call_t *call) {
  redisReply *r = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "%s",
            r && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
  return r;
}

/* Posts s's result under prefix, as tallyd would (no precomputation). */
static void post(const char *prefix, const sub_t *s) {
  char sum[1024], job[64], rec[64], id[64];
  summary_of(s, sum, sizeof(sum));
  snprintf(job, sizeof(job), "{\"submission\":\"%s\"}", s->id);
  redisReply *x = redisCommand(c, "XADD %s:jobs * job %s", prefix, job);
  cr_assert(x && x->type == REDIS_REPLY_STRING);
  snprintf(id, sizeof(id), "%s", x->str);
  freeReplyObject(x);
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd a COUNT 10 STREAMS %s:jobs >", prefix));
  snprintf(rec, sizeof(rec), "%s:submission:%s", prefix, s->id);
  tally_post_extra_t e = {sum, strlen(sum), "", 0, "-", 1};
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL);
  tally_call_begin(call, TALLY_SCRIPT_POST, NULL, prefix, "a");
  cr_assert_eq(tally_call_post(call, id, 1, s->unscored ? "dead" : "result",
                               s->unscored ? "cannot score" : job,
                               s->unscored ? 12 : strlen(job), rec, &e),
               0);
  freeReplyObject(run_call(call));
  free(call);
}

/* Rescores subs[0..n) to their new summaries under prefix in one call,
 * with the direct texts where they apply when direct; returns how many
 * were sent direct, and the codes in codes. */
static int rescore(const char *prefix, const sub_t *subs, int n, bool direct,
                   long long *codes) {
  static tally_rescore_direct_t d[64];
  static char sums[64][1024];
  static char revs[64][32];
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL && n <= 64);
  tally_call_rescore_begin(call, NULL, prefix);
  int sent = 0;
  for (int i = 0; i < n; i++) {
    const sub_t *s = &subs[i];
    summary_of(s, sums[i], sizeof(sums[i]));
    redisReply *h = redisCommand(
        c, "HMGET %s:submission:%s rev summary scored score public_score",
        prefix, s->id);
    cr_assert(h && h->type == REDIS_REPLY_ARRAY && h->elements == 5);
    const char *f[5];
    for (int k = 0; k < 5; k++)
      f[k] =
          h->element[k]->type == REDIS_REPLY_STRING ? h->element[k]->str : NULL;
    snprintf(revs[i], sizeof(revs[i]), "%s", f[0] ? f[0] : "");
    tally_rescore_old_t old;
    const char *texts[TALLY_RESCORE_DIRECT_ARGS];
    size_t lens[TALLY_RESCORE_DIRECT_ARGS];
    bool use = false;
    tally_texts_init(&d[i]);
    if (direct && !s->unscored &&
        tally_rescore_direct_applies(sums[i], strlen(sums[i]), f[1],
                                     f[1] ? h->element[1]->len : 0, f[2], f[3],
                                     f[4], &old) &&
        tally_rescore_direct(sums[i], strlen(sums[i]), s->id, &old, &d[i]) ==
            0) {
      for (int k = 0; k < TALLY_RESCORE_DIRECT_ARGS; k++) {
        texts[k] = d[i].buf.data + d[i].off[k];
        lens[k] = d[i].len[k];
      }
      use = true;
      sent++;
    }
    freeReplyObject(h);
    cr_assert_eq(tally_call_rescore_direct(
                     call, s->id, revs[i], s->unscored ? "" : sums[i],
                     s->unscored ? 0 : strlen(sums[i]),
                     s->unscored ? "cannot score" : "", use ? texts : NULL,
                     use ? lens : NULL),
                 0);
  }
  redisReply *r = run_call(call);
  free(call);
  cr_assert_eq(r->elements, (size_t)n);
  for (int i = 0; i < n; i++) {
    codes[i] = r->element[i]->integer;
    tally_texts_close(&d[i]);
  }
  freeReplyObject(r);
  return sent;
}

Test(rescore_direct, writes_what_the_script_computes) {
  enum { N = 48, ROUNDS = 12 };
  for (int p = 0; p < 2; p++)
    freeReplyObject(redisCommand(c, "XGROUP CREATE %s:jobs tallyd $ MKSTREAM",
                                 p ? "ref" : "tally"));
  sub_t subs[N];
  for (int i = 0; i < N; i++) {
    subs[i] = (sub_t){.user = (int)below(4),
                      .task = (int)below(2),
                      .score = below(5) * 12.5,
                      .pub = below(3) * 0.1,
                      .unscored = below(8) == 0};
    snprintf(subs[i].id, sizeof(subs[i].id), "s%02d", i);
    post("tally", &subs[i]);
    post("ref", &subs[i]);
    if (below(5) == 0)
      for (int p = 0; p < 2; p++)
        freeReplyObject(redisCommand(c, "HSET %s:submission:%s tokened 1",
                                     p ? "ref" : "tally", subs[i].id));
  }
  char why[1500];
  cr_assert_eq(tr_keyspace_diff(c, "tally", "ref", why, sizeof(why)), 0, "%s",
               why);
  int direct = 0, total = 0;
  for (int round = 0; round < ROUNDS; round++) {
    /* What changes this round: scores (or not), the version, sometimes
     * the place, sometimes a submission that is not scored any more. */
    for (int i = 0; i < N; i++) {
      sub_t *s = &subs[i];
      unsigned what = below(10);
      if (what < 4) {
        s->score = below(5) * 12.5;
        s->pub = below(3) * 0.1 + (below(2) ? 1e-9 : 0);
      } else if (what == 4) {
        s->version = !s->version;
      } else if (what == 5) {
        s->user = (int)below(4);
      } else if (what == 6) {
        s->unscored = !s->unscored;
      }
      /* else: the same scores */
    }
    for (int from = 0; from < N; from += 16) {
      long long ca[16], cb[16];
      direct += rescore("tally", subs + from, 16, true, ca);
      rescore("ref", subs + from, 16, false, cb);
      total += 16;
      for (int i = 0; i < 16; i++)
        cr_assert_eq(ca[i], cb[i], "%s: code %lld, by Lua %lld",
                     subs[from + i].id, ca[i], cb[i]);
    }
    int diffs = tr_keyspace_diff(c, "tally", "ref", why, sizeof(why));
    cr_assert_eq(diffs, 0, "round %d: %d keys differ; %s", round, diffs, why);
  }
  cr_log_info("%d of %d rescored submissions sent direct", direct, total);
  cr_expect_gt(direct, total / 2);
}
