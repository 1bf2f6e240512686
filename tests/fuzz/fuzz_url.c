/* A libFuzzer target for the Redis URL decoder: arbitrary bytes as a URL,
 * parsed, then moved through tally_redis_credentials: the URL kept
 * parses again and finds the same password in the environment. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis/redis.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *url = malloc(size + 1);
  if (url == NULL)
    return 0;
  memcpy(url, data, size);
  url[size] = '\0';
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  tally_redis_url_t u;
  char err[1200];
  if (tally_redis_url_parse(&u, url, err, sizeof(err)) == 0) {
    char *clean = NULL;
    if (tally_redis_credentials(url, NULL, &clean, err, sizeof(err)) != 0)
      abort(); /* it parsed once: it must parse again */
    tally_redis_url_t again;
    if (tally_redis_url_parse(&again, clean, err, sizeof(err)) != 0)
      abort(); /* the URL without its password parses too */
    if ((u.password == NULL) != (again.password == NULL) ||
        (u.password && strcmp(u.password, again.password) != 0))
      abort(); /* the password comes back from the environment */
    tally_redis_url_free(&again);
    free(clean);
    tally_redis_url_free(&u);
  }
  unsetenv(TALLY_REDIS_PASSWORD_ENV);
  free(url);
  return 0;
}
