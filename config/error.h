/* Error codes shared by every tally layer, and their messages. */
#ifndef TALLY_ERROR_H
#define TALLY_ERROR_H

/* Every fallible tally function returns 0 or one of these negative codes.
 * A message naming the cause travels beside the code, in a buffer the
 * caller supplies or in a tally_diag_t. */
#define TALLY_ERRNO_MAP(X)                                                     \
  X(ENOENT, -2, "no such file or directory")                                   \
  X(EIO, -5, "input/output error")                                             \
  X(ENOMEM, -12, "out of memory")                                              \
  X(EEXIST, -17, "already exists")                                             \
  X(EINVAL, -22, "invalid argument")                                           \
  X(E2BIG, -7, "too large")                                                    \
  X(EJOB, -1001, "job cannot be scored")                                       \
  X(ECONFIG, -1002, "invalid configuration")                                   \
  X(EPLUGIN, -1003, "plugin cannot be loaded")

enum {
#define TALLY__ERRNO_ENUM(name, code, msg) TALLY_##name = (code),
  TALLY_ERRNO_MAP(TALLY__ERRNO_ENUM)
#undef TALLY__ERRNO_ENUM
};

/* Returns a static description of code; never NULL. */
const char *tally_strerror(int code);

#endif
