/* The systemd notify protocol (notify.h): READY, STATUS, RELOADING,
 * STOPPING and WATCHDOG datagrams on $NOTIFY_SOCKET. */
#include "daemon/notify.h"

#include "config/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tally_notify_open(tally_notify_t *n, char *err, size_t errlen) {
  memset(n, 0, sizeof(*n));
  n->fd = -1;
  const char *path = getenv("NOTIFY_SOCKET");
  const char *usec = getenv("WATCHDOG_USEC");
  const char *pid = getenv("WATCHDOG_PID");
  int rc = 0;
  if (usec != NULL && (pid == NULL || strtol(pid, NULL, 10) == getpid())) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(usec, &end, 10);
    if (usec[0] >= '0' && usec[0] <= '9' && *end == '\0' && errno == 0)
      n->watchdog_usec = v;
    else {
      snprintf(err, errlen, "WATCHDOG_USEC=%s: not a number of microseconds",
               usec);
      rc = TALLY_EINVAL;
    }
  }
  if (path != NULL && path[0] != '\0' && rc == 0) {
    size_t len = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof(n->addr.sun_path)) {
      snprintf(err, errlen,
               "NOTIFY_SOCKET=%s: not an absolute path or an abstract "
               "socket (@name) of at most %zu bytes",
               path, sizeof(n->addr.sun_path) - 1);
      rc = TALLY_EINVAL;
    } else {
      n->addr.sun_family = AF_UNIX;
      memcpy(n->addr.sun_path, path, len);
      if (path[0] == '@')
        n->addr.sun_path[0] = '\0';
      /* An abstract name is exactly its bytes, without a final NUL. */
      n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
                               (path[0] == '@' ? 0 : 1));
      n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (n->fd < 0) {
        snprintf(err, errlen, "NOTIFY_SOCKET=%s: cannot open a socket: %s",
                 path, strerror(errno));
        rc = TALLY_EIO;
      }
    }
  }
  if (rc != 0)
    n->watchdog_usec = 0;
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  return rc;
}

int tally_notify_send(tally_notify_t *n, const char *fmt, ...) {
  if (n->fd < 0)
    return 0;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (len < 0)
    return -EINVAL;
  if ((size_t)len >= sizeof(msg))
    len = (int)sizeof(msg) - 1;
  if (sendto(n->fd, msg, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL,
             (struct sockaddr *)&n->addr, n->addrlen) < 0) {
    n->failed++;
    return -errno;
  }
  n->sent++;
  return 0;
}

void tally_notify_close(tally_notify_t *n) {
  if (n->fd >= 0)
    close(n->fd);
  n->fd = -1;
}
