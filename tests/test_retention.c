/* Retention (redis/lua/trim.lua, docs/operations.md) against a real
 * redis-server: streams trimmed by age and by count with XTRIM MINID,
 * never past what a consumer group still needs, each stream on its own
 * limits; and tallyd trimming on its timer. */
#include "cli_fixture.h"
#include "redis/scripts.h"
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static tr_redis_t server;
static redisContext *c;

static void setup(void) {
  cr_assert_not_null(c = tr_redis_start_client(&server));
}

static void teardown(void) {
  tr_redis_stop_client(&server, c);
}

TestSuite(retention, .init = setup, .fini = teardown, .timeout = 30);

static const char *const streams[] = {"results", "public", "changes", "dead"};

/* Runs trim.lua at time now (ms) with one age for all and a count per
 * stream; returns what it trimmed from each in trimmed. */
static void trim(long long now, long long age, const long long counts[4],
                 long long trimmed[4]) {
  const char *argv[3 + 8 + 1 + 12];
  char keys[8][64], nums[9][32];
  int n = 0;
  argv[n++] = "EVAL";
  argv[n++] = tally_lua_trim;
  argv[n++] = "8";
  for (int i = 0; i < 4; i++) {
    snprintf(keys[i], sizeof(keys[i]), "tally:%s", streams[i]);
    snprintf(keys[4 + i], sizeof(keys[i]), "tally:retain:%s", streams[i]);
  }
  for (int i = 0; i < 8; i++)
    argv[n++] = keys[i];
  snprintf(nums[0], sizeof(nums[0]), "%lld", now);
  argv[n++] = nums[0];
  for (int i = 0; i < 4; i++) {
    snprintf(nums[1 + 2 * i], sizeof(nums[0]), "%lld", age);
    snprintf(nums[2 + 2 * i], sizeof(nums[0]), "%lld", counts[i]);
    argv[n++] = nums[1 + 2 * i];
    argv[n++] = nums[2 + 2 * i];
    argv[n++] = i <= 1 ? "1" : "0"; /* results and events name keys */
  }
  redisReply *r = redisCommandArgv(c, n, argv, NULL);
  cr_assert(r != NULL && r->type == REDIS_REPLY_ARRAY, "%s",
            r && r->type == REDIS_REPLY_ERROR ? r->str : "?");
  for (int i = 0; i < 4; i++)
    trimmed[i] = r->element[i]->element[0]->integer;
  freeReplyObject(r);
}

/* Adds n entries to stream s at ms, ms + 1, ... */
static void add(const char *s, long long ms, int n) {
  for (int i = 0; i < n; i++)
    freeReplyObject(
        redisCommand(c, "XADD tally:%s %lld-0 f v%d", s, ms + i, i));
}

static long long first_ms(const char *s) {
  redisReply *r = redisCommand(c, "XRANGE tally:%s - + COUNT 1", s);
  long long ms = -1;
  if (r->elements > 0)
    sscanf(r->element[0]->element[0]->str, "%lld", &ms);
  freeReplyObject(r);
  return ms;
}

Test(retention, by_age_and_by_count) {
  /* 100 results at ms 1000..1099. */
  add("results", 1000, 100);
  add("dead", 1000, 10);
  static const long long none[4] = {0, 0, 0, 0};
  long long t[4];
  /* Age: at 2050 with an age of 1000, entries before 1050 go. */
  trim(2050, 1000, none, t);
  cr_expect_eq(t[0], 50);
  cr_expect_eq(t[3], 10);
  cr_expect_eq(first_ms("results"), 1050);
  /* Count: the first run records where the stream stands; a count is
   * only applied from a checkpoint at least that far behind. */
  static const long long keep20[4] = {20, 0, 0, 0};
  trim(2050, 0, keep20, t);
  cr_expect_eq(t[0], 0);
  add("results", 1100, 30); /* 80 now, 30 added since the checkpoint */
  trim(2100, 0, keep20, t);
  /* The checkpoint is 30 behind: everything up to it goes, 30 stay
   * (at least the 20 asked for). */
  cr_expect_eq(t[0], 50);
  cr_expect_eq(tr_redis_int(&server, "XLEN tally:results"), 30);
  add("results", 1130, 40);
  trim(2200, 0, keep20, t);
  cr_expect_eq(t[0], 30);
  cr_expect_eq(tr_redis_int(&server, "XLEN tally:results"), 40);
  /* Never fewer than the count. */
  trim(2300, 0, keep20, t);
  cr_expect_geq(tr_redis_int(&server, "XLEN tally:results"), 20);
  /* A stream that does not exist is left alone. */
  cr_expect_eq(t[1], 0);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:public"), 0);
}

Test(retention, a_trimmed_result_takes_its_body_with_it) {
  /* 2,500 results (more than one page of the script's reads) at ms
   * 1000.., each naming its body, and dead letters with a "body" field
   * that is not a result's. */
  for (int i = 0; i < 2500; i++) {
    redisAppendCommand(c, "XADD tally:results %d-0 entry %d-1 body b:%d",
                       1000 + i, i, i);
    redisAppendCommand(c, "SET b:%d x", i);
  }
  for (int i = 0; i < 5000; i++) {
    redisReply *r = NULL;
    cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
    freeReplyObject(r);
  }
  freeReplyObject(redisCommand(c, "XADD tally:dead 1000-0 body keep"));
  freeReplyObject(redisCommand(c, "SET keep x"));
  static const long long none[4] = {0, 0, 0, 0};
  long long t[4];
  /* At 4000 with an age of 1000: the 2,000 before 3000 go. */
  trim(4000, 1000, none, t);
  cr_expect_eq(t[0], 2000);
  cr_expect_eq(tr_redis_int(&server, "EXISTS b:0 b:999 b:1000 b:1999"), 0);
  cr_expect_eq(tr_redis_int(&server, "EXISTS b:2000 b:2499"), 2);
  cr_expect_eq(tr_redis_int(&server, "DBSIZE"), 500 + 1 + 2,
               "500 bodies, keep and the two streams");
  cr_expect_eq(tr_redis_int(&server, "EXISTS keep"), 1,
               "only the results stream names bodies");
}

Test(retention, never_past_what_a_group_still_needs) {
  add("public", 1000, 50);
  freeReplyObject(redisCommand(c, "XGROUP CREATE tally:public g 0"));
  /* g read 20 entries and acknowledged 10 of them: entry 10 is still
   * pending, so nothing from 1010 on may go. */
  freeReplyObject(
      redisCommand(c, "XREADGROUP GROUP g me COUNT 20 STREAMS tally:public >"));
  for (int i = 0; i < 10; i++)
    freeReplyObject(redisCommand(c, "XACK tally:public g %d-0", 1000 + i));
  static const long long none[4] = {0, 0, 0, 0};
  long long t[4];
  trim(100000, 1000, none, t);
  cr_expect_eq(t[1], 10);
  cr_expect_eq(first_ms("public"), 1010);
  /* Acknowledged: still not past what g has not been given (1020 on). */
  for (int i = 10; i < 20; i++)
    freeReplyObject(redisCommand(c, "XACK tally:public g %d-0", 1000 + i));
  trim(100000, 1000, none, t);
  cr_expect_eq(t[1], 10);
  cr_expect_eq(first_ms("public"), 1020);
}

/* Pushes n Sum jobs, s-from .. s-(from + n - 1). */
static void push_sums(int from, int n) {
  for (int i = from; i < from + n; i++) {
    char job[200], id[64];
    snprintf(job, sizeof(job),
             "{\"submission\":\"s-%d\",\"task\":\"sum\",\"evaluations\":"
             "{\"0\":1,\"1\":0,\"2\":1,\"3\":0}}",
             i);
    td_push(c, job, id);
  }
}

/* The entries ever added to tally:results (trimming does not lower it). */
static long long results_added(void) {
  redisReply *r = redisCommand(c, "XINFO STREAM tally:results");
  long long n = 0;
  for (size_t i = 0;
       r != NULL && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
    if (strcmp(r->element[i]->str, "entries-added") == 0)
      n = r->element[i + 1]->integer;
  freeReplyObject(r);
  return n;
}

static bool wait_added(long long n) {
  for (int i = 0; i < 200 && results_added() < n; i++)
    usleep(100 * 1000);
  return results_added() >= n;
}

Test(retention, tallyd_trims_on_its_timer) {
  static td_daemon_t d;
  const char *args[] = {"--retain-every",
                        "1000",
                        "--retain-age",
                        "0",
                        "--retain-results",
                        "5",
                        NULL};
  cr_assert_eq(td_start(&d, &server, "d1", args, NULL), 0);
  push_sums(0, 10);
  TD_REQUIRE(&d, wait_added(10), "10 results");
  /* A trim records where the stream stands; the next, after ten more,
   * takes the stream back to the ten added since (at least 5). */
  usleep(2500 * 1000);
  push_sums(10, 10);
  TD_REQUIRE(&d, wait_added(20), "20 results");
  /* However the ticks fell, the stream ends with at least 5 and at most
   * the 10 of the last interval once a trim has seen all 20. */
  for (int i = 0; i < 60 && td_xlen(c, "tally:results") > 10; i++)
    usleep(100 * 1000);
  long long left = td_xlen(c, "tally:results");
  TD_REQUIRE(&d, left >= 5 && left <= 10, "trimmed to 5-10, not %lld", left);
  TD_REQUIRE(&d, td_log_has(&d, "entries from tally:results"),
             "the trim is logged");
  /* The submission records stay; a trimmed result is rebuilt from the
   * stored job with the current config, and says so. */
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:submission:s-0"), 1);
  td_kill(&d);
  char dir[256];
  tc_setup(dir, sizeof(dir), "retention");
  tc_run_t r = tc_run((const char *[]){"results", "--redis", server.url,
                                       "--submission", "s-0", NULL},
                      NULL, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "the result of submission s-0 was trimmed from "
                          "tally:results; give --tasks DIR") != NULL,
            "%s", r.err);
  tc_run_free(&r);
  r = tc_run((const char *[]){"results", "--redis", server.url, "--submission",
                              "s-0", "--tasks",
                              TALLY_SOURCE_DIR "/examples/tasks", NULL},
             NULL, NULL);
  cr_expect_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.err, "rebuilt from the stored job with the current "
                          "config") != NULL,
            "%s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  cr_expect_str_eq(ts_str_at(j, "submission"), "s-0");
  cr_expect_eq(ts_bool_at(j, "rebuilt"), 1);
  cr_expect_eq(ts_num(j, "score"), 21); /* Sum: 2 x 10.5 */
  cJSON_Delete(j);
  tc_run_free(&r);
  /* A result still in the stream is printed as it was posted. */
  r = tc_run((const char *[]){"results", "--redis", server.url, "--submission",
                              "s-19", NULL},
             NULL, NULL);
  cr_expect_eq(r.status, 0, "%s", r.err);
  j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  cr_expect_str_eq(ts_str_at(j, "submission"), "s-19");
  cr_expect_null(ts_at(j, "rebuilt"));
  cJSON_Delete(j);
  tc_run_free(&r);
  r = tc_run((const char *[]){"results", "--redis", server.url, "--submission",
                              "nope", NULL},
             NULL, NULL);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "no submission nope") != NULL, "%s", r.err);
  tc_run_free(&r);
  tc_teardown();
}
