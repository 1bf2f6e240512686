/* fuzzy_string: the Levenshtein similarity of two strings after Unicode
 * simple case folding and whitespace normalization (utf8proc's tables). */
#include "config/json.h"
#include "primitives/primitive.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <utf8proc.h>

/* Python's str.isspace: category Zs, or bidirectional class WS, B or S. */
static bool is_space(utf8proc_int32_t c) {
  const utf8proc_property_t *p = utf8proc_get_property(c);
  return p->category == UTF8PROC_CATEGORY_ZS ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_B ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

/* The simple case folding of c (CaseFolding.txt, statuses C and S):
 * utf8proc holds the full folding; where that is one code point it is
 * the simple one too. Where it is several (status F), the simple folding
 * is the lowercase mapping, except for U+0130, which has none. */
static utf8proc_int32_t fold(utf8proc_int32_t c) {
  utf8proc_int32_t seq[8];
  int last = 0;
  utf8proc_ssize_t n =
      utf8proc_decompose_char(c, seq, 8, UTF8PROC_CASEFOLD, &last);
  if (n == 1)
    return seq[0];
  if (c == 0x130)
    return c;
  return utf8proc_tolower(c);
}

/* Decodes s (len bytes; an invalid byte reads as U+FFFD), folds it and
 * normalizes its white space, into at most max code points of out.
 * Returns how many, and sets *cut when there were more. */
static size_t normalize(const char *s, size_t len, utf8proc_int32_t *out,
                        size_t max, bool *cut) {
  const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)s;
  size_t n = 0, i = 0;
  bool space = false;
  while (i < len) {
    utf8proc_int32_t c;
    utf8proc_ssize_t k =
        utf8proc_iterate(u + i, (utf8proc_ssize_t)(len - i), &c);
    if (k <= 0) {
      c = 0xfffd;
      k = 1;
    }
    i += (size_t)k;
    if (is_space(c)) {
      space = n > 0;
      continue;
    }
    size_t need = space ? 2 : 1;
    if (n + need > max) {
      *cut = true;
      break;
    }
    if (space)
      out[n++] = ' ';
    space = false;
    out[n++] = fold(c);
  }
  return n;
}

/* The Levenshtein distance of a and b, two rows of work. */
static size_t levenshtein(const utf8proc_int32_t *a, size_t na,
                          const utf8proc_int32_t *b, size_t nb, size_t *row) {
  for (size_t j = 0; j <= nb; j++)
    row[j] = j;
  for (size_t i = 1; i <= na; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= nb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

double tally_fuzzy_similarity(const char *a, size_t alen, const char *b,
                              size_t blen, bool *cut) {
  *cut = false;
  size_t max = TALLY_FUZZY_MAX;
  utf8proc_int32_t *ca = malloc(max * sizeof(*ca));
  utf8proc_int32_t *cb = malloc(max * sizeof(*cb));
  size_t *row = malloc((max + 1) * sizeof(*row));
  double sim = -1;
  if (ca != NULL && cb != NULL && row != NULL) {
    size_t na = normalize(a, alen, ca, max, cut);
    size_t nb = normalize(b, blen, cb, max, cut);
    size_t longer = na > nb ? na : nb;
    sim = longer == 0
              ? 1.0
              : 1.0 - (double)levenshtein(ca, na, cb, nb, row) / (double)longer;
  }
  free(ca);
  free(cb);
  free(row);
  return sim;
}

static bool is_string(const cJSON *v) {
  return cJSON_IsString(v);
}

static double fuzzy_score(const void *state, const tally_prim_input_t *in,
                          tally_prim_note_t *note) {
  (void)state;
  bool cut = false;
  double sim = tally_fuzzy_similarity(
      in->value->valuestring, tally_json_strlen(in->value),
      in->truth->valuestring, tally_json_strlen(in->truth), &cut);
  if (sim < 0) {
    note->error = true;
    snprintf(note->message, sizeof(note->message),
             "out of memory comparing the strings");
    return 0;
  }
  if (cut)
    snprintf(note->message, sizeof(note->message),
             "compared on the first %d code points of each string (after "
             "normalization): the strings are longer",
             TALLY_FUZZY_MAX);
  return sim * 1000.0;
}

const tally_primitive_t tally_prim_fuzzy_string = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "fuzzy_string",
    .flags = TALLY_PRIM_FIELD,
    .accepts = is_string,
    .score = fuzzy_score,
};
