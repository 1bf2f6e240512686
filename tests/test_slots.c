/* Redis Cluster's key slots (redis/slots.c) against a real redis-server in
 * cluster mode (CLUSTER KEYSLOT), over random keys full of braces, and the
 * CRC16 check value. */
#include "redis/slots.h"
#include "redis_fixture.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  const char *args[] = {"--port",
                        "0",
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
