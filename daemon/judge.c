/* tallyd's judge client: a queue of requests in front of libcurl's multi
 * interface on the loop (daemon/curluv.h) (daemon/judge.h). */
#include "daemon/judge.h"
#include "config/error.h"
#include "config/jsonw.h"
#include "config/utext.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* A reply larger than this is refused (and retried). */
#define REPLY_MAX (8u << 20)

typedef struct flight_s flight_t;

/* A caller's request: one of the tickets of a flight. */
struct tally_judge_req_s {
  flight_t *f;
  tally_judge_req_t *prev, *next; /* in f->tickets */
  tally_judge_cb cb;
  void *data;
};

/* One prompt's request to the judge, and the callers waiting for it. */
struct flight_s {
  tally_judge_client_t *c;
  tally_judge_req_t *tickets;
  flight_t *hnext; /* in c->by_key */
  char key[72];    /* "" when asked without one */
  bool delivering;
  flight_t *prev, *next; /* in c->waiting, or among the active */
  CURL *easy;            /* while in flight */
  char *body;
  size_t body_len;
  char *reply;
  size_t reply_len, reply_cap;
  bool too_big;
  uint64_t due;        /* loop time at which it may start */
  unsigned attempt;    /* attempts started */
  int64_t retry_after; /* ms, from the last answer's Retry-After; -1 */
  char last[200];      /* why the last attempt failed */
  char label[96];      /* what the log calls it */
  char errbuf[CURL_ERROR_SIZE];
};

#define BUCKETS 4096

static flight_t **bucket(tally_judge_client_t *c, const char *key) {
  unsigned h = 5381;
  for (const char *p = key; *p; p++)
    h = h * 33 + (unsigned char)*p;
  return &c->by_key[h % BUCKETS];
}

static void unhash(tally_judge_client_t *c, flight_t *f) {
  if (f->key[0] == '\0')
    return;
  for (flight_t **p = bucket(c, f->key); *p != NULL; p = &(*p)->hnext)
    if (*p == f) {
      *p = f->hnext;
      break;
    }
}

static void pump(tally_judge_client_t *c);

static void unlink_req(flight_t **head, flight_t **tail, flight_t *r) {
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    *head = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  else
    *tail = r->prev;
  r->prev = r->next = NULL;
}

static void push_req(flight_t **head, flight_t **tail, flight_t *r) {
  r->prev = *tail;
  r->next = NULL;
  if (*tail != NULL)
    (*tail)->next = r;
  else
    *head = r;
  *tail = r;
}

static void push_waiting(tally_judge_client_t *c, flight_t *r) {
  push_req(&c->waiting, &c->waiting_tail, r);
}

static void unlink_waiting(tally_judge_client_t *c, flight_t *r) {
  unlink_req(&c->waiting, &c->waiting_tail, r);
}

static void req_free(flight_t *r) {
  if (r == NULL)
    return;
  free(r->body);
  free(r->reply);
  free(r);
}

/* One attempt. */

static size_t on_write(char *p, size_t size, size_t n, void *data) {
  flight_t *r = data;
  size_t len = size * n;
  if (r->reply_len + len > REPLY_MAX) {
    r->too_big = true;
    return 0;
  }
  if (r->reply_len + len + 1 > r->reply_cap) {
    size_t cap = r->reply_cap ? r->reply_cap : 4096;
    while (cap < r->reply_len + len + 1)
      cap *= 2;
    char *grown = realloc(r->reply, cap);
    if (grown == NULL)
      return 0;
    r->reply = grown;
    r->reply_cap = cap;
  }
  memcpy(r->reply + r->reply_len, p, len);
  r->reply_len += len;
  r->reply[r->reply_len] = '\0';
  return len;
}

/* Retry-After: a number of seconds, or an HTTP date. */
static size_t on_header(char *p, size_t size, size_t n, void *data) {
  flight_t *r = data;
  size_t len = size * n;
  static const char name[] = "retry-after:";
  if (len > sizeof(name) - 1 && len < 200 &&
      strncasecmp(p, name, sizeof(name) - 1) == 0) {
    char v[200];
    memcpy(v, p + sizeof(name) - 1, len - (sizeof(name) - 1));
    v[len - (sizeof(name) - 1)] = '\0';
    char *s = v;
    while (*s == ' ' || *s == '\t')
      s++;
    size_t e = strlen(s);
    while (e > 0 && (s[e - 1] == '\r' || s[e - 1] == '\n' || s[e - 1] == ' '))
      s[--e] = '\0';
    char *end;
    double secs = strtod(s, &end);
    if (end != s && *end == '\0' && secs >= 0 && secs < 1e7) {
      r->retry_after = (int64_t)(secs * 1000);
    } else {
      time_t at = curl_getdate(s, NULL);
      if (at != -1) {
        double d = difftime(at, time(NULL));
        r->retry_after = d > 0 ? (int64_t)(d * 1000) : 0;
      }
    }
  }
  return len;
}

static void start(tally_judge_client_t *c, flight_t *r) {
  r->attempt++;
  r->reply_len = 0;
  r->too_big = false;
  r->retry_after = -1;
  r->errbuf[0] = '\0';
  CURL *e = curl_easy_init();
  if (e == NULL) {
    snprintf(r->last, sizeof(r->last), "out of memory");
    r->due = uv_now(c->loop) + c->opt.backoff_ms;
    push_waiting(c, r);
    return;
  }
  curl_easy_setopt(e, CURLOPT_URL, c->endpoint);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, (struct curl_slist *)c->headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(e, CURLOPT_PRIVATE, r);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->opt.timeout_ms);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->opt.timeout_ms);
  r->easy = e;
  c->active++;
  push_req(&c->running, &c->running_tail, r);
  if (curl_multi_add_handle(c->u.multi, e) != CURLM_OK) {
    unlink_req(&c->running, &c->running_tail, r);
    curl_easy_cleanup(e);
    r->easy = NULL;
    c->active--;
    snprintf(r->last, sizeof(r->last), "libcurl refused the request");
    r->due = uv_now(c->loop) + c->opt.backoff_ms;
    push_waiting(c, r);
  }
}

/* s (n bytes) as valid UTF-8, each invalid byte U+FFFD (a lone surrogate
 * escaped in the JSON decodes to bytes that are not UTF-8, which a job
 * may not hold), in a new buffer; NULL when out of memory. */
static char *valid_utf8(const char *s, size_t n, size_t *out_len) {
  if (tally_utext_invalid_at(s, n) == n) {
    *out_len = n;
    return strndup(s, n);
  }
  char *out = malloc(3 * n + 1);
  if (out == NULL)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    size_t at = i;
    int32_t c = tally_utext_next(s, n, &i);
    if (c == 0xfffd &&
        !(i - at == 3 && memcmp(s + at, "\xef\xbf\xbd", 3) == 0)) {
      memcpy(out + k, "\xef\xbf\xbd", 3);
      k += 3;
    } else {
      memcpy(out + k, s + at, i - at);
      k += i - at;
    }
  }
  out[k] = '\0';
  *out_len = k;
  return out;
}

/* The content of a chat completion's first choice, or NULL. */
static char *content_of(const char *body, size_t len, size_t *out_len) {
  cJSON *v = cJSON_ParseWithLength(body, len);
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(v, "choices");
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(
      cJSON_IsArray(ch) ? ch->child : NULL, "message");
  const cJSON *ct = cJSON_GetObjectItemCaseSensitive(msg, "content");
  char *out = NULL;
  if (cJSON_IsString(ct))
    out = valid_utf8(ct->valuestring, strlen(ct->valuestring), out_len);
  cJSON_Delete(v);
  return out;
}

/* Calls every caller of flight r back, and frees it. */
static void deliver(tally_judge_client_t *c, flight_t *r, const char *reply,
                    size_t len, const char *error) {
  if (reply != NULL)
    c->answered++;
  else
    c->failed++;
  unhash(c, r);
  r->delivering = true;
  tally_judge_req_t *t;
  while ((t = r->tickets) != NULL) {
    r->tickets = t->next;
    if (t->next != NULL)
      t->next->prev = NULL;
    t->cb(t->data, reply, len, error);
    free(t);
  }
  req_free(r);
}

/* An attempt ended with code (libcurl's) and HTTP status. */
static void finished(tally_judge_client_t *c, flight_t *r, CURLcode code) {
  long status = 0;
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(c->u.multi, r->easy);
  curl_easy_cleanup(r->easy);
  r->easy = NULL;
  c->active--;
  unlink_req(&c->running, &c->running_tail, r);
  bool retry = true;
  if (code != CURLE_OK) {
    snprintf(r->last, sizeof(r->last), "%.150s",
             r->too_big          ? "the reply is larger than 8 MiB"
             : r->errbuf[0] != 0 ? r->errbuf
                                 : curl_easy_strerror(code));
  } else if (status >= 200 && status < 300) {
    size_t n = 0;
    char *content = content_of(r->reply ? r->reply : "", r->reply_len, &n);
    if (content != NULL) {
      deliver(c, r, content, n, NULL);
      free(content);
      return;
    }
    snprintf(r->last, sizeof(r->last),
             "HTTP %ld, but the body is not a chat completion with "
             "choices[0].message.content",
             status);
  } else {
    retry = status == 429 || status == 408 || (status >= 500 && status < 600);
    snprintf(r->last, sizeof(r->last), "HTTP %ld", status);
  }
  if (!retry || r->attempt >= c->opt.attempts) {
    char why[400];
    snprintf(why, sizeof(why), "the judge was asked %u time%s; the last: %s",
             r->attempt, r->attempt == 1 ? "" : "s", r->last);
    deliver(c, r, NULL, 0, why);
    return;
  }
  uint64_t wait = c->opt.backoff_ms;
  for (unsigned i = 1; i < r->attempt && wait < c->opt.backoff_max_ms; i++)
    wait *= 2;
  if (r->retry_after >= 0)
    wait = (uint64_t)r->retry_after;
  if (wait > c->opt.backoff_max_ms)
    wait = c->opt.backoff_max_ms;
  c->retried++;
  tally_log(c->opt.log, TALLY_LOG_INFO, "judge.retry",
            "%s: the judge's attempt %u failed (%s); again in %llu ms",
            r->label, r->attempt, r->last, (unsigned long long)wait);
  r->due = uv_now(c->loop) + wait;
  push_waiting(c, r);
}

/* curluv's callbacks: a transfer finished; a turn ended (or the last
 * handle closed). */
static void on_done(tally_curluv_t *u, void *easy, int code) {
  flight_t *r = NULL;
  curl_easy_getinfo((CURL *)easy, CURLINFO_PRIVATE, (char **)&r);
  finished(u->data, r, (CURLcode)code);
}

static void on_after(tally_curluv_t *u) {
  pump(u->data);
}

static void on_wake(uv_timer_t *t) {
  pump(t->data);
}

/* Starts what is due, while there is room, and wakes for the next. */
static void pump(tally_judge_client_t *c) {
  if (c->closing) {
    if (c->closing_handles == 0 && tally_curluv_closed(&c->u) &&
        c->close_cb != NULL) {
      void (*cb)(tally_judge_client_t *) = c->close_cb;
      c->close_cb = NULL;
      cb(c);
    }
    return;
  }
  uint64_t now = uv_now(c->loop), next = UINT64_MAX;
  flight_t *r = c->waiting;
  while (r != NULL && c->active < c->opt.concurrency) {
    flight_t *after = r->next;
    if (r->due <= now) {
      unlink_waiting(c, r);
      start(c, r);
    } else if (r->due < next) {
      next = r->due;
    }
    r = after;
  }
  uv_timer_stop(&c->wake);
  if (next != UINT64_MAX && c->active < c->opt.concurrency)
    uv_timer_start(&c->wake, on_wake, next - now, 0);
}

int tally_judge_client_init(uv_loop_t *loop, tally_judge_client_t *c,
                            const tally_judge_options_t *opt, char *err,
                            size_t errlen) {
  memset(c, 0, sizeof(*c));
  c->loop = loop;
  c->opt = *opt;
  if (c->opt.concurrency == 0)
    c->opt.concurrency = 1;
  if (c->opt.attempts == 0)
    c->opt.attempts = 1;
  if (opt->url == NULL || (strncmp(opt->url, "http://", 7) != 0 &&
                           strncmp(opt->url, "https://", 8) != 0)) {
    snprintf(err, errlen, "--judge-url: must be an http:// or https:// URL");
    return TALLY_EINVAL;
  }
  static const char tail[] = "/chat/completions";
  size_t n = strlen(opt->url);
  while (n > 0 && opt->url[n - 1] == '/')
    n--;
  bool whole =
      n >= sizeof(tail) - 1 &&
      memcmp(opt->url + n - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0;
  c->endpoint = malloc(n + sizeof(tail));
  if (c->endpoint == NULL) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  memcpy(c->endpoint, opt->url, n);
  memcpy(c->endpoint + n, whole ? "" : tail, whole ? 1 : sizeof(tail));
  struct curl_slist *h =
      curl_slist_append(NULL, "Content-Type: application/json");
  if (h != NULL && opt->key != NULL) {
    size_t kl = strlen(opt->key);
    char *auth = malloc(kl + 32);
    struct curl_slist *h2 = NULL;
    if (auth != NULL) {
      snprintf(auth, kl + 32, "Authorization: Bearer %s", opt->key);
      h2 = curl_slist_append(h, auth);
      memset(auth, 0, kl + 32);
      free(auth);
    }
    if (h2 == NULL) {
      curl_slist_free_all(h);
      h = NULL;
    }
  }
  c->by_key = calloc(BUCKETS, sizeof(*c->by_key));
  if (h == NULL || c->by_key == NULL || tally_curluv_init(loop, &c->u) != 0) {
    free(c->by_key);
    curl_slist_free_all(h);
    free(c->endpoint);
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  c->headers = h;
  c->u.done = on_done;
  c->u.after = on_after;
  c->u.data = c;
  uv_timer_init(loop, &c->wake);
  c->wake.data = c;
  return 0;
}

/* Adds a caller to flight f. */
static tally_judge_req_t *ticket(flight_t *f, tally_judge_cb cb, void *data) {
  tally_judge_req_t *t = calloc(1, sizeof(*t));
  if (t == NULL)
    return NULL;
  t->f = f;
  t->cb = cb;
  t->data = data;
  t->next = f->tickets;
  if (t->next != NULL)
    t->next->prev = t;
  f->tickets = t;
  return t;
}

tally_judge_req_t *tally_judge_ask(tally_judge_client_t *c, const char *key,
                                   const char *label, const char *system,
                                   const char *prompt, tally_judge_cb cb,
                                   void *data) {
  if (c->closing)
    return NULL;
  if (key != NULL)
    for (flight_t *f = *bucket(c, key); f != NULL; f = f->hnext)
      if (strcmp(f->key, key) == 0)
        return ticket(f, cb, data);
  flight_t *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return NULL;
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, "{\"model\":");
  tally_json_str(&b, c->opt.model);
  tally_buf_puts(&b, ",\"messages\":[");
  if (system != NULL) {
    tally_buf_puts(&b, "{\"role\":\"system\",\"content\":");
    tally_json_str(&b, system);
    tally_buf_puts(&b, "},");
  }
  tally_buf_puts(&b, "{\"role\":\"user\",\"content\":");
  tally_json_str(&b, prompt);
  tally_buf_puts(&b, "}]}");
  tally_judge_req_t *t = b.oom ? NULL : ticket(r, cb, data);
  if (t == NULL) {
    tally_buf_close(&b);
    free(r);
    return NULL;
  }
  r->body = b.data; /* the buffer's memory, now the request's */
  r->body_len = b.len;
  snprintf(r->label, sizeof(r->label), "%s", label);
  r->c = c;
  r->due = uv_now(c->loop);
  if (key != NULL) {
    snprintf(r->key, sizeof(r->key), "%s", key);
    flight_t **h = bucket(c, key);
    r->hnext = *h;
    *h = r;
  }
  c->asked++;
  push_waiting(c, r);
  /* Started on the next turn of the loop, so that cb never runs inside
   * this call. */
  uv_timer_stop(&c->wake);
  uv_timer_start(&c->wake, on_wake, 0, 0);
  return t;
}

/* Drops flight r, asked or not. */
static void drop(tally_judge_client_t *c, flight_t *r) {
  if (r->easy != NULL) {
    curl_multi_remove_handle(c->u.multi, r->easy);
    curl_easy_cleanup(r->easy);
    r->easy = NULL;
    c->active--;
    unlink_req(&c->running, &c->running_tail, r);
  } else {
    unlink_waiting(c, r);
  }
  unhash(c, r);
  while (r->tickets != NULL) {
    tally_judge_req_t *t = r->tickets;
    r->tickets = t->next;
    free(t);
  }
  req_free(r);
}

void tally_judge_cancel(tally_judge_client_t *c, tally_judge_req_t *t) {
  flight_t *r = t->f;
  if (t->prev != NULL)
    t->prev->next = t->next;
  else
    r->tickets = t->next;
  if (t->next != NULL)
    t->next->prev = t->prev;
  free(t);
  if (r->tickets != NULL || r->delivering)
    return;
  drop(c, r);
  if (!c->closing)
    pump(c);
}

unsigned tally_judge_pending(const tally_judge_client_t *c) {
  unsigned n = c->active;
  for (const flight_t *r = c->waiting; r != NULL; r = r->next)
    n++;
  return n;
}

static void on_timer_closed(uv_handle_t *h) {
  tally_judge_client_t *c = h->data;
  c->closing_handles--;
  pump(c);
}

void tally_judge_client_close(tally_judge_client_t *c,
                              void (*cb)(tally_judge_client_t *)) {
  c->closing = true;
  c->close_cb = cb;
  while (c->waiting != NULL)
    drop(c, c->waiting);
  while (c->running != NULL)
    drop(c, c->running);
  free(c->by_key);
  c->by_key = NULL;
  curl_slist_free_all(c->headers);
  c->headers = NULL;
  free(c->endpoint);
  c->endpoint = NULL;
  c->closing_handles++;
  uv_close((uv_handle_t *)&c->wake, on_timer_closed);
  tally_curluv_close(&c->u);
}
