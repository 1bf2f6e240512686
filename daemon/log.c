/* One log line per event, as text or JSON. */
#include "daemon/log.h"
#include "config/jsonw.h"

#include <stdarg.h>
#include <time.h>

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void tally_log_init(tally_log_t *log, tally_log_format_t format) {
  log->out = stderr;
  log->format = format;
  log->level = TALLY_LOG_INFO;
}

const char *tally_log_level_name(tally_log_level_t level) {
  return (unsigned)level < 4 ? level_names[level] : "?";
}

/* UTC, to the millisecond, ISO 8601. */
static void timestamp(char *buf, size_t len) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void tally_log(tally_log_t *log, tally_log_level_t level, const char *event,
               const char *fmt, ...) {
  if (level < log->level)
    return;
  char msg[8192], ts[40];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  timestamp(ts, sizeof(ts));
  FILE *out = log->out ? log->out : stderr;
  if (log->format == TALLY_LOG_TEXT) {
    fprintf(out, "%s %s %s: %s\n", ts, tally_log_level_name(level), event, msg);
  } else {
    tally_buf_t b;
    tally_buf_init(&b);
    tally_buf_puts(&b, "{\"time\":\"");
    tally_buf_puts(&b, ts);
    tally_buf_puts(&b, "\",\"level\":\"");
    tally_buf_puts(&b, tally_log_level_name(level));
    tally_buf_puts(&b, "\",\"event\":");
    tally_json_str(&b, event);
    tally_buf_puts(&b, ",\"msg\":");
    tally_json_str(&b, msg);
    tally_buf_puts(&b, "}\n");
    if (!b.oom)
      fwrite(b.data, 1, b.len, out);
    tally_buf_close(&b);
  }
  fflush(out);
}
