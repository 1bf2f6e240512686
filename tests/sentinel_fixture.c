/* The Redis Sentinel test fixture: see sentinel_fixture.h. */
#include "sentinel_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static redisContext *unix_ctx(const char *sock) {
  struct timeval tv = {1, 0};
  redisContext *c = redisConnectUnixWithTimeout(sock, tv);
  if (c != NULL && c->err) {
    redisFree(c);
    return NULL;
  }
  if (c != NULL)
    redisSetTimeout(c, tv);
  return c;
}

/* An integer of a command's array reply: its number of elements. */
static long long count_of(const char *sock, const char *cmd) {
  redisContext *c = unix_ctx(sock);
  if (c == NULL)
    return -1;
  redisReply *r = redisCommand(c, cmd);
  long long n =
      r != NULL && r->type == REDIS_REPLY_ARRAY ? (long long)r->elements : -1;
  freeReplyObject(r);
  redisFree(c);
  return n;
}

static int start_data(ts_group_t *g, int i) {
  ts_node_t *n = &g->data[i];
  char port[16], mport[16];
  snprintf(port, sizeof(port), "%d", n->port);
  snprintf(mport, sizeof(mport), "%d", g->data[0].port);
  const char *args[24] = {"--port",       port,   "--bind",       "127.0.0.1",
                          "--dir",        g->dir, "--save",       "",
                          "--appendonly", "no",   "--dbfilename", NULL};
  char db[64];
  snprintf(db, sizeof(db), "dump-%d.rdb", i);
  int k = 11;
  args[k++] = db;
  if (i > 0) {
    args[k++] = "--replicaof";
    args[k++] = "127.0.0.1";
    args[k++] = mport;
  }
  args[k] = NULL;
  n->pid = tr_redis_spawn(NULL, n->sock, args, n->log);
  return n->pid > 0 ? 0 : -1;
}

static pid_t spawn_sentinel(ts_node_t *n) {
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int out = open(n->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    execlp("redis-sentinel", "redis-sentinel", n->conf, (char *)NULL);
    /* Debian's redis-sentinel package missing: the server's own mode. */
    execlp("redis-server", "redis-server", n->conf, "--sentinel", (char *)NULL);
    _exit(127);
  }
  for (int waited = 0; waited < 10000; waited += 20) {
    redisContext *c = unix_ctx(n->sock);
    if (c != NULL) {
      redisFree(c);
      return pid;
    }
    if (waitpid(pid, NULL, WNOHANG) == pid)
      return -1;
    sleep_ms(20);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

int ts_restart_sentinel(ts_node_t *n) {
  n->pid = spawn_sentinel(n);
  return n->pid > 0 ? 0 : -1;
}

static int start_sentinel(ts_group_t *g, int i) {
  ts_node_t *n = &g->sentinels[i];
  FILE *f = fopen(n->conf, "w");
  if (f == NULL)
    return -1;
  fprintf(f,
          "port %d\nbind 127.0.0.1\nunixsocket %s\ndir %s\n"
          "sentinel monitor " TS_MASTER " 127.0.0.1 %d 2\n"
          "sentinel down-after-milliseconds " TS_MASTER " 1000\n"
          "sentinel failover-timeout " TS_MASTER " 10000\n"
          "sentinel parallel-syncs " TS_MASTER " 2\n",
          n->port, n->sock, g->dir, g->data[0].port);
  fclose(f);
  return ts_restart_sentinel(n);
}

int ts_start(ts_group_t *g, int ndata, int nsentinels) {
  /* A connection a failover closed answers EPIPE, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  memset(g, 0, sizeof(*g));
  snprintf(g->dir, sizeof(g->dir), "/tmp/tally-sentinel-XXXXXX");
  if (mkdtemp(g->dir) == NULL || ndata > TS_MAX || nsentinels > TS_MAX)
    return -1;
  g->ndata = ndata;
  g->nsentinels = nsentinels;
  for (int i = 0; i < ndata; i++) {
    ts_node_t *n = &g->data[i];
    snprintf(n->sock, sizeof(n->sock), "%s/data-%d.sock", g->dir, i);
    snprintf(n->log, sizeof(n->log), "%s/data-%d.log", g->dir, i);
    n->port = tr_free_port();
    if (start_data(g, i) != 0) {
      fprintf(stderr, "data node %d did not start\n", i);
      return -1;
    }
  }
  size_t len = (size_t)snprintf(g->as_server.url, sizeof(g->as_server.url),
                                "sentinel://");
  for (int i = 0; i < nsentinels; i++) {
    ts_node_t *n = &g->sentinels[i];
    snprintf(n->sock, sizeof(n->sock), "%s/sentinel-%d.sock", g->dir, i);
    snprintf(n->conf, sizeof(n->conf), "%s/sentinel-%d.conf", g->dir, i);
    snprintf(n->log, sizeof(n->log), "%s/sentinel-%d.log", g->dir, i);
    n->port = tr_free_port();
    if (start_sentinel(g, i) != 0) {
      fprintf(stderr, "sentinel %d did not start (its log: %s)\n", i, n->log);
      return -1;
    }
    len +=
        (size_t)snprintf(g->as_server.url + len, sizeof(g->as_server.url) - len,
                         "%s127.0.0.1:%d", i > 0 ? "," : "", n->port);
  }
  snprintf(g->as_server.url + len, sizeof(g->as_server.url) - len,
           "/" TS_MASTER);
  snprintf(g->as_server.dir, sizeof(g->as_server.dir), "%s", g->dir);
  /* In sync, and known to every sentinel. */
  for (int waited = 0; waited < 30000; waited += 100) {
    bool ok = true;
    for (int i = 0; ok && i < nsentinels; i++)
      ok = count_of(g->sentinels[i].sock, "SENTINEL replicas " TS_MASTER) ==
               ndata - 1 &&
           count_of(g->sentinels[i].sock, "SENTINEL sentinels " TS_MASTER) ==
               nsentinels - 1;
    redisContext *c = unix_ctx(g->data[0].sock);
    if (ok && c != NULL) {
      redisReply *r = redisCommand(c, "WAIT %d 100", ndata - 1);
      ok = r != NULL && r->type == REDIS_REPLY_INTEGER &&
           r->integer == ndata - 1;
      freeReplyObject(r);
    }
    if (c != NULL)
      redisFree(c);
    if (ok)
      return 0;
    sleep_ms(100);
  }
  fprintf(stderr, "the sentinel group did not settle within 30 s (%s)\n",
          g->dir);
  return -1;
}

void ts_kill(ts_node_t *n) {
  if (n->pid <= 0)
    return;
  kill(n->pid, SIGKILL);
  waitpid(n->pid, NULL, 0);
  n->pid = 0;
}

void ts_stop(ts_group_t *g) {
  for (int i = 0; i < g->nsentinels; i++)
    ts_kill(&g->sentinels[i]);
  for (int i = 0; i < g->ndata; i++)
    ts_kill(&g->data[i]);
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g->dir);
  if (g->dir[0] != '\0' && system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", g->dir);
}

redisContext *ts_connect(ts_group_t *g, int i) {
  return unix_ctx(g->data[i].sock);
}

int ts_master_index(ts_group_t *g) {
  for (int i = 0; i < g->ndata; i++) {
    if (g->data[i].pid <= 0)
      continue;
    redisContext *c = unix_ctx(g->data[i].sock);
    if (c == NULL)
      continue;
    redisReply *r = redisCommand(c, "ROLE");
    bool master = r != NULL && r->type == REDIS_REPLY_ARRAY &&
                  r->elements > 0 &&
                  r->element[0]->type == REDIS_REPLY_STRING &&
                  strcmp(r->element[0]->str, "master") == 0;
    freeReplyObject(r);
    redisFree(c);
    if (master)
      return i;
  }
  return -1;
}

/* Whether every running sentinel names the master at port and has no
 * failover in progress (its flags are "master" alone): a failover that
 * a sentinel aborted could otherwise promote another replica later and
 * close the connections of the one a test has just found. */
static bool settled(ts_group_t *g, int port) {
  for (int s = 0; s < g->nsentinels; s++) {
    if (g->sentinels[s].pid <= 0)
      continue;
    redisContext *c = unix_ctx(g->sentinels[s].sock);
    if (c == NULL)
      return false;
    redisReply *r = redisCommand(c, "SENTINEL master " TS_MASTER);
    bool flags = false, at = false;
    for (size_t k = 0;
         r != NULL && r->type == REDIS_REPLY_ARRAY && k + 1 < r->elements;
         k += 2) {
      const redisReply *name = r->element[k], *v = r->element[k + 1];
      if (name->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
        continue;
      if (strcmp(name->str, "flags") == 0)
        flags = strcmp(v->str, "master") == 0;
      else if (strcmp(name->str, "port") == 0)
        at = atoi(v->str) == port;
    }
    freeReplyObject(r);
    redisFree(c);
    if (!flags || !at)
      return false;
  }
  return true;
}

int ts_wait_failover(ts_group_t *g, int old, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    for (int s = 0; s < g->nsentinels; s++) {
      if (g->sentinels[s].pid <= 0)
        continue;
      redisContext *c = unix_ctx(g->sentinels[s].sock);
      if (c == NULL)
        continue;
      redisReply *r =
          redisCommand(c, "SENTINEL get-master-addr-by-name " TS_MASTER);
      int port = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2
                     ? atoi(r->element[1]->str)
                     : 0;
      freeReplyObject(r);
      redisFree(c);
      for (int i = 0; i < g->ndata; i++)
        if (i != old && g->data[i].port == port && ts_master_index(g) == i &&
            settled(g, port))
          return i;
    }
    sleep_ms(100);
  }
  return -1;
}
