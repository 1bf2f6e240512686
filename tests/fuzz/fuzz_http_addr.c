/* A libFuzzer target for --http's address decoder: arbitrary bytes as an
 * address; one that parses is written back with inet_ntop and parses
 * again to the same socket address. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/http.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct sockaddr_storage sa, again;
  socklen_t len, len2;
  char err[256], back[96], ip[INET6_ADDRSTRLEN];
  if (tally_http_parse_addr(text, &sa, &len, err, sizeof(err)) == 0) {
    if (sa.ss_family == AF_INET) {
      const struct sockaddr_in *v4 = (const struct sockaddr_in *)&sa;
      inet_ntop(AF_INET, &v4->sin_addr, ip, sizeof(ip));
      snprintf(back, sizeof(back), "%s:%u", ip, ntohs(v4->sin_port));
    } else if (sa.ss_family == AF_INET6) {
      const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&sa;
      inet_ntop(AF_INET6, &v6->sin6_addr, ip, sizeof(ip));
      snprintf(back, sizeof(back), "[%s]:%u", ip, ntohs(v6->sin6_port));
    } else {
      abort(); /* parsed, but neither family */
    }
    if (tally_http_parse_addr(back, &again, &len2, err, sizeof(err)) != 0 ||
        len != len2 || memcmp(&sa, &again, len) != 0)
      abort(); /* what it parsed reads back the same */
  } else if (strstr(err, "is not IP:PORT") == NULL) {
    abort(); /* every refusal says what is expected */
  }
  free(text);
  return 0;
}
