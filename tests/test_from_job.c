/* One task for a whole benchmark (issue 26, docs/benchmarks.md): a task's
 * "from_job" takes each sample's expected answer, problem id and
 * category from the job, so that one task file serves every problem; the
 * report groups the samples by problem. Decoded strictly, and a job
 * missing what its task takes is an error naming the key. */
#include "cli_fixture.h"
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TASK(extra)                                                            \
  "{\"name\": \"mmlu\", \"task_type\": \"output_only\", \"score_type\": "      \
  "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": true}, " \
  "\"comparator\": \"last_number\"" extra "}"

#define FROM_JOB                                                               \
  ", \"from_job\": {\"target\": \"target\", \"problem\": \"doc_id\", "         \
  "\"category\": \"subject\"}"

Test(from_job, decodes_strictly) {
  static const struct {
    const char *json, *want;
  } cases[] = {
      {TASK(", \"from_job\": {}"),
       "task.json: from_job: must be an object naming the job keys"},
      {TASK(", \"from_job\": {\"answer\": \"a\"}"),
       "task.json: from_job.answer: unknown key (from_job has target, "
       "problem, category and question)"},
      {TASK(", \"from_job\": {\"target\": \"\"}"),
       "task.json: from_job.target: must be the name of a job key"},
      {TASK(", \"from_job\": {\"problem\": 3}"),
       "task.json: from_job.problem: must be the name of a job key"},
      {"{\"name\": \"t\", \"task_type\": \"output_only\", \"score_type\": "
       "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"a\": true, "
       "\"b\": true}, \"from_job\": {\"target\": \"target\"}}",
       "task.json: from_job.target: a task that takes its expected answer "
       "from the job has one testcase, not 2"},
      {"{\"name\": \"t\", \"score_type\": \"Sum\", \"score_type_parameters\": "
       "1, \"testcases\": {\"a\": true}, \"from_job\": {\"target\": \"x\"}}",
       "task.json: from_job.target: only a task that compares outputs "
       "(output_only, batch) takes it"},
      {TASK(", \"data_dir\": \"d\", \"from_job\": {\"target\": \"x\"}"),
       "task.json: from_job.target: the expected answer comes from the job: "
       "the task has no data_dir"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *errors = ts_task_errors(cases[i].json);
    cr_assert_not_null(errors);
    cr_expect(strstr(errors, cases[i].want) != NULL, "%s\nwanted: %s\ngot: %s",
              cases[i].json, cases[i].want, errors);
    cr_expect_eq(ts_count_lines(errors), 1, "%s", errors);
    free(errors);
  }
  /* Problem and category alone suit any task, without a data folder. */
  char *ok = ts_task_errors(
      "{\"name\": \"t\", \"score_type\": \"Sum\", \"score_type_parameters\": "
      "1, \"testcases\": {\"a\": true}, \"from_job\": {\"problem\": \"p\", "
      "\"category\": \"c\"}}");
  cr_expect_str_eq(ok, "");
  free(ok);
}

/* The score of a job (JSON members after the ids), or its error. */
static cJSON *score(const char *members) {
  tally_task_t *task = ts_task(TASK(FROM_JOB), NULL, 0);
  cr_assert_not_null(task);
  char job[1024];
  snprintf(job, sizeof(job),
           "{\"submission\": \"s\", \"participant\": \"m\", \"task\": "
           "\"mmlu\"%s}",
           members);
  cJSON *r = ts_score(task, job);
  tally_task_free(task);
  cr_assert_not_null(r);
  return r;
}

static const char *error_of(const cJSON *r) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
  return cJSON_IsString(e) ? e->valuestring : "";
}

Test(from_job, each_job_brings_its_expected_answer) {
  static const struct {
    const char *members;
    double score;
  } cases[] = {
      {", \"doc_id\": 0, \"subject\": \"math\", \"target\": \"72\", "
       "\"evaluations\": {\"answer\": \"so 72.\"}",
       1},
      {", \"doc_id\": 0, \"subject\": \"math\", \"target\": \"72\", "
       "\"evaluations\": {\"answer\": \"so 71.\"}",
       0},
      /* A number is its JSON text. */
      {", \"doc_id\": \"q7\", \"subject\": 3, \"target\": 3, "
       "\"evaluations\": {\"answer\": \"3\"}",
       1},
      {", \"doc_id\": 1, \"subject\": \"x\", \"target\": 0.5, "
       "\"evaluations\": {\"answer\": \"it is 0.5\"}",
       1},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cJSON *r = score(cases[i].members);
    cr_expect_str_eq(error_of(r), "", "%s", cases[i].members);
    cr_expect_float_eq(ts_num(r, "score"), cases[i].score, 1e-9, "%s",
                       cases[i].members);
    cJSON_Delete(r);
  }
}

Test(from_job, a_job_without_what_its_task_takes_is_an_error) {
  static const struct {
    const char *members, *want;
  } cases[] = {
      {", \"doc_id\": 0, \"subject\": \"math\", \"evaluations\": {\"answer\": "
       "\"3\"}",
       "target: is missing (task \"mmlu\" takes each sample's expected answer "
       "from the job's \"target\")"},
      {", \"doc_id\": 0, \"subject\": \"math\", \"target\": [3], "
       "\"evaluations\": {\"answer\": \"3\"}",
       "target: must be a string or a number (task \"mmlu\" takes each "
       "sample's expected answer from the job's \"target\")"},
      {", \"subject\": \"math\", \"target\": \"3\", \"evaluations\": "
       "{\"answer\": \"3\"}",
       "doc_id: is missing (task \"mmlu\" takes each sample's problem id from "
       "the job's \"doc_id\")"},
      {", \"doc_id\": 0, \"subject\": \"\", \"target\": \"3\", "
       "\"evaluations\": {\"answer\": \"3\"}",
       "subject: must be a non-empty string or a number (task \"mmlu\" takes "
       "each sample's category from the job's \"subject\")"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cJSON *r = score(cases[i].members);
    cr_expect_str_eq(error_of(r), cases[i].want, "%s", cases[i].members);
    cJSON_Delete(r);
  }
}

/* The report counts problems, not task files, and takes each sample's
 * category from its job. */
Test(from_job, the_report_groups_samples_by_problem) {
  char dir[64];
  tc_setup(dir, sizeof(dir), "from-job");
  cr_assert_eq(mkdir(tc_at("tasks"), 0700), 0);
  tc_write_file("tasks/mmlu.json", TASK(FROM_JOB));
  tc_write_file(
      "jobs.jsonl",
      "{\"submission\":\"a0\",\"participant\":\"m\",\"contest\":\"b\","
      "\"task\":\"mmlu\",\"doc_id\":0,\"subject\":\"math\",\"target\":\"72\","
      "\"evaluations\":{\"answer\":\"72\"}}\n"
      "{\"submission\":\"a1\",\"participant\":\"m\",\"contest\":\"b\","
      "\"task\":\"mmlu\",\"doc_id\":0,\"subject\":\"math\",\"target\":\"72\","
      "\"evaluations\":{\"answer\":\"7\"}}\n"
      "{\"submission\":\"b0\",\"participant\":\"m\",\"contest\":\"b\","
      "\"task\":\"mmlu\",\"doc_id\":1,\"subject\":\"bio\",\"target\":3,"
      "\"evaluations\":{\"answer\":\"3\"}}\n"
      "{\"submission\":\"c0\",\"participant\":\"m\",\"contest\":\"b\","
      "\"task\":\"mmlu\",\"doc_id\":2,\"subject\":\"bio\",\"target\":5,"
      "\"evaluations\":{\"answer\":\"4\"}}\n");
  const char *args[] = {"report",   "--results",    tc_at("jobs.jsonl"),
                        "--tasks",  tc_at("tasks"), "--by",
                        "category", "--json",       NULL};
  tc_run_t t = tc_run(args, NULL, NULL);
  cr_assert_eq(t.status, 0, "%s", t.err);
  cJSON *r = cJSON_Parse(t.out);
  cr_assert_not_null(r, "%s", t.out);
  char *all = cJSON_PrintUnformatted(r);
  /* Three problems from one task file; pass@1 over them: (1/2 + 1 + 0)/3. */
  cr_expect(strstr(all, "\"problems\":3") != NULL, "%s", all);
  cr_expect(strstr(all, "\"bio\"") != NULL && strstr(all, "\"math\"") != NULL,
            "%s", all);
  cr_expect(strstr(all, "0.5") != NULL, "%s", all);
  free(all);
  cJSON_Delete(r);
  tc_run_free(&t);
  tc_teardown();
}
