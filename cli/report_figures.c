/* The figures of tally report (docs/benchmarks.md), written as JSON: per
 * participant the mean reward, pass@k with intervals, the categories,
 * and the failure analysis; the same failure analysis over everyone.
 * The table and the HTML page are drawn from this JSON (report_print.c). */
#include "cli/report.h"
#include "stats/failure.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The rank of each name in byte order, so that sorting by rank sorts by
 * name. */
static uint32_t *ranks(const report_names_t *t) {
  size_t n = t->n;
  uint32_t *order = malloc((n + 1) * sizeof(*order));
  uint32_t *rank = malloc((n + 1) * sizeof(*rank));
  if (order == NULL || rank == NULL) {
    free(order);
    free(rank);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    order[i] = (uint32_t)i;
  /* Insertion into a sorted order: names are few (participants, tasks,
   * categories), but tasks may be thousands, so a merge sort. */
  uint32_t *tmp = malloc((n + 1) * sizeof(*tmp));
  if (tmp == NULL) {
    free(order);
    free(rank);
    return NULL;
  }
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n,
             hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi)
        tmp[o++] = strcmp(t->names[order[b]], t->names[order[a]]) < 0
                       ? order[b++]
                       : order[a++];
      while (a < mid)
        tmp[o++] = order[a++];
      while (b < hi)
        tmp[o++] = order[b++];
    }
    memcpy(order, tmp, n * sizeof(*order));
  }
  free(tmp);
  for (size_t i = 0; i < n; i++)
    rank[order[i]] = (uint32_t)i;
  free(order);
  return rank;
}

typedef struct sorter_s {
  uint32_t *prank, *trank, *crank;
} sorter_t;

/* One stable counting pass: s into out by rank[field], k ranks. */
static int count_pass(const report_sample_t *s, report_sample_t *out, size_t n,
                      const uint32_t *rank, size_t k, size_t field) {
  size_t *at = calloc(k + 1, sizeof(*at));
  if (at == NULL)
    return TALLY_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const uint32_t *f = (const uint32_t *)((const char *)&s[i] + field);
    at[rank[*f] + 1]++;
  }
  for (size_t r = 1; r <= k; r++)
    at[r] += at[r - 1];
  for (size_t i = 0; i < n; i++) {
    const uint32_t *f = (const uint32_t *)((const char *)&s[i] + field);
    out[at[rank[*f]]++] = s[i];
  }
  free(at);
  return 0;
}

/* Sorts the samples by participant, then task, then category (names in
 * byte order): three stable counting passes, least significant first. */
static int sort_samples(report_data_t *d, const sorter_t *st) {
  report_sample_t *tmp = malloc((d->n + 1) * sizeof(*tmp));
  if (tmp == NULL)
    return TALLY_ENOMEM;
  int rc = count_pass(d->samples, tmp, d->n, st->crank, d->categories.n,
                      offsetof(report_sample_t, category));
  if (rc == 0)
    rc = count_pass(tmp, d->samples, d->n, st->trank, d->tasks.n,
                    offsetof(report_sample_t, task));
  if (rc == 0)
    rc = count_pass(d->samples, tmp, d->n, st->prank, d->participants.n,
                    offsetof(report_sample_t, participant));
  if (rc == 0)
    memcpy(d->samples, tmp, d->n * sizeof(*tmp));
  free(tmp);
  return rc;
}

/* One problem of one participant (in one category, for the breakdown). */
typedef struct cell_s {
  uint32_t task, category;
  long n, c;
  double sum;
} cell_t;

/* Participant's cells by category, then task. */
static int cmp_cell_category(const void *a, const void *b, void *ctx) {
  const sorter_t *sorter = ctx;
  const cell_t *x = a, *y = b;
  uint32_t cx = sorter->crank[x->category], cy = sorter->crank[y->category];
  if (cx != cy)
    return cx < cy ? -1 : 1;
  uint32_t tx = sorter->trank[x->task], ty = sorter->trank[y->task];
  return (tx > ty) - (tx < ty);
}

static void put_key(tally_buf_t *b, const char *k) {
  tally_json_str(b, k);
  tally_buf_putc(b, ':');
}

static void put_num(tally_buf_t *b, const char *k, double v, bool comma) {
  put_key(b, k);
  tally_json_num(b, v);
  if (comma)
    tally_buf_putc(b, ',');
}

static void put_interval(tally_buf_t *b, const char *k, tally_interval_t iv) {
  put_key(b, k);
  tally_buf_putc(b, '{');
  put_num(b, "mean", iv.mean, true);
  put_num(b, "lower", iv.lower, true);
  put_num(b, "upper", iv.upper, false);
  tally_buf_putc(b, '}');
}

/* "mean" over values, with its bootstrap and normal intervals. */
static void put_intervals(tally_buf_t *b, const report_opts_t *o,
                          const double *v, size_t m, double *scratch) {
  put_interval(
      b, "bootstrap",
      tally_bootstrap(v, m, o->resamples, o->seed, o->confidence, scratch));
  tally_buf_putc(b, ',');
  put_interval(b, "normal", tally_normal_interval(v, m, o->confidence));
}

/* Up to REPORT_EXEMPLARS failures of each category, in submission id
 * order. */
static int cmp_failure(const void *a, const void *b) {
  const report_sample_t *x = *(report_sample_t *const *)a;
  const report_sample_t *y = *(report_sample_t *const *)b;
  if (x->failure != y->failure)
    return x->failure < y->failure ? -1 : 1;
  return strcmp(x->id, y->id);
}

static int put_failures(tally_buf_t *b, const report_data_t *d,
                        const report_sample_t *s, size_t n) {
  size_t ncat = 0;
  while (tally_failure_categories[ncat] != NULL)
    ncat++;
  size_t *count = calloc(ncat + 1, sizeof(*count));
  const report_sample_t **failed = malloc((n + 1) * sizeof(*failed));
  if (count == NULL || failed == NULL) {
    free(count);
    free(failed);
    return TALLY_ENOMEM;
  }
  size_t nf = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].failure >= 0) {
      count[s[i].failure]++;
      failed[nf++] = &s[i];
    }
  qsort(failed, nf, sizeof(*failed), cmp_failure);
  put_key(b, "failure_analysis");
  tally_buf_putc(b, '{');
  put_num(b, "total_failures", (double)nf, true);
  put_num(b, "failure_rate", n > 0 ? (double)nf / (double)n : 0, true);
  put_key(b, "categories");
  tally_buf_putc(b, '{');
  bool first = true;
  for (size_t c = 0; c < ncat; c++) {
    if (count[c] == 0)
      continue;
    if (!first)
      tally_buf_putc(b, ',');
    first = false;
    put_key(b, tally_failure_categories[c]);
    tally_buf_putc(b, '{');
    put_num(b, "count", (double)count[c], true);
    put_num(b, "rate", (double)count[c] / (double)n, false);
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "},");
  put_key(b, "exemplars");
  tally_buf_putc(b, '[');
  first = true;
  for (size_t i = 0, taken = 0; i < nf; i++) {
    taken =
        i > 0 && failed[i]->failure == failed[i - 1]->failure ? taken + 1 : 0;
    if (taken >= REPORT_EXEMPLARS)
      continue;
    const report_sample_t *f = failed[i];
    if (!first)
      tally_buf_putc(b, ',');
    first = false;
    tally_buf_putc(b, '{');
    put_key(b, "category");
    tally_json_str(b, tally_failure_categories[f->failure]);
    tally_buf_putc(b, ',');
    put_key(b, "task");
    tally_json_str(b, d->tasks.names[f->task]);
    tally_buf_putc(b, ',');
    put_key(b, "participant");
    tally_json_str(b, d->participants.names[f->participant]);
    tally_buf_putc(b, ',');
    put_key(b, "submission");
    tally_json_str(b, f->id);
    tally_buf_putc(b, ',');
    put_key(b, "response_preview");
    tally_json_str(b, f->preview != NULL ? f->preview : "");
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "]}");
  free(count);
  free(failed);
  return 0;
}

/* The figures of one participant: samples s[0..n), sorted by task. */
static int put_participant(tally_buf_t *b, const report_data_t *d,
                           const report_opts_t *o, sorter_t *st,
                           const report_sample_t *s, size_t n,
                           double *scratch) {
  /* Problems: one cell per task, and one per (task, category). */
  cell_t *cells = calloc(n + 1, sizeof(*cells));
  cell_t *ccells = calloc(n + 1, sizeof(*ccells));
  double *v = malloc((n + 1) * sizeof(*v));
  if (cells == NULL || ccells == NULL || v == NULL) {
    free(cells);
    free(ccells);
    free(v);
    return TALLY_ENOMEM;
  }
  size_t np = 0, nc = 0;
  long correct = 0, judge[4] = {0, 0, 0, 0};
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].judge > 0 && s[i].judge < 4)
      judge[s[i].judge]++;
    if (np == 0 || cells[np - 1].task != s[i].task)
      cells[np++] = (cell_t){.task = s[i].task, .category = s[i].category};
    if (nc == 0 || ccells[nc - 1].task != s[i].task ||
        ccells[nc - 1].category != s[i].category)
      ccells[nc++] = (cell_t){.task = s[i].task, .category = s[i].category};
    cell_t *cs[2] = {&cells[np - 1], &ccells[nc - 1]};
    for (int k = 0; k < 2; k++) {
      cs[k]->n++;
      cs[k]->c += s[i].correct;
      cs[k]->sum += s[i].reward;
    }
    correct += s[i].correct;
    sum += s[i].reward;
  }
  tally_buf_putc(b, '{');
  put_key(b, "participant");
  tally_json_str(b, d->participants.names[s[0].participant]);
  tally_buf_putc(b, ',');
  put_num(b, "samples", (double)n, true);
  put_num(b, "problems", (double)np, true);
  put_num(b, "correct", (double)correct, true);
  put_num(b, "accuracy", (double)correct / (double)n, true);
  put_num(b, "mean_reward", sum / (double)n, true);
  if (judge[1] + judge[2] + judge[3] > 0) {
    /* The samples of judged tasks: with a verdict, with a reply that gave
     * none, and never judged. */
    put_key(b, "judge");
    tally_buf_putc(b, '{');
    put_num(b, "judged", (double)judge[1], true);
    put_num(b, "unparseable", (double)judge[2], true);
    put_num(b, "unjudged", (double)judge[3], false);
    tally_buf_puts(b, "},");
  }
  for (size_t i = 0; i < np; i++)
    v[i] = cells[i].sum / (double)cells[i].n;
  put_key(b, "problem_mean_reward");
  tally_buf_putc(b, '{');
  put_intervals(b, o, v, np, scratch);
  tally_buf_puts(b, "},");
  put_key(b, "pass_at_k");
  tally_buf_putc(b, '[');
  for (size_t j = 0; j < o->nk; j++) {
    long k = o->k[j];
    size_t m = 0;
    for (size_t i = 0; i < np; i++)
      if (cells[i].n >= k)
        v[m++] = tally_pass_at_k(cells[i].n, cells[i].c, k);
    double mean = 0;
    for (size_t i = 0; i < m; i++)
      mean += v[i];
    mean = m > 0 ? mean / (double)m : 0;
    if (j > 0)
      tally_buf_putc(b, ',');
    tally_buf_putc(b, '{');
    put_num(b, "k", (double)k, true);
    if (m > 0)
      put_num(b, "value", mean, true);
    else
      tally_buf_puts(b, "\"value\":null,");
    put_num(b, "problems", (double)m, true);
    put_num(b, "left_out", (double)(np - m), true);
    put_intervals(b, o, v, m, scratch);
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "],");
  /* Categories, by name; each problem once per category it has samples
   * in. */
  qsort_r(ccells, nc, sizeof(*ccells), cmp_cell_category, st);
  put_key(b, "categories");
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < nc;) {
    size_t j = i;
    long cn = 0, cc = 0;
    double csum = 0;
    for (; j < nc && ccells[j].category == ccells[i].category; j++) {
      cn += ccells[j].n;
      cc += ccells[j].c;
      csum += ccells[j].sum;
      v[j - i] = ccells[j].sum / (double)ccells[j].n;
    }
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_buf_putc(b, '{');
    put_key(b, "category");
    tally_json_str(b, d->categories.names[ccells[i].category]);
    tally_buf_putc(b, ',');
    put_num(b, "samples", (double)cn, true);
    put_num(b, "problems", (double)(j - i), true);
    put_num(b, "correct", (double)cc, true);
    put_num(b, "mean_reward", csum / (double)cn, true);
    put_key(b, "problem_mean_reward");
    tally_buf_putc(b, '{');
    put_intervals(b, o, v, j - i, scratch);
    tally_buf_puts(b, "}}");
    i = j;
  }
  tally_buf_puts(b, "],");
  free(cells);
  free(ccells);
  free(v);
  int rc = put_failures(b, d, s, n);
  tally_buf_putc(b, '}');
  return rc;
}

int report_json(report_data_t *d, const report_opts_t *o, tally_buf_t *b) {
  sorter_t st = {ranks(&d->participants), ranks(&d->tasks),
                 ranks(&d->categories)};
  double *scratch = malloc(((size_t)o->resamples + 1) * sizeof(double));
  int rc = 0;
  if (st.prank == NULL || st.trank == NULL || st.crank == NULL ||
      scratch == NULL) {
    rc = TALLY_ENOMEM;
    goto done;
  }
  if ((rc = sort_samples(d, &st)) != 0)
    goto done;
  tally_buf_putc(b, '{');
  put_key(b, "contest");
  if (o->contest != NULL)
    tally_json_str(b, o->contest);
  else
    tally_buf_puts(b, "null");
  tally_buf_putc(b, ',');
  put_key(b, "participant");
  if (o->participant != NULL)
    tally_json_str(b, o->participant);
  else
    tally_buf_puts(b, "null");
  tally_buf_putc(b, ',');
  put_key(b, "k");
  tally_buf_putc(b, '[');
  for (size_t j = 0; j < o->nk; j++) {
    if (j > 0)
      tally_buf_putc(b, ',');
    tally_json_num(b, (double)o->k[j]);
  }
  tally_buf_puts(b, "],");
  put_num(b, "bootstrap", (double)o->resamples, true);
  put_num(b, "seed", (double)o->seed, true);
  put_num(b, "confidence", o->confidence, true);
  put_num(b, "samples", (double)d->n, true);
  put_num(b, "problems", (double)d->tasks.n, true);
  put_num(b, "unscored", (double)d->unscored, true);
  put_key(b, "participants");
  tally_buf_putc(b, '[');
  for (size_t i = 0; i < d->n && rc == 0;) {
    size_t j = i;
    while (j < d->n && d->samples[j].participant == d->samples[i].participant)
      j++;
    if (i > 0)
      tally_buf_putc(b, ',');
    rc = put_participant(b, d, o, &st, d->samples + i, j - i, scratch);
    i = j;
  }
  tally_buf_puts(b, "],");
  if (rc == 0)
    rc = put_failures(b, d, d->samples, d->n);
  tally_buf_putc(b, '}');
  if (rc == 0 && b->oom)
    rc = TALLY_ENOMEM;
done:
  free(st.prank);
  free(st.trank);
  free(st.crank);
  free(scratch);
  return rc;
}
