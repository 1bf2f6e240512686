/* The cluster layer (redis/cluster.c) on its own, against real servers:
 * one server passed through; three masters, each key on the master of
 * its slot; MOVED after a slot migration, ASK during one, a transaction
 * refused (and nothing written) while its slot migrates and done after;
 * a master SIGKILLed and its replica followed. */
#include "cluster_fixture.h"
#include "redis/cluster.h"
#include "redis/slots.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What one reply was, copied out of its callback. */
typedef struct got_s {
  bool done;
  int type; /* 0: no reply */
  long long integer;
  char str[256];
  char why[256];
} got_t;

static void on_got(tally_cluster_t *k, redisReply *reply, void *privdata) {
  got_t *g = privdata;
  g->done = true;
  if (reply == NULL) {
    snprintf(g->why, sizeof(g->why), "%s", k->why);
    return;
  }
  g->type = reply->type;
  g->integer = reply->integer;
  if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0)
    reply = reply->element[reply->elements - 1];
  if (reply->str != NULL)
    snprintf(g->str, sizeof(g->str), "%.*s", (int)reply->len, reply->str);
}

static uv_loop_t loop;
static tally_cluster_t cl;
static tk_cluster_t kc;
static bool have_cluster, have_layer;

static void run_until(bool *flag, int timeout_ms) {
  uint64_t end = uv_now(&loop) + (uint64_t)timeout_ms;
  while (!*flag && uv_now(&loop) < end)
    uv_run(&loop, UV_RUN_ONCE);
}

/* A command through the layer, its reply waited for. */
static got_t call(const char *key, uint64_t timeout_ms, int argc,
                  const char **argv) {
  got_t g = {0};
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  cr_assert_eq(tally_cluster_command(&cl, key, key ? strlen(key) : 0,
                                     timeout_ms, on_got, &g, argc, argv, lens),
               0);
  run_until(&g.done, (int)timeout_ms + 2000);
  cr_assert(g.done, "no callback");
  return g;
}

static got_t call2(const char *a, const char *b, const char *c) {
  const char *argv[] = {a, b, c};
  return call(b, 3000, c ? 3 : 2, argv);
}

/* MULTI, GET stay, SET fresh v, EXEC on the slot of tag t. */
static got_t tx(const char *stay, const char *fresh, uint64_t timeout_ms) {
  const char *get[] = {"GET", stay}, *set[] = {"SET", fresh, "v"};
  size_t get_len[] = {3, strlen(stay)}, set_len[] = {3, strlen(fresh), 1};
  const char *const *argv[] = {get, set};
  const size_t *lens[] = {get_len, set_len};
  int argc[] = {2, 3};
  got_t g = {0};
  cr_assert_eq(tally_cluster_transaction(&cl, stay, strlen(stay), timeout_ms,
                                         on_got, &g, 2, argc, argv, lens),
               0);
  run_until(&g.done, (int)timeout_ms + 2000);
  cr_assert(g.done);
  return g;
}

static void start_layer(const char *url) {
  char err[256];
  cr_assert_eq(tally_cluster_init(&loop, &cl, url, err, sizeof(err)), 0, "%s",
               err);
  cl.refresh_every_ms = 500;
  tally_cluster_start(&cl);
  have_layer = true;
  bool ready = false;
  char why[256] = "";
  /* The layer's own timer wakes the loop every few ms. */
  uint64_t end = uv_now(&loop) + 20000;
  while (!ready && uv_now(&loop) < end) {
    uv_run(&loop, UV_RUN_ONCE);
    ready = tally_cluster_ready(&cl, why, sizeof(why));
  }
  cr_assert(ready, "the layer never became ready: %s", why);
}

static void setup(void) {
  uv_loop_init(&loop);
  have_cluster = have_layer = false;
}

static void closed(tally_cluster_t *k) {
  (void)k;
}

static void teardown(void) {
  if (have_layer) {
    tally_cluster_close(&cl, closed);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  cr_expect_eq(uv_loop_close(&loop), 0, "a handle left open");
  if (have_cluster)
    tk_stop(&kc);
}

TestSuite(cluster, .init = setup, .fini = teardown, .timeout = 180);

Test(cluster, passes_one_server_through) {
  tr_redis_t t;
  cr_assert_eq(tr_redis_start(&t, 0, false), 0);
  start_layer(t.url);
  cr_expect_eq(cl.mode, TALLY_CLUSTER_SINGLE);
  cr_expect_eq(cl.masters, 1);
  cr_expect_eq(call2("SET", "a", "1").type, REDIS_REPLY_STATUS);
  got_t g = call2("GET", "a", NULL);
  cr_expect_str_eq(g.str, "1");
  g = tx("a", "b", 2000);
  cr_expect_eq(g.type, REDIS_REPLY_ARRAY);
  cr_expect_str_eq(g.str, "OK");
  cr_expect_eq(tr_redis_int(&t, "EXISTS b"), 1);
  tally_cluster_close(&cl, closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  have_layer = false;
  tr_redis_stop(&t);
}

/* A user not allowed CLUSTER (NOPERM) cannot be on a cluster either: the
 * layer takes the server as one server, as every connection does. */
Test(cluster, a_user_without_cluster_rights_is_on_one_server) {
  tr_redis_t t;
  cr_assert_eq(tr_redis_start(&t, 0, false), 0);
  redisContext *c = redisConnectUnix(t.sock);
  cr_assert(c != NULL && !c->err);
  redisReply *r =
      redisCommand(c, "ACL SETUSER limited on >pw ~* &* +@all -cluster");
  cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS, "ACL SETUSER");
  freeReplyObject(r);
  redisFree(c);
  char url[400];
  snprintf(url, sizeof(url), "unix://limited:pw@%s", t.sock);
  start_layer(url);
  cr_expect_eq(cl.mode, TALLY_CLUSTER_SINGLE);
  cr_expect_eq(call2("SET", "a", "1").type, REDIS_REPLY_STATUS);
  tally_cluster_close(&cl, closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  have_layer = false;
  tr_redis_stop(&t);
}

/* Three masters: each key lands on the master its slot names, read back
 * from that master directly; no redirection needed once the map is
 * read. */
Test(cluster, sends_each_key_to_its_master) {
  cr_assert_eq(tk_start(&kc, 3, 0), 0);
  have_cluster = true;
  start_layer(kc.url);
  cr_expect_eq(cl.mode, TALLY_CLUSTER_ON);
  cr_expect_eq(cl.masters, 3);
  char key[64], val[64];
  for (int i = 0; i < 200; i++) {
    snprintf(key, sizeof(key), "tally:{q%d}:jobs", i);
    snprintf(val, sizeof(val), "v%d", i);
    got_t g = call2("SET", key, val);
    cr_assert_eq(g.type, REDIS_REPLY_STATUS, "%s: %s%s", key, g.str, g.why);
  }
  cr_expect_eq(cl.moved, 0);
  for (int i = 0; i < 200; i++) {
    snprintf(key, sizeof(key), "tally:{q%d}:jobs", i);
    int owner = tk_owner(&kc, tally_key_slot(key, strlen(key)));
    cr_assert(owner >= 0);
    redisContext *c = tk_connect(&kc, owner);
    redisReply *r = redisCommand(c, "GET %s", key);
    snprintf(val, sizeof(val), "v%d", i);
    cr_expect(r != NULL && r->type == REDIS_REPLY_STRING &&
                  strcmp(r->str, val) == 0,
              "%s is not on node %d", key, owner);
    freeReplyObject(r);
    redisFree(c);
  }
  /* A transaction on one slot. */
  got_t g = tx("tally:{q1}:jobs", "tally:{q1}:new", 2000);
  cr_expect_eq(g.type, REDIS_REPLY_ARRAY);
  cr_expect_str_eq(g.str, "OK");
}

/* A slot migrated key by key: a key already moved is read through ASK, one
 * not yet moved from the old master; a transaction on the slot is refused
 * while it migrates (nothing written anywhere) and goes through once the
 * slot has its new master, found by MOVED. */
Test(cluster, follows_a_slot_migration) {
  cr_assert_eq(tk_start(&kc, 3, 0), 0);
  have_cluster = true;
  start_layer(kc.url);
  const char *a = "tally:{mig}:a", *b = "tally:{mig}:b";
  unsigned slot = tally_key_slot(a, strlen(a));
  int from = tk_owner(&kc, slot), to = (from + 1) % 3;
  cr_expect_eq(call2("SET", a, "1").type, REDIS_REPLY_STATUS);
  cr_expect_eq(call2("SET", b, "2").type, REDIS_REPLY_STATUS);
  cr_assert_eq(tk_migration_begin(&kc, slot, from, to), 0);
  /* Move a alone. */
  redisContext *src = tk_connect(&kc, from);
  redisReply *r =
      redisCommand(src, "MIGRATE 127.0.0.1 %d %s 0 5000", kc.nodes[to].port, a);
  cr_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
  freeReplyObject(r);
  redisFree(src);
  got_t g = call2("GET", a, NULL);
  cr_expect_str_eq(g.str, "1", "%s%s", g.str, g.why);
  cr_expect_geq(cl.asked, 1);
  cr_expect_str_eq(call2("GET", b, NULL).str, "2");
  /* Refused while the slot migrates. */
  const char *fresh = "tally:{mig}:fresh";
  g = tx(b, fresh, 400);
  cr_expect(g.type == 0 || g.type == REDIS_REPLY_ERROR,
            "a transaction ran during the migration");
  cr_expect_geq(cl.retried, 1);
  for (int i = 0; i < kc.n; i++) {
    redisContext *c = tk_connect(&kc, i);
    redisReply *e = redisCommand(c, "EXISTS %s", fresh);
    cr_expect(e != NULL && e->integer == 0, "node %d has %s", i, fresh);
    freeReplyObject(e);
    redisFree(c);
  }
  cr_assert_geq(tk_migration_move(&kc, slot, from, to, 100), 1);
  cr_assert_eq(tk_migration_end(&kc, slot, to), 0);
  g = tx(b, fresh, 3000);
  cr_expect_eq(g.type, REDIS_REPLY_ARRAY, "%s%s", g.str, g.why);
  cr_expect_str_eq(g.str, "OK");
  cr_expect_geq(cl.moved, 1);
  redisContext *c = tk_connect(&kc, to);
  r = redisCommand(c, "EXISTS %s", fresh);
  cr_expect(r != NULL && r->integer == 1, "%s is not on the new master", fresh);
  freeReplyObject(r);
  redisFree(c);
}

/* A master SIGKILLed: its replica takes over, and the layer, reading the
 * map again, sends the slot's commands there without being told. */
Test(cluster, follows_a_failover) {
  cr_assert_eq(tk_start(&kc, 3, 1), 0);
  have_cluster = true;
  start_layer(kc.url);
  const char *key = "tally:{fail}:jobs";
  unsigned slot = tally_key_slot(key, strlen(key));
  cr_expect_eq(call2("SET", key, "kept").type, REDIS_REPLY_STATUS);
  int old = tk_owner(&kc, slot);
  cr_assert(old >= 0);
  redisContext *c = tk_connect(&kc, old);
  redisReply *w = redisCommand(c, "WAIT 1 5000");
  cr_assert(w != NULL && w->integer == 1);
  freeReplyObject(w);
  redisFree(c);
  uint64_t maps = cl.maps;
  tk_kill(&kc, old);
  /* Commands fail (or wait) until the replica is promoted. */
  got_t g = {0};
  uint64_t end = uv_now(&loop) + 40000;
  while (uv_now(&loop) < end) {
    g = call2("GET", key, NULL);
    if (g.type == REDIS_REPLY_STRING)
      break;
    /* Refused at once while the replica is not promoted yet: wait. */
    bool never = false;
    run_until(&never, 200);
  }
  cr_expect_str_eq(g.str, "kept", "%s", g.why);
  cr_expect_gt(cl.maps, maps, "the map was not read again");
  int now = tk_owner(&kc, slot);
  cr_expect(now >= 0 && now != old);
  char why[256];
  bool ready = false;
  for (int i = 0; i < 500 && !ready; i++) {
    uv_run(&loop, UV_RUN_ONCE);
    ready = tally_cluster_ready(&cl, why, sizeof(why));
  }
  cr_expect(ready, "%s", why);
  cr_expect_eq(cl.masters, 3);
}

/* One tally_redis_t following a slot (what tallyd's connections for a
 * queue do): given a node that does not serve the slot, it connects to
 * the one that does; after the slot migrates, a MOVED takes it to the new
 * master; after that master is SIGKILLed, to its promoted replica. */
static void on_plain(tally_redis_t *r, redisReply *reply, void *privdata) {
  got_t *g = privdata;
  g->done = true;
  if (reply == NULL) {
    snprintf(g->why, sizeof(g->why), "%s", r->why);
    return;
  }
  g->type = reply->type;
  if (reply->str != NULL)
    snprintf(g->str, sizeof(g->str), "%.*s", (int)reply->len, reply->str);
}

static got_t plain(tally_redis_t *r, const char *a, const char *b,
                   const char *c) {
  const char *argv[] = {a, b, c};
  size_t lens[] = {strlen(a), strlen(b), c ? strlen(c) : 0};
  got_t g = {0};
  if (tally_redis_command(r, 3000, on_plain, &g, c ? 3 : 2, argv, lens) != 0)
    return g;
  run_until(&g.done, 5000);
  return g;
}

/* Runs the loop until r is up on the master at port, or timeout_ms. */
static bool up_on(tally_redis_t *r, int port, int timeout_ms) {
  char want[64];
  snprintf(want, sizeof(want), "127.0.0.1:%d", port);
  uint64_t end = uv_now(&loop) + (uint64_t)timeout_ms;
  while (uv_now(&loop) < end) {
    if (r->state == TALLY_REDIS_UP && strcmp(r->master, want) == 0)
      return true;
    uv_run(&loop, UV_RUN_ONCE);
  }
  return false;
}

static void plain_closed(tally_redis_t *r) {
  (void)r;
}

Test(cluster, a_connection_follows_its_slot) {
  cr_assert_eq(tk_start(&kc, 3, 1), 0);
  have_cluster = true;
  const char *key = "tally:{follow}:jobs";
  unsigned slot = tally_key_slot(key, strlen(key));
  int owner = tk_owner(&kc, slot), seed = (owner + 1) % 3;
  char url[64], err[256];
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", kc.nodes[seed].port);
  tally_redis_t r;
  cr_assert_eq(tally_redis_init(&loop, &r, url, err, sizeof(err)), 0, "%s",
               err);
  r.follow_slot = (int)slot;
  r.backoff_max_ms = 500;
  tally_redis_start(&r);
  cr_assert(up_on(&r, kc.nodes[owner].port, 10000), "not up on %d: %s",
            kc.nodes[owner].port, r.why);
  cr_expect(r.cluster);
  cr_expect_eq(plain(&r, "SET", key, "1").type, REDIS_REPLY_STATUS);

  /* The slot migrates: the next command is refused with MOVED, and the
   * connection goes to the new master. */
  int to = seed;
  cr_assert_eq(tk_migration_begin(&kc, slot, owner, to), 0);
  cr_assert_eq(tk_migration_move(&kc, slot, owner, to, 100), 1);
  cr_assert_eq(tk_migration_end(&kc, slot, to), 0);
  got_t g = plain(&r, "GET", key, NULL);
  cr_expect_eq(g.type, REDIS_REPLY_ERROR);
  cr_expect(strncmp(g.str, "MOVED", 5) == 0, "%s", g.str);
  cr_assert(up_on(&r, kc.nodes[to].port, 10000), "did not follow the move: %s",
            r.why);
  cr_expect_str_eq(plain(&r, "GET", key, NULL).str, "1");
  cr_expect_eq(r.failovers, 1);

  /* Its master dies: the replica taken over is found through the other
   * nodes of the map. */
  redisContext *c = tk_connect(&kc, to);
  redisReply *w = redisCommand(c, "WAIT 1 5000");
  cr_assert(w != NULL && w->integer == 1, "no replica of node %d", to);
  freeReplyObject(w);
  redisFree(c);
  tk_kill(&kc, to);
  int now = tk_wait_owner_change(&kc, slot, to, 30000);
  cr_assert(now >= 0, "no replica took over");
  cr_assert(up_on(&r, kc.nodes[now].port, 20000),
            "did not follow the failover to %d: %s", kc.nodes[now].port, r.why);
  cr_expect_str_eq(plain(&r, "GET", key, NULL).str, "1");
  cr_expect_eq(r.failovers, 2);
  tally_redis_close(&r, plain_closed);
  uv_run(&loop, UV_RUN_DEFAULT);
}
