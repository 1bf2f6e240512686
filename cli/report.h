/* tally report (docs/benchmarks.md): the statistics of a benchmark over
 * scored submissions. report.c reads the samples (from Redis, or by
 * scoring job files offline), report_samples.c decodes each stored
 * summary into a sample, report_figures.c computes every figure and
 * writes them as JSON, report_print.c as a table or an HTML page. */
#ifndef TALLY_CLI_REPORT_H
#define TALLY_CLI_REPORT_H

#include "config/error.h"
#include "config/jsonw.h"
#include "stats/estimates.h"
#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_MAX_K 16
#define REPORT_EXEMPLARS 3
#define REPORT_PREVIEW 200

/* Interned strings: each distinct name once, numbered in the order met. */
typedef struct report_names_s {
  char **names;
  size_t n, cap;
  uint32_t *slots; /* open addressing: index + 1, 0 empty */
  size_t nslots;
} report_names_t;

/* One scored submission, as the report reads its summary. */
typedef struct report_sample_s {
  uint32_t participant, task, category; /* in the report's name tables */
  double reward;                        /* score / max_score */
  bool correct;                         /* reward >= correct_threshold */
  int failure; /* index in tally_failure_categories, or -1 */
  /* A judged task's sample (engine/judge.h): 0 none, 1 judged, 2
   * unparseable, 3 unjudged. */
  signed char judge;
  char *id;      /* the submission id; owned, only for a failure */
  char *preview; /* owned, only for a failure */
} report_sample_t;

typedef struct report_opts_s {
  const char *contest, *participant;
  long k[REPORT_MAX_K];
  size_t nk;
  long resamples;
  uint64_t seed;
  double confidence;
  bool by_category;
} report_opts_t;

/* What is read, before the figures. */
typedef struct report_data_s {
  report_names_t participants, tasks, categories;
  report_sample_t *samples;
  size_t n, cap;
  size_t unscored; /* dead letters, and jobs the configs cannot score */
} report_data_t;

void report_data_init(report_data_t *d);
void report_data_close(report_data_t *d);

/* The number of name in t, adding it. Returns UINT32_MAX when out of
 * memory. */
uint32_t report_intern(report_names_t *t, const char *name);
void report_names_close(report_names_t *t);

/* The text of an id as a summary holds it: a string, or a number as
 * tally writes it (into buf); NULL for anything else. */
const char *report_id_text(const cJSON *v, char *buf, size_t cap);

/* Reads one summary (docs/contest.md) into d, when it belongs to the
 * report (its contest and participant, when opts name them). refusals
 * (NULL: as scored) replaces the refusal phrases: job is then the
 * submission's job text, from which the response and error are read
 * again. Returns 0, TALLY_ENOMEM, or TALLY_EJOB for a summary that is
 * not one (err says why). */
int report_add_summary(report_data_t *d, const report_opts_t *o,
                       const char *summary, size_t len, const char *id,
                       const char *const *refusals, size_t nrefusals,
                       const char *job, size_t job_len, char *err,
                       size_t errlen);

/* Writes the report of d as JSON (docs/benchmarks.md) to b. Sorts d's
 * samples. Returns 0 or TALLY_ENOMEM. */
int report_json(report_data_t *d, const report_opts_t *o, tally_buf_t *b);

#endif
