/* String helpers with Go's meaning: see gostr.h. */
#include "evalspecs/gostr.h"

#include <stdlib.h>
#include <string.h>

bool tally_go_is_space(int32_t cp) {
  if (cp <= 0xff)
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0;
  return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

size_t tally_go_decode(const char *s, size_t n, int32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  *cp = -1;
  if (n == 0)
    return 0;
  if (u[0] < 0x80) {
    *cp = u[0];
    return 1;
  }
  size_t len;
  int32_t c, min;
  if (u[0] >= 0xc2 && u[0] <= 0xdf) {
    len = 2;
    c = u[0] & 0x1f;
    min = 0x80;
  } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
    len = 3;
    c = u[0] & 0x0f;
    min = 0x800;
  } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
    len = 4;
    c = u[0] & 0x07;
    min = 0x10000;
  } else {
    return 1;
  }
  if (n < len)
    return 1;
  for (size_t i = 1; i < len; i++) {
    if ((u[i] & 0xc0) != 0x80)
      return 1;
    c = (c << 6) | (u[i] & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
    return 1;
  *cp = c;
  return len;
}

size_t tally_go_trim(const char *s, size_t len, size_t *start) {
  size_t a = 0;
  while (a < len) {
    int32_t cp;
    size_t k = tally_go_decode(s + a, len - a, &cp);
    if (!tally_go_is_space(cp))
      break;
    a += k;
  }
  size_t b = len;
  while (b > a) {
    /* Step back over one UTF-8 sequence. */
    size_t k = 1;
    while (k < 4 && b - k > a && ((unsigned char)s[b - k] & 0xc0) == 0x80)
      k++;
    int32_t cp;
    size_t got = tally_go_decode(s + b - k, k, &cp);
    if (got != k) {
      got = 1;
      cp = -1;
    }
    if (!tally_go_is_space(cp))
      break;
    b -= got;
  }
  *start = a;
  return b - a;
}

bool tally_go_blank(const char *s) {
  size_t start;
  return tally_go_trim(s, strlen(s), &start) == 0;
}

char *tally_go_trimmed(const char *s) {
  size_t start, n = tally_go_trim(s, strlen(s), &start);
  char *out = malloc(n + 1);
  if (out != NULL) {
    memcpy(out, s + start, n);
    out[n] = '\0';
  }
  return out;
}
