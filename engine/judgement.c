/* A submission's ICPC judgement, from its testcases. */
#include "engine/judgement.h"

#include <string.h>

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *tally_judgement_testcase(double outcome, const cJSON *text) {
  if (outcome >= 1)
    return "AC";
  /* The first string of the text names what happened: CMS writes
   * ["Execution timed out"], ["Execution killed by signal"], ... and a
   * format with its arguments after it. */
  const cJSON *first = cJSON_IsArray(text) ? text->child : text;
  const char *s = cJSON_IsString(first) ? first->valuestring : "";
  if (starts(s, "Execution timed out"))
    return "TLE";
  if (starts(s, "Execution killed") || starts(s, "Execution failed") ||
      strcmp(s, "Memory limit exceeded") == 0)
    return "RTE";
  return "WA";
}

const char *tally_judgement(const tally_task_t *task, const tally_job_t *job,
                            const tally_result_t *res) {
  if (!res->evaluated || !job->evaluated)
    return "CE";
  if (task->ntestcases == 0 || job->evals == NULL)
    return task->max_score > 0 && res->score >= task->max_score ? "AC" : "WA";
  /* task->testcases is sorted by codename, as the CCS orders input files. */
  for (size_t i = 0; i < task->ntestcases; i++) {
    const char *j =
        tally_judgement_testcase(job->evals[i].outcome, job->evals[i].text);
    if (strcmp(j, "AC") != 0)
      return j;
  }
  return "AC";
}
