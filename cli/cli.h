/* What the tally command's parts share: the exit codes, loading task
 * configs, reading JSON Lines, the Redis connection of the commands that
 * talk to tallyd's Redis, and each command's entry point. One file per
 * group of commands: offline.c (score, check) with offline_elo.c (score
 * --elo), queue.c (submit, status, results), contest.c (rescore, ranking,
 * reload) with elo.c (ranking --by elo), report.c (report, with
 * report_figures.c and report_print.c); main.c dispatches. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include "config/jsonw.h"
#include "contest/freezes.h"
#include "engine/engine.h"
#include "engine/plugins.h"
#include "engine/queues.h"
#include "engine/taskset.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#define EXIT_JOB_FAILED 1
#define EXIT_CONFIG 2

/* Every command: argv holds the arguments after the command's name.
 * Returns the exit status. */
int cmd_score(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_results(int argc, char **argv);
int cmd_rescore(int argc, char **argv);
int cmd_ranking(int argc, char **argv);
int cmd_reload(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_contest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_import(int argc, char **argv);

/* How results are printed (cli/human.c): JSON, one object a line, or for
 * people, a line per submission and with details its subtasks and
 * testcases, dimensions or validators. AUTO is text on a terminal, JSON
 * elsewhere; --json and --text choose, --details asks for the details. */
typedef enum cli_out_form_e {
  CLI_OUT_AUTO,
  CLI_OUT_JSON,
  CLI_OUT_TEXT
} cli_out_form_t;

typedef struct cli_out_s {
  cli_out_form_t form;
  bool details;
} cli_out_t;

/* Takes arg when it is --json, --text or --details (true), else false. */
bool cli_out_flag(cli_out_t *o, const char *arg);
/* Settles AUTO once, from whether stdout is a terminal. */
void cli_out_resolve(cli_out_t *o);
/* Whether o prints for people (TEXT, or AUTO on a terminal). */
bool cli_out_human(const cli_out_t *o);
/* Appends x as the readable forms print a number: six significant
 * digits (a score's full precision is in its JSON). */
void cli_human_num(tally_buf_t *b, double x);
/* Appends an agent run's validator result r's line as people read it,
 * "  validator KEY (TYPE): VERDICT, score N", without its end. */
void cli_human_validator(tally_buf_t *b, const cJSON *r);
/* Appends result res as people read it. */
void cli_human_result(tally_buf_t *b, const cJSON *res, bool details);
/* Writes len bytes of JSON lines (results) to stdout in o's form; 0, or
 * -1 when the write failed or memory ran out. */
int cli_write_results(const cli_out_t *o, const char *data, size_t len);

/* tally score --explain (cli/explain.c): scores one job line with e
 * (scratch for its result) and appends to b its readable line and how its
 * score comes out of its outcomes, dimensions or validators. A job that
 * cannot be scored reads as its error, named by name and lineno, and adds
 * 1 to *failed. Returns 0, or TALLY_ENOMEM. */
int cli_explain(tally_engine_t *e, char *line, size_t len, const char *name,
                unsigned long lineno, tally_buf_t *scratch, tally_buf_t *b,
                long *failed);

/* Prints the usage of every command to f. */
void cli_usage(FILE *f);

/* What every subcommand sets up: score types, plugins and tasks. */
typedef struct cli_s {
  tally_registry_t reg;
  tally_plugins_t plugins;
  tally_taskset_t tasks;
  tally_contestset_t contests; /* beside the tasks (cli_load) */
} cli_t;

/* Loading task configs, output and input (each is described where it is
 * defined, in common.c). */
int cli_open(cli_t *c, const char *plugin_dir);
void cli_close(cli_t *c);
int cli_load(cli_t *c, const char *plugin_dir, const char *path);
void cli_print_diag(const tally_diag_t *d);
int cli_flush_stdout(int status, const char *what);

/* A line of a JSON Lines input, without its line ending ("\n" or
 * "\r\n") and NUL-terminated. A nonzero return stops the reading. */
typedef int (*line_cb)(void *ctx, char *line, size_t len, unsigned long lineno);

int cli_each_line(FILE *f, const char *name, line_cb cb, void *ctx);

/* cli_each_line over each of files ("-": stdin), or stdin when there are
 * none; *name is the one being read. Returns 0, or EXIT_JOB_FAILED when
 * one cannot be opened (printed) or cb failed. */
int cli_each_file_line(int nfiles, char **files, const char **name, line_cb cb,
                       void *ctx);

/* Scores one line of a job file (its end trimmed first) with e into out;
 * *blank says the line was empty (nothing scored, 0 returned). Returns 0
 * when the job was scored; the engine's code when it was not, after
 * printing "tally: NAME:LINE: why (counted as COUNTED)" and adding 1 to
 * *failed; TALLY_ENOMEM (printed) when out of memory. */
int cli_score_line(tally_engine_t *e, tally_buf_t *out, char *line, size_t len,
                   const char *name, unsigned long lineno, const char *counted,
                   long *failed, bool *blank);
/* The length of line without its trailing blanks. */
size_t cli_trim_end(const char *line, size_t len);

/* tally score's results of every JSON line of f (named name in errors), on
 * threads scoring threads (offline_par.c), written to stdout in the order
 * read, in form's form. Returns the jobs that failed, or -1 on an I/O
 * error or out of memory (said on stderr). */
long cli_score_parallel(const tally_taskset_t *tasks,
                        const tally_contestset_t *contests,
                        const cli_out_t *form, unsigned threads, FILE *f,
                        const char *name);
/* A whole number from 1 to LONG_MAX, or 0 if s is not one. */
long cli_positive(const char *s);
/* A number as its shortest text that reads back the same, as in JSON, in
 * buf (32 bytes); returns buf. */
const char *cli_num_text(double v, char *buf);
/* qsort's comparison of two char * in byte order. */
int cli_cmp_str(const void *a, const void *b);
/* A JSON member name and its integer value (null when v < 0), or its
 * string value (null when s is NULL). */
void cli_json_int(tally_buf_t *b, const char *name, long long v);
void cli_json_string(tally_buf_t *b, const char *name, const char *s);

/* Set by SIGINT and SIGTERM (cli_on_stop_signal) in the commands that
 * follow a stream or wait. */
extern volatile sig_atomic_t cli_stop_requested;
void cli_on_stop_signal(int sig);
/* Installs cli_on_stop_signal for SIGINT and SIGTERM. */
void cli_catch_stop_signals(void);

/* The commands that talk to tallyd's Redis (submit, status, results,
 * rescore, ranking, reload) use hiredis's blocking API. */
#define GROUP "tallyd"
#define TIMEOUT_MS 5000 /* for every command but a blocking read */
#define BLOCK_MS 1000   /* how long one XREAD waits for new entries */
#define PIPELINE 1000   /* most XADDs in flight */

/* Where tallyd's streams live, and a connection to them. */
typedef struct remote_s {
  const char *redis;         /* --redis URL, or NULL */
  const char *data_dir;      /* --data-dir DIR */
  const char *prefix;        /* --prefix P */
  const char *queue;         /* --queue Q, or NULL: the contest's queue */
  const char *default_queue; /* --default-queue Q: default "main" */
  const char *password_file; /* --redis-password-file FILE, or NULL */
  const char *sentinel_password_file; /* --sentinel-password-file FILE */
  char *url; /* the URL in use; the rest is derived on open */
  /* The queue in use (remote_use_queue), the prefix of its keys, and its
   * streams. */
  char queue_in_use[TALLY_QUEUE_NAME_MAX + 1];
  char qprefix[200];
  char *jobs, *results, *dead;
  redisContext *c;
  /* On a cluster, the node of a key outside the queue's slot (a global
   * key), as its MOVED named it (remote_cmd). */
  redisContext *aside;
  bool cluster; /* remote_queues found a cluster */
} remote_t;

/* The connection (each is described where it is defined, in remote.c). */
void remote_init(remote_t *r);
int remote_flag(remote_t *r, int argc, char **argv, int *i);
int remote_url(remote_t *r);
int remote_open(remote_t *r);
int remote_open_queue(remote_t *r);
/* Points r at queue q (its keys, and on a cluster its slot's master), at
 * contest's queue (--queue, else the queue tallyd published for it in
 * <p>:queues, else --default-queue), or names contest's queue into out.
 * Each returns 0, or EXIT_CONFIG with the cause printed. */
int remote_use_queue(remote_t *r, const char *q);
int remote_use_contest(remote_t *r, const char *contest);
int remote_queue_of(remote_t *r, const char *contest, char *out, size_t len);
/* The queues a command over all of them goes through: --queue alone, or
 * --default-queue and every queue tallyd published for a contest in
 * <p>:queues (read with a connection of its own; r's URL worked out).
 * Returns 0, or EXIT_JOB_FAILED when Redis cannot be reached, or
 * EXIT_CONFIG (printed). */
int remote_queues(remote_t *r, tally_queues_t *q);
void remote_close(remote_t *r);
void remote_io_error(const remote_t *r);
/* Runs a command (hiredis format: each %s is one argument). */
redisReply *remote_cmd(remote_t *r, const char *fmt, ...);
redisReply *cli_expect(remote_t *r, redisReply *reply, int type,
                       const char *what);
/* The value after name in a flat array of names and values; its integer
 * (dflt when missing); the string of a reply (NULL when not one). */
const redisReply *cli_field(const redisReply *a, const char *name);
long long cli_int_field(const redisReply *a, const char *name, long long dflt);
const char *cli_str_of(const redisReply *v);

/* Scores the job files (stdin when there are none) with e and prints the
 * Elo ratings their matches give, a JSON line per participant and contest
 * (tally score --elo). Returns the exit status. */
int cli_score_elo(tally_engine_t *e, int nfiles, char **files,
                  tally_buf_t *out);

/* Scores the job files (stdin when there are none) with e and prints the
 * board of each pass-fail contest of cs their submissions are in, a JSON
 * line per contest (tally score --pass-fail); public_view applies each
 * contest's configured freeze. Returns the exit status. */
int cli_score_icpc(tally_engine_t *e, const tally_contestset_t *cs,
                   bool public_view, int nfiles, char **files,
                   tally_buf_t *out);

/* Appends the rows of a pass-fail board as a JSON array, each
 * {"rank","participant","solved","penalty","last","tasks":{t:{"judged",
 * "pending","solved","minute","penalty","first"}}} with tasks in the
 * contest's order. */
struct tally_icpc_board_s;
void cli_icpc_rows(tally_buf_t *b, const struct tally_icpc_board_s *board,
                   const char *const *tasks);

/* A job's id as text: a string as it is, a number as tally writes it,
 * dflt when absent. NULL when out of memory. */
char *cli_id_text(const cJSON *id, const char *dflt);

/* Prints the Elo ratings of contest (tally ranking --by elo), as a table
 * or JSON. Returns 0, or an exit status (printed). */
int cli_ranking_elo(remote_t *r, const char *contest, bool json);

/* What the CLI knows of a contest's freeze: its configured times as a
 * tallyd published them (<p>:contest-times; configured false and NANs
 * when none has) and the operator's word (<p>:freezes). */
typedef struct cli_freeze_s {
  bool configured;
  double start, end, freeze, unfreeze_after;
  /* A pass-fail contest's rules (docs/contest.md#pass-fail-contests). */
  bool pass_fail;
  int penalty_time;
  bool compile_penalty;
  tally_freeze_word_t word;
} cli_freeze_t;

/* Reads contest's freeze into f. Returns 0, or EXIT_JOB_FAILED
 * (printed). */
int cli_freeze_read(remote_t *r, const char *contest, cli_freeze_t *f);
/* The time f's public board is frozen from at now, or NAN. */
double cli_freeze_since(const cli_freeze_t *f, double now);

/* Prints the ICPC board of the pass-fail contest whose rules f holds
 * (tally ranking), public (as of since, the freeze in force, or NAN) or
 * private, as a table or JSON. Returns 0, or an exit status (printed). */
int cli_ranking_icpc(remote_t *r, const char *contest, const cli_freeze_t *f,
                     bool public, double since, bool json);
/* t (seconds since the epoch) as an RFC 3339 UTC time in buf. */
const char *cli_time_text(double t, char *buf, size_t len);

#endif
