/* Python's white space, lenient UTF-8 decoding and the UTF-8 check
 * (utext.h). */
#include "config/utext.h"

#include <utf8proc.h>

bool tally_utext_space(int32_t c) {
  if (c < 0x80)
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  if (c > 0x10FFFF)
    return false;
  const utf8proc_property_t *p = utf8proc_get_property(c);
  return p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_B ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_S ||
         p->category == UTF8PROC_CATEGORY_ZS;
}

int32_t tally_utext_next(const char *s, size_t n, size_t *i) {
  utf8proc_int32_t cp;
  utf8proc_ssize_t used = utf8proc_iterate((const utf8proc_uint8_t *)s + *i,
                                           (utf8proc_ssize_t)(n - *i), &cp);
  if (used <= 0) {
    cp = 0xFFFD;
    used = 1;
  }
  *i += (size_t)used;
  return cp;
}

size_t tally_utext_invalid_at(const char *s, size_t n) {
  const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)s;
  size_t i = 0;
  while (i < n) {
    if (u[i] < 0x80) {
      i++;
      continue;
    }
    utf8proc_int32_t cp;
    utf8proc_ssize_t k =
        utf8proc_iterate(u + i, (utf8proc_ssize_t)(n - i), &cp);
    if (k <= 0)
      return i;
    i += (size_t)k;
  }
  return n;
}

bool tally_utext_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n;)
    if (!tally_utext_space(tally_utext_next(s, n, &i)))
      return false;
  return true;
}
