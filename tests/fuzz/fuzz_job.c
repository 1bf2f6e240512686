/* A libFuzzer target that scores arbitrary bytes as a job against four
 * fixed tasks, a GroupMin one, a Sum one, a benchmark task that takes
 * its expected answer, problem and category from the job (from_job) and
 * a judged one (its verdict in the job, or a judge request), as a worker
 * does, and checks that the reply is always one JSON object. */
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

static const char group_task[] =
    "{\"name\": \"aplusb\", \"score_type\": \"GroupMin\","
    " \"score_type_parameters\": [[40, \"0\"], [60, \"big_\"]],"
    " \"testcases\": {\"000\": true, \"001\": false,"
    " \"big_0\": {\"public\": false}, \"big_1\": true},"
    " \"score_precision\": 2, \"score_rounding\": \"subtask\","
    " \"time_limit\": 1.0}";

static const char sum_task[] =
    "{\"name\": \"sum\", \"score_type\": \"Sum\","
    " \"score_type_parameters\": 10.5,"
    " \"testcases\": {\"0\": false, \"1\": true, \"2\": false, \"3\": false},"
    " \"score_precision\": 1}";

static const char bench_task[] =
    "{\"name\": \"mmlu\", \"task_type\": \"output_only\", \"score_type\":"
    " \"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\":"
    " true}, \"comparator\": \"last_number\", \"from_job\": {\"target\":"
    " \"target\", \"problem\": \"doc_id\", \"category\": \"subject\"}}";

static const char judged_task[] =
    "{\"name\": \"sqa\", \"task_type\": \"output_only\", \"score_type\":"
    " \"Sum\", \"score_type_parameters\": 1, \"testcases\": {\"answer\":"
    " true}, \"from_job\": {\"target\": \"target\", \"question\": \"q\"},"
    " \"judge\": {\"rule\": \"score\", \"system\": \"s\"}}";

/* Parses one of the fixed tasks, or aborts: the target is useless
 * without both. */
static tally_task_t *fixed_task(const tally_registry_t *reg, const char *text) {
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "fixed.json");
  if (tally_task_parse(reg, text, strlen(text), &d, &task) != 0) {
    fprintf(stderr, "%s\n", d.count ? d.msgs[0] : "fixed task: error");
    abort();
  }
  tally_diag_close(&d);
  return task;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The tasks, the engine and the buffer live for the whole run, as in a
   * worker, so state carried from job to job is fuzzed too. */
  static tally_taskset_entry_t entries[4];
  static tally_taskset_t tasks = {.entries = entries, .count = 4};
  static tally_engine_t engine;
  static tally_buf_t out;
  static int ready;
  if (!ready) {
    tally_registry_t reg;
    if (tally_registry_init(&reg) != 0)
      abort();
    /* The entries are sorted by task name, as tally_taskset_find needs. */
    entries[0].task = fixed_task(&reg, group_task);
    entries[0].file = "aplusb.json";
    entries[1].task = fixed_task(&reg, bench_task);
    entries[1].file = "mmlu.json";
    entries[2].task = fixed_task(&reg, judged_task);
    entries[2].file = "sqa.json";
    entries[3].task = fixed_task(&reg, sum_task);
    entries[3].file = "sum.json";
    tally_registry_close(&reg);
    tally_engine_init(&engine, &tasks);
    engine.accept_judge = true;
    tally_buf_init(&out);
    ready = 1;
  }

  tally_buf_reset(&out);
  int rc = tally_engine_score(&engine, (const char *)data, size, NULL, &out);
  if (rc != 0 && rc != TALLY_EJOB && rc != TALLY_ENGINE_JUDGE)
    abort();
  /* Whatever the job, the reply is exactly one JSON object. */
  cJSON *reply = fuzz_reply(&out);
  cJSON_Delete(reply);
  return 0;
}
