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

/* How a call's whole places are sent (tally_call_rescore_place): not at
 * all, as computed, or with a wrong task score and one thing the script
 * must refuse it for (or none: then the wrong score is taken). */
typedef enum {
  W_NONE,
  W_RIGHT,
  W_WRONG_ONLY,   /* nothing to refuse it for */
  W_KEPT_REV,     /* a kept field's rev is not the one stored */
  W_KEPT_TOKENED, /* nor its tokened flag */
  W_FIELDS,       /* a kept field left out */
  W_KEPT_TWICE,   /* a kept field named twice, another left out */
  W_DIRECT,       /* one direct rescore more than the call has */
  W_READ_TOKENED, /* a rescored field was read with the other flag */
  W_KINDS
} whole_t;

static unsigned places_sent;

/* Appends the whole places of the call's direct rescores: each place's
 * fields are the call's submissions that go to it (every one direct) and
 * the others of all[0..nall) stored there, read as tally rescore reads
 * them. how picks what is sent. Returns how many places were, whose
 * texts are in pc and ids (to be freed once the call is sent). */
static int add_places(tally_call_t *call, const char *prefix, const sub_t *subs,
                      int n, const bool *use, tally_rescore_direct_t *d,
                      char (*sums)[1024], const bool *tok, const sub_t *all,
                      int nall, whole_t how, tally_place_calc_t *pc,
                      tally_place_id_t *ids) {
  static tally_place_member_t m[128];
  static char kept_sum[128][1024], kept_rev[128][32];
  static bool kept_tok[128];
  static const char *kept_id[128];
  int np = 0;
  for (int i = 0; i < n; i++) {
    if (!use[i])
      continue;
    bool seen = false;
    for (int j = 0; j < i; j++)
      seen = seen || (use[j] && subs[j].user == subs[i].user &&
                      subs[j].task == subs[i].task);
    if (seen)
      continue;
    int nm = 0, direct = 0, nkept = 0;
    bool ok = true;
    tally_place_id_t want;
    cr_assert_eq(tally_place_id(sums[i], strlen(sums[i]), &want), 0);
    for (int j = 0; j < n; j++) {
      if (subs[j].user != subs[i].user || subs[j].task != subs[i].task)
        continue;
      ok = ok && use[j];
      m[nm++] =
          (tally_place_member_t){subs[j].id, sums[j], strlen(sums[j]), tok[j]};
      direct++;
    }
    for (int j = 0; ok && j < nall; j++) {
      if (all[j].id[0] == '\0' || (&all[j] >= subs && &all[j] < subs + n))
        continue;
      redisReply *h = redisCommand(
          c, "HMGET %s:submission:%s summary rev tokened", prefix, all[j].id);
      tally_place_id_t at;
      if (h->element[0]->type == REDIS_REPLY_STRING &&
          tally_place_id(h->element[0]->str, h->element[0]->len, &at) == 0) {
        if (strcmp(at.participant, want.participant) == 0 &&
            strcmp(at.task, want.task) == 0) {
          snprintf(kept_sum[nkept], sizeof(kept_sum[0]), "%s",
                   h->element[0]->str);
          snprintf(kept_rev[nkept], sizeof(kept_rev[0]), "%s",
                   h->element[1]->type == REDIS_REPLY_STRING
                       ? h->element[1]->str
                       : "0");
          kept_tok[nkept] = h->element[2]->type == REDIS_REPLY_STRING &&
                            strcmp(h->element[2]->str, "1") == 0;
          kept_id[nkept] = all[j].id;
          m[nm++] =
              (tally_place_member_t){all[j].id, kept_sum[nkept],
                                     strlen(kept_sum[nkept]), kept_tok[nkept]};
          nkept++;
        }
        tally_place_id_free(&at);
      }
      freeReplyObject(h);
    }
    tally_place_id_free(&want);
    tally_place_calc_init(&pc[np]);
    if (!ok || tally_place_whole(m, (size_t)nm, &ids[np], &pc[np]) != 0) {
      tally_place_calc_close(&pc[np]);
      continue;
    }
    whole_t w = how;
    if ((w == W_KEPT_REV || w == W_KEPT_TOKENED || w == W_FIELDS) && nkept == 0)
      w = W_DIRECT;
    if (w == W_KEPT_TWICE && nkept < 2)
      w = W_DIRECT;
    if (w >= W_WRONG_ONLY) {
      tally_buf_reset(&pc[np].score);
      tally_buf_puts(&pc[np].score, "{\"score\":-7,\"public_score\":-7,"
                                    "\"partial\":false,\"submissions\":7}");
    }
    if (w == W_KEPT_REV)
      snprintf(kept_rev[0], sizeof(kept_rev[0]), "%d", atoi(kept_rev[0]) + 1);
    if (w == W_KEPT_TOKENED)
      kept_tok[0] = !kept_tok[0];
    if (w == W_KEPT_TWICE) {
      kept_id[1] = kept_id[0];
      snprintf(kept_rev[1], sizeof(kept_rev[1]), "%s", kept_rev[0]);
      kept_tok[1] = kept_tok[0];
    }
    if (w == W_READ_TOKENED) {
      char *moved = d[i].buf.data + d[i].off[TALLY_RDIRECT_MOVED];
      moved[2] = moved[2] == '1' ? '0' : '1';
    }
    tally_place_calc_t *p = &pc[np];
    cr_assert_eq(tally_call_rescore_place(
                     call, ids[np].contest, ids[np].participant, ids[np].task,
                     (unsigned)(direct + (w == W_DIRECT)), p->score.data,
                     p->score.len, p->cache.data, p->cache.len, p->meta.data,
                     p->meta.len, (unsigned)(nkept - (w == W_FIELDS))),
                 0);
    for (int k = w == W_FIELDS ? 1 : 0; k < nkept; k++)
      tally_call_rescore_kept(call, kept_id[k], kept_rev[k], kept_tok[k]);
    np++;
    places_sent++;
  }
  return np;
}

/* Rescores subs[0..n) to their new summaries under prefix in one call,
 * with the direct texts where they apply when direct, and the whole
 * places of the call as how says (the others of all[0..nall) are their
 * kept fields); returns how many were sent direct, and the codes in
 * codes. */
static int rescore(const char *prefix, const sub_t *subs, int n, bool direct,
                   whole_t how, const sub_t *all, int nall, long long *codes) {
  static tally_rescore_direct_t d[64];
  static char sums[64][1024];
  static char revs[64][32];
  bool use[64], tok[64];
  tally_call_t *call = malloc(sizeof(*call));
  cr_assert(call != NULL && n <= 64);
  tally_call_rescore_begin(call, NULL, prefix);
  int sent = 0;
  for (int i = 0; i < n; i++) {
    const sub_t *s = &subs[i];
    summary_of(s, sums[i], sizeof(sums[i]));
    redisReply *h = redisCommand(
        c,
        "HMGET %s:submission:%s rev summary scored score public_score tokened",
        prefix, s->id);
    cr_assert(h && h->type == REDIS_REPLY_ARRAY && h->elements == 6);
    const char *f[6];
    for (int k = 0; k < 6; k++)
      f[k] =
          h->element[k]->type == REDIS_REPLY_STRING ? h->element[k]->str : NULL;
    snprintf(revs[i], sizeof(revs[i]), "%s", f[0] ? f[0] : "");
    tok[i] = f[5] != NULL && strcmp(f[5], "1") == 0;
    tally_rescore_old_t old;
    const char *texts[TALLY_RESCORE_DIRECT_ARGS];
    size_t lens[TALLY_RESCORE_DIRECT_ARGS];
    use[i] = false;
    tally_texts_init(&d[i]);
    if (direct && !s->unscored &&
        tally_rescore_direct_applies(sums[i], strlen(sums[i]), f[1],
                                     f[1] ? h->element[1]->len : 0, f[2], f[3],
                                     f[4], &old) &&
        (old.tokened = tok[i], tally_rescore_direct(sums[i], strlen(sums[i]),
                                                    s->id, &old, &d[i]) == 0)) {
      for (int k = 0; k < TALLY_RESCORE_DIRECT_ARGS; k++) {
        texts[k] = d[i].buf.data + d[i].off[k];
        lens[k] = d[i].len[k];
      }
      use[i] = true;
      sent++;
    }
    freeReplyObject(h);
    cr_assert_eq(tally_call_rescore_direct(
                     call, s->id, revs[i], s->unscored ? "" : sums[i],
                     s->unscored ? 0 : strlen(sums[i]),
                     s->unscored ? "cannot score" : "", use[i] ? texts : NULL,
                     use[i] ? lens : NULL),
                 0);
  }
  tally_place_calc_t pc[64];
  tally_place_id_t ids[64];
  int np = how == W_NONE ? 0
                         : add_places(call, prefix, subs, n, use, d, sums, tok,
                                      all, nall, how, pc, ids);
  redisReply *r = run_call(call);
  for (int i = 0; i < np; i++) {
    tally_place_calc_close(&pc[i]);
    tally_place_id_free(&ids[i]);
  }
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
  enum { N = 48, ROUNDS = 24 };
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
      /* Mostly the whole places as computed; else each wrong with a
       * reason to refuse it. */
      static unsigned turn;
      turn++;
      whole_t how =
          turn % 2 ? W_RIGHT
                   : (whole_t)(W_KEPT_REV + turn / 2 % (W_KINDS - W_KEPT_REV));
      direct += rescore("tally", subs + from, 16, true, how, subs, N, ca);
      rescore("ref", subs + from, 16, false, W_NONE, subs, N, cb);
      total += 16;
      for (int i = 0; i < 16; i++)
        cr_assert_eq(ca[i], cb[i], "%s: code %lld, by Lua %lld",
                     subs[from + i].id, ca[i], cb[i]);
    }
    int diffs = tr_keyspace_diff(c, "tally", "ref", why, sizeof(why));
    cr_assert_eq(diffs, 0, "round %d: %d keys differ; %s", round, diffs, why);
  }
  cr_log_info("%d of %d rescored submissions sent direct, %u whole places",
              direct, total, places_sent);
  cr_expect_gt(direct, total / 3);
  cr_expect_gt(places_sent, 50u);
}

/* The control for the refusals above: a wrong task score with nothing to
 * refuse it for is taken, so the script does read the whole places. */
Test(rescore_direct, takes_a_whole_place_that_is_as_assumed) {
  enum { N = 8 };
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
  sub_t subs[N];
  for (int i = 0; i < N; i++) {
    subs[i] = (sub_t){.task = i % 2, .score = 10.0 * i, .pub = 1};
    snprintf(subs[i].id, sizeof(subs[i].id), "w%02d", i);
    post("tally", &subs[i]);
  }
  for (int i = 0; i < 4; i++)
    subs[i].score += 1;
  long long codes[N];
  places_sent = 0;
  cr_assert_eq(rescore("tally", subs, 4, true, W_WRONG_ONLY, subs, N, codes),
               4);
  cr_assert_eq(places_sent, 2u);
  for (int t = 0; t < 2; t++) {
    redisReply *r =
        redisCommand(c, "HGET tally:{c}:taskscores:u1 %s", tasks[t]);
    cr_assert(r && r->type == REDIS_REPLY_STRING, "task %d", t);
    cr_expect(strncmp(r->str, "{\"score\":-7,", 12) == 0, "%s", r->str);
    freeReplyObject(r);
  }
}
