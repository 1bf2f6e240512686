/* The Redis connection of the commands that talk to tallyd's Redis. */
#include "cli/cli.h"
#include "redis/redis.h"

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
}

/* Takes the flag at argv[*i] if it is one that every Redis subcommand
 * shares. Returns 1 if it was (and moves *i onto its value), 0 if not, and
 * -1 if its value is missing. */
int remote_flag(remote_t *r, int argc, char **argv, int *i) {
  static const char *const names[] = {"--redis", "--data-dir", "--prefix",
                                      "--redis-password-file",
                                      "--sentinel-password-file"};
  const char **slots[] = {&r->redis, &r->data_dir, &r->prefix,
                          &r->password_file, &r->sentinel_password_file};
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
  free(r->url);
  free(r->jobs);
  free(r->results);
  free(r->dead);
  r->c = NULL;
  r->url = r->jobs = r->results = r->dead = NULL;
}

/* Runs a command (hiredis format: each %s is one argument). Returns the
 * reply, which the caller frees, error replies included; on a connection
 * failure prints why and returns NULL. */
redisReply *remote_cmd(remote_t *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *reply = redisvCommand(r->c, fmt, ap);
  va_end(ap);
  if (reply == NULL)
    remote_io_error(r);
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

/* Works out the URL and key names, connects, and selects the database.
 * Returns 0, or EXIT_CONFIG with the cause (the URL and hiredis's error)
 * printed. Either way r is closed with remote_close. */
int remote_open(remote_t *r) {
  char err[1024];
  if (remote_url(r) != 0)
    return EXIT_CONFIG;
  r->jobs = join(r->prefix, ":jobs");
  r->results = join(r->prefix, ":results");
  r->dead = join(r->prefix, ":dead");
  if (r->jobs == NULL || r->results == NULL || r->dead == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
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
  return 0;
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
