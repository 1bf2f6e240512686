/* Decoding a challenge's scorecard from its task config, strictly. */
#include "scorecards/scorecard.h"
#include "config/cfg.h"
#include "config/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tally_scorecard_keys[] = {
    "scoring",       "ground_truth",  "difficulty",     "constraints",
    "answer_format", "win_threshold", "draw_threshold", NULL};

/* The seven core dimensions: their labels and descriptions. */
static const struct {
  const char *name, *label, *description;
} core[] = {
    {"correctness", "Correctness", "Accuracy of the primary answer"},
    {"completeness", "Completeness", "Coverage of all required parts"},
    {"precision", "Precision",
     "Fraction of reported findings that are genuine"},
    {"methodology", "Methodology", "Quality of reasoning and reporting"},
    {"speed", "Speed", "Time efficiency relative to the limit"},
    {"code_quality", "Code Quality", "Quality of the code submitted"},
    {"analysis", "Analysis", "Depth of evidence gathering"},
};

static const struct {
  const char *name;
  double rating;
} difficulties[] = {
    {"newcomer", 800},
    {"contender", 1000},
    {"veteran", 1200},
    {"legendary", 1400},
};

static const char *const dimension_keys[] = {
    "name",   "weight", "primitive",          "label", "description",
    "public", "field",  "ground_truth_field", NULL};

static const char *const kind_names[] = {"string", "number", "boolean",
                                         "array",  "object", NULL};

static bool listed(const char *const *list, const char *s) {
  for (size_t i = 0; list != NULL && list[i] != NULL; i++)
    if (strcmp(list[i], s) == 0)
      return true;
  return false;
}

/* A name of a dimension: ^[a-z][a-z0-9_]*$. */
static bool good_name(const char *s) {
  if (!(s[0] >= 'a' && s[0] <= 'z'))
    return false;
  for (const char *p = s + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

/* A custom dimension's label: its name capitalized, "_" as spaces. */
static char *label_of(const char *name) {
  char *l = strdup(name);
  for (char *p = l; p != NULL && *p; p++)
    if (*p == '_')
      *p = ' ';
  if (l != NULL && l[0] >= 'a' && l[0] <= 'z')
    l[0] = (char)(l[0] - 'a' + 'A');
  return l;
}

/* Copies the string member key of obj into *out; NULL when absent. */
static int string_member(const cJSON *obj, const char *key, char **out,
                         bool required, tally_diag_t *d, tally_jpath_t *path) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  size_t old = tally_jpath_key(path, key);
  int rc = 0;
  if (v == NULL && required)
    rc = tally_diag_add(d, path, "is missing");
  else if (v != NULL && (!cJSON_IsString(v) || v->valuestring[0] == '\0'))
    rc = tally_diag_add(d, path, "must be a non-empty string");
  else if (v != NULL && (*out = strdup(v->valuestring)) == NULL)
    rc = tally_diag_add(d, path, "out of memory");
  tally_jpath_restore(path, old);
  return rc;
}

static int decode_dimension(tally_dimension_t *dim, const cJSON *v,
                            tally_prim_find_t find, const void *ctx,
                            tally_diag_t *d, tally_jpath_t *path) {
  if (!cJSON_IsObject(v))
    return tally_diag_add(d, path, "must be an object");
  int rc = 0;
  size_t mark = path->len;
  bool oom = false;
  if (tally_json_find_duplicate(v, path, &oom) || oom)
    rc = tally_diag_add(d, path, oom ? "out of memory" : "key appears twice");
  tally_jpath_restore(path, mark);
  rc |= string_member(v, "name", &dim->name, true, d, path);
  if (dim->name != NULL && !good_name(dim->name)) {
    size_t old = tally_jpath_key(path, "name");
    rc = tally_diag_add(d, path,
                        "\"%s\" must match ^[a-z][a-z0-9_]*$ (lowercase "
                        "letters, digits and _)",
                        dim->name);
    tally_jpath_restore(path, old);
  }
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(v, "weight");
  size_t old = tally_jpath_key(path, "weight");
  if (w == NULL)
    rc = tally_diag_add(d, path, "is missing");
  else if (!cJSON_IsNumber(w) || !(w->valuedouble > 0) || w->valuedouble > 1)
    rc = tally_diag_add(d, path, "must be a number in (0, 1]");
  else
    dim->weight = w->valuedouble;
  tally_jpath_restore(path, old);

  char *prim = NULL;
  int prc = string_member(v, "primitive", &prim, true, d, path);
  rc |= prc;
  if (prim != NULL && (dim->prim = find(ctx, prim)) == NULL) {
    old = tally_jpath_key(path, "primitive");
    rc = tally_diag_add(d, path, "unknown primitive \"%s\"", prim);
    tally_jpath_restore(path, old);
  }
  free(prim);
  rc |= string_member(v, "label", &dim->label, false, d, path);
  rc |= string_member(v, "description", &dim->description, false, d, path);
  const cJSON *pub = cJSON_GetObjectItemCaseSensitive(v, "public");
  dim->is_public = true;
  if (pub != NULL) {
    old = tally_jpath_key(path, "public");
    if (!cJSON_IsBool(pub))
      rc = tally_diag_add(d, path, "must be true or false");
    dim->is_public = cJSON_IsTrue(pub);
    tally_jpath_restore(path, old);
  }
  const tally_primitive_t *p = dim->prim;
  for (const cJSON *m = v->child; m != NULL; m = m->next) {
    if (listed(dimension_keys, m->string) ||
        (p != NULL && listed(p->params, m->string)))
      continue;
    old = tally_jpath_key(path, m->string);
    char takes[128] = "no parameters";
    size_t used = 0;
    for (size_t i = 0; p != NULL && p->params != NULL && p->params[i] != NULL &&
                       used < sizeof(takes);
         i++)
      used += (size_t)snprintf(takes + used, sizeof(takes) - used, "%s%s",
                               i ? ", " : "", p->params[i]);
    rc = p != NULL
             ? tally_diag_add(d, path, "unknown key (primitive %s takes %s)",
                              p->name, takes)
             : tally_diag_add(d, path, "unknown key");
    tally_jpath_restore(path, old);
  }
  if (p == NULL)
    return rc;
  bool reads = (p->flags & TALLY_PRIM_FIELD) != 0;
  if (reads) {
    rc |= string_member(v, "field", &dim->field, true, d, path);
    rc |= string_member(v, "ground_truth_field", &dim->truth_field, true, d,
                        path);
  } else {
    static const char *const fields[] = {"field", "ground_truth_field"};
    for (size_t i = 0; i < 2; i++) {
      if (cJSON_GetObjectItemCaseSensitive(v, fields[i]) == NULL)
        continue;
      old = tally_jpath_key(path, fields[i]);
      rc = tally_diag_add(d, path, "primitive %s reads no answer field",
                          p->name);
      tally_jpath_restore(path, old);
    }
  }
  if (p->parse != NULL && p->parse(v, &dim->state, d, path) != 0)
    rc = TALLY_ECONFIG;
  return rc;
}

static int decode_dimensions(tally_scorecard_t *card, const cJSON *dims,
                             tally_prim_find_t find, const void *ctx,
                             tally_diag_t *d, tally_jpath_t *path) {
  int n = cJSON_GetArraySize(dims);
  if (!cJSON_IsArray(dims) || n < 1 || n > TALLY_MAX_DIMENSIONS)
    return tally_diag_add(d, path, "must be a list of 1 to %d dimensions",
                          TALLY_MAX_DIMENSIONS);
  card->dims = calloc((size_t)n, sizeof(*card->dims));
  if (card->dims == NULL)
    return tally_diag_add(d, path, "out of memory");
  card->ndims = (size_t)n;
  int rc = 0;
  size_t i = 0;
  double sum = 0;
  for (const cJSON *v = dims->child; v != NULL; v = v->next, i++) {
    size_t old = tally_jpath_index(path, i);
    tally_dimension_t *dim = &card->dims[i];
    rc |= decode_dimension(dim, v, find, ctx, d, path);
    for (size_t k = 0; dim->name != NULL && k < i; k++)
      if (card->dims[k].name != NULL &&
          strcmp(card->dims[k].name, dim->name) == 0) {
        size_t o2 = tally_jpath_key(path, "name");
        rc = tally_diag_add(d, path, "dimension \"%s\" appears twice",
                            dim->name);
        tally_jpath_restore(path, o2);
      }
    sum += dim->weight;
    if (dim->is_public)
      card->public_weight += dim->weight;
    for (size_t c = 0; dim->name != NULL && c < sizeof(core) / sizeof(core[0]);
         c++) {
      if (strcmp(core[c].name, dim->name) != 0)
        continue;
      if (dim->label == NULL)
        dim->label = strdup(core[c].label);
      if (dim->description == NULL)
        dim->description = strdup(core[c].description);
    }
    if (dim->name != NULL && dim->label == NULL)
      dim->label = label_of(dim->name);
    tally_jpath_restore(path, old);
  }
  if (rc == 0 && fabs(sum - 1.0) > 0.001)
    rc = tally_diag_add(
        d, path, "the weights sum to %.10g, not 1.0 (within 0.001)", sum);
  return rc;
}

static const tally_cfg_key_t scoring_keys[] = {
    {.name = "type"},
    {.name = "dimensions", .flags = TALLY_CFG_REQUIRED},
    {.name = NULL},
};

static int decode_scoring(tally_scorecard_t *card, const cJSON *s,
                          tally_prim_find_t find, const void *ctx,
                          tally_diag_t *d, tally_jpath_t *path) {
  const cJSON *found[2];
  int rc = tally_cfg_decode(scoring_keys, s, NULL, d, path, found);
  if (!cJSON_IsObject(s))
    return rc;
  const cJSON *type = found[0], *dims = found[1];
  if (type != NULL &&
      (!cJSON_IsString(type) || strcmp(type->valuestring, "deterministic"))) {
    size_t old = tally_jpath_key(path, "type");
    rc = tally_diag_add(d, path, "must be \"deterministic\"");
    tally_jpath_restore(path, old);
  }
  if (dims != NULL) {
    size_t old = tally_jpath_key(path, "dimensions");
    rc |= decode_dimensions(card, dims, find, ctx, d, path);
    tally_jpath_restore(path, old);
  }
  return rc;
}

static const tally_cfg_key_t constraint_keys[] = {
    {.name = "time_limit_secs"},
    {.name = "token_budget"},
    {.name = "max_llm_calls"},
    {.name = NULL},
};

static int decode_constraints(tally_scorecard_t *card, const cJSON *c,
                              tally_diag_t *d, tally_jpath_t *path) {
  const cJSON *found[3];
  int rc = tally_cfg_decode(constraint_keys, c, NULL, d, path, found);
  if (!cJSON_IsObject(c))
    return rc;
  double *slots[] = {&card->time_limit_secs, &card->token_budget,
                     &card->max_llm_calls};
  static const char *const what[] = {"seconds", "tokens", "calls"};
  for (size_t i = 0; i < 3; i++) {
    const cJSON *v = found[i];
    if (v == NULL)
      continue;
    size_t old = tally_jpath_key(path, constraint_keys[i].name);
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0))
      rc = tally_diag_add(d, path, "must be a positive number of %s", what[i]);
    else
      *slots[i] = v->valuedouble;
    tally_jpath_restore(path, old);
  }
  return rc;
}

static const tally_cfg_key_t format_keys[] = {
    {.name = "type",
     .set = tally_cfg_set_enum,
     .offset = offsetof(tally_format_field_t, kind),
     .flags = TALLY_CFG_REQUIRED,
     .choices = kind_names},
    {.name = "required"},
    {.name = NULL},
};

static int decode_format(tally_scorecard_t *card, const cJSON *f,
                         tally_diag_t *d, tally_jpath_t *path) {
  if (!cJSON_IsObject(f))
    return tally_diag_add(d, path,
                          "must be an object mapping answer fields "
                          "to {\"type\", \"required\"}");
  bool oom = false;
  if (tally_json_find_duplicate(f, path, &oom) || oom)
    return tally_diag_add(d, path, oom ? "out of memory" : "key appears twice");
  int n = cJSON_GetArraySize(f);
  card->format = calloc(n > 0 ? (size_t)n : 1, sizeof(*card->format));
  if (card->format == NULL)
    return tally_diag_add(d, path, "out of memory");
  int rc = 0;
  for (const cJSON *m = f->child; m != NULL; m = m->next) {
    size_t old = tally_jpath_key(path, m->string);
    tally_format_field_t *ff = &card->format[card->nformat];
    const cJSON *found[2];
    int frc = tally_cfg_decode(format_keys, m, ff, d, path, found);
    if (found[1] != NULL) {
      size_t o2 = tally_jpath_key(path, "required");
      if (!cJSON_IsBool(found[1]))
        frc = tally_diag_add(d, path, "must be true or false");
      ff->required = cJSON_IsTrue(found[1]);
      tally_jpath_restore(path, o2);
    }
    if (frc == 0 && (ff->name = strdup(m->string)) != NULL)
      card->nformat++;
    rc |= frc;
    tally_jpath_restore(path, old);
  }
  return rc;
}

int tally_scorecard_parse(const cJSON *root, tally_prim_find_t find,
                          const void *ctx, tally_diag_t *d,
                          tally_scorecard_t **out) {
  *out = NULL;
  tally_scorecard_t *card = calloc(1, sizeof(*card));
  if (card == NULL)
    return tally_diag_add(d, NULL, "out of memory");
  card->difficulty = 1000;
  card->win_threshold = 700;
  card->draw_threshold = 400;
  tally_jpath_t path;
  tally_jpath_init(&path);
  int rc = 0;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "scoring");
  tally_jpath_key(&path, "scoring");
  if (s == NULL)
    rc = tally_diag_add(d, &path,
                        "is missing (an answer task is scored by "
                        "its dimensions)");
  else
    rc |= decode_scoring(card, s, find, ctx, d, &path);
  tally_jpath_init(&path);

  const cJSON *gt = cJSON_GetObjectItemCaseSensitive(root, "ground_truth");
  if (gt != NULL) {
    tally_jpath_key(&path, "ground_truth");
    bool oom = false;
    if (!cJSON_IsObject(gt))
      rc = tally_diag_add(d, &path, "must be an object");
    else if (tally_json_find_duplicate(gt, &path, &oom) || oom)
      rc =
          tally_diag_add(d, &path, oom ? "out of memory" : "key appears twice");
    else if ((card->ground_truth = cJSON_Duplicate(gt, true)) == NULL)
      rc = tally_diag_add(d, &path, "out of memory");
    tally_jpath_init(&path);
  }

  const cJSON *diff = cJSON_GetObjectItemCaseSensitive(root, "difficulty");
  if (diff != NULL) {
    tally_jpath_key(&path, "difficulty");
    bool known = false;
    for (size_t i = 0; cJSON_IsString(diff) &&
                       i < sizeof(difficulties) / sizeof(difficulties[0]);
         i++)
      if (strcmp(difficulties[i].name, diff->valuestring) == 0) {
        card->difficulty = difficulties[i].rating;
        known = true;
      }
    if (!known && cJSON_IsNumber(diff) && isfinite(diff->valuedouble))
      card->difficulty = diff->valuedouble;
    else if (!known)
      rc = tally_diag_add(d, &path,
                          "must be \"newcomer\", \"contender\", \"veteran\", "
                          "\"legendary\" or a rating (a number)");
    tally_jpath_init(&path);
  }

  const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "constraints");
  if (c != NULL) {
    tally_jpath_key(&path, "constraints");
    rc |= decode_constraints(card, c, d, &path);
    tally_jpath_init(&path);
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "answer_format");
  if (f != NULL) {
    tally_jpath_key(&path, "answer_format");
    rc |= decode_format(card, f, d, &path);
    tally_jpath_init(&path);
  }
  static const char *const thresholds[] = {"win_threshold", "draw_threshold"};
  double *slots[] = {&card->win_threshold, &card->draw_threshold};
  for (size_t i = 0; i < 2; i++) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, thresholds[i]);
    if (t == NULL)
      continue;
    tally_jpath_key(&path, thresholds[i]);
    if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0) || t->valuedouble > 1000)
      rc = tally_diag_add(d, &path, "must be a number from 0 to 1000");
    else
      *slots[i] = t->valuedouble;
    tally_jpath_init(&path);
  }
  if (rc == 0 && card->draw_threshold > card->win_threshold) {
    tally_jpath_key(&path, "draw_threshold");
    rc = tally_diag_add(d, &path, "%g is above win_threshold %g",
                        card->draw_threshold, card->win_threshold);
    tally_jpath_init(&path);
  }

  /* Dimensions that need a constraint. */
  for (size_t i = 0; i < card->ndims; i++) {
    const tally_primitive_t *p = card->dims[i].prim;
    const char *need = NULL;
    if (p != NULL && (p->flags & TALLY_PRIM_TOKENS) && card->token_budget == 0)
      need = "token_budget";
    if (p != NULL && (p->flags & TALLY_PRIM_CALLS) && card->max_llm_calls == 0)
      need = "max_llm_calls";
    if (need == NULL)
      continue;
    tally_jpath_key(&path, "scoring");
    tally_jpath_key(&path, "dimensions");
    tally_jpath_index(&path, i);
    tally_jpath_key(&path, "primitive");
    rc = tally_diag_add(d, &path, "%s needs constraints.%s", p->name, need);
    tally_jpath_init(&path);
  }
  if (rc != 0) {
    tally_scorecard_free(card);
    return TALLY_ECONFIG;
  }
  *out = card;
  return 0;
}

void tally_scorecard_free(tally_scorecard_t *card) {
  if (card == NULL)
    return;
  for (size_t i = 0; i < card->ndims; i++) {
    tally_dimension_t *dim = &card->dims[i];
    if (dim->prim != NULL && dim->state != NULL && dim->prim->free != NULL)
      dim->prim->free(dim->state);
    free(dim->name);
    free(dim->label);
    free(dim->description);
    free(dim->field);
    free(dim->truth_field);
  }
  free(card->dims);
  for (size_t i = 0; i < card->nformat; i++)
    free(card->format[i].name);
  free(card->format);
  cJSON_Delete(card->ground_truth);
  free(card);
}
