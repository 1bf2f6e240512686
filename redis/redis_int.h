/* What redis.c and redis_sync.c share, and nothing else uses. */
#ifndef TALLY_REDIS_INT_H
#define TALLY_REDIS_INT_H

#include <stdbool.h>

#include <hiredis/hiredis.h>

/* AUTH [USER] PASSWORD into argv (3 slots); returns argc. */
int tally__redis_auth_argv(const char **argv, const char *user,
                           const char *password);
/* Whether a ROLE reply says master. */
bool tally__redis_says_master(const redisReply *r);

#endif
