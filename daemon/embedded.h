/* The embedded Redis: a redis-server child that tallyd starts and
 * supervises when no --redis is given. It listens only on a Unix socket in
 * the data folder, with append-only persistence on, and is restarted with
 * a backoff if it dies. */
#ifndef TALLY_EMBEDDED_H
#define TALLY_EMBEDDED_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/log.h"

/* The files redis-server keeps in the data folder, beside its append-only
 * files (appendonlydir/). */
#define TALLY_EMBEDDED_SOCK "redis.sock"
#define TALLY_EMBEDDED_PIDFILE "redis.pid"
#define TALLY_EMBEDDED_LOGFILE "redis.log"

typedef struct tally_embedded_s {
  /* Read-only for users. */
  char url[160];     /* unix:///ABS/DATA/redis.sock */
  char dir[4096];    /* the data folder, absolute */
  uint64_t restarts; /* unexpected exits so far */
  bool running;      /* a child is alive; its pid is proc.pid */
  /* Private. */
  uv_loop_t *loop;
  tally_log_t *log;
  char *server; /* the redis-server executable */
  uv_process_t proc;
  uv_timer_t timer; /* restart backoff, and the stop deadline */
  uint64_t backoff_ms;
  uint64_t started_ms; /* loop time of the last spawn */
  bool proc_open;      /* proc is initialized and not yet closed */
  bool stopping;
  int handles; /* open handles */
  void (*stop_cb)(struct tally_embedded_s *e);
} tally_embedded_t;

/* Creates the data folder (with its parents; the folder itself is mode
 * 0700) and checks that the socket path fits. server is the executable
 * (NULL: "redis-server", searched in PATH); e copies it. log must outlive
 * e. A redis-server left over from an earlier tallyd that died (found
 * through the pid file in the folder, and checked to run in that folder)
 * is stopped first, blocking for up to a few seconds. Returns 0, or a
 * negative code with err naming the cause. On error e needs no stop; after
 * a 0 return, e must be stopped with tally_embedded_stop even if it is
 * never started, or its start fails. */
int tally_embedded_init(uv_loop_t *loop, tally_embedded_t *e,
                        const char *data_dir, const char *server,
                        tally_log_t *log, char *err, size_t errlen);

/* Spawns the server. Returns 0, or a negative code with err naming the
 * cause (TALLY_ENOENT: the executable is missing). A failed start is not
 * retried; later unexpected exits are, with a backoff from 200 ms to 5 s. */
int tally_embedded_start(tally_embedded_t *e, char *err, size_t errlen);

/* Stops the server with SIGTERM (it flushes the append-only file), and
 * SIGKILL after grace_ms. stop_cb (which may be NULL) runs once the child
 * is reaped and every handle is closed, never from within this call; then
 * e's memory may be freed. A second call does nothing. */
void tally_embedded_stop(tally_embedded_t *e, uint64_t grace_ms,
                         void (*stop_cb)(tally_embedded_t *e));

#endif
