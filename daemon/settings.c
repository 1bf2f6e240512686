/* tallyd's settings: one table of every setting, applied first from the
 * JSON config file and then from the command-line flags. */
#include "daemon/settings.h"
#include "config/cfg.h"
#include "config/error.h"
#include "daemon/http.h"
#include "engine/contests.h"
#include "redis/redis.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#define MIB (1024u * 1024u)
#define DAY_MS 86400000u
#define PATH_BYTES 4095u    /* the longest path or URL accepted */
#define FILE_MAX (1u * MIB) /* the largest config file read */
#define WORKERS_MAX 256u

/* One value to store, from either source: the file gives JSON, a flag gives
 * text (which is also a whole number when it is all digits). */
typedef struct value_s {
  const char *text; /* a string, or NULL */
  bool whole;       /* num holds a whole number */
  double num;
  int boolean; /* 1 for true or "true", 0 for false or "false", else -1 */
} value_t;

/* What a setter needs besides the value. */
typedef struct parse_s {
  tally_settings_t *s;
  const char *dir; /* the config file's folder with its final '/', which
                      relative paths from the file are joined to */
  size_t dirlen;   /* 0 for flags, or a file in the current folder */
  bool nomem;
} parse_t;

typedef struct setting_s setting_t;

/* A setter stores v into the field of k. It returns NULL on success, or
 * what is wrong with v: a static string, or msg (len bytes) filled in. */
typedef const char *(*setter_t)(const setting_t *k, const value_t *v,
                                parse_t *p, char *msg, size_t len);

/* One setting: its key in the config file, its flag, and where it goes.
 * min and max bound the byte length of strings and the value of numbers. */
struct setting_s {
  const char *key;
  const char *flag;
  setter_t set;
  size_t offset;
  uint64_t min, max;
  const char *const *choices; /* for set_enum, NULL-terminated */
};

static const char *set_string(const setting_t *, const value_t *, parse_t *,
                              char *, size_t);
static const char *set_name(const setting_t *, const value_t *, parse_t *,
                            char *, size_t);
static const char *set_path(const setting_t *, const value_t *, parse_t *,
                            char *, size_t);
static const char *set_queues(const setting_t *, const value_t *, parse_t *,
                              char *, size_t);
static const char *set_url(const setting_t *, const value_t *, parse_t *,
                           char *, size_t);
static const char *set_listen(const setting_t *, const value_t *, parse_t *,
                              char *, size_t);
static const char *set_uint(const setting_t *, const value_t *, parse_t *,
                            char *, size_t);
static const char *set_u64(const setting_t *, const value_t *, parse_t *,
                           char *, size_t);
static const char *set_enum(const setting_t *, const value_t *, parse_t *,
                            char *, size_t);
static const char *set_bool(const setting_t *, const value_t *, parse_t *,
                            char *, size_t);

/* Indexed like tally_log_format_t and tally_log_level_t. */
static const char *const formats[] = {"text", "json", NULL};
static const char *const levels[] = {"debug", "info", "warn", "error", NULL};

#define AT(field) offsetof(tally_settings_t, field)

/* The largest count a stream may be told to keep. */
#define RETAIN_MAX 1000000000000ull

/* Every setting. The minimums: a claim below a second would take jobs from
 * consumers that are merely busy; max_job_bytes leaves 1 MiB of the
 * worker frame (64 MiB) for the rest of a batch. */
static const setting_t settings[] = {
    {"tasks", "--tasks", set_path, AT(tasks), 1, PATH_BYTES, NULL},
    {"contests", "--contests", set_path, AT(contests), 1, PATH_BYTES, NULL},
    {"plugins", "--plugins", set_path, AT(plugins), 1, PATH_BYTES, NULL},
    {"redis", "--redis", set_url, AT(redis), 1, PATH_BYTES, NULL},
    {"redis_password_file", "--redis-password-file", set_path,
     AT(redis_password_file), 1, PATH_BYTES, NULL},
    {"sentinel_password_file", "--sentinel-password-file", set_path,
     AT(sentinel_password_file), 1, PATH_BYTES, NULL},
    {"workers", "--workers", set_uint, AT(workers), 1, WORKERS_MAX, NULL},
    {"prefix", "--prefix", set_name, AT(prefix), 1, 64, NULL},
    {"consumer", "--consumer", set_string, AT(consumer), 1, 200, NULL},
    {"queues", "--queues", set_queues, AT(queues), 1, 4096, NULL},
    {"default_queue", "--default-queue", set_queues, AT(default_queue), 1,
     TALLY_QUEUE_NAME_MAX, NULL},
    {"claim_idle", "--claim-idle", set_u64, AT(claim_idle), 1000, DAY_MS, NULL},
    {"job_timeout", "--job-timeout", set_u64, AT(job_timeout), 1, DAY_MS, NULL},
    {"drain_timeout", "--drain-timeout", set_u64, AT(drain_timeout), 1, DAY_MS,
     NULL},
    {"max_deliveries", "--max-deliveries", set_uint, AT(max_deliveries), 1,
     1000, NULL},
    {"wait_replicas", "--wait-replicas", set_uint, AT(wait_replicas), 0, 100,
     NULL},
    {"data_dir", "--data-dir", set_path, AT(data_dir), 1, PATH_BYTES, NULL},
    {"log_format", "--log-format", set_enum, AT(log_format), 0, 0, formats},
    {"log_level", "--log-level", set_enum, AT(log_level), 0, 0, levels},
    {"batch", "--batch", set_uint, AT(batch), 1, 1024, NULL},
    {"max_job_bytes", "--max-job-bytes", set_u64, AT(max_job_bytes), 1024,
     63 * MIB, NULL},
    {"worker", "--worker", set_path, AT(worker), 1, PATH_BYTES, NULL},
    {"redis_server", "--redis-server", set_string, AT(redis_server), 1,
     PATH_BYTES, NULL},
    {"tally", "--tally", set_path, AT(tally), 1, PATH_BYTES, NULL},
    {"auto_rescore", "--auto-rescore", set_bool, AT(auto_rescore), 0, 0, NULL},
    {"pidfile", "--pidfile", set_path, AT(pidfile), 1, PATH_BYTES, NULL},
    {"retain_age", "--retain-age", set_u64, AT(retain_age), 0, 3650ull * DAY_MS,
     NULL},
    {"retain_results", "--retain-results", set_u64, AT(retain_results), 0,
     RETAIN_MAX, NULL},
    {"retain_public", "--retain-public", set_u64, AT(retain_public), 0,
     RETAIN_MAX, NULL},
    {"retain_changes", "--retain-changes", set_u64, AT(retain_changes), 0,
     RETAIN_MAX, NULL},
    {"retain_dead", "--retain-dead", set_u64, AT(retain_dead), 0, RETAIN_MAX,
     NULL},
    {"retain_every", "--retain-every", set_u64, AT(retain_every), 1000, DAY_MS,
     NULL},
    {"http", "--http", set_listen, AT(http), 1, 80, NULL},
    {"http_token_file", "--http-token-file", set_path, AT(http_token_file), 1,
     PATH_BYTES, NULL},
    {"event_stream_memory", "--event-stream-memory", set_u64,
     AT(event_stream_memory), MIB, 65536ull * MIB, NULL},
    {"judge_url", "--judge-url", set_string, AT(judge_url), 1, PATH_BYTES,
     NULL},
    {"judge_model", "--judge-model", set_string, AT(judge_model), 1, 200, NULL},
    {"judge_key_file", "--judge-key-file", set_path, AT(judge_key_file), 1,
     PATH_BYTES, NULL},
    {"judge_concurrency", "--judge-concurrency", set_uint,
     AT(judge_concurrency), 1, 1024, NULL},
    {"judge_timeout", "--judge-timeout", set_u64, AT(judge_timeout), 100,
     3600000, NULL},
    {"judge_attempts", "--judge-attempts", set_uint, AT(judge_attempts), 1, 100,
     NULL},
    {"judge_backoff", "--judge-backoff", set_u64, AT(judge_backoff), 1, 3600000,
     NULL},
    {"judge_backoff_max", "--judge-backoff-max", set_u64, AT(judge_backoff_max),
     1, 3600000, NULL},
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

_Static_assert(sizeof(tally_log_format_t) == sizeof(int) &&
                   sizeof(tally_log_level_t) == sizeof(int),
               "set_enum stores an int");

const char tally_settings_usage[] =
    "usage: tallyd --tasks DIR [FLAG...]\n"
    "\n"
    "Every flag but --config and --help is also a key of the config file,\n"
    "with '_' for '-'; a flag overrides the file. Write --flag VALUE or\n"
    "--flag=VALUE. Times are in milliseconds.\n"
    "\n"
    "  --tasks DIR           task configs to load (required)\n"
    "  --contests DIR        contest configs and participants.json\n"
    "                        (default: the *.contest.json files of --tasks)\n"
    "  --plugins DIR         score-type plugins to load (default: none)\n"
    "  --redis URL           redis://[USER[:PASSWORD]@]IP[:PORT][/DB],\n"
    "                        unix://[USER[:PASSWORD]@]/PATH[?db=N] or\n"
    "                        sentinel://[USER[:PASSWORD]@]IP[:PORT][,...]/"
    "MASTER[/DB]\n"
    "                        (default: start redis-server in --data-dir)\n"
    "  --redis-password-file FILE  the Redis password, on the file's first\n"
    "                        line (default: the URL's, else\n"
    "                        TALLY_REDIS_PASSWORD)\n"
    "  --sentinel-password-file FILE  the sentinels' password (default: the\n"
    "                        URL's sentinel_password, else\n"
    "                        TALLY_SENTINEL_PASSWORD)\n"
    "  --workers N           worker processes, 1-256 (default: one per CPU)\n"
    "  --prefix P            prefix of every Redis key (default: tally)\n"
    "  --consumer NAME       this tallyd's consumer name (default: HOST:PID)\n"
    "  --queues Q1,Q2        the queues to consume (default: the default\n"
    "                        queue and every queue a contest config names)\n"
    "  --default-queue Q     the queue of contests whose config names none\n"
    "                        (default: main)\n"
    "  --claim-idle MS       take over jobs another consumer has held this\n"
    "                        long, 1000-86400000 (default: 30000)\n"
    "  --job-timeout MS      the longest one job may take, 1-86400000\n"
    "                        (default: 1000)\n"
    "  --drain-timeout MS    how long to finish jobs on shutdown, 1-86400000\n"
    "                        (default: 10000)\n"
    "  --wait-replicas N     after each post, WAIT for N replicas (1 s at\n"
    "                        most); a post that reached fewer is posted\n"
    "                        again (default 0: no WAIT)\n"
    "  --max-deliveries N    deliveries before a job is given up as failed,\n"
    "                        1-1000 (default: 3)\n"
    "  --data-dir DIR        the embedded Redis's folder (default: "
    "tally-data)\n"
    "  --log-format F        text or json (default: text)\n"
    "  --log-level L         debug, info, warn or error (default: info)\n"
    "  --batch N             most jobs sent to a worker at once, 1-1024\n"
    "                        (default: 16)\n"
    "  --max-job-bytes N     largest job accepted, 1024-66060288\n"
    "                        (default: 4194304)\n"
    "  --worker PATH         the tally-worker executable (default: the one\n"
    "                        beside tallyd)\n"
    "  --redis-server PATH   the redis-server executable (default:\n"
    "                        redis-server, found on PATH)\n"
    "  --tally PATH          the tally executable that rescores (default:\n"
    "                        the one beside tallyd)\n"
    "  --auto-rescore B      true or false: rescore at start, after each\n"
    "                        accepted reload and when results come back\n"
    "                        stale (default: true)\n"
    "  --pidfile FILE        write tallyd's pid to FILE while it runs\n"
    "                        (default: none)\n"
    "  --retain-age MS       trim entries older than this from the results,\n"
    "                        public, changes and dead streams; 0 keeps them\n"
    "                        (default: 604800000, a week)\n"
    "  --retain-results N    keep at least the last N results, trim older\n"
    "                        ones; 0: no count limit (default: 200000)\n"
    "  --retain-public N     the same for the public stream (default:\n"
    "                        1000000)\n"
    "  --retain-changes N    the same for the changes stream (default:\n"
    "                        1000000)\n"
    "  --retain-dead N       the same for the dead letters (default: 100000)\n"
    "  --retain-every MS     how often to trim, 1000-86400000 (default:\n"
    "                        10000)\n"
    "  --http ADDR           serve /metrics, /healthz and /readyz on IP:PORT\n"
    "                        or [IPv6]:PORT; off: no HTTP listener\n"
    "                        (default: 127.0.0.1:9464)\n"
    "  --http-token-file FILE  the operator's bearer token for the results\n"
    "                        API's private views, on the file's first line\n"
    "                        (default: none, no private view)\n"
    "  --event-stream-memory BYTES  what the scoreboard's event streams may\n"
    "                        buffer together, 1 MiB to 64 GiB; past it the\n"
    "                        stream furthest behind is ended (default:\n"
    "                        268435456, 256 MiB)\n"
    "  --judge-url URL       the judge model's OpenAI-compatible endpoint,\n"
    "                        http(s)://HOST[:PORT]/v1 (default: none; a\n"
    "                        sample without a kept verdict is unjudged)\n"
    "  --judge-model NAME    the judge model (required with --judge-url)\n"
    "  --judge-key-file FILE the judge's API key, on the file's first line\n"
    "                        (default: TALLY_JUDGE_KEY, else none)\n"
    "  --judge-concurrency N requests to the judge at once, 1-1024\n"
    "                        (default: 8)\n"
    "  --judge-timeout MS    one request's limit (default: 60000)\n"
    "  --judge-attempts N    tries of one request on 429, 5xx, 408,\n"
    "                        timeouts and dropped connections (default: 6)\n"
    "  --judge-backoff MS    the first retry's wait, doubling (default:\n"
    "                        1000)\n"
    "  --judge-backoff-max MS  the longest wait, Retry-After included\n"
    "                        (default: 60000)\n"
    "  --config FILE         read settings from a JSON object in FILE\n"
    "  --help                print this text and exit\n";

/* The number of CPUs tallyd may use, within the bounds of --workers. */
static unsigned default_workers(void) {
  unsigned n = uv_available_parallelism();
  return n < 1 ? 1 : n > WORKERS_MAX ? WORKERS_MAX : n;
}

/* "HOST:PID", malloc'ed, or NULL when out of memory. */
static char *default_consumer(void) {
  char host[256];
  if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
    snprintf(host, sizeof(host), "localhost");
  host[sizeof(host) - 1] = '\0';
  char buf[300];
  /* 180 bytes of host name keep the name within its 200. */
  snprintf(buf, sizeof(buf), "%.180s:%ld", host, (long)getpid());
  return strdup(buf);
}

/* The program name in the running executable's folder (tally-worker,
 * tally), malloc'ed, or NULL when out of memory. */
static char *beside_tallyd(const char *name) {
  char exe[4096];
  size_t size = sizeof(exe);
  if (uv_exepath(exe, &size) != 0 || size == 0 || size >= sizeof(exe))
    return strdup(name);
  exe[size] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL)
    return strdup(name);
  size_t dir = (size_t)(slash - exe) + 1, n = strlen(name) + 1;
  char *path = malloc(dir + n);
  if (path != NULL) {
    memcpy(path, exe, dir);
    memcpy(path + dir, name, n);
  }
  return path;
}

int tally_settings_init(tally_settings_t *s) {
  memset(s, 0, sizeof(*s));
  s->workers = default_workers();
  s->claim_idle = 30000;
  s->retain_age = 7 * DAY_MS;
  s->retain_results = 200000;
  s->retain_public = 1000000;
  s->retain_changes = 1000000;
  s->retain_dead = 100000;
  s->retain_every = 10000;
  s->job_timeout = 1000;
  s->drain_timeout = 10000;
  s->max_deliveries = 3;
  s->log_format = TALLY_LOG_TEXT;
  s->log_level = TALLY_LOG_INFO;
  s->batch = 16;
  s->max_job_bytes = 4 * MIB;
  s->event_stream_memory = 256 * MIB;
  s->judge_concurrency = 8;
  s->judge_timeout = 60000;
  s->judge_attempts = 6;
  s->judge_backoff = 1000;
  s->judge_backoff_max = 60000;
  s->prefix = strdup("tally");
  s->consumer = default_consumer();
  s->default_queue = strdup(TALLY_MAIN_QUEUE);
  s->data_dir = strdup("tally-data");
  s->worker = beside_tallyd("tally-worker");
  s->redis_server = strdup("redis-server");
  s->tally = beside_tallyd("tally");
  s->auto_rescore = true;
  s->http = strdup("127.0.0.1:9464");
  if (!s->http || !s->prefix || !s->consumer || !s->default_queue ||
      !s->data_dir || !s->worker || !s->redis_server || !s->tally) {
    tally_settings_close(s);
    return TALLY_ENOMEM;
  }
  return 0;
}

void tally_settings_close(tally_settings_t *s) {
  free(s->tasks);
  free(s->contests);
  free(s->plugins);
  free(s->redis);
  free(s->redis_password_file);
  free(s->sentinel_password_file);
  free(s->prefix);
  free(s->consumer);
  free(s->queues);
  free(s->default_queue);
  free(s->data_dir);
  free(s->worker);
  free(s->redis_server);
  free(s->tally);
  free(s->pidfile);
  free(s->http);
  free(s->http_token_file);
  free(s->judge_url);
  free(s->judge_model);
  free(s->judge_key_file);
  free(s->config);
  memset(s, 0, sizeof(*s));
}

/* Setters. */

/* Checks that v is a string of k's length; NULL if it is. */
static const char *check_string(const setting_t *k, const value_t *v, char *msg,
                                size_t len) {
  if (v->text == NULL)
    return "must be a string";
  size_t n = strlen(v->text);
  if (n < k->min)
    return "must not be empty";
  if (n > k->max) {
    snprintf(msg, len, "must be at most %llu bytes",
             (unsigned long long)k->max);
    return msg;
  }
  return NULL;
}

/* Stores copy (malloc'ed, or NULL when out of memory) into k's field. */
static const char *store_string(const setting_t *k, char *copy, parse_t *p) {
  if (copy == NULL) {
    p->nomem = true;
    return "out of memory";
  }
  char **field = (char **)((char *)p->s + k->offset);
  free(*field);
  *field = copy;
  return NULL;
}

static const char *set_string(const setting_t *k, const value_t *v, parse_t *p,
                              char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  return bad ? bad : store_string(k, strdup(v->text), p);
}

/* A string that goes into Redis key names: no spaces or control bytes. */
static const char *set_name(const setting_t *k, const value_t *v, parse_t *p,
                            char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  if (bad != NULL)
    return bad;
  for (const char *c = v->text; *c; c++)
    if ((unsigned char)*c <= ' ' || *c == 0x7f)
      return "must not contain spaces or control characters";
  /* A brace in the prefix would make the first hash tag of every key:
   * on a cluster, every queue in one slot. */
  if (k->offset == AT(prefix) && strpbrk(v->text, "{}") != NULL)
    return "must not contain '{' or '}' (each queue's keys carry their own "
           "Redis Cluster hash tag)";
  return store_string(k, strdup(v->text), p);
}

/* Queue names, comma-separated (one for default_queue), each one
 * tally_queue_name_ok and none twice. */
static const char *set_queues(const setting_t *k, const value_t *v, parse_t *p,
                              char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  if (bad != NULL)
    return bad;
  bool list = k->max > TALLY_QUEUE_NAME_MAX;
  for (const char *s = v->text;; s++) {
    size_t n = list ? strcspn(s, ",") : strlen(s);
    char name[TALLY_QUEUE_NAME_MAX + 1] = "";
    if (n <= TALLY_QUEUE_NAME_MAX) {
      memcpy(name, s, n);
      name[n] = '\0';
    }
    if (n > TALLY_QUEUE_NAME_MAX || !tally_queue_name_ok(name)) {
      snprintf(msg, len,
               "\"%.*s\" is not a queue name: 1 to %d letters, digits, "
               "'-', '_' or '.'",
               (int)(n > 80 ? 80 : n), s, TALLY_QUEUE_NAME_MAX);
      return msg;
    }
    for (const char *o = v->text; o < s; o += strcspn(o, ",") + 1)
      if (strcspn(o, ",") == n && strncmp(o, s, n) == 0) {
        snprintf(msg, len, "queue %s is listed twice", name);
        return msg;
      }
    s += n;
    if (*s == '\0')
      break;
  }
  return store_string(k, strdup(v->text), p);
}

/* A path; a relative one from the config file is joined to its folder. */
static const char *set_path(const setting_t *k, const value_t *v, parse_t *p,
                            char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  if (bad != NULL)
    return bad;
  if (p->dirlen == 0 || v->text[0] == '/')
    return store_string(k, strdup(v->text), p);
  size_t n = strlen(v->text);
  char *joined = malloc(p->dirlen + n + 1);
  if (joined != NULL) {
    memcpy(joined, p->dir, p->dirlen);
    memcpy(joined + p->dirlen, v->text, n + 1);
  }
  return store_string(k, joined, p);
}

/* A Redis URL, checked now so that its error comes with the others. */
static const char *set_url(const setting_t *k, const value_t *v, parse_t *p,
                           char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  if (bad != NULL)
    return bad;
  tally_redis_url_t u;
  if (tally_redis_url_parse(&u, v->text, msg, len) != 0)
    return msg;
  tally_redis_url_free(&u);
  return store_string(k, strdup(v->text), p);
}

/* "off", or an address tally_http_parse_addr reads. */
static const char *set_listen(const setting_t *k, const value_t *v, parse_t *p,
                              char *msg, size_t len) {
  const char *bad = check_string(k, v, msg, len);
  if (bad != NULL)
    return bad;
  struct sockaddr_storage sa;
  socklen_t salen;
  if (strcmp(v->text, "off") != 0 &&
      tally_http_parse_addr(v->text, &sa, &salen, msg, len) != 0) {
    size_t n = strlen(msg);
    snprintf(msg + n, len - n, ", or off");
    return msg;
  }
  p->s->http_given = true;
  return store_string(k, strdup(v->text), p);
}

/* Checks that v is a whole number within k's bounds; NULL if it is. */
static const char *check_number(const setting_t *k, const value_t *v, char *msg,
                                size_t len) {
  if (v->whole && v->num >= (double)k->min && v->num <= (double)k->max)
    return NULL;
  snprintf(msg, len, "must be a whole number from %llu to %llu",
           (unsigned long long)k->min, (unsigned long long)k->max);
  return msg;
}

static const char *set_uint(const setting_t *k, const value_t *v, parse_t *p,
                            char *msg, size_t len) {
  const char *bad = check_number(k, v, msg, len);
  if (bad == NULL)
    *(unsigned *)((char *)p->s + k->offset) = (unsigned)v->num;
  return bad;
}

static const char *set_u64(const setting_t *k, const value_t *v, parse_t *p,
                           char *msg, size_t len) {
  const char *bad = check_number(k, v, msg, len);
  if (bad == NULL)
    *(uint64_t *)((char *)p->s + k->offset) = (uint64_t)v->num;
  return bad;
}

static const char *set_enum(const setting_t *k, const value_t *v, parse_t *p,
                            char *msg, size_t len) {
  for (int i = 0; v->text != NULL && k->choices[i] != NULL; i++) {
    if (strcmp(v->text, k->choices[i]) == 0) {
      memcpy((char *)p->s + k->offset, &i, sizeof(i));
      return NULL;
    }
  }
  /* "must be "a", "b" or "c"" */
  size_t used = (size_t)snprintf(msg, len, "must be");
  for (int i = 0; k->choices[i] != NULL && used < len; i++) {
    const char *sep = i == 0 ? " " : k->choices[i + 1] ? ", " : " or ";
    used += (size_t)snprintf(msg + used, len - used, "%s\"%s\"", sep,
                             k->choices[i]);
  }
  return msg;
}

static const char *set_bool(const setting_t *k, const value_t *v, parse_t *p,
                            char *msg, size_t len) {
  (void)msg;
  (void)len;
  if (v->boolean < 0)
    return "must be true or false";
  *(bool *)((char *)p->s + k->offset) = v->boolean == 1;
  return NULL;
}

/* The config file. */

static value_t json_value(const cJSON *v) {
  value_t out = {NULL, false, 0, -1};
  if (cJSON_IsBool(v)) {
    out.boolean = cJSON_IsTrue(v) ? 1 : 0;
  } else if (cJSON_IsString(v)) {
    out.text = v->valuestring;
  } else if (cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
             v->valuedouble == floor(v->valuedouble)) {
    out.whole = true;
    out.num = v->valuedouble;
  }
  return out;
}

/* Reads all of path into a malloc'ed buffer. Returns NULL with errno set
 * (EFBIG for a file over FILE_MAX). */
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  char *buf = malloc(FILE_MAX + 1);
  int err = ENOMEM;
  if (buf != NULL) {
    *len = fread(buf, 1, FILE_MAX + 1, f);
    err = ferror(f) ? errno : *len > FILE_MAX ? EFBIG : 0;
  }
  fclose(f);
  if (err != 0) {
    free(buf);
    errno = err;
    return NULL;
  }
  return buf;
}

/* Loads the file p->s->config names, recording its errors in d. */
static void load_file(parse_t *p, tally_diag_t *d) {
  const char *path = p->s->config;
  size_t len = 0;
  char *text = read_all(path, &len);
  if (text == NULL) {
    if (errno == ENOMEM)
      p->nomem = true;
    tally_diag_add(d, NULL, "cannot read: %s",
                   errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
    return;
  }
  cJSON *root = tally_cfg_parse_json(text, len, d);
  free(text);
  if (root == NULL)
    return;

  /* tally_cfg_decode finds the keys, and reports unknown and repeated
   * ones; the setters here decode the values. */
  tally_cfg_key_t keys[NSETTINGS + 1];
  const cJSON *found[NSETTINGS];
  memset(keys, 0, sizeof(keys));
  for (size_t i = 0; i < NSETTINGS; i++) {
    keys[i].name = settings[i].key;
    found[i] = NULL;
  }
  tally_jpath_t jp;
  tally_jpath_init(&jp);
  tally_cfg_decode(keys, root, p->s, d, &jp, found);
  /* In the file's order, so that the messages are too, with relative
   * paths joined to the file's folder. */
  const char *slash = strrchr(path, '/');
  p->dir = path;
  p->dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  for (const cJSON *m = root->child; m != NULL; m = m->next) {
    size_t i = 0;
    while (i < NSETTINGS && found[i] != m)
      i++;
    if (i == NSETTINGS)
      continue; /* unknown or repeated: already reported */
    char msg[256];
    value_t v = json_value(found[i]);
    const char *bad = settings[i].set(&settings[i], &v, p, msg, sizeof(msg));
    if (bad != NULL) {
      size_t old = tally_jpath_key(&jp, settings[i].key);
      tally_diag_add(d, &jp, "%s", bad);
      tally_jpath_restore(&jp, old);
    }
  }
  cJSON_Delete(root);
  p->dirlen = 0;
}

/* The flags. */

typedef enum arg_kind_e {
  ARG_SETTING,
  ARG_CONFIG,
  ARG_HELP,
  ARG_UNKNOWN,
  ARG_POSITIONAL
} arg_kind_t;

/* One argument: a flag with its value, or something else. */
typedef struct arg_s {
  arg_kind_t kind;
  const char *name; /* the flag, without "=VALUE" */
  int namelen;
  const char *value; /* NULL when missing */
  bool inline_value; /* given as --flag=VALUE */
  const setting_t *setting;
} arg_t;

/* Reads the argument at argv[i] into a, with the next one as its value if
 * the flag takes one and it does not start with "--". Returns the index of
 * the argument after. */
static int next_arg(int argc, char **argv, int i, arg_t *a) {
  const char *s = argv[i];
  const char *eq = strchr(s, '=');
  memset(a, 0, sizeof(*a));
  a->name = s;
  a->namelen = (int)(eq ? (size_t)(eq - s) : strlen(s));
  if (strncmp(s, "--", 2) != 0 || a->namelen <= 2) {
    a->kind = ARG_POSITIONAL;
    a->namelen = (int)strlen(s);
    return i + 1;
  }
  a->kind = ARG_UNKNOWN;
  if (a->namelen == 6 && strncmp(s, "--help", 6) == 0)
    a->kind = ARG_HELP;
  else if (a->namelen == 8 && strncmp(s, "--config", 8) == 0)
    a->kind = ARG_CONFIG;
  for (size_t k = 0; k < NSETTINGS && a->kind == ARG_UNKNOWN; k++) {
    if (strlen(settings[k].flag) == (size_t)a->namelen &&
        strncmp(s, settings[k].flag, (size_t)a->namelen) == 0) {
      a->kind = ARG_SETTING;
      a->setting = &settings[k];
    }
  }
  if (eq != NULL) {
    a->value = eq + 1;
    a->inline_value = true;
  } else if ((a->kind == ARG_SETTING || a->kind == ARG_CONFIG) &&
             i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
    a->value = argv[++i];
  }
  return i + 1;
}

static value_t flag_value(const char *text) {
  value_t v = {text, text[0] != '\0', 0,
               strcmp(text, "true") == 0    ? 1
               : strcmp(text, "false") == 0 ? 0
                                            : -1};
  for (const char *c = text; *c && v.whole; c++)
    v.whole = *c >= '0' && *c <= '9';
  if (v.whole)
    v.num = strtod(text, NULL);
  return v;
}

/* Applies one argument, recording what is wrong with it in d. */
static void apply_arg(parse_t *p, const arg_t *a, tally_diag_t *d) {
  int n = a->namelen;
  switch (a->kind) {
  case ARG_POSITIONAL:
    tally_diag_add(d, NULL, "%.*s: unexpected argument (flags start with --)",
                   n, a->name);
    return;
  case ARG_UNKNOWN:
    tally_diag_add(d, NULL, "%.*s: unknown flag", n, a->name);
    return;
  case ARG_HELP:
    if (a->inline_value)
      tally_diag_add(d, NULL, "--help: takes no value");
    return;
  case ARG_CONFIG:
    if (a->value == NULL)
      tally_diag_add(d, NULL, "--config: missing value");
    else if (a->value[0] == '\0')
      tally_diag_add(d, NULL, "--config: must not be empty");
    return;
  case ARG_SETTING:
    break;
  }
  if (a->value == NULL) {
    tally_diag_add(d, NULL, "%.*s: missing value", n, a->name);
    return;
  }
  char msg[256];
  value_t v = flag_value(a->value);
  const char *bad = a->setting->set(a->setting, &v, p, msg, sizeof(msg));
  if (bad != NULL)
    tally_diag_add(d, NULL, "%.*s: %s", n, a->name, bad);
}

int tally_settings_parse(tally_settings_t *s, int argc, char **argv,
                         tally_diag_t *d) {
  /* First --help, which wins over everything, and --config. */
  const char *config = NULL;
  int configs = 0;
  arg_t a;
  for (int i = 1; i < argc;) {
    i = next_arg(argc, argv, i, &a);
    if (a.kind == ARG_HELP && !a.inline_value)
      return TALLY_EINVAL;
    if (a.kind == ARG_CONFIG && a.value != NULL && a.value[0] != '\0') {
      config = a.value;
      configs++;
    }
  }

  size_t errors = tally_diag_count(d);
  parse_t p = {s, NULL, 0, false};
  if (configs > 1) {
    tally_diag_add(d, NULL, "--config: given more than once");
  } else if (config != NULL) {
    free(s->config);
    s->config = strdup(config);
    if (s->config == NULL)
      return TALLY_ENOMEM;
    tally_diag_t fd;
    tally_diag_init(&fd, s->config);
    load_file(&p, &fd);
    tally_diag_move(d, &fd);
  }

  for (int i = 1; i < argc;) {
    i = next_arg(argc, argv, i, &a);
    apply_arg(&p, &a, d);
  }
  if (s->tasks == NULL)
    tally_diag_add(d, NULL,
                   "--tasks: required (or \"tasks\" in the config file)");
  if (p.nomem)
    return TALLY_ENOMEM;
  return tally_diag_count(d) > errors ? TALLY_ECONFIG : 0;
}
