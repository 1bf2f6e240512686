/* The json_answer comparator of model benchmarks (docs/comparators.md),
 * which engine/registry.c adds to the built-in comparators. */
#ifndef TALLY_ES_COMPARE_JSON_H
#define TALLY_ES_COMPARE_JSON_H

#include "tasktypes/comparator.h"

extern const tally_comparator_t tally_comparator_json_answer;

#endif
