/* A libFuzzer target that scores arbitrary bytes as a job against an
 * answer task that uses every primitive, and checks that the reply is one
 * JSON object whose scores, when it has them, lie in [0, 1000]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "fuzz_reply.h"

/* Makes UBSan reports fatal, so libFuzzer counts them as crashes. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

static const char task_text[] =
    "{\"name\": \"every\", \"task_type\": \"answer\", \"scoring\": {"
    "\"type\": \"deterministic\", \"dimensions\": ["
    "{\"name\": \"exact\", \"weight\": 0.1, \"primitive\": "
    "\"exact_match\", \"field\": \"e\", \"ground_truth_field\": \"e\"},"
    "{\"name\": \"ratio\", \"weight\": 0.1, \"primitive\": "
    "\"exact_match_ratio\", \"field\": \"r\", \"ground_truth_field\": "
    "\"r\"},"
    "{\"name\": \"num\", \"weight\": 0.1, \"primitive\": "
    "\"numeric_tolerance\", \"field\": \"n\", \"ground_truth_field\": "
    "\"n\", \"tolerance\": 0.5},"
    "{\"name\": \"fuzzy\", \"weight\": 0.1, \"primitive\": "
    "\"fuzzy_string\", \"field\": \"s\", \"ground_truth_field\": \"s\"},"
    "{\"name\": \"cover\", \"weight\": 0.1, \"primitive\": "
    "\"coverage_ratio\", \"field\": \"c\", \"ground_truth_field\": "
    "\"c\"},"
    "{\"name\": \"overlap\", \"weight\": 0.1, \"primitive\": "
    "\"set_overlap\", \"field\": \"o\", \"ground_truth_field\": \"o\", "
    "\"method\": \"jaccard\"},"
    "{\"name\": \"speed\", \"weight\": 0.2, \"primitive\": "
    "\"time_decay\", \"time_limit_secs\": 60, \"public\": false},"
    "{\"name\": \"tokens\", \"weight\": 0.1, \"primitive\": "
    "\"token_efficiency\"},"
    "{\"name\": \"calls\", \"weight\": 0.1, \"primitive\": "
    "\"call_efficiency\"}]},"
    "\"ground_truth\": {\"e\": {\"a\": [1, \"x\"]}, \"r\": [1, 2, 3], "
    "\"n\": [1.5, 2], \"s\": \"Hello World\", \"c\": [\"q1\", \"q2\", "
    "\"q1\"], \"o\": [1, 2]},"
    "\"constraints\": {\"time_limit_secs\": 30, \"token_budget\": 1000, "
    "\"max_llm_calls\": 5},"
    "\"answer_format\": {\"e\": {\"type\": \"object\", \"required\": "
    "true}, \"s\": {\"type\": \"string\"}}, \"score_precision\": 2}";

/* Whether the number member key of obj lies in [0, 1000]. */
static int in_range(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return v == NULL ||
         (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tally_taskset_entry_t entry;
  static tally_taskset_t tasks = {.entries = &entry, .count = 1};
  static tally_engine_t engine;
  static tally_buf_t out;
  static int ready;
  if (!ready) {
    tally_registry_t reg;
    tally_diag_t d;
    if (tally_registry_init(&reg) != 0)
      abort();
    tally_diag_init(&d, "every.json");
    if (tally_task_parse(&reg, task_text, strlen(task_text), &d, &entry.task) !=
        0) {
      fprintf(stderr, "%s\n", d.count ? d.msgs[0] : "task: error");
      abort();
    }
    tally_diag_close(&d);
    tally_registry_close(&reg);
    entry.file = "every.json";
    tally_engine_init(&engine, &tasks);
    tally_buf_init(&out);
    ready = 1;
  }
  tally_buf_reset(&out);
  int rc = tally_engine_score(&engine, (const char *)data, size, NULL, &out);
  if (rc != 0 && rc != TALLY_EJOB)
    abort();
  cJSON *reply = fuzz_reply(&out);
  const cJSON *bd = cJSON_GetObjectItemCaseSensitive(reply, "score_breakdown");
  int ok = in_range(reply, "score") && in_range(reply, "public_score");
  for (const cJSON *dim = bd ? bd->child : NULL; ok && dim; dim = dim->next)
    ok = in_range(dim, "score");
  if (!ok) {
    fprintf(stderr, "a score outside [0, 1000]: %s\n", out.data);
    abort();
  }
  cJSON_Delete(reply);
  /* A scored match's summary is one JSON object with its match member. */
  if (rc == 0) {
    tally_buf_reset(&out);
    if (tally_engine_summary(&engine, &out) != 0)
      abort();
    if (out.len > 0) {
      cJSON *summary = cJSON_Parse(out.data);
      if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(summary, "match"))) {
        fprintf(stderr, "a summary without its match: %s\n", out.data);
        abort();
      }
      cJSON_Delete(summary);
    }
  }
  return 0;
}
