/* The tally command's Redis subcommands (submit, status, results), run as
 * child processes against a real redis-server. */
#include "cli_fixture.h"
#include "engine/taskset.h"
#include "redis_fixture.h"
#include "support.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static tr_redis_t srv;
static char dir[64]; /* the children's working folder, and their output */
static char tcp_url[64];

static void setup(void) {
  tc_setup(dir, sizeof(dir), "cli-redis");
  cr_assert_eq(tr_redis_start(&srv, tr_free_port(), false), 0);
  snprintf(tcp_url, sizeof(tcp_url), "redis://127.0.0.1:%d", srv.port);
}

static void teardown(void) {
  tr_redis_stop(&srv);
  tc_teardown();
}

TestSuite(cli_redis, .init = setup, .fini = teardown, .timeout = 60);

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs tally in the test's folder, stdin read from stdin_name there (or
 * /dev/null). */
static tc_run_t run(const char *const *args, const char *stdin_name) {
  return tc_run(args, stdin_name, dir);
}

/* Starts tally in the folder cwd (the test's folder when NULL). */
static pid_t start(const char *const *args, const char *stdin_name,
                   const char *cwd) {
  return tc_start(args, stdin_name, cwd ? cwd : dir);
}

/* Runs a command on the test server, in database db. Returns the reply,
 * which the caller frees. */
static redisReply *cmd_db(int db, const char *fmt, ...) {
  redisContext *c = redisConnectUnix(srv.sock);
  cr_assert(c != NULL && c->err == 0, "cannot connect to %s", srv.sock);
  if (db != 0)
    freeReplyObject(redisCommand(c, "SELECT %d", db));
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  redisFree(c);
  cr_assert_not_null(r, "%s: no reply", fmt);
  cr_assert_neq(r->type, REDIS_REPLY_ERROR, "%s: %s", fmt, r->str);
  return r;
}

#define cmd(...) cmd_db(0, __VA_ARGS__)

/* Adds entries to a stream with one field; the values are "{"n":I}". */
static void add_entries(const char *key, const char *fieldname, int n) {
  for (int i = 0; i < n; i++) {
    char v[32];
    snprintf(v, sizeof(v), "{\"n\":%d}", i);
    freeReplyObject(cmd("XADD %s * %s %s", key, fieldname, v));
  }
}

/* The value of field in each entry of XRANGE key, in order, joined by
 * newlines, in a malloc'ed string. */
static char *stream_values(int db, const char *key, const char *fieldname) {
  redisReply *r = cmd_db(db, "XRANGE %s - +", key);
  size_t cap = 1;
  for (size_t i = 0; i < r->elements; i++)
    cap += r->element[i]->element[1]->element[1]->len + 1;
  char *s = calloc(1, cap);
  for (size_t i = 0; i < r->elements; i++) {
    const redisReply *f = r->element[i]->element[1];
    cr_assert_str_eq(f->element[0]->str, fieldname);
    strcat(s, f->element[1]->str);
    strcat(s, "\n");
  }
  freeReplyObject(r);
  return s;
}

/* Waits until some client is blocked in XREAD: then a "tally results"
 * child has pinned down where it starts. */
static void wait_for_blocked_reader(void) {
  for (int i = 0; i < 1000; i++) {
    redisReply *r = cmd("CLIENT LIST");
    bool blocked = strstr(r->str, "cmd=xread") != NULL;
    freeReplyObject(r);
    if (blocked)
      return;
    sleep_ms(10);
  }
  cr_assert_fail("tally results never blocked in XREAD");
}

#define JOBS                                                                   \
  "{\"submission\": 1, \"task\": \"a\", \"evaluations\": {\"0\": 1}}\n"        \
  "\n"                                                                         \
  "[1, 2]\r\n"                                                                 \
  "{\"submission\": 2}\r\n"                                                    \
  "{\"submission\": 3,\n"                                                      \
  "   \t\n"                                                                    \
  "\"just a string\"\n"                                                        \
  "{\"submission\": \"four\", \"note\": \"a b  c\"}"

#define JOBS_PUSHED                                                            \
  "{\"submission\": 1, \"task\": \"a\", \"evaluations\": {\"0\": 1}}\n"        \
  "{\"submission\": 2}\n"                                                      \
  "{\"submission\": \"four\", \"note\": \"a b  c\"}\n"

Test(cli_redis, submit_pushes_exactly_the_valid_lines_in_order) {
  tc_write_file("jobs.jsonl", JOBS);
  tc_run_t r = run(
      (const char *[]){"submit", "--redis", srv.url, "jobs.jsonl", NULL}, NULL);
  cr_expect_eq(r.status, 1, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "");
  char *pushed = stream_values(0, "tally:jobs", "job");
  cr_expect_str_eq(pushed, JOBS_PUSHED);
  free(pushed);
  tc_run_free(&r);
}

Test(cli_redis, submit_names_each_rejected_line_by_file_and_line_number) {
  tc_write_file("jobs.jsonl", JOBS);
  tc_run_t r = run(
      (const char *[]){"submit", "--redis", srv.url, "jobs.jsonl", NULL}, NULL);
  cr_expect_eq(r.status, 1);
  const char *want[] = {
      "jobs.jsonl:3: not a JSON object", "jobs.jsonl:5: invalid JSON",
      "jobs.jsonl:7: not a JSON object", "submitted 3 jobs (3 rejected)"};
  char *lines[8];
  size_t n = tc_lines_of(r.err, lines, 8);
  cr_assert_eq(n, 4, "stderr has %zu lines", n);
  for (size_t i = 0; i < n; i++)
    cr_expect(strncmp(lines[i], want[i], strlen(want[i])) == 0,
              "line %zu: %s, want %s", i, lines[i], want[i]);
  tc_run_free(&r);
}

Test(cli_redis, submit_prints_the_entry_ids_with_ids_and_exits_0) {
  tc_write_file("a.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
  tc_write_file("b.jsonl", "{\"n\": 3}\n");
  tc_run_t r = run((const char *[]){"submit", "--ids", "--redis", srv.url,
                                    "a.jsonl", "b.jsonl", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.err, "submitted 3 jobs (0 rejected)\n");
  redisReply *range = cmd("XRANGE tally:jobs - +");
  cr_assert_eq(range->elements, 3);
  char *lines[8];
  cr_assert_eq(tc_lines_of(r.out, lines, 8), 3, "stdout: %s", r.out);
  for (size_t i = 0; i < 3; i++)
    cr_expect_str_eq(lines[i], range->element[i]->element[0]->str);
  freeReplyObject(range);
  char *pushed = stream_values(0, "tally:jobs", "job");
  cr_expect_str_eq(pushed, "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n");
  free(pushed);
  tc_run_free(&r);
}

Test(cli_redis, submit_reads_stdin_with_no_file_or_a_dash) {
  tc_write_file("in.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
  tc_run_t r =
      run((const char *[]){"submit", "--redis", srv.url, NULL}, "in.jsonl");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tc_run_free(&r);
  tc_write_file("bad.jsonl", "nope\n");
  r = run((const char *[]){"submit", "--redis", srv.url, "-", NULL},
          "bad.jsonl");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "stdin:1: invalid JSON") != NULL, "stderr: %s",
            r.err);
  tc_run_free(&r);
  char *pushed = stream_values(0, "tally:jobs", "job");
  cr_expect_str_eq(pushed, "{\"n\": 1}\n{\"n\": 2}\n");
  free(pushed);
}

Test(cli_redis, submit_uses_the_prefix_and_the_database_of_the_url) {
  tc_write_file("in.jsonl", "{\"n\": 1}\n");
  char url[400];
  snprintf(url, sizeof(url), "%s?db=2", srv.url);
  tc_run_t r = run((const char *[]){"submit", "--redis", url, "--prefix",
                                    "contest", "in.jsonl", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tc_run_free(&r);
  snprintf(url, sizeof(url), "%s/3", tcp_url);
  r = run((const char *[]){"submit", "--redis", url, "in.jsonl", NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tc_run_free(&r);
  char *pushed = stream_values(2, "contest:jobs", "job");
  cr_expect_str_eq(pushed, "{\"n\": 1}\n");
  free(pushed);
  pushed = stream_values(3, "tally:jobs", "job");
  cr_expect_str_eq(pushed, "{\"n\": 1}\n");
  free(pushed);
  cr_expect_eq(tr_redis_int(&srv, "EXISTS tally:jobs"), 0);
}

Test(cli_redis, submit_sends_nothing_when_a_file_is_missing) {
  tc_write_file("in.jsonl", "{\"n\": 1}\n");
  tc_run_t r = run((const char *[]){"submit", "--redis", srv.url, "in.jsonl",
                                    "missing.jsonl", NULL},
                   NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "missing.jsonl: No such file or directory") != NULL,
            "stderr: %s", r.err);
  cr_expect_eq(tr_redis_int(&srv, "XLEN tally:jobs"), 0);
  tc_run_free(&r);
}

Test(cli_redis, status_on_an_empty_server_shows_zeros_and_no_group) {
  tc_run_t r = run((const char *[]){"status", "--redis", srv.url, NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  const char *want[] = {
      "jobs             0 in tally:jobs\n",
      "no consumer group yet (tallyd has not started)\n",
      "pending          0 ",
      "dead letters     0 in tally:dead\n",
      "results          0 in tally:results\n",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.out, want[i]) != NULL, "missing %s in:\n%s", want[i],
              r.out);
  tc_run_free(&r);

  r = run((const char *[]){"status", "--json", "--redis", srv.url, NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "stdout: %s", r.out);
  cr_expect_eq(ts_num(j, "jobs"), 0);
  cr_expect_eq(ts_num(j, "pending"), 0);
  cr_expect_eq(ts_num(j, "dead"), 0);
  cr_expect_eq(ts_num(j, "results"), 0);
  cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "group")));
  cr_expect_str_eq(ts_str_at(j, "note"),
                   "no consumer group yet (tallyd has not started)");
  cr_expect_eq(ts_len_at(j, "consumers"), 0);
  cJSON_Delete(j);
  tc_run_free(&r);
}

Test(cli_redis, status_counts_pending_entries_per_consumer) {
  add_entries("tally:jobs", "job", 5);
  add_entries("tally:results", "result", 2);
  add_entries("tally:dead", "job", 1);
  freeReplyObject(cmd("XGROUP CREATE tally:jobs tallyd 0"));
  freeReplyObject(
      cmd("XREADGROUP GROUP tallyd c1 COUNT 2 STREAMS tally:jobs >"));
  redisReply *third =
      cmd("XREADGROUP GROUP tallyd c2 COUNT 1 STREAMS tally:jobs >");
  char third_id[64];
  snprintf(third_id, sizeof(third_id), "%s",
           third->element[0]->element[1]->element[0]->element[0]->str);
  freeReplyObject(third);
  redisReply *first = cmd("XRANGE tally:jobs - + COUNT 1");
  char first_id[64];
  snprintf(first_id, sizeof(first_id), "%s",
           first->element[0]->element[0]->str);
  freeReplyObject(first);

  tc_run_t r =
      run((const char *[]){"status", "--json", "--redis", srv.url, NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "stdout: %s", r.out);
  cr_expect_str_eq(ts_str_at(j, "group"), "tallyd");
  cr_expect_null(ts_at(j, "note"));
  cr_expect_eq(ts_num(j, "jobs"), 5);
  cr_expect_eq(ts_num(j, "pending"), 3);
  cr_expect_eq(ts_num(j, "lag"), 2);
  cr_expect_eq(ts_num(j, "entries_read"), 3);
  cr_expect_eq(ts_num(j, "dead"), 1);
  cr_expect_eq(ts_num(j, "results"), 2);
  cr_expect_str_eq(ts_str_at(j, "last_delivered_id"), third_id);
  cr_expect_str_eq(ts_str_at(j, "oldest_pending.id"), first_id);
  cr_expect_str_eq(ts_str_at(j, "oldest_pending.consumer"), "c1");
  cr_expect_eq(ts_num_at(j, "oldest_pending.deliveries"), 1);
  cr_assert_eq(ts_len_at(j, "consumers"), 2);
  cr_expect_str_eq(ts_str_at(j, "consumers[0].name"), "c1");
  cr_expect_eq(ts_num_at(j, "consumers[0].pending"), 2);
  cr_expect_str_eq(ts_str_at(j, "consumers[1].name"), "c2");
  cr_expect_eq(ts_num_at(j, "consumers[1].pending"), 1);
  cr_expect(ts_num_at(j, "consumers[1].idle_ms") >= 0);
  /* Each stream tally writes: length, oldest entry and its age, memory. */
  cr_expect_eq(ts_num_at(j, "streams.results.length"), 2);
  cr_expect_not_null(ts_str_at(j, "streams.results.oldest_id"));
  cr_expect(ts_num_at(j, "streams.results.oldest_age_ms") >= 0);
  cr_expect(ts_num_at(j, "streams.results.memory_bytes") > 0);
  cr_expect_eq(ts_num_at(j, "streams.dead.length"), 1);
  cr_expect_eq(ts_num_at(j, "streams.public.length"), 0);
  cr_expect(cJSON_IsNull(ts_at(j, "streams.public.oldest_id")));
  cr_expect(cJSON_IsNull(ts_at(j, "streams.changes.memory_bytes")));
  cJSON_Delete(j);
  tc_run_free(&r);

  r = run((const char *[]){"status", "--redis", srv.url, NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  const char *want[] = {
      "jobs             5 in tally:jobs\n",
      "lag              2 ",
      "pending          3 ",
      "consumers        2\n",
      "  c1             2 pending, idle ",
      "  c2             1 pending, idle ",
      "dead letters     1 in tally:dead\n",
      "results          2 in tally:results\n",
      "stream results   2 entries, oldest ",
      "stream public    0 entries\n",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(r.out, want[i]) != NULL, "missing %s in:\n%s", want[i],
              r.out);
  cr_expect_null(strstr(r.out, "no consumer group"), "%s", r.out);
  tc_run_free(&r);
}

Test(cli_redis, results_from_0_with_a_count_prints_that_many_in_order) {
  add_entries("tally:results", "result", 5);
  tc_run_t r = run((const char *[]){"results", "--redis", srv.url, "--from",
                                    "0", "--count", "3", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
  tc_run_free(&r);
}

Test(cli_redis, results_prints_the_body_each_entry_names_and_says_when_gone) {
  /* As tallyd writes them: a small entry naming the key of the body. An
   * entry written before results had bodies holds the result itself. */
  freeReplyObject(cmd("SET tally:result:1-0:1:me %s", "{\"n\":0}"));
  freeReplyObject(cmd("XADD tally:results * submission s0 entry 1-0 body "
                      "tally:result:1-0:1:me"));
  freeReplyObject(cmd("XADD tally:results * submission s1 entry 2-0 body "
                      "tally:result:2-0:1:me"));
  freeReplyObject(cmd("XADD tally:results * result %s", "{\"n\":2}"));
  tc_run_t r = run((const char *[]){"results", "--redis", srv.url, "--from",
                                    "0", "--no-follow", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "{\"n\":0}\n{\"n\":2}\n");
  cr_expect(strstr(r.err, "its result (tally:result:2-0:1:me) is gone, "
                          "trimmed or expired; tally results --submission "
                          "s1 rebuilds it") != NULL,
            "%s", r.err);
  tc_run_free(&r);
}

Test(cli_redis, results_reads_bodies_in_order_across_batches) {
  /* 150 entries naming bodies (two reads of 100 and 50, each fetching its
   * bodies in one pipeline), the 71st body gone. */
  for (int i = 0; i < 150; i++) {
    if (i != 70)
      freeReplyObject(cmd("SET tally:result:%d {\"n\":%d}", i, i));
    freeReplyObject(cmd("XADD tally:results * submission s%d entry %d-0 "
                        "body tally:result:%d",
                        i, i + 1, i));
  }
  tc_run_t r = run((const char *[]){"results", "--redis", srv.url, "--from",
                                    "0", "--no-follow", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[200];
  cr_assert_eq(tc_lines_of(r.out, lines, 200), 149);
  for (int i = 0, k = 0; i < 150; i++) {
    if (i == 70)
      continue;
    char want[32];
    snprintf(want, sizeof(want), "{\"n\":%d}", i);
    cr_expect_str_eq(lines[k++], want);
  }
  cr_expect(strstr(r.err, "--submission s70 rebuilds it") != NULL, "%s", r.err);
  tc_run_free(&r);
}

Test(cli_redis, results_and_dead_letters_read_as_text_with_text) {
  freeReplyObject(cmd("SET tally:result:1-0:1:me %s",
                      "{\"submission\":\"s0\",\"task\":\"sum\","
                      "\"participant\":\"ann\",\"score\":7.5,"
                      "\"max_score\":10,\"public_score\":2,"
                      "\"max_public_score\":5,\"details\":[{\"idx\":\"t1\","
                      "\"outcome\":\"Correct\",\"text\":[\"ok\"]}]}"));
  freeReplyObject(cmd("XADD tally:results * submission s0 entry 1-0 body "
                      "tally:result:1-0:1:me"));
  freeReplyObject(cmd("XADD tally:dead * id 2-0 error %s deliveries 3 job %s",
                      "task: unknown task \"x\"",
                      "{\"submission\":\"s9\",\"task\":\"x\"}"));
  tc_run_t r =
      run((const char *[]){"results", "--redis", srv.url, "--from", "0",
                           "--no-follow", "--text", "--details", NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "s0  sum  ann  7.5/10  public 2/5\n"
                          "  t1  Correct: ok\n");
  tc_run_free(&r);
  r = run((const char *[]){"results", "--redis", srv.url, "--from", "0",
                           "--no-follow", "--dead", "--text", NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "dead 2-0  s9  after 3 deliveries: task: unknown "
                          "task \"x\"\n");
  tc_run_free(&r);
}

Test(cli_redis, status_estimates_the_memory_of_the_keys_entries_name) {
  /* Two results naming a 10,000-byte body each, one naming a key that
   * is gone, and an event naming a view. */
  char big[10001];
  memset(big, 'x', 10000);
  big[10000] = '\0';
  freeReplyObject(cmd("SET tally:result:a %s", big));
  freeReplyObject(cmd("SET tally:result:b %s", big));
  freeReplyObject(cmd("XADD tally:results * entry 1-0 body tally:result:a"));
  freeReplyObject(cmd("XADD tally:results * entry 2-0 body tally:result:b"));
  freeReplyObject(cmd("XADD tally:results * entry 3-0 body tally:result:c"));
  freeReplyObject(cmd("SET tally:view:a %s", big));
  freeReplyObject(cmd("XADD tally:public * event {} view tally:view:a"));
  tc_run_t r =
      run((const char *[]){"status", "--redis", srv.url, "--json", NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "%s", r.out);
  double k = ts_num_at(j, "streams.results.keys_memory_bytes");
  cr_expect(k >= 20000 && k < 30000, "two bodies over three entries: %g", k);
  k = ts_num_at(j, "streams.public.keys_memory_bytes");
  cr_expect(k >= 10000 && k < 15000, "%g", k);
  cr_expect_eq(ts_num_at(j, "streams.dead.keys_memory_bytes"), 0);
  cJSON_Delete(j);
  tc_run_free(&r);
  r = run((const char *[]){"status", "--redis", srv.url, NULL}, NULL);
  cr_expect(strstr(r.out, "in the keys its entries name") != NULL, "%s", r.out);
  tc_run_free(&r);
}

Test(cli_redis, results_with_no_follow_exits_once_caught_up) {
  add_entries("tally:results", "result", 150);
  tc_run_t r = run((const char *[]){"results", "--redis", srv.url, "--from",
                                    "0", "--no-follow", NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[200];
  cr_assert_eq(tc_lines_of(r.out, lines, 200), 150);
  cr_expect_str_eq(lines[149], "{\"n\":149}");
  tc_run_free(&r);
  /* From the end there is nothing to print. */
  r = run((const char *[]){"results", "--redis", srv.url, "--no-follow", NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "");
  tc_run_free(&r);
}

Test(cli_redis, results_follows_only_new_results_by_default) {
  add_entries("tally:results", "result", 2);
  pid_t pid = start(
      (const char *[]){"results", "--redis", srv.url, "--count", "2", NULL},
      NULL, NULL);
  wait_for_blocked_reader();
  freeReplyObject(cmd("XADD tally:results * result new1"));
  sleep_ms(50);
  freeReplyObject(cmd("XADD tally:results * result new2"));
  tc_run_t r = tc_finish(pid);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "new1\nnew2\n");
  tc_run_free(&r);
}

Test(cli_redis, results_exits_0_on_sigint) {
  pid_t pid =
      start((const char *[]){"results", "--redis", srv.url, NULL}, NULL, NULL);
  wait_for_blocked_reader();
  kill(pid, SIGINT);
  tc_run_t r = tc_finish(pid);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(cli_redis, results_dead_prints_each_dead_letter_as_an_object) {
  freeReplyObject(cmd("XADD tally:dead * job %s error %s deliveries 3 id 7-0",
                      "{\"submission\": \"s\"}", "worker crashed"));
  add_entries("tally:results", "result", 1);
  tc_run_t r = run((const char *[]){"results", "--dead", "--from", "0",
                                    "--no-follow", "--redis", srv.url, NULL},
                   NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  char *lines[4];
  cr_assert_eq(tc_lines_of(r.out, lines, 4), 1, "stdout: %s", r.out);
  cJSON *j = cJSON_Parse(lines[0]);
  cr_assert_not_null(j, "%s", lines[0]);
  cr_expect_str_eq(ts_str_at(j, "id"), "7-0");
  cr_expect_str_eq(ts_str_at(j, "error"), "worker crashed");
  cr_expect_eq(ts_num(j, "deliveries"), 3);
  cr_expect_str_eq(ts_str_at(j, "job"), "{\"submission\": \"s\"}");
  cJSON_Delete(j);
  tc_run_free(&r);
}

Test(cli_redis, every_subcommand_exits_2_naming_an_unreachable_url) {
  char url[320];
  snprintf(url, sizeof(url), "unix://%s/nothing/redis.sock", dir);
  const char *const cmds[] = {"submit", "status", "results"};
  for (size_t i = 0; i < 3; i++) {
    tc_run_t r = run((const char *[]){cmds[i], "--redis", url, NULL}, NULL);
    cr_expect_eq(r.status, 2, "%s", cmds[i]);
    cr_expect(strstr(r.err, url) != NULL, "%s: stderr: %s", cmds[i], r.err);
    cr_expect(strstr(r.err, "No such file or directory") != NULL,
              "%s: stderr: %s", cmds[i], r.err);
    cr_expect_str_eq(r.out, "");
    tc_run_free(&r);
  }
}

Test(cli_redis, a_host_name_in_the_url_exits_2_naming_the_problem) {
  const char *const cmds[] = {"submit", "status", "results"};
  for (size_t i = 0; i < 3; i++) {
    tc_run_t r = run(
        (const char *[]){cmds[i], "--redis", "redis://localhost:6379", NULL},
        NULL);
    cr_expect_eq(r.status, 2, "%s", cmds[i]);
    cr_expect(strstr(r.err, "redis://localhost:6379: the host must be an IP "
                            "address") != NULL,
              "%s: stderr: %s", cmds[i], r.err);
    tc_run_free(&r);
  }
}

Test(cli_redis, the_default_url_is_the_socket_in_the_data_dir_made_absolute) {
  char real[PATH_MAX];
  cr_assert_not_null(realpath(dir, real));
  char want[PATH_MAX + 64];
  snprintf(want, sizeof(want), "unix://%s/tally-data/redis.sock", real);

  /* No server there yet: the message names the URL tallyd would use. */
  tc_run_t r = run((const char *[]){"status", NULL}, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, want) != NULL, "want %s in: %s", want, r.err);
  tc_run_free(&r);

  cr_assert_eq(symlink(srv.dir, tc_at("tally-data")), 0);
  cr_assert_eq(symlink(srv.dir, tc_at("other")), 0);
  r = run((const char *[]){"status", "--json", NULL}, NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "stdout: %s", r.out);
  cr_expect_str_eq(ts_str_at(j, "redis"), want);
  cJSON_Delete(j);
  tc_run_free(&r);

  snprintf(want, sizeof(want), "unix://%s/other/redis.sock", real);
  r = run((const char *[]){"status", "--json", "--data-dir", "other", NULL},
          NULL);
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "stdout: %s", r.out);
  cr_expect_str_eq(ts_str_at(j, "redis"), want);
  cJSON_Delete(j);
  tc_run_free(&r);
}

Test(cli_redis, bad_flags_exit_2_with_the_usage) {
  const char *const *cases[] = {
      (const char *[]){"submit", "--bogus", NULL},
      (const char *[]){"status", "extra", NULL},
      (const char *[]){"results", "--count", "0", NULL},
      (const char *[]){"results", "--count", "x", NULL},
      (const char *[]){"results", "--redis", NULL},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tc_run_t r = run(cases[i], NULL);
    cr_expect_eq(r.status, 2, "case %zu", i);
    cr_expect(strstr(r.err, "usage: tally") != NULL, "case %zu: %s", i, r.err);
    tc_run_free(&r);
  }
}
