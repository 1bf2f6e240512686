/* The event-stream clients of bench_tallyd --sse (sse_clients.h): many
 * connections on one thread, each line split with memchr, the delay of
 * each event measured. */
#include "sse_clients.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096

/* What is left of a line split across reads, per client. */
typedef struct {
  char line[LINE_MAX_BYTES];
  size_t len;
  bool head_done;
} client_t;

static int64_t realtime_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void on_line(sse_clients_t *s, client_t *c, const char *line,
                    size_t len) {
  if (len > 0 && line[len - 1] == '\r')
    len--;
  if (!c->head_done) {
    if (len == 0) {
      c->head_done = true;
      __atomic_add_fetch(&s->connected, 1, __ATOMIC_RELAXED);
    }
    return;
  }
  if (len < 4 || memcmp(line, "id: ", 4) != 0)
    return;
  s->events++;
  if (!s->recording)
    return;
  int64_t ms = strtoll(line + 4, NULL, 10);
  if (s->ndelays == s->cap) {
    long cap = s->cap ? s->cap * 2 : 1 << 16;
    int64_t *grown = realloc(s->delays_us, (size_t)cap * sizeof(int64_t));
    if (grown == NULL)
      return;
    s->delays_us = grown;
    s->cap = cap;
  }
  s->delays_us[s->ndelays++] = realtime_us() - (ms * 1000 + 500);
}

static void *reader(void *arg) {
  sse_clients_t *s = arg;
  if (s->nice != 0)
    setpriority(PRIO_PROCESS, (id_t)gettid(), s->nice);
  client_t *cl = calloc((size_t)s->n, sizeof(*cl));
  char buf[65536];
  struct epoll_event evs[256];
  while (!s->stop && cl != NULL) {
    int k = epoll_wait(s->epfd, evs, 256, 100);
    for (int i = 0; i < k; i++) {
      int idx = evs[i].data.u32;
      ssize_t got = read(s->fds[idx], buf, sizeof(buf));
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN)
          continue;
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->fds[idx], NULL);
        continue;
      }
      s->bytes += got;
      client_t *c = &cl[idx];
      /* Line by line, with memchr: the clients stand for browsers on
       * other machines, so they should cost this one as little as they
       * can. A line split across reads is put together in c->line. */
      const char *p = buf, *end = buf + got;
      while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl != NULL ? nl : end) - p);
        if (c->len > 0 || nl == NULL) {
          size_t room = LINE_MAX_BYTES - 1 - c->len;
          size_t take = n < room ? n : room;
          memcpy(c->line + c->len, p, take);
          c->len += take;
          if (nl == NULL)
            break;
          c->line[c->len] = '\0';
          on_line(s, c, c->line, c->len);
          c->len = 0;
        } else {
          on_line(s, c, p, n);
        }
        p = nl + 1;
      }
    }
  }
  free(cl);
  return NULL;
}

int sse_clients_start(sse_clients_t *s, int port, const char *contest, int n,
                      int nice) {
  memset(s, 0, sizeof(*s));
  s->n = n;
  s->nice = nice;
  s->fds = calloc((size_t)n, sizeof(int));
  s->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (s->fds == NULL || s->epfd < 0) {
    snprintf(s->err, sizeof(s->err), "out of memory or epoll");
    return -1;
  }
  char req[512];
  int len = snprintf(req, sizeof(req),
                     "GET /api/contests/%s/events HTTP/1.1\r\nHost: "
                     "127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
                     contest);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  for (int i = 0; i < n; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        write(fd, req, (size_t)len) != len) {
      snprintf(s->err, sizeof(s->err), "client %d: %s", i, strerror(errno));
      if (fd >= 0)
        close(fd);
      s->n = i;
      return -1;
    }
    s->fds[i] = fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
  }
  if (pthread_create(&s->thread, NULL, reader, s) != 0) {
    snprintf(s->err, sizeof(s->err), "cannot start the reader thread");
    return -1;
  }
  return 0;
}

void sse_clients_stop(sse_clients_t *s) {
  s->stop = true;
  pthread_join(s->thread, NULL);
  for (int i = 0; i < s->n; i++)
    close(s->fds[i]);
  close(s->epfd);
  free(s->fds);
  s->fds = NULL;
}

void sse_clients_free(sse_clients_t *s) {
  free(s->delays_us);
  s->delays_us = NULL;
}
