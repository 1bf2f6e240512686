/* The score-type interface: parsed tasks, evaluations, results, and the
 * versioned vtable that built-in and plugin score types implement. */
#ifndef TALLY_SCORETYPE_H
#define TALLY_SCORETYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config/diag.h"
#include "config/error.h"
#include "config/job.h"

/* Bumped whenever tally_score_type_t, tally_task_t, tally_subtask_t,
 * tally_eval_t or tally_result_t change in a way a plugin could notice. */
#define TALLY_SCORE_TYPE_VERSION 1

typedef struct tally_score_type_s tally_score_type_t;

typedef struct tally_testcase_s {
  char *codename;
  bool is_public;
} tally_testcase_t;

typedef enum tally_rounding_e {
  TALLY_ROUND_SUBTASK = 0, /* round each subtask, then the sum (CMS 2026) */
  TALLY_ROUND_NONE         /* totals sum unrounded subtask scores */
} tally_rounding_t;

/* How a participant's submissions make one task score. The names are
 * CMS's (task key score_mode). */
typedef enum tally_score_mode_e {
  TALLY_MODE_MAX_SUBTASK = 0, /* "max_subtask", the default */
  TALLY_MODE_MAX,             /* "max" */
  TALLY_MODE_MAX_TOKENED_LAST /* "max_tokened_last" */
} tally_score_mode_t;

/* Which testcases of the public details a contestant sees (task key
 * feedback_level), by the show flags of each testcase. */
typedef enum tally_feedback_level_e {
  TALLY_FEEDBACK_RESTRICTED = 0, /* "restricted", the default */
  TALLY_FEEDBACK_FULL,           /* "full" */
  TALLY_FEEDBACK_OI_RESTRICTED   /* "oi_restricted" */
} tally_feedback_level_t;

/* One subtask of a group score type, as decoded from one entry of
 * score_type_parameters. tcs index task->testcases, in subtask order. */
typedef struct tally_subtask_s {
  double max_score;
  double threshold; /* only for types with TALLY_SCORE_THRESHOLD */
  bool always_show_testcases;
  bool all_public;
  uint32_t *tcs;
  size_t ntcs;
  char *header; /* "Subtask %d (%g)" */
} tally_subtask_t;

/* A decoded task config. Everything is owned by the task and freed by
 * tally_task_free (engine/task.h). */
typedef struct tally_task_s {
  char *name;
  const tally_score_type_t *type;
  tally_testcase_t *testcases; /* sorted by codename, byte order */
  size_t ntestcases;
  int score_precision;
  tally_rounding_t score_rounding;
  tally_score_mode_t score_mode;
  tally_feedback_level_t feedback_level;
  bool has_time_limit;
  double time_limit;
  double max_score;
  double max_public_score;
  /* Group types: the subtasks. Other types: NULL and 0. */
  tally_subtask_t *subtasks;
  size_t nsubtasks;
  /* Private parsed parameters of custom (non-group) score types. */
  void *state;
  /* Appended for task types (tasktypes/tasktype.h); score types need not
   * look at them. task_type is never NULL once parsed; comparator is NULL
   * for the outcomes type. */
  const struct tally_task_type_s *task_type;
  const struct tally_comparator_s *comparator;
  void *comparator_state;
  bool comparator_given; /* the task names its comparator */
  char *data_dir;        /* the data_dir key as written, or NULL */
  /* The expected output of each testcase, indexed like testcases, once
   * the task's data folder is loaded (tally_taskset_load); NULL when the
   * task has none. */
  struct tally_expected_s *expected;
  /* An answer task's scorecard (scorecards/scorecard.h); NULL for the
   * others. */
  struct tally_scorecard_s *card;
  /* An agent_run task's evaluation spec (evalspecs/spec.h); NULL for the
   * others. */
  struct tally_es_spec_s *spec;
  /* What a benchmark report reads of a sample of this task
   * (docs/benchmarks.md): the category (NULL: "unknown"), the reward at
   * or above which a sample is correct (default 1), and the refusal
   * phrases (NULL: the default list). Any task type takes them. */
  char *category;
  double correct_threshold;
  char **refusals;
  size_t nrefusals;
  /* The task's "from_job" (docs/benchmarks.md#one-task-for-a-whole-
   * benchmark): the names of the job keys that hold each sample's
   * expected answer (replacing the data folder), problem id and
   * category, and the question a judge's prompt quotes; NULL when not
   * taken from the job. */
  char *job_target, *job_problem, *job_category, *job_question;
  /* The task's judge (engine/judge.h): its samples' verdicts come from a
   * judge model; NULL for a task without one. */
  struct tally_judge_s *judge;
} tally_task_t;

typedef struct tally_tc_result_s {
  uint32_t tc;       /* index into task->testcases */
  const char *label; /* "Correct", ...: static storage */
  bool show_in_restricted_feedback;
  bool show_in_oi_restricted_feedback;
} tally_tc_result_t;

typedef struct tally_st_result_s {
  double fraction;
  double score;   /* fraction * max_score, unrounded */
  double rounded; /* score rounded to score_precision */
  uint32_t first; /* its testcases: result->tcs[first .. first+count) */
  uint32_t count;
} tally_st_result_t;

/* What a score type computes for one job. A result is reused from job to
 * job: tally_result_reset keeps its buffers. */
typedef struct tally_result_s {
  bool evaluated; /* false: compilation failed, details are empty */
  bool grouped;   /* true: sts lists subtasks; false: flat testcases */
  double score;
  double public_score;
  tally_tc_result_t *tcs;
  size_t ntcs, tcs_cap;
  tally_st_result_t *sts;
  size_t nsts, sts_cap;
  double *scratch; /* outcomes of one subtask, for reduce */
  size_t scratch_cap;
} tally_result_t;

/* Flags of a score type. */
enum {
  /* Outcomes outside [0, 1] are job errors. */
  TALLY_SCORE_UNIT_OUTCOMES = 1u << 0,
  /* Each subtask entry carries a third element, a positive threshold. */
  TALLY_SCORE_THRESHOLD = 1u << 1
};

/* A score type. A type is either a group type, which sets reduce and label
 * and lets the engine decode subtasks and build CMS-shaped details, or a
 * custom type, which sets parse, score and free itself. Instances are
 * const and filled with designated initializers; new members are only
 * appended, under a comment naming the version that added them. */
struct tally_score_type_s {
  int version; /* TALLY_SCORE_TYPE_VERSION the type was built against */
  const char *name;
  unsigned flags;

  /* Custom types. parse decodes params (the JSON of score_type_parameters,
   * at path) into task->state and sets task->max_score and
   * task->max_public_score; it reports every problem to d and returns 0 or
   * TALLY_ECONFIG. score fills res (already reset, evaluated true) from
   * evals, which are indexed like task->testcases; it returns 0 or a
   * negative code with a message in err. free releases task->state. */
  int (*parse)(tally_task_t *task, const cJSON *params, tally_diag_t *d,
               tally_jpath_t *path);
  int (*score)(const tally_task_t *task, const tally_eval_t *evals,
               tally_result_t *res, char *err, size_t errlen);
  void (*free)(void *state);

  /* Group types. reduce maps a subtask's outcomes (n >= 1) to its score
   * fraction; label names one outcome for contestants. */
  double (*reduce)(const double *outcomes, size_t n, const tally_subtask_t *st);
  const char *(*label)(double outcome, const tally_subtask_t *st);
};

/* Result buffers. tally_result_init never fails; tally_result_close frees
 * the buffers. The push functions return NULL when out of memory. */
void tally_result_init(tally_result_t *res);
void tally_result_close(tally_result_t *res);
void tally_result_reset(tally_result_t *res);
tally_tc_result_t *tally_result_push_tc(tally_result_t *res);
tally_st_result_t *tally_result_push_st(tally_result_t *res);

/* Finds codename among task's testcases. Returns its index, or -1. */
long tally_task_find_testcase(const tally_task_t *task, const char *codename);

/* Python's round(x, ndigits): correctly rounded on the exact binary value
 * of x, with ties to even. */
double tally_round(double x, int ndigits);

/* Scores evals with task's type into res. On error, returns a negative
 * code with a message in err, and res holds nothing useful. evals may be
 * NULL when evaluated is false (compilation failed). */
int tally_score(const tally_task_t *task, const tally_eval_t *evals,
                bool evaluated, tally_result_t *res, char *err, size_t errlen);

/* The engine's group machinery, used for every type with reduce set. */
int tally__group_parse(tally_task_t *task, const cJSON *params, tally_diag_t *d,
                       tally_jpath_t *path);
int tally__group_score(const tally_task_t *task, const tally_eval_t *evals,
                       tally_result_t *res, char *err, size_t errlen);
void tally__group_free(tally_task_t *task);

/* The built-in score types, and their table (NULL-terminated) that
 * tally_registry_init (engine/registry.h) adds. */
extern const tally_score_type_t *const tally_score_types[];
extern const tally_score_type_t tally_score_sum;
extern const tally_score_type_t tally_score_group_min;
extern const tally_score_type_t tally_score_group_mul;
extern const tally_score_type_t tally_score_group_threshold;

#endif
