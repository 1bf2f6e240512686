/* Comparators: pure functions from a contestant's output and the expected
 * output to an outcome in [0, 1] and a message, selected per task by the
 * task key "comparator" (docs/config.md). */
#ifndef TALLY_COMPARATOR_H
#define TALLY_COMPARATOR_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../config/diag.h"
#include "../config/error.h"

/* Bumped whenever tally_comparator_t or tally_compare_result_t change in a
 * way a plugin could notice. */
#define TALLY_COMPARATOR_VERSION 1

/* What one comparison found. The comparator fills outcome and message; it
 * may write admin, a private note for the operator (where the first
 * difference is) that never reaches public details. */
typedef struct tally_compare_result_s {
  double outcome;      /* in [0, 1] */
  const char *message; /* static: "Output is correct", "Output isn't
                          correct" or "Output is partially correct" */
  char admin[256];     /* "" when there is nothing to say */
} tally_compare_result_t;

typedef struct tally_comparator_s {
  int version; /* TALLY_COMPARATOR_VERSION */
  const char *name;
  /* Decodes params (the task's "comparator_parameters", or NULL when the
   * task gives none) into *state. Reports every problem to d at path and
   * returns TALLY_ECONFIG, or TALLY_ENOMEM; 0 on success. May be NULL
   * for a comparator without parameters (then any parameters are an
   * error). */
  int (*parse)(const cJSON *params, void **state, tally_diag_t *d,
               tally_jpath_t *path);
  /* Compares output with expected (neither NUL-terminated; any bytes,
   * including invalid UTF-8 and NUL). Returns 0, or TALLY_EJOB with err
   * naming the cause when the comparison cannot be made (a regex hitting
   * its match limit), or TALLY_ENOMEM. Must be safe to call from several
   * threads at once with the same state. */
  int (*compare)(const void *state, const char *output, size_t output_len,
                 const char *expected, size_t expected_len,
                 tally_compare_result_t *res, char *err, size_t errlen);
  void (*free)(void *state);
} tally_comparator_t;

#endif
