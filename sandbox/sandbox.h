/* Running untrusted code (docs/sandbox.md): a model's program run by an
 * interpreter inside bubblewrap (bwrap, Debian's tool for unprivileged
 * sandboxes), with no network, no view of the host's files but a
 * read-only /usr, a private writable scratch folder, a PID namespace,
 * and limits on wall time, CPU time, memory, processes, file size and
 * output. Used by the code_sandbox scorer in the worker processes, never
 * in tallyd. */
#ifndef TALLY_SANDBOX_H
#define TALLY_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The limits and the command of a run; tally_sandbox_defaults fills the
 * safe defaults. */
typedef struct tally_sandbox_opts_s {
  /* The interpreter's command line (NULL-terminated, at most 16 words; a
   * word without '/' is looked up in /usr/bin): the program's path is
   * appended. Default: python3. */
  const char *const *command;
  double wall_s;      /* wall-clock time; default 10 s */
  double cpu_s;       /* CPU time (RLIMIT_CPU); default 5 s */
  uint64_t memory;    /* address space (RLIMIT_AS); default 512 MiB */
  unsigned processes; /* processes of the run's user (RLIMIT_NPROC);
                         default 32 */
  uint64_t file_size; /* the largest file it may write, and the size of
                         its /tmp; default 16 MiB */
  uint64_t output;    /* stdout and stderr kept, together; past it the
                         run is killed; default 1 MiB */
  unsigned uid;       /* run as root: the user the program runs as;
                         default 65534 (nobody) */
} tally_sandbox_opts_t;

void tally_sandbox_defaults(tally_sandbox_opts_t *o);

/* How a run ended. */
typedef enum {
  TALLY_SANDBOX_EXITED,   /* exit status in status */
  TALLY_SANDBOX_SIGNALED, /* killed by signal status */
  TALLY_SANDBOX_WALL,     /* past the wall-time limit: killed */
  TALLY_SANDBOX_CPU,      /* past the CPU-time limit */
  TALLY_SANDBOX_OUTPUT    /* wrote more than the output limit: killed */
} tally_sandbox_end_t;

typedef struct tally_sandbox_result_s {
  tally_sandbox_end_t end;
  int status;
  bool passed;      /* exited 0 within every limit */
  char reason[160]; /* "exit status 1", "killed by signal 9 (SIGKILL)",
                       "wall time over 10 s", ...; "exit status 0" */
  double wall_s;
  char *output; /* what it wrote (malloc'ed, NUL-terminated), at most the
                   output limit */
  size_t output_len;
} tally_sandbox_result_t;

/* Runs program (len bytes) as a file given to o's command, in a fresh
 * scratch folder that is removed afterwards. Returns 0 with *r filled
 * (free with tally_sandbox_result_free), or -1 with err naming the cause
 * when the sandbox itself could not run (bwrap missing, no scratch
 * folder): never for what the program did. Safe from several threads. */
int tally_sandbox_run(const tally_sandbox_opts_t *o, const char *program,
                      size_t len, tally_sandbox_result_t *r, char *err,
                      size_t errlen);
void tally_sandbox_result_free(tally_sandbox_result_t *r);

#endif
