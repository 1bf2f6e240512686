/* tally report's samples (report.h): the interned names, and reading a
 * stored summary (docs/contest.md) into a sample, with its failure
 * category classified again when a new refusal list is given. */
#include "cli/report.h"
#include "config/json.h"
#include "stats/failure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int grow_slots(report_names_t *t) {
  size_t n = t->nslots ? t->nslots * 2 : 64;
  uint32_t *slots = calloc(n, sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t at = (size_t)hash_name(t->names[i]) & (n - 1);
    while (slots[at] != 0)
      at = (at + 1) & (n - 1);
    slots[at] = (uint32_t)i + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = n;
  return 0;
}

uint32_t report_intern(report_names_t *t, const char *name) {
  if ((t->n + 1) * 2 > t->nslots && grow_slots(t) != 0)
    return UINT32_MAX;
  size_t at = (size_t)hash_name(name) & (t->nslots - 1);
  while (t->slots[at] != 0) {
    uint32_t i = t->slots[at] - 1;
    if (strcmp(t->names[i], name) == 0)
      return i;
    at = (at + 1) & (t->nslots - 1);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    char **names = realloc(t->names, cap * sizeof(*names));
    if (names == NULL)
      return UINT32_MAX;
    t->names = names;
    t->cap = cap;
  }
  if ((t->names[t->n] = strdup(name)) == NULL)
    return UINT32_MAX;
  t->slots[at] = (uint32_t)t->n + 1;
  return (uint32_t)t->n++;
}

void report_names_close(report_names_t *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->names[i]);
  free(t->names);
  free(t->slots);
  memset(t, 0, sizeof(*t));
}

void report_data_init(report_data_t *d) {
  memset(d, 0, sizeof(*d));
}

void report_data_close(report_data_t *d) {
  for (size_t i = 0; i < d->n; i++) {
    free(d->samples[i].id);
    free(d->samples[i].preview);
  }
  free(d->samples);
  report_names_close(&d->participants);
  report_names_close(&d->tasks);
  report_names_close(&d->categories);
  memset(d, 0, sizeof(*d));
}

/* The category index of a failure name, or -1. */
static int failure_index(const char *name) {
  for (int i = 0; name != NULL && tally_failure_categories[i] != NULL; i++)
    if (strcmp(tally_failure_categories[i], name) == 0)
      return i;
  return -1;
}

/* The id text of a summary member (a string; numbers as tally writes
 * them). */
const char *report_id_text(const cJSON *v, char *buf, size_t cap) {
  if (cJSON_IsString(v))
    return v->valuestring;
  if (cJSON_IsNumber(v)) {
    tally_buf_t b;
    tally_buf_init(&b);
    tally_json_num(&b, v->valuedouble);
    snprintf(buf, cap, "%s", b.oom ? "" : tally_buf_text(&b));
    tally_buf_close(&b);
    return buf;
  }
  return NULL;
}

/* The response and error of a job text, for a new refusal list. */
static int refacts(const char *job, size_t len, tally_sample_facts_t *f,
                   cJSON **root) {
  *root = job != NULL ? cJSON_ParseWithLength(job, len) : NULL;
  if (*root == NULL)
    return 0;
  f->error = cJSON_GetObjectItemCaseSensitive(*root, "error");
  if (cJSON_IsNull(f->error))
    f->error = NULL;
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(*root, "response");
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(*root, "evaluations");
  if (!cJSON_IsString(r) && cJSON_IsObject(ev) && ev->child != NULL &&
      ev->child->next == NULL)
    r = cJSON_IsString(ev->child)
            ? ev->child
            : cJSON_GetObjectItemCaseSensitive(ev->child, "output");
  if (cJSON_IsString(r)) {
    f->response = r->valuestring;
    f->response_len = tally_json_strlen(r);
  }
  return 0;
}

/* The members keys[0..n) of obj in one pass (a summary has a score of
 * members, read a million times): out[i] is the first member called
 * keys[i], or NULL. */
static void pick(const cJSON *obj, const char *const *keys, const cJSON **out,
                 size_t n) {
  for (size_t i = 0; i < n; i++)
    out[i] = NULL;
  if (!cJSON_IsObject(obj))
    return;
  for (const cJSON *m = obj->child; m != NULL; m = m->next)
    for (size_t i = 0; i < n; i++)
      if (out[i] == NULL && m->string[0] == keys[i][0] &&
          strcmp(m->string, keys[i]) == 0) {
        out[i] = m;
        break;
      }
}

int report_add_summary(report_data_t *d, const report_opts_t *o,
                       const char *summary, size_t len, const char *id,
                       const char *const *refusals, size_t nrefusals,
                       const char *job, size_t job_len, char *err,
                       size_t errlen) {
  cJSON *s = cJSON_ParseWithLength(summary, len);
  if (!cJSON_IsObject(s)) {
    cJSON_Delete(s);
    snprintf(err, errlen, "the summary is not a JSON object");
    return TALLY_EJOB;
  }
  static const char *const top[] = {"contest", "participant", "task",
                                    "scored",  "score",       "max_score",
                                    "sample",  "submission"};
  static const char *const in_sample[] = {
      "category",  "correct_threshold", "failure", "preview",
      "extracted", "problem",           "judge"};
  const cJSON *m[8], *sm[7];
  pick(s, top, m, 8);
  pick(m[6], in_sample, sm, 7);
  char b1[64], b2[64], b3[64];
  const char *contest = report_id_text(m[0], b1, sizeof(b1));
  const char *participant = report_id_text(m[1], b2, sizeof(b2));
  const char *task = report_id_text(m[2], b3, sizeof(b3));
  int rc = 0;
  if (participant == NULL || task == NULL) {
    snprintf(err, errlen, "the summary names no participant or task");
    rc = TALLY_EJOB;
    goto done;
  }
  if ((o->contest != NULL &&
       (contest == NULL || strcmp(contest, o->contest) != 0)) ||
      (o->participant != NULL && strcmp(participant, o->participant) != 0))
    goto done;
  if (cJSON_IsFalse(m[3])) {
    d->unscored++;
    goto done;
  }
  const cJSON *score = m[4], *max = m[5];
  if (!cJSON_IsNumber(score) || !cJSON_IsNumber(max)) {
    snprintf(err, errlen, "the summary has no score or max_score");
    rc = TALLY_EJOB;
    goto done;
  }
  const cJSON *cat = sm[0], *thr = sm[1], *fail = sm[2], *prev = sm[3];
  const cJSON *ext = sm[4];
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 1024;
    report_sample_t *grown = realloc(d->samples, cap * sizeof(*grown));
    if (grown == NULL) {
      rc = TALLY_ENOMEM;
      goto done;
    }
    d->samples = grown;
    d->cap = cap;
  }
  report_sample_t *r = &d->samples[d->n];
  memset(r, 0, sizeof(*r));
  r->reward = max->valuedouble > 0 ? score->valuedouble / max->valuedouble : 0;
  double t = cJSON_IsNumber(thr) && thr->valuedouble > 0 ? thr->valuedouble : 1;
  r->correct = r->reward >= t;
  r->failure = failure_index(cJSON_IsString(fail) ? fail->valuestring : NULL);
  static const char *const judged[] = {"judged", "unparseable", "unjudged"};
  for (int k = 0; k < 3 && cJSON_IsString(sm[6]); k++)
    if (strcmp(sm[6]->valuestring, judged[k]) == 0)
      r->judge = (signed char)(k + 1);
  const char *preview = cJSON_IsString(prev) ? prev->valuestring : NULL;
  size_t preview_len = cJSON_IsString(prev) ? tally_json_strlen(prev) : 0;
  cJSON *jroot = NULL;
  if (refusals != NULL && job != NULL) {
    /* The scorer's cause stays: only the response's rules change. */
    tally_sample_facts_t f = {.correct = r->correct,
                              .extracted = cJSON_IsTrue(ext)    ? 1
                                           : cJSON_IsFalse(ext) ? 0
                                                                : -1,
                              .cause = cJSON_IsString(fail) ? fail->valuestring
                                                            : NULL};
    refacts(job, job_len, &f, &jroot);
    const char *name = tally_failure_classify(&f, refusals, nrefusals);
    r->failure = failure_index(name);
    preview = f.response;
    preview_len = f.response != NULL
                      ? tally_failure_preview_len(f.response, f.response_len,
                                                  REPORT_PREVIEW)
                      : 0;
  }
  uint32_t pi = report_intern(&d->participants, participant);
  /* A sample's problem: the one its task's from_job named (within its
   * task: two tasks' problems 0 are two problems), else its task. */
  uint32_t ti = UINT32_MAX;
  if (cJSON_IsString(sm[5])) {
    size_t a = strlen(task), b = strlen(sm[5]->valuestring);
    char *name = malloc(a + b + 2);
    if (name != NULL) {
      memcpy(name, task, a);
      name[a] = '/';
      memcpy(name + a + 1, sm[5]->valuestring, b + 1);
      ti = report_intern(&d->tasks, name);
      free(name);
    }
  } else {
    ti = report_intern(&d->tasks, task);
  }
  uint32_t ci = report_intern(
      &d->categories, cJSON_IsString(cat) ? cat->valuestring : "unknown");
  r->participant = pi;
  r->task = ti;
  r->category = ci;
  if (pi == UINT32_MAX || ti == UINT32_MAX || ci == UINT32_MAX)
    rc = TALLY_ENOMEM;
  char b4[64];
  const char *sid = report_id_text(m[7], b4, sizeof(b4));
  if (rc == 0 && r->failure >= 0) {
    r->id = strdup(sid != NULL ? sid : id);
    r->preview = malloc(preview_len + 1);
    if (r->id == NULL || r->preview == NULL) {
      free(r->id);
      free(r->preview);
      rc = TALLY_ENOMEM;
    } else {
      if (preview_len > 0)
        memcpy(r->preview, preview, preview_len);
      r->preview[preview_len] = '\0';
    }
  }
  cJSON_Delete(jroot);
  if (rc == 0)
    d->n++;
done:
  cJSON_Delete(s);
  return rc;
}
