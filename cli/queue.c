/* tally status and results: the jobs and results streams. */
#include "cli/cli.h"
#include "redis/keys.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* status */

/* What tally status shows. Counts are 0 when a key or the group is
 * missing; -1 means Redis did not say (lag and entries read). */
/* A stream tally writes, as tally status shows it. */
typedef struct stream_info_s {
  const char *name;         /* results, public, changes or dead */
  long long length, memory; /* memory -1: Redis did not say */
  char oldest[64];          /* the oldest entry's ID, "" for none */
  long long age_ms;         /* of the oldest entry, by Redis's clock */
  long long keys_memory;    /* of the keys its entries name, estimated */
} stream_info_t;

#define NSTREAMS 4

typedef struct status_s {
  long long jobs, dead, results;
  stream_info_t streams[NSTREAMS];
  bool group;
  long long pending, lag, entries_read;
  const char *last_id;   /* in groups, or NULL */
  redisReply *groups;    /* XINFO GROUPS */
  redisReply *consumers; /* XINFO CONSUMERS: flat arrays */
  redisReply *oldest;    /* XPENDING - + 1 */
} status_t;

#define NO_GROUP_NOTE "no consumer group yet (tallyd has not started)"

/* XLEN key into *n. Returns 0 or EXIT_CONFIG (printed). */
static int stream_len(remote_t *r, const char *key, long long *n) {
  redisReply *reply =
      cli_expect(r, remote_cmd(r, "XLEN %s", key), REDIS_REPLY_INTEGER, "XLEN");
  if (reply == NULL)
    return EXIT_CONFIG;
  *n = reply->integer;
  freeReplyObject(reply);
  return 0;
}

/* How many of a stream's newest entries keys_memory samples. */
#define KEYS_SAMPLE 100

/* Estimates the memory of the keys that the entries of stream key name
 * (a result's "body", an event's "view"): the mean over the newest
 * KEYS_SAMPLE entries (0 for one that names none), times the length.
 * Returns 0 or EXIT_CONFIG (printed). */
static int keys_memory(remote_t *r, const char *key, stream_info_t *s) {
  s->keys_memory = 0;
  if (s->length == 0)
    return 0;
  redisReply *x = cli_expect(
      r, remote_cmd(r, "XREVRANGE %s + - COUNT %d", key, KEYS_SAMPLE),
      REDIS_REPLY_ARRAY, "XREVRANGE");
  if (x == NULL)
    return EXIT_CONFIG;
  long long sum = 0;
  for (size_t i = 0; i < x->elements; i++) {
    const redisReply *e = x->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
      continue;
    const redisReply *k = cli_field(e->element[1], "body");
    if (k == NULL)
      k = cli_field(e->element[1], "view");
    if (cli_str_of(k) == NULL)
      continue;
    redisReply *m = remote_cmd(r, "MEMORY USAGE %b SAMPLES 0", k->str, k->len);
    if (m == NULL) {
      freeReplyObject(x);
      return EXIT_CONFIG;
    }
    if (m->type == REDIS_REPLY_INTEGER)
      sum += m->integer;
    freeReplyObject(m);
  }
  if (x->elements > 0)
    s->keys_memory =
        (long long)((double)sum / (double)x->elements * (double)s->length);
  freeReplyObject(x);
  return 0;
}

/* Length, oldest entry and memory of each stream tally writes, the ages
 * by Redis's clock. Returns 0 or EXIT_CONFIG (printed). */
static int streams_read(remote_t *r, status_t *st) {
  static const char *const names[NSTREAMS] = {"results", "public", "changes",
                                              "dead"};
  redisReply *t =
      cli_expect(r, remote_cmd(r, "TIME"), REDIS_REPLY_ARRAY, "TIME");
  if (t == NULL)
    return EXIT_CONFIG;
  long long now = t->elements == 2 ? atoll(t->element[0]->str) * 1000 +
                                         atoll(t->element[1]->str) / 1000
                                   : 0;
  freeReplyObject(t);
  for (int i = 0; i < NSTREAMS; i++) {
    stream_info_t *s = &st->streams[i];
    s->name = names[i];
    s->memory = -1;
    char key[256];
    snprintf(key, sizeof(key), "%s:%s", r->qprefix, names[i]);
    if (stream_len(r, key, &s->length) != 0)
      return EXIT_CONFIG;
    redisReply *x = cli_expect(r, remote_cmd(r, "XRANGE %s - + COUNT 1", key),
                               REDIS_REPLY_ARRAY, "XRANGE");
    if (x == NULL)
      return EXIT_CONFIG;
    if (x->elements > 0 && x->element[0]->type == REDIS_REPLY_ARRAY &&
        x->element[0]->elements > 0 &&
        cli_str_of(x->element[0]->element[0]) != NULL) {
      snprintf(s->oldest, sizeof(s->oldest), "%s",
               x->element[0]->element[0]->str);
      s->age_ms = now - atoll(s->oldest);
    }
    freeReplyObject(x);
    redisReply *m = remote_cmd(r, "MEMORY USAGE %s", key);
    if (m == NULL)
      return EXIT_CONFIG;
    if (m->type == REDIS_REPLY_INTEGER)
      s->memory = m->integer;
    freeReplyObject(m);
    if (keys_memory(r, key, s) != 0)
      return EXIT_CONFIG;
  }
  return 0;
}

/* Fills st from Redis. Returns 0 or EXIT_CONFIG (printed). */
static int status_read(remote_t *r, status_t *st) {
  st->lag = st->entries_read = -1;
  if (stream_len(r, r->jobs, &st->jobs) != 0 ||
      stream_len(r, r->dead, &st->dead) != 0 ||
      stream_len(r, r->results, &st->results) != 0 || streams_read(r, st) != 0)
    return EXIT_CONFIG;
  st->groups = remote_cmd(r, "XINFO GROUPS %s", r->jobs);
  if (st->groups == NULL)
    return EXIT_CONFIG;
  if (st->groups->type == REDIS_REPLY_ERROR &&
      strstr(st->groups->str, "no such key") != NULL) {
    st->lag = st->entries_read = 0;
    return 0;
  }
  if (cli_expect(r, st->groups, REDIS_REPLY_ARRAY, "XINFO GROUPS") == NULL) {
    st->groups = NULL;
    return EXIT_CONFIG;
  }
  const redisReply *g = NULL;
  for (size_t k = 0; k < st->groups->elements && g == NULL; k++) {
    const char *name = cli_str_of(cli_field(st->groups->element[k], "name"));
    if (name != NULL && strcmp(name, GROUP) == 0)
      g = st->groups->element[k];
  }
  if (g == NULL) {
    st->lag = st->entries_read = 0;
    return 0;
  }
  st->group = true;
  st->pending = cli_int_field(g, "pending", 0);
  st->lag = cli_int_field(g, "lag", -1);
  st->entries_read = cli_int_field(g, "entries-read", -1);
  st->last_id = cli_str_of(cli_field(g, "last-delivered-id"));
  st->consumers =
      cli_expect(r, remote_cmd(r, "XINFO CONSUMERS %s %s", r->jobs, GROUP),
                 REDIS_REPLY_ARRAY, "XINFO CONSUMERS");
  if (st->consumers == NULL)
    return EXIT_CONFIG;
  st->oldest =
      cli_expect(r, remote_cmd(r, "XPENDING %s %s - + 1", r->jobs, GROUP),
                 REDIS_REPLY_ARRAY, "XPENDING");
  return st->oldest == NULL ? EXIT_CONFIG : 0;
}

static void status_free(status_t *st) {
  if (st->groups != NULL)
    freeReplyObject(st->groups);
  if (st->consumers != NULL)
    freeReplyObject(st->consumers);
  if (st->oldest != NULL)
    freeReplyObject(st->oldest);
}

/* The oldest pending entry: [id, consumer, idle ms, deliveries]. Returns
 * false when there is none or the reply has another shape. */
static bool oldest_of(const status_t *st, const char **id,
                      const char **consumer, long long *idle,
                      long long *deliveries) {
  if (st->oldest == NULL || st->oldest->elements == 0)
    return false;
  const redisReply *e = st->oldest->element[0];
  if (e->type != REDIS_REPLY_ARRAY || e->elements < 4 ||
      cli_str_of(e->element[0]) == NULL || cli_str_of(e->element[1]) == NULL)
    return false;
  *id = e->element[0]->str;
  *consumer = e->element[1]->str;
  *idle = e->element[2]->integer;
  *deliveries = e->element[3]->integer;
  return true;
}

/* One line of the text form: a label in a column of its own. */
static void status_line(const char *label, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%-16s ", label);
  vprintf(fmt, ap);
  putchar('\n');
  va_end(ap);
}

static void status_text(const remote_t *r, const status_t *st) {
  const char *id, *who;
  long long idle, deliveries;
  status_line("redis", "%s", r->url);
  status_line("jobs", "%lld in %s", st->jobs, r->jobs);
  if (!st->group)
    status_line("group", "none: " NO_GROUP_NOTE);
  else
    status_line("group", "%s on %s, last delivered %s", GROUP, r->jobs,
                st->last_id ? st->last_id : "none");
  if (st->lag >= 0)
    status_line("lag", "%lld not yet delivered", st->lag);
  else
    status_line("lag", "unknown");
  status_line("pending", "%lld delivered, not yet acknowledged", st->pending);
  if (oldest_of(st, &id, &who, &idle, &deliveries))
    status_line("oldest pending",
                "%s, consumer %s, idle %lld ms, delivered %lld time%s", id, who,
                idle, deliveries, deliveries == 1 ? "" : "s");
  size_t n = st->consumers ? st->consumers->elements : 0;
  status_line("consumers", "%zu", n);
  for (size_t k = 0; k < n; k++) {
    const redisReply *c = st->consumers->element[k];
    const char *name = cli_str_of(cli_field(c, "name"));
    char label[256];
    snprintf(label, sizeof(label), "  %s", name ? name : "?");
    status_line(label, "%lld pending, idle %lld ms",
                cli_int_field(c, "pending", 0), cli_int_field(c, "idle", 0));
  }
  status_line("dead letters", "%lld in %s", st->dead, r->dead);
  status_line("results", "%lld in %s", st->results, r->results);
  for (int i = 0; i < NSTREAMS; i++) {
    const stream_info_t *s = &st->streams[i];
    char label[32], mem[128] = "";
    snprintf(label, sizeof(label), "stream %s", s->name);
    if (s->memory >= 0)
      snprintf(mem, sizeof(mem), ", %lld bytes", s->memory);
    if (s->keys_memory > 0)
      snprintf(mem + strlen(mem), sizeof(mem) - strlen(mem),
               " and about %lld in the keys its entries name", s->keys_memory);
    if (s->oldest[0] != '\0')
      status_line(label, "%lld entr%s, oldest %s (%lld s old)%s", s->length,
                  s->length == 1 ? "y" : "ies", s->oldest, s->age_ms / 1000,
                  mem);
    else
      status_line(label, "%lld entr%s%s", s->length,
                  s->length == 1 ? "y" : "ies", mem);
  }
}

static void status_json(const remote_t *r, const status_t *st, tally_buf_t *b) {
  const char *id, *who;
  long long idle, deliveries;
  tally_buf_puts(b, "{\"redis\":");
  tally_json_str(b, r->url);
  cli_json_string(b, "prefix", r->prefix);
  cli_json_string(b, "queue", r->queue_in_use);
  cli_json_int(b, "jobs", st->jobs);
  cli_json_string(b, "group", st->group ? GROUP : NULL);
  if (!st->group)
    cli_json_string(b, "note", NO_GROUP_NOTE);
  cli_json_string(b, "last_delivered_id", st->last_id);
  cli_json_int(b, "entries_read", st->entries_read);
  cli_json_int(b, "lag", st->lag);
  cli_json_int(b, "pending", st->pending);
  tally_buf_puts(b, ",\"oldest_pending\":");
  if (oldest_of(st, &id, &who, &idle, &deliveries)) {
    tally_buf_puts(b, "{\"id\":");
    tally_json_str(b, id);
    cli_json_string(b, "consumer", who);
    cli_json_int(b, "idle_ms", idle);
    cli_json_int(b, "deliveries", deliveries);
    tally_buf_putc(b, '}');
  } else {
    tally_buf_puts(b, "null");
  }
  tally_buf_puts(b, ",\"consumers\":[");
  size_t n = st->consumers ? st->consumers->elements : 0;
  for (size_t k = 0; k < n; k++) {
    const redisReply *c = st->consumers->element[k];
    tally_buf_puts(b, k ? ",{\"name\":" : "{\"name\":");
    const char *name = cli_str_of(cli_field(c, "name"));
    tally_json_str(b, name ? name : "");
    cli_json_int(b, "pending", cli_int_field(c, "pending", 0));
    cli_json_int(b, "idle_ms", cli_int_field(c, "idle", 0));
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, ']');
  cli_json_int(b, "dead", st->dead);
  cli_json_int(b, "results", st->results);
  tally_buf_puts(b, ",\"streams\":{");
  for (int i = 0; i < NSTREAMS; i++) {
    const stream_info_t *s = &st->streams[i];
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_json_str(b, s->name);
    tally_buf_puts(b, ":{\"length\":");
    char n[32];
    snprintf(n, sizeof(n), "%lld", s->length);
    tally_buf_puts(b, n);
    cli_json_string(b, "oldest_id", s->oldest[0] ? s->oldest : NULL);
    if (s->oldest[0])
      cli_json_int(b, "oldest_age_ms", s->age_ms);
    else
      tally_buf_puts(b, ",\"oldest_age_ms\":null");
    if (s->memory >= 0)
      cli_json_int(b, "memory_bytes", s->memory);
    else
      tally_buf_puts(b, ",\"memory_bytes\":null");
    cli_json_int(b, "keys_memory_bytes", s->keys_memory);
    tally_buf_putc(b, '}');
  }
  tally_buf_puts(b, "}}\n");
}

int cmd_status(int argc, char **argv) {
  remote_t r;
  bool json = false;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else
      goto bad_usage;
  }
  status_t st = {0};
  int status = remote_open_queue(&r);
  if (status == 0)
    status = status_read(&r, &st);
  if (status == 0 && json) {
    tally_buf_t b;
    tally_buf_init(&b);
    status_json(&r, &st, &b);
    if (b.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_CONFIG;
    } else {
      fwrite(b.data, 1, b.len, stdout);
    }
    tally_buf_close(&b);
  } else if (status == 0) {
    status_text(&r, &st);
  }
  status_free(&st);
  remote_close(&r);
  status = cli_flush_stdout(status, "the status");
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}

/* results */

/* The ID of the last entry of key ("0-0" for none) in id, which holds
 * idlen bytes: what "$" means, pinned down so that no entry added between
 * two reads is missed. Returns 0 or EXIT_CONFIG (printed). */
static int last_id(remote_t *r, const char *key, char *id, size_t idlen) {
  redisReply *reply =
      cli_expect(r, remote_cmd(r, "XREVRANGE %s + - COUNT 1", key),
                 REDIS_REPLY_ARRAY, "XREVRANGE");
  if (reply == NULL)
    return EXIT_CONFIG;
  const char *last = "0-0";
  if (reply->elements > 0 && reply->element[0]->type == REDIS_REPLY_ARRAY &&
      reply->element[0]->elements > 0 &&
      cli_str_of(reply->element[0]->element[0]) != NULL)
    last = reply->element[0]->element[0]->str;
  snprintf(id, idlen, "%s", last);
  freeReplyObject(reply);
  return 0;
}

/* Appends before, then a field of a stream entry as a JSON member whose
 * value is a string, or null when the field is missing. */
static void json_field(tally_buf_t *b, const char *before, const char *name,
                       const redisReply *fields) {
  tally_buf_puts(b, before);
  tally_json_str(b, name);
  tally_buf_putc(b, ':');
  const redisReply *v = cli_field(fields, name);
  if (v == NULL || v->type != REDIS_REPLY_STRING)
    tally_buf_puts(b, "null");
  else if (strcmp(name, "deliveries") == 0 && v->len > 0 && v->len < 16 &&
           strspn(v->str, "0123456789") == v->len)
    tally_buf_put(b, v->str, v->len); /* a count: a number */
  else
    tally_json_str(b, v->str);
}

/* The body key a results entry names (its "body" field), or NULL. */
static const redisReply *body_key(const redisReply *fields) {
  const redisReply *key = cli_field(fields, "body");
  return cli_str_of(key) != NULL ? key : NULL;
}

/* Appends the result stored at the body key an entry names, and returns
 * 1; 0 (said on stderr) when the body is gone, -1 when Redis failed. The
 * GET of the key was pipelined before (its reply is read here) when
 * pipelined, else it is sent now. */
static int body_line(remote_t *r, tally_buf_t *b, const char *id,
                     const redisReply *fields, const redisReply *key,
                     bool pipelined) {
  redisReply *v = NULL;
  if (!pipelined) {
    v = remote_cmd(r, "GET %b", key->str, key->len);
  } else if (redisGetReply(r->c, (void **)&v) != REDIS_OK) {
    remote_io_error(r);
    return -1;
  }
  if (v == NULL ||
      (v->type != REDIS_REPLY_STRING && v->type != REDIS_REPLY_NIL)) {
    cli_expect(r, v, REDIS_REPLY_STRING, "GET");
    return -1;
  }
  if (v->type == REDIS_REPLY_NIL) {
    const redisReply *s = cli_field(fields, "submission");
    fprintf(stderr,
            "tally: entry %s: its result (%s) is gone, trimmed or expired%s%s"
            "%s\n",
            id, key->str, cli_str_of(s) ? "; tally results --submission " : "",
            cli_str_of(s) ? s->str : "", cli_str_of(s) ? " rebuilds it" : "");
    freeReplyObject(v);
    return 0;
  }
  tally_buf_put(b, v->str, v->len);
  tally_buf_putc(b, '\n');
  freeReplyObject(v);
  return 1;
}

/* Writes the line for one stream entry into b: the result's JSON (from the
 * body key the entry names; an entry written before results had bodies
 * holds it in "result"), or for a dead letter an object made of its
 * fields. Returns 1; 0 (after saying so) for an entry without a result;
 * -1 when Redis failed (said). */
static int entry_line(remote_t *r, tally_buf_t *b, const char *id,
                      const redisReply *fields, bool dead, bool pipelined) {
  if (dead) {
    json_field(b, "{", "id", fields);
    json_field(b, ",", "error", fields);
    json_field(b, ",", "deliveries", fields);
    json_field(b, ",", "job", fields);
    tally_buf_puts(b, "}\n");
    return 1;
  }
  const redisReply *key = body_key(fields);
  if (key != NULL)
    return body_line(r, b, id, fields, key, pipelined);
  const redisReply *v = cli_field(fields, "result");
  if (v == NULL || v->type != REDIS_REPLY_STRING) {
    fprintf(stderr, "tally: entry %s has no result field\n", id);
    return 0;
  }
  tally_buf_put(b, v->str, v->len);
  tally_buf_putc(b, '\n');
  return 1;
}

/* tally results --submission S: the result at the submission record's
 * result_entry; when retention trimmed it (or it never had one), the
 * stored job scored again with the task configs of --tasks, marked
 * "rebuilt": true, and said so on stderr; printed in form's form. Returns
 * an exit status. */
static int submission_result(remote_t *r, const char *sub,
                             const char *plugin_dir, const char *tasks,
                             const cli_out_t *form) {
  char key[1024];
  snprintf(key, sizeof(key), "%s:submission:%s", r->qprefix, sub);
  redisReply *h = cli_expect(
      r, remote_cmd(r, "HMGET %s result_entry job entry scored error", key),
      REDIS_REPLY_ARRAY, "HMGET");
  if (h == NULL)
    return EXIT_CONFIG;
  const char *entry = cli_str_of(h->element[0]);
  const redisReply *job = h->element[1];
  int status = 0;
  if (job->type != REDIS_REPLY_STRING) {
    fprintf(stderr, "tally: no submission %s (%s does not exist)\n", sub, key);
    freeReplyObject(h);
    return EXIT_JOB_FAILED;
  }
  if (entry != NULL) {
    redisReply *x = cli_expect(
        r, remote_cmd(r, "XRANGE %s %s %s", r->results, entry, entry),
        REDIS_REPLY_ARRAY, "XRANGE");
    if (x == NULL) {
      freeReplyObject(h);
      return EXIT_CONFIG;
    }
    int got = 0;
    if (x->elements == 1) {
      tally_buf_t b;
      tally_buf_init(&b);
      got = entry_line(r, &b, entry, x->element[0]->element[1], false, false);
      if (got > 0)
        cli_write_results(form, b.data, b.len);
      tally_buf_close(&b);
    }
    freeReplyObject(x);
    if (got != 0) {
      freeReplyObject(h);
      return got < 0 ? EXIT_CONFIG : cli_flush_stdout(0, "the result");
    }
  }
  const char *why = entry != NULL ? "was trimmed from" : "is not in";
  if (tasks == NULL) {
    fprintf(stderr,
            "tally: the result of submission %s %s %s; give --tasks DIR to "
            "rebuild it from the stored job with the current config\n",
            sub, why, r->results);
    freeReplyObject(h);
    return EXIT_JOB_FAILED;
  }
  cli_t c;
  status = cli_load(&c, plugin_dir, tasks);
  if (status == 0) {
    tally_engine_t e;
    tally_buf_t out, extra;
    tally_engine_init(&e, &c.tasks);
    e.add_version = true;
    tally_buf_init(&out);
    tally_buf_init(&extra);
    tally_buf_puts(&extra, "\"id\":");
    tally_json_str(&extra, cli_str_of(h->element[2]) ? h->element[2]->str : "");
    tally_buf_puts(&extra, ",\"rebuilt\":true");
    int rc = tally_engine_score(&e, job->str, job->len, extra.data, &out);
    if (rc == TALLY_ENOMEM || extra.oom || out.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_CONFIG;
    } else {
      fprintf(stderr,
              "tally: the result of submission %s %s %s: rebuilt from the "
              "stored job with the current config%s\n",
              sub, why, r->results,
              rc == TALLY_EJOB ? ", which cannot score it" : "");
      tally_buf_putc(&out, '\n');
      cli_write_results(form, out.data, out.len);
      status = rc == TALLY_EJOB ? EXIT_JOB_FAILED : 0;
    }
    tally_buf_close(&extra);
    tally_buf_close(&out);
    tally_engine_close(&e);
  }
  cli_close(&c);
  freeReplyObject(h);
  return cli_flush_stdout(status, "the result");
}

int cmd_results(int argc, char **argv) {
  remote_t r;
  const char *from = "$";
  const char *submission = NULL, *tasks = NULL, *plugins = NULL;
  long count = 0; /* 0: no limit */
  bool follow = true, dead = false;
  cli_out_t form = {CLI_OUT_AUTO, false};
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0 || cli_out_flag(&form, argv[i]))
      continue;
    if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
      from = argv[++i];
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc &&
             (count = cli_positive(argv[i + 1])) > 0)
      i++;
    else if (strcmp(argv[i], "--no-follow") == 0)
      follow = false;
    else if (strcmp(argv[i], "--dead") == 0)
      dead = true;
    else if (strcmp(argv[i], "--submission") == 0 && i + 1 < argc)
      submission = argv[++i];
    else if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc)
      tasks = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc)
      plugins = argv[++i];
    else
      goto bad_usage;
  }
  if ((tasks != NULL || plugins != NULL) && submission == NULL)
    goto bad_usage;
  cli_out_resolve(&form);
  if (submission != NULL) {
    int st = remote_open_queue(&r);
    if (st == 0)
      st = submission_result(&r, submission, plugins, tasks, &form);
    remote_close(&r);
    return st;
  }

  int status = remote_open_queue(&r);
  const char *key = dead ? r.dead : r.results;
  char id[128];
  if (status == 0 && strcmp(from, "$") == 0)
    status = last_id(&r, key, id, sizeof(id));
  else
    snprintf(id, sizeof(id), "%s", from);
  if (status == 0 && follow) {
    /* A blocking read takes up to BLOCK_MS before Redis answers. */
    long ms = BLOCK_MS + TIMEOUT_MS;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (redisSetTimeout(r.c, tv) != REDIS_OK) {
      remote_io_error(&r);
      status = EXIT_CONFIG;
    }
  }
  cli_catch_stop_signals();

  tally_buf_t b;
  tally_buf_init(&b);
  long printed = 0;
  while (status == 0 && !cli_stop_requested &&
         (count == 0 || printed < count)) {
    long want = count == 0 || count - printed > 100 ? 100 : count - printed;
    redisReply *reply =
        follow ? remote_cmd(&r, "XREAD COUNT %ld BLOCK %d STREAMS %s %s", want,
                            BLOCK_MS, key, id)
               : remote_cmd(&r, "XREAD COUNT %ld STREAMS %s %s", want, key, id);
    if (reply != NULL && reply->type == REDIS_REPLY_NIL) {
      freeReplyObject(reply);
      if (!follow)
        break;
      continue;
    }
    if ((reply = cli_expect(&r, reply, REDIS_REPLY_ARRAY, "XREAD")) == NULL) {
      status = EXIT_CONFIG;
      break;
    }
    /* [[key, [[id, [field, value, ...]], ...]]] */
    const redisReply *entries =
        reply->elements == 1 && reply->element[0]->elements == 2
            ? reply->element[0]->element[1]
            : NULL;
    /* The bodies of the batch, fetched in one pipeline; each entry's
     * line then reads its reply, in order. */
    for (size_t k = 0; !dead && entries != NULL && k < entries->elements; k++) {
      const redisReply *e = entries->element[k];
      const redisReply *bk = e->type == REDIS_REPLY_ARRAY && e->elements == 2 &&
                                     cli_str_of(e->element[0]) != NULL
                                 ? body_key(e->element[1])
                                 : NULL;
      if (bk != NULL &&
          redisAppendCommand(r.c, "GET %b", bk->str, bk->len) != REDIS_OK) {
        remote_io_error(&r);
        status = EXIT_CONFIG;
        break;
      }
    }
    for (size_t k = 0; status == 0 && entries != NULL && k < entries->elements;
         k++) {
      const redisReply *e = entries->element[k];
      if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
          cli_str_of(e->element[0]) == NULL)
        continue;
      snprintf(id, sizeof(id), "%s", e->element[0]->str);
      tally_buf_reset(&b);
      int got = entry_line(&r, &b, id, e->element[1], dead, true);
      if (got < 0) {
        status = EXIT_CONFIG;
        break;
      }
      if (got == 0)
        continue;
      if (b.oom) {
        fprintf(stderr, "tally: out of memory\n");
        status = EXIT_CONFIG;
        break;
      }
      if (cli_write_results(&form, b.data, b.len) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "tally: cannot write: %s\n", strerror(errno));
        status = EXIT_JOB_FAILED;
        break;
      }
      printed++;
    }
    freeReplyObject(reply);
  }
  tally_buf_close(&b);
  remote_close(&r);
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
