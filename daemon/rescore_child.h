/* tallyd's automatic rescore: runs `tally rescore` as a child process, one
 * at a time, after a start, a reload, or results that came back stale. */
#ifndef TALLY_RESCORE_CHILD_H
#define TALLY_RESCORE_CHILD_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/log.h"

/* What a rescore covers: the tasks whose config version changed
 * (`--changed`), or the submissions last scored with another version than
 * the current one (`--stale`). */
typedef enum tally_rescore_kind_e {
  TALLY_RESCORE_CHANGED = 0,
  TALLY_RESCORE_STALE = 1,
  TALLY_RESCORE_KINDS
} tally_rescore_kind_t;

typedef struct tally_rescore_child_options_s {
  const char *tally;   /* the tally executable */
  const char *url;     /* --redis */
  const char *prefix;  /* --prefix */
  const char *plugins; /* --plugins, or NULL */
  tally_log_t *log;
  /* Called (if not NULL) each time a child has exited and been reaped,
   * before the next one starts: what it read may go. */
  void (*on_exited)(void *data);
  void *data;
} tally_rescore_child_options_t;

typedef struct tally_rescore_child_s {
  tally_rescore_child_options_t opt; /* strings copied */
  /* Read-only for users. */
  bool running;      /* a child runs */
  uint64_t started;  /* children spawned so far */
  uint64_t failures; /* children that could not start, or did not exit 0 */
  /* Private. */
  uv_loop_t *loop;
  char *tasks;                    /* --tasks of the next child */
  bool want[TALLY_RESCORE_KINDS]; /* runs asked for and not yet started */
  tally_rescore_kind_t kind;      /* of the running child */
  int pid;
  uv_process_t proc;
  uv_timer_t kill_timer; /* SIGKILL when SIGTERM was not enough */
  bool closing;
  void (*close_cb)(struct tally_rescore_child_s *r);
} tally_rescore_child_t;

/* Copies opt and prepares r; nothing runs before tally_rescore_child_run.
 * Returns 0, or TALLY_ENOMEM with nothing to close. */
int tally_rescore_child_init(uv_loop_t *loop, tally_rescore_child_t *r,
                             const tally_rescore_child_options_t *opt);

/* Sets the --tasks of the children started from now on (copied). Returns
 * 0, or TALLY_ENOMEM with the old path kept. */
int tally_rescore_child_set_tasks(tally_rescore_child_t *r, const char *tasks);

/* Asks for a rescore of that kind: it starts at once when no child runs,
 * or else once the running one has exited (asking twice meanwhile runs it
 * once). A child that cannot be spawned is logged and counted as a
 * failure; nothing is retried until the next call. Does nothing while r
 * closes. */
void tally_rescore_child_run(tally_rescore_child_t *r,
                             tally_rescore_kind_t kind);

/* Drops the runs asked for, sends SIGTERM to the running child (SIGKILL
 * after grace_ms), and calls close_cb (if not NULL) once the child is
 * reaped and every handle closed; then r's memory may be freed. */
void tally_rescore_child_close(tally_rescore_child_t *r, uint64_t grace_ms,
                               void (*close_cb)(tally_rescore_child_t *r));

#endif
