/* tallyd's --pidfile: its pid, under a lock held while it runs. */
#ifndef TALLY_PIDFILE_H
#define TALLY_PIDFILE_H

#include "daemon/log.h"

/* Writes this process's pid and a newline to path and holds an exclusive
 * lock on it (flock) through *fd, so that a second tallyd given the same
 * file refuses to start, and neither deletes the other's. Returns 0, or
 * -1 after logging why (the other's pid when it holds the lock). */
int tally_pidfile_take(const char *path, tally_log_t *log, int *fd);

#endif
