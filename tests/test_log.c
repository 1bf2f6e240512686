/* The log (issue 24, defect 7): a value from outside cannot forge a line.
 * Control characters are escaped in the text log; bytes that are not
 * UTF-8 in both formats, so that the JSON log stays JSON. */
#include "daemon/log.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one tally_log call with msg writes, as a malloc'ed string. */
static char *logged(tally_log_format_t format, const char *msg) {
  tally_log_t log;
  tally_log_init(&log, format);
  char *buf = NULL;
  size_t len = 0;
  log.out = open_memstream(&buf, &len);
  cr_assert_not_null(log.out);
  tally_log(&log, TALLY_LOG_WARN, "job.dead", "1-0: %s", msg);
  fclose(log.out);
  return buf;
}

static const char hostile[] =
    "codename \"a\nforged\" 2026-01-01T00:00:00.000Z error fake: \x1b[31mred"
    "\r\x7f tab\there \xff\xfe caf\xc3\xa9 \xc2\x85 \xe2\x82";

Test(log, a_text_line_escapes_controls_and_bytes_that_are_not_utf8) {
  char *line = logged(TALLY_LOG_TEXT, hostile);
  size_t n = strlen(line);
  cr_assert(n > 0 && line[n - 1] == '\n');
  cr_expect_null(memchr(line, '\n', n - 1), "one line: %s", line);
  cr_expect_null(strchr(line, '\r'));
  cr_expect_null(strchr(line, '\x1b'));
  cr_expect_null(strchr(line, '\x7f'));
  cr_expect_null(strchr(line, '\t'));
  cr_expect(strstr(line, "a\\nforged") != NULL, "%s", line);
  cr_expect(strstr(line, "\\x1b[31mred\\r\\x7f tab\\there") != NULL, "%s",
            line);
  cr_expect(strstr(line, "\\xff\\xfe caf\xc3\xa9 \\xc2\\x85 \\xe2\\x82") !=
                NULL,
            "%s", line);
  free(line);
}

Test(log, a_json_line_stays_json_with_the_text_in_it) {
  char *line = logged(TALLY_LOG_JSON, hostile);
  size_t n = strlen(line);
  cr_expect_null(memchr(line, '\n', n - 1), "one line: %s", line);
  cJSON *j = cJSON_Parse(line);
  cr_assert_not_null(j, "not JSON: %s", line);
  const char *msg = cJSON_GetObjectItem(j, "msg")->valuestring;
  /* JSON escapes the controls itself: they come back as they were. */
  cr_expect(strstr(msg, "a\nforged") != NULL);
  cr_expect(strstr(msg, "\x1b[31mred\r\x7f tab\there") != NULL);
  cr_expect(strstr(msg, "\\xff\\xfe caf\xc3\xa9 \\xc2\\x85 \\xe2\\x82") !=
            NULL);
  cJSON_Delete(j);
  free(line);
}

Test(log, escape_stops_at_an_escape_that_does_not_fit) {
  char out[8];
  size_t n = tally_log_escape(out, sizeof(out), "ab\n\xff\xff", 5, true);
  cr_expect_str_eq(out, "ab\\n");
  cr_expect_eq(n, 4);
}
