/* Finds score types by name: the built-ins plus any a plugin registered;
 * and task types and comparators the same way (tasktypes/tasktype.h). */
#ifndef TALLY_REGISTRY_H
#define TALLY_REGISTRY_H

#include "tasktypes/tasktype.h"
#include "scoretypes/scoretype.h"

typedef struct tally_registry_s {
  const tally_score_type_t **types; /* borrowed; built-ins are static */
  size_t count;
  size_t cap;
  /* Task types and comparators, borrowed the same way. */
  const tally_task_type_t **task_types;
  size_t ntask_types, task_types_cap;
  const tally_comparator_t **comparators;
  size_t ncomparators, comparators_cap;
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

#endif
