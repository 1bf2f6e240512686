/* The worker pool: spawns tally-worker processes, sends them job batches
 * over pipes, and replaces the ones that die, hang or misbehave. */
#include "daemon/pool.h"
#include "config/error.h"
#include "worker/frame.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BATCH_BYTES (4u * 1024 * 1024)
#define READ_MIN (64 * 1024)
/* A worker that dies this soon after its start, before answering a batch,
 * most likely cannot load its configs: the next spawn waits, from
 * BACKOFF_MIN_MS doubling up to BACKOFF_MAX_MS. */
#define QUICK_DEATH_MS 1000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
/* How long a worker that has exited may keep its pipes open, and how long
 * one that has closed its stdout may take to exit. */
#define DRAIN_MS 1000
/* A stderr line longer than this is logged in pieces. */
#define ERR_LINE_MAX 2048

/* One batch in flight: its outcomes, filled in when it comes back. */
typedef struct batch_s {
  size_t n;
  tally_pool_outcome_t out[];
} batch_t;

/* A worker's struct lives until all five of its handles are closed; only
 * the close callbacks free it. */
struct tally__worker_s {
  tally__worker_t *prev, *next; /* in p->workers */
  tally_pool_t *p;              /* NULL for a spawn that failed */
  uv_process_t proc;
  uv_pipe_t in, out, err;
  uv_timer_t timer; /* the batch deadline, or the drain after an exit */
  unsigned open;    /* handles not yet closed */
  int pid;
  unsigned generation;
  uint64_t started_ms;
  uint64_t answered; /* batches answered */
  uint64_t sent_ns;  /* when the batch outstanding was sent (uv_hrtime) */
  batch_t *batch;    /* the batch outstanding, or NULL */
  uint64_t deadline_ms;
  uv_write_t write;
  tally_buf_t wbuf; /* the request being written */
  bool writing;
  tally_frame_reader_t frames;
  char errbuf[4096];
  char line[ERR_LINE_MAX];
  size_t line_len;
  /* State. A counted worker is one of p->active; once gone it takes no
   * more batches. */
  bool counted, gone;
  bool retired; /* its stdin was closed on purpose: it should exit 0 */
  bool failed;  /* the pool gave up on it (and killed it if it ran) */
  bool killed;  /* SIGKILL sent */
  bool exited, out_eof, err_eof;
  int64_t status;
  int term_signal;
};

static void on_worker_timer(uv_timer_t *t);
static void dispatch(tally_pool_t *p);
static void fill(tally_pool_t *p);

static uint64_t now_ms(void) {
  return uv_hrtime() / 1000000;
}

static void say(tally_pool_t *p, tally_log_level_t level, const char *event,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void say(tally_pool_t *p, tally_log_level_t level, const char *event,
                const char *fmt, ...) {
  if (p->opt.log == NULL || level < p->opt.log->level)
    return;
  char msg[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  tally_log(p->opt.log, level, event, "%s", msg);
}

static const char *plural(size_t n) {
  return n == 1 ? "" : "s";
}

/* Handles and their closing. */

/* Frees the strings that init copied. */
static void free_strings(tally_pool_t *p) {
  free((char *)p->opt.worker);
  free((char *)p->opt.tasks);
  free((char *)p->opt.plugins);
  free((char *)p->opt.default_queue);
  p->opt.worker = p->opt.tasks = p->opt.plugins = NULL;
  p->opt.default_queue = NULL;
}

static void on_pool_closed(uv_handle_t *h) {
  tally_pool_t *p = h->data;
  if (--p->handles > 0)
    return;
  free_strings(p);
  if (p->close_cb != NULL)
    p->close_cb(p); /* last: it may free p */
}

/* Once the pool closes and its last worker is gone, closes the pool's
 * own handles, the last of whose close callbacks calls close_cb. */
static void finish_close(tally_pool_t *p) {
  if (!p->closing || p->workers != NULL ||
      uv_is_closing((uv_handle_t *)&p->respawn))
    return;
  uv_close((uv_handle_t *)&p->respawn, on_pool_closed);
  uv_close((uv_handle_t *)&p->kick, on_pool_closed);
}

static void on_worker_closed(uv_handle_t *h) {
  tally__worker_t *w = h->data;
  if (--w->open > 0)
    return;
  tally_pool_t *p = w->p;
  if (p != NULL) {
    if (w->prev != NULL)
      w->prev->next = w->next;
    else
      p->workers = w->next;
    if (w->next != NULL)
      w->next->prev = w->prev;
  }
  tally_frame_reader_close(&w->frames);
  tally_buf_close(&w->wbuf);
  free(w);
  if (p != NULL)
    finish_close(p);
}

static void close_handle(void *h) {
  if (!uv_is_closing(h))
    uv_close(h, on_worker_closed);
}

/* Once the process has exited and both of its output pipes have ended,
 * nothing is left to wait for. */
static void reap(tally__worker_t *w) {
  if (!w->exited || !w->out_eof || !w->err_eof)
    return;
  close_handle(&w->in);
  close_handle(&w->timer);
}

/* Takes w out of p->active, so that fill starts another in its place. */
static void uncount(tally__worker_t *w) {
  if (w->counted) {
    w->counted = false;
    w->p->active--;
  }
  w->gone = true;
}

/* Hands the jobs of a batch back to the caller. */
static void hand_back(tally_pool_t *p, batch_t *b) {
  p->inflight -= b->n;
  p->opt.done_cb(p, b->out, b->n);
  free(b);
}

static void hand_back_failed(tally_pool_t *p, batch_t *b, const char *cause) {
  for (size_t i = 0; i < b->n; i++) {
    b->out[i].status = TALLY_POOL_FAILED;
    b->out[i].body = cause;
    b->out[i].len = strlen(cause);
  }
  hand_back(p, b);
}

/* Puts the jobs of b back at the head of the queue, in order. */
static void requeue_batch(tally_pool_t *p, batch_t *b) {
  for (size_t i = b->n; i-- > 0;) {
    tally_pool_job_t *job = b->out[i].job;
    job->next = p->head;
    p->head = job;
    if (p->tail == NULL)
      p->tail = job;
  }
  p->inflight -= b->n;
  p->queued += b->n;
  free(b);
}

/* Hands back w's outstanding batch, if any, as failed for cause. A worker
 * that exits with status 2 before answering anything could not load its
 * config (see docs/worker-protocol.md): its jobs are not to blame, so they
 * go back to the queue, not charged a delivery. */
static void lose_batch(tally__worker_t *w, const char *cause) {
  batch_t *b = w->batch;
  if (b == NULL)
    return;
  w->batch = NULL;
  if (!w->exited)
    uv_timer_stop(&w->timer);
  if (w->exited && w->term_signal == 0 && w->status == 2 && w->answered == 0 &&
      !w->p->closing) {
    say(w->p, TALLY_LOG_WARN, "worker.config",
        "worker pid %d could not load its config; its %zu jobs wait for "
        "the next worker",
        w->pid, b->n);
    requeue_batch(w->p, b);
    return;
  }
  hand_back_failed(w->p, b, cause);
}

/* "worker pid N was killed by signal S" or "... exited with status S". */
static void describe_exit(const tally__worker_t *w, char *buf, size_t len) {
  if (w->term_signal != 0)
    snprintf(buf, len, "worker pid %d was killed by signal %d", w->pid,
             w->term_signal);
  else
    snprintf(buf, len, "worker pid %d exited with status %" PRId64, w->pid,
             w->status);
}

/* Closes w's stdin so that it exits (with status 0) once it has read
 * everything: on reload, and when the pool closes. */
static void retire(tally__worker_t *w) {
  uncount(w);
  w->retired = true;
  close_handle(&w->in);
}

static void on_respawn_timer(uv_timer_t *t);

/* Waits before the next spawn, longer after each quick death. Returns
 * the delay. */
static uint64_t respawn_later(tally_pool_t *p) {
  unsigned shift = p->quick_deaths < 7 ? p->quick_deaths : 7;
  uint64_t delay = (uint64_t)BACKOFF_MIN_MS << shift;
  if (delay > BACKOFF_MAX_MS)
    delay = BACKOFF_MAX_MS;
  p->quick_deaths++;
  uv_timer_start(&p->respawn, on_respawn_timer, delay, 0);
  return delay;
}

enum { CAUSE_EXIT, CAUSE_TIMEOUT, CAUSE_FRAMING, CAUSE_IO };
const char *const tally_pool_causes[4] = {"exit", "timeout", "framing", "io"};

void tally_pool_count(const tally_pool_t *p, unsigned *alive, unsigned *busy) {
  *alive = *busy = 0;
  for (const tally__worker_t *w = p->workers; w != NULL; w = w->next) {
    if (w->exited || w->failed || w->gone)
      continue;
    (*alive)++;
    if (w->batch != NULL)
      (*busy)++;
  }
}

/* Takes a worker that died or was given up on out of the count, to be
 * replaced. One that goes before answering a batch, soon after its start,
 * most likely cannot run at all: the replacement then waits, longer after
 * each such death, so that a broken config does not make the pool spin.
 * Returns that wait in ms (0: at once). */
static uint64_t count_death(tally__worker_t *w, int cause) {
  tally_pool_t *p = w->p;
  p->replaced++;
  p->restarts[cause]++;
  uncount(w);
  if (w->answered > 0 || now_ms() - w->started_ms >= QUICK_DEATH_MS) {
    p->quick_deaths = 0;
    return 0;
  }
  return respawn_later(p);
}

/* "; starting another", and when, after a wait. */
static void describe_wait(uint64_t delay, char *buf, size_t len) {
  if (delay == 0)
    snprintf(buf, len, "; starting another");
  else
    snprintf(buf, len, "; starting another in %" PRIu64 " ms", delay);
}

/* Gives up on w: kills it if it runs, hands back its batch as failed for
 * the cause that fmt says, and starts another worker in its place. */
static void fail_worker(tally__worker_t *w, const char *event, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));

static void fail_worker(tally__worker_t *w, const char *event, const char *fmt,
                        ...) {
  tally_pool_t *p = w->p;
  if (w->failed)
    return;
  w->failed = true;
  char cause[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof(cause), fmt, ap);
  va_end(ap);
  char when[64] = "";
  int why = strcmp(event, "worker.timeout") == 0   ? CAUSE_TIMEOUT
            : strcmp(event, "worker.framing") == 0 ? CAUSE_FRAMING
                                                   : CAUSE_IO;
  if (w->counted)
    describe_wait(count_death(w, why), when, sizeof(when));
  say(p, TALLY_LOG_ERROR, event, "%s; killing it%s", cause, when);
  if (!w->exited) {
    uv_process_kill(&w->proc, SIGKILL);
    w->killed = true;
    uv_timer_stop(&w->timer);
  }
  w->out_eof = true;
  close_handle(&w->out);
  close_handle(&w->in);
  fill(p);
  lose_batch(w, cause);
  reap(w);
  dispatch(p);
}

/* Spawning. */

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal);
static void alloc_out(uv_handle_t *h, size_t size, uv_buf_t *buf);
static void on_out(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void alloc_err(uv_handle_t *h, size_t size, uv_buf_t *buf);
static void on_err(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* Starts one worker. Returns 0, or a negative code with err naming the
 * cause; the handles of a failed spawn close on their own. */
static int spawn(tally_pool_t *p, char *err, size_t errlen) {
  tally__worker_t *w = calloc(1, sizeof(*w));
  if (w == NULL) {
    snprintf(err, errlen, "cannot start a worker: out of memory");
    return TALLY_ENOMEM;
  }
  tally_frame_reader_init(&w->frames);
  tally_buf_init(&w->wbuf);
  uv_pipe_init(p->loop, &w->in, 0);
  uv_pipe_init(p->loop, &w->out, 0);
  uv_pipe_init(p->loop, &w->err, 0);
  uv_timer_init(p->loop, &w->timer);
  w->in.data = w->out.data = w->err.data = w->timer.data = w;
  w->proc.data = w;
  w->write.data = w;

  char *args[8] = {(char *)p->opt.worker, "--tasks", (char *)p->opt.tasks};
  int argc = 3;
  if (p->opt.plugins != NULL) {
    args[argc++] = "--plugins";
    args[argc++] = (char *)p->opt.plugins;
  }
  if (p->opt.default_queue != NULL) {
    args[argc++] = "--default-queue";
    args[argc++] = (char *)p->opt.default_queue;
  }
  uv_stdio_container_t stdio[3] = {{.flags = UV_CREATE_PIPE | UV_READABLE_PIPE,
                                    .data.stream = (uv_stream_t *)&w->in},
                                   {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
                                    .data.stream = (uv_stream_t *)&w->out},
                                   {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
                                    .data.stream = (uv_stream_t *)&w->err}};
  /* Detached: a Ctrl-C at tallyd's terminal reaches tallyd alone, which
   * then drains its workers in order. */
  uv_process_options_t opts = {.exit_cb = on_exit_cb,
                               .file = p->opt.worker,
                               .args = args,
                               .flags = UV_PROCESS_DETACHED,
                               .stdio_count = 3,
                               .stdio = stdio};
  /* uv_spawn initializes the handle even when it fails. */
  int rc = uv_spawn(p->loop, &w->proc, &opts);
  w->open = 5;
  if (rc != 0) {
    snprintf(err, errlen, "cannot start %s: %s", p->opt.worker,
             uv_strerror(rc));
    uv_close((uv_handle_t *)&w->proc, on_worker_closed);
    uv_close((uv_handle_t *)&w->in, on_worker_closed);
    uv_close((uv_handle_t *)&w->out, on_worker_closed);
    uv_close((uv_handle_t *)&w->err, on_worker_closed);
    uv_close((uv_handle_t *)&w->timer, on_worker_closed);
    return rc == UV_ENOENT ? TALLY_ENOENT : TALLY_EIO;
  }
  w->pid = w->proc.pid;
  rc = uv_read_start((uv_stream_t *)&w->out, alloc_out, on_out);
  if (rc == 0)
    rc = uv_read_start((uv_stream_t *)&w->err, alloc_err, on_err);
  if (rc != 0) {
    /* Left detached (w->p is NULL): its exit closes the process handle. */
    snprintf(err, errlen, "cannot read from %s: %s", p->opt.worker,
             uv_strerror(rc));
    uv_process_kill(&w->proc, SIGKILL);
    uv_close((uv_handle_t *)&w->in, on_worker_closed);
    uv_close((uv_handle_t *)&w->out, on_worker_closed);
    uv_close((uv_handle_t *)&w->err, on_worker_closed);
    uv_close((uv_handle_t *)&w->timer, on_worker_closed);
    return TALLY_EIO;
  }
  w->p = p;
  w->generation = p->generation;
  w->started_ms = now_ms();
  w->counted = true;
  p->active++;
  p->spawned++;
  w->next = p->workers;
  if (p->workers != NULL)
    p->workers->prev = w;
  p->workers = w;
  say(p, TALLY_LOG_INFO, "worker.spawn", "worker pid %d started", w->pid);
  return 0;
}

/* Spawns workers until opt.workers of them count, unless the pool closes
 * or a backoff is under way. */
static void fill(tally_pool_t *p) {
  if (p->closing || uv_is_active((uv_handle_t *)&p->respawn))
    return;
  while (p->active < p->opt.workers) {
    char err[512];
    if (spawn(p, err, sizeof(err)) != 0) {
      uint64_t delay = respawn_later(p);
      say(p, TALLY_LOG_ERROR, "worker.spawn",
          "%s; trying again in %" PRIu64 " ms", err, delay);
      return;
    }
  }
  dispatch(p);
}

/* Dispatch. */

static bool is_idle(const tally__worker_t *w) {
  return !w->gone && w->batch == NULL && !w->writing;
}

static void on_write(uv_write_t *req, int status) {
  tally__worker_t *w = req->data;
  w->writing = false;
  if (status == UV_ECANCELED || w->failed || w->exited)
    return;
  if (status < 0) {
    /* Most likely the worker has died: its exit says how. */
    say(w->p, TALLY_LOG_WARN, "worker.write",
        "worker pid %d cannot be written to: %s", w->pid, uv_strerror(status));
    return;
  }
  if (is_idle(w))
    dispatch(w->p);
}

/* Sends w up to max jobs from the head of the queue, within the byte
 * budget, an alone job by itself. Returns 0, or TALLY_ENOMEM with the
 * jobs still queued. */
static int send_batch(tally__worker_t *w, size_t max) {
  tally_pool_t *p = w->p;
  size_t n = 0, bytes = 0;
  for (tally_pool_job_t *j = p->head; j != NULL && n < max; j = j->next) {
    if (n > 0 && (j->alone || bytes + j->len > p->opt.batch_bytes))
      break;
    n++;
    bytes += j->len;
    if (j->alone)
      break;
  }
  batch_t *b = malloc(sizeof(*b) + n * sizeof(b->out[0]));
  tally_batch_writer_t bw;
  tally_buf_reset(&w->wbuf);
  tally_batch_writer_begin(&bw, &w->wbuf);
  tally_pool_job_t *j = p->head;
  for (size_t i = 0; i < n; i++, j = j->next)
    tally_batch_put_job(&bw, j->id, j->id_len, j->deliveries, j->queue,
                        j->queue_len, j->text, j->len);
  int rc = tally_batch_writer_end(&bw);
  if (b == NULL || rc != 0) {
    free(b);
    say(p, TALLY_LOG_ERROR, "pool.batch",
        "cannot build a batch of %zu job%s: "
        "%s",
        n, plural(n), b == NULL ? "out of memory" : tally_strerror(rc));
    return TALLY_ENOMEM;
  }
  b->n = n;
  for (size_t i = 0; i < n; i++) {
    j = p->head;
    p->head = j->next;
    j->next = NULL;
    b->out[i] = (tally_pool_outcome_t){.job = j};
  }
  if (p->head == NULL)
    p->tail = NULL;
  p->queued -= n;
  p->inflight += n;
  w->batch = b;
  w->sent_ns = uv_hrtime();
  if (p->opt.job_timeout_ms > 0) {
    w->deadline_ms = p->opt.job_timeout_ms * n;
    uv_timer_start(&w->timer, on_worker_timer, w->deadline_ms, 0);
  }
  uv_buf_t buf = uv_buf_init(w->wbuf.data, (unsigned)w->wbuf.len);
  rc = uv_write(&w->write, (uv_stream_t *)&w->in, &buf, 1, on_write);
  if (rc == 0)
    w->writing = true;
  else
    fail_worker(w, "worker.write", "worker pid %d cannot be written to: %s",
                w->pid, uv_strerror(rc));
  return 0;
}

/* Gives queued jobs to idle workers. With fewer jobs than idle workers
 * can take, the jobs are split evenly between them. Re-entrant calls (from
 * done_cb) only ask the running one to go round again. */
static void dispatch(tally_pool_t *p) {
  if (p->dispatching) {
    p->redispatch = true;
    return;
  }
  p->dispatching = true;
  do {
    p->redispatch = false;
    while (p->head != NULL && !p->closing) {
      size_t idle = 0;
      tally__worker_t *first = NULL;
      for (tally__worker_t *w = p->workers; w != NULL; w = w->next)
        if (is_idle(w) && idle++ == 0)
          first = w;
      if (first == NULL)
        break;
      size_t per = (p->queued + idle - 1) / idle;
      if (per > p->opt.batch)
        per = p->opt.batch;
      if (send_batch(first, per) != 0)
        break;
    }
  } while (p->redispatch);
  p->dispatching = false;
}

/* Responses. */

static void alloc_out(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  tally__worker_t *w = h->data;
  char *base;
  size_t avail;
  (void)size;
  if (tally_frame_reader_space(&w->frames, READ_MIN, &base, &avail) != 0) {
    *buf = uv_buf_init(NULL, 0);
    return;
  }
  *buf = uv_buf_init(base, avail > UINT32_MAX ? UINT32_MAX : (unsigned)avail);
}

/* Checks a response against w's batch and hands the batch back. Returns
 * false after failing the worker. */
static bool take_response(tally__worker_t *w, const char *payload, size_t len) {
  tally_pool_t *p = w->p;
  batch_t *b = w->batch;
  if (b == NULL) {
    fail_worker(w, "worker.framing",
                "worker pid %d broke the framing: a response with no batch "
                "outstanding",
                w->pid);
    return false;
  }
  tally_batch_reader_t br;
  tally_batch_result_t res;
  if (tally_batch_reader_init(&br, payload, len) != 0) {
    fail_worker(w, "worker.framing", "worker pid %d broke the framing: %s",
                w->pid, br.err);
    return false;
  }
  if (br.count != b->n) {
    fail_worker(w, "worker.framing",
                "worker pid %d broke the framing: %" PRIu32 " result%s for a "
                "batch of %zu job%s",
                w->pid, br.count, plural(br.count), b->n, plural(b->n));
    return false;
  }
  for (size_t i = 0; i < b->n; i++) {
    if (tally_batch_next_result(&br, &res) != 1) {
      fail_worker(w, "worker.framing", "worker pid %d broke the framing: %s",
                  w->pid, br.err);
      return false;
    }
    const tally_pool_job_t *job = b->out[i].job;
    if (res.id_len != job->id_len || memcmp(res.id, job->id, job->id_len)) {
      fail_worker(w, "worker.framing",
                  "worker pid %d broke the framing: result %zu is for job "
                  "\"%.*s\", not \"%.*s\"",
                  w->pid, i + 1, (int)res.id_len, res.id, (int)job->id_len,
                  job->id);
      return false;
    }
    b->out[i].status = res.status == TALLY_BATCH_SCORED  ? TALLY_POOL_SCORED
                       : res.status == TALLY_BATCH_TOKEN ? TALLY_POOL_TOKEN
                       : res.status == TALLY_BATCH_JUDGE ? TALLY_POOL_JUDGE
                                                         : TALLY_POOL_JOB_ERROR;
    b->out[i].body = res.body;
    b->out[i].len = res.body_len;
  }
  if (tally_batch_next_result(&br, &res) != 0) {
    fail_worker(w, "worker.framing", "worker pid %d broke the framing: %s",
                w->pid, br.err);
    return false;
  }
  w->batch = NULL;
  w->answered++;
  tally_hist_observe(&p->batch_time, (double)(uv_hrtime() - w->sent_ns) / 1e9);
  p->quick_deaths = 0;
  if (!w->exited)
    uv_timer_stop(&w->timer);
  if (!w->retired && !w->failed && !w->exited &&
      (p->closing || w->generation != p->generation)) {
    retire(w);
    fill(p);
  }
  hand_back(p, b);
  dispatch(p);
  return true;
}

/* The stdout of w has ended. */
static void out_ended(tally__worker_t *w) {
  w->out_eof = true;
  close_handle(&w->out);
  if (w->exited) {
    char how[128];
    describe_exit(w, how, sizeof(how));
    lose_batch(w, how);
    reap(w);
  } else if (!w->failed && !w->retired) {
    /* It is dying, most likely: its exit will say how. */
    w->gone = true;
    uv_timer_start(&w->timer, on_worker_timer, DRAIN_MS, 0);
  }
}

static void on_out(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  tally__worker_t *w = s->data;
  (void)buf;
  if (nread == UV_ENOBUFS) {
    fail_worker(w, "worker.read",
                "worker pid %d: out of memory for its response", w->pid);
    return;
  }
  if (nread < 0) {
    if (nread != UV_EOF)
      say(w->p, TALLY_LOG_WARN, "worker.read", "worker pid %d: stdout: %s",
          w->pid, uv_strerror((int)nread));
    out_ended(w);
    return;
  }
  tally_frame_reader_commit(&w->frames, (size_t)nread);
  const char *payload;
  size_t len;
  int rc = 0;
  while (!w->failed &&
         (rc = tally_frame_reader_next(&w->frames, &payload, &len)) == 1)
    if (!take_response(w, payload, len))
      return;
  if (rc < 0 && !w->failed)
    fail_worker(w, "worker.framing", "worker pid %d broke the framing: %s",
                w->pid, w->frames.err);
}

/* Stderr: each line is logged. */

static void alloc_err(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  tally__worker_t *w = h->data;
  (void)size;
  *buf = uv_buf_init(w->errbuf, sizeof(w->errbuf));
}

static void flush_line(tally__worker_t *w) {
  if (w->line_len > 0)
    say(w->p, TALLY_LOG_WARN, "worker.stderr", "worker pid %d: %.*s", w->pid,
        (int)w->line_len, w->line);
  w->line_len = 0;
}

static void err_ended(tally__worker_t *w) {
  flush_line(w);
  w->err_eof = true;
  close_handle(&w->err);
  reap(w);
}

static void on_err(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  tally__worker_t *w = s->data;
  if (nread < 0) {
    err_ended(w);
    return;
  }
  for (ssize_t i = 0; i < nread; i++) {
    char c = buf->base[i];
    if (c == '\n' || w->line_len == sizeof(w->line))
      flush_line(w);
    if (c != '\n')
      w->line[w->line_len++] = c;
  }
}

/* Exits and timers. */

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal) {
  tally__worker_t *w = proc->data;
  tally_pool_t *p = w->p;
  if (p == NULL) {
    close_handle(&w->proc);
    return;
  }
  w->exited = true;
  w->status = status;
  w->term_signal = term_signal;
  close_handle(&w->proc);
  close_handle(&w->in);
  uv_timer_stop(&w->timer);
  char how[128];
  describe_exit(w, how, sizeof(how));
  if (w->counted) {
    /* It died on its own. */
    uint64_t lived = now_ms() - w->started_ms;
    char when[64];
    describe_wait(count_death(w, CAUSE_EXIT), when, sizeof(when));
    say(p, TALLY_LOG_ERROR, "worker.exit",
        "%s %" PRIu64 " ms after its start%s%s", how, lived,
        w->batch != NULL ? ", with a batch outstanding" : "", when);
  } else if (w->killed || (w->retired && status == 0 && term_signal == 0)) {
    say(p, TALLY_LOG_DEBUG, "worker.exit", "%s", how);
  } else {
    say(p, TALLY_LOG_WARN, "worker.exit", "%s after it was retired", how);
  }
  fill(p);
  if (w->out_eof)
    lose_batch(w, how);
  if (!w->out_eof || !w->err_eof)
    uv_timer_start(&w->timer, on_worker_timer, DRAIN_MS, 0);
  reap(w);
}

static void on_worker_timer(uv_timer_t *t) {
  tally__worker_t *w = t->data;
  if (w->exited) {
    /* Its pipes outlived it: stop waiting for them. */
    if (!w->out_eof)
      out_ended(w);
    if (!w->err_eof)
      err_ended(w);
    return;
  }
  if (w->out_eof) {
    fail_worker(w, "worker.lost",
                "worker pid %d closed its stdout but did not exit", w->pid);
    return;
  }
  if (w->batch != NULL)
    fail_worker(w, "worker.timeout",
                "worker pid %d timed out after %" PRIu64
                " ms on a batch of %zu job%s",
                w->pid, w->deadline_ms, w->batch->n, plural(w->batch->n));
}

/* The respawn timer: the end of a backoff, or of the grace period. */
static void on_respawn_timer(uv_timer_t *t) {
  tally_pool_t *p = t->data;
  if (!p->closing) {
    fill(p);
    return;
  }
  for (tally__worker_t *w = p->workers; w != NULL; w = w->next) {
    if (w->exited)
      continue;
    if (w->batch != NULL) {
      fail_worker(w, "worker.kill",
                  "worker pid %d was still busy %" PRIu64
                  " ms after the pool began to close",
                  w->pid, p->grace_ms);
    } else if (!w->killed) {
      say(p, TALLY_LOG_WARN, "worker.kill",
          "worker pid %d still runs %" PRIu64
          " ms after the pool began to close; killing it",
          w->pid, p->grace_ms);
      uv_process_kill(&w->proc, SIGKILL);
      w->killed = true;
    }
  }
}

/* The public functions. */

int tally_pool_init(uv_loop_t *loop, tally_pool_t *p,
                    const tally_pool_options_t *opt, char *err, size_t errlen) {
  memset(p, 0, sizeof(*p));
  tally_hist_init(&p->batch_time, tally_hist_latency_bounds,
                  tally_hist_latency_n);
  if (opt->workers == 0 || opt->worker == NULL || opt->tasks == NULL ||
      opt->done_cb == NULL) {
    snprintf(err, errlen,
             "a pool needs a worker executable, a task "
             "directory, a done_cb and at least one worker");
    return TALLY_EINVAL;
  }
  p->opt = *opt;
  p->opt.worker = strdup(opt->worker);
  p->opt.tasks = strdup(opt->tasks);
  p->opt.plugins = opt->plugins ? strdup(opt->plugins) : NULL;
  p->opt.default_queue = opt->default_queue ? strdup(opt->default_queue) : NULL;
  if (p->opt.worker == NULL || p->opt.tasks == NULL ||
      (opt->plugins != NULL && p->opt.plugins == NULL) ||
      (opt->default_queue != NULL && p->opt.default_queue == NULL)) {
    snprintf(err, errlen, "out of memory");
    free_strings(p);
    memset(p, 0, sizeof(*p));
    return TALLY_ENOMEM;
  }
  if (p->opt.batch == 0)
    p->opt.batch = 1;
  if (p->opt.batch_bytes == 0)
    p->opt.batch_bytes = DEFAULT_BATCH_BYTES;
  p->data = opt->data;
  p->loop = loop;
  /* The first spawn says whether the executable runs at all. */
  int rc = spawn(p, err, errlen);
  if (rc != 0) {
    free_strings(p);
    memset(p, 0, sizeof(*p));
    return rc;
  }
  uv_timer_init(loop, &p->respawn);
  uv_idle_init(loop, &p->kick);
  p->respawn.data = p->kick.data = p;
  p->handles = 2;
  fill(p);
  return 0;
}

static void on_kick(uv_idle_t *h) {
  tally_pool_t *p = h->data;
  uv_idle_stop(h);
  dispatch(p);
}

/* The JSON of a job error that the pool itself finds. */
static void hand_back_error(tally_pool_t *p, tally_pool_job_t *job,
                            const char *body) {
  tally_pool_outcome_t out = {job, TALLY_POOL_JOB_ERROR, body, strlen(body)};
  p->opt.done_cb(p, &out, 1);
}

/* Hands back the queued jobs as released: the jobs queued now, or while
 * the pool closes, until none are left. */
static void release(tally_pool_t *p) {
  static const char released[] = "released";
  if (p->releasing)
    return;
  p->releasing = true;
  do {
    size_t n = p->queued;
    if (n == 0)
      break;
    batch_t *b = malloc(sizeof(*b) + n * sizeof(b->out[0]));
    if (b == NULL)
      n = 1;
    tally_pool_outcome_t one, *out = b ? b->out : &one;
    for (size_t i = 0; i < n; i++) {
      tally_pool_job_t *j = p->head;
      p->head = j->next;
      j->next = NULL;
      out[i] = (tally_pool_outcome_t){j, TALLY_POOL_FAILED, released,
                                      sizeof(released) - 1};
    }
    if (p->head == NULL)
      p->tail = NULL;
    p->queued -= n;
    p->opt.done_cb(p, out, n);
    free(b);
  } while (p->closing);
  p->releasing = false;
}

void tally_pool_submit(tally_pool_t *p, tally_pool_job_t *job) {
  /* Payload: count, id length, id, deliveries, queue length, queue, job
   * length, job. */
  size_t room =
      TALLY_FRAME_MAX - 20 - TALLY_BATCH_ID_MAX - TALLY_BATCH_QUEUE_MAX;
  if (job->id_len == 0 || job->id_len > TALLY_BATCH_ID_MAX ||
      memchr(job->id, '\0', job->id_len) != NULL) {
    hand_back_error(p, job,
                    "{\"submission\":null,\"error\":\"the job's "
                    "entry id is not 1 to 255 bytes without NUL\"}");
    return;
  }
  if (job->len > room) {
    hand_back_error(p, job,
                    "{\"submission\":null,\"error\":\"the job is "
                    "too large for a worker frame\"}");
    return;
  }
  job->next = NULL;
  if (p->tail != NULL)
    p->tail->next = job;
  else
    p->head = job;
  p->tail = job;
  p->queued++;
  if (p->closing)
    release(p);
  else
    uv_idle_start(&p->kick, on_kick);
}

int tally_pool_reload(tally_pool_t *p, const char *tasks) {
  if (p->closing)
    return 0;
  if (tasks != NULL) {
    char *copy = strdup(tasks);
    if (copy == NULL)
      return TALLY_ENOMEM;
    free((char *)p->opt.tasks);
    p->opt.tasks = copy;
  }
  p->generation++;
  for (tally__worker_t *w = p->workers; w != NULL; w = w->next)
    if (is_idle(w))
      retire(w);
  say(p, TALLY_LOG_INFO, "pool.reload", "replacing the workers (generation %u)",
      p->generation);
  fill(p);
  return 0;
}

void tally_pool_release_queued(tally_pool_t *p) {
  release(p);
}

void tally_pool_close(tally_pool_t *p, uint64_t grace_ms,
                      void (*close_cb)(tally_pool_t *p)) {
  if (p->closing)
    return;
  p->closing = true;
  p->close_cb = close_cb;
  p->grace_ms = grace_ms;
  uv_timer_stop(&p->respawn);
  release(p);
  for (tally__worker_t *w = p->workers; w != NULL; w = w->next) {
    if (w->gone)
      continue;
    if (w->batch == NULL && !w->writing)
      retire(w);
    else
      uncount(w); /* retired once its batch is answered */
  }
  if (p->workers == NULL)
    finish_close(p);
  else
    uv_timer_start(&p->respawn, on_respawn_timer, grace_ms, 0);
}
