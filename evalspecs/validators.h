/* The validator types of evaluation specs, in a table like comparators:
 * each names its config checks and (validate.c) how it compares an actual
 * value with an expected one. The types not scored yet (math, files, tool
 * calls, postconditions, code execution) are listed as known, so a spec
 * naming one is refused with that reason. */
#ifndef TALLY_ES_VALIDATORS_H
#define TALLY_ES_VALIDATORS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "config/diag.h"

enum {
  TALLY_ES_NEEDS_EXPECTED = 1u << 0, /* expected_from is required */
  TALLY_ES_FILE = 1u << 1            /* its target is file:KEY */
};

typedef struct tally_es_vtype_s {
  const char *name;
  unsigned flags;
  /* Checks config (NULL when absent or null) and keeps what it says in
   * *state (may stay NULL). Reports each problem to d under path, which
   * names the config. NULL: the type reads no config (any is accepted, as
   * the reference does). */
  int (*parse)(const cJSON *config, void **state, tally_diag_t *d,
               tally_jpath_t *path);
  void (*free)(void *state);
} tally_es_vtype_t;

/* The type named name, or NULL. */
const tally_es_vtype_t *tally_es_vtype_find(const char *name);

/* The parsed configs of the types that read one. */
typedef struct tally_es_fuzzy_s {
  bool has_threshold;
  double threshold;
  bool case_insensitive, normalize;
} tally_es_fuzzy_t;

typedef struct tally_es_numeric_s {
  bool has_abs, has_rel;
  double abs_tol, rel_tol;
  bool extract_number;
  bool has_digits;
  long long significant_digits;
} tally_es_numeric_t;

/* bleu_score, rouge_score and chrf_score. */
typedef struct tally_es_gen_s {
  bool has_threshold;
  double threshold;
  long long max_ngram;  /* bleu_score: default 4 */
  bool method1;         /* bleu_score: smoothing "method1" */
  int variant;          /* rouge_score: 0 rouge-1, 1 rouge-2, 2 rouge-l */
  long long char_order; /* chrf_score: default 6 */
  bool has_beta;
  double beta;
  bool case_insensitive, normalize;
} tally_es_gen_t;

/* tool_call_assertion. */
typedef struct tally_es_tool_s {
  char *tool_name; /* trimmed; "" for none */
  int must_call;   /* -1 not given, else 0 or 1 */
  bool has_count, has_min, has_max;
  long long count, min, max;
  cJSON *args;    /* arguments_contain (an object), or NULL */
  char **ordered; /* ordered_tools, trimmed */
  size_t nordered;
  char *order_mode; /* trimmed; "subsequence" by default with ordered_tools,
                       else "" */
} tally_es_tool_t;

/* postcondition. */
typedef struct tally_es_post_s {
  char *condition; /* trimmed */
  char *json_path; /* trimmed */
  cJSON *value;    /* as given (null included), or NULL when absent */
} tally_es_post_t;

/* math_equivalence. */
typedef struct tally_es_math_s {
  bool extract;     /* extract_answer */
  char *delim;      /* answer_delimiter, trimmed; "####" to extract */
  bool numeric;     /* comparison_mode "numeric" (else symbolic) */
  bool fallback;    /* numeric_fallback (default true) */
  double tolerance; /* default 1e-6 */
} tally_es_math_t;

/* code_execution. */
typedef struct tally_es_code_s {
  double pass_threshold; /* default 1 */
  const char *scoring;   /* "fraction_passed" by default */
  bool all_or_nothing, pass_at_k;
} tally_es_code_t;

#define TALLY_ES_MAX_STEPS 64
typedef struct tally_es_pipeline_s {
  int steps[TALLY_ES_MAX_STEPS]; /* tally_es_step_t */
  size_t nsteps;
  bool has_threshold; /* token_f1 */
  double threshold;
} tally_es_pipeline_t;

typedef enum tally_es_step_e {
  TALLY_ES_TRIM,
  TALLY_ES_LOWERCASE,
  TALLY_ES_COLLAPSE_WHITESPACE,
  TALLY_ES_STRIP_PUNCTUATION,
  TALLY_ES_STRIP_CURRENCY,
  TALLY_ES_STRIP_FORMATTING,
  TALLY_ES_NORMALIZE_UNICODE,
  TALLY_ES_REMOVE_ARTICLES,
  TALLY_ES_SORT_WORDS,
  TALLY_ES_SORT_LINES
} tally_es_step_t;

/* The step names, indexed by tally_es_step_t. */
extern const char *const tally_es_step_names[];

#endif
