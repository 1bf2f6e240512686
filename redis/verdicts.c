/* The judge's verdicts kept in Redis (redis/verdicts.h). */
#include "redis/verdicts.h"
#include "config/error.h"

#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_verdict_hash(const char *system, const char *prompt,
                        char out[TALLY_VERDICT_HASH_HEX + 1]) {
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  if (system != NULL)
    sha256_update(&ctx, strlen(system), (const uint8_t *)system);
  sha256_update(&ctx, 1, (const uint8_t *)"");
  sha256_update(&ctx, strlen(prompt), (const uint8_t *)prompt);
  sha256_digest(&ctx, sizeof(digest), digest);
  for (size_t i = 0; i < sizeof(digest); i++)
    snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

int tally_verdict_key(char *out, size_t outlen, const char *qprefix) {
  int n = snprintf(out, outlen, "%s:verdicts", qprefix);
  return n < 0 || (size_t)n >= outlen ? TALLY_E2BIG : 0;
}

char *tally_verdict_inject(const char *job, size_t len, const char *value,
                           size_t vlen, size_t *out_len) {
  size_t end = len;
  while (end > 0 && job[end - 1] != '}')
    end--;
  if (end == 0)
    return NULL;
  end--; /* at the "}" */
  /* An empty object takes the member without a comma. */
  size_t k = end;
  while (k > 0 && (job[k - 1] == ' ' || job[k - 1] == '\t' ||
                   job[k - 1] == '\n' || job[k - 1] == '\r'))
    k--;
  bool empty = k > 0 && job[k - 1] == '{';
  static const char member[] = "\"judge\":";
  size_t n = end + !empty + (sizeof(member) - 1) + vlen + (len - end);
  char *t = malloc(n + 1);
  if (t == NULL)
    return NULL;
  size_t at = 0;
  memcpy(t, job, end);
  at = end;
  if (!empty)
    t[at++] = ',';
  memcpy(t + at, member, sizeof(member) - 1);
  at += sizeof(member) - 1;
  memcpy(t + at, value, vlen);
  at += vlen;
  memcpy(t + at, job + end, len - end);
  at += len - end;
  t[at] = '\0';
  *out_len = at;
  return t;
}
