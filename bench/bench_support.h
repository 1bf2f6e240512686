/* What the benchmarks share: failing with a message, a temporary folder
 * removed at exit after the bench has stopped what it started in it,
 * starting and stopping processes, and clocks. The redis-server they run
 * is started by the tests' helper (tests/redis_fixture.h). */
#ifndef TALLY_BENCH_SUPPORT_H
#define TALLY_BENCH_SUPPORT_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Names the bench in messages and makes its temporary folder; at exit
 * (normal, or through bench_die) stop is called, then the folder is
 * removed. stop may call bench_failed to show logs. */
void bench_begin(const char *name, void (*stop)(void));

/* The temporary folder. */
const char *bench_dir(void);

/* Prints "name: message" to stderr and exits with status 1. */
void bench_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Whether bench_die was called. */
bool bench_failed(void);

/* The monotonic clock, and sleeping. */
int64_t bench_now_us(void);
double bench_now_s(void);
void bench_sleep_ms(long ms);

/* Starts argv[0] (searched on PATH) with stdout to out and stderr to err,
 * files in the temporary folder (NULL keeps the bench's own; the same
 * name twice shares one file). Returns its pid; dies when it cannot
 * fork. */
pid_t bench_spawn(char **argv, const char *out, const char *err);

/* Sends sig to pid and waits up to grace_ms for it to exit, then kills
 * it. Returns the wait status, or -1 if pid was not a child. */
int bench_stop(pid_t pid, int sig, long grace_ms);

/* The program name in the folder of this bench's executable (tally,
 * tallyd), in a static buffer; dies when it cannot be found. */
const char *bench_next_to_me(const char *name);

/* Prints the last 4 KB of the file name in the temporary folder to
 * stderr. */
void bench_show_log(const char *name);

/* A connection to the server on the Unix socket sock, and commands that
 * must work (the bench dies naming Redis's error otherwise): any reply
 * but an error, or an integer. */
redisContext *bench_connect(const char *sock);
redisReply *bench_command(redisContext *c, const char *fmt, ...);
long long bench_command_int(redisContext *c, const char *fmt, ...);

/* From /proc: the CPU time of pid (user + system, all threads) in seconds
 * and its parent (0 when it is gone); the time its threads ran, adding
 * the time they waited to run to *wait; and the machine's busy and stolen
 * CPU time so far. */
double bench_proc_cpu_s(pid_t pid, pid_t *ppid);
/* The median of the n values of v (sorted in place; n > 0). */
double bench_median(double *v, int n);
double bench_proc_sched_s(pid_t pid, double *wait);
void bench_machine_cpu_s(double *busy, double *steal);

#endif
