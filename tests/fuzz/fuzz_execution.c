/* A libFuzzer target for the execution-result decoder: arbitrary bytes as
 * one batch evaluation (decoded, then judged by the batch task type with
 * a fixed expected output and white_diff), and as a checker's stdout and
 * stderr split at the first NUL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasktypes/comparators.h"
#include "tasktypes/execution.h"

/* Makes UBSan reports fatal, so libFuzzer counts them as crashes. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char expected_text[] = "1 2\n";
  static const tally_expected_t expected = {expected_text, 4};
  static tally_tt_eval_t ev;
  char err[512];
  const char *text = (const char *)data;

  /* The checker parser on raw bytes: stdout, a NUL, stderr. */
  const char *nul = memchr(text, '\0', size);
  size_t out_len = nul != NULL ? (size_t)(nul - text) : size;
  const char *errtext = nul != NULL ? nul + 1 : text + size;
  size_t err_len = size - out_len - (nul != NULL);
  ev.message.len = ev.admin.len = 0;
  int rc = tally_checker_parse(text, out_len, errtext, err_len, "003", &ev, err,
                               sizeof(err));
  if (rc == 0 && !(ev.outcome >= 0.0 && ev.outcome <= 1.0))
    abort();
  if (rc != 0 && rc != TALLY_EJOB && rc != TALLY_ENOMEM)
    abort();

  /* The same bytes as JSON: one evaluation of testcase "003". */
  cJSON *v = cJSON_ParseWithLength(text, size);
  if (v == NULL)
    return 0;
  tally_exec_t ex;
  rc = tally_exec_decode(v, "003", &ex, err, sizeof(err));
  if (rc != 0 && rc != TALLY_EJOB)
    abort();
  if (rc == 0 && tally_exec_status_name(ex.status) == NULL)
    abort();
  tally_tt_input_t in = {
      .codename = "003",
      .eval = v,
      .expected = &expected,
      .comparator = tally_comparator_find("white_diff"),
      .comparator_state = NULL,
  };
  if (tally_text_set(&ev.message, "", 0) != 0 ||
      tally_text_set(&ev.admin, "", 0) != 0)
    abort();
  rc = tally_task_type_batch.evaluate(&in, &ev, err, sizeof(err));
  if (rc == 0 && !(ev.outcome >= 0.0 && ev.outcome <= 1.0))
    abort();
  if (rc != 0 && strncmp(err, "evaluations[\"003\"]", 18) != 0 &&
      rc != TALLY_ENOMEM)
    abort();
  cJSON_Delete(v);
  return 0;
}
