/* Participant tokens: fresh secrets and the HMAC of an id (tokens.h). */
#include "redis/tokens.h"

#include <nettle/hmac.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static void to_hex(const uint8_t *raw, size_t n, char *out) {
  for (size_t i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

int tally_secret_new(char out[TALLY_SECRET_HEX + 1]) {
  uint8_t raw[TALLY_SECRET_BYTES];
  if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
    return -1;
  to_hex(raw, sizeof(raw), out);
  return 0;
}

void tally_participant_token(const char *secret, const char *id,
                             char out[TALLY_TOKEN_HEX + 1]) {
  struct hmac_sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  hmac_sha256_set_key(&ctx, strlen(secret), (const uint8_t *)secret);
  hmac_sha256_update(&ctx, strlen(id), (const uint8_t *)id);
  hmac_sha256_digest(&ctx, sizeof(digest), digest);
  to_hex(digest, sizeof(digest), out);
}
