/* A Redis connection on a libuv loop: tally's own glue for hiredis's async
 * API, with a watchdog on every command and reconnection with backoff. */
#ifndef TALLY_REDIS_H
#define TALLY_REDIS_H

#include <stdbool.h>
#include <stdint.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "redis/slots.h"

typedef struct tally_redis_s tally_redis_t;

/* The environment variable that holds the password when the URL has
 * none. tally_redis_credentials puts a password given otherwise there, so
 * that child processes (tallyd's rescore) get it without seeing it in
 * their arguments. */
#define TALLY_REDIS_PASSWORD_ENV "TALLY_REDIS_PASSWORD"
/* The same for the sentinels' password (sentinel:// URLs). */
#define TALLY_SENTINEL_PASSWORD_ENV "TALLY_SENTINEL_PASSWORD"

/* The most cluster nodes a connection that follows a slot remembers. */
#define TALLY_REDIS_MAX_KNOWN 32

/* The most sentinels one URL may name. */
#define TALLY_REDIS_MAX_SENTINELS 16

typedef struct tally_redis_addr_s {
  char *host; /* an IP address */
  int port;
} tally_redis_addr_t;

/* Where a Redis server listens (host and port, or a Unix socket path),
 * and who to log in as. */
typedef struct tally_redis_url_s {
  char *host; /* an IP address, or NULL (a sentinel:// URL: the master's
                 address once found, set by the connection) */
  int port;   /* 6379 when the URL gives none */
  char *path; /* a Unix socket, or NULL */
  int db;
  char *user;     /* for AUTH USER PASSWORD, or NULL: the default user */
  char *password; /* for AUTH, or NULL: no AUTH */
  char *display;  /* the URL without its password: for every message */
  /* sentinel:// only: the sentinels (port 26379 unless given), the
   * master's name, and the sentinels' own login (never the data
   * nodes'). */
  tally_redis_addr_t sentinels[TALLY_REDIS_MAX_SENTINELS];
  size_t nsentinels;
  char *master;
  char *sentinel_user, *sentinel_password;
} tally_redis_url_t;

/* Parses "redis://[USER[:PASSWORD]@]IP[:PORT][/DB]" (IPv6 in brackets),
 * "unix://[USER[:PASSWORD]@]/PATH[?db=N&user=U&password=P]" or
 * "sentinel://[USER[:PASSWORD]@]IP[:PORT][,IP[:PORT]...]/MASTER[/DB]
 * [?sentinel_user=U&sentinel_password=P]" (USER and PASSWORD: the data
 * nodes'; the query: the sentinels'), user and password percent-decoded,
 * into u. The password, when the URL has none, comes from
 * TALLY_REDIS_PASSWORD_ENV, and the sentinels' from
 * TALLY_SENTINEL_PASSWORD_ENV. Returns 0, or TALLY_EINVAL with err
 * naming the problem and the URL with its password masked (a host name is
 * a problem: hiredis resolves names with a blocking call; so is rediss://,
 * as this hiredis has no TLS). On error u needs no free. */
int tally_redis_url_parse(tally_redis_url_t *u, const char *url, char *err,
                          size_t errlen);
void tally_redis_url_free(tally_redis_url_t *u);

/* Settles where the password comes from, once, at a program's start: the
 * URL's own, or the first line of password_file (may be NULL), or else
 * TALLY_REDIS_PASSWORD_ENV as it is. The password found is put in
 * TALLY_REDIS_PASSWORD_ENV, and *clean receives the URL without it
 * (malloc'ed; the caller frees it), to use from then on. Returns 0, or a
 * negative code with err saying why (never the password). */
int tally_redis_credentials(const char *url, const char *password_file,
                            char **clean, char *err, size_t errlen);
/* The same for the sentinels' password of a sentinel:// URL (its
 * sentinel_password, or the first line of sentinel_password_file), into
 * TALLY_SENTINEL_PASSWORD_ENV; *clean without it. With a file and a URL
 * that is not sentinel://, an error. */
int tally_redis_sentinel_credentials(const char *url,
                                     const char *sentinel_password_file,
                                     char **clean, char *err, size_t errlen);

/* Reads a password: the first line of the regular file path (4096 bytes at
 * most, its final newline dropped), into *out (malloc'ed). Returns 0, or a
 * negative code with err naming the file and the cause. */
int tally_redis_read_password(const char *path, char **out, char *err,
                              size_t errlen);
/* The same, for the secret of another flag (--judge-key-file), which its
 * messages name. */
int tally_redis_read_secret(const char *path, const char *flag, char **out,
                            char *err, size_t errlen);

/* Connects with hiredis's blocking API, logs in (AUTH) when u has a
 * password and selects u's database, every step bounded by timeout_ms.
 * Returns the context, or NULL with err naming the server (u->display),
 * the user and the cause. */
redisContext *tally_redis_connect_sync(const tally_redis_url_t *u,
                                       uint64_t timeout_ms, char *err,
                                       size_t errlen);

/* On a Redis Cluster, the master that serves slot: *c (connected to any
 * node of u's cluster, or to one server) is kept when it is that master
 * or not a cluster node, else replaced by a connection to the master
 * (with u's login; the old one freed). *cluster says which. Returns 0,
 * or -1 with err naming the cause (*c then unchanged). */
int tally_redis_slot_sync(redisContext **c, const tally_redis_url_t *u,
                          unsigned slot, uint64_t timeout_ms, bool *cluster,
                          char *err, size_t errlen);

/* Connects, as tally_redis_connect_sync does with u's login and
 * database, to the node at host:port (a cluster node a slot map or a
 * redirection named) rather than u's address. */
redisContext *tally_redis_connect_node_sync(const tally_redis_url_t *u,
                                            const char *host, int port,
                                            uint64_t timeout_ms, char *err,
                                            size_t errlen);

/* Whether c is a TCP connection to host:port. */
bool tally_redis_sync_at(const redisContext *c, const char *host, int port);

/* How many MOVED or ASK redirections one command follows. */
#define TALLY_REDIRECT_HOPS 5

/* Runs the formatted command cmd (redisFormatCommand) on c. On a
 * cluster's MOVED or ASK the command runs again on the node named
 * (ASKING first for ASK), through *aside: a connection with u's login,
 * kept for the next command while it names the same node, replaced when
 * another is named (the caller frees it). Returns the reply (error
 * replies included), or NULL with err naming the server and the cause
 * when a connection failed. */
redisReply *tally_redis_run_sync(redisContext *c, redisContext **aside,
                                 const tally_redis_url_t *u, const char *cmd,
                                 size_t len, uint64_t timeout_ms, char *err,
                                 size_t errlen);

/* A command's callback. reply is NULL when the command failed: the
 * connection dropped, or the watchdog fired; r->why says which. A reply is
 * valid only during the callback. */
typedef void (*tally_redis_cb)(tally_redis_t *r, redisReply *reply,
                               void *privdata);

typedef struct tally__redis_cmd_s tally__redis_cmd_t;

enum tally_redis_state_e {
  TALLY_REDIS_IDLE = 0,   /* waiting to (re)connect */
  TALLY_REDIS_CONNECTING, /* TCP or Unix connect in progress */
  TALLY_REDIS_UP,         /* connected (and SELECT done) */
  TALLY_REDIS_CLOSING     /* tally_redis_close called */
};

struct tally_redis_s {
  /* Settings: fill in after tally_redis_init, before tally_redis_start. */
  uint64_t connect_timeout_ms; /* default 2000 */
  uint64_t backoff_min_ms;     /* default 100 */
  uint64_t backoff_max_ms;     /* default 5000 */
  /* Called once the connection is usable, and when it is lost (why says
   * why). Both may be NULL. */
  void (*on_up)(tally_redis_t *r);
  void (*on_down)(tally_redis_t *r, const char *why);
  /* Called when a connection attempt failed, or a connection was lost,
   * with the next attempt delay_ms away. May be NULL. */
  void (*on_retry)(tally_redis_t *r, const char *why, uint64_t delay_ms);
  void *data; /* the user's */
  /* A Redis Cluster slot (0..16383) to follow, or -1 (the default). When
   * the server turns out to be a cluster node (it answers CLUSTER SLOTS),
   * the connection goes to the master serving that slot, and goes there
   * again after a MOVED reply or a lost connection, asking any node it has
   * seen in the map where the slot is now. On one server it changes
   * nothing. Not with sentinel:// URLs. */
  int follow_slot;

  /* Read-only for users. */
  int state;
  char why[256];     /* the last failure */
  uint64_t attempts; /* connection attempts so far */
  uint64_t failures; /* attempts or connections that failed */
  uint64_t streak;   /* retries since the connection was last up */
  uint64_t ups;      /* times the connection came up (reconnects + 1) */
  /* sentinel:// (or a followed slot): the master followed ("IP:PORT", ""
   * until found), and how many times it changed (failovers, and slot
   * moves, followed). */
  char master[64];
  uint64_t failovers;
  bool cluster; /* follow_slot set and the server is a cluster node */

  /* Private. */
  uv_loop_t *loop;
  char *url;
  tally_redis_url_t addr;
  redisAsyncContext *ac;
  /* sentinel:// only: whether ac is (being) connected to a sentinel to
   * ask for the master, the sentinel to ask next, how many were asked in
   * this round, the one that answered last, and a connection to it
   * subscribed to +switch-master (NULL: none; started again from the
   * watchdog at sub_retry_at). */
  bool via_sentinel;
  size_t sidx, sasked, sgood;
  redisAsyncContext *sub;
  uint64_t sub_retry_at;
  /* A followed slot: the nodes the last map named, the next to try after
   * a failure, the hops from node to node since the last up, and whether
   * the next attempt's address is set already (a MOVED). */
  tally_slot_addr_t known[TALLY_REDIS_MAX_KNOWN];
  size_t nknown, kidx;
  unsigned hops;
  bool hop_set;
  uv_timer_t timer; /* backoff and watchdog */
  uint64_t backoff_ms;
  uint64_t connect_deadline;
  tally__redis_cmd_t *cmds; /* in flight, oldest first */
  tally__redis_cmd_t *cmds_tail;
  void (*close_cb)(tally_redis_t *r);
};

/* Parses url ("redis://HOST:PORT[/DB]" with HOST an IP address, or
 * "unix:///PATH[?db=N]") and prepares r on loop. Nothing connects until
 * tally_redis_start. Returns 0, or TALLY_EINVAL with err naming the
 * problem (a host name, since hiredis resolves names with a blocking
 * call). On error r needs no close. */
int tally_redis_init(uv_loop_t *loop, tally_redis_t *r, const char *url,
                     char *err, size_t errlen);

/* Starts connecting; on failure it retries with exponential backoff and
 * jitter, forever, until tally_redis_close. */
void tally_redis_start(tally_redis_t *r);

/* Sends a command with a watchdog of timeout_ms. Returns 0, or a negative
 * code if the connection is not up (cb is then never called). */
int tally_redis_command(tally_redis_t *r, uint64_t timeout_ms,
                        tally_redis_cb cb, void *privdata, int argc,
                        const char **argv, const size_t *argvlen);

/* Sends MULTI, the n commands (argc[i], argv[i], argvlen[i]) and EXEC,
 * each with a watchdog of timeout_ms, all at once so that nothing else is
 * queued between them. cb gets EXEC's reply: an array of the n replies,
 * or an error; when a queued command was refused (an OOM), that refusal
 * rather than EXECABORT. Returns 0, or a negative code when the
 * transaction could not be sent (cb is then never called; a part already
 * sent is undone by resetting the connection). */
int tally_redis_transaction(tally_redis_t *r, uint64_t timeout_ms,
                            tally_redis_cb cb, void *privdata, unsigned n,
                            const int *argc, const char *const *const *argv,
                            const size_t *const *argvlen);

/* Says that r's user has set up what it needs on the connection and that
 * it works (a command of its own succeeded): the backoff starts again from
 * backoff_min_ms. Until then every failure, even after a connect and a
 * login that worked, doubles it, so that a server that accepts
 * connections but refuses the work (OOM, MISCONF, LOADING, NOAUTH) is not
 * reconnected to in a tight loop. */
void tally_redis_healthy(tally_redis_t *r);

/* Drops the current connection (failing its commands with why) and
 * reconnects after the backoff. */
void tally_redis_reset(tally_redis_t *r, const char *why);

/* Closes r: commands in flight fail, and close_cb runs once every handle
 * is closed, after which r's memory may be freed. */
void tally_redis_close(tally_redis_t *r, void (*close_cb)(tally_redis_t *r));

#endif
