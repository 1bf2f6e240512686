/* tally ranking: a contest's ranking as Redis holds it, private or public
 * (the frozen one while a freeze holds, as the public board shows it), by
 * score or by Elo rating. */
#include "cli/cli.h"
#include "contest/frozen.h"
#include "redis/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ranking */

typedef struct rank_row_s {
  const char *participant; /* in the ZRANGE reply */
  size_t len;
  double total;
  long rank;
  redisReply *scores; /* HGETALL of its task scores */
  /* On a frozen board, each task's score from before the freeze (NAN:
   * none), in the order of the ranking's tasks, and its partial flag. */
  double *frozen;
  bool *frozen_partial;
} rank_row_t;

/* Totals down, then participant ids in byte order. */
static int cmp_rank_row(const void *a, const void *b) {
  const rank_row_t *x = a, *y = b;
  if (x->total != y->total)
    return x->total > y->total ? -1 : 1;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->participant, y->participant, n);
  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* The score on task (the ranking's t-th) of a row, from before the freeze
 * on a frozen board, else from its task score JSON: false when it has
 * none. */
static bool row_task_score(const rank_row_t *row, size_t t, const char *task,
                           bool public, double *score, bool *partial) {
  if (row->frozen != NULL) {
    if (isnan(row->frozen[t]))
      return false;
    *score = row->frozen[t];
    *partial = row->frozen_partial[t];
    return true;
  }
  const redisReply *v = cli_field(row->scores, task);
  if (v == NULL || v->type != REDIS_REPLY_STRING)
    return false;
  cJSON *j = cJSON_Parse(v->str);
  const cJSON *s =
      cJSON_GetObjectItemCaseSensitive(j, public ? "public_score" : "score");
  bool ok = cJSON_IsNumber(s);
  if (ok) {
    *score = s->valuedouble;
    *partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "partial"));
  }
  cJSON_Delete(j);
  return ok;
}

/* The ranking as JSON; since is the time a frozen board is frozen from
 * (NAN: not frozen). */
static void ranking_json(const char *contest, bool public, double since,
                         char **tasks, size_t ntasks, const rank_row_t *rows,
                         size_t n, tally_buf_t *b) {
  char num[32];
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, contest);
  tally_buf_puts(b, public ? ",\"public\":true" : ",\"public\":false");
  /* Only while frozen: a ranking without a freeze reads as before. */
  if (!isnan(since)) {
    char text[48];
    tally_buf_puts(b, ",\"frozen\":true,\"frozen_since\":");
    tally_json_str(b, cli_time_text(since, text, sizeof(text)));
  }

  tally_buf_puts(b, ",\"tasks\":[");
  for (size_t k = 0; k < ntasks; k++) {
    if (k)
      tally_buf_putc(b, ',');
    tally_json_str(b, tasks[k]);
  }
  tally_buf_puts(b, "],\"rows\":[");
  for (size_t k = 0; k < n; k++) {
    snprintf(num, sizeof(num), "%ld", rows[k].rank);
    tally_buf_puts(b, k ? ",{\"rank\":" : "{\"rank\":");
    tally_buf_puts(b, num);
    tally_buf_puts(b, ",\"participant\":");
    tally_json_str(b, rows[k].participant);
    tally_buf_puts(b, ",\"total\":");
    tally_json_num(b, rows[k].total);
    tally_buf_puts(b, ",\"tasks\":{");
    bool first = true;
    for (size_t t = 0; t < ntasks; t++) {
      double score;
      bool partial;
      if (!row_task_score(&rows[k], t, tasks[t], public, &score, &partial))
        continue;
      if (!first)
        tally_buf_putc(b, ',');
      first = false;
      tally_json_str(b, tasks[t]);
      tally_buf_puts(b, ":{\"score\":");
      tally_json_num(b, score);
      tally_buf_puts(b, partial ? ",\"partial\":true}" : ",\"partial\":false}");
    }
    tally_buf_puts(b, "}}");
  }
  tally_buf_puts(b, "]}\n");
}

/* The text of a table cell of row: a task score ("*" after a partial
 * one, "-" for none), in buf (48 bytes). */
static const char *task_cell(const rank_row_t *row, size_t t, const char *task,
                             bool public, char *buf) {
  double score;
  bool partial;
  char num[32];
  if (!row_task_score(row, t, task, public, &score, &partial))
    return "-";
  snprintf(buf, 48, "%s%s", cli_num_text(score, num), partial ? "*" : "");
  return buf;
}

static void ranking_text(bool public, double since, char **tasks, size_t ntasks,
                         const rank_row_t *rows, size_t n) {
  char buf[48], num[32];
  int wrank = 4, wpart = 11, wtotal = 5;
  int *wtask = calloc(ntasks + 1, sizeof(int));
  if (wtask == NULL)
    return;
  for (size_t t = 0; t < ntasks; t++)
    wtask[t] = (int)strlen(tasks[t]);
  for (size_t k = 0; k < n; k++) {
    snprintf(buf, sizeof(buf), "%ld", rows[k].rank);
    wrank = (int)strlen(buf) > wrank ? (int)strlen(buf) : wrank;
    wpart = (int)rows[k].len > wpart ? (int)rows[k].len : wpart;
    int l = (int)strlen(cli_num_text(rows[k].total, num));
    wtotal = l > wtotal ? l : wtotal;
    for (size_t t = 0; t < ntasks; t++) {
      l = (int)strlen(task_cell(&rows[k], t, tasks[t], public, buf));
      wtask[t] = l > wtask[t] ? l : wtask[t];
    }
  }
  printf("%*s  %-*s  %*s", wrank, "rank", wpart, "participant", wtotal,
         "total");
  for (size_t t = 0; t < ntasks; t++)
    printf("  %*s", wtask[t], tasks[t]);
  putchar('\n');
  for (size_t k = 0; k < n; k++) {
    printf("%*ld  %-*s  %*s", wrank, rows[k].rank, wpart, rows[k].participant,
           wtotal, cli_num_text(rows[k].total, num));
    for (size_t t = 0; t < ntasks; t++)
      printf("  %*s", wtask[t], task_cell(&rows[k], t, tasks[t], public, buf));
    putchar('\n');
  }
  if (n > 0 && ntasks > 0)
    printf("(* partial: a submission is not scored)\n");
  if (!isnan(since))
    printf("(frozen since %s: the public board counts only the submissions "
           "made before then)\n",
           cli_time_text(since, buf, sizeof(buf)));
  free(wtask);
}

/* Reads the ranking of contest into rows (ranked and ordered) and its
 * tasks (sorted), with the replies that hold their strings. Returns 0, or
 * EXIT_JOB_FAILED (printed). */
typedef struct ranking_s {
  redisReply *zset, *tasks_reply;
  rank_row_t *rows;
  size_t n;
  char **tasks;
  size_t ntasks;
} ranking_t;

/* Orders rk's rows by total and gives them their ranks (ties share
 * one). */
static void rank(ranking_t *rk) {
  qsort(rk->rows, rk->n, sizeof(*rk->rows), cmp_rank_row);
  for (size_t k = 0; k < rk->n; k++)
    rk->rows[k].rank = k > 0 && rk->rows[k].total == rk->rows[k - 1].total
                           ? rk->rows[k - 1].rank
                           : (long)k + 1;
}

static int ranking_read(remote_t *r, const char *contest, bool public,
                        ranking_t *rk) {
  char key[1024], base[768];
  if (tally_contest_key(base, sizeof(base), r->qprefix, contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  snprintf(key, sizeof(key), "%s:ranking%s", base, public ? ":public" : "");
  rk->zset = cli_expect(r, remote_cmd(r, "ZRANGE %s 0 -1 WITHSCORES", key),
                        REDIS_REPLY_ARRAY, "ZRANGE");
  if (rk->zset == NULL)
    return EXIT_JOB_FAILED;
  snprintf(key, sizeof(key), "%s:tasks", base);
  rk->tasks_reply = cli_expect(r, remote_cmd(r, "SMEMBERS %s", key),
                               REDIS_REPLY_ARRAY, "SMEMBERS");
  if (rk->tasks_reply == NULL)
    return EXIT_JOB_FAILED;
  if (rk->zset->elements == 0 && rk->tasks_reply->elements == 0) {
    redisReply *m =
        remote_cmd(r, "SISMEMBER %s:contests %s", r->qprefix, contest);
    bool known = m != NULL && m->type == REDIS_REPLY_INTEGER && m->integer;
    if (m != NULL)
      freeReplyObject(m);
    if (!known) {
      fprintf(stderr, "tally: no contest \"%s\" in %s:contests at %s\n",
              contest, r->qprefix, r->url);
      return EXIT_JOB_FAILED;
    }
  }
  rk->ntasks = rk->tasks_reply->elements;
  rk->tasks = calloc(rk->ntasks + 1, sizeof(char *));
  rk->n = rk->zset->elements / 2;
  rk->rows = calloc(rk->n + 1, sizeof(*rk->rows));
  if (rk->tasks == NULL || rk->rows == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  for (size_t k = 0; k < rk->ntasks; k++)
    rk->tasks[k] = rk->tasks_reply->element[k]->str;
  qsort(rk->tasks, rk->ntasks, sizeof(char *), cli_cmp_str);
  for (size_t k = 0; k < rk->n; k++) {
    rank_row_t *row = &rk->rows[k];
    row->participant = rk->zset->element[2 * k]->str;
    row->len = rk->zset->element[2 * k]->len;
    row->total = strtod(rk->zset->element[2 * k + 1]->str, NULL);
  }
  rank(rk);
  for (size_t k = 0; k < rk->n; k++) {
    char part[768];
    if (tally_rescore_key(part, sizeof(part), "", "",
                          rk->rows[k].participant) != 0)
      part[0] = '\0';
    if (redisAppendCommand(r->c, "HGETALL %s:taskscores:%s", base, part) !=
        REDIS_OK) {
      fprintf(stderr, "tally: out of memory\n");
      return EXIT_JOB_FAILED;
    }
  }
  for (size_t k = 0; k < rk->n; k++) {
    void *p = NULL;
    if (redisGetReply(r->c, &p) != REDIS_OK) {
      remote_io_error(r);
      return EXIT_JOB_FAILED;
    }
    rk->rows[k].scores = cli_expect(r, p, REDIS_REPLY_ARRAY, "HGETALL");
    if (rk->rows[k].scores == NULL)
      return EXIT_JOB_FAILED;
  }
  return 0;
}

/* The public ranking as the frozen board has it (since: the freeze in
 * force): each row's task scores counted again from its places with the
 * submissions made before the freeze (contest/frozen.h), its total their
 * sum in task name order; a participant with none is not on it. Returns 0
 * or EXIT_JOB_FAILED (printed). */
static int ranking_freeze(remote_t *r, const char *contest, double since,
                          ranking_t *rk) {
  char base[768];
  if (tally_contest_key(base, sizeof(base), r->qprefix, contest) != 0)
    return EXIT_CONFIG;
  for (size_t k = 0; k < rk->n; k++) {
    char part[768], tpart[768];
    if (tally_rescore_key(part, sizeof(part), "", "",
                          rk->rows[k].participant) != 0)
      part[0] = '\0';
    for (size_t t = 0; t < rk->ntasks; t++) {
      if (tally_rescore_key(tpart, sizeof(tpart), "", "", rk->tasks[t]) != 0)
        tpart[0] = '\0';
      if (redisAppendCommand(r->c, "HGETALL %s:pt:%s:%s", base, part, tpart) !=
          REDIS_OK) {
        fprintf(stderr, "tally: out of memory\n");
        return EXIT_JOB_FAILED;
      }
    }
  }
  int status = 0;
  for (size_t k = 0; k < rk->n; k++) {
    rank_row_t *row = &rk->rows[k];
    row->frozen = calloc(rk->ntasks + 1, sizeof(double));
    row->frozen_partial = calloc(rk->ntasks + 1, sizeof(bool));
    if (status == 0 && (row->frozen == NULL || row->frozen_partial == NULL)) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    }
    row->total = 0;
    for (size_t t = 0; row->frozen != NULL && t < rk->ntasks; t++)
      row->frozen[t] = NAN;
    for (size_t t = 0; t < rk->ntasks; t++) {
      /* Every reply is read, whatever failed before. */
      void *p = NULL;
      if (redisGetReply(r->c, &p) != REDIS_OK) {
        remote_io_error(r);
        return EXIT_JOB_FAILED;
      }
      redisReply *x = cli_expect(r, p, REDIS_REPLY_ARRAY, "HGETALL");
      if (x == NULL)
        status = EXIT_JOB_FAILED;
      if (x == NULL || status != 0) {
        if (x != NULL)
          freeReplyObject(x);
        continue;
      }
      double score;
      bool partial;
      if (tally_frozen_score(x, since, &score, &partial)) {
        row->frozen[t] = score;
        row->frozen_partial[t] = partial;
        row->total += score;
      }
      freeReplyObject(x);
    }
  }
  if (status != 0)
    return status;
  size_t kept = 0;
  for (size_t k = 0; k < rk->n; k++) {
    rank_row_t *row = &rk->rows[k];
    bool any = false;
    for (size_t t = 0; t < rk->ntasks && !any; t++)
      any = !isnan(row->frozen[t]);
    if (any) {
      rk->rows[kept++] = *row;
    } else {
      if (row->scores != NULL)
        freeReplyObject(row->scores);
      free(row->frozen);
      free(row->frozen_partial);
    }
  }
  rk->n = kept;
  rank(rk);
  return 0;
}

static void ranking_free(ranking_t *rk) {
  for (size_t k = 0; rk->rows != NULL && k < rk->n; k++) {
    if (rk->rows[k].scores != NULL)
      freeReplyObject(rk->rows[k].scores);
    free(rk->rows[k].frozen);
    free(rk->rows[k].frozen_partial);
  }
  free(rk->rows);
  free(rk->tasks);
  if (rk->zset != NULL)
    freeReplyObject(rk->zset);
  if (rk->tasks_reply != NULL)
    freeReplyObject(rk->tasks_reply);
}

int cmd_ranking(int argc, char **argv) {
  remote_t r;
  const char *contest = NULL, *by = NULL;
  bool public = false;
  cli_out_t form = {CLI_OUT_AUTO, false};
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--contest") == 0 && i + 1 < argc && !contest)
      contest = argv[++i];
    else if (strcmp(argv[i], "--public") == 0)
    public = true;
    else if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--text") == 0)
        cli_out_flag(&form, argv[i]);
    else if (strcmp(argv[i], "--by") == 0 && i + 1 < argc && !by) by =
        argv[++i];
    else goto bad_usage;
  }
  if (contest == NULL)
    goto bad_usage;
  /* A table on a terminal (or with --text), JSON elsewhere. */
  bool json = !cli_out_human(&form);
  bool elo = by != NULL && strcmp(by, "elo") == 0;
  if (by != NULL && !elo && strcmp(by, "score") != 0) {
    fprintf(stderr,
            "tally: --by %s: a ranking is by score (the default) or "
            "by elo\n",
            by);
    return EXIT_CONFIG;
  }
  if (elo && public) {
    fprintf(stderr, "tally: --public: a contest has one Elo rating per "
                    "participant, not a public and a private one\n");
    return EXIT_CONFIG;
  }
  ranking_t rk = {0};
  int status = remote_open(&r) != 0 || remote_use_contest(&r, contest) != 0
                   ? EXIT_JOB_FAILED
                   : 0;
  if (status == 0 && elo) {
    status = cli_ranking_elo(&r, contest, json);
    remote_close(&r);
    return cli_flush_stdout(status, "the ranking");
  }
  double since = NAN;
  cli_freeze_t f;
  if (status == 0) {
    /* What the public sees: the frozen ranking while a freeze holds. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    status = cli_freeze_read(&r, contest, &f);
    if (status == 0)
      since = cli_freeze_since(&f, (double)ts.tv_sec + ts.tv_nsec / 1e9);
  }
  if (status == 0 && f.pass_fail) {
    status = cli_ranking_icpc(&r, contest, &f, public, since, json);
    remote_close(&r);
    return cli_flush_stdout(status, "the ranking");
  }
  if (!public)
    since = NAN;
  if (status == 0)
    status = ranking_read(&r, contest, public, &rk);
  if (status == 0 && !isnan(since))
    status = ranking_freeze(&r, contest, since, &rk);
  if (status == 0 && json) {
    tally_buf_t b;
    tally_buf_init(&b);
    ranking_json(contest, public, since, rk.tasks, rk.ntasks, rk.rows, rk.n,
                 &b);
    if (b.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      fwrite(b.data, 1, b.len, stdout);
    }
    tally_buf_close(&b);
  } else if (status == 0) {
    ranking_text(public, since, rk.tasks, rk.ntasks, rk.rows, rk.n);
  }
  ranking_free(&rk);
  remote_close(&r);
  status = cli_flush_stdout(status, "the ranking");
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
