/* The task-type interface: how one testcase's evaluation, as a platform
 * sends it, becomes an outcome and a message (docs/tasktypes.md), and the
 * table of task types and comparators that built-ins and plugins fill. */
#ifndef TALLY_TASKTYPE_H
#define TALLY_TASKTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/error.h"
#include "tasktypes/comparator.h"

/* Bumped whenever tally_task_type_t, tally_tt_input_t or tally_tt_eval_t
 * change in a way a plugin could notice. */
#define TALLY_TASK_TYPE_VERSION 1

/* A growable NUL-terminated text owned by whoever holds the struct. */
typedef struct tally_text_s {
  char *data; /* NULL until something is written */
  size_t len;
  size_t cap;
} tally_text_t;

/* Replaces t's text with the n bytes at s, or appends them. Both return 0
 * or TALLY_ENOMEM (t unchanged). tally_text_free frees the buffer. */
int tally_text_set(tally_text_t *t, const char *s, size_t n);
int tally_text_append(tally_text_t *t, const char *s, size_t n);
void tally_text_free(tally_text_t *t);

/* One expected output, loaded from the task's data folder. */
typedef struct tally_expected_s {
  char *data; /* NUL-terminated, but may hold NUL bytes */
  size_t len;
} tally_expected_t;

/* What a task type sees of one testcase. */
typedef struct tally_tt_input_s {
  const char *codename;
  /* The evaluation of the testcase; NULL when the job has none (only for
   * types with TALLY_TT_MISSING_OK). */
  const cJSON *eval;
  /* The expected output; NULL when the task has no data folder. */
  const tally_expected_t *expected;
  /* The task's comparator and its decoded parameters. */
  const tally_comparator_t *comparator;
  const void *comparator_state;
} tally_tt_input_t;

/* What a task type makes of it. The caller resets outcome, time and
 * memory and empties both texts before each call; the texts keep their
 * buffers from call to call. */
typedef struct tally_tt_eval_s {
  double outcome; /* in [0, 1] */
  /* The contestant's message: the one string of the testcase's "text". */
  tally_text_t message;
  /* A private note for the operator (the comparator's admin text, a
   * checker's ADMIN_MESSAGE lines); "" for none. It goes into the
   * result's details as "admin_text", never into public details or
   * views. */
  tally_text_t admin;
  /* The comparator's tally_compare_result_t.extracted: -1 (the caller's
   * reset), 0 or 1. */
  signed char extracted;
  /* The comparator's tally_compare_result_t.failure: NULL (the caller's
   * reset) or a static category name. */
  const char *failure;
  /* Echoed into details; NULL when absent. They point into eval. */
  const cJSON *time;
  const cJSON *memory;
} tally_tt_eval_t;

/* Flags of a task type. */
enum {
  /* Every task of this type needs a data folder with an expected output
   * for each testcase. */
  TALLY_TT_EXPECTED_REQUIRED = 1u << 0,
  /* A data folder is optional; when the task has one, every testcase
   * needs its expected output. */
  TALLY_TT_EXPECTED_OPTIONAL = 1u << 1,
  /* A testcase the job has no evaluation for is evaluated with eval NULL,
   * rather than being a job error. */
  TALLY_TT_MISSING_OK = 1u << 2,
  /* Jobs carry an "answer" scored by the task's dimensions
   * (scorecards/scorecard.h), not evaluations of testcases: the built-in
   * answer type. */
  TALLY_TT_ANSWER = 1u << 3,
  /* An agent run scored by an evaluation spec (docs/evaluation-specs.md). */
  TALLY_TT_AGENT_RUN = 1u << 4
};

/* A task type. Instances are const and filled with designated
 * initializers; new members are only appended, under a comment naming the
 * version that added them. */
typedef struct tally_task_type_s {
  int version; /* TALLY_TASK_TYPE_VERSION the type was built against */
  const char *name;
  unsigned flags;
  /* Evaluates one testcase into out. Returns 0; TALLY_EJOB with err
   * naming the testcase and the member at fault (tally_tt_error); or
   * TALLY_ENOMEM. NULL only for the built-in "outcomes", whose
   * evaluations config/job.c decodes itself. Must be safe to call from
   * several threads at once. */
  int (*evaluate)(const tally_tt_input_t *in, tally_tt_eval_t *out, char *err,
                  size_t errlen);
} tally_task_type_t;

/* Writes "evaluations[codename].member: message" to err (member and its
 * dots may be NULL, "checker.stdout" for a nested one) and returns
 * TALLY_EJOB. */
int tally_tt_error(char *err, size_t errlen, const char *codename,
                   const char *member, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Runs in->comparator on output against in->expected and fills out's
 * outcome, message and admin text. Returns 0, or what the comparator
 * returned (TALLY_EJOB, its message prefixed with the testcase), or
 * TALLY_ENOMEM. For task types that compare outputs. */
int tally_tt_compare(const tally_tt_input_t *in, const char *output,
                     size_t output_len, tally_tt_eval_t *out, char *err,
                     size_t errlen);

/* The built-in task types, and their table (NULL-terminated) that
 * tally_registry_init (engine/registry.h) adds. */
extern const tally_task_type_t *const tally_task_types[];
extern const tally_task_type_t tally_task_type_outcomes;
extern const tally_task_type_t tally_task_type_batch;
extern const tally_task_type_t tally_task_type_output_only;
extern const tally_task_type_t tally_task_type_answer;
extern const tally_task_type_t tally_task_type_agent_run;

#endif
