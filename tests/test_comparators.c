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
