/* tally-worker: scores the job batches that tallyd writes to its stdin and
 * answers each batch on its stdout, as docs/worker-protocol.md describes. */
#include "engine/engine.h"
#include "engine/plugins.h"
#include "worker/frame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Exit statuses: 0 when stdin ends between frames. */
#define EXIT_PROTOCOL 1 /* a framing error, an I/O error or no memory */
#define EXIT_CONFIG 2   /* bad usage, a bad fault hook or a bad config */

/* Each read asks for at least this much room, and for the rest of the
 * frame when that is more. */
#define READ_MIN (64 * 1024)

static const char usage[] = "usage: tally-worker --tasks DIR [--plugins DIR] "
                            "[--default-queue NAME]\n";

/* Test hooks, for the dispatcher's recovery tests; never set them in
 * production. TALLY_WORKER_FAULT names a fault and TALLY_WORKER_FAULT_AFTER
 * (default 0) the number of jobs the worker scores first. The fault then
 * fires before the next job: "crash" aborts, "hang" sleeps forever, and
 * "garbage" writes bytes that no frame reader accepts to stdout, then goes
 * on as usual. TALLY_WORKER_FAULT_MATCH, when set, replaces the count: the
 * fault fires before every job whose text contains that substring (a
 * poison job). The variables are read once, at start. */
typedef enum fault_e {
  FAULT_NONE,
  FAULT_CRASH,
  FAULT_HANG,
  FAULT_GARBAGE
} fault_t;

/* Everything the worker sets up once and reuses for every batch. */
typedef struct worker_s {
  tally_registry_t reg;
  tally_plugins_t plugins;
  tally_taskset_t tasks;
  tally_contestset_t contests;
  char queue[TALLY_BATCH_QUEUE_MAX + 1]; /* the job's, NUL-terminated */
  tally_engine_t engine;
  tally_frame_reader_t in;
  tally_buf_t out;   /* the response frame being built */
  tally_buf_t id;    /* the entry id, NUL-terminated */
  tally_buf_t extra; /* the "id" member added to each result */
  fault_t fault;
  unsigned long fault_after;
  const char *fault_match; /* NULL: fire by count */
  unsigned long jobs;      /* jobs scored so far */
} worker_t;

static void worker_init(worker_t *w) {
  memset(w, 0, sizeof(*w));
  tally_plugins_init(&w->plugins);
  tally_taskset_init(&w->tasks);
  tally_contestset_init(&w->contests);
  tally_engine_init(&w->engine, &w->tasks);
  w->engine.accept_tokens = true;
  w->engine.accept_judge = true;
  w->engine.add_version = true;
  tally_frame_reader_init(&w->in);
  tally_buf_init(&w->out);
  tally_buf_init(&w->id);
  tally_buf_init(&w->extra);
}

/* Plugins go last: the registry and the tasks may point into them. */
static void worker_close(worker_t *w) {
  tally_buf_close(&w->extra);
  tally_buf_close(&w->id);
  tally_buf_close(&w->out);
  tally_frame_reader_close(&w->in);
  tally_engine_close(&w->engine);
  tally_taskset_close(&w->tasks);
  tally_contestset_close(&w->contests);
  tally_registry_close(&w->reg);
  tally_plugins_close(&w->plugins);
}

/* Reads the fault hooks. Returns 0, or EXIT_CONFIG after a message. */
static int read_fault_hooks(worker_t *w) {
  static const char *const names[] = {[FAULT_CRASH] = "crash",
                                      [FAULT_HANG] = "hang",
                                      [FAULT_GARBAGE] = "garbage"};
  const char *fault = getenv("TALLY_WORKER_FAULT");
  const char *after = getenv("TALLY_WORKER_FAULT_AFTER");
  const char *match = getenv("TALLY_WORKER_FAULT_MATCH");
  if (match != NULL && match[0] != '\0')
    w->fault_match = match;
  if (fault != NULL && fault[0] != '\0') {
    for (int f = FAULT_CRASH; f <= FAULT_GARBAGE; f++)
      if (strcmp(fault, names[f]) == 0)
        w->fault = (fault_t)f;
    if (w->fault == FAULT_NONE) {
      fprintf(stderr,
              "tally-worker: TALLY_WORKER_FAULT: \"%s\" is not crash, hang "
              "or garbage\n",
              fault);
      return EXIT_CONFIG;
    }
  }
  if (after != NULL && after[0] != '\0') {
    char *end;
    errno = 0;
    w->fault_after = strtoul(after, &end, 10);
    if (errno != 0 || *end != '\0' || after[0] == '-') {
      fprintf(stderr,
              "tally-worker: TALLY_WORKER_FAULT_AFTER: \"%s\" is not a job "
              "count\n",
              after);
      return EXIT_CONFIG;
    }
  }
  return 0;
}

/* Writes all of data to fd, across partial writes and signals. Returns 0,
 * or -1 with errno set. */
static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Whether the fault hook is due before job: by its text when a match is
 * set, else by the count of jobs scored. */
static bool fault_due(const worker_t *w, const tally_batch_job_t *job) {
  if (w->fault == FAULT_NONE)
    return false;
  if (w->fault_match != NULL)
    return memmem(job->job, job->job_len, w->fault_match,
                  strlen(w->fault_match)) != NULL;
  return w->jobs == w->fault_after;
}

/* Fires the fault hook, if one is due before job. */
static void maybe_fault(worker_t *w, const tally_batch_job_t *job) {
  static const char garbage[] = "\xff\xff\xff\xffgarbage from a test hook";
  if (!fault_due(w, job))
    return;
  switch (w->fault) {
  case FAULT_CRASH: {
    /* No core file: the tests crash workers on purpose. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    abort();
  }
  case FAULT_HANG:
    for (;;)
      pause();
  case FAULT_GARBAGE:
    if (w->fault_match == NULL)
      w->fault = FAULT_NONE; /* by count, it fires once */
    if (write_all(STDOUT_FILENO, garbage, sizeof(garbage) - 1) != 0)
      fprintf(stderr, "tally-worker: cannot write: %s\n", strerror(errno));
    break;
  case FAULT_NONE:
    break;
  }
}

/* Appends the parts of a scored body after its result, each after a
 * newline: the summary, the public view and the full view. When the
 * summary finds the job's contest keys wrong, the body, from offset body
 * on, becomes a job error instead. Returns 0, TALLY_EJOB or
 * TALLY_ENOMEM. */
static int put_contest_parts(worker_t *w, size_t body) {
  tally_engine_t *e = &w->engine;
  tally_buf_putc(&w->out, '\n');
  int rc = tally_engine_summary(e, &w->out);
  if (rc == TALLY_EJOB) {
    w->out.len = body;
    w->out.data[body] = '\0';
    tally_render_error(&w->out, e->job.submission, e->err);
    return w->out.oom ? TALLY_ENOMEM : TALLY_EJOB;
  }
  for (int full = 0; full < 2 && rc == 0; full++) {
    tally_buf_putc(&w->out, '\n');
    rc = tally_engine_view(e, full, &w->out);
  }
  return rc == 0 && w->out.oom ? TALLY_ENOMEM : rc;
}

/* The response status of a job that the engine answered with rc. */
static tally_batch_status_t status_of(int rc) {
  if (rc == 0)
    return TALLY_BATCH_SCORED;
  return rc == TALLY_ENGINE_TOKEN   ? TALLY_BATCH_TOKEN
         : rc == TALLY_ENGINE_JUDGE ? TALLY_BATCH_JUDGE
                                    : TALLY_BATCH_JOB_ERROR;
}

/* Scores one job into the response w builds. Returns 0, or a negative
 * code after a message. */
static int score_job(worker_t *w, tally_batch_writer_t *bw,
                     const tally_batch_job_t *job) {
  tally_buf_reset(&w->id);
  tally_buf_put(&w->id, job->id, job->id_len);
  tally_buf_reset(&w->extra);
  tally_buf_puts(&w->extra, "\"id\":");
  tally_json_str(&w->extra, w->id.data);
  if (w->id.oom || w->extra.oom)
    return TALLY_ENOMEM;

  memcpy(w->queue, job->queue, job->queue_len);
  w->queue[job->queue_len] = '\0';
  w->engine.queue = job->queue_len > 0 ? w->queue : NULL;
  tally_batch_begin_result(bw, job->id, job->id_len);
  size_t body = w->out.len;
  int rc = tally_engine_score(&w->engine, job->job, job->job_len, w->extra.data,
                              &w->out);
  if (rc == 0)
    rc = put_contest_parts(w, body);
  if (rc == TALLY_EJOB) {
    /* The unscored summary, when the job decoded: one more line. */
    size_t mark = w->out.len;
    tally_buf_putc(&w->out, '\n');
    if (tally_engine_unscored(&w->engine, &w->out) != 0 || w->out.oom)
      return TALLY_ENOMEM;
    if (w->out.len == mark + 1) {
      w->out.len = mark;
      w->out.data[mark] = '\0';
    }
  }
  if (rc == TALLY_ENOMEM)
    return rc;
  rc = tally_batch_end_result(bw, status_of(rc));
  if (rc == TALLY_E2BIG) {
    /* The result alone, or with the results before it, is too large for
     * a frame; a short error takes its place. */
    tally_batch_begin_result(bw, job->id, job->id_len);
    tally_render_error(&w->out, w->engine.job.submission,
                       "result does not fit in one response frame");
    rc = tally_batch_end_result(bw, TALLY_BATCH_JOB_ERROR);
  }
  w->jobs++;
  return rc;
}

/* Answers one request frame with one response frame. Returns 0, or
 * EXIT_PROTOCOL after a message. */
static int answer(worker_t *w, const char *payload, size_t len) {
  tally_batch_reader_t br;
  tally_batch_writer_t bw;
  tally_batch_job_t job;
  int rc = tally_batch_reader_init(&br, payload, len);
  tally_buf_reset(&w->out);
  tally_batch_writer_begin(&bw, &w->out);
  while (rc == 0 && (rc = tally_batch_next_job(&br, &job)) == 1) {
    maybe_fault(w, &job);
    rc = score_job(w, &bw, &job);
  }
  if (br.error != 0) {
    fprintf(stderr, "tally-worker: bad request: %s\n", br.err);
    return EXIT_PROTOCOL;
  }
  if (rc == 0)
    rc = tally_batch_writer_end(&bw);
  if (rc != 0) {
    fprintf(stderr, "tally-worker: cannot build a response: %s\n",
            tally_strerror(rc));
    return EXIT_PROTOCOL;
  }
  if (write_all(STDOUT_FILENO, w->out.data, w->out.len) != 0) {
    fprintf(stderr, "tally-worker: cannot write: %s\n", strerror(errno));
    return EXIT_PROTOCOL;
  }
  return 0;
}

/* Reads frames from stdin until it ends. Returns the exit status. */
static int serve(worker_t *w) {
  for (;;) {
    char *buf;
    size_t avail;
    if (tally_frame_reader_space(&w->in, READ_MIN, &buf, &avail) != 0) {
      fprintf(stderr, "tally-worker: out of memory\n");
      return EXIT_PROTOCOL;
    }
    ssize_t n = read(STDIN_FILENO, buf, avail);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      fprintf(stderr, "tally-worker: cannot read: %s\n", strerror(errno));
      return EXIT_PROTOCOL;
    }
    if (n == 0) {
      if (tally_frame_reader_eof(&w->in) != 0) {
        fprintf(stderr, "tally-worker: %s\n", w->in.err);
        return EXIT_PROTOCOL;
      }
      return 0;
    }
    tally_frame_reader_commit(&w->in, (size_t)n);
    const char *payload;
    size_t len;
    int rc;
    while ((rc = tally_frame_reader_next(&w->in, &payload, &len)) == 1) {
      int status = answer(w, payload, len);
      if (status != 0)
        return status;
    }
    if (rc < 0) {
      fprintf(stderr, "tally-worker: %s\n", w->in.err);
      return EXIT_PROTOCOL;
    }
  }
}

/* Loads plugins and tasks. Returns 0, or EXIT_CONFIG after the messages. */
static int load(worker_t *w, const char *task_dir, const char *plugin_dir) {
  char err[1024];
  if (tally_registry_init(&w->reg) != 0) {
    fprintf(stderr, "tally-worker: out of memory\n");
    return EXIT_CONFIG;
  }
  if (plugin_dir != NULL &&
      tally_plugins_load_dir(&w->plugins, &w->reg, plugin_dir, err,
                             sizeof(err)) != 0) {
    fprintf(stderr, "tally-worker: %s\n", err);
    return EXIT_CONFIG;
  }
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  int rc = tally_taskset_load(&w->tasks, &w->reg, task_dir, &d);
  for (size_t i = 0; i < d.count; i++)
    fprintf(stderr, "tally-worker: %s\n", d.msgs[i]);
  if (d.dropped > 0)
    fprintf(stderr, "tally-worker: (%zu more errors not shown)\n", d.dropped);
  tally_diag_close(&d);
  if (rc != 0)
    return EXIT_CONFIG;
  /* The contests beside the tasks: a job for a task its contest does not
   * list is refused. */
  tally_diag_init(&d, NULL);
  rc = tally_contestset_load_beside(&w->contests, task_dir, &d);
  if (rc == 0)
    rc = tally_contestset_check_tasks(&w->contests, &w->tasks, &d);
  for (size_t i = 0; i < d.count; i++)
    fprintf(stderr, "tally-worker: %s\n", d.msgs[i]);
  tally_diag_close(&d);
  if (rc != 0)
    return EXIT_CONFIG;
  tally_engine_use(&w->engine, &w->tasks);
  w->engine.contests = &w->contests;
  return 0;
}

int main(int argc, char **argv) {
  const char *task_dir = NULL, *plugin_dir = NULL, *default_queue = NULL;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc && !task_dir)
      task_dir = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc && !plugin_dir)
      plugin_dir = argv[++i];
    else if (strcmp(argv[i], "--default-queue") == 0 && i + 1 < argc &&
             !default_queue && tally_queue_name_ok(argv[i + 1]))
      default_queue = argv[++i];
    else
      bad = true;
  }
  if (bad || task_dir == NULL) {
    fputs(usage, stderr);
    return EXIT_CONFIG;
  }

  worker_t w;
  worker_init(&w);
  int status = read_fault_hooks(&w);
  if (status == 0)
    status = load(&w, task_dir, plugin_dir);
  w.engine.default_queue = default_queue;
  if (status == 0)
    status = serve(&w);
  worker_close(&w);
  return status;
}
