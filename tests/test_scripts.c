/* The scripts on the jobs stream against a real redis-server: a result is
 * posted once, a late post from a consumer that lost the entry is dropped,
 * and history, claims, retries and releases keep the delivery counts. */
#include "redis/scripts.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
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

TestSuite(scripts, .init = setup, .fini = teardown, .timeout = 20);

/* Adds a job and returns its entry id. */
static void add_job(const char *job, char id[64]) {
  redisReply *r = redisCommand(c, "XADD tally:jobs * job %s", job);
  cr_assert(r && r->type == REDIS_REPLY_STRING);
  snprintf(id, 64, "%s", r->str);
  freeReplyObject(r);
}

static void read_as(const char *consumer, const char *from) {
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd %s COUNT 10 STREAMS tally:jobs %s", consumer,
      from));
}

static redisReply *run(tally_call_t *call) {
  redisReply *r = redisCommandArgv(c, call->argc, call->argv, call->argvlen);
  cr_assert(r != NULL);
  cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s", r->str);
  return r;
}

static long long post(const char *consumer, const char *id, unsigned deliveries,
                      const char *kind, const char *body) {
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_POST, NULL, "tally", consumer);
  cr_assert_eq(tally_call_post(
                   &call, id, deliveries, kind, body, strlen(body),
                   strcmp(kind, "result") == 0 ? "tally:submission:s-1" : NULL,
                   NULL),
               0);
  redisReply *r = run(&call);
  cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
  cr_assert_eq(r->elements, 2, "a code, then a place cache");
  long long v = r->element[0]->integer;
  freeReplyObject(r);
  return v;
}

static long long xlen(const char *key) {
  return tr_redis_int(&server, "XLEN %s", key);
}

static long long pending(void) {
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd");
  long long n = r->element[0]->integer;
  freeReplyObject(r);
  return n;
}

/* The delivery count of id, or -1 when it is not pending. */
static long long deliveries_of(const char *id) {
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd %s %s 1", id, id);
  long long n = r->elements ? r->element[0]->element[3]->integer : -1;
  freeReplyObject(r);
  return n;
}

static void expect_field(redisReply *fields, const char *name,
                         const char *value) {
  for (size_t i = 0; i + 1 < fields->elements; i += 2)
    if (strcmp(fields->element[i]->str, name) == 0) {
      cr_expect_str_eq(fields->element[i + 1]->str, value, "%s", name);
      return;
    }
  cr_expect_fail("no field %s", name);
}

Test(scripts, post_writes_the_result_and_the_record_then_acks_and_deletes) {
  char id[64];
  add_job("{\"submission\":\"s-1\"}", id);
  read_as("a", ">");
  cr_expect_eq(post("a", id, 1, "result", "{\"score\":1}"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1);
  cr_expect_eq(xlen("tally:jobs"), 0, "the job entry is deleted");
  cr_expect_eq(pending(), 0, "nothing stays pending");
  redisReply *r = redisCommand(c, "HGETALL tally:submission:s-1");
  expect_field(r, "job", "{\"submission\":\"s-1\"}");
  expect_field(r, "entry", id);
  freeReplyObject(r);
  r = redisCommand(c, "XRANGE tally:results - +");
  cr_assert_eq(r->elements, 1);
  /* The script sees only the key of the body, never the body. */
  expect_field(r->element[0]->element[1], "body", "{\"score\":1}");
  expect_field(r->element[0]->element[1], "entry", id);
  cr_expect_eq(tr_redis_int(&server, "HEXISTS tally:submission:s-1 result"), 0,
               "the result is not kept in the record");
  cr_expect_eq(tr_redis_int(&server, "HEXISTS tally:submission:s-1 "
                                     "result_entry"),
               1);
  freeReplyObject(r);
}

Test(scripts, post_drops_a_late_result_from_a_consumer_that_lost_the_job) {
  char id[64];
  add_job("{}", id);
  read_as("a", ">");
  freeReplyObject(redisCommand(c, "XCLAIM tally:jobs tallyd b 0 %s", id));
  freeReplyObject(redisCommand(c, "SET tally:result:late x"));
  cr_expect_eq(post("a", id, 1, "result", "tally:result:late"),
               TALLY_POST_STOLEN);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:result:late"), 0,
               "the body of a delivery that lost its job is deleted");
  cr_expect_eq(post("b", id, 2, "result", "{\"b\":1}"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1, "exactly one result");
  freeReplyObject(redisCommand(c, "SET tally:result:gone x"));
  cr_expect_eq(post("a", id, 1, "result", "tally:result:gone"),
               TALLY_POST_GONE);
  cr_expect_eq(tr_redis_int(&server, "EXISTS tally:result:gone"), 1,
               "a gone entry may have been posted by this very delivery");
  cr_expect_eq(xlen("tally:results"), 1);
}

Test(scripts, post_drops_an_older_delivery_of_the_same_consumer) {
  char id[64];
  add_job("{}", id);
  read_as("a", ">");
  read_as("a", "0"); /* re-reading its own pending entry redelivers it */
  cr_expect_eq(post("a", id, 1, "result", "{}"), TALLY_POST_REDELIVERED);
  cr_expect_eq(post("a", id, 2, "result", "{}"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1);
}

Test(scripts, post_dead_letters_the_job_from_the_stream_with_its_cause) {
  char id[64];
  add_job("{not json", id);
  read_as("a", ">");
  cr_expect_eq(post("a", id, 1, "dead", "malformed JSON"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 0);
  cr_expect_eq(xlen("tally:jobs"), 0);
  redisReply *r = redisCommand(c, "XRANGE tally:dead - +");
  cr_assert_eq(r->elements, 1);
  redisReply *f = r->element[0]->element[1];
  expect_field(f, "job", "{not json");
  expect_field(f, "error", "malformed JSON");
  expect_field(f, "deliveries", "1");
  expect_field(f, "id", id);
  freeReplyObject(r);
}

Test(scripts, post_drops_an_entry_that_was_never_delivered) {
  cr_expect_eq(post("a", "1-1", 1, "result", "{}"), TALLY_POST_GONE);
  cr_expect_eq(xlen("tally:results"), 0);
}

Test(scripts, post_carries_many_entries_and_answers_each) {
  char ids[3][64];
  for (int i = 0; i < 3; i++)
    add_job("{}", ids[i]);
  read_as("a", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_POST, NULL, "tally", "a");
  tally_call_post(&call, ids[0], 1, "result", "{\"n\":0}", 7, NULL, NULL);
  tally_call_post(&call, ids[1], 5, "result", "{\"n\":1}", 7, NULL, NULL);
  tally_call_post(&call, ids[2], 1, "dead", "bad", 3, NULL, NULL);
  redisReply *r = run(&call);
  cr_assert_eq(r->elements, 6, "three codes, then three place caches");
  cr_expect_eq(r->element[0]->integer, TALLY_POST_DONE);
  cr_expect_eq(r->element[1]->integer, TALLY_POST_REDELIVERED);
  cr_expect_eq(r->element[2]->integer, TALLY_POST_DONE);
  freeReplyObject(r);
  cr_expect_eq(xlen("tally:results"), 1);
  cr_expect_eq(xlen("tally:dead"), 1);
  cr_expect_eq(pending(), 1, "the refused entry stays pending");
}

Test(scripts, post_of_a_deleted_entry_writes_an_empty_job) {
  char id[64];
  add_job("{}", id);
  read_as("a", ">");
  freeReplyObject(redisCommand(c, "XDEL tally:jobs %s", id));
  cr_expect_eq(post("a", id, 1, "dead", "deleted"), TALLY_POST_DONE);
  redisReply *r = redisCommand(c, "XRANGE tally:dead - +");
  cr_assert_eq(r->elements, 1);
  expect_field(r->element[0]->element[1], "job", "");
  freeReplyObject(r);
  cr_expect_eq(pending(), 0);
}

Test(scripts, history_returns_own_entries_with_their_counts_unchanged) {
  char a[64], b[64], gone[64];
  add_job("{\"a\":1}", a);
  add_job("{\"b\":1}", b);
  add_job("{\"c\":1}", gone);
  read_as("me", ">");
  char other[64];
  add_job("{\"other\":1}", other);
  read_as("someone", ">");
  freeReplyObject(redisCommand(c, "XDEL tally:jobs %s", gone));

  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_HISTORY, NULL, "tally", "me");
  tally_call_history(&call, "0", 10);
  redisReply *r = run(&call);
  cr_assert_eq(r->elements, 9, "three entries of mine, none of theirs");
  cr_expect_str_eq(r->element[0]->str, a);
  cr_expect_eq(r->element[1]->integer, 1, "a re-read is no new delivery");
  cr_expect_str_eq(r->element[2]->str, "{\"a\":1}");
  cr_expect_str_eq(r->element[3]->str, b);
  cr_expect_str_eq(r->element[6]->str, gone);
  cr_expect_eq(r->element[8]->type, REDIS_REPLY_NIL, "deleted: no job");
  freeReplyObject(r);

  /* From a cursor, only later entries. */
  tally_call_begin(&call, TALLY_SCRIPT_HISTORY, NULL, "tally", "me");
  tally_call_history(&call, a, 1);
  r = run(&call);
  cr_assert_eq(r->elements, 3);
  cr_expect_str_eq(r->element[0]->str, b);
  cr_expect_eq(r->element[1]->integer, 1);
  freeReplyObject(r);
  cr_expect_eq(deliveries_of(a), 1, "Redis's count taken back too");
  cr_expect_eq(deliveries_of(b), 1);
}

/* Any number of re-reads (reconnects, restarts) leaves a count alone, and
 * one that a worker failure raised stays raised. */
Test(scripts, history_rereads_never_use_up_deliveries) {
  char a[64];
  add_job("{\"a\":1}", a);
  read_as("me", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_RETRY, NULL, "tally", "me");
  tally_call_retry(&call, a, 1);
  redisReply *r = run(&call);
  cr_assert_eq(r->integer, 2);
  freeReplyObject(r);
  for (int i = 0; i < 50; i++) {
    tally_call_begin(&call, TALLY_SCRIPT_HISTORY, NULL, "tally", "me");
    tally_call_history(&call, "0", 10);
    r = run(&call);
    cr_assert_eq(r->elements, 3);
    cr_assert_eq(r->element[1]->integer, 2, "re-read %d counted", i);
    freeReplyObject(r);
  }
  cr_expect_eq(deliveries_of(a), 2);
  cr_expect_eq(post("me", a, 2, "result", "{}"), TALLY_POST_DONE);
}

Test(scripts, claim_takes_idle_entries_of_others_and_dead_letters_deleted) {
  char mine[64], theirs[64], gone[64];
  add_job("{\"mine\":1}", mine);
  read_as("me", ">");
  add_job("{\"theirs\":1}", theirs);
  add_job("{\"gone\":1}", gone);
  read_as("dead-daemon", ">");
  freeReplyObject(redisCommand(c, "XDEL tally:jobs %s", gone));

  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_CLAIM, NULL, "tally", "me");
  tally_call_claim(&call, "-", 0, 10);
  redisReply *r = run(&call);
  cr_assert_eq(r->elements, 7);
  cr_expect_str_eq(r->element[0]->str, "-", "the scan wrapped");
  cr_expect_str_eq(r->element[1]->str, theirs);
  cr_expect_eq(r->element[2]->integer, 2);
  cr_expect_str_eq(r->element[3]->str, "{\"theirs\":1}");
  cr_expect_str_eq(r->element[4]->str, gone);
  cr_expect_eq(r->element[6]->type, REDIS_REPLY_NIL);
  freeReplyObject(r);
  cr_expect_eq(deliveries_of(theirs), 2);
  cr_expect_eq(deliveries_of(mine), 1, "own entries are left alone");
  cr_expect_eq(deliveries_of(gone), -1);
  r = redisCommand(c, "XRANGE tally:dead - +");
  cr_assert_eq(r->elements, 1);
  expect_field(r->element[0]->element[1], "id", gone);
  expect_field(r->element[0]->element[1], "deliveries", "1");
  freeReplyObject(r);
  cr_expect_eq(post("me", theirs, 2, "result", "{}"), TALLY_POST_DONE);
}

Test(scripts, claim_leaves_entries_not_yet_idle_and_pages_with_a_cursor) {
  char ids[3][64];
  for (int i = 0; i < 3; i++)
    add_job("{}", ids[i]);
  read_as("other", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_CLAIM, NULL, "tally", "me");
  tally_call_claim(&call, "-", 60000, 10);
  redisReply *r = run(&call);
  cr_expect_eq(r->elements, 1, "nothing idle for a minute");
  freeReplyObject(r);

  tally_call_begin(&call, TALLY_SCRIPT_CLAIM, NULL, "tally", "me");
  tally_call_claim(&call, "-", 0, 2);
  r = run(&call);
  cr_assert_eq(r->elements, 7);
  cr_expect_str_eq(r->element[0]->str, ids[1], "the cursor is the last");
  freeReplyObject(r);
  tally_call_begin(&call, TALLY_SCRIPT_CLAIM, NULL, "tally", "me");
  tally_call_claim(&call, ids[1], 0, 2);
  r = run(&call);
  cr_assert_eq(r->elements, 4);
  cr_expect_str_eq(r->element[0]->str, "-");
  cr_expect_str_eq(r->element[1]->str, ids[2]);
  freeReplyObject(r);
}

static long long call_int(tally_call_t *call) {
  redisReply *r = run(call);
  cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
  long long v = r->integer;
  freeReplyObject(r);
  return v;
}

Test(scripts, retry_counts_a_delivery_only_for_the_owner) {
  char id[64];
  add_job("{}", id);
  read_as("me", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_RETRY, NULL, "tally", "me");
  tally_call_retry(&call, id, 1);
  cr_expect_eq(call_int(&call), 2);
  cr_expect_eq(deliveries_of(id), 2);
  tally_call_begin(&call, TALLY_SCRIPT_RETRY, NULL, "tally", "me");
  tally_call_retry(&call, id, 1);
  cr_expect_eq(call_int(&call), TALLY_POST_REDELIVERED);
  tally_call_begin(&call, TALLY_SCRIPT_RETRY, NULL, "tally", "other");
  tally_call_retry(&call, id, 2);
  cr_expect_eq(call_int(&call), TALLY_POST_STOLEN);
  cr_expect_eq(deliveries_of(id), 2);
}

Test(scripts, release_keeps_the_count_and_lets_others_claim_at_once) {
  char id[64];
  add_job("{}", id);
  read_as("me", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_RELEASE, NULL, "tally", "me");
  tally_call_release(&call, id, 1);
  tally_call_release(&call, "1-1", 1);
  redisReply *r = run(&call);
  cr_assert_eq(r->elements, 2);
  cr_expect_eq(r->element[0]->integer, TALLY_POST_DONE);
  cr_expect_eq(r->element[1]->integer, TALLY_POST_GONE);
  freeReplyObject(r);
  cr_expect_eq(deliveries_of(id), 1);

  tally_call_begin(&call, TALLY_SCRIPT_CLAIM, NULL, "tally", "other");
  tally_call_claim(&call, "-", 30000, 10);
  r = run(&call);
  cr_assert_eq(r->elements, 4, "claimed although a claim needs 30 s idle");
  cr_expect_eq(r->element[2]->integer, 1, "a release uses up no delivery");
  cr_expect_str_eq(r->element[3]->str, "{}");
  freeReplyObject(r);
  cr_expect_eq(deliveries_of(id), 1);
  cr_expect_eq(post("other", id, 1, "result", "{}"), TALLY_POST_DONE);
}

Test(scripts, evalsha_runs_the_loaded_scripts) {
  redisReply *r =
      redisCommand(c, "SCRIPT LOAD %s", tally_scripts[TALLY_SCRIPT_POST]);
  cr_assert_eq(r->type, REDIS_REPLY_STRING);
  char sha[64];
  snprintf(sha, sizeof(sha), "%s", r->str);
  freeReplyObject(r);
  char id[64];
  add_job("{}", id);
  read_as("a", ">");
  tally_call_t call;
  tally_call_begin(&call, TALLY_SCRIPT_POST, sha, "tally", "a");
  tally_call_post(&call, id, 1, "result", "{}", 2, NULL, NULL);
  r = run(&call);
  cr_expect_eq(r->element[0]->integer, TALLY_POST_DONE);
  freeReplyObject(r);
}
