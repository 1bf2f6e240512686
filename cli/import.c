/* tally import: a harness's per-sample outputs as tally jobs, one task for
 * the whole benchmark (docs/benchmarks.md#importing-harness-outputs).
 * lm-evaluation-harness writes samples_<task>_<date>.jsonl, one line per
 * document: doc_id, doc, target, arguments, resps (a list per request of
 * the model's responses), filtered_resps, filter, metrics (the names),
 * the hashes, and each metric's value. */
#include "cli/cli.h"
#include "config/json.h"
#include "config/jsonw.h"
#include "engine/registry.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct import_s {
  const char *task;        /* the tally task's name */
  const char *category;    /* the samples' category: the harness's task */
  const char *participant; /* the model */
  const char *contest;
  const char *scorer; /* rescore with this comparator, or NULL */
  const char *metric; /* else keep this per-sample metric as the reward */
  const char *name;   /* the file, for messages */
  tally_buf_t out;
  long samples, docs, rejected;
} import_t;

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

/* Says why line lineno of the file cannot be imported. */
static int reject(import_t *im, unsigned long lineno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reject(import_t *im, unsigned long lineno, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%lu: ", im->name, lineno);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  im->rejected++;
  return 0;
}

/* Appends the start of sample k of a document: the ids, and the problem
 * and category that the task's from_job reads; the caller closes it. */
static void put_job(import_t *im, const cJSON *doc_id, long k) {
  tally_buf_t *b = &im->out;
  char sub[64];
  tally_buf_t id;
  tally_buf_init(&id);
  tally_buf_puts(&id, im->participant);
  tally_buf_putc(&id, '/');
  tally_buf_puts(&id, im->task);
  tally_buf_putc(&id, '/');
  if (cJSON_IsString(doc_id))
    tally_buf_puts(&id, doc_id->valuestring);
  else
    tally_json_num(&id, doc_id->valuedouble);
  snprintf(sub, sizeof(sub), "/%ld", k);
  tally_buf_puts(&id, sub);
  tally_buf_puts(b, "{\"submission\":");
  tally_json_str(b, tally_buf_text(&id));
  tally_buf_close(&id);
  tally_buf_puts(b, ",\"participant\":");
  tally_json_str(b, im->participant);
  tally_buf_puts(b, ",\"contest\":");
  tally_json_str(b, im->contest);
  tally_buf_puts(b, ",\"task\":");
  tally_json_str(b, im->task);
  tally_buf_puts(b, ",\"problem\":");
  tally_json_value(b, doc_id);
  tally_buf_puts(b, ",\"category\":");
  tally_json_str(b, im->category);
}

static int import_line(void *ctx, char *line, size_t len,
                       unsigned long lineno) {
  import_t *im = ctx;
  if (strspn(line, " \t") == len)
    return 0;
  const char *end = NULL;
  cJSON *s = cJSON_ParseWithOpts(line, &end, 1);
  if (!cJSON_IsObject(s)) {
    cJSON_Delete(s);
    return reject(im, lineno, "not a JSON object");
  }
  const cJSON *doc_id = cJSON_GetObjectItemCaseSensitive(s, "doc_id");
  const cJSON *target = cJSON_GetObjectItemCaseSensitive(s, "target");
  const cJSON *resps = cJSON_GetObjectItemCaseSensitive(s, "resps");
  int rc = 0;
  if (!cJSON_IsNumber(doc_id) &&
      !(cJSON_IsString(doc_id) && doc_id->valuestring[0] != '\0')) {
    rc = reject(im, lineno, "doc_id: %s",
                doc_id == NULL ? "is missing"
                               : "must be a number or a non-empty string");
    goto done;
  }
  /* The model's responses to the document's first request: a list of
   * texts for a generation task; log-likelihood pairs for a multiple
   * choice one. */
  const cJSON *first = cJSON_IsArray(resps) ? resps->child : NULL;
  bool texts = cJSON_IsArray(first) && first->child != NULL;
  for (const cJSON *r = texts ? first->child : NULL; r != NULL; r = r->next)
    texts = texts && cJSON_IsString(r);
  if (im->scorer != NULL) {
    if (!cJSON_IsString(target) && !cJSON_IsNumber(target)) {
      rc = reject(im, lineno, "target: %s",
                  target == NULL ? "is missing"
                                 : "must be a string or a number (tally "
                                   "compares a response with one expected "
                                   "answer)");
      goto done;
    }
    if (!texts) {
      rc = reject(im, lineno, "resps: %s",
                  resps == NULL ? "is missing"
                                : "holds no texts (log-likelihoods, as a "
                                  "multiple-choice task's): keep the "
                                  "harness's own metric with --metric");
      goto done;
    }
    /* Each generation is one sample: repeats give pass@k. */
    long k = 0;
    for (const cJSON *r = first->child; r != NULL; r = r->next, k++) {
      put_job(im, doc_id, k);
      tally_buf_puts(&im->out, ",\"target\":");
      tally_json_value(&im->out, target);
      tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
      tally_json_value(&im->out, r);
      tally_buf_puts(&im->out, "}}\n");
      im->samples++;
    }
  } else {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, im->metric);
    double x = cJSON_IsNumber(v) ? v->valuedouble
               : cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0)
                                 : NAN;
    if (!(x >= 0 && x <= 1)) {
      rc = reject(im, lineno, "%s: %s", im->metric,
                  v == NULL ? "is missing (the metrics of this line are in "
                              "its \"metrics\")"
                            : "must be a number from 0 to 1 (a reward)");
      goto done;
    }
    put_job(im, doc_id, 0);
    tally_buf_puts(&im->out, ",\"evaluations\":{\"answer\":");
    tally_json_num(&im->out, x);
    tally_buf_putc(&im->out, '}');
    /* The first response, when it is a text, for the failure analysis. */
    if (texts) {
      tally_buf_puts(&im->out, ",\"response\":");
      tally_json_value(&im->out, first->child);
    }
    tally_buf_puts(&im->out, "}\n");
    im->samples++;
  }
  im->docs++;
  if (im->out.len > (1u << 20)) {
    fwrite(im->out.data, 1, im->out.len, stdout);
    tally_buf_reset(&im->out);
  }
done:
  cJSON_Delete(s);
  return rc;
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

/* tally import --from lm-eval --participant P (--scorer C | --metric M)
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
  if (strcmp(from, "lm-eval") != 0) {
    fprintf(stderr,
            "tally: --from %s: unknown harness (known: lm-eval, for "
            "lm-evaluation-harness's samples_<task>_<date>.jsonl)\n",
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
    if (!task_of_file(argv[i], file_task, sizeof(file_task))) {
      fprintf(stderr,
              "tally: %s: not named samples_<task>_<date>.jsonl: give "
              "--task\n",
              argv[i]);
      return EXIT_CONFIG;
    }
    im.task = file_task;
  }
  int status = task_dir != NULL ? write_task(&im, task_dir) : 0;
  tally_buf_init(&im.out);
  for (int k = i; status == 0 && k < argc; k++) {
    char cat[256];
    im.category = task_of_file(argv[k], cat, sizeof(cat)) ? cat : im.task;
    im.name = argv[k];
    FILE *f = fopen(argv[k], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", argv[k], strerror(errno));
      status = EXIT_CONFIG;
      break;
    }
    if (cli_each_line(f, argv[k], import_line, &im) != 0)
      status = EXIT_CONFIG;
    fclose(f);
  }
  if (im.out.len > 0)
    fwrite(im.out.data, 1, im.out.len, stdout);
  tally_buf_close(&im.out);
  status = cli_flush_stdout(status, "the jobs");
  fprintf(stderr,
          "imported %ld sample%s of %ld document%s (%s), %ld line%s "
          "rejected\n",
          im.samples, im.samples == 1 ? "" : "s", im.docs,
          im.docs == 1 ? "" : "s",
          im.scorer != NULL ? "rescored by tally's scorer"
                            : "the harness's metric kept as the reward",
          im.rejected, im.rejected == 1 ? "" : "s");
  return status == 0 && im.rejected > 0 ? EXIT_JOB_FAILED : status;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}
