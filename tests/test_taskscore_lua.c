/* The Lua task score of the post and rescore scripts against the C one:
 * random participants' submissions, scored by tally_task_score and by the
 * scripts' library in a real redis-server, must give the same doubles,
 * bit for bit; and the library writes numbers as tally_json_num does. */
#include "daemon/scripts.h"
#include "redis_fixture.h"
#include "scoretypes/scoremode.h"
#include "worker/jsonw.h"

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
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = redisConnectUnix(server.sock);
  cr_assert(c != NULL && c->err == 0);
}

static void teardown(void) {
  redisFree(c);
  tr_redis_stop(&server);
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
  size_t n = strlen(tally_script_lib) + sizeof(harness);
  char *src = malloc(n);
  cr_assert(src != NULL);
  snprintf(src, n, "%s%s", tally_script_lib, harness);
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
  size_t n = strlen(tally_script_lib) + sizeof(script);
  char *src = malloc(n);
  cr_assert(src != NULL);
  snprintf(src, n, "%s%s", tally_script_lib, script);
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
