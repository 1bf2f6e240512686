/* The server-side script that posts a job's outcome exactly once: it
 * writes the result (or the dead letter), records the submission, and
 * acknowledges and deletes the job, but only while this consumer still
 * owns the entry with the delivery count it was handed. */
#ifndef TALLY_POST_H
#define TALLY_POST_H

#include <stddef.h>

/* What the script returned. */
enum {
  TALLY_POST_DONE = 1,     /* written and acknowledged */
  TALLY_POST_GONE = 0,     /* the entry is no longer pending: dropped */
  TALLY_POST_STOLEN = -1,  /* another consumer owns it now: dropped */
  TALLY_POST_REDELIVERED = -2 /* delivered again since: dropped */
};

/* The Lua source, for EVAL or SCRIPT LOAD. */
extern const char tally_post_script[];

/* Arguments of one EVAL of the script, pointing into the caller's strings
 * (which must outlive the call). kind is "result" or "dead". For "result",
 * body is the result JSON and submission the key of the submission record
 * (NULL: none); for "dead", body is the job verbatim and error the cause.
 * The keys are built from prefix into keybuf. */
typedef struct tally_post_s {
  const char *argv[16];
  size_t argvlen[16];
  int argc;
  char keybuf[4][160];
  char deliveries[24];
} tally_post_t;

/* Fills p for EVALSHA sha (or EVAL of the script when sha is NULL). */
void tally_post_build(tally_post_t *p, const char *sha, const char *prefix,
                      const char *consumer, const char *entry_id,
                      unsigned deliveries, const char *kind,
                      const char *body, size_t body_len,
                      const char *submission, const char *error);

#endif
