/* A task's judge (docs/benchmarks.md#answers-sent-to-a-judge-model): the
 * prompt a sample's judge request carries, built from the task's
 * template, and the verdict read from the judge model's reply with the
 * task's rule. The request itself is tallyd's (daemon/judge.c); here
 * everything is pure. */
#ifndef TALLY_ENGINE_JUDGE_H
#define TALLY_ENGINE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config/diag.h"
#include "config/jsonw.h"

typedef enum tally_judge_rule_e {
  /* SimpleQA's grades: the first of the words CORRECT, INCORRECT and
   * NOT_ATTEMPTED in the reply, or a reply that is just A, B or C;
   * CORRECT is 1, the others 0. */
  TALLY_JUDGE_GRADE,
  /* A score out of max_score: NeMo Evaluator's reading (a JSON object's
   * "score", then "score": N anywhere, then N/M), or the task's pattern;
   * min(score / max_score, 1), and 0 below 0. */
  TALLY_JUDGE_SCORE
} tally_judge_rule_t;

typedef struct tally_judge_s {
  char *template_text; /* with {question}, {response}, {target} */
  char *system;        /* NULL: no system message */
  tally_judge_rule_t rule;
  double max_score;
  void *pattern; /* a pcre2_code, or NULL */
  bool uses_question;
} tally_judge_t;

/* What became of a sample of a judged task (the sample member's
 * "judge"). */
typedef enum tally_judge_state_e {
  TALLY_JUDGE_NONE = 0,    /* the task has no judge */
  TALLY_JUDGE_NEEDED,      /* no verdict yet: tallyd asks the judge */
  TALLY_JUDGE_JUDGED,      /* the reply gave a verdict */
  TALLY_JUDGE_UNPARSEABLE, /* the reply gave none: recorded, not guessed */
  TALLY_JUDGE_UNJUDGED     /* the judge could not be asked, or failed */
} tally_judge_state_t;

/* "judged", "unparseable", "unjudged", or NULL for NONE and NEEDED. */
const char *tally_judge_state_name(tally_judge_state_t s);

/* Decodes the task key "judge" (v) into a new *out. path is the path of
 * v; it is restored before returning. Reports each problem to d and
 * returns TALLY_ECONFIG, or 0. */
int tally_judge_parse(const cJSON *v, tally_judge_t **out, tally_diag_t *d,
                      tally_jpath_t *path);
void tally_judge_free(tally_judge_t *j);

/* Appends the prompt: the template with its placeholders replaced by the
 * texts given (any bytes; NULL when the length is 0). */
void tally_judge_prompt(const tally_judge_t *j, const char *question,
                        size_t qlen, const char *response, size_t rlen,
                        const char *target, size_t tlen, tally_buf_t *out);

/* Reads the verdict from reply (len bytes, any bytes) with j's rule.
 * Returns TALLY_JUDGE_JUDGED with *outcome in [0, 1] and the verdict's
 * text in verdict (the grade, or the score as a number), or
 * TALLY_JUDGE_UNPARSEABLE with *outcome 0 and verdict "". */
tally_judge_state_t tally_judge_verdict(const tally_judge_t *j,
                                        const char *reply, size_t len,
                                        double *outcome, char *verdict,
                                        size_t vlen);

#endif
