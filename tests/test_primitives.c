/* The scoring primitives of answer tasks at their edges
 * (docs/challenges.md): each called directly on JSON values. */
#include "primitives/primitive.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scores value against truth (JSON texts) with p, whose parameters are
 * the dimension JSON dim (or NULL); the note, if any, in *note. */
static double run(const tally_primitive_t *p, const char *dim,
                  const char *value, const char *truth,
                  const tally_prim_input_t *extra, tally_prim_note_t *note) {
  void *state = NULL;
  if (p->parse != NULL) {
    cJSON *d = cJSON_Parse(dim != NULL ? dim : "{}");
    tally_diag_t diag;
    tally_jpath_t path;
    tally_diag_init(&diag, "t");
    tally_jpath_init(&path);
    cr_assert_eq(p->parse(d, &state, &diag, &path), 0, "%s",
                 diag.count ? diag.msgs[0] : "");
    tally_diag_close(&diag);
    cJSON_Delete(d);
  }
  tally_prim_input_t in = {0};
  if (extra != NULL)
    in = *extra;
  cJSON *v = value ? cJSON_Parse(value) : NULL;
  cJSON *t = truth ? cJSON_Parse(truth) : NULL;
  in.value = v;
  in.truth = t;
  tally_prim_note_t local = {.message = ""};
  tally_prim_note_t *n = note ? note : &local;
  n->message[0] = '\0';
  n->error = false;
  n->field = NULL;
  double s = p->score(state, &in, n);
  cJSON_Delete(v);
  cJSON_Delete(t);
  if (p->free != NULL && state != NULL)
    p->free(state);
  return s;
}

static double field(const tally_primitive_t *p, const char *value,
                    const char *truth) {
  return run(p, NULL, value, truth, NULL, NULL);
}

Test(primitives, exact_match_compares_by_json_type_and_value) {
  const tally_primitive_t *p = &tally_prim_exact_match;
  cr_expect_eq(field(p, "1", "1.0"), 1000);
  cr_expect_eq(field(p, "\"1\"", "1"), 0);
  cr_expect_eq(field(p, "\"Abc\"", "\"abc\""), 0);
  cr_expect_eq(field(p, "true", "true"), 1000);
  cr_expect_eq(field(p, "false", "true"), 0);
  cr_expect_eq(field(p, "0", "false"), 0);
  cr_expect_eq(field(p, "null", "null"), 1000);
  cr_expect_eq(field(p, "[1, [2, {\"a\": 3}]]", "[1.0, [2, {\"a\": 3.0}]]"),
               1000);
  cr_expect_eq(field(p, "[1, 2]", "[1, 2, 3]"), 0);
  cr_expect_eq(field(p, "{\"a\": 1, \"b\": 2}", "{\"b\": 2, \"a\": 1}"), 1000);
  cr_expect_eq(field(p, "{\"a\": 1}", "{\"a\": 1, \"b\": 2}"), 0);
  cr_expect_eq(field(p, "{\"a\": 1}", "{\"A\": 1}"), 0);
  cr_expect_eq(field(p, "\"a\\u0000b\"", "\"a\\u0000c\""), 0);
  cr_expect_eq(field(p, "\"a\\u0000b\"", "\"a\\u0000b\""), 1000);
}

Test(primitives, exact_match_ratio_counts_positions_over_the_truth) {
  const tally_primitive_t *p = &tally_prim_exact_match_ratio;
  cr_expect_eq(field(p, "[\"a\", \"c\"]", "[\"a\", \"b\"]"), 500);
  cr_expect_eq(field(p, "[\"a\", \"b\", \"x\", \"y\"]", "[\"a\", \"b\"]"),
               1000);
  cr_expect_eq(field(p, "[\"a\"]", "[\"a\", \"b\", \"c\", \"d\"]"), 250);
  cr_expect_eq(field(p, "[\"b\", \"a\"]", "[\"a\", \"b\"]"), 0);
  cr_expect_eq(field(p, "[]", "[]"), 1000);
  cr_expect_eq(field(p, "[1]", "[]"), 0);
  cr_expect_eq(field(p, "[]", "[1]"), 0);
  cr_expect_eq(field(p, "[1, [2]]", "[1.0, [2.0]]"), 1000);
}

Test(primitives, numeric_tolerance_is_inclusive_at_the_boundary) {
  const tally_primitive_t *p = &tally_prim_numeric_tolerance;
  cr_expect_eq(run(p, "{\"tolerance\": 0.25}", "0.5", "0.75", NULL, NULL),
               1000);
  cr_expect_eq(run(p, "{\"tolerance\": 0.25}", "0.5", "0.7500001", NULL, NULL),
               0);
  cr_expect_eq(run(p, NULL, "3.005", "3", NULL, NULL), 1000);
  cr_expect_eq(run(p, NULL, "3.02", "3", NULL, NULL), 0);
  cr_expect_eq(run(p, "{\"tolerance\": 0}", "2", "2.0", NULL, NULL), 1000);
  cr_expect_eq(run(p, NULL, "[1, 2]", "[1.001, 2.001]", NULL, NULL), 1000);
  cr_expect_eq(run(p, NULL, "[1, 2]", "[1, 2, 3]", NULL, NULL), 0);
  cr_expect_eq(run(p, NULL, "[1, 2.5]", "[1, 2]", NULL, NULL), 0);
  cr_expect_eq(run(p, NULL, "[]", "[]", NULL, NULL), 1000);
  tally_prim_note_t note;
  cr_expect_eq(run(p, NULL, "1", "[1]", NULL, &note), 0);
  cr_expect(note.error && note.message[0] != '\0');
}

Test(primitives, fuzzy_string_folds_case_and_white_space) {
  const tally_primitive_t *p = &tally_prim_fuzzy_string;
  cr_expect_eq(field(p, "\"  Hello \\t\\n World \"", "\"hello world\""), 1000);
  cr_expect_float_eq(field(p, "\"kitten\"", "\"sitting\""),
                     (1.0 - 3.0 / 7.0) * 1000, 1e-9);
  cr_expect_eq(field(p, "\"\"", "\"\""), 1000);
  cr_expect_eq(field(p, "\"   \"", "\"\""), 1000);
  cr_expect_eq(field(p, "\"abc\"", "\"\""), 0);
  /* Unicode: case folding (final sigma, the Kelvin sign) and white space
   * (a no-break space and an ideographic space). */
  cr_expect_eq(field(p, "\"ΣΟΦΟΣ\"", "\"σοφος\""), 1000);
  cr_expect_eq(field(p, "\"\\u212a\"", "\"k\""), 1000);
  cr_expect_eq(field(p, "\"a\\u00a0\\u3000b\"", "\"a b\""), 1000);
  /* Code points, not bytes: one substitution in four. */
  cr_expect_float_eq(field(p, "\"café\"", "\"cafe\""), 750, 1e-9);
}

Test(primitives, fuzzy_string_bounds_the_work_on_huge_strings) {
  size_t n = 50000;
  char *a = malloc(n + 3), *b = malloc(n + 3);
  a[0] = b[0] = '"';
  memset(a + 1, 'x', n);
  memset(b + 1, 'y', n);
  a[n + 1] = b[n + 1] = '"';
  a[n + 2] = b[n + 2] = '\0';
  tally_prim_note_t note;
  double s = run(&tally_prim_fuzzy_string, NULL, a, b, NULL, &note);
  cr_expect_eq(s, 0);
  cr_expect(strstr(note.message, "first 4096 code points") != NULL, "%s",
            note.message);
  cr_expect(!note.error);
  free(a);
  free(b);
}

Test(primitives, time_decay_at_its_edges) {
  const tally_primitive_t *p = &tally_prim_time_decay;
  const char *dim = "{\"time_limit_secs\": 300}";
  tally_prim_input_t in = {.has_time_used = true, .time_used = 42.5};
  cr_expect_float_eq(run(p, dim, NULL, NULL, &in, NULL),
                     1000 * (1 - 42.5 / 300), 1e-9);
  in.time_used = 0;
  cr_expect_eq(run(p, dim, NULL, NULL, &in, NULL), 1000);
  in.time_used = -5;
  cr_expect_eq(run(p, dim, NULL, NULL, &in, NULL), 1000);
  in.time_used = 300;
  cr_expect_eq(run(p, dim, NULL, NULL, &in, NULL), 0);
  in.time_used = 1e300;
  cr_expect_eq(run(p, dim, NULL, NULL, &in, NULL), 0);
  tally_prim_note_t note;
  in.has_time_used = false;
  cr_expect_eq(run(p, dim, NULL, NULL, &in, &note), 0);
  cr_expect(note.error);
  cr_expect_str_eq(note.field, "time_used");
}

Test(primitives, coverage_ratio_counts_distinct_truth_items) {
  const tally_primitive_t *p = &tally_prim_coverage_ratio;
  cr_expect_eq(field(p, "[\"q1\", \"q2\"]", "[\"q1\", \"q2\"]"), 1000);
  cr_expect_eq(field(p, "[\"q2\"]", "[\"q1\", \"q2\", \"q1\"]"), 500);
  cr_expect_eq(field(p, "[\"q2\", \"q2\", \"x\"]", "[\"q1\", \"q2\"]"), 500);
  cr_expect_eq(field(p, "[]", "[]"), 1000);
  cr_expect_eq(field(p, "[1]", "[]"), 1000);
  cr_expect_eq(field(p, "[1.0]", "[1]"), 1000);
}

Test(primitives, set_overlap_intersection_and_jaccard) {
  const tally_primitive_t *p = &tally_prim_set_overlap;
  const char *j = "{\"method\": \"jaccard\"}";
  cr_expect_eq(run(p, NULL, "[1, 2, 2]", "[2, 3]", NULL, NULL), 500);
  cr_expect_float_eq(run(p, j, "[1, 2, 2]", "[2, 3]", NULL, NULL), 1000.0 / 3,
                     1e-9);
  cr_expect_eq(run(p, NULL, "[]", "[]", NULL, NULL), 1000);
  cr_expect_eq(run(p, j, "[]", "[]", NULL, NULL), 1000);
  cr_expect_eq(run(p, NULL, "[1]", "[]", NULL, NULL), 0);
  cr_expect_eq(run(p, j, "[1]", "[]", NULL, NULL), 0);
  cr_expect_eq(run(p, NULL, "[]", "[1]", NULL, NULL), 0);
}

Test(primitives, efficiency_needs_a_verified_match_with_usage) {
  tally_prim_input_t in = {.has_usage = true,
                           .verified = true,
                           .input_tokens = 1200,
                           .output_tokens = 300,
                           .llm_calls = 4,
                           .token_budget = 3000,
                           .max_llm_calls = 10};
  cr_expect_eq(run(&tally_prim_token_efficiency, NULL, NULL, NULL, &in, NULL),
               500);
  cr_expect_eq(run(&tally_prim_call_efficiency, NULL, NULL, NULL, &in, NULL),
               600);
  in.llm_calls = 20;
  cr_expect_eq(run(&tally_prim_call_efficiency, NULL, NULL, NULL, &in, NULL),
               0);
  tally_prim_note_t note;
  in.verified = false;
  cr_expect_eq(run(&tally_prim_token_efficiency, NULL, NULL, NULL, &in, &note),
               0);
  cr_expect(strstr(note.message, "not verified") != NULL, "%s", note.message);
  in.verified = true;
  in.has_usage = false;
  cr_expect_eq(run(&tally_prim_call_efficiency, NULL, NULL, NULL, &in, &note),
               0);
  cr_expect(strstr(note.message, "no usage") != NULL, "%s", note.message);
}

/* A random JSON value from a small pool, so that equal values (1 and 1.0,
 * 0 and -0, reordered objects, strings with a NUL) come up often. */
static void random_value(char *buf, size_t len, unsigned *seed) {
  static const char *const pool[] = {"1",
                                     "1.0",
                                     "-0",
                                     "0",
                                     "2",
                                     "\"a\"",
                                     "\"A\"",
                                     "\"a\\u0000b\"",
                                     "\"a\\u0000c\"",
                                     "true",
                                     "false",
                                     "null",
                                     "[1, 2]",
                                     "[1.0, 2]",
                                     "[2, 1]",
                                     "{\"x\": 1, \"y\": [2]}",
                                     "{\"y\": [2.0], \"x\": 1}",
                                     "{\"x\": 1}",
                                     "[]",
                                     "{}"};
  *seed = *seed * 1103515245u + 12345u;
  snprintf(buf, len, "%s",
           pool[(*seed >> 16) % (sizeof(pool) / sizeof(*pool))]);
}

static char *random_array(unsigned *seed) {
  static char out[4096];
  char item[64];
  *seed = *seed * 1103515245u + 12345u;
  int n = (int)((*seed >> 16) % 12);
  size_t used = (size_t)snprintf(out, sizeof(out), "[");
  for (int i = 0; i < n; i++) {
    random_value(item, sizeof(item), seed);
    used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s",
                             i ? ", " : "", item);
  }
  snprintf(out + used, sizeof(out) - used, "]");
  return strdup(out);
}

/* coverage_ratio and set_overlap (which use hash sets) against their
 * definitions written with tally_json_equal alone. */
Test(primitives, set_primitives_agree_with_their_definitions) {
  unsigned seed = 42;
  for (int round = 0; round < 3000; round++) {
    char *a = random_array(&seed), *b = random_array(&seed);
    cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
    size_t distinct_b = tally_json_distinct(jb), covered = 0, both = 0, at = 0;
    for (const cJSON *y = jb->child; y != NULL; y = y->next, at++) {
      bool seen = false;
      size_t k = 0;
      for (const cJSON *z = jb->child; k < at; z = z->next, k++)
        seen = seen || tally_json_equal(z, y);
      if (!seen && tally_json_contains(ja, y))
        covered++;
    }
    at = 0;
    for (const cJSON *x = ja->child; x != NULL; x = x->next, at++) {
      bool seen = false;
      size_t k = 0;
      for (const cJSON *z = ja->child; k < at; z = z->next, k++)
        seen = seen || tally_json_equal(z, x);
      if (!seen && tally_json_contains(jb, x))
        both++;
    }
    size_t distinct_a = tally_json_distinct(ja);
    double cover =
        distinct_b == 0 ? 1000.0 : (double)covered / distinct_b * 1000;
    double inter = distinct_a == 0 && distinct_b == 0 ? 1000.0
                   : distinct_b == 0                  ? 0.0
                                     : (double)both / distinct_b * 1000;
    double jac = distinct_a == 0 && distinct_b == 0
                     ? 1000.0
                     : (double)both / (distinct_a + distinct_b - both) * 1000;
    cr_assert_eq(field(&tally_prim_coverage_ratio, a, b), cover, "%s %s", a, b);
    cr_assert_eq(run(&tally_prim_set_overlap, NULL, a, b, NULL, NULL), inter,
                 "%s %s", a, b);
    cr_assert_eq(run(&tally_prim_set_overlap, "{\"method\": \"jaccard\"}", a, b,
                     NULL, NULL),
                 jac, "%s %s", a, b);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    free(a);
    free(b);
  }
}
