/* The strict decoder of execution results, CMS's messages for failed
 * runs, and the checker output parser. */
#include "tasktypes/execution.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of tally_exec_status_t. */
static const char *const status_names[] = {
    "ok",     "timeout",      "wall_timeout", "memory",
    "signal", "nonzero_exit", "output_limit", NULL,
};

/* CMS's messages (cms/grading/steps/evaluation.py), in the same order. */
static const char *const status_messages[] = {
    NULL,
    "Execution timed out",
    "Execution timed out (wall clock limit exceeded)",
    "Memory limit exceeded",
    "Execution killed by signal",
    "Execution failed because the return code was nonzero",
    "Execution killed by signal",
};

const char *tally_exec_status_name(tally_exec_status_t status) {
  return status_names[status];
}

const char *tally_exec_message(tally_exec_status_t status) {
  return status_messages[status];
}

enum {
  MEMBER_STATUS,
  MEMBER_TIME,
  MEMBER_WALL_TIME,
  MEMBER_MEMORY,
  MEMBER_EXIT_CODE,
  MEMBER_SIGNAL,
  MEMBER_OUTPUT,
  MEMBER_CHECKER,
  MEMBER_COUNT
};

static const char *const member_names[MEMBER_COUNT] = {
    "status",    "time",   "wall_time", "memory",
    "exit_code", "signal", "output",    "checker",
};

/* Checks a number member: non-negative (amounts) or whole (codes), finite,
 * or null. Stores it in *slot, or NULL for null. */
static int check_number(const cJSON *m, bool whole, const cJSON **slot,
                        const char *codename, char *err, size_t errlen) {
  *slot = NULL;
  if (cJSON_IsNull(m))
    return 0;
  double v = cJSON_IsNumber(m) ? m->valuedouble : NAN;
  if (!whole && !(isfinite(v) && v >= 0))
    return tally_tt_error(err, errlen, codename, m->string,
                          "must be a non-negative number or null");
  if (whole && !(isfinite(v) && v == floor(v)))
    return tally_tt_error(err, errlen, codename, m->string,
                          "must be a whole number or null");
  *slot = m;
  return 0;
}

/* Decodes "checker": {"stdout": string, "stderr": string}; stderr may be
 * left out (empty). */
static int decode_checker(const cJSON *v, const char *codename,
                          tally_exec_t *ex, char *err, size_t errlen) {
  if (!cJSON_IsObject(v))
    return tally_tt_error(err, errlen, codename, "checker",
                          "must be an object with stdout and stderr");
  for (const cJSON *m = v->child; m; m = m->next) {
    const cJSON **slot = NULL;
    const char *at = NULL;
    if (strcmp(m->string, "stdout") == 0) {
      slot = &ex->checker_stdout;
      at = "checker.stdout";
    } else if (strcmp(m->string, "stderr") == 0) {
      slot = &ex->checker_stderr;
      at = "checker.stderr";
    }
    if (slot == NULL) {
      char member[80];
      snprintf(member, sizeof(member), "checker.%s", m->string);
      return tally_tt_error(err, errlen, codename, member,
                            "unknown key (a checker has stdout and stderr)");
    }
    if (*slot != NULL)
      return tally_tt_error(err, errlen, codename, at, "key appears twice");
    if (!cJSON_IsString(m))
      return tally_tt_error(err, errlen, codename, at, "must be a string");
    *slot = m;
  }
  if (ex->checker_stdout == NULL)
    return tally_tt_error(err, errlen, codename, "checker.stdout",
                          "is missing");
  return 0;
}

int tally_exec_decode(const cJSON *v, const char *codename, tally_exec_t *ex,
                      char *err, size_t errlen) {
  memset(ex, 0, sizeof(*ex));
  if (!cJSON_IsObject(v))
    return tally_tt_error(err, errlen, codename, NULL,
                          "must be an execution result, an object with "
                          "status");
  const cJSON *found[MEMBER_COUNT] = {NULL};
  for (const cJSON *m = v->child; m; m = m->next) {
    size_t i = 0;
    while (i < MEMBER_COUNT && strcmp(member_names[i], m->string) != 0)
      i++;
    if (i == MEMBER_COUNT)
      return tally_tt_error(err, errlen, codename, m->string,
                            "unknown key (an execution result has status, "
                            "time, wall_time, memory, exit_code, signal, "
                            "output and checker)");
    if (found[i] != NULL)
      return tally_tt_error(err, errlen, codename, m->string,
                            "key appears twice");
    found[i] = m;
  }

  const cJSON *status = found[MEMBER_STATUS];
  if (status == NULL)
    return tally_tt_error(err, errlen, codename, "status", "is missing");
  size_t s = 0;
  while (cJSON_IsString(status) && status_names[s] != NULL &&
         strcmp(status_names[s], status->valuestring) != 0)
    s++;
  if (!cJSON_IsString(status) || status_names[s] == NULL)
    return tally_tt_error(err, errlen, codename, "status",
                          "must be one of ok, timeout, wall_timeout, memory, "
                          "signal, nonzero_exit, output_limit");
  ex->status = (tally_exec_status_t)s;

  static const struct {
    int member;
    bool whole;
    size_t offset;
  } numbers[] = {
      {MEMBER_TIME, false, offsetof(tally_exec_t, time)},
      {MEMBER_WALL_TIME, false, offsetof(tally_exec_t, wall_time)},
      {MEMBER_MEMORY, false, offsetof(tally_exec_t, memory)},
      {MEMBER_EXIT_CODE, true, offsetof(tally_exec_t, exit_code)},
      {MEMBER_SIGNAL, true, offsetof(tally_exec_t, signal)},
  };
  for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
    const cJSON *m = found[numbers[i].member];
    const cJSON **slot = (const cJSON **)((char *)ex + numbers[i].offset);
    if (m != NULL &&
        check_number(m, numbers[i].whole, slot, codename, err, errlen) != 0)
      return TALLY_EJOB;
  }

  const cJSON *output = found[MEMBER_OUTPUT];
  const cJSON *checker = found[MEMBER_CHECKER];
  if (output != NULL && checker != NULL)
    return tally_tt_error(err, errlen, codename, "checker",
                          "output and checker exclude each other");
  if (output != NULL) {
    if (!cJSON_IsString(output))
      return tally_tt_error(err, errlen, codename, "output",
                            "must be a string");
    ex->output = output;
  }
  if (checker != NULL &&
      decode_checker(checker, codename, ex, err, errlen) != 0)
    return TALLY_EJOB;
  return 0;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
         c == '\r';
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* Narrows [*s, *s + *n) to its first line, as Python's readline() and
 * strip() would leave it. */
static void first_line(const char **s, size_t *n) {
  const char *nl = memchr(*s, '\n', *n);
  if (nl != NULL)
    *n = (size_t)(nl - *s);
  while (*n > 0 && is_space(**s)) {
    (*s)++;
    (*n)--;
  }
  while (*n > 0 && is_space((*s)[*n - 1]))
    (*n)--;
}

/* Whether s (n bytes) is a plain decimal number: an optional sign,
 * digits with an optional fraction (or a fraction alone), and an optional
 * exponent. No hex, inf, nan or digit separators. */
static bool is_decimal(const char *s, size_t n) {
  size_t i = 0, digits = 0;
  if (i < n && (s[i] == '+' || s[i] == '-'))
    i++;
  while (i < n && is_digit(s[i]))
    i++, digits++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && is_digit(s[i]))
      i++, digits++;
  }
  if (digits == 0)
    return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    size_t exp = 0;
    while (i < n && is_digit(s[i]))
      i++, exp++;
    if (exp == 0)
      return false;
  }
  return i == n;
}

/* Writes up to 40 bytes of s into buf for an error message, printable
 * ASCII only. */
static void snippet(const char *s, size_t n, char *buf, size_t len) {
  size_t k = 0;
  for (size_t i = 0; i < n && i < 40 && k + 4 < len; i++)
    buf[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
  if (n > 40 && k + 4 < len) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
}

/* Appends s (n bytes) to t without ANSI escapes: like CMS, each ESC up to
 * and including the next 'm' is dropped. */
static int append_filtered(tally_text_t *t, const char *s, size_t n) {
  bool escape = false;
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\033' && !escape) {
      if (tally_text_append(t, s + run, i - run) != 0)
        return TALLY_ENOMEM;
      escape = true;
    }
    if (escape && s[i] == 'm') {
      escape = false;
      run = i + 1;
    }
  }
  if (!escape && tally_text_append(t, s + run, n - run) != 0)
    return TALLY_ENOMEM;
  return 0;
}

/* CMS's stock messages a checker may ask for with "translate:NAME". */
static const char *translated(const char *s, size_t n) {
  static const struct {
    const char *name;
    const char *message;
  } stock[] = {
      {"success", "Output is correct"},
      {"partial", "Output is partially correct"},
      {"wrong", "Output isn't correct"},
  };
  static const char prefix[] = "translate:";
  size_t p = sizeof(prefix) - 1;
  if (n < p || memcmp(s, prefix, p) != 0)
    return NULL;
  s += p;
  n -= p;
  first_line(&s, &n); /* strips both ends */
  for (size_t i = 0; i < sizeof(stock) / sizeof(stock[0]); i++)
    if (strlen(stock[i].name) == n && memcmp(stock[i].name, s, n) == 0)
      return stock[i].message;
  return NULL;
}

/* The admin text: every line after the first that starts with
 * ADMIN_MESSAGE:, without the prefix, trimmed, one per line. */
static int collect_admin(const char *s, size_t n, tally_text_t *admin) {
  static const char prefix[] = "ADMIN_MESSAGE:";
  const size_t p = sizeof(prefix) - 1;
  const char *nl = memchr(s, '\n', n);
  while (nl != NULL) {
    n -= (size_t)(nl + 1 - s);
    s = nl + 1;
    nl = memchr(s, '\n', n);
    size_t len = nl ? (size_t)(nl - s) : n;
    if (len < p || memcmp(s, prefix, p) != 0)
      continue;
    const char *line = s + p;
    size_t line_len = len - p;
    first_line(&line, &line_len);
    if ((admin->len > 0 && tally_text_append(admin, "\n", 1) != 0) ||
        tally_text_append(admin, line, line_len) != 0)
      return TALLY_ENOMEM;
  }
  return 0;
}

int tally_checker_parse(const char *out, size_t out_len, const char *errtext,
                        size_t err_len, const char *codename,
                        tally_tt_eval_t *res, char *err, size_t errlen) {
  const char *num = out;
  size_t num_len = out_len;
  first_line(&num, &num_len);
  char shown[64];
  snippet(num, num_len, shown, sizeof(shown));
  if (num_len == 0)
    return tally_tt_error(err, errlen, codename, "checker.stdout",
                          "the first line must be the outcome, a number in "
                          "[0, 1], but it is empty");
  if (!is_decimal(num, num_len) || num_len > 64)
    return tally_tt_error(err, errlen, codename, "checker.stdout",
                          "the first line must be the outcome, a number in "
                          "[0, 1], not \"%s\"",
                          shown);
  char buf[80];
  memcpy(buf, num, num_len);
  buf[num_len] = '\0';
  double v = strtod(buf, NULL);
  if (!(v >= 0.0 && v <= 1.0))
    return tally_tt_error(err, errlen, codename, "checker.stdout",
                          "the outcome %s is outside [0, 1]", shown);
  res->outcome = v == 0.0 ? 0.0 : v; /* no -0 */

  const char *msg = errtext;
  size_t msg_len = err_len;
  first_line(&msg, &msg_len);
  res->message.len = 0;
  if (tally_text_set(&res->message, "", 0) != 0 ||
      append_filtered(&res->message, msg, msg_len) != 0)
    return TALLY_ENOMEM;
  const char *stock = translated(res->message.data, res->message.len);
  if (stock != NULL && tally_text_set(&res->message, stock, strlen(stock)) != 0)
    return TALLY_ENOMEM;
  return collect_admin(errtext, err_len, &res->admin);
}
