/* Error collection with file names and JSON paths for the config decoders. */
#include "config/diag.h"
#include "config/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_jpath_init(tally_jpath_t *p) {
  p->buf[0] = '\0';
  p->len = 0;
}

/* Appends s, marking a cut path with "..." when the buffer is full. */
static void jpath_append(tally_jpath_t *p, const char *s) {
  size_t n = strlen(s);
  if (p->len + n >= sizeof(p->buf)) {
    if (p->len < sizeof(p->buf) - 4)
      memcpy(p->buf + p->len, s, sizeof(p->buf) - 4 - p->len);
    memcpy(p->buf + sizeof(p->buf) - 4, "...", 4);
    p->len = sizeof(p->buf) - 1;
    return;
  }
  memcpy(p->buf + p->len, s, n + 1);
  p->len += n;
}

static int is_identifier(const char *key) {
  if (!isalpha((unsigned char)key[0]) && key[0] != '_')
    return 0;
  for (const char *c = key; *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      return 0;
  return 1;
}

size_t tally_jpath_key(tally_jpath_t *p, const char *key) {
  size_t old = p->len;
  if (is_identifier(key)) {
    if (p->len > 0)
      jpath_append(p, ".");
    jpath_append(p, key);
    return old;
  }
  /* Anything else is quoted, with quotes and control bytes escaped. */
  char quoted[128];
  size_t q = 0;
  quoted[q++] = '[';
  quoted[q++] = '"';
  for (const char *c = key; *c && q < sizeof(quoted) - 8; c++) {
    unsigned char ch = (unsigned char)*c;
    if (ch == '"' || ch == '\\') {
      quoted[q++] = '\\';
      quoted[q++] = (char)ch;
    } else if (ch < 0x20) {
      q += (size_t)snprintf(quoted + q, sizeof(quoted) - q, "\\u%04x", ch);
    } else {
      quoted[q++] = (char)ch;
    }
  }
  quoted[q++] = '"';
  quoted[q++] = ']';
  quoted[q] = '\0';
  jpath_append(p, quoted);
  return old;
}

size_t tally_jpath_index(tally_jpath_t *p, size_t i) {
  size_t old = p->len;
  char idx[32];
  snprintf(idx, sizeof(idx), "[%zu]", i);
  jpath_append(p, idx);
  return old;
}

void tally_jpath_restore(tally_jpath_t *p, size_t len) {
  if (len < sizeof(p->buf)) {
    p->len = len;
    p->buf[len] = '\0';
  }
}

void tally_diag_init(tally_diag_t *d, const char *file) {
  d->file = file;
  d->msgs = NULL;
  d->count = 0;
  d->dropped = 0;
}

void tally_diag_close(tally_diag_t *d) {
  for (size_t i = 0; i < d->count; i++)
    free(d->msgs[i]);
  free(d->msgs);
  d->msgs = NULL;
  d->count = 0;
  d->dropped = 0;
}

/* Keeps msg (taking ownership) or, past the limit or out of memory, counts
 * it as dropped and frees it. */
static void diag_keep(tally_diag_t *d, char *msg) {
  if (msg == NULL || d->count >= TALLY_DIAG_MAX) {
    free(msg);
    d->dropped++;
    return;
  }
  if ((d->count & (d->count - 1)) == 0) {
    size_t cap = d->count ? d->count * 2 : 4;
    char **grown = realloc(d->msgs, cap * sizeof(*grown));
    if (grown == NULL) {
      free(msg);
      d->dropped++;
      return;
    }
    d->msgs = grown;
  }
  d->msgs[d->count++] = msg;
}

int tally_diag_add(tally_diag_t *d, const tally_jpath_t *path, const char *fmt,
                   ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);

  const char *file = d->file ? d->file : "";
  const char *where = path && path->len ? path->buf : NULL;
  size_t need = strlen(file) + strlen(text) + 8 + (where ? strlen(where) : 0);
  char *msg = malloc(need);
  if (msg != NULL) {
    if (where)
      snprintf(msg, need, "%s%s%s: %s", file, *file ? ": " : "", where, text);
    else
      snprintf(msg, need, "%s%s%s", file, *file ? ": " : "", text);
  }
  diag_keep(d, msg);
  return TALLY_ECONFIG;
}

size_t tally_diag_count(const tally_diag_t *d) {
  return d->count + d->dropped;
}

void tally_diag_move(tally_diag_t *dst, tally_diag_t *src) {
  for (size_t i = 0; i < src->count; i++)
    diag_keep(dst, src->msgs[i]);
  dst->dropped += src->dropped;
  free(src->msgs);
  src->msgs = NULL;
  src->count = 0;
  src->dropped = 0;
}
