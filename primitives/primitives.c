/* The table of built-in primitives, in the order of docs/challenges.md. */
#include "primitives/primitive.h"

const tally_primitive_t *const tally_primitives[] = {
    &tally_prim_exact_match,       &tally_prim_exact_match_ratio,
    &tally_prim_numeric_tolerance, &tally_prim_fuzzy_string,
    &tally_prim_time_decay,        &tally_prim_coverage_ratio,
    &tally_prim_set_overlap,       &tally_prim_token_efficiency,
    &tally_prim_call_efficiency,   NULL,
};
