/* tally score --elo: the Elo ratings that the job files' matches give
 * (docs/challenges.md), as tallyd's contest state would keep them: a later
 * job of a submission replaces the earlier one, and each participant's
 * rated matches in each contest are replayed with tally_elo_replay. */
#include "cli/cli.h"
#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One job that names its submission and participant. */
typedef struct seen_s {
  char *submission, *participant, *contest; /* owned */
  unsigned long seq;                        /* input order */
  bool rated;
  tally_elo_match_t m;
} seen_t;

typedef struct elo_run_s {
  tally_engine_t *e;
  tally_buf_t *out;
  seen_t *seen;
  size_t n, cap;
  long failed;
  const char *name;
} elo_run_t;

static int elo_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  elo_run_t *r = ctx;
  bool blank;
  int rc = cli_score_line(r->e, r->out, line, len, r->name, lineno,
                          "not scored", &r->failed, &blank);
  if (blank)
    return 0;
  if (rc == TALLY_ENOMEM)
    return TALLY_ENOMEM;
  const tally_job_t *j = &r->e->job;
  /* A job refused before its ids were checked never reaches a contest. */
  if (!j->keys_ok || j->type != TALLY_JOB_SCORE || j->submission == NULL ||
      j->participant == NULL)
    return 0;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    seen_t *s = realloc(r->seen, cap * sizeof(*s));
    if (s == NULL) {
      fprintf(stderr, "tally: out of memory\n");
      return TALLY_ENOMEM;
    }
    r->seen = s;
    r->cap = cap;
  }
  seen_t *s = &r->seen[r->n];
  memset(s, 0, sizeof(*s));
  s->seq = r->n;
  s->rated = rc == 0 && tally_engine_rated(r->e, &s->m);
  s->submission = cli_id_text(j->submission, "");
  s->participant = cli_id_text(j->participant, "");
  s->contest = cli_id_text(j->contest, "default");
  r->n++;
  if (s->submission == NULL || s->participant == NULL || s->contest == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return TALLY_ENOMEM;
  }
  return 0;
}

/* Submission ids, then input order. */
static int cmp_by_submission(const void *a, const void *b) {
  const seen_t *x = a, *y = b;
  int c = strcmp(x->submission, y->submission);
  if (c != 0)
    return c;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Contest, then participant (byte order). */
static int cmp_by_place(const void *a, const void *b) {
  const seen_t *x = a, *y = b;
  int c = strcmp(x->contest, y->contest);
  return c != 0 ? c : strcmp(x->participant, y->participant);
}

typedef struct rating_s {
  const char *contest, *participant;
  tally_elo_t elo;
} rating_t;

/* Contest, then rating down, then participant. */
static int cmp_rating(const void *a, const void *b) {
  const rating_t *x = a, *y = b;
  int c = strcmp(x->contest, y->contest);
  if (c != 0)
    return c;
  if (x->elo.rating != y->elo.rating)
    return x->elo.rating > y->elo.rating ? -1 : 1;
  return strcmp(x->participant, y->participant);
}

/* Replays the rated matches that are the last job of their submission and
 * prints a line per participant and contest. Returns 0 or
 * EXIT_JOB_FAILED (out of memory). */
static int elo_print(elo_run_t *r) {
  if (r->n > 1)
    qsort(r->seen, r->n, sizeof(*r->seen), cmp_by_submission);
  size_t kept = 0;
  for (size_t k = 0; k < r->n; k++) {
    bool last = k + 1 == r->n ||
                strcmp(r->seen[k].submission, r->seen[k + 1].submission) != 0;
    if (last && r->seen[k].rated) {
      seen_t t = r->seen[kept];
      r->seen[kept++] = r->seen[k];
      r->seen[k] = t;
    }
  }
  qsort(r->seen, kept, sizeof(*r->seen), cmp_by_place);
  tally_elo_match_t *ms = calloc(kept + 1, sizeof(*ms));
  rating_t *ratings = calloc(kept + 1, sizeof(*ratings));
  if (ms == NULL || ratings == NULL) {
    free(ms);
    free(ratings);
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  size_t nr = 0;
  for (size_t k = 0; k < kept;) {
    size_t end = k;
    while (end < kept && cmp_by_place(&r->seen[k], &r->seen[end]) == 0) {
      ms[end - k] = r->seen[end].m;
      ms[end - k].submission = r->seen[end].submission;
      end++;
    }
    ratings[nr].contest = r->seen[k].contest;
    ratings[nr].participant = r->seen[k].participant;
    tally_elo_replay(ms, end - k, &ratings[nr].elo);
    nr++;
    k = end;
  }
  qsort(ratings, nr, sizeof(*ratings), cmp_rating);
  tally_buf_t *b = r->out;
  tally_buf_reset(b);
  for (size_t k = 0; k < nr; k++) {
    const tally_elo_t *e = &ratings[k].elo;
    tally_buf_puts(b, "{\"contest\":");
    tally_json_str(b, ratings[k].contest);
    tally_buf_puts(b, ",\"participant\":");
    tally_json_str(b, ratings[k].participant);
    tally_buf_puts(b, ",\"rating\":");
    tally_json_num(b, e->rating);
    cli_json_int(b, "matches", e->matches);
    cli_json_int(b, "wins", e->wins);
    cli_json_int(b, "draws", e->draws);
    cli_json_int(b, "losses", e->losses);
    tally_buf_puts(b, "}\n");
  }
  free(ms);
  free(ratings);
  if (b->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  fwrite(b->data, 1, b->len, stdout);
  return 0;
}

int cli_score_elo(tally_engine_t *e, int nfiles, char **files,
                  tally_buf_t *out) {
  elo_run_t r = {.e = e, .out = out, .name = "stdin"};
  int status = cli_each_file_line(nfiles, files, &r.name, elo_line, &r);
  if (status == 0)
    status = elo_print(&r);
  if (status == 0 && r.failed > 0)
    status = EXIT_JOB_FAILED;
  for (size_t k = 0; k < r.n; k++) {
    free(r.seen[k].submission);
    free(r.seen[k].participant);
    free(r.seen[k].contest);
  }
  free(r.seen);
  return status;
}
