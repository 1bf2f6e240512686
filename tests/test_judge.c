/* A task's judge (issue 26, docs/benchmarks.md#answers-sent-to-a-judge-
 * model): the task key decoded strictly, the prompt built from the
 * template, the verdict read from a reply with the task's rule (SimpleQA's
 * grades, NeMo Evaluator's score reading, a pattern), the job's "judge"
 * member decoded strictly, the judge request the engine answers for a
 * sample without a verdict, and the sample member's judge state. */
#include "engine/engine.h"
#include "engine/judge.h"
#include "redis/verdicts.h"
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TASK(judge)                                                            \
  "{\"name\": \"sqa\", \"task_type\": \"output_only\", \"score_type\": "       \
  "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\": true}, " \
  "\"from_job\": {\"target\": \"target\", \"question\": \"problem\"}, "        \
  "\"judge\": " judge "}"

Test(judge, decodes_strictly) {
  static const struct {
    const char *json, *want;
  } cases[] = {
      {TASK("[]"), "task.json: judge: must be an object"},
      {TASK("{\"rule\": \"vibes\"}"),
       "task.json: judge.rule: must be \"grade\" or \"score\""},
      {TASK("{\"temperature\": 0}"),
       "task.json: judge.temperature: unknown key (judge has template, "
       "system, rule, max_score and pattern)"},
      {TASK("{\"template\": \"\"}"),
       "task.json: judge.template: must be a non-empty string"},
      {TASK("{\"template\": \"Q {question} {answer}\"}"),
       "task.json: judge.template: has a \"{\" that opens none of "
       "{question}, {response} and {target}"},
      {TASK("{\"template\": \"{response} }\"}"),
       "task.json: judge.template: has a \"}\" that closes no placeholder"},
      {TASK("{\"max_score\": 5}"),
       "task.json: judge.max_score: only the rule \"score\" takes it"},
      {TASK("{\"rule\": \"score\", \"max_score\": 0}"),
       "task.json: judge.max_score: must be a number above 0"},
      {TASK("{\"rule\": \"score\", \"pattern\": \"(\"}"),
       "task.json: judge.pattern: is not a regular expression"},
      {TASK("{\"system\": 3}"),
       "task.json: judge.system: must be a non-empty string"},
      {"{\"name\": \"t\", \"score_type\": \"Sum\", \"score_type_parameters\": "
       "1, \"testcases\": {\"a\": true}, \"judge\": {}}",
       "task.json: judge: only an output_only task takes it"},
      {"{\"name\": \"t\", \"task_type\": \"output_only\", \"score_type\": "
       "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"a\": true, "
       "\"b\": true}, \"from_job\": {\"question\": \"q\"}, \"judge\": {}}",
       "task.json: judge: a judged task has one testcase, not 2"},
      {"{\"name\": \"t\", \"task_type\": \"output_only\", \"score_type\": "
       "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"a\": true}, "
       "\"from_job\": {\"target\": \"t\"}, \"judge\": {}}",
       "task.json: judge: the template asks for {question}, but from_job "
       "names no job key for it"},
      {"{\"name\": \"t\", \"task_type\": \"answer\", \"judge\": {}, "
       "\"scoring\": {\"dimensions\": []}}",
       "task.json: judge: an answer task is scored by its dimensions"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *errors = ts_task_errors(cases[i].json);
    cr_assert_not_null(errors);
    cr_expect(strstr(errors, cases[i].want) != NULL, "%s\nwanted: %s\ngot: %s",
              cases[i].json, cases[i].want, errors);
    free(errors);
  }
  /* A template without {question} needs no question key; braces doubled
   * are braces. */
  char *ok = ts_task_errors(
      "{\"name\": \"t\", \"task_type\": \"output_only\", \"score_type\": "
      "\"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"a\": true}, "
      "\"from_job\": {\"target\": \"t\"}, \"judge\": {\"template\": "
      "\"{{x}} {response} vs {target}\", \"rule\": \"score\", \"pattern\": "
      "\"(\\\\d+)\"}}");
  cr_expect_str_eq(ok, "");
  free(ok);
}

static tally_judge_t *judge_of(const char *json) {
  tally_diag_t d;
  tally_diag_init(&d, "judge.json");
  tally_jpath_t path;
  tally_jpath_init(&path);
  cJSON *v = cJSON_Parse(json);
  tally_judge_t *j = NULL;
  cr_assert_eq(tally_judge_parse(v, &j, &d, &path), 0, "%s", json);
  cJSON_Delete(v);
  tally_diag_close(&d);
  return j;
}

Test(judge, the_prompt_is_the_template_filled_in) {
  tally_judge_t *j =
      judge_of("{\"template\": \"Q={question} R={response} T={target} "
               "{{literal}} {{{response}}}\"}");
  tally_buf_t b;
  tally_buf_init(&b);
  tally_judge_prompt(j, "why?", 4, "{target}", 8, "42", 2, &b);
  cr_expect_str_eq(b.data, "Q=why? R={target} T=42 {literal} {{target}}");
  tally_buf_reset(&b);
  tally_judge_prompt(j, NULL, 0, NULL, 0, NULL, 0, &b);
  cr_expect_str_eq(b.data, "Q= R= T= {literal} {}");
  tally_buf_close(&b);
  tally_judge_free(j);
  /* The default grade template quotes all three. */
  j = judge_of("{}");
  tally_buf_init(&b);
  tally_judge_prompt(j, "QQ", 2, "RR", 2, "TT", 2, &b);
  cr_expect(strstr(b.data, "Question: QQ\nGold target: TT\nPredicted answer: "
                           "RR\n") != NULL,
            "%s", b.data);
  tally_buf_close(&b);
  tally_judge_free(j);
}

typedef struct {
  const char *reply;
  int state; /* 1 judged, 0 unparseable */
  double outcome;
  const char *verdict;
} vcase_t;

static void check_verdicts(const char *config, const vcase_t *cases, size_t n) {
  tally_judge_t *j = judge_of(config);
  for (size_t i = 0; i < n; i++) {
    double outcome = -1;
    char verdict[48];
    tally_judge_state_t s =
        tally_judge_verdict(j, cases[i].reply, strlen(cases[i].reply), &outcome,
                            verdict, sizeof(verdict));
    cr_expect_eq(s,
                 cases[i].state ? TALLY_JUDGE_JUDGED : TALLY_JUDGE_UNPARSEABLE,
                 "%s: %s", config, cases[i].reply);
    cr_expect_float_eq(outcome, cases[i].outcome, 1e-12, "%s: %s", config,
                       cases[i].reply);
    cr_expect_str_eq(verdict, cases[i].verdict, "%s: %s: got %s", config,
                     cases[i].reply, verdict);
  }
  tally_judge_free(j);
}

Test(judge, grades_are_read_as_simpleqa_writes_them) {
  static const vcase_t cases[] = {
      {"CORRECT", 1, 1, "CORRECT"},
      {"  INCORRECT\n", 1, 0, "INCORRECT"},
      {"NOT_ATTEMPTED", 1, 0, "NOT_ATTEMPTED"},
      /* The first grade word; INCORRECT is not read as CORRECT. */
      {"The grade is INCORRECT, not CORRECT.", 1, 0, "INCORRECT"},
      {"Grade: CORRECT.", 1, 1, "CORRECT"},
      {"A", 1, 1, "CORRECT"},
      {" B\n", 1, 0, "INCORRECT"},
      {"C", 1, 0, "NOT_ATTEMPTED"},
      /* Words, case and all: none of these is a grade. */
      {"correct", 0, 0, ""},
      {"CORRECTLY", 0, 0, ""},
      {"NOT ATTEMPTED", 0, 0, ""},
      {"D", 0, 0, ""},
      {"A.", 0, 0, ""},
      {"", 0, 0, ""},
      {"I cannot grade this.", 0, 0, ""},
  };
  check_verdicts("{}", cases, sizeof(cases) / sizeof(cases[0]));
}

Test(judge, scores_are_read_as_nemo_reads_them) {
  static const vcase_t cases[] = {
      /* A JSON object's score, capped at max_score. */
      {"{\"score\": 4, \"reasoning\": \"ok\"}", 1, 0.8, "4"},
      {"{\"score\": 7}", 1, 1, "5"},
      {"{\"score\": \"3.5\"}", 1, 0.7, "3.5"},
      {"{\"score\": true}", 1, 0.2, "1"},
      {"{\"score\": -2}", 1, 0, "-2"},
      /* Then "score": N anywhere (digits only), then N/M. */
      {"Sure. {\"score\": 3, \"reasoning\": \"meh\"} done", 1, 0.6, "3"},
      {"\"score\" :  2.5 points", 1, 0.5, "2.5"},
      {"I give it 4/5.", 1, 0.8, "4"},
      {"{\"score\": null} but 2 / 5", 1, 0.4, "2"},
      {"{\"score\": -1} then nothing", 0, 0, ""},
      /* Nothing to read. */
      {"great answer", 0, 0, ""},
      {"", 0, 0, ""},
      {"score: 4", 0, 0, ""},
      {"4.5/5", 1, 1, "5"},
  };
  check_verdicts("{\"rule\": \"score\"}", cases,
                 sizeof(cases) / sizeof(cases[0]));
  static const vcase_t ten[] = {
      {"Rating: [[7]]", 1, 0.7, "7"},
      {"Rating: 7", 0, 0, ""},
      {"[[12]]", 1, 1, "10"},
  };
  check_verdicts("{\"rule\": \"score\", \"max_score\": 10, \"pattern\": "
                 "\"\\\\[\\\\[(\\\\d+(?:\\\\.\\\\d+)?)\\\\]\\\\]\"}",
                 ten, sizeof(ten) / sizeof(ten[0]));
}

/* Scores job (its members after the ids) with the SimpleQA-style task,
 * the engine taking judge requests when accept. */
static int score_job(const char *members, bool accept, char **out) {
  tally_task_t *task = ts_task(TASK("{\"system\": \"Be strict.\"}"), NULL, 0);
  cr_assert_not_null(task);
  tally_taskset_entry_t entry = {.task = task, .file = "task.json"};
  tally_taskset_t ts = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_buf_t b;
  tally_engine_init(&e, &ts);
  e.accept_judge = accept;
  tally_buf_init(&b);
  char job[2048];
  snprintf(job, sizeof(job),
           "{\"submission\": \"s1\", \"participant\": \"m\", \"contest\": "
           "\"bench\", \"task\": \"sqa\", \"problem\": \"Who?\", \"target\": "
           "\"Ann\", \"evaluations\": {\"answer\": \"Ann\"}%s}",
           members);
  int rc = tally_engine_score(&e, job, strlen(job), NULL, &b);
  if (rc == 0) {
    tally_buf_putc(&b, '\n');
    cr_assert_eq(tally_engine_summary(&e, &b), 0);
  }
  *out = strdup(b.data ? b.data : "");
  tally_buf_close(&b);
  tally_engine_close(&e);
  tally_task_free(task);
  return rc;
}

Test(judge, a_sample_without_a_verdict_asks_for_one) {
  char *out = NULL;
  cr_assert_eq(score_job("", true, &out), TALLY_ENGINE_JUDGE);
  cJSON *r = cJSON_Parse(out);
  cr_assert_not_null(r, "%s", out);
  cr_expect_str_eq(ts_str_at(r, "submission"), "s1");
  cr_expect_str_eq(ts_str_at(r, "system"), "Be strict.");
  const char *p = ts_str_at(r, "prompt");
  cr_expect(strstr(p, "Question: Who?\nGold target: Ann\nPredicted answer: "
                      "Ann\n") != NULL,
            "%s", p);
  cJSON_Delete(r);
  free(out);
  /* Offline (tally score), it is scored unjudged: 0, never guessed. */
  cr_assert_eq(score_job("", false, &out), 0);
  cr_expect(strstr(out, "\"score\":0,") != NULL, "%s", out);
  cr_expect(strstr(out, "\"judge\":\"unjudged\"") != NULL, "%s", out);
  free(out);
}

Test(judge, a_verdict_in_the_job_sets_the_outcome) {
  static const struct {
    const char *members;
    double score;
    const char *sample; /* in the summary's sample member */
  } cases[] = {
      {", \"judge\": {\"reply\": \"CORRECT\", \"model\": \"j\", \"hash\": "
       "\"ab\"}",
       1, "\"judge\":\"judged\",\"verdict\":\"CORRECT\""},
      {", \"judge\": {\"reply\": \"INCORRECT\"}", 0,
       "\"judge\":\"judged\",\"verdict\":\"INCORRECT\""},
      {", \"judge\": {\"reply\": \"no idea\"}", 0, "\"judge\":\"unparseable\""},
      {", \"judge\": {\"error\": \"HTTP 500\"}", 0, "\"judge\":\"unjudged\""},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *out = NULL;
    cr_assert_eq(score_job(cases[i].members, true, &out), 0, "%s",
                 cases[i].members);
    char want[64];
    snprintf(want, sizeof(want), "\"score\":%g,", cases[i].score);
    cr_expect(strstr(out, want) != NULL, "%s: %s", cases[i].members, out);
    cr_expect(strstr(out, cases[i].sample) != NULL, "%s: %s", cases[i].members,
              out);
    /* The operator's note quotes the reply or the error, not the
     * comparator. */
    cr_expect(strstr(out, "\"admin_text\":\"judge ") != NULL, "%s", out);
    free(out);
  }
}

Test(judge, the_judge_member_is_decoded_strictly) {
  static const struct {
    const char *members, *want;
  } cases[] = {
      {", \"judge\": \"CORRECT\"", "judge: must be an object"},
      {", \"judge\": {}", "judge: must hold either reply or error"},
      {", \"judge\": {\"reply\": \"A\", \"error\": \"x\"}",
       "judge: must hold either reply or error"},
      {", \"judge\": {\"reply\": 1}", "judge.reply: must be a string"},
      {", \"judge\": {\"grade\": \"A\"}",
       "judge.grade: unknown key (judge has reply, error, model and hash)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *out = NULL;
    cr_expect_eq(score_job(cases[i].members, true, &out), TALLY_EJOB);
    cr_expect(strstr(out, cases[i].want) != NULL, "%s: %s", cases[i].members,
              out);
    free(out);
  }
}

Test(judge, verdicts_are_kept_by_the_prompts_hash) {
  char a[65], b[65], c[65];
  tally_verdict_hash(NULL, "prompt", a);
  tally_verdict_hash("", "prompt", b);
  tally_verdict_hash("sys", "prompt", c);
  cr_expect_eq(strlen(a), 64);
  /* SHA-256 of "\0prompt". */
  cr_expect_str_eq(a, b);
  cr_expect_str_neq(a, c);
  size_t n = 0;
  char *t = tally_verdict_inject("{\"a\":1}\n", 8, "{\"reply\":\"A\"}", 13, &n);
  cr_expect_str_eq(t, "{\"a\":1,\"judge\":{\"reply\":\"A\"}}\n");
  cr_expect_eq(n, strlen(t));
  free(t);
  t = tally_verdict_inject("{ }", 3, "1", 1, &n);
  cr_expect_str_eq(t, "{ \"judge\":1}");
  free(t);
  cr_expect_null(tally_verdict_inject("[1]", 3, "1", 1, &n));
}
