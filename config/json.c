/* String lengths, member texts and id checks on top of cJSON. */
#include "config/json.h"
#include "config/arena.h"
#include "config/diag.h"
#include "config/utext.h"

#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define FILL 0xff

/* cJSON's allocations, filled so that a string's end can be found: cJSON
 * sizes a string's block from its escaped text (never too small), writes
 * the bytes and one NUL, and leaves the rest as it was. Inside an arena's
 * window (config/arena.h) they come from the arena. */
static void *filled_malloc(size_t n) {
  tally_arena_t *a = tally__arena_current;
  if (a != NULL)
    return tally__arena_alloc(a, n, FILL);
  void *p = malloc(n);
  if (p != NULL)
    memset(p, FILL, malloc_usable_size(p));
  return p;
}

static void hooked_free(void *p) {
  tally_arena_t *a = tally__arena_current;
  if (p != NULL && a != NULL && tally__arena_owns(a, p))
    return; /* it goes with the arena's reset */
  free(p);
}

static bool hooks_installed;

__attribute__((constructor)) static void install_hooks(void) {
  cJSON_Hooks hooks = {.malloc_fn = filled_malloc, .free_fn = hooked_free};
  cJSON_InitHooks(&hooks);
  hooks_installed = true;
}

/* The length of string v (strlen n) in a filled block of size bytes: back
 * over the fill to the NUL cJSON wrote after the last byte. */
static size_t filled_len(const char *v, size_t n, size_t size) {
  if (size <= n + 1)
    return n;
  const unsigned char *u = (const unsigned char *)v;
  size_t end = size;
  while (end > n + 1 && u[end - 1] == FILL)
    end--;
  if (u[end - 1] != '\0')
    return n; /* not a block this hook filled */
  return end - 1;
}

/* A string node from an arena holds its length in valueint, and the
 * address of its own string, negated, in valuedouble (both left 0 by
 * cJSON in a string node; an address below 2^53 is exact in a double). A
 * copy (cJSON_Duplicate) keeps the numbers but not the address, so it is
 * not taken for marked. */
static bool arena_marked(const cJSON *s, size_t *len) {
  if (!(s->valuedouble < 0) ||
      (uintptr_t)(-s->valuedouble) != (uintptr_t)s->valuestring)
    return false;
  *len = (size_t)s->valueint;
  return true;
}

void tally_json_mark_arena(cJSON *tree) {
  /* Depth first without recursion: down to the first child, else to the
   * next sibling, else up until a parent has one. cJSON keeps no parent
   * links, so the way down is kept on a stack of bounded depth (the
   * decoder refused deeper trees). */
  cJSON *stack[CJSON_NESTING_LIMIT + 2];
  size_t depth = 0;
  cJSON *at = tree;
  while (at != NULL) {
    if (cJSON_IsString(at) && at->valuestring != NULL &&
        !(at->type & cJSON_IsReference)) {
      size_t n = strlen(at->valuestring);
      n = filled_len(at->valuestring, n, tally__arena_size(at->valuestring));
      /* Always true: a job is far smaller than INT_MAX bytes, and Linux
       * gives user space addresses below 2^47 unless a program asks for
       * more. (An unmarked arena string would be measured through
       * malloc_usable_size, which only heap blocks answer.) */
      if (n <= INT_MAX && (uintptr_t)at->valuestring < ((uintptr_t)1 << 53)) {
        at->valueint = (int)n;
        at->valuedouble = -(double)(uintptr_t)at->valuestring;
      }
    }
    if (at->child != NULL && depth < CJSON_NESTING_LIMIT + 1) {
      stack[depth++] = at;
      at = at->child;
      continue;
    }
    while (at != NULL && at->next == NULL)
      at = depth > 0 ? stack[--depth] : NULL;
    if (at != NULL)
      at = depth > 0 ? at->next : NULL;
  }
}

cJSON *tally_json_parse(const char *text, size_t len) {
  cJSON *tree = cJSON_ParseWithLength(text, len);
  if (tree != NULL && tally__arena_current != NULL)
    tally_json_mark_arena(tree);
  return tree;
}

size_t tally_json_strlen(const cJSON *s) {
  const char *v = s != NULL ? s->valuestring : NULL;
  if (v == NULL)
    return 0;
  size_t marked;
  if (arena_marked(s, &marked))
    return marked;
  size_t n = strlen(v);
  if (!hooks_installed || (s->type & cJSON_IsReference))
    return n;
  return filled_len(v, n, malloc_usable_size((void *)v));
}

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

bool tally_json_member_text(const char *text, size_t len, const char *key,
                            const char **at, size_t *n) {
  const char *p = skip_ws(text, text + len), *end = text + len;
  if (p == end || *p != '{')
    return false;
  p = skip_ws(p + 1, end);
  while (p < end && *p == '"') {
    const char *kend = NULL;
    cJSON *k = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &kend, 0);
    bool match = cJSON_IsString(k) && strcmp(k->valuestring, key) == 0;
    cJSON_Delete(k);
    if (kend == NULL)
      return false;
    p = skip_ws(kend, end);
    if (p == end || *p != ':')
      return false;
    p = skip_ws(p + 1, end);
    const char *vend = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &vend, 0);
    cJSON_Delete(v);
    if (v == NULL || vend == NULL)
      return false;
    if (match) {
      *at = p;
      *n = (size_t)(vend - p);
      return true;
    }
    p = skip_ws(vend, end);
    if (p == end || *p != ',')
      return false;
    p = skip_ws(p + 1, end);
  }
  return false;
}

bool tally_json_too_deep(const char *text, size_t len) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > CJSON_NESTING_LIMIT)
        return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  return false;
}

/* Whether a number under root is infinite: the walk without paths, so
 * that a valid tree (the usual case) builds none. */
static bool has_overflow(const cJSON *root) {
  if (cJSON_IsNumber(root))
    return isinf(root->valuedouble);
  for (const cJSON *c = root ? root->child : NULL; c != NULL; c = c->next)
    if (has_overflow(c))
      return true;
  return false;
}

/* The walk that builds the path to the first infinite number. */
static bool find_overflow(const cJSON *root, tally_jpath_t *path) {
  if (cJSON_IsNumber(root))
    return isinf(root->valuedouble);
  size_t i = 0;
  for (const cJSON *c = root ? root->child : NULL; c != NULL;
       c = c->next, i++) {
    size_t old = cJSON_IsObject(root) ? tally_jpath_key(path, c->string)
                                      : tally_jpath_index(path, i);
    if (find_overflow(c, path))
      return true;
    tally_jpath_restore(path, old);
  }
  return false;
}

static int cmp_member(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string,
                (*(const cJSON *const *)b)->string);
}

bool tally_json_find_duplicate(const cJSON *root, tally_jpath_t *path,
                               bool *oom) {
  *oom = false;
  if (cJSON_IsObject(root) && root->child != NULL) {
    size_t n = (size_t)cJSON_GetArraySize(root);
    const cJSON **m = malloc(n * sizeof(*m));
    if (m == NULL) {
      *oom = true;
      return false;
    }
    size_t i = 0;
    for (const cJSON *c = root->child; c != NULL; c = c->next)
      m[i++] = c;
    /* Sorted by key, in O(n log n): a key given twice lies next to
     * itself. */
    qsort(m, n, sizeof(*m), cmp_member);
    const char *twice = NULL;
    for (i = 1; i < n && twice == NULL; i++)
      if (strcmp(m[i - 1]->string, m[i]->string) == 0)
        twice = m[i]->string;
    free(m);
    if (twice != NULL) {
      tally_jpath_key(path, twice);
      return true;
    }
  }
  size_t i = 0;
  for (const cJSON *c = root ? root->child : NULL; c != NULL;
       c = c->next, i++) {
    if (c->child == NULL)
      continue;
    size_t old = cJSON_IsObject(root) ? tally_jpath_key(path, c->string)
                                      : tally_jpath_index(path, i);
    if (tally_json_find_duplicate(c, path, oom))
      return true;
    if (*oom)
      return false;
    tally_jpath_restore(path, old);
  }
  return false;
}

bool tally_json_find_overflow(const cJSON *root, tally_jpath_t *path) {
  return has_overflow(root) && find_overflow(root, path);
}

/* The classes of bytes the text check below cares about. */
enum { C_OTHER = 0, C_NUM = 1, C_QUOTE = 2, C_ESC = 4, C_HIGH = 8 };

static const unsigned char byte_class[256] = {
    ['0'] = C_NUM,  ['1'] = C_NUM, ['2'] = C_NUM, ['3'] = C_NUM,
    ['4'] = C_NUM,  ['5'] = C_NUM, ['6'] = C_NUM, ['7'] = C_NUM,
    ['8'] = C_NUM,  ['9'] = C_NUM, ['+'] = C_NUM, ['-'] = C_NUM,
    ['.'] = C_NUM,  ['e'] = C_NUM, ['E'] = C_NUM, ['"'] = C_QUOTE,
    ['\\'] = C_ESC,
#define H8(b)                                                                  \
  [b] = C_HIGH, [b + 1] = C_HIGH, [b + 2] = C_HIGH, [b + 3] = C_HIGH,          \
  [b + 4] = C_HIGH, [b + 5] = C_HIGH, [b + 6] = C_HIGH, [b + 7] = C_HIGH
    H8(0x80),       H8(0x88),      H8(0x90),      H8(0x98),
    H8(0xa0),       H8(0xa8),      H8(0xb0),      H8(0xb8),
    H8(0xc0),       H8(0xc8),      H8(0xd0),      H8(0xd8),
    H8(0xe0),       H8(0xe8),      H8(0xf0),      H8(0xf8),
#undef H8
};

/* Whether s[0..r) (the characters cJSON reads as a number: digits, +, -,
 * ., e, E) is a JSON number. */
static bool json_number(const char *s, size_t r) {
  size_t i = 0;
  if (i < r && s[i] == '-')
    i++;
  if (i < r && s[i] == '0') {
    i++;
  } else if (i < r && s[i] >= '1' && s[i] <= '9') {
    while (i < r && s[i] >= '0' && s[i] <= '9')
      i++;
  } else {
    return false;
  }
  if (i < r && s[i] == '.') {
    size_t d = ++i;
    while (i < r && s[i] >= '0' && s[i] <= '9')
      i++;
    if (i == d)
      return false;
  }
  if (i < r && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < r && (s[i] == '+' || s[i] == '-'))
      i++;
    size_t d = i;
    while (i < r && s[i] >= '0' && s[i] <= '9')
      i++;
    if (i == d)
      return false;
  }
  return i == r;
}

const char *tally_json_text_error(const char *text, size_t len, size_t *at,
                                  bool *utf8) {
  const unsigned char *u = (const unsigned char *)text;
  *utf8 = false;
  size_t i = 0;
  for (;;) {
    while (i < len && byte_class[u[i]] == C_OTHER)
      i++;
    if (i >= len)
      return NULL;
    unsigned char c = u[i];
    if (c == '"') {
      /* A string: to its closing quote, past escapes; its bytes must be
       * UTF-8. In a string, digits and signs are plain. */
      size_t start = ++i;
      bool high = false;
      for (;;) {
        while (i < len && (byte_class[u[i]] & (C_QUOTE | C_ESC | C_HIGH)) == 0)
          i++;
        if (i >= len || u[i] == '"')
          break;
        if (u[i] == '\\') {
          i += 2;
        } else {
          high = true;
          i++;
        }
      }
      size_t end = i < len ? i : len;
      if (high) {
        size_t bad = tally_utext_invalid_at(text + start, end - start);
        if (bad != end - start) {
          *at = start + bad;
          *utf8 = true;
          return "is not valid UTF-8";
        }
      }
      i = end + 1;
    } else if (c >= 0x80) {
      *at = i;
      *utf8 = true;
      return "is not valid UTF-8";
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t r = i + 1;
      while (r < len && byte_class[u[r]] == C_NUM)
        r++;
      if (!json_number(text + i, r - i)) {
        *at = i;
        return "a number is not written as JSON requires (no leading zeros, "
               "digits on both sides of a point, digits after an exponent)";
      }
      i = r;
    } else {
      i++; /* the e of true or false, a stray sign: cJSON has judged them */
    }
  }
}

static bool bad_utf8(const char *s) {
  size_t n = strlen(s);
  return tally_utext_invalid_at(s, n) != n;
}

bool tally_json_find_bad_utf8(const cJSON *root, tally_jpath_t *path,
                              bool *key) {
  size_t i = 0;
  *key = false;
  for (const cJSON *c = root ? root->child : NULL; c != NULL;
       c = c->next, i++) {
    if (c->string != NULL && bad_utf8(c->string)) {
      /* The key cannot be in the path: its place is. */
      tally_jpath_index(path, i);
      *key = true;
      return true;
    }
    size_t old = cJSON_IsObject(root) ? tally_jpath_key(path, c->string)
                                      : tally_jpath_index(path, i);
    if ((cJSON_IsString(c) && bad_utf8(c->valuestring)) ||
        tally_json_find_bad_utf8(c, path, key))
      return true;
    tally_jpath_restore(path, old);
  }
  return false;
}

/* Whether text is an integer in plain digits: 0|-?[1-9][0-9]* (not -0,
 * which would be written "-0.0"). */
static bool plain_integer(const char *text, size_t n) {
  size_t i = n > 0 && text[0] == '-' ? 1 : 0;
  if (i == n || (text[i] == '0' && (n > i + 1 || i == 1)))
    return false;
  for (; i < n; i++)
    if (text[i] < '0' || text[i] > '9')
      return false;
  return true;
}

const char *tally_json_id_error(const cJSON *v, bool numbers, const char *raw,
                                size_t raw_len, char *buf, size_t buflen) {
  if (cJSON_IsNumber(v)) {
    if (!numbers)
      return "must be a string";
    double x = v->valuedouble;
    if (!(fabs(x) < 9007199254740992.0) || x != floor(x) ||
        (raw != NULL && !plain_integer(raw, raw_len)))
      return "a number id must be an integer below 2^53 written in plain "
             "digits (no fraction or exponent); send larger ids as strings";
    return NULL;
  }
  if (!cJSON_IsString(v))
    return numbers ? "must be a string or a number" : "must be a string";
  size_t n = tally_json_strlen(v);
  if (n == 0)
    return "must not be empty";
  if (n > TALLY_ID_MAX) {
    snprintf(buf, buflen, "is %zu bytes, more than %d", n, TALLY_ID_MAX);
    return buf;
  }
  const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)v->valuestring;
  for (size_t i = 0; i < n;) {
    utf8proc_int32_t c;
    utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &c);
    if (k < 0) {
      snprintf(buf, buflen, "is not valid UTF-8 (at byte %zu)", i);
      return buf;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      snprintf(buf, buflen, "holds a control character (U+%04X at byte %zu)",
               (unsigned)c, i);
      return buf;
    }
    i += (size_t)k;
  }
  return NULL;
}
