/* The table of built-in comparators. */
#include "comparators.h"

#include <string.h>

const tally_comparator_t *const tally_comparators[] = {
    &tally_comparator_white_diff,
    &tally_comparator_exact,
    &tally_comparator_normalized,
    NULL,
};

const tally_comparator_t *tally_comparator_find(const char *name) {
  for (size_t i = 0; tally_comparators[i] != NULL; i++)
    if (strcmp(tally_comparators[i]->name, name) == 0)
      return tally_comparators[i];
  return NULL;
}
