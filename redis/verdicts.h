/* The judge's verdicts kept in Redis (docs/protocol.md#verdicts): one
 * hash per queue, <queue prefix>:verdicts, whose fields are the SHA-256
 * of each prompt a judge was asked and whose values are what the job of a
 * judged sample carries as its "judge" member. tallyd writes and reads
 * it; tally rescore reads it, so that neither asks the judge twice. */
#ifndef TALLY_VERDICTS_H
#define TALLY_VERDICTS_H

#include <stddef.h>

#define TALLY_VERDICT_HASH_HEX 64

/* The hash of a request: SHA-256 over the system message (none: empty),
 * a NUL byte and the prompt, in lower-case hex (65 bytes with the NUL). */
void tally_verdict_hash(const char *system, const char *prompt,
                        char out[TALLY_VERDICT_HASH_HEX + 1]);

/* Writes the key, <qprefix>:verdicts. Returns 0, or TALLY_E2BIG. */
int tally_verdict_key(char *out, size_t outlen, const char *qprefix);

/* The job text with member "judge": value (its JSON text, vlen bytes)
 * added before the object's last "}", in a new buffer (*out_len bytes,
 * NUL-terminated), or NULL when out of memory or the text has no "}". */
char *tally_verdict_inject(const char *job, size_t len, const char *value,
                           size_t vlen, size_t *out_len);

#endif
