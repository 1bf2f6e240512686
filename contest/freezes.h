/* The public board's freeze in force: the one a contest's config sets
 * (from freeze until end + unfreeze_after), or the one an operator set
 * with `tally contest freeze|unfreeze`, kept in Redis as a word per
 * contest (the hash <p>:freezes, docs/protocol.md). tallyd's results API
 * and `tally ranking --public` decide the same way. */
#ifndef TALLY_FREEZES_H
#define TALLY_FREEZES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tally_freeze_word_kind_e {
  TALLY_FREEZE_CONFIGURED = 0, /* no word: the config decides */
  TALLY_FREEZE_LIFTED,         /* `unfreeze`: not frozen */
  TALLY_FREEZE_AT              /* `freeze`: frozen from at on */
} tally_freeze_word_kind_t;

typedef struct tally_freeze_word_s {
  tally_freeze_word_kind_t kind;
  double at; /* seconds since the epoch, for TALLY_FREEZE_AT */
} tally_freeze_word_t;

/* The longest text of a word, with its NUL. */
#define TALLY_FREEZE_WORD_MAX 48
/* The latest time a word may name: 9999-12-31T23:59:59.999Z. */
#define TALLY_FREEZE_AT_MAX 253402300799.999

/* Reads a value of <p>:freezes (len bytes): "lifted", or "at " and a
 * time in seconds since the epoch (a finite, non-negative decimal).
 * Returns 0, or -1 for any other text (then *w is CONFIGURED). */
int tally_freeze_word_parse(const char *s, size_t len, tally_freeze_word_t *w);

/* Writes w's value as tally_freeze_word_parse reads it into buf
 * (TALLY_FREEZE_WORD_MAX bytes); "" for CONFIGURED. */
void tally_freeze_word_text(const tally_freeze_word_t *w, char *buf);

/* The time the public board is frozen from at now, or NAN when it is not
 * frozen. freeze, end and unfreeze_after are the config's (NAN when not
 * set); w the operator's word (NULL: none). An operator's freeze holds
 * from its time on until lifted or withdrawn, whatever the config says;
 * a lifted one shows everything. */
double tally_freeze_in_force(double freeze, double end, double unfreeze_after,
                             const tally_freeze_word_t *w, double now);

#endif
