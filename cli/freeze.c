/* tally contest: what an operator does to a running contest's public
 * board (its freeze), and what the CLI reads of a freeze (the configured
 * times tallyd publishes, the operator's word) for tally ranking --public. */
#include "cli/cli.h"
#include "engine/contests.h"
#include "redis/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whether contest is one Redis knows: it has submissions (<p>:contests)
 * or a tallyd has its config (<p>:configured). Otherwise says so, naming
 * the known ones. */
static bool contest_known(remote_t *r, const char *contest) {
  /* Two reads, not one SUNION: on a cluster the queue's set and the
   * global one live in different slots. */
  redisReply *m[2] = {remote_cmd(r, "SMEMBERS %s:contests", r->qprefix), NULL};
  if (m[0] != NULL && m[0]->type == REDIS_REPLY_ARRAY)
    m[1] = remote_cmd(r, "SMEMBERS %s:configured", r->prefix);
  bool read = m[1] != NULL && m[1]->type == REDIS_REPLY_ARRAY;
  bool known = false;
  size_t total = 0;
  for (int s = 0; read && s < 2; s++) {
    total += m[s]->elements;
    for (size_t i = 0; i < m[s]->elements; i++)
      known = known || (m[s]->element[i]->type == REDIS_REPLY_STRING &&
                        strcmp(m[s]->element[i]->str, contest) == 0);
  }
  char **names = read && !known ? calloc(total + 1, sizeof(char *)) : NULL;
  size_t n = 0;
  for (int s = 0; names != NULL && s < 2; s++)
    for (size_t i = 0; i < m[s]->elements; i++)
      if (m[s]->element[i]->type == REDIS_REPLY_STRING)
        names[n++] = m[s]->element[i]->str;
  if (names != NULL) {
    /* Sorted, a contest in both sets once. */
    qsort(names, n, sizeof(char *), cli_cmp_str);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
      if (kept == 0 || strcmp(names[kept - 1], names[i]) != 0)
        names[kept++] = names[i];
    n = kept;
  }
  if (!read) {
    fprintf(stderr, "tally: cannot read the contests at %s\n", r->url);
  } else if (!known) {
    fprintf(stderr,
            "tally: no contest \"%s\" at %s; the contests are: ", contest,
            r->url);
    for (size_t i = 0; i < n && i < 20; i++)
      fprintf(stderr, "%s\"%s\"", i > 0 ? ", " : "", names[i]);
    if (n > 20)
      fprintf(stderr, " and %zu more", n - 20);
    fprintf(stderr, n == 0 ? "none yet\n" : "\n");
  }
  free(names);
  for (int s = 0; s < 2; s++)
    if (m[s] != NULL)
      freeReplyObject(m[s]);
  return known;
}

/* The time now, in seconds since the epoch. */
static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *cli_time_text(double t, char *buf, size_t len) {
  tally_rfc3339_text(t, buf, len);
  return buf;
}

/* One time of a <p>:contest-times value: a number, or null (NAN). */
static bool time_field(const cJSON *o, const char *name, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  if (v == NULL || cJSON_IsNull(v)) {
    *out = NAN;
    return true;
  }
  if (!cJSON_IsNumber(v))
    return false;
  *out = v->valuedouble;
  return true;
}

/* HGET key field where the field may be missing: the reply (a string or
 * nil), or NULL (printed). */
static redisReply *hget(remote_t *r, const char *key, const char *field) {
  redisReply *x = remote_cmd(r, "HGET %s:%s %s", r->prefix, key, field);
  if (x == NULL || x->type == REDIS_REPLY_NIL || x->type == REDIS_REPLY_STRING)
    return x;
  fprintf(stderr, "tally: Redis at %s: HGET %s:%s: %s\n", r->url, r->prefix,
          key, x->type == REDIS_REPLY_ERROR ? x->str : "unexpected reply");
  freeReplyObject(x);
  return NULL;
}

int cli_freeze_read(remote_t *r, const char *contest, cli_freeze_t *f) {
  memset(f, 0, sizeof(*f));
  f->start = f->end = f->freeze = f->unfreeze_after = NAN;
  f->word.kind = TALLY_FREEZE_CONFIGURED;
  f->word.at = NAN;
  redisReply *t = hget(r, "contest-times", contest);
  if (t == NULL)
    return EXIT_JOB_FAILED;
  if (t->type == REDIS_REPLY_STRING) {
    cJSON *o = cJSON_ParseWithLength(t->str, t->len);
    bool ok = cJSON_IsObject(o) && time_field(o, "start", &f->start) &&
              time_field(o, "end", &f->end) &&
              time_field(o, "freeze", &f->freeze) &&
              time_field(o, "unfreeze_after", &f->unfreeze_after);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "scoring");
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(o, "penalty_time");
    f->pass_fail = cJSON_IsString(sc) &&
                   strcmp(sc->valuestring, "pass-fail") == 0 &&
                   cJSON_IsNumber(pt) && !isnan(f->start);
    f->penalty_time = cJSON_IsNumber(pt) ? (int)pt->valuedouble : 0;
    f->compile_penalty =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "compile_penalty"));
    cJSON_Delete(o);
    if (!ok) {
      fprintf(stderr,
              "tally: %s:contest-times: contest \"%s\": not the times tallyd "
              "writes\n",
              r->prefix, contest);
      freeReplyObject(t);
      return EXIT_JOB_FAILED;
    }
    f->configured = true;
  }
  freeReplyObject(t);
  redisReply *w = hget(r, "freezes", contest);
  if (w == NULL)
    return EXIT_JOB_FAILED;
  if (w->type == REDIS_REPLY_STRING &&
      tally_freeze_word_parse(w->str, w->len, &f->word) != 0)
    fprintf(stderr,
            "tally: %s:freezes: contest \"%s\": \"%.60s\" is not a freeze "
            "(\"lifted\" or \"at\" and a time): the config's freeze holds\n",
            r->prefix, contest, w->str);
  freeReplyObject(w);
  return 0;
}

double cli_freeze_since(const cli_freeze_t *f, double now) {
  return tally_freeze_in_force(f->freeze, f->end, f->unfreeze_after, &f->word,
                               now);
}

/* Says where contest's public board stands now, after "C: ". */
static void print_state(const char *contest, const cli_freeze_t *f,
                        double now) {
  char a[48], b[48];
  double since = cli_freeze_since(f, now);
  printf("%s: ", contest);
  if (!isnan(since)) {
    printf("the public board is frozen since %s: it shows only the "
           "submissions made before then",
           cli_time_text(since, a, sizeof(a)));
  } else if (f->word.kind == TALLY_FREEZE_AT) {
    printf("the public board freezes at %s",
           cli_time_text(f->word.at, a, sizeof(a)));
  } else if (f->word.kind == TALLY_FREEZE_LIFTED) {
    printf("the public board is unfrozen: it shows every submission");
  } else if (!isnan(f->freeze) && now < f->freeze) {
    printf("the public board is not frozen; its configured freeze is at %s",
           cli_time_text(f->freeze, a, sizeof(a)));
  } else if (!isnan(f->freeze)) {
    printf("the public board is not frozen: its configured freeze (%s) "
           "lifted at %s",
           cli_time_text(f->freeze, a, sizeof(a)),
           cli_time_text(f->end + f->unfreeze_after, b, sizeof(b)));
  } else {
    printf("the public board is not frozen (no freeze configured)");
  }
  putchar('\n');
}

/* Sets contest's word in <p>:freezes (kind CONFIGURED: removes it).
 * Returns 0 or EXIT_JOB_FAILED (printed). */
static int set_word(remote_t *r, const char *contest,
                    const tally_freeze_word_t *w) {
  char text[TALLY_FREEZE_WORD_MAX];
  tally_freeze_word_text(w, text);
  redisReply *x =
      w->kind == TALLY_FREEZE_CONFIGURED
          ? cli_expect(r,
                       remote_cmd(r, "HDEL %s:freezes %s", r->prefix, contest),
                       REDIS_REPLY_INTEGER, "HDEL")
          : cli_expect(r,
                       remote_cmd(r, "HSET %s:freezes %s %s", r->prefix,
                                  contest, text),
                       REDIS_REPLY_INTEGER, "HSET");
  if (x == NULL)
    return EXIT_JOB_FAILED;
  freeReplyObject(x);
  return 0;
}

/* tally contest freeze [--at TIME | --configured] C, tally contest
 * unfreeze C and tally contest show C: the operator's word on a
 * contest's public board (docs/scoreboard.md#the-freeze). freeze alone
 * freezes the board now, or restores its configured freeze when that
 * would hold now; --at TIME freezes it from TIME (now, or an RFC 3339
 * time); --configured withdraws the operator's word; unfreeze lifts any
 * freeze; show says where the board stands. */
int cmd_contest(int argc, char **argv) {
  remote_t r;
  const char *what = NULL, *contest = NULL, *at_text = NULL;
  bool configured = false;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (strcmp(argv[i], "--at") == 0 && i + 1 < argc && at_text == NULL)
      at_text = argv[++i];
    else if (strcmp(argv[i], "--configured") == 0)
      configured = true;
    else if (what == NULL)
      what = argv[i];
    else if (contest == NULL)
      contest = argv[i];
    else
      goto bad_usage;
  }
  if (what == NULL || contest == NULL)
    goto bad_usage;
  bool freeze = strcmp(what, "freeze") == 0;
  if (!freeze && strcmp(what, "unfreeze") != 0 && strcmp(what, "show") != 0)
    goto bad_usage;
  if ((at_text != NULL || configured) && !freeze) {
    fprintf(stderr,
            "tally: contest %s: --at and --configured are options "
            "of tally contest freeze\n",
            what);
    return EXIT_CONFIG;
  }
  if (at_text != NULL && configured) {
    fprintf(stderr, "tally: contest freeze: --at TIME freezes at a time, "
                    "--configured restores the configured freeze: not "
                    "both\n");
    return EXIT_CONFIG;
  }
  tally_freeze_word_t word = {TALLY_FREEZE_CONFIGURED, NAN};
  if (at_text != NULL && strcmp(at_text, "now") == 0) {
    word.kind = TALLY_FREEZE_AT;
    word.at = floor(now_seconds() * 1000) / 1000;
  } else if (at_text != NULL) {
    word.kind = TALLY_FREEZE_AT;
    if (tally_rfc3339(at_text, &word.at) != 0 || word.at < 0) {
      fprintf(stderr,
              "tally: --at %s: must be now or an RFC 3339 time, such as "
              "2026-11-27T09:00:00Z\n",
              at_text);
      return EXIT_CONFIG;
    }
  }
  char base[768];
  if (tally_contest_key(base, sizeof(base), r.prefix, contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  if (remote_open(&r) != 0 || remote_use_contest(&r, contest) != 0) {
    remote_close(&r);
    return EXIT_JOB_FAILED;
  }
  cli_freeze_t f;
  int status = EXIT_JOB_FAILED;
  if (!contest_known(&r, contest) || cli_freeze_read(&r, contest, &f) != 0)
    goto out;
  double now = now_seconds();
  status = 0;
  if (strcmp(what, "unfreeze") == 0) {
    word.kind = TALLY_FREEZE_LIFTED;
  } else if (freeze && !configured && at_text == NULL) {
    /* Unless the board is frozen already (a later freeze would show what
     * the one in force hides): the configured freeze again when it would
     * hold now, else a freeze from now. */
    double since = cli_freeze_since(&f, now);
    if (!isnan(since)) {
      char a[48];
      printf("%s: the public board is already frozen since %s; nothing "
             "changed (--at TIME moves the freeze)\n",
             contest, cli_time_text(since, a, sizeof(a)));
      goto out;
    }
    if (isnan(tally_freeze_in_force(f.freeze, f.end, f.unfreeze_after, NULL,
                                    now))) {
      word.kind = TALLY_FREEZE_AT;
      word.at = floor(now * 1000) / 1000;
    }
  }
  if (strcmp(what, "show") != 0) {
    if ((status = set_word(&r, contest, &word)) != 0)
      goto out;
    f.word = word;
  }
  print_state(contest, &f, now);
  if (!f.configured)
    fprintf(stderr,
            "tally: note: no tallyd has published contest \"%s\"'s config "
            "yet: its board follows this once one has it\n",
            contest);
out:
  remote_close(&r);
  return cli_flush_stdout(status, "the answer");

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
