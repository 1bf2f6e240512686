/* The validator type table and the config checks of the types that read a
 * config (fuzzy_match, numeric_match, normalized_match, token_f1), with
 * the reference's rules. */
#include "evalspecs/validators.h"
#include "config/error.h"
#include "config/json.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"
#include "evalspecs/textops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tally_es_step_names[] = {"trim",
                                           "lowercase",
                                           "collapse_whitespace",
                                           "strip_punctuation",
                                           "strip_currency",
                                           "strip_formatting",
                                           "normalize_unicode",
                                           "remove_articles",
                                           "sort_words",
                                           "sort_lines",
                                           NULL};

/* One member a config may have. */
typedef enum { C_NUM, C_BOOL, C_STR, C_INT, C_STRS, C_ANY } ckind_t;

typedef struct cfield_s {
  const char *name;
  ckind_t kind;
} cfield_t;

/* Checks that config is an object whose members are among fields, of
 * their kinds (null counts as absent); found[i] receives member i or
 * NULL. Returns 0 or TALLY_ECONFIG (reported). */
static int check_members(const cJSON *config, const cfield_t *fields,
                         const cJSON **found, tally_diag_t *d,
                         tally_jpath_t *path) {
  int rc = 0;
  for (size_t i = 0; fields[i].name != NULL; i++)
    found[i] = NULL;
  if (!cJSON_IsObject(config))
    return tally_diag_add(d, path, "must be an object");
  size_t mark = path->len;
  bool oom = false;
  if (tally_json_find_duplicate(config, path, &oom) || oom)
    rc = tally_diag_add(d, path, oom ? "out of memory" : "key appears twice");
  tally_jpath_restore(path, mark);
  for (const cJSON *m = config->child; m != NULL; m = m->next) {
    size_t old = tally_jpath_key(path, m->string), i = 0;
    while (fields[i].name != NULL && strcmp(fields[i].name, m->string) != 0)
      i++;
    if (fields[i].name == NULL) {
      rc = tally_diag_add(d, path, "unknown key");
    } else if (!cJSON_IsNull(m)) {
      bool ok;
      const char *want;
      switch (fields[i].kind) {
      case C_NUM:
        ok = cJSON_IsNumber(m);
        want = "a number";
        break;
      case C_INT:
        ok = cJSON_IsNumber(m) && m->valuedouble == floor(m->valuedouble) &&
             fabs(m->valuedouble) < 9.2e18;
        want = "a whole number";
        break;
      case C_BOOL:
        ok = cJSON_IsBool(m);
        want = "true or false";
        break;
      case C_STR:
        ok = cJSON_IsString(m);
        want = "a string";
        break;
      case C_ANY:
        ok = true;
        want = "";
        break;
      default:
        ok = cJSON_IsArray(m);
        for (const cJSON *x = ok ? m->child : NULL; x != NULL; x = x->next)
          ok = ok && (cJSON_IsString(x) || cJSON_IsNull(x));
        want = "an array of strings";
        break;
      }
      if (ok)
        found[i] = m;
      else
        rc = tally_diag_add(d, path, "must be %s", want);
    }
    tally_jpath_restore(path, old);
  }
  return rc;
}

/* A threshold member in [0, 1]. */
static int threshold_in_range(const cJSON *t, bool *has, double *out,
                              tally_diag_t *d, tally_jpath_t *path) {
  if (t == NULL)
    return 0;
  *has = true;
  *out = t->valuedouble;
  if (*out < 0 || *out > 1) {
    size_t old = tally_jpath_key(path, "threshold");
    int rc = tally_diag_add(d, path, "must be between 0 and 1");
    tally_jpath_restore(path, old);
    return rc;
  }
  return 0;
}

/* fuzzy_match */

static int fuzzy_parse(const cJSON *config, void **state, tally_diag_t *d,
                       tally_jpath_t *path) {
  static const cfield_t fields[] = {{"threshold", C_NUM},
                                    {"case_insensitive", C_BOOL},
                                    {"normalize", C_BOOL},
                                    {NULL, C_NUM}};
  const cJSON *f[3];
  tally_es_fuzzy_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  if (config == NULL)
    return 0;
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  c->case_insensitive = cJSON_IsTrue(f[1]);
  c->normalize = cJSON_IsTrue(f[2]);
  return threshold_in_range(f[0], &c->has_threshold, &c->threshold, d, path);
}

/* numeric_match */

static int numeric_parse(const cJSON *config, void **state, tally_diag_t *d,
                         tally_jpath_t *path) {
  static const cfield_t fields[] = {{"absolute_tolerance", C_NUM},
                                    {"relative_tolerance", C_NUM},
                                    {"extract_number", C_BOOL},
                                    {"significant_digits", C_INT},
                                    {"tolerance_mode", C_STR},
                                    {"tolerance", C_NUM},
                                    {NULL, C_NUM}};
  const cJSON *f[6];
  tally_es_numeric_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  if (config == NULL)
    return 0;
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  c->has_abs = f[0] != NULL;
  c->abs_tol = f[0] ? f[0]->valuedouble : 0;
  c->has_rel = f[1] != NULL;
  c->rel_tol = f[1] ? f[1]->valuedouble : 0;
  c->extract_number = cJSON_IsTrue(f[2]);
  c->has_digits = f[3] != NULL;
  c->significant_digits = f[3] ? (long long)f[3]->valuedouble : 0;
  bool legacy =
      f[5] != NULL || (f[4] != NULL && !tally_go_blank(f[4]->valuestring));
  if (legacy && (c->has_abs || c->has_rel))
    return tally_diag_add(d, path,
                          "cannot mix tolerance_mode/tolerance with "
                          "absolute_tolerance/relative_tolerance");
  if (legacy) {
    char *mode = f[4] ? tally_go_trimmed(f[4]->valuestring) : strdup("");
    if (mode == NULL)
      return tally_diag_add(d, path, "out of memory");
    double tol = f[5] ? f[5]->valuedouble : 0.001;
    if (mode[0] == '\0' || strcmp(mode, "relative") == 0) {
      c->has_rel = true;
      c->rel_tol = tol;
    } else if (strcmp(mode, "absolute") == 0) {
      c->has_abs = true;
      c->abs_tol = tol;
    } else {
      rc = tally_diag_add(d, path,
                          "tolerance_mode must be either \"absolute\" or "
                          "\"relative\"");
    }
    free(mode);
    if (rc != 0)
      return rc;
  }
  static const char *const names[] = {"absolute_tolerance",
                                      "relative_tolerance"};
  bool bad[2] = {c->has_abs && c->abs_tol < 0, c->has_rel && c->rel_tol < 0};
  for (int k = 0; k < 2; k++) {
    if (!bad[k])
      continue;
    size_t old = tally_jpath_key(path, names[k]);
    rc = tally_diag_add(d, path, "must be greater than or equal to 0");
    tally_jpath_restore(path, old);
  }
  if (c->has_digits && c->significant_digits <= 0) {
    size_t old = tally_jpath_key(path, "significant_digits");
    rc = tally_diag_add(d, path, "must be greater than 0");
    tally_jpath_restore(path, old);
  }
  return rc;
}

/* normalized_match and token_f1: a pipeline of normalization steps. */

static int step_of(const char *name) {
  for (int i = 0; tally_es_step_names[i] != NULL; i++)
    if (strcmp(tally_es_step_names[i], name) == 0)
      return i;
  return -1;
}

static const int default_pipeline[] = {TALLY_ES_TRIM, TALLY_ES_LOWERCASE,
                                       TALLY_ES_COLLAPSE_WHITESPACE};

static void set_default(tally_es_pipeline_t *c) {
  memcpy(c->steps, default_pipeline, sizeof(default_pipeline));
  c->nsteps = 3;
}

static int normalized_parse(const cJSON *config, void **state, tally_diag_t *d,
                            tally_jpath_t *path) {
  static const cfield_t fields[] = {
      {"pipeline", C_STRS}, {"normalizations", C_STRS}, {NULL, C_NUM}};
  const cJSON *f[2];
  tally_es_pipeline_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  set_default(c);
  if (config == NULL)
    return 0;
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  int np = f[0] ? cJSON_GetArraySize(f[0]) : 0;
  int nn = f[1] ? cJSON_GetArraySize(f[1]) : 0;
  if (np > 0 && nn > 0)
    return tally_diag_add(d, path, "cannot mix pipeline with normalizations");
  const cJSON *list = np > 0 ? f[0] : nn > 0 ? f[1] : NULL;
  if (list == NULL)
    return 0;
  if (cJSON_GetArraySize(list) > TALLY_ES_MAX_STEPS)
    return tally_diag_add(d, path, "at most %d normalization steps",
                          TALLY_ES_MAX_STEPS);
  c->nsteps = 0;
  size_t j = 0;
  for (const cJSON *x = list->child; x != NULL; x = x->next, j++) {
    const char *name = cJSON_IsString(x) ? x->valuestring : "";
    int step = step_of(name);
    if (step < 0) {
      /* The reference names the list pipeline, whichever key held it. */
      size_t old = tally_jpath_key(path, "pipeline");
      tally_jpath_index(path, j);
      rc = tally_diag_add(d, path,
                          "\"%s\" is not a supported normalization step", name);
      tally_jpath_restore(path, old);
    }
    c->steps[c->nsteps++] = step;
  }
  return rc;
}

static int token_f1_parse(const cJSON *config, void **state, tally_diag_t *d,
                          tally_jpath_t *path) {
  static const cfield_t fields[] = {{"threshold", C_NUM},
                                    {"normalize", C_BOOL},
                                    {"remove_articles", C_BOOL},
                                    {"remove_punctuation", C_BOOL},
                                    {NULL, C_NUM}};
  const cJSON *f[4];
  tally_es_pipeline_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  int rc = 0;
  if (config != NULL && (rc = check_members(config, fields, f, d, path)) != 0)
    return rc;
  bool normalize = config != NULL && cJSON_IsTrue(f[1]);
  bool articles = config != NULL && cJSON_IsTrue(f[2]);
  bool punct = config != NULL && cJSON_IsTrue(f[3]);
  /* The pipeline the reference builds from the flags. */
  if (normalize)
    set_default(c);
  if (punct)
    c->steps[c->nsteps++] = TALLY_ES_STRIP_PUNCTUATION;
  if (articles)
    c->steps[c->nsteps++] = TALLY_ES_REMOVE_ARTICLES;
  if (c->nsteps > 0) {
    c->steps[c->nsteps++] = TALLY_ES_COLLAPSE_WHITESPACE;
    c->steps[c->nsteps++] = TALLY_ES_TRIM;
  }
  if (config != NULL)
    rc = threshold_in_range(f[0], &c->has_threshold, &c->threshold, d, path);
  return rc;
}

/* bleu_score, rouge_score, chrf_score: the members of each, then the
 * reference's checks. */
static int gen_parse(const cJSON *config, void **state, tally_diag_t *d,
                     tally_jpath_t *path, int kind) {
  static const cfield_t bleu[] = {
      {"threshold", C_NUM},         {"max_ngram", C_INT},  {"smoothing", C_STR},
      {"case_insensitive", C_BOOL}, {"normalize", C_BOOL}, {NULL, C_NUM}};
  static const cfield_t rouge[] = {
      {"threshold", C_NUM},         {"variant", C_STR},    {"beta", C_NUM},
      {"case_insensitive", C_BOOL}, {"normalize", C_BOOL}, {NULL, C_NUM}};
  static const cfield_t chrf[] = {
      {"threshold", C_NUM},         {"char_order", C_INT}, {"beta", C_NUM},
      {"case_insensitive", C_BOOL}, {"normalize", C_BOOL}, {NULL, C_NUM}};
  const cfield_t *fields = kind == 0 ? bleu : kind == 1 ? rouge : chrf;
  tally_es_gen_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  c->max_ngram = 4;
  c->variant = 2;
  c->char_order = 6;
  if (config == NULL)
    return 0;
  const cJSON *f[5];
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  c->case_insensitive = cJSON_IsTrue(f[3]);
  c->normalize = cJSON_IsTrue(f[4]);
  rc = threshold_in_range(f[0], &c->has_threshold, &c->threshold, d, path);
  size_t old;
  if (kind != 1 && f[1] != NULL) { /* max_ngram, char_order */
    if (f[1]->valuedouble <= 0) {
      old = tally_jpath_key(path, fields[1].name);
      rc = tally_diag_add(d, path, "must be greater than 0");
      tally_jpath_restore(path, old);
    } else if (kind == 0) {
      c->max_ngram = (long long)f[1]->valuedouble;
    } else {
      c->char_order = (long long)f[1]->valuedouble;
    }
  }
  if (kind == 0 && f[2] != NULL) { /* smoothing */
    const char *sm = f[2]->valuestring;
    if (strcmp(sm, "method1") == 0) {
      c->method1 = true;
    } else if (sm[0] != '\0' && strcmp(sm, "none") != 0) {
      old = tally_jpath_key(path, "smoothing");
      rc = tally_diag_add(d, path, "must be \"none\" or \"method1\"");
      tally_jpath_restore(path, old);
    }
  }
  if (kind == 1 && f[1] != NULL && f[1]->valuestring[0] != '\0') {
    static const char *const variants[] = {"rouge-1", "rouge-2", "rouge-l"};
    int v = -1;
    for (int i = 0; i < 3; i++)
      if (strcmp(f[1]->valuestring, variants[i]) == 0)
        v = i;
    if (v < 0) {
      old = tally_jpath_key(path, "variant");
      rc = tally_diag_add(d, path,
                          "must be \"rouge-1\", \"rouge-2\", or \"rouge-l\"");
      tally_jpath_restore(path, old);
    } else {
      c->variant = v;
    }
  }
  if (kind != 0 && f[2] != NULL) { /* beta */
    c->has_beta = true;
    c->beta = f[2]->valuedouble;
    if (c->beta <= 0) {
      old = tally_jpath_key(path, "beta");
      rc = tally_diag_add(d, path, "must be greater than 0");
      tally_jpath_restore(path, old);
    }
  }
  return rc;
}

static int bleu_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  return gen_parse(config, state, d, path, 0);
}

static int rouge_parse(const cJSON *config, void **state, tally_diag_t *d,
                       tally_jpath_t *path) {
  return gen_parse(config, state, d, path, 1);
}

static int chrf_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  return gen_parse(config, state, d, path, 2);
}

/* tool_call_assertion */

static void tool_free(void *p) {
  tally_es_tool_t *c = p;
  if (c == NULL)
    return;
  free(c->tool_name);
  cJSON_Delete(c->args);
  for (size_t i = 0; i < c->nordered; i++)
    free(c->ordered[i]);
  free(c->ordered);
  free(c->order_mode);
  free(c);
}

/* An error at path.sub (sub NULL: path itself). */
static int sub_error(tally_diag_t *d, tally_jpath_t *path, const char *sub,
                     const char *msg) {
  size_t old = sub != NULL ? tally_jpath_key(path, sub) : path->len;
  int rc = tally_diag_add(d, path, "%s", msg);
  tally_jpath_restore(path, old);
  return rc;
}

static int tool_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  static const cfield_t fields[] = {{"tool_name", C_STR},
                                    {"must_call", C_BOOL},
                                    {"count", C_INT},
                                    {"min_count", C_INT},
                                    {"max_count", C_INT},
                                    {"arguments_contain", C_ANY},
                                    {"ordered_tools", C_STRS},
                                    {"order_mode", C_STR},
                                    {NULL, C_NUM}};
  tally_es_tool_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  c->must_call = -1;
  if (config == NULL)
    return tally_diag_add(d, path, "tool_call_assertion config is required");
  const cJSON *f[8] = {NULL};
  /* A null config decodes to an empty one. */
  int rc = cJSON_IsNull(config) ? 0 : check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  c->tool_name = tally_go_trimmed(f[0] != NULL ? f[0]->valuestring : "");
  c->order_mode = tally_go_trimmed(f[7] != NULL ? f[7]->valuestring : "");
  if (c->tool_name == NULL || c->order_mode == NULL)
    return tally_diag_add(d, path, "out of memory");
  if (f[1] != NULL)
    c->must_call = cJSON_IsTrue(f[1]);
  const cJSON *counts[3] = {f[2], f[3], f[4]};
  bool *has[3] = {&c->has_count, &c->has_min, &c->has_max};
  long long *vals[3] = {&c->count, &c->min, &c->max};
  static const char *const names[3] = {"count", "min_count", "max_count"};
  for (int i = 0; i < 3; i++) {
    if (counts[i] == NULL)
      continue;
    *has[i] = true;
    *vals[i] = (long long)counts[i]->valuedouble;
    if (*vals[i] < 0)
      rc = sub_error(d, path, names[i], "must be greater than or equal to 0");
  }
  if (c->has_count && (c->has_min || c->has_max))
    rc = sub_error(d, path, "count",
                   "cannot be combined with min_count or max_count");
  if (c->has_min && c->has_max && c->min > c->max)
    rc = sub_error(d, path, "min_count",
                   "must be less than or equal to "
                   "max_count");
  if (c->must_call >= 0 && (c->has_count || c->has_min || c->has_max)) {
    if (c->must_call && c->has_count && c->count == 0)
      rc = sub_error(d, path, "must_call", "cannot be true when count is 0");
    if (c->must_call && c->has_max && c->max == 0)
      rc =
          sub_error(d, path, "must_call", "cannot be true when max_count is 0");
    if (!c->must_call && c->has_count && c->count > 0)
      rc = sub_error(d, path, "must_call",
                     "cannot be false when count is greater than 0");
    if (!c->must_call && c->has_min && c->min > 0)
      rc = sub_error(d, path, "must_call",
                     "cannot be false when min_count is greater than 0");
  }
  bool args_set = cJSON_IsObject(config) &&
                  tally_go_member(config, "arguments_contain") != NULL;
  if (args_set) {
    const cJSON *a = tally_go_member(config, "arguments_contain");
    if (!cJSON_IsObject(a))
      rc = sub_error(d, path, "arguments_contain", "must be a JSON object");
    else if ((c->args = cJSON_Duplicate(a, true)) == NULL)
      return tally_diag_add(d, path, "out of memory");
  }
  if (f[6] != NULL) {
    int n = cJSON_GetArraySize(f[6]);
    c->ordered = calloc((size_t)n + 1, sizeof(char *));
    if (c->ordered == NULL)
      return tally_diag_add(d, path, "out of memory");
    size_t i = 0;
    for (const cJSON *e = f[6]->child; e != NULL; e = e->next, i++) {
      c->ordered[i] = tally_go_trimmed(cJSON_IsString(e) ? e->valuestring : "");
      c->nordered = i + 1;
      if (c->ordered[i] == NULL)
        return tally_diag_add(d, path, "out of memory");
      if (c->ordered[i][0] == '\0') {
        size_t old = tally_jpath_key(path, "ordered_tools");
        size_t at = tally_jpath_index(path, i);
        rc = tally_diag_add(d, path, "must not be empty");
        tally_jpath_restore(path, at);
        tally_jpath_restore(path, old);
      }
    }
  }
  if (c->order_mode[0] == '\0' && c->nordered > 0) {
    free(c->order_mode);
    if ((c->order_mode = strdup("subsequence")) == NULL)
      return tally_diag_add(d, path, "out of memory");
  }
  if (c->order_mode[0] != '\0') {
    if (strcmp(c->order_mode, "subsequence") != 0 &&
        strcmp(c->order_mode, "exact") != 0)
      rc = sub_error(d, path, "order_mode",
                     "must be \"subsequence\" or \"exact\"");
    if (c->nordered == 0)
      rc = sub_error(d, path, "ordered_tools",
                     "is required when order_mode is set");
  }
  if (c->tool_name[0] == '\0' && c->must_call < 0 && !c->has_count &&
      !c->has_min && !c->has_max && !args_set && c->nordered == 0)
    rc = sub_error(d, path, NULL,
                   "must declare at least one tool call "
                   "assertion");
  return rc;
}

/* postcondition */

static void post_free(void *p) {
  tally_es_post_t *c = p;
  if (c == NULL)
    return;
  free(c->condition);
  free(c->json_path);
  cJSON_Delete(c->value);
  free(c);
}

static int post_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  static const cfield_t fields[] = {{"condition", C_STR},
                                    {"value", C_ANY},
                                    {"json_path", C_STR},
                                    {NULL, C_NUM}};
  tally_es_post_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  if (config == NULL)
    return tally_diag_add(d, path, "is required");
  const cJSON *f[3];
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  c->condition = tally_go_trimmed(f[0] != NULL ? f[0]->valuestring : "");
  c->json_path = tally_go_trimmed(f[2] != NULL ? f[2]->valuestring : "");
  const cJSON *val = tally_go_member(config, "value"); /* null counts */
  if (c->condition == NULL || c->json_path == NULL ||
      (val != NULL && (c->value = cJSON_Duplicate(val, true)) == NULL))
    return tally_diag_add(d, path, "out of memory");
  const char *cond = c->condition;
  bool has_path = c->json_path[0] != '\0';
  char msg[640];
  snprintf(msg, sizeof(msg), "must be omitted for %s", cond);
  if (strcmp(cond, "exists") == 0 || strcmp(cond, "not_exists") == 0) {
    if (val != NULL)
      rc = sub_error(d, path, "value", msg);
    if (has_path)
      rc = sub_error(d, path, "json_path", msg);
  } else if (strcmp(cond, "contains") == 0 ||
             strcmp(cond, "not_contains") == 0) {
    if (val == NULL || !(cJSON_IsString(val) || cJSON_IsNull(val)))
      rc = sub_error(d, path, "value", "must be a string");
    if (has_path)
      rc = sub_error(d, path, "json_path", msg);
  } else if (strcmp(cond, "regex_match") == 0) {
    char err[512];
    if (val == NULL || !(cJSON_IsString(val) || cJSON_IsNull(val))) {
      rc = sub_error(d, path, "value", "must be a string regex pattern");
    } else if (tally_es_regex(cJSON_IsString(val) ? val->valuestring : "",
                              false, "", err,
                              sizeof(err)) == TALLY_ES_RE_BAD_PATTERN) {
      char why[700];
      snprintf(why, sizeof(why), "must be a valid regex: %s", err);
      rc = sub_error(d, path, "value", why);
    } else if (has_path) {
      rc = sub_error(d, path, "json_path", msg);
    }
  } else if (strcmp(cond, "json_path_match") == 0) {
    if (!has_path)
      rc = sub_error(d, path, "json_path", "is required");
    if (val == NULL)
      rc = sub_error(d, path, "value", "is required");
  } else if (strcmp(cond, "equals") == 0) {
    if (val == NULL)
      rc = sub_error(d, path, "value", "is required");
    if (has_path)
      rc = sub_error(d, path, "json_path", msg);
  } else if (cond[0] == '\0') {
    rc = sub_error(d, path, "condition", "is required");
  } else {
    rc = sub_error(d, path, "condition",
                   "must be one of exists, not_exists, contains, "
                   "not_contains, regex_match, json_path_match, equals");
  }
  return rc;
}

/* code_execution */

static int code_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  static const cfield_t fields[] = {{"test_command", C_STR},
                                    {"timeout_ms", C_INT},
                                    {"scoring", C_STR},
                                    {"pass_threshold", C_NUM},
                                    {NULL, C_NUM}};
  tally_es_code_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  c->pass_threshold = 1;
  c->scoring = "fraction_passed";
  if (config == NULL)
    return 0; /* the reference checks no config it was not given */
  const cJSON *f[4];
  int rc = check_members(config, fields, f, d, path);
  if (rc != 0)
    return rc;
  if (f[0] == NULL || tally_go_blank(f[0]->valuestring))
    rc = sub_error(d, path, "test_command", "is required");
  if (f[1] != NULL && f[1]->valuedouble <= 0)
    rc = sub_error(d, path, "timeout_ms", "must be greater than 0");
  const char *mode = f[2] != NULL ? f[2]->valuestring : "";
  if (strcmp(mode, "all_or_nothing") == 0) {
    c->scoring = "all_or_nothing";
    c->all_or_nothing = true;
  } else if (strcmp(mode, "pass_at_k") == 0) {
    c->scoring = "pass_at_k";
    c->pass_at_k = true;
    rc = sub_error(d, path, "scoring",
                   "pass_at_k requires multi-sample "
                   "execution and is not supported yet");
  } else if (mode[0] != '\0' && strcmp(mode, "fraction_passed") != 0) {
    rc = sub_error(d, path, "scoring",
                   "must be one of fraction_passed, "
                   "all_or_nothing, pass_at_k");
  }
  if (f[3] != NULL) {
    c->pass_threshold = f[3]->valuedouble;
    if (c->pass_threshold < 0 || c->pass_threshold > 1)
      rc = sub_error(d, path, "pass_threshold", "must be between 0 and 1");
  }
  return rc;
}

/* math_equivalence */

static void math_free(void *p) {
  tally_es_math_t *c = p;
  if (c != NULL)
    free(c->delim);
  free(c);
}

static int math_parse(const cJSON *config, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  static const cfield_t fields[] = {
      {"extract_answer", C_BOOL}, {"answer_delimiter", C_STR},
      {"comparison_mode", C_STR}, {"numeric_fallback", C_BOOL},
      {"tolerance", C_NUM},       {NULL, C_NUM}};
  tally_es_math_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return tally_diag_add(d, path, "out of memory");
  *state = c;
  c->fallback = true;
  c->tolerance = 1e-6;
  const cJSON *f[5] = {NULL};
  int rc = 0;
  if (config != NULL && (rc = check_members(config, fields, f, d, path)) != 0)
    return rc;
  c->extract = cJSON_IsTrue(f[0]);
  c->delim = tally_go_trimmed(f[1] != NULL ? f[1]->valuestring : "");
  if (c->delim == NULL)
    return tally_diag_add(d, path, "out of memory");
  if (c->extract && c->delim[0] == '\0') {
    free(c->delim);
    if ((c->delim = strdup("####")) == NULL)
      return tally_diag_add(d, path, "out of memory");
  }
  char *mode = tally_go_trimmed(f[2] != NULL ? f[2]->valuestring : "");
  if (mode == NULL)
    return tally_diag_add(d, path, "out of memory");
  c->numeric = strcmp(mode, "numeric") == 0;
  if (mode[0] != '\0' && !c->numeric && strcmp(mode, "symbolic") != 0) {
    size_t old = tally_jpath_key(path, "comparison_mode");
    rc = tally_diag_add(d, path, "must be \"symbolic\" or \"numeric\"");
    tally_jpath_restore(path, old);
  }
  free(mode);
  if (f[3] != NULL)
    c->fallback = cJSON_IsTrue(f[3]);
  if (c->numeric)
    c->fallback = true;
  if (f[4] != NULL) {
    c->tolerance = f[4]->valuedouble;
    if (c->tolerance < 0) {
      size_t old = tally_jpath_key(path, "tolerance");
      rc = tally_diag_add(d, path, "must be greater than or equal to 0");
      tally_jpath_restore(path, old);
    }
  }
  return rc;
}

#define NEEDS TALLY_ES_NEEDS_EXPECTED

static const tally_es_vtype_t vtypes[] = {
    {"exact_match", NEEDS, NULL, NULL},
    {"contains", NEEDS, NULL, NULL},
    {"regex_match", NEEDS, NULL, NULL},
    {"json_schema", NEEDS, NULL, NULL},
    {"json_path_match", NEEDS, NULL, NULL},
    {"boolean_assert", NEEDS, NULL, NULL},
    {"fuzzy_match", NEEDS, fuzzy_parse, free},
    {"numeric_match", NEEDS, numeric_parse, free},
    {"normalized_match", NEEDS, normalized_parse, free},
    {"token_f1", NEEDS, token_f1_parse, free},
    {"math_equivalence", NEEDS, math_parse, math_free},
    {"bleu_score", NEEDS, bleu_parse, free},
    {"rouge_score", NEEDS, rouge_parse, free},
    {"chrf_score", NEEDS, chrf_parse, free},
    {"file_content_match", NEEDS | TALLY_ES_FILE, NULL, NULL},
    {"file_exists", TALLY_ES_FILE, NULL, NULL},
    {"file_json_schema", TALLY_ES_FILE, NULL, NULL},
    {"directory_structure", TALLY_ES_FILE, NULL, NULL},
    {"code_execution", TALLY_ES_FILE, code_parse, free},
    {"tool_call_assertion", 0, tool_parse, tool_free},
    {"postcondition", TALLY_ES_FILE, post_parse, post_free},
};

const tally_es_vtype_t *tally_es_vtype_find(const char *name) {
  for (size_t i = 0; i < sizeof(vtypes) / sizeof(vtypes[0]); i++)
    if (strcmp(vtypes[i].name, name) == 0)
      return &vtypes[i];
  return NULL;
}
