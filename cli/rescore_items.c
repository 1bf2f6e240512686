/* tally rescore's items: reading and scoring them (the "scoring" phase,
 * on every worker) and writing them with the rescore script in calls that
 * take whole places (the "writing" phase). See rescore.h. */
#include "cli/rescore_int.h"

#include "config/arena.h"

#include "engine/engine.h"
#include "redis/scripts.h"
#include "redis/verdicts.h"

#include <hiredis/hiredis.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fields[NFIELDS] = {"job",     "rev",    "summary",
                                            "version", "score",  "public_score",
                                            "scored",  "tokened"};

/* Scoring. */

/* The text of a job's string or number (its id, participant...) in a
 * malloc'ed string; dflt when v is NULL; NULL when out of memory. */
static char *text_of(const cJSON *v, const char *dflt) {
  char num[64];
  if (cJSON_IsString(v))
    return strdup(v->valuestring);
  if (cJSON_IsNumber(v)) {
    snprintf(num, sizeof(num), "%.17g", v->valuedouble);
    return strdup(num);
  }
  return strdup(dflt);
}

/* A version stored in <p>:taskversions, or NULL. */
const char *tally__rs_stored_version(const run_t *run, const char *task) {
  for (size_t k = 0; k < run->nversions; k++)
    if (strcmp(run->versions[k].task, task) == 0)
      return run->versions[k].version;
  return NULL;
}

const char *tally__rs_reply_str(const redisReply *r) {
  return r != NULL && r->type == REDIS_REPLY_STRING ? r->str : NULL;
}

/* Reads a number from a stored field; false when there is none. */
static bool stored_number(const redisReply *r, double *v) {
  const char *s = tally__rs_reply_str(r);
  char *end;
  if (s == NULL || *s == '\0')
    return false;
  *v = strtod(s, &end);
  return *end == '\0';
}

void tally__rs_item_clear(item_t *it) {
  free(it->order);
  free(it->summary);
  free(it->error);
  free(it->rev);
  free(it->kept);
  free(it->participant);
  free(it->contest);
  it->order = it->summary = it->error = it->rev = it->kept = NULL;
  it->participant = it->contest = NULL;
  it->direct = false;
}

/* Finishes an item that needs no write. */
static void item_finish(run_t *run, item_t *it, unsigned char state) {
  it->state = state;
  if (state == IT_SKIPPED)
    atomic_fetch_add(&run->skipped, 1);
  else if (state == IT_GONE)
    atomic_fetch_add(&run->gone, 1);
  atomic_fetch_add(&run->done, 1);
}

/* For dry runs: the old and new scores, and whether they differ. */
static int item_compare(worker_t *w, item_t *it, const redisReply *r) {
  const char *scored = tally__rs_reply_str(r->element[F_SCORED]);
  it->old_scored = (scored == NULL || strcmp(scored, "0") != 0) &&
                   stored_number(r->element[F_SCORE], &it->old_score) &&
                   stored_number(r->element[F_PUBLIC], &it->old_public);
  it->new_scored = it->summary != NULL;
  if (it->new_scored) {
    cJSON *s = cJSON_Parse(it->summary);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "score");
    const cJSON *pub = cJSON_GetObjectItemCaseSensitive(s, "public_score");
    if (s == NULL)
      return TALLY_ENOMEM;
    it->new_scored = cJSON_IsNumber(sc) && cJSON_IsNumber(pub);
    it->new_score = it->new_scored ? sc->valuedouble : 0;
    it->new_public = it->new_scored ? pub->valuedouble : 0;
    cJSON_Delete(s);
  }
  it->differs = it->old_scored != it->new_scored ||
                (it->new_scored && (it->old_score != it->new_score ||
                                    it->old_public != it->new_public));
  if (it->differs)
    atomic_fetch_add(&w->run->changed, 1);
  return 0;
}

/* A judged sample's job (the engine answered its judge request in
 * w->out) scored again with the verdict kept in <p>:verdicts under its
 * prompt's hash; without one, unjudged: a rescore never asks the judge
 * (docs/benchmarks.md). Returns the engine's code, or TALLY_EIO with
 * w->err set when Redis does not answer. */
static int score_judged(worker_t *w, const char *job, size_t len) {
  cJSON *v = cJSON_ParseWithLength(w->out.data, w->out.len);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "prompt");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "system");
  char hash[TALLY_VERDICT_HASH_HEX + 1], key[600];
  if (!cJSON_IsString(p) ||
      tally_verdict_key(key, sizeof(key), w->run->o->prefix) != 0) {
    cJSON_Delete(v);
    return TALLY_ENOMEM;
  }
  tally_verdict_hash(cJSON_IsString(s) ? s->valuestring : NULL, p->valuestring,
                     hash);
  cJSON_Delete(v);
  redisReply *r = redisCommand(w->c, "HGET %s %s", key, hash);
  if (r == NULL ||
      (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_NIL)) {
    int rc =
        tally__rs_reply_error(w->run, w->c, r, "HGET", w->err, sizeof(w->err));
    if (r != NULL)
      freeReplyObject(r);
    return rc;
  }
  char none[200];
  snprintf(none, sizeof(none),
           "{\"error\":\"no verdict is kept for this prompt, and tally "
           "rescore does not ask the judge\",\"hash\":\"%s\"}",
           hash);
  const char *value = r->type == REDIS_REPLY_STRING ? r->str : none;
  size_t vlen = r->type == REDIS_REPLY_STRING ? r->len : strlen(none);
  free(w->judged);
  size_t n = 0;
  w->judged = tally_verdict_inject(job, len, value, vlen, &n);
  freeReplyObject(r);
  if (w->judged == NULL)
    return TALLY_ENOMEM;
  tally_buf_reset(&w->out);
  return tally_engine_score(&w->e, w->judged, n, NULL, &w->out);
}

/* Scores one submission from its stored fields r (an HMGET reply of
 * fields) and sets its state. Returns 0, TALLY_ENOMEM, or TALLY_EIO with
 * w->err set. */
static int item_score(worker_t *w, item_t *it, const redisReply *r) {
  run_t *run = w->run;
  const tally_rescore_opts_t *o = run->o;
  bool first = it->state == IT_NEW, was_failed = it->error != NULL;
  tally__rs_item_clear(it);
  const char *job = tally__rs_reply_str(r->element[F_JOB]);
  if (job == NULL) {
    item_finish(run, it, IT_GONE);
    return 0;
  }
  tally_buf_reset(&w->out);
  int rc =
      tally_engine_score(&w->e, job, r->element[F_JOB]->len, NULL, &w->out);
  if (rc == TALLY_ENGINE_JUDGE)
    rc = score_judged(w, job, r->element[F_JOB]->len);
  if (rc == TALLY_ENOMEM || rc == TALLY_EIO)
    return rc;
  const tally_task_t *task = w->e.job.task != NULL
                                 ? tally_taskset_find(o->tasks, w->e.job.task)
                                 : w->e.default_task;
  const char *version = task ? tally_taskset_version(o->tasks, task) : NULL;
  const char *stored = tally__rs_reply_str(r->element[F_VERSION]);
  const char *current = task ? tally__rs_stored_version(run, task->name) : NULL;
  if (task == NULL ||
      (o->changed && stored != NULL && strcmp(stored, version) == 0) ||
      (o->stale && (current == NULL || strcmp(current, version) != 0))) {
    item_finish(run, it, IT_SKIPPED);
    return 0;
  }
  for (size_t k = 0; k < o->tasks->count; k++)
    if (o->tasks->entries[k].task == task)
      w->seen[k] = true;
  it->task = task->name;

  const cJSON *root = w->e.job.root;
  it->contest =
      text_of(cJSON_GetObjectItemCaseSensitive(root, "contest"), "default");
  it->participant = text_of(w->e.job.participant, "");
  const char *rev = tally__rs_reply_str(r->element[F_REV]);
  const char *tokened = tally__rs_reply_str(r->element[F_TOKENED]);
  it->tokened = tokened != NULL && strcmp(tokened, "1") == 0;
  it->rev = strdup(rev ? rev : "0");
  if (it->contest == NULL || it->participant == NULL || it->rev == NULL)
    return TALLY_ENOMEM;
  size_t lc = strlen(it->contest), lp = strlen(it->participant);
  size_t lt = strlen(task->name);
  it->order = malloc(lc + lp + lt + 3);
  if (it->order == NULL)
    return TALLY_ENOMEM;
  memcpy(it->order, it->contest, lc);
  it->order[lc] = '\x1f';
  memcpy(it->order + lc + 1, it->participant, lp);
  it->order[lc + 1 + lp] = '\x1f';
  memcpy(it->order + lc + lp + 2, task->name, lt + 1);

  if (rc == 0) {
    tally_buf_reset(&w->sum);
    rc = tally_engine_summary(&w->e, &w->sum);
    if (rc == TALLY_ENOMEM || w->sum.oom)
      return TALLY_ENOMEM;
  }
  if (rc == 0) {
    /* An unchanged summary needs no write; but a stale one is written
     * all the same, so that the script takes it out of <p>:stale. */
    const char *old = tally__rs_reply_str(r->element[F_SUMMARY]);
    if (!o->stale && old != NULL && r->element[F_SUMMARY]->len == w->sum.len &&
        memcmp(old, w->sum.data, w->sum.len) == 0) {
      if (first)
        atomic_fetch_add(&run->scored, 1);
      if (was_failed)
        atomic_fetch_sub(&run->failed, 1);
      /* Kept for its place's task score, which the writing computes
       * when the place has changed submissions. */
      if (!o->dry_run &&
          (it->kept = tally__rs_dup(w->sum.data, w->sum.len)) == NULL)
        return TALLY_ENOMEM;
      item_finish(run, it, IT_UNCHANGED);
      return 0;
    }
    if ((it->summary = tally__rs_dup(w->sum.data, w->sum.len)) == NULL)
      return TALLY_ENOMEM;
    /* Most summaries stay in their place: the script need not decode
     * them (docs/contest.md, "The direct rescore"). */
    it->direct = tally_rescore_direct_applies(
        w->sum.data, w->sum.len, old, old ? r->element[F_SUMMARY]->len : 0,
        tally__rs_reply_str(r->element[F_SCORED]),
        tally__rs_reply_str(r->element[F_SCORE]),
        tally__rs_reply_str(r->element[F_PUBLIC]), &it->stored);
    it->stored.tokened = it->tokened;
    if (was_failed)
      atomic_fetch_sub(&run->failed, 1);
  } else {
    /* What the decoder checked of a job that cannot be scored. */
    tally_buf_reset(&w->sum);
    if (tally_engine_unscored(&w->e, &w->sum) != 0 || w->sum.oom)
      return TALLY_ENOMEM;
    if (w->sum.len > 0 &&
        (it->summary = tally__rs_dup(w->sum.data, w->sum.len)) == NULL)
      return TALLY_ENOMEM;
    if ((it->error = strdup(w->e.err)) == NULL)
      return TALLY_ENOMEM;
    if (!was_failed)
      atomic_fetch_add(&run->failed, 1);
  }
  it->state = IT_SEND;
  if (first)
    atomic_fetch_add(&run->scored, 1);
  if (o->dry_run) {
    if (item_compare(w, it, r) != 0)
      return TALLY_ENOMEM;
    atomic_fetch_add(&run->done, 1);
  }
  return 0;
}

/* Reads and scores items[0..n) with one pipeline. Returns 0, or TALLY_EIO
 * or TALLY_ENOMEM with w->err set. */
static int read_items(worker_t *w, item_t **items, size_t n) {
  run_t *run = w->run;
  char key[1024];
  for (size_t k = 0; k < n; k++) {
    const char *argv[2 + NFIELDS] = {"HMGET", key};
    snprintf(key, sizeof(key), "%s:submission:%s", run->o->prefix,
             items[k]->id);
    memcpy(argv + 2, fields, sizeof(fields));
    if (redisAppendCommandArgv(w->c, 2 + NFIELDS, argv, NULL) != REDIS_OK)
      return tally__rs_fail(w->err, sizeof(w->err), TALLY_ENOMEM,
                            "out of memory");
  }
  /* Every reply first: scoring a judged sample sends a command of its
   * own. */
  redisReply *replies[CHUNK];
  int rc = 0;
  size_t got = 0;
  for (; got < n; got++) {
    void *p = NULL;
    if (redisGetReply(w->c, &p) != REDIS_OK) {
      rc = tally__rs_reply_error(run, w->c, NULL, "HMGET", w->err,
                                 sizeof(w->err));
      break;
    }
    replies[got] = p;
  }
  for (size_t k = 0; k < got; k++) {
    redisReply *r = replies[k];
    int src;
    if (rc == 0 && (r->type != REDIS_REPLY_ARRAY || r->elements != NFIELDS))
      rc = tally__rs_reply_error(run, w->c, r, "HMGET", w->err, sizeof(w->err));
    else if (rc == 0 && (src = item_score(w, items[k], r)) != 0)
      rc = src == TALLY_EIO ? src
                            : tally__rs_fail(w->err, sizeof(w->err),
                                             TALLY_ENOMEM, "out of memory");
    freeReplyObject(r);
  }
  return rc;
}

void *tally__rs_score_main(void *arg) {
  worker_t *w = arg;
  run_t *run = w->run;
  item_t *batch[CHUNK];
  while (w->status == 0 && !atomic_load(&run->stop)) {
    size_t from = atomic_fetch_add(&run->next, CHUNK);
    if (from >= run->n)
      break;
    size_t n = run->n - from < CHUNK ? run->n - from : CHUNK;
    for (size_t k = 0; k < n; k++)
      batch[k] = &run->items[from + k];
    w->status = read_items(w, batch, n);
  }
  if (w->status != 0)
    atomic_store(&run->stop, true);
  atomic_fetch_sub(&run->running, 1);
  return NULL;
}

/* Writing. */

/* Sends the call in w->call and sorts out the replies for items[0..n):
 * the ones to send again (rev moved) go to again, counted in *nagain.
 * Returns 0, or TALLY_EIO with w->err set. */
static int write_call(worker_t *w, item_t **items, size_t n, item_t **again,
                      size_t *nagain) {
  run_t *run = w->run;
  redisReply *r =
      redisCommandArgv(w->c, w->call.argc, w->call.argv, w->call.argvlen);
  if (r != NULL && r->type == REDIS_REPLY_ERROR &&
      strncmp(r->str, "NOSCRIPT", 8) == 0) {
    /* The server lost its scripts (a restart): load it again. */
    freeReplyObject(r);
    r = redisCommand(w->c, "SCRIPT LOAD %s",
                     tally_scripts[TALLY_SCRIPT_RESCORE]);
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
      freeReplyObject(r);
      r = redisCommandArgv(w->c, w->call.argc, w->call.argv, w->call.argvlen);
    }
  }
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != n) {
    int rc = tally__rs_reply_error(run, w->c, r, "the rescore script", w->err,
                                   sizeof(w->err));
    if (r != NULL)
      freeReplyObject(r);
    return rc;
  }
  int rc = 0;
  for (size_t k = 0; k < n && rc == 0; k++) {
    long long code = r->element[k]->type == REDIS_REPLY_INTEGER
                         ? r->element[k]->integer
                         : -100;
    if (code == 1 || code == 0) {
      if (code == 1)
        atomic_fetch_add(&run->changed, 1);
      items[k]->state = IT_WRITTEN;
      atomic_fetch_add(&run->done, 1);
    } else if (code == -1) {
      again[(*nagain)++] = items[k];
    } else if (code == -3) {
      item_finish(run, items[k], IT_GONE);
    } else {
      rc = tally__rs_fail(
          w->err, sizeof(w->err), TALLY_EIO,
          "Redis at %s: the rescore script: unexpected reply for "
          "submission %s",
          run->url, items[k]->id);
    }
  }
  freeReplyObject(r);
  return rc;
}

static bool same_order(const item_t *a, const item_t *b) {
  return strcmp(a->order, b->order) == 0;
}

/* Appends to w->call the places of send[from..to) whose task scores tally
 * computes (docs/contest.md, "The task scores of a direct rescore"): each
 * one whose fields are all in the range (the ones written and the ones
 * kept), with at least one written, every one written directly in this
 * call. The script checks each against the place it finds. */
static void add_places(worker_t *w, size_t from, size_t to) {
  run_t *run = w->run;
  for (size_t i = 0; i < w->nplaces; i++)
    tally_place_id_free(&w->place_ids[i]);
  w->nplaces = 0;
  for (size_t g = from, e; g < to; g = e) {
    item_t *const *send = run->send;
    for (e = g + 1; e < to && same_order(send[e], send[g]); e++)
      ;
    if ((g > 0 && same_order(send[g - 1], send[g])) ||
        (e < run->nsend && same_order(send[e], send[g])) ||
        e - g > CHUNK_MEMBERS || w->nplaces == TALLY_CALL_MAX_ITEMS)
      continue; /* not all of the place is here */
    /* Every field written must be a direct rescore (which has a summary);
     * the others are the kept ones. */
    size_t written = 0;
    bool direct = true;
    for (size_t k = g; k < e && direct; k++) {
      const item_t *it = send[k];
      bool w_it = it->state == IT_SEND;
      const char *summary = w_it ? it->summary : it->kept;
      written += w_it;
      direct = summary != NULL && (!w_it || it->direct);
      if (direct)
        w->members[k - g] = (tally_place_member_t){.id = it->id,
                                                   .summary = summary,
                                                   .len = strlen(summary),
                                                   .tokened = it->tokened};
    }
    size_t np = w->nplaces;
    tally_place_id_t *id = &w->place_ids[np];
    const tally_place_calc_t *pc = &w->places[np];
    if (written == 0 || !direct)
      continue;
    /* The place's summaries are parsed into the worker's arena: a hundred
     * trees of a few hundred nodes each, gone at the reset. */
    tally_arena_t *was = tally_arena_use(&w->arena);
    int whole = tally_place_whole(w->members, e - g, id, &w->places[np]);
    tally_arena_use(was);
    tally_arena_reset(&w->arena);
    if (whole != 0)
      continue;
    w->nplaces++;
    if (tally_call_rescore_place(
            &w->call, id->contest, id->participant, id->task, (unsigned)written,
            pc->score.data, pc->score.len, pc->cache.data, pc->cache.len,
            pc->meta.data, pc->meta.len, (unsigned)(e - g - written)) != 0)
      return; /* no room left in the call */
    for (size_t k = g; k < e; k++)
      if (send[k]->state != IT_SEND)
        tally_call_rescore_kept(&w->call, send[k]->id, send[k]->rev,
                                send[k]->tokened);
  }
}

/* Writes the items of send[from..to) to write (at most CHUNK), reading and
 * scoring again the ones another writer got to first, until every one is
 * written. The first call carries the task scores of the range's whole
 * places. Returns 0, or TALLY_EIO or TALLY_ENOMEM with w->err set. */
static int write_items(worker_t *w, size_t from, size_t to) {
  run_t *run = w->run;
  item_t *todo[CHUNK], *again[CHUNK], *sent[CHUNK];
  size_t n = 0;
  for (size_t k = from; k < to; k++)
    if (run->send[k]->state == IT_SEND)
      todo[n++] = run->send[k];
  for (int tries = 0; n > 0; tries++) {
    if (tries == MAX_TRIES)
      return tally__rs_fail(w->err, sizeof(w->err), TALLY_EIO,
                            "submission %s kept changing while it was rescored "
                            "(%d tries)",
                            todo[0]->id, MAX_TRIES);
    size_t nagain = 0, k = 0;
    while (k < n) {
      size_t nsent = 0;
      tally_call_rescore_begin(&w->call, run->sha, run->o->prefix);
      for (; k < n && nsent < TALLY_CALL_MAX_ITEMS; k++) {
        item_t *it = todo[k];
        size_t len = it->summary ? strlen(it->summary) : 0;
        const char *direct[TALLY_RESCORE_DIRECT_ARGS];
        size_t direct_len[TALLY_RESCORE_DIRECT_ARGS];
        tally_rescore_direct_t *dt = &w->direct[nsent];
        tally_arena_t *was = tally_arena_use(&w->arena);
        it->direct =
            it->direct && tally_rescore_direct(it->summary, len, it->id,
                                               &it->stored, dt) == 0;
        tally_arena_use(was);
        tally_arena_reset(&w->arena);
        bool d = it->direct;
        _Static_assert(TALLY_RDIRECT_COUNT == TALLY_RESCORE_DIRECT_ARGS,
                       "a direct rescore's texts");
        for (int i = 0; d && i < TALLY_RESCORE_DIRECT_ARGS; i++) {
          direct[i] = dt->buf.data + dt->off[i];
          direct_len[i] = dt->len[i];
        }
        if (tally_call_rescore_direct(
                &w->call, it->id, it->rev, it->summary ? it->summary : "", len,
                it->error ? it->error : "", d ? direct : NULL,
                d ? direct_len : NULL) != 0)
          break;
        sent[nsent++] = it;
      }
      if (tries == 0 && nsent == n)
        add_places(w, from, to);
      int rc = write_call(w, sent, nsent, again, &nagain);
      if (rc != 0)
        return rc;
    }
    if (nagain == 0)
      break;
    atomic_fetch_add(&run->retried, nagain);
    int rc = read_items(w, again, nagain);
    if (rc != 0)
      return rc;
    n = 0;
    for (k = 0; k < nagain; k++)
      if (again[k]->state == IT_SEND)
        todo[n++] = again[k];
  }
  return 0;
}

void *tally__rs_write_main(void *arg) {
  worker_t *w = arg;
  run_t *run = w->run;
  while (w->status == 0 && !atomic_load(&run->stop)) {
    size_t k = atomic_fetch_add(&run->next, 1);
    if (k >= run->ncalls)
      break;
    w->status = write_items(w, run->calls[k], run->calls[k + 1]);
    /* The unchanged summaries kept for these places are not needed
     * again. */
    for (size_t i = run->calls[k]; i < run->calls[k + 1]; i++) {
      free(run->send[i]->kept);
      run->send[i]->kept = NULL;
    }
  }
  if (w->status != 0)
    atomic_store(&run->stop, true);
  atomic_fetch_sub(&run->running, 1);
  return NULL;
}

/* Splits run->send (in write order: by place) into script calls that each
 * write at most CHUNK submissions and take whole places when they can: a
 * place's task score is computed once per call, by tally or by the
 * script, so a place split over two calls costs twice. A place's kept
 * (unchanged) submissions go with it. Returns 0 or TALLY_ENOMEM. */
int tally__rs_plan_calls(run_t *run) {
  run->calls = malloc((run->nsend + 2) * sizeof(*run->calls));
  if (run->calls == NULL)
    return TALLY_ENOMEM;
  run->calls[0] = 0;
  size_t sends = 0; /* to write in the call being planned */
  for (size_t g = 0, e; g < run->nsend; g = e) {
    size_t n = run->send[g]->state == IT_SEND;
    for (e = g + 1; e < run->nsend && same_order(run->send[e], run->send[g]);
         e++)
      n += run->send[e]->state == IT_SEND;
    if (sends > 0 && sends + n > CHUNK) {
      run->calls[++run->ncalls] = g;
      sends = 0;
    }
    if (n <= CHUNK) {
      sends += n;
      continue;
    }
    /* A place bigger than a call: calls of CHUNK of its own. */
    for (size_t k = g; k < e; k++) {
      if (run->send[k]->state != IT_SEND)
        continue;
      if (sends == CHUNK) {
        run->calls[++run->ncalls] = k;
        sends = 0;
      }
      sends++;
    }
  }
  if (sends > 0)
    run->calls[++run->ncalls] = run->nsend;
  return 0;
}
