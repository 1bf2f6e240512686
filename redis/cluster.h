/* A Redis Cluster on a libuv loop, for hiredis 0.14.1 (which has no
 * cluster client): a small layer over tally_redis_t connections. Given
 * the address of any node, it tells a cluster from one server (CLUSTER
 * SLOTS answers, or says cluster support is disabled), reads the slot
 * map, keeps one connection per master, sends each command to the
 * master of its key's slot, follows MOVED (and reads the map again) and
 * ASK (ASKING first), sends again after TRYAGAIN and CLUSTERDOWN within
 * the command's time, and reads the map again after a connection drops
 * and every refresh_every_ms, so that a failover or a migration is
 * followed. With one server every command goes to it, unchanged.
 *
 * Nothing is sent twice that may have run: a command whose connection
 * dropped, or whose watchdog fired, fails (reply NULL) as with
 * tally_redis_t; only refusals that say the command did not run
 * (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) are sent again. */
#ifndef TALLY_CLUSTER_H
#define TALLY_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "redis/redis.h"
#include "redis/slots.h"

typedef struct tally_cluster_s tally_cluster_t;

/* A command's callback: reply NULL when it failed (k->why says why);
 * valid only during the callback. */
typedef void (*tally_cluster_cb)(tally_cluster_t *k, redisReply *reply,
                                 void *privdata);

enum tally_cluster_mode_e {
  TALLY_CLUSTER_UNKNOWN = 0, /* not yet asked */
  TALLY_CLUSTER_SINGLE,      /* one server (or a Sentinel group's master) */
  TALLY_CLUSTER_ON           /* a cluster: commands follow the slot map */
};

typedef struct tally__cluster_node_s tally__cluster_node_t;
typedef struct tally__cluster_cmd_s tally__cluster_cmd_t;

struct tally_cluster_s {
  /* Settings: fill in after tally_cluster_init, before tally_cluster_start. */
  uint64_t refresh_every_ms; /* default 5000 */
  uint64_t retry_ms;         /* after TRYAGAIN or CLUSTERDOWN; default 50 */
  /* After each slot map read (or once one server is found). May be NULL. */
  void (*on_map)(tally_cluster_t *k);
  void *data; /* the user's */

  /* Read-only for users. */
  int mode;
  size_t masters;   /* in the last map */
  uint64_t maps;    /* slot maps read */
  uint64_t moved;   /* MOVED followed */
  uint64_t asked;   /* ASK followed */
  uint64_t retried; /* TRYAGAIN or CLUSTERDOWN sent again */
  char why[256];    /* the last failure */

  /* Private. */
  uv_loop_t *loop;
  tally_redis_url_t addr;
  tally__cluster_node_t *seed;
  tally__cluster_node_t **nodes; /* the seed and every master's */
  size_t nnodes, cap;
  tally__cluster_node_t **owner; /* by slot: TALLY_CLUSTER_SLOTS */
  char down[256];                /* the last connection failure */
  size_t retiring;               /* nodes the map dropped, not yet closed */
  bool refreshing;
  uint64_t refresh_at; /* when to read the map next (0: now) */
  tally__cluster_cmd_t *waiting, *waiting_tail;
  uv_timer_t timer;
  bool closing;
  size_t closing_left;
  void (*close_cb)(tally_cluster_t *k);
};

/* Parses url (any tally_redis_init URL; for a cluster, redis://IP:PORT
 * of any node) and prepares k on loop. Returns 0, or a negative code with
 * err naming the problem; on error k needs no close. */
int tally_cluster_init(uv_loop_t *loop, tally_cluster_t *k, const char *url,
                       char *err, size_t errlen);

/* Connects to the node given, asks whether it is a cluster, and keeps
 * the connections up until tally_cluster_close. */
void tally_cluster_start(tally_cluster_t *k);

/* Whether every slot has a master whose connection is up (with one
 * server: whether it is up). When not, why (whylen bytes) says what is
 * missing. */
bool tally_cluster_ready(const tally_cluster_t *k, char *why, size_t whylen);

/* Sends a command to the master of key's slot (key NULL: to any node),
 * with a watchdog of timeout_ms over all its redirections. A command sent
 * while the map is being read, or its master's connection is down, waits
 * for them within that time. Returns 0 (cb is called once), or a
 * negative code when k is closing. */
int tally_cluster_command(tally_cluster_t *k, const char *key, size_t keylen,
                          uint64_t timeout_ms, tally_cluster_cb cb,
                          void *privdata, int argc, const char **argv,
                          const size_t *argvlen);

/* The same for MULTI, n commands and EXEC on key's master (every key of
 * the n commands must share its slot): cb gets what
 * tally_redis_transaction gives. A transaction refused because its slot
 * moved or is being migrated ran nothing, and is sent again. */
int tally_cluster_transaction(tally_cluster_t *k, const char *key,
                              size_t keylen, uint64_t timeout_ms,
                              tally_cluster_cb cb, void *privdata, unsigned n,
                              const int *argc, const char *const *const *argv,
                              const size_t *const *argvlen);

/* Closes k: waiting commands and those in flight fail, and close_cb runs
 * once every handle is closed, after which k's memory may be freed. */
void tally_cluster_close(tally_cluster_t *k,
                         void (*close_cb)(tally_cluster_t *k));

#endif
