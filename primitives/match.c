/* The primitives that compare JSON values: exact_match,
 * exact_match_ratio, numeric_tolerance, coverage_ratio and set_overlap;
 * and the equality they share. */
#include "config/json.h"
#include "primitives/primitive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tally_json_equal(const cJSON *a, const cJSON *b) {
  if (a == NULL || b == NULL)
    return a == b;
  int ta = a->type & 0xff, tb = b->type & 0xff;
  /* cJSON gives true and false two types: a boolean is one type here. */
  if (cJSON_IsBool(a) && cJSON_IsBool(b))
    return cJSON_IsTrue(a) == cJSON_IsTrue(b);
  if (ta != tb)
    return false;
  if (cJSON_IsNumber(a))
    return a->valuedouble == b->valuedouble;
  if (cJSON_IsString(a)) {
    size_t na = tally_json_strlen(a), nb = tally_json_strlen(b);
    return na == nb && memcmp(a->valuestring, b->valuestring, na) == 0;
  }
  if (cJSON_IsArray(a)) {
    const cJSON *x = a->child, *y = b->child;
    for (; x != NULL && y != NULL; x = x->next, y = y->next)
      if (!tally_json_equal(x, y))
        return false;
    return x == NULL && y == NULL;
  }
  if (cJSON_IsObject(a)) {
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
      return false;
    for (const cJSON *x = a->child; x != NULL; x = x->next) {
      const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
      if (y == NULL || !tally_json_equal(x, y))
        return false;
    }
    return true;
  }
  return true; /* null */
}

/* Whether the first n items of the list starting at first hold one equal
 * to v. */
static bool among(const cJSON *first, size_t n, const cJSON *v) {
  for (const cJSON *x = first; x != NULL && n > 0; x = x->next, n--)
    if (tally_json_equal(x, v))
      return true;
  return false;
}

size_t tally_json_distinct(const cJSON *a) {
  size_t n = 0, at = 0;
  for (const cJSON *x = a->child; x != NULL; x = x->next, at++)
    if (!among(a->child, at, x))
      n++;
  return n;
}

bool tally_json_contains(const cJSON *a, const cJSON *v) {
  return among(a->child, (size_t)-1, v);
}

static bool is_array(const cJSON *v) {
  return cJSON_IsArray(v);
}

/* exact_match */

static double exact_score(const void *state, const tally_prim_input_t *in,
                          tally_prim_note_t *note) {
  (void)state;
  (void)note;
  return tally_json_equal(in->value, in->truth) ? 1000.0 : 0.0;
}

const tally_primitive_t tally_prim_exact_match = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "exact_match",
    .flags = TALLY_PRIM_FIELD,
    .score = exact_score,
};

/* exact_match_ratio */

static double ratio_score(const void *state, const tally_prim_input_t *in,
                          tally_prim_note_t *note) {
  (void)state;
  (void)note;
  int total = cJSON_GetArraySize(in->truth);
  if (total == 0)
    return cJSON_GetArraySize(in->value) == 0 ? 1000.0 : 0.0;
  int correct = 0;
  const cJSON *x = in->value->child, *y = in->truth->child;
  for (; x != NULL && y != NULL; x = x->next, y = y->next)
    correct += tally_json_equal(x, y);
  return (double)correct / total * 1000.0;
}

const tally_primitive_t tally_prim_exact_match_ratio = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "exact_match_ratio",
    .flags = TALLY_PRIM_FIELD,
    .accepts = is_array,
    .score = ratio_score,
};

/* numeric_tolerance */

static const char *const tolerance_params[] = {"tolerance", NULL};

static int tolerance_parse(const cJSON *dim, void **state, tally_diag_t *d,
                           tally_jpath_t *path) {
  double tol = 0.01;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(dim, "tolerance");
  if (t != NULL) {
    size_t old = tally_jpath_key(path, "tolerance");
    int rc = 0;
    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0)
      rc = tally_diag_add(d, path, "must be a number, at least 0");
    tally_jpath_restore(path, old);
    if (rc != 0)
      return rc;
    tol = t->valuedouble;
  }
  double *s = malloc(sizeof(*s));
  if (s == NULL)
    return tally_diag_add(d, path, "out of memory");
  *s = tol;
  *state = s;
  return 0;
}

/* A number, or an array of numbers. */
static bool numbers(const cJSON *v) {
  if (cJSON_IsNumber(v))
    return true;
  if (!cJSON_IsArray(v))
    return false;
  for (const cJSON *x = v->child; x != NULL; x = x->next)
    if (!cJSON_IsNumber(x))
      return false;
  return true;
}

static double tolerance_score(const void *state, const tally_prim_input_t *in,
                              tally_prim_note_t *note) {
  double tol = *(const double *)state;
  const cJSON *a = in->value, *b = in->truth;
  if (cJSON_IsNumber(a) != cJSON_IsNumber(b)) {
    note->error = true;
    snprintf(note->message, sizeof(note->message),
             "a %s against a ground truth that is %s",
             cJSON_IsNumber(a) ? "number" : "list of numbers",
             cJSON_IsNumber(b) ? "a number" : "a list of numbers");
    return 0;
  }
  if (cJSON_IsNumber(a))
    return fabs(a->valuedouble - b->valuedouble) <= tol ? 1000.0 : 0.0;
  if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
    return 0;
  for (const cJSON *x = a->child, *y = b->child; x != NULL;
       x = x->next, y = y->next)
    if (!(fabs(x->valuedouble - y->valuedouble) <= tol))
      return 0;
  return 1000.0;
}

const tally_primitive_t tally_prim_numeric_tolerance = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "numeric_tolerance",
    .flags = TALLY_PRIM_FIELD,
    .params = tolerance_params,
    .parse = tolerance_parse,
    .accepts = numbers,
    .score = tolerance_score,
    .free = free,
};

/* coverage_ratio */

static double coverage_score(const void *state, const tally_prim_input_t *in,
                             tally_prim_note_t *note) {
  (void)state;
  (void)note;
  size_t distinct = 0, covered = 0, at = 0;
  const cJSON *truth = in->truth;
  for (const cJSON *y = truth->child; y != NULL; y = y->next, at++) {
    if (among(truth->child, at, y))
      continue;
    distinct++;
    covered += tally_json_contains(in->value, y);
  }
  return distinct == 0 ? 1000.0 : (double)covered / (double)distinct * 1000.0;
}

const tally_primitive_t tally_prim_coverage_ratio = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "coverage_ratio",
    .flags = TALLY_PRIM_FIELD,
    .accepts = is_array,
    .score = coverage_score,
};

/* set_overlap */

static const char *const overlap_params[] = {"method", NULL};

enum { OVERLAP_INTERSECTION, OVERLAP_JACCARD };

static int overlap_parse(const cJSON *dim, void **state, tally_diag_t *d,
                         tally_jpath_t *path) {
  int method = OVERLAP_INTERSECTION;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(dim, "method");
  if (m != NULL) {
    size_t old = tally_jpath_key(path, "method");
    int rc = 0;
    if (cJSON_IsString(m) && strcmp(m->valuestring, "intersection") == 0)
      method = OVERLAP_INTERSECTION;
    else if (cJSON_IsString(m) && strcmp(m->valuestring, "jaccard") == 0)
      method = OVERLAP_JACCARD;
    else
      rc = tally_diag_add(d, path, "must be \"intersection\" or \"jaccard\"");
    tally_jpath_restore(path, old);
    if (rc != 0)
      return rc;
  }
  int *s = malloc(sizeof(*s));
  if (s == NULL)
    return tally_diag_add(d, path, "out of memory");
  *s = method;
  *state = s;
  return 0;
}

static double overlap_score(const void *state, const tally_prim_input_t *in,
                            tally_prim_note_t *note) {
  (void)note;
  const cJSON *a = in->value, *b = in->truth;
  size_t na = tally_json_distinct(a), nb = tally_json_distinct(b);
  size_t both = 0, at = 0;
  for (const cJSON *x = a->child; x != NULL; x = x->next, at++)
    if (!among(a->child, at, x) && tally_json_contains(b, x))
      both++;
  if (na == 0 && nb == 0)
    return 1000.0;
  if (*(const int *)state == OVERLAP_JACCARD)
    return (double)both / (double)(na + nb - both) * 1000.0;
  return nb == 0 ? 0.0 : (double)both / (double)nb * 1000.0;
}

const tally_primitive_t tally_prim_set_overlap = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "set_overlap",
    .flags = TALLY_PRIM_FIELD,
    .params = overlap_params,
    .parse = overlap_parse,
    .accepts = is_array,
    .score = overlap_score,
    .free = free,
};
