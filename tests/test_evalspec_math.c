/* math_equivalence (docs/evaluation-specs.md): the reference's own cases,
 * its normalization and grammar quirks (unary minus binding tighter than
 * ^, constants of nested sums kept apart), the numeric fallback and its
 * reasons, config rules with paths, and the inputs that crash or hang
 * the reference (division by zero, deep nesting, huge exponents), each
 * handled with a reason. The parser and Go's Pow are checked directly. */
#include "evalspecs/mathexpr.h"
#include "support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scores one math_equivalence of actual against expected with config
 * (JSON text, or NULL); returns the first validator result. */
static cJSON *math(const char *actual, const char *expected,
                   const char *config) {
  cJSON *v = cJSON_CreateObject();
  cJSON_AddStringToObject(v, "key", "m");
  cJSON_AddStringToObject(v, "type", "math_equivalence");
  char *t = malloc(strlen(actual) + 16), *e = malloc(strlen(expected) + 16);
  sprintf(t, "literal:%s", actual);
  sprintf(e, "literal:%s", expected);
  cJSON_AddStringToObject(v, "target", t);
  cJSON_AddStringToObject(v, "expected_from", e);
  free(t);
  free(e);
  if (config != NULL)
    cJSON_AddItemToObject(v, "config", cJSON_Parse(config));
  char *vt = cJSON_PrintUnformatted(v);
  cJSON_Delete(v);
  size_t n = strlen(vt) + 512;
  char *task = malloc(n);
  snprintf(task, n,
           "{\"name\": \"t\", \"task_type\": \"agent_run\", "
           "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
           "\"judge_mode\": \"deterministic\", \"validators\": [%s], "
           "\"scorecard\": {\"dimensions\": [\"correctness\"]}}}",
           vt);
  free(vt);
  cJSON *r = ts_run(task, "{\"submission\": \"s\", \"participant\": \"p\", "
                          "\"task\": \"t\", \"run\": {\"events\": []}}");
  cr_assert_not_null(r, "%s", task);
  free(task);
  cJSON *out = cJSON_DetachItemFromArray(
      (cJSON *)ts_at(r, "details.validator_results"), 0);
  cJSON_Delete(r);
  cr_assert_not_null(out);
  return out;
}

static void expect(const char *actual, const char *expected, const char *config,
                   const char *verdict, const char *mode, const char *reason) {
  cJSON *r = math(actual, expected, config);
  cr_expect_str_eq(ts_str_at(r, "verdict"), verdict, "%s vs %s: %s", actual,
                   expected, ts_str_at(r, "reason"));
  if (mode != NULL)
    cr_expect_str_eq(ts_str_at(r, "raw_output.mode_used"), mode, "%s vs %s",
                     actual, expected);
  if (reason != NULL)
    cr_expect_str_eq(ts_str_at(r, "reason"), reason, "%s vs %s", actual,
                     expected);
  cJSON_Delete(r);
}

Test(math, the_references_cases) {
  expect("0.5", "1/2", "{}", "pass", "symbolic", NULL);
  expect("2/4", "1/2", "{}", "pass", "symbolic", NULL);
  expect("\\frac{1}{2}", "0.5", "{}", "pass", "symbolic", NULL);
  expect("\\boxed{42}", "42", "{}", "pass", "symbolic", NULL);
  expect("Reasoning... #### 42", "42",
         "{\"extract_answer\": true, \"answer_delimiter\": \"####\"}", "pass",
         "symbolic", NULL);
  expect("\\sqrt{2}", "2^(1/2)", "{}", "pass", "symbolic", NULL);
  expect("x + 1", "1 + x", "{}", "pass", "symbolic", NULL);
  expect("5e-1", "50%", "{}", "pass", "symbolic", NULL);
  expect("41", "42", "{}", "fail", "numeric_fallback",
         "numeric values differ by 1 which exceeds tolerance 1e-06");
  expect("0.3333334", "1/3",
         "{\"comparison_mode\": \"numeric\", \"tolerance\": 0.0001}", "pass",
         "numeric", NULL);
}

Test(math, normalization_and_grammar) {
  /* Outer dollars, thousands commas, Unicode operators, spacing. */
  expect("$$ 1,000 $$", "1000", NULL, "pass", "symbolic", NULL);
  expect("3 \\times 4", "12", NULL, "pass", NULL, NULL);
  expect("3 \u00D7 4 \u2212 2", "10", NULL, "pass", NULL, NULL);
  expect("\\left( 2 \\right) \\cdot 3", "6", NULL, "pass", NULL, NULL);
  expect("\\sqrt[3]{8}", "8^(1/3)", NULL, "pass", "symbolic", NULL);
  expect("\u221A9", "sqrt(9)", NULL, "pass", "symbolic", NULL);
  /* Unary minus binds tighter than ^: -2^2 is (-2)^2. */
  expect("-2^2", "4", NULL, "pass", "symbolic", NULL);
  /* ^ is right-associative: 2^3^2 is 2^9. */
  expect("2^3^2", "512", NULL, "pass", "symbolic", NULL);
  /* No distribution: 2(x+1) against 2x+2 only agree numerically, and x
   * has no value, so they differ. */
  expect("2*(x+1)", "2*x+2", NULL, "fail", NULL,
         "symbolic forms are not equivalent");
  /* Constants of a nested sum are kept apart, as the reference keeps
   * them: x+1+2 is not x+3 symbolically. */
  cJSON *r = math("x+1+2", "x+3", NULL);
  cr_expect_str_eq(ts_str_at(r, "raw_output.canonical_actual"),
                   "add(num:1,num:2,sym:x)");
  cr_expect_str_eq(ts_str_at(r, "raw_output.canonical_expected"),
                   "add(num:3,sym:x)");
  cr_expect_str_eq(ts_str_at(r, "verdict"), "fail");
  cJSON_Delete(r);
  /* Numeric fallback on constants the canonical forms leave apart. */
  expect("sqrt(2)*sqrt(2)", "2", NULL, "pass", "numeric_fallback", NULL);
  expect("sqrt(2)*sqrt(2)", "2", "{\"numeric_fallback\": false}", "fail", NULL,
         "symbolic forms are not equivalent");
  /* No implicit multiplication. */
  expect("2x", "2*x", NULL, "error", NULL,
         "evaluate math_equivalence expressions: unexpected token \"x\"; "
         "unexpected token \"x\"; symbol \"x\" is not numeric");
}

Test(math, errors_and_their_reasons) {
  expect("", "1", NULL, "error", NULL,
         "normalize actual math expression: expression is empty");
  expect("1", "\\frac{1}", NULL, "error", NULL,
         "normalize expected math expression: \\frac must have a "
         "denominator group");
  expect("\\boxed 1", "1", NULL, "error", NULL,
         "normalize actual math expression: \\boxed must be followed by "
         "braces");
  expect("\\sqrt{2", "1", NULL, "error", NULL,
         "normalize actual math expression: unbalanced '{' '}' group");
  expect("sin(1)", "1", NULL, "error", NULL,
         "evaluate math_equivalence expressions: unsupported function "
         "\"sin\"; unsupported function \"sin\"");
  expect("1 # 2", "1", NULL, "error", NULL,
         "evaluate math_equivalence expressions: unexpected character '#'; "
         "unexpected character '#'");
  expect("1e", "1", NULL, "error", NULL,
         "evaluate math_equivalence expressions: invalid scientific "
         "notation \"1e\"; invalid scientific notation \"1e\"");
  expect("x", "y", "{\"comparison_mode\": \"numeric\"}", "error", NULL,
         "evaluate math_equivalence expressions: symbol \"x\" is not "
         "numeric; symbol \"y\" is not numeric");
  expect("(1", "1", NULL, "error", NULL,
         "evaluate math_equivalence expressions: expected closing "
         "parenthesis; expected closing parenthesis");
}

Test(math, what_crashes_or_hangs_the_reference) {
  /* Division by zero: a fail with its reason. */
  expect("1/0", "1", NULL, "fail", NULL,
         "division by zero in the actual expression");
  expect("2", "x/(1-1)", NULL, "fail", NULL,
         "division by zero in the expected expression");
  /* In numeric mode the reference computes +Inf, and so does tally. */
  expect("1/0", "1", "{\"comparison_mode\": \"numeric\"}", "fail", NULL,
         "numeric values differ by +Inf which exceeds tolerance 1e-06");
  /* Deep nesting: a reason, not a crash. */
  size_t depth = 20000;
  char *deep = malloc(2 * depth + 2);
  memset(deep, '(', depth);
  deep[depth] = '1';
  memset(deep + depth + 1, ')', depth);
  deep[2 * depth + 1] = '\0';
  cJSON *r = math(deep, "1", NULL);
  cr_expect_str_eq(ts_str_at(r, "verdict"), "error");
  cr_expect(strstr(ts_str_at(r, "reason"),
                   "expression nests deeper than 500 levels") != NULL);
  cJSON_Delete(r);
  memset(deep, '-', depth);
  deep[depth] = '1';
  deep[depth + 1] = '\0';
  r = math(deep, "1", NULL);
  cr_expect_str_eq(ts_str_at(r, "verdict"), "error");
  cJSON_Delete(r);
  free(deep);
  /* Huge exponents: a literal too large to hold, and a power left as it
   * is (its value overflows to +Inf, as the reference's does). */
  expect("1e999999999", "1", NULL, "error", NULL,
         "evaluate math_equivalence expressions: the numbers in the "
         "expression exceed 4194304 bits; the numbers in the expression "
         "exceed 4194304 bits");
  expect("2^999999999", "2^999999999", NULL, "pass", "symbolic", NULL);
  expect("1e400", "10*1e399", NULL, "pass", "symbolic", NULL);
  /* A long flat sum walks no recursion. */
  tally_buf_t b;
  tally_buf_init(&b);
  for (int i = 0; i < 20000; i++)
    tally_buf_puts(&b, i ? "+1" : "1");
  expect(b.data, "20000", NULL, "pass", "symbolic", NULL);
  tally_buf_close(&b);
}

Test(math, config_rules) {
  static const struct {
    const char *config, *error;
  } bad[] = {
      {"{\"comparison_mode\": \"exact\"}",
       "validators[0].config.comparison_mode: must be \"symbolic\" or "
       "\"numeric\""},
      {"{\"tolerance\": -1}",
       "validators[0].config.tolerance: must be greater than or equal to 0"},
      {"{\"precision\": 3}", "validators[0].config.precision: unknown key"},
      {"{\"extract_answer\": \"yes\"}",
       "validators[0].config.extract_answer: must be true or false"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char task[1024];
    snprintf(task, sizeof(task),
             "{\"name\": \"t\", \"task_type\": \"agent_run\", "
             "\"evaluation_spec\": {\"name\": \"e\", \"version_number\": 1, "
             "\"judge_mode\": \"deterministic\", \"validators\": [{\"key\": "
             "\"m\", \"type\": \"math_equivalence\", \"target\": "
             "\"final_output\", \"expected_from\": \"literal:1\", "
             "\"config\": %s}], \"scorecard\": {\"dimensions\": "
             "[\"correctness\"]}}}",
             bad[i].config);
    char *errs = ts_task_errors(task);
    cr_expect(errs != NULL && strstr(errs, bad[i].error) != NULL, "%s: %s",
              bad[i].config, errs ? errs : "(accepted)");
    free(errs);
  }
  /* Defaults and the trimmed mode in the evidence; extract_answer
   * defaults the delimiter to ####. */
  cJSON *r = math("so #### 7", "7",
                  "{\"extract_answer\": true, \"comparison_mode\": \" numeric "
                  "\", \"numeric_fallback\": false}");
  cr_expect_str_eq(ts_str_at(r, "verdict"), "pass");
  cr_expect_str_eq(ts_str_at(r, "raw_output.comparison_mode"), "numeric");
  cr_expect_str_eq(ts_str_at(r, "raw_output.answer_delimiter"), "####");
  cr_expect_eq(ts_bool_at(r, "raw_output.numeric_fallback"), 1);
  cr_expect_float_eq(ts_num_at(r, "raw_output.tolerance"), 1e-6, 1e-18);
  cJSON_Delete(r);
}

/* The canonical key of s, normalized and parsed; NULL when it fails. */
static char *key(const char *s) {
  char err[256], *norm, *k = NULL;
  tally_mx_t *e;
  if (tally_mx_normalize(s, false, "", &norm, err, sizeof(err)) != 0)
    return NULL;
  if (tally_mx_parse(norm, &e, err, sizeof(err)) == 0) {
    if (tally_mx_key(e, &k, err, sizeof(err)) != 0)
      k = NULL;
    tally_mx_free(e);
  }
  free(norm);
  return k;
}

static double value(const char *s) {
  char err[256];
  tally_mx_t *e;
  double v = NAN;
  if (tally_mx_parse(s, &e, err, sizeof(err)) == 0) {
    if (tally_mx_eval(e, &v, err, sizeof(err)) != 0)
      v = NAN;
    tally_mx_free(e);
  }
  return v;
}

Test(math, keys_values_and_go_pow) {
  static const struct {
    const char *in, *key;
  } keys[] = {
      {"2*3*x", "mul(num:6,sym:x)"},
      /* The constant of the inner product stays a factor. */
      {"x*2*3", "mul(num:2,num:3,sym:x)"},
      {"x/2", "mul(num:1/2,sym:x)"},
      {"x/y", "mul(pow(sym:y,num:-1),sym:x)"},
      {"-x", "mul(num:-1,sym:x)"},
      {"x^0", "num:1"},
      {"0*x", "num:0"},
      {"(2/3)^-2", "num:9/4"},
      {"2^40", "pow(num:2,num:40)"},
      {"\\frac{a}{b}+c", "add(mul(pow(sym:b,num:-1),sym:a),sym:c)"},
  };
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char *k = key(keys[i].in);
    cr_expect(k != NULL && strcmp(k, keys[i].key) == 0, "%s: %s", keys[i].in,
              k ? k : "(none)");
    free(k);
  }
  /* Rationals to the nearest float64, ties to even. */
  cr_expect_eq(value("0.1"), 0.1);
  cr_expect_eq(value("1/3"), 1.0 / 3);
  cr_expect_eq(value("4.9e-324"), 4.9e-324);
  cr_expect_eq(value("2.4703282292062328e-324"), 4.9e-324);
  cr_expect_eq(value("2.4703282292062327e-324"), 0);
  cr_expect(isinf(value("1e400")));
  cr_expect_eq(value("9007199254740993"), 9007199254740992.0);
  /* Go's Pow: its special cases and its own path to a value. */
  cr_expect_eq(tally_go_pow(0, -1), INFINITY);
  cr_expect_eq(tally_go_pow(-8, 1.0 / 3) != tally_go_pow(-8, 1.0 / 3), 1);
  cr_expect_eq(tally_go_pow(2, 10), 1024);
  cr_expect_eq(tally_go_pow(-1, INFINITY), 1);
  cr_expect_eq(tally_go_pow(2, 0.5), sqrt(2));
  cr_expect_eq(tally_go_pow(10, -2), 0.01);
}
