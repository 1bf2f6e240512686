/* Why a benchmark sample failed (docs/benchmarks.md#failure-analysis):
 * the model call's error, or what its response shows. */
#ifndef TALLY_STATS_FAILURE_H
#define TALLY_STATS_FAILURE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The categories, in the order their rules are tried for an error, then
 * the three of a response. */
extern const char *const tally_failure_categories[];

/* The refusal phrases used when neither the task nor the report gives
 * any, NULL-terminated. */
extern const char *const tally_failure_refusals[];

/* What a sample's failure category depends on. */
typedef struct tally_sample_facts_s {
  const cJSON *error;   /* the job's error, a string or a number; NULL */
  const char *response; /* the response text; NULL when there is none */
  size_t response_len;
  bool correct;
  signed char extracted; /* -1 the scorer does not extract, 0, 1 */
  /* What the scorer found wrong (a category a comparator names: the
   * code's test failed, it ran out of time, crashed, wrote too much), or
   * NULL. */
  const char *cause;
} tally_sample_facts_t;

/* The failure category of a sample, or NULL when it did not fail: an
 * error's category (first rule that matches wins), else "empty",
 * "refusal" (any of refusals, n of them, case-insensitively anywhere in
 * the response; refusals NULL means tally_failure_refusals), the
 * scorer's cause (not correct), or "format_error" (not correct, nothing
 * extracted). */
const char *tally_failure_classify(const tally_sample_facts_t *f,
                                   const char *const *refusals, size_t n);

/* Whether name is a category a scorer names (tally_sample_facts_t.cause)
 * rather than one the rules find. */
bool tally_failure_is_cause(const char *name);

/* The category of an error alone (string or number). */
const char *tally_failure_of_error(const cJSON *error);

/* The first max code points of s (n bytes) as a byte length; invalid
 * UTF-8 bytes count as one each. */
size_t tally_failure_preview_len(const char *s, size_t n, size_t max);

#endif
