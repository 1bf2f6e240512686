/* Execution results, as a sandbox reports them in a batch evaluation,
 * decoded strictly; CMS's message for each way a run can fail; and the
 * parser of a checker's standard output and error. */
#ifndef TALLY_EXECUTION_H
#define TALLY_EXECUTION_H

#include "tasktypes/tasktype.h"

/* The "status" of a run, in the order of the names tally accepts. */
typedef enum tally_exec_status_e {
  TALLY_EXEC_OK = 0,       /* "ok" */
  TALLY_EXEC_TIMEOUT,      /* "timeout": CPU time limit */
  TALLY_EXEC_WALL_TIMEOUT, /* "wall_timeout" */
  TALLY_EXEC_MEMORY,       /* "memory" */
  TALLY_EXEC_SIGNAL,       /* "signal" */
  TALLY_EXEC_NONZERO_EXIT, /* "nonzero_exit" */
  TALLY_EXEC_OUTPUT_LIMIT  /* "output_limit" */
} tally_exec_status_t;

/* One decoded execution result. The cJSON pointers point into the
 * evaluation; NULL means absent (or null, for the numbers). */
typedef struct tally_exec_s {
  tally_exec_status_t status;
  const cJSON *time, *wall_time, *memory; /* non-negative numbers */
  const cJSON *exit_code, *signal;        /* whole numbers */
  const cJSON *output;                    /* a string */
  const cJSON *checker_stdout;            /* strings, with checker */
  const cJSON *checker_stderr;
} tally_exec_t;

/* Decodes v, the evaluation of testcase codename:
 * {"status", "time", "wall_time", "memory", "exit_code", "signal",
 *  "output" | "checker": {"stdout", "stderr"}}. Only status is required;
 * output and checker exclude each other. Returns 0, or TALLY_EJOB with err
 * naming the member at fault ("evaluations[\"003\"].status: must be one
 * of ok, timeout, ..."). */
int tally_exec_decode(const cJSON *v, const char *codename, tally_exec_t *ex,
                      char *err, size_t errlen);

/* The name of status ("ok", "timeout", ...). */
const char *tally_exec_status_name(tally_exec_status_t status);

/* CMS's message for a run that ended with status, other than ok:
 * "Execution timed out", "Execution timed out (wall clock limit
 * exceeded)", "Memory limit exceeded", "Execution killed by signal" (also
 * for output_limit: the sandbox's file size limit kills with SIGXFSZ), or
 * "Execution failed because the return code was nonzero". */
const char *tally_exec_message(tally_exec_status_t status);

/* Parses a checker's output as CMS does: the first line of out (len
 * bytes), trimmed of white space, must be a decimal number in [0, 1]; the
 * first line of errtext, trimmed and without ANSI escapes, is the
 * contestant's message, with "translate:success", "translate:partial" and
 * "translate:wrong" becoming CMS's stock messages; every later line that
 * starts with "ADMIN_MESSAGE:" goes, after the prefix, to the admin text
 * (one line each). Fills res->outcome, res->message and res->admin.
 * Returns 0; TALLY_EJOB with err naming codename when the outcome is
 * missing, malformed or out of range; or TALLY_ENOMEM. */
int tally_checker_parse(const char *out, size_t out_len, const char *errtext,
                        size_t err_len, const char *codename,
                        tally_tt_eval_t *res, char *err, size_t errlen);

#endif
