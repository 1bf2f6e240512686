/* tallyd's metrics (metrics.h): latency histograms, and families,
 * samples and histograms written in Prometheus's text format 0.0.4. */
#include "daemon/metrics.h"

#include <math.h>
#include <stdio.h>

const double tally_hist_latency_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025,
                                            0.05,  0.1,    0.25,  0.5,  1,
                                            2.5,   5,      10,    30,   60};
const size_t tally_hist_latency_n =
    sizeof(tally_hist_latency_bounds) / sizeof(tally_hist_latency_bounds[0]);

void tally_hist_init(tally_hist_t *h, const double *bounds, size_t n) {
  *h = (tally_hist_t){.bounds = bounds,
                      .n = n < TALLY_HIST_MAX ? n : TALLY_HIST_MAX};
}

void tally_hist_observe(tally_hist_t *h, double v) {
  if (!(v > 0))
    v = 0;
  size_t i = 0;
  while (i < h->n && v > h->bounds[i])
    i++;
  h->counts[i]++;
  h->count++;
  h->sum += v;
}

static void put_value(tally_buf_t *b, double v) {
  if (isnan(v))
    tally_buf_puts(b, "NaN");
  else if (isinf(v))
    tally_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
  else
    tally_json_num(b, v);
}

void tally_metric_family(tally_buf_t *b, const char *name, tally_mtype_t type,
                         const char *help) {
  static const char *const types[] = {"counter", "gauge", "histogram"};
  tally_buf_puts(b, "# HELP ");
  tally_buf_puts(b, name);
  tally_buf_putc(b, ' ');
  /* HELP escapes backslash and newline; the callers' texts have neither,
   * but a future one must not break the format. */
  for (const char *s = help; *s; s++) {
    if (*s == '\\')
      tally_buf_puts(b, "\\\\");
    else if (*s == '\n')
      tally_buf_puts(b, "\\n");
    else
      tally_buf_putc(b, *s);
  }
  tally_buf_puts(b, "\n# TYPE ");
  tally_buf_puts(b, name);
  tally_buf_putc(b, ' ');
  tally_buf_puts(b, types[type]);
  tally_buf_putc(b, '\n');
}

/* label="value", the value escaped. */
static void put_label(tally_buf_t *b, const char *label, const char *value) {
  tally_buf_puts(b, label);
  tally_buf_puts(b, "=\"");
  for (const char *s = value; *s; s++) {
    if (*s == '\\' || *s == '"')
      tally_buf_putc(b, '\\');
    if (*s == '\n')
      tally_buf_puts(b, "\\n");
    else
      tally_buf_putc(b, *s);
  }
  tally_buf_putc(b, '"');
}

void tally_metric_sample(tally_buf_t *b, const char *name, const char *label,
                         const char *value, double v) {
  tally_buf_puts(b, name);
  if (label != NULL) {
    tally_buf_putc(b, '{');
    put_label(b, label, value);
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, ' ');
  put_value(b, v);
  tally_buf_putc(b, '\n');
}

void tally_metric_sample2(tally_buf_t *b, const char *name, const char *label1,
                          const char *value1, const char *label2,
                          const char *value2, double v) {
  tally_buf_puts(b, name);
  tally_buf_putc(b, '{');
  put_label(b, label1, value1);
  tally_buf_putc(b, ',');
  put_label(b, label2, value2);
  tally_buf_puts(b, "} ");
  put_value(b, v);
  tally_buf_putc(b, '\n');
}

void tally_metric_hist(tally_buf_t *b, const char *name, const char *help,
                       const tally_hist_t *h) {
  tally_metric_family(b, name, TALLY_HISTOGRAM, help);
  char key[128], le[32];
  snprintf(key, sizeof(key), "%s_bucket", name);
  uint64_t sum = 0;
  for (size_t i = 0; i < h->n; i++) {
    sum += h->counts[i];
    /* The bounds are short decimals, which %g writes exactly. */
    snprintf(le, sizeof(le), "%g", h->bounds[i]);
    tally_metric_sample(b, key, "le", le, (double)sum);
  }
  tally_metric_sample(b, key, "le", "+Inf", (double)h->count);
  snprintf(key, sizeof(key), "%s_sum", name);
  tally_metric_sample(b, key, NULL, NULL, h->sum);
  snprintf(key, sizeof(key), "%s_count", name);
  tally_metric_sample(b, key, NULL, NULL, (double)h->count);
}
