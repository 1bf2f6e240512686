/* The files of tallyd's config snapshots: the task configs the workers
 * load are a private copy made when tallyd starts and on each accepted
 * SIGHUP, with the data folders of their expected outputs, so that a file
 * edited on disk, even a broken one, never reaches a worker that starts
 * later; only a reload that passes the check does. These copy and remove
 * them. */
#ifndef TALLY_SNAPFILES_H
#define TALLY_SNAPFILES_H

#include <stdbool.h>
#include <stddef.h>

/* Formats into buf; returns 0, or -1 when the text did not fit. */
int tally_fmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Removes the files and folders of dir and dir itself. */
void tally_remove_dir(const char *dir);

/* Copies the regular file from (at most max bytes) to to. Returns 0, or
 * an error code with err naming the file and the cause. */
int tally_copy_file(const char *from, const char *to, size_t max, char *err,
                    size_t errlen);

/* Copies the data folder of the task file from (its files, one level)
 * into the same place relative to the snapshot folder dest. Returns 0,
 * or an error code with err set. */
int tally_copy_data(const char *from, const char *dest, char *err,
                    size_t errlen);

/* Whether name is a *.json file name, not hidden. */
bool tally_is_json_name(const char *name);

/* Removes the snapshot folders that tallyds killed with SIGKILL left in
 * tmp: "tallyd-PID-XXXXXX" whose PID is no longer running. */
void tally_remove_stale_snapshots(const char *tmp);

/* Copies the *.json files of the --contests folder contests into the
 * snapshot folder dir, where the workers find contests beside their
 * tasks: each as NAME.contest.json, participants.json as it is. A file the
 * tasks folder gave already is an error. Returns 0, or a negative code
 * with err naming the file. */
int tally_snapshot_contests(const char *contests, const char *dir, char *err,
                            size_t errlen);

#endif
