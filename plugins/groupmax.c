/* GroupMax, an example plugin: a subtask's fraction is the best of its
 * outcomes, as in Kattis, DOMjudge and Hydro. */
#include "engine/plugin.h"

static const char *max_label(double outcome, const tally_subtask_t *st) {
  (void)st;
  if (outcome <= 0.0)
    return "Not correct";
  if (outcome >= 1.0)
    return "Correct";
  return "Partially correct";
}

static double max_reduce(const double *o, size_t n, const tally_subtask_t *st) {
  (void)st;
  double m = o[0];
  for (size_t i = 1; i < n; i++)
    if (o[i] > m)
      m = o[i];
  return m;
}

static const tally_score_type_t group_max = {
    .version = TALLY_SCORE_TYPE_VERSION,
    .name = "GroupMax",
    .flags = TALLY_SCORE_UNIT_OUTCOMES,
    .reduce = max_reduce,
    .label = max_label,
};

const int tally_plugin_abi = TALLY_PLUGIN_ABI;

int tally_plugin_init(tally_plugin_host_t *host);

int tally_plugin_init(tally_plugin_host_t *host) {
  return host->register_score_type(host, &group_max);
}
