/* A libFuzzer target for the HTTP path decoders (issue 24): arbitrary
 * bytes as a raw path. A path that decodes holds no NUL and is valid
 * UTF-8; splitting it into segments decodes each once, and each segment
 * is a part of the whole path decoded; the log's escape of any bytes is
 * one line of valid UTF-8 that fits its buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/utext.h"
#include "daemon/http.h"
#include "daemon/log.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *raw = malloc(size + 1);
  if (raw == NULL)
    return 0;
  memcpy(raw, data, size);
  raw[size] = '\0';
  size_t n = strlen(raw); /* a request line holds no NUL */
  char *whole = NULL, why[128];
  if (tally_http_decode(raw, n, &whole, why, sizeof(why)) == 0) {
    size_t k = strlen(whole);
    if (tally_utext_invalid_at(whole, k) != k)
      abort(); /* decoded, but not UTF-8 */
    /* Each segment decodes to what lies between the slashes that were
     * in the raw path. */
    const char *p = raw;
    while (*p == '/')
      p++;
    char seg[1024];
    while (*p != '\0') {
      const char *before = p;
      if (!tally_http_segment(&p, seg, sizeof(seg))) {
        /* An empty, too long or bad segment: the cursor stays. */
        if (p != before)
          abort();
        break;
      }
      if (p == before || strlen(seg) == 0 ||
          tally_utext_invalid_at(seg, strlen(seg)) != strlen(seg))
        abort();
      if (strstr(whole, seg) == NULL)
        abort(); /* a segment is part of the path decoded */
      while (*p == '/')
        p++;
    }
    free(whole);
  } else if (why[0] == '\0') {
    abort(); /* a refusal says why */
  }
  /* The log's escape: one line, valid UTF-8, within its buffer. */
  char out[256];
  for (int controls = 0; controls < 2; controls++) {
    size_t m =
        tally_log_escape(out, sizeof(out), (const char *)data, size, controls);
    if (m >= sizeof(out) || strlen(out) != m ||
        tally_utext_invalid_at(out, m) != m)
      abort();
    if (controls &&
        (memchr(out, '\n', m) != NULL || memchr(out, '\r', m) != NULL ||
         memchr(out, 0x1b, m) != NULL))
      abort();
  }
  free(raw);
  return 0;
}
