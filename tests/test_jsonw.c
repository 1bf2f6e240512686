/* The JSON writer: numbers that read back exactly, in few digits, and
 * strings with the escapes JSON needs. */
#include "support.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static char *num_text(double v) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, v);
  cr_assert_not(b.oom);
  return b.data;
}

typedef struct num_case_s {
  double v;
  char text[32];
} num_case_t;

ParameterizedTestParameters(jsonw, writes_numbers_in_their_shortest_form) {
  static num_case_t cases[] = {
      {0.0, "0"},
      {1.0, "1"},
      {-1.0, "-1"},
      {42.0, "42"},
      {0.1, "0.1"},
      {23.1, "23.1"},
      {-12.034, "-12.034"},
      {0.5, "0.5"},
      {2.5, "2.5"},
      {1e-7, "0.0000001"},
      {0.30000000000000004, "0.30000000000000004"},
      {0.020000000000000004, "0.020000000000000004"},
      {33.333333333333336, "33.333333333333336"},
      {9007199254740991.0, "9007199254740991"},
  };
  return cr_make_param_array(num_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(num_case_t *c, jsonw, writes_numbers_in_their_shortest_form) {
  char *text = num_text(c->v);
  cr_expect_str_eq(text, c->text);
  free(text);
}

Test(jsonw, writes_null_for_numbers_json_cannot_hold) {
  char *t = num_text(NAN);
  cr_expect_str_eq(t, "null");
  free(t);
  t = num_text(INFINITY);
  cr_expect_str_eq(t, "null");
  free(t);
  t = num_text(-INFINITY);
  cr_expect_str_eq(t, "null");
  free(t);
}

Test(jsonw, keeps_the_sign_of_negative_zero) {
  char *t = num_text(-0.0);
  double back = strtod(t, NULL);
  cr_expect(back == 0.0 && signbit(back), "%s", t);
  free(t);
}

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void expect_round_trip(double v) {
  char *t = num_text(v);
  char *end;
  double back = strtod(t, &end);
  cr_expect(*end == '\0' && back == v, "%.17g written as %s", v, t);
  /* JSON numbers have a digit before any point and no leading '+'. */
  cr_expect(t[0] == '-' || (t[0] >= '0' && t[0] <= '9'), "%s", t);
  cr_expect(strstr(t, "inf") == NULL && strstr(t, "nan") == NULL, "%s", t);
  free(t);
}

Test(jsonw, reads_back_every_finite_double_exactly) {
  uint64_t s = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 20000; i++) {
    uint64_t bits = next(&s);
    double v;
    memcpy(&v, &bits, sizeof(v));
    if (isfinite(v))
      expect_round_trip(v);
  }
}

Test(jsonw, reads_back_score_like_values_exactly) {
  uint64_t s = 12345;
  for (int i = 0; i < 20000; i++) {
    double v = (double)(next(&s) % 1000000) / 10000.0;
    expect_round_trip(v);
    expect_round_trip(v * ((double)(next(&s) % 1000) / 999.0));
    expect_round_trip(tally_round(v / 3, (int)(next(&s) % 11)));
  }
}

Test(jsonw, escapes_strings_for_json) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_str(&b, "a\"b\\c\nd\te\rf\x01g\x1f\xc3\xa9/");
  cr_expect_str_eq(b.data,
                   "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u001f\xc3\xa9/\"");
  tally_buf_close(&b);
}

Test(jsonw, writes_any_value_verbatim) {
  cJSON *v = cJSON_Parse("{\"a\": [1, 2.5, \"x\", null, true, false, {}], "
                         "\"b\": {\"c\": []}}");
  cr_assert_not_null(v);
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_value(&b, v);
  cr_expect_str_eq(b.data, "{\"a\":[1,2.5,\"x\",null,true,false,{}],"
                           "\"b\":{\"c\":[]}}");
  tally_buf_reset(&b);
  tally_json_value(&b, NULL);
  cr_expect_str_eq(b.data, "null");
  tally_buf_close(&b);
  cJSON_Delete(v);
}
