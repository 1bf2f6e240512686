/* Dispatch to a score type's methods: the group machinery for group
 * types, the type's own score method for custom ones. */
#include "scoretypes/scoretype.h"

int tally_score(const tally_task_t *task, const tally_eval_t *evals,
                bool evaluated, tally_result_t *res, char *err, size_t errlen) {
  tally_result_reset(res);
  res->grouped = task->type->reduce != NULL;
  if (!evaluated) {
    res->evaluated = false;
    return 0;
  }
  if (task->type->reduce != NULL)
    return tally__group_score(task, evals, res, err, errlen);
  return task->type->score(task, evals, res, err, errlen);
}
