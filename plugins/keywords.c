/* keyword_ratio, an example plugin primitive (an arena's "custom
 * evaluator"): the share of the ground truth's keywords (an array of
 * strings) that appear in the answer's text, ignoring ASCII case, on the
 * 0-1000 scale. An empty keyword list scores 1000. */
#include "engine/plugin.h"

#include <ctype.h>
#include <string.h>

static bool is_string(const cJSON *v) {
  return cJSON_IsString(v);
}

/* Whether needle occurs in hay, ignoring ASCII case. */
static bool contains(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (const char *h = hay; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] &&
           tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return true;
  }
  return n == 0;
}

static bool keywords_of(const cJSON *v) {
  if (!cJSON_IsArray(v))
    return false;
  for (const cJSON *k = v->child; k != NULL; k = k->next)
    if (!cJSON_IsString(k))
      return false;
  return true;
}

static double keyword_score(const void *state, const tally_prim_input_t *in,
                            tally_prim_note_t *note) {
  (void)state;
  (void)note;
  int total = 0, found = 0;
  for (const cJSON *k = in->truth->child; k != NULL; k = k->next, total++)
    found += contains(in->value->valuestring, k->valuestring);
  return total == 0 ? 1000.0 : 1000.0 * found / total;
}

static const tally_primitive_t keyword_ratio = {
    .version = TALLY_PRIMITIVE_VERSION,
    .name = "keyword_ratio",
    .flags = TALLY_PRIM_FIELD,
    .accepts = is_string,
    .score = keyword_score,
    .accepts_truth = keywords_of,
};

const int tally_plugin_abi = TALLY_PLUGIN_ABI;

int tally_plugin_init(tally_plugin_host_t *host);

int tally_plugin_init(tally_plugin_host_t *host) {
  return host->register_primitive(host, &keyword_ratio);
}
