/* A Redis Sentinel group for tests: data nodes (a master and its
 * replicas) and redis-sentinel processes monitoring the master as
 * "tally-master", all on loopback ports, in a folder of their own. */
#ifndef TALLY_SENTINEL_FIXTURE_H
#define TALLY_SENTINEL_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "redis_fixture.h"

#define TS_MAX 4
#define TS_MASTER "tally-master"

typedef struct ts_node_s {
  char sock[300];
  char conf[300]; /* a sentinel's config file ("" for a data node) */
  char log[300];
  int port;
  pid_t pid; /* 0: not running */
} ts_node_t;

typedef struct ts_group_s {
  char dir[256];
  ts_node_t data[TS_MAX];
  ts_node_t sentinels[TS_MAX];
  int ndata, nsentinels;
  /* For td_start: dir is the group's, url the sentinel:// URL of every
   * sentinel. */
  tr_redis_t as_server;
} ts_group_t;

/* Starts ndata data nodes (the first the master, the others its
 * replicas) and nsentinels sentinels (quorum 2, down after 1 s), ignores
 * SIGPIPE (a failover closes clients' connections), and
 * waits until the replicas are in sync and every sentinel knows the
 * others and the replicas. Returns 0, or -1 with the cause on stderr. */
int ts_start(ts_group_t *g, int ndata, int nsentinels);
/* Kills everything and removes the folder. */
void ts_stop(ts_group_t *g);

/* SIGKILLs a node (data or sentinel) and reaps it. */
void ts_kill(ts_node_t *n);
/* Starts a sentinel again (after ts_kill), with the config it rewrote. */
int ts_restart_sentinel(ts_node_t *n);

/* The index of the data node that says it is master (ROLE), among those
 * running, or -1. */
int ts_master_index(ts_group_t *g);
/* Waits up to timeout_ms until the sentinels name a master other than
 * data[old], that node says it is master, and no sentinel has a
 * failover in progress. Returns its index, or -1. */
int ts_wait_failover(ts_group_t *g, int old, int timeout_ms);

/* A connection to data node i (asserting nothing; NULL on failure). */
redisContext *ts_connect(ts_group_t *g, int i);

#endif
