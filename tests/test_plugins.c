/* Score-type plugins: loading the GroupMax example, scoring with it, and
 * the errors of loading something that is not a usable plugin. */
#include "engine/plugins.h"
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUPMAX_SO TALLY_BINARY_DIR "/plugins/groupmax.so"

static tally_registry_t reg;
static tally_plugins_t plugins;

static void setup(void) {
  cr_assert_eq(tally_registry_init(&reg), 0);
  tally_plugins_init(&plugins);
}

/* Plugins are unloaded last, once nothing uses their types. */
static void teardown(void) {
  tally_registry_close(&reg);
  tally_plugins_close(&plugins);
}

TestSuite(plugins, .init = setup, .fini = teardown);

static void load_groupmax(void) {
  char err[512] = "";
  int rc = tally_plugins_load(&plugins, &reg, GROUPMAX_SO, err, sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
}

/* Parses a task with the registry of the suite; NULL with the errors in
 * err when it is invalid. */
static tally_task_t *parse(const char *json, char *err, size_t errlen) {
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "task.json");
  if (tally_task_parse(&reg, json, strlen(json), &d, &task) != 0)
    snprintf(err, errlen, "%s", d.count ? d.msgs[0] : "?");
  tally_diag_close(&d);
  return task;
}

#define GROUPMAX_TASK                                                          \
  "{\"name\": \"m\", \"score_type\": \"GroupMax\", "                           \
  "\"score_type_parameters\": [[40, 2], [60, 2]], \"testcases\": {\"0\": "     \
  "true, \"1\": true, \"2\": false, \"3\": false}, \"score_precision\": 2}"

Test(plugins, registers_groupmax_from_the_example_plugin) {
  size_t before = reg.count;
  load_groupmax();
  cr_expect_eq(reg.count, before + 1);
  const tally_score_type_t *t = tally_registry_find(&reg, "GroupMax");
  cr_assert_not_null(t);
  cr_expect_str_eq(t->name, "GroupMax");
  cr_expect_eq(t->version, TALLY_SCORE_TYPE_VERSION);
  cr_expect_eq(plugins.count, 1);
}

Test(plugins, scores_a_groupmax_task_by_the_best_outcome_of_each_subtask) {
  load_groupmax();
  char err[512] = "";
  tally_task_t *task = parse(GROUPMAX_TASK, err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  cr_expect_eq(task->max_score, 100);
  cr_expect_eq(task->max_public_score, 40);
  cJSON *res = ts_score(task, "{\"submission\": 1, \"evaluations\": {\"0\": "
                              "0, \"1\": 0.5, \"2\": 0.25, \"3\": 0}}");
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect_eq(ts_num(res, "score"), 35);
  cr_expect_eq(ts_num(res, "public_score"), 20);
  cr_expect_eq(ts_num_at(res, "details[0].score_fraction"), 0.5);
  cr_expect_eq(ts_num_at(res, "details[1].score_fraction"), 0.25);
  cr_expect_str_eq(ts_str_at(res, "details[0].testcases[0].outcome"),
                   "Not correct");
  cr_expect_str_eq(ts_str_at(res, "details[0].testcases[1].outcome"),
                   "Partially correct");
  /* The engine's restricted-feedback rule applies to plugin types too. */
  cr_expect_eq(ts_bool_at(res, "details[0].testcases[0].show_in_oi_"
                               "restricted_feedback"),
               1);
  cr_expect_eq(ts_bool_at(res, "details[0].testcases[1].show_in_"
                               "restricted_feedback"),
               0);
  cr_expect_str_eq(ts_str_at(res, "ranking_headers[1]"), "Subtask 1 (60)");
  cr_expect_str_eq(ts_str_at(res, "ranking_details[1]"), "15");
  cJSON_Delete(res);
  res = ts_score(task, "{\"evaluations\": {\"0\": 1, \"1\": 0, \"2\": 0, "
                       "\"3\": 1}}");
  cr_expect_eq(ts_num(res, "score"), 100);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(plugins, keeps_groupmax_outcomes_on_the_unit_scale) {
  load_groupmax();
  tally_task_t *task = parse(GROUPMAX_TASK, NULL, 0);
  cr_assert_not_null(task);
  cJSON *res = ts_score(task, "{\"evaluations\": {\"0\": 1.5, \"1\": 0, "
                              "\"2\": 0, \"3\": 0}}");
  cr_assert_not_null(res);
  const char *error = ts_str_at(res, "error");
  cr_assert_not_null(error);
  cr_expect(strstr(error, "outcome 1.5 is outside [0, 1]") != NULL, "%s",
            error);
  cJSON_Delete(res);
  tally_task_free(task);
}

Test(plugins, decodes_groupmax_subtasks_with_the_engine_rules) {
  load_groupmax();
  char err[512] = "";
  tally_task_t *task =
      parse("{\"name\": \"m\", \"score_type\": \"GroupMax\", "
            "\"score_type_parameters\": [[40, 2, 0.5]], \"testcases\": {\"0\": "
            "true, \"1\": true}}",
            err, sizeof(err));
  cr_expect_null(task);
  cr_expect(strstr(err, "task.json: score_type_parameters[0][2]: extra "
                        "element") != NULL,
            "%s", err);
  tally_task_free(task);
}

Test(plugins, leaves_groupmax_unknown_until_the_plugin_is_loaded) {
  char err[512] = "";
  tally_task_t *task = parse(GROUPMAX_TASK, err, sizeof(err));
  cr_expect_null(task);
  cr_expect(strstr(err, "task.json: score_type: unknown score type "
                        "\"GroupMax\"") != NULL,
            "%s", err);
  tally_task_free(task);
}

Test(plugins, fails_on_a_missing_file_naming_the_path) {
  char err[512] = "";
  size_t before = reg.count;
  const char *path = TALLY_BINARY_DIR "/plugins/no-such-plugin.so";
  int rc = tally_plugins_load(&plugins, &reg, path, err, sizeof(err));
  cr_expect_eq(rc, TALLY_EPLUGIN);
  cr_expect(strstr(err, path) != NULL, "%s", err);
  cr_expect(strstr(err, "cannot load plugin") != NULL, "%s", err);
  cr_expect_eq(reg.count, before);
  cr_expect_eq(plugins.count, 0);
}

Test(plugins, refuses_to_register_groupmax_twice) {
  load_groupmax();
  size_t before = reg.count;
  char err[512] = "";
  int rc = tally_plugins_load(&plugins, &reg, GROUPMAX_SO, err, sizeof(err));
  cr_expect_eq(rc, TALLY_EPLUGIN);
  cr_expect(strstr(err, "already registered") != NULL, "%s", err);
  cr_expect(strstr(err, GROUPMAX_SO) != NULL, "%s", err);
  cr_expect_eq(reg.count, before);
  cr_expect_eq(plugins.count, 1);
  /* The first load still works. */
  tally_task_t *task = parse(GROUPMAX_TASK, err, sizeof(err));
  cr_expect_not_null(task, "%s", err);
  tally_task_free(task);
}

Test(plugins, says_a_shared_object_without_the_entry_points_is_not_a_plugin) {
  char err[512] = "";
  size_t before = reg.count;
  int rc = tally_plugins_load(&plugins, &reg, "libm.so.6", err, sizeof(err));
  cr_expect_eq(rc, TALLY_EPLUGIN);
  cr_expect(strstr(err, "libm.so.6") != NULL, "%s", err);
  cr_expect(strstr(err, "not a tally plugin") != NULL, "%s", err);
  cr_expect_eq(reg.count, before);
  cr_expect_eq(plugins.count, 0);
}

Test(plugins, loads_every_plugin_of_a_folder) {
  char err[512] = "";
  int rc = tally_plugins_load_dir(&plugins, &reg, TALLY_BINARY_DIR "/plugins",
                                  err, sizeof(err));
  cr_assert_eq(rc, 0, "%s", err);
  cr_expect_not_null(tally_registry_find(&reg, "GroupMax"));
  cr_expect_not_null(tally_registry_find_primitive(&reg, "keyword_ratio"));
}

/* ABI 3: a plugin adds a primitive, which an answer task's dimension then
 * names (the example keyword_ratio). */
Test(plugins, scores_an_answer_task_with_a_plugin_primitive) {
  char err[512] = "";
  cr_assert_eq(tally_plugins_load(&plugins, &reg,
                                  TALLY_BINARY_DIR "/plugins/keywords.so", err,
                                  sizeof(err)),
               0, "%s", err);
  static const char task_json[] =
      "{\"name\": \"essay\", \"task_type\": \"answer\", \"scoring\": "
      "{\"type\": \"deterministic\", \"dimensions\": [{\"name\": "
      "\"analysis\", \"weight\": 1, \"primitive\": \"keyword_ratio\", "
      "\"field\": \"text\", \"ground_truth_field\": \"keywords\"}]}, "
      "\"ground_truth\": {\"keywords\": [\"Caesar\", \"shift\", "
      "\"frequency\", \"key\"]}}";
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "essay.json");
  cr_assert_eq(tally_task_parse(&reg, task_json, strlen(task_json), &d, &task),
               0, "%s", d.count ? d.msgs[0] : "");
  tally_diag_close(&d);
  cJSON *r = ts_score(task, "{\"answer\": {\"text\": \"A caesar SHIFT of "
                            "three, found by frequency analysis\"}}");
  cr_assert_not_null(r);
  cr_expect_eq(ts_num(r, "score"), 750);
  cJSON_Delete(r);
  tally_task_free(task);
}

Test(plugins, fails_on_a_missing_folder_naming_it) {
  char err[512] = "";
  const char *dir = TALLY_BINARY_DIR "/no-such-plugin-folder";
  int rc = tally_plugins_load_dir(&plugins, &reg, dir, err, sizeof(err));
  cr_expect_eq(rc, TALLY_EPLUGIN);
  cr_expect(strstr(err, dir) != NULL, "%s", err);
}

/* Issue 10: a plugin that crashes, exits or hangs while it loads is named,
 * and the caller lives on; tally check exits 2, never 0. */
typedef struct misbehave_case_s {
  char kind[8];
  char expected[96];
} misbehave_case_t;

ParameterizedTestParameters(plugins, names_a_plugin_that_misbehaves_loading) {
  static misbehave_case_t cases[] = {
      {"crash", "the plugin crashed while loading (signal 11"},
      {"exit", "the plugin ended the process while loading (exit status 0)"},
      {"hang", "the plugin did not finish loading within 5000 ms"},
  };
  return cr_make_param_array(misbehave_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(misbehave_case_t *c, plugins,
                  names_a_plugin_that_misbehaves_loading, .timeout = 30) {
  char dir[256], err[1024] = "";
  snprintf(dir, sizeof(dir), "%s/test-plugins/%s", TALLY_BINARY_DIR, c->kind);
  int rc = tally_plugins_load_dir(&plugins, &reg, dir, err, sizeof(err));
  cr_expect_eq(rc, TALLY_EPLUGIN);
  cr_expect(strstr(err, "misbehave.so") != NULL, "%s", err);
  cr_expect(strstr(err, c->expected) != NULL, "%s", err);
  cr_expect_eq(plugins.count, 0);

  /* tally check says so too, and fails. */
  char cmd[1024];
  snprintf(cmd, sizeof(cmd),
           "'%s/tally' check --plugins '%s' '%s/examples/tasks' 2>&1 | grep "
           "-q 'misbehave.so: the plugin'; s=$?; '%s/tally' check --plugins "
           "'%s' '%s/examples/tasks' >/dev/null 2>&1; [ $? = 2 ] && [ $s = 0 ]",
           TALLY_BINARY_DIR, dir, TALLY_SOURCE_DIR, TALLY_BINARY_DIR, dir,
           TALLY_SOURCE_DIR);
  cr_expect_eq(system(cmd), 0, "tally check did not fail naming the plugin");
}
