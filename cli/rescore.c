/* Rescoring stored submissions from their jobs (docs/contest.md): see
 * rescore.h. */
#include "cli/rescore_int.h"

#include "engine/engine.h"
#include "redis/redis.h"
#include "redis/scripts.h"
#include "redis/slots.h"
#include "redis/verdicts.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long epoch_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

char *tally__rs_dup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d != NULL) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

int tally__rs_fail(char *err, size_t errlen, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return code;
}

redisContext *tally_rescore_connect(const char *url, const char *prefix,
                                    uint64_t timeout_ms, char *err,
                                    size_t errlen) {
  char why[1024];
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, url, why, sizeof(why)) != 0) {
    tally__rs_fail(err, errlen, 0, "bad Redis URL %s", why);
    return NULL;
  }
  redisContext *c = tally_redis_connect_sync(&u, timeout_ms, why, sizeof(why));
  /* On a cluster, the master of the queue's slot (every key of the queue
   * has its hash tag). */
  char jobs[300];
  snprintf(jobs, sizeof(jobs), "%s:jobs", prefix);
  bool cluster;
  if (c != NULL &&
      tally_redis_slot_sync(&c, &u, tally_key_slot(jobs, strlen(jobs)),
                            timeout_ms, &cluster, why, sizeof(why)) != 0) {
    redisFree(c);
    c = NULL;
  }
  tally_redis_url_free(&u);
  if (c == NULL)
    tally__rs_fail(err, errlen, 0, "%s", why);
  return c;
}

/* Says in err why reply (of command what, on c) is not of type; returns
 * TALLY_EIO. */
int tally__rs_reply_error(const run_t *run, redisContext *c,
                          const redisReply *reply, const char *what, char *err,
                          size_t errlen) {
  return tally__rs_fail(
      err, errlen, TALLY_EIO, "Redis at %s: %s: %s", run->url, what,
      reply == NULL                      ? c->errstr
      : reply->type == REDIS_REPLY_ERROR ? reply->str
                                         : "unexpected reply");
}

/* Runs a command on c and checks its reply type. Returns the reply (the
 * caller frees it), or NULL with err set. */
redisReply *tally__rs_command(const run_t *run, redisContext *c, int type,
                              char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  if (r != NULL && r->type == type)
    return r;
  char what[64];
  snprintf(what, sizeof(what), "%.*s", (int)strcspn(fmt, " "), fmt);
  tally__rs_reply_error(run, c, r, what, err, errlen);
  if (r != NULL)
    freeReplyObject(r);
  return NULL;
}

/* The lock: SET NX PX with a value naming this process, refreshed and
 * released only by its holder (redis/lua/lock_refresh.lua and
 * lock_release.lua). */

/* Whether a run of this process holds the lock now. */
static atomic_bool holding;

/* Takes the lock, waiting for it as long as the options say. Returns 0,
 * or TALLY_EIO with err set. */
static int lock_take(run_t *run, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  char host[128] = "?";
  gethostname(host, sizeof(host) - 1);
  /* One value for the process: a run started again after a failover (the
   * lock may have reached the new master) finds the lock its own. */
  static long long started;
  if (started == 0)
    started = epoch_ms();
  snprintf(run->lock_value, sizeof(run->lock_value), "%s:%ld:%lld", host,
           (long)getpid(), started);
  double t0 = now_s();
  bool told = false;
  for (;;) {
    redisReply *r = redisCommand(run->ctl, "SET %s %s NX PX %d", run->lock_key,
                                 run->lock_value, LOCK_TTL_MS);
    if (r == NULL ||
        (r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_NIL)) {
      int rc = tally__rs_reply_error(run, run->ctl, r, "SET (the rescore lock)",
                                     err, errlen);
      if (r != NULL)
        freeReplyObject(r);
      return rc;
    }
    bool got = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (!got && !atomic_load(&holding)) {
      /* Ours already (an earlier run of this process, cut off by a
       * failover): refreshed, kept. */
      r = redisCommand(run->ctl, "EVAL %s 1 %s %s %d", tally_lua_lock_refresh,
                       run->lock_key, run->lock_value, LOCK_TTL_MS);
      got = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
      if (r != NULL)
        freeReplyObject(r);
    }
    if (got) {
      atomic_store(&holding, true);
      run->locked = true;
      return 0;
    }
    if (!told) {
      r = redisCommand(run->ctl, "GET %s", run->lock_key);
      if (o->on_wait != NULL)
        o->on_wait(r != NULL && r->type == REDIS_REPLY_STRING ? r->str : "?",
                   o->data);
      if (r != NULL)
        freeReplyObject(r);
      told = true;
    }
    if (o->cancel != NULL && *o->cancel)
      return tally__rs_fail(err, errlen, TALLY_EIO,
                            "interrupted while waiting for the lock %s",
                            run->lock_key);
    if (o->lock_wait_ms > 0 && (now_s() - t0) * 1000 >= o->lock_wait_ms)
      return tally__rs_fail(
          err, errlen, TALLY_EIO,
          "another rescore holds the lock %s; gave up after %.1f s",
          run->lock_key, (double)o->lock_wait_ms / 1000);
    sleep_ms(250);
  }
}

/* Keeps the lock alive. Returns 0, or TALLY_EIO when it was lost. */
static int lock_refresh(run_t *run, char *err, size_t errlen) {
  redisReply *r = tally__rs_command(
      run, run->ctl, REDIS_REPLY_INTEGER, err, errlen, "EVAL %s 1 %s %s %d",
      tally_lua_lock_refresh, run->lock_key, run->lock_value, LOCK_TTL_MS);
  if (r == NULL)
    return TALLY_EIO;
  bool held = r->integer == 1;
  freeReplyObject(r);
  return held ? 0
              : tally__rs_fail(
                    err, errlen, TALLY_EIO,
                    "lost the rescore lock %s (it expired or was deleted)",
                    run->lock_key);
}

static void lock_release(run_t *run) {
  if (!run->locked)
    return;
  atomic_store(&holding, false);
  redisReply *r =
      redisCommand(run->ctl, "EVAL %s 1 %s %s", tally_lua_lock_release,
                   run->lock_key, run->lock_value);
  if (r != NULL)
    freeReplyObject(r);
  run->locked = false;
}

/* Progress. */

static void stats_fill(const run_t *run, tally_rescore_stats_t *st) {
  st->state = run->state;
  st->total = run->n;
  st->scored = atomic_load(&run->scored);
  st->done = atomic_load(&run->done);
  st->changed = atomic_load(&run->changed);
  st->failed = atomic_load(&run->failed);
  st->skipped = atomic_load(&run->skipped);
  st->gone = atomic_load(&run->gone);
  st->retried = atomic_load(&run->retried);
  st->seconds = run->t0 > 0 ? now_s() - run->t0 : 0;
  st->select_seconds = run->phase_s[0];
  st->score_seconds = run->phase_s[1];
  st->write_seconds = run->phase_s[2];
}

/* Writes <p>:rescore. Returns 0 or TALLY_EIO. */
static int progress_write(run_t *run, const char *error, char *err,
                          size_t errlen) {
  tally_rescore_stats_t st = {0};
  stats_fill(run, &st);
  char nums[8][32];
  snprintf(nums[0], sizeof(nums[0]), "%zu", st.total);
  snprintf(nums[1], sizeof(nums[1]), "%zu", st.scored);
  snprintf(nums[2], sizeof(nums[2]), "%zu", st.done);
  snprintf(nums[3], sizeof(nums[3]), "%zu", st.changed);
  snprintf(nums[4], sizeof(nums[4]), "%zu", st.failed);
  snprintf(nums[5], sizeof(nums[5]), "%lld", run->started);
  snprintf(nums[6], sizeof(nums[6]), "%lld", epoch_ms());
  snprintf(nums[7], sizeof(nums[7]), "%.1f",
           st.seconds > 0 ? (double)st.done / st.seconds : 0.0);
  const char *argv[] = {"HSET",    run->progress_key, "state",   run->state,
                        "total",   nums[0],           "scored",  nums[1],
                        "done",    nums[2],           "changed", nums[3],
                        "failed",  nums[4],           "started", nums[5],
                        "updated", nums[6],           "rate",    nums[7],
                        "error",   error ? error : ""};
  int argc = (int)(sizeof(argv) / sizeof(argv[0]));
  redisReply *r = redisCommandArgv(run->ctl, argc, argv, NULL);
  int rc = r != NULL && r->type == REDIS_REPLY_INTEGER
               ? 0
               : tally__rs_reply_error(run, run->ctl, r, "HSET (progress)", err,
                                       errlen);
  if (r != NULL)
    freeReplyObject(r);
  return rc;
}

/* Waits for the workers of a phase, telling the progress as it goes and
 * keeping the lock. Returns 0 or TALLY_EIO (the workers are stopped). */
static int monitor(run_t *run, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  double last_cb = 0, last_write = now_s(), last_lock = now_s();
  int rc = 0;
  while (atomic_load(&run->running) > 0) {
    sleep_ms(20);
    double t = now_s();
    if (rc == 0 && o->cancel != NULL && *o->cancel) {
      rc = tally__rs_fail(err, errlen, TALLY_EIO, "interrupted");
      atomic_store(&run->stop, true);
    }
    if (o->on_progress != NULL && (t - last_cb) * 1000 >= CALLBACK_MS) {
      tally_rescore_stats_t st = {0};
      stats_fill(run, &st);
      o->on_progress(&st, o->data);
      last_cb = t;
    }
    if (o->dry_run || rc != 0)
      continue;
    if ((t - last_write) * 1000 >= PROGRESS_MS) {
      rc = progress_write(run, NULL, err, errlen);
      last_write = t;
    }
    if (rc == 0 && (t - last_lock) * 1000 >= LOCK_REFRESH_MS) {
      rc = lock_refresh(run, err, errlen);
      last_lock = t;
    }
    if (rc != 0)
      atomic_store(&run->stop, true);
  }
  return rc;
}

/* Runs fn on every worker and waits for them. Returns 0, or the first
 * error (in err). */
static int phase(run_t *run, const char *state, void *(*fn)(void *), char *err,
                 size_t errlen) {
  run->state = state;
  atomic_store(&run->next, 0);
  atomic_store(&run->running, run->nworkers);
  for (unsigned k = 0; k < run->nworkers; k++) {
    worker_t *w = run->workers[k];
    w->started = pthread_create(&w->thread, NULL, fn, w) == 0;
    if (!w->started) {
      w->status = tally__rs_fail(w->err, sizeof(w->err), TALLY_ENOMEM,
                                 "cannot start a thread");
      atomic_store(&run->stop, true);
      atomic_fetch_sub(&run->running, 1);
    }
  }
  int rc = monitor(run, err, errlen);
  for (unsigned k = 0; k < run->nworkers; k++) {
    worker_t *w = run->workers[k];
    if (w->started)
      pthread_join(w->thread, NULL);
    w->started = false;
    if (rc == 0 && w->status != 0) {
      rc = w->status;
      snprintf(err, errlen, "%s", w->err);
    }
  }
  return rc;
}

/* Setting up and tearing down. */

static void workers_free(run_t *run) {
  for (unsigned k = 0; k < run->nworkers; k++) {
    worker_t *w = run->workers[k];
    if (w == NULL)
      continue;
    if (w->c != NULL)
      redisFree(w->c);
    tally_engine_close(&w->e);
    tally_arena_free(&w->arena);
    free(w->judged);
    tally_buf_close(&w->out);
    tally_buf_close(&w->sum);
    for (size_t i = 0; i < TALLY_CALL_MAX_ITEMS; i++) {
      tally_texts_close(&w->direct[i]);
      tally_place_calc_close(&w->places[i]);
      tally_place_id_free(&w->place_ids[i]);
    }
    free(w->seen);
    free(w);
  }
  free(run->workers);
}

static int workers_new(run_t *run, unsigned n, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  if ((run->workers = calloc(n, sizeof(*run->workers))) == NULL)
    return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
  for (unsigned k = 0; k < n; k++) {
    worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
      return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
    run->workers[k] = w;
    run->nworkers = k + 1;
    w->run = run;
    tally_engine_init(&w->e, o->tasks);
    w->e.accept_judge = true;
    w->e.summary_only = true;
    tally_buf_init(&w->out);
    tally_buf_init(&w->sum);
    for (size_t i = 0; i < TALLY_CALL_MAX_ITEMS; i++) {
      tally_texts_init(&w->direct[i]);
      tally_place_calc_init(&w->places[i]);
    }
    if ((w->seen = calloc(o->tasks->count + 1, sizeof(bool))) == NULL)
      return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
    if ((w->c = tally_rescore_connect(o->url, o->prefix, TIMEOUT_MS, err,
                                      errlen)) == NULL)
      return TALLY_EIO;
  }
  return 0;
}

static int load_script(run_t *run, char *err, size_t errlen) {
  redisReply *r =
      tally__rs_command(run, run->ctl, REDIS_REPLY_STRING, err, errlen,
                        "SCRIPT LOAD %s", tally_scripts[TALLY_SCRIPT_RESCORE]);
  if (r == NULL)
    return TALLY_EIO;
  snprintf(run->sha, sizeof(run->sha), "%s", r->str);
  freeReplyObject(r);
  return 0;
}

/* Checks the selection. */
static int check_opts(const tally_rescore_opts_t *o, char *err, size_t errlen) {
  bool indexes = o->task || o->contest || o->participant || o->submission;
  if (!indexes && !o->changed && !o->stale)
    return tally__rs_fail(
        err, errlen, TALLY_EINVAL,
        "nothing to rescore: give --task, --contest, --participant, "
        "--submission, --changed or --stale");
  if ((o->changed && (o->stale || indexes)) || (o->stale && indexes))
    return tally__rs_fail(err, errlen, TALLY_EINVAL,
                          "--%s goes alone: it cannot be combined with another "
                          "selection",
                          o->changed ? "changed" : "stale");
  if (o->task != NULL && tally_taskset_find(o->tasks, o->task) == NULL)
    return tally__rs_fail(err, errlen, TALLY_EINVAL,
                          "task \"%s\" is not among the loaded task configs",
                          o->task);
  return 0;
}

/* The names of the tasks the workers saw, into st. */
static int stats_tasks(const run_t *run, tally_rescore_stats_t *st) {
  const tally_taskset_t *ts = run->o->tasks;
  if ((st->tasks = calloc(ts->count + 1, sizeof(char *))) == NULL)
    return TALLY_ENOMEM;
  for (size_t k = 0; k < ts->count; k++) {
    bool seen = false;
    for (unsigned j = 0; j < run->nworkers; j++)
      seen = seen || run->workers[j]->seen[k];
    if (seen &&
        (st->tasks[st->ntasks++] = strdup(ts->entries[k].task->name)) == NULL)
      return TALLY_ENOMEM;
  }
  return 0;
}

static void report_changes(const run_t *run) {
  const tally_rescore_opts_t *o = run->o;
  for (size_t k = 0; o->on_change != NULL && k < run->n; k++) {
    const item_t *it = &run->items[k];
    if (it->state != IT_SEND || !it->differs)
      continue;
    tally_rescore_change_t ch = {.submission = it->id,
                                 .task = it->task,
                                 .participant = it->participant,
                                 .contest = it->contest,
                                 .old_scored = it->old_scored,
                                 .new_scored = it->new_scored,
                                 .old_score = it->old_score,
                                 .old_public_score = it->old_public,
                                 .new_score = it->new_score,
                                 .new_public_score = it->new_public,
                                 .error = it->error};
    o->on_change(&ch, o->data);
  }
}

/* Everything after the lock. */
static int rescore(run_t *run, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  int rc = 0;
  if (!o->dry_run)
    rc = progress_write(run, NULL, err, errlen);
  double t = now_s();
  if (rc == 0)
    rc = tally__rs_select_items(run, err, errlen);
  run->phase_s[0] = now_s() - t;
  unsigned n = o->threads;
  if (n == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n = cpus > 0 ? (unsigned)cpus : 1;
  }
  if (rc == 0)
    rc = workers_new(run, n, err, errlen);
  t = now_s();
  if (rc == 0 && run->n > 0)
    rc = phase(run, "scoring", tally__rs_score_main, err, errlen);
  run->phase_s[1] = now_s() - t;
  if (rc == 0 && !o->dry_run) {
    run->send = malloc((run->n + 1) * sizeof(*run->send));
    if (run->send == NULL)
      rc = tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
    for (size_t k = 0; rc == 0 && k < run->n; k++)
      if (run->items[k].state == IT_SEND ||
          (run->items[k].state == IT_UNCHANGED && run->items[k].kept != NULL))
        run->send[run->nsend++] = &run->items[k];
    if (rc == 0) {
      t = now_s();
      qsort(run->send, run->nsend, sizeof(*run->send), tally__rs_cmp_order);
      if (tally__rs_plan_calls(run) != 0)
        rc = tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
      if (rc == 0 && run->nsend > 0)
        rc = phase(run, "writing", tally__rs_write_main, err, errlen);
      run->phase_s[2] = now_s() - t;
    }
  }
  if (rc == 0)
    report_changes(run);
  return rc;
}

int tally_rescore_run(const tally_rescore_opts_t *o, tally_rescore_stats_t *st,
                      char *err, size_t errlen) {
  run_t *run = calloc(1, sizeof(*run));
  memset(st, 0, sizeof(*st));
  st->state = "failed";
  if (run == NULL)
    return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
  run->o = o;
  run->state = "selecting";
  snprintf(run->url, sizeof(run->url), "%s", o->url);
  snprintf(run->lock_key, sizeof(run->lock_key), "%s:rescore:lock", o->prefix);
  snprintf(run->progress_key, sizeof(run->progress_key), "%s:rescore",
           o->prefix);
  int rc = check_opts(o, err, errlen);
  if (rc == 0 && (run->ctl = tally_rescore_connect(
                      o->url, o->prefix, TIMEOUT_MS, err, errlen)) == NULL)
    rc = TALLY_EIO;
  if (rc == 0 && !o->dry_run)
    rc = load_script(run, err, errlen);
  if (rc == 0 && !o->dry_run)
    rc = lock_take(run, err, errlen);
  if (rc == 0) {
    run->t0 = now_s();
    run->started = epoch_ms();
    rc = rescore(run, err, errlen);
    if (rc == 0 && !o->dry_run)
      rc = tally__rs_finish_pending(run, err, errlen);
    run->state = rc == 0 ? "done" : "failed";
    if (!o->dry_run && run->ctl->err == 0) {
      char why[256];
      progress_write(run, rc == 0 ? NULL : err, why, sizeof(why));
    }
  }
  stats_fill(run, st);
  st->state = rc == 0 ? "done" : "failed";
  if (rc == 0 && stats_tasks(run, st) != 0)
    rc = tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
  if (o->on_progress != NULL && run->t0 > 0)
    o->on_progress(st, o->data);
  if (run->ctl != NULL) {
    lock_release(run);
    redisFree(run->ctl);
  }
  workers_free(run);
  for (size_t k = 0; k < run->n; k++) {
    tally__rs_item_clear(&run->items[k]);
    free(run->items[k].id);
  }
  free(run->items);
  free(run->send);
  free(run->calls);
  for (size_t k = 0; k < run->nversions; k++) {
    free(run->versions[k].task);
    free(run->versions[k].version);
  }
  free(run->versions);
  for (size_t k = 0; k < run->npending; k++) {
    free(run->pending[k].task);
    free(run->pending[k].version);
  }
  free(run->pending);
  free(run->finishing);
  free(run);
  return rc;
}

void tally_rescore_stats_close(tally_rescore_stats_t *st) {
  for (size_t k = 0; k < st->ntasks; k++)
    free(st->tasks[k]);
  free(st->tasks);
  st->tasks = NULL;
  st->ntasks = 0;
}
