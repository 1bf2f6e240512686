/* The buffer and the JSON writer of jsonw.h. */
#include "config/jsonw.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_buf_init(tally_buf_t *b) {
  memset(b, 0, sizeof(*b));
}

void tally_buf_close(tally_buf_t *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

void tally_buf_reset(tally_buf_t *b) {
  b->len = 0;
  b->oom = false;
  if (b->data != NULL)
    b->data[0] = '\0';
}

bool tally_buf_reserve(tally_buf_t *b, size_t n) {
  if (b->oom)
    return false;
  if (b->len + n + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1)
    cap *= 2;
  char *data = realloc(b->data, cap);
  if (data == NULL) {
    b->oom = true;
    return false;
  }
  b->data = data;
  b->cap = cap;
  return true;
}

void tally_json_str(tally_buf_t *b, const char *s) {
  tally_json_strn(b, s, strlen(s));
}

void tally_json_strn(tally_buf_t *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  const char *end = s + len;
  tally_buf_putc(b, '"');
  const char *run = s;
  for (; s < end; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    tally_buf_put(b, run, (size_t)(s - run));
    run = s + 1;
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t n = 2;
    switch (c) {
    case '"':
    case '\\':
      esc[1] = (char)c;
      break;
    case '\n':
      esc[1] = 'n';
      break;
    case '\t':
      esc[1] = 't';
      break;
    case '\r':
      esc[1] = 'r';
      break;
    default:
      memcpy(esc + 1, "u00", 3);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
    }
    tally_buf_put(b, esc, n);
  }
  tally_buf_put(b, run, (size_t)(s - run));
  tally_buf_putc(b, '"');
}

/* Writes the integer m scaled down by 10^k, as in "-12.034" for m = -12034
 * and k = 3. */
static void put_scaled(tally_buf_t *b, int64_t m, int k) {
  char digits[32];
  char out[40];
  size_t o = 0;
  uint64_t u = m < 0 ? (uint64_t)(-(m + 1)) + 1 : (uint64_t)m;
  int n = 0;
  do {
    digits[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u > 0);
  while (n <= k)
    digits[n++] = '0';
  if (m < 0)
    out[o++] = '-';
  for (int i = n - 1; i >= 0; i--) {
    out[o++] = digits[i];
    if (i == k && k > 0)
      out[o++] = '.';
  }
  tally_buf_put(b, out, o);
}

void tally_json_num(tally_buf_t *b, double v) {
  static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4,
                                 1e5, 1e6, 1e7, 1e8, 1e9};
  if (!isfinite(v)) {
    tally_buf_puts(b, "null");
    return;
  }
  if (v == 0.0) {
    tally_buf_puts(b, signbit(v) ? "-0.0" : "0");
    return;
  }
  /* Most values have a few decimals: if m / 10^k == v for an integer m
   * below 2^53, then "m e-k" reads back as v, since both m and 10^k are
   * exact and division rounds correctly. The first k that works gives the
   * shortest such decimal. */
  for (int k = 0; k < 10; k++) {
    double m = v * pow10[k];
    if (fabs(m) >= 9007199254740992.0)
      break;
    double r = nearbyint(m);
    if (r / pow10[k] == v) {
      put_scaled(b, (int64_t)r, k);
      return;
    }
  }
  char buf[32];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (prec == 17 || strtod(buf, NULL) == v)
      break;
  }
  tally_buf_puts(b, buf);
}

void tally_json_value(tally_buf_t *b, const cJSON *v) {
  if (v == NULL || cJSON_IsNull(v)) {
    tally_buf_puts(b, "null");
  } else if (cJSON_IsTrue(v)) {
    tally_buf_puts(b, "true");
  } else if (cJSON_IsFalse(v)) {
    tally_buf_puts(b, "false");
  } else if (cJSON_IsNumber(v)) {
    tally_json_num(b, v->valuedouble);
  } else if (cJSON_IsString(v)) {
    tally_json_str(b, v->valuestring);
  } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
    bool obj = cJSON_IsObject(v);
    tally_buf_putc(b, obj ? '{' : '[');
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child)
        tally_buf_putc(b, ',');
      if (obj) {
        tally_json_str(b, c->string);
        tally_buf_putc(b, ':');
      }
      tally_json_value(b, c);
    }
    tally_buf_putc(b, obj ? '}' : ']');
  } else {
    tally_buf_puts(b, "null");
  }
}
