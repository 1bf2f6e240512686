/* The redis-server test fixture: see redis_fixture.h. */
#include "redis_fixture.h"

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

static int spawn(tr_redis_t *t) {
  char port[16];
  snprintf(port, sizeof(port), "%d", t->port);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int devnull = open("/dev/null", 1);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execlp("redis-server", "redis-server", "--port", port, "--bind",
           "127.0.0.1", "--unixsocket", t->sock, "--dir", t->dir, "--save", "",
           "--appendonly", t->aof ? "yes" : "no", "--appendfsync", "always",
           "--daemonize", "no", (char *)NULL);
    _exit(127);
  }
  t->pid = pid;
  for (int i = 0; i < 500; i++) {
    redisContext *c = redisConnectUnix(t->sock);
    if (c != NULL && c->err == 0) {
      redisReply *r = redisCommand(c, "PING");
      bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;
      freeReplyObject(r);
      redisFree(c);
      if (ok)
        return 0;
    } else if (c != NULL) {
      redisFree(c);
    }
    sleep_ms(10);
  }
  fprintf(stderr, "redis-server did not start in %s\n", t->dir);
  return -1;
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
