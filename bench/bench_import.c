/* An MMLU-sized benchmark end to end, offline: a samples file of
 * lm-evaluation-harness with 14,042 documents (--docs) and --repeats
 * responses each, imported with tally import (rescored by a tally scorer,
 * and again keeping the harness's metric), then reported with tally
 * report --results over the one task file the import wrote. Prints the
 * median seconds of each step over --rounds, and the rates. */
#include "bench_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *subjects[] = {"anatomy", "astronomy", "law", "virology",
                                 "marketing"};

/* Writes the samples file: document d's target is a number; its
 * responses end with it, or with another one, as the seeded generator
 * decides. */
static void write_samples(const char *path, long docs, int repeats) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    bench_die("%s: cannot write", path);
  unsigned long long x = 42;
  for (long d = 0; d < docs; d++) {
    fprintf(f,
            "{\"doc_id\": %ld, \"doc\": {\"question\": \"Which is right for "
            "question %ld?\", \"subject\": \"%s\", \"choices\": [\"a\", "
            "\"b\", \"c\", \"d\"]}, \"target\": \"%ld\", \"arguments\": "
            "{\"gen_args_0\": {\"arg_0\": \"Question %ld\", \"arg_1\": "
            "{\"until\": [\"\\n\\n\"]}}}, \"resps\": [[",
            d, d, subjects[d % 5], d % 97, d);
    int right = 0;
    for (int r = 0; r < repeats; r++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      bool ok = (x >> 33) % 3 != 0;
      right += ok;
      fprintf(f, "%s\"Let me think step by step. The answer is %ld.\"",
              r ? ", " : "", ok ? d % 97 : d % 97 + 1);
    }
    fprintf(f,
            "]], \"filtered_resps\": [\"%ld\"], \"filter\": \"strict-match\", "
            "\"metrics\": [\"exact_match\"], \"doc_hash\": \"h%ld\", "
            "\"prompt_hash\": \"p%ld\", \"target_hash\": \"t%ld\", "
            "\"exact_match\": %s}\n",
            d % 97, d, d, d, right > 0 ? "1.0" : "0.0");
  }
  fclose(f);
}

/* Runs tally with args, stdout to out; returns the seconds it took. */
static double timed(char **args, const char *out) {
  double t0 = bench_now_s();
  pid_t pid = bench_spawn(args, out, "stderr.log");
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    bench_show_log("stderr.log");
    bench_die("%s %s failed", args[0], args[1]);
  }
  return bench_now_s() - t0;
}

int main(int argc, char **argv) {
  long docs = 14042;
  int repeats = 5, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--docs") == 0 && i + 1 < argc)
      docs = atol(argv[++i]);
    else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: bench_import [--docs N] [--repeats R] [--rounds K]\n"
              "  --docs N     documents in the samples file (default 14042)\n"
              "  --repeats R  responses per document (default 5)\n"
              "  --rounds K   runs of each step, for medians (default 5)\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (docs < 1 || repeats < 1 || repeats > 100 || rounds < 1 || rounds > 20) {
    fprintf(stderr, "bench_import: --docs 1 or more, --repeats 1-100, "
                    "--rounds 1-20\n");
    return 2;
  }
  bench_begin("bench_import", NULL);
  char samples[600], tasks[600], jobs[600];
  snprintf(samples, sizeof(samples), "%s/samples_mmlu_2026-11-29.jsonl",
           bench_dir());
  snprintf(tasks, sizeof(tasks), "%s/tasks", bench_dir());
  snprintf(jobs, sizeof(jobs), "%s/jobs.jsonl", bench_dir());
  write_samples(samples, docs, repeats);
  char *tally = (char *)bench_next_to_me("tally");
  char *import_scorer[] = {tally,      "import",        "--from",
                           "lm-eval",  "--participant", "model-a",
                           "--scorer", "last_number",   "--task-dir",
                           tasks,      samples,         NULL};
  char *import_metric[] = {
      tally,        "import",   "--from",      "lm-eval", "--participant",
      "model-a",    "--metric", "exact_match", "--task",  "mmlu_em",
      "--task-dir", tasks,      samples,       NULL};
  char *report[] = {tally,     "report", "--results", jobs,
                    "--tasks", tasks,    "--json",    NULL};
  double imp[20], met[20], rep[20];
  for (int r = 0; r < rounds; r++) {
    imp[r] = timed(import_scorer, "jobs.jsonl");
    rep[r] = timed(report, "report.json");
    met[r] = timed(import_metric, "metric.jsonl");
    fprintf(stderr,
            "round %d: import %.3f s, report %.3f s, import "
            "(metric) %.3f s\n",
            r + 1, imp[r], rep[r], met[r]);
  }
  long samples_n = docs * repeats;
  double mi = bench_median(imp, rounds), mr = bench_median(rep, rounds),
         mm = bench_median(met, rounds);
  printf("bench_import: %ld documents x %d responses (%ld samples), "
         "medians of %d\n",
         docs, repeats, samples_n, rounds);
  printf("  tally import --scorer last_number  %7.3f s  %9.0f samples/s\n", mi,
         (double)samples_n / mi);
  printf("  tally report --results             %7.3f s  %9.0f samples/s\n", mr,
         (double)samples_n / mr);
  printf("  import and report together         %7.3f s\n", mi + mr);
  printf("  tally import --metric exact_match  %7.3f s  %9.0f documents/s\n",
         mm, (double)docs / mm);
  return 0;
}
