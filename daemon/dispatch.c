/* The dispatcher: from the jobs stream to the workers and back, each
 * outcome posted once, fenced by the stream scripts. This part: the
 * connections, the consumer lease, the timer and the drain. */
#include "config/error.h"
#include "daemon/dispatch_int.h"
#include "engine/contests.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Setting up the write connection: the group, the scripts, and a look at
 * the server's settings. */

enum {
  INIT_GROUP = -1,
  INIT_POLICY = -2,
  INIT_AOF = -3,
  INIT_SAVE = -4,
  INIT_LEASE = -5
};

/* Stops the dispatcher's user for good, once. */
static void fatal(tally_dispatch_t *d, const char *why) {
  if (d->fatal)
    return;
  d->fatal = true;
  tally_log(d->opt.log, TALLY_LOG_ERROR, "consumer", "%s", why);
  if (d->opt.fatal_cb != NULL)
    d->opt.fatal_cb(d, why);
}

/* A lease reply: true when this daemon may go on. */
static bool lease_reply(tally_dispatch_t *d, const redisReply *reply,
                        bool starting) {
  if (reply->type == REDIS_REPLY_INTEGER) {
    d->lease_waiting = 0;
    d->lease_next = uv_now(d->loop) + TALLY_LEASE_MS / 3;
    return true;
  }
  char why[768];
  snprintf(why, sizeof(why),
           "consumer %s is held by another tallyd (%s): each running tallyd "
           "needs its own --consumer",
           d->opt.consumer,
           reply->type == REDIS_REPLY_STRING ? reply->str : "?");
  if (!starting) {
    fatal(d, why);
    return false;
  }
  uint64_t now = uv_now(d->loop);
  if (d->lease_waiting == 0) {
    d->lease_waiting = now;
    tally_log(d->opt.log, TALLY_LOG_WARN, "consumer",
              "%s; waiting up to %d ms for the lease of a stopped one to "
              "expire",
              why, TALLY_LEASE_MS + 2000);
  } else if (now - d->lease_waiting > TALLY_LEASE_MS + 2000) {
    fatal(d, why);
  }
  return false;
}

static void init_step_done(tally_dispatch_t *d) {
  if (--d->init_left > 0)
    return;
  d->ready = true;
  d->ever_ready = true;
  d->warned = true;
  d->history_done = false;
  d->history_again = false;
  snprintf(d->history_cursor, sizeof(d->history_cursor), "0");
  tally_log(d->opt.log, TALLY_LOG_INFO, "redis.ready",
            "%s: group %s on %s, consumer %s", d->wr.addr.display, TALLY_GROUP,
            d->jobs_key, d->opt.consumer);
  if (d->opt.ready_cb != NULL)
    d->opt.ready_cb(d);
  tally__pump(d);
  tally__flush(d);
}

/* The value of a CONFIG GET reply, or NULL. */
static const char *config_value(const redisReply *reply) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
      reply->element[1]->type != REDIS_REPLY_STRING)
    return NULL;
  return reply->element[1]->str;
}

static void on_init(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  intptr_t step = (intptr_t)priv;
  if (reply == NULL || d->closing)
    return;
  if (step == INIT_LEASE) {
    if (reply->type == REDIS_REPLY_ERROR) {
      tally__reply_error(d, r, "taking the consumer lease", reply);
      return;
    }
    if (!lease_reply(d, reply, true)) {
      /* Tried again after the backoff, until the lease is free or too
       * long has passed. */
      tally_redis_reset(r, "the consumer name is held by another tallyd");
      return;
    }
    init_step_done(d);
    return;
  }
  if (step <= INIT_POLICY) {
    /* CONFIG may be renamed or refused: then nothing is checked. */
    const char *v = config_value(reply);
    if (reply->type == REDIS_REPLY_ERROR)
      tally_log(d->opt.log, TALLY_LOG_INFO, "redis.config",
                "cannot check the server's settings: %s", reply->str);
    else if (step == INIT_POLICY && v && strcmp(v, "noeviction") != 0)
      tally_log(d->opt.log, TALLY_LOG_WARN, "redis.config",
                "maxmemory-policy is %s: under memory pressure Redis may "
                "evict jobs or results; set it to noeviction",
                v);
    else if (step == INIT_AOF && v && strcmp(v, "no") == 0)
      d->aof_off = true;
    else if (step == INIT_SAVE && v && v[0] == '\0' && d->aof_off)
      tally_log(d->opt.log, TALLY_LOG_WARN, "redis.config",
                "persistence is off (appendonly no, no save points): a "
                "Redis restart loses every job and result");
    init_step_done(d);
    return;
  }
  if (reply->type == REDIS_REPLY_ERROR &&
      !(step == INIT_GROUP && strstr(reply->str, "BUSYGROUP") != NULL)) {
    tally__reply_error(d, r,
                       step == INIT_GROUP ? "creating the consumer group"
                                          : "SCRIPT LOAD",
                       reply);
    return;
  }
  if (step >= 0) {
    if (reply->type != REDIS_REPLY_STRING) {
      tally_redis_reset(r, "SCRIPT LOAD gave no digest");
      return;
    }
    snprintf(d->sha[step], sizeof(d->sha[step]), "%s", reply->str);
  }
  init_step_done(d);
}

static void init_command(tally_dispatch_t *d, intptr_t step, int argc,
                         const char **argv) {
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_init,
                          (void *)step, argc, argv, lens) == 0)
    d->init_left++;
}

static void on_wr_up(tally_redis_t *r) {
  tally_dispatch_t *d = r->data;
  if (r->cluster && strcmp(d->opt.queue, TALLY_MAIN_QUEUE) == 0) {
    fatal(
        d,
        "the Redis server is a cluster node, and queue " TALLY_MAIN_QUEUE
        " keeps the key layout of before queues, whose keys are in "
        "many slots: give each contest a named queue (its config's "
        "\"queue\", or --default-queue) and --queues without " TALLY_MAIN_QUEUE
        " (docs/operations.md#redis-cluster)");
    return;
  }
  if (r->cluster)
    tally_log(d->opt.log, r->failovers > 0 ? TALLY_LOG_WARN : TALLY_LOG_INFO,
              "redis.master",
              "queue %s: following the master of its slot %d at %s "
              "(failovers and slot moves followed: %llu)",
              d->opt.queue, r->follow_slot, r->master,
              (unsigned long long)r->failovers);
  if (r->addr.nsentinels > 0)
    tally_log(d->opt.log, r->failovers > 0 ? TALLY_LOG_WARN : TALLY_LOG_INFO,
              "redis.master",
              "following master %s at %s, as the sentinels name it "
              "(failovers followed: %llu)",
              r->addr.master, r->master, (unsigned long long)r->failovers);
  d->init_left = 1; /* held until every command is sent */
  /* An existing group is left alone without a write, so that a server
   * out of memory (which refuses XGROUP CREATE before it finds the group)
   * still lets tallyd start. */
  const char *group[] = {"EVAL", tally_lua_group, "1", d->jobs_key,
                         TALLY_GROUP};
  init_command(d, INIT_GROUP, 5, group);
  char ttl[24];
  snprintf(ttl, sizeof(ttl), "%d", TALLY_LEASE_MS);
  const char *lease[] = {"EVAL",       tally_lua_lease, "1",
                         d->lease_key, d->lease_value,  ttl};
  init_command(d, INIT_LEASE, 6, lease);
  for (intptr_t s = 0; s < TALLY_SCRIPT_COUNT; s++) {
    const char *load[] = {"SCRIPT", "LOAD", tally_scripts[s]};
    init_command(d, s, 3, load);
  }
  if (!d->warned) {
    const char *policy[] = {"CONFIG", "GET", "maxmemory-policy"};
    const char *aof[] = {"CONFIG", "GET", "appendonly"};
    const char *save[] = {"CONFIG", "GET", "save"};
    init_command(d, INIT_POLICY, 3, policy);
    init_command(d, INIT_AOF, 3, aof);
    init_command(d, INIT_SAVE, 3, save);
  }
  init_step_done(d);
}

/* Whether a connection's trouble is the embedded server starting: no
 * ready yet, and tallyd's own server. */
static bool starting(const tally_dispatch_t *d) {
  return d->opt.embedded && !d->ever_ready;
}

static void on_wr_down(tally_redis_t *r, const char *why) {
  tally_dispatch_t *d = r->data;
  d->ready = false;
  d->history_done = false;
  tally_log(d->opt.log, starting(d) ? TALLY_LOG_DEBUG : TALLY_LOG_WARN,
            "redis.down", "write connection: %s; reconnecting", why);
}

static void on_redis_retry(tally_redis_t *r, const char *why,
                           uint64_t delay_ms) {
  tally_dispatch_t *d = r->data;
  /* The first retries say it at warn level, later ones at debug, so that
   * a long outage does not flood the log; none while tallyd's own server
   * starts. */
  tally_log(d->opt.log,
            !starting(d) && (r->streak <= 3 || r->streak % 100 == 0)
                ? TALLY_LOG_WARN
                : TALLY_LOG_DEBUG,
            "redis.retry", "%s connection: %s; trying again in %llu ms",
            r == &d->rd ? "read" : "write", why, (unsigned long long)delay_ms);
}

static void on_rd_up(tally_redis_t *r) {
  tally__pump(r->data);
}

static void on_rd_down(tally_redis_t *r, const char *why) {
  tally_dispatch_t *d = r->data;
  /* A read whose reply was lost still delivered its entries to this
   * consumer: only a history re-read finds them. */
  if (d->history_busy) {
    d->history_again = true; /* it may have run before that read */
  } else {
    d->history_done = false;
    snprintf(d->history_cursor, sizeof(d->history_cursor), "0");
  }
  tally_log(d->opt.log, starting(d) ? TALLY_LOG_DEBUG : TALLY_LOG_WARN,
            "redis.down", "read connection: %s; reconnecting", why);
}

/* The timer: claims, a look at the counters, and the drain deadline. */

static void log_stats(tally_dispatch_t *d) {
  tally_dispatch_stats_t *s = &d->stats;
  if (memcmp(s, &d->last_stats, sizeof(*s)) == 0)
    return;
  d->last_stats = *s;
  tally_log(d->opt.log, TALLY_LOG_INFO, "stats",
            "read %llu, scored %llu, tokens %llu, stale %llu, dead %llu, "
            "dropped %llu, retried %llu, claimed %llu, released %llu; in "
            "flight %zu",
            (unsigned long long)s->read, (unsigned long long)s->scored,
            (unsigned long long)s->tokens, (unsigned long long)s->stale,
            (unsigned long long)s->dead, (unsigned long long)s->dropped,
            (unsigned long long)s->retried, (unsigned long long)s->claimed,
            (unsigned long long)s->released, d->njobs);
}

static void on_lease(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  (void)priv;
  d->lease_busy = false;
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    tally__reply_error(d, r, "refreshing the consumer lease", reply);
    return;
  }
  lease_reply(d, reply, false);
}

static void refresh_lease(tally_dispatch_t *d) {
  if (!d->ready || d->lease_busy || d->closing || d->fatal ||
      uv_now(d->loop) < d->lease_next)
    return;
  char ttl[24];
  snprintf(ttl, sizeof(ttl), "%d", TALLY_LEASE_MS);
  const char *eval[] = {"EVAL",       tally_lua_lease, "1",
                        d->lease_key, d->lease_value,  ttl};
  size_t lens[6];
  for (int i = 0; i < 6; i++)
    lens[i] = strlen(eval[i]);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_lease, NULL, 6,
                          eval, lens) == 0)
    d->lease_busy = true;
}

/* Retention: the streams tally writes, in the order of retain_counts. */
static const char *const retained[] = {"results", "public", "changes", "dead"};

static void on_trim(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  (void)priv;
  d->retain_busy = false;
  if (reply == NULL || d->closing)
    return;
  if (reply->type == REDIS_REPLY_ERROR) {
    tally__reply_error(d, r, "trimming the streams", reply);
    return;
  }
  for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i < reply->elements &&
                     i < sizeof(retained) / sizeof(retained[0]);
       i++) {
    const redisReply *e = reply->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 2 ||
        e->element[0]->type != REDIS_REPLY_INTEGER ||
        e->element[0]->integer <= 0)
      continue;
    d->stats.trimmed += (uint64_t)e->element[0]->integer;
    tally_log(
        d->opt.log, TALLY_LOG_INFO, "retain",
        "trimmed %lld entr%s from %s:%s, %lld left", e->element[0]->integer,
        e->element[0]->integer == 1 ? "y" : "ies", d->opt.prefix, retained[i],
        e->element[1]->type == REDIS_REPLY_INTEGER ? e->element[1]->integer
                                                   : -1LL);
  }
}

/* Trims the streams by age and count (trim.lua), one call at a time. */
static void retain(tally_dispatch_t *d, uint64_t now) {
  if (d->opt.retain_every_ms == 0 || !d->ready || d->retain_busy ||
      d->closing || d->fatal || now < d->retain_next)
    return;
  d->retain_next = now + d->opt.retain_every_ms;
  enum { N = sizeof(retained) / sizeof(retained[0]) };
  char keys[2 * N][160], nums[1 + 2 * N][24];
  const char *argv[3 + 2 * N + 1 + 3 * N];
  size_t lens[sizeof(argv) / sizeof(argv[0])];
  int argc = 0;
  argv[argc++] = "EVAL";
  argv[argc++] = tally_lua_trim;
  snprintf(nums[0], sizeof(nums[0]), "%d", 2 * N);
  argv[argc++] = nums[0];
  for (int i = 0; i < N; i++) {
    snprintf(keys[i], sizeof(keys[i]), "%s:%s", d->opt.prefix, retained[i]);
    snprintf(keys[N + i], sizeof(keys[N + i]), "%s:retain:%s", d->opt.prefix,
             retained[i]);
  }
  for (int i = 0; i < 2 * N; i++)
    argv[argc++] = keys[i];
  /* 0: the script reads Redis's clock, which made the stream IDs. */
  const char *clock = "0";
  argv[argc++] = clock;
  for (int i = 0; i < N; i++) {
    snprintf(nums[1 + 2 * i], sizeof(nums[0]), "%llu",
             (unsigned long long)d->opt.retain_age_ms);
    snprintf(nums[2 + 2 * i], sizeof(nums[0]), "%llu",
             (unsigned long long)d->opt.retain_counts[i]);
    argv[argc++] = nums[1 + 2 * i];
    argv[argc++] = nums[2 + 2 * i];
    /* Each result's body, and each event's view kept apart, goes with
     * its entry. */
    argv[argc++] = strcmp(retained[i], "results") == 0 ||
                           strcmp(retained[i], "public") == 0
                       ? "1"
                       : "0";
  }
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_trim, NULL,
                          argc, argv, lens) == 0)
    d->retain_busy = true;
}

static void on_tick(uv_timer_t *t) {
  tally_dispatch_t *d = t->data;
  uint64_t now = uv_now(d->loop);
  refresh_lease(d);
  retain(d, now);
  tally__probe(d, now);
  tally__judge_hold(d, now);
  if (now >= d->next_stats) {
    d->next_stats = now + STATS_EVERY_MS;
    log_stats(d);
  }
  tally__pump(d);
  tally__flush(d);
  tally__check_drained(d);
}

int tally_dispatch_init(uv_loop_t *loop, tally_dispatch_t *d,
                        const tally_dispatch_options_t *opt, char *err,
                        size_t errlen) {
  memset(d, 0, sizeof(*d));
  d->loop = loop;
  d->opt = *opt;
  tally_hist_init(&d->latency, tally_hist_latency_bounds, tally_hist_latency_n);
  d->probe = (tally_dispatch_probe_t){NAN, NAN, NAN, NAN, NAN, NAN};
  d->opt.url = strdup(opt->url);
  d->opt.prefix = strdup(opt->prefix);
  d->opt.consumer = strdup(opt->consumer);
  d->opt.queue = strdup(opt->queue != NULL ? opt->queue : TALLY_MAIN_QUEUE);
  if (d->opt.max_inflight == 0)
    d->opt.max_inflight = 64;
  if (d->opt.command_timeout_ms == 0)
    d->opt.command_timeout_ms = 5000;
  if (d->opt.block_ms == 0)
    d->opt.block_ms = 1000;
  int rc = TALLY_ENOMEM;
  if (d->opt.url == NULL || d->opt.prefix == NULL || d->opt.consumer == NULL ||
      d->opt.queue == NULL || tally__table_grow(d) != 0) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  snprintf(d->jobs_key, sizeof(d->jobs_key), "%s:jobs", d->opt.prefix);
  snprintf(d->lease_key, sizeof(d->lease_key), "%s:consumer:%s", d->opt.prefix,
           d->opt.consumer);
  char host[128] = "?";
  gethostname(host, sizeof(host) - 1);
  snprintf(d->lease_value, sizeof(d->lease_value), "%.100s:%d:%llu", host,
           (int)getpid(), (unsigned long long)uv_hrtime());
  snprintf(d->claim_cursor, sizeof(d->claim_cursor), "-");
  /* Both connections parse the same URL, so once the first is set up
   * the second cannot fail but for memory, which is not worth a handle
   * dance: both are set up before the first handle is made. */
  tally_redis_url_t u;
  rc = tally_redis_url_parse(&u, d->opt.url, err, errlen);
  if (rc != 0)
    goto fail;
  tally_redis_url_free(&u);
  rc = tally_redis_init(loop, &d->rd, d->opt.url, err, errlen);
  if (rc == 0)
    rc = tally_redis_init(loop, &d->wr, d->opt.url, err, errlen);
  if (rc != 0)
    abort(); /* out of memory with a timer handle open */
  d->rd.data = d->wr.data = d;
  /* On a cluster, both go to the master of the queue's slot. */
  if (d->rd.addr.nsentinels == 0)
    d->rd.follow_slot = d->wr.follow_slot =
        (int)tally_key_slot(d->jobs_key, strlen(d->jobs_key));
  d->rd.on_up = on_rd_up;
  d->rd.on_down = on_rd_down;
  d->wr.on_up = on_wr_up;
  d->wr.on_down = on_wr_down;
  d->rd.on_retry = d->wr.on_retry = on_redis_retry;
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
  tally_places_init(&d->places);
  tally_place_calc_init(&d->calc);
  tally_texts_init(&d->direct);
  return 0;
fail:
  free((char *)d->opt.url);
  free((char *)d->opt.queue);
  free((char *)d->opt.prefix);
  free((char *)d->opt.consumer);
  free(d->table);
  return rc;
}

void tally_dispatch_start(tally_dispatch_t *d) {
  tally_redis_start(&d->wr);
  tally_redis_start(&d->rd);
  uv_timer_start(&d->timer, on_tick, TICK_MS, TICK_MS);
}

/* Draining: stop reading, post what the workers finish, hand back the
 * rest, close the pool, wait for the last replies. */

static void on_pool_closed(tally_pool_t *p) {
  tally_dispatch_group_t *g = p->data;
  for (size_t k = 0; k < g->n; k++) {
    tally_dispatch_t *d = g->members[k];
    d->drain_phase = 2;
    d->drain_deadline = uv_now(d->loop) + d->opt.command_timeout_ms;
  }
  for (size_t k = 0; k < g->n; k++) {
    tally__flush(g->members[k]);
    tally__check_drained(g->members[k]);
  }
}

/* Ends the drain. */
static void drained(tally_dispatch_t *d) {
  void (*cb)(tally_dispatch_t *) = d->drained_cb;
  d->drained_cb = NULL;
  if (cb != NULL)
    cb(d);
}

static void on_lease_released(tally_redis_t *r, redisReply *reply, void *priv) {
  (void)reply;
  (void)priv;
  drained(r->data);
}

void tally__check_drained(tally_dispatch_t *d) {
  if (!d->draining || d->closing || d->drained_cb == NULL)
    return;
  uint64_t now = uv_now(d->loop);
  bool late = now >= d->drain_deadline;
  if (d->drain_phase == 0) {
    if (!late && (d->njobs > 0 || d->reading))
      return;
    if (late && d->njobs > 0)
      tally_log(d->opt.log, TALLY_LOG_WARN, "drain.late",
                "%zu jobs unfinished at the drain deadline: handing them "
                "back",
                d->njobs);
    d->drain_phase = 1;
    /* The pool is shared: it closes once every queue's jobs are done. */
    tally_dispatch_group_t *g = d->opt.group;
    g->late = g->late || late;
    if (++g->waiting == g->n)
      tally_pool_close(d->opt.pool, g->late ? 0 : 1000, on_pool_closed);
    return;
  }
  if (d->drain_phase == 1 || d->drain_phase == 3)
    return; /* until on_pool_closed, or the lease is released */
  if (!late && (d->njobs > 0 || d->calls > 0))
    return;
  if (d->njobs > 0)
    tally_log(d->opt.log, TALLY_LOG_WARN, "drain.left",
              "%zu jobs could not be handed back (the write connection is "
              "not usable: %s): they stay pending for this consumer's next "
              "start or another daemon's claim",
              d->njobs, d->wr.why[0] ? d->wr.why : "no reply in time");
  d->drain_phase = 3;
  log_stats(d);
  /* The lease goes last, once nothing of this consumer's is in flight;
   * without a connection it simply expires. */
  const char *argv[] = {"EVAL", tally_lua_lease_release, "1", d->lease_key,
                        d->lease_value};
  size_t lens[5];
  for (int i = 0; i < 5; i++)
    lens[i] = strlen(argv[i]);
  if (d->fatal || !d->ready ||
      tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_lease_released,
                          NULL, 5, argv, lens) != 0)
    drained(d);
}

void tally_dispatch_drain(tally_dispatch_t *d, uint64_t timeout_ms,
                          void (*drained_cb)(tally_dispatch_t *d)) {
  if (d->draining)
    return;
  d->draining = true;
  d->drained_cb = drained_cb;
  d->drain_deadline = uv_now(d->loop) + timeout_ms;
  tally_log(d->opt.log, TALLY_LOG_INFO, "drain",
            "stopped reading; %zu jobs in flight, %llu ms to finish them",
            d->njobs, (unsigned long long)timeout_ms);
  /* Queued jobs go back once every queue drains: a job handed back to a
   * dispatcher still scoring would be sent again. */
  if (++d->opt.group->draining == d->opt.group->n)
    tally_pool_release_queued(d->opt.pool);
  if (d->opt.judge != NULL)
    tally__judge_drain(d);
  tally__flush(d);
  tally__check_drained(d);
}

static void on_closed_part(tally_dispatch_t *d) {
  if (--d->closing_conns > 0)
    return;
  free((char *)d->opt.url);
  free((char *)d->opt.queue);
  free((char *)d->opt.prefix);
  free((char *)d->opt.consumer);
  free(d->table);
  d->table = NULL;
  tally_places_close(&d->places);
  tally_place_calc_close(&d->calc);
  tally_texts_close(&d->direct);
  if (d->close_cb)
    d->close_cb(d);
}

static void on_redis_closed(tally_redis_t *r) {
  on_closed_part(r->data);
}

bool tally_dispatch_ready(const tally_dispatch_t *d, char *why, size_t whylen) {
  const char *no = NULL;
  if (d->draining || d->closing)
    no = "draining";
  else if (d->rd.state != TALLY_REDIS_UP)
    no = "the read connection to Redis is down";
  else if (d->wr.state != TALLY_REDIS_UP)
    no = "the write connection to Redis is down";
  else if (!d->ready)
    no = "connected to Redis, but the consumer group and scripts are not "
         "set up yet";
  if (no == NULL)
    return true;
  /* The last failure, if any, says why. */
  const tally_redis_t *r = d->rd.state != TALLY_REDIS_UP ? &d->rd : &d->wr;
  if (d->draining || d->closing || r->why[0] == '\0')
    snprintf(why, whylen, "%s", no);
  else
    snprintf(why, whylen, "%s (last failure: %s)", no, r->why);
  return false;
}

static void on_timer_closed(uv_handle_t *h) {
  on_closed_part(h->data);
}

void tally_dispatch_close(tally_dispatch_t *d,
                          void (*close_cb)(tally_dispatch_t *d)) {
  d->closing = true;
  d->close_cb = close_cb;
  d->closing_conns = 3;
  tally_redis_close(&d->rd, on_redis_closed);
  tally_redis_close(&d->wr, on_redis_closed);
  /* The calls in flight have failed by now, so every job is in the table
   * and nowhere else; the pool is closed before the dispatcher. */
  for (size_t i = 0; i < d->table_size; i++)
    while (d->table[i])
      tally__job_free(d, d->table[i]);
  uv_close((uv_handle_t *)&d->timer, on_timer_closed);
}
