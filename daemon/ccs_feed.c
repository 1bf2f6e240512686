/* The CCS Contest API's event feed (ccs_int.h): every object of a
 * contest as a notification, in feed order, and what an open feed has
 * sent, so that it sends each object again only when it changed. */
#include "daemon/ccs_int.h"

#include "config/hash.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an open feed has sent: (type, id) -> the hash of the data sent,
 * in an open-addressing table. */
typedef struct {
  char *key; /* "type\x1fid", or NULL: empty */
  uint64_t hash;
} slot_t;

struct ccs_sent_s {
  slot_t *slots;
  size_t cap, n;
};

ccs_sent_t *tally__ccs_sent_new(void) {
  ccs_sent_t *s = calloc(1, sizeof(*s));
  if (s != NULL && (s->slots = calloc(64, sizeof(slot_t))) == NULL) {
    free(s);
    return NULL;
  }
  if (s != NULL)
    s->cap = 64;
  return s;
}

void tally__ccs_sent_free(ccs_sent_t *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->cap; i++)
    free(s->slots[i].key);
  free(s->slots);
  free(s);
}

static slot_t *find(ccs_sent_t *s, const char *key) {
  size_t i = (size_t)tally_fnv1a(key, strlen(key)) & (s->cap - 1);
  while (s->slots[i].key != NULL && strcmp(s->slots[i].key, key) != 0)
    i = (i + 1) & (s->cap - 1);
  return &s->slots[i];
}

static int grow(ccs_sent_t *s) {
  ccs_sent_t bigger = {calloc(s->cap * 2, sizeof(slot_t)), s->cap * 2, 0};
  if (bigger.slots == NULL)
    return -1;
  for (size_t i = 0; i < s->cap; i++)
    if (s->slots[i].key != NULL)
      *find(&bigger, s->slots[i].key) = s->slots[i];
  free(s->slots);
  s->slots = bigger.slots;
  s->cap = bigger.cap;
  return 0;
}

uint64_t tally__ccs_hash(const char *data, size_t n) {
  return tally_fnv1a(data, n);
}

bool tally__ccs_sent_has(ccs_sent_t *s, const char *key, uint64_t hash) {
  const slot_t *slot = find(s, key);
  return slot->key != NULL && slot->hash == hash;
}

int tally__ccs_sent_put(ccs_sent_t *s, const char *key, uint64_t hash) {
  slot_t *slot = find(s, key);
  if (slot->key != NULL) {
    slot->hash = hash;
    return 0;
  }
  if ((s->n + 1) * 2 > s->cap) {
    if (grow(s) != 0)
      return -1;
    slot = find(s, key);
  }
  if ((slot->key = strdup(key)) == NULL)
    return -1;
  slot->hash = hash;
  s->n++;
  return 0;
}

/* Whether (key, data) is news to s; records it. -1: out of memory. */
static int news(ccs_sent_t *s, const char *key, const char *data, size_t n) {
  uint64_t h = tally_fnv1a(data, n);
  if (tally__ccs_sent_has(s, key, h))
    return 0;
  return tally__ccs_sent_put(s, key, h) != 0 ? -1 : 1;
}

typedef struct {
  const ccs_model_t *m;
  ccs_sent_t *sent;
  tally_buf_t *b;
  tally_buf_t one;
  int rc;
} feed_t;

/* One notification: type, id (NULL: null), the data in f->one, and a
 * token (or NULL). */
static void emit(feed_t *f, const char *type, const char *id,
                 const char *token) {
  if (f->rc != 0)
    return;
  if (f->one.oom) {
    f->rc = -1;
    return;
  }
  if (f->sent != NULL) {
    char k[200];
    snprintf(k, sizeof(k), "%s\x1f%s", type, id != NULL ? id : "");
    int r = news(f->sent, k, f->one.data, f->one.len);
    if (r <= 0) {
      f->rc = r;
      return;
    }
  }
  tally_buf_t *b = f->b;
  tally_buf_puts(b, "{\"type\":");
  tally_json_str(b, type);
  tally_buf_puts(b, ",\"id\":");
  if (id != NULL)
    tally_json_str(b, id);
  else
    tally_buf_puts(b, "null");
  tally_buf_puts(b, ",\"data\":");
  tally_buf_put(b, f->one.data, f->one.len);
  if (token != NULL) {
    tally_buf_puts(b, ",\"token\":");
    tally_json_str(b, token);
  }
  tally_buf_puts(b, "}\n");
}

/* Each object of a collection endpoint, one event each. */
static void each(feed_t *f, int kind, const char *type) {
  tally_buf_t all;
  tally_buf_init(&all);
  tally__ccs_answer(f->m, kind, NULL, &all);
  cJSON *list = cJSON_ParseWithLength(all.data, all.len);
  tally_buf_close(&all);
  if (list == NULL) {
    f->rc = -1;
    return;
  }
  const cJSON *item;
  cJSON_ArrayForEach(item, list) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
    char *text = cJSON_PrintUnformatted(item);
    if (text == NULL || !cJSON_IsString(id)) {
      free(text);
      f->rc = -1;
      break;
    }
    tally_buf_reset(&f->one);
    tally_buf_puts(&f->one, text);
    free(text);
    emit(f, type, id->valuestring, NULL);
  }
  cJSON_Delete(list);
}

/* A singleton endpoint's object as one event with id null. */
static void single(feed_t *f, int kind, const char *type) {
  tally_buf_reset(&f->one);
  tally__ccs_answer(f->m, kind, NULL, &f->one);
  /* The answer ends with a newline; the event holds the object only. */
  if (f->one.len > 0 && f->one.data[f->one.len - 1] == '\n')
    f->one.data[--f->one.len] = '\0';
  emit(f, type, NULL, NULL);
}

static bool after(const ccs_sub_t *s, unsigned long long ms,
                  unsigned long long seq) {
  return s->ems > ms || (s->ems == ms && s->eseq > seq);
}

int tally__ccs_feed(const ccs_model_t *m, ccs_sent_t *sent, bool has_since,
                    unsigned long long since_ms, unsigned long long since_seq,
                    tally_buf_t *b) {
  feed_t f = {m, sent, b, {0}, 0};
  tally_buf_init(&f.one);
  if (!has_since) {
    single(&f, CCS_CONTEST, "contest");
    each(&f, CCS_JTYPES, "judgement-types");
    each(&f, CCS_LANGUAGES, "languages");
    each(&f, CCS_PROBLEMS, "problems");
    tally_buf_reset(&f.one);
    tally_buf_puts(&f.one, "[]");
    emit(&f, "groups", NULL, NULL);
    each(&f, CCS_ORGS, "organizations");
    each(&f, CCS_TEAMS, "teams");
  }
  single(&f, CCS_STATE, "state");
  /* The submissions in the order tally judged them, each with the token
   * of its result's entry; its judgement after it, once it may be
   * shown. */
  for (size_t i = 0; i < m->nsubs && f.rc == 0; i++) {
    const ccs_sub_t *s = &m->subs[i];
    if (has_since && !after(s, since_ms, since_seq))
      continue;
    char token[48], id[CCS_ID_MAX + 1];
    snprintf(token, sizeof(token), "%llu-%llu", s->ems, s->eseq);
    tally__ccs_id(s->id, id);
    tally_buf_reset(&f.one);
    tally__ccs_put_submission(m, &f.one, s);
    emit(&f, "submissions", id, token);
    if (tally__ccs_judged_visible(m, s)) {
      tally_buf_reset(&f.one);
      tally__ccs_put_judgement(m, &f.one, s);
      emit(&f, "judgements", id, token);
    }
  }
  each(&f, CCS_AWARDS, "awards");
  tally_buf_close(&f.one);
  if (b->oom)
    f.rc = -1;
  return f.rc;
}
