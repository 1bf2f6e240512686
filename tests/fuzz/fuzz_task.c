/* A libFuzzer target that feeds arbitrary bytes to the task config decoder
 * with the built-in score types, and frees whatever it returns. */
#include <stdint.h>
#include <stdlib.h>

#include "engine/task.h"

/* Makes UBSan reports fatal, so libFuzzer counts them as crashes. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tally_registry_t reg;
  static int ready;
  if (!ready) {
    if (tally_registry_init(&reg) != 0)
      abort();
    ready = 1;
  }
  tally_diag_t d;
  tally_task_t *task = (tally_task_t *)0x1;
  tally_diag_init(&d, "fuzz.json");
  int rc = tally_task_parse(&reg, (const char *)data, size, &d, &task);
  /* The decoder's contract: success leaves a task and no errors; failure
   * leaves no task and at least one error. */
  if (rc == 0 && (task == NULL || tally_diag_count(&d) != 0))
    abort();
  if (rc != 0 && (task != NULL || tally_diag_count(&d) == 0))
    abort();
  tally_task_free(task);
  tally_diag_close(&d);
  return 0;
}
