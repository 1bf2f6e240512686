/* The table of built-in score types, in the order of docs/config.md. */
#include "scoretypes/scoretype.h"

#include <stddef.h>

const tally_score_type_t *const tally_score_types[] = {
    &tally_score_sum,
    &tally_score_group_min,
    &tally_score_group_mul,
    &tally_score_group_threshold,
    NULL,
};
