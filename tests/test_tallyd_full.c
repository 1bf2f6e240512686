/* tallyd against a real redis-server that is full (maxmemory with
 * noeviction): OOM replies lose, double and stall nothing. While Redis is
 * full the jobs stay pending and tallyd says so once per interval, not
 * once per refusal; once memory is freed every job is finished exactly
 * once. */
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static tr_redis_t server;
static redisContext *c;
static td_daemon_t d;

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&d, 0, sizeof(d));
}

static void teardown(void) {
  td_kill(&d);
  redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(full, .init = setup, .fini = teardown, .timeout = 90);

static long long used_memory(void) {
  redisReply *r = redisCommand(c, "INFO memory");
  long long used = -1;
  const char *p = r != NULL && r->type == REDIS_REPLY_STRING
                      ? strstr(r->str, "used_memory:")
                      : NULL;
  if (p != NULL)
    sscanf(p, "used_memory:%lld", &used);
  freeReplyObject(r);
  return used;
}

/* How many lines of d's log contain text. */
static int log_count(const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s", d.log);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  char line[8192];
  int n = 0;
  while (fgets(line, sizeof(line), f) != NULL)
    n += strstr(line, text) != NULL;
  fclose(f);
  return n;
}

Test(full, jobs_wait_while_redis_is_full_and_finish_once_after) {
  enum { N = 60 };
  static char ids[N + 1][64]; /* the first job, then N more */
  cr_assert_eq(td_start(&d, &server, "d1", NULL, NULL), 0);
  /* A first job, so tallyd is up and its group exists. */
  td_push(c,
          "{\"submission\":\"warm\",\"task\":\"sum\",\"evaluations\":"
          "{\"0\":1,\"1\":1,\"2\":1,\"3\":1}}",
          ids[0]);
  TD_REQUIRE(&d, td_wait_outcomes(c, 1, 20000) == 1, "the first result");
  /* Full: the jobs go in (XADD as the platform would, before the limit),
   * then Redis refuses every write that needs memory. tallyd is stopped
   * meanwhile, or it could post all of them before the limit is set. */
  td_signal(&d, SIGSTOP);
  td_push_many(c, N, ids + 1);
  long long used = used_memory();
  cr_assert_gt(used, 0);
  freeReplyObject(
      redisCommand(c, "CONFIG SET maxmemory %lld", used + 16 * 1024));
  td_signal(&d, SIGCONT);
  td_sleep_ms(6000);
  long long done_while_full = td_wait_outcomes(c, N + 1, 1);
  /* Nothing is lost meanwhile: what is not posted is pending or unread. */
  long long pending = td_pending(c);
  cr_expect_leq(done_while_full + pending, N + 1 + N);
  /* Once per interval, not once per refusal. */
  int said = log_count("redis.full");
  TD_REQUIRE(&d, said >= 1, "tallyd says Redis is full");
  TD_REQUIRE(&d, said <= 3, "said %d times in 6 s", said);
  /* Freed: every job finishes, each exactly once. */
  freeReplyObject(redisCommand(c, "CONFIG SET maxmemory 0"));
  TD_REQUIRE(&d, td_wait_outcomes(c, N + 1, 60000) == N + 1,
             "every job finishes");
  TD_REQUIRE(&d, td_check_exactly_once(c, ids, N + 1) == 0, "exactly once");
  TD_REQUIRE(&d, td_log_has(&d, "redis.full.over"), "and says it is over");
  td_signal(&d, SIGTERM);
  int status = td_wait(&d, 20000);
  cr_expect(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
