/* Table-driven strict decoding of config objects, and JSON parsing with
 * positions in the error. */
#include "config/cfg.h"
#include "config/error.h"
#include "config/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(conf, k, type) ((type *)((char *)(conf) + (k)->offset))

/* Returned by the numeric setters, so that the decoder can name the range. */
static const char out_of_range[] = "is out of range";

const char *tally_cfg_set_string(const tally_cfg_key_t *k, const cJSON *v,
                                 void *conf) {
  if (!cJSON_IsString(v))
    return "must be a string";
  if (v->valuestring[0] == '\0')
    return "must not be empty";
  char *copy = strdup(v->valuestring);
  if (copy == NULL)
    return "out of memory";
  char **field = FIELD(conf, k, char *);
  free(*field);
  *field = copy;
  return NULL;
}

const char *tally_cfg_set_int(const tally_cfg_key_t *k, const cJSON *v,
                              void *conf) {
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
      !isfinite(v->valuedouble))
    return "must be a whole number";
  if (v->valuedouble < k->min || v->valuedouble > k->max)
    return out_of_range;
  *FIELD(conf, k, int) = (int)v->valuedouble;
  return NULL;
}

const char *tally_cfg_set_enum(const tally_cfg_key_t *k, const cJSON *v,
                               void *conf) {
  if (cJSON_IsString(v)) {
    for (int i = 0; k->choices[i] != NULL; i++) {
      if (strcmp(k->choices[i], v->valuestring) == 0) {
        *FIELD(conf, k, int) = i;
        return NULL;
      }
    }
  }
  return "is not one of the allowed values";
}

/* Formats the choices of k into buf, as "a", "b" or "c". */
static void choices_text(const tally_cfg_key_t *k, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; k->choices[i] != NULL && used < len; i++) {
    const char *sep = i == 0 ? "" : k->choices[i + 1] ? ", " : " or ";
    int n = snprintf(buf + used, len - used, "%s\"%s\"", sep, k->choices[i]);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

int tally_cfg_decode(const tally_cfg_key_t *keys, const cJSON *obj, void *conf,
                     tally_diag_t *d, tally_jpath_t *path,
                     const cJSON **found) {
  if (!cJSON_IsObject(obj))
    return tally_diag_add(d, path, "must be a JSON object");
  size_t nkeys = 0;
  while (keys[nkeys].name != NULL)
    nkeys++;
  const cJSON *local[64];
  const cJSON **seen = found ? found : local;
  if (found == NULL && nkeys > 64)
    return tally_diag_add(d, path, "internal error: key table too large");
  for (size_t i = 0; i < nkeys; i++)
    seen[i] = NULL;

  int rc = 0;
  for (const cJSON *m = obj->child; m; m = m->next) {
    size_t old = tally_jpath_key(path, m->string);
    size_t i = 0;
    while (i < nkeys && strcmp(keys[i].name, m->string) != 0)
      i++;
    if (i == nkeys) {
      rc = tally_diag_add(d, path, "unknown key");
    } else if (seen[i] != NULL) {
      rc = tally_diag_add(d, path, "key appears twice");
    } else {
      seen[i] = m;
      const char *msg = keys[i].set ? keys[i].set(&keys[i], m, conf) : NULL;
      if (msg != NULL && keys[i].choices != NULL) {
        char choices[256];
        choices_text(&keys[i], choices, sizeof(choices));
        rc = tally_diag_add(d, path, "must be %s", choices);
      } else if (msg == out_of_range) {
        rc = tally_diag_add(d, path, "must be between %g and %g", keys[i].min,
                            keys[i].max);
      } else if (msg != NULL) {
        rc = tally_diag_add(d, path, "%s", msg);
      }
    }
    tally_jpath_restore(path, old);
  }
  for (size_t i = 0; i < nkeys; i++) {
    if ((keys[i].flags & TALLY_CFG_REQUIRED) && seen[i] == NULL) {
      size_t old = tally_jpath_key(path, keys[i].name);
      rc = tally_diag_add(d, path, "is missing");
      tally_jpath_restore(path, old);
    }
  }
  return rc;
}

cJSON *tally_cfg_parse_json(const char *text, size_t len, tally_diag_t *d) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (root == NULL) {
    size_t off = end ? (size_t)(end - text) : 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
      if (text[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    if (tally_json_too_deep(text, len))
      tally_diag_add(d, NULL,
                     "nesting too deep (more than %d levels of arrays and "
                     "objects)",
                     CJSON_NESTING_LIMIT);
    else
      tally_diag_add(d, NULL, "invalid JSON at line %zu, column %zu", line,
                     col);
    return NULL;
  }
  tally_jpath_t path;
  tally_jpath_init(&path);
  if (tally_json_find_overflow(root, &path)) {
    cJSON_Delete(root);
    tally_diag_add(d, &path, TALLY_JSON_OVERFLOW);
    return NULL;
  }
  /* Anything but white space after the value is an error too. */
  size_t off = (size_t)(end - text);
  while (off < len && strchr(" \t\r\n", text[off]) != NULL && text[off])
    off++;
  if (off < len) {
    cJSON_Delete(root);
    tally_diag_add(d, NULL, "unexpected text after the JSON value");
    return NULL;
  }
  return root;
}
