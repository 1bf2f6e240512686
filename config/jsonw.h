/* A growable byte buffer and a JSON writer on top of it. tally writes its
 * results with this rather than by building cJSON trees: a result with
 * full details has thousands of values, and printing a tree through
 * sprintf costs more than all of the scoring (see docs/performance.md). */
#ifndef TALLY_JSONW_H
#define TALLY_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Writes never fail on the spot: running out of memory sets oom, later
 * writes are ignored, and the caller checks oom once at the end. */
typedef struct tally_buf_s {
  char *data;
  size_t len;
  size_t cap;
  bool oom;
} tally_buf_t;

void tally_buf_init(tally_buf_t *b);
void tally_buf_close(tally_buf_t *b);
/* Empties b (and clears oom), keeping its memory. */
void tally_buf_reset(tally_buf_t *b);
/* Ensures room for n more bytes plus a NUL; returns false when out of
 * memory. */
bool tally_buf_reserve(tally_buf_t *b, size_t n);

/* Appends n bytes (or a string, or one byte), keeping data NUL-terminated.
 * These sit on the hot path of every result, hence inline. */
static inline void tally_buf_put(tally_buf_t *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap && !tally_buf_reserve(b, n))
    return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static inline void tally_buf_puts(tally_buf_t *b, const char *s) {
  tally_buf_put(b, s, strlen(s));
}

/* The text of b: "" before anything was put. */
static inline const char *tally_buf_text(const tally_buf_t *b) {
  return b->data != NULL ? b->data : "";
}

static inline void tally_buf_putc(tally_buf_t *b, char c) {
  tally_buf_put(b, &c, 1);
}

/* A JSON string literal with the needed escapes. */
void tally_json_str(tally_buf_t *b, const char *s);
/* The same for len bytes of s (NUL bytes escaped as \u0000). */
void tally_json_strn(tally_buf_t *b, const char *s, size_t len);
/* The shortest decimal that reads back as v, or null if v is not finite. */
void tally_json_num(tally_buf_t *b, double v);
/* Any cJSON value, verbatim; NULL writes null. */
void tally_json_value(tally_buf_t *b, const cJSON *v);

#endif
