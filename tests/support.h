/* Helpers shared by the tests: build tasks from JSON text and score jobs
 * through the same engine as the CLI. */
#ifndef TALLY_TEST_SUPPORT_H
#define TALLY_TEST_SUPPORT_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/* Parses task JSON with the built-in types. Returns the task, or NULL with
 * the first error copied to err (if not NULL). */
tally_task_t *ts_task(const char *json, char *err, size_t errlen);

/* Decodes json as a task and returns every error, joined by newlines, in a
 * malloc'ed string ("" when the task is valid). The caller frees it. */
char *ts_task_errors(const char *json);

/* The number of lines in an error list from ts_task_errors (0 for ""). */
size_t ts_count_lines(const char *text);

/* Scores job (JSON text) against task. Returns the parsed result object
 * (free with cJSON_Delete); for a job error, the object has "error". */
cJSON *ts_score(const tally_task_t *task, const char *job);

/* Like ts_score, but returns the raw result text, malloc'ed (the caller
 * frees it), for checks on the exact digits of numbers. */
char *ts_score_text(const tally_task_t *task, const char *job);

/* Parses task_json and scores job_json against it in one go; returns NULL
 * when the task is invalid. Free the result with cJSON_Delete. */
cJSON *ts_run(const char *task_json, const char *job_json);

/* Shortcuts into a result object. */
double ts_num(const cJSON *obj, const char *key);

/* Follows a path such as "details[1].testcases[0].outcome" from root.
 * Returns NULL if some step is missing. */
const cJSON *ts_at(const cJSON *root, const char *path);
/* The string at path, or NULL if it is missing or not a string. */
const char *ts_str_at(const cJSON *root, const char *path);
/* The number at path, or NaN if it is missing or not a number. */
double ts_num_at(const cJSON *root, const char *path);
/* 1 or 0 for the bool at path, -1 if it is missing or not a bool. */
int ts_bool_at(const cJSON *root, const char *path);
/* The size of the array at path, or -1 if it is not an array. */
int ts_len_at(const cJSON *root, const char *path);
/* Prints the value at path compactly into a malloc'ed string ("<missing>"
 * when absent); the caller frees it. */
char *ts_json_at(const cJSON *root, const char *path);

/* The "idx" members of the objects in the array at path, joined by
 * commas ("a,b,c"), in a malloc'ed string the caller frees; "<missing>"
 * when there is no array. */
char *ts_idx_list_at(const cJSON *root, const char *path);

/* The member names of the object at path, sorted and joined by commas,
 * in a malloc'ed string the caller frees; "<missing>" when there is no
 * object. */
char *ts_keys_at(const cJSON *root, const char *path);

/* A job in the usual shape: {"submission": 1, "evaluations": {...}}, with
 * codenames[i] getting outcomes[i] (printed exactly). Returns a static
 * buffer, overwritten by the next call. */
const char *ts_job(size_t n, const char *const *codenames,
                   const double *outcomes);

/* One row of the group score-type tables. The task has testcases "0" to
 * "3", of which "0" and "1" are public, two subtasks over them (the first
 * all public, the second all private), and score_precision 2. */
typedef struct ts_group_case_s {
  double outcomes[4]; /* for "0" to "3" */
  double score;       /* expected totals, exact */
  double public_score;
  double fractions[2]; /* expected score_fraction of each subtask */
  double st_scores[2]; /* expected (rounded) score of each subtask */
} ts_group_case_t;

/* Scores c's outcomes with a task of type and params (the JSON of
 * score_type_parameters, with max scores 40 and 60) and checks every
 * number of the result against c with Criterion expectations. */
void ts_expect_group_case(const char *type, const char *params,
                          const ts_group_case_t *c);

/* The label that task_json, a task whose only testcase is "a", gives to
 * outcome; NULL if the job is not scored. Returns a static buffer. */
const char *ts_label_of(const char *task_json, double outcome);

/* Reads /proc/PID/stat into buf (len bytes) and returns where its fields
 * after "pid (comm) " begin, at the state letter (the command name may hold
 * spaces and parentheses, so it is found from the last ')'); NULL when the
 * file cannot be read (no such process) or has no such field. */
const char *ts_proc_stat(pid_t pid, char *buf, size_t len);

#endif
