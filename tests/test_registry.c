/* The score-type registry: the built-ins, lookups by name, and the checks
 * on a new registration. */
#include "support.h"

#include <criterion/criterion.h>
#include <string.h>

static double max_reduce(const double *o, size_t n, const tally_subtask_t *st) {
  (void)st;
  (void)n;
  return o[0];
}

static const char *any_label(double o, const tally_subtask_t *st) {
  (void)o;
  (void)st;
  return "Correct";
}

static tally_registry_t reg;

static void setup(void) {
  cr_assert_eq(tally_registry_init(&reg), 0);
}
static void teardown(void) {
  tally_registry_close(&reg);
}

TestSuite(registry, .init = setup, .fini = teardown);

Test(registry, holds_the_four_builtin_types) {
  static const char *const names[] = {"Sum", "GroupMin", "GroupMul",
                                      "GroupThreshold"};
  cr_expect_eq(reg.count, 4);
  for (size_t i = 0; i < 4; i++) {
    const tally_score_type_t *t = tally_registry_find(&reg, names[i]);
    cr_assert_not_null(t, "%s", names[i]);
    cr_expect_str_eq(t->name, names[i]);
  }
  cr_expect_null(tally_registry_find(&reg, "sum"));
  cr_expect_null(tally_registry_find(&reg, "GroupMax"));
  cr_expect_null(tally_registry_find(&reg, ""));
}

Test(registry, refuses_a_second_type_of_the_same_name) {
  static const tally_score_type_t dup = {
      .version = TALLY_SCORE_TYPE_VERSION,
      .name = "GroupMin",
      .reduce = max_reduce,
      .label = any_label,
  };
  char err[256] = "";
  cr_expect_eq(tally_registry_add(&reg, &dup, err, sizeof(err)), TALLY_EEXIST);
  cr_expect(strstr(err, "already registered") != NULL, "%s", err);
  cr_expect_eq(reg.count, 4);
  cr_expect_eq(tally_registry_find(&reg, "GroupMin"), &tally_score_group_min);
}

Test(registry, refuses_a_type_built_for_another_version) {
  static const tally_score_type_t old = {
      .version = TALLY_SCORE_TYPE_VERSION + 1,
      .name = "Old",
      .reduce = max_reduce,
      .label = any_label,
  };
  char err[256] = "";
  cr_expect_eq(tally_registry_add(&reg, &old, err, sizeof(err)), TALLY_EINVAL);
  cr_expect(strstr(err, "version") != NULL, "%s", err);
  cr_expect_null(tally_registry_find(&reg, "Old"));
}

Test(registry, refuses_a_type_with_incomplete_methods) {
  static const tally_score_type_t half = {
      .version = TALLY_SCORE_TYPE_VERSION,
      .name = "Half",
      .reduce = max_reduce,
  };
  static const tally_score_type_t nameless = {
      .version = TALLY_SCORE_TYPE_VERSION,
      .name = "",
      .reduce = max_reduce,
      .label = any_label,
  };
  char err[256] = "";
  cr_expect_eq(tally_registry_add(&reg, &half, err, sizeof(err)), TALLY_EINVAL);
  cr_expect_eq(tally_registry_add(&reg, &nameless, err, sizeof(err)),
               TALLY_EINVAL);
  cr_expect_eq(reg.count, 4);
}

Test(registry, makes_a_new_group_type_usable_in_tasks) {
  static const tally_score_type_t first = {
      .version = TALLY_SCORE_TYPE_VERSION,
      .name = "GroupFirst",
      .flags = TALLY_SCORE_UNIT_OUTCOMES,
      .reduce = max_reduce,
      .label = any_label,
  };
  char err[256] = "";
  cr_assert_eq(tally_registry_add(&reg, &first, err, sizeof(err)), 0, "%s",
               err);
  const char *json = "{\"name\": \"f\", \"score_type\": \"GroupFirst\", "
                     "\"score_type_parameters\": [[10, [\"b\", \"a\"]]], "
                     "\"testcases\": {\"a\": true, \"b\": true}, "
                     "\"score_precision\": 1}";
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "task.json");
  int rc = tally_task_parse(&reg, json, strlen(json), &d, &task);
  cr_assert_eq(rc, 0, "%s", d.count ? d.msgs[0] : "?");
  tally_diag_close(&d);
  cJSON *res = ts_score(task, "{\"evaluations\": {\"a\": 1, \"b\": 0.25}}");
  cr_expect_eq(ts_num(res, "score"), 2.5); /* the listed first is "b" */
  cJSON_Delete(res);
  tally_task_free(task);
}
