/* The Redis connection of the commands that talk to tallyd's Redis. */
#include "cli/cli.h"
#include "redis/keys.h"
#include "redis/redis.h"
#include "redis/slots.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

void remote_init(remote_t *r) {
  memset(r, 0, sizeof(*r));
  r->data_dir = "tally-data";
  r->prefix = "tally";
  r->default_queue = TALLY_MAIN_QUEUE;
}

/* Takes the flag at argv[*i] if it is one that every Redis subcommand
 * shares. Returns 1 if it was (and moves *i onto its value), 0 if not, and
 * -1 if its value is missing. */
int remote_flag(remote_t *r, int argc, char **argv, int *i) {
  static const char *const names[] = {"--redis",
                                      "--data-dir",
                                      "--prefix",
                                      "--redis-password-file",
                                      "--sentinel-password-file",
                                      "--queue",
                                      "--default-queue"};
  const char **slots[] = {&r->redis,
                          &r->data_dir,
                          &r->prefix,
                          &r->password_file,
                          &r->sentinel_password_file,
                          &r->queue,
                          &r->default_queue};
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
    if (strcmp(argv[*i], names[k]) != 0)
      continue;
    if (*i + 1 >= argc)
      return -1;
    *slots[k] = argv[++*i];
    return 1;
  }
  return 0;
}

/* Joins a and b into a malloc'ed string; NULL when out of memory. */
static char *join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *s = malloc(la + lb + 1);
  if (s != NULL) {
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
  }
  return s;
}

/* The URL of the server that tallyd embeds: unix://ABS/DATA/redis.sock.
 * Returns a malloc'ed string, or NULL when out of memory or when the
 * current folder cannot be read (errno says which). */
static char *embedded_url(const char *data_dir) {
  char cwd[PATH_MAX];
  if (data_dir[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL)
    return NULL;
  const char *base = data_dir[0] == '/' ? "" : cwd;
  const char *sep = data_dir[0] == '/' ? "" : "/";
  size_t n = strlen(base) + strlen(data_dir) + 32;
  char *url = malloc(n);
  if (url != NULL)
    snprintf(url, n, "unix://%s%s%s/redis.sock", base, sep, data_dir);
  return url;
}

/* Reports that the connection failed, with hiredis's reason. */
void remote_io_error(const remote_t *r) {
  fprintf(stderr, "tally: Redis at %s: %s\n", r->url,
          r->c->errstr[0] ? r->c->errstr : "connection lost");
}

void remote_close(remote_t *r) {
  if (r->c != NULL)
    redisFree(r->c);
  if (r->aside != NULL)
    redisFree(r->aside);
  free(r->url);
  free(r->jobs);
  free(r->results);
  free(r->dead);
  r->c = r->aside = NULL;
  r->url = r->jobs = r->results = r->dead = NULL;
}

/* Runs a command (hiredis format: each %s is one argument). On a
 * cluster a key of another slot than the queue's (a global key such as
 * <p>:freezes) is answered by the node its MOVED names, through r->aside.
 * Returns the reply, which the caller frees, error replies included; on a
 * connection failure prints why and returns NULL. */
redisReply *remote_cmd(remote_t *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *cmd = NULL;
  int len = redisvFormatCommand(&cmd, fmt, ap);
  va_end(ap);
  if (len < 0) {
    fprintf(stderr, "tally: out of memory\n");
    return NULL;
  }
  char err[1024];
  tally_redis_url_t u;
  redisReply *reply = NULL;
  if (tally_redis_url_parse(&u, r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
  } else {
    reply = tally_redis_run_sync(r->c, &r->aside, &u, cmd, (size_t)len,
                                 TIMEOUT_MS, err, sizeof(err));
    if (reply == NULL)
      fprintf(stderr, "tally: %s\n", err);
    tally_redis_url_free(&u);
  }
  redisFreeCommand(cmd);
  return reply;
}

/* Checks that reply has the type wanted. If not, prints the error reply
 * (or says the reply is unexpected) naming what, frees reply and returns
 * NULL. A NULL reply stays NULL. */
redisReply *cli_expect(remote_t *r, redisReply *reply, int type,
                       const char *what) {
  if (reply == NULL || reply->type == type)
    return reply;
  fprintf(stderr, "tally: Redis at %s: %s: %s\n", r->url, what,
          reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
  freeReplyObject(reply);
  return NULL;
}

/* Works out the URL into r->url, without its password, which goes to
 * the environment (tally_redis_credentials). Returns 0, or EXIT_CONFIG
 * with the cause printed. */
int remote_url(remote_t *r) {
  char *url = r->redis ? strdup(r->redis) : embedded_url(r->data_dir);
  if (url == NULL) {
    fprintf(stderr, "tally: %s\n", strerror(errno));
    return EXIT_CONFIG;
  }
  char err[1024], *clean = NULL;
  int rc =
      tally_redis_credentials(url, r->password_file, &clean, err, sizeof(err));
  free(url);
  /* Then the sentinels' password, for a sentinel:// URL. */
  if (rc == 0) {
    rc = tally_redis_sentinel_credentials(clean, r->sentinel_password_file,
                                          &r->url, err, sizeof(err));
    free(clean);
  }
  if (rc != 0) {
    fprintf(stderr, "tally: %s\n", err);
    return EXIT_CONFIG;
  }
  return 0;
}

/* The keys of queue q. Returns 0, or EXIT_CONFIG (printed). */
static int queue_keys(remote_t *r, const char *q) {
  if (!tally_queue_name_ok(q)) {
    fprintf(stderr,
            "tally: \"%s\" is not a queue name: 1 to %d letters, digits, "
            "'-', '_' or '.'\n",
            q, TALLY_QUEUE_NAME_MAX);
    return EXIT_CONFIG;
  }
  if (strpbrk(r->prefix, "{}") != NULL) {
    fprintf(stderr,
            "tally: --prefix %s: must not contain '{' or '}' (each queue's "
            "keys carry their own Redis Cluster hash tag)\n",
            r->prefix);
    return EXIT_CONFIG;
  }
  if (tally_queue_prefix(r->qprefix, sizeof(r->qprefix), r->prefix, q) != 0) {
    fprintf(stderr, "tally: --prefix %s: too long\n", r->prefix);
    return EXIT_CONFIG;
  }
  snprintf(r->queue_in_use, sizeof(r->queue_in_use), "%s", q);
  free(r->jobs);
  free(r->results);
  free(r->dead);
  r->jobs = join(r->qprefix, ":jobs");
  r->results = join(r->qprefix, ":results");
  r->dead = join(r->qprefix, ":dead");
  if (r->jobs == NULL || r->results == NULL || r->dead == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  return 0;
}

int remote_use_queue(remote_t *r, const char *q) {
  int status = queue_keys(r, q);
  if (status != 0 || r->c == NULL)
    return status;
  /* On a cluster: the master of the queue's slot. */
  tally_redis_url_t u;
  char err[1024];
  if (tally_redis_url_parse(&u, r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
    return EXIT_CONFIG;
  }
  bool cluster;
  int rc =
      tally_redis_slot_sync(&r->c, &u, tally_key_slot(r->jobs, strlen(r->jobs)),
                            TIMEOUT_MS, &cluster, err, sizeof(err));
  tally_redis_url_free(&u);
  if (rc != 0) {
    fprintf(stderr, "tally: %s\n", err);
    return EXIT_CONFIG;
  }
  if (cluster && strcmp(q, TALLY_MAIN_QUEUE) == 0) {
    fprintf(stderr,
            "tally: Redis at %s is a cluster, where queue " TALLY_MAIN_QUEUE
            " cannot live (its keys have no hash tag): give --queue, or "
            "--default-queue\n",
            r->url);
    return EXIT_CONFIG;
  }
  return 0;
}

int remote_queue_of(remote_t *r, const char *contest, char *out, size_t len) {
  if (r->queue != NULL) {
    snprintf(out, len, "%s", r->queue);
    return 0;
  }
  redisReply *x = remote_cmd(r, "HGET %s:queues %s", r->prefix, contest);
  if (x == NULL)
    return EXIT_CONFIG;
  /* On a cluster the hash may live on another master: then the default. */
  snprintf(out, len, "%s",
           x->type == REDIS_REPLY_STRING && tally_queue_name_ok(x->str)
               ? x->str
               : r->default_queue);
  freeReplyObject(x);
  return 0;
}

int remote_use_contest(remote_t *r, const char *contest) {
  char q[TALLY_QUEUE_NAME_MAX + 1];
  int rc = remote_queue_of(r, contest, q, sizeof(q));
  if (rc != 0)
    return rc;
  /* A contest no tallyd published, on a cluster with no default queue
   * given: unknown there, rather than in queue main. */
  redisReply *x = r->queue == NULL && strcmp(q, TALLY_MAIN_QUEUE) == 0
                      ? redisCommand(r->c, "CLUSTER SLOTS")
                      : NULL;
  bool cluster = x != NULL && !tally_slots_disabled(x);
  if (x != NULL)
    freeReplyObject(x);
  if (cluster) {
    fprintf(stderr,
            "tally: no contest \"%s\" at %s: no tallyd has published its "
            "queue in %s:queues (and queue " TALLY_MAIN_QUEUE
            " cannot live on a cluster); give --queue for a contest tallyd "
            "does not know\n",
            contest, r->url, r->prefix);
    return EXIT_CONFIG;
  }
  return remote_use_queue(r, q);
}

/* Works out the URL and key names, connects, and selects the database;
 * the queue is --queue, else --default-queue (a command about one
 * contest then calls remote_use_contest). Returns 0, or EXIT_CONFIG with
 * the cause (the URL and hiredis's error) printed. Either way r is closed
 * with remote_close. */
int remote_open(remote_t *r) {
  char err[1024];
  if (remote_url(r) != 0)
    return EXIT_CONFIG;
  if (queue_keys(r, r->queue != NULL ? r->queue : r->default_queue) != 0)
    return EXIT_CONFIG;
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
    return EXIT_CONFIG;
  }
  r->c = tally_redis_connect_sync(&u, TIMEOUT_MS, err, sizeof(err));
  tally_redis_url_free(&u);
  if (r->c == NULL) {
    fprintf(stderr, "tally: %s%s\n", err,
            r->redis ? ""
                     : " (this is the server tallyd starts in its data "
                       "folder: is tallyd running there? else give "
                       "--data-dir or --redis)");
    return EXIT_CONFIG;
  }
  /* A queue named: its slot's master on a cluster. */
  return r->queue != NULL ? remote_use_queue(r, r->queue) : 0;
}

/* remote_open, then for a command about one queue and no contest: the
 * default queue when --queue is not given (on a cluster its slot's
 * master, or the error that main cannot live there). */
int remote_open_queue(remote_t *r) {
  int status = remote_open(r);
  if (status == 0 && r->queue == NULL)
    status = remote_use_queue(r, r->default_queue);
  return status;
}

/* The value after name in a flat array of names and values, as XINFO
 * replies are; NULL if there is none. */
const redisReply *cli_field(const redisReply *a, const char *name) {
  if (a == NULL || a->type != REDIS_REPLY_ARRAY)
    return NULL;
  for (size_t k = 0; k + 1 < a->elements; k += 2)
    if (a->element[k]->type == REDIS_REPLY_STRING &&
        strcmp(a->element[k]->str, name) == 0)
      return a->element[k + 1];
  return NULL;
}

/* The integer of a field, or dflt if it is missing or not an integer. */
long long cli_int_field(const redisReply *a, const char *name, long long dflt) {
  const redisReply *v = cli_field(a, name);
  return v != NULL && v->type == REDIS_REPLY_INTEGER ? v->integer : dflt;
}

/* The string of a reply, or NULL if it is not a string. */
const char *cli_str_of(const redisReply *v) {
  return v != NULL && (v->type == REDIS_REPLY_STRING ||
                       v->type == REDIS_REPLY_STATUS)
             ? v->str
             : NULL;
}

int remote_queues(remote_t *r, tally_queues_t *q) {
  if (r->queue != NULL)
    return tally_queues_pick(q, r->queue, r->default_queue, NULL) == 0
               ? 0
               : EXIT_CONFIG;
  char err[1024];
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, r->url, err, sizeof(err)) != 0) {
    fprintf(stderr, "tally: bad Redis URL %s\n", err);
    return EXIT_CONFIG;
  }
  redisContext *c = tally_redis_connect_sync(&u, TIMEOUT_MS, err, sizeof(err));
  if (c == NULL) {
    tally_redis_url_free(&u);
    /* As a rescore that cannot connect says it. */
    fprintf(stderr, "tally: rescore: %s\n", err);
    return EXIT_JOB_FAILED;
  }
  redisReply *slots = redisCommand(c, "CLUSTER SLOTS");
  r->cluster = slots != NULL && !tally_slots_disabled(slots) &&
               slots->type == REDIS_REPLY_ARRAY;
  if (slots != NULL)
    freeReplyObject(slots);
  /* On a cluster the hash is on the master its MOVED names. */
  char *cmd = NULL;
  int len = redisFormatCommand(&cmd, "HVALS %s:queues", r->prefix);
  redisContext *aside = NULL;
  redisReply *x = len < 0
                      ? NULL
                      : tally_redis_run_sync(c, &aside, &u, cmd, (size_t)len,
                                             TIMEOUT_MS, err, sizeof(err));
  redisFreeCommand(cmd);
  if (aside != NULL)
    redisFree(aside);
  tally_redis_url_free(&u);
  /* The published queues as a list, each once (pick drops repeats). */
  tally_buf_t list;
  tally_buf_init(&list);
  /* Queue main has no hash tag, so no keys on a cluster: not a queue
   * there. */
  bool main_out = r->cluster && strcmp(r->default_queue, TALLY_MAIN_QUEUE) == 0;
  if (!main_out)
    tally_buf_puts(&list, r->default_queue);
  for (size_t i = 0;
       x != NULL && x->type == REDIS_REPLY_ARRAY && i < x->elements; i++)
    if (x->element[i]->type == REDIS_REPLY_STRING &&
        tally_queue_name_ok(x->element[i]->str) &&
        !(r->cluster && strcmp(x->element[i]->str, TALLY_MAIN_QUEUE) == 0)) {
      if (list.len > 0)
        tally_buf_putc(&list, ',');
      tally_buf_puts(&list, x->element[i]->str);
    }
  freeReplyObject(x);
  redisFree(c);
  if (!list.oom && list.len == 0) {
    tally_buf_close(&list);
    fprintf(stderr,
            "tally: Redis at %s is a cluster, where queue " TALLY_MAIN_QUEUE
            " cannot live, and no tallyd has published a contest's queue "
            "there yet: give --queue or --default-queue\n",
            r->url);
    return EXIT_CONFIG;
  }
  int rc = list.oom ? TALLY_ENOMEM
                    : tally_queues_pick(q, list.data, r->default_queue, NULL);
  tally_buf_close(&list);
  if (rc != 0) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  return 0;
}
