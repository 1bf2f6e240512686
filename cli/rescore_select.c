/* Which submissions a rescore takes: the indexes named by the options,
 * the tasks whose config changed (--changed), or the stale ones
 * (--stale); and the pending marks (cli/rescore_int.h). */
#include "cli/rescore_int.h"
#include "config/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Selection. */

typedef struct ids_s {
  char **v;
  size_t n, cap;
} ids_t;

static int ids_push(ids_t *ids, const char *s, size_t len) {
  if (ids->n == ids->cap) {
    size_t cap = ids->cap ? ids->cap * 2 : 1024;
    char **v = realloc(ids->v, cap * sizeof(*v));
    if (v == NULL)
      return TALLY_ENOMEM;
    ids->v = v;
    ids->cap = cap;
  }
  if ((ids->v[ids->n] = tally__rs_dup(s, len)) == NULL)
    return TALLY_ENOMEM;
  ids->n++;
  return 0;
}

/* Adds every member of the set key to ids, with SSCAN. */
static int scan_set(run_t *run, const char *key, ids_t *ids, char *err,
                    size_t errlen) {
  char cursor[32] = "0";
  do {
    redisReply *r =
        tally__rs_command(run, run->ctl, REDIS_REPLY_ARRAY, err, errlen,
                          "SSCAN %s %s COUNT 1000", key, cursor);
    if (r == NULL)
      return TALLY_EIO;
    if (r->elements != 2 || tally__rs_reply_str(r->element[0]) == NULL ||
        r->element[1]->type != REDIS_REPLY_ARRAY) {
      freeReplyObject(r);
      return tally__rs_reply_error(run, run->ctl, NULL, "SSCAN", err, errlen);
    }
    snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
    const redisReply *m = r->element[1];
    for (size_t k = 0; k < m->elements; k++)
      if (tally__rs_reply_str(m->element[k]) != NULL &&
          ids_push(ids, m->element[k]->str, m->element[k]->len) != 0) {
        freeReplyObject(r);
        return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
      }
    freeReplyObject(r);
  } while (strcmp(cursor, "0") != 0);
  return 0;
}

/* Keeps in ids only the members of the set key, with pipelined
 * SISMEMBER. */
static int filter_set(run_t *run, const char *key, ids_t *ids, char *err,
                      size_t errlen) {
  size_t kept = 0;
  for (size_t from = 0; from < ids->n; from += 1000) {
    size_t to = ids->n - from < 1000 ? ids->n : from + 1000;
    for (size_t k = from; k < to; k++)
      if (redisAppendCommand(run->ctl, "SISMEMBER %s %s", key, ids->v[k]) !=
          REDIS_OK)
        return tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
    for (size_t k = from; k < to; k++) {
      void *p = NULL;
      if (redisGetReply(run->ctl, &p) != REDIS_OK)
        return tally__rs_reply_error(run, run->ctl, NULL, "SISMEMBER", err,
                                     errlen);
      redisReply *r = p;
      bool in = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
      freeReplyObject(r);
      if (in)
        ids->v[kept++] = ids->v[k];
      else
        free(ids->v[k]);
    }
  }
  ids->n = kept;
  return 0;
}

static long long set_card(run_t *run, const char *key, char *err,
                          size_t errlen) {
  redisReply *r = tally__rs_command(run, run->ctl, REDIS_REPLY_INTEGER, err,
                                    errlen, "SCARD %s", key);
  if (r == NULL)
    return -1;
  long long n = r->integer;
  freeReplyObject(r);
  return n;
}

/* The submissions in every index the options name, into ids. */
static int select_indexes(run_t *run, ids_t *ids, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  char keys[3][512];
  size_t nkeys = 0;
  const char *const what[3] = {o->task, o->contest, o->participant};
  const char *const middle[3] = {
      ":index:task:", ":index:contest:", ":index:participant:"};
  for (int k = 0; k < 3; k++)
    if (what[k] != NULL &&
        tally_rescore_key(keys[nkeys++], sizeof(keys[0]), o->prefix, middle[k],
                          what[k]) != 0)
      return tally__rs_fail(err, errlen, TALLY_EINVAL, "too long a name: %s",
                            what[k]);
  int rc = 0;
  size_t base = 0;
  if (o->submission != NULL) {
    rc = ids_push(ids, o->submission, strlen(o->submission));
    base = nkeys; /* every index filters */
  } else {
    long long least = -1;
    for (size_t k = 0; k < nkeys; k++) {
      long long n = set_card(run, keys[k], err, errlen);
      if (n < 0)
        return TALLY_EIO;
      if (least < 0 || n < least) {
        least = n;
        base = k;
      }
    }
    rc = scan_set(run, keys[base], ids, err, errlen);
  }
  for (size_t k = 0; k < nkeys && rc == 0; k++)
    if (k != base)
      rc = filter_set(run, keys[k], ids, err, errlen);
  return rc == TALLY_ENOMEM ? tally__rs_fail(err, errlen, rc, "out of memory")
                            : rc;
}

/* Reads the hash <p>:suffix of task -> version into *out. */
static int read_version_hash(run_t *run, const char *suffix, version_t **out,
                             size_t *n, char *err, size_t errlen) {
  redisReply *r =
      tally__rs_command(run, run->ctl, REDIS_REPLY_ARRAY, err, errlen,
                        "HGETALL %s:%s", run->o->prefix, suffix);
  if (r == NULL)
    return TALLY_EIO;
  *out = calloc(r->elements / 2 + 1, sizeof(**out));
  int rc = *out == NULL ? TALLY_ENOMEM : 0;
  for (size_t k = 0; rc == 0 && k + 1 < r->elements; k += 2) {
    version_t *v = &(*out)[*n];
    if (tally__rs_reply_str(r->element[k]) == NULL ||
        tally__rs_reply_str(r->element[k + 1]) == NULL)
      continue;
    v->task = strdup(r->element[k]->str);
    v->version = strdup(r->element[k + 1]->str);
    (*n)++;
    if (v->task == NULL || v->version == NULL)
      rc = TALLY_ENOMEM;
  }
  freeReplyObject(r);
  return rc == 0 ? 0 : tally__rs_fail(err, errlen, rc, "out of memory");
}

/* Reads <p>:taskversions into run->versions, and <p>:rescore:pending into
 * run->pending. */
static int read_versions(run_t *run, char *err, size_t errlen) {
  int rc = read_version_hash(run, "taskversions", &run->versions,
                             &run->nversions, err, errlen);
  if (rc == 0)
    rc = read_version_hash(run, "rescore:pending", &run->pending,
                           &run->npending, err, errlen);
  if (rc == 0 &&
      (run->finishing = calloc(run->o->tasks->count + 1, sizeof(bool))) == NULL)
    rc = tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
  return rc;
}

/* The version a rescore of task was started for and has not finished, or
 * NULL. */
static const char *pending_version(const run_t *run, const char *task) {
  for (size_t k = 0; k < run->npending; k++)
    if (strcmp(run->pending[k].task, task) == 0)
      return run->pending[k].version;
  return NULL;
}

/* Selects the submissions of task entry k of the taskset. */
static int select_task(run_t *run, size_t k, ids_t *ids, char *err,
                       size_t errlen) {
  const char *name = run->o->tasks->entries[k].task->name;
  char key[512];
  if (tally_rescore_key(key, sizeof(key), run->o->prefix,
                        ":index:task:", name) != 0)
    return tally__rs_fail(err, errlen, TALLY_EINVAL, "too long a task name: %s",
                          name);
  run->finishing[k] = true;
  return scan_set(run, key, ids, err, errlen);
}

/* --changed: records the new version of every task whose stored one
 * differs, or whose rescore to this version was begun and not finished
 * (unless a dry run), and selects the submissions of those tasks. */
static int select_changed(run_t *run, ids_t *ids, char *err, size_t errlen) {
  const tally_taskset_t *ts = run->o->tasks;
  int rc = read_versions(run, err, errlen);
  for (size_t k = 0; rc == 0 && k < ts->count; k++) {
    const char *name = ts->entries[k].task->name;
    const char *version = ts->entries[k].version;
    const char *stored = tally__rs_stored_version(run, name);
    const char *pending = pending_version(run, name);
    if (stored != NULL && strcmp(stored, version) == 0 && pending == NULL)
      continue;
    if (!run->o->dry_run) {
      redisReply *r = tally__rs_command(
          run, run->ctl, REDIS_REPLY_INTEGER, err, errlen,
          "EVAL %s 2 %s:taskversions %s:rescore:pending %s %s",
          tally_lua_rescore_begin, run->o->prefix, run->o->prefix, name,
          version);
      if (r == NULL)
        return TALLY_EIO;
      freeReplyObject(r);
    }
    rc = select_task(run, k, ids, err, errlen);
  }
  return rc;
}

/* --stale: the stale set, and the submissions of every task whose rescore
 * to its current version (the one loaded here) was begun and not
 * finished. */
static int select_stale(run_t *run, ids_t *ids, char *err, size_t errlen) {
  const tally_taskset_t *ts = run->o->tasks;
  int rc = read_versions(run, err, errlen);
  for (size_t k = 0; rc == 0 && k < ts->count; k++) {
    const char *pending = pending_version(run, ts->entries[k].task->name);
    if (pending != NULL && strcmp(pending, ts->entries[k].version) == 0)
      rc = select_task(run, k, ids, err, errlen);
  }
  char key[512];
  snprintf(key, sizeof(key), "%s:stale", run->o->prefix);
  return rc != 0 ? rc : scan_set(run, key, ids, err, errlen);
}

/* Clears the pending marks of the tasks this run rescored whole. */
int tally__rs_finish_pending(run_t *run, char *err, size_t errlen) {
  const tally_taskset_t *ts = run->o->tasks;
  for (size_t k = 0; run->finishing != NULL && k < ts->count; k++) {
    if (!run->finishing[k])
      continue;
    redisReply *r = tally__rs_command(
        run, run->ctl, REDIS_REPLY_INTEGER, err, errlen,
        "EVAL %s 1 %s:rescore:pending %s %s", tally_lua_rescore_finish,
        run->o->prefix, ts->entries[k].task->name, ts->entries[k].version);
    if (r == NULL)
      return TALLY_EIO;
    freeReplyObject(r);
  }
  return 0;
}

static int cmp_id(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int tally__rs_cmp_order(const void *a, const void *b) {
  const item_t *x = *(item_t *const *)a, *y = *(item_t *const *)b;
  int c = strcmp(x->order, y->order);
  return c != 0 ? c : strcmp(x->id, y->id);
}

/* Selects the submissions into run->items, sorted by id, duplicates
 * dropped. */
int tally__rs_select_items(run_t *run, char *err, size_t errlen) {
  const tally_rescore_opts_t *o = run->o;
  ids_t ids = {0};
  int rc = o->changed ? select_changed(run, &ids, err, errlen)
           : o->stale ? select_stale(run, &ids, err, errlen)
                      : select_indexes(run, &ids, err, errlen);
  if (rc == 0 && ids.n > 0) {
    qsort(ids.v, ids.n, sizeof(*ids.v), cmp_id);
    run->items = calloc(ids.n, sizeof(*run->items));
    if (run->items == NULL)
      rc = tally__rs_fail(err, errlen, TALLY_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < ids.n; k++) {
    if (rc == 0 &&
        (run->n == 0 || strcmp(run->items[run->n - 1].id, ids.v[k]) != 0)) {
      run->items[run->n++].id = ids.v[k];
      ids.v[k] = NULL;
    }
    free(ids.v[k]);
  }
  free(ids.v);
  return rc;
}
