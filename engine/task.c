/* The strict task config decoder. */
#include "engine/task.h"
#include "config/cfg.h"
#include "engine/judge.h"
#include "evalspecs/spec.h"
#include "scorecards/scorecard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rounding_names[] = {"subtask", "none", NULL};
/* In the order of tally_score_mode_t and tally_feedback_level_t. */
static const char *const mode_names[] = {"max_subtask", "max",
                                         "max_tokened_last", NULL};
static const char *const feedback_names[] = {"restricted", "full",
                                             "oi_restricted", NULL};

enum {
  KEY_NAME,
  KEY_SCORE_TYPE,
  KEY_PARAMETERS,
  KEY_TESTCASES,
  KEY_PRECISION,
  KEY_ROUNDING,
  KEY_TIME_LIMIT,
  KEY_SCORE_MODE,
  KEY_FEEDBACK_LEVEL,
  KEY_TASK_TYPE,
  KEY_COMPARATOR,
  KEY_COMPARATOR_PARAMETERS,
  KEY_DATA_DIR,
  /* Any task's, for benchmark reports. */
  KEY_CATEGORY,
  KEY_CORRECT_THRESHOLD,
  KEY_REFUSAL_PHRASES,
  /* An answer task's (scorecards/scorecard.h). */
  KEY_SCORING,
  KEY_GROUND_TRUTH,
  KEY_DIFFICULTY,
  KEY_CONSTRAINTS,
  KEY_ANSWER_FORMAT,
  KEY_WIN_THRESHOLD,
  KEY_DRAW_THRESHOLD,
  /* An agent_run task's (evalspecs/spec.h). */
  KEY_EVALUATION_SPEC,
  KEY_MAX_SCORE,
  KEY_FROM_JOB,
  KEY_JUDGE,
};

static const tally_cfg_key_t task_keys[] = {
    [KEY_NAME] = {"name", tally_cfg_set_string, offsetof(tally_task_t, name),
                  TALLY_CFG_REQUIRED, 0, 0, NULL},
    /* Required but for answer tasks: see tally_task_parse. */
    [KEY_SCORE_TYPE] = {"score_type", NULL, 0, 0, 0, 0, NULL},
    [KEY_PARAMETERS] = {"score_type_parameters", NULL, 0, 0, 0, 0, NULL},
    [KEY_TESTCASES] = {"testcases", NULL, 0, 0, 0, 0, NULL},
    [KEY_PRECISION] = {"score_precision", tally_cfg_set_int,
                       offsetof(tally_task_t, score_precision), 0, 0, 10, NULL},
    [KEY_ROUNDING] = {"score_rounding", tally_cfg_set_enum,
                      offsetof(tally_task_t, score_rounding), 0, 0, 0,
                      rounding_names},
    [KEY_TIME_LIMIT] = {"time_limit", NULL, 0, 0, 0, 0, NULL},
    [KEY_SCORE_MODE] = {"score_mode", tally_cfg_set_enum,
                        offsetof(tally_task_t, score_mode), 0, 0, 0,
                        mode_names},
    [KEY_FEEDBACK_LEVEL] = {"feedback_level", tally_cfg_set_enum,
                            offsetof(tally_task_t, feedback_level), 0, 0, 0,
                            feedback_names},
    [KEY_TASK_TYPE] = {"task_type", NULL, 0, 0, 0, 0, NULL},
    [KEY_COMPARATOR] = {"comparator", NULL, 0, 0, 0, 0, NULL},
    [KEY_COMPARATOR_PARAMETERS] = {"comparator_parameters", NULL, 0, 0, 0, 0,
                                   NULL},
    [KEY_DATA_DIR] = {"data_dir", tally_cfg_set_string,
                      offsetof(tally_task_t, data_dir), 0, 0, 0, NULL},
    [KEY_CATEGORY] = {"category", NULL, 0, 0, 0, 0, NULL},
    [KEY_CORRECT_THRESHOLD] = {"correct_threshold", NULL, 0, 0, 0, 0, NULL},
    [KEY_REFUSAL_PHRASES] = {"refusal_phrases", NULL, 0, 0, 0, 0, NULL},
    [KEY_SCORING] = {"scoring", NULL, 0, 0, 0, 0, NULL},
    [KEY_GROUND_TRUTH] = {"ground_truth", NULL, 0, 0, 0, 0, NULL},
    [KEY_DIFFICULTY] = {"difficulty", NULL, 0, 0, 0, 0, NULL},
    [KEY_CONSTRAINTS] = {"constraints", NULL, 0, 0, 0, 0, NULL},
    [KEY_ANSWER_FORMAT] = {"answer_format", NULL, 0, 0, 0, 0, NULL},
    [KEY_WIN_THRESHOLD] = {"win_threshold", NULL, 0, 0, 0, 0, NULL},
    [KEY_DRAW_THRESHOLD] = {"draw_threshold", NULL, 0, 0, 0, 0, NULL},
    [KEY_EVALUATION_SPEC] = {"evaluation_spec", NULL, 0, 0, 0, 0, NULL},
    [KEY_MAX_SCORE] = {"max_score", NULL, 0, 0, 0, 0, NULL},
    [KEY_FROM_JOB] = {"from_job", NULL, 0, 0, 0, 0, NULL},
    [KEY_JUDGE] = {"judge", NULL, 0, 0, 0, 0, NULL},
    {NULL, NULL, 0, 0, 0, 0, NULL},
};

static int cmp_testcase(const void *a, const void *b) {
  return strcmp(((const tally_testcase_t *)a)->codename,
                ((const tally_testcase_t *)b)->codename);
}

/* Decodes {"codename": bool | {"public": bool}, ...}. */
static int decode_testcases(tally_task_t *task, const cJSON *v, tally_diag_t *d,
                            tally_jpath_t *path) {
  if (!cJSON_IsObject(v))
    return tally_diag_add(d, path,
                          "must be an object mapping codenames to whether "
                          "they are public");
  int n = cJSON_GetArraySize(v);
  if (n == 0)
    return tally_diag_add(d, path, "the task has no testcases");
  task->testcases = calloc((size_t)n, sizeof(*task->testcases));
  if (task->testcases == NULL)
    return tally_diag_add(d, path, "out of memory");

  int rc = 0;
  for (const cJSON *m = v->child; m; m = m->next) {
    size_t old = tally_jpath_key(path, m->string);
    const cJSON *flag = m;
    if (cJSON_IsObject(m)) {
      flag = NULL;
      for (const cJSON *k = m->child; k; k = k->next) {
        size_t o2 = tally_jpath_key(path, k->string);
        if (strcmp(k->string, "public") != 0)
          rc = tally_diag_add(d, path, "unknown key");
        else if (flag != NULL)
          rc = tally_diag_add(d, path, "key appears twice");
        else
          flag = k;
        tally_jpath_restore(path, o2);
      }
      if (flag == NULL) {
        size_t o2 = tally_jpath_key(path, "public");
        rc = tally_diag_add(d, path, "is missing");
        tally_jpath_restore(path, o2);
      } else if (!cJSON_IsBool(flag)) {
        size_t o2 = tally_jpath_key(path, "public");
        rc = tally_diag_add(d, path, "must be true or false");
        tally_jpath_restore(path, o2);
        flag = NULL;
      }
    } else if (!cJSON_IsBool(m)) {
      rc = tally_diag_add(d, path, "must be true, false or {\"public\": bool}");
      flag = NULL;
    }
    if (m->string[0] == '\0')
      rc = tally_diag_add(d, path, "codename must not be empty");
    if (flag != NULL && rc == 0) {
      tally_testcase_t *tc = &task->testcases[task->ntestcases];
      tc->codename = strdup(m->string);
      if (tc->codename == NULL) {
        rc = tally_diag_add(d, path, "out of memory");
      } else {
        tc->is_public = cJSON_IsTrue(flag);
        task->ntestcases++;
      }
    }
    tally_jpath_restore(path, old);
  }
  if (rc)
    return rc;
  qsort(task->testcases, task->ntestcases, sizeof(*task->testcases),
        cmp_testcase);
  for (size_t i = 1; i < task->ntestcases; i++) {
    if (strcmp(task->testcases[i - 1].codename, task->testcases[i].codename) ==
        0) {
      size_t old = tally_jpath_key(path, task->testcases[i].codename);
      rc = tally_diag_add(d, path, "codename appears twice");
      tally_jpath_restore(path, old);
    }
  }
  return rc;
}

/* The comparator a task of a type that compares outputs uses when it
 * names none. */
#define DEFAULT_COMPARATOR TALLY_COMPARATOR_DEFAULT

/* Decodes task_type, comparator, comparator_parameters and data_dir. */
static int decode_task_type(tally_task_t *task, const tally_registry_t *reg,
                            const cJSON **found, tally_diag_t *d,
                            tally_jpath_t *path) {
  int rc = 0;
  char known[256];
  task->task_type = &tally_task_type_outcomes;
  const cJSON *tt = found[KEY_TASK_TYPE];
  if (tt != NULL) {
    size_t old = tally_jpath_key(path, "task_type");
    const tally_task_type_t *type = NULL;
    if (!cJSON_IsString(tt)) {
      rc = tally_diag_add(d, path, "must be a string");
    } else if ((type = tally_registry_find_task_type(reg, tt->valuestring)) ==
               NULL) {
      tally_registry_task_type_names(reg, known, sizeof(known));
      rc = tally_diag_add(d, path, "unknown task type \"%s\" (known: %s)",
                          tt->valuestring, known);
    } else {
      task->task_type = type;
    }
    tally_jpath_restore(path, old);
    if (rc != 0)
      return rc;
  }
  bool compares = (task->task_type->flags & (TALLY_TT_EXPECTED_REQUIRED |
                                             TALLY_TT_EXPECTED_OPTIONAL)) != 0;
  static const int output_keys[] = {KEY_COMPARATOR, KEY_COMPARATOR_PARAMETERS,
                                    KEY_DATA_DIR};
  if (!compares) {
    for (size_t i = 0; i < sizeof(output_keys) / sizeof(output_keys[0]); i++) {
      if (found[output_keys[i]] == NULL)
        continue;
      size_t old = tally_jpath_key(path, task_keys[output_keys[i]].name);
      rc = tally_diag_add(d, path,
                          "a task of type %s has no expected outputs to "
                          "compare (only batch and output_only tasks do)",
                          task->task_type->name);
      tally_jpath_restore(path, old);
    }
    return rc;
  }

  /* The data folder lies under the task's folder, so that tallyd's
   * snapshot of the configs can hold it at the same place. */
  const char *dd = task->data_dir;
  if (dd != NULL &&
      (dd[0] == '/' || strcmp(dd, "..") == 0 || strncmp(dd, "../", 3) == 0 ||
       strstr(dd, "/../") != NULL ||
       (strlen(dd) >= 3 && strcmp(dd + strlen(dd) - 3, "/..") == 0))) {
    size_t old = tally_jpath_key(path, "data_dir");
    rc = tally_diag_add(d, path,
                        "must be a folder under the task file's folder (a "
                        "relative path without ..)");
    tally_jpath_restore(path, old);
  }

  const cJSON *c = found[KEY_COMPARATOR];
  const char *name = DEFAULT_COMPARATOR;
  if (c != NULL) {
    size_t old = tally_jpath_key(path, "comparator");
    if (!cJSON_IsString(c))
      rc = tally_diag_add(d, path, "must be a string");
    else
      name = c->valuestring;
    task->comparator_given = true;
    if (rc == 0 && (task->comparator =
                        tally_registry_find_comparator(reg, name)) == NULL) {
      tally_registry_comparator_names(reg, known, sizeof(known));
      rc = tally_diag_add(d, path, "unknown comparator \"%s\" (known: %s)",
                          name, known);
    }
    tally_jpath_restore(path, old);
  } else if ((task->comparator = tally_registry_find_comparator(
                  reg, DEFAULT_COMPARATOR)) == NULL) {
    rc = tally_diag_add(d, NULL, "the default comparator %s is not available",
                        DEFAULT_COMPARATOR);
  }
  if (rc != 0)
    return rc;

  const cJSON *params = found[KEY_COMPARATOR_PARAMETERS];
  size_t old = tally_jpath_key(path, "comparator_parameters");
  if (task->comparator->parse != NULL) {
    if (task->comparator->parse(params, &task->comparator_state, d, path) != 0)
      rc = TALLY_ECONFIG;
  } else if (params != NULL) {
    rc = tally_diag_add(d, path, "comparator %s takes no parameters",
                        task->comparator->name);
  }
  tally_jpath_restore(path, old);
  return rc;
}

static const tally_primitive_t *find_primitive(const void *reg,
                                               const char *name) {
  return tally_registry_find_primitive(reg, name);
}

/* An answer task: its scorecard, and none of the keys of testcases,
 * score types and outputs. */
static int parse_answer_task(tally_task_t *task, const tally_registry_t *reg,
                             const cJSON *root, const cJSON **found,
                             tally_diag_t *d) {
  int rc = 0;
  tally_jpath_t path;
  tally_jpath_init(&path);
  task->task_type = &tally_task_type_answer;
  static const int foreign[] = {
      KEY_SCORE_TYPE,      KEY_PARAMETERS,     KEY_TESTCASES,
      KEY_TIME_LIMIT,      KEY_COMPARATOR,     KEY_COMPARATOR_PARAMETERS,
      KEY_DATA_DIR,        KEY_FEEDBACK_LEVEL, KEY_ROUNDING,
      KEY_EVALUATION_SPEC, KEY_MAX_SCORE,      KEY_JUDGE};
  for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
    if (found[foreign[i]] == NULL)
      continue;
    tally_jpath_key(&path, task_keys[foreign[i]].name);
    rc = tally_diag_add(d, &path,
                        "an answer task is scored by its dimensions "
                        "(\"scoring\"): it takes no %s",
                        task_keys[foreign[i]].name);
    tally_jpath_init(&path);
  }
  if (tally_scorecard_parse(root, find_primitive, reg, d, &task->card) != 0)
    return TALLY_ECONFIG;
  task->max_score = 1000;
  task->max_public_score = task->card->public_weight * 1000;
  return rc;
}

/* An agent_run task: its evaluation spec and max_score, and none of the
 * keys of testcases, score types, outputs and answers. */
static int parse_agent_run_task(tally_task_t *task, const cJSON **found,
                                tally_diag_t *d) {
  int rc = 0;
  tally_jpath_t path;
  tally_jpath_init(&path);
  task->task_type = &tally_task_type_agent_run;
  for (size_t k = 0; k < sizeof(task_keys) / sizeof(task_keys[0]) - 1; k++) {
    bool own = k == KEY_NAME || k == KEY_TASK_TYPE || k == KEY_PRECISION ||
               k == KEY_CATEGORY || k == KEY_CORRECT_THRESHOLD ||
               k == KEY_REFUSAL_PHRASES || k == KEY_SCORE_MODE ||
               k == KEY_FEEDBACK_LEVEL || k == KEY_EVALUATION_SPEC ||
               k == KEY_MAX_SCORE;
    if (own || found[k] == NULL)
      continue;
    tally_jpath_key(&path, task_keys[k].name);
    rc = tally_diag_add(d, &path,
                        "an agent_run task is scored by its evaluation_spec: "
                        "it takes no %s",
                        task_keys[k].name);
    tally_jpath_init(&path);
  }
  if (task->feedback_level == TALLY_FEEDBACK_OI_RESTRICTED) {
    tally_jpath_key(&path, "feedback_level");
    rc = tally_diag_add(d, &path,
                        "an agent_run task shows \"restricted\" (the "
                        "default) or \"full\" feedback");
    tally_jpath_init(&path);
  }
  const cJSON *ms = found[KEY_MAX_SCORE];
  task->max_score = 100;
  if (ms != NULL) {
    tally_jpath_key(&path, "max_score");
    if (!cJSON_IsNumber(ms) || !isfinite(ms->valuedouble) ||
        ms->valuedouble <= 0 || ms->valuedouble > 1e15)
      rc = tally_diag_add(d, &path, "must be a number above 0");
    else
      task->max_score = ms->valuedouble;
    tally_jpath_init(&path);
  }
  task->max_public_score = task->max_score;
  const cJSON *spec = found[KEY_EVALUATION_SPEC];
  tally_jpath_key(&path, "evaluation_spec");
  if (spec == NULL)
    return tally_diag_add(d, &path, "is missing");
  if (tally_es_spec_parse(spec, d, &path, &task->spec) != 0)
    return TALLY_ECONFIG;
  return rc;
}

/* Decodes from_job: {"target": K, "problem": K, "category": K,
 * "question": K}, each optional, each the name of a job key. */
static int parse_from_job(tally_task_t *task, const cJSON *v, tally_diag_t *d) {
  tally_jpath_t path;
  tally_jpath_init(&path);
  tally_jpath_key(&path, "from_job");
  if (!cJSON_IsObject(v) || v->child == NULL)
    return tally_diag_add(d, &path,
                          "must be an object naming the job keys that hold "
                          "the sample's target, problem, category or "
                          "question");
  static const char *const names[] = {"target", "problem", "category",
                                      "question"};
  char **slots[] = {&task->job_target, &task->job_problem, &task->job_category,
                    &task->job_question};
  int rc = 0;
  for (const cJSON *m = v->child; m; m = m->next) {
    size_t at = tally_jpath_key(&path, m->string);
    size_t k = 0;
    while (k < 4 && strcmp(m->string, names[k]) != 0)
      k++;
    if (k == 4)
      rc = tally_diag_add(d, &path,
                          "unknown key (from_job has target, problem, "
                          "category and question)");
    else if (*slots[k] != NULL)
      rc = tally_diag_add(d, &path, "key appears twice");
    else if (!cJSON_IsString(m) || m->valuestring[0] == '\0')
      rc = tally_diag_add(d, &path, "must be the name of a job key");
    else if ((*slots[k] = strdup(m->valuestring)) == NULL)
      rc = tally_diag_add(d, &path, "out of memory");
    tally_jpath_restore(&path, at);
  }
  return rc;
}

/* Decodes category, correct_threshold and refusal_phrases, which any
 * task takes (docs/benchmarks.md), and from_job. */
static int parse_benchmark_keys(tally_task_t *task, const cJSON **found,
                                tally_diag_t *d) {
  int rc = 0;
  tally_jpath_t path;
  tally_jpath_init(&path);
  task->correct_threshold = 1;
  if (found[KEY_FROM_JOB] != NULL)
    rc = parse_from_job(task, found[KEY_FROM_JOB], d);
  const cJSON *c = found[KEY_CATEGORY];
  if (c != NULL) {
    tally_jpath_key(&path, "category");
    if (!cJSON_IsString(c) || c->valuestring[0] == '\0')
      rc = tally_diag_add(d, &path, "must be a non-empty string");
    else if ((task->category = strdup(c->valuestring)) == NULL)
      rc = tally_diag_add(d, &path, "out of memory");
    tally_jpath_init(&path);
  }
  const cJSON *t = found[KEY_CORRECT_THRESHOLD];
  if (t != NULL) {
    tally_jpath_key(&path, "correct_threshold");
    if (!cJSON_IsNumber(t) || !(t->valuedouble > 0 && t->valuedouble <= 1))
      rc = tally_diag_add(d, &path,
                          "must be a number above 0 and at most 1 (a reward: "
                          "score / max_score)");
    else
      task->correct_threshold = t->valuedouble;
    tally_jpath_init(&path);
  }
  const cJSON *r = found[KEY_REFUSAL_PHRASES];
  if (r != NULL) {
    tally_jpath_key(&path, "refusal_phrases");
    int n = cJSON_GetArraySize(r);
    if (!cJSON_IsArray(r) || n == 0) {
      rc = tally_diag_add(d, &path, "must be a non-empty list of strings");
    } else if ((task->refusals = calloc((size_t)n, sizeof(char *))) == NULL) {
      rc = tally_diag_add(d, &path, "out of memory");
    } else {
      size_t i = 0;
      for (const cJSON *e = r->child; e; e = e->next, i++) {
        size_t at = tally_jpath_index(&path, i);
        if (!cJSON_IsString(e) || e->valuestring[0] == '\0')
          rc = tally_diag_add(d, &path, "must be a non-empty string");
        else if ((task->refusals[task->nrefusals++] = strdup(e->valuestring)) ==
                 NULL)
          rc = tally_diag_add(d, &path, "out of memory");
        tally_jpath_restore(&path, at);
      }
    }
    tally_jpath_init(&path);
  }
  return rc;
}

int tally_task_parse(const tally_registry_t *reg, const char *text, size_t len,
                     tally_diag_t *d, tally_task_t **out) {
  *out = NULL;
  cJSON *root = tally_cfg_parse_json(text, len, d);
  if (root == NULL)
    return TALLY_ECONFIG;
  tally_task_t *task = calloc(1, sizeof(*task));
  if (task == NULL) {
    cJSON_Delete(root);
    return tally_diag_add(d, NULL, "out of memory");
  }
  task->score_rounding = TALLY_ROUND_SUBTASK;

  tally_jpath_t path;
  tally_jpath_init(&path);
  const cJSON *found[sizeof(task_keys) / sizeof(task_keys[0])];
  int rc = tally_cfg_decode(task_keys, root, task, d, &path, found);
  if (!cJSON_IsObject(root))
    goto done;
  rc |= parse_benchmark_keys(task, found, d);
  const cJSON *tt = found[KEY_TASK_TYPE];
  if (task->job_target != NULL && cJSON_IsString(tt) &&
      (strcmp(tt->valuestring, "answer") == 0 ||
       strcmp(tt->valuestring, "agent_run") == 0)) {
    tally_jpath_key(&path, "from_job");
    tally_jpath_key(&path, "target");
    rc = tally_diag_add(d, &path,
                        "only a task that compares outputs (output_only, "
                        "batch) takes it");
    tally_jpath_init(&path);
  }
  if (cJSON_IsString(tt) && strcmp(tt->valuestring, "answer") == 0) {
    rc |= parse_answer_task(task, reg, root, found, d);
    goto done;
  }
  if (cJSON_IsString(tt) && strcmp(tt->valuestring, "agent_run") == 0) {
    rc |= parse_agent_run_task(task, found, d);
    goto done;
  }
  static const int required[] = {KEY_SCORE_TYPE, KEY_PARAMETERS, KEY_TESTCASES};
  for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
    if (found[required[i]] != NULL)
      continue;
    tally_jpath_key(&path, task_keys[required[i]].name);
    rc = tally_diag_add(d, &path, "is missing");
    tally_jpath_init(&path);
  }
  for (int k = KEY_SCORING; k <= KEY_MAX_SCORE; k++) {
    if (found[k] == NULL)
      continue;
    tally_jpath_key(&path, task_keys[k].name);
    rc = tally_diag_add(d, &path,
                        k >= KEY_EVALUATION_SPEC
                            ? "only an agent_run task (\"task_type\": "
                              "\"agent_run\") takes it"
                            : "only an answer task (\"task_type\": "
                              "\"answer\") takes it");
    tally_jpath_init(&path);
  }

  const cJSON *tl = found[KEY_TIME_LIMIT];
  if (tl != NULL) {
    tally_jpath_key(&path, "time_limit");
    if (!cJSON_IsNumber(tl) || !isfinite(tl->valuedouble) ||
        tl->valuedouble <= 0) {
      rc = tally_diag_add(d, &path, "must be a positive number of seconds");
    } else {
      task->has_time_limit = true;
      task->time_limit = tl->valuedouble;
    }
    tally_jpath_init(&path);
  }

  const cJSON *st = found[KEY_SCORE_TYPE];
  if (st != NULL) {
    tally_jpath_key(&path, "score_type");
    if (!cJSON_IsString(st)) {
      rc = tally_diag_add(d, &path, "must be a string");
    } else if ((task->type = tally_registry_find(reg, st->valuestring)) ==
               NULL) {
      char known[256];
      size_t used = 0;
      known[0] = '\0';
      for (size_t i = 0; i < reg->count && used < sizeof(known); i++)
        used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
                                 i ? ", " : "", reg->types[i]->name);
      rc = tally_diag_add(d, &path, "unknown score type \"%s\" (known: %s)",
                          st->valuestring, known);
    }
    tally_jpath_init(&path);
  }

  rc |= decode_task_type(task, reg, found, d, &path);
  tally_jpath_init(&path);

  int tc_rc = 0;
  if (found[KEY_TESTCASES] != NULL) {
    tally_jpath_key(&path, "testcases");
    tc_rc = decode_testcases(task, found[KEY_TESTCASES], d, &path);
    rc |= tc_rc;
    tally_jpath_init(&path);
  }

  if (task->job_target != NULL && task->task_type != NULL) {
    tally_jpath_key(&path, "from_job");
    tally_jpath_key(&path, "target");
    if (!(task->task_type->flags &
          (TALLY_TT_EXPECTED_REQUIRED | TALLY_TT_EXPECTED_OPTIONAL)))
      rc = tally_diag_add(d, &path,
                          "only a task that compares outputs (output_only, "
                          "batch) takes it");
    else if (tc_rc == 0 && task->ntestcases != 1)
      rc = tally_diag_add(d, &path,
                          "a task that takes its expected answer from the "
                          "job has one testcase, not %zu",
                          task->ntestcases);
    else if (task->data_dir != NULL)
      rc = tally_diag_add(d, &path,
                          "the expected answer comes from the job: the task "
                          "has no data_dir");
    tally_jpath_init(&path);
  }

  if (found[KEY_JUDGE] != NULL) {
    tally_jpath_key(&path, "judge");
    if (tally_judge_parse(found[KEY_JUDGE], &task->judge, d, &path) != 0)
      rc = TALLY_ECONFIG;
    else if (task->task_type != &tally_task_type_output_only)
      rc = tally_diag_add(d, &path,
                          "only an output_only task takes it (the output of "
                          "its one testcase is the response judged)");
    else if (tc_rc == 0 && task->ntestcases != 1)
      rc = tally_diag_add(d, &path, "a judged task has one testcase, not %zu",
                          task->ntestcases);
    else if (task->judge->uses_question && task->job_question == NULL)
      rc = tally_diag_add(d, &path,
                          "the template asks for {question}, but from_job "
                          "names no job key for it (\"question\")");
    tally_jpath_init(&path);
  }

  /* The parameters refer to testcases, so they are decoded only once the
   * testcases and the type are known. */
  if (found[KEY_PARAMETERS] != NULL && task->type != NULL &&
      found[KEY_TESTCASES] != NULL && tc_rc == 0) {
    tally_jpath_key(&path, "score_type_parameters");
    const cJSON *params = found[KEY_PARAMETERS];
    if (task->type->reduce != NULL)
      rc |= tally__group_parse(task, params, d, &path);
    else
      rc |= task->type->parse(task, params, d, &path);
  }

done:
  cJSON_Delete(root);
  if (rc != 0) {
    tally_task_free(task);
    return TALLY_ECONFIG;
  }
  *out = task;
  return 0;
}

void tally_task_free(tally_task_t *task) {
  if (task == NULL)
    return;
  if (task->type != NULL && task->type->reduce != NULL)
    tally__group_free(task);
  else if (task->type != NULL && task->state != NULL && task->type->free)
    task->type->free(task->state);
  if (task->comparator != NULL && task->comparator_state != NULL &&
      task->comparator->free != NULL)
    task->comparator->free(task->comparator_state);
  for (size_t i = 0; i < task->ntestcases; i++) {
    free(task->testcases[i].codename);
    if (task->expected != NULL)
      free(task->expected[i].data);
  }
  free(task->expected);
  tally_scorecard_free(task->card);
  tally_es_spec_free(task->spec);
  free(task->data_dir);
  free(task->category);
  free(task->job_target);
  free(task->job_problem);
  free(task->job_category);
  free(task->job_question);
  tally_judge_free(task->judge);
  for (size_t i = 0; i < task->nrefusals; i++)
    free(task->refusals[i]);
  free(task->refusals);
  free(task->testcases);
  free(task->name);
  free(task);
}
