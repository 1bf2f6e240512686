/* The score-type table: built-ins first, then plugin registrations. */
#include "engine/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tally_score_type_t *const builtins[] = {
    &tally_score_sum,
    &tally_score_group_min,
    &tally_score_group_mul,
    &tally_score_group_threshold,
    NULL,
};

int tally_registry_init(tally_registry_t *r) {
  char err[128];
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; builtins[i] != NULL; i++) {
    int rc = tally_registry_add(r, builtins[i], err, sizeof(err));
    if (rc != 0) {
      tally_registry_close(r);
      return rc;
    }
  }
  int rc = tally__registry_add_tasktypes(r);
  if (rc != 0)
    tally_registry_close(r);
  return rc;
}

void tally_registry_close(tally_registry_t *r) {
  free(r->types);
  tally__registry_close_tasktypes(r);
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
