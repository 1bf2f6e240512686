/* The operator's answers (ops.h): /metrics, /healthz and /readyz, from
 * the main loop's state. */
#include "daemon/ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void counter(tally_buf_t *b, const char *name, const char *help,
                    uint64_t v) {
  tally_metric_family(b, name, TALLY_COUNTER, help);
  tally_metric_sample(b, name, NULL, NULL, (double)v);
}

static void gauge(tally_buf_t *b, const char *name, const char *help,
                  double v) {
  tally_metric_family(b, name, TALLY_GAUGE, help);
  tally_metric_sample(b, name, NULL, NULL, v);
}

static uint64_t reconnects(const tally_redis_t *r) {
  return r->ups > 0 ? r->ups - 1 : 0;
}

/* What every queue's dispatcher counts, added up: tallyd's metrics are
 * the sums over its queues. */
_Static_assert(sizeof(tally_dispatch_stats_t) % sizeof(uint64_t) == 0,
               "tally_dispatch_stats_t holds counters only");
typedef struct totals_s {
  tally_dispatch_stats_t stats;
  tally_hist_t latency;
  size_t njobs;
  bool rd_up, wr_up;
  uint64_t rd_reconnects, wr_reconnects, rd_failovers, wr_failovers;
  double lag, pending, used_memory;
} totals_t;

/* NaN stays NaN only while every value is NaN. */
static double add_known(double a, double b) {
  return isnan(a) ? b : isnan(b) ? a : a + b;
}

static void add_up(const tally_ops_t *o, totals_t *t) {
  memset(t, 0, sizeof(*t));
  tally_hist_init(&t->latency, tally_hist_latency_bounds, tally_hist_latency_n);
  t->rd_up = t->wr_up = o->ndisps > 0;
  t->lag = t->pending = t->used_memory = NAN;
  for (size_t i = 0; i < o->ndisps; i++) {
    const tally_dispatch_t *d = &o->disps[i];
    uint64_t *sum = (uint64_t *)&t->stats;
    const uint64_t *add = (const uint64_t *)&d->stats;
    for (size_t k = 0; k < sizeof(d->stats) / sizeof(uint64_t); k++)
      sum[k] += add[k];
    for (size_t k = 0; k <= d->latency.n; k++)
      t->latency.counts[k] += d->latency.counts[k];
    t->latency.count += d->latency.count;
    t->latency.sum += d->latency.sum;
    t->njobs += d->njobs;
    t->rd_up = t->rd_up && d->rd.state == TALLY_REDIS_UP;
    t->wr_up = t->wr_up && d->wr.state == TALLY_REDIS_UP;
    t->rd_reconnects += reconnects(&d->rd);
    t->wr_reconnects += reconnects(&d->wr);
    t->rd_failovers += d->rd.failovers;
    t->wr_failovers += d->wr.failovers;
    t->lag = add_known(t->lag, d->probe.lag);
    t->pending = add_known(t->pending, d->probe.pending);
    /* One server's memory, or on a cluster the fullest master's. */
    if (!isnan(d->probe.used_memory) &&
        (isnan(t->used_memory) || d->probe.used_memory > t->used_memory))
      t->used_memory = d->probe.used_memory;
  }
}

/* Per queue: what each one has done and where it lives. */
static void queue_metrics(const tally_ops_t *o, tally_buf_t *b) {
  tally_metric_family(b, "tally_queue_jobs_total", TALLY_COUNTER,
                      "Jobs finished, by queue and outcome (scored, token, "
                      "dead_lettered)");
  for (size_t i = 0; i < o->ndisps; i++) {
    const tally_dispatch_t *d = &o->disps[i];
    const char *outcomes[] = {"scored", "token", "dead_lettered"};
    const uint64_t v[] = {d->stats.scored, d->stats.tokens, d->stats.dead};
    for (int k = 0; k < 3; k++)
      tally_metric_sample2(b, "tally_queue_jobs_total", "queue", d->opt.queue,
                           "outcome", outcomes[k], (double)v[k]);
  }
  tally_metric_family(b, "tally_queue_ready", TALLY_GAUGE,
                      "1 while the queue's connections are up and set up");
  for (size_t i = 0; i < o->ndisps; i++) {
    char why[256];
    tally_metric_sample(b, "tally_queue_ready", "queue", o->disps[i].opt.queue,
                        tally_dispatch_ready(&o->disps[i], why, sizeof(why)));
  }
  bool cluster = false;
  for (size_t i = 0; i < o->ndisps; i++)
    cluster = cluster || o->disps[i].wr.cluster;
  if (!cluster)
    return;
  tally_metric_family(b, "tally_queue_master_info", TALLY_GAUGE,
                      "The master a queue's write connection follows on a "
                      "Redis Cluster (queue and address as labels); always 1");
  for (size_t i = 0; i < o->ndisps; i++)
    if (o->disps[i].wr.cluster)
      tally_metric_sample2(b, "tally_queue_master_info", "queue",
                           o->disps[i].opt.queue, "master",
                           o->disps[i].wr.master, 1);
}

void tally_ops_metrics(const tally_ops_t *o, tally_buf_t *b) {
  totals_t tot;
  add_up(o, &tot);
  const tally_dispatch_stats_t *s = &tot.stats;
  /* The first queue's, for what all queues share (the rescore, the
   * Sentinel master). */
  const tally_dispatch_t *d = o->disps;

  tally_metric_family(b, "tally_build_info", TALLY_GAUGE,
                      "tallyd's version, as a label; always 1");
  tally_metric_sample(b, "tally_build_info", "version", TALLY_VERSION, 1);
  gauge(b, "tally_start_time_seconds",
        "When tallyd started, in seconds since the epoch", o->start_time);
  char why[256];
  gauge(b, "tally_ready", "1 while tallyd can score (what /readyz says)",
        tally_ops_ready(o, why, sizeof(why)) ? 1 : 0);

  /* Jobs. */
  counter(b, "tally_jobs_read_total",
          "Job entries taken from the stream: new, re-read or claimed",
          s->read);
  counter(b, "tally_jobs_claimed_total",
          "Job entries taken over from other consumers", s->claimed);
  tally_metric_family(b, "tally_jobs_total", TALLY_COUNTER,
                      "Jobs finished, by outcome: scored (a result posted), "
                      "token (a token posted), dead_lettered, retried (sent "
                      "again after a worker failure), late_dropped (the "
                      "post found the job claimed or gone), released "
                      "(handed back on a drain)");
  const struct {
    const char *outcome;
    uint64_t v;
  } outcomes[] = {{"scored", s->scored},        {"token", s->tokens},
                  {"dead_lettered", s->dead},   {"retried", s->retried},
                  {"late_dropped", s->dropped}, {"released", s->released}};
  for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
    tally_metric_sample(b, "tally_jobs_total", "outcome", outcomes[i].outcome,
                        (double)outcomes[i].v);
  counter(b, "tally_results_stale_total",
          "Results posted that were scored with an older config version",
          s->stale);
  gauge(b, "tally_jobs_in_flight",
        "Jobs read and not yet posted, released or dead-lettered",
        (double)tot.njobs);

  /* Posting. */
  counter(b, "tally_post_batches_total",
          "Post script calls answered (each one posts a batch of jobs)",
          s->posts);
  counter(b, "tally_posts_total", "Jobs in the post script calls answered",
          s->post_items);
  tally_metric_family(b, "tally_task_scores_precomputed_total", TALLY_COUNTER,
                      "Results posted with their task score computed by "
                      "tallyd from the place cache last seen: taken (the "
                      "post script found that cache and wrote what was "
                      "computed) or recomputed (it did not: it computed "
                      "the place itself)");
  tally_metric_sample(b, "tally_task_scores_precomputed_total", "outcome",
                      "taken", (double)s->precomputed_taken);
  tally_metric_sample(b, "tally_task_scores_precomputed_total", "outcome",
                      "recomputed",
                      (double)(s->precomputed - s->precomputed_taken));
  counter(b, "tally_script_errors_total",
          "Error replies to the post, retry and release scripts (OOM "
          "refusals not counted)",
          s->script_errors);
  counter(b, "tally_redis_oom_refusals_total",
          "Writes Redis refused because it is full (maxmemory)",
          s->oom_refusals);
  counter(b, "tally_stream_entries_trimmed_total",
          "Stream entries removed by the retention", s->trimmed);
  tally_metric_hist(b, "tally_post_latency_seconds",
                    "From a job's entry time (its stream ID) to its post",
                    &tot.latency);

  /* The judge (docs/benchmarks.md). */
  tally_metric_family(b, "tally_judge_samples_total", TALLY_COUNTER,
                      "Samples that needed a judge's verdict, by where it "
                      "came from: kept (in <p>:verdicts), asked (sent to the "
                      "judge), failed (the judge could not answer: posted "
                      "unjudged)");
  tally_metric_sample(b, "tally_judge_samples_total", "outcome", "kept",
                      (double)s->verdicts_kept);
  tally_metric_sample(b, "tally_judge_samples_total", "outcome", "asked",
                      (double)s->judge_asked);
  tally_metric_sample(b, "tally_judge_samples_total", "outcome", "failed",
                      (double)s->judge_failed);
  const tally_judge_client_t *jc = d != NULL ? d->opt.judge : NULL;
  if (jc != NULL) {
    tally_metric_family(b, "tally_judge_requests_total", TALLY_COUNTER,
                        "Requests to the judge model: answered, retried "
                        "(an attempt failed and another follows) and "
                        "failed (no attempt left)");
    tally_metric_sample(b, "tally_judge_requests_total", "outcome", "answered",
                        (double)jc->answered);
    tally_metric_sample(b, "tally_judge_requests_total", "outcome", "retried",
                        (double)jc->retried);
    tally_metric_sample(b, "tally_judge_requests_total", "outcome", "failed",
                        (double)jc->failed);
    gauge(b, "tally_judge_requests_pending",
          "Requests to the judge model in flight or waiting for a turn",
          (double)tally_judge_pending(jc));
  }

  /* Redis. */
  tally_metric_family(b, "tally_redis_up", TALLY_GAUGE,
                      "1 while the connection to Redis is up");
  tally_metric_sample(b, "tally_redis_up", "connection", "read", tot.rd_up);
  tally_metric_sample(b, "tally_redis_up", "connection", "write", tot.wr_up);
  tally_metric_family(b, "tally_redis_reconnects_total", TALLY_COUNTER,
                      "Times a connection to Redis came up again after its "
                      "first");
  tally_metric_sample(b, "tally_redis_reconnects_total", "connection", "read",
                      (double)tot.rd_reconnects);
  tally_metric_sample(b, "tally_redis_reconnects_total", "connection", "write",
                      (double)tot.wr_reconnects);
  if (d != NULL && d->wr.addr.nsentinels > 0) {
    tally_metric_family(b, "tally_redis_master_info", TALLY_GAUGE,
                        "The master the write connection follows, as the "
                        "sentinels name it (address and name as labels); "
                        "always 1");
    tally_metric_sample2(b, "tally_redis_master_info", "master",
                         d->wr.master[0] ? d->wr.master : "none", "name",
                         d->wr.addr.master, 1);
    tally_metric_family(b, "tally_redis_failovers_total", TALLY_COUNTER,
                        "Times the master the sentinels name changed and "
                        "tallyd followed it");
    tally_metric_sample(b, "tally_redis_failovers_total", "connection", "read",
                        (double)tot.rd_failovers);
    tally_metric_sample(b, "tally_redis_failovers_total", "connection", "write",
                        (double)tot.wr_failovers);
  }
  queue_metrics(o, b);
  counter(b, "tally_post_wait_short_total",
          "Posts that reached fewer replicas than --wait-replicas asks "
          "within a second, and were posted again",
          s->wait_short);
  gauge(b, "tally_redis_used_memory_bytes",
        "Redis's used_memory, as tallyd last read it (NaN before)",
        tot.used_memory);
  gauge(b, "tally_stream_lag",
        "Entries of the jobs stream the consumer group has not read yet, as "
        "tallyd last read it (NaN when Redis cannot tell)",
        tot.lag);
  gauge(b, "tally_pending_jobs",
        "Entries pending for this consumer (read and not acknowledged), as "
        "tallyd last read it",
        tot.pending);

  /* Workers. */
  unsigned alive = 0, busy = 0;
  const tally_pool_t *p = o->pool;
  if (p != NULL)
    tally_pool_count(p, &alive, &busy);
  gauge(b, "tally_workers_alive", "Worker processes running", alive);
  gauge(b, "tally_workers_busy", "Worker processes scoring a batch", busy);
  counter(b, "tally_workers_spawned_total", "Worker processes started",
          p != NULL ? p->spawned : 0);
  tally_metric_family(b, "tally_worker_restarts_total", TALLY_COUNTER,
                      "Workers replaced, by cause: exit (it exited or "
                      "crashed), timeout, framing (a broken answer), io (its "
                      "pipes failed)");
  for (int i = 0; i < 4; i++)
    tally_metric_sample(b, "tally_worker_restarts_total", "cause",
                        tally_pool_causes[i],
                        p != NULL ? (double)p->restarts[i] : 0);
  if (p != NULL) {
    tally_metric_hist(b, "tally_worker_batch_seconds",
                      "A batch's time in a worker, from sending it to its "
                      "answer",
                      &p->batch_time);
  } else {
    tally_hist_t none;
    tally_hist_init(&none, tally_hist_latency_bounds, tally_hist_latency_n);
    tally_metric_hist(b, "tally_worker_batch_seconds",
                      "A batch's time in a worker, from sending it to its "
                      "answer",
                      &none);
  }

  /* Rescores and reloads. */
  gauge(b, "tally_rescore_running", "1 while a rescore runs",
        d != NULL ? d->probe.rescore_running : NAN);
  gauge(b, "tally_rescore_submissions_done",
        "Submissions the running (or last) rescore has gone over",
        d != NULL ? d->probe.rescore_done : NAN);
  gauge(b, "tally_rescore_submissions",
        "Submissions the running (or last) rescore goes over in all",
        d != NULL ? d->probe.rescore_total : NAN);
  tally_metric_family(b, "tally_config_reloads_total", TALLY_COUNTER,
                      "Config reloads (SIGHUP), by result");
  tally_metric_sample(b, "tally_config_reloads_total", "result", "accepted",
                      (double)o->reloads_accepted);
  tally_metric_sample(b, "tally_config_reloads_total", "result", "refused",
                      (double)o->reloads_refused);
  if (o->http != NULL)
    counter(b, "tally_http_requests_total", "HTTP requests answered",
            __atomic_load_n(&o->http->requests, __ATOMIC_RELAXED));
  if (o->api != NULL) {
    gauge(b, "tally_event_streams", "Scoreboard event streams open",
          __atomic_load_n(&o->api->nsses, __ATOMIC_RELAXED));
    counter(b, "tally_event_stream_events_total",
            "Events written to scoreboard event streams, one per stream",
            __atomic_load_n(&o->api->sse_events, __ATOMIC_RELAXED));
    counter(b, "tally_event_streams_dropped_total",
            "Event streams ended for falling too far behind",
            __atomic_load_n(&o->api->sse_dropped, __ATOMIC_RELAXED));
    gauge(b, "tally_event_stream_buffer_bytes",
          "Bytes the event streams' buffers hold together",
          __atomic_load_n(&o->api->sse_bytes, __ATOMIC_RELAXED));
    gauge(b, "tally_event_stream_buffer_budget_bytes",
          "The most the event streams' buffers may hold together",
          o->api->sse_budget);
    gauge(b, "tally_ccs_event_feeds", "CCS Contest API event feeds open",
          __atomic_load_n(&o->api->nccs_feeds, __ATOMIC_RELAXED));
    tally_metric_family(b, "tally_rws_puts_total", TALLY_COUNTER,
                        "PUTs to CMS Ranking Web Servers, by outcome");
    tally_metric_sample(
        b, "tally_rws_puts_total", "outcome", "taken",
        (double)__atomic_load_n(&o->api->rws_taken, __ATOMIC_RELAXED));
    tally_metric_sample(
        b, "tally_rws_puts_total", "outcome", "failed",
        (double)__atomic_load_n(&o->api->rws_failed, __ATOMIC_RELAXED));
    gauge(b, "tally_rws_servers_failing",
          "CMS Ranking Web Servers a push is failing to reach now",
          __atomic_load_n(&o->api->rws_failing, __ATOMIC_RELAXED));
  }
}

bool tally_ops_ready(const tally_ops_t *o, char *why, size_t whylen) {
  if (o->ndisps == 0) {
    snprintf(why, whylen, "starting");
    return false;
  }
  for (size_t i = 0; i < o->ndisps; i++) {
    char one[400];
    if (!tally_dispatch_ready(&o->disps[i], one, sizeof(one))) {
      if (o->ndisps == 1)
        snprintf(why, whylen, "%s", one);
      else
        snprintf(why, whylen, "queue %s: %s", o->disps[i].opt.queue, one);
      return false;
    }
  }
  unsigned alive = 0, busy = 0;
  if (o->pool != NULL)
    tally_pool_count(o->pool, &alive, &busy);
  if (alive == 0) {
    snprintf(why, whylen, "no worker is alive");
    return false;
  }
  if (o->api != NULL &&
      !__atomic_load_n(&o->api->tail_known, __ATOMIC_ACQUIRE)) {
    snprintf(why, whylen,
             "the results API has not yet read where the event stream ends");
    return false;
  }
  if (o->api != NULL &&
      !__atomic_load_n(&o->api->contests_known, __ATOMIC_ACQUIRE)) {
    snprintf(why, whylen,
             "the results API has not yet published the configured contests "
             "and their queues");
    return false;
  }
  return true;
}

void tally_ops_answer(const tally_ops_t *o, const char *path,
                      tally_http_reply_t *out) {
  if (strcmp(path, "/metrics") == 0) {
    out->type = "text/plain; version=0.0.4; charset=utf-8";
    tally_ops_metrics(o, &out->body);
  } else if (strcmp(path, "/readyz") == 0) {
    char why[512];
    if (tally_ops_ready(o, why, sizeof(why))) {
      tally_buf_puts(&out->body, "ready\n");
      const tally_redis_t *w = &o->disps[0].wr;
      if (w->addr.nsentinels > 0) {
        char line[400];
        snprintf(line, sizeof(line),
                 "master %s at %s, as the sentinels name it; failovers "
                 "followed: %llu\n",
                 w->addr.master, w->master, (unsigned long long)w->failovers);
        tally_buf_puts(&out->body, line);
      }
      for (size_t i = 0; i < o->ndisps; i++) {
        const tally_dispatch_t *q = &o->disps[i];
        char line[400];
        if (q->wr.cluster)
          snprintf(line, sizeof(line),
                   "queue %s: cluster slot %d at master %s; failovers and slot "
                   "moves followed: %llu\n",
                   q->opt.queue, q->wr.follow_slot, q->wr.master,
                   (unsigned long long)q->wr.failovers);
        else if (o->ndisps > 1)
          snprintf(line, sizeof(line), "queue %s\n", q->opt.queue);
        else
          continue;
        tally_buf_puts(&out->body, line);
      }
    } else {
      out->status = 503;
      tally_buf_puts(&out->body, why);
      tally_buf_putc(&out->body, '\n');
    }
  } else {
    /* /healthz: answered at all means the main loop turns. */
    tally_buf_puts(&out->body, "ok\n");
  }
}
