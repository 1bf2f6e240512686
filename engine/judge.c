/* A task's judge: its config, the prompt of a sample and the verdict of a
 * reply (engine/judge.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "engine/judge.h"
#include "config/error.h"
#include "config/json.h"

#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* The default templates; each names the three placeholders. */
static const char grade_template[] =
    "You grade answers to factual questions. Compare the predicted answer "
    "with the gold target and reply with exactly one word:\n"
    "CORRECT if the predicted answer states the gold target's meaning and "
    "contradicts nothing in it;\n"
    "INCORRECT if it states something that contradicts the gold target, "
    "even with hedging;\n"
    "NOT_ATTEMPTED if it gives no answer, or says it does not know.\n\n"
    "Question: {question}\n"
    "Gold target: {target}\n"
    "Predicted answer: {response}\n\n"
    "Grade:";
static const char score_template[] =
    "Rate the response below from 1 (useless) to 5 (fully correct and "
    "complete).\n\n"
    "Task:\n{question}\n\n"
    "Response:\n{response}\n\n"
    "Reference answer (may be empty):\n{target}\n\n"
    "Reply with a JSON object: {{\"score\": <1-5>, \"reasoning\": \"<one "
    "sentence>\"}}";

const char *tally_judge_state_name(tally_judge_state_t s) {
  switch (s) {
  case TALLY_JUDGE_JUDGED:
    return "judged";
  case TALLY_JUDGE_UNPARSEABLE:
    return "unparseable";
  case TALLY_JUDGE_UNJUDGED:
    return "unjudged";
  default:
    return NULL;
  }
}

void tally_judge_free(tally_judge_t *j) {
  if (j == NULL)
    return;
  free(j->template_text);
  free(j->system);
  pcre2_code_free(j->pattern);
  free(j);
}

static const char *const placeholders[] = {"question", "response", "target"};

/* The placeholder at s (just after a "{"): its index, or -1. */
static int placeholder(const char *s, size_t *len) {
  for (int k = 0; k < 3; k++) {
    size_t n = strlen(placeholders[k]);
    if (strncmp(s, placeholders[k], n) == 0 && s[n] == '}') {
      *len = n + 1;
      return k;
    }
  }
  return -1;
}

/* Checks a template: every "{" opens a placeholder or is doubled, every
 * "}" closes one or is doubled (Python's str.format, which NeMo's
 * templates use). Returns NULL, or what is wrong. */
static const char *template_error(const char *t, bool *question) {
  *question = false;
  for (const char *s = t; *s; s++) {
    size_t n;
    if (s[0] == '{' && s[1] == '{') {
      s++;
    } else if (s[0] == '}' && s[1] == '}') {
      s++;
    } else if (s[0] == '{') {
      int k = placeholder(s + 1, &n);
      if (k < 0)
        return "has a \"{\" that opens none of {question}, {response} and "
               "{target} (write {{ for a brace)";
      *question |= k == 0;
      s += n;
    } else if (s[0] == '}') {
      return "has a \"}\" that closes no placeholder (write }} for a brace)";
    }
  }
  return NULL;
}

void tally_judge_prompt(const tally_judge_t *j, const char *question,
                        size_t qlen, const char *response, size_t rlen,
                        const char *target, size_t tlen, tally_buf_t *out) {
  const char *text[3] = {question, response, target};
  size_t len[3] = {qlen, rlen, tlen};
  const char *s = j->template_text, *run = s;
  while (*s) {
    size_t n;
    int k;
    if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
      tally_buf_put(out, run, (size_t)(s - run) + 1);
      s += 2;
      run = s;
    } else if (s[0] == '{' && (k = placeholder(s + 1, &n)) >= 0) {
      tally_buf_put(out, run, (size_t)(s - run));
      if (len[k] > 0)
        tally_buf_put(out, text[k], len[k]);
      s += n + 1;
      run = s;
    } else {
      s++;
    }
  }
  tally_buf_put(out, run, (size_t)(s - run));
}

static int parse_string(const cJSON *m, char **slot, tally_diag_t *d,
                        tally_jpath_t *path, const char *what) {
  if (!cJSON_IsString(m) || m->valuestring[0] == '\0')
    return tally_diag_add(d, path, "must be a non-empty string (%s)", what);
  if ((*slot = strdup(m->valuestring)) == NULL)
    return tally_diag_add(d, path, "out of memory");
  return 0;
}

int tally_judge_parse(const cJSON *v, tally_judge_t **out, tally_diag_t *d,
                      tally_jpath_t *path) {
  *out = NULL;
  if (!cJSON_IsObject(v))
    return tally_diag_add(d, path,
                          "must be an object (template, system, rule, "
                          "max_score, pattern)");
  tally_judge_t *j = calloc(1, sizeof(*j));
  if (j == NULL)
    return tally_diag_add(d, path, "out of memory");
  j->rule = TALLY_JUDGE_GRADE;
  j->max_score = 5;
  int rc = 0;
  const cJSON *rule = cJSON_GetObjectItemCaseSensitive(v, "rule");
  if (cJSON_IsString(rule) && strcmp(rule->valuestring, "score") == 0)
    j->rule = TALLY_JUDGE_SCORE;
  bool has_max = false;
  for (const cJSON *m = v->child; m; m = m->next) {
    size_t at = tally_jpath_key(path, m->string);
    bool twice = false;
    for (const cJSON *e = v->child; e != m && !twice; e = e->next)
      twice = strcmp(e->string, m->string) == 0;
    if (twice) {
      rc = tally_diag_add(d, path, "key appears twice");
    } else if (strcmp(m->string, "template") == 0) {
      rc |= parse_string(m, &j->template_text, d, path,
                         "the prompt, with {question}, {response} and "
                         "{target}");
    } else if (strcmp(m->string, "system") == 0) {
      rc |= parse_string(m, &j->system, d, path, "the system message");
    } else if (strcmp(m->string, "rule") == 0) {
      if (!cJSON_IsString(m) || (strcmp(m->valuestring, "grade") != 0 &&
                                 strcmp(m->valuestring, "score") != 0))
        rc = tally_diag_add(d, path, "must be \"grade\" or \"score\"");
    } else if (strcmp(m->string, "max_score") == 0) {
      has_max = true;
      if (!cJSON_IsNumber(m) || !(m->valuedouble > 0) ||
          !isfinite(m->valuedouble))
        rc = tally_diag_add(d, path, "must be a number above 0");
      else
        j->max_score = m->valuedouble;
    } else if (strcmp(m->string, "pattern") == 0) {
      int code;
      PCRE2_SIZE off;
      if (!cJSON_IsString(m) || m->valuestring[0] == '\0') {
        rc = tally_diag_add(d, path,
                            "must be a non-empty string (a regular "
                            "expression whose first group is the score)");
      } else if ((j->pattern = pcre2_compile(
                      (PCRE2_SPTR)m->valuestring, tally_json_strlen(m),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code,
                      &off, NULL)) == NULL) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        rc = tally_diag_add(d, path, "is not a regular expression: %s at %zu",
                            (const char *)msg, (size_t)off);
      }
    } else {
      rc = tally_diag_add(d, path,
                          "unknown key (judge has template, system, rule, "
                          "max_score and pattern)");
    }
    tally_jpath_restore(path, at);
  }
  if (j->rule == TALLY_JUDGE_GRADE && (has_max || j->pattern != NULL)) {
    size_t at = tally_jpath_key(path, has_max ? "max_score" : "pattern");
    rc = tally_diag_add(d, path, "only the rule \"score\" takes it");
    tally_jpath_restore(path, at);
  }
  if (rc == 0 && j->template_text == NULL &&
      (j->template_text =
           strdup(j->rule == TALLY_JUDGE_GRADE ? grade_template
                                               : score_template)) == NULL)
    rc = tally_diag_add(d, path, "out of memory");
  const char *why =
      rc == 0 ? template_error(j->template_text, &j->uses_question) : NULL;
  if (why != NULL) {
    size_t at = tally_jpath_key(path, "template");
    rc = tally_diag_add(d, path, "%s", why);
    tally_jpath_restore(path, at);
  }
  if (rc != 0) {
    tally_judge_free(j);
    return TALLY_ECONFIG;
  }
  *out = j;
  return 0;
}

/* Grades: the first word (a run of letters and _) that is a grade, or a
 * reply that is one letter A, B or C between white space. */
static tally_judge_state_t grade(const char *s, size_t len, double *outcome,
                                 char *verdict, size_t vlen) {
  static const char *const grades[] = {"CORRECT", "INCORRECT", "NOT_ATTEMPTED"};
  size_t a = 0, b = len;
  while (a < b && (s[a] == ' ' || (s[a] >= '\t' && s[a] <= '\r')))
    a++;
  while (b > a && (s[b - 1] == ' ' || (s[b - 1] >= '\t' && s[b - 1] <= '\r')))
    b--;
  int found = -1;
  if (b == a + 1 && s[a] >= 'A' && s[a] <= 'C')
    found = s[a] - 'A';
  for (size_t i = 0; i < len && found < 0;) {
    size_t k = i;
    while (k < len && ((s[k] >= 'A' && s[k] <= 'Z') ||
                       (s[k] >= 'a' && s[k] <= 'z') || s[k] == '_'))
      k++;
    for (int g = 0; g < 3 && k > i && found < 0; g++)
      if (k - i == strlen(grades[g]) && memcmp(s + i, grades[g], k - i) == 0)
        found = g;
    i = k > i ? k : i + 1;
  }
  if (found < 0)
    return TALLY_JUDGE_UNPARSEABLE;
  *outcome = found == 0 ? 1.0 : 0.0;
  snprintf(verdict, vlen, "%s", grades[found]);
  return TALLY_JUDGE_JUDGED;
}

/* The digit value of a decimal digit c (Unicode category Nd), or -1:
 * Unicode lays each script's digits out 0 to 9 in a run. */
static int digit_value(utf8proc_int32_t c) {
  if (utf8proc_category(c) != UTF8PROC_CATEGORY_ND)
    return -1;
  utf8proc_int32_t start = c;
  while (start > 0 && utf8proc_category(start - 1) == UTF8PROC_CATEGORY_ND)
    start--;
  return (int)((c - start) % 10);
}

/* A matched number's text (n bytes) as Python's float() reads it: any
 * script's decimal digits. */
static bool read_number(const char *s, size_t n, double *x) {
  char buf[64];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < sizeof(buf);) {
    utf8proc_int32_t c;
    utf8proc_ssize_t m = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                          (utf8proc_ssize_t)(n - i), &c);
    if (m <= 0)
      return false;
    int dv = c < 0x80 ? -1 : digit_value(c);
    if (c >= 0x80 && dv < 0)
      return false;
    buf[k++] = dv >= 0 ? (char)('0' + dv) : (char)c;
    i += (size_t)m;
  }
  buf[k] = '\0';
  char *end;
  *x = strtod(buf, &end);
  return k > 0 && *end == '\0' && isfinite(*x);
}

/* The first match of re in s: group 1's text as a number into *x. */
static bool match_number(const char *re_text, pcre2_code *re, const char *s,
                         size_t len, double *x) {
  pcre2_code *own = NULL;
  if (re == NULL) {
    int code;
    PCRE2_SIZE off;
    re = own = pcre2_compile((PCRE2_SPTR)re_text, PCRE2_ZERO_TERMINATED,
                             PCRE2_MATCH_INVALID_UTF | PCRE2_UTF | PCRE2_UCP,
                             &code, &off, NULL);
    if (re == NULL)
      return false;
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  bool ok = false;
  if (md != NULL && pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, NULL) >= 1) {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    uint32_t groups = pcre2_get_ovector_count(md);
    size_t g = groups > 1 && ov[2] != PCRE2_UNSET ? 1 : 0;
    size_t n = ov[2 * g + 1] - ov[2 * g];
    ok = n > 0 && n < 64 && read_number(s + ov[2 * g], n, x);
  }
  pcre2_match_data_free(md);
  pcre2_code_free(own);
  return ok;
}

/* A JSON object's "score": a number, true/false, or a string holding a
 * number, as Python's float() takes them. */
static bool json_score(const char *s, size_t len, double *x) {
  /* The whole reply, as json.loads takes it: nothing after the value but
   * white space. */
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return false;
  memcpy(copy, s, len);
  copy[len] = '\0';
  cJSON *v = strlen(copy) == len ? cJSON_ParseWithOpts(copy, NULL, true) : NULL;
  free(copy);
  const cJSON *sc =
      cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "score") : NULL;
  bool ok = false;
  if (cJSON_IsNumber(sc)) {
    *x = sc->valuedouble;
    ok = true;
  } else if (cJSON_IsBool(sc)) {
    *x = cJSON_IsTrue(sc) ? 1 : 0;
    ok = true;
  } else if (cJSON_IsString(sc)) {
    const char *t = sc->valuestring;
    while (*t == ' ' || (*t >= '\t' && *t <= '\r'))
      t++;
    char *end;
    *x = strtod(t, &end);
    while (end != t && (*end == ' ' || (*end >= '\t' && *end <= '\r')))
      end++;
    ok = end != t && *end == '\0';
  }
  cJSON_Delete(v);
  return ok && isfinite(*x);
}

tally_judge_state_t tally_judge_verdict(const tally_judge_t *j,
                                        const char *reply, size_t len,
                                        double *outcome, char *verdict,
                                        size_t vlen) {
  *outcome = 0;
  if (vlen > 0)
    verdict[0] = '\0';
  if (reply == NULL)
    len = 0, reply = "";
  if (j->rule == TALLY_JUDGE_GRADE)
    return grade(reply, len, outcome, verdict, vlen);
  double x = 0;
  bool ok;
  if (j->pattern != NULL)
    ok = match_number(NULL, j->pattern, reply, len, &x);
  else
    ok = json_score(reply, len, &x) ||
         match_number("\"score\"\\s*:\\s*(\\d+(?:\\.\\d+)?)", NULL, reply, len,
                      &x) ||
         match_number("\\b(\\d+)\\s*/\\s*\\d+\\b", NULL, reply, len, &x);
  if (!ok)
    return TALLY_JUDGE_UNPARSEABLE;
  if (x > j->max_score)
    x = j->max_score;
  double r = x / j->max_score;
  *outcome = r < 0 ? 0 : r > 1 ? 1 : r;
  snprintf(verdict, vlen, "%.17g", x);
  /* A whole number as one; else the shortest text that reads back the
   * same. */
  if (x == floor(x) && fabs(x) < 1e15) {
    snprintf(verdict, vlen, "%.0f", x);
    return TALLY_JUDGE_JUDGED;
  }
  for (int p = 1; p <= 17; p++) {
    char t[40];
    snprintf(t, sizeof(t), "%.*g", p, x);
    if (strtod(t, NULL) == x) {
      snprintf(verdict, vlen, "%s", t);
      break;
    }
  }
  return TALLY_JUDGE_JUDGED;
}
