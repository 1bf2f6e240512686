/* What daemon/api.c and daemon/api_events.c share: the results API's
 * requests and access on one side, its event streams on the other. */
#ifndef TALLY_API_INT_H
#define TALLY_API_INT_H

#include <stdbool.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "contest/icpc_place.h"
#include "daemon/api.h"
#include "daemon/http.h"
#include "engine/contests.h"
#include "redis/redis.h"

/* How long a command of the API's may take. */
#define API_TIMEOUT_MS 5000

/* What a request asks for. */
enum { REQ_LIST, REQ_CONTEST, REQ_RANKING, REQ_PARTICIPANT, REQ_CELL };

/* One row of a ranking, or one submission of a participant. */
typedef struct row_s {
  char *id;
  double value;
  /* The task scores hash (task, JSON) pairs, or the Elo counts, or a
   * submission's fields: whatever the request asked for, as text. */
  char **fields;
  size_t nfields;
} row_t;

typedef struct areq_s {
  tally_api_t *a;
  tally_http_req_t *r; /* NULL once cancelled */
  int kind;
  char contest[256];
  char qprefix[200]; /* the prefix of the contest's queue's keys */
  char participant[256];
  bool private_view; /* the operator's view */
  bool html;         /* the page, not JSON */
  bool frozen;       /* the public board, as it was at the freeze */
  double freeze;
  unsigned waiting;
  bool failed;
  char why[256];
  row_t *rows;
  size_t nrows;
  char **names; /* a set's members: contests, or a contest's tasks */
  size_t nnames;
  row_t self; /* a participant's task scores */
  bool has_self;
  /* A participant's submissions, read a chunk at a time: where the next
   * chunk starts; then the page asked for (limit rows after the cursor's
   * (timestamp, id)), and whether more follow. */
  size_t next;
  size_t limit;
  bool has_cursor;
  double cursor_ts;
  char cursor_id[256];
  size_t total; /* the participant's submissions to this contest */
  bool more;    /* rows after the page */
  /* A pass-fail contest's ranking: the submissions of its rows' places. */
  tally_icpc_subs_t icpc;
  /* A cell of the board opened (REQ_CELL): its task, and the members
   * tally_place_cell wrote of the participant's place. */
  char task[256];
  tally_buf_t cell;
} areq_t;

/* api.c: one of the API's handles closed (tally_api_close's callback
 * runs after the last). */
void tally__api_handle_closed(tally_api_t *a);

/* api_access.c: the operator token on the first line of path (NULL with
 * err set); the bearer token of r (or NULL); whether two secrets are
 * equal, in a time that does not depend on where they differ; and
 * whether r carries the operator token, as a bearer token or as the
 * password of HTTP Basic credentials (any user name). */
char *tally__api_read_token(const char *path, char *err, size_t errlen);
const char *tally__api_bearer(const tally_http_req_t *r);
bool tally__api_same_secret(const char *a, const char *b);
bool tally__api_is_operator(const tally_api_t *a, const tally_http_req_t *r);

/* api.c: a request's contest config (or NULL), a row's memory freed,
 * and a request's failure (the first one's words are kept). */
const tally_contest_t *tally__api_config_of(const areq_t *q);
const tally_contest_t *tally__api_config_of_name(const tally_api_t *a,
                                                 const char *name);
/* api.c: keeps the answer (body, len bytes) of q, a pass-fail ranking, to
 * be answered again for a second. */
void tally__api_keep_board(tally_api_t *a, const areq_t *q, const char *body,
                           size_t len);
void tally__api_free_row(row_t *w);
void tally__api_fail(areq_t *q, const char *fmt, const char *what);

/* api_answers.c: writes q's answer, its reads all in, and sends it. */
void tally__api_build(areq_t *q);

/* api.c: the clock, the freezes as settled, answers, the secret and the
 * configured contests' names. */
double tally__api_now(void);
struct tally_api_freeze_s *tally__api_freeze_of(const tally_api_t *a,
                                                const char *name);
const tally_freeze_word_t *tally__api_word_of(const tally_api_t *a,
                                              const char *name);
double tally__api_freeze_rule(const tally_api_t *a, const tally_contest_t *c,
                              double now);
double tally__api_freeze_since(const tally_api_t *a, const tally_contest_t *c,
                               double now);
int tally__api_answer_now(tally_http_req_t *r, unsigned status,
                          const char *msg);
void tally__api_ask_secret(tally_api_t *a);
void tally__api_check_up(tally_api_t *a);
void tally__api_publish_configured(tally_api_t *a);

/* api_events.c: the tail's connection coming up, the timer of every
 * second, a new stream, the end of them all, and the contest an event
 * names (into num if it is a number; NULL when none). */
void tally__api_on_tail_up(tally_redis_t *rd);
void tally__api_on_keepalive(uv_timer_t *t);
void tally__api_free_words(tally_api_t *a);
int tally__api_start_events(tally_api_t *a, tally_http_req_t *r,
                            const char *contest);
void tally__api_end_streams(tally_api_t *a);
const char *tally__api_event_contest(const cJSON *ev, char num[32]);

#endif
