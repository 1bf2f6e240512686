/* tallyd's HTTP side on a thread of its own (docs/architecture.md#http):
 * the listener (daemon/http.h) and the results API with its event streams
 * (daemon/api.h) run on a second libuv loop, so that writing events to a
 * thousand browsers never holds up the loop that posts scores.
 *
 * The two loops share nothing but what passes through this module, under
 * its lock: /metrics, /healthz and /readyz are answered by the main loop
 * (they read its state), and the contest and task configs a reload puts
 * in force go to the HTTP loop, which frees the ones they replace. */
#ifndef TALLY_FRONT_H
#define TALLY_FRONT_H

#include <stdbool.h>

#include <uv.h>

#include "daemon/api.h"
#include "daemon/http.h"
#include "daemon/log.h"
#include "daemon/ops.h"
#include "engine/contests.h"

typedef struct tally_front_s tally_front_t;

/* Contest and task configs on their way to the HTTP loop. */
typedef struct tally_front_configs_s tally_front_configs_t;

struct tally_front_s {
  /* Set before tally_front_start. */
  tally_ops_t *ops; /* the main loop's; answers the operator's paths */
  tally_log_t *log;
  /* The HTTP loop's: the listener, the API, and the configs it reads
   * (the API points at these). */
  tally_http_t http;
  tally_api_t api;
  bool api_up;
  tally_contestset_t contests;
  tally_scoring_t scoring;
  /* Private. */
  uv_loop_t hloop;
  uv_async_t to_main;  /* on main: requests to answer; the thread ended */
  uv_async_t to_front; /* on hloop: answers, configs, close */
  uv_thread_t thread;
  bool started, closing_main;
  uv_mutex_t lock;
  /* Under lock. */
  tally_http_req_t *inbox, *done; /* requests for main, answered */
  tally_front_configs_t *configs; /* the newest, not yet in force */
  bool refuse;                    /* main answers no more requests */
  bool close_asked, ended;
  void (*close_cb)(tally_front_t *f);
};

/* Binds addr on a loop of f's own (f->ops and f->log set). Returns 0, or a
 * negative code with err naming the address and the cause; then f needs
 * no close. */
int tally_front_listen(tally_front_t *f, uv_loop_t *main, const char *addr,
                       char *err, size_t errlen);

/* The results API on Redis at url (token_file: the operator's, or NULL),
 * serving contests and scoring, which f takes (they are left empty).
 * Returns 0, or a negative code with err naming the cause. */
int tally_front_api(tally_front_t *f, const char *prefix,
                    const char *default_queue, const char *url,
                    const char *token_file, tally_contestset_t *contests,
                    tally_scoring_t *scoring, char *err, size_t errlen);

/* Starts the thread. Returns 0, or a negative code. */
int tally_front_start(tally_front_t *f);

/* Puts new configs in force on the HTTP loop; f takes them (they are
 * left empty). Returns 0, or TALLY_ENOMEM (then they are untouched);
 * once f is closing they stay with the caller. */
int tally_front_configs(tally_front_t *f, tally_contestset_t *contests,
                        tally_scoring_t *scoring);

/* Answers what main still has, closes the API and the listener on the
 * HTTP loop, ends the thread; close_cb (may be NULL) runs on main once
 * it has, after which f may be freed. Also for a front only listening. */
void tally_front_close(tally_front_t *f, void (*close_cb)(tally_front_t *f));

#endif
