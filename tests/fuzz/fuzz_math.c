/* A libFuzzer target for math_equivalence's reader (evalspecs/mathexpr.h):
 * arbitrary bytes normalized (the first byte chooses whether an answer is
 * extracted after "####"), parsed, keyed and evaluated, and the raw bytes
 * parsed as they are. Checks that a normalized text is trimmed and
 * brace-free and that the same text gives the same key twice; the
 * sanitizers catch the rest (deep nesting, huge literals and division by
 * zero must stop with a reason, never crash). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/error.h"
#include "evalspecs/mathexpr.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The key of s, parsed afresh; NULL when it does not parse or key. */
static char *key_of(const char *s) {
  char err[512], *key = NULL;
  tally_mx_t *e;
  int rc = tally_mx_parse(s, &e, err, sizeof(err));
  if (rc == TALLY_ENOMEM)
    abort();
  if (rc != 0)
    return NULL;
  rc = tally_mx_key(e, &key, err, sizeof(err));
  if (rc == TALLY_ENOMEM)
    abort();
  double v;
  if (tally_mx_eval(e, &v, err, sizeof(err)) == TALLY_ENOMEM)
    abort();
  tally_mx_free(e);
  return rc == 0 ? key : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  char *text = malloc(size);
  if (text == NULL)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  /* The raw bytes up to a NUL, as the parser's own input. */
  free(key_of(text));
  char *norm, err[512];
  int rc =
      tally_mx_normalize(text, data[0] & 1, "####", &norm, err, sizeof(err));
  if (rc == TALLY_ENOMEM)
    abort();
  if (rc == 0) {
    size_t n = strlen(norm);
    if (n == 0 || norm[0] == ' ' || norm[n - 1] == ' ' ||
        strchr(norm, '{') != NULL || strchr(norm, '}') != NULL) {
      fprintf(stderr, "normalized badly: \"%s\"\n", norm);
      abort();
    }
    char *a = key_of(norm), *b = key_of(norm);
    if ((a == NULL) != (b == NULL) || (a != NULL && strcmp(a, b) != 0))
      abort();
    free(a);
    free(b);
    free(norm);
  }
  free(text);
  return 0;
}
