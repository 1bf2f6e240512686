/* What a worker sends for the contest state: config versions, summaries,
 * the public and full views at each feedback level, and token jobs. */
#include "engine/views.h"
#include "support.h"

#include "contest/scoremode.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One task loaded as tallyd loads it (with its version), and an engine
 * over it. Lives where it is opened: the engine points into it. */
typedef struct run_s {
  tally_taskset_entry_t entry;
  tally_taskset_t ts;
  tally_engine_t e;
  tally_buf_t out;
} run_t;

static void run_open(run_t *r, const char *task_json) {
  char err[512] = "";
  memset(r, 0, sizeof(*r));
  r->entry.task = ts_task(task_json, err, sizeof(err));
  cr_assert_not_null(r->entry.task, "%s", err);
  r->entry.file = "task.json";
  cr_assert_eq(
      tally_config_version(task_json, strlen(task_json), r->entry.version), 0);
  r->ts.entries = &r->entry;
  r->ts.count = 1;
  tally_engine_init(&r->e, &r->ts);
  tally_buf_init(&r->out);
}

static void run_close(run_t *r) {
  tally_buf_close(&r->out);
  tally_engine_close(&r->e);
  tally_task_free(r->entry.task);
}

/* Scores job and returns tally_engine_score's code; the result (or error)
 * text is in r->out. */
static int run_job(run_t *r, const char *job) {
  tally_buf_reset(&r->out);
  return tally_engine_score(&r->e, job, strlen(job), NULL, &r->out);
}

/* Scores job, which must score, and returns its summary (or its public or
 * full view) as a malloc'ed string the caller frees. */
static char *part_of(run_t *r, const char *job, int part) {
  cr_assert_eq(run_job(r, job), 0, "%s", r->out.data);
  tally_buf_reset(&r->out);
  int rc = part == 0 ? tally_engine_summary(&r->e, &r->out)
                     : tally_engine_view(&r->e, part == 2, &r->out);
  cr_assert_eq(rc, 0, "%s", r->e.err);
  return strdup(r->out.len > 0 ? r->out.data : "");
}

static char *summary_of(run_t *r, const char *job) {
  return part_of(r, job, 0);
}

static char *view_of(run_t *r, const char *job, bool full) {
  return part_of(r, job, full ? 2 : 1);
}

/* Expects the summary of job under task_json to be want, in which every
 * "%s" stands for the task's version. */
static void expect_summary(const char *task_json, const char *job,
                           const char *want) {
  run_t r;
  run_open(&r, task_json);
  char expected[2048];
  snprintf(expected, sizeof(expected), want, r.entry.version);
  char *got = summary_of(&r, job);
  cr_expect_str_eq(got, expected);
  free(got);
  run_close(&r);
}

#define SUM_TASK                                                               \
  "{\"name\": \"sum\", \"score_type\": \"Sum\", \"score_type_parameters\": "   \
  "10, \"testcases\": {\"a\": true, \"b\": false}}"

/* Subtask 0 is all public; subtask 1 has the private testcase q1. */
#define GROUP_TASK(type, p, q, extra)                                          \
  "{\"name\": \"g\", \"score_type\": \"" type "\", "                           \
  "\"score_type_parameters\": [[40, " p "], [60, " q "]], "                    \
  "\"testcases\": {\"p0\": true, \"p1\": true, \"p2\": true, \"q0\": true, "   \
  "\"q1\": false, \"q2\": true}, \"score_precision\": 2" extra "}"

#define GROUP_JOB(head)                                                        \
  "{" head "\"evaluations\": {\"p0\": 1, \"p1\": 0.25, \"p2\": 0.5, "          \
  "\"q0\": 1, \"q1\": {\"outcome\": 0.75, \"text\": [\"secret\"]}, "           \
  "\"q2\": 1}}"

Test(summary, of_a_sum_task_writes_number_ids_as_their_text) {
  expect_summary(SUM_TASK,
                 "{\"submission\": 7, \"participant\": -12, "
                 "\"evaluations\": {\"a\": 1, \"b\": 0.5}}",
                 "{\"submission\":\"7\",\"participant\":\"-12\","
                 "\"contest\":\"default\",\"task\":\"sum\",\"timestamp\":0,"
                 "\"official\":true,\"tokened\":false,\"version\":\"%s\","
                 "\"score_mode\":\"max_subtask\",\"score_precision\":0,"
                 "\"score_rounding\":\"subtask\",\"score\":15,"
                 "\"public_score\":10,\"max_score\":20,"
                 "\"max_public_score\":10,\"compiled\":true,"
                 "\"subtasks\":null,\"public_subtasks\":null,"
                 "\"judgement\":\"WA\"}");
}

Test(summary, of_group_min_gives_subtask_scores_and_the_job_keys) {
  expect_summary(
      GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""),
      GROUP_JOB("\"submission\": \"s-1\", \"participant\": \"alice\", "
                "\"contest\": \"final\", \"timestamp\": 1700000000.5, "
                "\"official\": false, \"tokened\": true, "),
      "{\"submission\":\"s-1\",\"participant\":\"alice\","
      "\"contest\":\"final\",\"task\":\"g\",\"timestamp\":1700000000.5,"
      "\"official\":false,\"tokened\":true,\"version\":\"%s\","
      "\"score_mode\":\"max_subtask\",\"score_precision\":2,"
      "\"score_rounding\":\"subtask\",\"score\":55,\"public_score\":10,"
      "\"max_score\":100,\"max_public_score\":40,\"compiled\":true,"
      "\"subtasks\":[10,45],\"public_subtasks\":null,"
      "\"judgement\":\"WA\"}");
}

Test(summary, gives_public_subtasks_when_every_subtask_is_public) {
  expect_summary(
      "{\"name\": \"g\", \"score_type\": \"GroupMin\", "
      "\"score_type_parameters\": [[30, \"a\"], [70, \"b\"]], "
      "\"testcases\": {\"a\": true, \"b\": true}, \"score_mode\": \"max\", "
      "\"score_precision\": 1}",
      "{\"submission\": \"s\", \"participant\": 3, \"contest\": 2026, "
      "\"evaluations\": {\"a\": 0.333, \"b\": 1}}",
      "{\"submission\":\"s\",\"participant\":\"3\",\"contest\":\"2026\","
      "\"task\":\"g\",\"timestamp\":0,\"official\":true,\"tokened\":false,"
      "\"version\":\"%s\",\"score_mode\":\"max\",\"score_precision\":1,"
      "\"score_rounding\":\"subtask\",\"score\":80,\"public_score\":80,"
      "\"max_score\":100,\"max_public_score\":100,\"compiled\":true,"
      "\"subtasks\":[10,70],\"public_subtasks\":[10,70],"
      "\"judgement\":\"WA\"}");
}

Test(summary, of_group_threshold_and_unrounded_subtasks) {
  /* Outcomes above the threshold fail: subtask 1 fails on q0 and q2. */
  expect_summary(
      GROUP_TASK("GroupThreshold", "\"p\", 1", "\"q\", 0.5",
                 ", \"score_rounding\": \"none\", \"score_mode\": "
                 "\"max_tokened_last\""),
      GROUP_JOB("\"submission\": \"s-2\", \"participant\": \"bob\", "),
      "{\"submission\":\"s-2\",\"participant\":\"bob\","
      "\"contest\":\"default\",\"task\":\"g\",\"timestamp\":0,"
      "\"official\":true,\"tokened\":false,\"version\":\"%s\","
      "\"score_mode\":\"max_tokened_last\",\"score_precision\":2,"
      "\"score_rounding\":\"none\",\"score\":40,\"public_score\":40,"
      "\"max_score\":100,\"max_public_score\":40,\"compiled\":true,"
      "\"subtasks\":[40,0],\"public_subtasks\":null,"
      "\"judgement\":\"WA\"}");
}

Test(summary, of_a_compilation_failure_is_not_compiled_and_has_no_subtasks) {
  expect_summary(GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""),
                 "{\"submission\": \"s-3\", \"participant\": \"carol\", "
                 "\"compilation\": \"failed\", \"official\": true}",
                 "{\"submission\":\"s-3\",\"participant\":\"carol\","
                 "\"contest\":\"default\",\"task\":\"g\",\"timestamp\":0,"
                 "\"official\":true,\"tokened\":false,\"version\":\"%s\","
                 "\"score_mode\":\"max_subtask\",\"score_precision\":2,"
                 "\"score_rounding\":\"subtask\",\"score\":0,"
                 "\"public_score\":0,\"max_score\":100,"
                 "\"max_public_score\":40,\"compiled\":false,"
                 "\"subtasks\":null,\"public_subtasks\":null,"
                 "\"judgement\":\"CE\"}");
}

Test(summary, and_views_are_empty_without_submission_or_participant) {
  static const char *const jobs[] = {
      "{\"participant\": \"u\", \"evaluations\": {\"a\": 1, \"b\": 1}}",
      "{\"submission\": \"s\", \"evaluations\": {\"a\": 1, \"b\": 1}}",
      "{\"evaluations\": {\"a\": 1, \"b\": 1}, \"contest\": \"c\"}",
  };
  run_t r;
  run_open(&r, SUM_TASK);
  for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
    for (int part = 0; part < 3; part++) {
      char *got = part_of(&r, jobs[i], part);
      cr_expect_str_eq(got, "", "%s, part %d", jobs[i], part);
      free(got);
    }
  }
  run_close(&r);
}

/* The job decoder checks these keys, so tally score refuses such a job
 * as tallyd does (issue 10: one decoder, one rule). */
Test(summary, refuses_contest_keys_of_the_wrong_type_naming_the_key) {
  static const struct {
    const char *keys;
    const char *err;
  } cases[] = {
      {"\"contest\": true", "contest: must be a string or a number"},
      {"\"contest\": null", "contest: must be a string or a number"},
      {"\"timestamp\": \"noon\"", "timestamp: must be a number (seconds)"},
      {"\"official\": 1", "official: must be true or false"},
      {"\"tokened\": \"yes\"", "tokened: must be true or false"},
      {"\"contest\": \"a\", \"contest\": \"b\"", "contest: key appears twice"},
  };
  run_t r;
  run_open(&r, SUM_TASK);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char job[256];
    snprintf(job, sizeof(job),
             "{\"submission\": \"s\", \"participant\": \"u\", %s, "
             "\"evaluations\": {\"a\": 1, \"b\": 1}}",
             cases[i].keys);
    cr_expect_eq(run_job(&r, job), TALLY_EJOB, "%s", job);
    cr_expect_str_eq(r.e.err, cases[i].err);
    tally_buf_reset(&r.out);
    cr_expect_eq(tally_engine_summary(&r.e, &r.out), TALLY_EINVAL);
    cr_expect_eq(r.out.len, 0);
  }
  run_close(&r);
}

/* The two ways of reading a result's score sides must agree: from the
 * struct (the worker) and from the result's text (tally score --mode). */
static void expect_same_sides(const tally_score_side_t *a,
                              const tally_score_side_t *b, const char *what) {
  cr_expect_eq(a->score, b->score, "%s", what);
  cr_expect_eq(a->not_compiled, b->not_compiled, "%s", what);
  cr_expect_eq(a->nsubtasks, b->nsubtasks, "%s", what);
  for (size_t i = 0; i < a->nsubtasks && i < b->nsubtasks; i++)
    cr_expect_eq(a->subtasks[i], b->subtasks[i], "%s [%zu]", what, i);
}

Test(summary, reads_the_same_subtasks_as_tally_submission_read_result) {
  static const struct {
    const char *task, *job;
  } cases[] = {
      {SUM_TASK, "{\"evaluations\": {\"a\": 1, \"b\": 0.5}}"},
      {SUM_TASK, "{\"compilation\": \"failed\"}"},
      {GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""), GROUP_JOB("")},
      {GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""),
       "{\"compilation\": \"failed\"}"},
      {GROUP_TASK("GroupMul", "\"p\"", "\"q\"",
                  ", \"score_rounding\": \"none\""),
       GROUP_JOB("")},
      {GROUP_TASK("GroupThreshold", "\"p\", 0.3", "\"q\", 0.8", ""),
       GROUP_JOB("")},
      {"{\"name\": \"g\", \"score_type\": \"GroupMin\", "
       "\"score_type_parameters\": [[1, \"a\"], [2, \"b\"], [3, \"c\"]], "
       "\"testcases\": {\"a\": true, \"b\": true, \"c\": true}, "
       "\"score_rounding\": \"none\"}",
       "{\"evaluations\": {\"a\": 0.1, \"b\": 0.7, \"c\": 0.3}}"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    run_t r;
    run_open(&r, cases[i].task);
    cr_assert_eq(run_job(&r, cases[i].job), 0, "%s", r.out.data);
    cJSON *res = cJSON_Parse(r.out.data);
    cr_assert_not_null(res);
    tally_submission_t text, direct;
    char err[128];
    tally_submission_init(&text);
    tally_submission_init(&direct);
    cr_assert_eq(tally_submission_read_result(&text, res, err, sizeof(err)), 0);
    cr_assert_eq(tally_submission_set_result(&direct, r.entry.task, &r.e.res),
                 0);
    cr_expect(direct.scored);
    expect_same_sides(&direct.priv, &text.priv, cases[i].job);
    expect_same_sides(&direct.pub, &text.pub, cases[i].job);
    tally_submission_close(&text);
    tally_submission_close(&direct);
    cJSON_Delete(res);
    run_close(&r);
  }
}

/* The idx lists of the testcases of each subtask in a view's details,
 * joined by "|": "p0,p1|q0". */
static void idx_lists(const cJSON *view, char *out, size_t len) {
  out[0] = '\0';
  const cJSON *st;
  bool first = true;
  cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(view, "details")) {
    char *list = ts_idx_list_at(st, "testcases");
    if (!first)
      strncat(out, "|", len - strlen(out) - 1);
    strncat(out, list, len - strlen(out) - 1);
    free(list);
    first = false;
  }
}

Test(views, show_only_what_each_feedback_level_shows) {
  /* Subtask 0 (public) fails on p1, so restricted shows p0 and p1, OI
   * restricted only p1. Subtask 1 scores 0.75 through the private q1:
   * among its public testcases, q0 is the first lowest. */
  static const struct {
    const char *level;
    const char *lists;
  } cases[] = {
      {"", "p0,p1|q0"},
      {", \"feedback_level\": \"restricted\"", "p0,p1|q0"},
      {", \"feedback_level\": \"oi_restricted\"", "p1|q0"},
      {", \"feedback_level\": \"full\"", "p0,p1,p2|q0,q2"},
  };
  static const char job[] =
      GROUP_JOB("\"submission\": \"s\", \"participant\": \"u\", ");
  char task_json[1024];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    snprintf(task_json, sizeof(task_json),
             GROUP_TASK("GroupMin", "\"p\"", "\"q\"", "%s"), cases[i].level);
    run_t r;
    run_open(&r, task_json);
    char *text = view_of(&r, job, false);
    cJSON *view = cJSON_Parse(text);
    cr_assert_not_null(view, "%s", text);
    char lists[128];
    idx_lists(view, lists, sizeof(lists));
    cr_expect_str_eq(lists, cases[i].lists, "%s", cases[i].level);
    /* The public score and maximum; the private ones nowhere. */
    cr_expect_eq(ts_num(view, "score"), 10);
    cr_expect_eq(ts_num(view, "max_score"), 40);
    cr_expect_eq(ts_num_at(view, "details[0].score"), 10);
    cr_expect_null(ts_at(view, "details[1].score"));
    cr_expect_null(ts_at(view, "details[1].score_fraction"));
    cr_expect_null(strstr(text, "q1"), "%s", text);
    cr_expect_null(strstr(text, "secret"), "%s", text);
    cr_expect_null(strstr(text, "45"), "%s", text);
    cr_expect_null(strstr(text, "55"), "%s", text);
    cJSON_Delete(view);
    free(text);
    run_close(&r);
  }
}

Test(views, full_view_has_the_score_and_the_whole_details) {
  run_t r;
  run_open(&r, GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""));
  static const char job[] =
      GROUP_JOB("\"submission\": \"s\", \"participant\": \"u\", ");
  char *text = view_of(&r, job, true);
  cr_assert_eq(run_job(&r, job), 0);
  cJSON *result = cJSON_Parse(r.out.data);
  cJSON *view = cJSON_Parse(text);
  cr_assert_not_null(view, "%s", text);
  cr_expect_eq(ts_num(view, "score"), 55);
  cr_expect_eq(ts_num(view, "max_score"), 100);
  char *want = ts_json_at(result, "details");
  char *got = ts_json_at(view, "details");
  cr_expect_str_eq(got, want);
  char *keys = ts_keys_at(view, "");
  cr_expect_str_eq(keys, "details,max_score,score");
  free(keys);
  free(want);
  free(got);
  cJSON_Delete(view);
  cJSON_Delete(result);
  free(text);
  run_close(&r);
}

Test(views, of_a_sum_task_drop_private_testcases) {
  run_t r;
  run_open(&r, SUM_TASK);
  static const char job[] = "{\"submission\": 1, \"participant\": 2, "
                            "\"evaluations\": {\"a\": 0.5, \"b\": 1}}";
  char *pub = view_of(&r, job, false);
  cr_expect_str_eq(pub, "{\"score\":5,\"max_score\":10,\"details\":[{\"idx\":"
                        "\"a\",\"outcome\":\"Partially correct\",\"text\":"
                        "null,\"time\":null,\"memory\":null}]}");
  char *full = view_of(&r, job, true);
  cr_expect(strstr(full, "{\"score\":15,\"max_score\":20,\"details\":[") ==
                full,
            "%s", full);
  cr_expect_not_null(strstr(full, "\"idx\":\"b\",\"outcome\":\"Correct\""));
  free(pub);
  free(full);
  run_close(&r);
}

Test(views, of_a_compilation_failure_have_empty_details) {
  run_t r;
  run_open(&r, GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""));
  static const char job[] = "{\"submission\": \"s\", \"participant\": \"u\", "
                            "\"compilation\": \"failed\"}";
  char *pub = view_of(&r, job, false);
  char *full = view_of(&r, job, true);
  cr_expect_str_eq(pub, "{\"score\":0,\"max_score\":40,\"details\":[]}");
  cr_expect_str_eq(full, "{\"score\":0,\"max_score\":100,\"details\":[]}");
  free(pub);
  free(full);
  run_close(&r);
}

Test(views, are_refused_before_a_job_is_scored_and_after_a_job_error) {
  run_t r;
  run_open(&r, SUM_TASK);
  cr_expect_eq(tally_engine_summary(&r.e, &r.out), TALLY_EINVAL);
  cr_expect_eq(tally_engine_view(&r.e, true, &r.out), TALLY_EINVAL);
  cr_assert_eq(run_job(&r, "{\"submission\": 1, \"participant\": 2, "
                           "\"evaluations\": {\"a\": 1}}"),
               TALLY_EJOB);
  tally_buf_reset(&r.out);
  cr_expect_eq(tally_engine_summary(&r.e, &r.out), TALLY_EINVAL);
  cr_expect_eq(tally_engine_view(&r.e, false, &r.out), TALLY_EINVAL);
  cr_expect_eq(r.out.len, 0);
  run_close(&r);
}

/* Each thread scores the same jobs with an engine of its own. */
typedef struct worker_arg_s {
  const tally_taskset_t *ts;
  const char *const *jobs;
  size_t njobs;
  char *out; /* every result and summary, one line each */
} worker_arg_t;

static void *score_all(void *p) {
  worker_arg_t *a = p;
  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, a->ts);
  tally_buf_init(&out);
  for (int round = 0; round < 50; round++) {
    tally_buf_reset(&out);
    for (size_t i = 0; i < a->njobs; i++) {
      if (tally_engine_score(&e, a->jobs[i], strlen(a->jobs[i]), NULL, &out) ==
          0) {
        tally_buf_putc(&out, '\n');
        tally_engine_summary(&e, &out);
      }
      tally_buf_putc(&out, '\n');
    }
  }
  a->out = strdup(out.data);
  tally_buf_close(&out);
  tally_engine_close(&e);
  return NULL;
}

Test(summary, is_the_same_from_engines_in_parallel_threads) {
  static const char *const jobs[] = {
      GROUP_JOB("\"submission\": \"s\", \"participant\": \"u\", "),
      "{\"submission\": 1, \"participant\": 2, \"compilation\": \"failed\"}",
      GROUP_JOB("\"submission\": \"t\", \"participant\": \"v\", "
                "\"timestamp\": 5, "),
  };
  run_t r;
  run_open(&r, GROUP_TASK("GroupMin", "\"p\"", "\"q\"", ""));
  worker_arg_t args[4];
  pthread_t threads[4];
  for (int t = 0; t < 4; t++) {
    args[t] = (worker_arg_t){&r.ts, jobs, 3, NULL};
    cr_assert_eq(pthread_create(&threads[t], NULL, score_all, &args[t]), 0);
  }
  for (int t = 0; t < 4; t++)
    pthread_join(threads[t], NULL);
  cr_assert_not_null(strstr(args[0].out, "\"timestamp\":5"));
  for (int t = 1; t < 4; t++)
    cr_expect_str_eq(args[t].out, args[0].out);
  for (int t = 0; t < 4; t++)
    free(args[t].out);
  run_close(&r);
}

Test(version, ignores_whitespace_and_changes_with_a_parameter) {
  char a[17], b[17], c[17];
  static const char compact[] = SUM_TASK;
  static const char spaced[] =
      "{\n  \"name\" : \"sum\",\n\t\"score_type\": \"Sum\",\r\n"
      "  \"score_type_parameters\": 10 ,\n  \"testcases\": {\"a\": true,"
      "\n \"b\": false}\n}\n";
  static const char changed[] =
      "{\"name\": \"sum\", \"score_type\": \"Sum\", \"score_type_parameters\": "
      "11, \"testcases\": {\"a\": true, \"b\": false}}";
  cr_assert_eq(tally_config_version(compact, strlen(compact), a), 0);
  cr_assert_eq(tally_config_version(spaced, strlen(spaced), b), 0);
  cr_assert_eq(tally_config_version(changed, strlen(changed), c), 0);
  cr_expect_str_eq(a, b);
  cr_expect_str_neq(a, c);
  cr_expect_eq(strlen(a), 16);
  cr_expect_eq(strspn(a, "0123456789abcdef"), 16, "%s", a);
}

Test(version, is_fnv_1a_of_the_compact_json) {
  char v[17];
  static const char text[] = "{ \"a\" : 1, \"b\" : [ true, null ] }";
  cr_assert_eq(tally_config_version(text, strlen(text), v), 0);
  /* FNV-1a 64 of {"a":1,"b":[true,null]}. */
  cr_expect_str_eq(v, "595cf28929e773ea");
  cr_assert_eq(tally_config_version("1", 1, v), 0);
  cr_expect_str_eq(v, "af63ac4c86019afc");
  cr_expect_eq(tally_config_version("{\"a\":", 5, v), TALLY_EINVAL);
}

/* Writes text to dir/name. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

Test(version, is_computed_for_every_task_a_taskset_loads) {
  char dir[] = "/tmp/tally-views-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  static const char sum[] = SUM_TASK;
  static const char group[] = GROUP_TASK("GroupMin", "\"p\"", "\"q\"", "");
  write_file(dir, "sum.json", sum);
  write_file(dir, "g.json", group);
  tally_registry_t reg;
  tally_diag_t d;
  tally_taskset_t ts;
  cr_assert_eq(tally_registry_init(&reg), 0);
  tally_diag_init(&d, NULL);
  tally_taskset_init(&ts);
  cr_assert_eq(tally_taskset_load(&ts, &reg, dir, &d), 0);
  char want[17];
  cr_assert_eq(tally_config_version(sum, strlen(sum), want), 0);
  const tally_task_t *t = tally_taskset_find(&ts, "sum");
  cr_assert_not_null(t);
  cr_expect_str_eq(tally_taskset_version(&ts, t), want);
  cr_assert_eq(tally_config_version(group, strlen(group), want), 0);
  cr_expect_str_eq(tally_taskset_version(&ts, tally_taskset_find(&ts, "g")),
                   want);

  /* A task of another set, even of the same name, has no version here. */
  tally_task_t *other = ts_task(sum, NULL, 0);
  cr_expect_null(tally_taskset_version(&ts, other));
  tally_task_free(other);

  tally_taskset_close(&ts);
  tally_diag_close(&d);
  tally_registry_close(&reg);
  char path[512];
  snprintf(path, sizeof(path), "%s/sum.json", dir);
  unlink(path);
  snprintf(path, sizeof(path), "%s/g.json", dir);
  unlink(path);
  rmdir(dir);
}

Test(version, is_added_to_results_only_when_the_engine_is_asked_to) {
  run_t r;
  run_open(&r, SUM_TASK);
  static const char job[] = "{\"submission\": 1, \"evaluations\": "
                            "{\"a\": 1, \"b\": 1}}";
  tally_buf_reset(&r.out);
  cr_assert_eq(
      tally_engine_score(&r.e, job, strlen(job), "\"id\":\"1-0\"", &r.out), 0);
  cr_expect_str_eq(r.out.data + r.out.len - 12, ",\"id\":\"1-0\"}");
  r.e.add_version = true;
  char tail[64];
  snprintf(tail, sizeof(tail), ",\"id\":\"1-0\",\"version\":\"%s\"}",
           r.entry.version);
  tally_buf_reset(&r.out);
  cr_assert_eq(
      tally_engine_score(&r.e, job, strlen(job), "\"id\":\"1-0\"", &r.out), 0);
  cr_expect_str_eq(r.out.data + r.out.len - strlen(tail), tail);
  tally_buf_reset(&r.out);
  cr_assert_eq(run_job(&r, job), 0);
  snprintf(tail, sizeof(tail), "],\"version\":\"%s\"}", r.entry.version);
  cr_expect_str_eq(r.out.data + r.out.len - strlen(tail), tail);
  run_close(&r);
}

Test(token, jobs_give_the_normalized_token_body) {
  static const struct {
    const char *job, *body;
  } cases[] = {
      {"{\"type\": \"token\", \"submission\": \"s-1042\", "
       "\"participant\": \"alice\"}",
       "{\"submission\":\"s-1042\",\"participant\":\"alice\"}"},
      {"{\"type\": \"token\", \"submission\": 1042}",
       "{\"submission\":\"1042\",\"participant\":null}"},
      {"{\"participant\": -7, \"type\": \"token\", \"submission\": 1000, "
       "\"evaluations\": 5}",
       "{\"submission\":\"1000\",\"participant\":\"-7\"}"},
  };
  run_t r;
  run_open(&r, SUM_TASK);
  r.e.accept_tokens = true;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cr_expect_eq(run_job(&r, cases[i].job), TALLY_ENGINE_TOKEN, "%s",
                 r.out.data);
    cr_expect_str_eq(r.out.data, cases[i].body);
    cr_expect_eq(tally_engine_summary(&r.e, &r.out), TALLY_EINVAL);
  }
  run_close(&r);
}

Test(token, jobs_are_job_errors_for_an_engine_that_takes_none) {
  run_t r;
  run_open(&r, SUM_TASK);
  cr_expect_eq(run_job(&r, "{\"type\": \"token\", \"submission\": \"s\"}"),
               TALLY_EJOB);
  cr_expect_str_eq(r.out.data, "{\"submission\":\"s\",\"error\":\"a token "
                               "job has nothing to score\"}");
  run_close(&r);
}

Test(token, malformed_jobs_are_job_errors_naming_the_field) {
  static const struct {
    const char *job, *err;
  } cases[] = {
      {"{\"type\": \"token\"}", "submission: missing"},
      {"{\"type\": \"token\", \"participant\": \"u\"}", "submission: missing"},
      {"{\"type\": \"token\", \"submission\": true}",
       "submission: must be a string or a number"},
      {"{\"type\": \"token\", \"submission\": \"s\", \"participant\": []}",
       "participant: must be a string or a number"},
      {"{\"type\": \"tokens\", \"submission\": \"s\"}",
       "type: must be \"score\" or \"token\""},
      {"{\"type\": 1, \"submission\": \"s\"}",
       "type: must be \"score\" or \"token\""},
      {"{\"type\": \"token\", \"type\": \"token\", \"submission\": \"s\"}",
       "type: key appears twice"},
  };
  run_t r;
  run_open(&r, SUM_TASK);
  r.e.accept_tokens = true;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cr_expect_eq(run_job(&r, cases[i].job), TALLY_EJOB, "%s", cases[i].job);
    cr_expect(strncmp(r.e.err, cases[i].err, strlen(cases[i].err)) == 0,
              "%s: %s", cases[i].job, r.e.err);
  }
  /* A bad type still names the submission in the reply. */
  run_job(&r, "{\"type\": \"x\", \"submission\": \"s-9\"}");
  cr_expect_not_null(strstr(r.out.data, "\"submission\":\"s-9\""));
  run_close(&r);
}

Test(token, type_score_is_an_ordinary_job) {
  run_t r;
  run_open(&r, SUM_TASK);
  r.e.accept_tokens = true;
  cr_expect_eq(run_job(&r, "{\"type\": \"score\", \"submission\": 1, "
                           "\"evaluations\": {\"a\": 1, \"b\": 0}}"),
               0, "%s", r.out.data);
  cr_expect_not_null(strstr(r.out.data, "\"score\":10,"));
  run_close(&r);
}
