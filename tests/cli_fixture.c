/* The tally child-process test fixture: see cli_fixture.h. */
#include "cli_fixture.h"
#include "engine/taskset.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *folder;

void tc_setup(char *dir, size_t len, const char *tag) {
  snprintf(dir, len, "/tmp/tally-%s-XXXXXX", tag);
  cr_assert_not_null(mkdtemp(dir));
  folder = dir;
}

void tc_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", folder);
  if (system(cmd) != 0)
    cr_log_info("could not remove %s", folder);
}

const char *tc_at(const char *name) {
  static char bufs[4][256];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, 256, "%s/%s", folder, name);
  return b;
}

void tc_write_file(const char *name, const char *text) {
  FILE *f = fopen(tc_at(name), "w");
  cr_assert_not_null(f, "%s", tc_at(name));
  fputs(text, f);
  fclose(f);
}

char *tc_slurp(const char *path) {
  char *text = NULL;
  size_t len = 0;
  char err[256];
  cr_assert_eq(tally_read_file(path, &text, &len, err, sizeof(err)), 0, "%s",
               err);
  return text;
}

pid_t tc_start(const char *const *args, const char *stdin_name,
               const char *cwd) {
  const char *argv[24] = {TC_TALLY};
  size_t n = 1;
  for (; args[n - 1] != NULL && n < 23; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  /* Not tc_at(): the arguments may live in its buffers. */
  char in[256], out[256], err[256];
  snprintf(in, sizeof(in), "%s/%s", stdin_name ? folder : "/dev",
           stdin_name ? stdin_name : "null");
  snprintf(out, sizeof(out), "%s/.stdout", folder);
  snprintf(err, sizeof(err), "%s/.stderr", folder);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    int fds[3] = {open(in, O_RDONLY),
                  open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
                  open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644)};
    for (int k = 0; k < 3; k++)
      if (fds[k] < 0 || dup2(fds[k], k) < 0)
        _exit(126);
    if (cwd != NULL && chdir(cwd) != 0)
      _exit(126);
    execv(TC_TALLY, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

tc_run_t tc_finish(pid_t pid) {
  int ws = 0;
  pid_t got = 0;
  for (int i = 0; i < 2000 && got == 0; i++) {
    got = waitpid(pid, &ws, WNOHANG);
    if (got == 0)
      nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
  }
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &ws, 0);
    cr_log_error("tally did not exit in time");
  }
  cr_assert(!(WIFEXITED(ws) && WEXITSTATUS(ws) == 127), "cannot run %s",
            TC_TALLY);
  tc_run_t r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1,
                tc_slurp(tc_at(".stdout")), tc_slurp(tc_at(".stderr"))};
  return r;
}

tc_run_t tc_run(const char *const *args, const char *stdin_name,
                const char *cwd) {
  return tc_finish(tc_start(args, stdin_name, cwd));
}

void tc_run_free(tc_run_t *r) {
  free(r->out);
  free(r->err);
}

size_t tc_lines_of(char *text, char **lines, size_t max) {
  size_t n = 0;
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  return n;
}
