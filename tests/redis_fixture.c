/* The redis-server test fixture: see redis_fixture.h. */
#include "redis_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

void tr_redis_exec(const char *server, const char *sock,
                   const char *const *args, const char *log) {
  int out = open(log != NULL ? log : "/dev/null",
                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (out >= 0) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
  }
  const char *argv[64];
  size_t n = 0;
  argv[n++] = server != NULL ? server : "redis-server";
  argv[n++] = "--unixsocket";
  argv[n++] = sock;
  for (size_t i = 0; args[i] != NULL && n < 63; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  execvp(argv[0], (char *const *)argv);
  fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* Whether a server answers PING on sock. */
static bool answers(const char *sock) {
  redisContext *c = redisConnectUnix(sock);
  bool ok = false;
  if (c != NULL && c->err == 0) {
    redisReply *r = redisCommand(c, "PING");
    ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
  }
  if (c != NULL)
    redisFree(c);
  return ok;
}

pid_t tr_redis_spawn(const char *server, const char *sock,
                     const char *const *args, const char *log) {
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fork: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0)
    tr_redis_exec(server, sock, args, log);
  for (int waited = 0; waited < 10000; waited += 10) {
    if (answers(sock))
      return pid;
    if (waitpid(pid, NULL, WNOHANG) == pid) {
      fprintf(stderr, "redis-server exited at start (its log: %s)\n",
              log != NULL ? log : "none");
      return -1;
    }
    sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  fprintf(stderr, "redis-server did not answer on %s within 10 s\n", sock);
  return -1;
}

/* Starts t's server in its folder. */
static int spawn(tr_redis_t *t) {
  char port[16];
  snprintf(port, sizeof(port), "%d", t->port);
  const char *args[] = {"--port",
                        port,
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        t->dir,
                        "--save",
                        "",
                        "--appendonly",
                        t->aof ? "yes" : "no",
                        "--appendfsync",
                        "always",
                        "--daemonize",
                        "no",
                        NULL};
  t->pid = tr_redis_spawn(NULL, t->sock, args, NULL);
  return t->pid > 0 ? 0 : -1;
}

int tr_redis_start(tr_redis_t *t, int port, bool aof) {
  memset(t, 0, sizeof(*t));
  snprintf(t->dir, sizeof(t->dir), "/tmp/tally-test-XXXXXX");
  if (mkdtemp(t->dir) == NULL)
    return -1;
  snprintf(t->sock, sizeof(t->sock), "%s/redis.sock", t->dir);
  snprintf(t->url, sizeof(t->url), "unix://%s", t->sock);
  t->port = port;
  t->aof = aof;
  return spawn(t);
}

int tr_redis_restart(tr_redis_t *t) {
  return spawn(t);
}

void tr_redis_signal(tr_redis_t *t, int sig) {
  if (t->pid > 0)
    kill(t->pid, sig);
}

void tr_redis_kill(tr_redis_t *t) {
  if (t->pid <= 0)
    return;
  kill(t->pid, SIGCONT);
  kill(t->pid, SIGKILL);
  waitpid(t->pid, NULL, 0);
  t->pid = 0;
}

void tr_redis_stop(tr_redis_t *t) {
  tr_redis_kill(t);
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
  if (t->dir[0] != '\0' && system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", t->dir);
}

long long tr_redis_int(tr_redis_t *t, const char *fmt, ...) {
  redisContext *c = redisConnectUnix(t->sock);
  if (c == NULL || c->err) {
    if (c)
      redisFree(c);
    return -1;
  }
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  redisFree(c);
  return v;
}

int tr_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  close(fd);
  return ntohs(a.sin_port);
}

bool tr_wait_replica_online(void *c, int timeout_ms) {
  for (int waited = 0;; waited += 100) {
    redisReply *r = redisCommand(c, "INFO replication");
    bool online = r != NULL && r->type == REDIS_REPLY_STRING &&
                  strstr(r->str, "state=online") != NULL;
    freeReplyObject(r);
    if (online || waited >= timeout_ms)
      return online;
    usleep(100000);
  }
}

redisContext *tr_redis_start_client(tr_redis_t *t) {
  if (tr_redis_start(t, 0, false) != 0)
    return NULL;
  redisContext *c = redisConnectUnix(t->sock);
  if (c == NULL || c->err != 0) {
    fprintf(stderr, "cannot connect to %s: %s\n", t->sock,
            c ? c->errstr : "out of memory");
    redisFree(c);
    tr_redis_stop(t);
    return NULL;
  }
  return c;
}

void tr_redis_stop_client(tr_redis_t *t, redisContext *c) {
  redisFree(c);
  tr_redis_stop(t);
}
