/* Hostile job text through tallyd and a real redis-server (issue 24,
 * defects 7 and 8): a codename holding a newline cannot forge a log line,
 * and an outcome text that is not UTF-8 is dead-lettered naming its
 * field, reaching neither the results nor the contestants' events. */
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
}

static void teardown(void) {
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_input, .init = setup, .fini = teardown, .timeout = 60);

/* Every line of the daemon's log starts with a timestamp of this year's
 * form; a forged one would start with what the job wrote. */
static void expect_no_forged_line(const char *forged) {
  FILE *f = fopen(daemon_.log, "r");
  cr_assert_not_null(f);
  char line[16384];
  while (fgets(line, sizeof(line), f) != NULL) {
    cr_expect(strncmp(line, forged, strlen(forged)) != 0, "forged: %s", line);
    cr_expect_null(strchr(line, '\x1b'), "an ESC in the log: %s", line);
    cr_expect_null(strchr(line, '\r'), "a CR in the log: %s", line);
  }
  fclose(f);
}

Test(tallyd_input, a_codename_with_a_newline_forges_no_log_line) {
  const char *args[] = {"--log-level", "info", NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  char dead[64];
  td_push(c,
          "{\"submission\": \"inj\", \"task\": \"sum\", \"participant\": "
          "\"mallory\", \"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, \"3\": "
          "1, \"x\\nFORGED error job.dead: \\u001b[31mall is lost\\r\": 1}}",
          dead);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 1, 20000) == 1, "outcome");
  char *why = td_dead_field(c, dead, "error");
  cr_assert_not_null(why, "not dead-lettered");
  free(why);
  td_kill(&daemon_);
  TD_REQUIRE(&daemon_,
             td_log_has(&daemon_, "x\\nFORGED error job.dead: \\x1b[31mall "
                                  "is lost\\r"),
             "the codename is not in the log, escaped");
  /* The dead letter's line names the submission, task and participant. */
  TD_REQUIRE(&daemon_,
             td_log_has(&daemon_, ", submission inj, task sum, participant "
                                  "mallory: "),
             "the dead letter's line does not name its job");
  expect_no_forged_line("FORGED");
}

Test(tallyd_input, an_outcome_text_that_is_not_utf8_is_dead_lettered) {
  cr_assert_eq(td_start(&daemon_, &server, "d1", NULL, NULL), 0);
  const char *bad[] = {
      "{\"submission\": \"u1\", \"task\": \"sum\", \"participant\": \"p\", "
      "\"contest\": \"c\", \"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
      "\"3\": {\"outcome\": 1, \"text\": \"bad \xff\xfe\"}}}",
      "{\"submission\": \"u2\", \"task\": \"sum\", \"participant\": \"p\", "
      "\"contest\": \"c\", \"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 1, "
      "\"3\": {\"outcome\": 1, \"text\": [\"ok\", \"\xc3\"]}}}",
      "{\"submission\": \"u3\", \"task\": \"sum\", \"participant\": \"p\", "
      "\"contest\": \"c\", \"evaluations\": {\"0\": 01, \"1\": 1, \"2\": 1, "
      "\"3\": 1}}"};
  const char *fields[] = {"evaluations[\"3\"].text: is not valid UTF-8",
                          "evaluations[\"3\"].text[1]: is not valid UTF-8",
                          "a number is not written as JSON requires"};
  char ids[3][64];
  for (int i = 0; i < 3; i++)
    td_push(c, bad[i], ids[i]);
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, 3, 20000) == 3, "outcomes");
  for (int i = 0; i < 3; i++) {
    char *why = td_dead_field(c, ids[i], "error");
    cr_expect(why != NULL && strstr(why, fields[i]) != NULL, "%s",
              why != NULL ? why : "(no dead letter)");
    free(why);
  }
  cr_expect_eq(td_xlen(c, "tally:results"), 0, "a result was posted");
  /* What contestants see holds nothing of them, and is JSON. */
  cJSON *events = td_public_events(c);
  cr_assert_not_null(events, "tally:public is not JSON");
  char *text = cJSON_PrintUnformatted(events);
  cr_expect_null(strstr(text, "\"u1\""), "%s", text);
  cr_expect_null(strstr(text, "\"u2\""), "%s", text);
  free(text);
  cJSON_Delete(events);
}
