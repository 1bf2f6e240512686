/* tallyd's log: one line per event, as text or as JSON, with levels. */
#ifndef TALLY_LOG_H
#define TALLY_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum tally_log_level_e {
  TALLY_LOG_DEBUG = 0,
  TALLY_LOG_INFO,
  TALLY_LOG_WARN,
  TALLY_LOG_ERROR
} tally_log_level_t;

typedef enum tally_log_format_e {
  TALLY_LOG_TEXT = 0,
  TALLY_LOG_JSON
} tally_log_format_t;

/* A log writes to out (stderr unless set), and drops events below level.
 * It holds no resources, so it has no _close. */
typedef struct tally_log_s {
  FILE *out;
  tally_log_format_t format;
  tally_log_level_t level;
} tally_log_t;

void tally_log_init(tally_log_t *log, tally_log_format_t format);

/* Writes one line for event (a short dotted name such as "redis.down")
 * with a printf-style message. Text lines read
 *
 *   2026-11-21T10:00:00.123Z warn redis.down: connection refused
 *
 * and JSON lines
 *
 *   {"time":"2026-11-21T10:00:00.123Z","level":"warn","event":"redis.down",
 *    "msg":"connection refused"}
 *
 * A message longer than 8 KiB is cut short. Control characters and bytes
 * that are not UTF-8 are escaped (tally_log_escape): one event is always
 * one line. */
void tally_log(tally_log_t *log, tally_log_level_t level, const char *event,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Copies in (n bytes) to out (outlen bytes with its NUL), each byte that
 * is not part of a valid UTF-8 character (or is a C1 control or a NUL)
 * as \xNN,
 * and with controls set, \n, \r and \t as those two characters and
 * every other control as \xNN. Stops at a whole escape that does not
 * fit. Returns the length written. */
size_t tally_log_escape(char *out, size_t outlen, const char *in, size_t n,
                        bool controls);

/* The level's name ("debug", "info", "warn", "error"). */
const char *tally_log_level_name(tally_log_level_t level);

#endif
