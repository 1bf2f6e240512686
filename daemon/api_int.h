/* What daemon/api.c and daemon/api_events.c share: the results API's
 * requests and access on one side, its event streams on the other. */
#ifndef TALLY_API_INT_H
#define TALLY_API_INT_H

#include <stdbool.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api.h"
#include "daemon/http.h"
#include "engine/contests.h"
#include "redis/redis.h"

/* How long a command of the API's may take. */
#define API_TIMEOUT_MS 5000

/* api.c: the clock, the freezes as settled, answers, the secret and the
 * configured contests' names. */
double tally__api_now(void);
struct tally_api_freeze_s *tally__api_freeze_of(const tally_api_t *a,
                                                const char *name);
bool tally__api_freeze_rule(const tally_contest_t *c, bool unfrozen,
                            double now);
bool tally__api_frozen_at(const tally_api_t *a, const tally_contest_t *c,
                          double now);
int tally__api_answer_now(tally_http_req_t *r, unsigned status,
                          const char *msg);
void tally__api_ask_secret(tally_api_t *a);
void tally__api_publish_configured(tally_api_t *a);

/* api_events.c: the tail's connection coming up, the timer of every
 * second, a new stream, the end of them all, and the contest an event
 * names (into num if it is a number; NULL when none). */
void tally__api_on_tail_up(tally_redis_t *rd);
void tally__api_on_keepalive(uv_timer_t *t);
int tally__api_start_events(tally_api_t *a, tally_http_req_t *r,
                            const char *contest);
void tally__api_end_streams(tally_api_t *a);
const char *tally__api_event_contest(const cJSON *ev, char num[32]);

#endif
