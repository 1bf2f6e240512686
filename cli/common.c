/* What the commands share: task configs, JSON Lines, output. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

int cli_open(cli_t *c, const char *plugin_dir) {
  char err[1024];
  tally_plugins_init(&c->plugins);
  tally_taskset_init(&c->tasks);
  tally_contestset_init(&c->contests);
  if (tally_registry_init(&c->reg) != 0) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_CONFIG;
  }
  if (plugin_dir != NULL &&
      tally_plugins_load_dir(&c->plugins, &c->reg, plugin_dir, err,
                             sizeof(err)) != 0) {
    fprintf(stderr, "tally: %s\n", err);
    return EXIT_CONFIG;
  }
  return 0;
}

void cli_close(cli_t *c) {
  tally_taskset_close(&c->tasks);
  tally_contestset_close(&c->contests);
  tally_registry_close(&c->reg);
  tally_plugins_close(&c->plugins);
}

void cli_print_diag(const tally_diag_t *d) {
  for (size_t i = 0; i < d->count; i++)
    fprintf(stderr, "%s\n", d->msgs[i]);
  if (d->dropped > 0)
    fprintf(stderr, "(%zu more errors not shown)\n", d->dropped);
}

/* Flushes stdout at the end of a subcommand. Returns status, or, when it
 * was 0 and the flush fails, EXIT_JOB_FAILED after saying what could not
 * be written (what may be NULL: nothing is said). */
int cli_flush_stdout(int status, const char *what) {
  if (fflush(stdout) == 0 || status != 0)
    return status;
  if (what != NULL)
    fprintf(stderr, "tally: cannot write %s: %s\n", what, strerror(errno));
  return EXIT_JOB_FAILED;
}

/* cli_open, then loads the task configs at path, printing every error.
 * Returns 0 or EXIT_CONFIG; either way, cli_close(c) follows. */
int cli_load(cli_t *c, const char *plugin_dir, const char *path) {
  int status = cli_open(c, plugin_dir);
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  /* The contests beside the tasks, as tallyd's workers load them. */
  if (status == 0 &&
      (tally_taskset_load(&c->tasks, &c->reg, path, &d) != 0 ||
       tally_contestset_load_beside(&c->contests, path, &d) != 0 ||
       tally_contestset_check_tasks(&c->contests, &c->tasks, &d) != 0)) {
    cli_print_diag(&d);
    status = EXIT_CONFIG;
  }
  tally_diag_close(&d);
  return status;
}

/* Calls cb for each line of f (named name) until cb returns nonzero.
 * Returns that value; TALLY_EIO after a read error, said on stderr; or 0
 * at the end of f. */
int cli_each_line(FILE *f, const char *name, line_cb cb, void *ctx) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  unsigned long lineno = 0;
  int status = 0;
  while (status == 0 && (n = getline(&line, &cap, f)) > 0) {
    size_t len = (size_t)n;
    lineno++;
    if (len > 0 && line[len - 1] == '\n')
      len--;
    if (len > 0 && line[len - 1] == '\r')
      len--;
    line[len] = '\0';
    status = cb(ctx, line, len, lineno);
  }
  if (status == 0 && ferror(f)) {
    fprintf(stderr, "tally: %s: read error\n", name);
    status = TALLY_EIO;
  }
  free(line);
  return status;
}

/* The length of line without its trailing blanks. */
size_t cli_trim_end(const char *line, size_t len) {
  while (len > 0 && strchr(" \t\r\n", line[len - 1]))
    len--;
  return len;
}

/* Parses a whole number from 1 to LONG_MAX; returns it, or 0 if s is not
 * one. */
long cli_positive(const char *s) {
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && n > 0 ? n : 0;
}

/* A JSON member name and its integer value, or null when v < 0. */
void cli_json_int(tally_buf_t *b, const char *name, long long v) {
  tally_buf_putc(b, ',');
  tally_json_str(b, name);
  tally_buf_putc(b, ':');
  if (v < 0)
    tally_buf_puts(b, "null");
  else
    tally_json_num(b, (double)v);
}

/* A JSON member name and its string value, or null when s is NULL. */
void cli_json_string(tally_buf_t *b, const char *name, const char *s) {
  tally_buf_putc(b, ',');
  tally_json_str(b, name);
  tally_buf_putc(b, ':');
  if (s == NULL)
    tally_buf_puts(b, "null");
  else
    tally_json_str(b, s);
}

volatile sig_atomic_t cli_stop_requested;

void cli_on_stop_signal(int sig) {
  (void)sig;
  cli_stop_requested = 1;
}

void cli_catch_stop_signals(void) {
  struct sigaction sa = {.sa_handler = cli_on_stop_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

const char *cli_num_text(double v, char *buf) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, v);
  snprintf(buf, 32, "%s", b.oom || b.data == NULL ? "?" : b.data);
  tally_buf_close(&b);
  return buf;
}

int cli_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text of an id (a string, or a number as tally writes it). */
char *cli_id_text(const cJSON *id, const char *dflt) {
  if (id == NULL)
    return strdup(dflt);
  if (cJSON_IsString(id))
    return strdup(id->valuestring);
  tally_buf_t b;
  tally_buf_init(&b);
  tally_json_num(&b, id->valuedouble);
  char *s = b.oom ? NULL : strdup(b.data);
  tally_buf_close(&b);
  return s;
}

int cli_each_file_line(int nfiles, char **files, const char **name, line_cb cb,
                       void *ctx) {
  *name = "stdin";
  if (nfiles == 0)
    return cli_each_line(stdin, "stdin", cb, ctx) != 0 ? EXIT_JOB_FAILED : 0;
  for (int k = 0; k < nfiles; k++) {
    bool std = strcmp(files[k], "-") == 0;
    FILE *f = std ? stdin : fopen(files[k], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", files[k], strerror(errno));
      return EXIT_JOB_FAILED;
    }
    *name = std ? "stdin" : files[k];
    int rc = cli_each_line(f, *name, cb, ctx);
    if (!std)
      fclose(f);
    if (rc != 0)
      return EXIT_JOB_FAILED;
  }
  return 0;
}

int cli_score_line(tally_engine_t *e, tally_buf_t *out, char *line, size_t len,
                   const char *name, unsigned long lineno, const char *counted,
                   long *failed, bool *blank) {
  len = cli_trim_end(line, len);
  *blank = len == 0;
  if (*blank)
    return 0;
  tally_buf_reset(out);
  int rc = tally_engine_score(e, line, len, NULL, out);
  if (rc == TALLY_ENOMEM || out->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return TALLY_ENOMEM;
  }
  if (rc != 0) {
    fprintf(stderr, "tally: %s:%lu: %s (counted as %s)\n", name, lineno, e->err,
            counted);
    (*failed)++;
  }
  return rc;
}
