/* The dispatcher's job table, keyed by entry id, and its queues. */
#include "config/error.h"
#include "config/hash.h"
#include "daemon/dispatch_int.h"
#include "worker/frame.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The job table: chained, keyed by entry id. */

static size_t hash_id(const char *id) {
  return (size_t)tally_fnv1a(id, strlen(id));
}

tally__job_t **tally__slot(tally_dispatch_t *d, const char *id) {
  tally__job_t **p = &d->table[hash_id(id) & (d->table_size - 1)];
  while (*p && strcmp((*p)->id, id) != 0)
    p = &(*p)->hnext;
  return p;
}

int tally__table_grow(tally_dispatch_t *d) {
  size_t size = d->table_size ? d->table_size * 2 : 256;
  tally__job_t **t = calloc(size, sizeof(*t));
  if (t == NULL)
    return TALLY_ENOMEM;
  for (size_t i = 0; i < d->table_size; i++)
    for (tally__job_t *j = d->table[i], *next; j; j = next) {
      next = j->hnext;
      size_t k = hash_id(j->id) & (size - 1);
      j->hnext = t[k];
      t[k] = j;
    }
  free(d->table);
  d->table = t;
  d->table_size = size;
  return 0;
}

void tally__job_free(tally_dispatch_t *d, tally__job_t *j) {
  *tally__slot(d, j->id) = j->hnext;
  d->njobs--;
  if (j->judge_req != NULL)
    tally_judge_cancel(d->opt.judge, j->judge_req);
  free(j->text);
  free(j->body);
  free(j->unscored);
  free(j->token);
  free(j->entry);
  free(j->record);
  free(j->place_key);
  free(j->pre);
  free(j);
}

/* Frees a job whose story is over, and lets more work in. */
void tally__job_done(tally_dispatch_t *d, tally__job_t *j) {
  tally__job_free(d, j);
  if (!d->closing) {
    tally__pump(d);
    tally__check_drained(d);
  }
}

size_t tally__room(const tally_dispatch_t *d) {
  return d->njobs >= d->opt.max_inflight ? 0 : d->opt.max_inflight - d->njobs;
}

/* Queues. */

void tally__enqueue(tally__job_t **head, tally__job_t **tail, tally__job_t *j) {
  j->qnext = NULL;
  if (*tail)
    (*tail)->qnext = j;
  else
    *head = j;
  *tail = j;
}

static void push_front(tally__job_t **head, tally__job_t **tail,
                       tally__job_t *j) {
  j->qnext = *head;
  *head = j;
  if (*tail == NULL)
    *tail = j;
}

tally__job_t *tally__dequeue(tally__job_t **head, tally__job_t **tail) {
  tally__job_t *j = *head;
  if (j) {
    *head = j->qnext;
    if (*head == NULL)
      *tail = NULL;
  }
  return j;
}

void tally__queue_post(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_POST;
  tally__enqueue(&d->post_q, &d->post_tail, j);
}

void tally__queue_release(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_RELEASE;
  tally__enqueue(&d->release_q, &d->release_tail, j);
}

void tally__queue_fetch(tally_dispatch_t *d, tally__job_t *j) {
  j->state = JOB_FETCH;
  tally__enqueue(&d->fetch_q, &d->fetch_tail, j);
}

/* Puts the jobs of a failed call back at the front of the queue of state
 * (JOB_POST, JOB_RETRY, JOB_RELEASE or JOB_FETCH), to be sent again when
 * the write connection is back; every call is safe to run twice. */
void tally__requeue(tally_dispatch_t *d, call_t *c, job_state_t state) {
  tally__job_t **head = state == JOB_POST    ? &d->post_q
                        : state == JOB_RETRY ? &d->retry_q
                        : state == JOB_FETCH ? &d->fetch_q
                                             : &d->release_q;
  tally__job_t **tail = state == JOB_POST    ? &d->post_tail
                        : state == JOB_RETRY ? &d->retry_tail
                        : state == JOB_FETCH ? &d->fetch_tail
                                             : &d->release_tail;
  for (unsigned i = c->n; i-- > 0;) {
    c->jobs[i]->state = state;
    push_front(head, tail, c->jobs[i]);
  }
}

/* Who a job is for, from its text: ", submission S, task T, participant
 * P" (those it names), or "" when it is not kept or not JSON. */
static void job_names(const tally__job_t *j, char *out, size_t len) {
  out[0] = '\0';
  if (j->text == NULL)
    return;
  cJSON *v = cJSON_ParseWithLength(j->text, j->pj.len);
  static const char *const fields[] = {"submission", "task", "participant"};
  size_t n = 0;
  for (int i = 0; i < 3 && cJSON_IsObject(v); i++) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, fields[i]);
    char num[32];
    const char *text = cJSON_IsString(f) ? f->valuestring : NULL;
    if (cJSON_IsNumber(f)) {
      snprintf(num, sizeof(num), "%.17g", f->valuedouble);
      text = num;
    }
    if (text != NULL && n < len)
      n += (size_t)snprintf(out + n, len - n, ", %s %.200s", fields[i], text);
  }
  cJSON_Delete(v);
}

/* Sets j to be dead-lettered with a cause. */

void tally__dead_letter(tally_dispatch_t *d, tally__job_t *j, const char *fmt,
                        ...) {
  char why[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  free(j->body);
  j->body = strdup(why);
  j->body_len = j->body ? strlen(j->body) : 0;
  j->has_extra = j->unscored != NULL;
  if (j->has_extra)
    j->extra = (tally_post_extra_t){.summary = j->unscored,
                                    .summary_len = strlen(j->unscored)};
  j->kind = "dead";
  char names[800];
  job_names(j, names, sizeof(names));
  tally_log(d->opt.log, TALLY_LOG_WARN, "job.dead", "%s%s: %s", j->id, names,
            why);
  tally__queue_post(d, j);
}
