/* The registry: built-ins first (the tables of scoretypes/ and
 * tasktypes/, and json_answer from evalspecs/), then plugin
 * registrations. */
#include "engine/registry.h"
#include "evalspecs/compare_json.h"
#include "tasktypes/comparators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tally_registry_init(tally_registry_t *r) {
  char err[128];
  int rc = 0;
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; rc == 0 && tally_score_types[i] != NULL; i++)
    rc = tally_registry_add(r, tally_score_types[i], err, sizeof(err));
  for (size_t i = 0; rc == 0 && tally_task_types[i] != NULL; i++)
    rc = tally_registry_add_task_type(r, tally_task_types[i], err, sizeof(err));
  for (size_t i = 0; rc == 0 && tally_comparators[i] != NULL; i++)
    rc = tally_registry_add_comparator(r, tally_comparators[i], err,
                                       sizeof(err));
  if (rc == 0)
    rc = tally_registry_add_comparator(r, &tally_comparator_json_answer, err,
                                       sizeof(err));
  for (size_t i = 0; rc == 0 && tally_primitives[i] != NULL; i++)
    rc = tally_registry_add_primitive(r, tally_primitives[i], err, sizeof(err));
  if (rc != 0)
    tally_registry_close(r);
  return rc;
}

void tally_registry_close(tally_registry_t *r) {
  free(r->types);
  free(r->task_types);
  free(r->comparators);
  free(r->primitives);
  memset(r, 0, sizeof(*r));
}

int tally_registry_add(tally_registry_t *r, const tally_score_type_t *type,
                       char *err, size_t errlen) {
  if (type->version != TALLY_SCORE_TYPE_VERSION) {
    snprintf(err, errlen, "score type version %d, but tally expects version %d",
             type->version, TALLY_SCORE_TYPE_VERSION);
    return TALLY_EINVAL;
  }
  if (type->name == NULL || type->name[0] == '\0') {
    snprintf(err, errlen, "score type has no name");
    return TALLY_EINVAL;
  }
  bool group = type->reduce != NULL && type->label != NULL;
  bool custom = type->parse != NULL && type->score != NULL;
  if (group == custom) {
    snprintf(err, errlen,
             "score type %s must set either reduce and label, or parse and "
             "score",
             type->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find(r, type->name) != NULL) {
    snprintf(err, errlen, "score type %s is already registered", type->name);
    return TALLY_EEXIST;
  }
  if (r->count == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 8;
    const tally_score_type_t **t = realloc(r->types, cap * sizeof(*t));
    if (t == NULL) {
      snprintf(err, errlen, "out of memory");
      return TALLY_ENOMEM;
    }
    r->types = t;
    r->cap = cap;
  }
  r->types[r->count++] = type;
  return 0;
}

const tally_score_type_t *tally_registry_find(const tally_registry_t *r,
                                              const char *name) {
  for (size_t i = 0; i < r->count; i++)
    if (strcmp(r->types[i]->name, name) == 0)
      return r->types[i];
  return NULL;
}

/* Grows a table of pointers by one slot. */
static int grow(const void ***items, size_t *cap, size_t count) {
  if (count < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 8;
  const void **n = realloc(*items, ncap * sizeof(*n));
  if (n == NULL)
    return TALLY_ENOMEM;
  *items = n;
  *cap = ncap;
  return 0;
}

int tally_registry_add_task_type(tally_registry_t *r,
                                 const tally_task_type_t *type, char *err,
                                 size_t errlen) {
  if (type->version != TALLY_TASK_TYPE_VERSION) {
    snprintf(err, errlen, "task type version %d, but tally expects version %d",
             type->version, TALLY_TASK_TYPE_VERSION);
    return TALLY_EINVAL;
  }
  if (type->name == NULL || type->name[0] == '\0') {
    snprintf(err, errlen, "task type has no name");
    return TALLY_EINVAL;
  }
  /* Only the built-in outcomes type decodes outcomes itself. */
  if (type->evaluate == NULL && type != &tally_task_type_outcomes &&
      type != &tally_task_type_answer && type != &tally_task_type_agent_run) {
    snprintf(err, errlen, "task type %s must set evaluate", type->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find_task_type(r, type->name) != NULL) {
    snprintf(err, errlen, "task type %s is already registered", type->name);
    return TALLY_EEXIST;
  }
  if (grow((const void ***)&r->task_types, &r->task_types_cap,
           r->ntask_types) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  r->task_types[r->ntask_types++] = type;
  return 0;
}

int tally_registry_add_comparator(tally_registry_t *r,
                                  const tally_comparator_t *cmp, char *err,
                                  size_t errlen) {
  if (cmp->version != TALLY_COMPARATOR_VERSION) {
    snprintf(err, errlen, "comparator version %d, but tally expects version %d",
             cmp->version, TALLY_COMPARATOR_VERSION);
    return TALLY_EINVAL;
  }
  if (cmp->name == NULL || cmp->name[0] == '\0') {
    snprintf(err, errlen, "comparator has no name");
    return TALLY_EINVAL;
  }
  if (cmp->compare == NULL) {
    snprintf(err, errlen, "comparator %s must set compare", cmp->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find_comparator(r, cmp->name) != NULL) {
    snprintf(err, errlen, "comparator %s is already registered", cmp->name);
    return TALLY_EEXIST;
  }
  if (grow((const void ***)&r->comparators, &r->comparators_cap,
           r->ncomparators) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  r->comparators[r->ncomparators++] = cmp;
  return 0;
}

const tally_task_type_t *
tally_registry_find_task_type(const tally_registry_t *r, const char *name) {
  for (size_t i = 0; i < r->ntask_types; i++)
    if (strcmp(r->task_types[i]->name, name) == 0)
      return r->task_types[i];
  return NULL;
}

const tally_comparator_t *
tally_registry_find_comparator(const tally_registry_t *r, const char *name) {
  for (size_t i = 0; i < r->ncomparators; i++)
    if (strcmp(r->comparators[i]->name, name) == 0)
      return r->comparators[i];
  return NULL;
}

/* Joins n names, each got through name_at, into buf. */
static void join_names(const void *const *items, size_t n,
                       const char *(*name_at)(const void *), char *buf,
                       size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                     name_at(items[i]));
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static const char *task_type_name(const void *p) {
  return ((const tally_task_type_t *)p)->name;
}

static const char *comparator_name(const void *p) {
  return ((const tally_comparator_t *)p)->name;
}

void tally_registry_task_type_names(const tally_registry_t *r, char *buf,
                                    size_t len) {
  join_names((const void *const *)r->task_types, r->ntask_types, task_type_name,
             buf, len);
}

void tally_registry_comparator_names(const tally_registry_t *r, char *buf,
                                     size_t len) {
  join_names((const void *const *)r->comparators, r->ncomparators,
             comparator_name, buf, len);
}

int tally_registry_add_primitive(tally_registry_t *r,
                                 const tally_primitive_t *prim, char *err,
                                 size_t errlen) {
  if (prim->version != TALLY_PRIMITIVE_VERSION) {
    snprintf(err, errlen, "primitive version %d, but tally expects version %d",
             prim->version, TALLY_PRIMITIVE_VERSION);
    return TALLY_EINVAL;
  }
  if (prim->name == NULL || prim->name[0] == '\0') {
    snprintf(err, errlen, "primitive has no name");
    return TALLY_EINVAL;
  }
  if (prim->score == NULL || (prim->params != NULL && prim->parse == NULL)) {
    snprintf(err, errlen,
             "primitive %s must set score (and parse, with "
             "params)",
             prim->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find_primitive(r, prim->name) != NULL) {
    snprintf(err, errlen, "primitive %s is already registered", prim->name);
    return TALLY_EEXIST;
  }
  if (grow((const void ***)&r->primitives, &r->primitives_cap,
           r->nprimitives) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  r->primitives[r->nprimitives++] = prim;
  return 0;
}

const tally_primitive_t *
tally_registry_find_primitive(const tally_registry_t *r, const char *name) {
  for (size_t i = 0; i < r->nprimitives; i++)
    if (strcmp(r->primitives[i]->name, name) == 0)
      return r->primitives[i];
  return NULL;
}
