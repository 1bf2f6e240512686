/* What the engine fuzz targets check of every reply: one JSON object,
 * NUL-free, filling the buffer exactly. */
#ifndef TALLY_FUZZ_REPLY_H
#define TALLY_FUZZ_REPLY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/jsonw.h"
#include <cjson/cJSON.h>

/* Parses the reply in out, aborting (a crash for libFuzzer) when it is not
 * exactly one JSON object. The caller frees the tree. */
static inline cJSON *fuzz_reply(const tally_buf_t *out) {
  if (out->data == NULL || out->len == 0 || strlen(out->data) != out->len)
    abort();
  const char *end = NULL;
  cJSON *reply = cJSON_ParseWithLengthOpts(out->data, out->len, &end, 0);
  if (reply == NULL || !cJSON_IsObject(reply) ||
      (size_t)(end - out->data) != out->len) {
    fprintf(stderr, "invalid reply: %s\n", out->data);
    abort();
  }
  return reply;
}

#endif
