/* tallyd: the daemon that scores the jobs of a Redis stream with a pool of
 * worker processes and posts each result exactly once. */
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAILED 1
#define EXIT_CONFIG 2

/* How long the embedded server gets to flush its append-only file. */
#define EMBEDDED_GRACE_MS 10000
/* How long a rescore child gets between SIGTERM and SIGKILL at shutdown. */
#define RESCORE_GRACE_MS 5000
/* How often readiness is checked (until READY=1 is sent), and how often
 * STATUS= tells systemd the rate and the lag. */
#define OPS_TICK_MS 250
#define STATUS_EVERY_MS 5000

#include "daemon/tallyd_int.h"

/* The judge's key: --judge-key-file's one line, else TALLY_JUDGE_KEY,
 * else none. Returns 0, or EXIT_CONFIG after logging why (never the
 * key). */
static int judge_key(tallyd_t *t, char **key) {
  *key = NULL;
  const char *path = t->set.judge_key_file;
  if (path == NULL) {
    const char *env = getenv("TALLY_JUDGE_KEY");
    if (env != NULL && env[0] != '\0' && (*key = strdup(env)) == NULL)
      return EXIT_FAILED;
    return 0;
  }
  char err[512];
  int rc =
      tally_redis_read_secret(path, "--judge-key-file", key, err, sizeof(err));
  if (rc == 0)
    return 0;
  tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
  return rc == TALLY_ENOMEM ? EXIT_FAILED : EXIT_CONFIG;
}

/* Starts the judge client when --judge-url is given. */
static int start_judge(tallyd_t *t) {
  if (t->set.judge_url == NULL && t->set.judge_model == NULL)
    return 0;
  if (t->set.judge_url == NULL || t->set.judge_model == NULL) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config",
              "%s: needs %s as well (the judge's endpoint and model)",
              t->set.judge_url ? "--judge-url" : "--judge-model",
              t->set.judge_url ? "--judge-model" : "--judge-url");
    return EXIT_CONFIG;
  }
  char *key = NULL;
  int rc = judge_key(t, &key);
  if (rc != 0)
    return rc;
  tally_judge_options_t jo = {
      .url = t->set.judge_url,
      .model = t->set.judge_model,
      .key = key,
      .concurrency = t->set.judge_concurrency,
      .timeout_ms = t->set.judge_timeout,
      .attempts = t->set.judge_attempts,
      .backoff_ms = t->set.judge_backoff,
      .backoff_max_ms = t->set.judge_backoff_max,
      .log = &t->log,
  };
  char err[256];
  rc = tally_judge_client_init(t->loop, &t->judge, &jo, err, sizeof(err));
  if (key != NULL) {
    memset(key, 0, strlen(key));
    free(key);
  }
  if (rc != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
    return rc == TALLY_ENOMEM ? EXIT_FAILED : EXIT_CONFIG;
  }
  t->judge_up = true;
  tally_log(&t->log, TALLY_LOG_INFO, "judge", "judge model %s at %s",
            t->set.judge_model, t->set.judge_url);
  return 0;
}

/* Shutting down, in order: drain (which closes the pool), the dispatcher,
 * the embedded server, the signal handles. */

static void on_signal_closed(uv_handle_t *h) {
  (void)h;
}

static void finish(tallyd_t *t) {
  if (t->judge_up)
    tally_judge_client_close(&t->judge, NULL);
  t->judge_up = false;
  if (t->http_up)
    tally_front_close(&t->front, NULL);
  t->http_up = false;
  uv_close((uv_handle_t *)&t->ops_timer, NULL);
  uv_close((uv_handle_t *)&t->watchdog, NULL);
  uv_close((uv_handle_t *)&t->sigterm, on_signal_closed);
  uv_close((uv_handle_t *)&t->sigint, on_signal_closed);
  uv_close((uv_handle_t *)&t->sighup, on_signal_closed);
}

static void on_embedded_stopped(tally_embedded_t *e) {
  tallyd_t *t = e->loop->data;
  finish(t);
}

static void on_dispatch_closed(tally_dispatch_t *d) {
  tallyd_t *t = d->data;
  if (++t->nclosed < t->ndisps)
    return;
  if (t->embedded)
    tally_embedded_stop(&t->emb, EMBEDDED_GRACE_MS, on_embedded_stopped);
  else
    finish(t);
}

static void on_drained(tally_dispatch_t *d) {
  tallyd_t *t = d->data;
  if (++t->ndrained < t->ndisps)
    return;
  tally_log(&t->log, TALLY_LOG_INFO, "stop", "drained; closing");
  for (size_t i = 0; i < t->ndisps; i++)
    tally_dispatch_close(&t->disps[i], on_dispatch_closed);
}

/* Drains every queue's dispatcher. */
static void drain_all(tallyd_t *t) {
  for (size_t i = 0; i < t->ndisps; i++)
    tally_dispatch_drain(&t->disps[i], t->set.drain_timeout, on_drained);
}

/* The automatic rescore: `tally rescore --changed` once the write
 * connection is first ready and after each accepted reload, and `tally
 * rescore --stale` when results come back scored with an old config. */

static void on_ready(tally_dispatch_t *d) {
  tallyd_t *t = d->data;
  if (t->rescore_child_up && !t->rescored) {
    t->rescored = true;
    tally_rescore_child_run(&t->resc, TALLY_RESCORE_CHANGED);
  }
}

/* Another live tallyd holds this consumer name: this one stops. */
static void on_fatal(tally_dispatch_t *d, const char *why) {
  tallyd_t *t = d->data;
  (void)why; /* logged by the dispatcher */
  t->exit_code = EXIT_FAILED;
  if (t->stopping)
    return;
  t->stopping = true;
  tally_notify_send(&t->notify, "STOPPING=1");
  tally_log(&t->log, TALLY_LOG_ERROR, "stop",
            "cannot run beside the other tallyd: draining");
  if (t->rescore_child_up)
    tally_rescore_child_close(&t->resc, RESCORE_GRACE_MS, NULL);
  drain_all(t);
}

static void on_stale(tally_dispatch_t *d) {
  tallyd_t *t = d->data;
  if (t->rescore_child_up)
    tally_rescore_child_run(&t->resc, TALLY_RESCORE_STALE);
}

static void on_signal(uv_signal_t *h, int signum) {
  tallyd_t *t = h->data;
  if (signum == SIGHUP) {
    if (t->stopping)
      return;
    if (t->reloading) {
      t->reload_again = true;
      tally_log(&t->log, TALLY_LOG_INFO, "reload",
                "SIGHUP while a reload runs: another follows it");
      return;
    }
    start_reload(t);
    return;
  }
  if (t->stopping) {
    tally_log(&t->log, TALLY_LOG_INFO, "stop", "%s: already draining",
              strsignal(signum));
    return;
  }
  t->stopping = true;
  tally_notify_send(&t->notify, "STOPPING=1");
  tally_log(&t->log, TALLY_LOG_INFO, "stop", "%s: draining", strsignal(signum));
  if (t->rescore_child_up)
    tally_rescore_child_close(&t->resc, RESCORE_GRACE_MS, NULL);
  drain_all(t);
}

static void print_diag(const tally_diag_t *d) {
  for (size_t i = 0; i < d->count; i++)
    fprintf(stderr, "tallyd: %s\n", d->msgs[i]);
  if (d->dropped > 0)
    fprintf(stderr, "tallyd: (%zu more errors not shown)\n", d->dropped);
}

/* Writes tallyd's pid to --pidfile, if set, holding its lock while tallyd
 * runs (daemon/pidfile.h). Returns 0, or -1 after logging why. */
static int write_pidfile(tallyd_t *t) {
  if (t->set.pidfile == NULL)
    return 0;
  if (tally_pidfile_take(t->set.pidfile, &t->log, &t->pidfile_fd) != 0)
    return -1;
  t->pidfile_written = true;
  return 0;
}

/* Readiness and status for systemd: READY=1 once Redis is connected,
 * the scripts are loaded, a worker is alive and HTTP listens; then
 * STATUS= every few seconds with the rate of jobs finished and the lag. */
static void on_ops_tick(uv_timer_t *h) {
  tallyd_t *t = h->data;
  if (t->stopping)
    return;
  uint64_t now = uv_now(t->loop);
  char why[512];
  bool ready = tally_ops_ready(&t->ops, why, sizeof(why));
  if (!t->notified_ready && ready) {
    t->notified_ready = true;
    tally_notify_send(&t->notify, "READY=1\nSTATUS=ready: scoring");
    tally_log(&t->log, TALLY_LOG_INFO, "ready",
              "Redis connected, scripts loaded, %s; HTTP %s",
              t->set.workers == 1 ? "the worker is up" : "workers are up",
              t->http_up ? t->front.http.where : "off");
    t->status_next = now + STATUS_EVERY_MS;
  }
  if (!t->notified_ready || now < t->status_next)
    return;
  uint64_t done = 0;
  double lag = 0;
  size_t njobs = 0;
  for (size_t i = 0; i < t->ndisps; i++) {
    const tally_dispatch_t *d = &t->disps[i];
    done += d->stats.scored + d->stats.tokens + d->stats.dead;
    lag += d->probe.lag;
    njobs += d->njobs;
  }
  double rate = t->status_ms != 0 && now > t->status_ms
                    ? (double)(done - t->status_done) * 1000.0 /
                          (double)(now - t->status_ms)
                    : 0;
  t->status_done = done;
  t->status_ms = now;
  t->status_next = now + STATUS_EVERY_MS;
  if (ready)
    tally_notify_send(&t->notify,
                      "STATUS=scoring: %.0f jobs/s, lag %.0f, %zu in flight",
                      rate, lag, njobs);
  else
    tally_notify_send(&t->notify, "STATUS=not ready: %s", why);
}

/* WATCHDOG=1 from the loop, twice per WATCHDOG_USEC: a loop that stops
 * turning stops it, and systemd restarts tallyd. */
static void on_watchdog(uv_timer_t *h) {
  tallyd_t *t = h->data;
  tally_notify_send(&t->notify, "WATCHDOG=1");
}

/* The readiness and status timer, and the watchdog's. Returns 0. */
static int start_timers(tallyd_t *t) {
  uv_timer_start(&t->ops_timer, on_ops_tick, OPS_TICK_MS, OPS_TICK_MS);
  if (t->notify.watchdog_usec > 0) {
    uint64_t every = t->notify.watchdog_usec / 2000;
    uv_timer_start(&t->watchdog, on_watchdog, 0, every > 0 ? every : 1);
  }
  return 0;
}

/* Starts the HTTP listener, if --http is not off. Returns 0, or an exit
 * status after logging why. */
static int start_ops(tallyd_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  t->ops.start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  t->ops.pool = t->pool_up ? &t->pool : NULL;
  if (strcmp(t->set.http, "off") != 0) {
    char err[512];
    t->front.ops = &t->ops;
    t->front.log = &t->log;
    if (tally_front_listen(&t->front, t->loop, t->set.http, err, sizeof(err)) !=
        0) {
      if (t->set.http_given) {
        tally_log(&t->log, TALLY_LOG_ERROR, "http", "%s", err);
        return EXIT_FAILED;
      }
      /* The default address: another tallyd on this machine may hold it
       * (several daemons on one machine are fine): run without HTTP. */
      tally_log(&t->log, TALLY_LOG_WARN, "http",
                "%s; running without HTTP (give --http to choose an "
                "address, or off)",
                err);
      return start_timers(t);
    }
    t->http_up = true;
    t->ops.http = &t->front.http;
    tally_log(&t->log, TALLY_LOG_INFO, "http",
              "listening on %s: /metrics, /healthz, /readyz",
              t->front.http.where);
  }
  return start_timers(t);
}

/* Starts everything; returns 0, or an exit status after logging why. */
static int start(tallyd_t *t) {
  char err[1024];
  if (write_pidfile(t) != 0)
    return EXIT_FAILED;
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  tally_remove_stale_snapshots(tmp);
  if (tally_fmt(t->snap_root, sizeof(t->snap_root), "%s/tallyd-%d-XXXXXX", tmp,
                (int)getpid()) != 0 ||
      mkdtemp(t->snap_root) == NULL) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s: %s", t->snap_root,
              strerror(errno));
    t->snap_root[0] = '\0';
    return EXIT_FAILED;
  }
  if (load_configs(t, &t->snap, &t->contests, &t->scoring) != 0)
    return EXIT_CONFIG;
  if (tally_queues_pick(&t->queues, t->set.queues, t->set.default_queue,
                        &t->contests) != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "out of memory");
    return EXIT_FAILED;
  }
  warn_unconsumed(t, &t->contests);
  const char *url = t->set.redis;
  if (url != NULL) {
    /* The password goes to the environment (the rescore child inherits
     * it), the URL without it everywhere else. */
    char *clean = NULL, *cleaner = NULL;
    if (tally_redis_credentials(url, t->set.redis_password_file, &clean, err,
                                sizeof(err)) != 0 ||
        tally_redis_sentinel_credentials(clean, t->set.sentinel_password_file,
                                         &cleaner, err, sizeof(err)) != 0) {
      free(clean);
      tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
      return EXIT_CONFIG;
    }
    free(clean);
    free(t->set.redis);
    url = t->set.redis = cleaner;
  } else if (t->set.redis_password_file != NULL ||
             t->set.sentinel_password_file != NULL) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config",
              "%s goes with --redis: the server tallyd starts itself has no "
              "password",
              t->set.redis_password_file != NULL ? "--redis-password-file"
                                                 : "--sentinel-password-file");
    return EXIT_CONFIG;
  }
  if (url == NULL) {
    t->embedded = true;
    if (tally_embedded_init(t->loop, &t->emb, t->set.data_dir,
                            t->set.redis_server, &t->log, err,
                            sizeof(err)) != 0) {
      t->embedded = false;
      tally_log(&t->log, TALLY_LOG_ERROR, "embedded", "%s", err);
      return EXIT_FAILED;
    }
    if (tally_embedded_start(&t->emb, err, sizeof(err)) != 0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "embedded", "%s", err);
      return EXIT_FAILED;
    }
    url = t->emb.url;
  }
  tally_pool_options_t po = {
      .worker = t->set.worker,
      .tasks = t->snap,
      .plugins = t->set.plugins,
      .workers = t->set.workers,
      .batch = t->set.batch,
      .job_timeout_ms = t->set.job_timeout,
      .log = &t->log,
      .default_queue = t->set.default_queue,
      .done_cb = tally_dispatch_done,
      .data = &t->group,
  };
  if (tally_pool_init(t->loop, &t->pool, &po, err, sizeof(err)) != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "pool", "%s", err);
    return EXIT_FAILED;
  }
  t->pool_up = true;
  if (t->set.auto_rescore) {
    tally_rescore_child_options_t ro = {
        .tally = t->set.tally,
        .url = url,
        .prefix = t->set.prefix,
        .default_queue = t->set.default_queue,
        .plugins = t->set.plugins,
        .log = &t->log,
        .on_exited = on_rescore_exited,
        .data = t,
    };
    int rc = tally_rescore_child_init(t->loop, &t->resc, &ro);
    if (rc == 0) {
      t->rescore_child_up = true;
      rc = tally_rescore_child_set_tasks(&t->resc, t->snap);
    }
    if (rc != 0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "rescore", "out of memory");
      return EXIT_FAILED;
    }
  }
  /* HTTP listens before anything is read: a port in use stops tallyd
   * before it takes a job. */
  int rc = start_ops(t);
  if (rc != 0)
    return rc;
  if ((rc = start_judge(t)) != 0)
    return rc;
  tally_dispatch_options_t dopt = {
      .url = url,
      .consumer = t->set.consumer,
      .claim_idle_ms = t->set.claim_idle,
      .max_deliveries = t->set.max_deliveries,
      .wait_replicas = t->set.wait_replicas,
      .max_job_bytes = t->set.max_job_bytes,
      .max_inflight = t->set.workers * t->set.batch * 2,
      .retain_age_ms = t->set.retain_age,
      .retain_counts = {t->set.retain_results, t->set.retain_public,
                        t->set.retain_changes, t->set.retain_dead},
      .retain_every_ms = t->set.retain_every,
      .log = &t->log,
      .embedded = t->embedded,
      .pool = &t->pool,
      .group = &t->group,
      .judge = t->judge_up ? &t->judge : NULL,
      .ready_cb = on_ready,
      .stale_cb = on_stale,
      .fatal_cb = on_fatal,
  };
  t->disps = calloc(t->queues.n, sizeof(*t->disps));
  t->group.members = calloc(t->queues.n, sizeof(*t->group.members));
  if (t->disps == NULL || t->group.members == NULL) {
    tally_log(&t->log, TALLY_LOG_ERROR, "start", "out of memory");
    return EXIT_FAILED;
  }
  for (size_t i = 0; i < t->queues.n; i++) {
    char prefix[200];
    if (tally_queue_prefix(prefix, sizeof(prefix), t->set.prefix,
                           t->queues.names[i]) != 0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "config", "prefix too long");
      return EXIT_CONFIG;
    }
    dopt.prefix = prefix;
    dopt.queue = t->queues.names[i];
    if (tally_dispatch_init(t->loop, &t->disps[i], &dopt, err, sizeof(err)) !=
        0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "redis", "%s", err);
      return EXIT_CONFIG;
    }
    t->disps[i].data = t;
    t->group.members[t->group.n++] = &t->disps[i];
    t->ndisps++;
  }
  t->ops.disps = t->disps;
  t->ops.ndisps = t->ndisps;
  if (t->http_up) {
    t->front.api.sse_budget = t->set.event_stream_memory;
    if (tally_front_api(&t->front, t->set.prefix, t->set.default_queue, url,
                        t->set.http_token_file, &t->contests, &t->scoring, err,
                        sizeof(err)) != 0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "api", "%s", err);
      return EXIT_CONFIG;
    }
    t->ops.api = &t->front.api;
    if (tally_front_start(&t->front) != 0) {
      tally_log(&t->log, TALLY_LOG_ERROR, "http",
                "cannot start the HTTP thread");
      return EXIT_FAILED;
    }
  }
  char qlist[512] = "";
  size_t qlen = 0;
  for (size_t i = 0; i < t->queues.n && qlen < sizeof(qlist); i++)
    qlen += (size_t)snprintf(qlist + qlen, sizeof(qlist) - qlen, "%s%s",
                             i > 0 ? "," : "", t->queues.names[i]);
  tally_log(&t->log, TALLY_LOG_INFO, "start",
            "tallyd %s: %u workers, consumer %s, prefix %s, queues %s, "
            "Redis %s%s",
            TALLY_VERSION, t->set.workers, t->set.consumer, t->set.prefix,
            qlist, url, t->embedded ? " (embedded)" : "");
  if (t->set.claim_idle < t->set.job_timeout * t->set.batch)
    tally_log(&t->log, TALLY_LOG_WARN, "start",
              "--claim-idle %llu ms is shorter than a full batch may take "
              "(--job-timeout %llu ms x --batch %u): another daemon could "
              "claim jobs this one is still scoring (only one result is "
              "ever written, but the work is done twice)",
              (unsigned long long)t->set.claim_idle,
              (unsigned long long)t->set.job_timeout, t->set.batch);
  for (size_t i = 0; i < t->ndisps; i++)
    tally_dispatch_start(&t->disps[i]);
  return 0;
}

static void on_walk_close(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h))
    uv_close(h, NULL);
}

int main(int argc, char **argv) {
  /* hiredis writes without MSG_NOSIGNAL. */
  signal(SIGPIPE, SIG_IGN);
  tallyd_t t;
  memset(&t, 0, sizeof(t));
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  if (tally_settings_init(&t.set) != 0) {
    fprintf(stderr, "tallyd: out of memory\n");
    return EXIT_FAILED;
  }
  int rc = tally_settings_parse(&t.set, argc, argv, &d);
  if (rc != 0) {
    bool help = rc == TALLY_EINVAL && tally_diag_count(&d) == 0;
    print_diag(&d);
    fputs(tally_settings_usage, help ? stdout : stderr);
    tally_diag_close(&d);
    tally_settings_close(&t.set);
    return help ? 0 : EXIT_CONFIG;
  }
  tally_diag_close(&d);
  tally_log_init(&t.log, t.set.log_format);
  t.log.level = t.set.log_level;

  t.loop = uv_default_loop();
  t.loop->data = &t;
  uv_signal_init(t.loop, &t.sigterm);
  uv_signal_init(t.loop, &t.sigint);
  uv_signal_init(t.loop, &t.sighup);
  t.sigterm.data = t.sigint.data = t.sighup.data = &t;
  uv_signal_start(&t.sigterm, on_signal, SIGTERM);
  uv_signal_start(&t.sigint, on_signal, SIGINT);
  uv_signal_start(&t.sighup, on_signal, SIGHUP);
  uv_timer_init(t.loop, &t.ops_timer);
  uv_timer_init(t.loop, &t.watchdog);
  t.ops_timer.data = t.watchdog.data = &t;
  char nerr[512];
  if (tally_notify_open(&t.notify, nerr, sizeof(nerr)) != 0)
    tally_log(&t.log, TALLY_LOG_ERROR, "systemd", "%s: not notifying systemd",
              nerr);

  t.exit_code = start(&t);
  if (t.exit_code != 0) {
    /* Nothing was read yet: close what was opened and go. */
    for (size_t i = 0; i < t.ndisps; i++)
      tally_dispatch_close(&t.disps[i], NULL);
    if (t.pool_up)
      tally_pool_close(&t.pool, 0, NULL);
    if (t.rescore_child_up)
      tally_rescore_child_close(&t.resc, 0, NULL);
    if (t.embedded)
      tally_embedded_stop(&t.emb, EMBEDDED_GRACE_MS, NULL);
    finish(&t);
  }
  uv_run(t.loop, UV_RUN_DEFAULT);
  if (uv_loop_close(t.loop) == UV_EBUSY) {
    uv_walk(t.loop, on_walk_close, NULL);
    uv_run(t.loop, UV_RUN_DEFAULT);
    uv_loop_close(t.loop);
  }
  if (t.exit_code == 0)
    tally_log(&t.log, TALLY_LOG_INFO, "stop", "bye");
  remove_retired(&t);
  if (t.snap != NULL) {
    char dir[PATH_MAX];
    snapshot_dir(&t, t.snap, dir, sizeof(dir));
    tally_remove_dir(dir);
    free(t.snap);
  }
  if (t.snap_root[0] != '\0')
    rmdir(t.snap_root);
  if (t.pidfile_written) {
    /* Still holding its lock: the file is this tallyd's to remove. */
    unlink(t.set.pidfile);
    close(t.pidfile_fd);
  }
  tally_notify_close(&t.notify);
  free(t.disps);
  free(t.group.members);
  tally_queues_free(&t.queues);
  tally_contestset_close(&t.contests);
  tally_contestset_close(&t.reload_contests);
  tally_scoring_close(&t.scoring);
  tally_scoring_close(&t.reload_scoring);
  tally_settings_close(&t.set);
  return t.exit_code;
}
