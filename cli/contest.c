/* tally rescore, reload and token: a contest state's upkeep. */
#include "cli/cli.h"
#include "cli/rescore.h"
#include "contest/scoremode.h"
#include "redis/scripts.h"
#include "redis/tokens.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* rescore */

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
    printf("%s \u2192 ", cli_num_text(ch->old_score, a));
  else
    printf("not scored \u2192 ");
  if (ch->new_scored)
    printf("%s", cli_num_text(ch->new_score, b));
  else
    printf("not scored (%s)", ch->error ? ch->error : "no score");
  if (ch->old_scored && ch->new_scored)
    printf(" (public %s \u2192 %s)", cli_num_text(ch->old_public_score, c),
           cli_num_text(ch->new_public_score, d));
  putchar('\n');
}

static void rescore_print(const rescore_cli_t *rc,
                          const tally_rescore_stats_t *st, bool dry_run,
                          tally_buf_t *b) {
  size_t n = st->total - st->skipped - st->gone;
  double rate = st->seconds > 0 ? (double)n / st->seconds : 0;
  if (rc->json) {
    tally_buf_puts(b, dry_run ? "{\"dry_run\":true" : "{\"dry_run\":false");
    cli_json_int(b, "selected", (long long)st->total);
    cli_json_int(b, "submissions", (long long)n);
    cli_json_int(b, "changed", (long long)st->changed);
    cli_json_int(b, "failed", (long long)st->failed);
    cli_json_int(b, "skipped", (long long)st->skipped);
    cli_json_int(b, "gone", (long long)st->gone);
    cli_json_int(b, "retried", (long long)st->retried);
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

int cmd_rescore(int argc, char **argv) {
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
  /* Every queue's submissions (--queue: one queue's): the default queue
   * and each queue tallyd published for a contest. */
  tally_queues_t queues = {0};
  if (status == 0)
    status = remote_queues(&r, &queues);
  if (status != 0) {
    remote_close(&r);
    cli_close(&c);
    return status;
  }

  cli_catch_stop_signals();

  rescore_cli_t rc = {.bar = isatty(STDERR_FILENO) == 1, .json = json};
  tally_buf_init(&rc.changes);
  o.url = r.url;
  o.tasks = &c.tasks;
  o.threads = (unsigned)threads;
  o.lock_wait_ms = (uint64_t)wait_s * 1000;
  o.on_wait = rescore_on_wait;
  o.on_progress = rescore_on_progress;
  o.on_change = rescore_on_change;
  o.data = &rc;
  o.cancel = &cli_stop_requested;
  for (size_t qi = 0; qi < queues.n && status == 0; qi++) {
    char qprefix[200];
    tally_queue_prefix(qprefix, sizeof(qprefix), r.prefix, queues.names[qi]);
    o.prefix = qprefix;
    if (queues.n > 1)
      fprintf(stderr, "queue %s:\n", queues.names[qi]);
    tally_buf_reset(&rc.changes);
    tally_rescore_stats_t st;
    char err[1024];
    int code = tally_rescore_run(&o, &st, err, sizeof(err));
    /* Through sentinels or on a cluster, a lost connection is most likely
     * a failover: the run starts again (rescoring is safe to repeat) on the
     * master they name, for two minutes at most. */
    bool failover = strncmp(r.url, "sentinel://", 11) == 0 || r.cluster;
    for (int again = 0;
         code == TALLY_EIO && failover && again < 60 && !cli_stop_requested &&
         strstr(err, "another rescore holds") == NULL &&
         strstr(err, "interrupted") == NULL;
         again++) {
      if (rc.drawn)
        fputc('\n', stderr);
      rc.drawn = false;
      fprintf(stderr,
              "tally: rescore: %s; %s may be moving the master: "
              "starting again in 2 s\n",
              err, r.cluster ? "the cluster" : "the sentinels");
      sleep(2);
      tally_rescore_stats_close(&st);
      tally_buf_reset(&rc.changes);
      code = tally_rescore_run(&o, &st, err, sizeof(err));
    }
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
  }
  tally_queues_free(&queues);
  tally_buf_close(&rc.changes);
  remote_close(&r);
  cli_close(&c);
  return cli_flush_stdout(status, "the rescore's report");

bad_usage:
  cli_usage(stderr);
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
  redisReply *reply = cli_expect(
      r,
      remote_cmd(r,
                 "HMGET %s:rescore state started total scored done changed "
                 "failed rate error",
                 r->qprefix),
      REDIS_REPLY_ARRAY, "HMGET");
  if (reply == NULL)
    return EXIT_JOB_FAILED;
  memset(s, 0, sizeof(*s));
  long long *nums[] = {&s->started, &s->total,   &s->scored,
                       &s->done,    &s->changed, &s->failed};
  for (size_t k = 0; k < reply->elements && k < 9; k++) {
    const char *v = cli_str_of(reply->element[k]);
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

int cmd_reload(int argc, char **argv) {
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
  /* What tallyd says of this reload comes to <p>:reload:<pid>: whatever
   * an earlier one said goes first. */
  char said_key[200];
  snprintf(said_key, sizeof(said_key), "%s:reload:%ld", r.prefix, pid);
  if (status == 0 && follow) {
    redisReply *x = remote_cmd(&r, "DEL %s", said_key);
    if (x != NULL)
      freeReplyObject(x);
  }
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

  cli_catch_stop_signals();
  bool bar = isatty(STDERR_FILENO) == 1, drawn = false;
  struct timeval t0, t;
  gettimeofday(&t0, NULL);
  status = -1;
  while (status < 0) {
    /* A config tallyd refused: said at once, with its first error. */
    redisReply *said = remote_cmd(&r, "HMGET %s result error", said_key);
    if (said != NULL && said->type == REDIS_REPLY_ARRAY &&
        said->elements == 2 && said->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(said->element[0]->str, "refused") == 0) {
      fprintf(stderr,
              "tally: tallyd (pid %ld) refused the new config and keeps the "
              "old one: %s\n",
              pid,
              said->element[1]->type == REDIS_REPLY_STRING
                  ? said->element[1]->str
                  : "see its log");
      freeReplyObject(said);
      status = EXIT_CONFIG;
      break;
    }
    if (said != NULL)
      freeReplyObject(said);
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
    if (cli_stop_requested || waited >= (double)wait_s) {
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
    usleep(100 * 1000);
  }
  remote_close(&r);
  status = cli_flush_stdout(status, NULL);
  return status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}

/* tally token: a participant's token for the results API. */
int cmd_token(int argc, char **argv) {
  remote_t r;
  const char *who = NULL;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--participant") == 0 && i + 1 < argc && !who)
      who = argv[++i];
    else
      goto bad_usage;
  }
  if (who == NULL || who[0] == '\0')
    goto bad_usage;
  if (remote_open(&r) != 0)
    return EXIT_JOB_FAILED;
  char fresh[TALLY_SECRET_HEX + 1], key[160];
  if (tally_secret_new(fresh) != 0) {
    fprintf(stderr, "tally: no randomness for a new secret (getrandom)\n");
    remote_close(&r);
    return EXIT_JOB_FAILED;
  }
  snprintf(key, sizeof(key), "%s:secret", r.prefix);
  /* The secret tallyd uses, made here if no one has made it yet. */
  redisReply *s = cli_expect(
      &r, remote_cmd(&r, "EVAL %s 1 %s %s", tally_lua_secret, key, fresh),
      REDIS_REPLY_STRING, "EVAL (the token secret)");
  int status = EXIT_JOB_FAILED;
  if (s != NULL) {
    char token[TALLY_TOKEN_HEX + 1];
    tally_participant_token(s->str, who, token);
    printf("%s\n", token);
    status = 0;
    freeReplyObject(s);
  }
  remote_close(&r);
  return cli_flush_stdout(status, "the token");

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
