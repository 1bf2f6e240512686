/* Answer tasks end to end through the engine (docs/challenges.md): their
 * configs, refused with paths; the seed examples; the breakdown, public
 * dimensions, warnings, constraints and malformed jobs. */
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CIPHER                                                                 \
  "{\"name\": \"cipher\", \"task_type\": \"answer\", \"scoring\": {"           \
  "\"type\": \"deterministic\", \"dimensions\": ["                             \
  "{\"name\": \"correctness\", \"weight\": 0.6, \"primitive\": "               \
  "\"exact_match_ratio\", \"field\": \"answers\", \"ground_truth_field\": "    \
  "\"expected_answers\"},"                                                     \
  "{\"name\": \"speed\", \"weight\": 0.2, \"primitive\": \"time_decay\", "     \
  "\"time_limit_secs\": 300},"                                                 \
  "{\"name\": \"completeness\", \"weight\": 0.2, \"primitive\": "              \
  "\"coverage_ratio\", \"field\": \"attempted\", \"ground_truth_field\": "     \
  "\"all_questions\"}]},"                                                      \
  "\"ground_truth\": {\"expected_answers\": [\"a\", \"b\"], "                  \
  "\"all_questions\": [\"q1\", \"q2\"]}, \"difficulty\": \"contender\"}"

/* An answer task of the given dimensions (a JSON list's inside) and
 * further task keys (",..." or ""). */
static char *task_of(const char *dims, const char *more) {
  size_t n = strlen(dims) + strlen(more) + 256;
  char *t = malloc(n);
  snprintf(t, n,
           "{\"name\": \"t\", \"task_type\": \"answer\", \"scoring\": "
           "{\"type\": \"deterministic\", \"dimensions\": [%s]}%s}",
           dims, more);
  return t;
}

static void expect_error(const char *task, const char *message) {
  char *errs = ts_task_errors(task);
  cr_expect(errs != NULL && strstr(errs, message) != NULL,
            "wanted \"%s\" in: %s", message, errs ? errs : "(null)");
  free(errs);
}

static void expect_dims_error(const char *dims, const char *more,
                              const char *message) {
  char *t = task_of(dims, more);
  expect_error(t, message);
  free(t);
}

#define EXACT(name, w)                                                         \
  "{\"name\": \"" name "\", \"weight\": " w ", \"primitive\": "                \
  "\"exact_match\", \"field\": \"x\", \"ground_truth_field\": \"x\"}"

Test(challenges, the_seed_example_loads_and_scores) {
  cJSON *r = ts_run(CIPHER,
                    "{\"submission\": \"m-77\", \"task\": \"cipher\", "
                    "\"participant\": \"agent-7\", \"answer\": {\"answers\": "
                    "[\"a\", \"c\"], \"attempted\": [\"q1\", \"q2\"]}, "
                    "\"ground_truth\": {\"expected_answers\": [\"a\", \"b\"]}, "
                    "\"time_used\": 42.5}");
  cr_assert_not_null(r);
  cr_expect_eq(ts_num(r, "score"), 672);
  cr_expect_eq(ts_num(r, "max_score"), 1000);
  cr_expect_str_eq(ts_str_at(r, "result"), "draw");
  cr_expect_eq(ts_num_at(r, "score_breakdown.correctness.score"), 500);
  cr_expect_eq(ts_num_at(r, "score_breakdown.correctness.weighted"), 300);
  cr_expect_str_eq(ts_str_at(r, "score_breakdown.speed.label"), "Speed");
  cr_expect_eq(ts_num_at(r, "score_breakdown.completeness.score"), 1000);
  cr_expect_eq(cJSON_GetArraySize(ts_at(r, "submission_warnings")), 0);
  cJSON_Delete(r);
}

/* correctness 900 x 0.5, speed 780 x 0.2, methodology 690 x 0.15 and
 * completeness 760 x 0.15: 823.5 before rounding. */
Test(challenges, the_seed_breakdown_sums_to_823_5) {
  char truth10[128], answer10[128], truth100[1024], covered69[1024],
      covered76[1024];
  strcpy(truth10, "[0,1,2,3,4,5,6,7,8,9]");
  strcpy(answer10, "[0,1,2,3,4,5,6,7,8,-1]");
  size_t a = 0, b = 0, c = 0;
  a += (size_t)sprintf(truth100 + a, "[");
  b += (size_t)sprintf(covered69 + b, "[");
  c += (size_t)sprintf(covered76 + c, "[");
  for (int i = 0; i < 100; i++) {
    a += (size_t)sprintf(truth100 + a, "%s%d", i ? "," : "", i);
    if (i < 69)
      b += (size_t)sprintf(covered69 + b, "%s%d", i ? "," : "", i);
    if (i < 76)
      c += (size_t)sprintf(covered76 + c, "%s%d", i ? "," : "", i);
  }
  strcat(truth100, "]");
  strcat(covered69, "]");
  strcat(covered76, "]");
  char task[4096], job[4096];
  snprintf(task, sizeof(task),
           "{\"name\": \"t\", \"task_type\": \"answer\", \"scoring\": "
           "{\"type\": \"deterministic\", \"dimensions\": ["
           "{\"name\": \"correctness\", \"weight\": 0.5, \"primitive\": "
           "\"exact_match_ratio\", \"field\": \"a\", \"ground_truth_field\": "
           "\"a\"},"
           "{\"name\": \"speed\", \"weight\": 0.2, \"primitive\": "
           "\"time_decay\", \"time_limit_secs\": 300},"
           "{\"name\": \"methodology\", \"weight\": 0.15, \"primitive\": "
           "\"coverage_ratio\", \"field\": \"m\", \"ground_truth_field\": "
           "\"all\"},"
           "{\"name\": \"completeness\", \"weight\": 0.15, \"primitive\": "
           "\"coverage_ratio\", \"field\": \"c\", \"ground_truth_field\": "
           "\"all\"}]}, \"ground_truth\": {\"a\": %s, \"all\": %s}, "
           "\"score_precision\": 1}",
           truth10, truth100);
  snprintf(job, sizeof(job),
           "{\"answer\": {\"a\": %s, \"m\": %s, \"c\": %s}, "
           "\"time_used\": 66}",
           answer10, covered69, covered76);
  cJSON *r = ts_run(task, job);
  cr_assert_not_null(r);
  cr_expect_eq(ts_num_at(r, "score_breakdown.correctness.score"), 900);
  cr_expect_float_eq(ts_num_at(r, "score_breakdown.speed.score"), 780, 1e-9);
  cr_expect_eq(ts_num_at(r, "score_breakdown.methodology.score"), 690);
  cr_expect_eq(ts_num_at(r, "score_breakdown.completeness.score"), 760);
  cr_expect_float_eq(ts_num(r, "score"), 823.5, 1e-9);
  cr_expect_str_eq(ts_str_at(r, "result"), "win");
  cr_expect_str_eq(ts_str_at(r, "score_breakdown.methodology.label"),
                   "Methodology");
  cJSON_Delete(r);
}

Test(challenges, weights_must_sum_to_one_within_a_thousandth) {
  expect_dims_error(EXACT("a", "0.5") "," EXACT("b", "0.498"), "",
                    "scoring.dimensions: the weights sum to 0.998, not 1.0");
  expect_dims_error(EXACT("a", "0.5") "," EXACT("b", "0.502"), "",
                    "the weights sum to 1.002, not 1.0");
  char *t = task_of(EXACT("a", "0.5") "," EXACT("b", "0.5005"),
                    ", \"ground_truth\": {\"x\": 1}");
  char err[256] = "";
  tally_task_t *task = ts_task(t, err, sizeof(err));
  cr_expect_not_null(task, "1.0005 is within 0.001 of 1: %s", err);
  tally_task_free(task);
  free(t);
}

Test(challenges, dimensions_are_refused_with_their_paths) {
  expect_dims_error(EXACT("a", "0.5") "," EXACT("a", "0.5"), "",
                    "task.json: scoring.dimensions[1].name: dimension \"a\" "
                    "appears twice");
  expect_dims_error(EXACT("Bad-name", "1"), "",
                    "scoring.dimensions[0].name: \"Bad-name\" must match");
  expect_dims_error("{\"name\": \"a\", \"weight\": 1, \"primitive\": "
                    "\"telepathy\"}",
                    "",
                    "scoring.dimensions[0].primitive: unknown primitive "
                    "\"telepathy\"");
  expect_dims_error("{\"name\": \"a\", \"weight\": 1, \"primitive\": "
                    "\"time_decay\"}",
                    "", "scoring.dimensions[0].time_limit_secs: is missing");
  expect_dims_error("{\"name\": \"a\", \"weight\": 1, \"primitive\": "
                    "\"exact_match\", \"field\": \"x\"}",
                    "", "scoring.dimensions[0].ground_truth_field: is missing");
  expect_dims_error("{\"name\": \"a\", \"weight\": 0, \"primitive\": "
                    "\"exact_match\", \"field\": \"x\", "
                    "\"ground_truth_field\": \"x\"}",
                    "",
                    "scoring.dimensions[0].weight: must be a number in "
                    "(0, 1]");
  expect_dims_error("{\"name\": \"a\", \"weight\": 1, \"primitive\": "
                    "\"exact_match\", \"field\": \"x\", "
                    "\"ground_truth_field\": \"x\", \"tolerance\": 1}",
                    "", "scoring.dimensions[0].tolerance: unknown key");
  expect_dims_error("{\"name\": \"a\", \"weight\": 1, \"primitive\": "
                    "\"token_efficiency\"}",
                    "",
                    "scoring.dimensions[0].primitive: token_efficiency "
                    "needs constraints.token_budget");
  expect_dims_error("", "", "scoring.dimensions: must be a list of 1 to 16");
  expect_dims_error(EXACT("a", "1"), ", \"difficulty\": \"hard\"",
                    "task.json: difficulty: must be \"newcomer\"");
  expect_dims_error(EXACT("a", "1"), ", \"testcases\": {\"a\": true}",
                    "task.json: testcases: an answer task is scored by its "
                    "dimensions");
  expect_dims_error(EXACT("a", "1"), ", \"constraints\": {\"tokens\": 5}",
                    "task.json: constraints.tokens: unknown key");
  expect_dims_error(EXACT("a", "1"),
                    ", \"answer_format\": {\"x\": {\"type\": \"text\"}}",
                    "task.json: answer_format.x.type: must be \"string\"");
  expect_error("{\"name\": \"t\", \"score_type\": \"Sum\", "
               "\"score_type_parameters\": 1, \"testcases\": {\"a\": true}, "
               "\"scoring\": {}}",
               "task.json: scoring: only an answer task");
  expect_error("{\"name\": \"t\", \"task_type\": \"answer\"}",
               "task.json: scoring: is missing");
  expect_dims_error(EXACT("a", "1"),
                    ", \"ground_truth\": {\"x\": {\"y\": 1, \"y\": 2}}",
                    "task.json: ground_truth.x.y: key appears twice");
  expect_error("{\"name\": \"t\", \"testcases\": {\"a\": true}}",
               "task.json: score_type: is missing");
}

Test(challenges, custom_dimensions_get_their_name_as_label) {
  const char *dims = EXACT("accuracy", "0.4") "," EXACT(
      "code_quality", "0.3") "," EXACT("deep_coverage", "0.3");
  char *t = task_of(dims, ", \"ground_truth\": {\"x\": 1}");
  cJSON *r = ts_run(t, "{\"answer\": {\"x\": 1}}");
  cr_assert_not_null(r);
  cr_expect_str_eq(ts_str_at(r, "score_breakdown.accuracy.label"), "Accuracy");
  cr_expect_str_eq(ts_str_at(r, "score_breakdown.code_quality.label"),
                   "Code Quality");
  cr_expect_str_eq(ts_str_at(r, "score_breakdown.deep_coverage.label"),
                   "Deep coverage");
  cr_expect_eq(ts_num(r, "score"), 1000);
  cJSON_Delete(r);
  free(t);
}

Test(challenges, private_dimensions_stay_out_of_public_details) {
  const char *dims =
      EXACT("correctness",
            "0.75") ","
                    "{\"name\": \"hidden\", \"weight\": 0.25, \"primitive\": "
                    "\"exact_match\", \"field\": \"y\", "
                    "\"ground_truth_field\": \"y\", "
                    "\"public\": false}";
  char *t = task_of(dims, ", \"ground_truth\": {\"x\": 1, \"y\": 2}");
  cJSON *r = ts_run(t, "{\"answer\": {\"x\": 1, \"y\": 2}}");
  cr_assert_not_null(r);
  cr_expect_eq(ts_num(r, "score"), 1000);
  cr_expect_eq(ts_num(r, "public_score"), 750);
  cr_expect_eq(ts_num(r, "max_public_score"), 750);
  cr_expect_not_null(ts_at(r, "details.score_breakdown.hidden"));
  cr_expect_null(ts_at(r, "public_details.score_breakdown.hidden"));
  cr_expect_not_null(ts_at(r, "public_details.score_breakdown.correctness"));
  cJSON_Delete(r);
  free(t);
}

Test(challenges, the_jobs_ground_truth_overrides_the_tasks) {
  char *t = task_of(EXACT("a", "1"), ", \"ground_truth\": {\"x\": 1}");
  cJSON *r =
      ts_run(t, "{\"answer\": {\"x\": 2}, \"ground_truth\": {\"x\": 2}}");
  cr_expect_eq(ts_num(r, "score"), 1000);
  cJSON_Delete(r);
  free(t);
  t = task_of(EXACT("a", "1"), "");
  r = ts_run(t, "{\"submission\": \"s\", \"answer\": {\"x\": 2}}");
  cr_expect(strstr(ts_str_at(r, "error"),
                   "ground_truth: no field \"x\" (dimension a reads it)") !=
                NULL,
            "%s", ts_str_at(r, "error"));
  cJSON_Delete(r);
  free(t);
}

Test(challenges, warnings_name_field_dimension_and_severity) {
  const char *dims =
      "{\"name\": \"correctness\", \"weight\": 0.5, \"primitive\": "
      "\"exact_match_ratio\", \"field\": \"answers\", "
      "\"ground_truth_field\": \"answers\"},"
      "{\"name\": \"completeness\", \"weight\": 0.5, \"primitive\": "
      "\"coverage_ratio\", \"field\": \"attempted\", "
      "\"ground_truth_field\": \"all\"}";
  char *t = task_of(dims, ", \"ground_truth\": {\"answers\": [1], \"all\": "
                          "[1]}, \"answer_format\": {\"notes\": {\"type\": "
                          "\"string\"}, \"id\": {\"type\": \"number\", "
                          "\"required\": true}}");
  cJSON *r = ts_run(t, "{\"answer\": {\"answers\": \"1\", \"notes\": 5, "
                       "\"extra\": true}}");
  cr_assert_not_null(r);
  cJSON *w = (cJSON *)ts_at(r, "submission_warnings");
  cr_assert_eq(cJSON_GetArraySize(w), 5, "%s", cJSON_PrintUnformatted(w));
  int errors = 0, warnings = 0;
  for (cJSON *e = w->child; e != NULL; e = e->next) {
    const char *sev = cJSON_GetObjectItem(e, "severity")->valuestring;
    const char *f = cJSON_GetObjectItem(e, "field")->valuestring;
    if (strcmp(sev, "error") == 0)
      errors++;
    else
      warnings++;
    if (strcmp(f, "id") == 0)
      cr_expect_str_eq(sev, "error", "a required field missing");
    if (strcmp(f, "notes") == 0)
      cr_expect_str_eq(sev, "warning", "an optional field of a wrong type");
    if (strcmp(f, "extra") == 0)
      cr_expect_str_eq(sev, "warning", "a field nothing reads");
    if (strcmp(f, "answers") == 0) {
      cr_expect_str_eq(sev, "error");
      cr_expect_str_eq(cJSON_GetObjectItem(e, "dimension")->valuestring,
                       "correctness");
    }
    if (strcmp(f, "attempted") == 0)
      cr_expect_str_eq(sev, "error");
  }
  cr_expect_eq(errors, 3);
  cr_expect_eq(warnings, 2);
  cr_expect_eq(ts_num(r, "score"), 0);
  cr_expect_str_eq(ts_str_at(r, "result"), "loss");
  cJSON_Delete(r);
  free(t);
}

Test(challenges, constraints_are_reported_not_scored) {
  char *t = task_of(EXACT("a", "1"),
                    ", \"ground_truth\": {\"x\": 1}, \"constraints\": "
                    "{\"time_limit_secs\": 30, \"token_budget\": 1000, "
                    "\"max_llm_calls\": 3}");
  cJSON *r = ts_run(t, "{\"answer\": {\"x\": 1}, \"time_used\": 42.5, "
                       "\"usage\": {\"input_tokens\": 1200, "
                       "\"output_tokens\": 300, \"llm_calls\": 4}}");
  cr_assert_not_null(r);
  cr_expect_eq(ts_num(r, "score"), 1000);
  cJSON *v = (cJSON *)ts_at(r, "constraint_violations");
  cr_assert_eq(cJSON_GetArraySize(v), 3);
  cr_expect(strstr(v->child->valuestring, "42.5") != NULL);
  cr_expect(strstr(v->child->valuestring, "30") != NULL);
  cr_expect(strstr(v->child->next->valuestring, "1500") != NULL);
  cJSON_Delete(r);
  free(t);
}

Test(challenges, thresholds_move_win_and_draw) {
  char *t = task_of(
      "{\"name\": \"a\", \"weight\": 1, \"primitive\": \"exact_match_ratio\", "
      "\"field\": \"x\", \"ground_truth_field\": \"x\"}",
      ", \"ground_truth\": {\"x\": [1, 2, 3, 4]}, \"win_threshold\": 750, "
      "\"draw_threshold\": 500");
  const char *jobs[][2] = {
      {"{\"answer\": {\"x\": [1, 2, 3, 4]}}", "win"},
      {"{\"answer\": {\"x\": [1, 2, 3, 0]}}", "win"},
      {"{\"answer\": {\"x\": [1, 2, 0, 0]}}", "draw"},
      {"{\"answer\": {\"x\": [1, 0, 0, 0]}}", "loss"},
  };
  for (size_t i = 0; i < 4; i++) {
    cJSON *r = ts_run(t, jobs[i][0]);
    cr_expect_str_eq(ts_str_at(r, "result"), jobs[i][1], "%s", jobs[i][0]);
    cJSON_Delete(r);
  }
  free(t);
}

Test(challenges, malformed_jobs_are_job_errors) {
  char *t = task_of(EXACT("a", "1"), ", \"ground_truth\": {\"x\": 1}");
  const char *jobs[][2] = {
      {"{\"submission\": 1}", "evaluations: missing"},
      {"{\"submission\": 1, \"evaluations\": {}}", "answer: missing (task t "
                                                   "is an answer task"},
      {"{\"submission\": 1, \"answer\": [1]}", "answer: must be an object"},
      {"{\"submission\": 1, \"answer\": {\"x\": 1e999}}",
       "number out of range"},
      {"{\"submission\": 1, \"answer\": {}, \"time_used\": \"5\"}",
       "time_used: must be a number"},
      {"{\"submission\": 1, \"answer\": {}, \"usage\": {\"tokens\": 5}}",
       "usage.tokens: unknown key"},
      {"{\"submission\": 1, \"answer\": {}, \"attempt\": 0}",
       "attempt: must be a whole number"},
      {"{\"submission\": 1, \"answer\": {}, \"verified\": 1}",
       "verified: must be true or false"},
      {"{\"submission\": 1, \"answer\": {\"x\": [{\"k\": 1, \"k\": 1}]}}",
       "answer.x[0].k: key appears twice"},
      {"{\"submission\": 1, \"answer\": {}, \"ground_truth\": {\"x\": 1, "
       "\"x\": 2}}",
       "ground_truth.x: key appears twice"},
  };
  for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
    cJSON *r = ts_run(t, jobs[i][0]);
    cr_assert_not_null(r, "%s", jobs[i][0]);
    const char *e = ts_str_at(r, "error");
    cr_expect(e != NULL && strstr(e, jobs[i][1]) != NULL, "%s: %s", jobs[i][0],
              e ? e : "(no error)");
    cJSON_Delete(r);
  }
  free(t);
  /* And an answer for a task of testcases. */
  cJSON *r = ts_run("{\"name\": \"s\", \"score_type\": \"Sum\", "
                    "\"score_type_parameters\": 10, \"testcases\": {\"a\": "
                    "true}}",
                    "{\"answer\": {}}");
  cr_expect(strstr(ts_str_at(r, "error"), "answer: task s takes evaluations") !=
                NULL,
            "%s", ts_str_at(r, "error"));
  cJSON_Delete(r);
}
