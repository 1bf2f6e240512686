/* The sandbox: see sandbox.h and docs/sandbox.md. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BWRAP "/usr/bin/bwrap"
#define SETPRIV "/usr/bin/setpriv"

void tally_sandbox_defaults(tally_sandbox_opts_t *o) {
  static const char *const python[] = {"python3", NULL};
  memset(o, 0, sizeof(*o));
  o->command = python;
  o->wall_s = 10;
  o->cpu_s = 5;
  o->memory = 512u << 20;
  o->processes = 32;
  o->file_size = 16u << 20;
  o->output = 1u << 20;
  o->uid = 65534;
}

void tally_sandbox_result_free(tally_sandbox_result_t *r) {
  free(r->output);
  r->output = NULL;
  r->output_len = 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

/* Removes the scratch folder and whatever the program left in it. */
static void remove_tree(const char *dir) {
  nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int fail(char *err, size_t errlen, const char *fmt, const char *what) {
  snprintf(err, errlen, fmt, what, strerror(errno));
  return -1;
}

/* Writes the program into dir/program, readable by the run's user. */
static int write_program(const char *dir, const char *program, size_t len,
                         bool root, unsigned uid, char *err, size_t errlen) {
  char path[64];
  snprintf(path, sizeof(path), "%s/program", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(err, errlen, "sandbox: cannot write %s: %s", path);
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, program + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      close(fd);
      return fail(err, errlen, "sandbox: cannot write %s: %s", path);
    }
    done += (size_t)n;
  }
  close(fd);
  /* The scratch folder is the run's user's own, and no one else's. */
  if (root && (chown(dir, uid, uid) != 0 || chown(path, uid, uid) != 0))
    return fail(err, errlen, "sandbox: cannot give %s to the run's user: %s",
                dir);
  return 0;
}

/* The words of the bwrap command line, into argv (at most max). The
 * strings it points to live in buf. */
typedef struct words_s {
  const char *argv[96];
  size_t n;
  char nums[4][32];
} words_t;

static void add(words_t *w, const char *s) {
  if (w->n + 1 < sizeof(w->argv) / sizeof(w->argv[0]))
    w->argv[w->n++] = s;
}

static void build(words_t *w, const tally_sandbox_opts_t *o,
                  const char *scratch, bool root, char *cmd0, size_t cmd0len) {
  static const char *const fixed[] = {
      BWRAP, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
      "--unshare-cgroup-try", "--die-with-parent", "--new-session",
      /* A read-only system: /usr and its links, nothing of /etc but the
       * dynamic linker's cache, nothing of /home, /root, /var, /run. */
      "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink",
      "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink",
      "usr/sbin", "/sbin", "--ro-bind-try", "/etc/ld.so.cache",
      "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev"};
  w->n = 0;
  for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
    add(w, fixed[i]);
  if (!root)
    add(w, "--unshare-user");
  snprintf(w->nums[0], sizeof(w->nums[0]), "%llu",
           (unsigned long long)o->file_size);
  add(w, "--perms");
  add(w, "1777");
  add(w, "--size");
  add(w, w->nums[0]);
  add(w, "--tmpfs");
  add(w, "/tmp");
  add(w, "--bind");
  add(w, scratch);
  add(w, "/sandbox");
  add(w, "--chdir");
  add(w, "/sandbox");
  add(w, "--clearenv");
  add(w, "--setenv");
  add(w, "PATH");
  add(w, "/usr/bin:/bin");
  add(w, "--setenv");
  add(w, "HOME");
  add(w, "/sandbox");
  add(w, "--setenv");
  add(w, "LANG");
  add(w, "C.UTF-8");
  add(w, "--remount-ro");
  add(w, "/");
  add(w, "--json-status-fd");
  add(w, "3");
  if (root) {
    /* bwrap runs as root without a user namespace; the program as an
     * unprivileged user, whose process count RLIMIT_NPROC bounds. */
    snprintf(w->nums[1], sizeof(w->nums[1]), "--reuid=%u", o->uid);
    snprintf(w->nums[2], sizeof(w->nums[2]), "--regid=%u", o->uid);
    add(w, SETPRIV);
    add(w, w->nums[1]);
    add(w, w->nums[2]);
    add(w, "--clear-groups");
    add(w, "--no-new-privs");
    add(w, "--");
  }
  for (size_t i = 0; o->command[i] != NULL && i < 16; i++) {
    const char *word = o->command[i];
    if (i == 0 && strchr(word, '/') == NULL) {
      snprintf(cmd0, cmd0len, "/usr/bin/%s", word);
      word = cmd0;
    }
    add(w, word);
  }
  add(w, "/sandbox/program");
  w->argv[w->n] = NULL;
}

static void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit rl = {soft, hard};
  setrlimit(resource, &rl);
}

/* In the child, before exec: only async-signal-safe calls. */
static void child(const tally_sandbox_opts_t *o, const words_t *w, int out,
                  int st, int devnull) {
  setsid();
  rlim_t cpu = (rlim_t)(o->cpu_s + 0.999);
  set_limit(RLIMIT_CPU, cpu, cpu + 1);
  set_limit(RLIMIT_AS, o->memory, o->memory);
  set_limit(RLIMIT_NPROC, o->processes, o->processes);
  set_limit(RLIMIT_FSIZE, o->file_size, o->file_size);
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_NOFILE, 256, 256);
  if (dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
      dup2(st, 3) < 0)
    _exit(126);
  /* Nothing of the worker's (its pipes to tallyd) reaches the program. */
  close_range(4, ~0U, 0);
  execv(BWRAP, (char *const *)w->argv);
  static const char msg[] = "sandbox: cannot run " BWRAP "\n";
  ssize_t ignored = write(2, msg, sizeof(msg) - 1);
  (void)ignored;
  _exit(126);
}

/* Reads the run's output and bwrap's status until both end, or a limit
 * is passed (then the run is killed). */
static void collect(const tally_sandbox_opts_t *o, pid_t pid, int out, int st,
                    tally_sandbox_result_t *r, char *status, size_t statuslen,
                    double t0) {
  size_t cap = o->output + 1, slen = 0;
  struct pollfd p[2] = {{out, POLLIN, 0}, {st, POLLIN, 0}};
  bool killed = false;
  while (p[0].fd >= 0 || p[1].fd >= 0) {
    double left = t0 + o->wall_s - now_s();
    if (left <= 0 && !killed) {
      r->end = TALLY_SANDBOX_WALL;
      kill(-pid, SIGKILL);
      killed = true;
    }
    int ms = killed ? 1000 : (int)(left * 1000) + 1;
    int n = poll(p, 2, ms);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (killed)
        break; /* the run is gone; a grandchild may hold the pipe */
      continue;
    }
    if (p[0].fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[65536];
      ssize_t got = read(out, buf, sizeof(buf));
      if (got <= 0) {
        p[0].fd = -1;
      } else {
        size_t keep = (size_t)got;
        if (r->output_len + keep > o->output) {
          keep = o->output - r->output_len;
          if (!killed) {
            r->end = TALLY_SANDBOX_OUTPUT;
            kill(-pid, SIGKILL);
            killed = true;
          }
        }
        if (keep > 0 && r->output != NULL && r->output_len + keep < cap) {
          memcpy(r->output + r->output_len, buf, keep);
          r->output_len += keep;
        }
      }
    }
    if (p[1].fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = read(st, status + slen, statuslen - 1 - slen);
      if (got <= 0)
        p[1].fd = -1;
      else
        slen += (size_t)got;
    }
  }
  status[slen] = '\0';
  if (r->output != NULL)
    r->output[r->output_len] = '\0';
}

int tally_sandbox_run(const tally_sandbox_opts_t *o, const char *program,
                      size_t len, tally_sandbox_result_t *r, char *err,
                      size_t errlen) {
  memset(r, 0, sizeof(*r));
  if (access(BWRAP, X_OK) != 0)
    return fail(err, errlen,
                "sandbox: %s: %s (install Debian's bubblewrap package)", BWRAP);
  bool root = geteuid() == 0;
  char scratch[] = "/tmp/tally-sandbox-XXXXXX";
  if (mkdtemp(scratch) == NULL)
    return fail(err, errlen, "sandbox: cannot make %s: %s", scratch);
  int rc = write_program(scratch, program, len, root, o->uid, err, errlen);
  words_t w;
  char cmd0[300];
  build(&w, o, scratch, root, cmd0, sizeof(cmd0));
  int out[2] = {-1, -1}, st[2] = {-1, -1};
  int devnull = rc == 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
  r->output = rc == 0 ? malloc(o->output + 1) : NULL;
  if (rc == 0 && (devnull < 0 || r->output == NULL ||
                  pipe2(out, O_CLOEXEC) != 0 || pipe2(st, O_CLOEXEC) != 0))
    rc = fail(err, errlen, "sandbox: %s: %s", "cannot set up the run");
  pid_t pid = rc == 0 ? fork() : -1;
  if (rc == 0 && pid < 0)
    rc = fail(err, errlen, "sandbox: %s: %s", "cannot fork");
  if (pid == 0)
    child(o, &w, out[1], st[1], devnull);
  double t0 = now_s();
  char status[4096] = "";
  if (rc == 0) {
    close(out[1]);
    close(st[1]);
    out[1] = st[1] = -1;
    collect(o, pid, out[0], st[0], r, status, sizeof(status), t0);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
      ;
    r->wall_s = now_s() - t0;
    const char *code = strstr(status, "\"exit-code\":");
    int exit_code = code != NULL ? atoi(code + 12) : -1;
    if (strstr(status, "\"child-pid\"") == NULL &&
        r->end != TALLY_SANDBOX_WALL && r->end != TALLY_SANDBOX_OUTPUT) {
      /* bwrap could not start the program: the sandbox, not the run. */
      snprintf(err, errlen, "sandbox: bwrap did not start the program: %.*s",
               (int)strcspn(r->output != NULL ? r->output : "", "\n"),
               r->output != NULL ? r->output : "");
      rc = -1;
    } else if (r->end == TALLY_SANDBOX_WALL) {
      snprintf(r->reason, sizeof(r->reason), "wall time over %g s", o->wall_s);
    } else if (r->end == TALLY_SANDBOX_OUTPUT) {
      snprintf(r->reason, sizeof(r->reason),
               "output over %llu bytes: cut, and the run killed",
               (unsigned long long)o->output);
    } else if (exit_code < 0 && WIFSIGNALED(ws)) {
      r->end = TALLY_SANDBOX_SIGNALED;
      r->status = WTERMSIG(ws);
    } else if (exit_code > 128 && exit_code < 128 + 65) {
      r->status = exit_code - 128;
      r->end =
          r->status == SIGXCPU ? TALLY_SANDBOX_CPU : TALLY_SANDBOX_SIGNALED;
    } else {
      r->end = TALLY_SANDBOX_EXITED;
      r->status = exit_code >= 0 ? exit_code : WEXITSTATUS(ws);
    }
    if (rc == 0 && r->end == TALLY_SANDBOX_CPU)
      snprintf(r->reason, sizeof(r->reason), "CPU time over %g s", o->cpu_s);
    else if (rc == 0 && r->end == TALLY_SANDBOX_SIGNALED)
      snprintf(r->reason, sizeof(r->reason), "killed by signal %d (SIG%s)",
               r->status,
               sigabbrev_np(r->status) ? sigabbrev_np(r->status) : "?");
    else if (rc == 0 && r->end == TALLY_SANDBOX_EXITED)
      snprintf(r->reason, sizeof(r->reason), "exit status %d", r->status);
    r->passed = rc == 0 && r->end == TALLY_SANDBOX_EXITED && r->status == 0;
  }
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0)
      close(out[i]);
    if (st[i] >= 0)
      close(st[i]);
  }
  if (devnull >= 0)
    close(devnull);
  remove_tree(scratch);
  if (rc != 0)
    tally_sandbox_result_free(r);
  return rc;
}
