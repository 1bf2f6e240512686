/* The worker pool: N tally-worker processes, spawned with uv_spawn, fed
 * job batches over pipes (docs/worker-protocol.md). A worker that crashes,
 * exits, hangs or breaks the framing is killed and replaced, and its jobs
 * come back to the caller as failed, to be retried.
 *
 * The process must ignore SIGPIPE: a write to a worker that has just died
 * has to fail with EPIPE rather than kill the caller. The pool installs no
 * signal handler of its own (libuv reaps the workers). */
#ifndef TALLY_POOL_H
#define TALLY_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/log.h"
#include "daemon/metrics.h"

typedef struct tally_pool_s tally_pool_t;
typedef struct tally_pool_job_s tally_pool_job_t;
typedef struct tally__worker_s tally__worker_t;

/* A job, owned by the caller, who keeps it alive until the pool hands it
 * back through done_cb. */
struct tally_pool_job_s {
  const char *id; /* the stream entry id: 1..255 bytes, no NUL */
  size_t id_len;
  uint32_t deliveries;
  /* The queue it was read from (queue_len 0: none), which the worker
   * checks its contest against; at most TALLY_BATCH_QUEUE_MAX bytes. */
  const char *queue;
  size_t queue_len;
  const char *text; /* the job JSON */
  size_t len;
  bool alone; /* send it in a batch of its own (a suspect after a crash) */
  void *data; /* the caller's */
  /* Private. */
  tally_pool_job_t *next;
};

typedef enum tally_pool_status_e {
  TALLY_POOL_SCORED = 0,    /* body is the result (with its "id") */
  TALLY_POOL_JOB_ERROR = 1, /* body is {"submission","error"}: never retry */
  TALLY_POOL_FAILED = 2,    /* the worker died, hung or broke the framing:
                               body is a message naming the cause; retry */
  TALLY_POOL_TOKEN = 3,     /* a token job: body is the token,
                               {"submission","participant"} */
  TALLY_POOL_JUDGE = 4      /* a sample that needs a judge's verdict: body is
                               {"submission","prompt","system"} */
} tally_pool_status_t;

typedef struct tally_pool_outcome_s {
  tally_pool_job_t *job;
  tally_pool_status_t status;
  const char *body; /* valid only during done_cb; not NUL-terminated */
  size_t len;
} tally_pool_outcome_t;

/* Hands back the jobs of one batch, in the order they were submitted to
 * that batch. After this the pool no longer touches the jobs. done_cb may
 * call tally_pool_submit (to retry a job), tally_pool_reload,
 * tally_pool_release_queued and tally_pool_close; outcomes and their
 * bodies are only valid until it returns. */
typedef void (*tally_pool_done_cb)(tally_pool_t *p,
                                   tally_pool_outcome_t *outcomes, size_t n);

typedef struct tally_pool_options_s {
  const char *worker;  /* path of the tally-worker executable */
  const char *tasks;   /* --tasks DIR for the workers */
  const char *plugins; /* --plugins DIR, or NULL */
  /* --default-queue NAME: the queue of contests whose config names none
   * (NULL: the main queue). */
  const char *default_queue;
  unsigned workers;        /* how many processes: at least 1 */
  unsigned batch;          /* the most jobs in one batch; 0 means 1 */
  size_t batch_bytes;      /* the most job bytes in one batch (one job always
                              fits); 0 means 4 MiB */
  uint64_t job_timeout_ms; /* a batch of n jobs may take n times this;
                              0 means no deadline */
  tally_log_t *log;        /* NULL: log nothing */
  tally_pool_done_cb done_cb;
  void *data; /* the caller's */
} tally_pool_options_t;

struct tally_pool_s {
  tally_pool_options_t opt; /* strings copied */
  void *data;               /* = opt.data */
  /* Read-only for users. */
  size_t queued;     /* submitted, not yet sent to a worker */
  size_t inflight;   /* sent to a worker, not yet handed back */
  uint64_t spawned;  /* workers started so far */
  uint64_t replaced; /* workers killed or lost and replaced */
  /* The replaced ones by cause, indexed like tally_pool_causes: it exited
   * (or crashed) on its own, timed out, broke the framing, or its pipes
   * failed. */
  uint64_t restarts[4];
  tally_hist_t batch_time; /* a batch's time in a worker, seconds */
  /* Private. */
  uv_loop_t *loop;
  tally_pool_job_t *head, *tail; /* the queue */
  tally__worker_t *workers;      /* every worker whose handles are open */
  unsigned active;               /* workers that count towards opt.workers */
  unsigned generation;           /* bumped by tally_pool_reload */
  bool closing;
  bool dispatching, redispatch; /* dispatch is running; run it again */
  bool releasing;               /* a release loop is running */
  void (*close_cb)(tally_pool_t *p);
  uint64_t grace_ms;
  uv_timer_t respawn; /* backoff when workers die at start; while closing,
                         the grace period */
  uv_idle_t kick;     /* dispatches what submit queued, once a loop turn,
                         so that a burst is split between idle workers */
  unsigned handles;   /* the pool's own handles not yet closed */
  unsigned quick_deaths;
};

/* The causes of restarts, for the metrics' labels. */
extern const char *const tally_pool_causes[4];

/* The workers running now, and those of them scoring a batch. */
void tally_pool_count(const tally_pool_t *p, unsigned *alive, unsigned *busy);

/* Copies opt and spawns the workers. Returns 0, or a negative code with
 * err naming the cause (the executable cannot be spawned, or opt.workers
 * is 0). On error the pool needs no close, and p may be freed at once;
 * the handles of a failed spawn close on the loop's next run, without
 * touching p. A worker that starts but then cannot load its configs is
 * not an error here: it is logged and respawned after a backoff. */
int tally_pool_init(uv_loop_t *loop, tally_pool_t *p,
                    const tally_pool_options_t *opt, char *err, size_t errlen);

/* Queues a job; it goes to an idle worker on the loop's next turn, along
 * with the other jobs queued by then. Some jobs come back through done_cb
 * at once, before submit returns: one whose id is not 1 to 255 bytes
 * without NUL, or that cannot fit in a frame, as TALLY_POOL_JOB_ERROR;
 * and, while the pool closes, every job, as TALLY_POOL_FAILED "released". */
void tally_pool_submit(tally_pool_t *p, tally_pool_job_t *job);

/* Replaces every worker with a fresh one that loads the task configs
 * again, from tasks if not NULL (which is copied) or from the same path:
 * idle workers at once, busy ones when their batch is answered. The caller
 * checks the new configs first. A worker that cannot load them exits with
 * status 2: that is logged, its batch goes back to the queue uncharged,
 * and it is respawned after a backoff. Returns 0, or TALLY_ENOMEM with
 * nothing changed. */
int tally_pool_reload(tally_pool_t *p, const char *tasks);

/* Hands back every queued job (not yet sent) as TALLY_POOL_FAILED with the
 * body "released", so the caller can release them when draining. Jobs
 * that done_cb submits meanwhile stay queued. */
void tally_pool_release_queued(tally_pool_t *p);

/* Closes the pool: queued jobs are handed back as released; each worker's
 * stdin is closed once its batch is answered, so it exits; a worker still
 * running after grace_ms is killed, and its jobs handed back as failed.
 * close_cb runs once every process and handle is closed; then p's memory
 * may be freed. A second call does nothing. */
void tally_pool_close(tally_pool_t *p, uint64_t grace_ms,
                      void (*close_cb)(tally_pool_t *p));

#endif
