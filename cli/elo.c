/* tally ranking --by elo: a contest's Elo ratings (docs/challenges.md),
 * read from <p>:{<c>}:elo and each participant's <p>:{<c>}:elo:<enc u>
 * hash. */
#include "cli/cli.h"
#include "cli/rescore.h"

#include <stdlib.h>
#include <string.h>

typedef struct elo_row_s {
  const char *participant; /* in the ZRANGE reply */
  size_t len;
  double rating;
  long rank;
  long long matches, wins, draws, losses;
} elo_row_t;

/* Ratings down, then participant ids in byte order. */
static int cmp_elo_row(const void *a, const void *b) {
  const elo_row_t *x = a, *y = b;
  if (x->rating != y->rating)
    return x->rating > y->rating ? -1 : 1;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->participant, y->participant, n);
  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* The integer of element k of an HMGET reply, 0 when it has none. */
static long long hmget_int(const redisReply *h, size_t k) {
  if (h == NULL || h->type != REDIS_REPLY_ARRAY || k >= h->elements ||
      h->element[k]->type != REDIS_REPLY_STRING)
    return 0;
  return strtoll(h->element[k]->str, NULL, 10);
}

/* Reads the counts of every row, pipelined. Returns 0 or EXIT_JOB_FAILED
 * (printed). */
static int read_counts(remote_t *r, const char *base, elo_row_t *rows,
                       size_t n) {
  for (size_t k = 0; k < n; k++) {
    char part[768];
    if (tally_rescore_key(part, sizeof(part), "", "", rows[k].participant) != 0)
      part[0] = '\0';
    if (redisAppendCommand(r->c, "HMGET %s:elo:%s matches wins draws losses",
                           base, part) != REDIS_OK) {
      fprintf(stderr, "tally: out of memory\n");
      return EXIT_JOB_FAILED;
    }
  }
  for (size_t k = 0; k < n; k++) {
    void *p = NULL;
    if (redisGetReply(r->c, &p) != REDIS_OK) {
      remote_io_error(r);
      return EXIT_JOB_FAILED;
    }
    redisReply *h = cli_expect(r, p, REDIS_REPLY_ARRAY, "HMGET");
    if (h == NULL)
      return EXIT_JOB_FAILED;
    rows[k].matches = hmget_int(h, 0);
    rows[k].wins = hmget_int(h, 1);
    rows[k].draws = hmget_int(h, 2);
    rows[k].losses = hmget_int(h, 3);
    freeReplyObject(h);
  }
  return 0;
}

static void elo_json(const char *contest, const elo_row_t *rows, size_t n,
                     tally_buf_t *b) {
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, contest);
  tally_buf_puts(b, ",\"by\":\"elo\",\"rows\":[");
  for (size_t k = 0; k < n; k++) {
    tally_buf_puts(b, k ? ",{\"participant\":" : "{\"participant\":");
    tally_json_str(b, rows[k].participant);
    cli_json_int(b, "rank", rows[k].rank);
    tally_buf_puts(b, ",\"rating\":");
    tally_json_num(b, rows[k].rating);
    cli_json_int(b, "matches", rows[k].matches);
    cli_json_int(b, "wins", rows[k].wins);
    cli_json_int(b, "draws", rows[k].draws);
    cli_json_int(b, "losses", rows[k].losses);
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "]}\n");
}

static void elo_text(const elo_row_t *rows, size_t n) {
  int wpart = 11;
  for (size_t k = 0; k < n; k++)
    wpart = (int)rows[k].len > wpart ? (int)rows[k].len : wpart;
  printf("%4s  %-*s  %6s  %7s  %4s  %4s  %4s\n", "rank", wpart, "participant",
         "rating", "matches", "W", "D", "L");
  for (size_t k = 0; k < n; k++) {
    tally_buf_t num;
    tally_buf_init(&num);
    tally_json_num(&num, rows[k].rating);
    printf("%4ld  %-*s  %6s  %7lld  %4lld  %4lld  %4lld\n", rows[k].rank, wpart,
           rows[k].participant, num.oom ? "?" : num.data, rows[k].matches,
           rows[k].wins, rows[k].draws, rows[k].losses);
    tally_buf_close(&num);
  }
}

int cli_ranking_elo(remote_t *r, const char *contest, bool json) {
  char base[768];
  if (tally_contest_key(base, sizeof(base), r->qprefix, contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  redisReply *z =
      cli_expect(r, remote_cmd(r, "ZRANGE %s:elo 0 -1 WITHSCORES", base),
                 REDIS_REPLY_ARRAY, "ZRANGE");
  if (z == NULL)
    return EXIT_JOB_FAILED;
  if (z->elements == 0) {
    redisReply *m =
        remote_cmd(r, "SISMEMBER %s:contests %s", r->qprefix, contest);
    bool known = m != NULL && m->type == REDIS_REPLY_INTEGER && m->integer;
    if (m != NULL)
      freeReplyObject(m);
    if (!known) {
      fprintf(stderr, "tally: no contest \"%s\" in %s:contests at %s\n",
              contest, r->qprefix, r->url);
      freeReplyObject(z);
      return EXIT_JOB_FAILED;
    }
  }
  size_t n = z->elements / 2;
  elo_row_t *rows = calloc(n + 1, sizeof(*rows));
  if (rows == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    freeReplyObject(z);
    return EXIT_JOB_FAILED;
  }
  for (size_t k = 0; k < n; k++) {
    rows[k].participant = z->element[2 * k]->str;
    rows[k].len = z->element[2 * k]->len;
    rows[k].rating = strtod(z->element[2 * k + 1]->str, NULL);
  }
  qsort(rows, n, sizeof(*rows), cmp_elo_row);
  for (size_t k = 0; k < n; k++)
    rows[k].rank = k > 0 && rows[k].rating == rows[k - 1].rating
                       ? rows[k - 1].rank
                       : (long)k + 1;
  int status = read_counts(r, base, rows, n);
  if (status == 0 && json) {
    tally_buf_t b;
    tally_buf_init(&b);
    elo_json(contest, rows, n, &b);
    if (b.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      fwrite(b.data, 1, b.len, stdout);
    }
    tally_buf_close(&b);
  } else if (status == 0) {
    elo_text(rows, n);
  }
  free(rows);
  freeReplyObject(z);
  return status;
}
