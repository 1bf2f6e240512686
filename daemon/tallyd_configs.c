/* tallyd's task configs: the snapshots the workers load, their check
 * before anything uses them, and reloads (SIGHUP) in libuv's thread
 * pool. */
#include "daemon/tallyd_int.h"

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

/* The task configs the workers load are a private copy, a snapshot, made
 * when tallyd starts and on each accepted SIGHUP, with the data folders of
 * their expected outputs. A file edited on disk, even a broken one, then
 * never reaches a worker that starts later (after a crash, say); only a
 * reload that passes the check does. */

/* Copies --tasks (a file, or the *.json files of a folder) into a new
 * snapshot folder, and sets *path to what the workers load. Returns 0, or
 * a negative code with err naming the cause. */
static int snapshot(tallyd_t *t, char **path, char *err, size_t errlen) {
  char dir[PATH_MAX], to[PATH_MAX], from[PATH_MAX];
  if (tally_fmt(dir, sizeof(dir), "%s/tasks-%u", t->snap_root, ++t->snap_gen) ||
      mkdir(dir, 0700) != 0) {
    tally_fmt(err, errlen, "%s: %s", dir, strerror(errno));
    return TALLY_EIO;
  }
  struct stat st;
  int rc = 0;
  if (stat(t->set.tasks, &st) != 0) {
    tally_fmt(err, errlen, "%s: %s", t->set.tasks, strerror(errno));
    rc = TALLY_ENOENT;
  } else if (!S_ISDIR(st.st_mode)) {
    const char *base = strrchr(t->set.tasks, '/');
    if (tally_fmt(to, sizeof(to), "%s/%s", dir,
                  base ? base + 1 : t->set.tasks)) {
      tally_fmt(err, errlen, "%s: path too long", t->set.tasks);
      rc = TALLY_EINVAL;
    } else if ((rc = tally_copy_file(t->set.tasks, to, TALLY_CONFIG_FILE_MAX,
                                     err, errlen)) == 0)
      rc = tally_copy_data(t->set.tasks, dir, err, errlen);
  } else {
    memcpy(to, dir, sizeof(to));
    DIR *d = opendir(t->set.tasks);
    struct dirent *e;
    if (d == NULL) {
      tally_fmt(err, errlen, "%s: %s", t->set.tasks, strerror(errno));
      rc = TALLY_EIO;
    }
    /* Every file that cannot be copied is logged, not just the first. */
    size_t bad = 0;
    while (rc == 0 && d != NULL && (e = readdir(d)) != NULL) {
      if (!tally_is_json_name(e->d_name))
        continue;
      char file[PATH_MAX];
      int one;
      if (tally_fmt(from, sizeof(from), "%s/%s", t->set.tasks, e->d_name) ||
          tally_fmt(file, sizeof(file), "%s/%s", dir, e->d_name)) {
        tally_fmt(err, errlen, "%s: path too long", e->d_name);
        one = TALLY_EINVAL;
      } else if ((one = tally_copy_file(from, file, TALLY_CONFIG_FILE_MAX, err,
                                        errlen)) == 0) {
        one = tally_copy_data(from, dir, err, errlen);
      }
      if (one == TALLY_ENOMEM)
        rc = one;
      else if (one != 0 && bad++ < 100)
        tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
    }
    if (rc == 0 && bad > 0) {
      tally_fmt(err, errlen, "%s: %zu task file%s cannot be read", t->set.tasks,
                bad, bad == 1 ? "" : "s");
      rc = TALLY_EIO;
    }
    if (d != NULL)
      closedir(d);
  }
  if (rc == 0 && t->set.contests != NULL)
    rc = tally_snapshot_contests(t->set.contests, dir, err, errlen);
  if (rc == 0 && (*path = strdup(to)) == NULL) {
    tally_fmt(err, errlen, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc != 0)
    tally_remove_dir(dir);
  return rc;
}

/* The snapshot folder of a workers' path (the path itself, or its folder
 * when --tasks is a file). */
void snapshot_dir(const tallyd_t *t, const char *path, char *dir, size_t len) {
  tally_fmt(dir, len, "%s", path);
  struct stat st;
  if (stat(t->set.tasks, &st) == 0 && !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
      *slash = '\0';
  }
}

/* Loads the snapshot at path and the plugins, as the workers will, so that
 * a broken config is reported here, in full, rather than by workers that
 * exit one after another. Logs every error, naming the operator's files
 * rather than the snapshot's. */
/* Keeps the first config error of a load, for tally reload to show. */
static void first_error(tallyd_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void first_error(tallyd_t *t, const char *fmt, ...) {
  if (t->reload_error[0] != '\0')
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->reload_error, sizeof(t->reload_error), fmt, ap);
  va_end(ap);
}

static int check_config(tallyd_t *t, const char *path,
                        tally_contestset_t *contests, tally_scoring_t *keep) {
  tally_registry_t reg;
  tally_plugins_t plugins;
  tally_taskset_t tasks;
  tally_diag_t d;
  char err[1024], dir[PATH_MAX];
  int rc = tally_registry_init(&reg);
  if (rc != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "out of memory");
    return rc;
  }
  tally_plugins_init(&plugins);
  tally_taskset_init(&tasks);
  tally_diag_init(&d, NULL);
  snapshot_dir(t, path, dir, sizeof(dir));
  size_t dirlen = strlen(dir);
  /* The operator's folder, which the snapshot's stands for. */
  char orig[PATH_MAX];
  struct stat st;
  tally_fmt(orig, sizeof(orig), "%s", t->set.tasks);
  if (stat(t->set.tasks, &st) == 0 && !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(orig, '/');
    *(slash ? slash : orig) = '\0';
  }
  if (t->set.plugins != NULL &&
      (rc = tally_plugins_load_dir(&plugins, &reg, t->set.plugins, err,
                                   sizeof(err))) != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
    first_error(t, "%s", err);
  } else if ((rc = tally_taskset_load(&tasks, &reg, path, &d)) != 0 ||
             (rc = tally_contestset_load_beside(contests, path, &d)) != 0 ||
             (rc = tally_contestset_check_tasks(contests, &tasks, &d)) != 0) {
    tally_contestset_close(contests);
    for (size_t i = 0; i < d.count; i++) {
      const char *m = d.msgs[i];
      if (strncmp(m, dir, dirlen) == 0 && m[dirlen] == '/') {
        tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s%s%s", orig,
                  orig[0] ? "/" : "", m + dirlen + 1);
        first_error(t, "%s%s%s", orig, orig[0] ? "/" : "", m + dirlen + 1);
      } else {
        tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", m);
        first_error(t, "%s", m);
      }
    }
    if (d.dropped > 0)
      tally_log(&t->log, TALLY_LOG_ERROR, "config", "and %zu more errors",
                d.dropped);
  } else {
    tally_log(&t->log, TALLY_LOG_INFO, "config",
              "%s: %zu task%s, %zu contest%s", t->set.tasks, tasks.count,
              tasks.count == 1 ? "" : "s", contests->count,
              contests->count == 1 ? "" : "s");
    if (t->set.plugins == NULL) {
      /* Kept for the views of the results API (daemon/api.h). */
      keep->reg = reg;
      keep->tasks = tasks;
      keep->ok = true;
      tally_diag_close(&d);
      tally_plugins_close(&plugins);
      return 0;
    }
  }
  tally_diag_close(&d);
  tally_taskset_close(&tasks);
  tally_registry_close(&reg);
  tally_plugins_close(&plugins);
  return rc;
}

/* Snapshots and checks the task configs. Returns 0 with *path set (the
 * caller frees it), or an error, logged, with the snapshot removed. */
int load_configs(tallyd_t *t, char **path, tally_contestset_t *contests,
                 tally_scoring_t *keep) {
  char err[1024], dir[PATH_MAX];
  int rc = snapshot(t, path, err, sizeof(err));
  if (rc != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "config", "%s", err);
    first_error(t, "%s", err);
    return rc;
  }
  rc = check_config(t, *path, contests, keep);
  if (rc != 0) {
    snapshot_dir(t, *path, dir, sizeof(dir));
    tally_remove_dir(dir);
    free(*path);
    *path = NULL;
  }
  return rc;
}

/* A contest whose queue this tallyd does not consume: its jobs wait for
 * a tallyd that does. Said once per config load. */
void warn_unconsumed(tallyd_t *t, const tally_contestset_t *cs) {
  const char *queue = NULL;
  const tally_contest_t *c =
      tally_queues_unconsumed(&t->queues, t->set.default_queue, cs, &queue);
  if (c != NULL)
    tally_log(&t->log, TALLY_LOG_WARN, "queues",
              "contest %s belongs to queue %s, which this tallyd does not "
              "consume: its jobs wait for a tallyd that does (add it to "
              "--queues, or restart this one without --queues to take every "
              "configured queue)",
              c->name, queue);
}

/* Removes the snapshots retired while a rescore child ran. */
void remove_retired(tallyd_t *t) {
  for (size_t i = 0; i < t->nretired; i++) {
    tally_remove_dir(t->retired[i]);
    free(t->retired[i]);
  }
  free(t->retired);
  t->retired = NULL;
  t->nretired = 0;
}

/* A rescore child has exited: the snapshots it could read may go. */
void on_rescore_exited(void *data) {
  remove_retired(data);
}

/* Puts the checked snapshot at path in force. */
static void apply_reload(tallyd_t *t, char *path) {
  if (tally_pool_reload(&t->pool, path) != 0) {
    t->ops.reloads_refused++;
    tally_log(&t->log, TALLY_LOG_ERROR, "reload",
              "out of memory: the old config stays in force");
    tally_contestset_close(&t->reload_contests);
    tally_scoring_close(&t->reload_scoring);
    char dir[PATH_MAX];
    snapshot_dir(t, path, dir, sizeof(dir));
    tally_remove_dir(dir);
    free(path);
    return;
  }
  /* The workers that loaded the old snapshot hold it in memory; a rescore
   * child still running may still be reading it. */
  char old[PATH_MAX];
  snapshot_dir(t, t->snap, old, sizeof(old));
  char **grown = t->rescore_child_up && t->resc.running
                     ? realloc(t->retired, (t->nretired + 1) * sizeof(char *))
                     : NULL;
  if (grown != NULL) {
    t->retired = grown;
    if ((t->retired[t->nretired] = strdup(old)) != NULL)
      t->nretired++;
    else
      tally_remove_dir(old);
  } else {
    tally_remove_dir(old);
  }
  free(t->snap);
  t->snap = path;
  warn_unconsumed(t, &t->reload_contests);
  if (t->http_up && t->front.api_up) {
    /* The API reads them on its own thread. */
    if (tally_front_configs(&t->front, &t->reload_contests,
                            &t->reload_scoring) != 0)
      tally_log(&t->log, TALLY_LOG_ERROR, "reload",
                "out of memory: the results API keeps the old contests");
    tally_contestset_close(&t->reload_contests);
    tally_scoring_close(&t->reload_scoring);
  } else {
    tally_contestset_close(&t->contests);
    t->contests = t->reload_contests;
    tally_contestset_init(&t->reload_contests);
    tally_scoring_close(&t->scoring);
    t->scoring = t->reload_scoring;
    t->reload_scoring.ok = false;
  }
  t->ops.reloads_accepted++;
  tally_log(&t->log, TALLY_LOG_INFO, "reload",
            "workers are being replaced with the new config");
  if (t->rescore_child_up) {
    if (tally_rescore_child_set_tasks(&t->resc, t->snap) != 0)
      tally_log(&t->log, TALLY_LOG_ERROR, "rescore",
                "out of memory: no rescore for this reload");
    else
      tally_rescore_child_run(&t->resc, TALLY_RESCORE_CHANGED);
  }
}

/* In the thread pool: the snapshot and its check. Touches only what no
 * one else touches during a reload (snap_root, snap_gen, the settings,
 * the log, which writes a line at a time). */
static void reload_work(uv_work_t *req) {
  tallyd_t *t = req->data;
  t->reload_path = NULL;
  t->reload_error[0] = '\0';
  t->reload_rc =
      load_configs(t, &t->reload_path, &t->reload_contests, &t->reload_scoring);
}

/* What the reload came to, for tally reload (which deleted the key
 * before its SIGHUP): <p>:reload:<pid>, an hour. */
static void on_reload_said(tally_redis_t *rd, redisReply *reply, void *priv) {
  (void)rd;
  (void)reply;
  (void)priv;
}

static void say_reload(tallyd_t *t, bool accepted) {
  if (t->ndisps == 0)
    return;
  char key[200], pid[24];
  snprintf(key, sizeof(key), "%s:reload:%ld", t->set.prefix, (long)getpid());
  snprintf(pid, sizeof(pid), "%ld", (long)getpid());
  const char *error = accepted ? ""
                      : t->reload_error[0] != '\0'
                          ? t->reload_error
                          : "the new config has errors";
  const char *argv[] = {
      "HSET",  key,   "result", accepted ? "accepted" : "refused",
      "error", error, "pid",    pid};
  size_t lens[8];
  for (int i = 0; i < 8; i++)
    lens[i] = strlen(argv[i]);
  tally_redis_command(&t->disps[0].wr, 5000, on_reload_said, NULL, 8, argv,
                      lens);
  const char *exp[] = {"EXPIRE", key, "3600"};
  size_t elens[3] = {6, strlen(key), 4};
  tally_redis_command(&t->disps[0].wr, 5000, on_reload_said, NULL, 3, exp,
                      elens);
}

/* Back on the loop: the new snapshot goes to the pool and the rescore child. */
static void reload_done(uv_work_t *req, int status) {
  tallyd_t *t = req->data;
  char *path = t->reload_path;
  t->reload_path = NULL;
  t->reloading = false;
  if (status != 0 || t->reload_rc != 0 || t->stopping) {
    tally_contestset_close(&t->reload_contests);
    tally_scoring_close(&t->reload_scoring);
    if (path != NULL) {
      char dir[PATH_MAX];
      snapshot_dir(t, path, dir, sizeof(dir));
      tally_remove_dir(dir);
      free(path);
    }
    if (!t->stopping) {
      t->ops.reloads_refused++;
      tally_log(&t->log, TALLY_LOG_ERROR, "reload",
                "the new config has errors: the old one stays in force");
      say_reload(t, false);
    }
  } else {
    apply_reload(t, path);
    say_reload(t, true);
  }
  /* Before the first READY=1, readiness is still on_ops_tick's to say. */
  if (!t->stopping && !t->reload_again && t->notified_ready)
    tally_notify_send(&t->notify, "READY=1");
  if (t->reload_again && !t->stopping) {
    t->reload_again = false;
    start_reload(t);
  }
}

void start_reload(tallyd_t *t) {
  tally_log(&t->log, TALLY_LOG_INFO, "reload", "SIGHUP: checking %s",
            t->set.tasks);
  if (t->notified_ready) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    tally_notify_send(&t->notify, "RELOADING=1\nMONOTONIC_USEC=%llu",
                      (unsigned long long)ts.tv_sec * 1000000ull +
                          (unsigned long long)ts.tv_nsec / 1000);
  }
  t->reload.data = t;
  if (uv_queue_work(t->loop, &t->reload, reload_work, reload_done) != 0) {
    tally_log(&t->log, TALLY_LOG_ERROR, "reload",
              "cannot start the reload: the old config stays in force");
    return;
  }
  t->reloading = true;
}
