/* LLM judge results aggregated from raw samples (docs/evaluation-specs.md):
 * a job's llm_judge_results entry may carry the samples the platform
 * collected for a judge instead of a finished result; tally parses each
 * sample as the reference's judge workflow does (rubric and reference
 * scores on the judge's score scale, assertion verdicts with expect,
 * n_wise rankings as Borda scores), takes each model's median (majority
 * for assertions, ties passing), combines the models by the judge's
 * consensus aggregation, and derives variance and confidence. Samples
 * beyond judge_limits.max_samples_per_judge (per model) are ignored and
 * counted. */
#include "config/error.h"
#include "evalspecs/evaluate_int.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The reference's sanitizeJudgeJSON: a fenced block's fences stripped,
 * then the text if it is JSON, else its outermost {...} if that is, else
 * the text. A new string, or NULL when out of memory. */
static char *sanitize(const char *raw) {
  char *t = tally_go_trimmed(raw);
  if (t == NULL)
    return NULL;
  if (strncmp(t, "```", 3) == 0) {
    const char *p = t;
    if (strncmp(p, "```json", 7) == 0)
      p += 7;
    else if (strncmp(p, "```JSON", 7) == 0)
      p += 7;
    else
      p += 3;
    const char *last = NULL;
    for (const char *q = p; (q = strstr(q, "```")) != NULL; q++)
      last = q;
    char *cut = strndup(p, last != NULL ? (size_t)(last - p) : strlen(p));
    free(t);
    t = cut != NULL ? tally_go_trimmed(cut) : NULL;
    free(cut);
    if (t == NULL)
      return NULL;
  }
  char err[160];
  if (tally_go_unmarshal_check(t, err, sizeof(err)))
    return t;
  const char *start = strchr(t, '{'), *end = strrchr(t, '}');
  if (start != NULL && end != NULL && end > start) {
    char *cand = strndup(start, (size_t)(end - start + 1));
    char *trimmed = cand != NULL ? tally_go_trimmed(cand) : NULL;
    free(cand);
    if (trimmed != NULL &&
        tally_go_unmarshal_check(trimmed, err, sizeof(err))) {
      free(t);
      return trimmed;
    }
    free(trimmed);
  }
  return t;
}

/* What json.Unmarshal into the reference's response structs does. */
typedef enum { GO_BOOL, GO_STRING, GO_FLOAT, GO_STRINGS } go_kind_t;

typedef struct {
  const char *name; /* the json tag */
  go_kind_t kind;
  const cJSON *val; /* the member that set it, NULL when none did */
} go_field_t;

static const char *json_kind(const cJSON *v) {
  return cJSON_IsArray(v)    ? "array"
         : cJSON_IsObject(v) ? "object"
         : cJSON_IsString(v) ? "string"
         : cJSON_IsNumber(v) ? "number"
                             : "bool";
}

static const char *go_type(go_kind_t k) {
  return k == GO_BOOL     ? "bool"
         : k == GO_STRING ? "string"
         : k == GO_FLOAT  ? "float64"
                          : "[]string";
}

/* Decodes o (parsed from text) into fields as json.Unmarshal decodes it
 * into a struct of that type (named type_text in its errors): each member
 * sets the field its key names, exactly or ignoring case, the last one
 * winning; a null sets nothing (a slice: nil); a value of the wrong type
 * is the first error, reported after the rest is decoded. */
static bool go_struct(const cJSON *o, const char *text, go_field_t *fields,
                      size_t n, const char *type_text, char *err,
                      size_t errlen) {
  if (cJSON_IsNull(o))
    return true;
  if (!cJSON_IsObject(o)) {
    snprintf(err, errlen, "json: cannot unmarshal %s into Go value of type %s",
             json_kind(o), type_text);
    return false;
  }
  bool ok = true;
  for (const cJSON *x = o->child; x != NULL; x = x->next) {
    go_field_t *f = NULL;
    for (size_t i = 0; i < n && f == NULL; i++)
      if (strcmp(fields[i].name, x->string) == 0)
        f = &fields[i];
    for (size_t i = 0; i < n && f == NULL; i++)
      if (strcasecmp(fields[i].name, x->string) == 0)
        f = &fields[i];
    if (f == NULL)
      continue;
    if (cJSON_IsNull(x)) {
      if (f->kind == GO_STRINGS)
        f->val = NULL;
      continue;
    }
    const char *wrong = NULL, *wrong_type = go_type(f->kind);
    char number[96] = "";
    switch (f->kind) {
    case GO_BOOL:
      wrong = cJSON_IsBool(x) ? NULL : json_kind(x);
      break;
    case GO_STRING:
      wrong = cJSON_IsString(x) ? NULL : json_kind(x);
      break;
    case GO_FLOAT:
      wrong = cJSON_IsNumber(x) ? NULL : json_kind(x);
      if (wrong == NULL && !isfinite(x->valuedouble)) {
        /* Out of float64's range: Go names the literal. */
        const char *path[] = {x->string, NULL};
        size_t start, len;
        if (tally_go_raw_span(text, strlen(text), path, &start, &len) &&
            len < 80)
          snprintf(number, sizeof(number), "number %.*s", (int)len,
                   text + start);
        else
          snprintf(number, sizeof(number), "number");
        wrong = number;
      }
      break;
    case GO_STRINGS:
      if (!cJSON_IsArray(x)) {
        wrong = json_kind(x);
        break;
      }
      for (const cJSON *e = x->child; e != NULL && wrong == NULL; e = e->next)
        if (!cJSON_IsString(e) && !cJSON_IsNull(e)) {
          wrong = json_kind(e);
          wrong_type = "string";
        }
      break;
    }
    if (wrong != NULL) {
      if (ok)
        snprintf(err, errlen,
                 "json: cannot unmarshal %s into Go struct field .%s of type "
                 "%s",
                 wrong, f->name, wrong_type);
      ok = false;
      continue;
    }
    f->val = x;
  }
  return ok;
}

/* normalizeJudgeConfidence: high, medium or low, else "". */
static const char *confidence_word(const cJSON *v) {
  if (!cJSON_IsString(v))
    return "";
  char *t = tally_go_trimmed(v->valuestring);
  const char *w = "";
  if (t != NULL) {
    w = strcasecmp(t, "high") == 0     ? "high"
        : strcasecmp(t, "medium") == 0 ? "medium"
        : strcasecmp(t, "low") == 0    ? "low"
                                       : "";
  }
  free(t);
  return w;
}

/* The run agent an n_wise judge scores: the entry's run_agent_id, else
 * the run's. */
static void current_agent(const tally_es_run_t *run,
                          const tally_es_judge_result_t *j, char out[64]) {
  if (cJSON_IsString(j->current))
    snprintf(out, 64, "%s", j->current->valuestring);
  else
    tally_es_uuid_text(&run->run_agent_id, out);
}

static bool is_candidate(const cJSON *candidates, const char *id) {
  for (const cJSON *c = candidates != NULL ? candidates->child : NULL;
       c != NULL; c = c->next)
    if (strcmp(c->valuestring, id) == 0)
      return true;
  return false;
}

/* parseNWiseScore over ranking (a JSON array of strings and nulls). */
static bool borda(const cJSON *ranking, const cJSON *candidates,
                  const char *current, double *score, char *err,
                  size_t errlen) {
  size_t cap = (size_t)cJSON_GetArraySize(ranking) + 1, k = 0;
  char **seen = calloc(cap, sizeof(char *));
  if (seen == NULL) {
    snprintf(err, errlen, "out of memory");
    return false;
  }
  bool ok = true;
  for (const cJSON *x = ranking->child; x != NULL && ok; x = x->next) {
    char *id = tally_go_trimmed(cJSON_IsString(x) ? x->valuestring : "");
    if (id == NULL) {
      snprintf(err, errlen, "out of memory");
      ok = false;
      break;
    }
    if (id[0] == '\0') {
      free(id);
      continue;
    }
    bool dup = false;
    for (size_t i = 0; i < k && !dup; i++)
      dup = strcmp(seen[i], id) == 0;
    if (!is_candidate(candidates, id) || dup) {
      char *q = tally_go_quoted(id);
      snprintf(err, errlen, "n_wise judge returned %s candidate id %s",
               dup ? "duplicate" : "unknown", q != NULL ? q : "");
      free(q);
      free(id);
      ok = false;
      break;
    }
    seen[k++] = id;
  }
  size_t want = (size_t)cJSON_GetArraySize(candidates);
  if (ok && k != want) {
    snprintf(err, errlen, "n_wise judge ranked %zu candidates, want %zu", k,
             want);
    ok = false;
  }
  size_t pos = k;
  for (size_t i = 0; ok && i < k && pos == k; i++)
    if (strcmp(seen[i], current) == 0)
      pos = i;
  if (ok && pos == k) {
    snprintf(err, errlen, "n_wise judge omitted current run agent %s", current);
    ok = false;
  }
  if (ok)
    *score = k == 1 ? 1 : (double)(k - 1 - pos) / (double)(k - 1);
  for (size_t i = 0; i < k; i++)
    free(seen[i]);
  free(seen);
  return ok;
}

static const char assertion_type[] =
    "struct { Pass bool \"json:\\\"pass\\\"\"; Verdict string "
    "\"json:\\\"verdict\\\"\"; Confidence string \"json:\\\"confidence\\\"\" }";
static const char rubric_type[] =
    "struct { Score float64 \"json:\\\"score\\\"\"; Confidence string "
    "\"json:\\\"confidence\\\"\" }";
static const char nwise_type[] =
    "struct { Ranking []string \"json:\\\"ranking\\\"\"; RankedIDs []string "
    "\"json:\\\"ranked_ids\\\"\"; Confidence string "
    "\"json:\\\"confidence\\\"\" }";

/* One sample's score and confidence word, or false with the reason in
 * err (the reference's parseJudgeScore and parseNWiseScore). */
static bool parse_sample(const tally_es_judge_t *d, const cJSON *candidates,
                         const char *current, const char *raw, double *score,
                         const char **conf, char *err, size_t errlen) {
  char *text = sanitize(raw);
  if (text == NULL) {
    snprintf(err, errlen, "out of memory");
    return false;
  }
  const char *mode = d->mode != NULL ? d->mode : "";
  bool assertion = strcmp(mode, "assertion") == 0;
  bool nwise = strcmp(mode, "n_wise") == 0;
  const char *what = assertion ? "assertion" : nwise ? "n_wise" : "rubric";
  go_field_t fa[] = {{"pass", GO_BOOL, NULL},
                     {"verdict", GO_STRING, NULL},
                     {"confidence", GO_STRING, NULL}};
  go_field_t fr[] = {{"score", GO_FLOAT, NULL},
                     {"confidence", GO_STRING, NULL}};
  go_field_t fn[] = {{"ranking", GO_STRINGS, NULL},
                     {"ranked_ids", GO_STRINGS, NULL},
                     {"confidence", GO_STRING, NULL}};
  go_field_t *f = assertion ? fa : nwise ? fn : fr;
  size_t nf = assertion ? 3 : nwise ? 3 : 2;
  char gerr[400];
  cJSON *o = NULL;
  bool ok = false;
  if (!tally_go_unmarshal_check(text, gerr, sizeof(gerr))) {
    snprintf(err, errlen, "parse %s judge response: %s", what, gerr);
    goto done;
  }
  if ((o = cJSON_ParseWithOpts(text, NULL, false)) == NULL) {
    /* Valid JSON cJSON will not read: nested past its limit. */
    snprintf(err, errlen,
             "parse %s judge response: nested deeper than %d levels", what,
             CJSON_NESTING_LIMIT);
    goto done;
  }
  if (!go_struct(o, text, f, nf,
                 assertion ? assertion_type
                 : nwise   ? nwise_type
                           : rubric_type,
                 gerr, sizeof(gerr))) {
    snprintf(err, errlen, "parse %s judge response: %s", what, gerr);
    goto done;
  }
  *conf = confidence_word(f[nf - 1].val);
  if (assertion) {
    bool pass = cJSON_IsTrue(fa[0].val);
    char *v = tally_go_trimmed(fa[1].val ? fa[1].val->valuestring : "");
    if (v == NULL) {
      snprintf(err, errlen, "out of memory");
      goto done;
    }
    if (!strcasecmp(v, "pass") || !strcasecmp(v, "true") ||
        !strcasecmp(v, "yes"))
      pass = true;
    else if (!strcasecmp(v, "fail") || !strcasecmp(v, "false") ||
             !strcasecmp(v, "no"))
      pass = false;
    free(v);
    if (d->has_expect && !d->expect)
      pass = !pass;
    *score = pass ? 1 : 0;
    ok = true;
  } else if (nwise) {
    const cJSON *ranking = fn[0].val;
    if (cJSON_GetArraySize(ranking) == 0)
      ranking = fn[1].val;
    if (cJSON_GetArraySize(ranking) == 0)
      snprintf(err, errlen,
               "n_wise judge response did not include a ranking array");
    else
      ok = borda(ranking, candidates, current, score, err, errlen);
  } else {
    double v = fr[0].val != NULL ? fr[0].val->valuedouble : 0;
    double lo = d->has_scale ? d->scale_min : 1;
    double hi = d->has_scale ? d->scale_max : 5;
    v = v < lo ? lo : v > hi ? hi : v;
    *score = (v - lo) / (hi - lo);
    ok = true;
  }
done:
  cJSON_Delete(o);
  free(text);
  return ok;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v (n > 0), sorting v. */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 1 when at least half of v is at or above 0.5, else 0. */
static double majority(const double *v, size_t n) {
  size_t pass = 0;
  for (size_t i = 0; i < n; i++)
    pass += v[i] >= 0.5;
  return pass * 2 >= n ? 1 : 0;
}

/* aggregateModelScores over the n (> 0) scores of the models. */
static double across_models(const tally_es_judge_t *d, double *v, size_t n) {
  if (n == 1)
    return v[0];
  const char *how =
      strcmp(d->mode, "assertion") == 0 ? "majority_vote" : "mean";
  if (d->has_consensus)
    how = d->aggregation != NULL ? d->aggregation : "";
  if (strcmp(how, "median") == 0)
    return median(v, n);
  if (strcmp(how, "majority_vote") == 0)
    return majority(v, n);
  if (strcmp(how, "unanimous") == 0) {
    for (size_t i = 0; i < n; i++)
      if (v[i] < 0.5)
        return 0;
    return 1;
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  return sum / (double)n;
}

/* deriveJudgeConfidence. */
static const char *confidence_of(const tally_es_judge_t *d, const double *v,
                                 size_t n, bool warned) {
  if (n == 1)
    return warned ? "low" : "single-model";
  double lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  double threshold = d->has_consensus && d->min_agreement_threshold > 0
                         ? d->min_agreement_threshold
                         : 0.25;
  return warned                ? "low"
         : hi - lo == 0        ? "high"
         : hi - lo > threshold ? "low"
                               : "medium";
}

/* The judge's models (judgeModels): model, or the non-blank entries of
 * models, trimmed, into out (room for nmodels + 1). */
static size_t judge_models(const tally_es_judge_t *d, char **out) {
  if (d->model != NULL && !tally_go_blank(d->model)) {
    out[0] = tally_go_trimmed(d->model);
    return out[0] != NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < d->nmodels; i++)
    if (!tally_go_blank(d->models[i]) &&
        (out[n] = tally_go_trimmed(d->models[i])) != NULL)
      n++;
  return n;
}

typedef struct {
  const tally_es_judge_t *d;
  tally_es_judge_result_t *j;
  const char *current;
  int64_t limit;
  cJSON *payload, *calls, *warnings;
  double *all, *per, *models_v; /* successful samples, one model's, models */
  size_t nall, nper, nscored, considered, ignored;
} agg_t;

static void warn(agg_t *a, const char *model, size_t index, const char *why) {
  char *qk = tally_go_quoted(a->j->judge_key), *qm = tally_go_quoted(model);
  char *w = tally__es_dupf("llm judge %s model %s sample %zu: %s", qk ? qk : "",
                           qm ? qm : "", index, why);
  cJSON_AddItemToArray(a->warnings, cJSON_CreateString(w ? w : ""));
  free(w);
  free(qk);
  free(qm);
}

/* One sample of model, the index-th (from 1) it gave. */
static void one_sample(agg_t *a, const char *model, size_t index,
                       const cJSON *x) {
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddItemToArray(a->calls, rec);
  cJSON_AddStringToObject(rec, "model", model);
  cJSON_AddStringToObject(rec, "provider_key", "");
  cJSON_AddNumberToObject(rec, "sample_index", (double)index);
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(x, "output");
  const cJSON *fail = cJSON_GetObjectItemCaseSensitive(x, "error");
  if (fail != NULL) {
    cJSON_AddStringToObject(rec, "error", fail->valuestring);
    warn(a, model, index, fail->valuestring);
    return;
  }
  if (out->valuestring[0] != '\0')
    cJSON_AddStringToObject(rec, "response_text", out->valuestring);
  double score = 0;
  const char *conf = "";
  char why[1024];
  if (!parse_sample(a->d, a->j->candidates, a->current, out->valuestring,
                    &score, &conf, why, sizeof(why))) {
    cJSON_AddStringToObject(rec, "error", why);
    warn(a, model, index, why);
    return;
  }
  cJSON_AddNumberToObject(rec, "score", score);
  if (conf[0] != '\0')
    cJSON_AddStringToObject(rec, "confidence", conf);
  a->per[a->nper++] = score;
  a->all[a->nall++] = score;
}

/* The samples of one model; its score into model_scores when any parsed. */
static void one_model(agg_t *a, const char *model, cJSON *model_scores) {
  size_t index = 0;
  a->nper = 0;
  for (const cJSON *x = a->j->samples->child; x != NULL; x = x->next) {
    char *m = tally_go_trimmed(
        cJSON_GetObjectItemCaseSensitive(x, "model")->valuestring);
    bool mine = m != NULL && strcmp(m, model) == 0;
    free(m);
    if (!mine)
      continue;
    if (a->limit > 0 && (int64_t)index >= a->limit) {
      a->ignored++;
      continue;
    }
    a->considered++;
    one_sample(a, model, ++index, x);
  }
  if (a->nper == 0)
    return;
  double s = strcmp(a->d->mode, "assertion") == 0 ? majority(a->per, a->nper)
                                                  : median(a->per, a->nper);
  a->models_v[a->nscored++] = s;
  cJSON_AddNumberToObject(model_scores, model, s);
}

static void set_reason(tally_es_judge_result_t *j, const char *why) {
  free(j->reason);
  j->reason = strdup(why);
  j->has_score = false;
}

/* Aggregates the raw samples of j, declared by d, into j. */
static int aggregate(const tally_es_run_t *run, const tally_es_judge_t *d,
                     tally_es_judge_result_t *j, int64_t limit) {
  char current[64];
  current_agent(run, j, current);
  size_t nsamples = (size_t)cJSON_GetArraySize(j->samples);
  char **models = calloc(d->nmodels + 2, sizeof(char *));
  agg_t a = {.d = d, .j = j, .current = current, .limit = limit};
  a.all = calloc(nsamples + 1, sizeof(double));
  a.per = calloc(nsamples + 1, sizeof(double));
  a.models_v = calloc(d->nmodels + 2, sizeof(double));
  /* owned holds [payload, confidence, variance] */
  cJSON_Delete(j->owned);
  j->owned = cJSON_CreateArray();
  a.payload = cJSON_CreateObject();
  int rc = TALLY_ENOMEM;
  if (models == NULL || a.all == NULL || a.per == NULL || a.models_v == NULL ||
      j->owned == NULL || a.payload == NULL) {
    cJSON_Delete(a.payload);
    goto out;
  }
  cJSON_AddItemToArray(j->owned, a.payload);
  j->payload = a.payload;
  j->confidence = j->variance = NULL;
  free(j->mode);
  if ((j->mode = strdup(d->mode)) == NULL)
    goto out;
  size_t nm = judge_models(d, models);
  j->model_count = (double)nm;
  cJSON_AddStringToObject(a.payload, "mode", d->mode);
  bool nwise = strcmp(d->mode, "n_wise") == 0;
  if (nwise && cJSON_GetArraySize(j->candidates) < 2) {
    set_reason(j, "n_wise judges require at least two run agents in the run");
    cJSON_AddStringToObject(a.payload, "reason", j->reason ? j->reason : "");
    j->sample_count = 0;
    rc = j->reason != NULL ? 0 : TALLY_ENOMEM;
    goto out;
  }
  a.calls = cJSON_AddArrayToObject(a.payload, "calls");
  a.warnings = cJSON_CreateArray();
  cJSON *model_scores = cJSON_CreateObject();
  for (size_t m = 0; m < nm; m++)
    one_model(&a, models[m], model_scores);
  j->sample_count = (double)a.considered;
  if (a.nscored == 0) {
    cJSON_Delete(model_scores);
    set_reason(j, "all judge invocations failed or returned unparsable output");
    cJSON_AddStringToObject(a.payload, "reason", j->reason ? j->reason : "");
    cJSON_AddNumberToObject(a.payload, "unable_to_judge_count",
                            (double)cJSON_GetArraySize(a.calls));
  } else {
    bool warned = cJSON_GetArraySize(a.warnings) > 0;
    const char *conf = confidence_of(d, a.models_v, a.nscored, warned);
    j->has_score = true;
    j->score = across_models(d, a.models_v, a.nscored);
    cJSON_AddItemToObject(a.payload, "model_scores", model_scores);
    cJSON_AddNumberToObject(a.payload, "aggregated_score", j->score);
    cJSON *c = cJSON_CreateString(conf);
    cJSON_AddItemToArray(j->owned, c);
    j->confidence = c;
    if (a.nall >= 2) {
      double mean = 0, var = 0;
      for (size_t i = 0; i < a.nall; i++)
        mean += a.all[i];
      mean /= (double)a.nall;
      for (size_t i = 0; i < a.nall; i++)
        var += (a.all[i] - mean) * (a.all[i] - mean);
      cJSON *v = cJSON_CreateNumber(var / (double)a.nall);
      cJSON_AddItemToArray(j->owned, v);
      j->variance = v;
    }
  }
  if (nwise) {
    cJSON *cands = cJSON_AddArrayToObject(a.payload, "candidates");
    for (const cJSON *c = j->candidates->child; c != NULL; c = c->next) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "run_agent_id", c->valuestring);
      cJSON_AddItemToArray(cands, o);
    }
  }
  cJSON_AddItemToObject(a.payload, "warnings", a.warnings);
  size_t strays = 0;
  for (const cJSON *x = j->samples->child; x != NULL; x = x->next) {
    char *m = tally_go_trimmed(
        cJSON_GetObjectItemCaseSensitive(x, "model")->valuestring);
    bool known = false;
    for (size_t k = 0; m != NULL && k < nm && !known; k++)
      known = strcmp(m, models[k]) == 0;
    strays += !known;
    free(m);
  }
  if (strays > 0)
    cJSON_AddNumberToObject(a.payload, "undeclared_model_samples",
                            (double)strays);
  if (a.ignored > 0)
    cJSON_AddNumberToObject(a.payload, "ignored_samples", (double)a.ignored);
  rc = j->reason != NULL ? 0 : TALLY_ENOMEM;
out:
  for (size_t m = 0; models != NULL && m < d->nmodels + 1; m++)
    free(models[m]);
  free(models);
  free(a.all);
  free(a.per);
  free(a.models_v);
  return rc;
}

int tally_es_judges(const tally_es_spec_t *s, tally_es_run_t *run) {
  int64_t limit = s->has_judge_limits ? s->max_samples_per_judge : 0;
  for (size_t i = 0; i < run->njudges; i++) {
    tally_es_judge_result_t *j = &run->judges[i];
    if (j->samples == NULL)
      continue;
    const tally_es_judge_t *d = NULL;
    for (size_t k = 0; k < s->njudges && d == NULL; k++)
      if (strcmp(s->judges[k].key, j->judge_key) == 0)
        d = &s->judges[k];
    if (d == NULL) {
      char *q = tally_go_quoted(j->judge_key);
      free(j->reason);
      j->reason = tally__es_dupf(
          "llm judge %s has samples but is not declared in the spec",
          q ? q : "");
      free(q);
      j->has_score = false;
      if (j->reason == NULL)
        return TALLY_ENOMEM;
      continue;
    }
    int rc = aggregate(run, d, j, limit);
    if (rc != 0)
      return rc;
  }
  return 0;
}
