/* The pushes to CMS's Ranking Web Server (rws.h). */
#include "daemon/rws.h"
#include "daemon/ccs_int.h"
#include "daemon/curluv.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entity types, in the order CMS's ProxyService sends them (a user
 * names its team, a task its contest, a subchange its submission: the
 * server refuses an entity whose reference it does not hold). */
enum { E_CONTEST, E_TEAM, E_USER, E_TASK, E_SUBMISSION, E_SUBCHANGE, NENT };
static const char *const paths[NENT] = {
    "contests/", "teams/", "users/", "tasks/", "submissions/", "subchanges/"};

/* The longest wait between two tries of a server that is away. */
#define RWS_BACKOFF_MAX_MS 60000
/* How long one PUT may take. */
#define RWS_TIMEOUT_MS 30000

typedef struct pending_s {
  char **keys;
  uint64_t *hashes;
  size_t n, cap;
} pending_t;

struct tally_rws_push_s {
  tally_api_t *a;
  char contest[256];
  char *url, *username, *password;
  char *shown;      /* the URL without credentials, for the log */
  ccs_sent_t *sent; /* what the server took: entity key -> data's hash */
  bool keep, reading, busy, stopped, failing;
  int stage;
  tally_buf_t body[NENT];
  pending_t pend[NENT];
  CURL *easy;
  struct curl_slist *headers;
  char errbuf[CURL_ERROR_SIZE];
  uint64_t due, backoff;
  struct tally_rws_push_s *next;
};
typedef struct tally_rws_push_s push_t;

void tally_rws_encode_id(tally_buf_t *b, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p != '\0') {
    unsigned cp = *p;
    int extra = cp >= 0xf0 ? 3 : cp >= 0xe0 ? 2 : cp >= 0xc0 ? 1 : 0;
    if (extra > 0)
      cp &= 0x3fu >> extra;
    p++;
    for (int k = 0; k < extra && (*p & 0xc0) == 0x80; k++, p++)
      cp = (cp << 6) | (*p & 0x3fu);
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
        (cp >= '0' && cp <= '9')) {
      tally_buf_putc(b, (char)cp);
    } else {
      char hex[16];
      snprintf(hex, sizeof(hex), "_%x", cp);
      tally_buf_puts(b, hex);
    }
  }
}

/* A JSON number the server reads as a Python float: with a point. */
static void put_float(tally_buf_t *b, double v) {
  size_t at = b->len;
  tally_json_num(b, v);
  if (b->oom)
    return;
  for (size_t i = at; i < b->len; i++)
    if (b->data[i] == '.' || b->data[i] == 'e' || b->data[i] == 'E')
      return;
  tally_buf_puts(b, ".0");
}

static void put_id(tally_buf_t *b, const char *s) {
  tally_buf_putc(b, '"');
  tally_rws_encode_id(b, s);
  tally_buf_putc(b, '"');
}

static void pending_clear(pending_t *p) {
  for (size_t i = 0; i < p->n; i++)
    free(p->keys[i]);
  p->n = 0;
}

static void push_free(push_t *w) {
  if (w->failing)
    __atomic_sub_fetch(&w->a->rws_failing, 1, __ATOMIC_RELAXED);
  for (int k = 0; k < NENT; k++) {
    pending_clear(&w->pend[k]);
    free(w->pend[k].keys);
    free(w->pend[k].hashes);
    tally_buf_close(&w->body[k]);
  }
  if (w->easy != NULL) {
    curl_multi_remove_handle(w->a->rws_curl.multi, w->easy);
    curl_easy_cleanup(w->easy);
  }
  curl_slist_free_all(w->headers);
  tally__ccs_sent_free(w->sent);
  free(w->url);
  free(w->shown);
  free(w->username);
  free(w->password);
  free(w);
}

/* Adds entity (kind, key, data) to what goes out when the server does not
 * hold it as it is. Returns -1 when out of memory. */
static int offer(push_t *w, int kind, const char *key,
                 const tally_buf_t *data) {
  if (data->oom)
    return -1;
  char full[600];
  snprintf(full, sizeof(full), "%d/%s", kind, key);
  uint64_t h = tally__ccs_hash(data->data, data->len);
  if (tally__ccs_sent_has(w->sent, full, h))
    return 0;
  pending_t *p = &w->pend[kind];
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 64;
    char **keys = realloc(p->keys, cap * sizeof(char *));
    if (keys == NULL)
      return -1;
    p->keys = keys;
    uint64_t *hashes = realloc(p->hashes, cap * sizeof(uint64_t));
    if (hashes == NULL)
      return -1;
    p->hashes = hashes;
    p->cap = cap;
  }
  if ((p->keys[p->n] = strdup(full)) == NULL)
    return -1;
  p->hashes[p->n++] = h;
  tally_buf_t *b = &w->body[kind];
  tally_buf_puts(b, b->len == 0 ? "{" : ",");
  tally_json_str(b, key);
  tally_buf_putc(b, ':');
  tally_buf_put(b, data->data, data->len);
  return b->oom ? -1 : 0;
}

/* Each entity of the contest as the server should hold it. */
static int build(push_t *w, const tally_contest_t *c, ccs_sub_t *subs,
                 size_t nsubs) {
  const tally_api_t *a = w->a;
  const tally_contestset_t *cs = a->contests;
  double freeze = tally__api_freeze_since(a, c, tally__api_now());
  tally_buf_t key, d;
  tally_buf_init(&key);
  tally_buf_init(&d);
  int rc = 0;
  char num[64];
  /* The contest. */
  tally_rws_encode_id(&key, c->name);
  tally_buf_puts(&d, "{\"name\":");
  tally_json_str(&d, c->title);
  snprintf(num, sizeof(num), ",\"begin\":%.0f,\"end\":%.0f", floor(c->start),
           floor(c->end));
  tally_buf_puts(&d, num);
  snprintf(num, sizeof(num), ",\"score_precision\":%d}", c->score_precision);
  tally_buf_puts(&d, num);
  rc |= offer(w, E_CONTEST, tally_buf_text(&key), &d);
  /* Its tasks, with their public maxima (the server shows public scores
   * only). */
  for (size_t i = 0; i < c->ntasks && rc == 0; i++) {
    const tally_task_max_t *m =
        cs != NULL ? tally_contestset_max(cs, c->tasks[i]) : NULL;
    tally_buf_reset(&key);
    tally_buf_reset(&d);
    tally_rws_encode_id(&key, c->tasks[i]);
    tally_buf_puts(&d, "{\"name\":");
    tally_json_str(&d, c->tasks[i]);
    tally_buf_puts(&d, ",\"short_name\":");
    tally_json_str(&d, c->tasks[i]);
    tally_buf_puts(&d, ",\"contest\":");
    put_id(&d, c->name);
    snprintf(num, sizeof(num), ",\"order\":%zu,\"max_score\":", i);
    tally_buf_puts(&d, num);
    put_float(&d, m != NULL ? m->max_public_score : 0);
    tally_buf_puts(&d, ",\"extra_headers\":[");
    for (size_t k = 0; m != NULL && k < m->nheaders; k++) {
      if (k > 0)
        tally_buf_putc(&d, ',');
      tally_json_str(&d, m->headers[k]);
    }
    snprintf(num, sizeof(num), "],\"score_precision\":%d,\"score_mode\":",
             m != NULL ? m->score_precision : 0);
    tally_buf_puts(&d, num);
    tally_json_str(&d, m != NULL ? m->score_mode : "max_subtask");
    tally_buf_putc(&d, '}');
    rc |= offer(w, E_TASK, tally_buf_text(&key), &d);
  }
  /* Teams and users: participants.json's, and everyone who submitted. */
  for (size_t i = 0; cs != NULL && i < cs->nparticipants && rc == 0; i++) {
    const tally_participant_t *p = &cs->participants[i];
    if (p->team != NULL) {
      tally_buf_reset(&key);
      tally_buf_reset(&d);
      tally_rws_encode_id(&key, p->team);
      tally_buf_puts(&d, "{\"name\":");
      tally_json_str(&d, p->team);
      tally_buf_putc(&d, '}');
      rc |= offer(w, E_TEAM, tally_buf_text(&key), &d);
    }
  }
  for (size_t i = 0;
       rc == 0 && i < (cs != NULL ? cs->nparticipants : 0) + nsubs; i++) {
    size_t np = cs != NULL ? cs->nparticipants : 0;
    const char *u = i < np ? cs->participants[i].id : subs[i - np].participant;
    if (i >= np && !tally_contest_has_task(c, subs[i - np].task))
      continue;
    const tally_participant_t *p =
        cs != NULL ? tally_contestset_participant(cs, u) : NULL;
    tally_buf_reset(&key);
    tally_buf_reset(&d);
    tally_rws_encode_id(&key, u);
    tally_buf_puts(&d, "{\"f_name\":");
    tally_json_str(&d, p != NULL && p->name != NULL ? p->name : u);
    tally_buf_puts(&d, ",\"l_name\":\"\",\"team\":");
    if (p != NULL && p->team != NULL)
      put_id(&d, p->team);
    else
      tally_buf_puts(&d, "null");
    tally_buf_putc(&d, '}');
    rc |= offer(w, E_USER, tally_buf_text(&key), &d);
  }
  /* The scored submissions the public may see (none made during a
   * freeze), and their subchanges: the score, then the token. */
  for (size_t i = 0; i < nsubs && rc == 0; i++) {
    const ccs_sub_t *s = &subs[i];
    if (!s->scored || !tally_contest_has_task(c, s->task) ||
        (!isnan(freeze) && !(s->timestamp < freeze)))
      continue;
    long t = (long)floor(s->timestamp);
    tally_buf_reset(&key);
    tally_buf_reset(&d);
    tally_rws_encode_id(&key, s->id);
    tally_buf_puts(&d, "{\"user\":");
    put_id(&d, s->participant);
    tally_buf_puts(&d, ",\"task\":");
    put_id(&d, s->task);
    snprintf(num, sizeof(num), ",\"time\":%ld}", t);
    tally_buf_puts(&d, num);
    rc |= offer(w, E_SUBMISSION, tally_buf_text(&key), &d);
    for (int token = 0; token < 2 && rc == 0; token++) {
      if (token && !s->tokened)
        break;
      tally_buf_reset(&key);
      tally_buf_reset(&d);
      /* The submission and s (its score) or t (its token). CMS puts the
       * time first; tally does not, since a later job of a submission
       * may move its time: the same key is then updated, where a new one
       * would leave the old change in the server's history. */
      tally_rws_encode_id(&key, s->id);
      tally_buf_putc(&key, token ? 't' : 's');
      tally_buf_puts(&d, "{\"submission\":");
      put_id(&d, s->id);
      snprintf(num, sizeof(num), ",\"time\":%ld", t);
      tally_buf_puts(&d, num);
      if (token) {
        tally_buf_puts(&d, ",\"token\":true}");
      } else {
        tally_buf_puts(&d, ",\"score\":");
        put_float(&d, s->public_score);
        tally_buf_puts(&d, ",\"extra\":[");
        cJSON *subtasks =
            s->public_subtasks != NULL ? cJSON_Parse(s->public_subtasks) : NULL;
        const cJSON *v;
        bool first = true;
        cJSON_ArrayForEach(v, subtasks) {
          if (!first)
            tally_buf_putc(&d, ',');
          first = false;
          tally_buf_t one;
          tally_buf_init(&one);
          tally_json_num(&one, cJSON_IsNumber(v) ? v->valuedouble : 0);
          tally_json_str(&d, tally_buf_text(&one));
          tally_buf_close(&one);
        }
        cJSON_Delete(subtasks);
        tally_buf_puts(&d, "]}");
      }
      rc |= offer(w, E_SUBCHANGE, tally_buf_text(&key), &d);
    }
  }
  tally_buf_close(&key);
  tally_buf_close(&d);
  return rc;
}

/* A failed round: tried again after a backoff. clear: the server may have
 * lost what it had (it refused a request, or could not be reached: it may
 * have restarted empty), so the next round sends everything again, which
 * it takes as updates. */
static void retry_later_clear(push_t *w, const char *why, bool clear) {
  ccs_sent_t *fresh = clear ? tally__ccs_sent_new() : NULL;
  if (fresh != NULL) {
    tally__ccs_sent_free(w->sent);
    w->sent = fresh;
  }
  w->backoff = w->backoff == 0 ? 1000 : w->backoff * 2;
  if (w->backoff > RWS_BACKOFF_MAX_MS)
    w->backoff = RWS_BACKOFF_MAX_MS;
  w->due = uv_now(w->a->loop) + w->backoff;
  if (!w->failing)
    __atomic_add_fetch(&w->a->rws_failing, 1, __ATOMIC_RELAXED);
  if (!w->failing)
    tally_log(w->a->log, TALLY_LOG_WARN, "rws",
              "contest %s: the Ranking Web Server at %s: %s; trying again, "
              "every %d s at most",
              w->contest, w->shown, why, RWS_BACKOFF_MAX_MS / 1000);
  w->failing = true;
  for (int k = 0; k < NENT; k++) {
    pending_clear(&w->pend[k]);
    tally_buf_reset(&w->body[k]);
  }
}

static void retry_later(push_t *w, const char *why) {
  retry_later_clear(w, why, false);
}

/* Sends the next entity type that has something, or ends the round. */
static void send_next(push_t *w) {
  while (w->stage < NENT && w->body[w->stage].len == 0)
    w->stage++;
  if (w->stage == NENT) {
    w->busy = false;
    if (w->failing) {
      __atomic_sub_fetch(&w->a->rws_failing, 1, __ATOMIC_RELAXED);
      tally_log(w->a->log, TALLY_LOG_INFO, "rws",
                "contest %s: the Ranking Web Server at %s takes updates "
                "again",
                w->contest, w->shown);
    }
    w->failing = false;
    w->backoff = 0;
    w->due = uv_now(w->a->loop) + 1000;
    return;
  }
  tally_buf_t *b = &w->body[w->stage];
  tally_buf_putc(b, '}');
  char url[1200];
  snprintf(url, sizeof(url), "%s%s", w->url, paths[w->stage]);
  CURL *e = curl_easy_init();
  if (e == NULL || b->oom) {
    if (e != NULL)
      curl_easy_cleanup(e);
    w->busy = false;
    retry_later(w, "out of memory");
    return;
  }
  w->errbuf[0] = '\0';
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, b->data);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->len);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, w->headers);
  curl_easy_setopt(e, CURLOPT_PRIVATE, w);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, w->errbuf);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)RWS_TIMEOUT_MS);
  if (w->username != NULL) {
    curl_easy_setopt(e, CURLOPT_USERNAME, w->username);
    curl_easy_setopt(e, CURLOPT_PASSWORD, w->password);
  }
  curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
  if (curl_multi_add_handle(w->a->rws_curl.multi, e) != CURLM_OK) {
    curl_easy_cleanup(e);
    w->busy = false;
    retry_later(w, "libcurl refused the request");
    return;
  }
  w->easy = e;
}

static void on_read(ccs_read_t *rd) {
  push_t *w = rd->owner;
  w->reading = false;
  const tally_contest_t *c = tally__api_config_of_name(w->a, w->contest);
  if (w->stopped) {
    tally__ccs_read_free(rd);
    free(rd);
    push_free(w);
    return;
  }
  if (rd->failed) {
    retry_later(w, rd->why);
  } else if (c != NULL) {
    for (int k = 0; k < NENT; k++) {
      pending_clear(&w->pend[k]);
      tally_buf_reset(&w->body[k]);
    }
    if (build(w, c, rd->subs, rd->nsubs) != 0) {
      retry_later(w, "out of memory");
    } else {
      w->busy = true;
      w->stage = 0;
      send_next(w);
    }
  }
  tally__ccs_read_free(rd);
  free(rd);
}

static void on_done(tally_curluv_t *u, void *easy, int code) {
  (void)u;
  push_t *w = NULL;
  curl_easy_getinfo((CURL *)easy, CURLINFO_PRIVATE, (char **)&w);
  long status = 0;
  curl_easy_getinfo((CURL *)easy, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(w->a->rws_curl.multi, easy);
  curl_easy_cleanup(easy);
  w->easy = NULL;
  char why[300];
  if (code != CURLE_OK) {
    snprintf(why, sizeof(why), "%.200s",
             w->errbuf[0] != '\0' ? w->errbuf
                                  : curl_easy_strerror((CURLcode)code));
  } else if (status < 200 || status >= 300) {
    snprintf(why, sizeof(why), "PUT %s answered HTTP %ld%s", paths[w->stage],
             status,
             status == 401   ? " (the username or password is wrong)"
             : status == 400 ? " (it refused the data)"
                             : "");
  } else {
    /* Taken: what was sent is what the server holds. */
    __atomic_add_fetch(&w->a->rws_taken, 1, __ATOMIC_RELAXED);
    pending_t *p = &w->pend[w->stage];
    for (size_t i = 0; i < p->n; i++)
      if (tally__ccs_sent_put(w->sent, p->keys[i], p->hashes[i]) != 0) {
        w->busy = false;
        retry_later(w, "out of memory");
        return;
      }
    pending_clear(p);
    tally_buf_reset(&w->body[w->stage]);
    w->stage++;
    send_next(w);
    return;
  }
  __atomic_add_fetch(&w->a->rws_failed, 1, __ATOMIC_RELAXED);
  w->busy = false;
  retry_later_clear(w, why,
                    code != CURLE_OK || (status >= 400 && status < 500));
}

static push_t *push_new(tally_api_t *a, const char *contest,
                        const tally_rws_target_t *t) {
  push_t *w = calloc(1, sizeof(*w));
  if (w == NULL)
    return NULL;
  w->a = a;
  snprintf(w->contest, sizeof(w->contest), "%s", contest);
  w->url = strdup(t->url);
  /* The log shows the URL without the user information it may hold. */
  w->shown = strdup(t->url);
  char *host = w->shown != NULL ? strstr(w->shown, "://") : NULL;
  if (host != NULL) {
    host += 3;
    char *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (at != NULL && (slash == NULL || at < slash))
      memmove(host, at + 1, strlen(at + 1) + 1);
  }
  w->username = t->username != NULL ? strdup(t->username) : NULL;
  w->password = t->password != NULL ? strdup(t->password) : NULL;
  w->sent = tally__ccs_sent_new();
  w->headers = curl_slist_append(NULL, "Content-Type: application/json");
  for (int k = 0; k < NENT; k++)
    tally_buf_init(&w->body[k]);
  if (w->url == NULL || w->shown == NULL || w->sent == NULL ||
      w->headers == NULL ||
      (t->username != NULL && (w->username == NULL || w->password == NULL))) {
    push_free(w);
    return NULL;
  }
  return w;
}

static bool same_text(const char *x, const char *y) {
  return x == NULL ? y == NULL : y != NULL && strcmp(x, y) == 0;
}

/* Whether w pushes contest to t as configured now (a reload that changes
 * the credentials starts a new push). */
static bool same_target(const push_t *w, const char *contest,
                        const tally_rws_target_t *t) {
  return strcmp(w->contest, contest) == 0 && strcmp(w->url, t->url) == 0 &&
         same_text(w->username, t->username) &&
         same_text(w->password, t->password);
}

void tally_rws_tick(tally_api_t *a) {
  if (a->closing)
    return;
  const tally_contestset_t *cs = a->contests;
  for (push_t *w = a->rws; w != NULL; w = w->next)
    w->keep = false;
  for (size_t i = 0; cs != NULL && i < cs->count; i++) {
    const tally_contest_t *c = &cs->contests[i];
    for (size_t k = 0; k < c->nrws; k++) {
      push_t *w = a->rws;
      while (w != NULL && !same_target(w, c->name, &c->rws[k]))
        w = w->next;
      if (w == NULL && (w = push_new(a, c->name, &c->rws[k])) != NULL) {
        w->next = a->rws;
        a->rws = w;
        tally_log(a->log, TALLY_LOG_INFO, "rws",
                  "contest %s: pushed to the Ranking Web Server at %s", c->name,
                  w->shown);
      }
      if (w != NULL)
        w->keep = true;
    }
  }
  uint64_t now = uv_now(a->loop);
  for (push_t **pw = &a->rws; *pw != NULL;) {
    push_t *w = *pw;
    if (!w->keep && !w->busy) {
      *pw = w->next;
      if (w->reading)
        w->stopped = true; /* freed when its read is in */
      else
        push_free(w);
      continue;
    }
    pw = &w->next;
    if (w->reading || w->busy || now < w->due)
      continue;
    ccs_read_t *rd = calloc(1, sizeof(*rd));
    if (rd == NULL)
      continue;
    rd->a = a;
    snprintf(rd->contest, sizeof(rd->contest), "%s", w->contest);
    rd->done = on_read;
    rd->owner = w;
    w->reading = true;
    tally__ccs_read_start(rd);
  }
}

static void on_after(tally_curluv_t *u) {
  tally_api_t *a = u->data;
  if (tally_curluv_closed(u) && !a->rws_closed) {
    a->rws_closed = true;
    tally__api_handle_closed(a);
  }
}

int tally_rws_init(tally_api_t *a) {
  a->rws = NULL;
  a->rws_closed = false;
  a->rws_curl.done = on_done;
  a->rws_curl.after = on_after;
  a->rws_curl.data = a;
  return tally_curluv_init(a->loop, &a->rws_curl);
}

void tally_rws_stop(tally_api_t *a) {
  while (a->rws != NULL) {
    push_t *w = a->rws;
    a->rws = w->next;
    if (w->reading)
      w->stopped = true;
    else
      push_free(w);
  }
  tally_curluv_close(&a->rws_curl);
}
