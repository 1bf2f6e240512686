/* Math answers as the reference's math_equivalence reads them; see
 * mathexpr.h. The parse tree is binary, as the reference's is; canonical
 * forms are n-ary sums and products whose terms are sorted only when a
 * key is asked for (the reference sorts at every level; the key comes out
 * the same), and long chains of + or * are walked without recursion, so
 * only nesting, which the parser bounds, costs stack. */
#include "evalspecs/mathexpr.h"
#include "config/error.h"
#include "config/jsonw.h"
#include "evalspecs/gomath.h"
#include "evalspecs/gostr.h"

#include <gmp.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- Normalization ---------------------------------------------------- */

/* rune(b) for one byte b is white space to unicode.IsSpace: the ASCII
 * ones, U+0085 and U+00A0. */
static bool byte_space(unsigned char b) {
  return b == ' ' || (b >= '\t' && b <= '\r') || b == 0x85 || b == 0xA0;
}

/* strings.ReplaceAll of from by to in *s (a new string replaces it). */
static int replace_all(char **s, const char *from, const char *to) {
  if (strstr(*s, from) == NULL)
    return 0;
  size_t nf = strlen(from), nt = strlen(to);
  tally_buf_t b;
  tally_buf_init(&b);
  const char *p = *s, *q;
  while ((q = strstr(p, from)) != NULL) {
    tally_buf_put(&b, p, (size_t)(q - p));
    tally_buf_put(&b, to, nt);
    p = q + nf;
  }
  tally_buf_puts(&b, p);
  if (b.oom) {
    tally_buf_close(&b);
    return TALLY_ENOMEM;
  }
  free(*s);
  *s = b.data != NULL ? b.data : strdup("");
  return *s != NULL ? 0 : TALLY_ENOMEM;
}

/* *s replaced by its Go-trimmed copy. */
static int trim_in_place(char **s) {
  char *t = tally_go_trimmed(*s);
  if (t == NULL)
    return TALLY_ENOMEM;
  free(*s);
  *s = t;
  return 0;
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return rc;
}

/* extractBalancedGroup: the group opened at s[start]; its content is
 * [start + 1, *close_at), and *end is just past the close. */
static int group(const char *s, size_t len, size_t start, char open, char close,
                 size_t *close_at, size_t *end, char *err, size_t errlen) {
  if (start >= len || s[start] != open)
    return fail(err, errlen, TALLY_MX_ERROR, "expected '%c' at offset %zu",
                open, start);
  int64_t depth = 0;
  for (size_t i = start; i < len; i++) {
    if (s[i] == open) {
      depth++;
    } else if (s[i] == close && --depth == 0) {
      *close_at = i;
      *end = i + 1;
      return 0;
    }
  }
  return fail(err, errlen, TALLY_MX_ERROR, "unbalanced '%c' '%c' group", open,
              close);
}

/* *s becomes s[:at] + the pieces + s[end:]. */
static int splice(char **s, size_t at, size_t end, const char *const *pieces,
                  const size_t *lens, size_t n) {
  size_t len = strlen(*s);
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_put(&b, *s, at);
  for (size_t i = 0; i < n; i++)
    tally_buf_put(&b, pieces[i], lens[i]);
  tally_buf_put(&b, *s + end, len - end);
  if (b.oom) {
    tally_buf_close(&b);
    return TALLY_ENOMEM;
  }
  free(*s);
  *s = b.data;
  return 0;
}

static size_t skip_spaces(const char *s, size_t len, size_t i) {
  while (i < len && byte_space((unsigned char)s[i]))
    i++;
  return i;
}

/* Where to look for cmd again after a rewrite at at: a new occurrence
 * can only start where the old one ran into the rewrite. */
static size_t resume(size_t at, const char *cmd) {
  size_t back = strlen(cmd);
  return at > back ? at - back : 0;
}

/* The brace group that must start at at (after spaces were skipped): its
 * closing brace in *close and the index after it in *end; missing, the
 * error missing. */
static int braced(const char *s, size_t len, size_t at, const char *missing,
                  size_t *close, size_t *end, char *err, size_t errlen) {
  if (at >= len || s[at] != '{')
    return fail(err, errlen, TALLY_MX_ERROR, "%s", missing);
  return group(s, len, at, '{', '}', close, end, err, errlen);
}

/* unwrapLatexCommand(s, "\boxed"). */
static int unwrap_boxed(char **s, char *err, size_t errlen) {
  static const char cmd[] = "\\boxed";
  size_t from = 0;
  for (;;) {
    char *hit = strstr(*s + from, cmd);
    if (hit == NULL)
      return 0;
    size_t len = strlen(*s), idx = (size_t)(hit - *s);
    size_t start = skip_spaces(*s, len, idx + sizeof(cmd) - 1), close = 0,
           end = 0;
    int rc = braced(*s, len, start, "\\boxed must be followed by braces",
                    &close, &end, err, errlen);
    if (rc != 0)
      return rc;
    const char *p[] = {"(", *s + start + 1, ")"};
    size_t l[] = {1, close - start - 1, 1};
    if ((rc = splice(s, idx, end, p, l, 3)) != 0)
      return rc;
    from = resume(idx, cmd);
  }
}

/* replaceLatexFrac. */
static int frac(char **s, char *err, size_t errlen) {
  static const char cmd[] = "\\frac";
  size_t from = 0;
  for (;;) {
    char *hit = strstr(*s + from, cmd);
    if (hit == NULL)
      return 0;
    size_t len = strlen(*s), idx = (size_t)(hit - *s);
    size_t ns = skip_spaces(*s, len, idx + sizeof(cmd) - 1), nc = 0, ne = 0;
    int rc = braced(*s, len, ns, "\\frac must have a numerator group", &nc, &ne,
                    err, errlen);
    if (rc != 0)
      return rc;
    size_t ds = skip_spaces(*s, len, ne), dc = 0, de = 0;
    if ((rc = braced(*s, len, ds, "\\frac must have a denominator group", &dc,
                     &de, err, errlen)) != 0)
      return rc;
    const char *p[] = {"((", *s + ns + 1, ")/(", *s + ds + 1, "))"};
    size_t l[] = {2, nc - ns - 1, 3, dc - ds - 1, 2};
    if ((rc = splice(s, idx, de, p, l, 5)) != 0)
      return rc;
    from = resume(idx, cmd);
  }
}

/* replaceLatexSqrt: \sqrt{x} is sqrt(x), \sqrt[n]{x} (((x)^(1/(n)))). */
static int latex_sqrt(char **s, char *err, size_t errlen) {
  static const char cmd[] = "\\sqrt";
  size_t from = 0;
  for (;;) {
    char *hit = strstr(*s + from, cmd);
    if (hit == NULL)
      return 0;
    size_t len = strlen(*s), idx = (size_t)(hit - *s);
    size_t pos = skip_spaces(*s, len, idx + sizeof(cmd) - 1);
    size_t is = 0, ic = 0;
    bool indexed = false;
    int rc;
    if (pos < len && (*s)[pos] == '[') {
      size_t end = 0;
      if ((rc = group(*s, len, pos, '[', ']', &ic, &end, err, errlen)) != 0)
        return rc;
      is = pos;
      pos = skip_spaces(*s, len, end);
      /* A blank index is no index. */
      for (size_t i = is + 1; i < ic && !indexed;) {
        int32_t cp;
        size_t k = tally_go_decode(*s + i, ic - i, &cp);
        indexed = !tally_go_is_space(cp);
        i += k;
      }
    }
    size_t rc_at = 0, end = 0;
    if ((rc = braced(*s, len, pos, "\\sqrt must have a radicand group", &rc_at,
                     &end, err, errlen)) != 0)
      return rc;
    const char *rad = *s + pos + 1;
    size_t nrad = rc_at - pos - 1;
    if (indexed) {
      const char *p[] = {"(((", rad, ")^(1/(", *s + is + 1, "))))"};
      size_t l[] = {3, nrad, 6, ic - is - 1, 4};
      rc = splice(s, idx, end, p, l, 5);
    } else {
      const char *p[] = {"sqrt(", rad, ")"};
      size_t l[] = {5, nrad, 1};
      rc = splice(s, idx, end, p, l, 3);
    }
    if (rc != 0)
      return rc;
    from = resume(idx, cmd);
  }
}

static bool in_ops(int32_t cp) {
  return cp > 0 && cp < 128 && strchr("+-*/^(){}", (int)cp) != NULL;
}

/* replaceUnicodeSqrt: √x is sqrt(x) for the token x after it; an invalid
 * byte elsewhere becomes U+FFFD, as Go's rune loop writes it. */
static int unicode_sqrt(char **s) {
  const char *t = *s;
  size_t len = strlen(t);
  tally_buf_t b;
  tally_buf_init(&b);
  for (size_t i = 0; i < len;) {
    int32_t r;
    size_t size = tally_go_decode(t + i, len - i, &r);
    if (r != 0x221A) {
      if (r < 0)
        tally_buf_puts(&b, "\xEF\xBF\xBD");
      else
        tally_buf_put(&b, t + i, size);
      i += size;
      continue;
    }
    size_t j = i + size;
    int32_t next = 0;
    while (j < len) {
      size_t k = tally_go_decode(t + j, len - j, &next);
      if (!tally_go_is_space(next))
        break;
      j += k;
    }
    if (j >= len || next == '(' || next == '{') {
      tally_buf_puts(&b, "sqrt");
      i += size;
      continue;
    }
    size_t start = j;
    while (j < len) {
      size_t k = tally_go_decode(t + j, len - j, &next);
      if (tally_go_is_space(next) || in_ops(next))
        break;
      j += k;
    }
    if (start == j) {
      tally_buf_puts(&b, "sqrt");
      i += size;
      continue;
    }
    tally_buf_puts(&b, "sqrt(");
    tally_buf_put(&b, t + start, j - start);
    tally_buf_puts(&b, ")");
    i = j;
  }
  if (b.oom) {
    tally_buf_close(&b);
    return TALLY_ENOMEM;
  }
  free(*s);
  *s = b.data != NULL ? b.data : strdup("");
  return *s != NULL ? 0 : TALLY_ENOMEM;
}

/* Go's \s+ (tab, newline, form feed, carriage return, space) to one
 * space. */
static void collapse(char *s) {
  char *w = s;
  for (const char *r = s; *r;) {
    if (strchr("\t\n\f\r ", *r) != NULL) {
      while (*r && strchr("\t\n\f\r ", *r) != NULL)
        r++;
      *w++ = ' ';
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* $$...$$ and $...$ around the whole, as often as they are there. */
static int strip_dollars(char **s) {
  for (;;) {
    int rc = trim_in_place(s);
    if (rc != 0)
      return rc;
    size_t n = strlen(*s), cut;
    if (n >= 4 && strncmp(*s, "$$", 2) == 0 && strcmp(*s + n - 2, "$$") == 0)
      cut = 2;
    else if (n >= 2 && (*s)[0] == '$' && (*s)[n - 1] == '$')
      cut = 1;
    else
      return 0;
    memmove(*s, *s + cut, n - 2 * cut);
    (*s)[n - 2 * cut] = '\0';
  }
}

int tally_mx_normalize(const char *raw, bool extract, const char *delim,
                       char **out, char *err, size_t errlen) {
  *out = NULL;
  if (strlen(raw) > TALLY_MX_MAX_BYTES)
    return fail(err, errlen, TALLY_MX_LIMIT,
                "expression is longer than %d bytes", TALLY_MX_MAX_BYTES);
  char *s = tally_go_trimmed(raw);
  if (s == NULL)
    return TALLY_ENOMEM;
  int rc = 0;
  if (extract && delim[0] != '\0') {
    const char *last = NULL;
    for (const char *p = s; (p = strstr(p, delim)) != NULL; p++)
      last = p;
    if (last != NULL)
      memmove(s, last + strlen(delim), strlen(last + strlen(delim)) + 1);
    rc = trim_in_place(&s);
  }
  static const char *const rewrites[][2] = {
      {"\r\n", "\n"},  {"\n", " "},     {",", ""},       {"\u2212", "-"},
      {"\u2013", "-"}, {"\u00D7", "*"}, {"\u00B7", "*"}, {"\u00F7", "/"},
      {"\\left", ""},  {"\\right", ""}, {"\\cdot", "*"}, {"\\times", "*"},
      {"\\!", ""},     {"\\,", ""},     {"\\;", ""},     {"\\:", ""}};
  if (rc == 0)
    rc = strip_dollars(&s);
  for (size_t i = 0; rc == 0 && i < sizeof(rewrites) / sizeof(rewrites[0]); i++)
    rc = replace_all(&s, rewrites[i][0], rewrites[i][1]);
  if (rc == 0)
    rc = trim_in_place(&s);
  if (rc == 0)
    rc = unwrap_boxed(&s, err, errlen);
  if (rc == 0)
    rc = frac(&s, err, errlen);
  if (rc == 0)
    rc = latex_sqrt(&s, err, errlen);
  if (rc == 0)
    rc = unicode_sqrt(&s);
  if (rc == 0)
    rc = replace_all(&s, "{", "(");
  if (rc == 0)
    rc = replace_all(&s, "}", ")");
  if (rc == 0) {
    collapse(s);
    rc = trim_in_place(&s);
  }
  if (rc == 0 && s[0] == '\0')
    rc = fail(err, errlen, TALLY_MX_ERROR, "expression is empty");
  if (rc != 0) {
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* ---- Expressions ------------------------------------------------------ */

typedef enum { MX_NUM, MX_SYM, MX_ADD, MX_MUL, MX_POW } mx_kind_t;

typedef struct mx_node_s {
  mx_kind_t kind;
  mpq_t value;             /* MX_NUM */
  char *sym;               /* MX_SYM */
  struct mx_node_s **kids; /* two in a parse tree, n in a canonical form */
  size_t n, cap;
  char *key;              /* a canonical form's, once asked for */
  struct mx_node_s *next; /* every node of the expression */
} mx_node_t;

struct tally_mx_s {
  mx_node_t *root, *all;
  long bits; /* of the literals */
};

static mx_node_t *node(tally_mx_t *m, mx_kind_t kind) {
  mx_node_t *n = calloc(1, sizeof(*n));
  if (n == NULL)
    return NULL;
  n->kind = kind;
  if (kind == MX_NUM)
    mpq_init(n->value);
  n->next = m->all;
  m->all = n;
  return n;
}

static bool add_kid(mx_node_t *n, mx_node_t *k) {
  if (n->n == n->cap) {
    size_t cap = n->cap ? n->cap * 2 : 4;
    mx_node_t **kids = realloc(n->kids, cap * sizeof(*kids));
    if (kids == NULL)
      return false;
    n->kids = kids;
    n->cap = cap;
  }
  n->kids[n->n++] = k;
  return true;
}

static mx_node_t *binary(tally_mx_t *m, mx_kind_t kind, mx_node_t *a,
                         mx_node_t *b) {
  mx_node_t *n = node(m, kind);
  if (n == NULL || !add_kid(n, a) || !add_kid(n, b))
    return NULL;
  return n;
}

void tally_mx_free(tally_mx_t *m) {
  if (m == NULL)
    return;
  for (mx_node_t *n = m->all, *next; n != NULL; n = next) {
    next = n->next;
    if (n->kind == MX_NUM)
      mpq_clear(n->value);
    free(n->sym);
    free(n->kids);
    free(n->key);
    free(n);
  }
  free(m);
}

static long bits_of(const mpq_t q) {
  return (long)mpz_sizeinbase(mpq_numref(q), 2) +
         (long)mpz_sizeinbase(mpq_denref(q), 2);
}

/* ---- Tokens ----------------------------------------------------------- */

typedef enum { T_EOF, T_NUM, T_IDENT, T_OP, T_LP, T_RP } tok_kind_t;

typedef struct {
  tok_kind_t kind;
  const char *text; /* into the expression */
  size_t len;
  mx_node_t *num; /* T_NUM: its value */
} tok_t;

typedef struct {
  tally_mx_t *m;
  tok_t *t;
  size_t n, cap, pos;
  int depth;
  char *err;
  size_t errlen;
} parser_t;

static bool is_digit(int32_t cp) {
  return cp >= 0 && utf8proc_category(cp) == UTF8PROC_CATEGORY_ND;
}

static bool is_letter(int32_t cp) {
  if (cp < 0)
    return false;
  utf8proc_category_t c = utf8proc_category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

/* Go's %q of a rune into out. */
static void quote_rune(int32_t r, char out[16]) {
  if (r < 0)
    r = 0xFFFD;
  if (r == '\'' || r == '\\') {
    snprintf(out, 16, "'\\%c'", (char)r);
    return;
  }
  static const char esc[] = "\a\b\f\n\r\t\v";
  static const char name[] = "abfnrtv";
  const char *e = r > 0 && r < 128 ? strchr(esc, (int)r) : NULL;
  if (e != NULL) {
    snprintf(out, 16, "'\\%c'", name[e - esc]);
  } else if (r >= 0x20 && r != 0x7F && (r < 0x80 || tally_go_printable(r))) {
    utf8proc_uint8_t u[4];
    utf8proc_ssize_t k = utf8proc_encode_char(r, u);
    snprintf(out, 16, "'%.*s'", (int)k, (const char *)u);
  } else if (r < 0x80) {
    snprintf(out, 16, "'\\x%02x'", (unsigned)r);
  } else if (r < 0x10000) {
    snprintf(out, 16, "'\\u%04x'", (unsigned)r);
  } else {
    snprintf(out, 16, "'\\U%08x'", (unsigned)r);
  }
}

/* Go's %q of n bytes of s into err's message: "fmt" with one %s. */
static int fail_quoted(parser_t *p, const char *fmt, const char *s, size_t n) {
  char *copy = strndup(s, n);
  char *q = copy != NULL ? tally_go_quoted(copy) : NULL;
  free(copy);
  if (q == NULL)
    return TALLY_ENOMEM;
  snprintf(p->err, p->errlen, fmt, q);
  free(q);
  return TALLY_MX_ERROR;
}

static int charge(parser_t *p, const mpq_t v) {
  p->m->bits += bits_of(v);
  if (p->m->bits > TALLY_MX_MAX_BITS)
    return fail(p->err, p->errlen, TALLY_MX_LIMIT,
                "the numbers in the expression exceed %ld bits",
                TALLY_MX_MAX_BITS);
  return 0;
}

/* strconv.Atoi: an optional sign, ASCII digits, in int64. */
static bool go_atoi(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (n > 0 && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == n)
    return false;
  uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (limit - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

/* Sets v to the ASCII digits of s (n bytes) with the dot left out, times
 * 10^scale; false when a byte is not a digit or a dot. */
static bool decimal(mpq_t v, const char *s, size_t n, int64_t scale) {
  char *digits = malloc(n + 2);
  if (digits == NULL)
    return false;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '.')
      continue;
    if (s[i] < '0' || s[i] > '9') {
      free(digits);
      return false;
    }
    digits[k++] = s[i];
  }
  if (k == 0)
    digits[k++] = '0';
  digits[k] = '\0';
  mpz_set_str(mpq_numref(v), digits, 10);
  free(digits);
  mpz_set_ui(mpq_denref(v), 1);
  if (scale >= 0) {
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 10, (unsigned long)scale);
    mpz_mul(mpq_numref(v), mpq_numref(v), p);
    mpz_clear(p);
  } else
    mpz_ui_pow_ui(mpq_denref(v), 10, (unsigned long)-scale);
  mpq_canonicalize(v);
  return true;
}

/* parseMathNumber of text (n bytes) into v. */
static int number(parser_t *p, const char *text, size_t n, mpq_t v) {
  const char *e = NULL;
  for (size_t i = 0; i < n && e == NULL; i++)
    if (text[i] == 'e' || text[i] == 'E')
      e = text + i;
  if (e == NULL) {
    /* big.Rat.SetString: ASCII digits and at most one dot, some digit. */
    bool digit = false;
    for (size_t i = 0; i < n; i++)
      digit = digit || (text[i] >= '0' && text[i] <= '9');
    const char *pt = memchr(text, '.', n);
    int64_t places = pt != NULL ? (int64_t)(n - (size_t)(pt - text) - 1) : 0;
    if (!digit || !decimal(v, text, n, -places))
      return fail_quoted(p, "invalid number %s", text, n);
    return charge(p, v);
  }
  size_t nm = (size_t)(e - text), ne = n - nm - 1;
  if (ne == 0)
    return fail_quoted(p, "invalid scientific notation %s", text, n);
  int64_t exponent;
  if (!go_atoi(e + 1, ne, &exponent))
    return fail_quoted(p, "invalid exponent in %s", text, n);
  const char *dot = memchr(text, '.', nm);
  int64_t frac = dot != NULL ? (int64_t)(nm - (size_t)(dot - text) - 1) : 0;
  /* The mantissa without its dot and leading zeros: none is zero. */
  bool nonzero = false, ascii = true;
  for (size_t i = 0; i < nm; i++) {
    if (text[i] == '.')
      continue;
    nonzero = nonzero || text[i] != '0';
    ascii = ascii && text[i] >= '0' && text[i] <= '9';
  }
  if (!nonzero) {
    mpq_set_ui(v, 0, 1);
    return 0;
  }
  if (!ascii)
    return fail_quoted(p, "invalid mantissa in %s", text, n);
  /* The scale, kept to what fits the bit budget before it is computed. */
  double scale = (double)exponent - (double)frac;
  if (fabs(scale) * 3.33 > (double)(TALLY_MX_MAX_BITS - p->m->bits))
    return fail(p->err, p->errlen, TALLY_MX_LIMIT,
                "the numbers in the expression exceed %ld bits",
                TALLY_MX_MAX_BITS);
  if (!decimal(v, text, nm, (int64_t)scale))
    return fail_quoted(p, "invalid mantissa in %s", text, n);
  return charge(p, v);
}

static int push(parser_t *p, tok_kind_t kind, const char *text, size_t len,
                mx_node_t *num) {
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 64;
    tok_t *t = realloc(p->t, cap * sizeof(*t));
    if (t == NULL)
      return TALLY_ENOMEM;
    p->t = t;
    p->cap = cap;
  }
  p->t[p->n++] = (tok_t){kind, text, len, num};
  return 0;
}

/* tokenizeMathExpression. */
static int tokenize(parser_t *p, const char *s) {
  size_t len = strlen(s);
  for (size_t i = 0; i < len;) {
    int32_t r;
    size_t size = tally_go_decode(s + i, len - i, &r);
    int rc = 0;
    if (tally_go_is_space(r)) {
      i += size;
      continue;
    }
    if (r == '(' || r == '{' || r == ')' || r == '}' || r == '+' || r == '-' ||
        r == '*' || r == '/' || r == '^') {
      tok_kind_t k = r == '(' || r == '{'   ? T_LP
                     : r == ')' || r == '}' ? T_RP
                                            : T_OP;
      if ((rc = push(p, k, s + i, 1, NULL)) != 0)
        return rc;
      i += size;
      continue;
    }
    if (is_digit(r) || r == '.') {
      size_t start = i;
      bool dot = r == '.', exp = false;
      i += size;
      while (i < len) {
        int32_t c;
        size_t k = tally_go_decode(s + i, len - i, &c);
        if (is_digit(c)) {
          i += k;
        } else if (c == '.' && !dot && !exp) {
          dot = true;
          i += k;
        } else if ((c == 'e' || c == 'E') && !exp) {
          exp = true;
          i += k;
          if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        } else {
          break;
        }
      }
      mx_node_t *num = node(p->m, MX_NUM);
      if (num == NULL)
        return TALLY_ENOMEM;
      if ((rc = number(p, s + start, i - start, num->value)) != 0)
        return rc;
      size_t end = i;
      if (i < len && s[i] == '%') {
        mpq_t hundred;
        mpq_init(hundred);
        mpq_set_ui(hundred, 100, 1);
        mpq_div(num->value, num->value, hundred);
        mpq_clear(hundred);
        i++;
      }
      /* The token's text leaves the % out. */
      if ((rc = push(p, T_NUM, s + start, end - start, num)) != 0)
        return rc;
      continue;
    }
    if (is_letter(r) || r == '_') {
      size_t start = i;
      i += size;
      while (i < len) {
        int32_t c;
        size_t k = tally_go_decode(s + i, len - i, &c);
        if (!is_letter(c) && !is_digit(c) && c != '_')
          break;
        i += k;
      }
      if ((rc = push(p, T_IDENT, s + start, i - start, NULL)) != 0)
        return rc;
      continue;
    }
    char q[16];
    quote_rune(r, q);
    return fail(p->err, p->errlen, TALLY_MX_ERROR, "unexpected character %s",
                q);
  }
  return push(p, T_EOF, s + len, 0, NULL);
}

/* ---- Parsing ---------------------------------------------------------- */

static const tok_t *cur(const parser_t *p) {
  return &p->t[p->pos];
}

static bool is_op(const tok_t *t, char c) {
  return t->kind == T_OP && t->text[0] == c;
}

static int deeper(parser_t *p) {
  if (++p->depth > TALLY_MX_MAX_DEPTH)
    return fail(p->err, p->errlen, TALLY_MX_LIMIT,
                "expression nests deeper than %d levels", TALLY_MX_MAX_DEPTH);
  return 0;
}

static int num_of(tally_mx_t *m, long a, long b, mx_node_t **out) {
  if ((*out = node(m, MX_NUM)) == NULL)
    return TALLY_ENOMEM;
  mpq_set_si((*out)->value, a, (unsigned long)b);
  return 0;
}

/* negateMathExpr */
static int negate(tally_mx_t *m, mx_node_t **e) {
  if ((*e)->kind == MX_NUM) {
    mx_node_t *n = node(m, MX_NUM);
    if (n == NULL)
      return TALLY_ENOMEM;
    mpq_neg(n->value, (*e)->value);
    *e = n;
    return 0;
  }
  mx_node_t *minus;
  if (num_of(m, -1, 1, &minus) != 0)
    return TALLY_ENOMEM;
  *e = binary(m, MX_MUL, minus, *e);
  return *e != NULL ? 0 : TALLY_ENOMEM;
}

/* invertMathExpr */
static int invert(tally_mx_t *m, mx_node_t **e) {
  if ((*e)->kind == MX_NUM && mpq_sgn((*e)->value) != 0) {
    mx_node_t *n = node(m, MX_NUM);
    if (n == NULL)
      return TALLY_ENOMEM;
    mpq_inv(n->value, (*e)->value);
    *e = n;
    return 0;
  }
  mx_node_t *minus;
  if (num_of(m, -1, 1, &minus) != 0)
    return TALLY_ENOMEM;
  *e = binary(m, MX_POW, *e, minus);
  return *e != NULL ? 0 : TALLY_ENOMEM;
}

static int expression(parser_t *p, mx_node_t **out);

static int primary(parser_t *p, mx_node_t **out) {
  const tok_t *t = cur(p);
  int rc;
  switch (t->kind) {
  case T_NUM:
    p->pos++;
    *out = t->num;
    return 0;
  case T_IDENT:
    p->pos++;
    if (cur(p)->kind == T_LP) {
      p->pos++;
      mx_node_t *arg;
      if ((rc = expression(p, &arg)) != 0)
        return rc;
      if (cur(p)->kind != T_RP)
        return fail(p->err, p->errlen, TALLY_MX_ERROR,
                    "expected closing parenthesis after %.*s", (int)t->len,
                    t->text);
      p->pos++;
      if (t->len != 4 || strncmp(t->text, "sqrt", 4) != 0)
        return fail_quoted(p, "unsupported function %s", t->text, t->len);
      mx_node_t *half;
      if (num_of(p->m, 1, 2, &half) != 0)
        return TALLY_ENOMEM;
      *out = binary(p->m, MX_POW, arg, half);
      return *out != NULL ? 0 : TALLY_ENOMEM;
    }
    if ((*out = node(p->m, MX_SYM)) == NULL ||
        ((*out)->sym = strndup(t->text, t->len)) == NULL)
      return TALLY_ENOMEM;
    return 0;
  case T_LP:
    p->pos++;
    if ((rc = expression(p, out)) != 0)
      return rc;
    if (cur(p)->kind != T_RP)
      return fail(p->err, p->errlen, TALLY_MX_ERROR,
                  "expected closing parenthesis");
    p->pos++;
    return 0;
  default:
    return fail_quoted(p, "unexpected token %s", t->text, t->len);
  }
}

static int unary(parser_t *p, mx_node_t **out) {
  const tok_t *t = cur(p);
  if (is_op(t, '+') || is_op(t, '-')) {
    p->pos++;
    int rc = deeper(p);
    if (rc == 0)
      rc = unary(p, out);
    p->depth--;
    if (rc == 0 && t->text[0] == '-')
      rc = negate(p->m, out);
    return rc;
  }
  return primary(p, out);
}

static int power(parser_t *p, mx_node_t **out) {
  int rc = unary(p, out);
  if (rc != 0 || !is_op(cur(p), '^'))
    return rc;
  p->pos++;
  mx_node_t *right;
  if ((rc = deeper(p)) == 0)
    rc = power(p, &right);
  p->depth--;
  if (rc != 0)
    return rc;
  *out = binary(p->m, MX_POW, *out, right);
  return *out != NULL ? 0 : TALLY_ENOMEM;
}

/* One left-associative level of the grammar: operands from next, joined
 * by op into a node of kind, or by inverse, which first applies undo to
 * the right operand (a - b is a + (-b), a / b is a * b^-1). */
static int chain(parser_t *p, mx_node_t **out,
                 int (*next)(parser_t *, mx_node_t **), char op, char inverse,
                 int (*undo)(tally_mx_t *, mx_node_t **), mx_kind_t kind) {
  int rc = next(p, out);
  while (rc == 0 && (is_op(cur(p), op) || is_op(cur(p), inverse))) {
    bool inv = cur(p)->text[0] == inverse;
    p->pos++;
    mx_node_t *right;
    if ((rc = next(p, &right)) != 0)
      break;
    if (inv && (rc = undo(p->m, &right)) != 0)
      break;
    if ((*out = binary(p->m, kind, *out, right)) == NULL)
      rc = TALLY_ENOMEM;
  }
  return rc;
}

static int mul_div(parser_t *p, mx_node_t **out) {
  return chain(p, out, power, '*', '/', invert, MX_MUL);
}

static int add_sub(parser_t *p, mx_node_t **out) {
  return chain(p, out, mul_div, '+', '-', negate, MX_ADD);
}

static int expression(parser_t *p, mx_node_t **out) {
  int rc = deeper(p);
  if (rc == 0)
    rc = add_sub(p, out);
  p->depth--;
  return rc;
}

int tally_mx_parse(const char *s, tally_mx_t **out, char *err, size_t errlen) {
  *out = NULL;
  tally_mx_t *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return TALLY_ENOMEM;
  parser_t p = {.m = m, .err = err, .errlen = errlen};
  int rc = tokenize(&p, s);
  if (rc == 0)
    rc = expression(&p, &m->root);
  if (rc == 0 && cur(&p)->kind != T_EOF)
    rc = fail_quoted(&p, "unexpected token %s", cur(&p)->text, cur(&p)->len);
  free(p.t);
  if (rc != 0) {
    tally_mx_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

/* ---- Canonical forms -------------------------------------------------- */

typedef struct {
  tally_mx_t *m;
  char *err;
  size_t errlen;
} canon_t;

static int too_big(canon_t *c, const mpq_t v) {
  if (bits_of(v) > TALLY_MX_MAX_BITS)
    return fail(c->err, c->errlen, TALLY_MX_LIMIT,
                "exact values in the expression exceed %ld bits",
                TALLY_MX_MAX_BITS);
  return 0;
}

/* One step of the reference's canonical sum or product of [a, b]: a's
 * terms when it is a sum (a product), a folded into the constant when
 * it is a number, else a itself; the same for b; the constant last
 * unless it is 0 (1) with terms left. A sum or product this function
 * made is extended in place: nothing else refers to it. */
static int combine(canon_t *c, mx_kind_t kind, mx_node_t *a, mx_node_t *b,
                   mx_node_t **out) {
  tally_mx_t *m = c->m;
  mx_node_t *acc = a->kind == kind ? a : node(m, kind);
  mx_node_t *k = node(m, MX_NUM);
  if (acc == NULL || k == NULL)
    return TALLY_ENOMEM;
  mpq_set_ui(k->value, kind == MX_ADD ? 0 : 1, 1);
  mx_node_t *parts[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    mx_node_t *x = parts[i];
    if (x->kind == kind) {
      if (x != acc)
        for (size_t j = 0; j < x->n; j++)
          if (!add_kid(acc, x->kids[j]))
            return TALLY_ENOMEM;
    } else if (x->kind == MX_NUM) {
      if (kind == MX_ADD)
        mpq_add(k->value, k->value, x->value);
      else
        mpq_mul(k->value, k->value, x->value);
      int rc = too_big(c, k->value);
      if (rc != 0)
        return rc;
    } else if (!add_kid(acc, x)) {
      return TALLY_ENOMEM;
    }
  }
  if (kind == MX_MUL && mpq_sgn(k->value) == 0) {
    *out = k;
    return 0;
  }
  bool neutral =
      kind == MX_ADD ? mpq_sgn(k->value) == 0 : mpq_cmp_ui(k->value, 1, 1) == 0;
  if ((!neutral || acc->n == 0) && !add_kid(acc, k))
    return TALLY_ENOMEM;
  *out = acc->n == 1 ? acc->kids[0] : acc;
  return 0;
}

/* raiseRatToIntegerPower, with an exact zero to a negative power
 * refused. */
static int raise(canon_t *c, const mpq_t base, const mpq_t exponent,
                 mx_node_t **out) {
  *out = NULL;
  if (mpz_sizeinbase(mpq_numref(exponent), 2) > 62)
    return 0;
  long e = mpz_get_si(mpq_numref(exponent));
  unsigned long a = e < 0 ? (unsigned long)-e : (unsigned long)e;
  if (a > 32 || mpz_sizeinbase(mpq_numref(base), 2) > 256 ||
      mpz_sizeinbase(mpq_denref(base), 2) > 256)
    return 0;
  if (e < 0 && mpq_sgn(base) == 0)
    return fail(c->err, c->errlen, TALLY_MX_DIV_ZERO, "division by zero");
  mx_node_t *n = node(c->m, MX_NUM);
  if (n == NULL)
    return TALLY_ENOMEM;
  mpz_pow_ui(mpq_numref(n->value), mpq_numref(base), a);
  mpz_pow_ui(mpq_denref(n->value), mpq_denref(base), a);
  if (e < 0)
    mpq_inv(n->value, n->value);
  *out = n;
  return 0;
}

static int canon(canon_t *c, const mx_node_t *e, mx_node_t **out);

static int canon_pow(canon_t *c, const mx_node_t *e, mx_node_t **out) {
  mx_node_t *b, *x;
  int rc = canon(c, e->kids[0], &b);
  if (rc == 0)
    rc = canon(c, e->kids[1], &x);
  if (rc != 0)
    return rc;
  if (x->kind == MX_NUM) {
    if (mpq_sgn(x->value) == 0)
      return num_of(c->m, 1, 1, out);
    if (mpq_cmp_ui(x->value, 1, 1) == 0) {
      *out = b;
      return 0;
    }
    if (b->kind == MX_NUM && mpz_cmp_ui(mpq_denref(x->value), 1) == 0) {
      if ((rc = raise(c, b->value, x->value, out)) != 0 || *out != NULL)
        return rc;
    }
  }
  if ((*out = node(c->m, MX_POW)) == NULL || !add_kid(*out, b) ||
      !add_kid(*out, x))
    return TALLY_ENOMEM;
  return 0;
}

static int canon(canon_t *c, const mx_node_t *e, mx_node_t **out) {
  switch (e->kind) {
  case MX_NUM:
    if ((*out = node(c->m, MX_NUM)) == NULL)
      return TALLY_ENOMEM;
    mpq_set((*out)->value, e->value);
    return 0;
  case MX_SYM:
    if ((*out = node(c->m, MX_SYM)) == NULL ||
        ((*out)->sym = strdup(e->sym)) == NULL)
      return TALLY_ENOMEM;
    return 0;
  case MX_POW:
    return canon_pow(c, e, out);
  default:
    break;
  }
  /* A chain of the same operation, walked up from its leftmost operand. */
  size_t len = 0;
  const mx_node_t *leaf = e;
  while (leaf->kind == e->kind) {
    len++;
    leaf = leaf->kids[0];
  }
  const mx_node_t **rights = malloc(len * sizeof(*rights));
  if (rights == NULL)
    return TALLY_ENOMEM;
  size_t i = len;
  for (const mx_node_t *x = e; x->kind == e->kind; x = x->kids[0])
    rights[--i] = x->kids[1];
  mx_node_t *acc;
  int rc = canon(c, leaf, &acc);
  for (i = 0; rc == 0 && i < len; i++) {
    mx_node_t *r;
    if ((rc = canon(c, rights[i], &r)) == 0)
      rc = combine(c, e->kind, acc, r, &acc);
  }
  free(rights);
  *out = acc;
  return rc;
}

static int cmp_key(const void *a, const void *b) {
  return strcmp((*(mx_node_t *const *)a)->key, (*(mx_node_t *const *)b)->key);
}

/* mathExprKey of a canonical form, its terms sorted by their keys. */
static int key_of(mx_node_t *n) {
  if (n->key != NULL)
    return 0;
  tally_buf_t b;
  tally_buf_init(&b);
  switch (n->kind) {
  case MX_NUM: {
    char *s = mpq_get_str(NULL, 10, n->value);
    tally_buf_puts(&b, "num:");
    tally_buf_puts(&b, s);
    void (*gmp_free)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &gmp_free);
    gmp_free(s, strlen(s) + 1);
    break;
  }
  case MX_SYM:
    tally_buf_puts(&b, "sym:");
    tally_buf_puts(&b, n->sym);
    break;
  default:
    for (size_t i = 0; i < n->n; i++)
      if (key_of(n->kids[i]) != 0) {
        tally_buf_close(&b);
        return TALLY_ENOMEM;
      }
    if (n->kind != MX_POW)
      qsort(n->kids, n->n, sizeof(*n->kids), cmp_key);
    tally_buf_puts(&b, n->kind == MX_ADD   ? "add("
                       : n->kind == MX_MUL ? "mul("
                                           : "pow(");
    for (size_t i = 0; i < n->n; i++) {
      if (i > 0)
        tally_buf_putc(&b, ',');
      tally_buf_puts(&b, n->kids[i]->key);
    }
    tally_buf_putc(&b, ')');
  }
  if (b.oom || b.data == NULL) {
    tally_buf_close(&b);
    return TALLY_ENOMEM;
  }
  n->key = b.data;
  return 0;
}

int tally_mx_key(tally_mx_t *m, char **key, char *err, size_t errlen) {
  *key = NULL;
  canon_t c = {m, err, errlen};
  mx_node_t *form;
  int rc = canon(&c, m->root, &form);
  if (rc == 0)
    rc = key_of(form);
  if (rc == 0 && (*key = strdup(form->key)) == NULL)
    rc = TALLY_ENOMEM;
  return rc;
}

/* ---- Numeric values --------------------------------------------------- */

/* big.Rat.Float64: the nearest float64, ties to even, ±Inf past the
 * range. */
static double rat_double(const mpq_t q) {
  if (mpq_sgn(q) == 0)
    return 0;
  mpz_t a, num, den, quo, rem;
  mpz_inits(a, num, den, quo, rem, NULL);
  mpz_abs(a, mpq_numref(q));
  const mpz_srcptr b = mpq_denref(q);
  /* a / (b 2^e) lies in [2^52, 2^54) for this e; one step up at most
   * brings it under 2^53. Below the normal range, e stays at -1074. */
  long e = (long)mpz_sizeinbase(a, 2) - (long)mpz_sizeinbase(b, 2) - 53;
  for (;;) {
    if (e < -1074)
      e = -1074;
    if (e >= 0) {
      mpz_set(num, a);
      mpz_mul_2exp(den, b, (mp_bitcnt_t)e);
    } else {
      mpz_mul_2exp(num, a, (mp_bitcnt_t)-e);
      mpz_set(den, b);
    }
    mpz_tdiv_qr(quo, rem, num, den);
    if (mpz_sizeinbase(quo, 2) <= 53)
      break;
    e++;
  }
  mpz_mul_2exp(rem, rem, 1);
  int c = mpz_cmp(rem, den);
  if (c > 0 || (c == 0 && mpz_odd_p(quo)))
    mpz_add_ui(quo, quo, 1);
  double out = ldexp((double)mpz_get_ui(quo), (int)(e > 100000 ? 100000 : e));
  mpz_clears(a, num, den, quo, rem, NULL);
  return mpq_sgn(q) < 0 ? -out : out;
}

static int eval(const mx_node_t *e, double *v, char *err, size_t errlen);

static int eval_chain(const mx_node_t *e, double *v, char *err, size_t errlen) {
  size_t len = 0;
  const mx_node_t *leaf = e;
  while (leaf->kind == e->kind) {
    len++;
    leaf = leaf->kids[0];
  }
  const mx_node_t **rights = malloc(len * sizeof(*rights));
  if (rights == NULL)
    return TALLY_ENOMEM;
  size_t i = len;
  for (const mx_node_t *x = e; x->kind == e->kind; x = x->kids[0])
    rights[--i] = x->kids[1];
  double acc;
  int rc = eval(leaf, &acc, err, errlen);
  for (i = 0; rc == 0 && i < len; i++) {
    double r;
    if ((rc = eval(rights[i], &r, err, errlen)) == 0)
      acc = e->kind == MX_ADD ? (0.0 + acc) + r : (1.0 * acc) * r;
  }
  free(rights);
  *v = acc;
  return rc;
}

static int eval(const mx_node_t *e, double *v, char *err, size_t errlen) {
  switch (e->kind) {
  case MX_NUM:
    *v = rat_double(e->value);
    return 0;
  case MX_SYM: {
    char *q = tally_go_quoted(e->sym);
    if (q == NULL)
      return TALLY_ENOMEM;
    fail(err, errlen, TALLY_MX_ERROR, "symbol %s is not numeric", q);
    free(q);
    return TALLY_MX_ERROR;
  }
  case MX_POW: {
    double b, x;
    int rc = eval(e->kids[0], &b, err, errlen);
    if (rc == 0)
      rc = eval(e->kids[1], &x, err, errlen);
    if (rc == 0)
      *v = tally_go_pow(b, x);
    return rc;
  }
  default:
    return eval_chain(e, v, err, errlen);
  }
}

int tally_mx_eval(const tally_mx_t *m, double *v, char *err, size_t errlen) {
  return eval(m->root, v, err, errlen);
}

/* ---- Go's math.Pow ---------------------------------------------------- */

static bool odd_int(double x) {
  double xi, xf = modf(x, &xi);
  if (xf != 0)
    return false;
  /* int64(xi) on amd64: out of range is INT64_MIN, which is even. */
  if (!(fabs(xi) < 9223372036854775808.0))
    return false;
  return ((int64_t)xi & 1) != 0;
}

double tally_go_pow(double x, double y) {
  if (y == 0 || x == 1)
    return 1;
  if (y == 1)
    return x;
  if (isnan(x) || isnan(y))
    return NAN;
  if (x == 0) {
    if (y < 0)
      return odd_int(y) ? copysign(INFINITY, x) : INFINITY;
    if (y > 0)
      return odd_int(y) ? x : 0;
  }
  if (isinf(y)) {
    if (x == -1)
      return 1;
    if ((fabs(x) < 1) == (y > 0))
      return 0;
    return INFINITY;
  }
  if (isinf(x)) {
    if (x < 0)
      return tally_go_pow(1 / x, -y);
    if (y < 0)
      return 0;
    if (y > 0)
      return INFINITY;
  }
  if (y == 0.5)
    return sqrt(x);
  if (y == -0.5)
    return 1 / sqrt(x);
  double yi, yf = modf(fabs(y), &yi);
  if (yf != 0 && x < 0)
    return NAN;
  if (yi >= 9223372036854775808.0) {
    if (x == -1)
      return 1;
    if ((fabs(x) < 1) == (y > 0))
      return 0;
    return INFINITY;
  }
  double a1 = 1;
  int64_t ae = 0;
  if (yf != 0) {
    if (yf > 0.5) {
      yf--;
      yi++;
    }
    a1 = tally_go_exp(yf * tally_go_log(x));
  }
  int xe32;
  double x1 = frexp(x, &xe32);
  int64_t xe = xe32;
  for (int64_t i = (int64_t)yi; i != 0; i >>= 1) {
    if (xe < -(1 << 12) || (1 << 12) < xe) {
      ae += xe;
      break;
    }
    if (i & 1) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe *= 2;
    if (x1 < .5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  if (ae > INT_MAX / 2)
    ae = INT_MAX / 2;
  if (ae < -(INT_MAX / 2))
    ae = -(INT_MAX / 2);
  return ldexp(a1, (int)ae);
}
