/* A Redis Cluster for tests: redis-server processes in cluster mode on
 * loopback ports, made one cluster by redis-cli --cluster create, in a
 * folder of their own; and the steps of a slot migration, one at a
 * time, so that a test can look between them. */
#ifndef TALLY_CLUSTER_FIXTURE_H
#define TALLY_CLUSTER_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#define TK_MAX 12

typedef struct tk_node_s {
  char sock[300];
  int port;    /* at most 55000: the cluster bus listens on port + 10000 */
  char id[48]; /* CLUSTER MYID */
  pid_t pid;   /* 0: not running */
} tk_node_t;

typedef struct tk_cluster_s {
  char dir[64];
  tk_node_t nodes[TK_MAX];
  int n;
  char url[64]; /* redis://127.0.0.1:PORT of node 0 */
} tk_cluster_t;

/* Starts masters * (1 + replicas) nodes (the first masters are the
 * masters, as redis-cli assigns them), creates the cluster (by hand for
 * one or two masters without replicas, which redis-cli refuses), and waits
 * until every node says cluster_state:ok and every replica is in sync.
 * Ignores SIGPIPE (a failover closes connections). Returns 0, or -1 with
 * the cause on stderr and nothing left running. */
int tk_start(tk_cluster_t *k, int masters, int replicas);
/* Kills every node and removes the folder. */
void tk_stop(tk_cluster_t *k);
/* SIGKILLs node i and reaps it. */
void tk_kill(tk_cluster_t *k, int i);

/* A connection to node i (NULL when it is down). */
redisContext *tk_connect(tk_cluster_t *k, int i);
/* The index of the node serving slot as master, as a live node's
 * CLUSTER SLOTS says, or -1. */
int tk_owner(tk_cluster_t *k, unsigned slot);
/* Waits up to timeout_ms until every live node says cluster_state:ok
 * and a node other than old serves slot. Returns its index, or -1. */
int tk_wait_owner_change(tk_cluster_t *k, unsigned slot, int old,
                         int timeout_ms);

/* A slot migration from node from to node to, step by step: both marked
 * (IMPORTING, MIGRATING); up to count keys moved (MIGRATE), returning
 * how many; and the slot given to to on every master. Each returns 0 (or
 * the count), or -1 with the cause on stderr. */
int tk_migration_begin(tk_cluster_t *k, unsigned slot, int from, int to);
int tk_migration_move(tk_cluster_t *k, unsigned slot, int from, int to,
                      int count);
int tk_migration_end(tk_cluster_t *k, unsigned slot, int to);

/* redis-cli --cluster reshard from node from to node to, started in the
 * background, moving from's slots up to slot (so slot last), its output
 * in the folder's reshard.log. Returns its pid, or -1. tk_reshard_wait
 * waits up to timeout_ms for it and returns its exit status (-1 after
 * killing it at the timeout). */
pid_t tk_reshard_start(tk_cluster_t *k, unsigned slot, int from, int to);
int tk_reshard_wait(tk_cluster_t *k, pid_t pid, int timeout_ms);

#endif
