/* Strict decoding of JSON objects against a table of known keys. */
#ifndef TALLY_CFG_H
#define TALLY_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/diag.h"

typedef struct tally_cfg_key_s tally_cfg_key_t;

/* A setter stores v into the field at conf + key->offset. It returns NULL
 * on success or a static message saying what is wrong with v. */
typedef const char *(*tally_cfg_setter_t)(const tally_cfg_key_t *key,
                                          const cJSON *v, void *conf);

enum { TALLY_CFG_REQUIRED = 1u << 0 };

/* One known key. A NULL set means the caller decodes the value itself;
 * tally_cfg_decode only records where it is. */
struct tally_cfg_key_s {
  const char *name;
  tally_cfg_setter_t set;
  size_t offset;
  unsigned flags;
  double min, max;            /* inclusive bounds for numbers */
  const char *const *choices; /* NULL-terminated, for tally_cfg_set_enum */
};

/* Setters for common fields. string stores a malloc'ed char * (freeing
 * any previous one), int an int, and enum the int index of the choice. */
const char *tally_cfg_set_string(const tally_cfg_key_t *k, const cJSON *v,
                                 void *conf);
const char *tally_cfg_set_int(const tally_cfg_key_t *k, const cJSON *v,
                              void *conf);
const char *tally_cfg_set_enum(const tally_cfg_key_t *k, const cJSON *v,
                               void *conf);

/* Decodes obj, which must be a JSON object, against keys (terminated by an
 * entry with a NULL name). Reports unknown keys, duplicate keys, missing
 * required keys and every setter's complaint to d, each with its path.
 * found, if not NULL, receives the node of each key (or NULL), indexed
 * like keys. Returns 0, or TALLY_ECONFIG once every error is recorded. */
int tally_cfg_decode(const tally_cfg_key_t *keys, const cJSON *obj, void *conf,
                     tally_diag_t *d, tally_jpath_t *path, const cJSON **found);

/* Parses text as one JSON value. On error, returns NULL and records the
 * line and column of the problem in d. The caller frees with cJSON_Delete.
 */
cJSON *tally_cfg_parse_json(const char *text, size_t len, tally_diag_t *d);

#endif
