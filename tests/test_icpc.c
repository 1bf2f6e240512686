/* Pass-fail contests: a submission's judgement from its testcases, the
 * contest minute, the board's ties and the contest keys' errors (the
 * boards themselves against a model: tests/icpc_reference.py). */
#include "contest/icpc.h"
#include "engine/contests.h"
#include "engine/judgement.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *tc(double outcome, const char *text) {
  cJSON *t = text != NULL ? cJSON_CreateStringArray(&text, 1) : NULL;
  const char *j = tally_judgement_testcase(outcome, t);
  cJSON_Delete(t);
  return j;
}

Test(judgement, of_a_testcase_comes_from_cms_texts) {
  cr_expect_str_eq(tc(1, NULL), "AC");
  cr_expect_str_eq(tc(1, "Execution timed out"), "AC");
  cr_expect_str_eq(tc(0, "Execution timed out"), "TLE");
  cr_expect_str_eq(tc(0, "Execution timed out (wall clock limit exceeded)"),
                   "TLE");
  cr_expect_str_eq(tc(0, "Execution killed by signal"), "RTE");
  cr_expect_str_eq(tc(0, "Execution killed with signal %s"), "RTE");
  cr_expect_str_eq(
      tc(0, "Execution failed because the return code was nonzero"), "RTE");
  cr_expect_str_eq(tc(0, "Memory limit exceeded"), "RTE");
  cr_expect_str_eq(tc(0, "Output isn't correct"), "WA");
  cr_expect_str_eq(tc(0.5, "Output is partially correct"), "WA");
  cr_expect_str_eq(tc(0, "File not submitted"), "WA");
  cr_expect_str_eq(tc(0, NULL), "WA");
  cr_expect_str_eq(tc(0.999, NULL), "WA");
}

Test(icpc, minutes_round_down_and_start_at_zero) {
  cr_expect_eq(tally_icpc_minute(1000, 1000), 0);
  cr_expect_eq(tally_icpc_minute(1000, 1059.99), 0);
  cr_expect_eq(tally_icpc_minute(1000, 1060), 1);
  cr_expect_eq(tally_icpc_minute(1000, 940), 0);
  cr_expect_eq(tally_icpc_minute(1000, NAN), 0);
}

Test(icpc, ties_share_a_position_and_the_last_solve_breaks_them) {
  /* a and b: one solve each, penalty 30; a solved at 30 (one try), b at
   * 10 with one rejection (10 + 20): b's last solve is earlier. c and d
   * tie completely. e never submitted but is named. */
  tally_icpc_sub_t s[] = {
      {"a", "p", "1", 1800, true, "AC"}, {"b", "p", "2", 300, true, "WA"},
      {"b", "p", "3", 600, true, "AC"},  {"c", "p", "4", 60, true, "RTE"},
      {"d", "p", "5", 60, true, "CE"},   {"d", "q", "6", 60, false, "AC"},
  };
  const char *tasks[] = {"p", "q"}, *named[] = {"e", "a"};
  tally_icpc_rules_t rules = {0, 20, false, NAN};
  tally_icpc_board_t b;
  cr_assert_eq(tally_icpc_build(&b, &rules, tasks, 2, s, 6, named, 2), 0);
  cr_assert_eq(b.nrows, 5);
  const char *order[] = {"b", "a", "c", "d", "e"};
  size_t ranks[] = {1, 2, 3, 3, 3};
  for (size_t i = 0; i < 5; i++) {
    cr_expect_str_eq(b.rows[i].participant, order[i]);
    cr_expect_eq(b.rows[i].rank, ranks[i], "%s", order[i]);
  }
  cr_expect_eq(b.rows[0].penalty, 30);
  cr_expect_eq(b.rows[0].last, 10);
  cr_expect(b.rows[0].cells[0].first);
  cr_expect_not(b.rows[1].cells[0].first);
  cr_expect_eq(b.rows[2].cells[0].judged, 1); /* c's run-time error */
  cr_expect_eq(b.rows[3].cells[0].judged, 0); /* d's compile error */
  cr_expect_eq(b.rows[3].cells[1].judged, 0); /* d's unofficial AC */
  tally_icpc_board_free(&b);
}

static int parse(const char *text, tally_contest_t *c, char *msg) {
  tally_diag_t d;
  tally_diag_init(&d, "c.json");
  int rc = tally_contest_parse(text, strlen(text), &d, c);
  snprintf(msg, 512, "%s", d.count > 0 ? d.msgs[0] : "");
  tally_diag_close(&d);
  return rc;
}

Test(icpc, contest_keys_are_decoded_strictly) {
  tally_contest_t c;
  char msg[512];
  cr_assert_eq(parse("{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":"
                     "\"pass-fail\",\"start\":\"2026-01-01T10:00:00Z\",\"end\":"
                     "\"2026-01-01T15:00:00Z\"}",
                     &c, msg),
               0, "%s", msg);
  cr_expect_eq(c.scoring, TALLY_SCORING_PASS_FAIL);
  cr_expect_eq(c.penalty_time, 20);
  cr_expect_not(c.compile_penalty);
  cr_expect_eq(c.medals[0] + c.medals[1] + c.medals[2], 0);
  tally_contest_free(&c);
  const char *bad[][2] = {
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\"}",
       "needs its start"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\","
       "\"start\":\"2026-01-01T10:00:00Z\"}",
       "and its end"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"medals\":{\"gold\":1}}",
       "medals: is for a pass-fail contest only"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\","
       "\"start\":\"2026-01-01T10:00:00Z\",\"end\":\"2026-01-01T15:00:00Z\","
       "\"medals\":{\"gold\":1,\"tin\":2}}",
       "medals.tin: unknown key"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\","
       "\"start\":\"2026-01-01T10:00:00Z\",\"end\":\"2026-01-01T15:00:00Z\","
       "\"medals\":{\"gold\":1.5}}",
       "medals.gold: must be a whole number"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"icpc\"}", "scoring"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"penalty_time\":20}",
       "pass-fail contest only"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\",\"start\":"
       "\"2026-01-01T10:00:00Z\",\"compile_penalty\":1}",
       "must be true or false"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\",\"start\":"
       "\"2026-01-01T10:00:00Z\",\"penalty_time\":-1}",
       "penalty_time"},
      {"{\"name\":\"w\",\"tasks\":[\"a\"],\"scoring\":\"pass-fail\",\"start\":"
       "\"2026-01-01T10:00:00Z\",\"ranking\":\"elo\"}",
       "Elo"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cr_expect_neq(parse(bad[i][0], &c, msg), 0, "%s", bad[i][0]);
    cr_expect(strstr(msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], msg);
  }
}
