/* tally report: reads a benchmark's samples, from the summaries tallyd
 * keeps in Redis (one per submission of the contest) or by scoring job
 * files offline with the task configs, then prints the report
 * (docs/benchmarks.md). */
#include "cli/report.h"
#include "cli/cli.h"
#include "cli/report_print.h"
#include "cli/rescore.h"
#include "config/json.h"
#include "stats/failure.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The ids of an SSCAN reply, or NULL (printed) for another reply. */
static const redisReply *scan_ids(const redisReply *scan, const char *key,
                                  char *cursor, size_t cap) {
  if (scan->elements != 2 || scan->element[0]->type != REDIS_REPLY_STRING ||
      scan->element[1]->type != REDIS_REPLY_ARRAY) {
    fprintf(stderr, "tally: SSCAN %s: an unexpected reply\n", key);
    return NULL;
  }
  snprintf(cursor, cap, "%s", scan->element[0]->str);
  return scan->element[1];
}

/* Appends an HGET of the summary of each of ids (HMGET with the job). */
static int ask(remote_t *r, const redisReply *ids, bool jobs) {
  for (size_t k = 0; k < ids->elements; k++) {
    char hkey[1024];
    snprintf(hkey, sizeof(hkey), "%s:submission:%s", r->qprefix,
             ids->element[k]->str);
    if ((jobs
             ? redisAppendCommand(r->c, "HMGET %s summary job", hkey)
             : redisAppendCommand(r->c, "HGET %s summary", hkey)) != REDIS_OK) {
      fprintf(stderr, "tally: out of memory\n");
      return EXIT_JOB_FAILED;
    }
  }
  return 0;
}

/* A batch read from Redis: the SSCAN reply that holds its ids, and the
 * reply of each id. */
typedef struct batch_s {
  redisReply *scan;
  const redisReply *ids;
  redisReply **replies;
  struct batch_s *next;
} batch_t;

static void batch_free(batch_t *b) {
  if (b == NULL)
    return;
  for (size_t k = 0; b->replies != NULL && k < b->ids->elements; k++)
    if (b->replies[k] != NULL)
      freeReplyObject(b->replies[k]);
  free(b->replies);
  if (b->scan != NULL)
    freeReplyObject(b->scan);
  free(b);
}

/* The decoder: a thread that turns the batches the reader queues into
 * samples, so that cJSON decodes one batch while hiredis reads the next
 * and Redis answers the one after. Only it touches d. */
typedef struct decoder_s {
  pthread_mutex_t mu;
  pthread_cond_t more, room;
  batch_t *head, *tail;
  size_t queued;
  bool done;  /* the reader has queued its last batch */
  int status; /* the decoder's: 0, or EXIT_JOB_FAILED (printed) */
  const report_opts_t *o;
  const char *const *refusals;
  size_t nrefusals;
  const char *prefix;
  report_data_t *d;
} decoder_t;

#define QUEUED_MAX 4

static void decode_batch(decoder_t *q, batch_t *b) {
  for (size_t k = 0; k < b->ids->elements && q->status == 0; k++) {
    const redisReply *h = b->replies[k], *sum = h, *job = NULL;
    if (h->type == REDIS_REPLY_ARRAY) {
      sum = h->elements > 0 ? h->element[0] : NULL;
      job = h->elements > 1 ? h->element[1] : NULL;
    }
    bool has_job = job != NULL && job->type == REDIS_REPLY_STRING;
    char err[256];
    int rc = 0;
    if (sum != NULL && sum->type == REDIS_REPLY_STRING && sum->len > 0)
      rc = report_add_summary(q->d, q->o, sum->str, sum->len,
                              b->ids->element[k]->str, q->refusals,
                              q->nrefusals, has_job ? job->str : NULL,
                              has_job ? job->len : 0, err, sizeof(err));
    if (rc == TALLY_ENOMEM) {
      fprintf(stderr, "tally: out of memory\n");
      q->status = EXIT_JOB_FAILED;
    } else if (rc != 0) {
      fprintf(stderr, "tally: %s:submission:%s: %s (left out)\n", q->prefix,
              b->ids->element[k]->str, err);
    }
  }
}

static void *decoder_main(void *arg) {
  decoder_t *q = arg;
  for (;;) {
    pthread_mutex_lock(&q->mu);
    while (q->head == NULL && !q->done)
      pthread_cond_wait(&q->more, &q->mu);
    batch_t *b = q->head;
    if (b != NULL) {
      q->head = b->next;
      if (q->head == NULL)
        q->tail = NULL;
      q->queued--;
      pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    if (b == NULL)
      return NULL;
    if (q->status == 0)
      decode_batch(q, b);
    batch_free(b);
  }
}

/* Queues b for the decoder, waiting while QUEUED_MAX batches wait. */
static void decoder_push(decoder_t *q, batch_t *b) {
  pthread_mutex_lock(&q->mu);
  while (q->queued >= QUEUED_MAX)
    pthread_cond_wait(&q->room, &q->mu);
  if (q->tail != NULL)
    q->tail->next = b;
  else
    q->head = b;
  q->tail = b;
  q->queued++;
  pthread_cond_signal(&q->more);
  pthread_mutex_unlock(&q->mu);
}

/* Reads the replies of ask into a new batch. Returns NULL (printed) on a
 * Redis error. */
static batch_t *collect(remote_t *r, redisReply *scan, const redisReply *ids,
                        bool jobs) {
  batch_t *b = calloc(1, sizeof(*b));
  if (b != NULL)
    b->replies = calloc(ids->elements + 1, sizeof(*b->replies));
  if (b == NULL || b->replies == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    free(b);
    return NULL;
  }
  b->scan = scan;
  b->ids = ids;
  for (size_t k = 0; k < ids->elements; k++) {
    void *p = NULL;
    if (redisGetReply(r->c, &p) != REDIS_OK) {
      remote_io_error(r);
      b->scan = NULL;
      batch_free(b);
      return NULL;
    }
    b->replies[k] = p;
    if (b->replies[k]->type == REDIS_REPLY_ERROR) {
      fprintf(stderr, "tally: %s: %s\n", jobs ? "HMGET" : "HGET",
              b->replies[k]->str);
      b->scan = NULL;
      batch_free(b);
      return NULL;
    }
  }
  return b;
}

/* Redis: every member of <p>:index:contest:<enc C>, its summary (and its
 * job, with a new refusal list) read with HGET. Redis works ahead: the
 * next SSCAN and the reads of its ids go out before the replies of the
 * batch before are read, and a decoder thread decodes them while the
 * next batch is read. (A Lua script reading a batch per call cost Redis
 * twice the CPU: it interns every key it builds.) */
static int read_redis(remote_t *r, const report_opts_t *o,
                      const char *const *refusals, size_t nrefusals,
                      report_data_t *d) {
  char enc[768], key[1024], cursor[32] = "0";
  if (tally_rescore_key(enc, sizeof(enc), "", "", o->contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  snprintf(key, sizeof(key), "%s:index:contest:%s", r->qprefix, enc);
  redisReply *known =
      remote_cmd(r, "SISMEMBER %s:contests %s", r->qprefix, o->contest);
  bool is_known = known != NULL && known->type == REDIS_REPLY_INTEGER &&
                  known->integer == 1;
  if (known != NULL)
    freeReplyObject(known);
  if (!is_known) {
    fprintf(stderr, "tally: no contest \"%s\" in %s:contests at %s\n",
            o->contest, r->qprefix, r->url);
    return EXIT_JOB_FAILED;
  }
  decoder_t q = {.o = o,
                 .refusals = refusals,
                 .nrefusals = nrefusals,
                 .prefix = r->qprefix,
                 .d = d};
  pthread_t thread;
  pthread_mutex_init(&q.mu, NULL);
  pthread_cond_init(&q.more, NULL);
  pthread_cond_init(&q.room, NULL);
  if (pthread_create(&thread, NULL, decoder_main, &q) != 0) {
    fprintf(stderr, "tally: cannot start a thread\n");
    return EXIT_JOB_FAILED;
  }
  bool jobs = refusals != NULL;
  redisReply *scan =
      cli_expect(r, remote_cmd(r, "SSCAN %s 0 COUNT %d", key, PIPELINE),
                 REDIS_REPLY_ARRAY, "SSCAN");
  const redisReply *ids =
      scan != NULL ? scan_ids(scan, key, cursor, sizeof(cursor)) : NULL;
  int status = ids == NULL ? EXIT_JOB_FAILED : 0;
  bool more = status == 0 && strcmp(cursor, "0") != 0;
  if (more && redisAppendCommand(r->c, "SSCAN %s %s COUNT %d", key, cursor,
                                 PIPELINE) != REDIS_OK)
    status = EXIT_JOB_FAILED;
  if (status == 0)
    status = ask(r, ids, jobs);
  while (status == 0) {
    /* The next batch's ids, and its reads sent before this batch is
     * read. */
    redisReply *next = NULL;
    const redisReply *next_ids = NULL;
    if (more) {
      void *p = NULL;
      if (redisGetReply(r->c, &p) != REDIS_OK) {
        remote_io_error(r);
        status = EXIT_JOB_FAILED;
        break;
      }
      next = cli_expect(r, p, REDIS_REPLY_ARRAY, "SSCAN");
      next_ids =
          next != NULL ? scan_ids(next, key, cursor, sizeof(cursor)) : NULL;
      if (next_ids == NULL) {
        if (next != NULL)
          freeReplyObject(next);
        status = EXIT_JOB_FAILED;
        break;
      }
      more = strcmp(cursor, "0") != 0;
      if ((more && redisAppendCommand(r->c, "SSCAN %s %s COUNT %d", key, cursor,
                                      PIPELINE) != REDIS_OK) ||
          ask(r, next_ids, jobs) != 0) {
        freeReplyObject(next);
        status = EXIT_JOB_FAILED;
        break;
      }
    }
    batch_t *b = collect(r, scan, ids, jobs);
    if (b == NULL) {
      if (next != NULL)
        freeReplyObject(next);
      status = EXIT_JOB_FAILED;
      break;
    }
    scan = NULL;
    decoder_push(&q, b);
    scan = next;
    ids = next_ids;
    if (scan == NULL)
      break;
  }
  if (scan != NULL)
    freeReplyObject(scan);
  pthread_mutex_lock(&q.mu);
  q.done = true;
  pthread_cond_signal(&q.more);
  pthread_mutex_unlock(&q.mu);
  pthread_join(thread, NULL);
  pthread_mutex_destroy(&q.mu);
  pthread_cond_destroy(&q.more);
  pthread_cond_destroy(&q.room);
  return status != 0 ? status : q.status;
}

/* Offline: the last job of each submission, scored, then its summary. */
typedef struct offline_s {
  tally_engine_t *e;
  const tally_taskset_t *tasks;
  const report_opts_t *o;
  const char *const *refusals;
  size_t nrefusals;
  const char *name;
  /* Each submission's last summary and job, by submission id. */
  report_names_t ids;
  char **summaries, **jobs;
  size_t cap;
  long failed, anonymous;
  size_t result_errors; /* results of jobs that could not be scored */
} offline_t;

/* Keeps sum (and the job's line) as the latest of submission id. Returns
 * 0 or TALLY_ENOMEM. */
static int keep(offline_t *ol, const char *id, const tally_buf_t *sum,
                const char *line, size_t len) {
  uint32_t k = report_intern(&ol->ids, id);
  if (k == UINT32_MAX)
    return TALLY_ENOMEM;
  if (k >= ol->cap) {
    size_t cap = ol->cap ? ol->cap * 2 : 1024;
    char **s = realloc(ol->summaries, cap * sizeof(*s));
    if (s == NULL)
      return TALLY_ENOMEM;
    ol->summaries = s;
    char **jb = realloc(ol->jobs, cap * sizeof(*jb));
    if (jb == NULL)
      return TALLY_ENOMEM;
    ol->jobs = jb;
    memset(ol->summaries + ol->cap, 0, (cap - ol->cap) * sizeof(char *));
    memset(ol->jobs + ol->cap, 0, (cap - ol->cap) * sizeof(char *));
    ol->cap = cap;
  }
  free(ol->summaries[k]);
  free(ol->jobs[k]);
  ol->summaries[k] = strndup(sum->data, sum->len);
  ol->jobs[k] = ol->refusals != NULL ? strndup(line, len) : NULL;
  if (ol->summaries[k] == NULL || (ol->refusals != NULL && ol->jobs[k] == NULL))
    return TALLY_ENOMEM;
  return 0;
}

/* A line that is a result (as tally score or tally results print it:
 * "score" and "max_score", no evaluations) rather than a job: its sample
 * is its scores, with the category and threshold of its task's config;
 * it carries no response, so no failure. Returns 1 (kept, or counted),
 * 0 when the line is not a result, or TALLY_ENOMEM. */
static int result_line(offline_t *ol, const char *line, size_t len) {
  cJSON *r = cJSON_ParseWithLength(line, len);
  const cJSON *m[7];
  static const char *const keys[] = {"score",       "max_score", "submission",
                                     "participant", "task",      "contest",
                                     "error"};
  for (size_t i = 0; i < 7; i++)
    m[i] = cJSON_GetObjectItemCaseSensitive(r, keys[i]);
  bool job = cJSON_GetObjectItemCaseSensitive(r, "evaluations") != NULL ||
             cJSON_GetObjectItemCaseSensitive(r, "answer") != NULL ||
             cJSON_GetObjectItemCaseSensitive(r, "run") != NULL ||
             cJSON_GetObjectItemCaseSensitive(r, "compilation") != NULL;
  bool result =
      cJSON_IsObject(r) && !job &&
      ((cJSON_IsNumber(m[0]) && cJSON_IsNumber(m[1])) || cJSON_IsString(m[6]));
  if (!result) {
    cJSON_Delete(r);
    return 0;
  }
  char b1[64], b2[64], b3[64], b4[64];
  const char *id = report_id_text(m[2], b1, sizeof(b1));
  const char *user = report_id_text(m[3], b2, sizeof(b2));
  const char *task = report_id_text(m[4], b3, sizeof(b3));
  const char *contest = report_id_text(m[5], b4, sizeof(b4));
  int rc = 1;
  if (id == NULL || user == NULL || task == NULL) {
    ol->anonymous++;
  } else if (cJSON_IsString(m[6])) {
    ol->result_errors++; /* a job that could not be scored */
  } else {
    const tally_task_t *t = tally_taskset_find(ol->tasks, task);
    tally_buf_t sum;
    tally_buf_init(&sum);
    tally_buf_puts(&sum, "{\"submission\":");
    tally_json_str(&sum, id);
    tally_buf_puts(&sum, ",\"participant\":");
    tally_json_str(&sum, user);
    tally_buf_puts(&sum, ",\"contest\":");
    /* A result names no contest: it belongs to the one reported. */
    tally_json_str(&sum, contest != NULL          ? contest
                         : ol->o->contest != NULL ? ol->o->contest
                                                  : "default");
    tally_buf_puts(&sum, ",\"task\":");
    tally_json_str(&sum, task);
    tally_buf_puts(&sum, ",\"score\":");
    tally_json_num(&sum, m[0]->valuedouble);
    tally_buf_puts(&sum, ",\"max_score\":");
    tally_json_num(&sum, m[1]->valuedouble);
    tally_buf_puts(&sum, ",\"sample\":{\"category\":");
    tally_json_str(&sum,
                   t != NULL && t->category != NULL ? t->category : "unknown");
    tally_buf_puts(&sum, ",\"correct_threshold\":");
    tally_json_num(
        &sum, t != NULL && t->correct_threshold > 0 ? t->correct_threshold : 1);
    tally_buf_puts(&sum, ",\"failure\":null}}");
    if (sum.oom || keep(ol, id, &sum, line, len) != 0)
      rc = TALLY_ENOMEM;
    tally_buf_close(&sum);
  }
  cJSON_Delete(r);
  return rc;
}

static int offline_line(void *ctx, char *line, size_t len,
                        unsigned long lineno) {
  offline_t *ol = ctx;
  len = cli_trim_end(line, len);
  if (len == 0)
    return 0;
  int rc = result_line(ol, line, len);
  if (rc != 0) {
    if (rc == TALLY_ENOMEM)
      fprintf(stderr, "tally: out of memory\n");
    return rc < 0 ? rc : 0;
  }
  tally_buf_t out, sum;
  tally_buf_init(&out);
  tally_buf_init(&sum);
  rc = tally_engine_score(ol->e, line, len, NULL, &out);
  if (rc == 0)
    rc = tally_engine_summary(ol->e, &sum);
  else if (rc != TALLY_ENOMEM) {
    fprintf(stderr, "tally: %s:%lu: %s (counted as unscored)\n", ol->name,
            lineno, ol->e->err);
    ol->failed++;
    rc = tally_engine_unscored(ol->e, &sum);
  }
  const tally_job_t *j = &ol->e->job;
  char idbuf[64];
  const char *id =
      j->keys_ok ? report_id_text(j->submission, idbuf, sizeof(idbuf)) : NULL;
  if (rc == 0 && (id == NULL || sum.len == 0))
    ol->anonymous++;
  if (rc == 0 && id != NULL && sum.len > 0 && !out.oom && !sum.oom)
    rc = keep(ol, id, &sum, line, len);
  if (out.oom || sum.oom)
    rc = TALLY_ENOMEM;
  tally_buf_close(&out);
  tally_buf_close(&sum);
  if (rc == TALLY_ENOMEM) {
    fprintf(stderr, "tally: out of memory\n");
    return rc;
  }
  return 0;
}

static int read_offline(cli_t *c, int nfiles, char **files,
                        const report_opts_t *o, const char *const *refusals,
                        size_t nrefusals, report_data_t *d) {
  tally_engine_t e;
  tally_engine_init(&e, &c->tasks);
  offline_t ol = {.e = &e,
                  .tasks = &c->tasks,
                  .o = o,
                  .refusals = refusals,
                  .nrefusals = nrefusals};
  int status = 0;
  for (int i = 0; i < nfiles && status == 0; i++) {
    FILE *f = strcmp(files[i], "-") == 0 ? stdin : fopen(files[i], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", files[i], strerror(errno));
      status = EXIT_CONFIG;
      break;
    }
    ol.name = f == stdin ? "<stdin>" : files[i];
    if (cli_each_line(f, ol.name, offline_line, &ol) != 0)
      status = EXIT_JOB_FAILED;
    if (f != stdin)
      fclose(f);
  }
  for (size_t k = 0; k < ol.ids.n; k++) {
    char err[256];
    if (status != 0 || ol.summaries[k] == NULL)
      continue;
    int rc = report_add_summary(
        d, o, ol.summaries[k], strlen(ol.summaries[k]), ol.ids.names[k],
        refusals, nrefusals, ol.jobs[k],
        ol.jobs[k] != NULL ? strlen(ol.jobs[k]) : 0, err, sizeof(err));
    if (rc == TALLY_ENOMEM) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    }
  }
  d->unscored += ol.result_errors;
  if (ol.anonymous > 0)
    fprintf(stderr,
            "tally: %ld jobs left out: a sample names its submission and "
            "participant\n",
            ol.anonymous);
  for (size_t k = 0; k < ol.cap; k++) {
    free(ol.summaries[k]);
    free(ol.jobs[k]);
  }
  free(ol.summaries);
  free(ol.jobs);
  report_names_close(&ol.ids);
  tally_engine_close(&e);
  return status;
}

/* "1,5,10" into o->k: whole numbers from 1 to 1,000,000, at most
 * REPORT_MAX_K, each once. */
static bool parse_k(const char *s, report_opts_t *o) {
  o->nk = 0;
  while (*s) {
    char *end;
    errno = 0;
    long k = strtol(s, &end, 10);
    if (end == s || errno || k < 1 || k > 1000000 || o->nk == REPORT_MAX_K ||
        (*end != ',' && *end != '\0'))
      return false;
    for (size_t i = 0; i < o->nk; i++)
      if (o->k[i] == k)
        return false;
    o->k[o->nk++] = k;
    s = *end == ',' ? end + 1 : end;
    if (*end == ',' && *s == '\0')
      return false;
  }
  return o->nk > 0;
}

/* Reads a refusal list: one phrase per line, blank lines skipped. */
static char **read_refusals(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "tally: --refusals %s: %s\n", path, strerror(errno));
    return NULL;
  }
  char **list = NULL, *line = NULL;
  size_t cap = 0, lcap = 0;
  *n = 0;
  ssize_t got;
  bool ok = true;
  while (ok && (got = getline(&line, &lcap, f)) >= 0) {
    size_t len = cli_trim_end(line, (size_t)got);
    if (len == 0)
      continue;
    if (*n + 1 >= cap) {
      cap = cap ? cap * 2 : 16;
      char **grown = realloc(list, cap * sizeof(*grown));
      ok = grown != NULL;
      if (ok)
        list = grown;
    }
    if (ok && (list[*n] = strndup(line, len)) != NULL)
      list[++*n] = NULL;
    else
      ok = false;
  }
  free(line);
  fclose(f);
  if (ok && *n == 0) {
    fprintf(stderr, "tally: --refusals %s: no phrase in the file\n", path);
    ok = false;
  } else if (!ok) {
    fprintf(stderr, "tally: out of memory\n");
  }
  if (!ok) {
    for (size_t i = 0; i < *n; i++)
      free(list[i]);
    free(list);
    return NULL;
  }
  return list;
}

static void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "tally: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
}

int cmd_report(int argc, char **argv) {
  remote_t r;
  remote_init(&r);
  report_opts_t o = {.k = {1, 5, 10},
                     .nk = 3,
                     .resamples = 10000,
                     .seed = 42,
                     .confidence = 0.95};
  const char *tasks = NULL, *plugins = NULL, *html = NULL, *refusals = NULL;
  bool json = false, results = false, remote_given = false;
  char **files = calloc((size_t)argc + 1, sizeof(char *));
  int nfiles = 0, status = 0;
  if (files == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0) {
      remote_given = true;
      results = false;
      continue;
    }
    const char *a = argv[i];
    bool has = i + 1 < argc;
    char *end;
    if (strcmp(a, "--contest") == 0 && has && !o.contest)
      o.contest = argv[++i];
    else if (strcmp(a, "--participant") == 0 && has && !o.participant)
      o.participant = argv[++i];
    else if (strcmp(a, "--k") == 0 && has) {
      if (!parse_k(argv[++i], &o)) {
        usage_error("--k %s: a list of different whole numbers from 1 to "
                    "1000000, such as 1,5,10 (at most 16)",
                    argv[i]);
        status = EXIT_CONFIG;
      }
    } else if (strcmp(a, "--bootstrap") == 0 && has) {
      o.resamples = cli_positive(argv[++i]);
      if (o.resamples < 1 || o.resamples > 1000000) {
        usage_error("--bootstrap %s: a whole number of resamples from 1 to "
                    "1000000",
                    argv[i]);
        status = EXIT_CONFIG;
      }
    } else if (strcmp(a, "--seed") == 0 && has) {
      errno = 0;
      unsigned long long s = strtoull(argv[++i], &end, 10);
      if (errno || *end || end == argv[i] || argv[i][0] == '-' ||
          s > (1ull << 53)) {
        usage_error("--seed %s: a whole number from 0 to 2^53", argv[i]);
        status = EXIT_CONFIG;
      }
      o.seed = s;
    } else if (strcmp(a, "--confidence") == 0 && has) {
      o.confidence = strtod(argv[++i], &end);
      if (*end || end == argv[i] || !(o.confidence > 0 && o.confidence < 1)) {
        usage_error("--confidence %s: a number between 0 and 1, such as 0.95",
                    argv[i]);
        status = EXIT_CONFIG;
      }
    } else if (strcmp(a, "--by") == 0 && has) {
      if (strcmp(argv[++i], "category") != 0) {
        usage_error("--by %s: a report breaks down by category only", argv[i]);
        status = EXIT_CONFIG;
      }
      o.by_category = true;
    } else if (strcmp(a, "--json") == 0)
      json = true;
    else if (strcmp(a, "--html") == 0 && has && !html)
      html = argv[++i];
    else if (strcmp(a, "--refusals") == 0 && has && !refusals)
      refusals = argv[++i];
    else if (strcmp(a, "--tasks") == 0 && has && !tasks)
      tasks = argv[++i];
    else if (strcmp(a, "--plugins") == 0 && has && !plugins)
      plugins = argv[++i];
    else if (strcmp(a, "--results") == 0)
      results = true;
    else if (results && a[0] != '-')
      files[nfiles++] = argv[i];
    else
      goto bad_usage;
  }
  if (status != 0) {
    free(files);
    return status;
  }
  if (json && html != NULL) {
    fprintf(stderr, "tally: --json and --html: give one of them\n");
    free(files);
    return EXIT_CONFIG;
  }
  bool offline = nfiles > 0;
  if (offline && (tasks == NULL || remote_given)) {
    fprintf(stderr, "tally: --results: scores job files offline, with "
                    "--tasks DIR, and without Redis\n");
    free(files);
    return EXIT_CONFIG;
  }
  if (!offline && (tasks != NULL || plugins != NULL || results)) {
    fprintf(stderr, "tally: --tasks: only with --results FILE...\n");
    free(files);
    return EXIT_CONFIG;
  }
  if (!offline && o.contest == NULL)
    goto bad_usage;

  size_t nref = 0;
  char **ref = refusals != NULL ? read_refusals(refusals, &nref) : NULL;
  if (refusals != NULL && ref == NULL) {
    free(files);
    return EXIT_CONFIG;
  }
  report_data_t d;
  report_data_init(&d);
  cli_t c;
  memset(&c, 0, sizeof(c));
  if (offline) {
    status = cli_load(&c, plugins, tasks);
    if (status == 0)
      status = read_offline(&c, nfiles, files, &o, (const char *const *)ref,
                            nref, &d);
    cli_close(&c);
  } else {
    status = remote_open(&r) != 0 || (o.contest != NULL &&
                                      remote_use_contest(&r, o.contest) != 0)
                 ? EXIT_JOB_FAILED
                 : 0;
    if (status == 0)
      status = read_redis(&r, &o, (const char *const *)ref, nref, &d);
    remote_close(&r);
  }
  tally_buf_t b;
  tally_buf_init(&b);
  if (status == 0 && report_json(&d, &o, &b) != 0) {
    fprintf(stderr, "tally: out of memory\n");
    status = EXIT_JOB_FAILED;
  }
  if (status == 0) {
    if (json) {
      tally_buf_putc(&b, '\n');
      fwrite(b.data, 1, b.len, stdout);
    } else if (html != NULL) {
      status = report_print_html(tally_buf_text(&b), b.len, html);
    } else {
      status = report_print_table(tally_buf_text(&b), b.len, o.by_category);
    }
  }
  tally_buf_close(&b);
  report_data_close(&d);
  for (size_t i = 0; i < nref; i++)
    free(ref[i]);
  free(ref);
  free(files);
  return cli_flush_stdout(status, "the report");

bad_usage:
  free(files);
  cli_usage(stderr);
  return EXIT_CONFIG;
}
