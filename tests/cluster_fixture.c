/* The Redis Cluster test fixture: see cluster_fixture.h. */
#include "cluster_fixture.h"

#include "redis_fixture.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

redisContext *tk_connect(tk_cluster_t *k, int i) {
  if (k->nodes[i].pid <= 0)
    return NULL;
  struct timeval tv = {2, 0};
  redisContext *c = redisConnectUnixWithTimeout(k->nodes[i].sock, tv);
  if (c != NULL && c->err) {
    redisFree(c);
    return NULL;
  }
  if (c != NULL)
    redisSetTimeout(c, tv);
  return c;
}

/* A command's reply on node i (NULL when down); the caller frees it. */
static redisReply *on_node(tk_cluster_t *k, int i, const char *fmt, ...) {
  redisContext *c = tk_connect(k, i);
  if (c == NULL)
    return NULL;
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = redisvCommand(c, fmt, ap);
  va_end(ap);
  redisFree(c);
  return r;
}

static bool says_ok(tk_cluster_t *k, int i) {
  redisReply *r = on_node(k, i, "CLUSTER INFO");
  bool ok = r != NULL && r->type == REDIS_REPLY_STRING &&
            strstr(r->str, "cluster_state:ok") != NULL;
  freeReplyObject(r);
  return ok;
}

static int index_of_port(tk_cluster_t *k, long long port) {
  for (int i = 0; i < k->n; i++)
    if (k->nodes[i].port == port)
      return i;
  return -1;
}

int tk_owner(tk_cluster_t *k, unsigned slot) {
  for (int i = 0; i < k->n; i++) {
    redisReply *r = on_node(k, i, "CLUSTER SLOTS");
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
      freeReplyObject(r);
      continue;
    }
    int owner = -1;
    for (size_t e = 0; e < r->elements; e++) {
      const redisReply *x = r->element[e];
      if (x->elements >= 3 && (unsigned)x->element[0]->integer <= slot &&
          slot <= (unsigned)x->element[1]->integer)
        owner = index_of_port(k, x->element[2]->element[1]->integer);
    }
    freeReplyObject(r);
    return owner;
  }
  return -1;
}

/* Whether every live node says ok, sees every slot served, and (with
 * replicas) every master has its replicas in sync. */
static bool settled(tk_cluster_t *k, int replicas) {
  for (int i = 0; i < k->n; i++) {
    if (k->nodes[i].pid <= 0)
      continue;
    if (!says_ok(k, i))
      return false;
    redisReply *r = on_node(k, i, "ROLE");
    bool master = r != NULL && r->type == REDIS_REPLY_ARRAY &&
                  strcmp(r->element[0]->str, "master") == 0;
    size_t nrep = master && r->elements >= 3 ? r->element[2]->elements : 0;
    freeReplyObject(r);
    if (master && (int)nrep < replicas)
      return false;
  }
  return true;
}

void tk_stop(tk_cluster_t *k);

static int start_cluster(tk_cluster_t *k, int masters, int replicas) {
  memset(k, 0, sizeof(*k));
  signal(SIGPIPE, SIG_IGN);
  snprintf(k->dir, sizeof(k->dir), "/tmp/tally-cluster-XXXXXX");
  if (mkdtemp(k->dir) == NULL)
    return -1;
  if (masters * (1 + replicas) > TK_MAX)
    return -1;
  k->n = masters * (1 + replicas);
  char create[2000];
  int len = snprintf(create, sizeof(create),
                     "redis-cli --cluster create --cluster-yes "
                     "--cluster-replicas %d",
                     replicas);
  for (int i = 0; i < k->n; i++) {
    tk_node_t *n = &k->nodes[i];
    do
      n->port = tr_free_port();
    while (n->port > 55000);
    char port[16], conf[300], sub[200], log[300];
    snprintf(port, sizeof(port), "%d", n->port);
    snprintf(sub, sizeof(sub), "%s/n%d", k->dir, i);
    mkdir(sub, 0700);
    snprintf(conf, sizeof(conf), "%s/nodes.conf", sub);
    snprintf(log, sizeof(log), "%s/redis.log", sub);
    snprintf(n->sock, sizeof(n->sock), "%s/redis.sock", sub);
    const char *args[] = {"--port",
                          port,
                          "--bind",
                          "127.0.0.1",
                          "--dir",
                          sub,
                          "--save",
                          "",
                          "--appendonly",
                          "no",
                          "--cluster-enabled",
                          "yes",
                          "--cluster-config-file",
                          conf,
                          "--cluster-node-timeout",
                          "1000",
                          NULL};
    n->pid = tr_redis_spawn(NULL, n->sock, args, log);
    if (n->pid <= 0) {
      fprintf(stderr, "cluster node %d did not start (%s)\n", i, log);
      return -1;
    }
    len += snprintf(create + len, sizeof(create) - (size_t)len, " 127.0.0.1:%d",
                    n->port);
  }
  snprintf(create + len, sizeof(create) - (size_t)len, " >'%s/create.log' 2>&1",
           k->dir);
  if (masters < 3 && replicas == 0) {
    /* redis-cli makes clusters of three masters or more: a smaller one is
     * made by hand, each master given an equal range of slots. */
    for (int i = 0; i < masters; i++) {
      unsigned from = 16384u * (unsigned)i / (unsigned)masters;
      unsigned to = 16384u * (unsigned)(i + 1) / (unsigned)masters - 1;
      redisReply *r = on_node(k, i, "CLUSTER ADDSLOTSRANGE %u %u", from, to);
      bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;
      freeReplyObject(r);
      if (i > 0) {
        redisReply *m =
            on_node(k, 0, "CLUSTER MEET 127.0.0.1 %d", k->nodes[i].port);
        ok = ok && m != NULL && m->type == REDIS_REPLY_STATUS;
        freeReplyObject(m);
      }
      if (!ok) {
        fprintf(stderr, "cannot give cluster node %d its slots\n", i);
        return -1;
      }
    }
  } else if (system(create) != 0) {
    fprintf(stderr, "%s failed (%s/create.log)\n", create, k->dir);
    return -1;
  }
  snprintf(k->url, sizeof(k->url), "redis://127.0.0.1:%d", k->nodes[0].port);
  for (int i = 0; i < k->n; i++) {
    redisReply *r = on_node(k, i, "CLUSTER MYID");
    if (r != NULL && r->type == REDIS_REPLY_STRING)
      snprintf(k->nodes[i].id, sizeof(k->nodes[i].id), "%s", r->str);
    freeReplyObject(r);
  }
  for (int waited = 0; waited < 60000; waited += 100) {
    if (settled(k, replicas))
      return 0;
    sleep_ms(100);
  }
  fprintf(stderr, "the cluster did not settle within 60 s (%s)\n", k->dir);
  return -1;
}

int tk_start(tk_cluster_t *k, int masters, int replicas) {
  if (start_cluster(k, masters, replicas) == 0)
    return 0;
  /* Nothing left running after a failure. */
  tk_stop(k);
  return -1;
}

void tk_kill(tk_cluster_t *k, int i) {
  if (k->nodes[i].pid <= 0)
    return;
  kill(k->nodes[i].pid, SIGKILL);
  waitpid(k->nodes[i].pid, NULL, 0);
  k->nodes[i].pid = 0;
}

void tk_stop(tk_cluster_t *k) {
  for (int i = 0; i < k->n; i++)
    tk_kill(k, i);
  char cmd[200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
  if (k->dir[0] != '\0' && system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", k->dir);
}

int tk_wait_owner_change(tk_cluster_t *k, unsigned slot, int old,
                         int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    int owner = tk_owner(k, slot);
    bool ok = owner >= 0 && owner != old;
    for (int i = 0; ok && i < k->n; i++)
      ok = k->nodes[i].pid <= 0 || says_ok(k, i);
    if (ok)
      return owner;
    sleep_ms(100);
  }
  return -1;
}

/* Runs a command that must answer +OK on node i. */
static int must_ok(int i, redisReply *r, const char *what) {
  bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;
  if (!ok)
    fprintf(stderr, "%s on node %d: %s\n", what, i,
            r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
  freeReplyObject(r);
  return ok ? 0 : -1;
}

int tk_migration_begin(tk_cluster_t *k, unsigned slot, int from, int to) {
  if (must_ok(to,
              on_node(k, to, "CLUSTER SETSLOT %u IMPORTING %s", slot,
                      k->nodes[from].id),
              "SETSLOT IMPORTING") != 0)
    return -1;
  return must_ok(from,
                 on_node(k, from, "CLUSTER SETSLOT %u MIGRATING %s", slot,
                         k->nodes[to].id),
                 "SETSLOT MIGRATING");
}

int tk_migration_move(tk_cluster_t *k, unsigned slot, int from, int to,
                      int count) {
  redisReply *keys =
      on_node(k, from, "CLUSTER GETKEYSINSLOT %u %d", slot, count);
  if (keys == NULL || keys->type != REDIS_REPLY_ARRAY) {
    freeReplyObject(keys);
    return -1;
  }
  int moved = 0;
  for (size_t i = 0; i < keys->elements; i++) {
    redisReply *r =
        on_node(k, from, "MIGRATE 127.0.0.1 %d %b 0 5000", k->nodes[to].port,
                keys->element[i]->str, keys->element[i]->len);
    if (must_ok(from, r, "MIGRATE") != 0)
      break;
    moved++;
  }
  freeReplyObject(keys);
  return moved;
}

int tk_migration_end(tk_cluster_t *k, unsigned slot, int to) {
  /* The importing node first, as the specification says. */
  int rc = must_ok(
      to, on_node(k, to, "CLUSTER SETSLOT %u NODE %s", slot, k->nodes[to].id),
      "SETSLOT NODE");
  for (int i = 0; rc == 0 && i < k->n; i++) {
    if (i == to || k->nodes[i].pid <= 0)
      continue;
    redisReply *role = on_node(k, i, "ROLE");
    bool master = role != NULL && role->type == REDIS_REPLY_ARRAY &&
                  strcmp(role->element[0]->str, "master") == 0;
    freeReplyObject(role);
    if (master)
      rc = must_ok(
          i, on_node(k, i, "CLUSTER SETSLOT %u NODE %s", slot, k->nodes[to].id),
          "SETSLOT NODE");
  }
  return rc;
}

pid_t tk_reshard_start(tk_cluster_t *k, unsigned slot, int from, int to) {
  /* redis-cli takes a source's slots in ascending order: as many as it
   * owns up to slot, so that slot is the last one moved. */
  redisReply *r = on_node(k, from, "CLUSTER SLOTS");
  long count = 0;
  for (size_t i = 0;
       r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
    const redisReply *e = r->element[i];
    long lo = (long)e->element[0]->integer, hi = (long)e->element[1]->integer;
    if (e->element[2]->element[1]->integer != k->nodes[from].port ||
        lo > (long)slot)
      continue;
    count += (hi < (long)slot ? hi : (long)slot) - lo + 1;
  }
  freeReplyObject(r);
  if (count == 0) {
    fprintf(stderr, "cluster: node %d does not serve slot %u\n", from, slot);
    return -1;
  }
  char node[32], slots[16], log[300];
  snprintf(node, sizeof(node), "127.0.0.1:%d", k->nodes[from].port);
  snprintf(slots, sizeof(slots), "%ld", count);
  snprintf(log, sizeof(log), "%s/reshard.log", k->dir);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(log, "a", stdout);
    (void)f;
    dup2(STDOUT_FILENO, STDERR_FILENO);
    execlp("redis-cli", "redis-cli", "--cluster", "reshard", node,
           "--cluster-from", k->nodes[from].id, "--cluster-to", k->nodes[to].id,
           "--cluster-slots", slots, "--cluster-yes", "--cluster-pipeline",
           "10", (char *)NULL);
    _exit(127);
  }
  return pid;
}

int tk_reshard_wait(tk_cluster_t *k, pid_t pid, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    sleep_ms(50);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  fprintf(stderr, "cluster: redis-cli --cluster reshard did not end (%s)\n",
          k->dir);
  return -1;
}
