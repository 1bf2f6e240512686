/* The one table of everything a task config names: score types, task
 * types and comparators, the built-ins of scoretypes/ and tasktypes/ plus
 * any a plugin registered. */
#ifndef TALLY_REGISTRY_H
#define TALLY_REGISTRY_H

#include "primitives/primitive.h"
#include "scoretypes/scoretype.h"
#include "tasktypes/tasktype.h"

typedef struct tally_registry_s {
  const tally_score_type_t **types; /* borrowed; built-ins are static */
  size_t count;
  size_t cap;
  /* Task types and comparators, borrowed the same way. */
  const tally_task_type_t **task_types;
  size_t ntask_types, task_types_cap;
  const tally_comparator_t **comparators;
  size_t ncomparators, comparators_cap;
  /* The primitives of answer tasks' dimensions. */
  const tally_primitive_t **primitives;
  size_t nprimitives, primitives_cap;
} tally_registry_t;

/* Fills r with the built-in score types, task types and comparators.
 * Returns 0 or TALLY_ENOMEM. */
int tally_registry_init(tally_registry_t *r);
/* Frees the tables, not the types. */
void tally_registry_close(tally_registry_t *r);

/* Adds type, which must outlive r. Fails with TALLY_EEXIST if the name is
 * taken, TALLY_EINVAL if the version differs from TALLY_SCORE_TYPE_VERSION
 * or the methods are incomplete; err says which. Nothing changes on error. */
int tally_registry_add(tally_registry_t *r, const tally_score_type_t *type,
                       char *err, size_t errlen);

/* Returns the type called name, or NULL. */
const tally_score_type_t *tally_registry_find(const tally_registry_t *r,
                                              const char *name);

/* Add type or comparator, which must outlive r. Fail with TALLY_EEXIST if
 * the name is taken, TALLY_EINVAL if the version differs from the one
 * tally was built with or a method is missing; err says which. Nothing
 * changes on error. */
int tally_registry_add_task_type(tally_registry_t *r,
                                 const tally_task_type_t *type, char *err,
                                 size_t errlen);
int tally_registry_add_comparator(tally_registry_t *r,
                                  const tally_comparator_t *cmp, char *err,
                                  size_t errlen);

/* Return the task type or comparator called name, or NULL. */
const tally_task_type_t *
tally_registry_find_task_type(const tally_registry_t *r, const char *name);
const tally_comparator_t *
tally_registry_find_comparator(const tally_registry_t *r, const char *name);

/* Add a primitive, and find one by name: as for comparators. */
int tally_registry_add_primitive(tally_registry_t *r,
                                 const tally_primitive_t *prim, char *err,
                                 size_t errlen);
const tally_primitive_t *
tally_registry_find_primitive(const tally_registry_t *r, const char *name);

/* Writes the names of r's task types (or comparators), comma-separated,
 * into buf (cut to len). */
void tally_registry_task_type_names(const tally_registry_t *r, char *buf,
                                    size_t len);
void tally_registry_comparator_names(const tally_registry_t *r, char *buf,
                                     size_t len);

#endif
