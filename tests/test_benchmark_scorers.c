/* The answer scorers of model benchmarks (docs/comparators.md): the
 * "unicode" normalization, normalized, contains, multichoice,
 * answer_line, last_number and json_answer, on the reference harness's
 * examples and on the bugs its code has that tally's definitions fix,
 * with what each says it extracted. */
#include "engine/registry.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tally_registry_t reg;

static void setup(void) {
  cr_assert_eq(tally_registry_init(&reg), 0);
}
static void teardown(void) {
  tally_registry_close(&reg);
}

TestSuite(scorers, .init = setup, .fini = teardown);

typedef struct run_s {
  int rc;
  double outcome;
  int extracted;
  char admin[256];
  char err[256];
  char perr[512]; /* the first parameter error */
} run_t;

static run_t run_n(const char *name, const char *params, const char *out,
                   size_t out_len, const char *exp) {
  run_t r;
  memset(&r, 0, sizeof(r));
  const tally_comparator_t *c = tally_registry_find_comparator(&reg, name);
  cr_assert_not_null(c, "no comparator %s", name);
  void *state = NULL;
  if (c->parse != NULL) {
    tally_diag_t d;
    tally_jpath_t path;
    tally_diag_init(&d, "task.json");
    tally_jpath_init(&path);
    tally_jpath_key(&path, "comparator_parameters");
    cJSON *json = params ? cJSON_Parse(params) : NULL;
    cr_assert(params == NULL || json != NULL, "bad JSON: %s", params);
    r.rc = c->parse(json, &state, &d, &path);
    if (d.count > 0)
      snprintf(r.perr, sizeof(r.perr), "%s", d.msgs[0]);
    cJSON_Delete(json);
    tally_diag_close(&d);
    if (r.rc != 0)
      return r;
  }
  tally_compare_result_t res;
  memset(&res, 'x', sizeof(res));
  res.extracted = -1;
  r.rc = c->compare(state, out, out_len, exp, strlen(exp), &res, r.err,
                    sizeof(r.err));
  r.outcome = res.outcome;
  r.extracted = res.extracted;
  if (r.rc == 0)
    snprintf(r.admin, sizeof(r.admin), "%s", res.admin);
  if (c->free != NULL && state != NULL)
    c->free(state);
  return r;
}

static run_t run(const char *name, const char *params, const char *out,
                 const char *exp) {
  return run_n(name, params, out, strlen(out), exp);
}

static double outcome(const char *name, const char *params, const char *out,
                      const char *exp) {
  run_t r = run(name, params, out, exp);
  cr_assert_eq(r.rc, 0, "%s(%s, %s): %s %s", name, out, exp, r.err, r.perr);
  return r.outcome;
}

#define YES(name, params, out, exp)                                            \
  cr_expect_eq(outcome(name, params, out, exp), 1, "%s: %s vs %s", name, out,  \
               exp)
#define NO(name, params, out, exp)                                             \
  cr_expect_eq(outcome(name, params, out, exp), 0, "%s: %s vs %s", name, out,  \
               exp)

Test(scorers, normalization_in_the_issue_order) {
  /* NFKD: the ligature and the full-width letters decompose. */
  YES("normalized", NULL, "\xef\xac\x81ne", "fine");
  YES("normalized", NULL, "\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3", "abc");
  /* Accents decompose and stay as marks. */
  YES("normalized", NULL, "Caf\xc3\xa9", "cafe\xcc\x81");
  NO("normalized", NULL, "Caf\xc3\xa9", "cafe");
  /* Unicode lowercase, Greek final sigma. */
  YES("normalized", NULL, "\xce\x9f\xce\x94\xce\x9f\xce\xa3",
      "\xce\xbf\xce\xb4\xce\xbf\xcf\x82");
  YES("normalized", NULL, "\xc3\x84PFEL", "\xc3\xa4pfel");
  /* Articles are whole words before punctuation goes: "the." is one,
   * "the-end" loses "the", "theory" keeps it. */
  YES("normalized", NULL, "the.", "");
  YES("normalized", NULL, "The-End", "end");
  YES("normalized", NULL, "theory", "theory");
  YES("normalized", NULL, "an apple a day", "apple day");
  /* A mark after "the" is not a word character (Python's \w), so "thé"
   * loses its "the" as the reference does. */
  YES("normalized", NULL, "th\xc3\xa9", "\xcc\x81");
  /* Unicode white space separates and joins. */
  YES("normalized", NULL, "New\xe3\x80\x80York\xc2\xa0 City", "new york city");
  /* Only ASCII punctuation goes. */
  NO("normalized", NULL, "\xc2\xbfQu\xc3\xa9?", "que\xcc\x81");
  YES("normalized", NULL, "\xc2\xbfQu\xc3\xa9?", "\xc2\xbfque\xcc\x81");
  YES("normalized", NULL, "snake_case", "snakecase");
}

Test(scorers, contains_never_matches_an_empty_response) {
  /* The reference also accepts a response inside the answer: "" and
   * "the" were correct. */
  NO("contains", NULL, "", "Paris");
  NO("contains", NULL, "the", "Paris");
  NO("contains", NULL, " ... ", "Paris");
  YES("contains", NULL, "It is PARIS, France.", "paris");
  YES("contains", "{\"accepted\": [\"Lutetia\"]}", "Lutetia of course",
      "Paris");
  NO("contains", "{\"accepted\": [\"Lutetia\"]}", "Lyon", "Paris");
  run_t r = run("contains", "{\"accepted\": [\"a\"], \"answers\": [\"b\"]}",
                "x", "y");
  cr_expect_neq(r.rc, 0);
  cr_expect(strstr(r.perr, "give answers or accepted, not both") != NULL, "%s",
            r.perr);
  r = run("contains", "{\"accepted\": [\"The\"]}", "x", "y");
  cr_expect(strstr(r.perr, "comparator_parameters.accepted[0]: is empty "
                           "after normalization") != NULL,
            "%s", r.perr);
}

Test(scorers, multichoice_forms) {
  const char *m = "multichoice";
  YES(m, NULL, "Answer: B", "B");
  YES(m, NULL, "answer :b", "B");
  YES(m, NULL, "ANSWER:   C\n", "c\n");
  YES(m, NULL, "I choose **D** here", "D");
  YES(m, NULL, "It must be (A).", "A");
  YES(m, NULL, "so \\boxed{C}", "C");
  YES(m, NULL, "The answer is $B$.", "B");
  YES(m, NULL, "Reasoning...\nB\n", "B");
  YES(m, NULL, "Reasoning...\n  b  \n\n", "B");
  /* $X$ counts only after the word answer. */
  NO(m, NULL, "$B$ is a variable", "B");
  /* The last form wins. */
  YES(m, NULL, "Answer: A. On reflection, Answer: C", "C");
  YES(m, NULL, "(A) is tempting but **B**", "B");
  NO(m, NULL, "**B** is tempting but (A)", "B");
  /* Not a letter of the choices, or part of a word. */
  NO(m, NULL, "Answer: E", "A");
  NO(m, NULL, "Answer: Because", "B");
  run_t r = run(m, NULL, "I think it is correct", "A");
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  cr_expect_str_eq(r.admin, "no answer letter in the output, expected \"A\"");
  r = run(m, NULL, "Answer: B", "C");
  cr_expect_eq(r.extracted, 1);
  cr_expect_str_eq(r.admin, "extracted \"B\", expected \"C\"");
  YES(m, "{\"letters\": \"ABCDEFGH\"}", "Answer: G", "G");
  NO(m, NULL, "Answer: G", "A");
}

Test(scorers, multichoice_pattern_and_errors) {
  const char *m = "multichoice";
  const char *p = "{\"pattern\": \"(?i)choice\\\\s*#\\\\s*(\\\\w)\"}";
  YES(m, p, "choice # b, then choice # c", "B");
  run_t r = run(m, p, "Answer: B", "B");
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  r = run(m, NULL, "Answer: A", "AB");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect_str_eq(r.err,
                   "the expected output \"AB\" is not one of the letters ABCD");
  r = run(m, "{\"letters\": \"AAB\"}", "", "A");
  cr_expect(strstr(r.perr, "comparator_parameters.letters: must be 1 to 26 "
                           "different ASCII letters") != NULL,
            "%s", r.perr);
  r = run(m, "{\"pattern\": \"Answer\"}", "", "A");
  cr_expect(strstr(r.perr, "comparator_parameters.pattern: needs a capture "
                           "group") != NULL,
            "%s", r.perr);
  r = run(m, "{\"pattern\": \"(\"}", "", "A");
  cr_expect(strstr(r.perr, "comparator_parameters.pattern: does not compile") !=
                NULL,
            "%s", r.perr);
  r = run(m, "{\"letter\": \"A\"}", "", "A");
  cr_expect(strstr(r.perr, "comparator_parameters.letter: unknown key") != NULL,
            "%s", r.perr);
}

Test(scorers, answer_line) {
  const char *a = "answer_line";
  YES(a, NULL, "Work...\nAnswer: $1,000", "1000");
  YES(a, NULL, "answer : 42.", "42");
  YES(a, NULL, "Answer: 50 %", "50");
  YES(a, NULL, "ANSWER:X = 3", "x=3");
  /* No "Answer:": the last non-empty line. */
  YES(a, NULL, "so it is\n  12.\n\n", "12");
  NO(a, NULL, "Answer: 12\nAnswer: 13", "13");
  YES(a, NULL, "Answer: 12\nAnswer: 13", "12");
  NO(a, NULL, "12\nthat is all", "12");
  run_t r = run(a, NULL, "", "1");
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  r = run(a, NULL, "Answer: 7", "8");
  cr_expect_eq(r.extracted, 1);
  cr_expect_str_eq(r.admin, "answer \"7\", expected \"8\"");
  YES(a, "{\"pattern\": \"#### (\\\\S+)\"}", "so\n#### 1,250", "1250");
}

Test(scorers, last_number_fixes_the_reference_bugs) {
  const char *l = "last_number";
  /* The reference strips zeros as text: "70" and "7" compared equal. */
  NO(l, NULL, "The answer is 70", "7");
  NO(l, NULL, "7", "70");
  NO(l, NULL, "100", "10");
  NO(l, NULL, "10", "100");
  /* No number never matches 0 (the reference read "" as 0). */
  run_t r = run(l, NULL, "none", "0");
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  YES(l, NULL, "-0", "0");
  YES(l, NULL, "about .5", "0.5");
  YES(l, NULL, "1,234.5 units", "1234.50");
  YES(l, NULL, "3e2", "300");
  /* Exact by default; a tolerance when asked. */
  NO(l, NULL, "3.1416", "3.14159");
  YES(l, "{\"absolute\": 0.001}", "3.1416", "3.14159");
  r = run(l, NULL, "42", "42");
  cr_expect_eq(r.extracted, 1);
}

Test(scorers, json_answer) {
  const char *j = "json_answer";
  const char *schema = "{\"schema\": {\"type\": \"object\", \"required\": "
                       "[\"answer\"], \"properties\": {\"answer\": "
                       "{\"type\": \"integer\"}}}, \"field\": \"answer\"}";
  YES(j, schema, "```json\n{\"answer\": 12}\n```", "12");
  YES(j, schema, "Here: {\"answer\": 12, \"why\": \"3*4\"} done", "12\n");
  /* The first object that parses, after text that does not. */
  YES(j, schema, "a {broken and then {\"answer\": 12}", "12");
  NO(j, schema, "{\"answer\": \"12\"}", "12");
  NO(j, schema, "{\"answer\": 13}", "12");
  NO(j, schema, "{\"reply\": 12}", "12");
  /* The reference took the first '{' to the last '}': two objects were
   * one invalid text. */
  YES(j, schema, "{\"answer\": 12} and {\"answer\": 13}", "12");
  run_t r = run(j, schema, "twelve", "12");
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  cr_expect_str_eq(r.admin, "no JSON object in the output");
  r = run(j, schema, "{\"answer\": 1.5}", "12");
  cr_expect_eq(r.extracted, 1);
  cr_expect(strstr(r.admin, "does not match the schema") != NULL, "%s",
            r.admin);
  /* Without field, a valid object is enough; strings compare as text. */
  YES(j, "{\"schema\": {\"required\": [\"ok\"]}}", "{\"ok\": false}", "");
  YES(j, "{\"field\": \"city\"}", "{\"city\": \"Paris\"}", "Paris\n");
  YES(j, "{\"field\": \"city\"}", "{\"city\": \"Paris\"}", "\"Paris\"");
  YES(j, "{\"field\": \"n\"}", "{\"n\": 2.0}", "2");
  r = run(j, "{\"schema\": 3}", "", "");
  cr_expect(strstr(r.perr, "comparator_parameters.schema: must be a JSON "
                           "Schema") != NULL,
            "%s", r.perr);
  r = run(j, "{\"fields\": \"a\"}", "", "");
  cr_expect(strstr(r.perr, "comparator_parameters.fields: unknown key") != NULL,
            "%s", r.perr);
  /* A response of unclosed braces gives up in linear time. */
  size_t n = 4 << 20;
  char *big = malloc(n);
  for (size_t i = 0; i < n; i += 6)
    memcpy(big + i, "{\"a\":[", n - i < 6 ? n - i : 6);
  r = run_n(j, schema, big, n, "1");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 0);
  cr_expect_eq(r.extracted, 0);
  free(big);
}
