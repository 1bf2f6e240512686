/* libcurl's multi interface driven by a libuv loop: one poll handle per
 * socket libcurl names, one timer for its timeouts. The judge client and
 * the ranking pushers add their transfers to `multi` and hear of each
 * finished one through `done`. */
#ifndef TALLY_CURLUV_H
#define TALLY_CURLUV_H

#include <stdbool.h>
#include <uv.h>

typedef struct tally_curluv_s {
  uv_loop_t *loop;
  void *multi; /* CURLM */
  /* Called for each finished transfer (easy: its CURL *, code: its
   * CURLcode); the callee removes and cleans it up. */
  void (*done)(struct tally_curluv_s *u, void *easy, int code);
  /* Called after each turn that may have finished transfers, and once
   * the last handle is closed after tally_curluv_close. */
  void (*after)(struct tally_curluv_s *u);
  void *data; /* the user's */
  /* Private. */
  uv_timer_t timer;
  void *socks;
  unsigned closing_handles;
  bool closing;
} tally_curluv_t;

/* Returns 0, or -1 when out of memory. done, after and data are set by
 * the caller before any transfer is added. */
int tally_curluv_init(uv_loop_t *loop, tally_curluv_t *u);

/* Whether every handle of u is closed (after tally_curluv_close). */
bool tally_curluv_closed(const tally_curluv_t *u);

/* Cleans libcurl up (the caller has removed its transfers) and closes the
 * handles; after runs once they are all closed. */
void tally_curluv_close(tally_curluv_t *u);

#endif
