/* Task config errors: every problem is reported, each as
 * "task.json: <json path>: message", and valid configs are accepted. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#define TCS4 "{\"0\": true, \"1\": true, \"2\": false, \"3\": false}"
#define TASK(type, params, tcs, extra)                                         \
  "{\"name\": \"t\", \"score_type\": \"" type "\", "                           \
  "\"score_type_parameters\": " params ", \"testcases\": " tcs extra "}"
#define MIN(params) TASK("GroupMin", params, TCS4, "")
#define THR(params) TASK("GroupThreshold", params, TCS4, "")
#define TOP(extra) TASK("GroupMin", "[[40, 2], [60, 2]]", TCS4, extra)

typedef struct config_case_s {
  char json[320];
  char expected[176]; /* a substring of one of the messages */
  int nerrors;        /* how many messages there must be */
} config_case_t;

ParameterizedTestParameters(task_errors, reports_the_path_and_the_problem) {
  static config_case_t cases[] = {
      /* The document itself. */
      {"{\"name\": ", "task.json: invalid JSON at line 1", 1},
      {"[]", "task.json: must be a JSON object", 1},
      {TOP("") " x", "task.json: unexpected text after the JSON value", 1},
      /* Top-level keys. */
      {TOP(", \"colour\": 1"), "task.json: colour: unknown key", 1},
      {TOP(", \"name\": \"u\""), "task.json: name: key appears twice", 1},
      {TASK("GroupMin", "[[40, 2], [60, 2]]", TCS4, "") "", "", 0},
      {"{\"score_type\": \"Sum\", \"score_type_parameters\": 1, "
       "\"testcases\": {\"a\": true}}",
       "task.json: name: is missing", 1},
      {"{\"name\": \"t\", \"score_type_parameters\": 1, \"testcases\": "
       "{\"a\": true}}",
       "task.json: score_type: is missing", 1},
      {"{\"name\": \"t\", \"score_type\": \"Sum\", \"testcases\": {\"a\": "
       "true}}",
       "task.json: score_type_parameters: is missing", 1},
      {"{\"name\": \"t\", \"score_type\": \"Sum\", "
       "\"score_type_parameters\": 1}",
       "task.json: testcases: is missing", 1},
      {"{\"name\": 5, \"score_type\": \"Sum\", \"score_type_parameters\": 1, "
       "\"testcases\": {\"a\": true}}",
       "task.json: name: must be a string", 1},
      {"{\"name\": \"\", \"score_type\": \"Sum\", \"score_type_parameters\": "
       "1, \"testcases\": {\"a\": true}}",
       "task.json: name: must not be empty", 1},
      /* score_type. */
      {TASK("Foo", "1", TCS4, ""),
       "task.json: score_type: unknown score "
       "type \"Foo\"",
       1},
      {TASK("groupmin", "1", TCS4, ""),
       "task.json: score_type: unknown "
       "score type \"groupmin\"",
       1},
      {"{\"name\": \"t\", \"score_type\": 3, \"score_type_parameters\": 1, "
       "\"testcases\": {\"a\": true}}",
       "task.json: score_type: must be a string", 1},
      /* score_precision, score_rounding, time_limit. */
      {TOP(", \"score_precision\": 11"),
       "task.json: score_precision: must be between 0 and 10", 1},
      {TOP(", \"score_precision\": -1"),
       "task.json: score_precision: must be between 0 and 10", 1},
      {TOP(", \"score_precision\": 1.5"),
       "task.json: score_precision: must be a whole number", 1},
      {TOP(", \"score_precision\": \"2\""),
       "task.json: score_precision: must be a whole number", 1},
      {TOP(", \"score_rounding\": \"task\""),
       "task.json: score_rounding: must be \"subtask\" or \"none\"", 1},
      {TOP(", \"score_rounding\": 1"),
       "task.json: score_rounding: must be \"subtask\" or \"none\"", 1},
      /* score_mode, feedback_level. */
      {TOP(", \"score_mode\": \"best\""),
       "task.json: score_mode: must be \"max_subtask\", \"max\" or "
       "\"max_tokened_last\"",
       1},
      {TOP(", \"score_mode\": null"), "task.json: score_mode: must be", 1},
      {TOP(", \"feedback_level\": \"partial\""),
       "task.json: feedback_level: must be \"restricted\", \"full\" or "
       "\"oi_restricted\"",
       1},
      {TOP(", \"score_mode\": \"max\", \"feedback_level\": \"full\""), "", 0},
      {TOP(", \"time_limit\": 0"),
       "task.json: time_limit: must be a positive number of seconds", 1},
      {TOP(", \"time_limit\": -1.5"),
       "task.json: time_limit: must be a positive number of seconds", 1},
      {TOP(", \"time_limit\": \"1\""),
       "task.json: time_limit: must be a positive number of seconds", 1},
      /* Beyond a double: out of range (issue 10), not "not a number". */
      {TOP(", \"time_limit\": 1e999"),
       "task.json: time_limit: number out of range", 1},
      /* testcases. */
      {TASK("Sum", "1", "{}", ""),
       "task.json: testcases: the task has no "
       "testcases",
       1},
      {TASK("Sum", "1", "[\"a\"]", ""),
       "task.json: testcases: must be an object mapping codenames", 1},
      {TASK("Sum", "1", "{\"0\": 1}", ""),
       "task.json: testcases[\"0\"]: must be true, false or {\"public\": "
       "bool}",
       1},
      {TASK("Sum", "1", "{\"a\": {\"public\": 1}}", ""),
       "task.json: testcases.a.public: must be true or false", 1},
      {TASK("Sum", "1", "{\"a\": {}}", ""),
       "task.json: testcases.a.public: is missing", 1},
      {TASK("Sum", "1", "{\"a\": {\"public\": true, \"x\": 1}}", ""),
       "task.json: testcases.a.x: unknown key", 1},
      {TASK("Sum", "1", "{\"a\": true, \"a\": false}", ""),
       "task.json: testcases.a: codename appears twice", 1},
      {TASK("Sum", "1", "{\"\": true}", ""),
       "task.json: testcases[\"\"]: codename must not be empty", 1},
      /* Sum's parameter. */
      {TASK("Sum", "-1", TCS4, ""),
       "task.json: score_type_parameters: Sum takes one non-negative number",
       1},
      {TASK("Sum", "[10]", TCS4, ""),
       "task.json: score_type_parameters: Sum takes one non-negative number",
       1},
      {TASK("Sum", "1e999", TCS4, ""),
       "task.json: score_type_parameters: number out of range", 1},
      /* The list of subtasks. */
      {MIN("40"),
       "task.json: score_type_parameters: GroupMin takes a list "
       "with one entry per subtask",
       1},
      {MIN("[]"),
       "task.json: score_type_parameters: GroupMin needs at "
       "least one subtask",
       1},
      {MIN("[[40, 2], 7]"),
       "task.json: score_type_parameters[1]: subtask "
       "entry must be a list or an object",
       1},
      /* Max scores. */
      {MIN("[[-1, 2], [60, 2]]"),
       "task.json: score_type_parameters[0][0]: "
       "max score must be a non-negative finite "
       "number",
       1},
      {MIN("[[40, 2], [1e999, 2]]"),
       "task.json: score_type_parameters[1][0]"
       ": number out of range",
       1},
      {MIN("[[\"40\", 2], [60, 2]]"),
       "task.json: score_type_parameters[0]"
       "[0]: max score must be a "
       "non-negative finite number",
       1},
      {MIN("[{\"max_score\": -5, \"testcases\": 4}]"),
       "task.json: score_type_parameters[0].max_score: max score must be a "
       "non-negative finite number",
       1},
      /* Counts. */
      {MIN("[[40, 0], [60, 2]]"),
       "task.json: score_type_parameters[0][1]: "
       "count must be positive",
       1},
      {MIN("[[40, -2], [60, 2]]"),
       "task.json: score_type_parameters[0][1]: "
       "count must be positive",
       1},
      {MIN("[[40, 1.5], [60, 2]]"),
       "task.json: score_type_parameters[0][1]"
       ": count must be a whole number",
       1},
      {MIN("[[40, 2], [60, 3]]"),
       "task.json: score_type_parameters[1][1]: "
       "counts ask for at least 5 testcases but "
       "the task has 4",
       1},
      {MIN("[[40, 5]]"),
       "task.json: score_type_parameters[0][1]: counts ask "
       "for at least 5 testcases but the task has 4",
       1},
      /* Regexes. */
      {MIN("[[40, \"0\"], [60, \"x\"]]"),
       "task.json: score_type_parameters[1][1]: regex \"x\" matches no "
       "testcase",
       1},
      {MIN("[[40, \"(\"]]"),
       "task.json: score_type_parameters[0][1]: regex "
       "does not compile",
       1},
      {MIN("[[40, \"[\"]]"),
       "task.json: score_type_parameters[0][1]: regex "
       "does not compile",
       1},
      /* Lists. */
      {MIN("[[40, [\"0\", \"9\"]]]"),
       "task.json: score_type_parameters[0][1]"
       "[1]: unknown testcase \"9\"",
       1},
      {MIN("[[40, []]]"),
       "task.json: score_type_parameters[0][1]: list of "
       "testcases is empty",
       1},
      {MIN("[[40, [0]]]"),
       "task.json: score_type_parameters[0][1][0]: "
       "codename must be a string",
       1},
      {MIN("[[40, [\"0\", \"0\"]]]"),
       "task.json: score_type_parameters[0][1]"
       "[1]: testcase \"0\" is listed twice",
       1},
      {MIN("[[40, true]]"),
       "task.json: score_type_parameters[0][1]: "
       "testcases must be a count, a regex or a list",
       1},
      /* Mixed forms. */
      {MIN("[[40, 2], [60, \"1\"]]"),
       "task.json: score_type_parameters[1][1]: testcases is a regex but "
       "subtask 0 uses a count",
       1},
      {MIN("[[40, [\"0\"]], [60, 2]]"),
       "task.json: score_type_parameters[1][1]: testcases is a count but "
       "subtask 0 uses a list of codenames",
       1},
      {MIN("[{\"max_score\": 40, \"testcases\": \"0\"}, [60, [\"2\"]]]"),
       "task.json: score_type_parameters[1][1]: testcases is a list of "
       "codenames but subtask 0 uses a regex",
       1},
      /* Entry shapes. */
      {MIN("[[40, 2, 1]]"),
       "task.json: score_type_parameters[0][2]: extra "
       "element",
       1},
      {MIN("[[40]]"),
       "task.json: score_type_parameters[0]: GroupMin subtask "
       "entries are [max_score, testcases]",
       1},
      {THR("[[40, 2, 0.5, 7]]"),
       "task.json: score_type_parameters[0][3]: "
       "extra element",
       1},
      {MIN("[{\"max_score\": 40, \"testcases\": 2, \"colour\": 1}]"),
       "task.json: score_type_parameters[0].colour: unknown key for a "
       "GroupMin subtask",
       1},
      {MIN("[{\"max_score\": 40, \"testcases\": 2, \"threshold\": 1}]"),
       "task.json: score_type_parameters[0].threshold: unknown key for a "
       "GroupMin subtask",
       1},
      {MIN("[{\"testcases\": 2}]"),
       "task.json: score_type_parameters[0]: "
       "max_score is missing",
       1},
      {MIN("[{\"max_score\": 2}]"),
       "task.json: score_type_parameters[0]: "
       "testcases is missing",
       1},
      {MIN("[{\"max_score\": 40, \"testcases\": 2, "
           "\"always_show_testcases\": 1}]"),
       "task.json: score_type_parameters[0].always_show_testcases: "
       "always_show_testcases must be true or false",
       1},
      /* Thresholds. */
      {THR("[[40, 2]]"),
       "task.json: score_type_parameters[0]: "
       "GroupThreshold subtask entries are [max_score, "
       "testcases, threshold]: threshold is missing",
       1},
      {THR("[[40, 2, 0.5], [60, 2, 0]]"),
       "task.json: score_type_parameters[1][2]: threshold must be a positive "
       "number",
       1},
      {THR("[[40, 2, -1], [60, 2, 1]]"),
       "task.json: score_type_parameters[0][2]: threshold must be a positive "
       "number",
       1},
      {THR("[[40, 2, \"1\"], [60, 2, 1]]"),
       "task.json: score_type_parameters[0][2]: threshold must be a positive "
       "number",
       1},
      {THR("[[40, 2, 1e999], [60, 2, 1]]"),
       "task.json: score_type_parameters[0][2]: number out of range", 1},
      {THR("[[40, 2, null], [60, 2, 1]]"),
       "task.json: score_type_parameters[0][2]: threshold must be a positive "
       "number",
       1},
      {THR("[{\"max_score\": 40, \"testcases\": 4}]"),
       "task.json: score_type_parameters[0]: threshold is missing", 1},
      {THR("[{\"max_score\": 40, \"testcases\": 4, \"threshold\": 0}]"),
       "task.json: score_type_parameters[0].threshold: threshold must be a "
       "positive number",
       1},
  };
  return cr_make_param_array(config_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(config_case_t *c, task_errors,
                  reports_the_path_and_the_problem) {
  char *errors = ts_task_errors(c->json);
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, c->expected) != NULL,
            "config %s\nexpected a message containing:\n  %s\ngot:\n%s",
            c->json, c->expected, errors);
  cr_expect_eq(ts_count_lines(errors), (size_t)c->nerrors,
               "config %s\nexpected %d messages, got:\n%s", c->json, c->nerrors,
               errors);
  /* A task comes back exactly when there is no error. */
  tally_task_t *task = ts_task(c->json, NULL, 0);
  cr_expect_eq(task == NULL, c->nerrors > 0);
  tally_task_free(task);
  free(errors);
}

Test(task_errors, names_the_line_of_invalid_json) {
  char *errors = ts_task_errors("{\n\"name\": \"t\",\n  oops\n}");
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, "task.json: invalid JSON at line 3, column") != NULL,
            "%s", errors);
  cr_expect_eq(ts_count_lines(errors), 1, "%s", errors);
  free(errors);
}

Test(task_errors, collects_every_error_of_a_task_not_just_the_first) {
  char *errors = ts_task_errors(
      "{\"name\": \"t\", \"score_type\": \"GroupThreshold\", "
      "\"score_type_parameters\": [[40, 0, 0.5], [-60, 2, -1], [1, 2, 1, 9]],"
      " \"testcases\": " TCS4 ", \"score_precision\": 11, \"score_rounding\":"
      " \"all\", \"time_limit\": 0, \"colour\": \"red\"}");
  cr_assert_not_null(errors);
  static const char *const want[] = {
      "task.json: colour: unknown key",
      "task.json: score_precision: must be between 0 and 10",
      "task.json: score_rounding: must be \"subtask\" or \"none\"",
      "task.json: time_limit: must be a positive number of seconds",
      "task.json: score_type_parameters[0][1]: count must be positive",
      "task.json: score_type_parameters[1][0]: max score must be a "
      "non-negative finite number",
      "task.json: score_type_parameters[1][2]: threshold must be a positive "
      "number",
      "task.json: score_type_parameters[2][3]: extra element",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect(strstr(errors, want[i]) != NULL, "missing:\n  %s\ngot:\n%s",
              want[i], errors);
  cr_expect_eq(ts_count_lines(errors), sizeof(want) / sizeof(want[0]), "%s",
               errors);
  free(errors);
}

Test(task_errors, reports_every_missing_required_key) {
  char *errors = ts_task_errors("{}");
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, "task.json: name: is missing") != NULL, "%s",
            errors);
  cr_expect(strstr(errors, "task.json: score_type: is missing") != NULL);
  cr_expect(strstr(errors, "task.json: score_type_parameters: is missing") !=
            NULL);
  cr_expect(strstr(errors, "task.json: testcases: is missing") != NULL);
  cr_expect_eq(ts_count_lines(errors), 4, "%s", errors);
  free(errors);
}

Test(task_errors, reports_errors_in_every_subtask_entry) {
  char *errors = ts_task_errors(
      MIN("[[40, [\"9\", \"8\"]], {\"testcases\": [], \"max_score\": -1}]"));
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, "score_type_parameters[0][1][0]: unknown testcase "
                           "\"9\"") != NULL,
            "%s", errors);
  cr_expect(strstr(errors, "score_type_parameters[0][1][1]: unknown testcase "
                           "\"8\"") != NULL,
            "%s", errors);
  cr_expect(strstr(errors, "score_type_parameters[1].testcases: list of "
                           "testcases is empty") != NULL,
            "%s", errors);
  cr_expect(strstr(errors, "score_type_parameters[1].max_score: max score") !=
                NULL,
            "%s", errors);
  cr_expect_eq(ts_count_lines(errors), 4, "%s", errors);
  free(errors);
}

Test(task_errors, rejects_a_subtask_object_that_names_testcases_twice) {
  /* A repeated key inside a subtask object is an error like any other
   * repeated key, and must not decode the targets twice (the second
   * decoding writes past the first one's buffer). */
  char *errors = ts_task_errors(
      MIN("[{\"max_score\": 40, \"testcases\": \".*\", \"testcases\": "
          "\".*\"}]"));
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, "task.json: score_type_parameters[0].testcases: "
                           "key appears twice") != NULL,
            "%s", errors);
  free(errors);
}

Test(task_errors, rejects_a_subtask_object_that_names_max_score_twice) {
  char *errors = ts_task_errors(
      MIN("[{\"max_score\": 40, \"max_score\": 50, \"testcases\": 4}]"));
  cr_assert_not_null(errors);
  cr_expect(strstr(errors, "task.json: score_type_parameters[0].max_score: "
                           "key appears twice") != NULL,
            "%s", errors);
  free(errors);
}

typedef struct valid_case_s {
  char json[320];
  double max_score;
  double max_public_score;
  size_t nsubtasks;
} valid_case_t;

ParameterizedTestParameters(task_errors, accepts_every_documented_form) {
  static valid_case_t cases[] = {
      {TOP(""), 100, 40, 2},
      {TOP(", \"score_precision\": 0, \"score_rounding\": \"subtask\""), 100,
       40, 2},
      {TOP(", \"score_precision\": 10, \"score_rounding\": \"none\""), 100, 40,
       2},
      {TOP(", \"time_limit\": 0.5"), 100, 40, 2},
      {MIN("[[40, \"[01]\"], [60, \"[23]\"]]"), 100, 40, 2},
      {MIN("[[40, [\"1\", \"0\"]], [60, [\"3\", \"2\", \"0\"]]]"), 100, 40, 2},
      {MIN("[{\"max_score\": 40, \"testcases\": 2, "
           "\"always_show_testcases\": true}, {\"max_score\": 60, "
           "\"testcases\": 2}]"),
       100, 40, 2},
      {MIN("[[40, 2], {\"max_score\": 60, \"testcases\": 2}]"), 100, 40, 2},
      {MIN("[[0, 4]]"), 0, 0, 1},
      {THR("[[40, 2, 0.5], {\"max_score\": 60, \"testcases\": 2, "
           "\"threshold\": 3}]"),
       100, 40, 2},
      {TASK("GroupMul", "[[12.5, 4]]", TCS4, ""), 12.5, 0, 1},
      {TASK("Sum", "2.5", TCS4, ""), 10, 5, 0},
      {TASK("Sum", "0", TCS4, ""), 0, 0, 0},
      {TASK("Sum", "1",
            "{\"a\": {\"public\": true}, \"b\": {\"public\": "
            "false}}",
            ""),
       2, 1, 0},
  };
  return cr_make_param_array(valid_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(valid_case_t *c, task_errors, accepts_every_documented_form) {
  char *errors = ts_task_errors(c->json);
  cr_expect_str_eq(errors, "", "config %s", c->json);
  free(errors);
  tally_task_t *task = ts_task(c->json, NULL, 0);
  cr_assert_not_null(task);
  cr_expect_eq(task->max_score, c->max_score);
  cr_expect_eq(task->max_public_score, c->max_public_score);
  cr_expect_eq(task->nsubtasks, c->nsubtasks);
  tally_task_free(task);
}

Test(task_errors, keeps_the_settings_it_decodes) {
  tally_task_t *task =
      ts_task(TOP(", \"score_precision\": 3, \"score_rounding\": \"none\", "
                  "\"time_limit\": 2.5"),
              NULL, 0);
  cr_assert_not_null(task);
  cr_expect_str_eq(task->name, "t");
  cr_expect_str_eq(task->type->name, "GroupMin");
  cr_expect_eq(task->score_precision, 3);
  cr_expect_eq(task->score_rounding, TALLY_ROUND_NONE);
  cr_expect(task->has_time_limit);
  cr_expect_eq(task->time_limit, 2.5);
  cr_expect_eq(task->ntestcases, 4);
  tally_task_free(task);
  task = ts_task(TOP(""), NULL, 0);
  cr_assert_not_null(task);
  cr_expect_eq(task->score_precision, 0);
  cr_expect_eq(task->score_rounding, TALLY_ROUND_SUBTASK);
  cr_expect_not(task->has_time_limit);
  tally_task_free(task);
}
