/* Pushing score-based contests to CMS's Ranking Web Server, as CMS's
 * ProxyService does (docs/scoreboard.md#cmss-ranking-web-server): the
 * contest, its tasks, teams, users, submissions and subchanges, PUT as
 * JSON with HTTP Basic credentials, each entity under a key derived from
 * tally's ids so that sending one again updates it instead of counting it
 * twice. Each second every configured (contest, server) pair reads its
 * contest, sends what changed since the server last took it, and, when
 * the server is away or refuses, tries again with backoff. Runs on the
 * results API's loop. */
#ifndef TALLY_RWS_H
#define TALLY_RWS_H

#include "daemon/api.h"

/* Prepares a's HTTP client for the pushes (on a's loop). Returns 0, or -1
 * when out of memory. */
int tally_rws_init(tally_api_t *a);

/* Starts the pushes the configs ask for that are not running, ends those
 * no config asks for, and lets each one that is due read and send. Called
 * each second. */
void tally_rws_tick(tally_api_t *a);

/* Ends every push (its transfer in flight dropped) and closes the HTTP
 * client; the API hears of it through tally__api_handle_closed. */
void tally_rws_stop(tally_api_t *a);

/* CMS's encode_id: letters and digits stay, any other character (a
 * Unicode code point of the UTF-8 text) becomes '_' and its code in
 * lowercase hex. Appends to b. */
struct tally_buf_s;
void tally_rws_encode_id(struct tally_buf_s *b, const char *s);

#endif
