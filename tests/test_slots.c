/* Redis Cluster's key slots (redis/slots.c) against a real redis-server in
 * cluster mode (CLUSTER KEYSLOT), over random keys full of braces, and the
 * CRC16 check value. */
#include "cluster_fixture.h"
#include "redis/slots.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

Test(slots, crc16_is_xmodem) {
  cr_expect_eq(tally_crc16("123456789", 9), 0x31C3);
  cr_expect_eq(tally_crc16("", 0), 0);
}

Test(slots, hash_tags_as_the_specification_says) {
  unsigned a = tally_key_slot("{user1000}.following", 20);
  cr_expect_eq(a, tally_key_slot("{user1000}.followers", 20));
  cr_expect_eq(a, tally_key_slot("user1000", 8));
  /* Only the first {...}; an empty one hashes the whole key. */
  cr_expect_eq(tally_key_slot("foo{}{bar}", 10),
               tally_crc16("foo{}{bar}", 10) % TALLY_CLUSTER_SLOTS);
  cr_expect_eq(tally_key_slot("foo{{bar}}zap", 13),
               tally_crc16("{bar", 4) % TALLY_CLUSTER_SLOTS);
  cr_expect_eq(tally_key_slot("foo{bar}{zap}", 13), tally_key_slot("bar", 3));
  const char *same[] = {"tally:{c1}:ranking", "tally:{c1}:tasks", "{c1}"};
  unsigned slot;
  cr_expect(tally_keys_one_slot(same, 3, &slot));
  cr_expect_eq(slot, tally_key_slot("c1", 2));
  const char *apart[] = {"tally:{c1}:ranking", "tally:jobs"};
  cr_expect_not(tally_keys_one_slot(apart, 2, &slot));
}

Test(slots, equal_redis_cluster_keyslot_on_random_keys) {
  tr_redis_t t;
  memset(&t, 0, sizeof(t));
  snprintf(t.dir, sizeof(t.dir), "/tmp/tally-slots-XXXXXX");
  cr_assert_not_null(mkdtemp(t.dir));
  snprintf(t.sock, sizeof(t.sock), "%s/redis.sock", t.dir);
  char conf[400];
  snprintf(conf, sizeof(conf), "%s/nodes.conf", t.dir);
  /* A port of its own: the cluster bus listens on the port + 10000
   * (with port 0, on 10000 for every server). */
  int free_port;
  do
    free_port = tr_free_port();
  while (free_port > 55000);
  char port[16];
  snprintf(port, sizeof(port), "%d", free_port);
  const char *args[] = {"--port",
                        port,
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        t.dir,
                        "--save",
                        "",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        conf,
                        NULL};
  t.pid = tr_redis_spawn(NULL, t.sock, args, NULL);
  cr_assert(t.pid > 0, "redis-server in cluster mode did not start");
  redisContext *c = redisConnectUnix(t.sock);
  cr_assert(c != NULL && c->err == 0);
  srand(25);
  const char alphabet[] = "{}ab:c{}1\xc3\xa9";
  char key[40];
  for (int i = 0; i < 3000; i++) {
    size_t len = (size_t)(rand() % 24);
    for (size_t k = 0; k < len; k++)
      key[k] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
    redisReply *r = redisCommand(c, "CLUSTER KEYSLOT %b", key, len);
    cr_assert(r != NULL && r->type == REDIS_REPLY_INTEGER, "%s",
              r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
    cr_expect_eq(tally_key_slot(key, len), (unsigned)r->integer, "key \"%.*s\"",
                 (int)len, key);
    freeReplyObject(r);
  }
  redisFree(c);
  tr_redis_stop(&t);
}

/* A reply element, for the synthetic CLUSTER SLOTS replies. */
static redisReply r_int(long long v) {
  return (redisReply){.type = REDIS_REPLY_INTEGER, .integer = v};
}
static redisReply rstr(const char *s) {
  return (redisReply){
      .type = REDIS_REPLY_STRING, .str = (char *)s, .len = strlen(s)};
}

Test(slots, reads_a_slot_map_and_refuses_a_bad_one) {
  redisReply a0 = r_int(5461), a1 = r_int(16383), b0 = r_int(0),
             b1 = r_int(5460);
  redisReply ah = rstr("127.0.0.1"), ap = r_int(7001), bh = rstr("?"),
             bp = r_int(7000);
  redisReply *an[] = {&ah, &ap}, *bn[] = {&bh, &bp};
  redisReply anode = {.type = REDIS_REPLY_ARRAY, .elements = 2, .element = an};
  redisReply bnode = {.type = REDIS_REPLY_ARRAY, .elements = 2, .element = bn};
  redisReply *ae[] = {&a0, &a1, &anode}, *be[] = {&b0, &b1, &bnode};
  redisReply ea = {.type = REDIS_REPLY_ARRAY, .elements = 3, .element = ae};
  redisReply eb = {.type = REDIS_REPLY_ARRAY, .elements = 3, .element = be};
  redisReply *all[] = {&ea, &eb};
  redisReply reply = {.type = REDIS_REPLY_ARRAY, .elements = 2, .element = all};
  tally_slot_map_t m;
  char err[200];
  cr_assert_eq(tally_slot_map_read(&reply, &m, err, sizeof(err)), 0, "%s", err);
  cr_expect_eq(m.n, 2);
  const tally_slot_range_t *r = tally_slot_map_find(&m, 0);
  cr_assert_not_null(r);
  cr_expect_str_eq(r->host, "", "\"?\": the node asked");
  cr_expect_eq(r->port, 7000);
  r = tally_slot_map_find(&m, 5461);
  cr_expect(r != NULL && r->port == 7001 && strcmp(r->host, "127.0.0.1") == 0);
  cr_expect_eq(tally_slot_map_find(&m, 16383), r);
  tally_slot_map_free(&m);
  /* Overlapping ranges; a slot out of range. */
  b1 = r_int(5461);
  cr_expect_neq(tally_slot_map_read(&reply, &m, err, sizeof(err)), 0);
  cr_expect(strstr(err, "overlap") != NULL, "%s", err);
  b1 = r_int(16384);
  cr_expect_neq(tally_slot_map_read(&reply, &m, err, sizeof(err)), 0);
  cr_expect(strstr(err, "not a range of slots") != NULL, "%s", err);
}

Test(slots, reads_redirections) {
  bool ask;
  unsigned slot;
  char host[64];
  int port;
  const char *moved = "MOVED 3999 127.0.0.1:6381";
  cr_assert(
      tally_redirect_parse(moved, strlen(moved), &ask, &slot, host, &port));
  cr_expect(!ask && slot == 3999 && port == 6381 &&
            strcmp(host, "127.0.0.1") == 0);
  const char *asked = "ASK 0 ::1:7000";
  cr_assert(
      tally_redirect_parse(asked, strlen(asked), &ask, &slot, host, &port));
  cr_expect(ask && slot == 0 && port == 7000 && strcmp(host, "::1") == 0);
  const char *bad[] = {"MOVED",
                       "MOVED 16384 1.2.3.4:5",
                       "MOVED x 1.2.3.4:5",
                       "MOVED 1 1.2.3.4",
                       "MOVED 1 1.2.3.4:70000",
                       "ERR MOVED 1 a:1",
                       "MOVED 1 a:1x",
                       "ASK 1 a:0"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    cr_expect_not(
        tally_redirect_parse(bad[i], strlen(bad[i]), &ask, &slot, host, &port),
        "%s", bad[i]);
}

/* Three masters made a cluster by redis-cli --cluster create: the map
 * read from any node sends each key to the master that takes it, and a
 * wrong node's MOVED names the same master. */
Test(slots, follows_a_real_clusters_map) {
  tk_cluster_t k;
  cr_assert_eq(tk_start(&k, 3, 0), 0, "the cluster did not start");
  int ports[3];
  char socks[3][300];
  for (int i = 0; i < 3; i++) {
    ports[i] = k.nodes[i].port;
    snprintf(socks[i], sizeof(socks[i]), "%s", k.nodes[i].sock);
  }
  redisContext *c = redisConnectUnix(socks[0]);
  cr_assert(c != NULL && c->err == 0);
  tally_slot_map_t m = {0};
  char err[200];
  /* The map settles once every node has joined. */
  for (int i = 0; i < 100; i++) {
    redisReply *r = redisCommand(c, "CLUSTER SLOTS");
    int rc = tally_slot_map_read(r, &m, err, sizeof(err));
    freeReplyObject(r);
    cr_assert_eq(rc, 0, "%s", err);
    size_t covered = 0;
    for (size_t j = 0; j < m.n; j++)
      covered += m.ranges[j].to - m.ranges[j].from + 1;
    if (covered == TALLY_CLUSTER_SLOTS)
      break;
    tally_slot_map_free(&m);
    usleep(100000);
  }
  cr_assert(m.n >= 3, "the map never covered every slot");
  for (int n = 0; n < 300; n++) {
    char key[32];
    snprintf(key, sizeof(key), "tally:{c%d}:ranking", n);
    unsigned slot = tally_key_slot(key, strlen(key));
    const tally_slot_range_t *r = tally_slot_map_find(&m, slot);
    cr_assert_not_null(r);
    int owner = -1;
    for (int i = 0; i < 3; i++)
      if (ports[i] == r->port)
        owner = i;
    cr_assert(owner >= 0);
    redisContext *o = redisConnectUnix(socks[owner]);
    redisReply *x = redisCommand(o, "SET %s 1", key);
    cr_expect(x != NULL && x->type == REDIS_REPLY_STATUS, "%s: %s", key,
              x != NULL && x->type == REDIS_REPLY_ERROR ? x->str : "?");
    freeReplyObject(x);
    redisFree(o);
    /* Another node redirects to the same master. */
    redisContext *w = redisConnectUnix(socks[(owner + 1) % 3]);
    x = redisCommand(w, "GET %s", key);
    bool ask;
    unsigned s;
    char host[64];
    int port;
    cr_expect(x != NULL && x->type == REDIS_REPLY_ERROR &&
              tally_redirect_parse(x->str, x->len, &ask, &s, host, &port) &&
              !ask && s == slot && port == r->port);
    freeReplyObject(x);
    redisFree(w);
  }
  tally_slot_map_free(&m);
  redisFree(c);
  tk_stop(&k);
}
