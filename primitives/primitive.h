/* Scoring primitives: deterministic functions from a submitted answer's
 * field and its ground truth (or the match's time and usage) to a score
 * from 0 to 1000, each feeding one dimension of a challenge
 * (docs/challenges.md). The table of built-ins is tally_primitives. */
#ifndef TALLY_PRIMITIVE_H
#define TALLY_PRIMITIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/diag.h"
#include "config/error.h"

/* Bumped whenever tally_primitive_t or tally_prim_input_t change in a way
 * a plugin could notice. */
#define TALLY_PRIMITIVE_VERSION 1

/* What a primitive reads, besides its parameters. */
enum {
  /* The answer's "field" and the ground truth's "ground_truth_field":
   * both keys are required in the dimension. */
  TALLY_PRIM_FIELD = 1u << 0,
  /* The match's time_used. */
  TALLY_PRIM_TIME = 1u << 1,
  /* The match's usage, with the task's constraints.token_budget. */
  TALLY_PRIM_TOKENS = 1u << 2,
  /* The match's usage, with the task's constraints.max_llm_calls. */
  TALLY_PRIM_CALLS = 1u << 3,
};

/* One match as a primitive sees it. */
typedef struct tally_prim_input_s {
  const cJSON *value; /* the answer's field (TALLY_PRIM_FIELD) */
  const cJSON *truth; /* the ground truth's field (TALLY_PRIM_FIELD) */
  bool has_time_used;
  double time_used;
  bool has_usage; /* the job's usage object */
  double input_tokens, output_tokens, llm_calls;
  bool verified;
  double token_budget;  /* the task's constraint, 0 when absent */
  double max_llm_calls; /* the task's constraint, 0 when absent */
} tally_prim_input_t;

/* What a primitive says besides its score: a warning on the submission
 * ("error" when the dimension scored 0 for it). */
typedef struct tally_prim_note_s {
  bool error;        /* severity "error", else "warning" */
  const char *field; /* the field the note is about; static or the input's */
  char message[192]; /* "" for no note */
} tally_prim_note_t;

typedef struct tally_primitive_s {
  int version; /* TALLY_PRIMITIVE_VERSION */
  const char *name;
  unsigned flags;
  /* The dimension keys it takes as parameters, NULL-terminated (NULL for
   * none); any other key of the dimension but the common ones is an
   * error. */
  const char *const *params;
  /* Decodes its parameters from the dimension object dim into *state.
   * path is the dimension's; the primitive pushes its keys on it and
   * restores it. Reports every problem to d and returns TALLY_ECONFIG (or
   * TALLY_ENOMEM); 0 on success. May be NULL when params is NULL. */
  int (*parse)(const cJSON *dim, void **state, tally_diag_t *d,
               tally_jpath_t *path);
  /* Whether v is of the JSON type the primitive reads in the answer (and
   * in the ground truth, unless accepts_truth says otherwise). NULL: any
   * type. */
  bool (*accepts)(const cJSON *v);
  /* Scores one match: returns a score in [0, 1000] and may write a note.
   * Must be safe to call from several threads with the same state. */
  double (*score)(const void *state, const tally_prim_input_t *in,
                  tally_prim_note_t *note);
  void (*free)(void *state);
  /* Whether v is of the type the primitive reads in the ground truth,
   * when that differs from the answer's; NULL: as accepts. */
  bool (*accepts_truth)(const cJSON *v);
} tally_primitive_t;

/* The built-ins, NULL-terminated, in the order of docs/challenges.md. */
extern const tally_primitive_t *const tally_primitives[];

extern const tally_primitive_t tally_prim_exact_match;
extern const tally_primitive_t tally_prim_exact_match_ratio;
extern const tally_primitive_t tally_prim_numeric_tolerance;
extern const tally_primitive_t tally_prim_fuzzy_string;
extern const tally_primitive_t tally_prim_time_decay;
extern const tally_primitive_t tally_prim_coverage_ratio;
extern const tally_primitive_t tally_prim_set_overlap;
extern const tally_primitive_t tally_prim_token_efficiency;
extern const tally_primitive_t tally_prim_call_efficiency;

/* exact_match equality: same JSON type; strings byte for byte (NUL
 * included), numbers by value, arrays element by element, objects by
 * equal key sets and equal values. */
bool tally_json_equal(const cJSON *a, const cJSON *b);

/* The number of distinct items of array a (by tally_json_equal). */
size_t tally_json_distinct(const cJSON *a);

/* Whether array a holds an item equal to v. */
bool tally_json_contains(const cJSON *a, const cJSON *v);

/* The fuzzy_string similarity of a and b (UTF-8, len bytes each), in
 * [0, 1]: both case-folded and whitespace-normalized, then 1 - the
 * Levenshtein distance over code points / the longer length. Inputs longer
 * than TALLY_FUZZY_MAX code points are compared on their first
 * TALLY_FUZZY_MAX; *cut says so. */
#define TALLY_FUZZY_MAX 4096
double tally_fuzzy_similarity(const char *a, size_t alen, const char *b,
                              size_t blen, bool *cut);

#endif
