/* Collects every error found while decoding one file, each naming the file
 * and the JSON path of the offending value. */
#ifndef TALLY_DIAG_H
#define TALLY_DIAG_H

#include <stddef.h>

/* A JSON path being walked, such as score_type_parameters[1][2]. Paths
 * longer than the buffer are cut with "..." rather than failing. */
typedef struct tally_jpath_s {
  char buf[256];
  size_t len;
} tally_jpath_t;

/* Each push returns the previous length, to hand back to restore. */
void tally_jpath_init(tally_jpath_t *p);
size_t tally_jpath_key(tally_jpath_t *p, const char *key);
size_t tally_jpath_index(tally_jpath_t *p, size_t i);
void tally_jpath_restore(tally_jpath_t *p, size_t len);

/* At most this many messages are kept; later ones are only counted. */
#define TALLY_DIAG_MAX 200

typedef struct tally_diag_s {
  const char *file; /* borrowed; must outlive the diag */
  char **msgs;
  size_t count;
  size_t dropped;
} tally_diag_t;

/* tally_diag_init never fails; tally_diag_close frees every message. */
void tally_diag_init(tally_diag_t *d, const char *file);
void tally_diag_close(tally_diag_t *d);

/* Records "file: path: message". An empty path or NULL omits that part.
 * Always returns TALLY_ECONFIG, so a decoder can write
 * "return tally_diag_add(...)". If memory runs out the message is only
 * counted, never lost silently: tally_diag_count still reports it. */
int tally_diag_add(tally_diag_t *d, const tally_jpath_t *path, const char *fmt,
                   ...) __attribute__((format(printf, 3, 4)));

/* The number of errors recorded, kept or dropped. */
size_t tally_diag_count(const tally_diag_t *d);

/* Moves every message of src to the end of dst and empties src. */
void tally_diag_move(tally_diag_t *dst, tally_diag_t *src);

#endif
