/* Shared by spec.c and spec_check.c: completing a decoded spec and
 * checking it. */
#ifndef TALLY_ES_SPEC_INT_H
#define TALLY_ES_SPEC_INT_H

#include "evalspecs/spec.h"

/* Trims the identifiers, defaults the strategy to weighted, fills in the
 * source, direction and normalization of built-in dimension keys and the
 * direction of sources that are always "higher" (as the reference does
 * before its checks). Never fails: it only shortens strings in place. */
void tally__es_complete(tally_es_spec_t *s);

/* The reference's checks, every failure reported to d under path (the
 * spec's own). Returns 0 or TALLY_ECONFIG. */
int tally__es_check(tally_es_spec_t *s, tally_diag_t *d,
                    const tally_jpath_t *path);

#endif
