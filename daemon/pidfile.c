/* tallyd's --pidfile (pidfile.h). */
#include "daemon/pidfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int tally_pidfile_take(const char *path, tally_log_t *log, int *out) {
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    tally_log(log, TALLY_LOG_ERROR, "pidfile", "%s: cannot open: %s", path,
              strerror(errno));
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char other[32] = "";
    ssize_t n = read(fd, other, sizeof(other) - 1);
    other[n > 0 ? n : 0] = '\0';
    other[strcspn(other, "\n")] = '\0';
    tally_log(log, TALLY_LOG_ERROR, "pidfile",
              "%s: locked by another running tallyd (pid %s): give each "
              "tallyd its own --pidfile",
              path, other[0] ? other : "unknown");
    close(fd);
    return -1;
  }
  char line[32];
  int len = snprintf(line, sizeof(line), "%d\n", (int)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
    tally_log(log, TALLY_LOG_ERROR, "pidfile", "%s: cannot write: %s", path,
              strerror(errno));
    close(fd);
    return -1;
  }
  *out = fd;
  return 0;
}
