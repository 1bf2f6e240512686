/* tally migrate: moves the keys of queue main (the layout of before
 * queues, whose keys have no common hash tag) into a named queue on the
 * same server, so that the database can then go to a Redis Cluster
 * (docs/operations.md#moving-a-single-server-database-to-a-cluster). */
#include "cli/cli.h"
#include "config/jsonw.h"
#include "redis/keys.h"
#include "redis/slots.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* What becomes of one key of queue main. */
typedef enum {
  KEY_OTHER,   /* not queue main's: global, another queue's, not tally's */
  KEY_MOVE,    /* renamed as it is */
  KEY_RESULTS, /* <p>:results: entries name result keys (field body) */
  KEY_PUBLIC,  /* <p>:public: entries name view keys (view, view_key) */
  KEY_LEASE    /* <p>:consumer:*: a tallyd is running */
} kind_t;

/* Queue main's keys that are not a contest's, by their first segment
 * after "<p>:" (docs/protocol.md). */
static const char *const queue_keys[] = {
    "jobs",    "dead",     "changes", "contests",     "taskversions",
    "rescore", "stale",    "retain",  "submission",   "result",
    "view",    "fullview", "index",   "pendingtokens"};

typedef struct migrate_s {
  remote_t *r;
  const char *queue;
  char qprefix[200];
  bool dry_run;
  char **tags; /* the tags of main's contests (<p>:{tag}), sorted */
  size_t ntags;
  char **keys; /* main's keys, collected before any moves */
  size_t nkeys, cap;
  long moved, rewritten, other, entries;
} migrate_t;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What key is; *prefix_len is the length of "<p>". */
static kind_t kind_of(const migrate_t *m, const char *key) {
  size_t pl = strlen(m->r->prefix);
  if (strncmp(key, m->r->prefix, pl) != 0 || key[pl] != ':')
    return KEY_OTHER;
  const char *rest = key + pl + 1;
  if (rest[0] == '{') {
    /* A contest of main (<p>:{tag}:...), or another queue's key. */
    const char *end = strchr(rest, '}');
    if (end == NULL || end[1] != ':')
      return KEY_OTHER;
    char tag[512];
    size_t n = (size_t)(end - rest - 1);
    if (n >= sizeof(tag))
      return KEY_OTHER;
    memcpy(tag, rest + 1, n);
    tag[n] = '\0';
    const char *t = tag;
    if (bsearch(&t, m->tags, m->ntags, sizeof(char *), cmp_str) == NULL)
      return KEY_OTHER;
    /* And a contest's key (docs/contest.md#keys), not the key of a named
     * queue whose name is also the tag of a contest of main. */
    static const char *const contest_keys[] = {
        "pt",      "ptagg", "taskscores", "ranking",
        "matches", "elo",   "tasks",      "unfrozen"};
    const char *after = end + 2;
    size_t seg = strcspn(after, ":");
    for (size_t i = 0; i < sizeof(contest_keys) / sizeof(contest_keys[0]); i++)
      if (strlen(contest_keys[i]) == seg &&
          strncmp(after, contest_keys[i], seg) == 0)
        return KEY_MOVE;
    return KEY_OTHER;
  }
  size_t seg = strcspn(rest, ":");
  if (seg == 7 && strncmp(rest, "results", 7) == 0 && rest[seg] == '\0')
    return KEY_RESULTS;
  if (seg == 6 && strncmp(rest, "public", 6) == 0 && rest[seg] == '\0')
    return KEY_PUBLIC;
  if (seg == 8 && strncmp(rest, "consumer", 8) == 0)
    return KEY_LEASE;
  for (size_t i = 0; i < sizeof(queue_keys) / sizeof(queue_keys[0]); i++)
    if (strlen(queue_keys[i]) == seg && strncmp(rest, queue_keys[i], seg) == 0)
      return KEY_MOVE;
  return KEY_OTHER;
}

/* The key of queue q for key of main: <p>:{q} then what follows <p>.
 * Returns a malloc'ed string, or NULL when out of memory. */
static char *moved_name(const migrate_t *m, const char *key) {
  const char *rest = key + strlen(m->r->prefix);
  size_t a = strlen(m->qprefix), b = strlen(rest);
  char *s = malloc(a + b + 1);
  if (s != NULL) {
    memcpy(s, m->qprefix, a);
    memcpy(s + a, rest, b + 1);
  }
  return s;
}

/* Reads the tags of main's contests from <p>:contests. */
static int read_tags(migrate_t *m) {
  redisReply *x =
      cli_expect(m->r, remote_cmd(m->r, "SMEMBERS %s:contests", m->r->prefix),
                 REDIS_REPLY_ARRAY, "SMEMBERS (the contests of queue main)");
  if (x == NULL)
    return EXIT_JOB_FAILED;
  m->tags = calloc(x->elements + 1, sizeof(char *));
  for (size_t i = 0; m->tags != NULL && i < x->elements; i++) {
    char key[600];
    if (x->element[i]->type != REDIS_REPLY_STRING ||
        tally_contest_key(key, sizeof(key), "", x->element[i]->str) != 0)
      continue;
    /* ":{tag}" */
    size_t n = strlen(key);
    key[n - 1] = '\0';
    if ((m->tags[m->ntags] = strdup(key + 2)) != NULL)
      m->ntags++;
  }
  freeReplyObject(x);
  if (m->tags == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  qsort(m->tags, m->ntags, sizeof(char *), cmp_str);
  return 0;
}

/* Collects every key that starts with "<p>:" with SCAN, before anything
 * moves (a moved key must not be found again). */
static int collect(migrate_t *m) {
  char cursor[32] = "0", match[300];
  /* The prefix as a glob: *, ?, [ and \ escaped. */
  size_t n = 0;
  for (const char *p = m->r->prefix; *p && n + 4 < sizeof(match); p++) {
    if (strchr("*?[]\\", *p) != NULL)
      match[n++] = '\\';
    match[n++] = *p;
  }
  memcpy(match + n, ":*", 3);
  do {
    redisReply *x = cli_expect(
        m->r, remote_cmd(m->r, "SCAN %s MATCH %s COUNT 1000", cursor, match),
        REDIS_REPLY_ARRAY, "SCAN");
    if (x == NULL || x->elements != 2)
      return EXIT_JOB_FAILED;
    snprintf(cursor, sizeof(cursor), "%s", x->element[0]->str);
    const redisReply *a = x->element[1];
    for (size_t i = 0; i < a->elements; i++) {
      if (m->nkeys == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        char **grown = realloc(m->keys, cap * sizeof(char *));
        if (grown == NULL) {
          freeReplyObject(x);
          fprintf(stderr, "tally: out of memory\n");
          return EXIT_JOB_FAILED;
        }
        m->keys = grown;
        m->cap = cap;
      }
      if ((m->keys[m->nkeys] = strdup(a->element[i]->str)) != NULL)
        m->nkeys++;
    }
    freeReplyObject(x);
  } while (strcmp(cursor, "0") != 0);
  qsort(m->keys, m->nkeys, sizeof(char *), cmp_str);
  return 0;
}

/* In a public event, the JSON string after "view_key": replaced by the
 * new key when it names old. Returns a malloc'ed text, NULL when the
 * event names no view key or another one (nothing to change), or when out
 * of memory (*oom). */
static char *event_moved(const char *ev, const char *old, const char *new_key,
                         bool *oom) {
  const char *at = strstr(ev, "\"view_key\":\"");
  if (at == NULL)
    return NULL;
  const char *s = at + 11, *e = s + 1;
  while (*e != '\0' && *e != '"')
    e += *e == '\\' && e[1] != '\0' ? 2 : 1;
  if (*e != '"')
    return NULL;
  char *token = strndup(s, (size_t)(e - s + 1));
  cJSON *v = token != NULL ? cJSON_Parse(token) : NULL;
  free(token);
  bool same = cJSON_IsString(v) && strcmp(v->valuestring, old) == 0;
  cJSON_Delete(v);
  if (!same)
    return NULL;
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_put(&b, ev, (size_t)(s - ev));
  tally_json_str(&b, new_key);
  tally_buf_puts(&b, e + 1);
  if (b.oom) {
    *oom = true;
    tally_buf_close(&b);
    return NULL;
  }
  return b.data;
}

/* Copies stream src into dst entry by entry, with the same IDs, each
 * field that names a moved key (a results entry's body, a public entry's
 * view and its event's view_key) renamed; then gives dst src's counters
 * (XSETID: retention counts entries added) and deletes src. Starts after
 * dst's last entry, so that a migration stopped midway goes on. */
static int copy_stream(migrate_t *m, const char *src, const char *dst) {
  char from[64] = "-";
  redisReply *x = remote_cmd(m->r, "XINFO STREAM %s", dst);
  if (x != NULL && x->type == REDIS_REPLY_ARRAY) {
    const char *last = cli_str_of(cli_field(x, "last-generated-id"));
    if (last != NULL)
      snprintf(from, sizeof(from), "(%s", last);
  }
  if (x != NULL)
    freeReplyObject(x);
  int status = 0;
  for (;;) {
    redisReply *page = cli_expect(
        m->r, remote_cmd(m->r, "XRANGE %s %s + COUNT 500", src, from),
        REDIS_REPLY_ARRAY, "XRANGE");
    if (page == NULL)
      return EXIT_JOB_FAILED;
    if (page->elements == 0) {
      freeReplyObject(page);
      break;
    }
    for (size_t i = 0; status == 0 && i < page->elements; i++) {
      const redisReply *e = page->element[i];
      const redisReply *f = e->element[1];
      const char **argv = calloc(3 + f->elements, sizeof(char *));
      size_t *lens = calloc(3 + f->elements, sizeof(size_t));
      char **owned = calloc(f->elements + 1, sizeof(char *));
      if (argv == NULL || lens == NULL || owned == NULL) {
        fprintf(stderr, "tally: out of memory\n");
        status = EXIT_JOB_FAILED;
      }
      int argc = 0;
      if (status == 0) {
        argv[argc++] = "XADD";
        argv[argc++] = dst;
        argv[argc++] = e->element[0]->str;
      }
      /* The key this entry names (body, or view), renamed. */
      const char *named = NULL;
      for (size_t k = 0; status == 0 && k + 1 < f->elements; k += 2) {
        const char *name = f->element[k]->str, *val = f->element[k + 1]->str;
        if ((strcmp(name, "body") == 0 || strcmp(name, "view") == 0) &&
            kind_of(m, val) == KEY_MOVE) {
          named = val;
          owned[k + 1] = moved_name(m, val);
        }
      }
      for (size_t k = 0; status == 0 && named != NULL && k + 1 < f->elements;
           k += 2)
        if (strcmp(f->element[k]->str, "event") == 0) {
          bool oom = false;
          char *new_key = moved_name(m, named);
          owned[k + 1] = new_key != NULL ? event_moved(f->element[k + 1]->str,
                                                       named, new_key, &oom)
                                         : NULL;
          free(new_key);
          if (oom || new_key == NULL)
            status = EXIT_JOB_FAILED;
        }
      for (size_t k = 0; status == 0 && k < f->elements; k++) {
        argv[argc] = owned[k] != NULL ? owned[k] : f->element[k]->str;
        lens[argc] =
            owned[k] != NULL ? strlen(owned[k]) : (size_t)f->element[k]->len;
        argc++;
      }
      for (int k = 0; k < 3 && status == 0; k++)
        lens[k] = strlen(argv[k]);
      if (status == 0) {
        redisReply *y =
            cli_expect(m->r, redisCommandArgv(m->r->c, argc, argv, lens),
                       REDIS_REPLY_STRING, "XADD (a copied entry)");
        if (y == NULL)
          status = EXIT_JOB_FAILED;
        else
          freeReplyObject(y);
        m->entries++;
        m->rewritten += named != NULL;
      }
      for (size_t k = 0; owned != NULL && k < f->elements; k++)
        free(owned[k]);
      free(owned);
      free(argv);
      free(lens);
    }
    snprintf(from, sizeof(from), "(%s",
             page->element[page->elements - 1]->element[0]->str);
    freeReplyObject(page);
    if (status != 0)
      return status;
  }
  /* src's counters on dst: its last ID, entries added, largest deleted. */
  x = cli_expect(m->r, remote_cmd(m->r, "XINFO STREAM %s", src),
                 REDIS_REPLY_ARRAY, "XINFO STREAM");
  if (x == NULL)
    return EXIT_JOB_FAILED;
  const char *last = cli_str_of(cli_field(x, "last-generated-id"));
  const char *maxdel = cli_str_of(cli_field(x, "max-deleted-entry-id"));
  long long added = cli_int_field(x, "entries-added", 0);
  char n[32];
  snprintf(n, sizeof(n), "%lld", added);
  redisReply *y =
      last != NULL && maxdel != NULL
          ? remote_cmd(m->r, "XSETID %s %s ENTRIESADDED %s MAXDELETEDID %s",
                       dst, last, n, maxdel)
          : NULL;
  freeReplyObject(x);
  if ((y = cli_expect(m->r, y, REDIS_REPLY_STATUS, "XSETID")) == NULL)
    return EXIT_JOB_FAILED;
  freeReplyObject(y);
  y = cli_expect(m->r, remote_cmd(m->r, "DEL %s", src), REDIS_REPLY_INTEGER,
                 "DEL");
  if (y == NULL)
    return EXIT_JOB_FAILED;
  freeReplyObject(y);
  return 0;
}

/* Whether stream key can be copied: no consumer group (a copy would lose
 * it). An empty one is renamed instead (*k becomes KEY_MOVE): a copy of
 * nothing would not make the stream. Returns 0, or EXIT_JOB_FAILED. */
static int copyable(migrate_t *m, const char *key, kind_t *k) {
  redisReply *x = cli_expect(m->r, remote_cmd(m->r, "XINFO STREAM %s", key),
                             REDIS_REPLY_ARRAY, "XINFO STREAM");
  if (x == NULL)
    return EXIT_JOB_FAILED;
  long long groups = cli_int_field(x, "groups", 0);
  long long length = cli_int_field(x, "length", 0);
  freeReplyObject(x);
  if (groups > 0) {
    fprintf(stderr,
            "tally: %s has %lld consumer group%s, which tally does not make "
            "and a copy would lose: delete them (XGROUP DESTROY) and run "
            "tally migrate again\n",
            key, groups, groups == 1 ? "" : "s");
    return EXIT_JOB_FAILED;
  }
  if (length == 0)
    *k = KEY_MOVE;
  return 0;
}

/* Moves one key: RENAMENX, or a stream copy. */
static int move_key(migrate_t *m, const char *key, kind_t k) {
  char *dst = moved_name(m, key);
  if (dst == NULL) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  int status = 0;
  if (m->dry_run) {
    m->moved++;
  } else if ((k == KEY_RESULTS || k == KEY_PUBLIC) &&
             (status = copyable(m, key, &k)) != 0) {
    /* said */
  } else if (k == KEY_RESULTS || k == KEY_PUBLIC) {
    status = copy_stream(m, key, dst);
    m->moved += status == 0;
  } else {
    redisReply *x =
        cli_expect(m->r, remote_cmd(m->r, "RENAMENX %s %s", key, dst),
                   REDIS_REPLY_INTEGER, "RENAMENX");
    if (x == NULL) {
      status = EXIT_JOB_FAILED;
    } else if (x->integer == 0) {
      fprintf(stderr,
              "tally: %s: queue %s already has %s; nothing of it is "
              "overwritten (delete one of the two, then run tally migrate "
              "again)\n",
              key, m->queue, dst);
      status = EXIT_JOB_FAILED;
    } else {
      m->moved++;
    }
    if (x != NULL)
      freeReplyObject(x);
  }
  free(dst);
  return status;
}

/* The contests of main now belong to queue q in <p>:queues, until the
 * results API writes their configs' queues again. */
static int publish_queue(migrate_t *m) {
  redisReply *x =
      cli_expect(m->r, remote_cmd(m->r, "SMEMBERS %s:contests", m->qprefix),
                 REDIS_REPLY_ARRAY, "SMEMBERS (the contests moved)");
  if (x == NULL)
    return EXIT_JOB_FAILED;
  int status = 0;
  for (size_t i = 0; status == 0 && i < x->elements; i++) {
    redisReply *y =
        cli_expect(m->r,
                   remote_cmd(m->r, "HSET %s:queues %s %s", m->r->prefix,
                              x->element[i]->str, m->queue),
                   REDIS_REPLY_INTEGER, "HSET (the contests' queue)");
    if (y == NULL)
      status = EXIT_JOB_FAILED;
    else
      freeReplyObject(y);
  }
  freeReplyObject(x);
  return status;
}

static int run(migrate_t *m) {
  redisReply *x = remote_cmd(m->r, "CLUSTER SLOTS");
  bool cluster = x != NULL && !tally_slots_disabled(x);
  if (x != NULL)
    freeReplyObject(x);
  if (x == NULL)
    return EXIT_JOB_FAILED;
  if (cluster) {
    fprintf(stderr,
            "tally: Redis at %s is a cluster, where queue " TALLY_MAIN_QUEUE
            " cannot live: migrate on the single server, then import it "
            "(redis-cli --cluster import)\n",
            m->r->url);
    return EXIT_CONFIG;
  }
  int status = read_tags(m);
  if (status == 0)
    status = collect(m);
  /* tallyd and tally rescore must not be writing meanwhile. */
  for (size_t i = 0; status == 0 && i < m->nkeys; i++) {
    kind_t k = kind_of(m, m->keys[i]);
    char lock[300];
    snprintf(lock, sizeof(lock), "%s:rescore:lock", m->r->prefix);
    if (k == KEY_LEASE || strcmp(m->keys[i], lock) == 0) {
      fprintf(stderr,
              "tally: %s exists: a tallyd or a tally rescore is running on "
              "queue " TALLY_MAIN_QUEUE
              "; stop every one before migrating (a stopped tallyd's lease "
              "expires within 10 s)\n",
              m->keys[i]);
      status = EXIT_JOB_FAILED;
    }
  }
  for (size_t i = 0; status == 0 && i < m->nkeys; i++) {
    kind_t k = kind_of(m, m->keys[i]);
    if (k == KEY_OTHER)
      m->other++;
    else
      status = move_key(m, m->keys[i], k);
  }
  if (status == 0 && !m->dry_run)
    status = publish_queue(m);
  return status;
}

/* tally migrate [REDIS] --to-queue Q [--dry-run] */
int cmd_migrate(int argc, char **argv) {
  remote_t r;
  migrate_t m = {.r = &r};
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--to-queue") == 0 && i + 1 < argc && !m.queue)
      m.queue = argv[++i];
    else if (strcmp(argv[i], "--dry-run") == 0)
      m.dry_run = true;
    else
      goto bad_usage;
  }
  if (m.queue == NULL || r.queue != NULL)
    goto bad_usage;
  if (!tally_queue_name_ok(m.queue) || strcmp(m.queue, TALLY_MAIN_QUEUE) == 0) {
    fprintf(stderr,
            "tally: --to-queue %s: a queue name other than " TALLY_MAIN_QUEUE
            ", of 1 to %d letters, digits, '-', '_' or '.'\n",
            m.queue, TALLY_QUEUE_NAME_MAX);
    return EXIT_CONFIG;
  }
  int status = remote_open(&r);
  if (status == 0 && tally_queue_prefix(m.qprefix, sizeof(m.qprefix), r.prefix,
                                        m.queue) != 0) {
    fprintf(stderr, "tally: --prefix %s: too long\n", r.prefix);
    status = EXIT_CONFIG;
  }
  if (status == 0)
    status = run(&m);
  if (status == 0)
    printf("%s %ld key%s of queue " TALLY_MAIN_QUEUE
           " into queue %s (%zu contest%s; %ld stream entr%s copied, %ld "
           "naming a moved key); %ld other key%s left alone\n",
           m.dry_run ? "would move" : "moved", m.moved, m.moved == 1 ? "" : "s",
           m.queue, m.ntags, m.ntags == 1 ? "" : "s", m.entries,
           m.entries == 1 ? "y" : "ies", m.rewritten, m.other,
           m.other == 1 ? "" : "s");
  for (size_t i = 0; i < m.ntags; i++)
    free(m.tags[i]);
  free(m.tags);
  for (size_t i = 0; i < m.nkeys; i++)
    free(m.keys[i]);
  free(m.keys);
  remote_close(&r);
  return cli_flush_stdout(status, "the summary");

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
