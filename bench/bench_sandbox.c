/* The sandbox's cost (sandbox/sandbox.h): runs per second of a trivial
 * Python program and of a HumanEval-style check, through
 * tally_sandbox_run (bubblewrap, namespaces, limits) and through a plain
 * fork and exec of the same interpreter, one after the other in one run;
 * medians of --rounds, and the ratio. */
#include "bench_support.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char trivial[] = "pass\n";
static const char check[] =
    "def add(a, b):\n    return a + b\n"
    "def check(f):\n    assert f(1, 2) == 3\n    assert f(-1, 1) == 0\n"
    "    assert all(f(i, i) == 2 * i for i in range(1000))\n"
    "check(add)\n";

/* python3 on the program, without a sandbox. */
static void plain(const char *program) {
  char path[600];
  snprintf(path, sizeof(path), "%s/plain.py", bench_dir());
  FILE *f = fopen(path, "w");
  fputs(program, f);
  fclose(f);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/usr/bin/python3", "python3", path, (char *)NULL);
    _exit(127);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    bench_die("python3 failed");
}

static void sandboxed(const char *program) {
  tally_sandbox_opts_t o;
  tally_sandbox_defaults(&o);
  tally_sandbox_result_t r;
  char err[512];
  if (tally_sandbox_run(&o, program, strlen(program), &r, err, sizeof(err)))
    bench_die("%s", err);
  if (!r.passed)
    bench_die("the program failed in the sandbox: %s", r.reason);
  tally_sandbox_result_free(&r);
}

/* Runs per second of n runs of f on program. */
static double rate(void (*f)(const char *), const char *program, int n) {
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++)
    f(program);
  return n / (bench_now_s() - t0);
}

int main(int argc, char **argv) {
  int runs = 100, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_sandbox [--runs N] [--rounds K]\n"
                      "  --runs N    runs of each program a round "
                      "(default 100)\n"
                      "  --rounds K  rounds, for medians (default 5)\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (runs < 1 || rounds < 1 || rounds > 20) {
    fprintf(stderr, "bench_sandbox: --runs 1 or more, --rounds 1-20\n");
    return 2;
  }
  bench_begin("bench_sandbox", NULL);
  static const struct {
    const char *name, *program;
  } programs[] = {{"trivial (pass)", trivial},
                  {"HumanEval-style check", check}};
  printf("bench_sandbox: %d runs a round, medians of %d rounds\n", runs,
         rounds);
  for (size_t p = 0; p < 2; p++) {
    double s[20], u[20];
    for (int r = 0; r < rounds; r++) {
      u[r] = rate(plain, programs[p].program, runs);
      s[r] = rate(sandboxed, programs[p].program, runs);
      fprintf(stderr, "round %d, %s: %.1f runs/s plain, %.1f sandboxed\n",
              r + 1, programs[p].name, u[r], s[r]);
    }
    double ms = bench_median(s, rounds), mu = bench_median(u, rounds);
    printf("  %-24s sandboxed %6.1f runs/s (%5.1f ms a run)  plain %6.1f "
           "runs/s (%5.1f ms)  sandbox / plain time %.2f\n",
           programs[p].name, ms, 1000 / ms, mu, 1000 / mu, mu / ms);
  }
  return 0;
}
