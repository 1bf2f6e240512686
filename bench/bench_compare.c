/* Measures the throughput of every built-in comparator, in MB of output
 * per second, on 10 MB outputs that equal the expected output and on ones
 * that differ in their last line (bench/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tasktypes/comparators.h"

/* Parameters for the comparators that need some. regex scans the whole
 * output for its last line. */
static const char *params_for(const char *name) {
  if (strcmp(name, "regex") == 0)
    return "{\"pattern\": \"the answer is \\\\d+\\\\.\\\\d+\\\\s*\\\\z\"}";
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Builds about size bytes of lines like "case 12: the answer is 7.25". */
static char *make_text(size_t size, size_t *len) {
  char *t = malloc(size + 64);
  if (t == NULL)
    abort();
  size_t n = 0;
  unsigned seed = 12345;
  for (size_t i = 0; n < size; i++) {
    seed = seed * 1103515245u + 12345u;
    n += (size_t)sprintf(t + n, "case %zu: the answer is %u.%02u\n", i,
                         (seed >> 8) % 100000, (seed >> 4) % 100);
  }
  *len = n;
  return t;
}

static void *parse_or_die(const tally_comparator_t *c) {
  const char *params = params_for(c->name);
  void *state = NULL;
  if (c->parse == NULL)
    return NULL;
  tally_diag_t d;
  tally_jpath_t path;
  tally_diag_init(&d, "bench");
  tally_jpath_init(&path);
  cJSON *json = params ? cJSON_Parse(params) : NULL;
  if (c->parse(json, &state, &d, &path) != 0) {
    fprintf(stderr, "%s: %s\n", c->name, d.count ? d.msgs[0] : "bad params");
    exit(1);
  }
  cJSON_Delete(json);
  tally_diag_close(&d);
  return state;
}

/* The median MB/s of runs comparisons of out with exp; exits if the
 * comparison fails or its outcome is not the one wanted (-1: any). */
static double measure(const tally_comparator_t *c, const void *state,
                      const char *out, size_t out_len, const char *exp,
                      size_t exp_len, int runs, double want, double *outcome) {
  double rates[64];
  for (int r = 0; r < runs; r++) {
    tally_compare_result_t res;
    char err[256];
    double t0 = now();
    int rc =
        c->compare(state, out, out_len, exp, exp_len, &res, err, sizeof(err));
    double t = now() - t0;
    if (rc != 0) {
      fprintf(stderr, "%s: %s\n", c->name, err);
      exit(1);
    }
    if (want >= 0 && res.outcome != want) {
      fprintf(stderr, "%s: outcome %g, wanted %g\n", c->name, res.outcome,
              want);
      exit(1);
    }
    *outcome = res.outcome;
    rates[r] = (double)out_len / 1e6 / (t > 0 ? t : 1e-9);
  }
  qsort(rates, (size_t)runs, sizeof(rates[0]), by_value);
  return rates[runs / 2];
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  double mb = argc > 2 ? atof(argv[2]) : 10;
  if (runs < 1 || runs > 64 || !(mb > 0 && mb <= 1000)) {
    fprintf(stderr, "usage: bench_compare [RUNS (1-64, default 5)] "
                    "[MB (default 10)]\n");
    return 2;
  }
  size_t len;
  char *exp = make_text((size_t)(mb * 1e6), &len);
  char *diff = malloc(len);
  if (diff == NULL)
    abort();
  memcpy(diff, exp, len);
  /* The last line differs in a word ("the answer Is", which the regex
   * does not match) and in its last digit (which the comparators that
   * normalize case see). */
  char *last = diff + len - 2;
  while (last > diff && last[-1] != '\n')
    last--;
  char *is = strstr(last, " is ");
  is[1] = 'I';
  diff[len - 2] = diff[len - 2] == '9' ? '0' : (char)(diff[len - 2] + 1);

  printf("comparator          equal MB/s  differing MB/s  (outcome)\n");
  for (size_t i = 0; tally_comparators[i] != NULL; i++) {
    const tally_comparator_t *c = tally_comparators[i];
    void *state = parse_or_die(c);
    double o_eq, o_diff;
    double eq = measure(c, state, exp, len, exp, len, runs, 1, &o_eq);
    double df = measure(c, state, diff, len, exp, len, runs, -1, &o_diff);
    printf("%-18s %11.1f %15.1f  (%.8g)\n", c->name, eq, df, o_diff);
    if (c->free != NULL)
      c->free(state);
  }
  printf("%.1f MB outputs, median of %d runs each\n", (double)len / 1e6, runs);
  free(diff);
  free(exp);
  return 0;
}
