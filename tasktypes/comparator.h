/* Comparators: pure functions from a contestant's output and the expected
 * output to an outcome in [0, 1] and a message, selected per task by the
 * task key "comparator" with "comparator_parameters"
 * (docs/comparators.md). The table of built-ins is in comparators.h. */
#ifndef TALLY_COMPARATOR_H
#define TALLY_COMPARATOR_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/diag.h"
#include "config/error.h"

/* Bumped whenever tally_comparator_t or tally_compare_result_t change in a
 * way a plugin could notice. */
#define TALLY_COMPARATOR_VERSION 1

/* The three messages a comparator gives, CMS's words. */
#define TALLY_COMPARE_CORRECT "Output is correct"
#define TALLY_COMPARE_PARTIAL "Output is partially correct"
#define TALLY_COMPARE_WRONG "Output isn't correct"

/* What one comparison found. The comparator fills outcome and message; it
 * may write admin, a private note for the operator (where the first
 * difference is) that never reaches public details. */
typedef struct tally_compare_result_s {
  double outcome;      /* in [0, 1] */
  const char *message; /* static: TALLY_COMPARE_CORRECT for 1,
                          TALLY_COMPARE_WRONG for 0, TALLY_COMPARE_PARTIAL
                          otherwise */
  char admin[256];     /* "" when there is nothing to say; any bytes the
                          comparator quotes are escaped (printable ASCII
                          and valid UTF-8 only) */
  /* Whether the comparator pulled an answer out of the output: -1 it
   * does not extract (the caller sets -1 before each call, so a plugin
   * built before this member leaves it so), 0 it found nothing to
   * extract (no number, no letter, no JSON object), 1 it did. Benchmark
   * reports call a wrong answer with nothing extracted a format error. */
  signed char extracted;
  /* Why the sample failed, for a benchmark report's failure analysis
   * (docs/benchmarks.md#failure-analysis): one of the categories of
   * stats/failure.h that a comparator may name (code_sandbox's
   * "test_failure", "execution_timeout", "runtime_crash",
   * "output_limit"), or NULL. The caller sets NULL before each call, so
   * a plugin built before this member leaves it so. */
  const char *failure;
} tally_compare_result_t;

typedef struct tally_comparator_s {
  int version; /* TALLY_COMPARATOR_VERSION */
  const char *name;
  /* Decodes params (the task's "comparator_parameters", or NULL when the
   * task gives none) into *state. path is the path of params itself
   * ("comparator_parameters"); the comparator pushes its keys on it and
   * restores it before returning. Reports every problem to d and returns
   * TALLY_ECONFIG, or TALLY_ENOMEM; 0 on success. *state is only set on
   * success (NULL is a valid state). May be NULL for a comparator without
   * parameters: then the task config must refuse any parameters. */
  int (*parse)(const cJSON *params, void **state, tally_diag_t *d,
               tally_jpath_t *path);
  /* Compares output with expected (neither NUL-terminated; any bytes,
   * including invalid UTF-8 and NUL; either may be NULL when its length
   * is 0). Fills *res, which may hold anything on entry. Returns 0, or
   * TALLY_EJOB with err naming the cause when the comparison cannot be
   * made (a regex hitting its match limit), or TALLY_ENOMEM. Must be safe
   * to call from several threads at once with the same state. */
  int (*compare)(const void *state, const char *output, size_t output_len,
                 const char *expected, size_t expected_len,
                 tally_compare_result_t *res, char *err, size_t errlen);
  /* Frees a state from parse. May be NULL when parse is NULL. */
  void (*free)(void *state);
} tally_comparator_t;

/* The built-in comparators, each documented in docs/comparators.md. */
extern const tally_comparator_t tally_comparator_white_diff;
extern const tally_comparator_t tally_comparator_exact;
extern const tally_comparator_t tally_comparator_numeric_tolerance;
extern const tally_comparator_t tally_comparator_normalized;
extern const tally_comparator_t tally_comparator_regex;
extern const tally_comparator_t tally_comparator_last_number;
extern const tally_comparator_t tally_comparator_fuzzy;
extern const tally_comparator_t tally_comparator_contains;
extern const tally_comparator_t tally_comparator_token_f1;
extern const tally_comparator_t tally_comparator_set_overlap;
extern const tally_comparator_t tally_comparator_element_ratio;
extern const tally_comparator_t tally_comparator_multichoice;
extern const tally_comparator_t tally_comparator_answer_line;
extern const tally_comparator_t tally_comparator_code_sandbox;

/* The name of the comparator a task gets when it names none. */
#define TALLY_COMPARATOR_DEFAULT "white_diff"

#endif
