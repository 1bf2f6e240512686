/* What daemon/ccs.c (routes, reads, the event feed's stream) and
 * daemon/ccs_build.c (the objects) share. */
#ifndef TALLY_CCS_INT_H
#define TALLY_CCS_INT_H

#include <stdint.h>

#include "contest/icpc.h"
#include "daemon/api_int.h"

/* The endpoints. */
enum {
  CCS_INFO,
  CCS_CONTESTS,
  CCS_CONTEST,
  CCS_ACCESS,
  CCS_JTYPES,
  CCS_LANGUAGES,
  CCS_PROBLEMS,
  CCS_GROUPS,
  CCS_ORGS,
  CCS_TEAMS,
  CCS_SUBMISSIONS,
  CCS_JUDGEMENTS,
  CCS_SCOREBOARD,
  CCS_STATE,
  CCS_AWARDS,
  CCS_FEED
};

/* The longest CCS id (the specification's ID type). */
#define CCS_ID_MAX 36

/* One submission of the contest, from its summary. */
typedef struct ccs_sub_s {
  char *id, *participant, *task;
  char *language;    /* or NULL */
  char *entry_point; /* or NULL */
  double timestamp;
  char judgement[8]; /* "" when tally could not score it: JE */
  /* The result's entry in <p>:results (milliseconds and sequence), when
   * it was judged; 0 and 0 when not known. */
  unsigned long long ems, eseq;
  /* For the Ranking Web Server: whether it was scored, its public score
   * and public subtask scores (the summary's array as JSON text, or
   * NULL), and whether a token was used on it. */
  bool scored;
  double public_score;
  char *public_subtasks;
  bool tokened;
} ccs_sub_t;

/* One read of a contest's official submissions (ccs.c): their ids from
 * the contest's index, then each one's summary, result entry and token
 * flag, a chunk at a time; done runs from the loop once all are in (or
 * the read failed: failed and why). */
typedef struct ccs_read_s ccs_read_t;
struct ccs_read_s {
  tally_api_t *a;
  char contest[256];
  char qprefix[200];
  char **ids;
  size_t nids, next;
  ccs_sub_t *subs;
  size_t nsubs;
  unsigned waiting;
  bool failed;
  char why[256];
  void (*done)(ccs_read_t *rd);
  void *owner;
};
void tally__ccs_read_start(ccs_read_t *rd);
/* A submission (id) from its summary, result entry and token flag as
 * HMGET gives them; false for one no board counts (unofficial, of
 * another contest, not a summary), or when out of memory (rd->failed). */
bool tally__ccs_sub_of(ccs_read_t *rd, const char *id,
                       const redisReply *summary, const redisReply *entry,
                       const redisReply *tokened, ccs_sub_t *s);
/* Frees what rd read (not rd). */
void tally__ccs_read_free(ccs_read_t *rd);

/* A contest's data as one answer needs it. */
typedef struct ccs_model_s {
  const tally_contest_t *c;
  const tally_contestset_t *cs;
  bool operator_view;
  double now;
  double frozen_since; /* the public board's freeze in force, or NAN */
  double frozen_at;    /* state.frozen: when it froze, or NAN */
  double thawed_at;    /* state.thawed, or NAN */
  ccs_sub_t *subs;     /* by entry, then timestamp and id */
  size_t nsubs;
  const char **teams; /* participant ids, byte order */
  size_t nteams;
  const char **orgs; /* participants.json's teams: organizations */
  size_t norgs;
  const char **langs; /* languages, "unknown" for subs without */
  size_t nlangs;
  tally_icpc_board_t board;
} ccs_model_t;

/* ccs_build.c: the CCS id of a tally id: itself when it is one
 * ([A-Za-z0-9_] then up to 35 of [A-Za-z0-9_.-], not ending in '.');
 * else "x" and 16 hex digits of its 64-bit FNV-1a hash. out holds
 * CCS_ID_MAX + 1 bytes. */
const char *tally__ccs_id(const char *s, char *out);

/* Builds m from subs (taken over: freed with the model). Returns 0, or
 * -1 when out of memory (m freed). */
int tally__ccs_model(ccs_model_t *m, const tally_api_t *a,
                     const tally_contest_t *c, bool operator_view,
                     ccs_sub_t *subs, size_t nsubs);
void tally__ccs_model_free(ccs_model_t *m);
void tally__ccs_sub_free(ccs_sub_t *s);

/* Whether the judgement of s is shown in m's view (not during the
 * freeze to the public). */
bool tally__ccs_judged_visible(const ccs_model_t *m, const ccs_sub_t *s);

/* Appends the answer of endpoint kind (one object when id is not NULL)
 * to b. Returns the HTTP status: 200, or 404 with b holding the error. */
unsigned tally__ccs_answer(const ccs_model_t *m, int kind, const char *id,
                           tally_buf_t *b);

/* Appends the submission object of s, and its judgement object. */
void tally__ccs_put_submission(const ccs_model_t *m, tally_buf_t *b,
                               const ccs_sub_t *s);
void tally__ccs_put_judgement(const ccs_model_t *m, tally_buf_t *b,
                              const ccs_sub_t *s);

/* Appends one event-feed line (with its newline) for each object of m,
 * in feed order, whose text differs from what sent (a map kept by the
 * caller, NULL: send all) holds; with since (ms, seq) set, only the
 * submissions and judgements after that token, and no configuration.
 * Records what it sent in sent when not NULL. Returns -1 when out of
 * memory. */
typedef struct ccs_sent_s ccs_sent_t;
int tally__ccs_feed(const ccs_model_t *m, ccs_sent_t *sent, bool has_since,
                    unsigned long long since_ms, unsigned long long since_seq,
                    tally_buf_t *b);
ccs_sent_t *tally__ccs_sent_new(void);
/* The hash sent maps keep of a text; whether s holds key with hash; and
 * records it (-1: out of memory). */
uint64_t tally__ccs_hash(const char *data, size_t n);
bool tally__ccs_sent_has(ccs_sent_t *s, const char *key, uint64_t hash);
int tally__ccs_sent_put(ccs_sent_t *s, const char *key, uint64_t hash);
void tally__ccs_sent_free(ccs_sent_t *s);

/* ccs.c: each second, every open event feed reads its contest again and
 * sends what changed (and a newline when it said nothing for a minute);
 * at the end, the feeds end. */
void tally__ccs_tick(tally_api_t *a);
void tally__ccs_end_feeds(tally_api_t *a);

/* Writes a RFC 3339 time with milliseconds ("2026-01-01T10:00:00.000Z")
 * and a contest-relative time ("1:02:03.000", "-0:00:05.000"). */
void tally__ccs_abstime(tally_buf_t *b, double t);
void tally__ccs_reltime(tally_buf_t *b, double seconds);

#endif
