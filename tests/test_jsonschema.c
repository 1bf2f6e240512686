/* The JSON Schema validator (evalspecs/jsonschema.c) against the official
 * JSON-Schema-Test-Suite: Debian's json-schema-test-suite package carries
 * it up to draft 7, so its draft-7 cases run for every keyword whose
 * meaning 2020-12 keeps; the files of tests/jsonschema are tally's own cases,
 * in the suite's format, for what 2020-12 changed or added. Each file's pass
 * count is logged, and every case must pass. */
#include "evalspecs/jsonschema.h"
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE "/usr/share/json-schema-test-suite/tests/draft7/"

/* Draft-7 files whose keywords mean in 2020-12 what they meant then. */
static const char *const draft7_files[] = {"additionalProperties",
                                           "allOf",
                                           "anyOf",
                                           "boolean_schema",
                                           "const",
                                           "contains",
                                           "default",
                                           "enum",
                                           "exclusiveMaximum",
                                           "exclusiveMinimum",
                                           "if-then-else",
                                           "maxItems",
                                           "maxLength",
                                           "maxProperties",
                                           "maximum",
                                           "minItems",
                                           "minLength",
                                           "minProperties",
                                           "minimum",
                                           "multipleOf",
                                           "not",
                                           "oneOf",
                                           "pattern",
                                           "patternProperties",
                                           "properties",
                                           "propertyNames",
                                           "ref",
                                           "required",
                                           "type",
                                           "uniqueItems",
                                           NULL};

/* Groups of those files that test what 2020-12 changed: $ref beside other
 * keywords (draft 7 ignored them), the draft-07 meta-schema over the
 * network, the array form of items. */
static bool skipped(const char *description) {
  static const char *const changed[] = {
      "ref overrides any sibling keywords",
      "remote ref, containing refs itself",
      "$ref prevents a sibling $id from changing the base uri",
      "Recursive references between schemas",
      "refs with relative uris and defs",
      "relative refs with absolute uris and defs",
      "$id must be resolved against nearest parent, not just immediate "
      "parent",
      "simple URN base URI with $ref via the URN",
      "naive replacement of $ref with its destination is not correct",
      "Location-independent identifier with base URI change in subschema",
      "refs with quote",
      NULL};
  for (size_t i = 0; changed[i] != NULL; i++)
    if (strcmp(changed[i], description) == 0)
      return true;
  return strstr(description, "items") != NULL &&
         strstr(description, "prefixItems") == NULL &&
         strstr(description, "contains") == NULL;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s != NULL)
    s[n] = '\0';
  fclose(f);
  return s;
}

/* Runs every group of a suite file; returns the failures, counting the
 * cases run into *ran. */
/* Whether s is well-formed UTF-8 (lead and continuation bytes). */
static bool valid_utf8(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t need = *p < 0x80    ? 1
                  : *p >= 0xF8 ? 0
                  : *p >= 0xF0 ? 4
                  : *p >= 0xE0 ? 3
                  : *p >= 0xC2 ? 2
                               : 0;
    if (need == 0)
      return false;
    for (size_t k = 1; k < need; k++)
      if ((p[k] & 0xC0) != 0x80)
        return false;
    p += need;
  }
  return true;
}

static int run_file(const char *path, bool draft7, int *ran) {
  char *text = slurp(path);
  cr_assert_not_null(text, "cannot read %s", path);
  cJSON *groups = cJSON_Parse(text);
  free(text);
  cr_assert(cJSON_IsArray(groups), "%s: not a suite file", path);
  int failed = 0;
  for (const cJSON *g = groups->child; g; g = g->next) {
    const char *desc = ts_str_at(g, "description");
    if (draft7 && skipped(desc))
      continue;
    char err[512];
    const cJSON *schema = cJSON_GetObjectItem(g, "schema");
    tally_js_t *js = tally_js_compile(schema, err, sizeof(err));
    for (const cJSON *t = cJSON_GetObjectItem(g, "tests")->child; t;
         t = t->next) {
      bool want = cJSON_IsTrue(cJSON_GetObjectItem(t, "valid"));
      int got = js ? tally_js_validate(js, cJSON_GetObjectItem(t, "data"), err,
                                       sizeof(err))
                   : -1;
      (*ran)++;
      if (got != (want ? 1 : 0)) {
        failed++;
        cr_log_error("%s: %s: %s: got %d, want %s (%s)", path, desc,
                     ts_str_at(t, "description"), got,
                     want ? "valid" : "invalid", got < 0 ? err : "");
      } else if (got == 0 &&
                 (strstr(err, " at ") == NULL || !valid_utf8(err))) {
        /* Every failure names the schema's keyword, the place in the
         * document and why, in UTF-8. */
        failed++;
        cr_log_error("%s: %s: %s: the failure is not named: %s", path, desc,
                     ts_str_at(t, "description"), err);
      }
    }
    tally_js_free(js);
  }
  cJSON_Delete(groups);
  return failed;
}

Test(jsonschema, draft7_suite_for_the_keywords_2020_12_keeps) {
  int ran = 0, failed = 0;
  for (size_t i = 0; draft7_files[i] != NULL; i++) {
    char path[512];
    snprintf(path, sizeof(path), SUITE "%s.json", draft7_files[i]);
    int before = ran;
    int f = run_file(path, true, &ran);
    cr_log_info("draft7/%s.json: %d of %d cases pass", draft7_files[i],
                ran - before - f, ran - before);
    failed += f;
  }
  cr_log_info("draft 7 suite: %d of %d cases pass", ran - failed, ran);
  cr_expect_eq(failed, 0, "%d of %d draft-7 cases fail", failed, ran);
}

Test(jsonschema, own_cases_for_what_2020_12_changed_or_added) {
  DIR *d = opendir(TALLY_SOURCE_DIR "/tests/jsonschema");
  cr_assert_not_null(d);
  int ran = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strstr(e->d_name, ".json") == NULL)
      continue;
    char path[512];
    snprintf(path, sizeof(path), TALLY_SOURCE_DIR "/tests/jsonschema/%s",
             e->d_name);
    int before = ran;
    int f = run_file(path, false, &ran);
    cr_log_info("%s: %d of %d cases pass", e->d_name, ran - before - f,
                ran - before);
    failed += f;
  }
  closedir(d);
  cr_expect_gt(ran, 0);
  cr_expect_eq(failed, 0, "%d of %d cases fail", failed, ran);
}

/* What a failure says: the schema's keyword by its path, the document's
 * member by its JSON pointer, and why; never a branch's failure when the
 * branch's keyword passed. */
Test(jsonschema, a_failure_names_the_keyword_the_place_and_why) {
  const char *cases[][3] = {
      {"{\"properties\":{\"a\":{\"type\":\"string\"}},"
       "\"additionalProperties\":false}",
       "{\"a\":\"x\",\"summary\":1}",
       "additionalProperties at /summary: \"summary\" is not allowed"},
      {"{\"properties\":{\"a\":{\"properties\":{\"b/c\":{\"type\":"
       "\"integer\"}}}}}",
       "{\"a\":{\"b/c\":\"x\"}}",
       "properties/a/properties/b~1c/type at /a/b~1c: \"x\" is a string, "
       "not \"integer\""},
      {"{\"required\":[\"name\"]}", "{}",
       "required at the document's root: \"name\" is missing"},
      {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"number\"}],"
       "\"minimum\":5}",
       "3", "minimum at the document's root: 3 is less than 5"},
      {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}", "3",
       "anyOf at the document's root: matches none of its 2 subschemas"},
      {"{\"items\":{\"type\":\"string\"}}", "[\"a\",2]",
       "items/type at /1: 2 is a number, not \"string\""},
      {"{\"properties\":{\"x\":{\"pattern\":\"^[0-9]+$\"}}}", "{\"x\":\"abc\"}",
       "properties/x/pattern at /x: \"abc\" does not match ^[0-9]+$"},
      {"{\"$defs\":{\"n\":{\"maximum\":1}},\"properties\":{\"v\":{\"$ref\":"
       "\"#/$defs/n\"}}}",
       "{\"v\":2}", "properties/v/$ref/maximum at /v: 2 is more than 1"},
      {"{\"oneOf\":[{\"minimum\":0},{\"maximum\":10}]}", "5",
       "oneOf at the document's root: matches 2 of its 2 subschemas, not one"},
      {"{\"not\":{\"type\":\"string\"}}", "\"s\"",
       "not at the document's root: matches the schema it must not"},
      {"{\"uniqueItems\":true}", "[1,2,1]",
       "uniqueItems at the document's root: items 0 and 2 are equal"},
      {"{\"unevaluatedProperties\":false}", "{\"é\":1}",
       "unevaluatedProperties at /é: not allowed (the schema here is false)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cJSON *schema = cJSON_Parse(cases[i][0]), *doc = cJSON_Parse(cases[i][1]);
    cr_assert(schema && doc, "case %zu", i);
    char err[512];
    tally_js_t *js = tally_js_compile(schema, err, sizeof(err));
    cr_assert_not_null(js, "case %zu: %s", i, err);
    cr_expect_eq(tally_js_validate(js, doc, err, sizeof(err)), 0, "case %zu",
                 i);
    cr_expect_str_eq(err, cases[i][2], "case %zu", i);
    tally_js_free(js);
    cJSON_Delete(schema);
    cJSON_Delete(doc);
  }
}

/* A path and a message cut to fit stay UTF-8. */
Test(jsonschema, a_long_path_is_cut_at_a_characters_start) {
  char name[700] = "";
  for (int i = 0; i < 200; i++)
    strcat(name, "é");
  char schema[1600], doc[1600];
  snprintf(schema, sizeof(schema),
           "{\"properties\":{\"%s\":{\"properties\":{\"%s\":{\"type\":"
           "\"null\"}}}}}",
           name, name);
  snprintf(doc, sizeof(doc), "{\"%s\":{\"%s\":1}}", name, name);
  cJSON *s = cJSON_Parse(schema), *d = cJSON_Parse(doc);
  char err[1200];
  tally_js_t *js = tally_js_compile(s, err, sizeof(err));
  cr_assert_not_null(js);
  cr_expect_eq(tally_js_validate(js, d, err, sizeof(err)), 0);
  cr_expect(valid_utf8(err), "%s", err);
  cr_expect(strstr(err, "1 is a number, not \"null\"") != NULL, "%s", err);
  tally_js_free(js);
  cJSON_Delete(s);
  cJSON_Delete(d);
}
