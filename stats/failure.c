/* Failure categories of benchmark samples (failure.h). The rules are
 * docs/benchmarks.md's, tried in order; text rules match anywhere,
 * ignoring ASCII case. */
#include "stats/failure.h"
#include "config/utext.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *const tally_failure_categories[] = {"server_error",
                                                "turn_budget_exhausted",
                                                "context_window_exceeded",
                                                "budget_exceeded",
                                                "rate_limit",
                                                "timeout",
                                                "model_error",
                                                "empty",
                                                "refusal",
                                                "test_failure",
                                                "execution_timeout",
                                                "runtime_crash",
                                                "output_limit",
                                                "format_error",
                                                NULL};

const char *const tally_failure_refusals[] = {
    "I cannot",    "I'm sorry", "I'm unable",
    "I can't",     "as an AI",  "I don't have the ability",
    "I apologize", NULL};

/* Whether hay (n bytes) holds needle, ignoring ASCII case. */
static bool has(const char *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (m == 0)
    return false;
  for (size_t i = 0; i + m <= n; i++)
    if (strncasecmp(hay + i, needle, m) == 0)
      return true;
  return false;
}

/* Whether the text holds a status code: a run of exactly three digits
 * (no digit on either side) from lo to hi. */
static bool status(const char *s, size_t n, int lo, int hi) {
  for (size_t i = 0; i < n;) {
    if (s[i] < '0' || s[i] > '9') {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9')
      j++;
    if (j - i == 3) {
      int v = (s[i] - '0') * 100 + (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
      if (v >= lo && v <= hi)
        return true;
    }
    i = j;
  }
  return false;
}

const char *tally_failure_of_error(const cJSON *error) {
  char num[32];
  const char *t;
  size_t n;
  if (cJSON_IsNumber(error)) {
    double v = error->valuedouble;
    snprintf(num, sizeof(num), "%.0f", fabs(v) < 1e15 ? v : 0.0);
    t = num;
  } else if (cJSON_IsString(error)) {
    t = error->valuestring;
  } else {
    return NULL;
  }
  n = strlen(t);
  if (status(t, n, 504, 504) || has(t, n, "gateway timeout") ||
      has(t, n, "upstream timeout"))
    return "server_error";
  if (has(t, n, "turn budget"))
    return "turn_budget_exhausted";
  if (has(t, n, "context length") || has(t, n, "context window"))
    return "context_window_exceeded";
  if (has(t, n, "budget"))
    return "budget_exceeded";
  if (status(t, n, 429, 429) || has(t, n, "rate"))
    return "rate_limit";
  if (status(t, n, 408, 408) || has(t, n, "timeout"))
    return "timeout";
  if (status(t, n, 500, 599) || has(t, n, "connection"))
    return "server_error";
  return "model_error";
}

bool tally_failure_is_cause(const char *name) {
  static const char *const causes[] = {"test_failure", "execution_timeout",
                                       "runtime_crash", "output_limit"};
  for (size_t i = 0; name != NULL && i < 4; i++)
    if (strcmp(name, causes[i]) == 0)
      return true;
  return false;
}

const char *tally_failure_classify(const tally_sample_facts_t *f,
                                   const char *const *refusals, size_t n) {
  bool has_error = f->error != NULL &&
                   (cJSON_IsNumber(f->error) ||
                    (cJSON_IsString(f->error) && f->error->valuestring[0]));
  if (has_error)
    return tally_failure_of_error(f->error);
  if (f->response != NULL) {
    if (tally_utext_blank(f->response, f->response_len))
      return "empty";
    if (refusals == NULL) {
      refusals = tally_failure_refusals;
      for (n = 0; refusals[n] != NULL; n++)
        ;
    }
    for (size_t i = 0; i < n; i++)
      if (has(f->response, f->response_len, refusals[i]))
        return "refusal";
  }
  if (!f->correct && tally_failure_is_cause(f->cause))
    for (size_t i = 0; tally_failure_categories[i] != NULL; i++)
      if (strcmp(tally_failure_categories[i], f->cause) == 0)
        return tally_failure_categories[i];
  if (!f->correct && f->extracted == 0)
    return "format_error";
  return NULL;
}

size_t tally_failure_preview_len(const char *s, size_t n, size_t max) {
  size_t i = 0;
  for (size_t k = 0; k < max && i < n; k++) {
    unsigned char c = (unsigned char)s[i];
    size_t len = c < 0x80    ? 1
                 : c >= 0xf0 ? 4
                 : c >= 0xe0 ? 3
                 : c >= 0xc0 ? 2
                             : 1;
    if (i + len > n)
      len = 1;
    for (size_t j = 1; j < len; j++)
      if (((unsigned char)s[i + j] & 0xc0) != 0x80)
        len = 1;
    i += len;
  }
  return i;
}
