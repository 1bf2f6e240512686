/* hiredis on libuv, written for tally: unlike the adapter shipped with
 * hiredis 0.14.1, a poll error (a refused or reset connection) reaches
 * hiredis, and every command and connect has a watchdog. */
#include "redis/redis.h"
#include "config/error.h"
#include "redis/redis_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tally__redis_cmd_s {
  tally__redis_cmd_t *prev, *next;
  tally_redis_t *r;
  uint64_t deadline;
  tally_redis_cb cb;
  void *privdata;
};

/* One per hiredis context: the poll handle must outlive the context until
 * its close callback, so it lives apart from tally_redis_t. */
typedef struct glue_s {
  uv_poll_t poll;
  int events;
  tally_redis_t *r;
  redisAsyncContext *ac;
  redisAsyncContext **slot; /* where r holds ac: &r->ac or &r->sub */
} glue_t;

#define WATCHDOG_TICK_MS 50

static void connect_now(tally_redis_t *r);
static void on_timer(uv_timer_t *t);
void tally__redis_drop_sub(tally_redis_t *r);

int tally_redis_init(uv_loop_t *loop, tally_redis_t *r, const char *url,
                     char *err, size_t errlen) {
  memset(r, 0, sizeof(*r));
  r->loop = loop;
  r->connect_timeout_ms = 2000;
  r->backoff_min_ms = 100;
  r->backoff_max_ms = 5000;
  r->follow_slot = -1;
  int rc = tally_redis_url_parse(&r->addr, url, err, errlen);
  if (rc == 0 && (r->url = strdup(url)) == NULL) {
    tally_redis_url_free(&r->addr);
    snprintf(err, errlen, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc != 0) {
    memset(r, 0, sizeof(*r));
    return rc;
  }
  r->backoff_ms = r->backoff_min_ms;
  uv_timer_init(loop, &r->timer);
  r->timer.data = r;
  return 0;
}

/* Glue hooks for hiredis. */

static void on_poll(uv_poll_t *h, int status, int events) {
  glue_t *g = h->data;
  tally_redis_t *r = g->r;
  redisAsyncContext *ac = g->ac;
  if (status < 0) {
    /* libuv has stopped the handle. Let hiredis read the socket error
     * (a refused connect, a reset), so that it reports the real cause. */
    snprintf(r->why, sizeof(r->why), "connection error: %s",
             uv_strerror(status));
    redisAsyncContext **slot = g->slot;
    if (ac->c.flags & REDIS_CONNECTED)
      redisAsyncHandleRead(ac);
    else
      redisAsyncHandleWrite(ac);
    /* Still alive means hiredis saw nothing: drop it ourselves. */
    if (*slot == ac && slot == &r->ac)
      tally_redis_reset(r, r->why);
    else if (*slot == ac)
      tally__redis_drop_sub(r);
    return;
  }
  redisAsyncContext **slot = g->slot;
  if (events & UV_READABLE)
    redisAsyncHandleRead(ac);
  if ((events & UV_WRITABLE) && *slot == ac)
    redisAsyncHandleWrite(ac);
}

static void glue_update(glue_t *g) {
  if (g->events)
    uv_poll_start(&g->poll, g->events, on_poll);
  else
    uv_poll_stop(&g->poll);
}

static void glue_add_read(void *p) {
  glue_t *g = p;
  g->events |= UV_READABLE;
  glue_update(g);
}

static void glue_del_read(void *p) {
  glue_t *g = p;
  g->events &= ~UV_READABLE;
  glue_update(g);
}

static void glue_add_write(void *p) {
  glue_t *g = p;
  g->events |= UV_WRITABLE;
  glue_update(g);
}

static void glue_del_write(void *p) {
  glue_t *g = p;
  g->events &= ~UV_WRITABLE;
  glue_update(g);
}

static void glue_closed(uv_handle_t *h) {
  free(h->data);
}

static void glue_cleanup(void *p) {
  glue_t *g = p;
  if (*g->slot == g->ac)
    *g->slot = NULL;
  g->ac->ev.data = NULL;
  uv_poll_stop(&g->poll);
  uv_close((uv_handle_t *)&g->poll, glue_closed);
}

static int glue_attach(tally_redis_t *r, redisAsyncContext *ac,
                       redisAsyncContext **slot) {
  glue_t *g = calloc(1, sizeof(*g));
  if (g == NULL)
    return TALLY_ENOMEM;
  if (uv_poll_init(r->loop, &g->poll, ac->c.fd) != 0) {
    free(g);
    return TALLY_EIO;
  }
  g->poll.data = g;
  g->r = r;
  g->ac = ac;
  g->slot = slot;
  ac->ev.data = g;
  ac->ev.addRead = glue_add_read;
  ac->ev.delRead = glue_del_read;
  ac->ev.addWrite = glue_add_write;
  ac->ev.delWrite = glue_del_write;
  ac->ev.cleanup = glue_cleanup;
  return 0;
}

/* Connection life cycle. */

static uint64_t jitter(tally_redis_t *r, uint64_t ms) {
  /* A cheap generator is enough to spread reconnects of many daemons. */
  uint64_t x = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ r->attempts;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return ms / 2 + x % (ms / 2 + 1);
}

/* What r connects to now, for messages: the URL, or with sentinels the
 * sentinel asked or the master found. */
static const char *where(const tally_redis_t *r, char *buf, size_t len) {
  if (r->cluster && r->addr.host != NULL) {
    snprintf(buf, len, "cluster node %s:%d", r->addr.host, r->addr.port);
    return buf;
  }
  if (r->addr.nsentinels == 0)
    return r->addr.display;
  if (r->via_sentinel) {
    const tally_redis_addr_t *s = &r->addr.sentinels[r->sidx];
    snprintf(buf, len, "sentinel %s:%d", s->host, s->port);
  } else {
    snprintf(buf, len, "master %s at %s", r->addr.master, r->master);
  }
  return buf;
}

int tally__redis_auth_argv(const char **argv, const char *user,
                           const char *password) {
  int argc = 0;
  argv[argc++] = "AUTH";
  if (user != NULL)
    argv[argc++] = user;
  argv[argc++] = password;
  return argc;
}

bool tally__redis_says_master(const redisReply *r) {
  return r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
         r->element[0]->type == REDIS_REPLY_STRING &&
         strcmp(r->element[0]->str, "master") == 0;
}

/* With sentinels, a failure moves to the next sentinel at once while some
 * of this round are left; after a round, or a failure of the master's
 * connection, the master is asked for again after the backoff. */
static bool next_sentinel(tally_redis_t *r) {
  if (r->addr.nsentinels == 0)
    return false;
  if (r->via_sentinel) {
    r->sidx = (r->sidx + 1) % r->addr.nsentinels;
    if (++r->sasked < r->addr.nsentinels) {
      r->state = TALLY_REDIS_IDLE;
      uv_timer_start(&r->timer, on_timer, 0, 0);
      return true;
    }
    r->sasked = 0;
  }
  free(r->addr.host);
  r->addr.host = NULL; /* asked again */
  r->sidx = r->sgood;
  return false;
}

/* Points r at a cluster node. */
static int set_addr(tally_redis_t *r, const char *host, int port) {
  char *h = strdup(host);
  if (h == NULL)
    return TALLY_ENOMEM;
  free(r->addr.host);
  free(r->addr.path);
  r->addr.host = h;
  r->addr.path = NULL;
  r->addr.port = port;
  return 0;
}

/* Following a slot: after a failure, the next node the last map named
 * (the master may be gone; any node says where its slots went), unless a
 * MOVED has set the address already. */
static void next_node(tally_redis_t *r) {
  r->hops = 0;
  if (r->hop_set) {
    r->hop_set = false;
    return;
  }
  if (!r->cluster || r->nknown == 0)
    return;
  const tally_slot_addr_t *n = &r->known[r->kidx++ % r->nknown];
  set_addr(r, n->host, n->port);
}

static void schedule_retry(tally_redis_t *r) {
  if (r->state == TALLY_REDIS_CLOSING)
    return;
  next_node(r);
  if (next_sentinel(r))
    return;
  r->state = TALLY_REDIS_IDLE;
  uint64_t delay = jitter(r, r->backoff_ms);
  r->backoff_ms = r->backoff_ms * 2 > r->backoff_max_ms ? r->backoff_max_ms
                                                        : r->backoff_ms * 2;
  uv_timer_start(&r->timer, on_timer, delay, 0);
  r->streak++;
  if (r->on_retry)
    r->on_retry(r, r->why, delay);
}

/* Frees the hiredis context, failing every command in flight with why. */
static void drop_context(tally_redis_t *r) {
  redisAsyncContext *ac = r->ac;
  if (ac == NULL)
    return;
  r->ac = NULL;
  ac->onDisconnect = NULL;
  redisAsyncFree(ac);
}

void tally_redis_reset(tally_redis_t *r, const char *why) {
  if (r->state == TALLY_REDIS_CLOSING)
    return;
  bool was_up = r->state == TALLY_REDIS_UP;
  if (why != r->why)
    snprintf(r->why, sizeof(r->why), "%s", why);
  r->failures++;
  r->state = TALLY_REDIS_IDLE;
  drop_context(r);
  if (was_up && r->on_down)
    r->on_down(r, r->why);
  schedule_retry(r);
}

static void mark_up(tally_redis_t *r) {
  r->state = TALLY_REDIS_UP;
  r->sasked = 0;
  r->ups++;
  if (r->on_up)
    r->on_up(r);
}

void tally_redis_healthy(tally_redis_t *r) {
  r->streak = 0;
  r->backoff_ms = r->backoff_min_ms;
}

/* The login steps after a connect: AUTH when there is a password, then
 * SELECT when the database is not 0, then PING, then up. The PING makes
 * sure the server answers: a server frozen (SIGSTOP, a stalled host)
 * still has its connections accepted by the kernel, and a connection
 * counted up at that would make tallyd ready for a moment. Any answer
 * to it will do (LOADING too: the server is alive). */
enum { STEP_AUTH = 1, STEP_SELECT = 2, STEP_PING = 3 };
/* With sentinels: AUTH to the sentinel if it has a password, then ask it
 * for the master's address; then on the master the steps above, with
 * ROLE in place of PING, which must say "master". */
enum { STEP_SAUTH = 4, STEP_SQUERY = 5, STEP_ROLE = 6 };
/* Following a slot: CLUSTER SLOTS after the login; on a cluster node,
 * up only on the slot's master, else on to it. */
enum { STEP_SLOTS = 7 };

/* The CLUSTER SLOTS reply of a connection following a slot. */
static void slots_reply(tally_redis_t *r, const redisReply *reply) {
  char why[512], buf[200];
  if (reply->type == REDIS_REPLY_ERROR) {
    /* One server: nothing to follow. */
    if (tally_slots_disabled(reply)) {
      r->cluster = false;
      mark_up(r);
      return;
    }
    snprintf(why, sizeof(why), "CLUSTER SLOTS on %s: %s",
             where(r, buf, sizeof(buf)), reply->str);
    tally_redis_reset(r, why);
    return;
  }
  tally_slot_map_t m;
  char err[200];
  if (tally_slot_map_read(reply, &m, err, sizeof(err)) != 0) {
    snprintf(why, sizeof(why), "%s: %s", where(r, buf, sizeof(buf)), err);
    tally_redis_reset(r, why);
    return;
  }
  r->cluster = true;
  size_t n = tally_slot_nodes(reply, r->known, TALLY_REDIS_MAX_KNOWN);
  if (n > 0)
    r->nknown = n;
  const tally_slot_range_t *range =
      tally_slot_map_find(&m, (unsigned)r->follow_slot);
  char host[64] = "";
  int port = 0;
  if (range != NULL) {
    snprintf(host, sizeof(host), "%s",
             range->host[0] ? range->host
             : r->addr.host ? r->addr.host
                            : "");
    port = range->port;
  }
  tally_slot_map_free(&m);
  if (host[0] == '\0') {
    snprintf(why, sizeof(why),
             "no master of the cluster serves slot %d yet "
             "(%s)",
             r->follow_slot, where(r, buf, sizeof(buf)));
    tally_redis_reset(r, why);
    return;
  }
  if (r->addr.path == NULL && r->addr.host != NULL &&
      strcmp(host, r->addr.host) == 0 && port == r->addr.port) {
    char master[64];
    snprintf(master, sizeof(master), "%s:%d", host, port);
    if (r->master[0] != '\0' && strcmp(master, r->master) != 0)
      r->failovers++;
    snprintf(r->master, sizeof(r->master), "%s", master);
    mark_up(r);
    return;
  }
  if (++r->hops > 8 || set_addr(r, host, port) != 0) {
    snprintf(why, sizeof(why),
             "slot %d: the cluster's nodes do not agree "
             "on its master (%s)",
             r->follow_slot, where(r, buf, sizeof(buf)));
    tally_redis_reset(r, why);
    return;
  }
  drop_context(r);
  connect_now(r);
}

/* The sentinel answered the master's address: connect to it at once. */
static void found_master(tally_redis_t *r, const redisReply *reply) {
  char why[512], buf[200];
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[0]->type != REDIS_REPLY_STRING ||
      reply->element[1]->type != REDIS_REPLY_STRING) {
    snprintf(why, sizeof(why), "%s does not know master %s: %s",
             where(r, buf, sizeof(buf)), r->addr.master,
             reply->type == REDIS_REPLY_ERROR ? reply->str : "no address");
    tally_redis_reset(r, why);
    return;
  }
  long port = strtol(reply->element[1]->str, NULL, 10);
  char *host = strdup(reply->element[0]->str);
  if (host == NULL || port <= 0 || port > 65535) {
    free(host);
    tally_redis_reset(r, "a sentinel gave a master address that is not one");
    return;
  }
  char master[64];
  snprintf(master, sizeof(master), "%s:%ld", host, port);
  if (r->master[0] != '\0' && strcmp(master, r->master) != 0)
    r->failovers++;
  snprintf(r->master, sizeof(r->master), "%s", master);
  free(r->addr.host);
  r->addr.host = host;
  r->addr.port = (int)port;
  r->sgood = r->sidx;
  r->sasked = 0;
  drop_context(r);
  r->via_sentinel = false;
  connect_now(r);
}

static void next_step(tally_redis_t *r, int done);

static void on_step(tally_redis_t *r, redisReply *reply, void *privdata) {
  int step = (int)(intptr_t)privdata;
  char why[512], buf[200];
  if (reply == NULL)
    return; /* the drop has been handled */
  if (step == STEP_PING) {
    mark_up(r);
    return;
  }
  if (step == STEP_SQUERY) {
    found_master(r, reply);
    return;
  }
  if (step == STEP_SLOTS) {
    slots_reply(r, reply);
    return;
  }
  if (step == STEP_ROLE) {
    const redisReply *role =
        reply->type == REDIS_REPLY_ARRAY && reply->elements > 0
            ? reply->element[0]
            : NULL;
    if (tally__redis_says_master(reply)) {
      mark_up(r);
      return;
    }
    snprintf(why, sizeof(why),
             "%s is not a master (ROLE: %s): asking the sentinels again",
             where(r, buf, sizeof(buf)),
             reply->type == REDIS_REPLY_ERROR                   ? reply->str
             : role != NULL && role->type == REDIS_REPLY_STRING ? role->str
                                                                : "no role");
    tally_redis_reset(r, why);
    return;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    if (step == STEP_AUTH || step == STEP_SAUTH)
      snprintf(why, sizeof(why), "AUTH as user %s on %s failed: %s",
               step == STEP_SAUTH
                   ? (r->addr.sentinel_user ? r->addr.sentinel_user : "default")
                   : (r->addr.user ? r->addr.user : "default"),
               where(r, buf, sizeof(buf)), reply->str);
    else
      snprintf(why, sizeof(why), "SELECT %d on %s failed: %s", r->addr.db,
               where(r, buf, sizeof(buf)), reply->str);
    tally_redis_reset(r, why);
    return;
  }
  next_step(r, step);
}

/* Sends the step after done (0: none yet), or marks r up. */
static void next_step(tally_redis_t *r, int done) {
  const char *argv[3];
  size_t lens[3];
  int argc = 0, step = 0;
  char db[16];
  if (r->via_sentinel && done < STEP_SAUTH &&
      r->addr.sentinel_password != NULL) {
    step = STEP_SAUTH;
    argc = tally__redis_auth_argv(argv, r->addr.sentinel_user,
                                  r->addr.sentinel_password);
  } else if (r->via_sentinel) {
    step = STEP_SQUERY;
    argv[argc++] = "SENTINEL";
    argv[argc++] = "get-master-addr-by-name";
    argv[argc++] = r->addr.master;
  } else if (done < STEP_AUTH && r->addr.password != NULL) {
    step = STEP_AUTH;
    argc = tally__redis_auth_argv(argv, r->addr.user, r->addr.password);
  } else if (done < STEP_SELECT && r->addr.db != 0) {
    step = STEP_SELECT;
    snprintf(db, sizeof(db), "%d", r->addr.db);
    argv[argc++] = "SELECT";
    argv[argc++] = db;
  } else if (r->follow_slot >= 0 && r->addr.nsentinels == 0) {
    step = STEP_SLOTS;
    argv[argc++] = "CLUSTER";
    argv[argc++] = "SLOTS";
  } else if (r->addr.nsentinels > 0) {
    step = STEP_ROLE;
    argv[argc++] = "ROLE";
  } else {
    step = STEP_PING;
    argv[argc++] = "PING";
  }
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  r->state = TALLY_REDIS_UP; /* lets the command through */
  tally_redis_command(r, r->connect_timeout_ms, on_step, (void *)(intptr_t)step,
                      argc, argv, lens);
  r->state = TALLY_REDIS_CONNECTING;
}

static void on_connect(const redisAsyncContext *ac, int status) {
  tally_redis_t *r = ac->data;
  if (status != REDIS_OK) {
    /* hiredis frees the context when this returns. */
    char buf[200];
    snprintf(r->why, sizeof(r->why), "cannot connect to %s: %s",
             where(r, buf, sizeof(buf)), ac->errstr);
    r->failures++;
    if (r->ac == ac)
      r->ac = NULL;
    schedule_retry(r);
    return;
  }
  next_step(r, 0);
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
  tally_redis_t *r = ac->data;
  (void)status;
  if (r->ac == ac)
    r->ac = NULL;
  if (r->state == TALLY_REDIS_CLOSING)
    return;
  snprintf(r->why, sizeof(r->why), "connection lost: %s",
           ac->errstr[0] ? ac->errstr : "closed by the server");
  bool was_up = r->state == TALLY_REDIS_UP;
  r->failures++;
  r->state = TALLY_REDIS_IDLE;
  if (was_up && r->on_down)
    r->on_down(r, r->why);
  schedule_retry(r);
}

static void connect_now(tally_redis_t *r) {
  r->attempts++;
  r->state = TALLY_REDIS_CONNECTING;
  /* With sentinels and no master known: a sentinel first. */
  r->via_sentinel = r->addr.nsentinels > 0 && r->addr.host == NULL;
  const tally_redis_addr_t *s = &r->addr.sentinels[r->sidx];
  redisAsyncContext *ac = r->via_sentinel ? redisAsyncConnect(s->host, s->port)
                          : r->addr.path
                              ? redisAsyncConnectUnix(r->addr.path)
                              : redisAsyncConnect(r->addr.host, r->addr.port);
  if (ac == NULL || ac->err) {
    char buf[200];
    snprintf(r->why, sizeof(r->why), "cannot connect to %s: %s",
             where(r, buf, sizeof(buf)), ac ? ac->errstr : "out of memory");
    if (ac != NULL)
      redisAsyncFree(ac);
    r->failures++;
    schedule_retry(r);
    return;
  }
  if (glue_attach(r, ac, &r->ac) != 0) {
    snprintf(r->why, sizeof(r->why), "cannot watch the Redis socket");
    redisAsyncFree(ac);
    r->failures++;
    schedule_retry(r);
    return;
  }
  ac->data = r;
  r->ac = ac;
  redisAsyncSetConnectCallback(ac, on_connect);
  redisAsyncSetDisconnectCallback(ac, on_disconnect);
  /* hiredis 0.14 learns that a connect finished from the first write
   * event, so ask for one. */
  glue_add_write(ac->ev.data);
  r->connect_deadline = uv_now(r->loop) + r->connect_timeout_ms;
  uv_timer_start(&r->timer, on_timer, WATCHDOG_TICK_MS, WATCHDOG_TICK_MS);
}

void tally_redis_start(tally_redis_t *r) {
  connect_now(r);
}

/* The +switch-master subscription: a second connection, to the sentinel
 * that answered last. A message for our master that names another
 * address than the one followed drops the connection, which asks the
 * sentinels again. Lost, it is started again a second later. */

void tally__redis_drop_sub(tally_redis_t *r) {
  redisAsyncContext *sub = r->sub;
  if (sub == NULL)
    return;
  r->sub = NULL;
  sub->onDisconnect = NULL;
  redisAsyncFree(sub);
  r->sub_retry_at = uv_now(r->loop) + 1000;
}

static void on_switch(redisAsyncContext *ac, void *reply, void *privdata) {
  tally_redis_t *r = privdata;
  const redisReply *m = reply;
  (void)ac;
  if (m == NULL || m->type != REDIS_REPLY_ARRAY || m->elements != 3 ||
      m->element[0]->type != REDIS_REPLY_STRING ||
      strcmp(m->element[0]->str, "message") != 0 ||
      m->element[2]->type != REDIS_REPLY_STRING)
    return;
  /* "NAME OLD-IP OLD-PORT NEW-IP NEW-PORT" */
  char name[256], oip[64], oport[16], nip[64], nport[16];
  if (sscanf(m->element[2]->str, "%255s %63s %15s %63s %15s", name, oip, oport,
             nip, nport) != 5 ||
      strcmp(name, r->addr.master) != 0)
    return;
  char to[96];
  snprintf(to, sizeof(to), "%s:%s", nip, nport);
  if (strcmp(to, r->master) == 0 || r->state == TALLY_REDIS_CLOSING ||
      r->via_sentinel)
    return;
  char why[256];
  snprintf(why, sizeof(why),
           "the sentinels moved master %s from %s to %s (+switch-master)",
           r->addr.master, r->master, to);
  tally_redis_reset(r, why);
}

static void on_sub_connect(const redisAsyncContext *ac, int status) {
  tally_redis_t *r = ac->data;
  if (status != REDIS_OK && r->sub == ac) {
    r->sub = NULL; /* hiredis frees it */
    r->sub_retry_at = uv_now(r->loop) + 1000;
  }
}

static void on_sub_disconnect(const redisAsyncContext *ac, int status) {
  tally_redis_t *r = ac->data;
  (void)status;
  if (r->sub == ac) {
    r->sub = NULL;
    r->sub_retry_at = uv_now(r->loop) + 1000;
  }
}

static void start_sub(tally_redis_t *r) {
  const tally_redis_addr_t *s = &r->addr.sentinels[r->sgood];
  redisAsyncContext *ac = redisAsyncConnect(s->host, s->port);
  if (ac == NULL || ac->err || glue_attach(r, ac, &r->sub) != 0) {
    if (ac != NULL)
      redisAsyncFree(ac);
    r->sub_retry_at = uv_now(r->loop) + 1000;
    return;
  }
  ac->data = r;
  r->sub = ac;
  redisAsyncSetConnectCallback(ac, on_sub_connect);
  redisAsyncSetDisconnectCallback(ac, on_sub_disconnect);
  glue_add_write(ac->ev.data);
  if (r->addr.sentinel_password != NULL) {
    const char *argv[3];
    int argc = tally__redis_auth_argv(argv, r->addr.sentinel_user,
                                      r->addr.sentinel_password);
    redisAsyncCommandArgv(ac, NULL, NULL, argc, argv, NULL);
  }
  redisAsyncCommand(ac, on_switch, r, "SUBSCRIBE +switch-master");
}

/* In IDLE the timer is the backoff; otherwise it is the watchdog. */
static void on_timer(uv_timer_t *t) {
  tally_redis_t *r = t->data;
  uint64_t now = uv_now(r->loop);
  char why[256];
  switch (r->state) {
  case TALLY_REDIS_IDLE:
    connect_now(r);
    return;
  case TALLY_REDIS_CONNECTING:
    if (now >= r->connect_deadline) {
      snprintf(why, sizeof(why), "connect timed out after %llu ms",
               (unsigned long long)r->connect_timeout_ms);
      tally_redis_reset(r, why);
      return;
    }
    break;
  default:
    break;
  }
  if (r->state == TALLY_REDIS_UP && r->addr.nsentinels > 0 && r->sub == NULL &&
      now >= r->sub_retry_at)
    start_sub(r);
  for (tally__redis_cmd_t *c = r->cmds; c != NULL; c = c->next) {
    if (now >= c->deadline) {
      snprintf(why, sizeof(why),
               "a command got no reply in time: Redis is not responding");
      tally_redis_reset(r, why);
      return;
    }
  }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata) {
  tally__redis_cmd_t *c = privdata;
  tally_redis_t *r = c->r;
  (void)ac;
  if (c->prev)
    c->prev->next = c->next;
  else
    r->cmds = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    r->cmds_tail = c->prev;
  /* A master demoted under us (its writes refused): ask the sentinels
   * again once the caller has seen the refusal. */
  const redisReply *x = reply;
  bool demoted = r->addr.nsentinels > 0 && x != NULL &&
                 x->type == REDIS_REPLY_ERROR &&
                 strncmp(x->str, "READONLY", 8) == 0;
  /* A slot followed has moved: on to its new master, once the caller has
   * seen the refusal. */
  bool ask = false, moved = false;
  unsigned slot = 0;
  char host[64];
  int port = 0;
  if (r->cluster && x != NULL && x->type == REDIS_REPLY_ERROR)
    moved = tally_redirect_parse(x->str, x->len, &ask, &slot, host, &port) &&
            !ask && (int)slot == r->follow_slot;
  c->cb(r, reply, c->privdata);
  free(c);
  if (moved && r->ac == ac && r->state == TALLY_REDIS_UP &&
      set_addr(r, host, port) == 0) {
    char why[160];
    snprintf(why, sizeof(why), "slot %u moved to %s:%d", slot, host, port);
    r->hop_set = true;
    tally_redis_reset(r, why);
    return;
  }
  if (demoted && r->ac == ac && r->state == TALLY_REDIS_UP)
    tally_redis_reset(r, "the master turned replica (READONLY): asking the "
                         "sentinels again");
}

int tally_redis_command(tally_redis_t *r, uint64_t timeout_ms,
                        tally_redis_cb cb, void *privdata, int argc,
                        const char **argv, const size_t *argvlen) {
  if (r->state != TALLY_REDIS_UP || r->ac == NULL)
    return TALLY_EIO;
  tally__redis_cmd_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return TALLY_ENOMEM;
  c->r = r;
  c->cb = cb;
  c->privdata = privdata;
  c->deadline = uv_now(r->loop) + timeout_ms;
  if (redisAsyncCommandArgv(r->ac, on_reply, c, argc, argv, argvlen) !=
      REDIS_OK) {
    free(c);
    return TALLY_EIO;
  }
  c->prev = r->cmds_tail;
  if (r->cmds_tail)
    r->cmds_tail->next = c;
  else
    r->cmds = c;
  r->cmds_tail = c;
  return 0;
}

/* A transaction in flight: MULTI, the queued commands and EXEC each hold
 * a reference. A queued command refused (an OOM when memory is full)
 * makes EXEC fail with EXECABORT; the caller is given the refusal
 * instead, which names the cause. */
typedef struct tx_s {
  unsigned refs;
  tally_redis_cb cb;
  void *privdata;
  char *err; /* the first refusal of a queued command, or NULL */
  size_t errlen;
} tx_t;

static void tx_unref(tx_t *t) {
  if (--t->refs > 0)
    return;
  free(t->err);
  free(t);
}

static void on_tx_part(tally_redis_t *r, redisReply *reply, void *priv) {
  tx_t *t = priv;
  (void)r;
  if (reply != NULL && reply->type == REDIS_REPLY_ERROR && t->err == NULL) {
    t->err = malloc(reply->len + 1);
    if (t->err != NULL) {
      memcpy(t->err, reply->str, reply->len);
      t->err[reply->len] = '\0';
      t->errlen = reply->len;
    }
  }
  tx_unref(t);
}

static void on_tx_exec(tally_redis_t *r, redisReply *reply, void *priv) {
  tx_t *t = priv;
  if (reply != NULL && reply->type == REDIS_REPLY_ERROR && t->err != NULL) {
    redisReply refused = {
        .type = REDIS_REPLY_ERROR, .str = t->err, .len = t->errlen};
    t->cb(r, &refused, t->privdata);
  } else {
    t->cb(r, reply, t->privdata);
  }
  tx_unref(t);
}

int tally_redis_transaction(tally_redis_t *r, uint64_t timeout_ms,
                            tally_redis_cb cb, void *privdata, unsigned n,
                            const int *argc, const char *const *const *argv,
                            const size_t *const *argvlen) {
  tx_t *t = calloc(1, sizeof(*t));
  if (t == NULL)
    return TALLY_ENOMEM;
  t->cb = cb;
  t->privdata = privdata;
  t->refs = 1; /* the sender's, until every part is sent */
  const char *multi[] = {"MULTI"}, *exec[] = {"EXEC"};
  const size_t multi_len[] = {5}, exec_len[] = {4};
  int rc = 0;
  for (unsigned i = 0; rc == 0 && i <= n + 1; i++) {
    t->refs++;
    if (i == 0)
      rc = tally_redis_command(r, timeout_ms, on_tx_part, t, 1, multi,
                               multi_len);
    else if (i <= n)
      rc = tally_redis_command(r, timeout_ms, on_tx_part, t, argc[i - 1],
                               (const char **)argv[i - 1], argvlen[i - 1]);
    else
      rc = tally_redis_command(r, timeout_ms, on_tx_exec, t, 1, exec, exec_len);
    if (rc != 0) {
      t->refs--;
      /* With MULTI open on the connection only a new one undoes it; what
       * was sent fails with the reset. cb is never called. */
      if (i > 0)
        tally_redis_reset(r, "a transaction could not be sent");
    }
  }
  tx_unref(t);
  return rc;
}

static void on_timer_closed(uv_handle_t *h) {
  tally_redis_t *r = h->data;
  tally_redis_url_free(&r->addr);
  free(r->url);
  r->url = NULL;
  if (r->close_cb)
    r->close_cb(r);
}

void tally_redis_close(tally_redis_t *r, void (*close_cb)(tally_redis_t *r)) {
  r->close_cb = close_cb;
  r->state = TALLY_REDIS_CLOSING;
  snprintf(r->why, sizeof(r->why), "connection closed");
  drop_context(r);
  tally__redis_drop_sub(r);
  uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}
