/* Samples that need a judge's verdict (docs/benchmarks.md): the worker
 * answered a judge request instead of a result. The verdict kept in
 * <qprefix>:verdicts under the prompt's hash is used when there is one;
 * otherwise the judge is asked, and its reply kept (HSETNX, then read
 * back, so that every sample of one prompt gets the first reply kept).
 * The job, with the verdict as its "judge" member, then goes back to the
 * pool and is posted like any result: exactly once, by the post script.
 * A judge that cannot answer gives the member {"error": why}: the sample
 * is posted unjudged, and nothing is kept, so that a later job asks
 * again. */
#include "daemon/dispatch_int.h"
#include "redis/verdicts.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Redis call about one job: it is looked up by id when the reply comes,
 * since a drain or a close may have let it go meanwhile. */
typedef struct ask_s {
  tally_dispatch_t *d;
  char *value; /* the verdict being kept (HSETNX), or NULL */
  size_t value_len;
  char id[];
} ask_t;

static ask_t *ask_new(tally_dispatch_t *d, const tally__job_t *j) {
  size_t n = strlen(j->id);
  ask_t *a = calloc(1, sizeof(*a) + n + 1);
  if (a != NULL) {
    a->d = d;
    memcpy(a->id, j->id, n + 1);
  }
  return a;
}

static void ask_free(ask_t *a) {
  if (a != NULL)
    free(a->value);
  free(a);
}

/* The job a reply is about, when it still waits for its verdict. */
static tally__job_t *waiting_job(ask_t *a) {
  tally__job_t *j = *tally__slot(a->d, a->id);
  return j != NULL && j->state == JOB_JUDGE ? j : NULL;
}

/* Sends j back to be scored again, its job now carrying value (the
 * "judge" member's JSON text); or hands it back during a drain. */
static void score_again(tally_dispatch_t *d, tally__job_t *j, const char *value,
                        size_t vlen) {
  j->judge_req = NULL;
  j->judge_keeping = false;
  size_t n = 0;
  char *text = tally_verdict_inject(j->text, j->pj.len, value, vlen, &n);
  if (text == NULL) {
    tally__dead_letter(d, j, "out of memory adding the judge's verdict");
    tally__flush(d);
    return;
  }
  free(j->text);
  j->text = text;
  j->pj.text = text;
  j->pj.len = n;
  if (d->draining) {
    tally__queue_release(d, j);
    tally__flush(d);
    tally__check_drained(d);
    return;
  }
  j->state = JOB_POOL;
  tally_pool_submit(d->opt.pool, &j->pj);
}

/* The member {"error": why, "hash": h}. */
static void unjudged(tally_dispatch_t *d, tally__job_t *j, const char *why) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, "{\"error\":");
  tally_json_str(&b, why);
  tally_buf_puts(&b, ",\"hash\":");
  tally_json_str(&b, j->judge_hash);
  tally_buf_putc(&b, '}');
  if (b.oom)
    tally__dead_letter(d, j, "out of memory adding the judge's error");
  else
    score_again(d, j, b.data, b.len);
  tally_buf_close(&b);
}

/* What the retry path does with a job whose verdict Redis could not
 * give: one more delivery, and the worker asks again. */
static void retry_later(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_RETRY;
  tally__enqueue(&d->retry_q, &d->retry_tail, j);
  tally__flush(d);
}

static void on_kept(tally_redis_t *r, redisReply *reply, void *priv) {
  (void)r;
  ask_t *a = priv;
  tally__job_t *j = waiting_job(a);
  if (j != NULL) {
    /* EXEC's reply: HSETNX's, then HGET's, the verdict now kept. */
    const redisReply *got = reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
                                    reply->elements == 2
                                ? reply->element[1]
                                : NULL;
    if (got != NULL && got->type == REDIS_REPLY_STRING) {
      score_again(a->d, j, got->str, got->len);
    } else {
      /* Not kept: the reply is used all the same; a later job of the
       * same prompt asks again. */
      tally_log(a->d->opt.log, TALLY_LOG_WARN, "judge.unkept",
                "%s: the verdict could not be kept in Redis (%s)", j->id,
                reply != NULL && reply->type == REDIS_REPLY_ERROR ? reply->str
                                                                  : "no reply");
      score_again(a->d, j, a->value, a->value_len);
    }
  }
  ask_free(a);
}

static void on_answer(void *data, const char *reply, size_t len,
                      const char *error) {
  tally__job_t *j = data;
  tally_dispatch_t *d = j->d;
  j->judge_req = NULL;
  if (reply == NULL) {
    d->stats.judge_failed++;
    tally_log(d->opt.log, TALLY_LOG_WARN, "judge.failed",
              "%s: posted unjudged: %s", j->id, error);
    unjudged(d, j, error);
    return;
  }
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, "{\"reply\":");
  tally_json_strn(&b, reply, len);
  tally_buf_puts(&b, ",\"model\":");
  tally_json_str(&b, d->opt.judge->opt.model);
  tally_buf_puts(&b, ",\"hash\":");
  tally_json_str(&b, j->judge_hash);
  tally_buf_putc(&b, '}');
  ask_t *a = b.oom ? NULL : ask_new(d, j);
  if (a == NULL) {
    tally_buf_close(&b);
    retry_later(d, j);
    return;
  }
  a->value = b.data;
  a->value_len = b.len;
  char key[TALLY_RESULT_KEY_MAX];
  tally_verdict_key(key, sizeof(key), d->opt.prefix);
  const char *set[] = {"HSETNX", key, j->judge_hash, a->value};
  const char *get[] = {"HGET", key, j->judge_hash};
  size_t setl[] = {6, strlen(key), TALLY_VERDICT_HASH_HEX, a->value_len};
  size_t getl[] = {4, strlen(key), TALLY_VERDICT_HASH_HEX};
  const int argc[] = {4, 3};
  const char *const *argv[] = {set, get};
  const size_t *const lens[] = {setl, getl};
  j->judge_keeping = true;
  if (tally_redis_transaction(&d->wr, d->opt.command_timeout_ms, on_kept, a, 2,
                              argc, argv, lens) != 0) {
    /* No connection: used now, kept by the next sample of the prompt. */
    score_again(d, j, a->value, a->value_len);
    ask_free(a);
  }
}

static void on_cached(tally_redis_t *r, redisReply *reply, void *priv);

/* Whether another sample of j's prompt is keeping its verdict now: its
 * HSETNX was sent after j's HGET, which therefore missed it. */
static bool kept_soon(tally_dispatch_t *d, const tally__job_t *j) {
  for (size_t i = 0; i < d->table_size; i++)
    for (const tally__job_t *k = d->table[i]; k != NULL; k = k->hnext)
      if (k != j && k->state == JOB_JUDGE && k->judge_keeping &&
          strcmp(k->judge_hash, j->judge_hash) == 0)
        return true;
  return false;
}

/* Reads j's verdict from <qprefix>:verdicts (on_cached). */
static void read_kept(tally_dispatch_t *d, tally__job_t *j) {
  char key[TALLY_RESULT_KEY_MAX];
  tally_verdict_key(key, sizeof(key), d->opt.prefix);
  const char *argv[] = {"HGET", key, j->judge_hash};
  size_t lens[] = {4, strlen(key), TALLY_VERDICT_HASH_HEX};
  ask_t *a = ask_new(d, j);
  if (a == NULL || tally_redis_command(&d->wr, d->opt.command_timeout_ms,
                                       on_cached, a, 3, argv, lens) != 0) {
    ask_free(a);
    retry_later(d, j);
  }
}

static void on_cached(tally_redis_t *r, redisReply *reply, void *priv) {
  (void)r;
  ask_t *a = priv;
  tally__job_t *j = waiting_job(a);
  tally_dispatch_t *d = a->d;
  ask_free(a);
  if (j == NULL)
    return;
  if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
    d->stats.verdicts_kept++;
    score_again(d, j, reply->str, reply->len);
    return;
  }
  if (reply == NULL || reply->type != REDIS_REPLY_NIL) {
    retry_later(d, j);
    return;
  }
  if (d->draining) {
    tally__queue_release(d, j);
    tally__flush(d);
    tally__check_drained(d);
    return;
  }
  if (kept_soon(d, j)) {
    /* Read again, after that HSETNX: the prompt is asked once. */
    read_kept(d, j);
    return;
  }
  if (d->opt.judge == NULL) {
    unjudged(d, j, "no judge is configured (tallyd --judge-url)");
    return;
  }
  /* The request is rebuilt from the job: the worker's body is gone. */
  char *prompt = NULL, *system = NULL;
  cJSON *v = cJSON_Parse(j->body);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "prompt");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "system");
  prompt = cJSON_IsString(p) ? p->valuestring : NULL;
  system = cJSON_IsString(s) ? s->valuestring : NULL;
  if (prompt != NULL) {
    d->stats.judge_asked++;
    j->judge_req = tally_judge_ask(d->opt.judge, j->judge_hash, j->id, system,
                                   prompt, on_answer, j);
  }
  cJSON_Delete(v);
  if (j->judge_req == NULL)
    retry_later(d, j);
}

void tally__judge(tally_dispatch_t *d, tally__job_t *j, const char *body,
                  size_t len) {
  cJSON *v = cJSON_ParseWithLength(body, len);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "prompt");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "system");
  if (!cJSON_IsString(p)) {
    cJSON_Delete(v);
    tally__dead_letter(d, j, "the worker's judge request has no prompt");
    tally__flush(d);
    return;
  }
  tally_verdict_hash(cJSON_IsString(s) ? s->valuestring : NULL, p->valuestring,
                     j->judge_hash);
  cJSON_Delete(v);
  /* The request stays in j->body until the judge is asked. */
  free(j->body);
  j->body = malloc(len + 1);
  if (j->body == NULL) {
    retry_later(d, j);
    return;
  }
  memcpy(j->body, body, len);
  j->body[len] = '\0';
  j->body_len = len;
  j->has_extra = false;
  j->state = JOB_JUDGE;
  j->judge_req = NULL;
  j->judge_keeping = false;
  read_kept(d, j);
}

void tally__judge_drain(tally_dispatch_t *d) {
  for (size_t i = 0; i < d->table_size; i++) {
    for (tally__job_t *j = d->table[i], *next; j != NULL; j = next) {
      next = j->hnext;
      if (j->state != JOB_JUDGE || j->judge_req == NULL)
        continue;
      tally_judge_cancel(d->opt.judge, j->judge_req);
      j->judge_req = NULL;
      tally__queue_release(d, j);
    }
  }
}

static void on_hold(tally_redis_t *r, redisReply *reply, void *priv) {
  (void)priv;
  tally_dispatch_t *d = r->data;
  if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
    tally__reply_error(d, r, "the hold script", reply);
}

void tally__judge_hold(tally_dispatch_t *d, uint64_t now) {
  enum { MAX = 256 };
  if (d->opt.judge == NULL || now < d->next_hold || !d->ready || d->closing)
    return;
  d->next_hold = now + d->opt.claim_idle_ms / 3;
  const char *argv[6 + 2 * MAX] = {
      "EVAL", tally_lua_hold, "1", d->jobs_key, TALLY_GROUP, d->opt.consumer};
  char dl[MAX][16];
  int argc = 6;
  for (size_t i = 0; i < d->table_size; i++) {
    for (tally__job_t *j = d->table[i]; j != NULL; j = j->hnext) {
      if (j->state != JOB_JUDGE)
        continue;
      snprintf(dl[(argc - 6) / 2], sizeof(dl[0]), "%u",
               (unsigned)j->pj.deliveries);
      argv[argc] = j->id;
      argv[argc + 1] = dl[(argc - 6) / 2];
      argc += 2;
      if (argc == 6 + 2 * MAX) {
        tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_hold, NULL,
                            argc, argv, NULL);
        argc = 6;
      }
    }
  }
  if (argc > 6)
    tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_hold, NULL, argc,
                        argv, NULL);
}
