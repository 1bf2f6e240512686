/* tallyd as a child process for integration tests, against a real
 * redis-server from redis_fixture.h, with helpers to push jobs and check
 * that every job got exactly one outcome. */
#ifndef TALLY_TALLYD_FIXTURE_H
#define TALLY_TALLYD_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>

#include "redis_fixture.h"

typedef struct td_daemon_s {
  pid_t pid;
  char log[400];     /* its stderr, appended across restarts */
  char consumer[64]; /* --consumer */
  char mark[64];     /* TD_MARK in its environment (and its workers') */
  bool default_http; /* leave --http to its default, not a port of its own */
} td_daemon_t;

/* Starts tallyd on server's socket (none when its url is empty) with --tasks
 * examples/tasks,
 * --workers 2, --consumer NAME, --log-level debug, its log in the server's
 * folder, then args (NULL-terminated, may be NULL). env (NULL-terminated
 * "K=V" strings, may be NULL) is added to its environment. Returns 0, or
 * -1 with a message on stderr. */
int td_start(td_daemon_t *d, const tr_redis_t *server, const char *name,
             const char *const *args, const char *const *env);

/* Copies examples/tasks into dir/tasks and writes that path into out
 * (len bytes); writes text into the file dir/name. Both assert. */
void td_copy_tasks(const char *dir, char *out, size_t len);
void td_put(const char *dir, const char *name, const char *text);

/* Sends sig. */
void td_signal(td_daemon_t *d, int sig);

/* Waits up to timeout_ms for the daemon to exit. Returns its wait status,
 * or -1 if it is still running. */
int td_wait(td_daemon_t *d, int timeout_ms);

/* SIGKILLs the daemon (if running) and reaps it. */
void td_kill(td_daemon_t *d);

/* True when the daemon's log contains text. */
bool td_log_has(const td_daemon_t *d, const char *text);

/* Prints the daemon's log to stderr (for failing tests). */
void td_log_dump(const td_daemon_t *d);

/* Asserts cond (in a Criterion test), printing d's log first when it
 * fails. */
#define TD_REQUIRE(d, cond, ...)                                               \
  do {                                                                         \
    if (!(cond)) {                                                             \
      td_log_dump(d);                                                          \
      cr_assert_fail(__VA_ARGS__);                                             \
    }                                                                          \
  } while (0)

/* Writes text to dir/name (asserting), for task files. */
void td_write_file(const char *dir, const char *name, const char *text);

/* How many live processes carry this daemon's mark (tallyd and its
 * workers), found through /proc/PID/environ. */
int td_marked(const td_daemon_t *d);

/* The pids of the daemon's child processes (its workers, and a rescore
 * while one runs), at most max of them, in pids. Returns how many. */
int td_children(const td_daemon_t *d, pid_t *pids, int max);

/* Connects to the server (asserting). */
redisContext *td_connect(const tr_redis_t *server);

/* XADD tally:jobs * job TEXT; copies the entry id into id (64 bytes). */
void td_push(redisContext *c, const char *job, char *id);

/* Pushes each line of the JSON Lines file path (asserting it opens);
 * returns how many. */
int td_push_file(redisContext *c, const char *path);

/* Pushes n copies of a small valid job (task "sum", submission "sub-I"),
 * pipelined; ids (n x 64 bytes) receives the entry ids if not NULL. */
void td_push_many(redisContext *c, size_t n, char (*ids)[64]);

/* How many clients but c are connected to c's server. */
long long td_other_clients(redisContext *c);

/* XLEN key, or -1. */
long long td_xlen(redisContext *c, const char *key);

/* Waits until XLEN results + XLEN dead reaches n or timeout_ms passes.
 * Returns the last total. */
long long td_wait_outcomes(redisContext *c, long long n, int timeout_ms);

/* The number of pending entries of the group (0 if no group). */
long long td_pending(redisContext *c);

/* Checks that each of the n ids got exactly one outcome (a result with
 * that "id", or a dead letter with that id) and that no outcome names an
 * id outside the list. Returns the number of problems, each printed to
 * stderr. */
int td_check_exactly_once(redisContext *c, char (*ids)[64], size_t n);

/* The result of the job with entry id, parsed (free with cJSON_Delete),
 * or NULL when it has none. */
cJSON *td_result_of(redisContext *c, const char *id);
/* Every event of tally:public, in order, as a JSON array, each with its
 * view: a view kept at a key ("view_key") is read and put in "view". */
cJSON *td_public_events(redisContext *c);
/* The same, printed, one event per line, in a malloc'ed string: for
 * checks of what contestants may see. */
char *td_public_text(redisContext *c);

/* The field of the dead letter for the job with entry id, as a malloc'ed
 * string, or NULL. */
char *td_dead_field(redisContext *c, const char *id, const char *field);

/* Sleeps ms milliseconds. */
void td_sleep_ms(int ms);

/* The port tallyd's log says its HTTP listener is on (it was given port
 * 0), waiting up to 15 s (asserting). */
int td_http_port(td_daemon_t *d);

typedef struct td_http_s {
  int status; /* 0: no answer */
  char *body; /* free it */
} td_http_t;

/* GET http://127.0.0.1:port/path with curl (the real client an operator,
 * a browser or Prometheus uses), extra on curl's command line (headers,
 * -X); the body goes through a file in dir. */
td_http_t td_http(const char *dir, int port, const char *path,
                  const char *extra);

/* Waits up to timeout_ms until tallyd's /readyz answers 200 (curl, files
 * in dir). Returns whether it did; why (len bytes) gets the last answer's
 * body. */
bool td_wait_ready(td_daemon_t *d, const char *dir, int timeout_ms, char *why,
                   size_t len);

/* The value of the sample name (a series without labels) in tallyd's
 * /metrics on port, or -1 when it is not there. */
double td_metric(const char *dir, int port, const char *name);

#endif
