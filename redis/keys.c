/* Redis key names shared by tallyd and the CLI (keys.h): each part
 * encoded, a contest's id made its keys' Cluster hash tag. */
#include "redis/keys.h"

#include "config/error.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int tally_rescore_key(char *out, size_t outlen, const char *prefix,
                      const char *middle, const char *part) {
  size_t n = (size_t)snprintf(out, outlen, "%s%s", prefix, middle);
  if (n >= outlen)
    return TALLY_E2BIG;
  for (const char *s = part; *s; s++) {
    const char *rep = *s == '%' ? "%25" : *s == ':' ? "%3A" : NULL;
    size_t len = rep ? 3 : 1;
    if (n + len >= outlen)
      return TALLY_E2BIG;
    memcpy(out + n, rep ? rep : s, len);
    n += len;
  }
  out[n] = '\0';
  return 0;
}

int tally_queue_prefix(char *out, size_t outlen, const char *prefix,
                       const char *q) {
  int n = strcmp(q, TALLY_MAIN_QUEUE) == 0
              ? snprintf(out, outlen, "%s", prefix)
              : snprintf(out, outlen, "%s:{%s}", prefix, q);
  return n < 0 || (size_t)n >= outlen ? TALLY_E2BIG : 0;
}

int tally_contest_key(char *out, size_t outlen, const char *prefix,
                      const char *c) {
  size_t n = (size_t)snprintf(out, outlen, "%s:{%s", prefix, *c ? "" : "%");
  if (n >= outlen)
    return TALLY_E2BIG;
  for (const char *s = c; *s; s++) {
    bool esc = *s == '%' || *s == ':' || *s == '{' || *s == '}';
    if (n + (esc ? 3 : 1) >= outlen)
      return TALLY_E2BIG;
    if (esc)
      n += (size_t)snprintf(out + n, outlen - n, "%%%02X", (unsigned char)*s);
    else
      out[n++] = *s;
  }
  if (n + 1 >= outlen)
    return TALLY_E2BIG;
  out[n++] = '}';
  out[n] = '\0';
  return 0;
}
