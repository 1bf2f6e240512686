/* tallyd's HTTP listener, served from its libuv loop by libmicrohttpd in
 * external-epoll mode: MHD's epoll descriptor is watched by a uv_poll_t,
 * and MHD's own timeouts are driven by a uv_timer_t. No thread, and no
 * HTTP parsing of ours (docs/operations.md#http); the loop is one of
 * its own, on a thread of its own (daemon/front.h). Only GET and HEAD are
 * answered; a handler of the caller's writes each answer. */
#ifndef TALLY_HTTP_H
#define TALLY_HTTP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uv.h>

#include "config/jsonw.h"
#include "daemon/log.h"

/* The listener's limits: what one slow or hostile client can hold. At
 * most this many connections (fewer when tallyd may open fewer files):
 * the scoreboard's event streams hold theirs open. */
#define TALLY_HTTP_MAX_CONNECTIONS 4096
#define TALLY_HTTP_IDLE_SECONDS 10
/* An aborted stream whose client does not read is closed this long after
 * its last progress. */
#define TALLY_HTTP_ABORT_SECONDS 2
#define TALLY_HTTP_CONNECTION_BYTES 16384 /* a request's head must fit */
/* Connections the kernel completes before tallyd accepts them: a board's
 * browsers all come back at once after a restart. */
#define TALLY_HTTP_BACKLOG 1024
/* What an answer other than a page may load or run: nothing. */
#define TALLY_HTTP_CSP "default-src 'none'; frame-ancestors 'none'"
/* The longest the listener goes without a run of MHD. */
#define TALLY_HTTP_TURN_MS 500

typedef struct tally_http_s tally_http_t;
typedef struct tally_http_req_s tally_http_req_t;
typedef struct tally_http_stream_s tally_http_stream_t;

/* The answer a handler writes: status (default 200), Content-Type
 * (default text/plain; charset=utf-8), and the body. */
typedef struct tally_http_reply_s {
  unsigned status;
  const char *type;
  /* The Content-Security-Policy, or NULL for TALLY_HTTP_CSP. Every
   * answer also says X-Content-Type-Options: nosniff. */
  const char *csp;
  tally_buf_t body;
  tally_http_stream_t *stream; /* when set, the body is this stream */
} tally_http_reply_t;

/* A response that never ends (Server-Sent Events): the user keeps it
 * alive and says when it has more to send. */
struct tally_http_stream_s {
  /* Copies up to max bytes to buf and returns how many; 0 when it has
   * nothing now (the connection then sleeps until tally_http_stream_wake);
   * sets *end to finish the response. */
  size_t (*pull)(tally_http_stream_t *s, char *buf, size_t max, bool *end);
  /* The connection is gone: after this, s is the user's to free. */
  void (*closed)(tally_http_stream_t *s);
  void *data; /* the user's */
  /* Set (then wake the stream) to close the connection at once, without
   * ending the response: for a client that reads too slowly to be sent
   * even the end. */
  bool abort;
  /* Private. */
  tally_http_t *h;
  struct MHD_Connection *c;
  bool sleeping;
  bool timed;                       /* aborted: its idle timeout is set */
  tally_http_stream_t *prev, *next; /* in h->streams */
};

/* Wakes a stream whose pull returned 0, to pull again. */
void tally_http_stream_wake(tally_http_stream_t *s);

/* One request being answered. */
struct tally_http_req_s {
  tally_http_t *h;
  /* The path without the query string, percent-decoded once: never
   * holds a NUL, always valid UTF-8 (a request whose path would not be is
   * answered 400 before any handler sees it). Valid until answered. */
  const char *path;
  /* The same path as the client sent it, still percent-encoded: for
   * handlers that split it into segments, each decoded once
   * (tally_http_segment). */
  const char *raw_path;
  tally_http_reply_t reply;
  void *data;                          /* the handler's */
  void (*cancel)(tally_http_req_t *r); /* called if the listener closes
                                          before tally_http_answer */
  /* Private. */
  struct MHD_Connection *c;
  char *raw, *decoded;
  bool begun, pending, answered;
  tally_http_req_t *prev, *next; /* pending ones, in h->pending */
};

/* Answers GET (or HEAD) r->path: fills r->reply and returns true, or
 * returns false and calls tally_http_answer(r) later, from the loop (a
 * Redis reply, say), once r->reply is filled. */
typedef bool (*tally_http_handler)(tally_http_t *h, tally_http_req_t *r);

/* Sends the reply of a request its handler left pending. */
void tally_http_answer(tally_http_req_t *r);

/* Percent-decodes the next segment of the raw path *p (up to the next
 * '/' or its end) into out (len bytes with its NUL), moving *p past it.
 * Returns false when the segment is empty, too long, holds a bad escape
 * or a NUL, or is not valid UTF-8. */
bool tally_http_segment(const char **p, char *out, size_t len);

/* Percent-decodes raw (n bytes) into a new string at *out. Returns 0, or
 * -1 with why naming the cause: a '%' without two hex digits after it, a
 * NUL, or bytes that are not UTF-8 once decoded. */
int tally_http_decode(const char *raw, size_t n, char **out, char *why,
                      size_t whylen);

/* A request header (name case-insensitive) or query argument, or NULL. */
const char *tally_http_header(const tally_http_req_t *r, const char *name);
const char *tally_http_arg(const tally_http_req_t *r, const char *name);

struct tally_http_s {
  tally_http_handler handler;
  void *data; /* the user's */
  tally_log_t *log;
  /* Read-only for users. */
  char where[80]; /* the address bound, with its port: "127.0.0.1:9464" */
  unsigned max_connections; /* the limit in force */
  uint64_t requests;        /* atomic: another thread may read it */
  /* Private. */
  uv_loop_t *loop;
  struct MHD_Daemon *mhd;
  uv_poll_t poll;
  uv_timer_t timer;
  int handles; /* open uv handles */
  bool closing;
  tally_http_req_t *pending;    /* requests waiting on their handler */
  tally_http_stream_t *streams; /* responses that never end */
  void (*close_cb)(tally_http_t *h);
};

/* Parses "IP:PORT" or "[IPv6]:PORT" (an address, never a name: names
 * resolve with a blocking call) into sa. Returns 0, or TALLY_EINVAL with
 * err saying what is wrong. */
int tally_http_parse_addr(const char *text, struct sockaddr_storage *sa,
                          socklen_t *salen, char *err, size_t errlen);

/* Binds addr and starts serving on loop; h->handler (and data, log) must
 * be set. Returns 0, or a negative code with err naming the address and
 * the cause (in use, not permitted, ...); on error h needs no close. */
int tally_http_start(uv_loop_t *loop, tally_http_t *h, const char *addr,
                     char *err, size_t errlen);

/* Closes every connection and the listener; close_cb (may be NULL) runs
 * once the handles are closed, after which h may be freed. */
void tally_http_close(tally_http_t *h, void (*close_cb)(tally_http_t *h));

#endif
