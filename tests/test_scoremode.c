/* The score modes against CMS's task_score tests, and tally score --mode
 * run as a child process. */
#include "cli_fixture.h"
#include "contest/scoremode.h"
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* One row of CMS's tables: up to four submissions, each (time, score,
 * tokened), where a NaN score is CMS's None (not scored yet). The scores
 * are whole (no details) and the public score equals the full one. */
#define NONE NAN
typedef struct mode_case_s {
  size_t n;
  struct {
    double t;
    double score;
    bool tokened;
  } subs[4];
  double score;
  bool partial;
} mode_case_t;

static void expect_case(tally_score_mode_t mode, const mode_case_t *c) {
  tally_submission_t subs[4];
  for (size_t i = 0; i < c->n; i++) {
    tally_submission_init(&subs[i]);
    subs[i].timestamp = c->subs[i].t;
    subs[i].tokened = c->subs[i].tokened;
    if (!isnan(c->subs[i].score)) {
      subs[i].scored = true;
      subs[i].priv.score = subs[i].pub.score = c->subs[i].score;
    }
  }
  tally_task_score_t ts;
  cr_assert_eq(tally_task_score(mode, 2, TALLY_ROUND_SUBTASK, subs, c->n, &ts),
               0);
  cr_expect(ts.score == c->score, "score: expected %.17g, got %.17g", c->score,
            ts.score);
  cr_expect(ts.public_score == c->score, "public: expected %.17g, got %.17g",
            c->score, ts.public_score);
  cr_expect_eq(ts.partial, c->partial);
  cr_expect_eq(ts.submissions, c->n);
}

ParameterizedTestParameters(scoremode, max_tokened_last_matches_cms_table) {
  static mode_case_t cases[] = {
      /* The table of the issue, from CMS's scoring_test.py. */
      {2, {{1, 44.4, true}, {2, 66.6, true}}, 66.6, false},
      {2, {{1, 66.6, true}, {2, 44.4, true}}, 66.6, false},
      {3, {{1, 44.4, true}, {2, 66.6, false}, {3, 11.1, false}}, 44.4, false},
      {3, {{1, 44.4, true}, {2, 66.6, false}, {3, 55.5, false}}, 55.5, false},
      {2, {{1, 66.6, false}, {2, 44.4, false}}, 44.4, false},
      {2, {{2, 66.6, false}, {1, 44.4, false}}, 66.6, false},
      {3, {{1, NONE, true}, {2, 66.6, false}, {3, 55.5, false}}, 55.5, true},
      {2, {{1, 66.6, true}, {2, NONE, false}}, 66.6, true},
      /* CMS's other cases. */
      {2, {{1, NONE, false}, {2, 66.6, false}}, 66.6, true},
      {3, {{1, NONE, true}, {2, NONE, false}, {3, NONE, false}}, 0, true},
      {0, {{0, 0, false}}, 0, false},
      /* The last by time, wherever it is given. */
      {3, {{3, 11.1, false}, {1, 66.6, false}, {2, 44.4, false}}, 11.1, false},
  };
  return cr_make_param_array(mode_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(mode_case_t *c, scoremode,
                  max_tokened_last_matches_cms_table) {
  expect_case(TALLY_MODE_MAX_TOKENED_LAST, c);
}

ParameterizedTestParameters(scoremode, max_matches_cms_table) {
  static mode_case_t cases[] = {
      {0, {{0, 0, false}}, 0, false},
      {2, {{1, 44.4, false}, {2, 66.6, false}}, 66.6, false},
      {2, {{1, 66.6, false}, {2, 44.4, false}}, 66.6, false},
      {3, {{1, 44.4, true}, {2, 66.6, false}, {3, 11.1, false}}, 66.6, false},
      {3, {{1, NONE, false}, {2, 66.6, false}, {3, 55.5, false}}, 66.6, true},
      {2, {{1, NONE, false}, {2, NONE, false}}, 0, true},
      /* No task score is below 0. */
      {2, {{1, -5, false}, {2, -1, false}}, 0, false},
  };
  return cr_make_param_array(mode_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(mode_case_t *c, scoremode, max_matches_cms_table) {
  expect_case(TALLY_MODE_MAX, c);
}

Test(scoremode, parses_the_three_cms_mode_names_and_nothing_else) {
  static const char *const names[] = {"max", "max_subtask", "max_tokened_last"};
  for (size_t i = 0; i < 3; i++) {
    tally_score_mode_t m = (tally_score_mode_t)99;
    cr_expect_eq(tally_score_mode_parse(names[i], &m), 0, "%s", names[i]);
    cr_expect_str_eq(tally_score_mode_name(m), names[i]);
  }
  tally_score_mode_t m = TALLY_MODE_MAX;
  cr_expect_eq(tally_score_mode_parse("Max", &m), TALLY_EINVAL);
  cr_expect_eq(tally_score_mode_parse("", &m), TALLY_EINVAL);
  cr_expect_eq(m, TALLY_MODE_MAX);
  cr_expect_null(tally_score_mode_name((tally_score_mode_t)99));
  cr_expect_eq(TALLY_MODE_MAX_SUBTASK, 0, "max_subtask is the default");
}

/* Scores job (JSON text) with task through the engine and fills s from
 * the result, as tally score --mode does. */
static void add_scored(tally_submission_t *s, const tally_task_t *task,
                       double t, bool tokened, const char *job) {
  char err[256] = "";
  tally_submission_init(s);
  s->timestamp = t;
  s->tokened = tokened;
  cJSON *res = ts_score(task, job);
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_assert_eq(tally_submission_read_result(s, res, err, sizeof(err)), 0, "%s",
               err);
  cJSON_Delete(res);
}

static tally_task_score_t task_score(const tally_task_t *task,
                                     tally_score_mode_t mode,
                                     tally_submission_t *subs, size_t n) {
  tally_task_score_t ts;
  cr_assert_eq(tally_task_score(mode, task->score_precision,
                                task->score_rounding, subs, n, &ts),
               0);
  for (size_t i = 0; i < n; i++)
    tally_submission_close(&subs[i]);
  return ts;
}

/* Three subtasks of one testcase each, worth 30, 40 and 30. */
#define THREE_SUBTASKS(extra)                                                  \
  "{\"name\": \"t\", \"score_type\": \"GroupMin\", "                           \
  "\"score_type_parameters\": [[30, [\"a\"]], [40, [\"b\"]], [30, [\"c\"]]], " \
  "\"testcases\": {\"a\": true, \"b\": true, \"c\": true}" extra "}"
#define JOB3(a, b, c)                                                          \
  "{\"evaluations\": {\"a\": " #a ", \"b\": " #b ", \"c\": " #c "}}"

Test(scoremode, max_subtask_sums_the_best_score_of_each_subtask) {
  tally_task_t *task =
      ts_task(THREE_SUBTASKS(", \"score_precision\": 2"), NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[2];
  add_scored(&subs[0], task, 1, false, JOB3(0.1, 0.5, 0.2));
  add_scored(&subs[1], task, 2, false, JOB3(0.2, 0.5, 0.1));
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 2);
  cr_expect(ts.score == 32, "score %.17g", ts.score); /* 6 + 20 + 6 */
  cr_expect(ts.public_score == 32, "public %.17g", ts.public_score);
  cr_expect_not(ts.partial);
  tally_task_free(task);
}

/* Two subtasks worth 80 and 20, one testcase each. */
#define TWO_SUBTASKS(extra)                                                    \
  "{\"name\": \"t\", \"score_type\": \"GroupMin\", "                           \
  "\"score_type_parameters\": [[80, [\"a\"]], [20, [\"b\"]]], "                \
  "\"testcases\": {\"a\": true, \"b\": false}" extra "}"
#define JOB2(a, b) "{\"evaluations\": {\"a\": " #a ", \"b\": " #b "}}"

static tally_task_score_t rounding_case(const char *task_json) {
  tally_task_t *task = ts_task(task_json, NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[2];
  add_scored(&subs[0], task, 1, false, JOB2(1.0, 0.00001));
  add_scored(&subs[1], task, 2, false, JOB2(0, 0.00002));
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 2);
  tally_task_free(task);
  return ts;
}

Test(scoremode, max_subtask_sums_rounded_subtask_scores_then_rounds_again) {
  /* 80 + round(0.0004, 4): the example of the issue. */
  tally_task_score_t ts =
      rounding_case(TWO_SUBTASKS(", \"score_precision\": 4"));
  cr_expect(ts.score == 80.0004, "score %.17g", ts.score);
  /* Public: only the first subtask is all public. */
  cr_expect(ts.public_score == 80, "public %.17g", ts.public_score);

  /* At precision 2 each subtask rounds first: 0.0002 and 0.0004 are 0. */
  ts = rounding_case(TWO_SUBTASKS(", \"score_precision\": 2"));
  cr_expect(ts.score == 80, "score %.17g", ts.score);
}

/* Issue 10, defect 8: CMS's task_score sums each subtask's "score" as
 * its details show it, rounded to the precision, whatever the result's
 * own rounding; "none" only leaves the sum unrounded. */
Test(scoremode,
     max_subtask_sums_the_rounded_subtask_scores_even_without_rounding) {
  tally_task_score_t ts = rounding_case(
      TWO_SUBTASKS(", \"score_precision\": 2, \"score_rounding\": \"none\""));
  cr_expect(ts.score == 80, "score %.17g", ts.score);

  /* The case: GroupMin [[1, 1]], precision 0, outcome 0.5. */
  tally_task_t *task = ts_task(
      "{\"name\": \"t\", \"score_type\": \"GroupMin\", "
      "\"score_type_parameters\": [[1, 1]], \"testcases\": {\"a\": true}, "
      "\"score_precision\": 0, \"score_rounding\": \"none\"}",
      NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t sub;
  add_scored(&sub, task, 1, false, "{\"evaluations\": {\"a\": 0.5}}");
  ts = task_score(task, TALLY_MODE_MAX_SUBTASK, &sub, 1);
  cr_expect(ts.score == 0.0, "score %.17g", ts.score);
  tally_task_free(task);
}

/* Two subtasks worth 1, one testcase each; two jobs, each best on one. */
static double artifact_case(const char *rounding) {
  char json[512];
  snprintf(json, sizeof(json),
           "{\"name\": \"t\", \"score_type\": \"GroupMin\", "
           "\"score_type_parameters\": [[1, [\"a\"]], [1, [\"b\"]]], "
           "\"testcases\": {\"a\": true, \"b\": true}, "
           "\"score_precision\": 1, \"score_rounding\": \"%s\"}",
           rounding);
  tally_task_t *task = ts_task(json, NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[2];
  add_scored(&subs[0], task, 1, false, JOB2(0.1, 0));
  add_scored(&subs[1], task, 2, false, JOB2(0, 0.2));
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 2);
  tally_task_free(task);
  return ts.score;
}

Test(scoremode, max_subtask_rounds_the_sum_to_drop_float_artifacts) {
  double v = artifact_case("subtask");
  cr_expect(v == 0.3, "score %.17g", v);
  /* Without rounding the sum keeps them, as CMS's did. */
  v = artifact_case("none");
  cr_expect(v == 0.1 + 0.2, "score %.17g", v);
}

Test(scoremode, a_compilation_failure_adds_nothing_to_any_subtask) {
  tally_task_t *task =
      ts_task(THREE_SUBTASKS(", \"score_precision\": 2"), NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[3];
  add_scored(&subs[0], task, 1, false, "{\"compilation\": \"failed\"}");
  cr_expect(subs[0].priv.not_compiled);
  cr_expect(subs[0].pub.not_compiled);
  add_scored(&subs[1], task, 2, false, JOB3(0.1, 0, 0));
  add_scored(&subs[2], task, 3, false, "{\"compilation\": \"failed\"}");
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 3);
  cr_expect(ts.score == 3, "score %.17g", ts.score);
  cr_expect_not(ts.partial);
  cr_expect_eq(ts.submissions, 3);
  tally_task_free(task);
}

Test(scoremode, max_subtask_counts_a_sum_task_as_one_subtask) {
  tally_task_t *task = ts_task(
      "{\"name\": \"s\", \"score_type\": \"Sum\", \"score_type_parameters\": "
      "10, \"testcases\": {\"0\": true, \"1\": true, \"2\": false, \"3\": "
      "false}, \"score_precision\": 2}",
      NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[2];
  static const char *const job_a =
      "{\"evaluations\": {\"0\": 1, \"1\": 1, \"2\": 0, \"3\": 0}}";
  static const char *const job_b =
      "{\"evaluations\": {\"0\": 0, \"1\": 0, \"2\": 1, \"3\": 0.5}}";
  add_scored(&subs[0], task, 1, false, job_a);
  add_scored(&subs[1], task, 2, false, job_b);
  cr_expect_eq(subs[0].priv.nsubtasks, 0);
  /* Per testcase it would be 35; as one subtask it is the best total. */
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 2);
  cr_expect(ts.score == 20, "score %.17g", ts.score);
  cr_expect(ts.public_score == 20, "public %.17g", ts.public_score);
  tally_task_free(task);
}

Test(scoremode, max_subtask_counts_an_unscored_submission_as_0_and_partial) {
  tally_task_t *task =
      ts_task(THREE_SUBTASKS(", \"score_precision\": 2"), NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[3];
  add_scored(&subs[0], task, 1, false, JOB3(0.1, 0.5, 0.2));
  add_scored(&subs[1], task, 2, false, JOB3(0.2, 0.5, 0.1));
  tally_submission_init(&subs[2]);
  subs[2].timestamp = 3;
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 3);
  cr_expect(ts.score == 32, "score %.17g", ts.score);
  cr_expect(ts.partial);
  tally_task_free(task);
}

Test(scoremode, ignores_submissions_that_are_not_official) {
  tally_task_t *task =
      ts_task(THREE_SUBTASKS(", \"score_precision\": 2"), NULL, 0);
  cr_assert_not_null(task);
  static const tally_score_mode_t modes[] = {
      TALLY_MODE_MAX, TALLY_MODE_MAX_SUBTASK, TALLY_MODE_MAX_TOKENED_LAST};
  for (size_t m = 0; m < 3; m++) {
    tally_submission_t subs[3];
    add_scored(&subs[0], task, 1, true, JOB3(0.1, 0.5, 0.2));
    add_scored(&subs[1], task, 2, true, JOB3(1, 1, 1));
    subs[1].official = false;
    tally_submission_init(&subs[2]); /* unscored, and not official */
    subs[2].timestamp = 3;
    subs[2].official = false;
    tally_task_score_t ts = task_score(task, modes[m], subs, 3);
    cr_expect(ts.score == 29, "%s: score %.17g",
              tally_score_mode_name(modes[m]), ts.score);
    cr_expect_not(ts.partial, "%s", tally_score_mode_name(modes[m]));
    cr_expect_eq(ts.submissions, 1);
  }
  tally_task_free(task);
}

Test(scoremode, takes_the_later_of_two_submissions_with_one_timestamp_as_last) {
  static const mode_case_t tie = {
      3, {{5, 44.4, false}, {5, 11.1, false}, {1, 66.6, false}}, 11.1, false};
  expect_case(TALLY_MODE_MAX_TOKENED_LAST, &tie);
}

/* Sets s to a scored submission with these totals and no details. */
static void totals(tally_submission_t *s, double t, bool tokened, double score,
                   double public_score) {
  tally_submission_init(s);
  s->timestamp = t;
  s->tokened = tokened;
  s->scored = true;
  s->priv.score = score;
  s->pub.score = public_score;
}

Test(scoremode, computes_the_public_score_from_public_scores_only) {
  /* CMS's test_public of max and max_tokened_last. */
  tally_submission_t subs[3];
  tally_task_score_t ts;
  totals(&subs[0], 1, false, 44.4, 44.4);
  totals(&subs[1], 2, false, 66.6, 6.6);
  cr_assert_eq(
      tally_task_score(TALLY_MODE_MAX, 2, TALLY_ROUND_SUBTASK, subs, 2, &ts),
      0);
  cr_expect(ts.score == 66.6 && ts.public_score == 44.4, "%.17g %.17g",
            ts.score, ts.public_score);

  totals(&subs[0], 1, true, 44.4, 4.4);
  totals(&subs[1], 2, false, 66.6, 66.6);
  totals(&subs[2], 3, false, 11.1, 11.1);
  cr_assert_eq(tally_task_score(TALLY_MODE_MAX_TOKENED_LAST, 2,
                                TALLY_ROUND_SUBTASK, subs, 3, &ts),
               0);
  cr_expect(ts.score == 44.4 && ts.public_score == 11.1, "%.17g %.17g",
            ts.score, ts.public_score);
}

/* Subtasks 0 and 2 are all public, subtask 1 is private. */
#define PUBLIC_PRIVATE_PUBLIC                                                  \
  "{\"name\": \"p\", \"score_type\": \"GroupMin\", "                           \
  "\"score_type_parameters\": [[10, [\"a\"]], [10, [\"b\"]], [10, [\"c\"]]], " \
  "\"testcases\": {\"a\": true, \"b\": false, \"c\": true}}"

Test(scoremode, max_subtask_public_reads_the_public_details) {
  /* CMS's test_public of max_subtask: full marks in private, the public
   * details alone give 6 + 20 + 6. */
  static const char *const a =
      "{\"score\": 100, \"public_score\": 29, \"details\": ["
      "{\"idx\": 0, \"score\": 30}, {\"idx\": 1, \"score\": 40}, "
      "{\"idx\": 2, \"score\": 30}], \"public_details\": ["
      "{\"idx\": 2, \"score\": 6}, {\"idx\": 1, \"score\": 20}, "
      "{\"idx\": 0, \"score\": 3}]}";
  static const char *const b =
      "{\"score\": 100, \"public_score\": 29, \"details\": ["
      "{\"idx\": 0, \"score\": 30}, {\"idx\": 1, \"score\": 40}, "
      "{\"idx\": 2, \"score\": 30}], \"public_details\": ["
      "{\"idx\": 1, \"score\": 20}, {\"idx\": 0, \"score\": 6}, "
      "{\"idx\": 2, \"score\": 3}]}";
  const char *const results[] = {a, b};
  tally_submission_t subs[2];
  char err[128];
  for (int i = 0; i < 2; i++) {
    cJSON *res = cJSON_Parse(results[i]);
    tally_submission_init(&subs[i]);
    subs[i].timestamp = i;
    cr_assert_eq(tally_submission_read_result(&subs[i], res, err, sizeof(err)),
                 0, "%s", err);
    cJSON_Delete(res);
  }
  cr_expect_eq(subs[0].pub.nsubtasks, 3);
  tally_task_score_t ts;
  cr_assert_eq(tally_task_score(TALLY_MODE_MAX_SUBTASK, 2, TALLY_ROUND_SUBTASK,
                                subs, 2, &ts),
               0);
  cr_expect(ts.score == 100, "score %.17g", ts.score);
  cr_expect(ts.public_score == 32, "public %.17g", ts.public_score);
  for (int i = 0; i < 2; i++)
    tally_submission_close(&subs[i]);
}

Test(scoremode, max_subtask_public_is_one_subtask_when_a_subtask_is_private) {
  /* A private subtask appears in public_details without a score, so, as
   * in CMS, the public details name no subtask scores and each public
   * total counts as one subtask: max(10, 10), not 10 + 10. */
  tally_task_t *task = ts_task(PUBLIC_PRIVATE_PUBLIC, NULL, 0);
  cr_assert_not_null(task);
  tally_submission_t subs[2];
  add_scored(&subs[0], task, 1, false,
             "{\"evaluations\": {\"a\": 1, \"b\": 0, \"c\": 0}}");
  add_scored(&subs[1], task, 2, false,
             "{\"evaluations\": {\"a\": 0, \"b\": 0, \"c\": 1}}");
  cr_expect_eq(subs[0].priv.nsubtasks, 3);
  cr_expect_eq(subs[0].pub.nsubtasks, 0);
  tally_task_score_t ts = task_score(task, TALLY_MODE_MAX_SUBTASK, subs, 2);
  cr_expect(ts.score == 20, "score %.17g", ts.score);
  cr_expect(ts.public_score == 10, "public %.17g", ts.public_score);
  tally_task_free(task);
}

Test(scoremode, scores_0_and_not_partial_without_official_submissions) {
  tally_task_score_t ts = {.score = 1, .partial = true, .submissions = 9};
  cr_assert_eq(tally_task_score(TALLY_MODE_MAX_SUBTASK, 2, TALLY_ROUND_SUBTASK,
                                NULL, 0, &ts),
               0);
  cr_expect(ts.score == 0 && ts.public_score == 0);
  cr_expect_not(ts.partial);
  cr_expect_eq(ts.submissions, 0);
  cr_expect_eq(tally_task_score((tally_score_mode_t)7, 2, TALLY_ROUND_SUBTASK,
                                NULL, 0, &ts),
               TALLY_EINVAL);
}

Test(scoremode, reads_timestamp_official_and_tokened_from_a_job) {
  char err[128] = "";
  tally_submission_t s;
  tally_submission_init(&s);
  cJSON *job = cJSON_Parse("{\"task\": \"t\"}");
  cr_assert_eq(tally_submission_read_job(&s, job, err, sizeof(err)), 0);
  cr_expect(s.timestamp == 0 && s.official && !s.tokened && !s.scored);
  cJSON_Delete(job);

  job = cJSON_Parse(
      "{\"timestamp\": 1700000000.5, \"official\": false, \"tokened\": true}");
  cr_assert_eq(tally_submission_read_job(&s, job, err, sizeof(err)), 0);
  cr_expect(s.timestamp == 1700000000.5 && !s.official && s.tokened);
  cJSON_Delete(job);

  static const char *const bad[][2] = {
      {"{\"timestamp\": \"12:00\"}", "timestamp"},
      {"{\"official\": 1}", "official"},
      {"{\"tokened\": null}", "tokened"},
  };
  for (size_t i = 0; i < 3; i++) {
    tally_submission_t t;
    tally_submission_init(&t);
    job = cJSON_Parse(bad[i][0]);
    cr_expect_eq(tally_submission_read_job(&t, job, err, sizeof(err)),
                 TALLY_EINVAL, "%s", bad[i][0]);
    cr_expect(strncmp(err, bad[i][1], strlen(bad[i][1])) == 0, "%s", err);
    cr_expect(t.official && t.timestamp == 0, "unchanged on error");
    cJSON_Delete(job);
  }
}

Test(scoremode, refuses_a_result_without_scores) {
  char err[128] = "";
  tally_submission_t s;
  tally_submission_init(&s);
  cJSON *res = cJSON_Parse("{\"submission\": 1, \"error\": \"bad\"}");
  cr_expect_eq(tally_submission_read_result(&s, res, err, sizeof(err)),
               TALLY_EINVAL);
  cr_expect_str_eq(err, "score: missing or not a number");
  cr_expect_not(s.scored);
  cJSON_Delete(res);
  tally_submission_close(&s);
}

/* tally score --mode, run as a child process. */

static char dir[64];

static void setup(void) {
  tc_setup(dir, sizeof(dir), "mode");
}

static void teardown(void) {
  tc_teardown();
}

/* Runs tally score --tasks dir/tasks --mode mode dir/jobs.jsonl. */
static tc_run_t run_mode(const char *mode) {
  return tc_run((const char *[]){"score", "--tasks", tc_at("tasks"), "--mode",
                                 mode, tc_at("jobs.jsonl"), NULL},
                NULL, NULL);
}

#define CLI_TASK                                                               \
  "{\"name\": \"aplusb\", \"score_type\": \"GroupMin\", "                      \
  "\"score_type_parameters\": [[30, [\"a\"]], [40, [\"b\"]], [30, [\"c\"]]], " \
  "\"testcases\": {\"a\": true, \"b\": true, \"c\": false}, "                  \
  "\"score_precision\": 2}\n"
#define CLI_JOB(ts, extra, a, b, c)                                            \
  "{\"task\": \"aplusb\", \"timestamp\": " #ts extra ", \"evaluations\": "     \
  "{\"a\": " #a ", \"b\": " #b ", \"c\": " #c "}}\n"

#define OTHER_TASK                                                             \
  "{\"name\": \"other\", \"score_type\": \"Sum\", "                            \
  "\"score_type_parameters\": 1, \"testcases\": {\"a\": true}}\n"

TestSuite(scoremode_cli, .init = setup, .fini = teardown);

/* Writes dir/tasks/aplusb.json and, if other, dir/tasks/other.json. */
static void write_tasks(bool other) {
  cr_assert_eq(mkdir(tc_at("tasks"), 0755), 0);
  tc_write_file("tasks/aplusb.json", CLI_TASK);
  if (other)
    tc_write_file("tasks/other.json", OTHER_TASK);
}

Test(scoremode_cli, prints_the_task_score_of_the_jobs_as_one_line) {
  write_tasks(false);
  /* Given out of time order; the third is not official. */
  tc_write_file("jobs.jsonl", CLI_JOB(2, ", \"tokened\": true", 0.2, 0.5,
                                      0.1) "\n" CLI_JOB(1, "", 0.1, 0.5, 0.2)
                                  CLI_JOB(3, ", \"official\": false", 1, 1, 1));
  static const char *const want[][2] = {
      {"max_subtask", "{\"task\":\"aplusb\",\"mode\":\"max_subtask\","
                      "\"score\":32,\"public_score\":26,\"partial\":false,"
                      "\"submissions\":2}\n"},
      {"max", "{\"task\":\"aplusb\",\"mode\":\"max\",\"score\":29,"
              "\"public_score\":26,\"partial\":false,\"submissions\":2}\n"},
      /* The last by time is the tokened one. */
      {"max_tokened_last",
       "{\"task\":\"aplusb\",\"mode\":\"max_tokened_last\",\"score\":29,"
       "\"public_score\":26,\"partial\":false,\"submissions\":2}\n"},
  };
  for (size_t i = 0; i < 3; i++) {
    tc_run_t r = run_mode(want[i][0]);
    cr_expect_eq(r.status, 0, "%s: stderr: %s", want[i][0], r.err);
    cr_expect_str_eq(r.out, want[i][1]);
    cr_expect_str_eq(r.err, "");
    tc_run_free(&r);
  }
}

Test(scoremode_cli, counts_a_job_that_fails_as_unscored_and_exits_1) {
  write_tasks(false);
  tc_write_file("jobs.jsonl",
                CLI_JOB(1, "", 0.1, 0.5, 0.2) CLI_JOB(2, "", 2, 0.5, 0.2));
  tc_run_t r = run_mode("max");
  cr_expect_eq(r.status, 1);
  cr_expect_str_eq(r.out, "{\"task\":\"aplusb\",\"mode\":\"max\",\"score\":29,"
                          "\"public_score\":23,\"partial\":true,"
                          "\"submissions\":2}\n");
  cr_expect(strstr(r.err, "jobs.jsonl:2: ") != NULL, "stderr: %s", r.err);
  cr_expect(strstr(r.err, "not scored") != NULL, "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(scoremode_cli, exits_2_on_jobs_for_two_tasks_and_prints_nothing) {
  write_tasks(true);
  tc_write_file(
      "jobs.jsonl",
      CLI_JOB(1, "", 0.1, 0.5, 0.2) "{\"task\": \"other\", \"evaluations\": "
                                    "{\"a\": 1}}\n");
  tc_run_t r = run_mode("max");
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "jobs.jsonl:2: task \"other\", but the jobs before "
                          "are for task \"aplusb\"") != NULL,
            "stderr: %s", r.err);
  tc_run_free(&r);
}

Test(scoremode_cli, exits_2_on_a_job_whose_task_is_unknown_or_missing) {
  write_tasks(true);
  static const char *const jobs[][2] = {
      {"{\"task\": \"nope\", \"evaluations\": {}}\n",
       "jobs.jsonl:1: task: unknown task \"nope\""},
      {"{\"evaluations\": {\"a\": 1}}\n", "jobs.jsonl:1: task: missing"},
      {"[1]\n", "jobs.jsonl:1: not a JSON object"},
  };
  for (size_t i = 0; i < 3; i++) {
    tc_write_file("jobs.jsonl", jobs[i][0]);
    tc_run_t r = run_mode("max");
    cr_expect_eq(r.status, 2, "%s", jobs[i][0]);
    cr_expect_str_eq(r.out, "");
    cr_expect(strstr(r.err, jobs[i][1]) != NULL, "stderr: %s", r.err);
    tc_run_free(&r);
  }
}

Test(scoremode_cli, scores_0_over_no_jobs) {
  write_tasks(false);
  tc_write_file("jobs.jsonl", "\n");
  tc_run_t r = run_mode("max_subtask");
  cr_expect_eq(r.status, 0, "stderr: %s", r.err);
  cr_expect_str_eq(r.out, "{\"task\":\"aplusb\",\"mode\":\"max_subtask\","
                          "\"score\":0,\"public_score\":0,\"partial\":false,"
                          "\"submissions\":0}\n");
  tc_run_free(&r);
}

Test(scoremode_cli, exits_2_on_a_bad_timestamp_or_an_unknown_mode) {
  write_tasks(false);
  tc_write_file("jobs.jsonl", CLI_JOB("soon", "", 0.1, 0.5, 0.2));
  tc_run_t r = run_mode("max");
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "jobs.jsonl:1: timestamp: ") != NULL, "stderr: %s",
            r.err);
  tc_run_free(&r);

  r = run_mode("best");
  cr_expect_eq(r.status, 2);
  cr_expect_str_eq(r.out, "");
  cr_expect(strstr(r.err, "unknown score mode \"best\"") != NULL, "stderr: %s",
            r.err);
  tc_run_free(&r);
}
