/* tallyd's judge client (docs/benchmarks.md#answers-sent-to-a-judge-model):
 * chat-completion requests to an OpenAI-compatible endpoint, made with
 * libcurl's multi interface on the libuv loop, at most `concurrency` at a
 * time, retried with backoff on 429, 5xx, 408, timeouts, dropped
 * connections and malformed replies, honouring Retry-After. The key is
 * sent as a bearer token and never logged. */
#ifndef TALLY_DAEMON_JUDGE_H
#define TALLY_DAEMON_JUDGE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "daemon/curluv.h"
#include "daemon/log.h"

typedef struct tally_judge_options_s {
  const char *url;         /* the endpoint's base (.../v1) or its
                              .../chat/completions */
  const char *model;       /* the judge model */
  const char *key;         /* NULL: no Authorization header */
  unsigned concurrency;    /* requests in flight, at most */
  uint64_t timeout_ms;     /* of one attempt */
  unsigned attempts;       /* per request, at least 1 */
  uint64_t backoff_ms;     /* the first retry's wait; doubling */
  uint64_t backoff_max_ms; /* the longest wait, Retry-After included */
  tally_log_t *log;
} tally_judge_options_t;

/* Called once per request that was not cancelled: reply (len bytes) is the
 * judge's message content, or NULL with error naming why there is none.
 * Both are valid only during the call. */
typedef void (*tally_judge_cb)(void *data, const char *reply, size_t len,
                               const char *error);

typedef struct tally_judge_req_s tally_judge_req_t;

typedef struct tally_judge_client_s {
  uv_loop_t *loop;
  tally_judge_options_t opt;
  char *endpoint;
  tally_curluv_t u; /* libcurl on the loop */
  void *headers;    /* struct curl_slist */
  uv_timer_t wake;  /* the next retry that is due */
  /* Requests: one per prompt (asking again for a prompt already asked
   * joins the request), queued or in flight, and by prompt hash. */
  struct flight_s *waiting, *waiting_tail;
  struct flight_s *running, *running_tail;
  struct flight_s **by_key;
  unsigned active, closing_handles;
  bool closing;
  void (*close_cb)(struct tally_judge_client_s *);
  /* Counters for /metrics and the log. */
  uint64_t asked, answered, retried, failed;
} tally_judge_client_t;

/* Returns 0, or TALLY_EINVAL / TALLY_ENOMEM with err naming the cause. */
int tally_judge_client_init(uv_loop_t *loop, tally_judge_client_t *c,
                            const tally_judge_options_t *opt, char *err,
                            size_t errlen);

/* Queues a request; cb runs once it has an answer (never before this
 * returns). key (the prompt's hash, TALLY_VERDICT_HASH_HEX characters) makes
 * a request for a prompt already queued or in flight join it: one
 * request, every callback. label names it in the log (the job's entry
 * id). Returns the request, or NULL when out of memory. */
tally_judge_req_t *tally_judge_ask(tally_judge_client_t *c, const char *key,
                                   const char *label, const char *system,
                                   const char *prompt, tally_judge_cb cb,
                                   void *data);

/* Drops a request: its callback will not run (the request to the judge
 * goes on while another caller waits for it). */
void tally_judge_cancel(tally_judge_client_t *c, tally_judge_req_t *r);

/* Requests to the judge queued or in flight. */
unsigned tally_judge_pending(const tally_judge_client_t *c);

/* Cancels every request and closes the handles; cb runs when all are
 * closed. */
void tally_judge_client_close(tally_judge_client_t *c,
                              void (*cb)(tally_judge_client_t *));

#endif
