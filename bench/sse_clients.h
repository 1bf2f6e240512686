/* Many Server-Sent Events clients of tallyd's board events, on one thread
 * with epoll, for bench_tallyd --sse: each event's delay is its receipt
 * (CLOCK_REALTIME) minus its id's milliseconds (the Redis clock when the
 * event was added, good to about 1 ms). */
#ifndef TALLY_BENCH_SSE_CLIENTS_H
#define TALLY_BENCH_SSE_CLIENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct sse_clients_s {
  int n;
  int *fds;
  int epfd;
  pthread_t thread;
  volatile bool stop;
  int connected; /* clients that got their response's head */
  long events;   /* events received, over every client */
  long bytes;
  int64_t *delays_us; /* one per event received after recording began */
  long ndelays, cap;
  volatile bool recording;
  int nice; /* the reader thread's */
  char err[256];
} sse_clients_t;

/* Connects n clients to 127.0.0.1:port's /api/contests/<contest>/events
 * and reads them on a thread. Returns 0, or -1 with s->err set. */
int sse_clients_start(sse_clients_t *s, int port, const char *contest, int n,
                      int nice);
/* Stops the thread and closes every client; the delays stay until
 * sse_clients_free. */
void sse_clients_stop(sse_clients_t *s);
void sse_clients_free(sse_clients_t *s);

#endif
