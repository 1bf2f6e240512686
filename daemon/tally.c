/* The tally command line: offline scoring and config checks. */
#include "../worker/engine.h"
#include "../worker/plugins.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_JOB_FAILED 1
#define EXIT_CONFIG 2

static const char usage[] =
    "usage: tally score (--task FILE | --tasks DIR) [--plugins DIR] "
    "[JOBS...]\n"
    "       tally check [--plugins DIR] FILE|DIR...\n";

/* What every subcommand sets up: score types, plugins and tasks. */
typedef struct cli_s {
  tally_registry_t reg;
  tally_plugins_t plugins;
  tally_taskset_t tasks;
} cli_t;

static int cli_open(cli_t *c, const char *plugin_dir) {
  char err[1024];
  tally_plugins_init(&c->plugins);
  tally_taskset_init(&c->tasks);
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

static void cli_close(cli_t *c) {
  tally_taskset_close(&c->tasks);
  tally_registry_close(&c->reg);
  tally_plugins_close(&c->plugins);
}

static void print_diag(const tally_diag_t *d) {
  for (size_t i = 0; i < d->count; i++)
    fprintf(stderr, "%s\n", d->msgs[i]);
  if (d->dropped > 0)
    fprintf(stderr, "(%zu more errors not shown)\n", d->dropped);
}

/* Scores every JSON line of f, printing one line per job. Returns the
 * number of jobs that failed, or -1 on an I/O error or out of memory. */
static long score_stream(tally_engine_t *e, FILE *f, const char *name,
                         tally_buf_t *out) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  long failed = 0;
  while ((n = getline(&line, &cap, f)) > 0) {
    size_t len = (size_t)n;
    while (len > 0 && strchr(" \t\r\n", line[len - 1]))
      len--;
    if (len == 0)
      continue;
    tally_buf_reset(out);
    int rc = tally_engine_score(e, line, len, NULL, out);
    if (rc == TALLY_ENOMEM) {
      fprintf(stderr, "tally: out of memory\n");
      free(line);
      return -1;
    }
    if (rc != 0)
      failed++;
    tally_buf_putc(out, '\n');
    fwrite(out->data, 1, out->len, stdout);
  }
  int bad = ferror(f);
  free(line);
  if (bad) {
    fprintf(stderr, "tally: %s: read error\n", name);
    return -1;
  }
  return failed;
}

static int cmd_score(int argc, char **argv) {
  const char *task_path = NULL, *plugin_dir = NULL;
  int i = 0;
  for (; i < argc; i++) {
    if ((strcmp(argv[i], "--task") == 0 || strcmp(argv[i], "--tasks") == 0) &&
        i + 1 < argc && task_path == NULL)
      task_path = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc)
      plugin_dir = argv[++i];
    else if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0')
      goto bad_usage;
    else
      break;
  }
  if (task_path == NULL)
    goto bad_usage;

  cli_t c;
  int status = cli_open(&c, plugin_dir);
  tally_diag_t d;
  tally_diag_init(&d, NULL);
  if (status == 0 && tally_taskset_load(&c.tasks, &c.reg, task_path, &d)) {
    print_diag(&d);
    status = EXIT_CONFIG;
  }
  tally_diag_close(&d);
  if (status != 0) {
    cli_close(&c);
    return status;
  }

  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &c.tasks);
  tally_buf_init(&out);
  long failed = 0;
  if (i == argc) {
    failed = score_stream(&e, stdin, "stdin", &out);
  }
  for (; i < argc && failed >= 0; i++) {
    FILE *f = strcmp(argv[i], "-") == 0 ? stdin : fopen(argv[i], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", argv[i], strerror(errno));
      failed = -1;
      break;
    }
    long n = score_stream(&e, f, argv[i], &out);
    failed = n < 0 ? -1 : failed + n;
    if (f != stdin)
      fclose(f);
  }
  tally_buf_close(&out);
  tally_engine_close(&e);
  cli_close(&c);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "tally: cannot write results: %s\n", strerror(errno));
    return EXIT_JOB_FAILED;
  }
  return failed == 0 ? 0 : EXIT_JOB_FAILED;

bad_usage:
  fputs(usage, stderr);
  return EXIT_CONFIG;
}

/* Checks the task configs at path, printing a line per task or every
 * error. Returns 0 or EXIT_CONFIG. */
static int check_path(cli_t *c, const char *path) {
  tally_diag_t d;
  tally_taskset_t ts;
  int status = 0;
  tally_diag_init(&d, NULL);
  tally_taskset_init(&ts);
  if (tally_taskset_load(&ts, &c->reg, path, &d) != 0) {
    print_diag(&d);
    status = EXIT_CONFIG;
  }
  for (size_t k = 0; k < ts.count; k++) {
    const tally_task_t *t = ts.entries[k].task;
    printf("%s: ok: task %s, %s, %zu testcases, %zu subtasks, max score %g "
           "(public %g)\n",
           ts.entries[k].file, t->name, t->type->name, t->ntestcases,
           t->nsubtasks, t->max_score, t->max_public_score);
  }
  tally_taskset_close(&ts);
  tally_diag_close(&d);
  return status;
}

static int cmd_check(int argc, char **argv) {
  const char *plugin_dir = NULL;
  int i = 0;
  if (i + 1 < argc && strcmp(argv[i], "--plugins") == 0) {
    plugin_dir = argv[i + 1];
    i += 2;
  }
  if (i == argc) {
    fputs(usage, stderr);
    return EXIT_CONFIG;
  }
  cli_t c;
  int status = cli_open(&c, plugin_dir);
  /* Every path is checked, so that every error is shown at once. */
  int failed = 0;
  for (; i < argc && status == 0; i++)
    failed |= check_path(&c, argv[i]);
  if (failed)
    status = EXIT_CONFIG;
  cli_close(&c);
  return status;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "score") == 0)
    return cmd_score(argc - 2, argv + 2);
  if (argc >= 2 && strcmp(argv[1], "check") == 0)
    return cmd_check(argc - 2, argv + 2);
  fputs(usage, stderr);
  return EXIT_CONFIG;
}
