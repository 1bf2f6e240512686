/* What tallyd shows an operator over HTTP (docs/operations.md#http):
 * /metrics in Prometheus's text format, /healthz and /readyz. Everything
 * is read from the main loop's own state when asked; nothing here
 * blocks. */
#ifndef TALLY_OPS_H
#define TALLY_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/api.h"
#include "daemon/dispatch.h"
#include "daemon/http.h"
#include "daemon/pool.h"

typedef struct tally_ops_s {
  tally_dispatch_t *disps; /* borrowed: one per queue consumed */
  size_t ndisps;
  tally_pool_t *pool;       /* borrowed; NULL while it is not up */
  const tally_http_t *http; /* borrowed (its loop is another thread's);
                              NULL when off */
  const tally_api_t *api;   /* the same; NULL without the results API */
  uint64_t reloads_accepted, reloads_refused;
  double start_time; /* seconds since the epoch */
} tally_ops_t;

/* Answers GET path, one of /metrics, /healthz and /readyz, into out, on
 * the main loop (daemon/front.h brings the request there). */
void tally_ops_answer(const tally_ops_t *o, const char *path,
                      tally_http_reply_t *out);

/* Writes every metric into b. */
void tally_ops_metrics(const tally_ops_t *o, tally_buf_t *b);

/* Whether tallyd can score now: both Redis connections up, the scripts
 * loaded, at least one worker alive. When not, why says what is missing
 * in one line. */
bool tally_ops_ready(const tally_ops_t *o, char *why, size_t whylen);

#endif
