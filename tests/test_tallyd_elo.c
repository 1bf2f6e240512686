/* Elo ratings through tallyd against a real redis-server
 * (docs/challenges.md): matches posted in random order, then replaced,
 * moved, made unofficial, dead-lettered and rescored, must leave every
 * participant's rating, counts, ranking entry, last rating event and
 * `tally ranking --by elo` equal to a replay from scratch of the rated
 * matches with tally_elo_replay. */
#include "cli_fixture.h"
#include "contest/elo.h"
#include "contest/frozen.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WAIT_MS 60000
#define USERS 6
#define PER_USER 36 /* past the 30 matches played at K = 32 */
#define MATCHES (USERS * PER_USER)

static tr_redis_t server;
static redisContext *c;
static td_daemon_t daemon_;
static char tasks[400], dir[64];

#define require(cond, ...) TD_REQUIRE(&daemon_, cond, __VA_ARGS__)

/* Four challenges of one dimension: ["a","b"] wins (1000), ["a","x"]
 * draws (500), ["x","x"] loses (0). */
static const char *const task_names[] = {"t800", "t1100", "t1200", "t1400"};
static const char *const difficulties[] = {"\"newcomer\"", "1100.5",
                                           "\"veteran\"", "\"legendary\""};
static double opponents[] = {800, 1100.5, 1200, 1400};

static void write_task(int t, const char *difficulty) {
  char text[1024], name[64];
  snprintf(text, sizeof(text),
           "{\"name\": \"%s\", \"task_type\": \"answer\", \"scoring\": {"
           "\"type\": \"deterministic\", \"dimensions\": [{\"name\": "
           "\"correctness\", \"weight\": 1, \"primitive\": "
           "\"exact_match_ratio\", \"field\": \"answers\", "
           "\"ground_truth_field\": \"expected\"}]}, \"ground_truth\": "
           "{\"expected\": [\"a\", \"b\"]}, \"difficulty\": %s}",
           task_names[t], difficulty);
  snprintf(name, sizeof(name), "%s.json", task_names[t]);
  td_write_file(tasks, name, text);
}

static void setup(void) {
  memset(&daemon_, 0, sizeof(daemon_));
  tc_setup(dir, sizeof(dir), "tallyd-elo");
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  snprintf(tasks, sizeof(tasks), "%s/tasks", server.dir);
  cr_assert_eq(mkdir(tasks, 0700), 0);
  for (int t = 0; t < 4; t++)
    write_task(t, difficulties[t]);
}

static void teardown(void) {
  td_kill(&daemon_);
  redisFree(c);
  tr_redis_stop(&server);
  tc_teardown();
}

TestSuite(tallyd_elo, .init = setup, .fini = teardown, .timeout = 240);

/* One match as the model holds it. */
typedef struct match_s {
  char id[16];
  int user, task;
  int result; /* 0 loss, 1 draw, 2 win */
  double ts;
  bool verified, memoryless, official;
  int attempt; /* 0: not given */
  bool scored; /* false once dead-lettered */
} match_t;

static match_t matches[MATCHES];

static unsigned long long rng_state;

static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng_state >> 33) % n);
}

static void random_match(match_t *m) {
  m->task = (int)rnd(4);
  m->result = (int)rnd(3);
  m->ts = rnd(4) == 0 ? 1790000000 + rnd(3) : 1790000000 + rnd(400);
  m->verified = rnd(2);
  m->memoryless = rnd(2);
  m->attempt = (int)rnd(3); /* 0 (absent), 1 or 2 */
  m->official = rnd(10) != 0;
  m->scored = true;
}

static void push_match(const match_t *m) {
  static const char *const answers[] = {"[\"x\", \"x\"]", "[\"a\", \"x\"]",
                                        "[\"a\", \"b\"]"};
  char job[1024], attempt[32] = "";
  if (m->attempt > 0)
    snprintf(attempt, sizeof(attempt), ", \"attempt\": %d", m->attempt);
  if (m->scored)
    snprintf(job, sizeof(job),
             "{\"submission\": \"%s\", \"task\": \"%s\", \"participant\": "
             "\"agent-%d\", \"contest\": \"arena\", \"timestamp\": %.17g, "
             "\"official\": %s, \"answer\": {\"answers\": %s}, \"verified\": "
             "%s, \"memoryless\": %s%s}",
             m->id, task_names[m->task], m->user, m->ts,
             m->official ? "true" : "false", answers[m->result],
             m->verified ? "true" : "false", m->memoryless ? "true" : "false",
             attempt);
  else /* decoded, then refused: stored as not scored */
    snprintf(job, sizeof(job),
             "{\"submission\": \"%s\", \"task\": \"%s\", \"participant\": "
             "\"agent-%d\", \"contest\": \"arena\", \"timestamp\": %.17g, "
             "\"answer\": 5}",
             m->id, task_names[m->task], m->user, m->ts);
  td_push(c, job, NULL);
}

/* The replay the model gives for user u, of the matches before freeze. */
static tally_elo_t expected_before(int u, double freeze) {
  tally_elo_match_t ms[MATCHES];
  size_t n = 0;
  for (int k = 0; k < MATCHES; k++) {
    const match_t *m = &matches[k];
    if (m->user != u || !m->official || !m->scored || !(m->ts < freeze))
      continue;
    ms[n++] = (tally_elo_match_t){.timestamp = m->ts,
                                  .submission = m->id,
                                  .score = m->result / 2.0,
                                  .opponent = opponents[m->task],
                                  .verified = m->verified,
                                  .attempt = m->attempt,
                                  .memoryless = m->memoryless};
  }
  tally_elo_t e;
  tally_elo_replay(ms, n, &e);
  return e;
}

/* The replay the model gives for user u. */
static tally_elo_t expected(int u) {
  return expected_before(u, INFINITY);
}

/* The frozen board's replay (contest/frozen.c) of the matches the
 * contest scripts keep, with a freeze after everything and one in the
 * middle, equals the model's. */
static void check_frozen(const char *when, int u) {
  char key[64];
  snprintf(key, sizeof(key), "tally:{arena}:matches:agent-%d", u);
  redisReply *flat = redisCommand(c, "HGETALL %s", key);
  cr_assert(flat && flat->type == REDIS_REPLY_ARRAY);
  const double freezes[] = {INFINITY, 1790000200, 1790000001};
  for (size_t k = 0; k < 3; k++) {
    tally_elo_t want = expected_before(u, freezes[k]), got;
    bool any = tally_frozen_elo(flat, freezes[k], &got);
    cr_expect_eq(any, want.matches > 0, "%s: agent-%d, freeze %g", when, u,
                 freezes[k]);
    cr_expect(got.rating == want.rating && got.matches == want.matches &&
                  got.wins == want.wins && got.draws == want.draws &&
                  got.losses == want.losses,
              "%s: agent-%d, freeze %g: %g %u %u/%u/%u, want %g %u %u/%u/%u",
              when, u, freezes[k], got.rating, got.matches, got.wins, got.draws,
              got.losses, want.rating, want.matches, want.wins, want.draws,
              want.losses);
  }
  freeReplyObject(flat);
}

static long long hget_ll(const char *key, const char *field, bool *found) {
  redisReply *r = redisCommand(c, "HGET %s %s", key, field);
  *found = r && r->type == REDIS_REPLY_STRING;
  long long v = *found ? strtoll(r->str, NULL, 10) : -1;
  freeReplyObject(r);
  return v;
}

/* The rating of the newest rating event of user u on tally:public: -1
 * for none, -2 for one that says the rating went (null). */
static double last_event_rating(int u) {
  char who[64];
  snprintf(who, sizeof(who), "\"participant\":\"agent-%d\"", u);
  redisReply *r = redisCommand(c, "XREVRANGE tally:public + -");
  double v = -1;
  for (size_t i = 0; r && i < r->elements && v == -1; i++) {
    const char *ev = r->element[i]->element[1]->element[1]->str;
    if (strstr(ev, "\"type\":\"rating\"") == NULL || strstr(ev, who) == NULL)
      continue;
    cJSON *j = cJSON_Parse(ev);
    const cJSON *rating = cJSON_GetObjectItem(j, "rating");
    v = cJSON_IsNumber(rating) ? rating->valuedouble : -2;
    cJSON_Delete(j);
  }
  freeReplyObject(r);
  return v;
}

/* Compares every participant's stored rating with the model's replay,
 * and `tally ranking --by elo --json` with both. */
static void check_ratings(const char *when) {
  tc_run_t run =
      tc_run((const char *[]){"ranking", "--redis", server.url, "--contest",
                              "arena", "--by", "elo", "--json", NULL},
             NULL, NULL);
  cr_assert_eq(run.status, 0, "%s: %s", when, run.err);
  cJSON *ranking = cJSON_Parse(run.out);
  cr_assert_not_null(ranking, "%s: %s", when, run.out);
  const cJSON *rows = cJSON_GetObjectItem(ranking, "rows");
  int ranked = 0;
  for (int u = 0; u < USERS; u++) {
    check_frozen(when, u);
    tally_elo_t e = expected(u);
    char key[64], who[32];
    snprintf(key, sizeof(key), "tally:{arena}:elo:agent-%d", u);
    snprintf(who, sizeof(who), "agent-%d", u);
    bool found;
    long long rating = hget_ll(key, "rating", &found);
    if (e.matches == 0) {
      cr_expect(!found, "%s: %s has a rating without matches", when, who);
      cr_expect_eq(last_event_rating(u), -2, "%s: %s", when, who);
      continue;
    }
    ranked++;
    cr_expect(found, "%s: %s has no rating", when, who);
    cr_expect_eq((double)rating, e.rating, "%s: %s rating %lld, replay %g",
                 when, who, rating, e.rating);
    cr_expect_eq(hget_ll(key, "matches", &found), e.matches, "%s: %s", when,
                 who);
    cr_expect_eq(hget_ll(key, "wins", &found), e.wins, "%s: %s", when, who);
    cr_expect_eq(hget_ll(key, "draws", &found), e.draws, "%s: %s", when, who);
    cr_expect_eq(hget_ll(key, "losses", &found), e.losses, "%s: %s", when, who);
    redisReply *z = redisCommand(c, "ZSCORE tally:{arena}:elo %s", who);
    cr_expect(z && z->type == REDIS_REPLY_STRING &&
                  strtod(z->str, NULL) == e.rating,
              "%s: %s in the rating ranking", when, who);
    freeReplyObject(z);
    cr_expect_eq(last_event_rating(u), e.rating, "%s: %s's last event", when,
                 who);
    bool listed = false;
    for (const cJSON *row = rows ? rows->child : NULL; row; row = row->next) {
      if (strcmp(cJSON_GetObjectItem(row, "participant")->valuestring, who))
        continue;
      listed = true;
      cr_expect_eq(cJSON_GetObjectItem(row, "rating")->valuedouble, e.rating);
      cr_expect_eq(cJSON_GetObjectItem(row, "matches")->valuedouble, e.matches);
      cr_expect_eq(cJSON_GetObjectItem(row, "wins")->valuedouble, e.wins);
      cr_expect_eq(cJSON_GetObjectItem(row, "draws")->valuedouble, e.draws);
      cr_expect_eq(cJSON_GetObjectItem(row, "losses")->valuedouble, e.losses);
    }
    cr_expect(listed, "%s: %s not in tally ranking --by elo", when, who);
  }
  cr_expect_eq(cJSON_GetArraySize(rows), ranked, "%s: %s", when, run.out);
  /* Ranked by rating, ties sharing a rank. */
  double prev = 1e300;
  long prev_rank = 0, k = 0;
  for (const cJSON *row = rows ? rows->child : NULL; row; row = row->next) {
    k++;
    double r = cJSON_GetObjectItem(row, "rating")->valuedouble;
    long rank = (long)cJSON_GetObjectItem(row, "rank")->valuedouble;
    cr_expect_leq(r, prev, "%s: %s", when, run.out);
    cr_expect_eq(rank, r == prev ? prev_rank : k, "%s: %s", when, run.out);
    prev = r;
    prev_rank = rank;
  }
  cJSON_Delete(ranking);
  tc_run_free(&run);
}

Test(tallyd_elo, replay_equals_incremental_in_any_order) {
  const char *seed = getenv("TALLY_SEED");
  rng_state = seed ? strtoull(seed, NULL, 10) : 20261126;
  cr_log_info("seed %llu (TALLY_SEED)", rng_state);
  for (int k = 0; k < MATCHES; k++) {
    snprintf(matches[k].id, sizeof(matches[k].id), "m%03d", k);
    matches[k].user = k % USERS;
    random_match(&matches[k]);
  }
  int order[MATCHES];
  for (int k = 0; k < MATCHES; k++)
    order[k] = k;
  for (int k = MATCHES - 1; k > 0; k--) {
    int j = (int)rnd((unsigned)k + 1), t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
  const char *argv[] = {"--tasks", tasks, NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", argv, NULL), 0);
  for (int k = 0; k < MATCHES; k++)
    push_match(&matches[order[k]]);
  long long outcomes = MATCHES;
  require(td_wait_outcomes(c, outcomes, WAIT_MS) == outcomes, "every match");
  check_ratings("posted in random order");

  /* Late arrivals and changes: a third of the matches replaced (a new
   * result, an earlier or later timestamp, another participant, made
   * unofficial) or dead-lettered; every match of the last participant is
   * dead-lettered, which takes their rating away. */
  int changed = 0;
  for (int k = 0; k < MATCHES; k++) {
    match_t *m = &matches[k];
    bool last_user = m->user == USERS - 1;
    if (!last_user && rnd(3) != 0)
      continue;
    if (last_user) {
      m->scored = false;
    } else {
      switch (rnd(4)) {
      case 0:
        m->scored = false;
        break;
      case 1:
        m->user = (int)rnd(USERS - 1);
        break;
      default:
        random_match(m);
      }
    }
    push_match(m);
    changed++;
  }
  outcomes += changed;
  require(td_wait_outcomes(c, outcomes, WAIT_MS) == outcomes, "every change");
  check_ratings("after replacements, moves and dead letters");

  /* A rescore after two difficulties change. */
  write_task(2, "\"legendary\"");
  opponents[2] = 1400;
  write_task(0, "950");
  opponents[0] = 950;
  tc_run_t run =
      tc_run((const char *[]){"rescore", "--tasks", tasks, "--redis",
                              server.url, "--contest", "arena", NULL},
             NULL, NULL);
  require(run.status == 0, "rescore: %s%s", run.out, run.err);
  tc_run_free(&run);
  check_ratings("after a rescore");
}

Test(tallyd_elo, ranking_by_elo_refuses_what_it_cannot_show) {
  tc_run_t run =
      tc_run((const char *[]){"ranking", "--redis", server.url, "--contest",
                              "arena", "--by", "age", NULL},
             NULL, NULL);
  cr_expect_eq(run.status, 2);
  cr_expect(strstr(run.err, "--by age") != NULL, "%s", run.err);
  tc_run_free(&run);
  run = tc_run((const char *[]){"ranking", "--redis", server.url, "--contest",
                                "arena", "--by", "elo", "--public", NULL},
               NULL, NULL);
  cr_expect_eq(run.status, 2);
  cr_expect(strstr(run.err, "--public") != NULL, "%s", run.err);
  tc_run_free(&run);
  run = tc_run((const char *[]){"ranking", "--redis", server.url, "--contest",
                                "nowhere", "--by", "elo", NULL},
               NULL, NULL);
  cr_expect_eq(run.status, 1);
  cr_expect(strstr(run.err, "no contest \"nowhere\"") != NULL, "%s", run.err);
  tc_run_free(&run);
}
