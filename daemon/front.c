/* The HTTP side of tallyd (front.h): its own loop and thread at nice 19,
 * the listener and the results API on it, and the hand-over of requests
 * and configs between it and the main loop. */
#include "daemon/front.h"

#include "config/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The HTTP thread's nice value
 * (docs/architecture.md#http-on-a-thread-of-its-own). */
#define FRONT_NICE 19

struct tally_front_configs_s {
  tally_contestset_t contests;
  tally_scoring_t scoring;
};

static bool ops_path(const char *path) {
  return strcmp(path, "/metrics") == 0 || strcmp(path, "/healthz") == 0 ||
         strcmp(path, "/readyz") == 0;
}

/* Requests wait in singly linked lists through r->data, which is the
 * handler's, and the API never sees these. */
static void push(tally_http_req_t **list, tally_http_req_t *r) {
  r->data = *list;
  *list = r;
}

static void plain(tally_http_req_t *r, unsigned status, const char *text) {
  r->reply.status = status;
  r->reply.type = NULL;
  tally_buf_reset(&r->reply.body);
  tally_buf_puts(&r->reply.body, text);
}

/* On the HTTP loop: the operator's paths go to the main loop; the API
 * answers its own; anything else is not found. */
static bool handle(tally_http_t *h, tally_http_req_t *r) {
  tally_front_t *f = h->data;
  if (ops_path(r->path)) {
    uv_mutex_lock(&f->lock);
    bool refused = f->refuse;
    if (!refused)
      push(&f->inbox, r);
    uv_mutex_unlock(&f->lock);
    if (refused) {
      plain(r, 503, "tallyd is stopping\n");
      return true;
    }
    uv_async_send(&f->to_main);
    return false;
  }
  int api = f->api_up ? tally_api_route(&f->api, r) : 0;
  if (api != 0)
    return api == 1;
  plain(r, 404, "not found: tallyd serves /metrics, /healthz and /readyz\n");
  return true;
}

/* On the main loop: the requests waiting for it, answered. */
static void answer_inbox(tally_front_t *f) {
  uv_mutex_lock(&f->lock);
  tally_http_req_t *list = f->inbox;
  f->inbox = NULL;
  uv_mutex_unlock(&f->lock);
  if (list == NULL)
    return;
  tally_http_req_t *last = list;
  for (tally_http_req_t *r = list; r != NULL; r = r->data) {
    tally_ops_answer(f->ops, r->path, &r->reply);
    last = r;
  }
  uv_mutex_lock(&f->lock);
  last->data = f->done;
  f->done = list;
  uv_mutex_unlock(&f->lock);
}

static void on_main_closed(uv_handle_t *hd) {
  tally_front_t *f = hd->data;
  if (f->configs != NULL) {
    tally_contestset_close(&f->configs->contests);
    tally_scoring_close(&f->configs->scoring);
    free(f->configs);
    f->configs = NULL;
  }
  uv_mutex_destroy(&f->lock);
  if (f->close_cb != NULL)
    f->close_cb(f);
}

/* The HTTP loop has no handle left: its memory goes, and so does main's
 * end of the pipe. */
static void after_thread(tally_front_t *f) {
  uv_loop_close(&f->hloop);
  tally_contestset_close(&f->contests);
  tally_scoring_close(&f->scoring);
  uv_close((uv_handle_t *)&f->to_main, on_main_closed);
}

static void on_to_main(uv_async_t *a) {
  tally_front_t *f = a->data;
  uv_mutex_lock(&f->lock);
  bool ended = f->ended;
  uv_mutex_unlock(&f->lock);
  if (!ended) {
    answer_inbox(f);
    /* Once closing, the HTTP loop has been told, and may be gone. */
    if (!f->closing_main)
      uv_async_send(&f->to_front);
    return;
  }
  uv_thread_join(&f->thread);
  after_thread(f);
}

/* On the HTTP loop: closing, in order: the API, then the listener. */
static void close_here(tally_front_t *f) {
  if (f->api_up)
    tally_api_close(&f->api, NULL);
  tally_http_close(&f->http, NULL);
  uv_close((uv_handle_t *)&f->to_front, NULL);
}

static void on_to_front(uv_async_t *a) {
  tally_front_t *f = a->data;
  uv_mutex_lock(&f->lock);
  tally_http_req_t *done = f->done;
  f->done = NULL;
  tally_front_configs_t *cfg = f->configs;
  f->configs = NULL;
  bool close = f->close_asked;
  uv_mutex_unlock(&f->lock);
  while (done != NULL) {
    tally_http_req_t *r = done;
    done = r->data;
    r->data = NULL;
    tally_http_answer(r);
  }
  if (cfg != NULL) {
    tally_contestset_close(&f->contests);
    f->contests = cfg->contests;
    f->api.contests_gen++;
    tally_scoring_close(&f->scoring);
    f->scoring = cfg->scoring;
    free(cfg);
  }
  if (close && !uv_is_closing((uv_handle_t *)&f->to_front))
    close_here(f);
}

static void run(void *arg) {
  tally_front_t *f = arg;
  /* The lowest priority: on a busy machine Redis, the workers and the
   * posting loop come first, the event streams after. Raising one's own
   * nice value needs no privilege. */
  if (setpriority(PRIO_PROCESS, (id_t)gettid(), FRONT_NICE) != 0)
    tally_log(f->log, TALLY_LOG_WARN, "http",
              "cannot lower the HTTP thread's priority: %s", strerror(errno));
  uv_run(&f->hloop, UV_RUN_DEFAULT);
  uv_mutex_lock(&f->lock);
  f->ended = true;
  uv_mutex_unlock(&f->lock);
  uv_async_send(&f->to_main);
}

int tally_front_listen(tally_front_t *f, uv_loop_t *main, const char *addr,
                       char *err, size_t errlen) {
  f->api_up = f->started = f->closing_main = false;
  f->inbox = f->done = NULL;
  f->configs = NULL;
  f->refuse = f->close_asked = f->ended = false;
  f->close_cb = NULL;
  tally_contestset_init(&f->contests);
  memset(&f->scoring, 0, sizeof(f->scoring));
  if (uv_loop_init(&f->hloop) != 0) {
    snprintf(err, errlen, "--http %s: cannot make a loop", addr);
    return TALLY_ENOMEM;
  }
  f->http.handler = handle;
  f->http.data = f;
  f->http.log = f->log;
  int rc = tally_http_start(&f->hloop, &f->http, addr, err, errlen);
  if (rc != 0) {
    uv_loop_close(&f->hloop);
    return rc;
  }
  uv_mutex_init(&f->lock);
  uv_async_init(main, &f->to_main, on_to_main);
  uv_async_init(&f->hloop, &f->to_front, on_to_front);
  f->to_main.data = f->to_front.data = f;
  return 0;
}

int tally_front_api(tally_front_t *f, const char *prefix,
                    const char *default_queue, const char *url,
                    const char *token_file, tally_contestset_t *contests,
                    tally_scoring_t *scoring, char *err, size_t errlen) {
  f->api.prefix = prefix;
  f->api.default_queue = default_queue;
  f->api.contests = &f->contests;
  f->api.contests_gen = 1;
  f->api.scoring = &f->scoring;
  f->api.log = f->log;
  int rc = tally_api_init(&f->api, &f->hloop, url, token_file, contests, err,
                          errlen);
  if (rc != 0)
    return rc;
  f->api_up = true;
  f->contests = *contests;
  tally_contestset_init(contests);
  f->scoring = *scoring;
  scoring->ok = false;
  tally_api_start(&f->api);
  return 0;
}

int tally_front_start(tally_front_t *f) {
  if (uv_thread_create(&f->thread, run, f) != 0)
    return TALLY_ENOMEM;
  f->started = true;
  return 0;
}

int tally_front_configs(tally_front_t *f, tally_contestset_t *contests,
                        tally_scoring_t *scoring) {
  if (f->closing_main)
    return 0; /* they stay with the caller */
  tally_front_configs_t *cfg = malloc(sizeof(*cfg));
  if (cfg == NULL)
    return TALLY_ENOMEM;
  cfg->contests = *contests;
  tally_contestset_init(contests);
  cfg->scoring = *scoring;
  scoring->ok = false;
  uv_mutex_lock(&f->lock);
  tally_front_configs_t *old = f->configs;
  f->configs = cfg;
  uv_mutex_unlock(&f->lock);
  if (old != NULL) {
    /* Never put in force: a newer reload came first. */
    tally_contestset_close(&old->contests);
    tally_scoring_close(&old->scoring);
    free(old);
  }
  uv_async_send(&f->to_front);
  return 0;
}

void tally_front_close(tally_front_t *f, void (*close_cb)(tally_front_t *f)) {
  if (f->closing_main)
    return;
  f->closing_main = true;
  f->close_cb = close_cb;
  if (!f->started) {
    /* No thread: the HTTP loop's handles close from here. */
    close_here(f);
    uv_run(&f->hloop, UV_RUN_DEFAULT);
    after_thread(f);
    return;
  }
  uv_mutex_lock(&f->lock);
  f->refuse = true;
  uv_mutex_unlock(&f->lock);
  /* What came before the refusal is answered; then the HTTP loop closes. */
  answer_inbox(f);
  uv_mutex_lock(&f->lock);
  f->close_asked = true;
  uv_mutex_unlock(&f->lock);
  uv_async_send(&f->to_front);
}
