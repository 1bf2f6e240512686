/* The results API's access: the operator token read from its file, the
 * bearer token or HTTP Basic password a request carries, and comparing
 * secrets in constant time (moved from api.c as they were). */
#include "daemon/api_int.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Reading the operator token and the secret. */

char *tally__api_read_token(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, errlen, "--http-token-file %s: cannot read it", path);
    return NULL;
  }
  char line[512];
  char *token = NULL;
  if (fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strlen(line) >= 16)
      token = strdup(line);
  }
  fclose(f);
  if (token == NULL)
    snprintf(err, errlen,
             "--http-token-file %s: its first line must hold a token of at "
             "least 16 characters",
             path);
  return token;
}

/* Equal strings, in a time that does not depend on where they differ. */
bool tally__api_same_secret(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  unsigned char diff = n != m;
  for (size_t i = 0; i < n; i++)
    diff |= (unsigned char)(a[i] ^ b[i % (m ? m : 1)]);
  return diff == 0;
}

/* The bearer token of r, or NULL. */
const char *tally__api_bearer(const tally_http_req_t *r) {
  const char *h = tally_http_header(r, "Authorization");
  if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
    return NULL;
  return h + 7;
}

/* The password of r's HTTP Basic credentials, into out (len bytes), or
 * false. */
static bool basic_password(const tally_http_req_t *r, char *out, size_t len) {
  const char *h = tally_http_header(r, "Authorization");
  if (h == NULL || strncasecmp(h, "Basic ", 6) != 0)
    return false;
  h += 6;
  size_t n = strlen(h);
  if (n == 0 || BASE64_DECODE_LENGTH(n) + 1 > len)
    return false;
  struct base64_decode_ctx ctx;
  base64_decode_init(&ctx);
  size_t got = len - 1;
  if (!base64_decode_update(&ctx, &got, (uint8_t *)out, n, h) ||
      !base64_decode_final(&ctx))
    return false;
  out[got] = '\0';
  const char *colon = memchr(out, ':', got);
  if (colon == NULL || strlen(out) != got)
    return false;
  memmove(out, colon + 1, got - (size_t)(colon - out));
  return true;
}

bool tally__api_is_operator(const tally_api_t *a, const tally_http_req_t *r) {
  if (a->token == NULL)
    return false;
  const char *t = tally__api_bearer(r);
  if (t != NULL)
    return tally__api_same_secret(t, a->token);
  /* HTTP Basic, as the CCS Contest API's clients send it: any user name,
   * the operator token as the password. */
  char pass[1024];
  bool ok = basic_password(r, pass, sizeof(pass)) &&
            tally__api_same_secret(pass, a->token);
  memset(pass, 0, sizeof(pass));
  return ok;
}
