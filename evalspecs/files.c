/* The file validators of evaluation specs (docs/evaluation-specs.md):
 * file_exists, file_content_match, file_json_schema and
 * directory_structure over what a file:KEY reference resolved to (a
 * captured file's content, or a directory listing as JSON). Their configs
 * are read as the reference reads them, with Go's json.Unmarshal (field
 * names matched without regard to case, unknown ones ignored, the first
 * type error reported in Go's words), and only when the validator runs. */
#include "config/error.h"
#include "evalspecs/apply.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/textops.h"
#include "evalspecs/validators.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { G_BOOL, G_STRING, G_STRS, G_RAW } gkind_t;

typedef struct gfield_s {
  const char *name;
  gkind_t kind;
} gfield_t;

/* The word Go's decoder gives a JSON value in a type error. */
static const char *go_value(const cJSON *v) {
  return cJSON_IsString(v)   ? "string"
         : cJSON_IsNumber(v) ? "number"
         : cJSON_IsBool(v)   ? "bool"
         : cJSON_IsArray(v)  ? "array"
                             : "object";
}

/* json.Unmarshal of config into a Go struct named type (in package
 * scoring) with fields: out[i] is the last member matching fields[i] by
 * name without regard to ASCII case (null leaves it unset). Returns true,
 * or false with Go's error in err (the first type error; Go decodes on
 * after one). */
static bool go_unmarshal(const cJSON *config, const gfield_t *fields, size_t n,
                         const char *type, const cJSON **out, char *err,
                         size_t errlen) {
  for (size_t i = 0; i < n; i++)
    out[i] = NULL;
  err[0] = '\0';
  if (config == NULL || cJSON_IsNull(config))
    return true;
  if (!cJSON_IsObject(config)) {
    snprintf(err, errlen,
             "json: cannot unmarshal %s into Go value of type scoring.%s",
             go_value(config), type);
    return false;
  }
  for (const cJSON *m = config->child; m != NULL; m = m->next) {
    size_t i = 0;
    while (i < n && strcasecmp(fields[i].name, m->string) != 0)
      i++;
    if (i == n || cJSON_IsNull(m))
      continue;
    bool ok;
    const char *want;
    const cJSON *bad = m;
    switch (fields[i].kind) {
    case G_BOOL:
      ok = cJSON_IsBool(m);
      want = "bool";
      break;
    case G_STRING:
      ok = cJSON_IsString(m);
      want = "string";
      break;
    case G_STRS:
      ok = cJSON_IsArray(m);
      want = "[]string";
      for (const cJSON *e = ok ? m->child : NULL; e != NULL && ok; e = e->next)
        if (!cJSON_IsString(e) && !cJSON_IsNull(e)) {
          ok = false;
          want = "string";
          bad = e;
        }
      break;
    default:
      ok = true;
      want = "";
    }
    if (ok) {
      out[i] = m;
    } else if (err[0] == '\0') {
      snprintf(err, errlen,
               "json: cannot unmarshal %s into Go struct field %s.%s of type "
               "%s",
               go_value(bad), type, fields[i].name, want);
    }
  }
  return err[0] == '\0';
}

static void outcome(tally_es_outcome_t *o, tally_es_verdict_t v, int score,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void outcome(tally_es_outcome_t *o, tally_es_verdict_t v, int score,
                    const char *fmt, ...) {
  o->verdict = v;
  o->has_score = score >= 0;
  o->score = score > 0 ? 1 : 0;
  tally_buf_reset(&o->reason);
  if (fmt != NULL) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tally_buf_puts(&o->reason, msg);
  }
}

/* file_exists: must_exist (default true), as Unmarshal leaves it. */
static bool must_exist(const cJSON *config, char *err, size_t errlen) {
  static const gfield_t f[] = {{"must_exist", G_BOOL}};
  const cJSON *m[1];
  bool ok = go_unmarshal(config, f, 1, "fileExistsConfig", m, err, errlen);
  (void)ok;
  return m[0] == NULL || cJSON_IsTrue(m[0]);
}

void tally__es_file_exists_unavailable(const tally_es_validator_t *v,
                                       tally_es_outcome_t *o) {
  char err[512];
  if (must_exist(v->config, err, sizeof(err)))
    outcome(o, TALLY_ES_FAIL, 0, "file does not exist");
  else
    outcome(o, TALLY_ES_PASS, 1, "file correctly does not exist");
}

static void file_exists(const tally_es_validator_t *v, tally_es_outcome_t *o) {
  char err[512];
  static const gfield_t f[] = {{"must_exist", G_BOOL}};
  const cJSON *m[1];
  if (!go_unmarshal(v->config, f, 1, "fileExistsConfig", m, err, sizeof(err))) {
    outcome(o, TALLY_ES_VERROR, -1, "invalid file_exists config: %s", err);
    return;
  }
  if (m[0] == NULL || cJSON_IsTrue(m[0]))
    outcome(o, TALLY_ES_PASS, 1, NULL);
  else
    outcome(o, TALLY_ES_FAIL, 0, "file exists but should not");
}

static void file_content(const tally_es_validator_t *v, const char *actual,
                         const char *expected, tally_es_outcome_t *o) {
  static const gfield_t f[] = {{"match_mode", G_STRING},
                               {"ignore_whitespace", G_BOOL}};
  const cJSON *m[2];
  char err[512];
  if (!go_unmarshal(v->config, f, 2, "fileContentMatchConfig", m, err,
                    sizeof(err))) {
    outcome(o, TALLY_ES_VERROR, -1, "invalid file_content_match config: %s",
            err);
    return;
  }
  const char *mode = m[0] != NULL ? m[0]->valuestring : "contains";
  char *a = NULL, *e = NULL;
  if (cJSON_IsTrue(m[1])) {
    a = tally_es_step(TALLY_ES_COLLAPSE_WHITESPACE, actual);
    e = tally_es_step(TALLY_ES_COLLAPSE_WHITESPACE, expected);
  } else {
    a = strdup(actual);
    e = strdup(expected);
  }
  if (a == NULL || e == NULL) {
    outcome(o, TALLY_ES_VERROR, -1, "out of memory");
  } else if (strcmp(mode, "exact") == 0) {
    if (strcmp(a, e) == 0)
      outcome(o, TALLY_ES_PASS, 1, NULL);
    else
      outcome(o, TALLY_ES_FAIL, 0, "file content does not match exactly");
  } else if (strcmp(mode, "contains") == 0) {
    if (strstr(a, e) != NULL)
      outcome(o, TALLY_ES_PASS, 1, NULL);
    else
      outcome(o, TALLY_ES_FAIL, 0,
              "file content does not contain expected string");
  } else if (strcmp(mode, "not_contains") == 0) {
    if (strstr(a, e) == NULL)
      outcome(o, TALLY_ES_PASS, 1, NULL);
    else
      outcome(o, TALLY_ES_FAIL, 0, "file content contains forbidden string");
  } else if (strcmp(mode, "regex") == 0) {
    /* The pattern and the text as they are, not collapsed. */
    char rerr[512];
    int rc = tally_es_regex(expected, false, actual, rerr, sizeof(rerr));
    if (rc == TALLY_ES_RE_MATCH)
      outcome(o, TALLY_ES_PASS, 1, NULL);
    else if (rc == TALLY_ES_RE_NO_MATCH)
      outcome(o, TALLY_ES_FAIL, 0, "file content does not match regex pattern");
    else if (rc == TALLY_ES_RE_BAD_PATTERN)
      outcome(o, TALLY_ES_VERROR, -1, "invalid regex pattern: %s", rerr);
    else
      outcome(o, TALLY_ES_VERROR, -1, "file_content_match: %s", rerr);
  } else if (strcmp(mode, "json_equal") == 0) {
    char jerr[512];
    cJSON *ja = NULL, *je = NULL;
    if (!tally_go_unmarshal_check(actual, jerr, sizeof(jerr))) {
      outcome(o, TALLY_ES_VERROR, -1, "parse actual as JSON: %s", jerr);
    } else if (!tally_go_unmarshal_check(expected, jerr, sizeof(jerr))) {
      outcome(o, TALLY_ES_VERROR, -1, "parse expected as JSON: %s", jerr);
    } else if ((ja = cJSON_Parse(actual)) == NULL ||
               (je = cJSON_Parse(expected)) == NULL) {
      outcome(o, TALLY_ES_VERROR, -1, "out of memory");
    } else if (tally_go_json_equal(ja, je)) {
      outcome(o, TALLY_ES_PASS, 1, NULL);
    } else {
      outcome(o, TALLY_ES_FAIL, 0,
              "file JSON content is not structurally equal");
    }
    cJSON_Delete(ja);
    cJSON_Delete(je);
  } else {
    char *q = tally_go_quoted(mode);
    outcome(o, TALLY_ES_VERROR, -1, "unsupported match_mode %s",
            q != NULL ? q : "\"\"");
    free(q);
  }
  free(a);
  free(e);
}

int tally__es_json_schema(const char *actual, const char *expected,
                          tally_es_outcome_t *o);

static int file_schema(const tally_es_validator_t *v, const char *actual,
                       tally_es_outcome_t *o) {
  if (v->config == NULL) {
    outcome(o, TALLY_ES_VERROR, -1, "file_json_schema config is required");
    return 0;
  }
  static const gfield_t f[] = {{"schema", G_RAW}};
  const cJSON *m[1];
  char err[512];
  if (!go_unmarshal(v->config, f, 1, "fileJSONSchemaConfig", m, err,
                    sizeof(err))) {
    outcome(o, TALLY_ES_VERROR, -1, "invalid file_json_schema config: %s", err);
    return 0;
  }
  /* A null schema is a raw message "null", not a missing one. */
  const cJSON *schema = m[0];
  for (const cJSON *x = cJSON_IsObject(v->config) ? v->config->child : NULL;
       x != NULL && schema == NULL; x = x->next)
    if (strcasecmp(x->string, "schema") == 0)
      schema = x;
  if (schema == NULL) {
    outcome(o, TALLY_ES_VERROR, -1,
            "file_json_schema config.schema is required");
    return 0;
  }
  char *text = cJSON_PrintUnformatted(schema);
  if (text == NULL)
    return TALLY_ENOMEM;
  int rc = tally__es_json_schema(actual, text, o);
  free(text);
  return rc;
}

/* Go's path/filepath.Clean on a Unix path, into a new string. */
static char *go_clean(const char *p) {
  size_t n = strlen(p);
  if (n == 0)
    return strdup(".");
  bool rooted = p[0] == '/';
  char *out = malloc(n + 2);
  if (out == NULL)
    return NULL;
  size_t w = 0, r = 0, dotdot = 0;
  if (rooted) {
    out[w++] = '/';
    r = 1;
    dotdot = 1;
  }
  while (r < n) {
    if (p[r] == '/') {
      r++;
    } else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) {
      r++;
    } else if (p[r] == '.' && p[r + 1] == '.' &&
               (r + 2 == n || p[r + 2] == '/')) {
      r += 2;
      if (w > dotdot) {
        w--;
        while (w > dotdot && out[w] != '/')
          w--;
      } else if (!rooted) {
        if (w > 0)
          out[w++] = '/';
        out[w++] = '.';
        out[w++] = '.';
        dotdot = w;
      }
    } else {
      if ((rooted && w != 1) || (!rooted && w != 0))
        out[w++] = '/';
      for (; r < n && p[r] != '/'; r++)
        out[w++] = p[r];
    }
  }
  if (w == 0)
    out[w++] = '.';
  out[w] = '\0';
  return out;
}

/* Go's filepath.Rel(base, targ) on Unix: a new string, or NULL with *bad
 * set when targ cannot be made relative to base (or out of memory). */
static char *go_rel(const char *basepath, const char *targpath, bool *bad) {
  *bad = false;
  char *base = go_clean(basepath), *targ = go_clean(targpath), *res = NULL;
  if (base == NULL || targ == NULL)
    goto done;
  if (strcmp(base, targ) == 0) {
    res = strdup(".");
    goto done;
  }
  const char *b = strcmp(base, ".") == 0 ? "" : base;
  bool bs = b[0] == '/', ts = targ[0] == '/';
  if (bs != ts) {
    *bad = true;
    goto done;
  }
  size_t bl = strlen(b), tl = strlen(targ), b0 = 0, bi = 0, t0 = 0, ti = 0;
  for (;;) {
    while (bi < bl && b[bi] != '/')
      bi++;
    while (ti < tl && targ[ti] != '/')
      ti++;
    if (ti - t0 != bi - b0 || memcmp(targ + t0, b + b0, bi - b0) != 0)
      break;
    if (bi < bl)
      bi++;
    if (ti < tl)
      ti++;
    b0 = bi;
    t0 = ti;
  }
  if (bi - b0 == 2 && memcmp(b + b0, "..", 2) == 0) {
    *bad = true;
    goto done;
  }
  if (b0 != bl) {
    size_t seps = 0;
    for (size_t i = b0; i < bl; i++)
      seps += b[i] == '/';
    size_t size = 2 + seps * 3 + (tl != t0 ? 1 + tl - t0 : 0);
    if ((res = malloc(size + 1)) == NULL)
      goto done;
    size_t w = 0;
    memcpy(res, "..", 2);
    w = 2;
    for (size_t i = 0; i < seps; i++) {
      memcpy(res + w, "/..", 3);
      w += 3;
    }
    if (t0 != tl) {
      res[w++] = '/';
      memcpy(res + w, targ + t0, tl - t0);
      w += tl - t0;
    }
    res[w] = '\0';
  } else {
    res = strdup(targ + t0);
  }
done:
  free(base);
  free(targ);
  return res;
}

static bool in_list(char **list, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], s) == 0)
      return true;
  return false;
}

/* Joins names with ", " after what, into the reason. */
static void add_names(tally_buf_t *b, const char *what, const cJSON **names,
                      size_t n) {
  if (n == 0)
    return;
  if (b->len > 0)
    tally_buf_puts(b, "; ");
  tally_buf_puts(b, what);
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      tally_buf_puts(b, ", ");
    tally_buf_puts(b, cJSON_IsString(names[i]) ? names[i]->valuestring : "");
  }
}

static int dir_structure(const tally_es_validator_t *v, const char *actual,
                         tally_es_outcome_t *o) {
  if (v->config == NULL) {
    outcome(o, TALLY_ES_VERROR, -1, "directory_structure config is required");
    return 0;
  }
  static const gfield_t f[] = {{"required_files", G_STRS},
                               {"forbidden_files", G_STRS},
                               {"required_directories", G_STRS}};
  const cJSON *m[3];
  char err[512];
  if (!go_unmarshal(v->config, f, 3, "directoryStructureConfig", m, err,
                    sizeof(err))) {
    outcome(o, TALLY_ES_VERROR, -1, "invalid directory_structure config: %s",
            err);
    return 0;
  }
  /* The listing: {"key","path","entries":[{"path","size","is_dir"}]}. */
  static const gfield_t lf[] = {
      {"key", G_STRING}, {"path", G_STRING}, {"entries", G_RAW}};
  const cJSON *lm[3];
  cJSON *listing = NULL;
  if (!tally_go_unmarshal_check(actual, err, sizeof(err))) {
    outcome(o, TALLY_ES_VERROR, -1, "parse directory listing: %s", err);
    return 0;
  }
  if ((listing = cJSON_Parse(actual)) == NULL)
    return TALLY_ENOMEM;
  if (!go_unmarshal(listing, lf, 3, "DirectoryListingResult", lm, err,
                    sizeof(err)) ||
      (lm[2] != NULL && !cJSON_IsArray(lm[2]))) {
    if (err[0] == '\0')
      snprintf(err, sizeof(err),
               "json: cannot unmarshal %s into Go struct field "
               "DirectoryListingResult.entries of type "
               "[]scoring.DirectoryEntry",
               go_value(lm[2]));
    outcome(o, TALLY_ES_VERROR, -1, "parse directory listing: %s", err);
    cJSON_Delete(listing);
    return 0;
  }
  const char *root = lm[1] != NULL ? lm[1]->valuestring : "";
  size_t n = lm[2] != NULL ? (size_t)cJSON_GetArraySize(lm[2]) : 0;
  char **files = calloc(2 * n + 1, sizeof(char *));
  char **dirs = calloc(2 * n + 1, sizeof(char *));
  size_t nf = 0, nd = 0;
  int rc = files != NULL && dirs != NULL ? 0 : TALLY_ENOMEM;
  static const gfield_t ef[] = {
      {"path", G_STRING}, {"size", G_RAW}, {"is_dir", G_BOOL}};
  for (const cJSON *e = lm[2] != NULL ? lm[2]->child : NULL;
       e != NULL && rc == 0; e = e->next) {
    const cJSON *em[3];
    if (!go_unmarshal(e, ef, 3, "DirectoryEntry", em, err, sizeof(err)) ||
        (em[1] != NULL && !cJSON_IsNumber(em[1]))) {
      if (err[0] == '\0')
        snprintf(err, sizeof(err),
                 "json: cannot unmarshal %s into Go struct field "
                 "DirectoryEntry.entries.size of type int64",
                 go_value(em[1]));
      outcome(o, TALLY_ES_VERROR, -1, "parse directory listing: %s", err);
      rc = 1;
      break;
    }
    const char *path = em[0] != NULL ? em[0]->valuestring : "";
    bool bad;
    char *rel = go_rel(root, path, &bad);
    if (rel == NULL && !bad) {
      rc = TALLY_ENOMEM;
      break;
    }
    char *p2 = strdup(path);
    if (rel == NULL)
      rel = strdup(path);
    if (rel == NULL || p2 == NULL) {
      free(rel);
      free(p2);
      rc = TALLY_ENOMEM;
      break;
    }
    bool dir = cJSON_IsTrue(em[2]);
    files[nf++] = rel;
    files[nf++] = p2;
    if (dir) {
      dirs[nd++] = rel;
      dirs[nd++] = p2;
    }
  }
  if (rc == 0) {
    const cJSON **missing = calloc(3 * (size_t)(cJSON_GetArraySize(m[0]) +
                                                cJSON_GetArraySize(m[1]) +
                                                cJSON_GetArraySize(m[2])) +
                                       1,
                                   sizeof(*missing));
    if (missing == NULL) {
      rc = TALLY_ENOMEM;
    } else {
      tally_buf_t why;
      tally_buf_init(&why);
      size_t k = 0;
      for (const cJSON *x = m[0] ? m[0]->child : NULL; x; x = x->next)
        if (!in_list(files, nf, cJSON_IsString(x) ? x->valuestring : ""))
          missing[k++] = x;
      add_names(&why, "missing required files: ", missing, k);
      size_t failed = k;
      k = 0;
      for (const cJSON *x = m[1] ? m[1]->child : NULL; x; x = x->next)
        if (in_list(files, nf, cJSON_IsString(x) ? x->valuestring : ""))
          missing[k++] = x;
      add_names(&why, "forbidden files present: ", missing, k);
      failed += k;
      k = 0;
      for (const cJSON *x = m[2] ? m[2]->child : NULL; x; x = x->next) {
        const char *req = cJSON_IsString(x) ? x->valuestring : "";
        size_t len = strlen(req);
        char *trimmed =
            strndup(req, len > 0 && req[len - 1] == '/' ? len - 1 : len);
        if (trimmed == NULL) {
          rc = TALLY_ENOMEM;
          break;
        }
        if (!in_list(dirs, nd, trimmed) && !in_list(dirs, nd, req) &&
            !in_list(files, nf, trimmed))
          missing[k++] = x;
        free(trimmed);
      }
      add_names(&why, "missing required directories: ", missing, k);
      failed += k;
      if (rc == 0) {
        if (failed == 0)
          outcome(o, TALLY_ES_PASS, 1, NULL);
        else
          outcome(o, TALLY_ES_FAIL, 0, "%s", tally_buf_text(&why));
      }
      tally_buf_close(&why);
      free(missing);
    }
  }
  for (size_t i = 0; i < nf; i++)
    free(files[i]);
  free(files);
  free(dirs);
  cJSON_Delete(listing);
  return rc == 1 ? 0 : rc;
}

int tally__es_files(const tally_es_validator_t *v, const char *actual,
                    const char *expected, tally_es_outcome_t *o) {
  const char *t = v->type_name;
  if (strcmp(t, "file_exists") == 0) {
    file_exists(v, o);
    return 0;
  }
  if (strcmp(t, "file_content_match") == 0) {
    file_content(v, actual, expected, o);
    return 0;
  }
  if (strcmp(t, "file_json_schema") == 0)
    return file_schema(v, actual, o);
  return dir_structure(v, actual, o);
}
