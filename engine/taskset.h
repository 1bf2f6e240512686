/* Loads the task configs of a file or a folder, and finds tasks by name. */
#ifndef TALLY_TASKSET_H
#define TALLY_TASKSET_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/task.h"

/* The length of a config version: hex digits, without the NUL. */
#define TALLY_VERSION_LEN 16

typedef struct tally_taskset_entry_s {
  tally_task_t *task;
  char *file; /* the file the task came from */
  /* The version of the task's config (tally_config_version); "" for an
   * entry built by hand. */
  char version[TALLY_VERSION_LEN + 1];
} tally_taskset_entry_t;

typedef struct tally_taskset_s {
  tally_taskset_entry_t *entries; /* sorted by task name */
  size_t count;
} tally_taskset_t;

void tally_taskset_init(tally_taskset_t *ts);
void tally_taskset_close(tally_taskset_t *ts);

/* Loads path: one task file, or every *.json file in a folder (in name
 * order), with the version of each, and the expected outputs of tasks
 * whose type compares outputs (from their data folder, docs/tasktypes.md),
 * once per load. Every error in every file goes to d,
 * including two files that use one task name and a folder with no task. Returns
 * 0, or TALLY_ECONFIG (or TALLY_EIO for an unreadable path) with ts empty. */
int tally_taskset_load(tally_taskset_t *ts, const tally_registry_t *reg,
                       const char *path, tally_diag_t *d);

/* Returns the task called name, or NULL. */
const tally_task_t *tally_taskset_find(const tally_taskset_t *ts,
                                       const char *name);

/* The version of the task config whose JSON text is text (len bytes):
 * TALLY_VERSION_LEN lowercase hex digits of the 64-bit FNV-1a hash of the
 * JSON as cJSON_PrintUnformatted prints it, so that whitespace between
 * tokens does not change it. Writes the digits and a NUL to version.
 * Returns 0; TALLY_EINVAL when text is not JSON; or TALLY_ENOMEM. */
int tally_config_version(const char *text, size_t len,
                         char version[TALLY_VERSION_LEN + 1]);

/* The version of task, which must be one of ts's tasks: a string in ts,
 * valid as long as ts. Returns NULL when task is not in ts. For a task
 * with expected outputs, it is tally_config_version's hash continued over
 * each output (its length, then its bytes), so an output changes it too. */
const char *tally_taskset_version(const tally_taskset_t *ts,
                                  const tally_task_t *task);

/* The largest task config, and the largest expected output (or other
 * data file), that tally reads. */
#define TALLY_CONFIG_FILE_MAX (4u * 1024 * 1024)
#define TALLY_DATA_FILE_MAX (256u * 1024 * 1024)

/* Reads a whole regular file of at most max bytes into a NUL-terminated
 * malloc'ed buffer. A FIFO, a device, a socket or a folder is refused
 * without reading (and opening a FIFO does not wait). Returns 0; or
 * TALLY_EIO, TALLY_EINVAL (not a regular file), TALLY_E2BIG (too large)
 * or TALLY_ENOMEM with err naming the file and the cause. */
int tally_read_file_max(const char *path, size_t max, char **text, size_t *len,
                        char *err, size_t errlen);

/* The paths (dir/NAME, sorted) of the *.json files of dir, hidden ones
 * left out, for which keep(NAME) is true. Returns 0 with *paths (free
 * them with tally_free_paths) and *count; or TALLY_EIO or TALLY_ENOMEM
 * with the cause in d. */
int tally_json_files(const char *dir, bool (*keep)(const char *name),
                     char ***paths, size_t *count, tally_diag_t *d);
void tally_free_paths(char **paths, size_t n);

/* tally_read_file_max with TALLY_DATA_FILE_MAX. */
int tally_read_file(const char *path, char **text, size_t *len, char *err,
                    size_t errlen);

#endif
