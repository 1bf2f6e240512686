/* The primitives that compare JSON values: exact_match,
 * exact_match_ratio, numeric_tolerance, coverage_ratio and set_overlap;
 * and the equality they share. */
#include "config/json.h"
#include "primitives/primitive.h"

#include <math.h>
#include <stdint.h>
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
    /* Texts that differ before a NUL differ; only equal ones need their
     * lengths, which a NUL inside may make longer than strlen's. */
    if (strcmp(a->valuestring, b->valuestring) != 0)
      return false;
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

/* A hash that agrees with tally_json_equal: equal values hash alike. A
 * string hashes its text up to a NUL (equal strings share it), a number
 * its value (0 and -0 alike), an object the sum of its members' hashes
 * (so that their order does not count). */
static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdu;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53u;
  return h ^ (h >> 33);
}

static uint64_t hash_text(const char *s, uint64_t h) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 0x100000001b3u;
  return h;
}

static uint64_t json_hash(const cJSON *v) {
  if (cJSON_IsBool(v))
    return cJSON_IsTrue(v) ? 0x9e37u : 0x7f4au;
  if (cJSON_IsNumber(v)) {
    double x = v->valuedouble + 0.0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    return mix(bits ^ 0x51u);
  }
  if (cJSON_IsString(v))
    return mix(hash_text(v->valuestring, 0xcbf29ce484222325u));
  uint64_t h = cJSON_IsArray(v) ? 0xa11u : cJSON_IsObject(v) ? 0x0b1u : 0x11u;
  for (const cJSON *x = v->child; x != NULL; x = x->next) {
    if (cJSON_IsArray(v))
      h = mix(h * 31 + json_hash(x));
    else
      h += mix(hash_text(x->string, 0x811c9dc5u) ^ json_hash(x));
  }
  return mix(h);
}

/* A set of JSON values by tally_json_equal, open addressing. */
typedef struct jset_s {
  const cJSON **items;
  uint64_t *hashes;
  size_t cap, n;
} jset_t;

static bool jset_init(jset_t *s, size_t expected) {
  s->cap = 16;
  while (s->cap < expected * 2 + 1)
    s->cap *= 2;
  s->n = 0;
  s->items = calloc(s->cap, sizeof(*s->items));
  s->hashes = calloc(s->cap, sizeof(*s->hashes));
  return s->items != NULL && s->hashes != NULL;
}

static void jset_close(jset_t *s) {
  free(s->items);
  free(s->hashes);
}

/* The slot of v in s: where it is, or the empty one it would go to. */
static size_t jset_slot(const jset_t *s, const cJSON *v, uint64_t h) {
  size_t i = (size_t)h & (s->cap - 1);
  while (s->items[i] != NULL &&
         !(s->hashes[i] == h && tally_json_equal(s->items[i], v)))
    i = (i + 1) & (s->cap - 1);
  return i;
}

/* Adds v (of hash h); true when it was not there. The set was made for
 * at least as many items as are added. */
static bool jset_add(jset_t *s, const cJSON *v, uint64_t h) {
  size_t i = jset_slot(s, v, h);
  if (s->items[i] != NULL)
    return false;
  s->items[i] = v;
  s->hashes[i] = h;
  s->n++;
  return true;
}

static bool jset_has(const jset_t *s, const cJSON *v, uint64_t h) {
  return s->items[jset_slot(s, v, h)] != NULL;
}

/* The set of the items of array a. */
static bool jset_of(jset_t *s, const cJSON *a) {
  if (!jset_init(s, (size_t)cJSON_GetArraySize(a)))
    return false;
  for (const cJSON *x = a->child; x != NULL; x = x->next)
    jset_add(s, x, json_hash(x));
  return true;
}

static double no_memory(tally_prim_note_t *note) {
  note->error = true;
  snprintf(note->message, sizeof(note->message), "out of memory");
  return 0;
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
  jset_t answer, truth;
  bool ok = jset_of(&answer, in->value);
  ok = jset_init(&truth, (size_t)cJSON_GetArraySize(in->truth)) && ok;
  size_t covered = 0;
  for (const cJSON *y = in->truth->child; ok && y != NULL; y = y->next) {
    uint64_t h = json_hash(y);
    if (jset_add(&truth, y, h))
      covered += jset_has(&answer, y, h);
  }
  size_t distinct = truth.n;
  jset_close(&answer);
  jset_close(&truth);
  if (!ok)
    return no_memory(note);
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
  jset_t a, b;
  bool ok = jset_of(&a, in->value);
  ok = jset_of(&b, in->truth) && ok;
  size_t na = a.n, nb = b.n, both = 0;
  for (size_t i = 0; ok && i < a.cap; i++)
    both += a.items[i] != NULL && jset_has(&b, a.items[i], a.hashes[i]);
  jset_close(&a);
  jset_close(&b);
  if (!ok)
    return no_memory(note);
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
