/* hiredis on libuv, blocking side: connecting to a server, or to the
 * master a Sentinel group names, with hiredis's blocking API (for the
 * tally command and the tests). */
#include "config/error.h"
#include "redis/redis.h"
#include "redis/redis_int.h"
#include "redis/slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Asks u's sentinels in turn for the master's address, into host (64
 * bytes) and *port. Returns 0, or -1 with err saying what each sentinel
 * answered last. */
static int ask_sentinels_sync(const tally_redis_url_t *u, struct timeval tv,
                              char *host, int *port, char *err, size_t errlen) {
  char last[400] = "no sentinel";
  for (size_t i = 0; i < u->nsentinels; i++) {
    const tally_redis_addr_t *s = &u->sentinels[i];
    redisContext *c = redisConnectWithTimeout(s->host, s->port, tv);
    if (c == NULL || c->err || redisSetTimeout(c, tv) != REDIS_OK) {
      snprintf(last, sizeof(last), "sentinel %s:%d: %s", s->host, s->port,
               c ? c->errstr : "out of memory");
      if (c != NULL)
        redisFree(c);
      continue;
    }
    redisReply *r = NULL;
    if (u->sentinel_password != NULL) {
      const char *argv[3];
      int argc =
          tally__redis_auth_argv(argv, u->sentinel_user, u->sentinel_password);
      r = redisCommandArgv(c, argc, argv, NULL);
      if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        snprintf(last, sizeof(last),
                 "sentinel %s:%d: AUTH as user %s failed: %s", s->host, s->port,
                 u->sentinel_user ? u->sentinel_user : "default",
                 r ? r->str : c->errstr);
        if (r != NULL)
          freeReplyObject(r);
        redisFree(c);
        continue;
      }
      freeReplyObject(r);
    }
    const char *q[] = {"SENTINEL", "get-master-addr-by-name", u->master};
    r = redisCommandArgv(c, 3, q, NULL);
    bool ok = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
              r->element[0]->type == REDIS_REPLY_STRING &&
              r->element[1]->type == REDIS_REPLY_STRING;
    if (ok) {
      snprintf(host, 64, "%s", r->element[0]->str);
      *port = (int)strtol(r->element[1]->str, NULL, 10);
    } else {
      snprintf(last, sizeof(last), "sentinel %s:%d does not know master %s: %s",
               s->host, s->port, u->master,
               r == NULL                      ? c->errstr
               : r->type == REDIS_REPLY_ERROR ? r->str
                                              : "no address");
    }
    if (r != NULL)
      freeReplyObject(r);
    redisFree(c);
    if (ok)
      return 0;
  }
  snprintf(err, errlen,
           "Redis at %s: no sentinel gave the master's address "
           "(last: %s)",
           u->display, last);
  return -1;
}

redisContext *tally_redis_connect_sync(const tally_redis_url_t *u,
                                       uint64_t timeout_ms, char *err,
                                       size_t errlen) {
  struct timeval tv = {(time_t)(timeout_ms / 1000),
                       (suseconds_t)(timeout_ms % 1000) * 1000};
  char mhost[64];
  int mport = 0;
  if (u->nsentinels > 0 &&
      ask_sentinels_sync(u, tv, mhost, &mport, err, errlen) != 0)
    return NULL;
  redisContext *c = u->nsentinels > 0
                        ? redisConnectWithTimeout(mhost, mport, tv)
                    : u->path ? redisConnectUnixWithTimeout(u->path, tv)
                              : redisConnectWithTimeout(u->host, u->port, tv);
  if (c == NULL) {
    snprintf(err, errlen, "Redis at %s: out of memory", u->display);
    return NULL;
  }
  if (c->err || redisSetTimeout(c, tv) != REDIS_OK) {
    snprintf(err, errlen, "cannot connect to Redis at %s: %s", u->display,
             c->errstr);
    redisFree(c);
    return NULL;
  }
  char db[16];
  snprintf(db, sizeof(db), "%d", u->db);
  enum { STEP_AUTH, STEP_SELECT };
  for (int step = STEP_AUTH; step <= STEP_SELECT; step++) {
    const char *argv[3];
    int argc = 0;
    if (step == STEP_AUTH && u->password != NULL) {
      argc = tally__redis_auth_argv(argv, u->user, u->password);
    } else if (step == STEP_SELECT && u->db != 0) {
      argv[argc++] = "SELECT";
      argv[argc++] = db;
    } else {
      continue;
    }
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    if (r != NULL && r->type != REDIS_REPLY_ERROR) {
      freeReplyObject(r);
      continue;
    }
    const char *why = r == NULL ? c->errstr : r->str;
    if (step == STEP_AUTH)
      snprintf(err, errlen, "Redis at %s: AUTH as user %s failed: %s",
               u->display, u->user ? u->user : "default", why);
    else
      snprintf(err, errlen, "Redis at %s: SELECT %d failed: %s", u->display,
               u->db, why);
    if (r != NULL)
      freeReplyObject(r);
    redisFree(c);
    return NULL;
  }
  if (u->nsentinels > 0) {
    /* The address the sentinels gave must be the master now. */
    redisReply *r = redisCommand(c, "ROLE");
    bool master = tally__redis_says_master(r);
    if (!master)
      snprintf(err, errlen,
               "Redis at %s: %s:%d, which the sentinels name as master %s, "
               "is not a master (ROLE: %s); try again once the failover is "
               "over",
               u->display, mhost, mport, u->master,
               r == NULL                      ? c->errstr
               : r->type == REDIS_REPLY_ERROR ? r->str
               : r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING
                   ? r->element[0]->str
                   : "no role");
    if (r != NULL)
      freeReplyObject(r);
    if (!master) {
      redisFree(c);
      return NULL;
    }
  }
  return c;
}

redisContext *tally_redis_connect_node_sync(const tally_redis_url_t *u,
                                            const char *host, int port,
                                            uint64_t timeout_ms, char *err,
                                            size_t errlen) {
  char h[64];
  snprintf(h, sizeof(h), "%s", host);
  tally_redis_url_t there = *u;
  there.host = h;
  there.port = port;
  there.path = NULL;
  there.nsentinels = 0;
  return tally_redis_connect_sync(&there, timeout_ms, err, errlen);
}

bool tally_redis_sync_at(const redisContext *c, const char *host, int port) {
  return c->connection_type == REDIS_CONN_TCP && c->tcp.host != NULL &&
         strcmp(c->tcp.host, host) == 0 && c->tcp.port == port;
}

int tally_redis_slot_sync(redisContext **c, const tally_redis_url_t *u,
                          unsigned slot, uint64_t timeout_ms, bool *cluster,
                          char *err, size_t errlen) {
  *cluster = false;
  redisReply *r = redisCommand(*c, "CLUSTER SLOTS");
  if (r == NULL) {
    snprintf(err, errlen, "Redis at %s: %s", u->display, (*c)->errstr);
    return -1;
  }
  if (tally_slots_disabled(r)) {
    freeReplyObject(r);
    return 0; /* one server */
  }
  tally_slot_map_t m;
  char why[200];
  if (tally_slot_map_read(r, &m, why, sizeof(why)) != 0) {
    snprintf(err, errlen, "Redis at %s: %s", u->display,
             r->type == REDIS_REPLY_ERROR ? r->str : why);
    freeReplyObject(r);
    return -1;
  }
  freeReplyObject(r);
  *cluster = true;
  const tally_slot_range_t *range = tally_slot_map_find(&m, slot);
  char host[64] = "";
  int port = 0;
  if (range != NULL) {
    snprintf(host, sizeof(host), "%s",
             range->host[0]           ? range->host
             : (*c)->tcp.host != NULL ? (*c)->tcp.host
                                      : "");
    port = range->port;
  }
  tally_slot_map_free(&m);
  if (host[0] == '\0') {
    snprintf(err, errlen,
             "Redis at %s: no master of the cluster serves slot "
             "%u",
             u->display, slot);
    return -1;
  }
  if (tally_redis_sync_at(*c, host, port))
    return 0;
  redisContext *n =
      tally_redis_connect_node_sync(u, host, port, timeout_ms, err, errlen);
  if (n == NULL)
    return -1;
  redisFree(*c);
  *c = n;
  return 0;
}

/* Sends the formatted command cmd on c and reads its reply; NULL when the
 * connection failed. */
static redisReply *run_on(redisContext *c, const char *cmd, size_t len) {
  void *reply = NULL;
  if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK ||
      redisGetReply(c, &reply) != REDIS_OK)
    return NULL;
  return reply;
}

redisReply *tally_redis_run_sync(redisContext *c, redisContext **aside,
                                 const tally_redis_url_t *u, const char *cmd,
                                 size_t len, uint64_t timeout_ms, char *err,
                                 size_t errlen) {
  redisReply *reply = run_on(c, cmd, len);
  if (reply == NULL)
    snprintf(err, errlen, "Redis at %s: %s", u->display,
             c->errstr[0] ? c->errstr : "connection lost");
  for (int hops = 0; reply != NULL && reply->type == REDIS_REPLY_ERROR &&
                     hops < TALLY_REDIRECT_HOPS;
       hops++) {
    bool ask;
    unsigned slot;
    char host[64];
    int port;
    if (!tally_redirect_parse(reply->str, reply->len, &ask, &slot, host, &port))
      break;
    freeReplyObject(reply);
    reply = NULL;
    redisContext *a = *aside;
    if (a != NULL && !tally_redis_sync_at(a, host, port)) {
      redisFree(a);
      a = *aside = NULL;
    }
    if (a == NULL && (a = *aside = tally_redis_connect_node_sync(
                          u, host, port, timeout_ms, err, errlen)) == NULL)
      return NULL;
    if (ask) {
      redisReply *ok = redisCommand(a, "ASKING");
      bool fine = ok != NULL && ok->type != REDIS_REPLY_ERROR;
      if (ok != NULL)
        freeReplyObject(ok);
      if (!fine) {
        snprintf(err, errlen, "Redis at %s:%d: ASKING refused", host, port);
        return NULL;
      }
    }
    if ((reply = run_on(a, cmd, len)) == NULL)
      snprintf(err, errlen, "Redis at %s:%d: %s", host, port,
               a->errstr[0] ? a->errstr : "connection lost");
  }
  return reply;
}
