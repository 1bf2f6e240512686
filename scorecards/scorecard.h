/* Scorecards: the weighted dimensions of a challenge (the task keys of an
 * answer task: scoring, ground_truth, difficulty, constraints,
 * answer_format, win_threshold, draw_threshold), and scoring one match
 * with them into a total on the 0-1000 scale, a breakdown, a win, draw or
 * loss, and the warnings on the submission (docs/challenges.md). */
#ifndef TALLY_SCORECARD_H
#define TALLY_SCORECARD_H

#include "primitives/primitive.h"

#define TALLY_MAX_DIMENSIONS 16

typedef struct tally_dimension_s {
  char *name;
  char *label;
  char *description;
  double weight;
  bool is_public;
  const tally_primitive_t *prim;
  void *state;       /* the primitive's parameters */
  char *field;       /* TALLY_PRIM_FIELD: the answer's key */
  char *truth_field; /* TALLY_PRIM_FIELD: the ground truth's key */
} tally_dimension_t;

/* The JSON types answer_format names. */
typedef enum tally_json_kind_e {
  TALLY_KIND_STRING,
  TALLY_KIND_NUMBER,
  TALLY_KIND_BOOLEAN,
  TALLY_KIND_ARRAY,
  TALLY_KIND_OBJECT
} tally_json_kind_t;

typedef struct tally_format_field_s {
  char *name;
  tally_json_kind_t kind;
  bool required;
} tally_format_field_t;

typedef struct tally_scorecard_s {
  tally_dimension_t *dims;
  size_t ndims;
  double public_weight; /* the sum of the public dimensions' weights */
  cJSON *ground_truth;  /* the task's, owned; NULL when it has none */
  double difficulty;    /* the opponent's rating: 1000 by default */
  /* constraints: 0 when absent. */
  double time_limit_secs, token_budget, max_llm_calls;
  double win_threshold, draw_threshold;
  tally_format_field_t *format;
  size_t nformat;
} tally_scorecard_t;

/* Finds a primitive by name for the decoder (the registry's lookup). */
typedef const tally_primitive_t *(*tally_prim_find_t)(const void *ctx,
                                                      const char *name);

/* The task keys a scorecard reads, NULL-terminated. */
extern const char *const tally_scorecard_keys[];

/* Decodes the scorecard keys of the task object root (the other keys are
 * the caller's) into a new card. Reports every problem to d, each with
 * its path, and returns TALLY_ECONFIG; 0 with *out set on success. */
int tally_scorecard_parse(const cJSON *root, tally_prim_find_t find,
                          const void *ctx, tally_diag_t *d,
                          tally_scorecard_t **out);
void tally_scorecard_free(tally_scorecard_t *card);

/* One match's answer and what came with it, from the job. */
typedef struct tally_match_s {
  const cJSON *answer;       /* an object */
  const cJSON *ground_truth; /* the job's, or NULL */
  bool has_time_used;
  double time_used;
  bool has_usage;
  double input_tokens, output_tokens, llm_calls;
  bool verified;
} tally_match_t;

/* A warning on the submission. */
typedef struct tally_card_warning_s {
  bool error;         /* "error", else "warning" */
  char field[128];    /* "" when it names none */
  char dimension[64]; /* "" when it names none */
  char message[256];
} tally_card_warning_t;

typedef enum tally_match_result_e {
  TALLY_MATCH_LOSS,
  TALLY_MATCH_DRAW,
  TALLY_MATCH_WIN
} tally_match_result_t;

/* What scoring one match gave; reused from match to match. */
typedef struct tally_card_result_s {
  double scores[TALLY_MAX_DIMENSIONS]; /* each dimension's, 0..1000 */
  double total;                        /* min(1000, sum of weighted) */
  double public_total;                 /* over the public dimensions */
  tally_match_result_t result;         /* from the rounded total */
  tally_card_warning_t *warnings;
  size_t nwarnings, cap;
  char (*violations)[160];
  size_t nviolations;
} tally_card_result_t;

void tally_card_result_init(tally_card_result_t *r);
void tally_card_result_close(tally_card_result_t *r);

/* Scores m with card into r; precision is the task's score_precision, by
 * which the total is rounded before the win and draw thresholds. Returns
 * 0, TALLY_EJOB with err naming the cause (a ground-truth field missing
 * from both the job and the task, or of a type the primitive does not
 * read), or TALLY_ENOMEM. */
int tally_scorecard_score(const tally_scorecard_t *card, const tally_match_t *m,
                          int precision, tally_card_result_t *r, char *err,
                          size_t errlen);

/* "win", "draw" or "loss". */
const char *tally_match_result_name(tally_match_result_t r);

#endif
