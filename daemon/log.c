/* One log line per event, as text or JSON. */
#include "daemon/log.h"
#include "config/jsonw.h"
#include "config/utext.h"

#include <stdarg.h>
#include <string.h>
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

size_t tally_log_escape(char *out, size_t outlen, const char *in, size_t n,
                        bool controls) {
  static const char hex[] = "0123456789abcdef";
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)in[i];
    char esc[5] = {0};
    size_t len = 1;
    if (c >= 0x80) {
      /* A whole, valid character that is not a C1 control stays. */
      size_t end = i + 1;
      while (end < n && end < i + 4 && ((unsigned char)in[end] & 0xc0) == 0x80)
        end++;
      size_t valid = tally_utext_invalid_at(in + i, end - i);
      if (valid > 0 && !(c == 0xc2 && (unsigned char)in[i + 1] < 0xa0)) {
        if (k + valid >= outlen)
          break;
        memcpy(out + k, in + i, valid);
        k += valid;
        i += valid;
        continue;
      }
      snprintf(esc, sizeof(esc), "\\x%c%c", hex[c >> 4], hex[c & 15]);
      len = 4;
    } else if (c == 0 || (controls && (c < 0x20 || c == 0x7f))) {
      /* A NUL would end the line early in either format. */
      if (c == '\n' || c == '\r' || c == '\t') {
        esc[0] = '\\';
        esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        len = 2;
      } else {
        snprintf(esc, sizeof(esc), "\\x%c%c", hex[c >> 4], hex[c & 15]);
        len = 4;
      }
    } else {
      esc[0] = (char)c;
    }
    if (k + len >= outlen)
      break;
    memcpy(out + k, esc, len);
    k += len;
    i++;
  }
  if (outlen > 0)
    out[k] = '\0';
  return k;
}

void tally_log(tally_log_t *log, tally_log_level_t level, const char *event,
               const char *fmt, ...) {
  if (level < log->level)
    return;
  char raw[8192], msg[8192], ts[40];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof(raw), fmt, ap);
  va_end(ap);
  /* Whatever came from outside (a job's text, a client's URL, Redis's
   * error) cannot forge a line: control characters are escaped in the
   * text log (JSON escapes them itself), and bytes that are not UTF-8
   * are written as \xNN in both, so that the JSON log stays JSON. */
  tally_log_escape(msg, sizeof(msg), raw, strlen(raw),
                   log->format == TALLY_LOG_TEXT);
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
