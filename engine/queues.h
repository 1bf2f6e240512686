/* Which queues a tallyd consumes (docs/operations.md#queues): those of
 * --queues, or else the default queue and every queue a contest config
 * names. */
#ifndef TALLY_QUEUES_H
#define TALLY_QUEUES_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/contests.h"

typedef struct tally_queues_s {
  char **names; /* the default queue (when consumed) first, then sorted */
  size_t n;
} tally_queues_t;

/* Fills q from list (comma-separated names, already checked; NULL: the
 * default queue and every queue of cs). Returns 0 or TALLY_ENOMEM. */
int tally_queues_pick(tally_queues_t *q, const char *list,
                      const char *default_queue, const tally_contestset_t *cs);
void tally_queues_free(tally_queues_t *q);

/* Whether q holds name. */
bool tally_queues_has(const tally_queues_t *q, const char *name);

/* The first contest of cs whose queue (its config's, or default_queue) q
 * does not hold, or NULL; *queue gets that queue. */
const tally_contest_t *tally_queues_unconsumed(const tally_queues_t *q,
                                               const char *default_queue,
                                               const tally_contestset_t *cs,
                                               const char **queue);

#endif
