/* The public board's freeze in force (freezes.h): the config's rule and
 * the operator's word. */
#include "contest/freezes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tally_freeze_word_parse(const char *s, size_t len, tally_freeze_word_t *w) {
  w->kind = TALLY_FREEZE_CONFIGURED;
  w->at = NAN;
  if (len == 6 && memcmp(s, "lifted", 6) == 0) {
    w->kind = TALLY_FREEZE_LIFTED;
    return 0;
  }
  if (len < 4 || len >= TALLY_FREEZE_WORD_MAX || memcmp(s, "at ", 3) != 0)
    return -1;
  char num[TALLY_FREEZE_WORD_MAX];
  memcpy(num, s + 3, len - 3);
  num[len - 3] = '\0';
  /* Digits, at most one point, digits: no sign, exponent or spaces. */
  size_t digits = 0, points = 0;
  for (const char *p = num; *p; p++) {
    if (*p >= '0' && *p <= '9')
      digits++;
    else if (*p == '.' && points++ == 0 && digits > 0 && p[1] != '\0')
      continue;
    else
      return -1;
  }
  double at = strtod(num, NULL);
  /* Up to the end of year 9999, as RFC 3339 times go: a larger number is
   * no time, and would not be written back as it was read. */
  if (digits == 0 || !isfinite(at) || at > TALLY_FREEZE_AT_MAX)
    return -1;
  w->kind = TALLY_FREEZE_AT;
  w->at = at;
  return 0;
}

void tally_freeze_word_text(const tally_freeze_word_t *w, char *buf) {
  if (w->kind == TALLY_FREEZE_LIFTED)
    snprintf(buf, TALLY_FREEZE_WORD_MAX, "lifted");
  else if (w->kind == TALLY_FREEZE_AT && isfinite(w->at) && w->at >= 0)
    snprintf(buf, TALLY_FREEZE_WORD_MAX, "at %.3f", w->at);
  else
    buf[0] = '\0';
}

double tally_freeze_in_force(double freeze, double end, double unfreeze_after,
                             const tally_freeze_word_t *w, double now) {
  if (w != NULL && w->kind == TALLY_FREEZE_LIFTED)
    return NAN;
  if (w != NULL && w->kind == TALLY_FREEZE_AT)
    return now >= w->at ? w->at : NAN;
  if (isnan(freeze) || now < freeze)
    return NAN;
  if (!isnan(unfreeze_after) && now >= end + unfreeze_after)
    return NAN;
  return freeze;
}
