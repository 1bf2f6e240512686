/* The systemd notify protocol, spoken by tallyd itself: one datagram per
 * message to the Unix socket named by $NOTIFY_SOCKET (an abstract socket
 * when the name starts with '@'), as sd_notify(3) describes it. No
 * library: the protocol is a sendto of "KEY=VALUE" lines. */
#ifndef TALLY_NOTIFY_H
#define TALLY_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

typedef struct tally_notify_s {
  int fd; /* -1: no $NOTIFY_SOCKET, every send does nothing */
  struct sockaddr_un addr;
  socklen_t addrlen;
  uint64_t watchdog_usec; /* $WATCHDOG_USEC meant for this process, or 0 */
  uint64_t sent;          /* datagrams sent */
  uint64_t failed;        /* datagrams the socket refused */
} tally_notify_t;

/* Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID (the watchdog
 * counts only when the pid is this process's, or absent), then removes
 * all three from the environment, so that the processes tallyd starts
 * (workers, rescores, the embedded Redis) never notify in its name.
 * Returns 0, or TALLY_EINVAL with err naming the variable and the cause;
 * n is then usable and does nothing. */
int tally_notify_open(tally_notify_t *n, char *err, size_t errlen);

/* Sends one message ("READY=1", "STATUS=...\nKEY=VALUE"): never blocks.
 * Returns 0 (also when there is no socket), or -errno. */
int tally_notify_send(tally_notify_t *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void tally_notify_close(tally_notify_t *n);

#endif
