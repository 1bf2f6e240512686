/* What tallyd shows an operator over HTTP (docs/operations.md#http):
 * /metrics in Prometheus's text format, /healthz and /readyz. Everything
 * is read from the loop's own state when asked; nothing here blocks. */
#ifndef TALLY_OPS_H
#define TALLY_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/dispatch.h"
#include "daemon/http.h"
#include "daemon/pool.h"

typedef struct tally_ops_s {
  tally_dispatch_t *disp;   /* borrowed */
  tally_pool_t *pool;       /* borrowed; NULL while it is not up */
  const tally_http_t *http; /* borrowed; NULL when off */
  uint64_t reloads_accepted, reloads_refused;
  double start_time; /* seconds since the epoch */
  /* The results API (daemon/api.h), or NULL. api_cb returns 0 for a
   * path it does not serve, 1 once it has filled the reply, 2 when it
   * will (then it calls tally_http_answer). */
  void *api;
  int (*api_cb)(void *api, tally_http_req_t *r);
} tally_ops_t;

/* The HTTP handler: h->data is a tally_ops_t. */
bool tally_ops_handle(tally_http_t *h, tally_http_req_t *r);

/* Writes every metric into b. */
void tally_ops_metrics(const tally_ops_t *o, tally_buf_t *b);

/* Whether tallyd can score now: both Redis connections up, the scripts
 * loaded, at least one worker alive. When not, why says what is missing
 * in one line. */
bool tally_ops_ready(const tally_ops_t *o, char *why, size_t whylen);

#endif
