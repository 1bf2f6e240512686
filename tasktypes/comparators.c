/* The table of built-in comparators. */
#include "tasktypes/comparators.h"

#include <string.h>

const tally_comparator_t *const tally_comparators[] = {
    &tally_comparator_white_diff,
    &tally_comparator_exact,
    &tally_comparator_numeric_tolerance,
    &tally_comparator_normalized,
    &tally_comparator_regex,
    &tally_comparator_last_number,
    &tally_comparator_fuzzy,
    &tally_comparator_contains,
    &tally_comparator_token_f1,
    &tally_comparator_set_overlap,
    &tally_comparator_element_ratio,
    &tally_comparator_multichoice,
    &tally_comparator_answer_line,
    &tally_comparator_code_sandbox,
    NULL,
};

const tally_comparator_t *tally_comparator_find(const char *name) {
  for (size_t i = 0; tally_comparators[i] != NULL; i++)
    if (strcmp(tally_comparators[i]->name, name) == 0)
      return tally_comparators[i];
  return NULL;
}
