/* Contest configs and participants.json (engine/contests.h): decoded
 * strictly, every error named with its file and JSON path; RFC 3339
 * times; the loader beside the tasks; and the job a contest does not list
 * refused, through `tally score` as tallyd's workers refuse it. */
#include "cli_fixture.h"
#include "support.h"

#include "contest/freezes.h"
#include "engine/contests.h"
#include "redis/keys.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Decodes json as contest.json; returns every message joined by \n. */
static char *decode(const char *json, tally_contest_t *c, int *rc) {
  tally_diag_t d;
  tally_diag_init(&d, "contest.json");
  *rc = tally_contest_parse(json, strlen(json), &d, c);
  static char buf[4096];
  buf[0] = '\0';
  for (size_t i = 0; i < d.count; i++) {
    strncat(buf, d.msgs[i], sizeof(buf) - strlen(buf) - 2);
    strcat(buf, "\n");
  }
  tally_diag_close(&d);
  return buf;
}

Test(contests, decodes_every_key) {
  tally_contest_t c;
  int rc;
  const char *msgs = decode(
      "{\"name\": \"ioi\", \"title\": \"IOI 2026\", \"tasks\": [\"b\", \"a\"], "
      "\"start\": \"2026-11-27T09:00:00Z\", \"end\": "
      "\"2026-11-27T14:00:00+01:00\", \"freeze\": \"2026-11-27T12:00:00.5Z\", "
      "\"unfreeze_after\": 600, \"score_precision\": 2, \"ranking\": "
      "\"total\", \"queue\": \"ioi-2026.day_1\"}",
      &c, &rc);
  cr_assert_eq(rc, 0, "%s", msgs);
  cr_expect_str_eq(c.name, "ioi");
  cr_expect_str_eq(c.title, "IOI 2026");
  cr_assert_eq(c.ntasks, 2);
  cr_expect_str_eq(c.tasks[0], "b", "the column order is kept");
  cr_expect_eq(c.start, 1795770000.0);
  cr_expect_eq(c.end, 1795770000.0 + 4 * 3600);
  cr_expect_eq(c.freeze, 1795770000.0 + 3 * 3600 + 0.5);
  cr_expect_eq(c.unfreeze_after, 600);
  cr_expect_eq(c.score_precision, 2);
  cr_expect_eq(c.ranking, TALLY_RANKING_TOTAL);
  cr_expect_str_eq(c.queue, "ioi-2026.day_1");
  tally_contest_free(&c);

  msgs = decode("{\"name\": \"arena\", \"tasks\": [\"duel\"], \"ranking\": "
                "\"elo\"}",
                &c, &rc);
  cr_assert_eq(rc, 0, "%s", msgs);
  cr_expect_str_eq(c.title, "arena", "the title defaults to the name");
  cr_expect(isnan(c.start) && isnan(c.end) && isnan(c.freeze));
  cr_expect_eq(c.ranking, TALLY_RANKING_ELO);
  cr_expect_null(c.queue, "no queue: the default one");
  tally_contest_free(&c);
}

Test(contests, names_each_error_with_its_path) {
  static const struct {
    const char *json, *want;
  } cases[] = {
      {"[]", "contest.json: a contest config must be a JSON object"},
      {"{\"name\": \"c\",", "contest.json: invalid JSON at line 1"},
      {"{\"tasks\": [\"a\"]}", "contest.json: name: is missing"},
      {"{\"name\": \"c\"}", "contest.json: tasks: is missing"},
      {"{\"name\": \"c\", \"tasks\": []}",
       "contest.json: tasks: must be an array of task names, not empty"},
      {"{\"name\": \"c\", \"tasks\": [\"a\", 3]}",
       "contest.json: tasks[1]: must be a task name, a string"},
      {"{\"name\": \"c\", \"tasks\": [\"a\", \"a\"]}",
       "contest.json: tasks[1]: \"a\" is listed twice"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"colour\": 1}",
       "contest.json: colour: unknown key"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"name\": \"d\"}",
       "contest.json: name: key appears twice"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": 5}",
       "contest.json: start: must be a string, an RFC 3339 time"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"end\": \"2026-11-27 9:00\"}",
       "contest.json: end: must be an RFC 3339 time"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"freeze\": "
       "\"2026-02-30T00:00:00Z\"}",
       "contest.json: freeze: must be an RFC 3339 time"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T10:00:00Z\", \"end\": \"2026-11-27T09:00:00Z\"}",
       "contest.json: end: must be after start"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T10:00:00Z\", \"freeze\": \"2026-11-27T09:00:00Z\"}",
       "contest.json: freeze: must be between start and end"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"end\": "
       "\"2026-11-27T10:00:00Z\", \"unfreeze_after\": 60}",
       "contest.json: unfreeze_after: needs a freeze"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"freeze\": "
       "\"2026-11-27T10:00:00Z\", \"unfreeze_after\": -1}",
       "contest.json: unfreeze_after: must be a number of seconds, at least "
       "0"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"score_precision\": 11}",
       "contest.json: score_precision:"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"ranking\": \"best\"}",
       "contest.json: ranking:"},
      {"{\"name\": \"\", \"tasks\": [\"a\"]}",
       "contest.json: name: must not be empty"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"queue\": \"a{b}\"}",
       "contest.json: queue: must be a queue name: 1 to 64 letters, digits"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"queue\": \"\"}",
       "contest.json: queue:"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"queue\": 3}",
       "contest.json: queue:"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
       "\"rws\": {}}",
       "contest.json: rws: must be a non-empty list"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
       "\"rws\": [{\"url\": \"ftp://x/\"}]}",
       "contest.json: rws[0].url: must be an http:// or https:// URL"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
       "\"rws\": [{\"url\": \"http://x/\", \"user\": \"u\"}]}",
       "contest.json: rws[0].user: unknown key"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
       "\"rws\": [{\"username\": \"u\", \"password\": \"p\"}]}",
       "contest.json: rws[0]: url: is required"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
       "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
       "\"rws\": [{\"url\": \"http://x/\", \"username\": \"u\"}]}",
       "contest.json: rws[0]: username and password go together"},
      {"{\"name\": \"c\", \"tasks\": [\"a\"], \"rws\": [{\"url\": "
       "\"http://x/\"}]}",
       "contest.json: rws: a contest pushed to a Ranking Web Server needs its "
       "start and end"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tally_contest_t c;
    int rc;
    const char *msgs = decode(cases[i].json, &c, &rc);
    cr_expect_neq(rc, 0, "%s was accepted", cases[i].json);
    cr_expect(strstr(msgs, cases[i].want) != NULL, "%s: got %s", cases[i].json,
              msgs);
  }
}

Test(contests, decodes_the_ranking_web_servers_it_is_pushed_to) {
  tally_contest_t c;
  int rc;
  const char *msgs =
      decode("{\"name\": \"c\", \"tasks\": [\"a\"], \"start\": "
             "\"2026-11-27T09:00:00Z\", \"end\": \"2026-11-27T14:00:00Z\", "
             "\"rws\": [{\"url\": \"http://127.0.0.1:8890\", \"username\": "
             "\"usern4me\", \"password\": \"passw0rd\"}, {\"url\": "
             "\"https://u:p@rws.example/sub/\"}]}",
             &c, &rc);
  cr_assert_eq(rc, 0, "%s", msgs);
  cr_assert_eq(c.nrws, 2);
  cr_expect_str_eq(c.rws[0].url, "http://127.0.0.1:8890/");
  cr_expect_str_eq(c.rws[0].username, "usern4me");
  cr_expect_str_eq(c.rws[0].password, "passw0rd");
  cr_expect_str_eq(c.rws[1].url, "https://u:p@rws.example/sub/");
  cr_expect_null(c.rws[1].username);
  tally_contest_free(&c);
}

Test(contests, reads_rfc3339_times) {
  static const struct {
    const char *text;
    double want; /* NAN: refused */
  } cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"1970-01-01t00:00:01z", 1},
      {"1970-01-01 00:00:01Z", 1},
      {"2026-11-27T09:00:00.250Z", 1795770000.25},
      {"2026-11-27T10:30:00+01:30", 1795770000},
      {"2026-11-27T07:00:00-02:00", 1795770000},
      {"2016-12-31T23:59:60Z", 1483228800},
      {"2024-02-29T00:00:00Z", 1709164800},
      {"2023-02-29T00:00:00Z", NAN},
      {"2026-13-01T00:00:00Z", NAN},
      {"2026-11-27T24:00:00Z", NAN},
      {"2026-11-27T09:00:00", NAN},
      {"2026-11-27T09:00:00+0100", NAN},
      {"2026-11-27T09:00:00.Z", NAN},
      {"2026-11-27T09:00Z", NAN},
      {"2026-11-27T09:00:00Z ", NAN},
      {"+2026-11-27T09:00:00Z", NAN},
      {"", NAN},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    double v = -1;
    int rc = tally_rfc3339(cases[i].text, &v);
    if (isnan(cases[i].want))
      cr_expect_neq(rc, 0, "%s was read as %f", cases[i].text, v);
    else
      cr_expect(rc == 0 && v == cases[i].want, "%s: %d %f", cases[i].text, rc,
                v);
  }
}

static char dir[64];

static void put(const char *name, const char *text) {
  char path[200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

static void make_dir(void) {
  snprintf(dir, sizeof(dir), "/tmp/tally-contests-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_all(void) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

Test(contests, loads_beside_the_tasks_and_names_each_problem) {
  make_dir();
  put("c1.contest.json", "{\"name\": \"c1\", \"tasks\": [\"sum\"]}");
  put("c2.contest.json", "{\"name\": \"c1\", \"tasks\": [\"sum\"]}");
  put("sum.json", "{\"name\": \"sum\"}"); /* a task: not read here */
  put("participants.json",
      "{\"alice\": {\"name\": \"Alice\", \"team\": \"Red\"}, \"bob\": "
      "{\"nick\": \"b\"}, \"\": {}}");
  tally_contestset_t cs;
  tally_contestset_init(&cs);
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  cr_expect_neq(tally_contestset_load(&cs, dir, true, &d), 0);
  char all[4096] = "";
  for (size_t i = 0; i < d.count; i++) {
    strncat(all, d.msgs[i], sizeof(all) - strlen(all) - 2);
    strcat(all, "\n");
  }
  cr_expect(strstr(all, "c2.contest.json: contest name \"c1\" is also used "
                        "by") != NULL,
            "%s", all);
  cr_expect(strstr(all, "participants.json: bob.nick: unknown key") != NULL,
            "%s", all);
  cr_expect(strstr(all, "participants.json: : a participant id must not be "
                        "empty") != NULL ||
                strstr(all, "a participant id must not be empty") != NULL,
            "%s", all);
  cr_expect_null(strstr(all, "sum.json"), "%s", all);
  cr_expect_eq(cs.count, 0, "nothing is kept after an error");
  tally_diag_close(&d);
  tally_contestset_close(&cs);

  /* Fixed: loaded, found, and the unknown task named. */
  char path[200];
  snprintf(path, sizeof(path), "%s/c2.contest.json", dir);
  unlink(path);
  put("participants.json",
      "{\"alice\": {\"name\": \"Alice\", \"team\": \"Red\"}, \"bob\": {}}");
  put("c3.contest.json", "{\"name\": \"c3\", \"tasks\": [\"sum\", \"x\"]}");
  tally_diag_init(&d, NULL);
  cr_assert_eq(tally_contestset_load(&cs, dir, true, &d), 0);
  cr_expect_eq(cs.count, 2);
  cr_expect_not_null(tally_contestset_find(&cs, "c3"));
  cr_expect_null(tally_contestset_find(&cs, "c9"));
  const tally_participant_t *p = tally_contestset_participant(&cs, "alice");
  cr_assert_not_null(p);
  cr_expect_str_eq(p->team, "Red");
  cr_expect_null(tally_contestset_participant(&cs, "bob")->name);
  cr_expect(tally_contest_has_task(tally_contestset_find(&cs, "c3"), "x"));
  tally_diag_close(&d);
  tally_contestset_close(&cs);
  remove_all();
}

/* tally score and tally check read the contests beside the tasks, as
 * tallyd's workers do. */
Test(contests, a_job_for_a_task_its_contest_does_not_list_is_refused) {
  tc_setup(dir, sizeof(dir), "contests");
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "cp -r %s/examples/tasks/. '%s'", TALLY_SOURCE_DIR,
           dir);
  cr_assert_eq(system(cmd), 0);
  put("c1.contest.json", "{\"name\": \"c1\", \"tasks\": [\"sum\"]}");
  const char *check[] = {"check", dir, NULL};
  tc_run_t r = tc_run(check, NULL, dir);
  cr_expect_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "c1.contest.json: ok: contest c1, 1 task, total "
                          "ranking\n") != NULL,
            "%s", r.out);
  tc_run_free(&r);

  const char *score[] = {"score", "--tasks", dir, NULL};
  tc_write_file(
      "jobs.jsonl",
      "{\"submission\": \"s1\", \"task\": \"sum\", \"contest\": \"c1\", "
      "\"evaluations\": {\"a\": 1, \"b\": 1, \"c\": 1, \"d\": 1}}\n"
      "{\"submission\": \"s2\", \"task\": \"aplusb\", \"contest\": "
      "\"c1\", \"evaluations\": {}}\n"
      "{\"submission\": \"s3\", \"task\": \"aplusb\", \"contest\": "
      "\"other\", \"evaluations\": {\"000\": 1, \"001\": 1, \"big_0\": "
      "1, \"big_1\": 1}}\n");
  r = tc_run(score, "jobs.jsonl", dir);
  cr_expect(strstr(r.out, "{\"submission\":\"s2\",\"error\":\"task: "
                          "\\\"aplusb\\\" is not a task of contest "
                          "\\\"c1\\\" (its tasks: sum)\"}") != NULL,
            "%s", r.out);
  cr_expect(strstr(r.out, "\"submission\":\"s3\",\"task\":\"aplusb\"") != NULL,
            "a contest without a config keeps today's behaviour: %s", r.out);
  tc_run_free(&r);

  /* A contest naming a task that is not loaded. */
  put("c2.contest.json", "{\"name\": \"c2\", \"tasks\": [\"nope\"]}");
  r = tc_run(check, NULL, dir);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "c2.contest.json: tasks[0]: no task \"nope\" is "
                          "loaded") != NULL,
            "%s", r.err);
  tc_run_free(&r);
  tc_teardown();
}

/* The operator's word on a freeze (contest/freezes.h) and the freeze in
 * force it gives with a config's times. */
Test(contests, reads_an_operators_freeze_word_strictly) {
  tally_freeze_word_t w;
  cr_expect_eq(tally_freeze_word_parse("lifted", 6, &w), 0);
  cr_expect_eq(w.kind, TALLY_FREEZE_LIFTED);
  cr_expect_eq(tally_freeze_word_parse("at 1767268800.5", 15, &w), 0);
  cr_expect_eq(w.kind, TALLY_FREEZE_AT);
  cr_expect_float_eq(w.at, 1767268800.5, 1e-9);
  cr_expect_eq(tally_freeze_word_parse("at 253402300799.999", 19, &w), 0);
  const char *bad[] = {"", "at ", "at -1", "at 1e9", "at 1.", "at .5", "at 1 ",
                       " lifted", "LIFTED", "at 0x10", "at inf", "at 1.2.3",
                       /* After the end of year 9999 (the fuzzer found one
                        * that did not read back as it was written). */
                       "at 253402300800", "at 17777777777777777777777777"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cr_expect_eq(tally_freeze_word_parse(bad[i], strlen(bad[i]), &w), -1,
                 "\"%s\"", bad[i]);
    cr_expect_eq(w.kind, TALLY_FREEZE_CONFIGURED);
  }
  char text[TALLY_FREEZE_WORD_MAX];
  w.kind = TALLY_FREEZE_AT;
  w.at = 1767268800.25;
  tally_freeze_word_text(&w, text);
  cr_expect_str_eq(text, "at 1767268800.250");
  w.kind = TALLY_FREEZE_CONFIGURED;
  tally_freeze_word_text(&w, text);
  cr_expect_str_eq(text, "");
}

Test(contests, the_freeze_in_force_follows_the_word_then_the_config) {
  double freeze = 100, end = 200, after = 50;
  tally_freeze_word_t at = {TALLY_FREEZE_AT, 150};
  tally_freeze_word_t lifted = {TALLY_FREEZE_LIFTED, NAN};
  /* The config: from freeze until end + unfreeze_after. */
  cr_expect(isnan(tally_freeze_in_force(freeze, end, after, NULL, 99)));
  cr_expect_eq(tally_freeze_in_force(freeze, end, after, NULL, 100), 100);
  cr_expect_eq(tally_freeze_in_force(freeze, end, after, NULL, 249.9), 100);
  cr_expect(isnan(tally_freeze_in_force(freeze, end, after, NULL, 250)));
  cr_expect_eq(tally_freeze_in_force(freeze, end, NAN, NULL, 1e9), 100);
  cr_expect(isnan(tally_freeze_in_force(NAN, end, after, NULL, 150)));
  /* An operator's time, from then on and past the config's thaw. */
  cr_expect(isnan(tally_freeze_in_force(freeze, end, after, &at, 149)));
  cr_expect_eq(tally_freeze_in_force(freeze, end, after, &at, 150), 150);
  cr_expect_eq(tally_freeze_in_force(NAN, NAN, NAN, &at, 1e9), 150);
  /* Lifted: nothing frozen. */
  cr_expect(isnan(tally_freeze_in_force(freeze, end, NAN, &lifted, 150)));
}

Test(contests, names_queues_and_their_key_prefixes) {
  cr_expect(tally_queue_name_ok("main"));
  cr_expect(tally_queue_name_ok("A-z_0.9"));
  char long_name[TALLY_QUEUE_NAME_MAX + 2];
  memset(long_name, 'q', sizeof(long_name) - 1);
  long_name[TALLY_QUEUE_NAME_MAX + 1] = '\0';
  cr_expect_not(tally_queue_name_ok(long_name));
  long_name[TALLY_QUEUE_NAME_MAX] = '\0';
  cr_expect(tally_queue_name_ok(long_name));
  const char *bad[] = {"", "a b", "a:b", "{a}", "é", "a/b", "a%b"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    cr_expect_not(tally_queue_name_ok(bad[i]), "\"%s\"", bad[i]);
  char out[32];
  cr_expect_eq(tally_queue_prefix(out, sizeof(out), "tally", "main"), 0);
  cr_expect_str_eq(out, "tally", "the main queue keeps the layout of before");
  cr_expect_eq(tally_queue_prefix(out, sizeof(out), "tally", "q1"), 0);
  cr_expect_str_eq(out, "tally:{q1}");
  cr_expect_neq(tally_queue_prefix(out, 8, "tally", "q1"), 0);
}
