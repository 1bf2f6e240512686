/* Decodes task configs: one JSON object per task, strictly. */
#ifndef TALLY_TASK_H
#define TALLY_TASK_H

#include "config/diag.h"
#include "engine/registry.h"

/* Decodes the task config text (len bytes; d->file names it in errors)
 * with the score types of reg. On success returns 0 and stores a new task
 * in *out, which the caller frees with tally_task_free. On error returns
 * TALLY_ECONFIG with every problem found recorded in d, and *out is NULL. */
int tally_task_parse(const tally_registry_t *reg, const char *text, size_t len,
                     tally_diag_t *d, tally_task_t **out);

/* Frees task and everything it owns. NULL is allowed. */
void tally_task_free(tally_task_t *task);

#endif
