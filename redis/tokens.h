/* Participant tokens (docs/scoreboard.md#access): an HMAC-SHA256 of the
 * participant's id, keyed with a secret kept in Redis under <p>:secret.
 * tallyd checks them; `tally token` prints them. */
#ifndef TALLY_TOKENS_H
#define TALLY_TOKENS_H

#include <stddef.h>

/* The secret's bytes, and the lengths of it and of a token in hex. */
#define TALLY_SECRET_BYTES 32
#define TALLY_SECRET_HEX (2 * TALLY_SECRET_BYTES)
#define TALLY_TOKEN_HEX 64

/* The script that reads the secret, making it first when there is none,
 * is redis/lua/secret.lua (tally_lua_secret, redis/scripts.h). */

/* A fresh random secret, in hex, into out (TALLY_SECRET_HEX + 1 bytes).
 * Returns 0, or -1 when the system has no randomness to give. */
int tally_secret_new(char out[TALLY_SECRET_HEX + 1]);

/* The token of participant id under secret (hex), into out
 * (TALLY_TOKEN_HEX + 1 bytes). */
void tally_participant_token(const char *secret, const char *id,
                             char out[TALLY_TOKEN_HEX + 1]);

#endif
