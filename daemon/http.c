/* tallyd's HTTP listener (http.h): libmicrohttpd in external-epoll mode
 * on a libuv loop, paths read as sent, suspended and streaming answers. */
#include "daemon/http.h"

#include "config/error.h"
#include "config/utext.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int tally_http_parse_addr(const char *text, struct sockaddr_storage *sa,
                          socklen_t *salen, char *err, size_t errlen) {
  char host[64];
  const char *port;
  memset(sa, 0, sizeof(*sa));
  if (text[0] == '[') {
    const char *end = strchr(text, ']');
    if (end == NULL || end[1] != ':' ||
        (size_t)(end - text - 1) >= sizeof(host))
      goto bad;
    memcpy(host, text + 1, (size_t)(end - text - 1));
    host[end - text - 1] = '\0';
    port = end + 2;
  } else {
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof(host) ||
        memchr(text, ':', (size_t)(colon - text)) != NULL)
      goto bad;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    port = colon + 1;
  }
  char *end;
  errno = 0;
  unsigned long p = strtoul(port, &end, 10);
  if (port[0] < '0' || port[0] > '9' || *end != '\0' || errno != 0 || p > 65535)
    goto bad;
  struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
  if (text[0] != '[' && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)p);
    *salen = sizeof(*v4);
    return 0;
  }
  if (text[0] == '[' && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)p);
    *salen = sizeof(*v6);
    return 0;
  }
bad:
  /* A long text is cut, so that the message always says what is wanted. */
  snprintf(err, errlen,
           "\"%.64s%s\" is not IP:PORT or [IPv6]:PORT (an address, not a "
           "host name; a port from 0 to 65535)",
           text, strlen(text) > 64 ? "..." : "");
  return TALLY_EINVAL;
}

/* MHD's own messages go to tallyd's log. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  tally_http_t *h = cls;
  char msg[512];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  /* Its own line end goes; what it quotes of a client's request (CR,
   * ESC, ...) is escaped by the log. */
  size_t n = strlen(msg);
  while (n > 0 && msg[n - 1] == '\n')
    msg[--n] = '\0';
  /* A client that goes away (a browser closing a board mid-write) is the
   * web's daily life, not a fault of tallyd's. */
  static const char *const gone[] = {"reset by peer",     "Broken pipe",
                                     "closed by remote",  "Failed to send",
                                     "Failed to receive", "timed out"};
  tally_log_level_t level = TALLY_LOG_WARN;
  for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
    if (strstr(msg, gone[i]) != NULL)
      level = TALLY_LOG_DEBUG;
  if (h->log != NULL)
    tally_log(h->log, level, "http", "%s", msg);
}

/* The headers every answer carries. */
static void common_headers(struct MHD_Response *r, const char *type,
                           const char *csp) {
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "Content-Security-Policy",
                          csp != NULL ? csp : TALLY_HTTP_CSP);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
                             const char *type, const char *body, size_t len,
                             const char *allow, const char *csp) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  common_headers(r, type, csp);
  if (allow != NULL)
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static void turn(tally_http_t *h);
static void on_timer(uv_timer_t *t);

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  tally_http_stream_t *s = cls;
  (void)pos;
  if (s->abort)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  if (s->h->closing)
    return MHD_CONTENT_READER_END_OF_STREAM;
  bool end = false;
  size_t n = s->pull(s, buf, max, &end);
  if (n > 0)
    return (ssize_t)n;
  if (end)
    return MHD_CONTENT_READER_END_OF_STREAM;
  /* Nothing yet: the connection sleeps until the stream has more. */
  s->sleeping = true;
  MHD_suspend_connection(s->c);
  return 0;
}

static void stream_free(void *cls) {
  tally_http_stream_t *s = cls;
  s->c = NULL;
  if (s->prev != NULL)
    s->prev->next = s->next;
  else if (s->h->streams == s)
    s->h->streams = s->next;
  if (s->next != NULL)
    s->next->prev = s->prev;
  if (s->closed != NULL)
    s->closed(s);
}

void tally_http_stream_wake(tally_http_stream_t *s) {
  if (s->abort && s->c != NULL && !s->h->closing && !s->timed) {
    /* A client that does not read may never let MHD write again, and so
     * never learn of the abort: the idle timeout closes it. */
    s->timed = true;
    MHD_set_connection_option(s->c, MHD_CONNECTION_OPTION_TIMEOUT,
                              (unsigned)TALLY_HTTP_ABORT_SECONDS);
  }
  if (!s->sleeping || s->c == NULL || s->h->closing)
    return;
  s->sleeping = false;
  MHD_resume_connection(s->c);
  /* One run of MHD on the loop's next turn serves every stream woken
   * meanwhile. */
  uv_timer_start(&s->h->timer, on_timer, 0, 0);
}

static enum MHD_Result send_stream(tally_http_req_t *r) {
  tally_http_stream_t *s = r->reply.stream;
  s->h = r->h;
  s->c = r->c;
  s->sleeping = false;
  s->timed = false;
  s->prev = NULL;
  s->next = r->h->streams;
  if (s->next != NULL)
    s->next->prev = s;
  r->h->streams = s;
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 65536, stream_read, s, stream_free);
  if (resp == NULL)
    return MHD_NO;
  common_headers(resp,
                 r->reply.type != NULL ? r->reply.type : "text/event-stream",
                 r->reply.csp);
  /* A stream is idle between events by nature: no idle timeout (the
   * user sends keep-alives, which find dead peers). */
  MHD_set_connection_option(r->c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
  enum MHD_Result rc = MHD_queue_response(r->c, r->reply.status, resp);
  MHD_destroy_response(resp);
  return rc;
}

static enum MHD_Result send_reply(tally_http_req_t *r) {
  tally_http_reply_t *out = &r->reply;
  if (out->stream != NULL && !out->body.oom && out->status == 200)
    return send_stream(r);
  if (out->body.oom) {
    static const char msg[] = "out of memory\n";
    return reply(r->c, MHD_HTTP_SERVICE_UNAVAILABLE,
                 "text/plain; charset=utf-8", msg, sizeof(msg) - 1, NULL, NULL);
  }
  return reply(r->c, out->status ? out->status : 200,
               out->type != NULL ? out->type : "text/plain; charset=utf-8",
               tally_buf_text(&out->body), out->body.len, NULL, out->csp);
}

/* Decodes raw[0..n) into out (n + 1 bytes at least); returns the length,
 * or -1 with why set. */
static long decode_into(const char *raw, size_t n, char *out,
                        const char **why) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = raw[i];
    if (ch == '%') {
      int hi = i + 1 < n ? tally_hex_value(raw[i + 1]) : -1;
      int lo = i + 2 < n ? tally_hex_value(raw[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        *why = "a '%' in the path is not followed by two hex digits";
        return -1;
      }
      ch = (char)(hi * 16 + lo);
      i += 2;
    }
    if (ch == '\0') {
      *why = "the path holds a NUL byte (%00)";
      return -1;
    }
    out[k++] = ch;
  }
  out[k] = '\0';
  if (tally_utext_invalid_at(out, k) != k) {
    *why = "the path is not valid UTF-8 once percent-decoded";
    return -1;
  }
  return (long)k;
}

int tally_http_decode(const char *raw, size_t n, char **out, char *why,
                      size_t whylen) {
  char *s = malloc(n + 1);
  if (s == NULL) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  const char *cause = NULL;
  if (decode_into(raw, n, s, &cause) < 0) {
    free(s);
    snprintf(why, whylen, "%s", cause);
    return -1;
  }
  *out = s;
  return 0;
}

bool tally_http_segment(const char **p, char *out, size_t len) {
  const char *s = *p;
  size_t n = strcspn(s, "/");
  /* A segment decodes to at most as many bytes as it has. */
  char buf[1024];
  if (n == 0 || n >= sizeof(buf))
    return false;
  const char *why;
  long k = decode_into(s, n, buf, &why);
  if (k <= 0 || (size_t)k >= len)
    return false;
  memcpy(out, buf, (size_t)k + 1);
  *p = s + n;
  return true;
}

/* MHD's first look at a request: the URI as the client sent it, before
 * MHD decodes it (which it does for the handler's url, and would let a
 * %00 cut the path short or a %2F split a segment). The request's state
 * starts here. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)cls;
  (void)c;
  tally_http_req_t *r = calloc(1, sizeof(*r));
  if (r != NULL && (r->raw = strndup(uri, strcspn(uri, "?#"))) == NULL) {
    free(r);
    r = NULL;
  }
  return r;
}

static void unlink_pending(tally_http_req_t *r) {
  if (!r->pending)
    return;
  r->pending = false;
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    r->h->pending = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  r->prev = r->next = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_len, void **state) {
  tally_http_t *h = cls;
  (void)version;
  (void)upload;
  (void)url; /* decoded by MHD: r->raw is what was sent */
  tally_http_req_t *r = *state;
  if (r == NULL)
    return MHD_NO; /* no memory for its state */
  if (r->begun) {
    /* Resumed: the handler has answered. */
    return r->answered ? send_reply(r) : MHD_YES;
  }
  r->begun = true;
  r->h = h;
  r->c = c;
  tally_buf_init(&r->reply.body);
  /* Read by /metrics on the main loop. */
  __atomic_add_fetch(&h->requests, 1, __ATOMIC_RELAXED);
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
    /* Whatever it uploads is not read: the connection closes after. */
    *upload_len = 0;
    static const char msg[] = "only GET and HEAD are served\n";
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                 msg, sizeof(msg) - 1, "GET, HEAD", NULL);
  }
  char why[128];
  if (tally_http_decode(r->raw, strlen(r->raw), &r->decoded, why,
                        sizeof(why)) != 0) {
    char msg[160];
    int n = snprintf(msg, sizeof(msg), "bad request: %s\n", why);
    return reply(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
                 (size_t)n, NULL, NULL);
  }
  r->path = r->decoded;
  r->raw_path = r->raw;
  r->reply.status = 200;
  if (h->handler(h, r)) {
    r->answered = true;
    return send_reply(r);
  }
  r->pending = true;
  r->next = h->pending;
  if (h->pending != NULL)
    h->pending->prev = r;
  h->pending = r;
  MHD_suspend_connection(c);
  return MHD_YES;
}

/* MHD is done with a request: its memory goes. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode code) {
  (void)cls;
  (void)c;
  (void)code;
  tally_http_req_t *r = *state;
  if (r == NULL)
    return;
  unlink_pending(r);
  if (r->begun)
    tally_buf_close(&r->reply.body);
  free(r->raw);
  free(r->decoded);
  free(r);
  *state = NULL;
}

static void turn(tally_http_t *h);

void tally_http_answer(tally_http_req_t *r) {
  if (r->answered)
    return;
  r->answered = true;
  unlink_pending(r);
  MHD_resume_connection(r->c);
  /* MHD sees the resumption on its next run: now. */
  turn(r->h);
}

const char *tally_http_header(const tally_http_req_t *r, const char *name) {
  return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

const char *tally_http_arg(const tally_http_req_t *r, const char *name) {
  return MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, name);
}

static void on_timer(uv_timer_t *t);

/* Runs MHD for what is ready, then sets the timer to its next deadline
 * (0 when MHD has work left it did not do in this run), and to at most
 * TALLY_HTTP_TURN_MS in any case: at its connection limit MHD stops
 * watching the listening socket, and takes it back only in a later run,
 * which no event of its epoll descriptor would bring once the
 * connections it had are gone. */
static void turn(tally_http_t *h) {
  if (h->closing)
    return;
  MHD_run(h->mhd);
  MHD_UNSIGNED_LONG_LONG ms;
  if (MHD_get_timeout(h->mhd, &ms) != MHD_YES || ms > TALLY_HTTP_TURN_MS)
    ms = TALLY_HTTP_TURN_MS;
  uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
}

static void on_timer(uv_timer_t *t) {
  turn(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  turn(p->data);
}

static void on_closed(uv_handle_t *hd) {
  tally_http_t *h = hd->data;
  if (--h->handles == 0 && h->close_cb != NULL)
    h->close_cb(h);
}

/* A listening socket on addr, non-blocking, or -1 with err set. */
static int listen_on(const char *addr, char *where, size_t wlen, char *err,
                     size_t errlen) {
  struct sockaddr_storage sa;
  socklen_t salen;
  char why[256];
  if (tally_http_parse_addr(addr, &sa, &salen, why, sizeof(why)) != 0) {
    snprintf(err, errlen, "--http: %s", why);
    return -1;
  }
  int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      bind(fd, (struct sockaddr *)&sa, salen) != 0 ||
      listen(fd, TALLY_HTTP_BACKLOG) != 0) {
    snprintf(err, errlen, "--http %s: cannot listen: %s", addr,
             strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  salen = sizeof(sa);
  getsockname(fd, (struct sockaddr *)&sa, &salen);
  char ip[INET6_ADDRSTRLEN] = "?";
  if (sa.ss_family == AF_INET) {
    struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
    inet_ntop(AF_INET, &v4->sin_addr, ip, sizeof(ip));
    snprintf(where, wlen, "%s:%u", ip, ntohs(v4->sin_port));
  } else {
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
    inet_ntop(AF_INET6, &v6->sin6_addr, ip, sizeof(ip));
    snprintf(where, wlen, "[%s]:%u", ip, ntohs(v6->sin6_port));
  }
  return fd;
}

int tally_http_start(uv_loop_t *loop, tally_http_t *h, const char *addr,
                     char *err, size_t errlen) {
  h->loop = loop;
  h->closing = false;
  h->handles = 0;
  h->close_cb = NULL;
  int fd = listen_on(addr, h->where, sizeof(h->where), err, errlen);
  if (fd < 0)
    return TALLY_EINVAL;
  /* Raise the soft limit of open files to the hard one, and keep the
   * connections well within it (Redis, workers and logs need some). */
  struct rlimit rl;
  unsigned limit = TALLY_HTTP_MAX_CONNECTIONS;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    if (rl.rlim_cur < rl.rlim_max) {
      rlim_t want = rl.rlim_max;
      rl.rlim_cur = want;
      if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)limit + 256)
      limit = rl.rlim_cur > 320 ? (unsigned)(rl.rlim_cur - 256) : 64;
  }
  h->max_connections = limit;
  h->mhd = MHD_start_daemon(
      MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL,
      NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_URI_LOG_CALLBACK,
      on_uri, h, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
      MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)TALLY_HTTP_IDLE_SECONDS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)TALLY_HTTP_CONNECTION_BYTES, MHD_OPTION_END);
  if (h->mhd == NULL) {
    close(fd);
    snprintf(err, errlen, "--http %s: libmicrohttpd cannot start", addr);
    return TALLY_EIO;
  }
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
  if (info == NULL || uv_poll_init(loop, &h->poll, info->epoll_fd) != 0) {
    MHD_stop_daemon(h->mhd);
    h->mhd = NULL;
    snprintf(err, errlen,
             "--http %s: cannot watch libmicrohttpd's epoll "
             "descriptor",
             addr);
    return TALLY_EIO;
  }
  uv_timer_init(loop, &h->timer);
  h->poll.data = h->timer.data = h;
  h->handles = 2;
  uv_poll_start(&h->poll, UV_READABLE, on_poll);
  turn(h);
  return 0;
}

void tally_http_close(tally_http_t *h, void (*close_cb)(tally_http_t *h)) {
  if (h->closing)
    return;
  /* MHD must not stop with a connection suspended: whatever still waits
   * on its handler is cancelled and answered 503. */
  while (h->pending != NULL) {
    tally_http_req_t *r = h->pending;
    unlink_pending(r);
    if (r->cancel != NULL)
      r->cancel(r);
    tally_buf_reset(&r->reply.body);
    tally_buf_puts(&r->reply.body, "tallyd is stopping\n");
    r->reply.status = 503;
    r->reply.type = NULL;
    r->answered = true;
    MHD_resume_connection(r->c);
  }
  /* The same for streams asleep; then a few runs let MHD end them (a
   * stream read while closing ends its response). */
  h->closing = true;
  for (tally_http_stream_t *s = h->streams; s != NULL; s = s->next) {
    if (s->sleeping) {
      s->sleeping = false;
      MHD_resume_connection(s->c);
    }
  }
  for (int i = 0; i < 10; i++)
    MHD_run(h->mhd);
  h->close_cb = close_cb;
  /* The poll handle stops watching the epoll descriptor before MHD
   * closes it. */
  uv_close((uv_handle_t *)&h->poll, on_closed);
  uv_close((uv_handle_t *)&h->timer, on_closed);
  MHD_stop_daemon(h->mhd);
  h->mhd = NULL;
}
