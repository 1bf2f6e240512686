/* String helpers with Go's meaning: see gostr.h. */
#include "evalspecs/gostr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

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

void tally_go_quote(tally_buf_t *b, const char *s) {
  static const char hexd[] = "0123456789abcdef";
  size_t len = strlen(s);
  tally_buf_putc(b, '"');
  for (size_t i = 0; i < len;) {
    int32_t cp;
    size_t n = tally_go_decode(s + i, len - i, &cp);
    char esc[12];
    if (cp < 0) {
      unsigned char c = (unsigned char)s[i];
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = hexd[c >> 4];
      esc[3] = hexd[c & 15];
      esc[4] = '\0';
      tally_buf_puts(b, esc);
    } else if (cp == '"' || cp == '\\') {
      tally_buf_putc(b, '\\');
      tally_buf_putc(b, (char)cp);
    } else if (cp < 0x20 || cp == 0x7f) {
      const char *named = cp == '\a'   ? "\\a"
                          : cp == '\b' ? "\\b"
                          : cp == '\f' ? "\\f"
                          : cp == '\n' ? "\\n"
                          : cp == '\r' ? "\\r"
                          : cp == '\t' ? "\\t"
                          : cp == '\v' ? "\\v"
                                       : NULL;
      if (named != NULL) {
        tally_buf_puts(b, named);
      } else {
        snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
        tally_buf_puts(b, esc);
      }
    } else if (cp < 0x80 || tally_go_printable(cp)) {
      for (size_t k = 0; k < n; k++)
        tally_buf_putc(b, s[i + k]);
    } else {
      snprintf(esc, sizeof(esc), cp > 0xffff ? "\\U%08x" : "\\u%04x",
               (unsigned)cp);
      tally_buf_puts(b, esc);
    }
    i += n;
  }
  tally_buf_putc(b, '"');
}

bool tally_go_printable(int32_t cp) {
  if (cp == ' ')
    return true;
  switch (utf8proc_category(cp)) {
  case UTF8PROC_CATEGORY_CN:
  case UTF8PROC_CATEGORY_CC:
  case UTF8PROC_CATEGORY_CF:
  case UTF8PROC_CATEGORY_CS:
  case UTF8PROC_CATEGORY_CO:
  case UTF8PROC_CATEGORY_ZS:
  case UTF8PROC_CATEGORY_ZL:
  case UTF8PROC_CATEGORY_ZP:
    return false;
  default:
    return true;
  }
}

char *tally_go_quoted(const char *s) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_go_quote(&b, s);
  char *q = b.oom ? NULL : strdup(tally_buf_text(&b));
  tally_buf_close(&b);
  return q;
}
