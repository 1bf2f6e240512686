/* Go's number and JSON text forms: see gojson.h. */
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest decimal digits that read back as v (v finite, not 0):
 * digits (no dot, at most 17) and the exponent of the first digit. */
static void shortest(double v, char digits[24], int *exp10) {
  char buf[40];
  for (int prec = 0; prec <= 16; prec++) {
    snprintf(buf, sizeof(buf), "%.*e", prec, fabs(v));
    if (strtod(buf, NULL) == fabs(v) || prec == 16)
      break;
  }
  /* buf is d.ddddde[+-]xx */
  size_t n = 0;
  const char *p = buf;
  for (; *p && *p != 'e'; p++)
    if (*p != '.')
      digits[n++] = *p;
  while (n > 1 && digits[n - 1] == '0')
    n--;
  digits[n] = '\0';
  *exp10 = atoi(p + 1);
}

/* %e with the shortest digits: d[.ddd]e±XX (at least two exponent
 * digits), as strconv's 'e' with precision -1. */
static void fmt_e(double v, const char *digits, int exp10, char *out,
                  size_t len, bool json) {
  size_t n = strlen(digits);
  int w = snprintf(out, len, "%s%c%s%s", v < 0 ? "-" : "", digits[0],
                   n > 1 ? "." : "", n > 1 ? digits + 1 : "");
  if (w < 0 || (size_t)w >= len)
    return;
  int e = exp10 < 0 ? -exp10 : exp10;
  /* encoding/json drops the exponent's leading zero: 1e-07 -> 1e-7. */
  snprintf(out + w, len - (size_t)w, json ? "e%c%d" : "e%c%02d",
           exp10 < 0 ? '-' : '+', e);
}

/* %f with the shortest digits. */
static void fmt_f(double v, const char *digits, int exp10, char *out,
                  size_t len) {
  size_t n = strlen(digits), k = 0;
  if (v < 0 && k + 1 < len)
    out[k++] = '-';
  if (exp10 < 0) {
    out[k++] = '0';
    out[k++] = '.';
    for (int i = -1; i > exp10 && k + 1 < len; i--)
      out[k++] = '0';
    for (size_t i = 0; i < n && k + 1 < len; i++)
      out[k++] = digits[i];
  } else {
    for (int i = 0; i <= exp10 && k + 1 < len; i++)
      out[k++] = (size_t)i < n ? digits[i] : '0';
    if ((size_t)exp10 + 1 < n && k + 1 < len) {
      out[k++] = '.';
      for (size_t i = (size_t)exp10 + 1; i < n && k + 1 < len; i++)
        out[k++] = digits[i];
    }
  }
  out[k] = '\0';
}

void tally_go_fmt_v(double v, char out[40]) {
  if (isnan(v)) {
    strcpy(out, "NaN");
    return;
  }
  if (isinf(v)) {
    strcpy(out, v > 0 ? "+Inf" : "-Inf");
    return;
  }
  if (v == 0) {
    strcpy(out, signbit(v) ? "-0" : "0");
    return;
  }
  char digits[24];
  int e;
  shortest(v, digits, &e);
  /* strconv's 'g' with the shortest digits: %e when the exponent is
   * below -4 or at least 6. */
  if (e < -4 || e >= 6)
    fmt_e(v, digits, e, out, 40, false);
  else
    fmt_f(v, digits, e, out, 40);
}

void tally_go_json_float(tally_buf_t *b, double v) {
  if (!isfinite(v)) {
    tally_buf_puts(b, "null");
    return;
  }
  if (v == 0) {
    tally_buf_puts(b, signbit(v) ? "-0" : "0");
    return;
  }
  char digits[24], out[400];
  int e;
  shortest(v, digits, &e);
  double a = fabs(v);
  if (a < 1e-6 || a >= 1e21)
    fmt_e(v, digits, e, out, sizeof(out), true);
  else
    fmt_f(v, digits, e, out, sizeof(out));
  tally_buf_puts(b, out);
}

void tally_go_json_string(tally_buf_t *b, const char *s, size_t len) {
  static const char hexd[] = "0123456789abcdef";
  tally_buf_putc(b, '"');
  for (size_t i = 0; i < len;) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      i++;
      if (c == '"' || c == '\\') {
        tally_buf_putc(b, '\\');
        tally_buf_putc(b, (char)c);
      } else if (c == '\n') {
        tally_buf_puts(b, "\\n");
      } else if (c == '\r') {
        tally_buf_puts(b, "\\r");
      } else if (c == '\t') {
        tally_buf_puts(b, "\\t");
      } else if (c == '\b') {
        tally_buf_puts(b, "\\b");
      } else if (c == '\f') {
        tally_buf_puts(b, "\\f");
      } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
        char u[7] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15], 0};
        tally_buf_puts(b, u);
      } else {
        tally_buf_putc(b, (char)c);
      }
      continue;
    }
    int32_t cp;
    size_t n = tally_go_decode(s + i, len - i, &cp);
    if (cp < 0) {
      tally_buf_puts(b, "\\ufffd");
    } else if (cp == 0x2028 || cp == 0x2029) {
      tally_buf_puts(b, cp == 0x2028 ? "\\u2028" : "\\u2029");
    } else {
      for (size_t k = 0; k < n; k++)
        tally_buf_putc(b, s[i + k]);
    }
    i += n;
  }
  tally_buf_putc(b, '"');
}

static int cmp_member(const void *pa, const void *pb) {
  const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
  return strcmp(a->string, b->string);
}

void tally_go_marshal(tally_buf_t *b, const cJSON *v) {
  if (cJSON_IsString(v)) {
    tally_go_json_string(b, v->valuestring, strlen(v->valuestring));
  } else if (cJSON_IsNumber(v)) {
    tally_go_json_float(b, v->valuedouble);
  } else if (cJSON_IsBool(v)) {
    tally_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsArray(v)) {
    tally_buf_putc(b, '[');
    for (const cJSON *x = v->child; x != NULL; x = x->next) {
      if (x != v->child)
        tally_buf_putc(b, ',');
      tally_go_marshal(b, x);
    }
    tally_buf_putc(b, ']');
  } else if (cJSON_IsObject(v)) {
    size_t n = (size_t)cJSON_GetArraySize(v), k = 0;
    const cJSON **m = calloc(n + 1, sizeof(*m));
    if (m == NULL) {
      b->oom = true;
      return;
    }
    /* A repeated key keeps its last value, as a Go map would. */
    for (const cJSON *x = v->child; x != NULL; x = x->next) {
      size_t j = 0;
      while (j < k && strcmp(m[j]->string, x->string) != 0)
        j++;
      m[j] = x;
      if (j == k)
        k++;
    }
    qsort(m, k, sizeof(*m), cmp_member);
    tally_buf_putc(b, '{');
    for (size_t j = 0; j < k; j++) {
      if (j > 0)
        tally_buf_putc(b, ',');
      tally_go_json_string(b, m[j]->string, strlen(m[j]->string));
      tally_buf_putc(b, ':');
      tally_go_marshal(b, m[j]);
    }
    tally_buf_putc(b, '}');
    free(m);
  } else {
    tally_buf_puts(b, "null");
  }
}

const char *tally_go_loose_string(const cJSON *v) {
  if (cJSON_IsString(v))
    return v->valuestring;
  if (cJSON_IsObject(v)) {
    static const char *const keys[] = {"value", "content", "text", "answer"};
    for (size_t i = 0; i < 4; i++) {
      /* The last of a repeated key, as a Go map holds it. */
      const cJSON *item = NULL;
      for (const cJSON *x = v->child; x != NULL; x = x->next)
        if (strcmp(x->string, keys[i]) == 0)
          item = x;
      const char *s = item != NULL ? tally_go_loose_string(item) : NULL;
      if (s != NULL)
        return s;
    }
    return NULL;
  }
  if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 1)
    return tally_go_loose_string(v->child);
  return NULL;
}

void tally_go_stringify(tally_buf_t *b, const cJSON *v) {
  const char *s = tally_go_loose_string(v);
  if (s != NULL) {
    tally_buf_puts(b, s);
  } else if (cJSON_IsBool(v)) {
    tally_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsNumber(v)) {
    char out[40];
    tally_go_fmt_v(v->valuedouble, out);
    tally_buf_puts(b, out);
  } else if (cJSON_IsNull(v) || v == NULL) {
    tally_buf_puts(b, "null");
  } else {
    tally_go_marshal(b, v);
  }
}

/* White space as cJSON reads it (any byte up to 0x20), so that spans are
 * found in every text the job decoder accepted. */
static bool raw_space(char c) {
  return (unsigned char)c <= 0x20;
}

/* Skips the JSON value at s[*i] (text already known to be valid JSON);
 * always moves forward. */
static void skip_value(const char *s, size_t len, size_t *i) {
  int depth = 0;
  do {
    while (*i < len && raw_space(s[*i]))
      (*i)++;
    if (*i >= len)
      return;
    char c = s[*i];
    if (c == '"') {
      for ((*i)++; *i < len && s[*i] != '"'; (*i)++)
        if (s[*i] == '\\')
          (*i)++;
      (*i)++;
    } else if (c == '{' || c == '[') {
      depth++;
      (*i)++;
    } else if (c == '}' || c == ']') {
      depth--;
      (*i)++;
    } else if (c == ',' || c == ':') {
      (*i)++;
    } else {
      (*i)++;
      while (*i < len && !raw_space(s[*i]) && strchr(",:]}", s[*i]) == NULL)
        (*i)++;
    }
  } while (depth > 0 && *i < len);
}

static void skip_space(const char *s, size_t len, size_t *i) {
  while (*i < len && raw_space(s[*i]))
    (*i)++;
}

bool tally_go_raw_span(const char *s, size_t len, const char *const *path,
                       size_t *start, size_t *n) {
  size_t i = 0;
  skip_space(s, len, &i);
  for (size_t k = 0; path[k] != NULL; k++) {
    if (i >= len)
      return false;
    const char *want = path[k];
    bool index = want[0] == '#';
    if (index) {
      if (s[i] != '[')
        return false;
      long target = atol(want + 1), at = 0;
      i++;
      skip_space(s, len, &i);
      while (at < target && i < len && s[i] != ']') {
        skip_value(s, len, &i);
        skip_space(s, len, &i);
        if (i < len && s[i] == ',')
          i++;
        skip_space(s, len, &i);
        at++;
      }
      if (i >= len || s[i] == ']')
        return false;
      continue;
    }
    if (s[i] != '{')
      return false;
    i++;
    bool found = false;
    while (!found) {
      skip_space(s, len, &i);
      if (i >= len || s[i] != '"')
        return false;
      size_t ks = i;
      skip_value(s, len, &i);
      /* The key, decoded, against want. */
      char *raw = malloc(i - ks + 1);
      if (raw == NULL)
        return false;
      memcpy(raw, s + ks, i - ks);
      raw[i - ks] = '\0';
      cJSON *key = cJSON_Parse(raw);
      free(raw);
      found = cJSON_IsString(key) && strcmp(key->valuestring, want) == 0;
      cJSON_Delete(key);
      skip_space(s, len, &i);
      if (i >= len || s[i] != ':')
        return false;
      i++;
      skip_space(s, len, &i);
      if (!found) {
        skip_value(s, len, &i);
        skip_space(s, len, &i);
        if (i < len && s[i] == ',')
          i++;
      }
    }
  }
  size_t b = i;
  skip_value(s, len, &i);
  *start = b;
  *n = i - b;
  return true;
}

/* Go's json scanner, for its error texts: a recursive reader of one value
 * that stops at the first problem. */
typedef struct gscan_s {
  const char *s;
  size_t len, i;
  char *err;
  size_t errlen;
  bool failed;
} gscan_t;

/* quoteChar of Go's scanner: 'x', '\'', '"', '\n', '\x00', '\u0080'. */
static void quote_char(unsigned char c, char *out, size_t len) {
  if (c == '\'') {
    snprintf(out, len, "'\\''");
  } else if (c == '"') {
    snprintf(out, len, "'\"'");
  } else if (c >= 0x80) {
    /* string(byte) is the rune U+0080..U+00FF. */
    if (c < 0xa0 || c == 0xad)
      snprintf(out, len, "'\\u%04x'", c);
    else
      snprintf(out, len, "'%c%c'", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
  } else {
    tally_buf_t b;
    tally_buf_init(&b);
    char one[2] = {(char)c, 0};
    if (c == 0) {
      snprintf(out, len, "'\\x00'");
      tally_buf_close(&b);
      return;
    }
    tally_go_quote(&b, one);
    /* Go's quote of the byte, its double quotes swapped for single ones. */
    if (b.oom || b.len < 2)
      snprintf(out, len, "'?'");
    else
      snprintf(out, len, "'%.*s'", (int)(b.len - 2), b.data + 1);
    tally_buf_close(&b);
  }
}

static bool gfail(gscan_t *g, const char *context) {
  if (g->failed)
    return false;
  g->failed = true;
  if (g->i >= g->len) {
    snprintf(g->err, g->errlen, "unexpected EOF");
  } else {
    char q[16];
    quote_char((unsigned char)g->s[g->i], q, sizeof(q));
    snprintf(g->err, g->errlen, "invalid character %s %s", q, context);
  }
  return false;
}

static bool gspace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void gskip(gscan_t *g) {
  while (g->i < g->len && gspace(g->s[g->i]))
    g->i++;
}

static bool ghex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

static bool gstring(gscan_t *g) {
  g->i++; /* the opening quote */
  while (g->i < g->len) {
    unsigned char c = (unsigned char)g->s[g->i];
    if (c == '"') {
      g->i++;
      return true;
    }
    if (c < 0x20)
      return gfail(g, "in string literal");
    if (c == '\\') {
      g->i++;
      if (g->i >= g->len)
        return gfail(g, "");
      char e = g->s[g->i];
      if (e == 'u') {
        for (int k = 0; k < 4; k++) {
          g->i++;
          if (g->i >= g->len)
            return gfail(g, "");
          if (!ghex(g->s[g->i]))
            return gfail(g, "in \\u hexadecimal character escape");
        }
      } else if (strchr("bfnrt\\/\"", e) == NULL || e == '\0') {
        return gfail(g, "in string escape code");
      }
    }
    g->i++;
  }
  return gfail(g, "");
}

static bool gdigits(gscan_t *g) {
  while (g->i < g->len && g->s[g->i] >= '0' && g->s[g->i] <= '9')
    g->i++;
  return true;
}

static bool gnumber(gscan_t *g) {
  if (g->s[g->i] == '-') {
    g->i++;
    if (g->i >= g->len)
      return gfail(g, "");
    if (!(g->s[g->i] >= '0' && g->s[g->i] <= '9'))
      return gfail(g, "in numeric literal");
  }
  if (g->s[g->i] == '0')
    g->i++;
  else
    gdigits(g);
  if (g->i < g->len && g->s[g->i] == '.') {
    g->i++;
    if (g->i >= g->len)
      return gfail(g, "");
    if (!(g->s[g->i] >= '0' && g->s[g->i] <= '9'))
      return gfail(g, "after decimal point in numeric literal");
    gdigits(g);
  }
  if (g->i < g->len && (g->s[g->i] == 'e' || g->s[g->i] == 'E')) {
    g->i++;
    if (g->i < g->len && (g->s[g->i] == '+' || g->s[g->i] == '-'))
      g->i++;
    if (g->i >= g->len)
      return gfail(g, "");
    if (!(g->s[g->i] >= '0' && g->s[g->i] <= '9'))
      return gfail(g, "in exponent of numeric literal");
    gdigits(g);
  }
  return true;
}

static bool gliteral(gscan_t *g, const char *word) {
  char ctx[40];
  for (size_t k = 0; word[k]; k++, g->i++) {
    if (g->i >= g->len)
      return gfail(g, "");
    if (g->s[g->i] != word[k]) {
      snprintf(ctx, sizeof(ctx), "in literal %s (expecting '%c')", word,
               word[k]);
      return gfail(g, ctx);
    }
  }
  return true;
}

static bool gvalue(gscan_t *g, int depth);

static bool gobject(gscan_t *g, int depth) {
  g->i++;
  gskip(g);
  if (g->i < g->len && g->s[g->i] == '}') {
    g->i++;
    return true;
  }
  for (;;) {
    if (g->i >= g->len || g->s[g->i] != '"')
      return gfail(g, "looking for beginning of object key string");
    if (!gstring(g))
      return false;
    gskip(g);
    if (g->i >= g->len || g->s[g->i] != ':')
      return gfail(g, "after object key");
    g->i++;
    if (!gvalue(g, depth + 1))
      return false;
    gskip(g);
    if (g->i < g->len && g->s[g->i] == '}') {
      g->i++;
      return true;
    }
    if (g->i >= g->len || g->s[g->i] != ',')
      return gfail(g, "after object key:value pair");
    g->i++;
    gskip(g);
  }
}

static bool garray(gscan_t *g, int depth) {
  g->i++;
  gskip(g);
  if (g->i < g->len && g->s[g->i] == ']') {
    g->i++;
    return true;
  }
  for (;;) {
    if (!gvalue(g, depth + 1))
      return false;
    gskip(g);
    if (g->i < g->len && g->s[g->i] == ']') {
      g->i++;
      return true;
    }
    if (g->i >= g->len || g->s[g->i] != ',')
      return gfail(g, "after array element");
    g->i++;
  }
}

static bool gvalue(gscan_t *g, int depth) {
  gskip(g);
  if (depth > 10000) {
    g->failed = true;
    snprintf(g->err, g->errlen, "exceeded max depth");
    return false;
  }
  if (g->i >= g->len)
    return gfail(g, "");
  char c = g->s[g->i];
  if (c == '{')
    return gobject(g, depth);
  if (c == '[')
    return garray(g, depth);
  if (c == '"')
    return gstring(g);
  if (c == '-' || (c >= '0' && c <= '9'))
    return gnumber(g);
  if (c == 't')
    return gliteral(g, "true");
  if (c == 'f')
    return gliteral(g, "false");
  if (c == 'n')
    return gliteral(g, "null");
  return gfail(g, "looking for beginning of value");
}

bool tally_go_decode_one(const char *s, size_t *start, size_t *end, char *err,
                         size_t errlen) {
  gscan_t g = {s, strlen(s), 0, err, errlen, false};
  gskip(&g);
  if (g.i >= g.len) {
    snprintf(err, errlen, "EOF");
    return false;
  }
  *start = g.i;
  if (!gvalue(&g, 0))
    return false;
  *end = g.i;
  /* Decoder.More: another value follows unless the rest is white space
   * or begins with ] or }. */
  gskip(&g);
  if (g.i < g.len && g.s[g.i] != ']' && g.s[g.i] != '}') {
    snprintf(err, errlen, "multiple JSON values are not allowed");
    return false;
  }
  return true;
}

bool tally_go_unmarshal_check(const char *s, char *err, size_t errlen) {
  gscan_t g = {s, strlen(s), 0, err, errlen, false};
  gskip(&g);
  if (g.i >= g.len || !gvalue(&g, 0)) {
    if (g.i >= g.len || strcmp(err, "unexpected EOF") == 0)
      snprintf(err, errlen, "unexpected end of JSON input");
    return false;
  }
  gskip(&g);
  if (g.i < g.len) {
    char q[16];
    quote_char((unsigned char)g.s[g.i], q, sizeof(q));
    snprintf(err, errlen, "invalid character %s after top-level value", q);
    return false;
  }
  return true;
}

const cJSON *tally_go_member(const cJSON *obj, const char *key) {
  const cJSON *found = NULL;
  if (!cJSON_IsObject(obj))
    return NULL;
  for (const cJSON *m = obj->child; m != NULL; m = m->next)
    if (strcmp(m->string, key) == 0)
      found = m;
  return found;
}

bool tally_go_json_equal(const cJSON *a, const cJSON *b) {
  if (cJSON_IsNumber(a) || cJSON_IsNumber(b))
    return cJSON_IsNumber(a) && cJSON_IsNumber(b) &&
           a->valuedouble == b->valuedouble;
  if ((a->type & 0xff) != (b->type & 0xff))
    return false;
  if (cJSON_IsString(a))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsArray(a)) {
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
      return false;
    for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next)
      if (!tally_go_json_equal(x, y))
        return false;
    return true;
  }
  if (cJSON_IsObject(a)) {
    /* As Go maps: the last of a repeated key counts. */
    for (const cJSON *x = a->child; x; x = x->next) {
      if (tally_go_member(a, x->string) != x)
        continue;
      const cJSON *y = tally_go_member(b, x->string);
      if (y == NULL || !tally_go_json_equal(x, y))
        return false;
    }
    for (const cJSON *y = b->child; y; y = y->next)
      if (tally_go_member(a, y->string) == NULL)
        return false;
    return true;
  }
  return true; /* null, true, false: the type said it */
}

const char *tally_go_kind(const cJSON *v) {
  return cJSON_IsString(v)   ? "string"
         : cJSON_IsNumber(v) ? "number"
         : cJSON_IsBool(v)   ? "bool"
         : cJSON_IsArray(v)  ? "array"
                             : "object";
}
