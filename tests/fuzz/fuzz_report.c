/* A libFuzzer target for tally report's summary decoder and figures:
 * arbitrary bytes are read as a stored summary (and, when the first byte
 * is odd, as the job a new refusal list reads again) beside two valid
 * summaries, then the report is written; it must be one JSON object. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

static const char *const valid[] = {
    "{\"submission\":\"a\",\"participant\":\"m\",\"contest\":\"c\","
    "\"task\":\"t\",\"score\":1,\"max_score\":1,\"sample\":{\"category\":"
    "\"x\",\"correct_threshold\":1,\"correct\":true,\"extracted\":true,"
    "\"failure\":null}}",
    "{\"submission\":\"b\",\"participant\":\"m\",\"contest\":\"c\","
    "\"task\":\"u\",\"score\":0,\"max_score\":1,\"sample\":{\"category\":"
    "\"y\",\"correct_threshold\":0.5,\"correct\":false,\"extracted\":false,"
    "\"failure\":\"refusal\",\"preview\":\"I cannot\"}}"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  report_opts_t o = {
      .k = {1, 2, 50}, .nk = 3, .resamples = 20, .seed = 7, .confidence = 0.9};
  const char *const mine[] = {"cannot", "\xc3\xa9", NULL};
  bool refuse = size > 0 && (data[0] & 1);
  report_data_t d;
  report_data_init(&d);
  char err[256];
  for (size_t i = 0; i < 2; i++)
    report_add_summary(&d, &o, valid[i], strlen(valid[i]), "v", NULL, 0, NULL,
                       0, err, sizeof(err));
  /* A copy, so that ASan sees any read past the end. */
  char *text = malloc(size ? size : 1);
  memcpy(text, data, size);
  int rc = report_add_summary(&d, &o, text, size, "fuzz", refuse ? mine : NULL,
                              refuse ? 2 : 0, text, size, err, sizeof(err));
  if (rc != 0 && rc != TALLY_EJOB)
    abort();
  if (rc == TALLY_EJOB && memchr(err, '\0', sizeof(err)) == NULL)
    abort();
  tally_buf_t b;
  tally_buf_init(&b);
  if (report_json(&d, &o, &b) != 0)
    abort();
  cJSON *j = cJSON_ParseWithLength(b.data, b.len);
  if (!cJSON_IsObject(j))
    abort();
  cJSON_Delete(j);
  tally_buf_close(&b);
  report_data_close(&d);
  free(text);
  return 0;
}
