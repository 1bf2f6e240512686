/* tally contest: what an operator does to a running contest (its freeze). */
#include "cli/cli.h"
#include "redis/keys.h"

#include <stdlib.h>
#include <string.h>

/* tally contest unfreeze|freeze C: lifts a contest's freeze (the public
 * board shows everything again), or puts it back. */
/* Whether contest is one Redis knows: it has submissions (<p>:contests)
 * or a tallyd has its config (<p>:configured). Otherwise says so, naming
 * the known ones. */
static bool contest_known(remote_t *r, const char *contest) {
  redisReply *m =
      remote_cmd(r, "SUNION %s:contests %s:configured", r->prefix, r->prefix);
  if (m == NULL || m->type != REDIS_REPLY_ARRAY) {
    if (m != NULL)
      freeReplyObject(m);
    fprintf(stderr, "tally: cannot read the contests at %s\n", r->url);
    return false;
  }
  for (size_t i = 0; i < m->elements; i++)
    if (m->element[i]->type == REDIS_REPLY_STRING &&
        strcmp(m->element[i]->str, contest) == 0) {
      freeReplyObject(m);
      return true;
    }
  char **names = calloc(m->elements + 1, sizeof(char *));
  size_t n = 0;
  for (size_t i = 0; names != NULL && i < m->elements; i++)
    if (m->element[i]->type == REDIS_REPLY_STRING)
      names[n++] = m->element[i]->str;
  if (names != NULL)
    qsort(names, n, sizeof(char *), cli_cmp_str);
  fprintf(stderr, "tally: no contest \"%s\" at %s; the contests are: ", contest,
          r->url);
  for (size_t i = 0; i < n && i < 20; i++)
    fprintf(stderr, "%s\"%s\"", i > 0 ? ", " : "", names[i]);
  if (n > 20)
    fprintf(stderr, " and %zu more", n - 20);
  fprintf(stderr, n == 0 ? "none yet\n" : "\n");
  free(names);
  freeReplyObject(m);
  return false;
}

int cmd_contest(int argc, char **argv) {
  remote_t r;
  const char *what = NULL, *contest = NULL;
  remote_init(&r);
  for (int i = 0; i < argc; i++) {
    int took = remote_flag(&r, argc, argv, &i);
    if (took < 0)
      goto bad_usage;
    if (took > 0)
      continue;
    if (what == NULL)
      what = argv[i];
    else if (contest == NULL)
      contest = argv[i];
    else
      goto bad_usage;
  }
  if (what == NULL || contest == NULL ||
      (strcmp(what, "unfreeze") != 0 && strcmp(what, "freeze") != 0))
    goto bad_usage;
  char base[768];
  if (tally_contest_key(base, sizeof(base), r.prefix, contest) != 0) {
    fprintf(stderr, "tally: too long a contest id\n");
    return EXIT_CONFIG;
  }
  if (remote_open(&r) != 0)
    return EXIT_JOB_FAILED;
  if (!contest_known(&r, contest)) {
    remote_close(&r);
    return EXIT_JOB_FAILED;
  }
  bool unfreeze = strcmp(what, "unfreeze") == 0;
  redisReply *x =
      cli_expect(&r,
                 unfreeze ? remote_cmd(&r, "SET %s:unfrozen 1", base)
                          : remote_cmd(&r, "DEL %s:unfrozen", base),
                 unfreeze ? REDIS_REPLY_STATUS : REDIS_REPLY_INTEGER,
                 unfreeze ? "SET" : "DEL");
  int status = EXIT_JOB_FAILED;
  if (x != NULL) {
    printf("%s: the public board %s\n", contest,
           unfreeze ? "is unfrozen: it shows every submission"
                    : "follows its freeze again");
    freeReplyObject(x);
    status = 0;
  }
  remote_close(&r);
  return cli_flush_stdout(status, "the answer");

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
