/* tallyd's settings: defaults, then a strict JSON config file (--config),
 * then the command-line flags, which override the file. */
#ifndef TALLY_SETTINGS_H
#define TALLY_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "config/diag.h"
#include "daemon/log.h"

typedef struct tally_settings_s {
  char *tasks;               /* --tasks DIR: required */
  char *contests;            /* --contests DIR, or NULL */
  char *plugins;             /* --plugins DIR, or NULL */
  char *redis;               /* --redis URL; NULL: start an embedded server */
  char *redis_password_file; /* --redis-password-file FILE, or NULL */
  char *sentinel_password_file; /* --sentinel-password-file FILE, or NULL */
  unsigned workers; /* --workers N: default the number of CPUs, 1..256 */
  char *prefix;     /* --prefix P: default "tally" */
  char *consumer;   /* --consumer NAME: default "HOST:PID" */
  char *queues;     /* --queues Q1,Q2: the queues to consume; NULL: the default
                       queue and every queue a contest config names */
  char *default_queue;     /* --default-queue Q: the queue of contests whose
                              config names none; default "main" */
  uint64_t claim_idle;     /* --claim-idle MS: default 30000 */
  uint64_t job_timeout;    /* --job-timeout MS: default 1000 */
  uint64_t drain_timeout;  /* --drain-timeout MS: default 10000 */
  unsigned max_deliveries; /* --max-deliveries N: default 3, 1..1000 */
  unsigned wait_replicas;  /* --wait-replicas N: default 0, 0..100 */
  char *data_dir;          /* --data-dir DIR: default "tally-data" */
  tally_log_format_t log_format; /* --log-format text|json */
  tally_log_level_t log_level;   /* --log-level debug|info|warn|error */
  unsigned batch; /* --batch N: most jobs per worker batch, default 16 */
  uint64_t max_job_bytes; /* --max-job-bytes N: default 4 MiB */
  char *worker;       /* --worker PATH: default tally-worker beside tallyd */
  char *redis_server; /* --redis-server PATH: default "redis-server" */
  char *tally;        /* --tally PATH: default tally beside tallyd */
  bool auto_rescore;  /* --auto-rescore true|false: default true */
  char *pidfile;      /* --pidfile FILE, or NULL */
  /* Retention of the streams tally writes (docs/operations.md): an age
   * in ms and a count per stream, 0 for no limit, checked every
   * retain_every ms. */
  uint64_t retain_age;     /* --retain-age MS: default 7 days */
  uint64_t retain_results; /* --retain-results N: default 200000 */
  uint64_t retain_public;  /* --retain-public N: default 1000000 */
  uint64_t retain_changes; /* --retain-changes N: default 1000000 */
  uint64_t retain_dead;    /* --retain-dead N: default 100000 */
  uint64_t retain_every;   /* --retain-every MS: default 10000 */
  char *http;              /* --http ADDR: "IP:PORT", "[IPv6]:PORT" or "off";
                              default "127.0.0.1:9464" */
  char *http_token_file;   /* --http-token-file FILE, or NULL */
  uint64_t event_stream_memory; /* --event-stream-memory BYTES: the event
                                   streams' buffers together; default
                                   256 MiB */
  /* The judge model (docs/benchmarks.md): --judge-url URL, --judge-model
   * NAME, --judge-key-file FILE (NULL each when not given), and the
   * requests' concurrency, timeout, attempts and backoff. */
  char *judge_url, *judge_model, *judge_key_file;
  unsigned judge_concurrency, judge_attempts;
  uint64_t judge_timeout, judge_backoff, judge_backoff_max;
  bool http_given; /* --http (or http) was set, not defaulted */
  char *config;    /* --config FILE, or NULL */
} tally_settings_t;

/* Sets the defaults. Every string is malloc'ed and owned by s. Never
 * fails, except for memory: then it returns TALLY_ENOMEM and s needs no
 * close. */
int tally_settings_init(tally_settings_t *s);
/* Frees every string of s and zeroes it; closing twice is harmless. */
void tally_settings_close(tally_settings_t *s);

/* Applies argv (argv[0] is the program): first the file named by --config,
 * then every flag, in order, so the last of a repeated flag wins. A flag is
 * "--flag VALUE" or "--flag=VALUE"; a next argument that starts with "--"
 * is never taken as a value. Relative paths in the file (tasks, plugins,
 * data_dir, worker) are joined to the file's folder; those from flags stay
 * as given. Every error goes to d (after any messages already there): a
 * bad flag value names the flag ("--workers: must be a whole number from 1
 * to 256"), a file error names the file as given and the JSON path
 * ("tallyd.json: job_timeout: must be ..."), and an unknown flag or key, a
 * positional argument, or a missing --tasks is an error. Returns 0, or
 * TALLY_ECONFIG once every error is recorded, or TALLY_ENOMEM. On error s
 * may hold some of the new values; it still needs tally_settings_close.
 * "--help" returns TALLY_EINVAL at once, with nothing in d and s unchanged.
 */
int tally_settings_parse(tally_settings_t *s, int argc, char **argv,
                         tally_diag_t *d);

/* The usage text for tallyd: every flag, with its bounds and default. */
extern const char tally_settings_usage[];

#endif
