/* The ICPC CCS Contest API, version 2023-06, read-only, under /ccs
 * (docs/scoreboard.md#the-ccs-contest-api): the pass-fail contests'
 * configuration, submissions, judgements, scoreboard, state, awards and event
 * feed, as its front ends (the resolver, the Contest Data Server, DOMjudge's
 * scoreboard) read it, public (the freeze applied) or for the operator. Runs on
 * the results API's loop and connections. */
#ifndef TALLY_CCS_H
#define TALLY_CCS_H

#include "daemon/api.h"
#include "daemon/http.h"

/* Answers r when its path is /ccs or under it: returns 1 (answered now)
 * or 2 (answered later), as the API's routes do; 0 for another path. */
int tally_ccs_route(tally_api_t *a, tally_http_req_t *r);

#endif
