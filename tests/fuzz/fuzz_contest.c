/* A libFuzzer target for the contest config decoder: arbitrary bytes as
 * a contest config; what is accepted holds what the decoder promises
 * (a name, a title, at least one task, times in order). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/contests.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tally_diag_t d;
  tally_diag_init(&d, "contest.json");
  tally_contest_t c;
  if (tally_contest_parse((const char *)data, size, &d, &c) == 0) {
    if (c.name == NULL || c.title == NULL || c.ntasks == 0 ||
        tally_diag_count(&d) != 0)
      abort();
    if (!isnan(c.start) && !isnan(c.end) && !(c.start < c.end))
      abort();
    if (!isnan(c.freeze) && !isnan(c.start) && c.freeze < c.start)
      abort();
    for (size_t i = 0; i < c.ntasks; i++)
      if (!tally_contest_has_task(&c, c.tasks[i]))
        abort();
    tally_contest_free(&c);
  } else if (tally_diag_count(&d) == 0) {
    abort(); /* a refusal always says why */
  }
  tally_diag_close(&d);
  /* The time decoder alone, on the same bytes as a string. */
  char *text = malloc(size + 1);
  if (text != NULL) {
    memcpy(text, data, size);
    text[size] = '\0';
    double v;
    if (tally_rfc3339(text, &v) == 0 && !isfinite(v))
      abort();
    free(text);
  }
  return 0;
}
