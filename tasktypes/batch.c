/* Batch: each evaluation is an execution result; a failed run scores 0
 * with CMS's message, a run that ended well is judged by its output
 * (compared with the task's comparator) or by a checker's verdict. */
#include "config/json.h"
#include "tasktypes/execution.h"

#include <string.h>

static int batch_evaluate(const tally_tt_input_t *in, tally_tt_eval_t *out,
                          char *err, size_t errlen) {
  tally_exec_t ex;
  int rc = tally_exec_decode(in->eval, in->codename, &ex, err, errlen);
  if (rc != 0)
    return rc;
  out->time = ex.time;
  out->memory = ex.memory;
  if (ex.status != TALLY_EXEC_OK) {
    const char *msg = tally_exec_message(ex.status);
    out->outcome = 0.0;
    return tally_text_set(&out->message, msg, strlen(msg));
  }
  if (ex.output != NULL) {
    if (in->expected == NULL)
      return tally_tt_error(err, errlen, in->codename, "output",
                            "the task has no expected outputs (no data "
                            "folder), so a run must send its checker's "
                            "verdict");
    /* Outputs are bytes: a NUL inside counts like any other byte. */
    return tally_tt_compare(in, ex.output->valuestring,
                            tally_json_strlen(ex.output), out, err, errlen);
  }
  if (ex.checker_stdout != NULL) {
    const cJSON *se = ex.checker_stderr;
    return tally_checker_parse(
        ex.checker_stdout->valuestring, tally_json_strlen(ex.checker_stdout),
        se != NULL ? se->valuestring : "",
        se != NULL ? tally_json_strlen(se) : 0, in->codename, out, err, errlen);
  }
  return tally_tt_error(err, errlen, in->codename, NULL,
                        "a run with status ok needs its output or its "
                        "checker's verdict (checker)");
}

const tally_task_type_t tally_task_type_batch = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "batch",
    .flags = TALLY_TT_EXPECTED_OPTIONAL,
    .evaluate = batch_evaluate,
};
