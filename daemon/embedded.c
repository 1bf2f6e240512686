/* Starts, supervises and stops the redis-server child of the embedded
 * mode, and clears away one left over from a tallyd that died. */
#include "daemon/embedded.h"
#include "config/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
  BACKOFF_MIN_MS = 200,
  BACKOFF_MAX_MS = 5000,
  STABLE_MS = 10000,       /* a run this long resets the backoff */
  LEFTOVER_TERM_MS = 5000, /* a leftover's time to exit after SIGTERM */
  LEFTOVER_KILL_MS = 2000, /* ... and after SIGKILL */
  POLL_MS = 20
};

/* The longest Unix socket path: sun_path less its NUL. */
#define SOCK_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* A file in the data folder. The folder and socket lengths are checked in
 * tally_embedded_init, so the names used here always fit. */
typedef char path_t[sizeof(((tally_embedded_t *)0)->dir) + 32];

static void path_in(const tally_embedded_t *e, const char *name, path_t p) {
  snprintf(p, sizeof(path_t), "%s/%s", e->dir, name);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* mkdir -p: the parents get mode 0755 (less the umask), the last
 * component 0700. An existing folder is fine. */
static int make_dirs(const char *dir, char *err, size_t errlen) {
  char p[sizeof(((tally_embedded_t *)0)->dir)];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof(p)) {
    snprintf(err, errlen, "data dir \"%.200s\": %s", dir,
             len == 0 ? "empty path" : "path too long");
    return TALLY_EINVAL;
  }
  memcpy(p, dir, len + 1);
  while (len > 1 && p[len - 1] == '/')
    p[--len] = '\0';
  for (char *s = strchr(p + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
    *s = '\0';
    int rc = mkdir(p, 0755);
    int saved = errno;
    *s = '/';
    if (rc != 0 && saved != EEXIST) {
      snprintf(err, errlen, "data dir %s: cannot create a parent: %s", p,
               strerror(saved));
      return TALLY_EIO;
    }
  }
  if (mkdir(p, 0700) != 0 && errno != EEXIST) {
    snprintf(err, errlen, "data dir %s: %s", p, strerror(errno));
    return TALLY_EIO;
  }
  struct stat st;
  if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "data dir %s: not a directory", p);
    return TALLY_EIO;
  }
  return 0;
}

/* Reads a small file into buf (NUL-terminated, NULs inside turned into
 * spaces). Returns the length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, len - 1);
  close(fd);
  if (n < 0)
    return -1;
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  buf[n] = '\0';
  return n;
}

/* Whether pid runs: it exists and is not a zombie (a zombie has exited,
 * and may wait long for a parent that never reaps it). */
static bool alive(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH)
    return false;
  char path[64], st[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  if (read_small(path, st, sizeof(st)) < 0)
    return kill(pid, 0) == 0 || errno != ESRCH;
  const char *end = strrchr(st, ')');
  return end == NULL || end[1] != ' ' || (end[2] != 'Z' && end[2] != 'X');
}

static bool wait_gone(pid_t pid, int ms) {
  for (int waited = 0; waited < ms; waited += POLL_MS) {
    if (!alive(pid))
      return true;
    sleep_ms(POLL_MS);
  }
  return !alive(pid);
}

/* Whether pid is a redis-server running in e's data folder: a pid file
 * may outlive its server, and the pid be reused by another process. */
static bool is_our_server(const tally_embedded_t *e, pid_t pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
  bool named = read_small(path, buf, sizeof(buf)) >= 0 &&
               strncmp(buf, "redis-server", 12) == 0;
  snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
  if (!named && read_small(path, buf, sizeof(buf)) >= 0)
    named = strstr(buf, "redis-server") != NULL;
  if (!named)
    return false;
  snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, e->dir) == 0;
}

/* Stops the redis-server named by the pid file if it is still running in
 * the data folder: a tallyd killed with -9 leaves its child behind, and
 * two servers must never share the append-only files. */
static int stop_leftover(tally_embedded_t *e, char *err, size_t errlen) {
  path_t pidfile;
  char buf[64];
  path_in(e, TALLY_EMBEDDED_PIDFILE, pidfile);
  if (read_small(pidfile, buf, sizeof(buf)) < 0)
    return 0;
  char *end;
  long pid = strtol(buf, &end, 10);
  if (end == buf || pid <= 1 || pid > INT32_MAX || pid == (long)getpid())
    return 0;
  if (!alive((pid_t)pid) || !is_our_server(e, (pid_t)pid))
    return 0;
  tally_log(e->log, TALLY_LOG_WARN, "embedded.leftover",
            "redis-server (pid %ld) from an earlier tallyd still runs in %s; "
            "stopping it",
            pid, e->dir);
  kill((pid_t)pid, SIGTERM);
  if (wait_gone((pid_t)pid, LEFTOVER_TERM_MS))
    return 0;
  tally_log(e->log, TALLY_LOG_WARN, "embedded.leftover",
            "redis-server (pid %ld) did not exit %d ms after SIGTERM; "
            "killing it",
            pid, LEFTOVER_TERM_MS);
  kill((pid_t)pid, SIGKILL);
  if (wait_gone((pid_t)pid, LEFTOVER_KILL_MS))
    return 0;
  snprintf(err, errlen,
           "redis-server (pid %ld) left over in %s does not exit, even "
           "after SIGKILL",
           pid, e->dir);
  return TALLY_EIO;
}

int tally_embedded_init(uv_loop_t *loop, tally_embedded_t *e,
                        const char *data_dir, const char *server,
                        tally_log_t *log, char *err, size_t errlen) {
  memset(e, 0, sizeof(*e));
  e->loop = loop;
  e->log = log;
  int rc = make_dirs(data_dir, err, errlen);
  if (rc != 0)
    return rc;
  char *abs = realpath(data_dir, NULL);
  if (abs == NULL) {
    snprintf(err, errlen, "data dir %s: %s", data_dir, strerror(errno));
    return TALLY_EIO;
  }
  size_t len = strlen(abs);
  if (len >= sizeof(e->dir)) {
    snprintf(err, errlen, "data dir %.200s...: path too long", abs);
    free(abs);
    return TALLY_E2BIG;
  }
  memcpy(e->dir, abs, len + 1);
  free(abs);

  path_t sock;
  path_in(e, TALLY_EMBEDDED_SOCK, sock);
  if (strlen(sock) > SOCK_MAX) {
    snprintf(err, errlen,
             "socket path %s is %zu bytes, over the limit of %zu for a Unix "
             "socket; choose a shorter data dir",
             sock, strlen(sock), (size_t)SOCK_MAX);
    return TALLY_E2BIG;
  }
  if ((size_t)snprintf(e->url, sizeof(e->url), "unix://%s", sock) >=
      sizeof(e->url)) {
    snprintf(err, errlen, "socket URL unix://%s is over the limit of %zu bytes",
             sock, sizeof(e->url) - 1);
    return TALLY_E2BIG;
  }

  rc = stop_leftover(e, err, errlen);
  if (rc != 0)
    return rc;
  if (unlink(sock) != 0 && errno != ENOENT) {
    snprintf(err, errlen, "cannot remove the stale socket %s: %s", sock,
             strerror(errno));
    return TALLY_EIO;
  }

  e->server = strdup(server != NULL ? server : "redis-server");
  if (e->server == NULL) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  e->backoff_ms = BACKOFF_MIN_MS;
  uv_timer_init(loop, &e->timer);
  e->timer.data = e;
  e->handles = 1;
  return 0;
}

/* Counts a handle closed; the last one, while stopping, ends the stop.
 * Memory is freed only here, once libuv is done with every handle. */
static void on_close(uv_handle_t *h) {
  tally_embedded_t *e = h->data;
  if (h == (uv_handle_t *)&e->proc)
    e->proc_open = false;
  if (--e->handles > 0 || !e->stopping)
    return;
  free(e->server);
  e->server = NULL;
  if (e->stop_cb != NULL)
    e->stop_cb(e);
}

static void close_proc(tally_embedded_t *e) {
  if (e->proc_open && !uv_is_closing((uv_handle_t *)&e->proc))
    uv_close((uv_handle_t *)&e->proc, on_close);
}

static void close_all(tally_embedded_t *e) {
  close_proc(e);
  if (!uv_is_closing((uv_handle_t *)&e->timer))
    uv_close((uv_handle_t *)&e->timer, on_close);
}

static void on_child_exit(uv_process_t *proc, int64_t status, int term_signal);
static void on_timer(uv_timer_t *t);

/* Spawns redis-server with every setting on its command line, so no
 * config file is needed. The child leads its own process group: a Ctrl-C
 * at tallyd's terminal reaches tallyd alone, which then stops the server
 * in order. Its output goes nowhere; its log is DIR/redis.log. */
static int spawn(tally_embedded_t *e, char *err, size_t errlen) {
  path_t sock, pidfile, logfile;
  path_in(e, TALLY_EMBEDDED_SOCK, sock);
  path_in(e, TALLY_EMBEDDED_PIDFILE, pidfile);
  path_in(e, TALLY_EMBEDDED_LOGFILE, logfile);
  /* clang-format off */
  char *args[] = {e->server,
                  "--port", "0",
                  "--unixsocket", sock,
                  "--unixsocketperm", "700",
                  "--dir", e->dir,
                  "--appendonly", "yes",
                  "--appendfsync", "everysec",
                  "--save", "",
                  "--pidfile", pidfile,
                  "--daemonize", "no",
                  "--logfile", logfile,
                  "--maxmemory-policy", "noeviction",
                  NULL};
  /* clang-format on */
  uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
  uv_process_options_t opts = {.exit_cb = on_child_exit,
                               .file = e->server,
                               .args = args,
                               .flags = UV_PROCESS_DETACHED,
                               .stdio_count = 3,
                               .stdio = stdio};
  /* uv_spawn initializes the handle even when it fails, so it is always
   * counted, and closed on failure. */
  int rc = uv_spawn(e->loop, &e->proc, &opts);
  e->proc.data = e;
  e->proc_open = true;
  e->handles++;
  if (rc != 0) {
    snprintf(err, errlen, "cannot start %s: %s", e->server, uv_strerror(rc));
    close_proc(e);
    return rc == UV_ENOENT ? TALLY_ENOENT : TALLY_EIO;
  }
  e->running = true;
  e->started_ms = uv_now(e->loop);
  tally_log(e->log, TALLY_LOG_INFO, "embedded.start",
            "redis-server started (pid %d) on %s%s", e->proc.pid, sock,
            e->restarts > 0 ? " after a restart" : "");
  return 0;
}

int tally_embedded_start(tally_embedded_t *e, char *err, size_t errlen) {
  if (e->stopping || e->proc_open) {
    snprintf(err, errlen, "the embedded redis-server is %s",
             e->stopping ? "stopping" : "already started");
    return TALLY_EINVAL;
  }
  return spawn(e, err, errlen);
}

/* Waits out the backoff before the next spawn, and doubles it. */
static void schedule_restart(tally_embedded_t *e) {
  uint64_t delay = e->backoff_ms;
  e->backoff_ms = delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : delay * 2;
  uv_timer_start(&e->timer, on_timer, delay, 0);
}

static void on_child_exit(uv_process_t *proc, int64_t status, int term_signal) {
  tally_embedded_t *e = proc->data;
  char how[96];
  if (term_signal != 0)
    snprintf(how, sizeof(how), "was killed by signal %d (%s)", term_signal,
             strsignal(term_signal));
  else
    snprintf(how, sizeof(how), "exited with status %lld", (long long)status);
  int pid = proc->pid;
  e->running = false;
  close_proc(e);
  if (e->stopping) {
    tally_log(e->log, TALLY_LOG_INFO, "embedded.stop",
              "redis-server (pid %d) %s", pid, how);
    close_all(e);
    return;
  }
  e->restarts++;
  if (uv_now(e->loop) - e->started_ms > STABLE_MS)
    e->backoff_ms = BACKOFF_MIN_MS;
  tally_log(e->log, TALLY_LOG_ERROR, "embedded.exit",
            "redis-server (pid %d) %s; see %s/%s; restarting in %llu ms", pid,
            how, e->dir, TALLY_EMBEDDED_LOGFILE,
            (unsigned long long)e->backoff_ms);
  schedule_restart(e);
}

/* While stopping, the grace period is over: kill. Otherwise the backoff
 * is over: spawn again, or wait longer if that fails. */
static void on_timer(uv_timer_t *t) {
  tally_embedded_t *e = t->data;
  if (e->stopping) {
    if (e->running) {
      tally_log(e->log, TALLY_LOG_WARN, "embedded.kill",
                "redis-server (pid %d) still runs after SIGTERM; killing it",
                e->proc.pid);
      uv_process_kill(&e->proc, SIGKILL);
    }
    return;
  }
  if (e->proc_open) { /* the last one's close is still pending */
    uv_timer_start(&e->timer, on_timer, POLL_MS, 0);
    return;
  }
  char err[512];
  if (spawn(e, err, sizeof(err)) != 0) {
    tally_log(e->log, TALLY_LOG_ERROR, "embedded.start",
              "%s; retrying in %llu ms", err,
              (unsigned long long)e->backoff_ms);
    schedule_restart(e);
  }
}

void tally_embedded_stop(tally_embedded_t *e, uint64_t grace_ms,
                         void (*stop_cb)(tally_embedded_t *e)) {
  if (e->stopping)
    return;
  e->stopping = true;
  e->stop_cb = stop_cb;
  uv_timer_stop(&e->timer);
  if (e->running) {
    /* on_child_exit closes every handle once the child is reaped. */
    uv_process_kill(&e->proc, SIGTERM);
    uv_timer_start(&e->timer, on_timer, grace_ms, 0);
    return;
  }
  close_all(e);
}
