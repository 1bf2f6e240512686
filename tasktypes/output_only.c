/* Output only: each evaluation is the contestant's output for the
 * testcase, compared with the expected one; a testcase without one was
 * not submitted and scores 0. */
#include "tasktypes/tasktype.h"

#include "config/json.h"

#include <string.h>

/* The output of an evaluation: the string itself, or {"output": s}. */
static const cJSON *output_of(const tally_tt_input_t *in, char *err,
                              size_t errlen) {
  const cJSON *v = in->eval;
  if (cJSON_IsString(v))
    return v;
  if (!cJSON_IsObject(v)) {
    tally_tt_error(err, errlen, in->codename, NULL,
                   "must be the output, a string or {\"output\": string}");
    return NULL;
  }
  const cJSON *output = NULL;
  for (const cJSON *m = v->child; m; m = m->next) {
    if (strcmp(m->string, "output") != 0) {
      tally_tt_error(err, errlen, in->codename, m->string,
                     "unknown key (an output-only evaluation has only "
                     "output)");
      return NULL;
    }
    if (output != NULL) {
      tally_tt_error(err, errlen, in->codename, "output", "key appears twice");
      return NULL;
    }
    output = m;
  }
  if (output == NULL) {
    tally_tt_error(err, errlen, in->codename, "output", "is missing");
    return NULL;
  }
  if (!cJSON_IsString(output)) {
    tally_tt_error(err, errlen, in->codename, "output", "must be a string");
    return NULL;
  }
  return output;
}

static int output_only_evaluate(const tally_tt_input_t *in,
                                tally_tt_eval_t *out, char *err,
                                size_t errlen) {
  static const char not_submitted[] = "File not submitted";
  if (in->eval == NULL) {
    out->outcome = 0.0;
    return tally_text_set(&out->message, not_submitted,
                          sizeof(not_submitted) - 1);
  }
  const cJSON *output = output_of(in, err, errlen);
  if (output == NULL)
    return TALLY_EJOB;
  /* Outputs are bytes: a NUL inside counts like any other byte. */
  return tally_tt_compare(in, output->valuestring, tally_json_strlen(output),
                          out, err, errlen);
}

const tally_task_type_t tally_task_type_output_only = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "output_only",
    .flags = TALLY_TT_EXPECTED_REQUIRED | TALLY_TT_MISSING_OK,
    .evaluate = output_only_evaluate,
};
