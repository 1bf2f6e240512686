/* tally submit: job lines pushed to the jobs streams. */
#include "cli/cli.h"
#include "redis/keys.h"
#include "redis/redis.h"
#include "redis/slots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A connection jobs go out on: r->c (conns[0]), or on a cluster the
 * master of another queue's slot. */
typedef struct pushconn_s {
  redisContext *c; /* owned, except conns[0] */
  long pushed;     /* jobs it took, for --wait-replicas */
} pushconn_t;

/* A contest's jobs stream and its connection, as looked up once. */
typedef struct route_s {
  char *contest;
  char *jobs;
  size_t conn;
} route_t;

/* An XADD sent whose reply is not read yet: kept whole, so that a
 * cluster's MOVED or ASK (a slot migrating meanwhile) sends it again. */
typedef struct flying_s {
  size_t conn;
  char *cmd;
  size_t len;
  const char *jobs;
} flying_t;

typedef struct submit_s {
  remote_t *r;
  route_t *routes; /* without --queue: each contest's queue's stream */
  size_t nroutes;
  route_t given; /* with --queue: its stream */
  pushconn_t *conns;
  size_t nconns;
  flying_t fly[PIPELINE]; /* in the order sent */
  size_t inflight;
  bool map_read, cluster; /* what CLUSTER SLOTS said */
  tally_slot_map_t map;
  bool ids; /* print each entry's ID */
  long pushed;
  long rejected;
} submit_t;

/* Where a connection goes, for messages. */
static const char *conn_name(const submit_t *s, size_t k, char *buf,
                             size_t len) {
  const redisContext *c = s->conns[k].c;
  if (k == 0 || c->connection_type != REDIS_CONN_TCP || c->tcp.host == NULL)
    return s->r->url;
  snprintf(buf, len, "%s:%d", c->tcp.host, c->tcp.port);
  return buf;
}

/* Reads the reply of the oldest XADD in flight, following a cluster's
 * redirection. NULL after a failure (printed). */
static redisReply *reply_of(submit_t *s, const flying_t *f) {
  char where[96];
  redisContext *c = s->conns[f->conn].c;
  void *p = NULL;
  if (redisGetReply(c, &p) != REDIS_OK) {
    fprintf(stderr, "tally: Redis at %s: %s\n",
            conn_name(s, f->conn, where, sizeof(where)),
            c->errstr[0] ? c->errstr : "connection lost");
    return NULL;
  }
  redisReply *reply = p;
  bool ask;
  unsigned slot;
  char host[64], err[1024];
  int port;
  if (reply->type != REDIS_REPLY_ERROR ||
      !tally_redirect_parse(reply->str, reply->len, &ask, &slot, host, &port))
    return reply;
  freeReplyObject(reply);
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, s->r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
    return NULL;
  }
  /* Sent again to the node the redirection names (never on c, whose
   * later replies are still to be read), on a connection of its own,
   * following any further redirection. */
  redisContext *a = tally_redis_connect_node_sync(&u, host, port, TIMEOUT_MS,
                                                  err, sizeof(err));
  redisReply *asking = a != NULL && ask ? redisCommand(a, "ASKING") : NULL;
  if (asking != NULL)
    freeReplyObject(asking);
  reply = a != NULL ? tally_redis_run_sync(a, &s->r->aside, &u, f->cmd, f->len,
                                           TIMEOUT_MS, err, sizeof(err))
                    : NULL;
  if (a != NULL)
    redisFree(a);
  tally_redis_url_free(&u);
  if (reply == NULL)
    fprintf(stderr, "tally: %s\n", err);
  return reply;
}

/* Reads the replies to every XADD in flight, in the order sent, printing
 * the IDs with --ids. Returns 0, or EXIT_CONFIG with a message printed
 * when Redis failed. */
static int submit_drain(submit_t *s) {
  int status = 0;
  size_t k = 0;
  for (; k < s->inflight; k++) {
    flying_t *f = &s->fly[k];
    redisReply *reply = status == 0 ? reply_of(s, f) : NULL;
    if (reply == NULL) {
      status = EXIT_CONFIG;
    } else if (reply->type == REDIS_REPLY_STRING) {
      s->pushed++;
      s->conns[f->conn].pushed++;
      if (s->ids)
        printf("%s\n", reply->str);
    } else if (status == 0) {
      fprintf(stderr, "tally: Redis at %s: XADD %s: %s\n", s->r->url, f->jobs,
              reply->type == REDIS_REPLY_ERROR ? reply->str
                                               : "unexpected reply");
      status = EXIT_CONFIG;
    }
    if (reply != NULL)
      freeReplyObject(reply);
    redisFreeCommand(f->cmd);
  }
  s->inflight = 0;
  return status;
}

/* The connection to the master that serves the slot of key jobs: r->c
 * on one server (or a queue that --queue named). Returns its index, or
 * -1 after a failure (printed). */
static long conn_for(submit_t *s, const char *jobs, const char *q) {
  if (!s->map_read) {
    s->map_read = true;
    redisReply *x = remote_cmd(s->r, "CLUSTER SLOTS");
    char why[200];
    s->cluster = x != NULL && !tally_slots_disabled(x);
    if (s->cluster && tally_slot_map_read(x, &s->map, why, sizeof(why)) != 0) {
      fprintf(stderr, "tally: Redis at %s: CLUSTER SLOTS: %s\n", s->r->url,
              x->type == REDIS_REPLY_ERROR ? x->str : why);
      s->cluster = false; /* no map to free */
      freeReplyObject(x);
      return -1;
    }
    if (x != NULL)
      freeReplyObject(x);
    else
      return -1;
  }
  if (!s->cluster)
    return 0;
  if (strcmp(q, TALLY_MAIN_QUEUE) == 0) {
    fprintf(stderr,
            "tally: Redis at %s is a cluster, where queue " TALLY_MAIN_QUEUE
            " cannot live (its keys have no hash tag): give --queue, or "
            "--default-queue, or a \"queue\" in the contest's config\n",
            s->r->url);
    return -1;
  }
  unsigned slot = tally_key_slot(jobs, strlen(jobs));
  const tally_slot_range_t *range = tally_slot_map_find(&s->map, slot);
  const redisContext *c0 = s->conns[0].c;
  const char *host = range == NULL    ? NULL
                     : range->host[0] ? range->host
                                      : c0->tcp.host;
  if (host == NULL) {
    fprintf(stderr, "tally: Redis at %s: no master serves slot %u\n", s->r->url,
            slot);
    return -1;
  }
  for (size_t k = 0; k < s->nconns; k++) {
    if (tally_redis_sync_at(s->conns[k].c, host, range->port))
      return (long)k;
  }
  char err[1024];
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, s->r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
    return -1;
  }
  redisContext *c = tally_redis_connect_node_sync(&u, host, range->port,
                                                  TIMEOUT_MS, err, sizeof(err));
  tally_redis_url_free(&u);
  pushconn_t *grown =
      c == NULL ? NULL : realloc(s->conns, (s->nconns + 1) * sizeof(*grown));
  if (grown == NULL) {
    fprintf(stderr, "tally: %s\n", c == NULL ? err : "out of memory");
    if (c != NULL)
      redisFree(c);
    return -1;
  }
  s->conns = grown;
  s->conns[s->nconns] = (pushconn_t){.c = c};
  return (long)s->nconns++;
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

/* The route of a job of contest: --queue's stream on r->c, else its
 * contest's queue's stream (looked up once per contest, after the replies
 * in flight are read, as hiredis reads replies in order) on the master of
 * its slot. NULL after a failure (printed). */
static const route_t *route_of(submit_t *s, const char *contest) {
  if (s->r->queue != NULL) {
    s->given = (route_t){.jobs = s->r->jobs, .conn = 0};
    return &s->given;
  }
  for (size_t i = 0; i < s->nroutes; i++)
    if (strcmp(s->routes[i].contest, contest) == 0)
      return &s->routes[i];
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
  long conn = conn_for(s, rt->jobs, q);
  if (conn < 0) {
    free(rt->contest);
    free(rt->jobs);
    return NULL;
  }
  rt->conn = (size_t)conn;
  s->nroutes++;
  return rt;
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
  const route_t *rt = route_of(s, contest);
  if (rt == NULL)
    return EXIT_CONFIG;
  const char *argv[] = {"XADD", rt->jobs, "*", "job", line};
  const size_t lens[] = {4, strlen(rt->jobs), 1, 3, len};
  flying_t *f = &s->fly[s->inflight];
  int n = redisFormatCommandArgv(&f->cmd, 5, argv, lens);
  if (n < 0 || redisAppendFormattedCommand(s->conns[rt->conn].c, f->cmd,
                                           (size_t)n) != REDIS_OK) {
    if (n >= 0)
      redisFreeCommand(f->cmd);
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  f->len = (size_t)n;
  f->conn = rt->conn;
  f->jobs = rt->jobs;
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
  s.conns = connected ? malloc(sizeof(*s.conns)) : NULL;
  if (connected && s.conns == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    status = EXIT_CONFIG;
  } else if (connected) {
    s.conns[0] = (pushconn_t){.c = r.c};
    s.nconns = 1;
  }
  for (int k = 0; status == 0 && k < nfiles; k++)
    status = submit_stream(&s, files[k], names[k]);
  if (s.nconns > 0) {
    /* After a failure this still counts what did get through. */
    int drained = submit_drain(&s);
    status = status != 0 ? status : drained;
    /* What got through is on that many replicas of each master that took
     * jobs, or this says not. */
    for (size_t k = 0; wait_replicas > 0 && k < s.nconns; k++) {
      if (s.conns[k].pushed == 0)
        continue;
      redisReply *w =
          redisCommand(s.conns[k].c, "WAIT %ld 5000", wait_replicas);
      if (w == NULL || w->type != REDIS_REPLY_INTEGER ||
          w->integer < wait_replicas) {
        char where[96];
        fprintf(stderr,
                "tally: Redis at %s: the jobs reached %lld of %ld replicas "
                "within 5 s: a failover now may lose them\n",
                conn_name(&s, k, where, sizeof(where)),
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
  for (size_t k = 1; k < s.nconns; k++)
    redisFree(s.conns[k].c);
  free(s.conns);
  if (s.map_read && s.cluster)
    tally_slot_map_free(&s.map);
  remote_close(&r);
  if (status == 0 && s.rejected > 0)
    status = EXIT_JOB_FAILED;
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
