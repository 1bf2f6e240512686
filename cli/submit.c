/* tally submit: job lines pushed to the jobs streams. */
#include "cli/cli.h"
#include "redis/keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A contest's jobs stream, as looked up once. */
typedef struct route_s {
  char *contest;
  char *jobs;
} route_t;

typedef struct submit_s {
  remote_t *r;
  route_t *routes; /* without --queue: each contest's queue's stream */
  size_t nroutes;
  bool ids;        /* print each entry's ID */
  size_t inflight; /* XADDs sent whose replies are not read yet */
  long pushed;
  long rejected;
} submit_t;

/* Reads the replies to every XADD in flight, printing the IDs with --ids.
 * Returns 0, or EXIT_CONFIG with a message printed when Redis failed. */
static int submit_drain(submit_t *s) {
  int status = 0;
  if (s->r->c->err)
    return EXIT_CONFIG; /* reported when it happened */
  while (s->inflight > 0) {
    void *p;
    if (redisGetReply(s->r->c, &p) != REDIS_OK) {
      remote_io_error(s->r);
      return EXIT_CONFIG;
    }
    redisReply *reply = p;
    s->inflight--;
    if (reply->type == REDIS_REPLY_STRING) {
      s->pushed++;
      if (s->ids)
        printf("%s\n", reply->str);
    } else if (status == 0) {
      fprintf(
          stderr, "tally: Redis at %s: XADD %s: %s\n", s->r->url, s->r->jobs,
          reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
      status = EXIT_CONFIG;
    }
    freeReplyObject(reply);
  }
  return status;
}

/* Says what is wrong with a line of JSON Lines as a job, or returns NULL
 * if it is a JSON object. msg holds a message built on the spot; contest
 * (contestlen bytes) gets the job's contest id ("default" when none). */
static const char *job_problem(const char *line, size_t len, char *msg,
                               size_t msglen, char *contest,
                               size_t contestlen) {
  if (strlen(line) != len)
    return "contains a NUL byte";
  const char *end = NULL;
  cJSON *v = cJSON_ParseWithOpts(line, &end, 1);
  if (v == NULL) {
    size_t col = end != NULL && end >= line ? (size_t)(end - line) + 1 : 1;
    snprintf(msg, msglen, "invalid JSON at column %zu", col);
    return msg;
  }
  bool object = cJSON_IsObject(v);
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "contest");
  if (cJSON_IsString(c))
    snprintf(contest, contestlen, "%s", c->valuestring);
  else if (cJSON_IsNumber(c))
    snprintf(contest, contestlen, "%.0f", c->valuedouble);
  else
    snprintf(contest, contestlen, "default");
  cJSON_Delete(v);
  return object ? NULL : "not a JSON object";
}

/* The stream a job of contest goes to: --queue's, else its contest's
 * queue's (looked up once per contest, after the replies in flight are
 * read, as hiredis reads replies in order). NULL after a failure
 * (printed). */
static const char *jobs_of(submit_t *s, const char *contest) {
  if (s->r->queue != NULL)
    return s->r->jobs;
  for (size_t i = 0; i < s->nroutes; i++)
    if (strcmp(s->routes[i].contest, contest) == 0)
      return s->routes[i].jobs;
  if (submit_drain(s) != 0)
    return NULL;
  char q[TALLY_QUEUE_NAME_MAX + 1], prefix[200];
  if (remote_queue_of(s->r, contest, q, sizeof(q)) != 0 ||
      tally_queue_prefix(prefix, sizeof(prefix), s->r->prefix, q) != 0)
    return NULL;
  route_t *grown = realloc(s->routes, (s->nroutes + 1) * sizeof(*grown));
  if (grown == NULL)
    return NULL;
  s->routes = grown;
  route_t *rt = &s->routes[s->nroutes];
  size_t n = strlen(prefix) + 6;
  rt->contest = strdup(contest);
  rt->jobs = malloc(n);
  if (rt->contest == NULL || rt->jobs == NULL) {
    free(rt->contest);
    free(rt->jobs);
    return NULL;
  }
  snprintf(rt->jobs, n, "%s:jobs", prefix);
  s->nroutes++;
  return rt->jobs;
}

/* Sends every job line of f with XADD, pipelined; rejects the lines that
 * are not JSON objects with a message naming name and the line. Returns
 * 0, or EXIT_CONFIG with a message printed. */
typedef struct submit_ctx_s {
  submit_t *s;
  const char *name;
} submit_ctx_t;

static int submit_line(void *ctx, char *line, size_t len,
                       unsigned long lineno) {
  submit_ctx_t *sc = ctx;
  submit_t *s = sc->s;
  char msg[64], contest[256];
  if (strspn(line, " \t") == len)
    return 0;
  const char *bad =
      job_problem(line, len, msg, sizeof(msg), contest, sizeof(contest));
  if (bad != NULL) {
    fprintf(stderr, "%s:%lu: %s\n", sc->name, lineno, bad);
    s->rejected++;
    return 0;
  }
  const char *jobs = jobs_of(s, contest);
  if (jobs == NULL)
    return EXIT_CONFIG;
  const char *argv[] = {"XADD", jobs, "*", "job", line};
  const size_t lens[] = {4, strlen(jobs), 1, 3, len};
  if (redisAppendCommandArgv(s->r->c, 5, argv, lens) != REDIS_OK) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  return ++s->inflight >= PIPELINE ? submit_drain(s) : 0;
}

static int submit_stream(submit_t *s, FILE *f, const char *name) {
  submit_ctx_t sc = {s, name};
  int status = cli_each_line(f, name, submit_line, &sc);
  return status == TALLY_EIO ? EXIT_CONFIG : status;
}

int cmd_submit(int argc, char **argv) {
  remote_t r;
  submit_t s = {.r = &r};
  remote_init(&r);
  int i = 0, status = 0;
  long wait_replicas = 0;
  for (; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--ids") == 0)
      s.ids = true;
    else if (strcmp(argv[i], "--wait-replicas") == 0 && i + 1 < argc) {
      long n = cli_positive(argv[++i]);
      if (n < 1 || n > 100) {
        fprintf(stderr,
                "tally: --wait-replicas %s: must be a number from 1 "
                "to 100\n",
                argv[i]);
        return EXIT_CONFIG;
      }
      wait_replicas = n;
    } else if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0')
      goto bad_usage;
    else
      break;
  }

  /* Every file opens before anything is sent, so that a typo in a path
   * does not leave half of the jobs submitted. */
  int nfiles = i == argc ? 1 : argc - i;
  FILE **files = calloc((size_t)nfiles, sizeof(*files));
  const char **names = calloc((size_t)nfiles, sizeof(*names));
  if (files == NULL || names == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    status = EXIT_CONFIG;
  }
  for (int k = 0; files != NULL && names != NULL && k < nfiles; k++) {
    const char *path = i == argc ? "-" : argv[i + k];
    bool std = strcmp(path, "-") == 0;
    names[k] = std ? "stdin" : path;
    files[k] = std ? stdin : fopen(path, "r");
    if (files[k] == NULL) {
      fprintf(stderr, "tally: %s: %s\n", path, strerror(errno));
      status = EXIT_CONFIG;
    }
  }
  bool connected = status == 0 && (status = remote_open(&r)) == 0;
  for (int k = 0; status == 0 && k < nfiles; k++)
    status = submit_stream(&s, files[k], names[k]);
  if (connected) {
    /* After a failure this still counts what did get through. */
    int drained = submit_drain(&s);
    status = status != 0 ? status : drained;
    if (wait_replicas > 0 && s.pushed > 0) {
      /* What got through is on that many replicas, or this says not. */
      redisReply *w = remote_cmd(&r, "WAIT %ld 5000", wait_replicas);
      if (w == NULL || w->type != REDIS_REPLY_INTEGER ||
          w->integer < wait_replicas) {
        fprintf(stderr,
                "tally: Redis at %s: the jobs reached %lld of %ld replicas "
                "within 5 s: a failover now may lose them\n",
                r.url,
                w != NULL && w->type == REDIS_REPLY_INTEGER ? w->integer : 0,
                wait_replicas);
        status = status != 0 ? status : EXIT_JOB_FAILED;
      }
      if (w != NULL)
        freeReplyObject(w);
    }
    fprintf(stderr, "submitted %ld job%s (%ld rejected)\n", s.pushed,
            s.pushed == 1 ? "" : "s", s.rejected);
  }
  status = cli_flush_stdout(status, "the IDs");
  for (int k = 0; files != NULL && k < nfiles; k++)
    if (files[k] != NULL && files[k] != stdin)
      fclose(files[k]);
  free(files);
  free(names);
  for (size_t k = 0; k < s.nroutes; k++) {
    free(s.routes[k].contest);
    free(s.routes[k].jobs);
  }
  free(s.routes);
  remote_close(&r);
  if (status == 0 && s.rejected > 0)
    status = EXIT_JOB_FAILED;
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
