/* code_sandbox (docs/comparators.md#code_sandbox): NeMo Evaluator's
 * scorer of generated code. The code is the response's last fenced block
 * (```python or ```, then a newline), or the whole response; the expected
 * answer is the problem's harness, a JSON object with "prompt", "test"
 * and "entry_point" (or NeMo's "_prompt", "_test", "_entry_point"). The
 * program prompt + code + "\n" + test + "\ncheck(" + entry_point + ")"
 * runs in the sandbox (sandbox/sandbox.h); it scores 1 when it exits 0
 * within the limits, else 0, the reason in the admin text. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "config/json.h"
#include "config/jsonw.h"
#include "sandbox/sandbox.h"
#include "tasktypes/comparator.h"

#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct code_state_s {
  tally_sandbox_opts_t opts;
  char *words[17]; /* the command, owned */
  pcre2_code *fence;
} code_state_t;

static void code_free(void *p) {
  code_state_t *s = p;
  if (s == NULL)
    return;
  for (size_t i = 0; s->words[i] != NULL; i++)
    free(s->words[i]);
  pcre2_code_free(s->fence);
  free(s);
}

/* A number parameter in [lo, hi], into *out. */
static int number(const cJSON *v, double lo, double hi, double *out,
                  tally_diag_t *d, tally_jpath_t *path, const char *what) {
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
    return tally_diag_add(d, path, "must be %s from %g to %g", what, lo, hi);
  *out = v->valuedouble;
  return 0;
}

static int code_parse(const cJSON *params, void **state, tally_diag_t *d,
                      tally_jpath_t *path) {
  code_state_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return tally_diag_add(d, path, "out of memory");
  tally_sandbox_defaults(&s->opts);
  int rc = 0;
  if (params != NULL && !cJSON_IsObject(params))
    rc = tally_diag_add(d, path, "must be an object");
  for (const cJSON *m = params != NULL ? params->child : NULL; m; m = m->next) {
    size_t at = tally_jpath_key(path, m->string);
    double x = 0;
    if (strcmp(m->string, "command") == 0) {
      int n = cJSON_GetArraySize(m);
      if (!cJSON_IsArray(m) || n < 1 || n > 16) {
        rc = tally_diag_add(d, path,
                            "must be a list of 1 to 16 words (the "
                            "interpreter's command line)");
      } else {
        size_t i = 0;
        for (const cJSON *e = m->child; e; e = e->next, i++) {
          size_t at2 = tally_jpath_index(path, i);
          if (!cJSON_IsString(e) || e->valuestring[0] == '\0')
            rc = tally_diag_add(d, path, "must be a non-empty string");
          else if ((s->words[i] = strdup(e->valuestring)) == NULL)
            rc = tally_diag_add(d, path, "out of memory");
          tally_jpath_restore(path, at2);
        }
        s->opts.command = (const char *const *)s->words;
      }
    } else if (strcmp(m->string, "wall_time") == 0) {
      if ((rc |= number(m, 0.01, 600, &x, d, path, "a number of seconds")) == 0)
        s->opts.wall_s = x;
    } else if (strcmp(m->string, "cpu_time") == 0) {
      if ((rc |= number(m, 0.01, 600, &x, d, path, "a number of seconds")) == 0)
        s->opts.cpu_s = x;
    } else if (strcmp(m->string, "memory") == 0) {
      if ((rc |= number(m, 16 << 20, 64.0 * (1 << 30), &x, d, path,
                        "a number of bytes")) == 0)
        s->opts.memory = (uint64_t)x;
    } else if (strcmp(m->string, "processes") == 0) {
      if ((rc |= number(m, 1, 4096, &x, d, path, "a whole number")) == 0 &&
          x != floor(x))
        rc = tally_diag_add(d, path, "must be a whole number from 1 to 4096");
      else if (rc == 0)
        s->opts.processes = (unsigned)x;
    } else if (strcmp(m->string, "file_size") == 0) {
      if ((rc |= number(m, 4096, 4.0 * (1 << 30), &x, d, path,
                        "a number of bytes")) == 0)
        s->opts.file_size = (uint64_t)x;
    } else if (strcmp(m->string, "output") == 0) {
      if ((rc |= number(m, 1024, 256.0 * (1 << 20), &x, d, path,
                        "a number of bytes")) == 0)
        s->opts.output = (uint64_t)x;
    } else {
      rc = tally_diag_add(d, path,
                          "unknown key (code_sandbox has command, wall_time, "
                          "cpu_time, memory, processes, file_size and "
                          "output)");
    }
    tally_jpath_restore(path, at);
  }
  int code;
  PCRE2_SIZE off;
  s->fence =
      pcre2_compile((PCRE2_SPTR) "```(?:python)?\\s*\\n(.+?)```",
                    PCRE2_ZERO_TERMINATED, PCRE2_DOTALL, &code, &off, NULL);
  if (s->fence == NULL)
    rc = tally_diag_add(d, path, "out of memory");
  if (rc != 0) {
    code_free(s);
    return TALLY_ECONFIG;
  }
  *state = s;
  return 0;
}

/* The code of a response: its last fenced block, or all of it. */
static void code_of(const code_state_t *s, const char *resp, size_t len,
                    const char **code, size_t *code_len, bool *fenced) {
  *code = resp != NULL ? resp : "";
  *code_len = len;
  *fenced = false;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(s->fence, NULL);
  if (md == NULL || resp == NULL)
    goto done;
  for (PCRE2_SIZE start = 0; start <= len;) {
    int m = pcre2_match(s->fence, (PCRE2_SPTR)resp, len, start, 0, md, NULL);
    if (m < 2)
      break;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *code = resp + ov[2];
    *code_len = ov[3] - ov[2];
    *fenced = true;
    start = ov[1];
  }
done:
  pcre2_match_data_free(md);
}

/* A member of the harness under its name or NeMo's ("_" first). */
static const char *harness_text(const cJSON *h, const char *name,
                                const char *dflt) {
  char nemo[32];
  snprintf(nemo, sizeof(nemo), "_%s", name);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, name);
  if (v == NULL)
    v = cJSON_GetObjectItemCaseSensitive(h, nemo);
  return cJSON_IsString(v) ? v->valuestring : v == NULL ? dflt : NULL;
}

static int code_compare(const void *state, const char *output,
                        size_t output_len, const char *expected,
                        size_t expected_len, tally_compare_result_t *res,
                        char *err, size_t errlen) {
  const code_state_t *s = state;
  cJSON *h =
      cJSON_ParseWithLength(expected != NULL ? expected : "", expected_len);
  const char *prompt = cJSON_IsObject(h) ? harness_text(h, "prompt", "") : 0;
  const char *test = cJSON_IsObject(h) ? harness_text(h, "test", "") : 0;
  const char *entry =
      cJSON_IsObject(h) ? harness_text(h, "entry_point", "solution") : 0;
  if (prompt == NULL || test == NULL || entry == NULL) {
    cJSON_Delete(h);
    snprintf(err, errlen,
             "code_sandbox: the expected answer must be the problem's "
             "harness, a JSON object with the strings prompt, test and "
             "entry_point");
    return TALLY_EJOB;
  }
  const char *code;
  size_t code_len;
  bool fenced;
  code_of(s, output, output_len, &code, &code_len, &fenced);
  tally_buf_t p;
  tally_buf_init(&p);
  tally_buf_puts(&p, prompt);
  tally_buf_put(&p, code, code_len);
  tally_buf_putc(&p, '\n');
  tally_buf_puts(&p, test);
  tally_buf_puts(&p, "\ncheck(");
  tally_buf_puts(&p, entry);
  tally_buf_puts(&p, ")\n");
  cJSON_Delete(h);
  if (p.oom) {
    tally_buf_close(&p);
    return TALLY_ENOMEM;
  }
  tally_sandbox_result_t r;
  int rc = tally_sandbox_run(&s->opts, p.data, p.len, &r, err, errlen);
  tally_buf_close(&p);
  if (rc != 0)
    return TALLY_EJOB;
  res->outcome = r.passed ? 1 : 0;
  res->message = r.passed ? TALLY_COMPARE_CORRECT : TALLY_COMPARE_WRONG;
  res->extracted = -1;
  static const char *const cause[] = {
      [TALLY_SANDBOX_EXITED] = "test_failure",
      [TALLY_SANDBOX_SIGNALED] = "runtime_crash",
      [TALLY_SANDBOX_WALL] = "execution_timeout",
      [TALLY_SANDBOX_CPU] = "execution_timeout",
      [TALLY_SANDBOX_OUTPUT] = "output_limit",
  };
  res->failure = r.passed ? NULL : cause[r.end];
  /* The reason, and the output's last line (escaped), for the operator. */
  const char *last = r.output != NULL ? r.output : "";
  size_t n = r.output_len;
  while (n > 0 && (last[n - 1] == '\n' || last[n - 1] == '\r'))
    n--;
  size_t from = n;
  while (from > 0 && last[from - 1] != '\n')
    from--;
  char tail[120];
  size_t k = 0;
  for (size_t i = from; i < n && k + 1 < sizeof(tail); i++)
    tail[k++] = last[i] >= 0x20 && last[i] < 0x7f ? last[i] : '?';
  tail[k] = '\0';
  if (r.passed)
    res->admin[0] = '\0';
  else
    snprintf(res->admin, sizeof(res->admin), "sandbox: %.120s%s%.100s%s",
             r.reason, k > 0 ? "; last output: \"" : "", tail,
             k > 0 ? "\"" : "");
  tally_sandbox_result_free(&r);
  return 0;
}

const tally_comparator_t tally_comparator_code_sandbox = {
    .version = TALLY_COMPARATOR_VERSION,
    .name = "code_sandbox",
    .parse = code_parse,
    .compare = code_compare,
    .free = code_free,
};
