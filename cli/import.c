/* tally import: a harness's per-sample outputs as tally jobs, one task for
 * the whole benchmark (docs/benchmarks.md#importing-harness-outputs); the
 * decoders of each harness's lines are in cli/import_lines.c. */
#include "cli/import.h"
#include "cli/cli.h"
#include "config/jsonw.h"
#include "engine/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The harness's task name in a samples file's name:
 * samples_<task>_<date>.jsonl, the date being the last "_" part. Into
 * out; false when the name is not of that shape. */
static bool task_of_file(const char *path, char *out, size_t len) {
  const char *base = strrchr(path, '/');
  base = base != NULL ? base + 1 : path;
  if (strncmp(base, "samples_", 8) != 0)
    return false;
  const char *from = base + 8, *to = strrchr(from, '_');
  if (to == NULL || to == from || (size_t)(to - from) >= len)
    return false;
  memcpy(out, from, (size_t)(to - from));
  out[to - from] = '\0';
  return true;
}

/* Decodes one line of the file named name, saying why a line is
 * refused; the jobs go to stdout a megabyte at a time. */
typedef struct import_file_s {
  import_t *im;
  const char *name;
} import_file_t;

static int import_line(void *ctx, char *line, size_t len,
                       unsigned long lineno) {
  import_file_t *f = ctx;
  if (tally_import_line(f->im, line, len) != 0)
    fprintf(stderr, "%s:%lu: %s\n", f->name, lineno, f->im->why);
  if (f->im->out.len > (1u << 20)) {
    fwrite(f->im->out.data, 1, f->im->out.len, stdout);
    tally_buf_reset(&f->im->out);
  }
  return 0;
}

/* The task config the jobs need: one testcase, the problem and category
 * from each job, and the expected answer too when rescoring. */
static void task_config(const import_t *im, tally_buf_t *b) {
  tally_buf_puts(b, "{\"name\": ");
  tally_json_str(b, im->task);
  if (im->scorer != NULL) {
    tally_buf_puts(b, ", \"task_type\": \"output_only\", \"comparator\": ");
    tally_json_str(b, im->scorer);
  }
  tally_buf_puts(b, ",\n \"score_type\": \"Sum\", \"score_type_parameters\": "
                    "1, \"testcases\": {\"answer\": true},\n \"from_job\": {");
  if (im->scorer != NULL)
    tally_buf_puts(b, "\"target\": \"target\", ");
  tally_buf_puts(b, "\"problem\": \"problem\", \"category\": \"category\"}}\n");
}

/* Writes the task config into dir, unless the same is there. */
static int write_task(const import_t *im, const char *dir) {
  tally_buf_t b;
  tally_buf_init(&b);
  task_config(im, &b);
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.json", dir, im->task);
  mkdir(dir, 0777);
  FILE *f = fopen(path, "r");
  if (f != NULL) {
    char old[4096];
    size_t n = fread(old, 1, sizeof(old) - 1, f);
    old[n] = '\0';
    fclose(f);
    bool same = b.len == n && memcmp(old, b.data, n) == 0;
    tally_buf_close(&b);
    if (same)
      return 0;
    fprintf(stderr,
            "tally: %s exists and differs from the task these jobs need; "
            "nothing written (remove it, or give another --task-dir)\n",
            path);
    return EXIT_CONFIG;
  }
  f = fopen(path, "w");
  if (f == NULL || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
    fprintf(stderr, "tally: %s: %s\n", path, strerror(errno));
    tally_buf_close(&b);
    return EXIT_CONFIG;
  }
  tally_buf_close(&b);
  fprintf(stderr, "wrote %s\n", path);
  return 0;
}

/* tally import --from lm-eval|nemo --participant P (--scorer C | --metric M)
 * [--contest C] [--task T] [--task-dir DIR] FILE... */
int cmd_import(int argc, char **argv) {
  import_t im = {0};
  const char *from = NULL, *task_dir = NULL;
  int i = 0;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    const char **slot = strcmp(argv[i], "--from") == 0 ? &from
                        : strcmp(argv[i], "--participant") == 0
                            ? &im.participant
                        : strcmp(argv[i], "--contest") == 0  ? &im.contest
                        : strcmp(argv[i], "--scorer") == 0   ? &im.scorer
                        : strcmp(argv[i], "--metric") == 0   ? &im.metric
                        : strcmp(argv[i], "--task") == 0     ? &im.task
                        : strcmp(argv[i], "--task-dir") == 0 ? &task_dir
                                                             : NULL;
    if (slot == NULL || v == NULL || *slot != NULL)
      goto bad_usage;
    *slot = v;
    i++;
  }
  if (from == NULL || im.participant == NULL || i == argc ||
      (im.scorer == NULL) == (im.metric == NULL))
    goto bad_usage;
  if (im.contest == NULL)
    im.contest = "benchmark";
  im.nemo = strcmp(from, "nemo") == 0;
  if (strcmp(from, "lm-eval") != 0 && !im.nemo) {
    fprintf(stderr,
            "tally: --from %s: unknown harness (known: lm-eval, for "
            "lm-evaluation-harness's samples_<task>_<date>.jsonl; nemo, for "
            "NeMo Evaluator's results.jsonl)\n",
            from);
    return EXIT_CONFIG;
  }
  if (im.scorer != NULL) {
    tally_registry_t reg;
    if (tally_registry_init(&reg) != 0) {
      fprintf(stderr, "tally: out of memory\n");
      return EXIT_CONFIG;
    }
    bool known = tally_registry_find_comparator(&reg, im.scorer) != NULL;
    tally_registry_close(&reg);
    if (!known) {
      fprintf(stderr,
              "tally: --scorer %s: no such comparator (docs/comparators.md "
              "lists them: last_number, multichoice, normalized, ...)\n",
              im.scorer);
      return EXIT_CONFIG;
    }
  }
  char file_task[256];
  if (im.task == NULL) {
    if (im.nemo || !task_of_file(argv[i], file_task, sizeof(file_task))) {
      fprintf(stderr,
              im.nemo ? "tally: %s: NeMo Evaluator's results name no "
                        "benchmark: give --task\n"
                      : "tally: %s: not named samples_<task>_<date>.jsonl: "
                        "give --task\n",
              argv[i]);
      return EXIT_CONFIG;
    }
    im.task = file_task;
  }
  int status = task_dir != NULL ? write_task(&im, task_dir) : 0;
  tally_buf_init(&im.out);
  for (int k = i; status == 0 && k < argc; k++) {
    char cat[256];
    im.category =
        !im.nemo && task_of_file(argv[k], cat, sizeof(cat)) ? cat : im.task;
    import_file_t file = {&im, argv[k]};
    FILE *f = fopen(argv[k], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", argv[k], strerror(errno));
      status = EXIT_CONFIG;
      break;
    }
    if (cli_each_line(f, argv[k], import_line, &file) != 0)
      status = EXIT_CONFIG;
    fclose(f);
  }
  if (im.out.len > 0)
    fwrite(im.out.data, 1, im.out.len, stdout);
  tally_buf_close(&im.out);
  status = cli_flush_stdout(status, "the jobs");
  char docs[64] = "";
  if (!im.nemo)
    snprintf(docs, sizeof(docs), " of %ld document%s", im.docs,
             im.docs == 1 ? "" : "s");
  fprintf(stderr, "imported %ld sample%s%s (%s), %ld line%s rejected\n",
          im.samples, im.samples == 1 ? "" : "s", docs,
          im.scorer != NULL ? "rescored by tally's scorer"
                            : "the harness's metric kept as the reward",
          im.rejected, im.rejected == 1 ? "" : "s");
  return status == 0 && im.rejected > 0 ? EXIT_JOB_FAILED : status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
