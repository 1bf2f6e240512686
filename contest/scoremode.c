/* The score modes: a participant's task score from their submissions'
 * results, following CMS's task_score (cms/grading/scoring.py). */
#include "contest/scoremode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Subtask indexes above this are taken as details that do not name
 * subtasks, so that a stray index cannot make a huge array. */
#define MAX_SUBTASK_IDX 65535

static const struct {
  const char *name;
  tally_score_mode_t mode;
} modes[] = {
    {"max_subtask", TALLY_MODE_MAX_SUBTASK},
    {"max", TALLY_MODE_MAX},
    {"max_tokened_last", TALLY_MODE_MAX_TOKENED_LAST},
};

#define NMODES (sizeof(modes) / sizeof(modes[0]))

int tally_score_mode_parse(const char *name, tally_score_mode_t *mode) {
  for (size_t i = 0; i < NMODES; i++) {
    if (strcmp(name, modes[i].name) == 0) {
      *mode = modes[i].mode;
      return 0;
    }
  }
  return TALLY_EINVAL;
}

const char *tally_score_mode_name(tally_score_mode_t mode) {
  for (size_t i = 0; i < NMODES; i++)
    if (modes[i].mode == mode)
      return modes[i].name;
  return NULL;
}

static void side_clear(tally_score_side_t *side) {
  free(side->subtasks);
  memset(side, 0, sizeof(*side));
}

void tally_submission_init(tally_submission_t *s) {
  memset(s, 0, sizeof(*s));
  s->official = true;
}

void tally_submission_close(tally_submission_t *s) {
  side_clear(&s->priv);
  side_clear(&s->pub);
}

int tally_submission_read_job(tally_submission_t *s, const cJSON *job,
                              char *err, size_t errlen) {
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(job, "timestamp");
  const cJSON *official = cJSON_GetObjectItemCaseSensitive(job, "official");
  const cJSON *tokened = cJSON_GetObjectItemCaseSensitive(job, "tokened");
  const char *bad = NULL;
  if (ts != NULL && (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble)))
    bad = "timestamp: must be a number (seconds)";
  else if (official != NULL && !cJSON_IsBool(official))
    bad = "official: must be true or false";
  else if (tokened != NULL && !cJSON_IsBool(tokened))
    bad = "tokened: must be true or false";
  if (bad != NULL) {
    snprintf(err, errlen, "%s", bad);
    return TALLY_EINVAL;
  }
  if (ts != NULL)
    s->timestamp = ts->valuedouble;
  if (official != NULL)
    s->official = cJSON_IsTrue(official);
  if (tokened != NULL)
    s->tokened = cJSON_IsTrue(tokened);
  return 0;
}

/* The score of one entry of details, into *v: "score", or score_fraction
 * times max_score. Returns false when the entry lacks what that needs. */
static bool entry_score(const cJSON *entry, double *v) {
  const cJSON *score = cJSON_GetObjectItemCaseSensitive(entry, "score");
  if (!cJSON_IsNumber(score))
    return false;
  *v = score->valuedouble;
  return true;
}

/* The idx of an entry of details, or -1 if it has none that fits. */
static long entry_idx(const cJSON *entry) {
  const cJSON *idx = cJSON_GetObjectItemCaseSensitive(entry, "idx");
  if (!cJSON_IsNumber(idx))
    return -1;
  double i = idx->valuedouble;
  if (!(i >= 0 && i <= MAX_SUBTASK_IDX) || i != floor(i))
    return -1;
  return (long)i;
}

/* Fills side from a score and its details (which may be NULL). Like CMS,
 * the details give subtask scores only if every entry has one; otherwise
 * the side is one subtask. A later entry with the same idx wins, as in a
 * Python dict. Returns 0 or TALLY_ENOMEM. */
static int side_read(tally_score_side_t *side, double score,
                     const cJSON *details) {
  side_clear(side);
  side->score = score;
  if (cJSON_IsArray(details) && cJSON_GetArraySize(details) == 0 &&
      score == 0.0) {
    side->not_compiled = true;
    return 0;
  }
  if (!cJSON_IsArray(details))
    return 0;
  long top = -1;
  const cJSON *e;
  cJSON_ArrayForEach(e, details) {
    double v;
    long idx = entry_idx(e);
    if (idx < 0 || !entry_score(e, &v))
      return 0;
    if (idx > top)
      top = idx;
  }
  if (top < 0)
    return 0;
  /* Indexes no entry names stay 0, which is what a missing subtask adds
   * under max_subtask: each subtask's best starts at 0. */
  side->subtasks = calloc((size_t)top + 1, sizeof(double));
  if (side->subtasks == NULL)
    return TALLY_ENOMEM;
  side->nsubtasks = (size_t)top + 1;
  cJSON_ArrayForEach(e, details) {
    double v = 0.0;
    entry_score(e, &v);
    side->subtasks[entry_idx(e)] = v;
  }
  return 0;
}

int tally_submission_read_result(tally_submission_t *s, const cJSON *result,
                                 char *err, size_t errlen) {
  const cJSON *score = cJSON_GetObjectItemCaseSensitive(result, "score");
  const cJSON *pub = cJSON_GetObjectItemCaseSensitive(result, "public_score");
  s->scored = false;
  side_clear(&s->priv);
  side_clear(&s->pub);
  if (!cJSON_IsNumber(score) || !cJSON_IsNumber(pub)) {
    snprintf(err, errlen, "%s: missing or not a number",
             cJSON_IsNumber(score) ? "public_score" : "score");
    return TALLY_EINVAL;
  }
  int rc = side_read(&s->priv, score->valuedouble,
                     cJSON_GetObjectItemCaseSensitive(result, "details"));
  if (rc == 0)
    rc = side_read(&s->pub, pub->valuedouble,
                   cJSON_GetObjectItemCaseSensitive(result, "public_details"));
  if (rc != 0) {
    side_clear(&s->priv);
    side_clear(&s->pub);
    snprintf(err, errlen, "out of memory");
    return rc;
  }
  s->scored = true;
  return 0;
}

/* The score of subtask st of res in details, as entry_score reads it back
 * from the rendered subtask entry. */
static double subtask_score(const tally_result_t *res, size_t st) {
  return res->sts[st].rounded;
}

/* side_read over the details of res that render.c writes, without the
 * text: the entries are the subtasks when res is grouped (in the public
 * details, only a subtask that is all public carries its score) and the
 * testcases otherwise, whose idx is a codename that names no subtask. A
 * number that is not finite is written as null, which entry_score
 * refuses. Returns 0 or TALLY_ENOMEM. */
static int side_set(tally_score_side_t *side, double score,
                    const tally_task_t *task, const tally_result_t *res,
                    bool pub) {
  side_clear(side);
  side->score = score;
  size_t entries = !res->evaluated ? 0 : res->grouped ? res->nsts : res->ntcs;
  if (entries == 0) {
    side->not_compiled = score == 0.0;
    return 0;
  }
  if (!res->grouped || entries > (size_t)MAX_SUBTASK_IDX + 1)
    return 0;
  for (size_t st = 0; st < entries; st++) {
    bool written = task->score_rounding == TALLY_ROUND_SUBTASK
                       ? isfinite(res->sts[st].rounded)
                       : isfinite(res->sts[st].fraction) &&
                             isfinite(task->subtasks[st].max_score);
    if (!written || (pub && !task->subtasks[st].all_public))
      return 0;
  }
  side->subtasks = calloc(entries, sizeof(double));
  if (side->subtasks == NULL)
    return TALLY_ENOMEM;
  side->nsubtasks = entries;
  for (size_t st = 0; st < entries; st++)
    side->subtasks[st] = subtask_score(res, st);
  return 0;
}

int tally_submission_set_result(tally_submission_t *s, const tally_task_t *task,
                                const tally_result_t *res) {
  s->scored = false;
  int rc = side_set(&s->priv, res->score, task, res, false);
  if (rc == 0)
    rc = side_set(&s->pub, res->public_score, task, res, true);
  if (rc != 0) {
    side_clear(&s->priv);
    side_clear(&s->pub);
    return rc;
  }
  s->scored = true;
  return 0;
}

/* The side a task score reads: the full one or the public one. */
static const tally_score_side_t *side_of(const tally_submission_t *s,
                                         bool pub) {
  return pub ? &s->pub : &s->priv;
}

/* The comparisons below are Python's max(best, v): the best so far stays
 * unless v is greater, and every best starts at 0. */

static double score_max(const tally_submission_t *subs, size_t n, bool pub) {
  double best = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!subs[i].official || !subs[i].scored)
      continue;
    double v = side_of(&subs[i], pub)->score;
    if (v > best)
      best = v;
  }
  return best;
}

/* The sum, over subtask indexes in increasing order, of each subtask's
 * best score, plus the best score of the results that count as a single
 * subtask. Results marked not_compiled add nothing. */
static double score_max_subtask(const tally_submission_t *subs, size_t n,
                                bool pub) {
  size_t nsubtasks = 0;
  double whole = 0.0;
  for (size_t i = 0; i < n; i++) {
    const tally_score_side_t *side = side_of(&subs[i], pub);
    if (!subs[i].official || !subs[i].scored || side->not_compiled)
      continue;
    if (side->nsubtasks > nsubtasks)
      nsubtasks = side->nsubtasks;
    if (side->nsubtasks == 0 && side->score > whole)
      whole = side->score;
  }
  double total = 0.0;
  for (size_t k = 0; k < nsubtasks; k++) {
    double best = 0.0;
    for (size_t i = 0; i < n; i++) {
      const tally_score_side_t *side = side_of(&subs[i], pub);
      if (!subs[i].official || !subs[i].scored || side->not_compiled ||
          side->nsubtasks <= k)
        continue;
      if (side->subtasks[k] > best)
        best = side->subtasks[k];
    }
    total += best;
  }
  return total + whole;
}

/* last is the index of the last official submission. */
static double score_max_tokened_last(const tally_submission_t *subs, size_t n,
                                     size_t last, bool pub) {
  double last_score =
      subs[last].scored ? side_of(&subs[last], pub)->score : 0.0;
  double best_tokened = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!subs[i].official || !subs[i].scored || !subs[i].tokened)
      continue;
    double v = side_of(&subs[i], pub)->score;
    if (v > best_tokened)
      best_tokened = v;
  }
  return best_tokened > last_score ? best_tokened : last_score;
}

int tally_task_score(tally_score_mode_t mode, int precision,
                     tally_rounding_t rounding, const tally_submission_t *subs,
                     size_t n, tally_task_score_t *out) {
  if (tally_score_mode_name(mode) == NULL)
    return TALLY_EINVAL;
  memset(out, 0, sizeof(*out));
  /* Sorting by timestamp (stably) only matters for which submission is
   * the last: the one with the greatest timestamp, the later one given
   * on a tie. */
  size_t last = 0;
  for (size_t i = 0; i < n; i++) {
    if (!subs[i].official)
      continue;
    if (out->submissions == 0 || subs[i].timestamp >= subs[last].timestamp)
      last = i;
    out->submissions++;
    if (!subs[i].scored)
      out->partial = true;
  }
  if (out->submissions == 0)
    return 0;
  for (int pub = 0; pub < 2; pub++) {
    double v;
    if (mode == TALLY_MODE_MAX)
      v = score_max(subs, n, pub);
    else if (mode == TALLY_MODE_MAX_SUBTASK)
      v = score_max_subtask(subs, n, pub);
    else
      v = score_max_tokened_last(subs, n, last, pub);
    if (rounding == TALLY_ROUND_SUBTASK)
      v = tally_round(v, precision);
    *(pub ? &out->public_score : &out->score) = v;
  }
  return 0;
}
