/* What the benchmarks share: see bench_support.h. */
#include "bench_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
  const char *name;
  void (*stop)(void);
  pid_t main_pid;
  char dir[PATH_MAX]; /* the temporary folder, or "" */
  bool failed;
} g;

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

/* At exit, in the bench's own process only (not in a forked child). */
static void at_exit(void) {
  if (getpid() != g.main_pid)
    return;
  if (g.stop != NULL)
    g.stop();
  if (g.dir[0] != '\0')
    nftw(g.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  g.dir[0] = '\0';
}

void bench_begin(const char *name, void (*stop)(void)) {
  g.name = name;
  g.stop = stop;
  g.main_pid = getpid();
  atexit(at_exit);
  snprintf(g.dir, sizeof(g.dir), "/tmp/%s.XXXXXX", name);
  if (mkdtemp(g.dir) == NULL) {
    g.dir[0] = '\0';
    bench_die("mkdtemp: %s", strerror(errno));
  }
}

const char *bench_dir(void) {
  return g.dir;
}

void bench_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g.name != NULL ? g.name : "bench");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  g.failed = true;
  exit(1);
}

bool bench_failed(void) {
  return g.failed;
}

int64_t bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

pid_t bench_spawn(char **argv, const char *out, const char *err) {
  pid_t pid = fork();
  if (pid < 0)
    bench_die("fork: %s", strerror(errno));
  if (pid == 0) {
    const char *names[2] = {out, err};
    int fds[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
      if (names[k] == NULL)
        continue;
      if (k == 1 && fds[0] >= 0 && strcmp(names[0], names[1]) == 0) {
        fds[1] = fds[0];
      } else {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/%s", g.dir, names[k]);
        fds[k] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      }
      if (fds[k] >= 0)
        dup2(fds[k], k == 0 ? STDOUT_FILENO : STDERR_FILENO);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

int bench_stop(pid_t pid, int sig, long grace_ms) {
  int status = 0;
  kill(pid, sig);
  for (long waited = 0;; waited += 10) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      return status;
    if (w < 0)
      return -1;
    if (waited >= grace_ms) {
      kill(pid, SIGKILL);
      return waitpid(pid, &status, 0) == pid ? status : -1;
    }
    bench_sleep_ms(10);
  }
}

const char *bench_next_to_me(const char *name) {
  static char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
  if (n <= 0)
    bench_die("cannot find this program's folder: give the path of %s", name);
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, 64, "%s", name);
  return path;
}

void bench_show_log(const char *name) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof(path), "%s/%s", g.dir, name);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, size > 4096 ? size - 4096 : 0, SEEK_SET);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  if (n > 0)
    fprintf(stderr, "---- the end of %s ----\n%.*s", name, (int)n, buf);
}

redisContext *bench_connect(const char *sock) {
  redisContext *c = redisConnectUnix(sock);
  if (c == NULL || c->err)
    bench_die("cannot connect to %s: %s", sock, c ? c->errstr : "no memory");
  return c;
}

/* Runs a command and returns its reply, exiting on an error. */
redisReply *bench_command(redisContext *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  if (r == NULL)
    bench_die("Redis: %s", c->errstr);
  if (r->type == REDIS_REPLY_ERROR)
    bench_die("Redis: %s", r->str);
  return r;
}

long long bench_command_int(redisContext *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  if (r == NULL || r->type != REDIS_REPLY_INTEGER)
    bench_die("Redis: %s", r ? r->str : c->errstr);
  long long v = r->integer;
  freeReplyObject(r);
  return v;
}

/* The CPU time (user + system, all threads) of pid in seconds, and its
 * parent, from /proc/PID/stat; 0 if it is gone. */
double bench_proc_cpu_s(pid_t pid, pid_t *ppid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  int parent = 0;
  unsigned long long ut = 0, st = 0;
  /* After the name: state ppid pgrp session tty tpgid flags minflt
   * cminflt majflt cmajflt utime stime. */
  if (p == NULL || sscanf(p + 2,
                          "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                          "%llu %llu",
                          &parent, &ut, &st) != 3)
    return 0;
  if (ppid)
    *ppid = parent;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The time all threads of pid have run, and waited to run (runnable, with
 * no CPU free), in seconds, from /proc/PID/task/TID/schedstat, which the
 * scheduler keeps in nanoseconds. */
double bench_proc_sched_s(pid_t pid, double *wait) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
  DIR *dir = opendir(path);
  struct dirent *de;
  double run = 0;
  while (dir && (de = readdir(dir)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    char stat[320];
    snprintf(stat, sizeof(stat), "/proc/%d/task/%.32s/schedstat", (int)pid,
             de->d_name);
    FILE *f = fopen(stat, "r");
    unsigned long long on = 0, queued = 0;
    if (f && fscanf(f, "%llu %llu", &on, &queued) == 2) {
      run += (double)on * 1e-9;
      *wait += (double)queued * 1e-9;
    }
    if (f)
      fclose(f);
  }
  if (dir)
    closedir(dir);
  return run;
}

/* The machine's busy and stolen CPU time so far, in seconds. */
void bench_machine_cpu_s(double *busy, double *steal) {
  unsigned long long v[8] = {0};
  FILE *f = fopen("/proc/stat", "r");
  if (f == NULL ||
      fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
             &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
    v[0] = v[1] = v[2] = v[5] = v[6] = v[7] = 0;
  if (f)
    fclose(f);
  double tck = (double)sysconf(_SC_CLK_TCK);
  /* user nice system idle iowait irq softirq steal */
  *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tck;
  *steal = (double)v[7] / tck;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
