/* The tally command line: offline scoring and config checks, the client
 * side of tallyd's Redis streams (submit, status, results), and the
 * contest state (rescore, ranking, reload). */
#include "cli/rescore.h"
#include "config/jsonw.h"
#include "contest/scoremode.h"
#include "engine/engine.h"
#include "engine/plugins.h"
#include "redis/redis.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define EXIT_JOB_FAILED 1
#define EXIT_CONFIG 2

static const char usage[] =
    "usage: tally score (--task FILE | --tasks DIR) [--plugins DIR] "
    "[--mode MODE] [JOBS...]\n"
    "       tally check [--plugins DIR] FILE|DIR...\n"
    "       tally submit [REDIS] [--ids] [FILE...]\n"
    "       tally status [REDIS] [--json]\n"
    "       tally results [REDIS] [--from ID] [--count N] [--no-follow] "
    "[--dead]\n"
    "       tally rescore [REDIS] --tasks DIR [--plugins DIR] SELECTION\n"
    "                     [--dry-run] [--threads N] [--wait SECONDS] "
    "[--json]\n"
    "       tally ranking [REDIS] --contest C [--public] [--json]\n"
    "       tally reload (--pid N | --pidfile FILE) [REDIS] [--wait "
    "SECONDS]\n"
    "REDIS: --redis URL (redis://[USER[:PASSWORD]@]IP[:PORT][/DB] or\n"
    "       unix://[USER[:PASSWORD]@]/PATH[?db=N]; default: the server "
    "tallyd\n"
    "       starts in --data-dir DIR, default tally-data), --prefix P (key\n"
    "       prefix, default tally), --redis-password-file FILE (the password "
    "on\n"
    "       its first line; else TALLY_REDIS_PASSWORD, if set)\n"
    "MODE: max, max_subtask or max_tokened_last: print one participant's "
    "task\n"
    "       score over the jobs instead of each job's result\n"
    "SELECTION: the submissions in every one given of --task T, --contest "
    "C,\n"
    "       --participant P and --submission S; or alone, --changed (the "
    "tasks\n"
    "       whose config version changed) or --stale (the submissions "
    "scored\n"
    "       with another version than the current one)\n"
    "rescore: --threads N (default: one per CPU); --wait S gives up when "
    "another\n"
    "       rescore holds the lock for S s (default: waits); exits 1 on a "
    "Redis\n"
    "       or lock error, 2 on a bad selection or config\n"
    "reload: sends SIGHUP to tallyd; with REDIS given, waits (--wait, "
    "default\n"
    "       60 s) for the rescore that the reload starts to finish\n";

/* What every subcommand sets up: score types, plugins and tasks. */
typedef struct cli_s {
  tally_registry_t reg;
  tally_plugins_t plugins;
  tally_taskset_t tasks;
} cli_t;

static int cli_open(cli_t *c, const char *plugin_dir) {
  char err[1024];
  tally_plugins_init(&c->plugins);
  tally_taskset_init(&c->tasks);
  if (tally_registry_init(&c->reg) != 0) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  if (plugin_dir != NULL &&
      tally_plugins_load_dir(&c->plugins, &c->reg, plugin_dir, err,
                             sizeof(err)) != 0) {
    fprintf(stderr, "tally: %s\n", err);
    return EXIT_CONFIG;
  }
  return 0;
}

static void cli_close(cli_t *c) {
  tally_taskset_close(&c->tasks);
  tally_registry_close(&c->reg);
  tally_plugins_close(&c->plugins);
}

static void print_diag(const tally_diag_t *d) {
  for (size_t i = 0; i < d->count; i++)
    fprintf(stderr, "%s\n", d->msgs[i]);
  if (d->dropped > 0)
    fprintf(stderr, "(%zu more errors not shown)\n", d->dropped);
}

/* Flushes stdout at the end of a subcommand. Returns status, or, when it
 * was 0 and the flush fails, EXIT_JOB_FAILED after saying what could not
 * be written (what may be NULL: nothing is said). */
static int flush_stdout(int status, const char *what) {
  if (fflush(stdout) == 0 || status != 0)
    return status;
  if (what != NULL)
    fprintf(stderr, "tally: cannot write %s: %s\n", what, strerror(errno));
  return EXIT_JOB_FAILED;
}

/* cli_open, then loads the task configs at path, printing every error.
 * Returns 0 or EXIT_CONFIG; either way, cli_close(c) follows. */
static int cli_load(cli_t *c, const char *plugin_dir, const char *path) {
  int status = cli_open(c, plugin_dir);
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  if (status == 0 && tally_taskset_load(&c->tasks, &c->reg, path, &d)) {
    print_diag(&d);
    status = EXIT_CONFIG;
  }
  tally_diag_close(&d);
  return status;
}

/* A line of a JSON Lines input, without its line ending ("\n" or
 * "\r\n") and NUL-terminated. A nonzero return stops the reading. */
typedef int (*line_cb)(void *ctx, char *line, size_t len, unsigned long lineno);

/* Calls cb for each line of f (named name) until cb returns nonzero.
 * Returns that value; TALLY_EIO after a read error, said on stderr; or 0
 * at the end of f. */
static int each_line(FILE *f, const char *name, line_cb cb, void *ctx) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  unsigned long lineno = 0;
  int status = 0;
  while (status == 0 && (n = getline(&line, &cap, f)) > 0) {
    size_t len = (size_t)n;
    lineno++;
    if (len > 0 && line[len - 1] == '\n')
      len--;
    if (len > 0 && line[len - 1] == '\r')
      len--;
    line[len] = '\0';
    status = cb(ctx, line, len, lineno);
  }
  if (status == 0 && ferror(f)) {
    fprintf(stderr, "tally: %s: read error\n", name);
    status = TALLY_EIO;
  }
  free(line);
  return status;
}

/* The length of line without its trailing blanks. */
static size_t trim_end(const char *line, size_t len) {
  while (len > 0 && strchr(" \t\r\n", line[len - 1]))
    len--;
  return len;
}

/* Scores every JSON line of f, printing one line per job. Returns the
 * number of jobs that failed, or -1 on an I/O error or out of memory. */
typedef struct score_ctx_s {
  tally_engine_t *e;
  tally_buf_t *out;
  long failed;
} score_ctx_t;

static int score_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  score_ctx_t *sc = ctx;
  (void)lineno;
  len = trim_end(line, len);
  if (len == 0)
    return 0;
  tally_buf_reset(sc->out);
  int rc = tally_engine_score(sc->e, line, len, NULL, sc->out);
  if (rc == TALLY_ENOMEM) {
    fprintf(stderr, "tally: out of memory\n");
    return rc;
  }
  if (rc != 0)
    sc->failed++;
  tally_buf_putc(sc->out, '\n');
  fwrite(sc->out->data, 1, sc->out->len, stdout);
  return 0;
}

static long score_stream(tally_engine_t *e, FILE *f, const char *name,
                         tally_buf_t *out) {
  score_ctx_t sc = {e, out, 0};
  return each_line(f, name, score_line, &sc) != 0 ? -1 : sc.failed;
}

/* tally score --mode: one participant's jobs for one task, each scored,
 * then combined into the task score under a score mode. */
typedef struct mode_run_s {
  tally_engine_t *e;
  const tally_taskset_t *tasks;
  const tally_task_t *task; /* the task of the first job */
  tally_submission_t *subs;
  size_t n, cap;
  long failed; /* jobs that could not be scored */
  tally_buf_t *out;
} mode_run_t;

/* Finds the task of job, which must be the task of every job before it.
 * Returns it, or NULL after printing why (naming name and lineno). */
static const tally_task_t *mode_job_task(mode_run_t *m, const cJSON *job,
                                         const char *name,
                                         unsigned long lineno) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(job, "task");
  const tally_task_t *task = NULL;
  if (t == NULL && m->tasks->count == 1)
    task = m->tasks->entries[0].task;
  else if (t == NULL)
    fprintf(stderr, "tally: %s:%lu: task: missing\n", name, lineno);
  else if (!cJSON_IsString(t))
    fprintf(stderr, "tally: %s:%lu: task: must be a string\n", name, lineno);
  else if ((task = tally_taskset_find(m->tasks, t->valuestring)) == NULL)
    fprintf(stderr, "tally: %s:%lu: task: unknown task \"%s\"\n", name, lineno,
            t->valuestring);
  if (task != NULL && m->task != NULL && task != m->task) {
    fprintf(stderr,
            "tally: %s:%lu: task \"%s\", but the jobs before are for task "
            "\"%s\": --mode scores one task\n",
            name, lineno, task->name, m->task->name);
    return NULL;
  }
  if (m->task == NULL)
    m->task = task;
  return task;
}

/* Adds the job in line (len bytes, NUL-terminated) as a submission: its
 * task, timestamp, official and tokened flags, and its result, or
 * unscored if it cannot be scored (said on stderr). Returns 0,
 * EXIT_CONFIG when the job cannot be placed, or EXIT_JOB_FAILED when out
 * of memory; each after printing why. */
static int mode_add(mode_run_t *m, char *line, size_t len, const char *name,
                    unsigned long lineno) {
  char err[512];
  cJSON *job = cJSON_ParseWithOpts(line, NULL, 1);
  const tally_task_t *task = NULL;
  int status = 0;
  if (!cJSON_IsObject(job)) {
    fprintf(stderr, "tally: %s:%lu: not a JSON object\n", name, lineno);
    status = EXIT_CONFIG;
  } else if ((task = mode_job_task(m, job, name, lineno)) == NULL) {
    status = EXIT_CONFIG;
  } else if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    tally_submission_t *subs = realloc(m->subs, cap * sizeof(*subs));
    if (subs == NULL) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      m->subs = subs;
      m->cap = cap;
    }
  }
  tally_submission_t *s = NULL;
  if (status == 0) {
    s = &m->subs[m->n];
    tally_submission_init(s);
    if (tally_submission_read_job(s, job, err, sizeof(err)) != 0) {
      fprintf(stderr, "tally: %s:%lu: %s\n", name, lineno, err);
      status = EXIT_CONFIG;
    }
  }
  cJSON_Delete(job);
  if (status != 0)
    return status;
  m->n++;

  tally_buf_reset(m->out);
  int rc = tally_engine_score(m->e, line, len, NULL, m->out);
  if (rc == 0) {
    cJSON *res = cJSON_Parse(m->out->data);
    rc = res == NULL ? TALLY_ENOMEM
                     : tally_submission_read_result(s, res, err, sizeof(err));
    cJSON_Delete(res);
  }
  if (rc == TALLY_ENOMEM || m->out->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  if (rc != 0) {
    fprintf(stderr, "tally: %s:%lu: %s (counted as not scored)\n", name, lineno,
            m->e->err);
    m->failed++;
  }
  return 0;
}

/* Adds every JSON line of f (named name) with mode_add. Returns 0, or
 * EXIT_CONFIG or EXIT_JOB_FAILED (read error, out of memory) after
 * printing why. */
typedef struct mode_ctx_s {
  mode_run_t *m;
  const char *name;
} mode_ctx_t;

static int mode_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  mode_ctx_t *mc = ctx;
  len = trim_end(line, len);
  line[len] = '\0';
  return len > 0 ? mode_add(mc->m, line, len, mc->name, lineno) : 0;
}

static int mode_stream(mode_run_t *m, FILE *f, const char *name) {
  mode_ctx_t mc = {m, name};
  int status = each_line(f, name, mode_line, &mc);
  return status == TALLY_EIO ? EXIT_JOB_FAILED : status;
}

/* Prints the task score of the submissions in m as one JSON line.
 * Returns 0 or EXIT_JOB_FAILED (out of memory). */
static int mode_print(const mode_run_t *m, tally_score_mode_t mode) {
  tally_task_score_t ts;
  const tally_task_t *task = m->task;
  if (task == NULL && m->tasks->count == 1)
    task = m->tasks->entries[0].task;
  tally_task_score(mode, task ? task->score_precision : 0,
                   task ? task->score_rounding : TALLY_ROUND_SUBTASK, m->subs,
                   m->n, &ts);
  tally_buf_t *b = m->out;
  tally_buf_reset(b);
  tally_buf_puts(b, "{\"task\":");
  if (task != NULL)
    tally_json_str(b, task->name);
  else
    tally_buf_puts(b, "null");
  tally_buf_puts(b, ",\"mode\":");
  tally_json_str(b, tally_score_mode_name(mode));
  tally_buf_puts(b, ",\"score\":");
  tally_json_num(b, ts.score);
  tally_buf_puts(b, ",\"public_score\":");
  tally_json_num(b, ts.public_score);
  tally_buf_puts(b, ts.partial ? ",\"partial\":true" : ",\"partial\":false");
  tally_buf_puts(b, ",\"submissions\":");
  tally_json_num(b, (double)ts.submissions);
  tally_buf_puts(b, "}\n");
  if (b->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  fwrite(b->data, 1, b->len, stdout);
  return 0;
}

/* Scores the job files (stdin if there are none) as one participant's
 * submissions and prints their task score. Returns the exit status. */
static int score_mode(tally_engine_t *e, const tally_taskset_t *tasks,
                      tally_score_mode_t mode, int nfiles, char **files,
                      tally_buf_t *out) {
  mode_run_t m = {.e = e, .tasks = tasks, .out = out};
  int status = 0;
  if (nfiles == 0)
    status = mode_stream(&m, stdin, "stdin");
  for (int k = 0; k < nfiles && status == 0; k++) {
    FILE *f = strcmp(files[k], "-") == 0 ? stdin : fopen(files[k], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", files[k], strerror(errno));
      status = EXIT_JOB_FAILED;
      break;
    }
    status =
        mode_stream(&m, f, strcmp(files[k], "-") == 0 ? "stdin" : files[k]);
    if (f != stdin)
      fclose(f);
  }
  if (status == 0)
    status = mode_print(&m, mode);
  if (status == 0 && m.failed > 0)
    status = EXIT_JOB_FAILED;
  for (size_t k = 0; k < m.n; k++)
    tally_submission_close(&m.subs[k]);
  free(m.subs);
  return status;
}

static int cmd_score(int argc, char **argv) {
  const char *task_path = NULL, *plugin_dir = NULL, *mode_name = NULL;
  tally_score_mode_t mode = TALLY_MODE_MAX_SUBTASK;
  int i = 0;
  for (; i < argc; i++) {
    if ((strcmp(argv[i], "--task") == 0 || strcmp(argv[i], "--tasks") == 0) &&
        i + 1 < argc && task_path == NULL)
      task_path = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc)
      plugin_dir = argv[++i];
    else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
      mode_name = argv[++i];
    else if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0')
      goto bad_usage;
    else
      break;
  }
  if (task_path == NULL)
    goto bad_usage;
  if (mode_name != NULL && tally_score_mode_parse(mode_name, &mode) != 0) {
    fprintf(stderr,
            "tally: --mode: unknown score mode \"%s\" (max, max_subtask or "
            "max_tokened_last)\n",
            mode_name);
    return EXIT_CONFIG;
  }

  cli_t c;
  int status = cli_load(&c, plugin_dir, task_path);
  if (status != 0) {
    cli_close(&c);
    return status;
  }

  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &c.tasks);
  tally_buf_init(&out);
  if (mode_name != NULL) {
    status = score_mode(&e, &c.tasks, mode, argc - i, argv + i, &out);
    tally_buf_close(&out);
    tally_engine_close(&e);
    cli_close(&c);
    status = flush_stdout(status, "the score");
    return status;
  }
  long failed = 0;
  if (i == argc) {
    failed = score_stream(&e, stdin, "stdin", &out);
  }
  for (; i < argc && failed >= 0; i++) {
    FILE *f = strcmp(argv[i], "-") == 0 ? stdin : fopen(argv[i], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", argv[i], strerror(errno));
      failed = -1;
      break;
    }
    long n = score_stream(&e, f, argv[i], &out);
    failed = n < 0 ? -1 : failed + n;
    if (f != stdin)
      fclose(f);
  }
  tally_buf_close(&out);
  tally_engine_close(&e);
  cli_close(&c);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "tally: cannot write results: %s\n", strerror(errno));
    return EXIT_JOB_FAILED;
  }
  return failed == 0 ? 0 : EXIT_JOB_FAILED;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* Checks the task configs at path, printing a line per task or every
 * error. Returns 0 or EXIT_CONFIG. */
static int check_path(cli_t *c, const char *path) {
  tally_diag_t d;
  tally_taskset_t ts;
  int status = 0;
  tally_diag_init(&d, NULL);
  tally_taskset_init(&ts);
  if (tally_taskset_load(&ts, &c->reg, path, &d) != 0) {
    print_diag(&d);
    status = EXIT_CONFIG;
  }
  for (size_t k = 0; k < ts.count; k++) {
    const tally_task_t *t = ts.entries[k].task;
    printf("%s: ok: task %s, %s, %zu testcases, %zu subtasks, max score %g "
           "(public %g)\n",
           ts.entries[k].file, t->name, t->type->name, t->ntestcases,
           t->nsubtasks, t->max_score, t->max_public_score);
  }
  tally_taskset_close(&ts);
  tally_diag_close(&d);
  return status;
}

static int cmd_check(int argc, char **argv) {
  const char *plugin_dir = NULL;
  int i = 0;
  if (i + 1 < argc && strcmp(argv[i], "--plugins") == 0) {
    plugin_dir = argv[i + 1];
    i += 2;
  }
  if (i == argc) {
    fputs(usage, stderr);
    return EXIT_CONFIG;
  }
  cli_t c;
  int status = cli_open(&c, plugin_dir);
  /* Every path is checked, so that every error is shown at once. */
  int failed = 0;
  for (; i < argc && status == 0; i++)
    failed |= check_path(&c, argv[i]);
  if (failed)
    status = EXIT_CONFIG;
  cli_close(&c);
  return status;
}

/* The Redis subcommands: submit, status and results talk to the streams
 * that tallyd reads and writes, over hiredis's blocking API. */

#define GROUP "tallyd"
#define TIMEOUT_MS 5000 /* for every command but a blocking read */
#define BLOCK_MS 1000   /* how long one XREAD waits for new entries */
#define PIPELINE 1000   /* most XADDs in flight */

/* Where tallyd's streams live, and a connection to them. */
typedef struct remote_s {
  const char *redis;         /* --redis URL, or NULL */
  const char *data_dir;      /* --data-dir DIR */
  const char *prefix;        /* --prefix P */
  const char *password_file; /* --redis-password-file FILE, or NULL */
  char *url;                 /* the URL in use; the rest is derived on open */
  char *jobs, *results, *dead;
  redisContext *c;
} remote_t;

static void remote_init(remote_t *r) {
  memset(r, 0, sizeof(*r));
  r->data_dir = "tally-data";
  r->prefix = "tally";
}

/* Takes the flag at argv[*i] if it is one that every Redis subcommand
 * shares. Returns 1 if it was (and moves *i onto its value), 0 if not, and
 * -1 if its value is missing. */
static int remote_flag(remote_t *r, int argc, char **argv, int *i) {
  static const char *const names[] = {"--redis", "--data-dir", "--prefix",
                                      "--redis-password-file"};
  const char **slots[] = {&r->redis, &r->data_dir, &r->prefix,
                          &r->password_file};
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
static void remote_io_error(const remote_t *r) {
  fprintf(stderr, "tally: Redis at %s: %s\n", r->url,
          r->c->errstr[0] ? r->c->errstr : "connection lost");
}

static void remote_close(remote_t *r) {
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
static redisReply *remote_cmd(remote_t *r, const char *fmt, ...) {
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
static redisReply *expect(remote_t *r, redisReply *reply, int type,
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
static int remote_url(remote_t *r) {
  char *url = r->redis ? strdup(r->redis) : embedded_url(r->data_dir);
  if (url == NULL) {
    fprintf(stderr, "tally: %s\n", strerror(errno));
    return EXIT_CONFIG;
  }
  char err[1024];
  int rc =
      tally_redis_credentials(url, r->password_file, &r->url, err, sizeof(err));
  free(url);
  if (rc != 0) {
    fprintf(stderr, "tally: %s\n", err);
    return EXIT_CONFIG;
  }
  return 0;
}

/* Works out the URL and key names, connects, and selects the database.
 * Returns 0, or EXIT_CONFIG with the cause (the URL and hiredis's error)
 * printed. Either way r is closed with remote_close. */
static int remote_open(remote_t *r) {
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

/* Parses a whole number from 1 to LONG_MAX; returns it, or 0 if s is not
 * one. */
static long positive(const char *s) {
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && n > 0 ? n : 0;
}

/* submit */

typedef struct submit_s {
  remote_t *r;
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
 * if it is a JSON object. msg holds a message built on the spot. */
static const char *job_problem(const char *line, size_t len, char *msg,
                               size_t msglen) {
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
  cJSON_Delete(v);
  return object ? NULL : "not a JSON object";
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
  char msg[64];
  if (strspn(line, " \t") == len)
    return 0;
  const char *bad = job_problem(line, len, msg, sizeof(msg));
  if (bad != NULL) {
    fprintf(stderr, "%s:%lu: %s\n", sc->name, lineno, bad);
    s->rejected++;
    return 0;
  }
  const char *argv[] = {"XADD", s->r->jobs, "*", "job", line};
  const size_t lens[] = {4, strlen(s->r->jobs), 1, 3, len};
  if (redisAppendCommandArgv(s->r->c, 5, argv, lens) != REDIS_OK) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  return ++s->inflight >= PIPELINE ? submit_drain(s) : 0;
}

static int submit_stream(submit_t *s, FILE *f, const char *name) {
  submit_ctx_t sc = {s, name};
  int status = each_line(f, name, submit_line, &sc);
  return status == TALLY_EIO ? EXIT_CONFIG : status;
}

static int cmd_submit(int argc, char **argv) {
  remote_t r;
  submit_t s = {.r = &r};
  remote_init(&r);
  int i = 0, status = 0;
  for (; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--ids") == 0)
      s.ids = true;
    else if (strcmp(argv[i], "--") == 0) {
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
    fprintf(stderr, "submitted %ld job%s (%ld rejected)\n", s.pushed,
            s.pushed == 1 ? "" : "s", s.rejected);
  }
  status = flush_stdout(status, "the IDs");
  for (int k = 0; files != NULL && k < nfiles; k++)
    if (files[k] != NULL && files[k] != stdin)
      fclose(files[k]);
  free(files);
  free(names);
  remote_close(&r);
  if (status == 0 && s.rejected > 0)
    status = EXIT_JOB_FAILED;
  return status;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* status */

/* The value after name in a flat array of names and values, as XINFO
 * replies are; NULL if there is none. */
static const redisReply *field(const redisReply *a, const char *name) {
  if (a == NULL || a->type != REDIS_REPLY_ARRAY)
    return NULL;
  for (size_t k = 0; k + 1 < a->elements; k += 2)
    if (a->element[k]->type == REDIS_REPLY_STRING &&
        strcmp(a->element[k]->str, name) == 0)
      return a->element[k + 1];
  return NULL;
}

/* The integer of a field, or dflt if it is missing or not an integer. */
static long long int_field(const redisReply *a, const char *name,
                           long long dflt) {
  const redisReply *v = field(a, name);
  return v != NULL && v->type == REDIS_REPLY_INTEGER ? v->integer : dflt;
}

/* The string of a reply, or NULL if it is not a string. */
static const char *str_of(const redisReply *v) {
  return v != NULL && (v->type == REDIS_REPLY_STRING ||
                       v->type == REDIS_REPLY_STATUS)
             ? v->str
             : NULL;
}

/* What tally status shows. Counts are 0 when a key or the group is
 * missing; -1 means Redis did not say (lag and entries read). */
typedef struct status_s {
  long long jobs, dead, results;
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
      expect(r, remote_cmd(r, "XLEN %s", key), REDIS_REPLY_INTEGER, "XLEN");
  if (reply == NULL)
    return EXIT_CONFIG;
  *n = reply->integer;
  freeReplyObject(reply);
  return 0;
}

/* Fills st from Redis. Returns 0 or EXIT_CONFIG (printed). */
static int status_read(remote_t *r, status_t *st) {
  st->lag = st->entries_read = -1;
  if (stream_len(r, r->jobs, &st->jobs) != 0 ||
      stream_len(r, r->dead, &st->dead) != 0 ||
      stream_len(r, r->results, &st->results) != 0)
    return EXIT_CONFIG;
  st->groups = remote_cmd(r, "XINFO GROUPS %s", r->jobs);
  if (st->groups == NULL)
    return EXIT_CONFIG;
  if (st->groups->type == REDIS_REPLY_ERROR &&
      strstr(st->groups->str, "no such key") != NULL) {
    st->lag = st->entries_read = 0;
    return 0;
  }
  if (expect(r, st->groups, REDIS_REPLY_ARRAY, "XINFO GROUPS") == NULL) {
    st->groups = NULL;
    return EXIT_CONFIG;
  }
  const redisReply *g = NULL;
  for (size_t k = 0; k < st->groups->elements && g == NULL; k++) {
    const char *name = str_of(field(st->groups->element[k], "name"));
    if (name != NULL && strcmp(name, GROUP) == 0)
      g = st->groups->element[k];
  }
  if (g == NULL) {
    st->lag = st->entries_read = 0;
    return 0;
  }
  st->group = true;
  st->pending = int_field(g, "pending", 0);
  st->lag = int_field(g, "lag", -1);
  st->entries_read = int_field(g, "entries-read", -1);
  st->last_id = str_of(field(g, "last-delivered-id"));
  st->consumers =
      expect(r, remote_cmd(r, "XINFO CONSUMERS %s %s", r->jobs, GROUP),
             REDIS_REPLY_ARRAY, "XINFO CONSUMERS");
  if (st->consumers == NULL)
    return EXIT_CONFIG;
  st->oldest = expect(r, remote_cmd(r, "XPENDING %s %s - + 1", r->jobs, GROUP),
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
      str_of(e->element[0]) == NULL || str_of(e->element[1]) == NULL)
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
    const char *name = str_of(field(c, "name"));
    char label[256];
    snprintf(label, sizeof(label), "  %s", name ? name : "?");
    status_line(label, "%lld pending, idle %lld ms", int_field(c, "pending", 0),
                int_field(c, "idle", 0));
  }
  status_line("dead letters", "%lld in %s", st->dead, r->dead);
  status_line("results", "%lld in %s", st->results, r->results);
}

/* A JSON member name and its integer value, or null when v < 0. */
static void json_int(tally_buf_t *b, const char *name, long long v) {
  tally_buf_putc(b, ',');
  tally_json_str(b, name);
  tally_buf_putc(b, ':');
  if (v < 0)
    tally_buf_puts(b, "null");
  else
    tally_json_num(b, (double)v);
}

/* A JSON member name and its string value, or null when s is NULL. */
static void json_string(tally_buf_t *b, const char *name, const char *s) {
  tally_buf_putc(b, ',');
  tally_json_str(b, name);
  tally_buf_putc(b, ':');
  if (s == NULL)
    tally_buf_puts(b, "null");
  else
    tally_json_str(b, s);
}

static void status_json(const remote_t *r, const status_t *st, tally_buf_t *b) {
  const char *id, *who;
  long long idle, deliveries;
  tally_buf_puts(b, "{\"redis\":");
  tally_json_str(b, r->url);
  json_string(b, "prefix", r->prefix);
  json_int(b, "jobs", st->jobs);
  json_string(b, "group", st->group ? GROUP : NULL);
  if (!st->group)
    json_string(b, "note", NO_GROUP_NOTE);
  json_string(b, "last_delivered_id", st->last_id);
  json_int(b, "entries_read", st->entries_read);
  json_int(b, "lag", st->lag);
  json_int(b, "pending", st->pending);
  tally_buf_puts(b, ",\"oldest_pending\":");
  if (oldest_of(st, &id, &who, &idle, &deliveries)) {
    tally_buf_puts(b, "{\"id\":");
    tally_json_str(b, id);
    json_string(b, "consumer", who);
    json_int(b, "idle_ms", idle);
    json_int(b, "deliveries", deliveries);
    tally_buf_putc(b, '}');
  } else {
    tally_buf_puts(b, "null");
  }
  tally_buf_puts(b, ",\"consumers\":[");
  size_t n = st->consumers ? st->consumers->elements : 0;
  for (size_t k = 0; k < n; k++) {
    const redisReply *c = st->consumers->element[k];
    tally_buf_puts(b, k ? ",{\"name\":" : "{\"name\":");
    const char *name = str_of(field(c, "name"));
    tally_json_str(b, name ? name : "");
    json_int(b, "pending", int_field(c, "pending", 0));
    json_int(b, "idle_ms", int_field(c, "idle", 0));
    tally_buf_putc(b, '}');
  }
  tally_buf_putc(b, ']');
  json_int(b, "dead", st->dead);
  json_int(b, "results", st->results);
  tally_buf_puts(b, "}\n");
}

static int cmd_status(int argc, char **argv) {
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
  int status = remote_open(&r);
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
  status = flush_stdout(status, "the status");
  return status;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* results */

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* The ID of the last entry of key ("0-0" for none) in id, which holds
 * idlen bytes: what "$" means, pinned down so that no entry added between
 * two reads is missed. Returns 0 or EXIT_CONFIG (printed). */
static int last_id(remote_t *r, const char *key, char *id, size_t idlen) {
  redisReply *reply = expect(r, remote_cmd(r, "XREVRANGE %s + - COUNT 1", key),
                             REDIS_REPLY_ARRAY, "XREVRANGE");
  if (reply == NULL)
    return EXIT_CONFIG;
  const char *last = "0-0";
  if (reply->elements > 0 && reply->element[0]->type == REDIS_REPLY_ARRAY &&
      reply->element[0]->elements > 0 &&
      str_of(reply->element[0]->element[0]) != NULL)
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
  const redisReply *v = field(fields, name);
  if (v == NULL || v->type != REDIS_REPLY_STRING)
    tally_buf_puts(b, "null");
  else if (strcmp(name, "deliveries") == 0 && v->len > 0 && v->len < 16 &&
           strspn(v->str, "0123456789") == v->len)
    tally_buf_put(b, v->str, v->len); /* a count: a number */
  else
    tally_json_str(b, v->str);
}

/* Writes the line for one stream entry into b: the result's JSON, or for
 * a dead letter an object made of its fields. Returns false (after saying
 * so) for an entry without a result. */
static bool entry_line(tally_buf_t *b, const char *id, const redisReply *fields,
                       bool dead) {
  if (dead) {
    json_field(b, "{", "id", fields);
    json_field(b, ",", "error", fields);
    json_field(b, ",", "deliveries", fields);
    json_field(b, ",", "job", fields);
    tally_buf_puts(b, "}\n");
    return true;
  }
  const redisReply *v = field(fields, "result");
  if (v == NULL || v->type != REDIS_REPLY_STRING) {
    fprintf(stderr, "tally: entry %s has no result field\n", id);
    return false;
  }
  tally_buf_put(b, v->str, v->len);
  tally_buf_putc(b, '\n');
  return true;
}

static int cmd_results(int argc, char **argv) {
  remote_t r;
  const char *from = "$";
  long count = 0; /* 0: no limit */
  bool follow = true, dead = false;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
      from = argv[++i];
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc &&
             (count = positive(argv[i + 1])) > 0)
      i++;
    else if (strcmp(argv[i], "--no-follow") == 0)
      follow = false;
    else if (strcmp(argv[i], "--dead") == 0)
      dead = true;
    else
      goto bad_usage;
  }

  int status = remote_open(&r);
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
  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  tally_buf_t b;
  tally_buf_init(&b);
  long printed = 0;
  while (status == 0 && !stop_requested && (count == 0 || printed < count)) {
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
    if ((reply = expect(&r, reply, REDIS_REPLY_ARRAY, "XREAD")) == NULL) {
      status = EXIT_CONFIG;
      break;
    }
    /* [[key, [[id, [field, value, ...]], ...]]] */
    const redisReply *entries =
        reply->elements == 1 && reply->element[0]->elements == 2
            ? reply->element[0]->element[1]
            : NULL;
    for (size_t k = 0; entries != NULL && k < entries->elements; k++) {
      const redisReply *e = entries->element[k];
      if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
          str_of(e->element[0]) == NULL)
        continue;
      snprintf(id, sizeof(id), "%s", e->element[0]->str);
      tally_buf_reset(&b);
      if (!entry_line(&b, id, e->element[1], dead))
        continue;
      if (b.oom) {
        fprintf(stderr, "tally: out of memory\n");
        status = EXIT_CONFIG;
        break;
      }
      fwrite(b.data, 1, b.len, stdout);
      if (fflush(stdout) != 0) {
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
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* rescore, ranking and reload */

/* A number as its shortest text that reads back the same, as in JSON, in
 * buf (32 bytes). */
static const char *num_text(double v, char *buf) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, v);
  snprintf(buf, 32, "%s", b.oom || b.data == NULL ? "?" : b.data);
  tally_buf_close(&b);
  return buf;
}

/* The progress bar on a terminal: state, count of total, rate and ETA,
 * redrawn in place on stderr. */
static void bar_draw(const char *state, size_t count, size_t total,
                     double rate) {
  char line[160], eta[32] = "--:--";
  int width = 30, fill = total ? (int)((double)count * width / total) : 0;
  if (fill > width)
    fill = width;
  if (rate > 0 && count <= total) {
    long s = (long)((double)(total - count) / rate + 0.5);
    snprintf(eta, sizeof(eta), "%ld:%02ld", s / 60, s % 60);
  }
  char bar[64];
  memset(bar, '#', (size_t)fill);
  memset(bar + fill, '.', (size_t)(width - fill));
  bar[width] = '\0';
  snprintf(line, sizeof(line), "%-9s [%s] %zu/%zu  %.0f/s  ETA %s", state, bar,
           count, total, rate, eta);
  fprintf(stderr, "\r%s\033[K", line);
  fflush(stderr);
}

/* What the bar counts in a state: submissions scored while scoring, done
 * after. */
static size_t bar_count(const char *state, size_t scored, size_t done) {
  return strcmp(state, "scoring") == 0 ? scored : done;
}

typedef struct rescore_cli_s {
  bool bar;   /* stderr is a terminal */
  bool drawn; /* a bar is on screen */
  bool json;
  tally_buf_t changes; /* --json --dry-run: the changes array */
  size_t nchanges;
} rescore_cli_t;

static void rescore_on_wait(const char *holder, void *data) {
  (void)data;
  fprintf(stderr,
          "tally: another rescore holds the lock (%s); waiting for it to "
          "finish\n",
          holder);
}

static void rescore_on_progress(const tally_rescore_stats_t *st, void *data) {
  rescore_cli_t *rc = data;
  if (!rc->bar || st->total == 0)
    return;
  size_t count = bar_count(st->state, st->scored, st->done);
  bar_draw(st->state, count, st->total,
           st->seconds > 0 ? (double)count / st->seconds : 0);
  rc->drawn = true;
}

static void score_pair(tally_buf_t *b, bool scored, double score, double pub) {
  if (!scored) {
    tally_buf_puts(b, "null");
    return;
  }
  tally_buf_puts(b, "{\"score\":");
  tally_json_num(b, score);
  tally_buf_puts(b, ",\"public_score\":");
  tally_json_num(b, pub);
  tally_buf_putc(b, '}');
}

static void rescore_on_change(const tally_rescore_change_t *ch, void *data) {
  rescore_cli_t *rc = data;
  char a[32], b[32], c[32], d[32];
  if (rc->json) {
    tally_buf_t *j = &rc->changes;
    tally_buf_puts(j,
                   rc->nchanges++ ? ",{\"submission\":" : "{\"submission\":");
    tally_json_str(j, ch->submission);
    tally_buf_puts(j, ",\"task\":");
    tally_json_str(j, ch->task);
    tally_buf_puts(j, ",\"contest\":");
    tally_json_str(j, ch->contest);
    tally_buf_puts(j, ",\"participant\":");
    tally_json_str(j, ch->participant);
    tally_buf_puts(j, ",\"old\":");
    score_pair(j, ch->old_scored, ch->old_score, ch->old_public_score);
    tally_buf_puts(j, ",\"new\":");
    score_pair(j, ch->new_scored, ch->new_score, ch->new_public_score);
    if (ch->error != NULL) {
      tally_buf_puts(j, ",\"error\":");
      tally_json_str(j, ch->error);
    }
    tally_buf_putc(j, '}');
    return;
  }
  printf("%s: task %s, participant %s: ", ch->submission, ch->task,
         ch->participant);
  if (ch->old_scored)
    printf("%s \u2192 ", num_text(ch->old_score, a));
  else
    printf("not scored \u2192 ");
  if (ch->new_scored)
    printf("%s", num_text(ch->new_score, b));
  else
    printf("not scored (%s)", ch->error ? ch->error : "no score");
  if (ch->old_scored && ch->new_scored)
    printf(" (public %s \u2192 %s)", num_text(ch->old_public_score, c),
           num_text(ch->new_public_score, d));
  putchar('\n');
}

static void rescore_print(const rescore_cli_t *rc,
                          const tally_rescore_stats_t *st, bool dry_run,
                          tally_buf_t *b) {
  size_t n = st->total - st->skipped - st->gone;
  double rate = st->seconds > 0 ? (double)n / st->seconds : 0;
  if (rc->json) {
    tally_buf_puts(b, dry_run ? "{\"dry_run\":true" : "{\"dry_run\":false");
    json_int(b, "selected", (long long)st->total);
    json_int(b, "submissions", (long long)n);
    json_int(b, "changed", (long long)st->changed);
    json_int(b, "failed", (long long)st->failed);
    json_int(b, "skipped", (long long)st->skipped);
    json_int(b, "gone", (long long)st->gone);
    json_int(b, "retried", (long long)st->retried);
    tally_buf_puts(b, ",\"seconds\":");
    tally_json_num(b, st->seconds);
    tally_buf_puts(b, ",\"rate\":");
    tally_json_num(b, rate);
    const char *names[] = {"select_seconds", "score_seconds", "write_seconds"};
    const double secs[] = {st->select_seconds, st->score_seconds,
                           st->write_seconds};
    for (int k = 0; k < 3; k++) {
      tally_buf_puts(b, ",\"");
      tally_buf_puts(b, names[k]);
      tally_buf_puts(b, "\":");
      tally_json_num(b, secs[k]);
    }
    tally_buf_puts(b, ",\"tasks\":[");
    for (size_t k = 0; k < st->ntasks; k++) {
      if (k)
        tally_buf_putc(b, ',');
      tally_json_str(b, st->tasks[k]);
    }
    tally_buf_putc(b, ']');
    if (dry_run) {
      tally_buf_puts(b, ",\"changes\":[");
      tally_buf_put(b, rc->changes.data ? rc->changes.data : "",
                    rc->changes.len);
      tally_buf_putc(b, ']');
    }
    tally_buf_puts(b, "}\n");
    return;
  }
  tally_buf_puts(b, dry_run ? "dry run: would rescore " : "rescored ");
  char num[64];
  snprintf(num, sizeof(num), "%zu submission%s of ", n, n == 1 ? "" : "s");
  tally_buf_puts(b, num);
  tally_buf_puts(b, st->ntasks == 0   ? "no task"
                    : st->ntasks == 1 ? "task "
                                      : "tasks ");
  for (size_t k = 0; k < st->ntasks; k++) {
    if (k)
      tally_buf_puts(b, ", ");
    tally_buf_puts(b, st->tasks[k]);
  }
  char tail[256];
  snprintf(tail, sizeof(tail), ": %zu %s, %zu failed", st->changed,
           dry_run ? "would change" : "changed", st->failed);
  tally_buf_puts(b, tail);
  if (st->skipped > 0 || st->gone > 0) {
    snprintf(tail, sizeof(tail), " (%zu skipped, %zu gone)", st->skipped,
             st->gone);
    tally_buf_puts(b, tail);
  }
  snprintf(tail, sizeof(tail), ", in %.2f s (%.0f/s)\n", st->seconds, rate);
  tally_buf_puts(b, tail);
}

/* Parses a whole number from 0 to max; returns false if s is not one. */
static bool whole(const char *s, long max, long *v) {
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || n < 0 || n > max)
    return false;
  *v = n;
  return true;
}

static int cmd_rescore(int argc, char **argv) {
  remote_t r;
  tally_rescore_opts_t o = {0};
  const char *tasks_dir = NULL, *plugin_dir = NULL;
  bool json = false;
  long threads = 0, wait_s = 0;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    const char **slot = strcmp(a, "--tasks") == 0         ? &tasks_dir
                        : strcmp(a, "--plugins") == 0     ? &plugin_dir
                        : strcmp(a, "--task") == 0        ? &o.task
                        : strcmp(a, "--contest") == 0     ? &o.contest
                        : strcmp(a, "--participant") == 0 ? &o.participant
                        : strcmp(a, "--submission") == 0  ? &o.submission
                                                          : NULL;
    if (slot != NULL && v != NULL && *slot == NULL) {
      *slot = v;
      i++;
    } else if (strcmp(a, "--threads") == 0 && v != NULL &&
               whole(v, 256, &threads) && threads > 0) {
      i++;
    } else if (strcmp(a, "--wait") == 0 && v != NULL &&
               whole(v, 1000000, &wait_s)) {
      i++;
    } else if (strcmp(a, "--changed") == 0) {
      o.changed = true;
    } else if (strcmp(a, "--stale") == 0) {
      o.stale = true;
    } else if (strcmp(a, "--dry-run") == 0) {
      o.dry_run = true;
    } else if (strcmp(a, "--json") == 0) {
      json = true;
    } else {
      goto bad_usage;
    }
  }
  if (tasks_dir == NULL)
    goto bad_usage;

  /* The configs load before anything touches Redis: a broken one writes
   * nothing. */
  cli_t c;
  int status = cli_load(&c, plugin_dir, tasks_dir);
  if (status == 0 && remote_url(&r) != 0)
    status = EXIT_CONFIG;
  if (status != 0) {
    remote_close(&r);
    cli_close(&c);
    return status;
  }

  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  rescore_cli_t rc = {.bar = isatty(STDERR_FILENO) == 1, .json = json};
  tally_buf_init(&rc.changes);
  o.url = r.url;
  o.prefix = r.prefix;
  o.tasks = &c.tasks;
  o.threads = (unsigned)threads;
  o.lock_wait_ms = (uint64_t)wait_s * 1000;
  o.on_wait = rescore_on_wait;
  o.on_progress = rescore_on_progress;
  o.on_change = rescore_on_change;
  o.data = &rc;
  o.cancel = &stop_requested;
  tally_rescore_stats_t st;
  char err[1024];
  int code = tally_rescore_run(&o, &st, err, sizeof(err));
  if (rc.drawn)
    fputc('\n', stderr);
  if (code != 0) {
    fprintf(stderr, "tally: rescore: %s\n", err);
    status = code == TALLY_EINVAL ? EXIT_CONFIG : EXIT_JOB_FAILED;
  } else {
    tally_buf_t b;
    tally_buf_init(&b);
    rescore_print(&rc, &st, o.dry_run, &b);
    if (b.oom || rc.changes.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      fwrite(b.data, 1, b.len, stdout);
    }
    tally_buf_close(&b);
  }
  tally_rescore_stats_close(&st);
  tally_buf_close(&rc.changes);
  remote_close(&r);
  cli_close(&c);
  return flush_stdout(status, "the rescore's report");

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* ranking */

typedef struct rank_row_s {
  const char *participant; /* in the ZRANGE reply */
  size_t len;
  double total;
  long rank;
  redisReply *scores; /* HGETALL of its task scores */
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

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The score on task of a row, from its task score JSON: false when it
 * has none. */
static bool row_task_score(const rank_row_t *row, const char *task, bool public,
                           double *score, bool *partial) {
  const redisReply *v = field(row->scores, task);
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

static void ranking_json(const char *contest, bool public, char **tasks,
                         size_t ntasks, const rank_row_t *rows, size_t n,
                         tally_buf_t *b) {
  char num[32];
  tally_buf_puts(b, "{\"contest\":");
  tally_json_str(b, contest);
  tally_buf_puts(b, public ? ",\"public\":true" : ",\"public\":false");
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
      if (!row_task_score(&rows[k], tasks[t], public, &score, &partial))
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
static const char *task_cell(const rank_row_t *row, const char *task,
                             bool public, char *buf) {
  double score;
  bool partial;
  char num[32];
  if (!row_task_score(row, task, public, &score, &partial))
    return "-";
  snprintf(buf, 48, "%s%s", num_text(score, num), partial ? "*" : "");
  return buf;
}

static void ranking_text(bool public, char **tasks, size_t ntasks,
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
    int l = (int)strlen(num_text(rows[k].total, num));
    wtotal = l > wtotal ? l : wtotal;
    for (size_t t = 0; t < ntasks; t++) {
      l = (int)strlen(task_cell(&rows[k], tasks[t], public, buf));
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
           wtotal, num_text(rows[k].total, num));
    for (size_t t = 0; t < ntasks; t++)
      printf("  %*s", wtask[t], task_cell(&rows[k], tasks[t], public, buf));
    putchar('\n');
  }
  if (n > 0 && ntasks > 0)
    printf("(* partial: a submission is not scored)\n");
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

static int ranking_read(remote_t *r, const char *contest, bool public,
                        ranking_t *rk) {
  char key[1024], enc[768];
  if (tally_rescore_key(enc, sizeof(enc), "", "", contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  snprintf(key, sizeof(key), "%s:ranking:%s%s", r->prefix, enc,
           public ? ":public" : "");
  rk->zset = expect(r, remote_cmd(r, "ZRANGE %s 0 -1 WITHSCORES", key),
                    REDIS_REPLY_ARRAY, "ZRANGE");
  if (rk->zset == NULL)
    return EXIT_JOB_FAILED;
  snprintf(key, sizeof(key), "%s:contest:%s:tasks", r->prefix, enc);
  rk->tasks_reply = expect(r, remote_cmd(r, "SMEMBERS %s", key),
                           REDIS_REPLY_ARRAY, "SMEMBERS");
  if (rk->tasks_reply == NULL)
    return EXIT_JOB_FAILED;
  if (rk->zset->elements == 0 && rk->tasks_reply->elements == 0) {
    redisReply *m =
        remote_cmd(r, "SISMEMBER %s:contests %s", r->prefix, contest);
    bool known = m != NULL && m->type == REDIS_REPLY_INTEGER && m->integer;
    if (m != NULL)
      freeReplyObject(m);
    if (!known) {
      fprintf(stderr, "tally: no contest \"%s\" in %s:contests at %s\n",
              contest, r->prefix, r->url);
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
  qsort(rk->tasks, rk->ntasks, sizeof(char *), cmp_str);
  for (size_t k = 0; k < rk->n; k++) {
    rank_row_t *row = &rk->rows[k];
    row->participant = rk->zset->element[2 * k]->str;
    row->len = rk->zset->element[2 * k]->len;
    row->total = strtod(rk->zset->element[2 * k + 1]->str, NULL);
  }
  qsort(rk->rows, rk->n, sizeof(*rk->rows), cmp_rank_row);
  for (size_t k = 0; k < rk->n; k++)
    rk->rows[k].rank = k > 0 && rk->rows[k].total == rk->rows[k - 1].total
                           ? rk->rows[k - 1].rank
                           : (long)k + 1;
  for (size_t k = 0; k < rk->n; k++) {
    char part[768];
    if (tally_rescore_key(part, sizeof(part), "", "",
                          rk->rows[k].participant) != 0)
      part[0] = '\0';
    if (redisAppendCommand(r->c, "HGETALL %s:taskscores:%s:%s", r->prefix, enc,
                           part) != REDIS_OK) {
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
    rk->rows[k].scores = expect(r, p, REDIS_REPLY_ARRAY, "HGETALL");
    if (rk->rows[k].scores == NULL)
      return EXIT_JOB_FAILED;
  }
  return 0;
}

static void ranking_free(ranking_t *rk) {
  for (size_t k = 0; rk->rows != NULL && k < rk->n; k++)
    if (rk->rows[k].scores != NULL)
      freeReplyObject(rk->rows[k].scores);
  free(rk->rows);
  free(rk->tasks);
  if (rk->zset != NULL)
    freeReplyObject(rk->zset);
  if (rk->tasks_reply != NULL)
    freeReplyObject(rk->tasks_reply);
}

static int cmd_ranking(int argc, char **argv) {
  remote_t r;
  const char *contest = NULL;
  bool public = false, json = false;
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
    else if (strcmp(argv[i], "--json") == 0) json = true;
    else goto bad_usage;
  }
  if (contest == NULL)
    goto bad_usage;
  ranking_t rk = {0};
  int status = remote_open(&r) != 0 ? EXIT_JOB_FAILED : 0;
  if (status == 0)
    status = ranking_read(&r, contest, public, &rk);
  if (status == 0 && json) {
    tally_buf_t b;
    tally_buf_init(&b);
    ranking_json(contest, public, rk.tasks, rk.ntasks, rk.rows, rk.n, &b);
    if (b.oom) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      fwrite(b.data, 1, b.len, stdout);
    }
    tally_buf_close(&b);
  } else if (status == 0) {
    ranking_text(public, rk.tasks, rk.ntasks, rk.rows, rk.n);
  }
  ranking_free(&rk);
  remote_close(&r);
  status = flush_stdout(status, "the ranking");
  return status;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* reload */

/* The progress of the last rescore, from <p>:rescore. */
typedef struct rescore_state_s {
  char state[32];
  char error[512];
  long long started, total, scored, done, changed, failed;
  double rate;
} rescore_state_t;

/* Reads <p>:rescore into s (zeros when it does not exist). Returns 0 or
 * EXIT_JOB_FAILED (printed). */
static int rescore_state_read(remote_t *r, rescore_state_t *s) {
  redisReply *reply = expect(
      r,
      remote_cmd(r,
                 "HMGET %s:rescore state started total scored done changed "
                 "failed rate error",
                 r->prefix),
      REDIS_REPLY_ARRAY, "HMGET");
  if (reply == NULL)
    return EXIT_JOB_FAILED;
  memset(s, 0, sizeof(*s));
  long long *nums[] = {&s->started, &s->total,   &s->scored,
                       &s->done,    &s->changed, &s->failed};
  for (size_t k = 0; k < reply->elements && k < 9; k++) {
    const char *v = str_of(reply->element[k]);
    if (v == NULL)
      continue;
    if (k == 0)
      snprintf(s->state, sizeof(s->state), "%s", v);
    else if (k <= 6)
      *nums[k - 1] = strtoll(v, NULL, 10);
    else if (k == 7)
      s->rate = strtod(v, NULL);
    else
      snprintf(s->error, sizeof(s->error), "%s", v);
  }
  freeReplyObject(reply);
  return 0;
}

/* Reads a pid from path. Returns it, or 0 after saying why. */
static long read_pidfile(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "tally: %s: %s\n", path, strerror(errno));
    return 0;
  }
  char line[64] = "";
  long pid = 0;
  if (fgets(line, sizeof(line), f) != NULL)
    line[strcspn(line, " \t\r\n")] = '\0';
  fclose(f);
  if (!whole(line, INT_MAX, &pid) || pid <= 1) {
    fprintf(stderr, "tally: %s: not a process id\n", path);
    return 0;
  }
  return pid;
}

static int cmd_reload(int argc, char **argv) {
  remote_t r;
  const char *pidfile = NULL;
  long pid = 0, wait_s = 60;
  bool follow = false;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0) {
      follow = true;
      continue;
    }
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--pid") == 0 && v && whole(v, INT_MAX, &pid) &&
        pid > 1)
      i++;
    else if (strcmp(argv[i], "--pidfile") == 0 && v && !pidfile)
      pidfile = argv[++i];
    else if (strcmp(argv[i], "--wait") == 0 && v && whole(v, 1000000, &wait_s))
      i++;
    else
      goto bad_usage;
  }
  if ((pid == 0) == (pidfile == NULL))
    goto bad_usage;
  if (pidfile != NULL && (pid = read_pidfile(pidfile)) == 0)
    return EXIT_JOB_FAILED;

  rescore_state_t before = {0}, now;
  int status = 0;
  if (follow && (remote_open(&r) != 0 || rescore_state_read(&r, &before)))
    status = EXIT_JOB_FAILED;
  if (status == 0 && kill((pid_t)pid, SIGHUP) != 0) {
    fprintf(stderr, "tally: cannot signal tallyd (pid %ld): %s\n", pid,
            strerror(errno));
    status = EXIT_JOB_FAILED;
  }
  if (status != 0 || !follow) {
    if (status == 0)
      printf("sent SIGHUP to tallyd (pid %ld)\n", pid);
    remote_close(&r);
    return status;
  }

  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  bool bar = isatty(STDERR_FILENO) == 1, drawn = false;
  struct timeval t0, t;
  gettimeofday(&t0, NULL);
  status = -1;
  while (status < 0) {
    if (rescore_state_read(&r, &now) != 0) {
      status = EXIT_JOB_FAILED;
      break;
    }
    bool ours = now.started > before.started;
    if (ours && bar && now.total > 0) {
      size_t count = bar_count(now.state, (size_t)now.scored, (size_t)now.done);
      bar_draw(now.state, count, (size_t)now.total, now.rate);
      drawn = true;
    }
    if (ours && strcmp(now.state, "done") == 0) {
      if (drawn)
        fputc('\n', stderr);
      drawn = false;
      printf("reloaded tallyd (pid %ld); its rescore went over %lld "
             "submission%s: %lld changed, %lld failed\n",
             pid, now.total, now.total == 1 ? "" : "s", now.changed,
             now.failed);
      status = 0;
      break;
    }
    if (ours && strcmp(now.state, "failed") == 0) {
      if (drawn)
        fputc('\n', stderr);
      drawn = false;
      fprintf(stderr, "tally: the rescore after the reload failed: %s\n",
              now.error[0] ? now.error : "no reason given");
      status = EXIT_JOB_FAILED;
      break;
    }
    gettimeofday(&t, NULL);
    double waited =
        (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_usec - t0.tv_usec) / 1e6;
    if (stop_requested || waited >= (double)wait_s) {
      if (drawn)
        fputc('\n', stderr);
      drawn = false;
      fprintf(stderr,
              "tally: sent SIGHUP to tallyd (pid %ld), but %s within %ld s "
              "(tallyd rescores after a reload only when it accepts the "
              "configs: see its log)\n",
              pid, ours ? "its rescore did not finish" : "no rescore started",
              wait_s);
      status = EXIT_JOB_FAILED;
      break;
    }
    usleep(200 * 1000);
  }
  remote_close(&r);
  status = flush_stdout(status, NULL);
  return status;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "score") == 0)
    return cmd_score(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "check") == 0)
    return cmd_check(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "submit") == 0)
    return cmd_submit(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "status") == 0)
    return cmd_status(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "results") == 0)
    return cmd_results(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "rescore") == 0)
    return cmd_rescore(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "ranking") == 0)
    return cmd_ranking(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "reload") == 0)
    return cmd_reload(argc - 2, argv + 2);
  if (argc == 2 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(usage, stdout);
    return 0;
  }
  fputs(usage, stderr);
  return EXIT_CONFIG;
}
