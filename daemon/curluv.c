/* libcurl's multi interface on a libuv loop (curluv.h). */
#include "daemon/curluv.h"

#include <curl/curl.h>
#include <stdlib.h>

typedef struct sock_s {
  uv_poll_t poll;
  tally_curluv_t *u;
  curl_socket_t fd;
  struct sock_s *prev, *next; /* in u->socks */
} sock_t;

static void finish_close(tally_curluv_t *u) {
  if (u->closing && u->closing_handles == 0 && u->after != NULL)
    u->after(u);
}

static void on_sock_closed(uv_handle_t *h) {
  sock_t *k = h->data;
  tally_curluv_t *u = k->u;
  free(k);
  u->closing_handles--;
  finish_close(u);
}

/* Stops and closes a socket's poll handle (freed in its close
 * callback). */
static void sock_close(tally_curluv_t *u, sock_t *k) {
  if (k->prev != NULL)
    k->prev->next = k->next;
  else
    u->socks = k->next;
  if (k->next != NULL)
    k->next->prev = k->prev;
  uv_poll_stop(&k->poll);
  u->closing_handles++;
  uv_close((uv_handle_t *)&k->poll, on_sock_closed);
}

static void check_done(tally_curluv_t *u) {
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(u->multi, &left)) != NULL)
    if (m->msg == CURLMSG_DONE)
      u->done(u, m->easy_handle, (int)m->data.result);
  if (u->after != NULL)
    u->after(u);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  sock_t *k = h->data;
  tally_curluv_t *u = k->u;
  int flags = 0;
  if (status < 0)
    flags = CURL_CSELECT_ERR;
  else {
    if (events & UV_READABLE)
      flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
      flags |= CURL_CSELECT_OUT;
  }
  int running;
  curl_multi_socket_action(u->multi, k->fd, flags, &running);
  check_done(u);
}

static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp,
                     void *socketp) {
  (void)easy;
  tally_curluv_t *u = userp;
  sock_t *k = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (k != NULL) {
      curl_multi_assign(u->multi, s, NULL);
      sock_close(u, k);
    }
    return 0;
  }
  if (k == NULL) {
    k = calloc(1, sizeof(*k));
    if (k == NULL)
      return -1;
    if (uv_poll_init_socket(u->loop, &k->poll, s) != 0) {
      free(k);
      return -1;
    }
    k->poll.data = k;
    k->u = u;
    k->fd = s;
    k->next = u->socks;
    if (k->next != NULL)
      k->next->prev = k;
    u->socks = k;
    curl_multi_assign(u->multi, s, k);
  }
  int ev = 0;
  if (what & CURL_POLL_IN)
    ev |= UV_READABLE;
  if (what & CURL_POLL_OUT)
    ev |= UV_WRITABLE;
  uv_poll_start(&k->poll, ev, on_poll);
  return 0;
}

static void on_curl_timer(uv_timer_t *t) {
  tally_curluv_t *u = t->data;
  int running;
  curl_multi_socket_action(u->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  check_done(u);
}

static int on_timer_set(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  tally_curluv_t *u = userp;
  if (timeout_ms < 0)
    uv_timer_stop(&u->timer);
  else
    uv_timer_start(&u->timer, on_curl_timer, (uint64_t)timeout_ms, 0);
  return 0;
}

int tally_curluv_init(uv_loop_t *loop, tally_curluv_t *u) {
  u->loop = loop;
  u->socks = NULL;
  u->closing_handles = 0;
  u->closing = false;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
    return -1;
  if ((u->multi = curl_multi_init()) == NULL) {
    curl_global_cleanup();
    return -1;
  }
  curl_multi_setopt(u->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(u->multi, CURLMOPT_SOCKETDATA, u);
  curl_multi_setopt(u->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
  curl_multi_setopt(u->multi, CURLMOPT_TIMERDATA, u);
  uv_timer_init(loop, &u->timer);
  u->timer.data = u;
  return 0;
}

bool tally_curluv_closed(const tally_curluv_t *u) {
  return u->closing && u->closing_handles == 0;
}

static void on_timer_closed(uv_handle_t *h) {
  tally_curluv_t *u = h->data;
  u->closing_handles--;
  finish_close(u);
}

void tally_curluv_close(tally_curluv_t *u) {
  u->closing = true;
  curl_multi_cleanup(u->multi);
  u->multi = NULL;
  /* Sockets libcurl kept for reuse and did not remove. */
  while (u->socks != NULL)
    sock_close(u, u->socks);
  curl_global_cleanup();
  u->closing_handles++;
  uv_close((uv_handle_t *)&u->timer, on_timer_closed);
}
