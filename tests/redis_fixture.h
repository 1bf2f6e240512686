/* A real redis-server for integration tests and benchmarks: started in a
 * temporary folder on a Unix socket (and optionally a loopback port),
 * stopped after. tr_redis_spawn is the one place that starts a
 * redis-server for the tests and the benches (tallyd's own embedded
 * server is daemon/embedded.c). */
#ifndef TALLY_REDIS_FIXTURE_H
#define TALLY_REDIS_FIXTURE_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct tr_redis_s {
  char dir[256];
  char sock[300];
  char url[320]; /* unix:///... */
  int port;      /* 0: Unix socket only */
  bool aof;
  pid_t pid;
} tr_redis_t;

/* In a child process: runs server (NULL: redis-server on PATH) listening
 * on the Unix socket sock, with args (NULL-terminated) after it, its
 * output appended to log (NULL: /dev/null). Does not return. */
void tr_redis_exec(const char *server, const char *sock,
                   const char *const *args, const char *log);
/* Starts tr_redis_exec in a child and waits up to 10 s for the server to
 * answer PING on sock. Returns its pid, or -1 with the cause on stderr. */
pid_t tr_redis_spawn(const char *server, const char *sock,
                     const char *const *args, const char *log);

/* Makes a temporary folder and starts redis-server there. port 0 means
 * no TCP. Returns 0, or -1 with a message on stderr. */
int tr_redis_start(tr_redis_t *t, int port, bool aof);
/* Starts the server again in the same folder (after a kill). */
int tr_redis_restart(tr_redis_t *t);
/* Sends sig to the server. */
void tr_redis_signal(tr_redis_t *t, int sig);
/* Kills the server (SIGKILL) and reaps it. */
void tr_redis_kill(tr_redis_t *t);
/* Stops the server and removes the folder. */
void tr_redis_stop(tr_redis_t *t);
/* tr_redis_start with no TCP port nor AOF, and a client connected to the
 * server's socket. Returns the client, or NULL (the server stopped again)
 * with a message on stderr. */
redisContext *tr_redis_start_client(tr_redis_t *t);
/* Frees client c (may be NULL) and stops the server. */
void tr_redis_stop_client(tr_redis_t *t, redisContext *c);
/* Runs a command synchronously; returns the integer reply, or -1. */
long long tr_redis_int(tr_redis_t *t, const char *fmt, ...);
/* A loopback TCP port nothing listens on right now. */
int tr_free_port(void);
/* Waits (up to timeout_ms) until the master c (a redisContext) has a
 * replica online: a replica of a server just started, or repointed by a
 * failover, syncs in full first, which on a loaded machine can take longer
 * than a WAIT gives. Returns whether one is. */
bool tr_wait_replica_online(void *c, int timeout_ms);

#endif
