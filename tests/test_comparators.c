/* The built-in comparators: the table, CMS's white diff case by case, and
 * every comparator on its edge cases (empty output, a missing trailing
 * newline, CRLF, huge inputs, invalid UTF-8, NUL bytes), its admin texts
 * and its parameter errors. */
#include "tasktypes/comparators.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one comparison gave. */
typedef struct cmp_run_s {
  int rc;
  double outcome;
  const char *message;
  char admin[256];
  char err[256];
} cmp_run_t;

/* Parses params (JSON text, or NULL for none) for the comparator called
 * name, or fails the test with the errors. Free with tally_comparator's
 * free method through cmp_free. */
static void *cmp_state(const tally_comparator_t *c, const char *params) {
  void *state = NULL;
  if (c->parse == NULL) {
    cr_assert_null(params, "%s takes no parameters", c->name);
    return NULL;
  }
  tally_diag_t d;
  tally_jpath_t path;
  tally_diag_init(&d, "task.json");
  tally_jpath_init(&path);
  tally_jpath_key(&path, "comparator_parameters");
  cJSON *json = params ? cJSON_Parse(params) : NULL;
  cr_assert(params == NULL || json != NULL, "bad JSON in the test: %s", params);
  int rc = c->parse(json, &state, &d, &path);
  cr_assert_eq(rc, 0, "%s: %s", c->name, d.count ? d.msgs[0] : "?");
  cr_assert_str_eq(path.buf, "comparator_parameters");
  cJSON_Delete(json);
  tally_diag_close(&d);
  return state;
}

static void cmp_free(const tally_comparator_t *c, void *state) {
  if (c->free != NULL)
    c->free(state);
}

/* Compares out with exp (lengths given, so they may hold NUL bytes). */
static cmp_run_t cmp_n(const char *name, const char *params, const char *out,
                       size_t out_len, const char *exp, size_t exp_len) {
  const tally_comparator_t *c = tally_comparator_find(name);
  cr_assert_not_null(c, "no comparator %s", name);
  void *state = cmp_state(c, params);
  cmp_run_t r;
  tally_compare_result_t res;
  memset(&r, 0, sizeof(r));
  /* The comparator must reset whatever res holds. */
  memset(&res, 'x', sizeof(res));
  res.outcome = -1;
  r.rc =
      c->compare(state, out, out_len, exp, exp_len, &res, r.err, sizeof(r.err));
  if (r.rc == 0) {
    r.outcome = res.outcome;
    r.message = res.message;
    cr_assert(memchr(res.admin, '\0', sizeof(res.admin)) != NULL);
    strcpy(r.admin, res.admin);
    cr_assert(r.outcome >= 0 && r.outcome <= 1, "%s: outcome %g", name,
              r.outcome);
    cr_assert_str_eq(r.message, r.outcome == 1   ? "Output is correct"
                                : r.outcome == 0 ? "Output isn't correct"
                                                 : "Output is partially "
                                                   "correct");
  }
  cmp_free(c, state);
  return r;
}

static cmp_run_t cmp(const char *name, const char *params, const char *out,
                     const char *exp) {
  return cmp_n(name, params, out, strlen(out), exp, strlen(exp));
}

/* The errors params get, joined by newlines; "" when they decode. */
static char *param_errors(const char *name, const char *params) {
  const tally_comparator_t *c = tally_comparator_find(name);
  cr_assert_not_null(c);
  cr_assert_not_null(c->parse, "%s takes no parameters", name);
  tally_diag_t d;
  tally_jpath_t path;
  tally_diag_init(&d, "task.json");
  tally_jpath_init(&path);
  tally_jpath_key(&path, "comparator_parameters");
  cJSON *json = cJSON_Parse(params);
  cr_assert_not_null(json, "bad JSON in the test: %s", params);
  void *state = NULL;
  int rc = c->parse(json, &state, &d, &path);
  cJSON_Delete(json);
  cr_assert_str_eq(path.buf, "comparator_parameters");
  size_t len = 1;
  for (size_t i = 0; i < d.count; i++)
    len += strlen(d.msgs[i]) + 1;
  char *all = calloc(len, 1);
  for (size_t i = 0; i < d.count; i++) {
    if (i > 0)
      strcat(all, "\n");
    strcat(all, d.msgs[i]);
  }
  if (rc == 0) {
    cr_expect_eq(d.count, 0);
    cmp_free(c, state);
  } else {
    cr_expect_eq(rc, TALLY_ECONFIG);
    cr_expect_null(state);
    cr_expect_gt(d.count, 0);
  }
  tally_diag_close(&d);
  return all;
}

static void expect_param_error(const char *name, const char *params,
                               const char *want) {
  char *errors = param_errors(name, params);
  cr_expect(strstr(errors, want) != NULL, "%s %s: want \"%s\" in \"%s\"", name,
            params, want, errors);
  free(errors);
}

Test(comparators, are_found_by_name_in_one_table) {
  size_t n = 0;
  for (; tally_comparators[n] != NULL; n++) {
    const tally_comparator_t *c = tally_comparators[n];
    cr_expect_eq(c->version, TALLY_COMPARATOR_VERSION);
    cr_expect_eq(tally_comparator_find(c->name), c, "%s", c->name);
    cr_expect_not_null(c->compare);
    cr_expect(c->parse == NULL || c->free != NULL, "%s", c->name);
    for (size_t k = 0; k < n; k++)
      cr_expect_str_neq(c->name, tally_comparators[k]->name);
  }
  cr_expect_geq(n, 2);
  cr_expect_eq(tally_comparator_find("white_diff"),
               &tally_comparator_white_diff);
  cr_expect_eq(tally_comparator_find(TALLY_COMPARATOR_DEFAULT),
               &tally_comparator_white_diff);
  cr_expect_eq(tally_comparator_find("exact"), &tally_comparator_exact);
  cr_expect_null(tally_comparator_find("White_diff"));
  cr_expect_null(tally_comparator_find(""));
}

/* white_diff: the cases of the issue, and CMS's rules around them. */
typedef struct wd_case_s {
  char out[32];
  char exp[32];
  bool equal;
} wd_case_t;

ParameterizedTestParameters(white_diff, matches_cms) {
  static wd_case_t cases[] = {
      {"1\n\r\r \n  \n\n", "1   \n\r  ", true},
      {"1\t\r2", "1 2", true},
      {"1 2", "12", false},
      {"1", "01", false},
      {"1.0", "1", false},
      {"\n1", "1", false},
      {"1 2", "1\n2", false},
      {"1\n\n2", "1\n2", false},
      /* The same cases the other way round. */
      {"1   \n\r  ", "1\n\r\r \n  \n\n", true},
      {"1 2", "1\t\r2", true},
      {"12", "1 2", false},
      {"1\n2", "1\n\n2", false},
      /* Every CMS white space byte, at both ends and inside. */
      {" \t\v\fa \v\f\t\rb\r\t \f", "a b", true},
      {"a\n", "a", true},
      {"a", "a\n\n\n \n", true},
      {"", "", true},
      {"", "\n \n\t", true},
      {" \n", "", true},
      {"", "0", false},
      {"0", "", false},
      {"a\r\nb\r\n", "a\nb\n", true},
      {"A", "a", false},
      /* Bytes that are not CMS white space stay significant. */
      {"a\xc2\xa0"
       "b",
       "a b", false},
      {"a\x1c"
       "b",
       "a b", false},
  };
  return cr_make_param_array(wd_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(wd_case_t *c, white_diff, matches_cms) {
  cmp_run_t r = cmp("white_diff", NULL, c->out, c->exp);
  cr_assert_eq(r.rc, 0);
  cr_expect_eq(r.outcome, c->equal ? 1.0 : 0.0, "output \"%s\" expected \"%s\"",
               c->out, c->exp);
  if (c->equal)
    cr_expect_str_eq(r.admin, "");
  else
    cr_expect_str_neq(r.admin, "");
}

Test(white_diff, says_where_the_first_difference_is) {
  cmp_run_t r = cmp("white_diff", NULL, "1\n2\n  13   \n14\n", "1\n2\n12\n14");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "line 3: expected \"12\", read \"13\"");

  r = cmp("white_diff", NULL, "a  b\t c\n", "a b  d\n");
  cr_expect_str_eq(r.admin, "line 1: expected \"a b d\", read \"a b c\"");

  r = cmp("white_diff", NULL, "1\n2\n\n3\n", "1\n2\n");
  cr_expect_str_eq(r.admin, "line 4: expected end of output, read \"3\"");

  r = cmp("white_diff", NULL, "1\n", "1\n \n2\n");
  cr_expect_str_eq(r.admin, "line 3: expected \"2\", read end of output");
}

Test(white_diff, escapes_and_cuts_what_it_quotes) {
  cmp_run_t r = cmp_n("white_diff", NULL, "a\0\"\\\xff\xc3\xa9", 7, "b", 1);
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(
      r.admin, "line 1: expected \"b\", read \"a\\x00\\\"\\\\\\xff\xc3\xa9\"");

  char longline[300];
  memset(longline, 'x', sizeof(longline) - 1);
  longline[sizeof(longline) - 1] = '\0';
  r = cmp("white_diff", NULL, longline, "y");
  cr_expect_eq(r.outcome, 0);
  char want[200];
  snprintf(want, sizeof(want), "line 1: expected \"y\", read \"%.64s\"...",
           longline);
  cr_expect_str_eq(r.admin, want);

  /* Escaped bytes take four characters each: the text still fits. */
  char ctl[300];
  memset(ctl, 1, sizeof(ctl));
  r = cmp_n("white_diff", NULL, ctl, sizeof(ctl), ctl, sizeof(ctl) - 1);
  cr_expect_eq(r.outcome, 0);
  cr_expect(strstr(r.admin, "\"\\x01\\x01") != NULL, "%s", r.admin);
  cr_expect(strstr(r.admin, "\"...") != NULL, "%s", r.admin);
  cr_expect_lt(strlen(r.admin), 255);
}

Test(white_diff, accepts_null_pointers_for_empty_texts) {
  tally_compare_result_t res;
  char err[64];
  cr_assert_eq(tally_comparator_white_diff.compare(NULL, NULL, 0, NULL, 0, &res,
                                                   err, sizeof(err)),
               0);
  cr_expect_eq(res.outcome, 1);
  cr_assert_eq(tally_comparator_exact.compare(NULL, NULL, 0, "a", 1, &res, err,
                                              sizeof(err)),
               0);
  cr_expect_eq(res.outcome, 0);
}

/* A big output whose lines are the expected ones with other white space,
 * and one that differs only in its last line. */
Test(white_diff, handles_ten_megabytes) {
  size_t lines = 1000000;
  char *exp = malloc(lines * 10 + 1), *out = malloc(lines * 12 + 1);
  size_t el = 0, ol = 0;
  for (size_t i = 0; i < lines; i++) {
    el += (size_t)sprintf(exp + el, "%07zu\n", i);
    ol += (size_t)sprintf(out + ol, " %07zu\r\n", i);
  }
  cmp_run_t r = cmp_n("white_diff", NULL, out, ol, exp, el);
  cr_expect_eq(r.outcome, 1);
  out[ol - 3] = 'x';
  r = cmp_n("white_diff", NULL, out, ol, exp, el);
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin,
                   "line 1000000: expected \"0999999\", read \"099999x\"");
  free(exp);
  free(out);
}

Test(exact, compares_byte_for_byte) {
  cr_expect_eq(cmp("exact", NULL, "1 2\n", "1 2\n").outcome, 1);
  cr_expect_eq(cmp("exact", NULL, "", "").outcome, 1);
  cr_expect_eq(cmp("exact", NULL, "1 2", "1 2\n").outcome, 0);
  cr_expect_eq(cmp("exact", NULL, "1 2\r\n", "1 2\n").outcome, 0);
  cr_expect_eq(cmp("exact", NULL, "1  2\n", "1 2\n").outcome, 0);
  cr_expect_eq(cmp("exact", NULL, "", "\n").outcome, 0);
  cr_expect_eq(cmp_n("exact", NULL, "a\0b", 3, "a\0b", 3).outcome, 1);
  cr_expect_eq(cmp_n("exact", NULL, "a\0b", 3, "a\0c", 3).outcome, 0);
  cr_expect_eq(cmp("exact", NULL, "\xff\xfe", "\xff\xfe").outcome, 1);
}

Test(exact, says_where_the_first_difference_is) {
  cmp_run_t r = cmp("exact", NULL, "ab\ncd\r\n", "ab\ncd\n");
  cr_expect_str_eq(r.admin, "byte 5 (line 2, column 3): expected \"\\x0a\", "
                            "read \"\\x0d\\x0a\"");
  r = cmp("exact", NULL, "ab", "ab\n");
  cr_expect_str_eq(r.admin, "byte 2 (line 1, column 3): expected \"\\x0a\", "
                            "read end of output");
  r = cmp("exact", NULL, "ab\nc", "ab\n");
  cr_expect_str_eq(r.admin, "byte 3 (line 2, column 1): expected end of "
                            "output, read \"c\"");
}

Test(exact, takes_no_parameters) {
  cr_expect_null(tally_comparator_exact.parse);
  cr_expect_null(tally_comparator_white_diff.parse);
  cr_expect_null(tally_comparator_normalized.parse);
}

Test(numeric_tolerance, compares_numbers_within_the_tolerances) {
  const char *n = "numeric_tolerance";
  cr_expect_eq(cmp(n, NULL, "1.0 2", "1 2").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "1.0000001\n", "1").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "1.00001", "1").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "-0", "0").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "1e3", "1000").outcome, 1);
  cr_expect_eq(cmp(n, NULL, ".5", "0.5").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "+2.", "2").outcome, 1);
  const char *rel = "{\"absolute\": 0, \"relative\": 0.01}";
  cr_expect_eq(cmp(n, rel, "101", "100").outcome, 1);
  cr_expect_eq(cmp(n, rel, "102", "100").outcome, 0);
  cr_expect_eq(cmp(n, rel, "0.000001", "0").outcome, 0);
  /* Either tolerance is enough. */
  const char *both = "{\"absolute\": 0.5, \"relative\": 0.01}";
  cr_expect_eq(cmp(n, both, "0.4", "0").outcome, 1);
  cr_expect_eq(cmp(n, both, "1000", "1009").outcome, 1);
  cr_expect_eq(cmp(n, both, "1000", "1011").outcome, 0);
  /* A tolerance written in decimal gets room for rounding: 1.1 - 1.0 is
   * a little over 0.1 in binary. */
  cr_expect_eq(cmp(n, "{\"absolute\": 0.1}", "1.0", "1.1").outcome, 1);
  cr_expect_eq(cmp(n, "{\"absolute\": 0}", "0.1", "0.10").outcome, 1);
  cr_expect_eq(cmp(n, "{\"absolute\": 0}", "0.1", "0.1000001").outcome, 0);
}

Test(numeric_tolerance, compares_other_tokens_exactly_and_ignores_lines) {
  const char *n = "numeric_tolerance";
  cr_expect_eq(cmp(n, NULL, "abc 1", "abc 1.0000").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "Abc", "abc").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "1\n2", "1 2").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "1\r\n2\r\n", "1\n2\n").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "0x10", "16").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "1,5", "1.5").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "", "").outcome, 1);
  cr_expect_eq(cmp(n, NULL, " \n", "").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "", "1").outcome, 0);
  cr_expect_eq(cmp_n(n, NULL, "1\0", 2, "1", 1).outcome, 0);
  cr_expect_eq(cmp_n(n, NULL, "\xff 1", 3, "\xff 1.0", 5).outcome, 1);
}

Test(numeric_tolerance, treats_nan_and_inf_as_words) {
  const char *n = "numeric_tolerance";
  cr_expect_eq(cmp(n, NULL, "nan", "nan").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "nan", "NaN").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "inf", "1e999").outcome, 0);
  /* A number too big for a double only matches the same infinity. */
  cr_expect_eq(cmp(n, NULL, "1e999", "2e999").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "-1e999", "1e999").outcome, 0);
  cr_expect_eq(cmp(n, "{\"relative\": 1}", "1e308", "1e999").outcome, 0);
}

Test(numeric_tolerance, says_which_token_differs) {
  const char *n = "numeric_tolerance";
  cmp_run_t r = cmp(n, NULL, "1 2.5\n3", "1 2.4 3");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "token 2: expected \"2.4\", read \"2.5\"");
  r = cmp(n, NULL, "1 2", "1 2 3");
  cr_expect_str_eq(r.admin, "token 3: expected \"3\", read end of output");
  r = cmp(n, NULL, "1 2 3 x", "1 2 3");
  cr_expect_str_eq(r.admin, "token 4: expected end of output, read \"x\"");
}

Test(numeric_tolerance, names_the_path_of_a_bad_parameter) {
  const char *n = "numeric_tolerance";
  expect_param_error(n, "{\"absolute\": -1}",
                     "task.json: comparator_parameters.absolute: must be a "
                     "finite number, 0 or more");
  expect_param_error(n, "{\"relative\": \"1%\"}",
                     "comparator_parameters.relative: must be a finite");
  expect_param_error(n, "{\"tolerance\": 1}",
                     "comparator_parameters.tolerance: unknown key");
  expect_param_error(n, "{\"commas\": true}",
                     "comparator_parameters.commas: unknown key");
  expect_param_error(n, "[1]", "comparator_parameters: must be a JSON object");
  char *both = param_errors(n, "{\"absolute\": null, \"relative\": -2}");
  cr_expect(strstr(both, "absolute") && strstr(both, "relative"), "%s", both);
  free(both);
  char *none = param_errors(n, "{\"absolute\": 0, \"relative\": 1e-9}");
  cr_expect_str_eq(none, "");
  free(none);
}

Test(normalized, drops_case_punctuation_articles_and_spaces) {
  const char *n = "normalized";
  cr_expect_eq(cmp(n, NULL, "The Cat!", "cat\n").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "an  apple.", "Apple").outcome, 1);
  /* Articles go before punctuation: "a" is a whole word in "a-b". */
  cr_expect_eq(cmp(n, NULL, "A-B", "b").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "A-B", "ab").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "X-Y", "xy").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "x\r\n", "x").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "", "the").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "cats", "cat").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "theory", "ory").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "a b", "ab").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "\xff\xc3\xa9", "\xff\xc3\xa9.").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "\xff", "\xfe").outcome, 0);
  cr_expect_eq(cmp_n(n, NULL, "a\0b", 3, "a\0b", 3).outcome, 1);
  cmp_run_t r = cmp(n, NULL, "The dog.", "a cat");
  cr_expect_str_eq(r.admin, "byte 0 (line 1, column 1): expected \"cat\", "
                            "read \"dog\"");
}

Test(regex, matches_the_output_against_a_pattern) {
  const char *digits = "{\"pattern\": \"^\\\\d+$\"}";
  /* "$" matches before a final newline; the expected output is not
   * used. */
  cr_expect_eq(cmp("regex", digits, "123\n", "zzz").outcome, 1);
  cmp_run_t r = cmp("regex", digits, "12a", "12a");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "the output does not match the pattern");
  cr_expect_eq(
      cmp("regex", "{\"pattern\": \"yes\", \"caseless\": true}", "oh, YES", "")
          .outcome,
      1);
  cr_expect_eq(cmp("regex", "{\"pattern\": \"^b$\"}", "a\nb\n", "").outcome, 0);
  cr_expect_eq(
      cmp("regex", "{\"pattern\": \"^b$\", \"multiline\": true}", "a\nb\n", "")
          .outcome,
      1);
  cr_expect_eq(cmp("regex", "{\"pattern\": \"a.b\"}", "a\nb", "").outcome, 0);
  cr_expect_eq(
      cmp("regex", "{\"pattern\": \"a.b\", \"dotall\": true}", "a\nb", "")
          .outcome,
      1);
  cr_expect_eq(
      cmp_n("regex", "{\"pattern\": \"a\\\\x00b\"}", "xa\0b", 4, "", 0).outcome,
      1);
  cr_expect_eq(cmp("regex", digits, "", "").outcome, 0);
}

Test(regex, extracts_the_answer_and_compares_it) {
  const char *ans = "{\"extract\": \"Answer:\\\\s*([A-D])\"}";
  cr_expect_eq(cmp("regex", ans, "Let me think.\nAnswer: B\n", "B\n").outcome,
               1);
  cmp_run_t r = cmp("regex", ans, "Answer: B", "C");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "extracted \"B\", expected \"C\"");
  r = cmp("regex", ans, "I don't know", "C");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "the extract pattern finds no answer in the "
                            "output");
  const char *two = "Answer: A? No. Answer: C";
  cr_expect_eq(cmp("regex", ans, two, "C").outcome, 0);
  const char *last = "{\"extract\": \"Answer:\\\\s*([A-D])\", "
                     "\"occurrence\": \"last\"}";
  cr_expect_eq(cmp("regex", last, two, "C").outcome, 1);
  /* Without a group, the whole match is the answer; an unset group is
   * skipped for the next one. */
  cr_expect_eq(
      cmp("regex", "{\"extract\": \"[0-9]+\"}", "x 42 y", " 42\n").outcome, 1);
  cr_expect_eq(
      cmp("regex", "{\"extract\": \"(?:x(\\\\d)|y(\\\\d))\"}", "y7", "7")
          .outcome,
      1);
  /* The answer is normalized like the expected output. */
  const char *cased = "{\"extract\": \"is (\\\\w+)\", \"normalize\": \"case\"}";
  cr_expect_eq(cmp("regex", cased, "It is PARIS", "paris").outcome, 1);
  cr_expect_eq(
      cmp("regex", "{\"extract\": \"is (\\\\w+)\"}", "It is PARIS", "paris")
          .outcome,
      0);
  /* The pattern must match first. */
  const char *both = "{\"pattern\": \"^Answer\", \"extract\": \"(\\\\d+)\"}";
  cr_expect_eq(cmp("regex", both, "Answer 5", "5").outcome, 1);
  cr_expect_eq(cmp("regex", both, "So 5", "5").outcome, 0);
  /* Empty matches move on by one byte, to the end. */
  cr_expect_eq(cmp("regex",
                   "{\"extract\": \"\\\\d*\", \"occurrence\": \"last\"}",
                   "1 22", "")
                   .outcome,
               1);
}

Test(regex, hits_the_match_limit_instead_of_backtracking_forever) {
  char subject[64];
  memset(subject, 'a', 40);
  strcpy(subject + 40, "b");
  cmp_run_t r = cmp("regex", "{\"pattern\": \"(a+)+$\"}", subject, "");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect_str_eq(r.err, "the pattern hit its match limit (match_limit "
                          "10000000) on the output: it backtracks too much");
  r = cmp("regex", "{\"extract\": \"(a+)+$\", \"match_limit\": 1000}", subject,
          "");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect(strstr(r.err, "extract pattern hit its match limit "
                          "(match_limit 1000)") != NULL,
            "%s", r.err);
}

Test(regex, hits_the_depth_limit_on_deep_backtracking) {
  char subject[2001];
  memset(subject, 'a', 2000);
  subject[2000] = '\0';
  cmp_run_t r =
      cmp("regex", "{\"pattern\": \"^(a|b)*$\", \"depth_limit\": 100}", subject,
          "");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect(strstr(r.err, "depth limit (depth_limit 100)") != NULL, "%s",
            r.err);
  r = cmp("regex", "{\"pattern\": \"^(a|b)*$\"}", subject, "");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 1);
}

Test(regex, reads_invalid_utf8_as_bytes_or_as_no_match) {
  cr_expect_eq(cmp("regex", "{\"pattern\": \"^.$\"}", "\xff", "").outcome, 1);
  cr_expect_eq(cmp("regex", "{\"pattern\": \"^.$\"}", "\xc3\xa9", "").outcome,
               0);
  const char *utf = "{\"pattern\": \"^.$\", \"utf\": true}";
  cr_expect_eq(cmp("regex", utf, "\xc3\xa9", "").outcome, 1);
  cmp_run_t r = cmp("regex", utf, "\xff", "");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 0);
  r = cmp("regex",
          "{\"extract\": \"(.)\", \"utf\": true, \"occurrence\": "
          "\"last\"}",
          "\xc3\xa9\xff\xe2\x82", "\xc3\xa9");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 1);
}

Test(regex, names_the_path_of_a_bad_parameter) {
  expect_param_error("regex", "{}",
                     "task.json: comparator_parameters: needs a pattern, an "
                     "extract pattern or both");
  expect_param_error("regex", "{\"pattern\": \"(\"}",
                     "comparator_parameters.pattern: does not compile at "
                     "offset 1: missing closing parenthesis");
  expect_param_error("regex", "{\"pattern\": \"a\", \"extract\": \"[\"}",
                     "comparator_parameters.extract: does not compile");
  expect_param_error("regex", "{\"pattern\": \"(*UTF)a\"}",
                     "comparator_parameters.pattern: does not compile");
  expect_param_error("regex", "{\"pattern\": \"\"}",
                     "comparator_parameters.pattern: must not be empty");
  expect_param_error("regex", "{\"pattern\": \"a\", \"match_limit\": 0}",
                     "comparator_parameters.match_limit: must be between 1 "
                     "and 2e+09");
  expect_param_error("regex", "{\"pattern\": \"a\", \"depth_limit\": 1.5}",
                     "comparator_parameters.depth_limit: must be a whole "
                     "number");
  expect_param_error("regex", "{\"pattern\": \"a\", \"normalize\": \"all\"}",
                     "comparator_parameters.normalize: must be \"none\", "
                     "\"whitespace\", \"case\", \"answer\" or \"unicode\"");
  expect_param_error("regex", "{\"pattern\": \"a\", \"occurrence\": 2}",
                     "comparator_parameters.occurrence: must be \"first\" or "
                     "\"last\"");
  expect_param_error("regex", "{\"pattern\": \"a\", \"utf\": 1}",
                     "comparator_parameters.utf: must be true or false");
  expect_param_error("regex", "{\"pattern\": \"a\", \"flags\": \"i\"}",
                     "comparator_parameters.flags: unknown key");
}

Test(last_number, compares_the_last_number_of_the_output) {
  const char *n = "last_number";
  cr_expect_eq(cmp(n, NULL, "The answer is 42.", "42").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "3 apples and 4 pears: 7\n", "7\n").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "7 or 8", "7").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "so -5", "-5").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "3-5", "5").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "x = 2.50", "2.5").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "2.5e3", "2500").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "about .5", "0.5").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "v1.2.3", "3").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "$1,234,567 total", "1234567").outcome, 1);
  cr_expect_eq(cmp(n, NULL, "1,2,3", "3").outcome, 1);
  cr_expect_eq(cmp(n, "{\"commas\": false}", "1,234", "1234").outcome, 0);
  cr_expect_eq(cmp(n, "{\"commas\": false}", "1,234", "234").outcome, 1);
  /* GSM8K's answers end in "#### N". */
  cr_expect_eq(cmp(n, NULL, "72", "She sold 48/2 = 24 clips.\n#### 72").outcome,
               1);
  cr_expect_eq(cmp(n, "{\"absolute\": 0.01}", "pi is 3.14159", "3.14").outcome,
               1);
  cr_expect_eq(cmp(n, NULL, "pi is 3.14159", "3.14").outcome, 0);
  cr_expect_eq(cmp(n, NULL, "42\r\n", "42\n").outcome, 1);
  cr_expect_eq(cmp_n(n, NULL,
                     "4\0"
                     "2",
                     3, "2", 1)
                   .outcome,
               1);
  cr_expect_eq(cmp(n, NULL,
                   "\xff"
                   "12\xfe",
                   "12")
                   .outcome,
               1);
}

Test(last_number, says_what_it_read) {
  const char *n = "last_number";
  cmp_run_t r = cmp(n, NULL, "it is 41", "42");
  cr_expect_str_eq(r.admin, "last number: expected \"42\", read \"41\"");
  r = cmp(n, NULL, "", "42");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "no number in the output");
  r = cmp(n, NULL, "42", "none");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect_str_eq(r.err, "the expected output has no number");
  expect_param_error(n, "{\"commas\": \"yes\"}",
                     "comparator_parameters.commas: must be true or false");
}

Test(fuzzy, gives_a_normalized_levenshtein_similarity) {
  cmp_run_t r = cmp("fuzzy", NULL, "Hello  World", "hello world\n");
  cr_expect_eq(r.outcome, 1);
  r = cmp("fuzzy", NULL, "kitten", "sitting");
  cr_expect_float_eq(r.outcome, 1 - 3.0 / 7, 1e-12);
  cr_expect_str_eq(r.message, "Output is partially correct");
  cr_expect_str_eq(r.admin, "similarity 0.5714: 3 edits over 7 bytes");
  cr_expect_eq(cmp("fuzzy", NULL, "", "").outcome, 1);
  cr_expect_eq(cmp("fuzzy", NULL, "", "abc").outcome, 0);
  cr_expect_eq(cmp("fuzzy", NULL, "xyz", "abc").outcome, 0);
  cr_expect_eq(cmp("fuzzy", NULL, "A\r\nB", "a b").outcome, 1);
  cr_expect_eq(cmp("fuzzy", "{\"normalize\": \"none\"}", "A", "a").outcome, 0);
  cr_expect_float_eq(cmp("fuzzy", NULL, "ab\xff", "ab\xfe").outcome, 2.0 / 3,
                     1e-12);
  cr_expect_float_eq(cmp_n("fuzzy", NULL, "a\0", 2, "a", 1).outcome, 0.5,
                     1e-12);
}

Test(fuzzy, refuses_to_compare_past_max_cells) {
  cmp_run_t r = cmp("fuzzy", "{\"max_cells\": 10}", "abcdefgh", "hgfedcba");
  cr_expect_eq(r.rc, 0);
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "not compared: the texts differ over 8 and 8 "
                            "bytes after normalization, more than max_cells "
                            "10 allows");
  /* The common prefix and suffix do not count. */
  r = cmp("fuzzy", "{\"max_cells\": 10}", "prefix-ab-suffix",
          "prefix-ba-suffix");
  cr_expect_float_eq(r.outcome, 1 - 2.0 / 16, 1e-12);
  expect_param_error("fuzzy", "{\"max_cells\": 0}",
                     "comparator_parameters.max_cells: must be between 1");
}

Test(contains, looks_for_the_answer_in_the_normalized_output) {
  cr_expect_eq(
      cmp("contains", NULL, "The capital is Paris.", "paris\n").outcome, 1);
  cmp_run_t r = cmp("contains", NULL, "The capital is Lyon", "Paris");
  cr_expect_eq(r.outcome, 0);
  cr_expect_str_eq(r.admin, "none of the 1 accepted answers is in the output");
  cr_expect_eq(cmp("contains", NULL, "18", "8").outcome, 1);
  cr_expect_eq(cmp("contains", "{\"whole_words\": true}", "18", "8").outcome,
               0);
  cr_expect_eq(
      cmp("contains", "{\"whole_words\": true}", "it is 8.", "8").outcome, 1);
  cr_expect_eq(cmp("contains", NULL, "x\r\ny\r\n", "X Y").outcome, 1);
  cr_expect_eq(cmp("contains", NULL, "", "a").outcome, 0);
  cr_expect_eq(cmp("contains", NULL, "\xff\xfe!", "\xfe").outcome, 1);
}

Test(contains, accepts_any_of_several_answers) {
  const char *answers = "{\"answers\": [\"Paris\", \"City of Light\"]}";
  cr_expect_eq(cmp("contains", answers, "the city of light", "").outcome, 1);
  cr_expect_eq(cmp("contains", answers, "Paris", "Lyon").outcome, 1);
  cr_expect_eq(cmp("contains", answers, "Lyon", "Lyon").outcome, 1);
  cmp_run_t r = cmp("contains", answers, "Nice", "Lyon");
  cr_expect_str_eq(r.admin, "none of the 3 accepted answers is in the output");
  const char *only = "{\"answers\": [\"Paris\"], \"expected\": \"ignore\"}";
  cr_expect_eq(cmp("contains", only, "Lyon", "Lyon").outcome, 0);
  const char *lines = "{\"expected\": \"lines\"}";
  cr_expect_eq(
      cmp("contains", lines, "It's Paris, France", "Lyon\n\nParis\n").outcome,
      1);
  cr_expect_eq(cmp("contains", NULL, "It's Paris", "Lyon\nParis\n").outcome, 0);
}

Test(contains, needs_an_answer) {
  cmp_run_t r = cmp("contains", NULL, "anything", " the \n");
  cr_expect_eq(r.rc, TALLY_EJOB);
  cr_expect_str_eq(r.err, "no accepted answer: the expected output is blank");
  expect_param_error("contains", "{\"expected\": \"ignore\"}",
                     "comparator_parameters: needs answers (or accepted) when "
                     "expected is \"ignore\"");
  expect_param_error("contains", "{\"answers\": []}",
                     "comparator_parameters.answers: must be a non-empty "
                     "list of strings");
  char *errs = param_errors("contains", "{\"answers\": [1, \"The.\", \"x\"]}");
  cr_expect(strstr(errs, "comparator_parameters.answers[0]: must be a "
                         "string") != NULL,
            "%s", errs);
  cr_expect(strstr(errs, "comparator_parameters.answers[1]: is empty after "
                         "normalization") != NULL,
            "%s", errs);
  cr_expect(strstr(errs, "answers[2]") == NULL, "%s", errs);
  free(errs);
  expect_param_error("contains", "{\"expected\": \"all\"}",
                     "comparator_parameters.expected: must be \"whole\", "
                     "\"lines\" or \"ignore\"");
}

Test(token_f1, is_squads_f1) {
  cr_expect_eq(cmp("token_f1", NULL, "the cat sat", "Cat sat.").outcome, 1);
  cmp_run_t r = cmp("token_f1", NULL, "cat sat on mat", "cat sat");
  cr_expect_float_eq(r.outcome, 2.0 / 3, 1e-12);
  cr_expect_str_eq(r.admin, "F1 0.6667: 2 tokens in common, 4 read, 2 "
                            "expected");
  cr_expect_eq(cmp("token_f1", NULL, "sat cat", "cat sat").outcome, 1);
  cr_expect_eq(cmp("token_f1", NULL, "", "").outcome, 1);
  cr_expect_eq(cmp("token_f1", NULL, "x", "the").outcome, 0);
  cr_expect_eq(cmp("token_f1", NULL, "dog", "cat").outcome, 0);
  cr_expect_float_eq(
      cmp("token_f1", "{\"normalize\": \"none\"}", "a a a", "a").outcome, 0.5,
      1e-12);
  cr_expect_eq(cmp("token_f1", NULL, "a\r\nb\r\n", "a b").outcome, 1);
  cr_expect_float_eq(cmp_n("token_f1", NULL, "x\0 y", 4, "y", 1).outcome,
                     2.0 / 3, 1e-12);
}

Test(set_overlap, compares_line_sets) {
  cmp_run_t r = cmp("set_overlap", NULL, "a\nb\nc", "b\nc\nd\n");
  cr_expect_float_eq(r.outcome, 0.5, 1e-12);
  cr_expect_str_eq(r.admin, "2 of the 3 expected lines read, and 1 other "
                            "lines");
  cr_expect_float_eq(cmp("set_overlap", "{\"method\": \"intersection\"}",
                         "a\nb\nc", "b\nc\nd\n")
                         .outcome,
                     2.0 / 3, 1e-12);
  cr_expect_eq(cmp("set_overlap", NULL, "b\n\na\na\n", "a\nb").outcome, 1);
  cr_expect_eq(cmp("set_overlap", NULL, "a\r\nb \r\n", "a\n  b\n").outcome, 1);
  cr_expect_eq(
      cmp("set_overlap", "{\"normalize\": \"none\"}", "a\r\n", "a\n").outcome,
      0);
  cr_expect_eq(cmp("set_overlap", NULL, "", "").outcome, 1);
  cr_expect_eq(cmp("set_overlap", NULL, "x", "\n\n").outcome, 0);
  cr_expect_eq(cmp("set_overlap", NULL, "", "x").outcome, 0);
  cr_expect_eq(cmp("set_overlap", "{\"method\": \"intersection\"}",
                   "a\nb\nextra", "b\na")
                   .outcome,
               1);
  expect_param_error("set_overlap", "{\"method\": \"dice\"}",
                     "comparator_parameters.method: must be \"jaccard\" or "
                     "\"intersection\"");
}

Test(element_ratio, counts_line_by_line_matches) {
  cmp_run_t r = cmp("element_ratio", NULL, "1\n2\n3\n", "1\n2\n4\n");
  cr_expect_float_eq(r.outcome, 2.0 / 3, 1e-12);
  cr_expect_str_eq(r.admin,
                   "2 of 3 lines match; line 3: expected \"4\", read \"3\"");
  cr_expect_eq(cmp("element_ratio", NULL, "1\n2", "1\n2\n\n").outcome, 1);
  r = cmp("element_ratio", NULL, "1\n2\n3", "1\n2");
  cr_expect_float_eq(r.outcome, 2.0 / 3, 1e-12);
  cr_expect_str_eq(r.admin, "2 of 3 lines match; line 3: expected end of "
                            "output, read \"3\"");
  cr_expect_eq(cmp("element_ratio", NULL, "", "").outcome, 1);
  cr_expect_eq(cmp("element_ratio", NULL, "", "1").outcome, 0);
  cr_expect_eq(cmp("element_ratio", NULL, "1 \r\n2\r\n", "1\n2\n").outcome, 1);
  cr_expect_float_eq(
      cmp("element_ratio", "{\"normalize\": \"none\"}", "1\r\n2\n", "1\n2\n")
          .outcome,
      0.5, 1e-12);
  /* Order matters, unlike set_overlap. */
  cr_expect_eq(cmp("element_ratio", NULL, "2\n1\n", "1\n2\n").outcome, 0);
  expect_param_error("element_ratio", "{\"method\": \"jaccard\"}",
                     "comparator_parameters.method: unknown key");
}

/* Parameters for the comparators that need some (regex: the output ends
 * in the last line of big_text). */
static const char *params_for(const char *name) {
  if (strcmp(name, "regex") == 0)
    return "{\"pattern\": \"\\\\w+ 999999\\\\n\\\\z\"}";
  if (strcmp(name, "multichoice") == 0)
    return "{\"pattern\": \"^(word 0)\"}";
  return NULL;
}

/* The answer scorers pull one answer out of a long output: equal texts
 * are not a correct answer to them. */
static bool extracts(const char *name) {
  return strcmp(name, "multichoice") == 0 || strcmp(name, "answer_line") == 0;
}

/* About 10 MB of lines like "word 123". */
static char *big_text(size_t *len) {
  size_t lines = 1000000;
  char *t = malloc(lines * 16);
  size_t n = 0;
  for (size_t i = 0; i < lines; i++)
    n += (size_t)sprintf(t + n, "word %zu\n", i);
  *len = n;
  return t;
}

Test(comparators, handle_ten_megabytes_each) {
  size_t len;
  char *exp = big_text(&len);
  char *out = malloc(len);
  memcpy(out, exp, len);
  /* A differing copy: one line in the middle changes. */
  char *mid = strstr(out + len / 2, "word");
  mid[0] = 'W';
  for (size_t i = 0; tally_comparators[i] != NULL; i++) {
    const char *name = tally_comparators[i]->name;
    /* code_sandbox runs programs, not texts: tests/test_sandbox.c. */
    if (strcmp(name, "code_sandbox") == 0)
      continue;
    cmp_run_t r = cmp_n(name, params_for(name), exp, len, exp, len);
    cr_expect_eq(r.rc, 0, "%s: %s", name, r.err);
    cr_expect(r.outcome == 1 || extracts(name), "%s on equal texts: %g", name,
              r.outcome);
    r = cmp_n(name, params_for(name), out, len, exp, len);
    cr_expect_eq(r.rc, 0, "%s: %s", name, r.err);
    cr_expect(r.outcome >= 0 && r.outcome <= 1, "%s", name);
  }
  free(out);
  free(exp);
}

Test(comparators, survive_any_bytes) {
  /* Invalid UTF-8, NUL bytes, CR, lone continuation bytes, every byte. */
  char odd[512];
  for (size_t i = 0; i < sizeof(odd); i++)
    odd[i] = (char)((i * 37 + 11) & 0xff);
  const char *samples[] = {"",     "\n",           "\r\n", "1\r\n2",
                           "\xc3", "\xed\xa0\x80", "a\0b"};
  size_t lens[] = {0, 1, 2, 4, 1, 3, 3};
  for (size_t i = 0; tally_comparators[i] != NULL; i++) {
    const char *name = tally_comparators[i]->name;
    /* code_sandbox runs programs, not texts: tests/test_sandbox.c. */
    if (strcmp(name, "code_sandbox") == 0)
      continue;
    for (size_t a = 0; a < 7; a++) {
      for (int flip = 0; flip < 2; flip++) {
        const char *x = flip ? odd : samples[a];
        size_t xl = flip ? sizeof(odd) : lens[a];
        const char *y = flip ? samples[a] : odd;
        size_t yl = flip ? lens[a] : sizeof(odd);
        cmp_run_t r = cmp_n(name, params_for(name), x, xl, y, yl);
        cr_expect(r.rc == 0 || r.rc == TALLY_EJOB, "%s: %d", name, r.rc);
        if (r.rc == TALLY_EJOB)
          cr_expect_str_neq(r.err, "");
      }
    }
    cmp_run_t r =
        cmp_n(name, params_for(name), odd, sizeof(odd), odd, sizeof(odd));
    cr_expect(r.rc == 0 || r.rc == TALLY_EJOB, "%s", name);
  }
}
