/* tally score on several threads: the main thread reads the jobs in
 * batches of lines and writes their results in the order read; each
 * scoring thread has an engine of its own and scores whole batches. */
#include "cli/cli.h"
#include "engine/engine.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines and bytes of one batch, at most (a line longer than the bytes
 * makes a batch of its own). */
#define BATCH_LINES 256
#define BATCH_BYTES (1u << 20)

typedef struct batch_s {
  tally_buf_t in; /* the lines, each ending in '\0' */
  size_t starts[BATCH_LINES], lens[BATCH_LINES];
  size_t n;
  tally_buf_t out; /* their results, a line each */
  long failed;
  int rc; /* TALLY_ENOMEM when memory ran out */
  bool done;
  struct batch_s *next; /* in the queue to score */
} batch_t;

typedef struct par_s {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a batch is queued, or closing */
  pthread_cond_t done; /* a batch is scored */
  batch_t *head, *tail;
  bool closing;
  const tally_taskset_t *tasks;
  const tally_contestset_t *contests;
  const cli_out_t *form; /* how the results are written */
} par_t;

/* Scores batch b's lines, each into scratch (small and reused, so that
 * the engine writes where the cache is warm), then onto the batch's
 * results. */
static void score_batch(tally_engine_t *e, tally_buf_t *scratch, batch_t *b) {
  for (size_t i = 0; i < b->n && b->rc == 0; i++) {
    char *line = b->in.data + b->starts[i];
    size_t len = cli_trim_end(line, b->lens[i]);
    if (len == 0)
      continue;
    line[len] = '\0';
    tally_buf_reset(scratch);
    int rc = tally_engine_score(e, line, len, NULL, scratch);
    tally_buf_putc(scratch, '\n');
    if (rc != TALLY_ENOMEM && !scratch->oom)
      tally_buf_put(&b->out, scratch->data, scratch->len);
    if (rc == TALLY_ENOMEM || scratch->oom || b->out.oom)
      b->rc = TALLY_ENOMEM;
    else if (rc != 0)
      b->failed++;
  }
}

static void *scorer(void *arg) {
  par_t *p = arg;
  tally_engine_t e;
  tally_engine_init(&e, p->tasks);
  e.contests = p->contests;
  tally_buf_t scratch;
  tally_buf_init(&scratch);
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->head == NULL && !p->closing)
      pthread_cond_wait(&p->work, &p->mu);
    batch_t *b = p->head;
    if (b == NULL)
      break;
    p->head = b->next;
    if (p->head == NULL)
      p->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    score_batch(&e, &scratch, b);
    pthread_mutex_lock(&p->mu);
    b->done = true;
    pthread_cond_broadcast(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  tally_buf_close(&scratch);
  tally_engine_close(&e);
  return NULL;
}

static void batch_free(batch_t *b) {
  tally_buf_close(&b->in);
  tally_buf_close(&b->out);
  free(b);
}

/* The batches read and not yet written, oldest first, and the written
 * ones kept for reuse (so that their buffers, some MiB, are not made and
 * faulted in again for every batch). */
typedef struct {
  batch_t **v;
  size_t head, n, cap;
  batch_t *spare;
} ring_t;

static batch_t *batch_new(ring_t *r) {
  batch_t *b = r->spare;
  if (b != NULL) {
    r->spare = b->next;
    tally_buf_reset(&b->in);
    tally_buf_reset(&b->out);
    b->n = 0;
    b->failed = 0;
    b->rc = 0;
    b->done = false;
    b->next = NULL;
    return b;
  }
  b = calloc(1, sizeof(*b));
  if (b != NULL) {
    tally_buf_init(&b->in);
    tally_buf_init(&b->out);
  }
  return b;
}

static void batch_keep(ring_t *r, batch_t *b) {
  b->next = r->spare;
  r->spare = b;
}

/* Waits until the oldest batch is scored, writes it (unless emit is
 * false: an error came first) and frees it. Returns its rc; *failed grows
 * by its failed jobs. */
static int write_oldest(par_t *p, ring_t *r, long *failed, bool emit) {
  batch_t *b = r->v[r->head];
  pthread_mutex_lock(&p->mu);
  while (!b->done)
    pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
  r->head = (r->head + 1) % r->cap;
  r->n--;
  int rc = b->rc;
  if (emit) {
    if (cli_write_results(p->form, b->out.data, b->out.len) != 0 && rc == 0)
      rc = TALLY_EIO;
    *failed += b->failed;
    if (rc == TALLY_ENOMEM)
      fprintf(stderr, "tally: out of memory\n");
  }
  batch_keep(r, b);
  return rc;
}

static void submit(par_t *p, batch_t *b) {
  pthread_mutex_lock(&p->mu);
  if (p->tail != NULL)
    p->tail->next = b;
  else
    p->head = b;
  p->tail = b;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
}

long cli_score_parallel(const tally_taskset_t *tasks,
                        const tally_contestset_t *contests,
                        const cli_out_t *form, unsigned threads, FILE *f,
                        const char *name) {
  par_t p = {.tasks = tasks, .contests = contests, .form = form};
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.work, NULL);
  pthread_cond_init(&p.done, NULL);
  pthread_t *tids = calloc(threads, sizeof(*tids));
  ring_t r = {.cap = 2 * (size_t)threads + 1};
  r.v = calloc(r.cap, sizeof(*r.v));
  long failed = 0;
  int status = tids == NULL || r.v == NULL ? TALLY_ENOMEM : 0;
  unsigned started = 0;
  for (; status == 0 && started < threads; started++)
    if (pthread_create(&tids[started], NULL, scorer, &p) != 0)
      break;
  if (status == 0 && started == 0)
    status = TALLY_ENOMEM;

  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  batch_t *b = NULL;
  while (status == 0 && (got = getline(&line, &cap, f)) > 0) {
    if (b == NULL && (b = batch_new(&r)) == NULL) {
      status = TALLY_ENOMEM;
      break;
    }
    size_t len = (size_t)got;
    if (line[len - 1] == '\n')
      len--;
    b->starts[b->n] = b->in.len;
    b->lens[b->n++] = len;
    tally_buf_put(&b->in, line, len);
    tally_buf_putc(&b->in, '\0');
    if (b->in.oom) {
      status = TALLY_ENOMEM;
      break;
    }
    if (b->n < BATCH_LINES && b->in.len < BATCH_BYTES)
      continue;
    if (r.n == r.cap && (status = write_oldest(&p, &r, &failed, true)) != 0)
      break;
    r.v[(r.head + r.n++) % r.cap] = b;
    submit(&p, b);
    b = NULL;
  }
  if (status == 0 && ferror(f)) {
    fprintf(stderr, "tally: %s: read error\n", name);
    status = TALLY_EIO;
  }
  if (b != NULL && status == 0 && b->n > 0) {
    if (r.n == r.cap)
      status = write_oldest(&p, &r, &failed, true);
    if (status == 0) {
      r.v[(r.head + r.n++) % r.cap] = b;
      submit(&p, b);
      b = NULL;
    }
  }
  if (b != NULL)
    batch_free(b);
  free(line);
  /* Every batch handed over is written, or freed after an error. */
  while (r.n > 0) {
    int rc = write_oldest(&p, &r, &failed, status == 0);
    if (status == 0)
      status = rc;
  }
  pthread_mutex_lock(&p.mu);
  p.closing = true;
  pthread_cond_broadcast(&p.work);
  pthread_mutex_unlock(&p.mu);
  for (unsigned i = 0; i < started; i++)
    pthread_join(tids[i], NULL);
  free(tids);
  free(r.v);
  while (r.spare != NULL) {
    batch_t *next = r.spare->next;
    batch_free(r.spare);
    r.spare = next;
  }
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.work);
  pthread_cond_destroy(&p.done);
  if (status == TALLY_ENOMEM && started == 0)
    fprintf(stderr, "tally: out of memory\n");
  return status != 0 ? -1 : failed;
}
