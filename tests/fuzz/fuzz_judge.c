/* A libFuzzer target for the judge's decoders (engine/judge.h): arbitrary
 * bytes as a task's "judge" config (its template checked and filled in),
 * or as a judge model's reply read with the grade rule, NeMo's score
 * reading or a score pattern (the first byte picks which); and as the
 * value tallyd adds to a job (redis/verdicts.h). A verdict is always an
 * outcome in [0, 1] with its text, or unparseable with outcome 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/judge.h"
#include "redis/verdicts.h"
#include <cjson/cJSON.h>

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tally_judge_t *judge_of(const char *json) {
  tally_diag_t d;
  tally_diag_init(&d, "judge.json");
  tally_jpath_t path;
  tally_jpath_init(&path);
  cJSON *v = cJSON_Parse(json);
  tally_judge_t *j = NULL;
  int rc = v != NULL ? tally_judge_parse(v, &j, &d, &path) : -1;
  if (v != NULL && rc != 0 && d.count == 0)
    abort(); /* refused without saying why */
  cJSON_Delete(v);
  tally_diag_close(&d);
  return j;
}

static void check_verdict(const tally_judge_t *j, const char *s, size_t n) {
  double outcome = -1;
  char verdict[48];
  tally_judge_state_t st =
      tally_judge_verdict(j, s, n, &outcome, verdict, sizeof(verdict));
  if (!(outcome >= 0 && outcome <= 1) || memchr(verdict, 0, 48) == NULL)
    abort();
  if (st == TALLY_JUDGE_UNPARSEABLE && (outcome != 0 || verdict[0] != 0))
    abort();
  if (st != TALLY_JUDGE_UNPARSEABLE &&
      (st != TALLY_JUDGE_JUDGED || verdict[0] == 0))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *s = (const char *)data + 1;
  size_t n = size - 1;
  char *text = malloc(n + 1);
  if (text == NULL)
    abort();
  memcpy(text, s, n);
  text[n] = '\0';
  switch (data[0] % 5) {
  case 0: { /* a config */
    tally_judge_t *j = judge_of(text);
    if (j != NULL) {
      tally_buf_t b;
      tally_buf_init(&b);
      tally_judge_prompt(j, "q", 1, "r", 1, "t", 1, &b);
      if (b.oom || b.data == NULL)
        abort();
      check_verdict(j, text, n);
      tally_buf_close(&b);
      tally_judge_free(j);
    }
    break;
  }
  case 1:
  case 2:
  case 3: {
    static const char pattern[] =
        "{\"rule\": \"score\", \"max_score\": 10, \"pattern\": "
        "\"\\\\[\\\\[(-?\\\\d+(?:\\\\.\\\\d+)?)\\\\]\\\\]\"}";
    static const char *const configs[] = {"{}", "{\"rule\": \"score\"}",
                                          pattern};
    tally_judge_t *j = judge_of(configs[data[0] % 5 - 1]);
    if (j == NULL)
      abort();
    check_verdict(j, s, n);
    tally_judge_free(j);
    break;
  }
  default: { /* a verdict added to a job */
    size_t len = 0;
    char *t = tally_verdict_inject("{\"a\":1}", 7, s, n, &len);
    if (t == NULL || len != 7 + 9 + n || t[len] != '\0')
      abort();
    free(t);
    char hash[TALLY_VERDICT_HASH_HEX + 1];
    tally_verdict_hash(NULL, text, hash);
    if (strlen(hash) != TALLY_VERDICT_HASH_HEX)
      abort();
    break;
  }
  }
  free(text);
  return 0;
}
