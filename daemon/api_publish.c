/* What the results API writes and asks on every connect and every
 * second: the participant-token secret, and the configured contests'
 * names, times and queues (api.h). */
#include "daemon/api.h"
#include "daemon/api_int.h"

#include "config/error.h"
#include "redis/scripts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_secret(tally_cluster_t *k, redisReply *reply, void *priv) {
  tally_api_t *a = k->data;
  (void)priv;
  a->secret_asking = false;
  if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
      reply->len == TALLY_SECRET_HEX) {
    if (a->secret[0] != '\0' && memcmp(a->secret, reply->str, reply->len) != 0)
      tally_log(a->log, TALLY_LOG_INFO, "api",
                "the participant token secret changed (revoked): tokens "
                "made before no longer open a participant's endpoint");
    memcpy(a->secret, reply->str, reply->len + 1);
    a->secret_failing = false;
  } else if (reply != NULL && !a->secret_failing) {
    /* LOADING, BUSY, MASTERDOWN, READONLY...: asked again each second;
     * said once until it succeeds. */
    a->secret_failing = true;
    tally_log(a->log, TALLY_LOG_INFO, "api",
              "cannot read the participant token secret yet (asked again "
              "each second): %s",
              reply->type == REDIS_REPLY_ERROR ? reply->str : "no string");
  }
}

/* The secret participant tokens are keyed with, made once (SET NX) by
 * whichever tallyd or tally comes first: asked on every connect and then
 * every second, so that a first answer that failed (Redis loading, a
 * replica not yet promoted) is asked again, and a revocation (DEL
 * <p>:secret, after which the next asker makes a new one) holds on every
 * tallyd within a second or two. */
void tally__api_ask_secret(tally_api_t *a) {
  if (a->secret_asking || a->closing)
    return;
  char hex[TALLY_SECRET_HEX + 1];
  if (tally_secret_new(hex) != 0) {
    tally_log(a->log, TALLY_LOG_ERROR, "api", "getrandom failed");
    return;
  }
  char key[160];
  snprintf(key, sizeof(key), "%s:secret", a->prefix);
  const char *argv[] = {"EVAL", tally_lua_secret, "1", key, hex};
  size_t lens[5];
  for (int i = 0; i < 5; i++)
    lens[i] = strlen(argv[i]);
  if (tally_cluster_command(&a->cl, key, strlen(key), API_TIMEOUT_MS, on_secret,
                            NULL, 5, argv, lens) == 0)
    a->secret_asking = true;
}

static void on_published(tally_cluster_t *k, redisReply *reply, void *priv) {
  tally_api_t *a = k->data;
  (void)priv;
  if (reply == NULL || reply->type != REDIS_REPLY_INTEGER)
    a->publish_ok = false;
  if (--a->publish_wait > 0)
    return;
  if (a->publish_ok) {
    a->published = a->publishing;
    __atomic_store_n(&a->contests_known, true, __ATOMIC_RELEASE);
  }
  a->publishing = 0;
}

/* A number of seconds as JSON, null for NAN. */
static void put_seconds(tally_buf_t *b, double v) {
  if (isnan(v))
    tally_buf_puts(b, "null");
  else
    tally_json_num(b, v);
}

/* The configured contests: their names in <p>:configured, so that tally
 * contest knows a contest that has no submission yet, and their times in
 * <p>:contest-times, so that tally contest and tally ranking --public
 * know its freeze: on every connect, and after a reload. */
void tally__api_publish_configured(tally_api_t *a) {
  const tally_contestset_t *cs = a->contests;
  if (cs == NULL || cs->count == 0)
    __atomic_store_n(&a->contests_known, true, __ATOMIC_RELEASE);
  if (a->closing || a->publishing != 0 || cs == NULL || cs->count == 0 ||
      a->contests_gen == a->published)
    return;
  size_t n = cs->count + 2, m = 2 * cs->count + 2;
  const char **argv = calloc(m, sizeof(*argv));
  size_t *lens = calloc(m, sizeof(*lens));
  tally_buf_t *times = calloc(cs->count, sizeof(*times));
  char key[160], tkey[160], qkey[160];
  snprintf(key, sizeof(key), "%s:configured", a->prefix);
  snprintf(tkey, sizeof(tkey), "%s:contest-times", a->prefix);
  snprintf(qkey, sizeof(qkey), "%s:queues", a->prefix);
  bool oom = argv == NULL || lens == NULL || times == NULL;
  for (size_t i = 0; !oom && i < cs->count; i++) {
    const tally_contest_t *c = &cs->contests[i];
    tally_buf_t *b = &times[i];
    tally_buf_init(b);
    tally_buf_puts(b, "{\"start\":");
    put_seconds(b, c->start);
    tally_buf_puts(b, ",\"end\":");
    put_seconds(b, c->end);
    tally_buf_puts(b, ",\"freeze\":");
    put_seconds(b, c->freeze);
    tally_buf_puts(b, ",\"unfreeze_after\":");
    put_seconds(b, c->unfreeze_after);
    if (c->scoring == TALLY_SCORING_PASS_FAIL) {
      /* What tally ranking needs to rank it as tallyd does. */
      char rules[96];
      snprintf(rules, sizeof(rules),
               ",\"scoring\":\"pass-fail\",\"penalty_time\":%d,"
               "\"compile_penalty\":%s",
               c->penalty_time, c->compile_penalty ? "true" : "false");
      tally_buf_puts(b, rules);
      tally_buf_puts(b, ",\"tasks\":[");
      for (size_t t = 0; t < c->ntasks; t++) {
        if (t > 0)
          tally_buf_putc(b, ',');
        tally_json_str(b, c->tasks[t]);
      }
      tally_buf_putc(b, ']');
    }
    tally_buf_putc(b, '}');
    oom = b->oom;
  }
  if (!oom) {
    a->publishing = a->contests_gen;
    a->publish_ok = true;
    a->publish_wait = 0;
    argv[0] = "HSET";
    argv[1] = tkey;
    for (size_t i = 0; i < cs->count; i++) {
      argv[2 + 2 * i] = cs->contests[i].name;
      argv[3 + 2 * i] = times[i].data;
    }
    for (size_t i = 0; i < m; i++)
      lens[i] = strlen(argv[i]);
    if (tally_cluster_command(&a->cl, tkey, strlen(tkey), API_TIMEOUT_MS,
                              on_published, NULL, (int)m, argv, lens) == 0)
      a->publish_wait++;
    argv[0] = "SADD";
    argv[1] = key;
    for (size_t i = 0; i < cs->count; i++)
      argv[i + 2] = cs->contests[i].name;
    for (size_t i = 0; i < n; i++)
      lens[i] = strlen(argv[i]);
    if (tally_cluster_command(&a->cl, key, strlen(key), API_TIMEOUT_MS,
                              on_published, NULL, (int)n, argv, lens) == 0)
      a->publish_wait++;
    /* Each contest's queue, so that tally and the platforms find where
     * its jobs go. */
    argv[0] = "HSET";
    argv[1] = qkey;
    for (size_t i = 0; i < cs->count; i++) {
      argv[2 + 2 * i] = cs->contests[i].name;
      argv[3 + 2 * i] = cs->contests[i].queue != NULL ? cs->contests[i].queue
                                                      : a->default_queue;
    }
    for (size_t i = 0; i < m; i++)
      lens[i] = strlen(argv[i]);
    if (tally_cluster_command(&a->cl, qkey, strlen(qkey), API_TIMEOUT_MS,
                              on_published, NULL, (int)m, argv, lens) == 0)
      a->publish_wait++;
    if (a->publish_wait < 3)
      a->publish_ok = false;
    if (a->publish_wait == 0)
      a->publishing = 0;
  }
  for (size_t i = 0; times != NULL && i < cs->count; i++)
    tally_buf_close(&times[i]);
  free(times);
  free(argv);
  free(lens);
}

/* The API's connections are up (on a cluster: to every master): what it
 * writes and reads on every connect. Checked after each slot map and
 * every second. */
void tally__api_check_up(tally_api_t *a) {
  char why[256];
  bool up = tally_cluster_ready(&a->cl, why, sizeof(why));
  if (up && !a->cl_up) {
    a->published = 0;
    tally__api_ask_secret(a);
    tally__api_publish_configured(a);
  }
  a->cl_up = up;
}
