/* The scoreboard's event streams held to one memory budget (issue 24,
 * defect 6): thousands of clients that open a contest's event stream and
 * never read. Before, each stream kept up to 4 MiB of events, so 3,000
 * such clients grew tallyd to 2.27 GB; now the streams' buffers together
 * stay within --event-stream-memory (in /metrics), the stream furthest
 * behind is ended first, a client that reads keeps getting events, and
 * scoring goes on. */
#include "redis_fixture.h"
#include "support.h"
#include "tallyd_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { CLIENTS = 2000, JOBS = 3000, BUDGET = 16 << 20 };

static tr_redis_t server;
static td_daemon_t daemon_;
static redisContext *c;
static int fds[CLIENTS];

static void setup(void) {
  cr_assert_eq(tr_redis_start(&server, 0, false), 0);
  c = td_connect(&server);
  memset(&daemon_, 0, sizeof(daemon_));
  for (int i = 0; i < CLIENTS; i++)
    fds[i] = -1;
}

static void teardown(void) {
  for (int i = 0; i < CLIENTS; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  td_kill(&daemon_);
  if (c != NULL)
    redisFree(c);
  tr_redis_stop(&server);
}

TestSuite(tallyd_streams, .init = setup, .fini = teardown, .timeout = 180);

static double metric(int port, const char *name) {
  return td_metric(server.dir, port, name);
}

/* tallyd's resident memory in KiB. */
static long rss_kib(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kib = -1;
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (strncmp(line, "VmRSS:", 6) == 0)
      kib = atol(line + 6);
  if (f != NULL)
    fclose(f);
  return kib;
}

/* A client that asks for contest c1's events and never reads: a small
 * receive buffer, so that the kernel holds little for it. */
static int lazy_client(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert(fd >= 0, "socket: %s", strerror(errno));
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s",
               strerror(errno));
  static const char req[] = "GET /api/contests/c1/events HTTP/1.1\r\n"
                            "Host: 127.0.0.1\r\n\r\n";
  cr_assert_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
  return fd;
}

Test(tallyd_streams, clients_that_never_read_are_held_to_one_budget) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  cr_assert(rl.rlim_cur > CLIENTS + 100, "too few open files allowed");
  char budget[32];
  snprintf(budget, sizeof(budget), "%d", BUDGET);
  const char *args[] = {"--event-stream-memory", budget, "--log-level", "info",
                        NULL};
  cr_assert_eq(td_start(&daemon_, &server, "d1", args, NULL), 0);
  int port = td_http_port(&daemon_);
  for (int i = 0; i < 200; i++) {
    td_http_t r = td_http(server.dir, port, "/readyz", "");
    int st = r.status;
    free(r.body);
    if (st == 200)
      break;
    td_sleep_ms(50);
  }
  cr_expect_eq(metric(port, "tally_event_stream_buffer_budget_bytes"), BUDGET);
  for (int i = 0; i < CLIENTS; i++)
    fds[i] = lazy_client(port);
  /* Every stream open. */
  bool open = false;
  for (int i = 0; i < 200 && !open; i++) {
    open = metric(port, "tally_event_streams") >= CLIENTS;
    if (!open)
      td_sleep_ms(50);
  }
  TD_REQUIRE(&daemon_, open, "the streams did not open");
  /* A client that reads, with curl, for the whole run. */
  char follow[600];
  snprintf(follow, sizeof(follow),
           "curl -s -N --max-time 60 'http://127.0.0.1:%d/api/contests/c1/"
           "events' > '%s/follow.txt' &",
           port, server.dir);
  cr_assert_eq(system(follow), 0);
  td_sleep_ms(500);
  long rss0 = rss_kib(daemon_.pid);
  /* Events: each job's public task score goes to all 2,000 streams. */
  double peak = 0;
  long peak_rss = 0;
  for (int i = 0; i < JOBS; i++) {
    /* Long participant ids make events of about 1 KB: more than the
     * kernel's socket buffers hold for the clients that never read. */
    char job[1400];
    snprintf(job, sizeof(job),
             "{\"submission\": \"s%d\", \"task\": \"sum\", \"participant\": "
             "\"%0900d\", \"contest\": \"c1\", \"evaluations\": {\"0\": 1, "
             "\"1\": %d, \"2\": 1, \"3\": 0}}",
             i, i % 97, i % 2);
    td_push(c, job, NULL);
    if (i % 50 == 49) {
      double held = metric(port, "tally_event_stream_buffer_bytes");
      if (held > peak)
        peak = held;
      long rss = rss_kib(daemon_.pid);
      if (rss > peak_rss)
        peak_rss = rss;
    }
  }
  TD_REQUIRE(&daemon_, td_wait_outcomes(c, JOBS, 60000) == JOBS,
             "scoring stopped");
  /* The reader gets every event, within 30 s: the streams are fed in
   * the same batches, so then every event has gone to every stream. */
  char path[600];
  snprintf(path, sizeof(path), "%s/follow.txt", server.dir);
  int events = 0;
  for (int wait = 0; wait < 300 && events < JOBS; wait++) {
    double now = metric(port, "tally_event_stream_buffer_bytes");
    if (now > peak)
      peak = now;
    long rss = rss_kib(daemon_.pid);
    if (rss > peak_rss)
      peak_rss = rss;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    events = 0;
    char line[4096];
    while (fgets(line, sizeof(line), f) != NULL)
      events += strncmp(line, "event: score", 12) == 0;
    fclose(f);
    if (events < JOBS)
      td_sleep_ms(100);
  }
  cr_expect_eq(events, JOBS, "the reading client got %d events of %d", events,
               JOBS);
  td_sleep_ms(500);
  double held = metric(port, "tally_event_stream_buffer_bytes");
  double dropped = metric(port, "tally_event_streams_dropped_total");
  cr_log_info("streams: budget %d, peak held %.0f, now %.0f, dropped %.0f, "
              "RSS %ld KiB at start, peak %ld KiB; the reader got %d events",
              BUDGET, peak, held, dropped, rss0, peak_rss, events);
  /* The budget holds: a batch stops once past it, so it may pass it by
   * one event for each stream, and a buffer grows by doubling: at most
   * twice the budget for a moment, and within it between batches. */
  cr_expect(peak <= 2.0 * BUDGET + CLIENTS * 2048.0, "held %.0f of %d", peak,
            BUDGET);
  cr_expect(held <= BUDGET, "held %.0f of %d", held, BUDGET);
  /* 3,000 events of 1 KB to 2,000 streams: more than the kernel's socket
   * buffers take (2.2 GB of TCP memory here), so streams must go. */
  cr_expect_gt(dropped, 0, "no stream was ended");
  /* The ended streams' connections are closed within a few seconds,
   * though their clients never read: they hold no connection slot. */
  double open_now = -1;
  for (int i = 0; i < 100; i++) {
    open_now = metric(port, "tally_event_streams");
    if (open_now <= CLIENTS + 1 - dropped)
      break;
    td_sleep_ms(100);
  }
  cr_expect_leq(open_now, CLIENTS + 1 - dropped, "%.0f streams still open",
                open_now);
  /* Every stream holding every event would be about 6 GB; the budget,
   * MHD's connections and the kernel's buffers hold it to a fraction. */
#if !defined(__SANITIZE_ADDRESS__)
  /* (Not under AddressSanitizer, whose quarantine keeps freed memory.) */
  cr_expect_lt(peak_rss - rss0, 128 * 1024, "tallyd grew by %ld KiB",
               peak_rss - rss0);
#endif
  int rc = system("pkill -f 'curl -s -N --max-time 60' || true");
  (void)rc;
}
