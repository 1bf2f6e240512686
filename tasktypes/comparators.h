/* Finds the built-in comparators by name (docs/comparators.md). */
#ifndef TALLY_COMPARATORS_H
#define TALLY_COMPARATORS_H

#include "tasktypes/comparator.h"

/* The built-ins, NULL-terminated, in the order of docs/comparators.md. */
extern const tally_comparator_t *const tally_comparators[];

/* Returns the built-in comparator called name, or NULL. */
const tally_comparator_t *tally_comparator_find(const char *name);

#endif
