/* A libFuzzer target for tally import's decoders of harness outputs:
 * arbitrary bytes as one line of lm-evaluation-harness's samples or of
 * NeMo Evaluator's results (the first byte picks which, and whether a
 * scorer or a metric), decoded; every job written must be a JSON object,
 * and a rejected line must say why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/import.h"
#include <cjson/cJSON.h>

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  import_t im;
  memset(&im, 0, sizeof(im));
  im.task = "t";
  im.category = "c";
  im.participant = "m";
  im.contest = "b";
  im.nemo = (data[0] & 1) != 0;
  if (data[0] & 2)
    im.scorer = "last_number";
  else
    im.metric = (data[0] & 4) ? "exact" : "acc";
  char *line = malloc(size);
  if (line == NULL)
    abort();
  memcpy(line, data + 1, size - 1);
  line[size - 1] = '\0';
  tally_buf_init(&im.out);
  int rc = tally_import_line(&im, line, strlen(line));
  if (rc != 0 && im.why[0] == '\0')
    abort();
  /* Each job line is one JSON object. */
  for (char *p = im.out.data; p != NULL && *p;) {
    char *nl = strchr(p, '\n');
    if (nl == NULL)
      abort();
    *nl = '\0';
    cJSON *job = cJSON_Parse(p);
    if (!cJSON_IsObject(job))
      abort();
    cJSON_Delete(job);
    p = nl + 1;
  }
  tally_buf_close(&im.out);
  free(line);
  return 0;
}
