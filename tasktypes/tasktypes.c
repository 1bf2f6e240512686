/* The task-type and comparator tables, the outcomes task type, and the
 * helpers task types share: texts, errors and comparisons. */
#include "engine/registry.h"
#include "tasktypes/comparators.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outcomes: evaluations carry outcomes, decoded by config/job.c. */
const tally_task_type_t tally_task_type_outcomes = {
    .version = TALLY_TASK_TYPE_VERSION,
    .name = "outcomes",
    .flags = 0,
    .evaluate = NULL,
};

static const tally_task_type_t *const builtin_types[] = {
    &tally_task_type_outcomes,
    &tally_task_type_batch,
    &tally_task_type_output_only,
    NULL,
};

int tally_text_set(tally_text_t *t, const char *s, size_t n) {
  size_t len = t->len;
  t->len = 0;
  int rc = tally_text_append(t, s, n);
  if (rc != 0)
    t->len = len;
  return rc;
}

int tally_text_append(tally_text_t *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->len + n + 1)
      cap *= 2;
    char *data = realloc(t->data, cap);
    if (data == NULL)
      return TALLY_ENOMEM;
    t->data = data;
    t->cap = cap;
  }
  if (n > 0)
    memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
  return 0;
}

void tally_text_free(tally_text_t *t) {
  free(t->data);
  memset(t, 0, sizeof(*t));
}

int tally_tt_error(char *err, size_t errlen, const char *codename,
                   const char *member, const char *fmt, ...) {
  tally_jpath_t path;
  tally_jpath_init(&path);
  tally_jpath_key(&path, "evaluations");
  tally_jpath_key(&path, codename);
  /* A nested member ("checker.stdout") is one key per part. */
  while (member != NULL && *member != '\0') {
    char part[64];
    size_t n = strcspn(member, ".");
    snprintf(part, sizeof(part), "%.*s", (int)n, member);
    tally_jpath_key(&path, part);
    member += n + (member[n] == '.');
  }
  int used = snprintf(err, errlen, "%s: ", path.buf);
  if (used < 0 || (size_t)used >= errlen)
    return TALLY_EJOB;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
  va_end(ap);
  return TALLY_EJOB;
}

int tally_tt_compare(const tally_tt_input_t *in, const char *output,
                     size_t output_len, tally_tt_eval_t *out, char *err,
                     size_t errlen) {
  tally_compare_result_t res;
  char why[384] = "";
  memset(&res, 0, sizeof(res));
  int rc = in->comparator->compare(in->comparator_state, output, output_len,
                                   in->expected->data, in->expected->len, &res,
                                   why, sizeof(why));
  if (rc == TALLY_ENOMEM)
    return rc;
  if (rc != 0)
    return tally_tt_error(err, errlen, in->codename, "output",
                          "comparator %s: %s", in->comparator->name,
                          why[0] ? why : tally_strerror(rc));
  /* A comparator outside its contract is a job error, not a score. */
  if (!(res.outcome >= 0.0 && res.outcome <= 1.0) || res.message == NULL)
    return tally_tt_error(err, errlen, in->codename, "output",
                          "comparator %s gave no outcome in [0, 1]",
                          in->comparator->name);
  out->outcome = res.outcome;
  res.admin[sizeof(res.admin) - 1] = '\0';
  if (tally_text_set(&out->message, res.message, strlen(res.message)) != 0 ||
      tally_text_set(&out->admin, res.admin, strlen(res.admin)) != 0)
    return TALLY_ENOMEM;
  return 0;
}

/* Grows a table of pointers by one slot. */
static int grow(const void ***items, size_t *cap, size_t count) {
  if (count < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 8;
  const void **n = realloc(*items, ncap * sizeof(*n));
  if (n == NULL)
    return TALLY_ENOMEM;
  *items = n;
  *cap = ncap;
  return 0;
}

int tally_registry_add_task_type(tally_registry_t *r,
                                 const tally_task_type_t *type, char *err,
                                 size_t errlen) {
  if (type->version != TALLY_TASK_TYPE_VERSION) {
    snprintf(err, errlen, "task type version %d, but tally expects version %d",
             type->version, TALLY_TASK_TYPE_VERSION);
    return TALLY_EINVAL;
  }
  if (type->name == NULL || type->name[0] == '\0') {
    snprintf(err, errlen, "task type has no name");
    return TALLY_EINVAL;
  }
  /* Only the built-in outcomes type decodes outcomes itself. */
  if (type->evaluate == NULL && type != &tally_task_type_outcomes) {
    snprintf(err, errlen, "task type %s must set evaluate", type->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find_task_type(r, type->name) != NULL) {
    snprintf(err, errlen, "task type %s is already registered", type->name);
    return TALLY_EEXIST;
  }
  if (grow((const void ***)&r->task_types, &r->task_types_cap,
           r->ntask_types) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  r->task_types[r->ntask_types++] = type;
  return 0;
}

int tally_registry_add_comparator(tally_registry_t *r,
                                  const tally_comparator_t *cmp, char *err,
                                  size_t errlen) {
  if (cmp->version != TALLY_COMPARATOR_VERSION) {
    snprintf(err, errlen, "comparator version %d, but tally expects version %d",
             cmp->version, TALLY_COMPARATOR_VERSION);
    return TALLY_EINVAL;
  }
  if (cmp->name == NULL || cmp->name[0] == '\0') {
    snprintf(err, errlen, "comparator has no name");
    return TALLY_EINVAL;
  }
  if (cmp->compare == NULL) {
    snprintf(err, errlen, "comparator %s must set compare", cmp->name);
    return TALLY_EINVAL;
  }
  if (tally_registry_find_comparator(r, cmp->name) != NULL) {
    snprintf(err, errlen, "comparator %s is already registered", cmp->name);
    return TALLY_EEXIST;
  }
  if (grow((const void ***)&r->comparators, &r->comparators_cap,
           r->ncomparators) != 0) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  r->comparators[r->ncomparators++] = cmp;
  return 0;
}

const tally_task_type_t *
tally_registry_find_task_type(const tally_registry_t *r, const char *name) {
  for (size_t i = 0; i < r->ntask_types; i++)
    if (strcmp(r->task_types[i]->name, name) == 0)
      return r->task_types[i];
  return NULL;
}

const tally_comparator_t *
tally_registry_find_comparator(const tally_registry_t *r, const char *name) {
  for (size_t i = 0; i < r->ncomparators; i++)
    if (strcmp(r->comparators[i]->name, name) == 0)
      return r->comparators[i];
  return NULL;
}

/* Joins n names, each got through name_at, into buf. */
static void join_names(const void *const *items, size_t n,
                       const char *(*name_at)(const void *), char *buf,
                       size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                     name_at(items[i]));
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static const char *task_type_name(const void *p) {
  return ((const tally_task_type_t *)p)->name;
}

static const char *comparator_name(const void *p) {
  return ((const tally_comparator_t *)p)->name;
}

void tally_registry_task_type_names(const tally_registry_t *r, char *buf,
                                    size_t len) {
  join_names((const void *const *)r->task_types, r->ntask_types, task_type_name,
             buf, len);
}

void tally_registry_comparator_names(const tally_registry_t *r, char *buf,
                                     size_t len) {
  join_names((const void *const *)r->comparators, r->ncomparators,
             comparator_name, buf, len);
}

int tally__registry_add_tasktypes(tally_registry_t *r) {
  char err[128];
  for (size_t i = 0; builtin_types[i] != NULL; i++) {
    int rc =
        tally_registry_add_task_type(r, builtin_types[i], err, sizeof(err));
    if (rc != 0)
      return rc;
  }
  for (size_t i = 0; tally_comparators[i] != NULL; i++) {
    int rc = tally_registry_add_comparator(r, tally_comparators[i], err,
                                           sizeof(err));
    if (rc != 0)
      return rc;
  }
  return 0;
}

void tally__registry_close_tasktypes(tally_registry_t *r) {
  free(r->task_types);
  free(r->comparators);
  r->task_types = NULL;
  r->comparators = NULL;
  r->ntask_types = r->task_types_cap = 0;
  r->ncomparators = r->comparators_cap = 0;
}
