/* What tallyd's /metrics shows: histograms kept on the loop, and a writer
 * of the Prometheus text exposition format, version 0.0.4
 * (docs/operations.md#metrics). */
#ifndef TALLY_METRICS_H
#define TALLY_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "config/jsonw.h"

#define TALLY_HIST_MAX 16

/* A histogram with fixed upper bounds, in seconds: counts[i] holds the
 * observations at most bounds[i] (not cumulative; the writer sums them),
 * counts[n] those above the last bound. */
typedef struct tally_hist_s {
  const double *bounds;
  size_t n;
  uint64_t counts[TALLY_HIST_MAX + 1];
  uint64_t count;
  double sum;
} tally_hist_t;

/* The bounds every tallyd histogram of a latency uses: 1 ms to 60 s. */
extern const double tally_hist_latency_bounds[];
extern const size_t tally_hist_latency_n;

/* Prepares h with n (at most TALLY_HIST_MAX) increasing bounds, which
 * must outlive it. */
void tally_hist_init(tally_hist_t *h, const double *bounds, size_t n);
/* Counts one observation of v seconds (a negative or NaN one as 0). */
void tally_hist_observe(tally_hist_t *h, double v);

/* Writing the text format. Each family is a HELP and a TYPE line followed
 * by its samples; a name must follow Prometheus's rules
 * ([a-zA-Z_:][a-zA-Z0-9_:]*), which the callers' constant names do. */
typedef enum { TALLY_COUNTER, TALLY_GAUGE, TALLY_HISTOGRAM } tally_mtype_t;

void tally_metric_family(tally_buf_t *b, const char *name, tally_mtype_t type,
                         const char *help);
/* One sample: name{label="value"} v, or name v when label is NULL. The
 * label value is escaped (backslash, quote, newline). NaN and infinities
 * are written as Prometheus reads them. */
void tally_metric_sample(tally_buf_t *b, const char *name, const char *label,
                         const char *value, double v);
/* One sample with two labels. */
void tally_metric_sample2(tally_buf_t *b, const char *name, const char *label1,
                          const char *value1, const char *label2,
                          const char *value2, double v);
/* A whole histogram family: name_bucket{le=...} (cumulative, with +Inf),
 * name_sum and name_count. */
void tally_metric_hist(tally_buf_t *b, const char *name, const char *help,
                       const tally_hist_t *h);

#endif
