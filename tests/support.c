/* Test helpers: see support.h. */
#include "support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

tally_task_t *ts_task(const char *json, char *err, size_t errlen) {
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  if (tally_registry_init(&reg) != 0)
    return NULL;
  tally_diag_init(&d, "task.json");
  if (tally_task_parse(&reg, json, strlen(json), &d, &task) != 0 && err)
    snprintf(err, errlen, "%s", d.count ? d.msgs[0] : "?");
  tally_diag_close(&d);
  tally_registry_close(&reg);
  return task;
}

char *ts_task_errors(const char *json) {
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  if (tally_registry_init(&reg) != 0)
    return NULL;
  tally_diag_init(&d, "task.json");
  tally_task_parse(&reg, json, strlen(json), &d, &task);
  tally_task_free(task);
  size_t len = 1;
  for (size_t i = 0; i < d.count; i++)
    len += strlen(d.msgs[i]) + 1;
  char *out = calloc(1, len);
  for (size_t i = 0; out && i < d.count; i++) {
    strcat(out, d.msgs[i]);
    if (i + 1 < d.count)
      strcat(out, "\n");
  }
  tally_diag_close(&d);
  tally_registry_close(&reg);
  return out;
}

size_t ts_count_lines(const char *text) {
  if (text == NULL || text[0] == '\0')
    return 0;
  size_t n = 1;
  for (const char *c = text; *c; c++)
    n += *c == '\n';
  return n;
}

char *ts_score_text(const tally_task_t *task, const char *job) {
  tally_taskset_entry_t entry = {.task = (tally_task_t *)task,
                                 .file = "task.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &ts);
  tally_buf_init(&out);
  tally_engine_score(&e, job, strlen(job), NULL, &out);
  char *text = out.data ? strdup(out.data) : NULL;
  tally_buf_close(&out);
  tally_engine_close(&e);
  return text;
}

cJSON *ts_score(const tally_task_t *task, const char *job) {
  char *text = ts_score_text(task, job);
  cJSON *obj = text ? cJSON_Parse(text) : NULL;
  free(text);
  return obj;
}

cJSON *ts_run(const char *task_json, const char *job_json) {
  tally_task_t *task = ts_task(task_json, NULL, 0);
  if (task == NULL)
    return NULL;
  cJSON *res = ts_score(task, job_json);
  tally_task_free(task);
  return res;
}

double ts_num(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -12345.0;
}

const cJSON *ts_at(const cJSON *root, const char *path) {
  const cJSON *v = root;
  const char *p = path;
  while (v != NULL && *p) {
    if (*p == '.') {
      p++;
    } else if (*p == '[') {
      char *end;
      long i = strtol(p + 1, &end, 10);
      if (*end != ']' || i < 0)
        return NULL;
      v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, (int)i) : NULL;
      p = end + 1;
    } else {
      char key[128];
      size_t n = strcspn(p, ".[");
      if (n >= sizeof(key))
        return NULL;
      memcpy(key, p, n);
      key[n] = '\0';
      v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, key) : NULL;
      p += n;
    }
  }
  return v;
}

const char *ts_str_at(const cJSON *root, const char *path) {
  const cJSON *v = ts_at(root, path);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

double ts_num_at(const cJSON *root, const char *path) {
  const cJSON *v = ts_at(root, path);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int ts_bool_at(const cJSON *root, const char *path) {
  const cJSON *v = ts_at(root, path);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

int ts_len_at(const cJSON *root, const char *path) {
  const cJSON *v = ts_at(root, path);
  return cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
}

char *ts_json_at(const cJSON *root, const char *path) {
  const cJSON *v = ts_at(root, path);
  return v ? cJSON_PrintUnformatted(v) : strdup("<missing>");
}

char *ts_idx_list_at(const cJSON *root, const char *path) {
  const cJSON *arr = ts_at(root, path);
  if (!cJSON_IsArray(arr))
    return strdup("<missing>");
  size_t len = 1;
  for (const cJSON *e = arr->child; e; e = e->next) {
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(e, "idx");
    len += (cJSON_IsString(idx) ? strlen(idx->valuestring) : 24) + 1;
  }
  char *out = calloc(1, len);
  for (const cJSON *e = arr->child; out && e; e = e->next) {
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(e, "idx");
    if (e != arr->child)
      strcat(out, ",");
    if (cJSON_IsString(idx))
      strcat(out, idx->valuestring);
    else if (cJSON_IsNumber(idx))
      snprintf(out + strlen(out), 24, "%g", idx->valuedouble);
    else
      strcat(out, "?");
  }
  return out;
}

static int cmp_cstr(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *ts_keys_at(const cJSON *root, const char *path) {
  const cJSON *obj = ts_at(root, path);
  if (!cJSON_IsObject(obj))
    return strdup("<missing>");
  const char *keys[64];
  size_t n = 0, len = 1;
  for (const cJSON *m = obj->child; m && n < 64; m = m->next) {
    keys[n++] = m->string;
    len += strlen(m->string) + 1;
  }
  qsort(keys, n, sizeof(keys[0]), cmp_cstr);
  char *out = calloc(1, len);
  for (size_t i = 0; out && i < n; i++) {
    if (i > 0)
      strcat(out, ",");
    strcat(out, keys[i]);
  }
  return out;
}

const char *ts_job(size_t n, const char *const *codenames,
                   const double *outcomes) {
  static char buf[8192];
  size_t used = (size_t)snprintf(buf, sizeof(buf),
                                 "{\"submission\": 1, \"evaluations\": {");
  for (size_t i = 0; i < n && used < sizeof(buf); i++)
    used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s\"%s\": %.17g",
                             i ? ", " : "", codenames[i], outcomes[i]);
  if (used < sizeof(buf))
    snprintf(buf + used, sizeof(buf) - used, "}}");
  return buf;
}

void ts_expect_group_case(const char *type, const char *params,
                          const ts_group_case_t *c) {
  static const char *const codenames[] = {"0", "1", "2", "3"};
  char task_json[1024];
  snprintf(task_json, sizeof(task_json),
           "{\"name\": \"g\", \"score_type\": \"%s\", "
           "\"score_type_parameters\": %s, \"testcases\": {\"0\": true, "
           "\"1\": true, \"2\": false, \"3\": false}, "
           "\"score_precision\": 2}",
           type, params);
  char err[512] = "";
  tally_task_t *task = ts_task(task_json, err, sizeof(err));
  cr_assert_not_null(task, "%s", err);
  cJSON *res = ts_score(task, ts_job(4, codenames, c->outcomes));
  cr_assert_not_null(res);
  cr_assert_null(ts_at(res, "error"), "%s", ts_str_at(res, "error"));
  cr_expect(ts_num(res, "score") == c->score,
            "score: expected %.17g, got "
            "%.17g",
            c->score, ts_num(res, "score"));
  cr_expect(ts_num(res, "public_score") == c->public_score,
            "public_score: expected %.17g, got %.17g", c->public_score,
            ts_num(res, "public_score"));
  cr_expect(ts_num(res, "max_score") == 100.0);
  cr_expect(ts_num(res, "max_public_score") == 40.0);
  cr_assert_eq(ts_len_at(res, "details"), 2);
  for (int s = 0; s < 2; s++) {
    char path[64];
    snprintf(path, sizeof(path), "details[%d].score_fraction", s);
    cr_expect(fabs(ts_num_at(res, path) - c->fractions[s]) < 1e-12,
              "%s: expected %.17g, got %.17g", path, c->fractions[s],
              ts_num_at(res, path));
    snprintf(path, sizeof(path), "details[%d].score", s);
    cr_expect(ts_num_at(res, path) == c->st_scores[s],
              "%s: expected %.17g, got %.17g", path, c->st_scores[s],
              ts_num_at(res, path));
    char want[64];
    snprintf(want, sizeof(want), "%g", c->st_scores[s]);
    snprintf(path, sizeof(path), "ranking_details[%d]", s);
    const char *got = ts_str_at(res, path);
    cr_expect(got != NULL && strcmp(got, want) == 0, "%s: expected %s, got %s",
              path, want, got ? got : "(none)");
  }
  cJSON_Delete(res);
  tally_task_free(task);
}

const char *ts_label_of(const char *task_json, double outcome) {
  static char label[64];
  char job[128];
  snprintf(job, sizeof(job), "{\"evaluations\": {\"a\": %.17g}}", outcome);
  cJSON *res = ts_run(task_json, job);
  const char *got = ts_str_at(res, "details[0].outcome");
  if (got == NULL)
    got = ts_str_at(res, "details[0].testcases[0].outcome");
  if (got == NULL) {
    cJSON_Delete(res);
    return NULL;
  }
  snprintf(label, sizeof(label), "%s", got);
  cJSON_Delete(res);
  return label;
}

const char *ts_proc_stat(pid_t pid, char *buf, size_t len) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (f == NULL || len == 0) {
    if (f != NULL)
      fclose(f);
    return NULL;
  }
  size_t n = fread(buf, 1, len - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *end = strrchr(buf, ')');
  return end != NULL && end[1] == ' ' && end[2] != '\0' ? end + 2 : NULL;
}
