/* Contest configs and participants (docs/scoreboard.md): what a contest
 * is called, its tasks in column order, its times (start, end, freeze),
 * its score precision and its kind of ranking; and the display names and
 * teams of its participants. Decoded strictly, like task configs. */
#ifndef TALLY_CONTESTS_H
#define TALLY_CONTESTS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/diag.h"
#include "engine/taskset.h"

typedef enum tally_ranking_kind_e {
  TALLY_RANKING_TOTAL = 0, /* by total score, as tally ranks */
  TALLY_RANKING_ELO        /* an arena: by Elo rating, with W/D/L */
} tally_ranking_kind_t;

/* A CMS Ranking Web Server a contest is pushed to (docs/scoreboard.md). */
typedef struct tally_rws_target_s {
  char *url;      /* http:// or https://, ending in '/' */
  char *username; /* or NULL (then the URL's, if any) */
  char *password; /* or NULL */
} tally_rws_target_t;

/* How a contest ranks its participants (the CCS specification's
 * scoreboard types). */
typedef enum tally_contest_scoring_e {
  TALLY_SCORING_SCORE = 0, /* "score": by the sum of task scores */
  TALLY_SCORING_PASS_FAIL  /* "pass-fail": ICPC-style, docs/contest.md */
} tally_contest_scoring_t;

/* The penalty minutes of a rejected submission when a pass-fail contest
 * gives none. */
#define TALLY_PENALTY_TIME 20

typedef struct tally_contest_s {
  char *name;
  char *title; /* the name when the config gives none */
  char **tasks;
  size_t ntasks;
  /* Seconds since the epoch; NAN when the config gives none. */
  double start, end, freeze;
  /* How long after end a freeze lifts by itself, in seconds; NAN: only
   * `tally contest unfreeze` lifts it. */
  double unfreeze_after;
  int score_precision; /* digits after the point a board shows, 0-10 */
  tally_ranking_kind_t ranking;
  tally_contest_scoring_t scoring;
  /* Pass-fail only: the minutes each rejected submission before a solve
   * adds, and whether compile errors are rejections that count (by
   * default they count for nothing, as in DOMjudge). */
  int penalty_time;
  bool compile_penalty;
  /* Pass-fail only: how many ranks get each medal in the CCS Contest
   * API's awards (docs/scoreboard.md#the-ccs-contest-api); all 0 when the
   * config gives none. */
  int medals[3]; /* gold, silver, bronze */
  /* Score-based only: the Ranking Web Servers it is pushed to. */
  tally_rws_target_t *rws;
  size_t nrws;
  /* The queue its jobs go to and its keys live in; NULL: the default
   * queue (tallyd's --default-queue, TALLY_MAIN_QUEUE unless set). */
  char *queue;
  char *file; /* where it came from */
} tally_contest_t;

typedef struct tally_participant_s {
  char *id;
  char *name; /* display name, or NULL */
  char *team; /* or NULL */
} tally_participant_t;

/* A task's largest scores, for a board's colours; and what the CCS
 * Contest API tells of it as a problem. */
typedef struct tally_task_max_s {
  char *name;
  double max_score, max_public_score;
  size_t ntestcases;
  double time_limit; /* seconds; NAN when the task gives none */
  /* For CMS's Ranking Web Server: its score mode's name, its precision,
   * and its subtasks' headers ("Subtask 1 (40)"), none for a task that
   * counts as one. */
  const char *score_mode;
  int score_precision;
  char **headers;
  size_t nheaders;
  /* A group type's subtasks, as a board's opened cell shows them: each
   * one's whether every testcase of it is public (so that it counts in
   * the public score); NULL and 0 for a task of one subtask. */
  bool *subtask_public;
  size_t nsubtasks;
} tally_task_max_t;

typedef struct tally_contestset_s {
  tally_contest_t *contests; /* sorted by name */
  size_t count;
  tally_task_max_t *maxes; /* every loaded task's, by name */
  size_t nmaxes;
  tally_participant_t *participants; /* sorted by id */
  size_t nparticipants;
} tally_contestset_t;

/* The queue whose keys carry no hash tag: the layout of before queues,
 * and every contest's queue unless a config or --default-queue says
 * otherwise (docs/protocol.md#queues). */
#define TALLY_MAIN_QUEUE "main"
/* The longest queue name. */
#define TALLY_QUEUE_NAME_MAX 64

/* Whether name may name a queue: 1 to 64 bytes of ASCII letters, digits,
 * '-', '_' and '.'. */
bool tally_queue_name_ok(const char *name);

void tally_contestset_init(tally_contestset_t *cs);
void tally_contestset_close(tally_contestset_t *cs);

/* Decodes one contest config (the text of file) into c. Every error goes
 * to d with its JSON path. Returns 0, or TALLY_ECONFIG with c empty. */
int tally_contest_parse(const char *text, size_t len, tally_diag_t *d,
                        tally_contest_t *c);
void tally_contest_free(tally_contest_t *c);

/* Loads the contests of dir. With in_tasks (dir is the tasks folder),
 * the contest configs are its *.contest.json files; otherwise every
 * *.json file but participants.json. participants.json, if present,
 * gives display names and teams. A folder with no contest is not an
 * error. Every error of every file goes to d (naming the file and the
 * JSON path), and two files that name one contest are an error. Returns
 * 0, or TALLY_ECONFIG (TALLY_EIO for an unreadable folder) with cs empty.
 */
int tally_contestset_load(tally_contestset_t *cs, const char *dir,
                          bool in_tasks, tally_diag_t *d);

/* The contests that go with the tasks at tasks_path: those of the folder,
 * or of the folder of a single task file (tally_contestset_load with
 * in_tasks). */
int tally_contestset_load_beside(tally_contestset_t *cs, const char *tasks_path,
                                 tally_diag_t *d);

/* Checks that every task each contest lists is in ts: an error in d (with
 * the contest's file and the JSON path) for each one that is not; and
 * notes the largest scores of every task of ts. Returns 0, TALLY_ECONFIG
 * or TALLY_ENOMEM. */
int tally_contestset_check_tasks(tally_contestset_t *cs,
                                 const tally_taskset_t *ts, tally_diag_t *d);

/* The largest scores of the task called name (after check_tasks), or
 * NULL. */
const tally_task_max_t *tally_contestset_max(const tally_contestset_t *cs,
                                             const char *name);

/* Whether a file name of a tasks folder is a contest's or the
 * participants' (and so not a task config). */
bool tally_contest_file(const char *name);

const tally_contest_t *tally_contestset_find(const tally_contestset_t *cs,
                                             const char *name);
const tally_participant_t *
tally_contestset_participant(const tally_contestset_t *cs, const char *id);
bool tally_contest_has_task(const tally_contest_t *c, const char *task);

/* Parses an RFC 3339 time ("2026-11-27T09:00:00Z",
 * "2026-11-27T10:00:00.5+01:00") into seconds since the epoch. Returns 0,
 * or -1 when s is not one. */
int tally_rfc3339(const char *s, double *out);

/* Writes t (seconds since the epoch) as an RFC 3339 UTC time into buf
 * (len bytes; 40 is enough): "2026-11-27T09:00:00Z", with ".mmm" before
 * the Z when t has a fraction of a second. */
void tally_rfc3339_text(double t, char *buf, size_t len);

#endif
