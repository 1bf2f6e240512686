/* Redis Cluster over tally_redis_t connections (cluster.h). */
#include "redis/cluster.h"
#include "config/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tally__cluster_node_s {
  tally_redis_t r; /* first: the connection's data points here */
  tally_cluster_t *k;
  char addr[80]; /* "IP:PORT"; the seed's as its URL gives it, or "" */
  bool used;     /* in the last map (the seed: always kept) */
  bool mapped;   /* counted among the last map's masters */
  bool retired;  /* closed because the map dropped it */
};

/* A command or a transaction, its arguments copied so that it can be sent
 * again after a redirection. */
struct tally__cluster_cmd_s {
  tally__cluster_cmd_t *next;
  tally_cluster_t *k;
  tally_cluster_cb cb;
  void *privdata;
  uint64_t deadline, not_before;
  bool any; /* no key: any node */
  unsigned slot;
  bool tx;
  char ask[80]; /* the node an ASK named, for the next send only */
  unsigned redirects;
  unsigned n;
  int *argc;
  const char ***argv;
  size_t **lens;
};

#define TICK_MS 20
#define MAX_REDIRECTS 16

static void send_cmd(tally__cluster_cmd_t *c);
static void refresh(tally_cluster_t *k);

/* Nodes. */

static void flush(tally_cluster_t *k);

static void on_node_up(tally_redis_t *r) {
  tally__cluster_node_t *node = (tally__cluster_node_t *)r;
  tally_cluster_t *k = node->k;
  if (k->mode == TALLY_CLUSTER_UNKNOWN)
    k->refresh_at = 0;
  if (uv_now(k->loop) >= k->refresh_at)
    refresh(k);
  flush(k);
}

static void on_node_down(tally_redis_t *r, const char *why) {
  tally__cluster_node_t *node = (tally__cluster_node_t *)r;
  tally_cluster_t *k = node->k;
  snprintf(k->down, sizeof(k->down), "%s", why);
  /* A master gone: its replica may be taking over. */
  k->refresh_at = 0;
}

static void node_closed(tally_redis_t *r) {
  tally__cluster_node_t *node = (tally__cluster_node_t *)r;
  tally_cluster_t *k = node->k;
  if (node->retired)
    k->retiring--;
  free(node);
  if (k->closing && --k->closing_left == 0 && k->close_cb)
    k->close_cb(k);
}

/* Whether every master of the map has its connection up. */
static bool masters_up(const tally_cluster_t *k) {
  for (size_t i = 0; i < k->nnodes; i++)
    if (k->nodes[i]->mapped && k->nodes[i]->r.state != TALLY_REDIS_UP)
      return false;
  return true;
}

/* Makes a node connection to url; addr (may be "") names it. */
static tally__cluster_node_t *node_new(tally_cluster_t *k, const char *url,
                                       const char *addr, char *err,
                                       size_t errlen) {
  tally__cluster_node_t *node = calloc(1, sizeof(*node));
  if (node == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (k->nnodes == k->cap) {
    size_t cap = k->cap ? k->cap * 2 : 8;
    tally__cluster_node_t **nodes = realloc(k->nodes, cap * sizeof(*nodes));
    if (nodes == NULL) {
      free(node);
      snprintf(err, errlen, "out of memory");
      return NULL;
    }
    k->nodes = nodes;
    k->cap = cap;
  }
  if (tally_redis_init(k->loop, &node->r, url, err, errlen) != 0) {
    free(node);
    return NULL;
  }
  node->k = k;
  node->r.data = node;
  node->r.on_up = on_node_up;
  node->r.on_down = on_node_down;
  snprintf(node->addr, sizeof(node->addr), "%s", addr);
  k->nodes[k->nnodes++] = node;
  return node;
}

/* The node at host:port, made (and started) when there is none; NULL
 * when it cannot be made (k->why says why). */
static tally__cluster_node_t *node_at(tally_cluster_t *k, const char *host,
                                      int port) {
  char addr[80];
  snprintf(addr, sizeof(addr), "%s:%d", host, port);
  for (size_t i = 0; i < k->nnodes; i++)
    if (strcmp(k->nodes[i]->addr, addr) == 0)
      return k->nodes[i];
  char url[120];
  snprintf(url, sizeof(url),
           strchr(host, ':') ? "redis://[%s]:%d/%d" : "redis://%s:%d/%d", host,
           port, k->addr.db);
  tally__cluster_node_t *node = node_new(k, url, addr, k->why, sizeof(k->why));
  if (node == NULL)
    return NULL;
  /* The seed's login, whichever way it was given. */
  free(node->r.addr.user);
  free(node->r.addr.password);
  node->r.addr.user = k->addr.user ? strdup(k->addr.user) : NULL;
  node->r.addr.password = k->addr.password ? strdup(k->addr.password) : NULL;
  tally_redis_start(&node->r);
  return node;
}

/* The slot map. */

static void use_map(tally_cluster_t *k, const tally_slot_map_t *m) {
  for (size_t i = 0; i < k->nnodes; i++) {
    k->nodes[i]->used = k->nodes[i] == k->seed;
    k->nodes[i]->mapped = false;
  }
  for (unsigned s = 0; s < TALLY_CLUSTER_SLOTS; s++)
    k->owner[s] = NULL;
  size_t masters = 0;
  for (size_t i = 0; i < m->n; i++) {
    const tally_slot_range_t *range = &m->ranges[i];
    const char *host = range->host[0] ? range->host : k->addr.host;
    tally__cluster_node_t *node =
        host != NULL ? node_at(k, host, range->port) : NULL;
    if (node == NULL)
      continue;
    masters += !node->mapped;
    node->used = node->mapped = true;
    for (unsigned s = range->from; s <= range->to; s++)
      k->owner[s] = node;
  }
  k->masters = masters;
  /* Nodes no longer masters: their commands in flight fail. */
  size_t kept = 0;
  for (size_t i = 0; i < k->nnodes; i++) {
    tally__cluster_node_t *node = k->nodes[i];
    if (node->used) {
      k->nodes[kept++] = node;
    } else {
      node->retired = true;
      k->retiring++;
      tally_redis_close(&node->r, node_closed);
    }
  }
  k->nnodes = kept;
}

static void on_slots(tally_redis_t *r, redisReply *reply, void *privdata) {
  tally_cluster_t *k = privdata;
  (void)r;
  k->refreshing = false;
  if (k->closing)
    return;
  k->refresh_at = uv_now(k->loop) + k->refresh_every_ms;
  if (reply == NULL) {
    k->refresh_at = uv_now(k->loop) + k->retry_ms;
    return;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    /* One server, or a user not allowed CLUSTER (who cannot be on a
     * cluster either), as every connection decides it. */
    if (tally_slots_disabled(reply)) {
      if (k->mode != TALLY_CLUSTER_SINGLE) {
        k->mode = TALLY_CLUSTER_SINGLE;
        k->masters = 1;
        k->maps++;
        if (k->on_map)
          k->on_map(k);
      }
      k->refresh_at = UINT64_MAX; /* one server stays one server */
    } else {
      snprintf(k->why, sizeof(k->why), "CLUSTER SLOTS: %s", reply->str);
      k->refresh_at = uv_now(k->loop) + k->retry_ms;
    }
    return;
  }
  tally_slot_map_t m;
  char err[200];
  if (tally_slot_map_read(reply, &m, err, sizeof(err)) != 0) {
    snprintf(k->why, sizeof(k->why), "%s", err);
    return;
  }
  k->mode = TALLY_CLUSTER_ON;
  use_map(k, &m);
  tally_slot_map_free(&m);
  k->maps++;
  /* While a master is away, soon again: its replica may take over. */
  if (!masters_up(k))
    k->refresh_at = uv_now(k->loop) + 200;
  if (k->on_map)
    k->on_map(k);
}

/* Asks a node whose connection is up for the slot map: the seed first. */
static void refresh(tally_cluster_t *k) {
  if (k->refreshing || k->closing)
    return;
  for (size_t i = 0; i < k->nnodes; i++) {
    tally__cluster_node_t *node = k->nodes[i];
    if (node->r.state != TALLY_REDIS_UP)
      continue;
    const char *argv[] = {"CLUSTER", "SLOTS"};
    const size_t lens[] = {7, 5};
    if (tally_redis_command(&node->r, 5000, on_slots, k, 2, argv, lens) == 0) {
      k->refreshing = true;
      return;
    }
  }
}

/* Commands. */

static void finish(tally__cluster_cmd_t *c, redisReply *reply) {
  c->cb(c->k, reply, c->privdata);
  free(c);
}

static void wait_cmd(tally__cluster_cmd_t *c) {
  tally_cluster_t *k = c->k;
  c->next = NULL;
  if (k->waiting_tail)
    k->waiting_tail->next = c;
  else
    k->waiting = c;
  k->waiting_tail = c;
}

static bool starts(const redisReply *r, const char *word) {
  size_t n = strlen(word);
  return r->len >= n && memcmp(r->str, word, n) == 0 &&
         (r->len == n || r->str[n] == ' ');
}

static void on_reply(tally_redis_t *r, redisReply *reply, void *privdata) {
  tally__cluster_cmd_t *c = privdata;
  tally_cluster_t *k = c->k;
  if (reply == NULL) {
    snprintf(k->why, sizeof(k->why), "%s", r->why);
    k->refresh_at = 0;
    finish(c, NULL);
    return;
  }
  if (reply->type != REDIS_REPLY_ERROR || k->closing) {
    finish(c, reply);
    return;
  }
  uint64_t now = uv_now(k->loop);
  bool ask;
  unsigned slot;
  char host[64];
  int port;
  if (tally_redirect_parse(reply->str, reply->len, &ask, &slot, host, &port)) {
    if (++c->redirects > MAX_REDIRECTS || now >= c->deadline) {
      finish(c, reply);
      return;
    }
    tally__cluster_node_t *to = node_at(k, host, port);
    if (to == NULL) {
      finish(c, reply);
      return;
    }
    if (ask) {
      k->asked++;
      snprintf(c->ask, sizeof(c->ask), "%s", to->addr);
    } else {
      k->moved++;
      k->owner[slot] = to;
      k->refresh_at = 0;
    }
    send_cmd(c);
    return;
  }
  if ((starts(reply, "TRYAGAIN") || starts(reply, "CLUSTERDOWN")) &&
      now + k->retry_ms < c->deadline) {
    k->retried++;
    c->ask[0] = '\0';
    c->not_before = now + k->retry_ms;
    if (starts(reply, "CLUSTERDOWN"))
      k->refresh_at = 0;
    wait_cmd(c);
    return;
  }
  finish(c, reply);
}

static void on_asking(tally_redis_t *r, redisReply *reply, void *privdata) {
  (void)r, (void)reply, (void)privdata;
}

/* The node c goes to now, or NULL: not known yet. */
static tally__cluster_node_t *route(tally__cluster_cmd_t *c) {
  tally_cluster_t *k = c->k;
  if (c->ask[0] != '\0') {
    for (size_t i = 0; i < k->nnodes; i++)
      if (strcmp(k->nodes[i]->addr, c->ask) == 0)
        return k->nodes[i];
    return NULL;
  }
  if (k->mode == TALLY_CLUSTER_SINGLE)
    return k->seed;
  if (k->mode != TALLY_CLUSTER_ON)
    return NULL;
  if (!c->any)
    return k->owner[c->slot];
  for (size_t i = 0; i < k->nnodes; i++)
    if (k->nodes[i]->r.state == TALLY_REDIS_UP)
      return k->nodes[i];
  return NULL;
}

/* Sends c where it goes now, or keeps it waiting. */
static void send_cmd(tally__cluster_cmd_t *c) {
  tally_cluster_t *k = c->k;
  uint64_t now = uv_now(k->loop);
  tally__cluster_node_t *node = route(c);
  if (node == NULL || node->r.state != TALLY_REDIS_UP || now < c->not_before) {
    wait_cmd(c);
    return;
  }
  uint64_t left = c->deadline > now ? c->deadline - now : 1;
  if (c->ask[0] != '\0') {
    const char *asking[] = {"ASKING"};
    const size_t len[] = {6};
    c->ask[0] = '\0';
    if (tally_redis_command(&node->r, left, on_asking, NULL, 1, asking, len) !=
        0) {
      wait_cmd(c);
      return;
    }
  }
  int rc = c->tx ? tally_redis_transaction(&node->r, left, on_reply, c, c->n,
                                           c->argc,
                                           (const char *const *const *)c->argv,
                                           (const size_t *const *)c->lens)
                 : tally_redis_command(&node->r, left, on_reply, c, c->argc[0],
                                       c->argv[0], c->lens[0]);
  if (rc != 0)
    wait_cmd(c);
}

/* Sends what waits and can go, fails what waited too long. */
static void flush(tally_cluster_t *k) {
  tally__cluster_cmd_t *list = k->waiting;
  k->waiting = k->waiting_tail = NULL;
  uint64_t now = uv_now(k->loop);
  while (list != NULL) {
    tally__cluster_cmd_t *c = list;
    list = c->next;
    if (now >= c->deadline || k->closing) {
      if (k->closing)
        snprintf(k->why, sizeof(k->why), "connection closed");
      else
        snprintf(k->why, sizeof(k->why),
                 "timed out waiting for the cluster: %.200s",
                 k->down[0] ? k->down : "no master serves the key's slot yet");
      finish(c, NULL);
    } else {
      send_cmd(c);
    }
  }
}

static void on_tick(uv_timer_t *t) {
  tally_cluster_t *k = t->data;
  if (k->closing)
    return;
  if (uv_now(k->loop) >= k->refresh_at)
    refresh(k);
  if (k->waiting != NULL)
    flush(k);
}

/* Copies n commands into one block. */
static tally__cluster_cmd_t *
cmd_new(tally_cluster_t *k, const char *key, size_t keylen, uint64_t timeout_ms,
        tally_cluster_cb cb, void *privdata, unsigned n, const int *argc,
        const char *const *const *argv, const size_t *const *argvlen) {
  size_t size = sizeof(tally__cluster_cmd_t) +
                n * (sizeof(int) + sizeof(char **) + sizeof(size_t *));
  for (unsigned i = 0; i < n; i++) {
    size += (size_t)argc[i] * (sizeof(char *) + sizeof(size_t));
    for (int a = 0; a < argc[i]; a++)
      size += argvlen[i][a] + 1;
  }
  tally__cluster_cmd_t *c = calloc(1, size);
  if (c == NULL)
    return NULL;
  char *p = (char *)(c + 1);
  c->lens = (size_t **)p;
  p += n * sizeof(size_t *);
  c->argv = (const char ***)p;
  p += n * sizeof(char **);
  for (unsigned i = 0; i < n; i++) {
    c->lens[i] = (size_t *)p;
    p += (size_t)argc[i] * sizeof(size_t);
    c->argv[i] = (const char **)p;
    p += (size_t)argc[i] * sizeof(char *);
  }
  c->argc = (int *)p;
  p += n * sizeof(int);
  for (unsigned i = 0; i < n; i++) {
    c->argc[i] = argc[i];
    for (int a = 0; a < argc[i]; a++) {
      memcpy(p, argv[i][a], argvlen[i][a]);
      c->argv[i][a] = p;
      c->lens[i][a] = argvlen[i][a];
      p += argvlen[i][a] + 1;
    }
  }
  c->k = k;
  c->cb = cb;
  c->privdata = privdata;
  c->n = n;
  c->any = key == NULL;
  c->slot = key != NULL ? tally_key_slot(key, keylen) : 0;
  c->deadline = uv_now(k->loop) + timeout_ms;
  return c;
}

int tally_cluster_command(tally_cluster_t *k, const char *key, size_t keylen,
                          uint64_t timeout_ms, tally_cluster_cb cb,
                          void *privdata, int argc, const char **argv,
                          const size_t *argvlen) {
  if (k->closing)
    return TALLY_EIO;
  const char *const *args = argv;
  tally__cluster_cmd_t *c = cmd_new(k, key, keylen, timeout_ms, cb, privdata, 1,
                                    &argc, &args, &argvlen);
  if (c == NULL)
    return TALLY_ENOMEM;
  send_cmd(c);
  return 0;
}

int tally_cluster_transaction(tally_cluster_t *k, const char *key,
                              size_t keylen, uint64_t timeout_ms,
                              tally_cluster_cb cb, void *privdata, unsigned n,
                              const int *argc, const char *const *const *argv,
                              const size_t *const *argvlen) {
  if (k->closing)
    return TALLY_EIO;
  tally__cluster_cmd_t *c =
      cmd_new(k, key, keylen, timeout_ms, cb, privdata, n, argc, argv, argvlen);
  if (c == NULL)
    return TALLY_ENOMEM;
  c->tx = true;
  send_cmd(c);
  return 0;
}

/* Life cycle. */

int tally_cluster_init(uv_loop_t *loop, tally_cluster_t *k, const char *url,
                       char *err, size_t errlen) {
  memset(k, 0, sizeof(*k));
  k->loop = loop;
  k->refresh_every_ms = 5000;
  k->retry_ms = 50;
  if (tally_redis_url_parse(&k->addr, url, err, errlen) != 0)
    return TALLY_EINVAL;
  k->owner = calloc(TALLY_CLUSTER_SLOTS, sizeof(*k->owner));
  char addr[80] = "";
  if (k->addr.host != NULL && k->addr.nsentinels == 0)
    snprintf(addr, sizeof(addr), "%s:%d", k->addr.host, k->addr.port);
  if (k->owner == NULL ||
      (k->seed = node_new(k, url, addr, err, errlen)) == NULL) {
    if (k->owner == NULL)
      snprintf(err, errlen, "out of memory");
    free(k->owner);
    free(k->nodes);
    tally_redis_url_free(&k->addr);
    return TALLY_ENOMEM;
  }
  /* A Sentinel group is one server that moves: no cluster there. */
  if (k->addr.nsentinels > 0)
    k->mode = TALLY_CLUSTER_SINGLE;
  uv_timer_init(loop, &k->timer);
  k->timer.data = k;
  return 0;
}

void tally_cluster_start(tally_cluster_t *k) {
  tally_redis_start(&k->seed->r);
  k->refresh_at = k->mode == TALLY_CLUSTER_SINGLE ? UINT64_MAX : 0;
  uv_timer_start(&k->timer, on_tick, TICK_MS, TICK_MS);
}

bool tally_cluster_ready(const tally_cluster_t *k, char *why, size_t whylen) {
  if (k->mode == TALLY_CLUSTER_SINGLE) {
    if (k->seed->r.state == TALLY_REDIS_UP)
      return true;
    snprintf(why, whylen, "%s", k->seed->r.why);
    return false;
  }
  if (k->mode != TALLY_CLUSTER_ON) {
    snprintf(why, whylen, "not yet known whether %s is a cluster%s%s",
             k->addr.display, k->why[0] ? ": " : "", k->why);
    return false;
  }
  for (unsigned s = 0; s < TALLY_CLUSTER_SLOTS; s++) {
    const tally__cluster_node_t *node = k->owner[s];
    if (node == NULL) {
      snprintf(why, whylen, "no master serves slot %u", s);
      return false;
    }
    if (node->r.state != TALLY_REDIS_UP) {
      snprintf(why, whylen, "master %s (slot %u): %s", node->addr, s,
               node->r.why[0] ? node->r.why : "connecting");
      return false;
    }
  }
  return true;
}

static void timer_closed(uv_handle_t *h) {
  tally_cluster_t *k = h->data;
  free(k->owner);
  k->owner = NULL;
  free(k->nodes);
  k->nodes = NULL;
  tally_redis_url_free(&k->addr);
  if (--k->closing_left == 0 && k->close_cb)
    k->close_cb(k);
}

void tally_cluster_close(tally_cluster_t *k,
                         void (*close_cb)(tally_cluster_t *k)) {
  k->closing = true;
  k->close_cb = close_cb;
  flush(k);
  k->closing_left = k->nnodes + k->retiring + 1;
  for (size_t i = 0; i < k->nnodes; i++)
    tally_redis_close(&k->nodes[i]->r, node_closed);
  uv_close((uv_handle_t *)&k->timer, timer_closed);
}
