/* tallyd's automatic rescore: runs `tally rescore` as a child process, one
 * at a time, after a start, a reload, or results that came back stale.
 * What the child writes goes into tallyd's log, a line an event
 * ("rescore.output" from its stdout, "rescore.stderr" from its stderr). */
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

/* A line of the child's output longer than this is logged in pieces. */
#define TALLY_RESCORE_LINE_MAX 2048
/* How long after the child's exit its pipes are read, for output a
 * grandchild that holds them open might still write. */
#define TALLY_RESCORE_DRAIN_MS 1000

typedef struct tally_rescore_child_options_s {
  const char *tally;         /* the tally executable */
  const char *url;           /* --redis */
  const char *prefix;        /* --prefix */
  const char *default_queue; /* --default-queue (the rescore goes over it
                                and every queue of <p>:queues) */
  const char *plugins;       /* --plugins, or NULL */
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
  /* The child's stdout and stderr, each with the line read so far. A
   * child is done once it has exited and both pipes are closed (at their
   * end, or TALLY_RESCORE_DRAIN_MS after the exit, whichever is first):
   * exit and end of pipe come in either order. */
  struct tally_rescore_pipe_s {
    uv_pipe_t pipe;
    struct tally_rescore_child_s *owner;
    bool is_stderr;
    size_t len;
    char line[TALLY_RESCORE_LINE_MAX];
    char buf[4096]; /* what one read gives */
  } out[2];
  int open_handles; /* of proc, out[0].pipe and out[1].pipe */
  bool exited;
  int64_t status;        /* once exited */
  int term_signal;       /* once exited */
  uv_timer_t kill_timer; /* SIGKILL when SIGTERM was not enough; after the
                            exit, the drain's deadline */
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
