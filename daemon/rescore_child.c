/* tallyd's automatic rescore: one `tally rescore` child at a time, and the
 * runs asked for while it ran, one after another. */
#include "daemon/rescore_child.h"
#include "config/error.h"
#include "engine/contests.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_flag[TALLY_RESCORE_KINDS] = {
    [TALLY_RESCORE_CHANGED] = "--changed",
    [TALLY_RESCORE_STALE] = "--stale",
};

static void start_next(tally_rescore_child_t *r);

static void free_strings(tally_rescore_child_t *r) {
  free((char *)r->opt.tally);
  free((char *)r->opt.url);
  free((char *)r->opt.prefix);
  free((char *)r->opt.default_queue);
  free((char *)r->opt.plugins);
  free(r->tasks);
  r->opt.tally = r->opt.url = r->opt.prefix = r->opt.plugins = NULL;
  r->opt.default_queue = NULL;
  r->tasks = NULL;
}

int tally_rescore_child_init(uv_loop_t *loop, tally_rescore_child_t *r,
                             const tally_rescore_child_options_t *opt) {
  memset(r, 0, sizeof(*r));
  r->loop = loop;
  r->opt = *opt;
  r->opt.tally = strdup(opt->tally);
  r->opt.url = strdup(opt->url);
  r->opt.prefix = strdup(opt->prefix);
  r->opt.default_queue = strdup(opt->default_queue != NULL ? opt->default_queue
                                                           : TALLY_MAIN_QUEUE);
  r->opt.plugins = opt->plugins ? strdup(opt->plugins) : NULL;
  if (!r->opt.tally || !r->opt.url || !r->opt.prefix || !r->opt.default_queue ||
      (opt->plugins && !r->opt.plugins)) {
    free_strings(r);
    return TALLY_ENOMEM;
  }
  uv_timer_init(loop, &r->kill_timer);
  r->kill_timer.data = r;
  return 0;
}

int tally_rescore_child_set_tasks(tally_rescore_child_t *r, const char *tasks) {
  char *copy = strdup(tasks);
  if (copy == NULL)
    return TALLY_ENOMEM;
  free(r->tasks);
  r->tasks = copy;
  return 0;
}

static void on_timer_closed(uv_handle_t *h) {
  tally_rescore_child_t *r = h->data;
  free_strings(r);
  if (r->close_cb)
    r->close_cb(r);
}

/* Logs the exit of the child that just finished. */
static void log_exit(tally_rescore_child_t *r) {
  const char *flag = kind_flag[r->kind];
  if (r->term_signal != 0) {
    r->failures++;
    tally_log(r->opt.log, TALLY_LOG_WARN, "rescore.failed",
              "tally rescore %s (pid %d) was killed by signal %d", flag, r->pid,
              r->term_signal);
  } else if (r->status != 0) {
    r->failures++;
    tally_log(r->opt.log, TALLY_LOG_WARN, "rescore.failed",
              "tally rescore %s (pid %d) exited with status %lld", flag, r->pid,
              (long long)r->status);
  } else {
    tally_log(r->opt.log, TALLY_LOG_INFO, "rescore.done",
              "tally rescore %s (pid %d) exited with status 0", flag, r->pid);
  }
}

/* One of the child's handles is closed. After the last, the exit is
 * logged (after all the child wrote) and the next run starts, or, while r
 * closes, the timer closes last. */
static void on_handle_closed(uv_handle_t *h) {
  tally_rescore_child_t *r = h->data;
  if (--r->open_handles > 0)
    return;
  uv_timer_stop(&r->kill_timer);
  if (r->exited)
    log_exit(r);
  r->running = false;
  if (r->closing) {
    uv_close((uv_handle_t *)&r->kill_timer, on_timer_closed);
    return;
  }
  if (r->opt.on_exited != NULL)
    r->opt.on_exited(r->opt.data);
  start_next(r);
}

/* Logs the line p has read so far, if not empty, and empties it. */
static void flush_line(struct tally_rescore_pipe_s *p) {
  tally_rescore_child_t *r = p->owner;
  size_t n = p->len;
  if (n > 0 && p->line[n - 1] == '\r')
    n--;
  p->len = 0;
  if (n == 0)
    return;
  tally_log(r->opt.log, p->is_stderr ? TALLY_LOG_WARN : TALLY_LOG_INFO,
            p->is_stderr ? "rescore.stderr" : "rescore.output",
            "tally rescore %s (pid %d): %.*s", kind_flag[r->kind], r->pid,
            (int)n, p->line);
}

static void close_pipe(struct tally_rescore_pipe_s *p) {
  if (uv_is_closing((uv_handle_t *)&p->pipe))
    return;
  flush_line(p);
  uv_close((uv_handle_t *)&p->pipe, on_handle_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  struct tally_rescore_pipe_s *p =
      (struct tally_rescore_pipe_s *)((char *)h -
                                      offsetof(struct tally_rescore_pipe_s,
                                               pipe));
  *buf = uv_buf_init(p->buf, sizeof(p->buf));
}

/* Cuts what the child wrote into lines, a log event each; a line longer
 * than the buffer goes out in pieces. */
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  struct tally_rescore_pipe_s *p =
      (struct tally_rescore_pipe_s *)((char *)s -
                                      offsetof(struct tally_rescore_pipe_s,
                                               pipe));
  if (nread < 0) {
    if (nread != UV_EOF)
      tally_log(p->owner->opt.log, TALLY_LOG_WARN, "rescore.output",
                "cannot read the %s of tally rescore (pid %d): %s",
                p->is_stderr ? "stderr" : "stdout", p->owner->pid,
                uv_strerror((int)nread));
    close_pipe(p);
    return;
  }
  for (ssize_t i = 0; i < nread; i++) {
    char c = buf->base[i];
    if (c == '\n') {
      flush_line(p);
      continue;
    }
    if (p->len == sizeof(p->line))
      flush_line(p);
    p->line[p->len++] = c;
  }
}

/* The drain's deadline: a grandchild may hold the pipes open. */
static void on_drain_timer(uv_timer_t *t) {
  tally_rescore_child_t *r = t->data;
  for (int i = 0; i < 2; i++)
    close_pipe(&r->out[i]);
}

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal) {
  tally_rescore_child_t *r = proc->data;
  r->exited = true;
  r->status = status;
  r->term_signal = term_signal;
  uv_close((uv_handle_t *)proc, on_handle_closed);
  uv_timer_stop(&r->kill_timer);
  uv_timer_start(&r->kill_timer, on_drain_timer, TALLY_RESCORE_DRAIN_MS, 0);
}

/* Spawns the child of the first kind asked for, if any. */
static void start_next(tally_rescore_child_t *r) {
  if (r->running || r->closing || r->tasks == NULL)
    return;
  int k = 0;
  while (k < TALLY_RESCORE_KINDS && !r->want[k])
    k++;
  if (k == TALLY_RESCORE_KINDS)
    return;
  r->want[k] = false;
  r->kind = (tally_rescore_kind_t)k;
  char *args[16];
  int n = 0;
  args[n++] = (char *)r->opt.tally;
  args[n++] = "rescore";
  args[n++] = "--redis";
  args[n++] = (char *)r->opt.url;
  args[n++] = "--prefix";
  args[n++] = (char *)r->opt.prefix;
  args[n++] = "--default-queue";
  args[n++] = (char *)r->opt.default_queue;
  args[n++] = "--tasks";
  args[n++] = r->tasks;
  if (r->opt.plugins != NULL) {
    args[n++] = "--plugins";
    args[n++] = (char *)r->opt.plugins;
  }
  args[n++] = (char *)kind_flag[k];
  args[n] = NULL;
  for (int i = 0; i < 2; i++) {
    struct tally_rescore_pipe_s *p = &r->out[i];
    p->owner = r;
    p->is_stderr = i == 1;
    p->len = 0;
    uv_pipe_init(r->loop, &p->pipe, 0);
    p->pipe.data = r;
  }
  uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
       .data.stream = (uv_stream_t *)&r->out[0].pipe},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE,
       .data.stream = (uv_stream_t *)&r->out[1].pipe},
  };
  uv_process_options_t po = {
      .exit_cb = on_exit_cb,
      .file = r->opt.tally,
      .args = args,
      .stdio_count = 3,
      .stdio = stdio,
  };
  r->proc.data = r;
  r->running = true;
  r->exited = false;
  r->pid = 0;
  r->open_handles = 3;
  int rc = uv_spawn(r->loop, &r->proc, &po);
  if (rc != 0) {
    /* The handles of a failed spawn are closed all the same. */
    r->failures++;
    tally_log(r->opt.log, TALLY_LOG_ERROR, "rescore.failed",
              "cannot start %s rescore %s: %s", r->opt.tally, kind_flag[k],
              uv_strerror(rc));
    uv_close((uv_handle_t *)&r->proc, on_handle_closed);
    for (int i = 0; i < 2; i++)
      close_pipe(&r->out[i]);
    return;
  }
  r->started++;
  r->pid = r->proc.pid;
  tally_log(r->opt.log, TALLY_LOG_INFO, "rescore.start",
            "tally rescore %s (pid %d) --tasks %s", kind_flag[k], r->pid,
            r->tasks);
  for (int i = 0; i < 2; i++) {
    int e = uv_read_start((uv_stream_t *)&r->out[i].pipe, on_alloc, on_read);
    if (e != 0) {
      tally_log(r->opt.log, TALLY_LOG_WARN, "rescore.output",
                "cannot read the output of tally rescore (pid %d): %s", r->pid,
                uv_strerror(e));
      close_pipe(&r->out[i]);
    }
  }
}

void tally_rescore_child_run(tally_rescore_child_t *r,
                             tally_rescore_kind_t kind) {
  if (r->closing || kind < 0 || kind >= TALLY_RESCORE_KINDS)
    return;
  if (r->running && !r->want[kind])
    tally_log(r->opt.log, TALLY_LOG_DEBUG, "rescore.queued",
              "tally rescore %s runs after the one running now",
              kind_flag[kind]);
  r->want[kind] = true;
  start_next(r);
}

static void on_kill_timer(uv_timer_t *t) {
  tally_rescore_child_t *r = t->data;
  if (!r->running || r->exited)
    return;
  tally_log(r->opt.log, TALLY_LOG_WARN, "rescore.kill",
            "tally rescore (pid %d) still runs after SIGTERM: SIGKILL", r->pid);
  uv_process_kill(&r->proc, SIGKILL);
}

void tally_rescore_child_close(tally_rescore_child_t *r, uint64_t grace_ms,
                               void (*close_cb)(tally_rescore_child_t *r)) {
  if (r->closing)
    return;
  r->closing = true;
  r->close_cb = close_cb;
  memset(r->want, 0, sizeof(r->want));
  if (r->running && !r->exited && !uv_is_closing((uv_handle_t *)&r->proc)) {
    tally_log(r->opt.log, TALLY_LOG_INFO, "rescore.stop",
              "stopping tally rescore (pid %d)", r->pid);
    uv_process_kill(&r->proc, SIGTERM);
    uv_timer_start(&r->kill_timer, on_kill_timer, grace_ms, 0);
  }
  /* While a child runs (or its handles close), on_handle_closed closes the
   * timer. */
  if (!r->running)
    uv_close((uv_handle_t *)&r->kill_timer, on_timer_closed);
}
