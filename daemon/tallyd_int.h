/* What tallyd's two parts share (daemon/tallyd.c: start, signals,
 * operations and shutdown; daemon/tallyd_configs.c: the task configs'
 * snapshots, their check and reloads): the daemon's state and the
 * functions each offers the other. */
#ifndef TALLY_TALLYD_INT_H
#define TALLY_TALLYD_INT_H

#include "daemon/api.h"
#include "daemon/dispatch.h"
#include "daemon/embedded.h"
#include "daemon/front.h"
#include "daemon/http.h"
#include "daemon/notify.h"
#include "daemon/ops.h"
#include "daemon/pidfile.h"
#include "daemon/pool.h"
#include "daemon/rescore_child.h"
#include "daemon/settings.h"
#include "daemon/snapfiles.h"
#include "engine/contests.h"
#include "engine/plugins.h"
#include "engine/queues.h"
#include "engine/taskset.h"
#include "redis/keys.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tallyd_s {
  uv_loop_t *loop;
  tally_settings_t set;
  tally_log_t log;
  bool embedded;
  tally_embedded_t emb;
  bool pool_up;
  tally_pool_t pool;
  /* One dispatcher per queue consumed, sharing the pool; ndisps are
   * initialised, drained and closed of them. */
  tally_queues_t queues;
  tally_dispatch_t *disps;
  size_t ndisps, ndrained, nclosed;
  tally_dispatch_group_t group;
  bool rescore_child_up;      /* resc is initialised (--auto-rescore) */
  tally_judge_client_t judge; /* --judge-url */
  bool judge_up;
  bool rescored; /* the rescore at start has been asked for */
  tally_rescore_child_t resc;
  bool pidfile_written;
  int pidfile_fd; /* holds the lock on --pidfile; -1 when none */
  uv_signal_t sigterm, sigint, sighup;
  /* Operations: the HTTP listener, systemd's notify socket, and their
   * timers (docs/operations.md). */
  tally_ops_t ops;
  tally_front_t front; /* HTTP and the results API, on their own thread */
  bool http_up;
  tally_notify_t notify;
  uv_timer_t ops_timer, watchdog;
  bool notified_ready;
  uint64_t status_next, status_done, status_ms;
  char snap_root[PATH_MAX]; /* the snapshots of the task configs */
  unsigned snap_gen;
  char *snap; /* what the workers load now */
  /* Snapshots replaced while a rescore child still reads one: removed
   * once it has exited. */
  char **retired;
  size_t nretired;
  bool stopping;
  int exit_code;
  /* A reload runs in libuv's thread pool (its file I/O must not stall the
   * loop): one at a time, and a SIGHUP meanwhile runs one more after. */
  uv_work_t reload;
  bool reloading, reload_again;
  char *reload_path; /* the new snapshot, or NULL */
  int reload_rc;
  char reload_error[1024]; /* the reload's first config error, or "" */
  /* The contest configs in force, and those a reload checked, to put in
   * force with its snapshot. With HTTP up, those in force are the API's,
   * on its thread (tally_front_api, tally_front_configs): these are then
   * empty. */
  tally_contestset_t contests, reload_contests;
  tally_scoring_t scoring, reload_scoring; /* kept for the API's views */
} tallyd_t;

/* tallyd_configs.c. */

/* Snapshots and checks the task configs. Returns 0 with *path set (the
 * caller frees it), or an error, logged, with the snapshot removed. */
int load_configs(tallyd_t *t, char **path, tally_contestset_t *contests,
                 tally_scoring_t *keep);
/* The snapshot folder of a workers' path (the path itself, or its folder
 * when --tasks is a file), into dir (len bytes). */
void snapshot_dir(const tallyd_t *t, const char *path, char *dir, size_t len);
/* Warns of a contest whose queue this tallyd does not consume. */
void warn_unconsumed(tallyd_t *t, const tally_contestset_t *cs);
/* Removes the snapshots retired while a rescore child ran. */
void remove_retired(tallyd_t *t);
/* The rescore child's exit hook (data is the tallyd_t). */
void on_rescore_exited(void *data);
/* Snapshots and checks the configs again in the thread pool, then puts
 * them in force (SIGHUP). */
void start_reload(tallyd_t *t);

#endif
