/* Decoding an evaluation spec: strict decoding of every key into the
 * structs of spec.h (a JSON null counts as absent, as the reference reads
 * it), then completion and the reference's checks (spec_check.c). */
#include "evalspecs/spec.h"
#include "config/error.h"
#include "config/json.h"
#include "evalspecs/spec_int.h"
#include "evalspecs/validators.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of member a field table knows. */
typedef enum ftype_e {
  F_STR,    /* char *, "" when absent */
  F_BOOL,   /* bool */
  F_F64,    /* double */
  F_OPT,    /* tally_es_opt_t */
  F_INT,    /* int64_t, a whole number in [min, max] */
  F_OPTINT, /* tally_es_opt_t holding a whole number in [min, max] */
  F_STRS,   /* char ** at off, size_t count at off2 */
  F_RAW,    /* cJSON *, a copy */
  F_CUSTOM  /* decoded by fn */
} ftype_t;

typedef struct dec_s {
  tally_diag_t *d;
  tally_jpath_t *path;
  int rc;
} dec_t;

typedef struct field_s {
  const char *name;
  ftype_t type;
  size_t off, off2;
  double min, max;
  int (*fn)(dec_t *dc, const cJSON *v, void *obj);
} field_t;

#define AT(type, member) ((size_t)offsetof(type, member))

static int fail(dec_t *dc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(dec_t *dc, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  dc->rc = tally_diag_add(dc->d, dc->path, "%s", msg);
  return dc->rc;
}

static const char *json_kind(const cJSON *v) {
  if (cJSON_IsString(v))
    return "a string";
  if (cJSON_IsNumber(v))
    return "a number";
  if (cJSON_IsBool(v))
    return "a boolean";
  if (cJSON_IsArray(v))
    return "an array";
  if (cJSON_IsObject(v))
    return "an object";
  return "null";
}

static char *dup_or_fail(dec_t *dc, const char *s) {
  char *c = strdup(s);
  if (c == NULL)
    fail(dc, "out of memory");
  return c;
}

/* A whole number in [min, max], as the reference's integer fields take. */
static bool whole(dec_t *dc, const cJSON *v, double min, double max,
                  double *out) {
  if (!cJSON_IsNumber(v)) {
    fail(dc, "must be a whole number, not %s", json_kind(v));
    return false;
  }
  double x = v->valuedouble;
  if (x != floor(x) || x < min || x > max) {
    fail(dc, "must be a whole number from %.0f to %.0f", min, max);
    return false;
  }
  *out = x;
  return true;
}

static void free_strs(char **list, size_t n) {
  for (size_t i = 0; list != NULL && i < n; i++)
    free(list[i]);
  free(list);
}

/* What each array item owns, freed. */
static void free_validator(void *item) {
  tally_es_validator_t *v = item;
  if (v->type != NULL && v->type->free != NULL && v->state != NULL)
    v->type->free(v->state);
  free(v->key);
  free(v->type_name);
  free(v->target);
  free(v->expected_from);
  cJSON_Delete(v->config);
}

static void free_metric(void *item) {
  tally_es_metric_t *m = item;
  free(m->key);
  free(m->type);
  free(m->collector);
  free(m->unit);
}

static void free_dimension(void *item) {
  tally_es_dimension_t *d = item;
  free(d->key);
  free(d->source_name);
  free_strs(d->validators, d->nvalidators);
  free(d->metric);
  free(d->better_direction);
  free(d->judge_key);
}

static void free_signal(void *item) {
  free(((tally_es_signal_t *)item)->key);
}

static void free_pricing(void *item) {
  tally_es_pricing_t *p = item;
  free(p->provider_key);
  free(p->provider_model_id);
}

static void free_check(void *item) {
  tally_es_check_t *c = item;
  free(c->key);
  free(c->type);
  free(c->path);
}

static void free_judge(void *item) {
  tally_es_judge_t *j = item;
  free(j->mode);
  free(j->key);
  free(j->model);
  free_strs(j->models, j->nmodels);
  free_strs(j->context_from, j->ncontext_from);
  cJSON_Delete(j->output_schema);
  free(j->rubric);
  free(j->assertion);
  free(j->prompt);
  free(j->reference_from);
  free(j->aggregation);
  free_strs(j->anti_gaming_clauses, j->nanti_gaming_clauses);
}

/* Frees items[0..n) of size sz with one, then the array. */
static void free_items(void *items, size_t n, size_t sz,
                       void (*one)(void *item)) {
  for (size_t i = 0; items != NULL && i < n; i++)
    one((char *)items + i * sz);
  free(items);
}

static void decode_strs(dec_t *dc, const cJSON *v, char ***out, size_t *n) {
  if (!cJSON_IsArray(v)) {
    fail(dc, "must be an array of strings, not %s", json_kind(v));
    return;
  }
  /* A repeated key: the last list wins. */
  free_strs(*out, *n);
  *out = NULL;
  *n = 0;
  size_t count = (size_t)cJSON_GetArraySize(v);
  char **list = calloc(count + 1, sizeof(*list));
  if (list == NULL) {
    fail(dc, "out of memory");
    return;
  }
  *out = list;
  size_t i = 0;
  for (const cJSON *x = v->child; x != NULL; x = x->next, i++) {
    size_t old = tally_jpath_index(dc->path, i);
    if (cJSON_IsNull(x))
      list[i] = dup_or_fail(dc, "");
    else if (!cJSON_IsString(x))
      fail(dc, "must be a string, not %s", json_kind(x));
    else
      list[i] = dup_or_fail(dc, x->valuestring);
    tally_jpath_restore(dc->path, old);
    *n = i + 1;
  }
}

static void decode_member(dec_t *dc, const field_t *f, const cJSON *v,
                          void *obj) {
  char *base = obj;
  switch (f->type) {
  case F_STR:
    if (!cJSON_IsString(v)) {
      fail(dc, "must be a string, not %s", json_kind(v));
    } else {
      char **p = (char **)(base + f->off);
      free(*p);
      *p = dup_or_fail(dc, v->valuestring);
    }
    break;
  case F_BOOL:
    if (!cJSON_IsBool(v))
      fail(dc, "must be true or false, not %s", json_kind(v));
    else
      *(bool *)(base + f->off) = cJSON_IsTrue(v);
    break;
  case F_F64:
  case F_OPT:
    if (!cJSON_IsNumber(v)) {
      fail(dc, "must be a number, not %s", json_kind(v));
    } else if (f->type == F_F64) {
      *(double *)(base + f->off) = v->valuedouble;
    } else {
      tally_es_opt_t *o = (tally_es_opt_t *)(base + f->off);
      o->set = true;
      o->v = v->valuedouble;
    }
    break;
  case F_INT:
  case F_OPTINT: {
    double x;
    if (!whole(dc, v, f->min, f->max, &x))
      break;
    if (f->type == F_INT) {
      *(int64_t *)(base + f->off) = (int64_t)x;
    } else {
      tally_es_opt_t *o = (tally_es_opt_t *)(base + f->off);
      o->set = true;
      o->v = x;
    }
    break;
  }
  case F_STRS:
    decode_strs(dc, v, (char ***)(base + f->off), (size_t *)(base + f->off2));
    break;
  case F_RAW: {
    cJSON **p = (cJSON **)(base + f->off);
    cJSON_Delete(*p);
    if ((*p = cJSON_Duplicate(v, 1)) == NULL)
      fail(dc, "out of memory");
    break;
  }
  case F_CUSTOM:
    f->fn(dc, v, obj);
    break;
  }
}

/* Decodes the object v against fields: an unknown key, a key given twice
 * and a member of the wrong type are errors; a null member is absent. */
static void decode_object(dec_t *dc, const cJSON *v, const field_t *fields,
                          void *obj) {
  if (!cJSON_IsObject(v)) {
    fail(dc, "must be an object, not %s", json_kind(v));
    return;
  }
  size_t mark = dc->path->len;
  bool oom = false;
  if (tally_json_find_duplicate(v, dc->path, &oom) || oom)
    fail(dc, oom ? "out of memory" : "key appears twice");
  tally_jpath_restore(dc->path, mark);
  for (const cJSON *m = v->child; m != NULL; m = m->next) {
    size_t old = tally_jpath_key(dc->path, m->string);
    const field_t *f = fields;
    while (f->name != NULL && strcmp(f->name, m->string) != 0)
      f++;
    if (f->name == NULL)
      fail(dc, "unknown key");
    else if (!cJSON_IsNull(m) || f->type == F_RAW) /* a raw null is "null" */
      decode_member(dc, f, m, obj);
    tally_jpath_restore(dc->path, old);
  }
}

/* Decodes the array v with each element through one(dc, elem, item), the
 * items of size sz in a new array at *items (count *n). When the key was
 * already decoded (a repeated key), Go's decoder decodes each element
 * into the element already there, keeping the members the new one lacks,
 * and drops the ones past the new length: so does this, with drop
 * freeing what a dropped item owns. */
static void decode_array(dec_t *dc, const cJSON *v, void **items, size_t *n,
                         size_t sz,
                         void (*one)(dec_t *dc, const cJSON *e, void *item),
                         void (*drop)(void *item)) {
  if (!cJSON_IsArray(v)) {
    fail(dc, "must be an array, not %s", json_kind(v));
    return;
  }
  size_t count = (size_t)cJSON_GetArraySize(v);
  char *arr = calloc(count + 1, sz);
  if (arr == NULL) {
    fail(dc, "out of memory");
    return;
  }
  char *was = *items;
  size_t had = was != NULL ? *n : 0;
  for (size_t i = 0; i < had; i++) {
    if (i < count)
      memcpy(arr + i * sz, was + i * sz, sz);
    else
      drop(was + i * sz);
  }
  free(was);
  *items = arr;
  *n = count;
  size_t i = 0;
  for (const cJSON *e = v->child; e != NULL; e = e->next, i++) {
    size_t old = tally_jpath_index(dc->path, i);
    if (!cJSON_IsNull(e))
      one(dc, e, arr + i * sz);
    tally_jpath_restore(dc->path, old);
  }
}

/* validators[] */

static const field_t validator_fields[] = {
    {"key", F_STR, AT(tally_es_validator_t, key), 0, 0, 0, NULL},
    {"type", F_STR, AT(tally_es_validator_t, type_name), 0, 0, 0, NULL},
    {"target", F_STR, AT(tally_es_validator_t, target), 0, 0, 0, NULL},
    {"expected_from", F_STR, AT(tally_es_validator_t, expected_from), 0, 0, 0,
     NULL},
    {"config", F_RAW, AT(tally_es_validator_t, config), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static void one_validator(dec_t *dc, const cJSON *e, void *item) {
  decode_object(dc, e, validator_fields, item);
}

/* metrics[] */

static const field_t metric_fields[] = {
    {"key", F_STR, AT(tally_es_metric_t, key), 0, 0, 0, NULL},
    {"type", F_STR, AT(tally_es_metric_t, type), 0, 0, 0, NULL},
    {"collector", F_STR, AT(tally_es_metric_t, collector), 0, 0, 0, NULL},
    {"unit", F_STR, AT(tally_es_metric_t, unit), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static void one_metric(dec_t *dc, const cJSON *e, void *item) {
  decode_object(dc, e, metric_fields, item);
}

/* scorecard.dimensions[]: a string (a built-in key) or an object. */

static int dim_normalization(dec_t *dc, const cJSON *v, void *obj);

static const field_t dimension_fields[] = {
    {"key", F_STR, AT(tally_es_dimension_t, key), 0, 0, 0, NULL},
    {"source", F_STR, AT(tally_es_dimension_t, source_name), 0, 0, 0, NULL},
    {"validators", F_STRS, AT(tally_es_dimension_t, validators),
     AT(tally_es_dimension_t, nvalidators), 0, 0, NULL},
    {"metric", F_STR, AT(tally_es_dimension_t, metric), 0, 0, 0, NULL},
    {"better_direction", F_STR, AT(tally_es_dimension_t, better_direction), 0,
     0, 0, NULL},
    {"normalization", F_CUSTOM, 0, 0, 0, 0, dim_normalization},
    {"weight", F_OPT, AT(tally_es_dimension_t, weight), 0, 0, 0, NULL},
    {"judge_key", F_STR, AT(tally_es_dimension_t, judge_key), 0, 0, 0, NULL},
    {"gate", F_BOOL, AT(tally_es_dimension_t, gate), 0, 0, 0, NULL},
    {"pass_threshold", F_OPT, AT(tally_es_dimension_t, pass_threshold), 0, 0, 0,
     NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static const field_t normalization_fields[] = {
    {"target", F_OPT, AT(tally_es_dimension_t, target), 0, 0, 0, NULL},
    {"max", F_OPT, AT(tally_es_dimension_t, max), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int dim_normalization(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_dimension_t *dim = obj;
  dim->has_normalization = true;
  decode_object(dc, v, normalization_fields, dim);
  return 0;
}

static void one_dimension(dec_t *dc, const cJSON *e, void *item) {
  tally_es_dimension_t *dim = item;
  if (cJSON_IsString(e)) {
    /* A repeated "dimensions" decodes into the dimension already there,
     * as decode_array says: its key is replaced, as an F_STR's is. */
    free(dim->key);
    dim->key = dup_or_fail(dc, e->valuestring);
  } else
    decode_object(dc, e, dimension_fields, dim);
}

/* behavioral.signals[] */

static const field_t signal_fields[] = {
    {"key", F_STR, AT(tally_es_signal_t, key), 0, 0, 0, NULL},
    {"weight", F_F64, AT(tally_es_signal_t, weight), 0, 0, 0, NULL},
    {"gate", F_BOOL, AT(tally_es_signal_t, gate), 0, 0, 0, NULL},
    {"pass_threshold", F_OPT, AT(tally_es_signal_t, pass_threshold), 0, 0, 0,
     NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static void one_signal(dec_t *dc, const cJSON *e, void *item) {
  decode_object(dc, e, signal_fields, item);
}

static int behavioral_signals(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->signals, &s->nsignals, sizeof(*s->signals),
               one_signal, free_signal);
  return 0;
}

static const field_t behavioral_fields[] = {
    {"signals", F_CUSTOM, 0, 0, 0, 0, behavioral_signals},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

/* pricing.models[] */

static const field_t pricing_model_fields[] = {
    {"provider_key", F_STR, AT(tally_es_pricing_t, provider_key), 0, 0, 0,
     NULL},
    {"provider_model_id", F_STR, AT(tally_es_pricing_t, provider_model_id), 0,
     0, 0, NULL},
    {"input_cost_per_million_tokens", F_F64,
     AT(tally_es_pricing_t, input_per_million), 0, 0, 0, NULL},
    {"output_cost_per_million_tokens", F_F64,
     AT(tally_es_pricing_t, output_per_million), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static void one_pricing(dec_t *dc, const cJSON *e, void *item) {
  decode_object(dc, e, pricing_model_fields, item);
}

static int pricing_models(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->pricing, &s->npricing, sizeof(*s->pricing),
               one_pricing, free_pricing);
  return 0;
}

static const field_t pricing_fields[] = {
    {"models", F_CUSTOM, 0, 0, 0, 0, pricing_models},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

/* post_execution_checks[] */

#define I64_MIN -9223372036854775808.0
#define I64_MAX 9223372036854775807.0
#define I32_MIN -2147483648.0
#define I32_MAX 2147483647.0

static const field_t check_fields[] = {
    {"key", F_STR, AT(tally_es_check_t, key), 0, 0, 0, NULL},
    {"type", F_STR, AT(tally_es_check_t, type), 0, 0, 0, NULL},
    {"path", F_STR, AT(tally_es_check_t, path), 0, 0, 0, NULL},
    {"recursive", F_BOOL, AT(tally_es_check_t, recursive), 0, 0, 0, NULL},
    {"max_size_bytes", F_INT, AT(tally_es_check_t, max_size_bytes), 0, I64_MIN,
     I64_MAX, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static void one_check(dec_t *dc, const cJSON *e, void *item) {
  decode_object(dc, e, check_fields, item);
}

/* llm_judges[] */

static int judge_scale(dec_t *dc, const cJSON *v, void *obj);
static int judge_consensus(dec_t *dc, const cJSON *v, void *obj);

/* expect is read by one_judge, which keeps its presence too. */
static int judge_expect(dec_t *dc, const cJSON *v, void *obj) {
  (void)dc;
  (void)v;
  (void)obj;
  return 0;
}

static const field_t judge_fields[] = {
    {"mode", F_STR, AT(tally_es_judge_t, mode), 0, 0, 0, NULL},
    {"key", F_STR, AT(tally_es_judge_t, key), 0, 0, 0, NULL},
    {"model", F_STR, AT(tally_es_judge_t, model), 0, 0, 0, NULL},
    {"models", F_STRS, AT(tally_es_judge_t, models),
     AT(tally_es_judge_t, nmodels), 0, 0, NULL},
    {"samples", F_INT, AT(tally_es_judge_t, samples), 0, I64_MIN, I64_MAX,
     NULL},
    {"context_from", F_STRS, AT(tally_es_judge_t, context_from),
     AT(tally_es_judge_t, ncontext_from), 0, 0, NULL},
    {"output_schema", F_RAW, AT(tally_es_judge_t, output_schema), 0, 0, 0,
     NULL},
    {"score_scale", F_CUSTOM, 0, 0, 0, 0, judge_scale},
    {"rubric", F_STR, AT(tally_es_judge_t, rubric), 0, 0, 0, NULL},
    {"assertion", F_STR, AT(tally_es_judge_t, assertion), 0, 0, 0, NULL},
    {"expect", F_CUSTOM, 0, 0, 0, 0, judge_expect},
    {"prompt", F_STR, AT(tally_es_judge_t, prompt), 0, 0, 0, NULL},
    {"position_debiasing", F_BOOL, AT(tally_es_judge_t, position_debiasing), 0,
     0, 0, NULL},
    {"reference_from", F_STR, AT(tally_es_judge_t, reference_from), 0, 0, 0,
     NULL},
    {"consensus", F_CUSTOM, 0, 0, 0, 0, judge_consensus},
    {"anti_gaming_clauses", F_STRS, AT(tally_es_judge_t, anti_gaming_clauses),
     AT(tally_es_judge_t, nanti_gaming_clauses), 0, 0, NULL},
    {"timeout_ms", F_OPTINT, AT(tally_es_judge_t, timeout_ms), 0, I64_MIN,
     I64_MAX, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static const field_t scale_fields[] = {
    {"min", F_F64, AT(tally_es_judge_t, scale_min), 0, 0, 0, NULL},
    {"max", F_F64, AT(tally_es_judge_t, scale_max), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int judge_scale(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_judge_t *j = obj;
  j->has_scale = true;
  decode_object(dc, v, scale_fields, j);
  return 0;
}

static const field_t consensus_fields[] = {
    {"aggregation", F_STR, AT(tally_es_judge_t, aggregation), 0, 0, 0, NULL},
    {"min_agreement_threshold", F_F64,
     AT(tally_es_judge_t, min_agreement_threshold), 0, 0, 0, NULL},
    {"flag_on_disagreement", F_BOOL, AT(tally_es_judge_t, flag_on_disagreement),
     0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int judge_consensus(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_judge_t *j = obj;
  j->has_consensus = true;
  decode_object(dc, v, consensus_fields, j);
  return 0;
}

static void one_judge(dec_t *dc, const cJSON *e, void *item) {
  tally_es_judge_t *j = item;
  decode_object(dc, e, judge_fields, j);
  /* expect: a bool kept with its presence (the table cannot say both). */
  const cJSON *x =
      cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "expect") : NULL;
  if (x != NULL && !cJSON_IsNull(x)) {
    size_t old = tally_jpath_key(dc->path, "expect");
    if (!cJSON_IsBool(x))
      fail(dc, "must be true or false, not %s", json_kind(x));
    j->has_expect = true;
    j->expect = cJSON_IsTrue(x);
    tally_jpath_restore(dc->path, old);
  }
}

/* scorecard */

static int scorecard_dimensions(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->dims, &s->ndims, sizeof(*s->dims),
               one_dimension, free_dimension);
  return 0;
}

static const field_t latency_fields[] = {
    {"target_ms", F_OPT, AT(tally_es_spec_t, latency_target_ms), 0, 0, 0, NULL},
    {"max_ms", F_OPT, AT(tally_es_spec_t, latency_max_ms), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static const field_t cost_fields[] = {
    {"target_usd", F_OPT, AT(tally_es_spec_t, cost_target_usd), 0, 0, 0, NULL},
    {"max_usd", F_OPT, AT(tally_es_spec_t, cost_max_usd), 0, 0, 0, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int norm_latency(dec_t *dc, const cJSON *v, void *obj) {
  ((tally_es_spec_t *)obj)->has_latency_norm = true;
  decode_object(dc, v, latency_fields, obj);
  return 0;
}

static int norm_cost(dec_t *dc, const cJSON *v, void *obj) {
  ((tally_es_spec_t *)obj)->has_cost_norm = true;
  decode_object(dc, v, cost_fields, obj);
  return 0;
}

static const field_t scorecard_norm_fields[] = {
    {"latency", F_CUSTOM, 0, 0, 0, 0, norm_latency},
    {"cost", F_CUSTOM, 0, 0, 0, 0, norm_cost},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int scorecard_normalization(dec_t *dc, const cJSON *v, void *obj) {
  decode_object(dc, v, scorecard_norm_fields, obj);
  return 0;
}

static const field_t judge_limits_fields[] = {
    {"max_samples_per_judge", F_INT, AT(tally_es_spec_t, max_samples_per_judge),
     0, I64_MIN, I64_MAX, NULL},
    {"max_calls_usd", F_F64, AT(tally_es_spec_t, max_calls_usd), 0, 0, 0, NULL},
    {"max_tokens", F_INT, AT(tally_es_spec_t, max_tokens), 0, I64_MIN, I64_MAX,
     NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int scorecard_judge_limits(dec_t *dc, const cJSON *v, void *obj) {
  ((tally_es_spec_t *)obj)->has_judge_limits = true;
  decode_object(dc, v, judge_limits_fields, obj);
  return 0;
}

static const field_t scorecard_fields[] = {
    {"dimensions", F_CUSTOM, 0, 0, 0, 0, scorecard_dimensions},
    {"normalization", F_CUSTOM, 0, 0, 0, 0, scorecard_normalization},
    {"strategy", F_STR, AT(tally_es_spec_t, strategy_name), 0, 0, 0, NULL},
    {"pass_threshold", F_OPT, AT(tally_es_spec_t, pass_threshold), 0, 0, 0,
     NULL},
    {"judge_limits", F_CUSTOM, 0, 0, 0, 0, scorecard_judge_limits},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

/* The spec itself. */

static int spec_validators(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->validators, &s->nvalidators,
               sizeof(*s->validators), one_validator, free_validator);
  return 0;
}

static int spec_metrics(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->metrics, &s->nmetrics, sizeof(*s->metrics),
               one_metric, free_metric);
  return 0;
}

static int spec_behavioral(dec_t *dc, const cJSON *v, void *obj) {
  ((tally_es_spec_t *)obj)->has_behavioral = true;
  decode_object(dc, v, behavioral_fields, obj);
  return 0;
}

static int spec_judges(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->judges, &s->njudges, sizeof(*s->judges),
               one_judge, free_judge);
  return 0;
}

static int spec_checks(dec_t *dc, const cJSON *v, void *obj) {
  tally_es_spec_t *s = obj;
  decode_array(dc, v, (void **)&s->checks, &s->nchecks, sizeof(*s->checks),
               one_check, free_check);
  return 0;
}

static const field_t runtime_fields[] = {
    {"max_total_tokens", F_OPTINT, AT(tally_es_spec_t, max_total_tokens), 0,
     I64_MIN, I64_MAX, NULL},
    {"max_cost_usd", F_OPT, AT(tally_es_spec_t, max_cost_usd), 0, 0, 0, NULL},
    {"max_duration_ms", F_OPTINT, AT(tally_es_spec_t, max_duration_ms), 0,
     I64_MIN, I64_MAX, NULL},
    {"max_iterations", F_OPTINT, AT(tally_es_spec_t, max_iterations), 0,
     I32_MIN, I32_MAX, NULL},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

static int spec_runtime(dec_t *dc, const cJSON *v, void *obj) {
  decode_object(dc, v, runtime_fields, obj);
  return 0;
}

static int spec_pricing(dec_t *dc, const cJSON *v, void *obj) {
  decode_object(dc, v, pricing_fields, obj);
  return 0;
}

static int spec_scorecard(dec_t *dc, const cJSON *v, void *obj) {
  decode_object(dc, v, scorecard_fields, obj);
  return 0;
}

static const field_t spec_fields[] = {
    {"name", F_STR, AT(tally_es_spec_t, name), 0, 0, 0, NULL},
    {"version_number", F_INT, AT(tally_es_spec_t, version_number), 0, I32_MIN,
     I32_MAX, NULL},
    {"judge_mode", F_STR, AT(tally_es_spec_t, judge_mode_name), 0, 0, 0, NULL},
    {"validators", F_CUSTOM, 0, 0, 0, 0, spec_validators},
    {"metrics", F_CUSTOM, 0, 0, 0, 0, spec_metrics},
    {"behavioral", F_CUSTOM, 0, 0, 0, 0, spec_behavioral},
    {"llm_judges", F_CUSTOM, 0, 0, 0, 0, spec_judges},
    {"post_execution_checks", F_CUSTOM, 0, 0, 0, 0, spec_checks},
    {"runtime_limits", F_CUSTOM, 0, 0, 0, 0, spec_runtime},
    {"pricing", F_CUSTOM, 0, 0, 0, 0, spec_pricing},
    {"scorecard", F_CUSTOM, 0, 0, 0, 0, spec_scorecard},
    {NULL, F_STR, 0, 0, 0, 0, NULL}};

/* Every char * the decoder may leave NULL becomes "", so the checks and
 * the scoring read strings only. */
static int fill(char **s) {
  if (*s == NULL && (*s = strdup("")) == NULL)
    return TALLY_ENOMEM;
  return 0;
}

static int fill_all(tally_es_spec_t *s) {
  int rc = fill(&s->name) | fill(&s->judge_mode_name) | fill(&s->strategy_name);
  for (size_t i = 0; i < s->nvalidators; i++) {
    tally_es_validator_t *v = &s->validators[i];
    rc |= fill(&v->key) | fill(&v->type_name) | fill(&v->target) |
          fill(&v->expected_from);
  }
  for (size_t i = 0; i < s->nmetrics; i++) {
    tally_es_metric_t *m = &s->metrics[i];
    rc |= fill(&m->key) | fill(&m->type) | fill(&m->collector) | fill(&m->unit);
  }
  for (size_t i = 0; i < s->ndims; i++) {
    tally_es_dimension_t *d = &s->dims[i];
    rc |= fill(&d->key) | fill(&d->source_name) | fill(&d->metric) |
          fill(&d->better_direction) | fill(&d->judge_key);
  }
  for (size_t i = 0; i < s->nsignals; i++)
    rc |= fill(&s->signals[i].key);
  for (size_t i = 0; i < s->npricing; i++)
    rc |= fill(&s->pricing[i].provider_key) |
          fill(&s->pricing[i].provider_model_id);
  for (size_t i = 0; i < s->nchecks; i++)
    rc |= fill(&s->checks[i].key) | fill(&s->checks[i].type) |
          fill(&s->checks[i].path);
  for (size_t i = 0; i < s->njudges; i++) {
    tally_es_judge_t *j = &s->judges[i];
    rc |= fill(&j->mode) | fill(&j->key) | fill(&j->model) | fill(&j->rubric) |
          fill(&j->assertion) | fill(&j->prompt) | fill(&j->reference_from) |
          fill(&j->aggregation);
  }
  return rc != 0 ? TALLY_ENOMEM : 0;
}

int tally_es_spec_parse(const cJSON *v, tally_diag_t *d, tally_jpath_t *path,
                        tally_es_spec_t **out) {
  *out = NULL;
  tally_es_spec_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return tally_diag_add(d, path, "out of memory");
  dec_t dc = {d, path, 0};
  decode_object(&dc, v, spec_fields, s);
  /* The checks run on what decoded even after a decoding error, so that
   * every error is reported at once. */
  if (fill_all(s) != 0) {
    fail(&dc, "out of memory");
  } else if (cJSON_IsObject(v)) {
    tally__es_complete(s);
    if (tally__es_check(s, d, path) != 0)
      dc.rc = TALLY_ECONFIG;
  }
  if (dc.rc != 0) {
    tally_es_spec_free(s);
    return dc.rc;
  }
  *out = s;
  return 0;
}

void tally_es_spec_free(tally_es_spec_t *s) {
  if (s == NULL)
    return;
  free(s->name);
  free(s->judge_mode_name);
  free(s->strategy_name);
  free_items(s->validators, s->nvalidators, sizeof(*s->validators),
             free_validator);
  free_items(s->metrics, s->nmetrics, sizeof(*s->metrics), free_metric);
  free_items(s->dims, s->ndims, sizeof(*s->dims), free_dimension);
  free_items(s->signals, s->nsignals, sizeof(*s->signals), free_signal);
  free_items(s->pricing, s->npricing, sizeof(*s->pricing), free_pricing);
  free_items(s->checks, s->nchecks, sizeof(*s->checks), free_check);
  free_items(s->judges, s->njudges, sizeof(*s->judges), free_judge);
  free(s);
}
