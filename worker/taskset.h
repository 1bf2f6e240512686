/* Loads the task configs of a file or a folder, and finds tasks by name. */
#ifndef TALLY_TASKSET_H
#define TALLY_TASKSET_H

#include "../config/task.h"

typedef struct tally_taskset_entry_s {
  tally_task_t *task;
  char *file; /* the file the task came from */
} tally_taskset_entry_t;

typedef struct tally_taskset_s {
  tally_taskset_entry_t *entries; /* sorted by task name */
  size_t count;
} tally_taskset_t;

void tally_taskset_init(tally_taskset_t *ts);
void tally_taskset_close(tally_taskset_t *ts);

/* Loads path: one task file, or every *.json file in a folder (in name
 * order). Every error in every file goes to d, including two files that
 * use one task name and a folder with no task. Returns 0, or
 * TALLY_ECONFIG (or TALLY_EIO for an unreadable path) with ts empty. */
int tally_taskset_load(tally_taskset_t *ts, const tally_registry_t *reg,
                       const char *path, tally_diag_t *d);

/* Returns the task called name, or NULL. */
const tally_task_t *tally_taskset_find(const tally_taskset_t *ts,
                                       const char *name);

/* Reads a whole file into a NUL-terminated malloc'ed buffer. Returns 0 or
 * TALLY_EIO/TALLY_ENOMEM with err naming the file and the cause. */
int tally_read_file(const char *path, char **text, size_t *len, char *err,
                    size_t errlen);

#endif
