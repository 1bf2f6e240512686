/* Messages for the error codes of error.h. */
#include "config/error.h"

const char *tally_strerror(int code) {
  switch (code) {
#define TALLY__ERRNO_CASE(name, c, msg)                                        \
  case (c):                                                                    \
    return (msg);
    TALLY_ERRNO_MAP(TALLY__ERRNO_CASE)
#undef TALLY__ERRNO_CASE
  case 0:
    return "success";
  default:
    return "unknown error";
  }
}
