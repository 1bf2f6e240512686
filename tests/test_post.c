/* The exactly-once post script against a real redis-server: a result is
 * written once, and a late post from a consumer that lost the entry is
 * dropped. */
#include "daemon/post.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <string.h>

static tr_redis_t server;
static redisContext *c;

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = redisConnectUnix(server.sock);
  cr_assert(c != NULL && c->err == 0);
  freeReplyObject(
      redisCommand(c, "XGROUP CREATE tally:jobs tallyd $ MKSTREAM"));
}

static void teardown(void) {
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(post, .init = setup, .fini = teardown, .timeout = 20);

/* Adds a job and returns its entry id (static storage). */
static const char *add_job(const char *job) {
  static char id[64];
  redisReply *r = redisCommand(c, "XADD tally:jobs * job %s", job);
  cr_assert(r && r->type == REDIS_REPLY_STRING);
  snprintf(id, sizeof(id), "%s", r->str);
  freeReplyObject(r);
  return id;
}

static void read_as(const char *consumer, const char *from) {
  freeReplyObject(redisCommand(
      c, "XREADGROUP GROUP tallyd %s COUNT 10 STREAMS tally:jobs %s",
      consumer, from));
}

static long long post(const char *consumer, const char *id,
                      unsigned deliveries, const char *kind,
                      const char *body) {
  tally_post_t p;
  tally_post_build(&p, NULL, "tally", consumer, id, deliveries, kind, body,
                   strlen(body), strcmp(kind, "result") == 0 ? "s-1" : NULL,
                   "malformed JSON");
  redisReply *r = redisCommandArgv(c, p.argc, p.argv, p.argvlen);
  cr_assert(r != NULL);
  cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "%s",
               r->type == REDIS_REPLY_ERROR ? r->str : "");
  long long v = r->integer;
  freeReplyObject(r);
  return v;
}

static long long xlen(const char *key) {
  return tr_redis_int(&server, "XLEN %s", key);
}

Test(post, writes_the_result_acknowledges_and_deletes_the_job) {
  const char *id = add_job("{\"submission\":\"s-1\"}");
  char saved[64];
  snprintf(saved, sizeof(saved), "%s", id);
  read_as("a", ">");
  cr_expect_eq(post("a", saved, 1, "result", "{\"score\":1}"),
               TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1);
  cr_expect_eq(xlen("tally:jobs"), 0, "the job entry is deleted");
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd");
  cr_expect_eq(r->element[0]->integer, 0, "nothing stays pending");
  freeReplyObject(r);
  r = redisCommand(c, "HGET tally:submissions s-1");
  cr_expect_str_eq(r->str, "{\"score\":1}");
  freeReplyObject(r);
}

Test(post, drops_a_late_result_from_a_consumer_whose_job_was_claimed) {
  char id[64];
  snprintf(id, sizeof(id), "%s", add_job("{}"));
  read_as("a", ">");
  freeReplyObject(
      redisCommand(c, "XCLAIM tally:jobs tallyd b 0 %s", id));
  cr_expect_eq(post("a", id, 1, "result", "{\"late\":1}"), TALLY_POST_STOLEN);
  cr_expect_eq(post("b", id, 2, "result", "{\"b\":1}"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1, "exactly one result");
  cr_expect_eq(post("a", id, 1, "result", "{\"late\":1}"), TALLY_POST_GONE);
  cr_expect_eq(xlen("tally:results"), 1);
}

Test(post, drops_a_post_for_an_older_delivery_of_the_same_consumer) {
  char id[64];
  snprintf(id, sizeof(id), "%s", add_job("{}"));
  read_as("a", ">");
  read_as("a", "0"); /* re-reading its own pending entry redelivers it */
  cr_expect_eq(post("a", id, 1, "result", "{}"), TALLY_POST_REDELIVERED);
  cr_expect_eq(post("a", id, 2, "result", "{}"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 1);
}

Test(post, dead_letters_with_the_job_the_cause_and_the_deliveries) {
  char id[64];
  snprintf(id, sizeof(id), "%s", add_job("{not json"));
  read_as("a", ">");
  cr_expect_eq(post("a", id, 1, "dead", "{not json"), TALLY_POST_DONE);
  cr_expect_eq(xlen("tally:results"), 0);
  cr_expect_eq(xlen("tally:jobs"), 0);
  redisReply *r = redisCommand(c, "XRANGE tally:dead - +");
  cr_assert_eq(r->elements, 1);
  redisReply *f = r->element[0]->element[1];
  cr_assert_geq(f->elements, 6);
  cr_expect_str_eq(f->element[0]->str, "job");
  cr_expect_str_eq(f->element[1]->str, "{not json");
  cr_expect_str_eq(f->element[2]->str, "error");
  cr_expect_str_eq(f->element[3]->str, "malformed JSON");
  cr_expect_str_eq(f->element[4]->str, "deliveries");
  cr_expect_str_eq(f->element[5]->str, "1");
  freeReplyObject(r);
}

Test(post, drops_a_post_for_an_entry_that_was_never_delivered) {
  cr_expect_eq(post("a", "1-1", 1, "result", "{}"), TALLY_POST_GONE);
  cr_expect_eq(xlen("tally:results"), 0);
}
