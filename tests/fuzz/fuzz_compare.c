/* A libFuzzer target for one comparator, named at build time by
 * -DCOMPARATOR="white_diff": arbitrary bytes become an output and an
 * expected output, compared under one of a few parameter sets, and the
 * result must keep the comparator contract.
 *
 * Input layout: byte 0 picks the parameter set, bytes 1-2 (little
 * endian) are the output's length (cut to what is left), the output
 * follows, and the rest is the expected output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalspecs/compare_json.h"
#include "tasktypes/comparators.h"

#ifndef COMPARATOR
#error "build with -DCOMPARATOR=\"name\""
#endif

/* Makes UBSan reports fatal, so libFuzzer counts them as crashes. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

/* Parameter sets per comparator; NULL means none. The first entry of
 * each list is used when a comparator has no entry of its own. */
typedef struct param_sets_s {
  const char *name;
  const char *sets[4];
} param_sets_t;

static const param_sets_t param_sets[] = {
    {"numeric_tolerance",
     {NULL, "{\"absolute\": 0, \"relative\": 0.1}", "{\"absolute\": 1e300}"}},
    {"regex",
     {"{\"extract\": \"Answer:\\\\s*(\\\\w+)|(\\\\d+)\\\\s*$\", "
      "\"occurrence\": \"last\", \"utf\": true, \"multiline\": true}",
      "{\"pattern\": \"(a+)+$\", \"match_limit\": 100000}",
      "{\"pattern\": \"^(?:.|\\\\n)*$\", \"dotall\": true, \"depth_limit\": "
      "1000, \"extract\": \"\\\\b\", \"occurrence\": \"last\"}",
      "{\"extract\": \"(?i)x*\", \"normalize\": \"answer\", \"occurrence\": "
      "\"last\"}"}},
    {"last_number", {NULL, "{\"commas\": false, \"relative\": 0.5}"}},
    {"fuzzy",
     {"{\"max_cells\": 1000000}",
      "{\"normalize\": \"none\", \"max_cells\": 5000}",
      "{\"normalize\": \"answer\"}"}},
    {"contains",
     {NULL,
      "{\"answers\": [\"x\", \"The 1\"], \"expected\": \"lines\", "
      "\"whole_words\": true}",
      "{\"answers\": [\"ab\"], \"expected\": \"ignore\", \"normalize\": "
      "\"none\"}"}},
    {"token_f1", {NULL, "{\"normalize\": \"none\"}"}},
    {"set_overlap",
     {NULL, "{\"method\": \"intersection\", \"normalize\": \"answer\"}",
      "{\"normalize\": \"none\"}"}},
    {"element_ratio", {NULL, "{\"normalize\": \"case\"}"}},
    {"multichoice",
     {NULL, "{\"letters\": \"ABCDEFGH\"}",
      "{\"pattern\": \"(?i)answer is (\\\\w+)\"}"}},
    {"answer_line", {NULL, "{\"pattern\": \"#### (.*)\"}"}},
    {"json_answer",
     {NULL,
      "{\"schema\": {\"type\": \"object\", \"required\": [\"a\"]}, "
      "\"field\": \"a\"}",
      "{\"field\": \"b\"}"}},
};

/* The comparators that must find any text equal to itself. */
static const char *const reflexive[] = {
    "white_diff", "exact",       "numeric_tolerance", "normalized", "fuzzy",
    "token_f1",   "set_overlap", "element_ratio",     NULL};

typedef struct prepared_s {
  const tally_comparator_t *c;
  void *states[4];
  size_t nstates;
} prepared_t;

static void prepare(prepared_t *p) {
  p->c = tally_comparator_find(COMPARATOR);
  if (p->c == NULL && strcmp(COMPARATOR, "json_answer") == 0)
    p->c = &tally_comparator_json_answer;
  if (p->c == NULL) {
    fprintf(stderr, "no comparator %s\n", COMPARATOR);
    abort();
  }
  const char *const *sets = NULL;
  static const char *const none[] = {NULL};
  size_t nsets = 1;
  for (size_t i = 0; i < sizeof(param_sets) / sizeof(param_sets[0]); i++) {
    if (strcmp(param_sets[i].name, COMPARATOR) == 0) {
      sets = param_sets[i].sets;
      nsets = 1;
      while (nsets < 4 && sets[nsets] != NULL)
        nsets++;
    }
  }
  if (sets == NULL)
    sets = none;
  for (size_t i = 0; i < nsets; i++) {
    tally_diag_t d;
    tally_jpath_t path;
    tally_diag_init(&d, "fuzz");
    tally_jpath_init(&path);
    cJSON *json = sets[i] ? cJSON_Parse(sets[i]) : NULL;
    void *state = NULL;
    if ((sets[i] && json == NULL) ||
        (p->c->parse && p->c->parse(json, &state, &d, &path) != 0)) {
      fprintf(stderr, "%s: bad parameters %s: %s\n", COMPARATOR, sets[i],
              d.count ? d.msgs[0] : "");
      abort();
    }
    cJSON_Delete(json);
    tally_diag_close(&d);
    p->states[p->nstates++] = state;
  }
}

/* Runs one comparison and checks the contract; returns the outcome, or -1
 * for a job error. */
static double check(const prepared_t *p, const void *state, const char *out,
                    size_t out_len, const char *exp, size_t exp_len) {
  tally_compare_result_t res;
  char err[256];
  memset(&res, 0x55, sizeof(res));
  memset(err, 0x55, sizeof(err));
  int rc =
      p->c->compare(state, out, out_len, exp, exp_len, &res, err, sizeof(err));
  if (rc == TALLY_EJOB) {
    if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
      abort();
    return -1;
  }
  if (rc != 0)
    abort();
  if (!(res.outcome >= 0 && res.outcome <= 1) || res.message == NULL)
    abort();
  /* -1 (the contract's reset, which tally__cmp_begin writes), 0 or 1. */
  if (res.extracted != 0x55 && (res.extracted < -1 || res.extracted > 1))
    abort();
  const char *want = res.outcome == 1   ? TALLY_COMPARE_CORRECT
                     : res.outcome == 0 ? TALLY_COMPARE_WRONG
                                        : TALLY_COMPARE_PARTIAL;
  if (strcmp(res.message, want) != 0)
    abort();
  /* The admin text is escaped: no control bytes. */
  const char *end = memchr(res.admin, '\0', sizeof(res.admin));
  if (end == NULL)
    abort();
  for (const char *c = res.admin; c < end; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      abort();
  return res.outcome;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static prepared_t p;
  if (p.c == NULL)
    prepare(&p);
  if (size < 3)
    return 0;
  const void *state = p.states[data[0] % p.nstates];
  size_t out_len = (size_t)data[1] | (size_t)data[2] << 8;
  data += 3;
  size -= 3;
  if (out_len > size)
    out_len = size;
  /* Copies, so that ASan sees any read past either end. */
  char *out = malloc(out_len ? out_len : 1);
  char *exp = malloc(size - out_len ? size - out_len : 1);
  memcpy(out, data, out_len);
  memcpy(exp, data + out_len, size - out_len);
  size_t exp_len = size - out_len;

  double a = check(&p, state, out, out_len, exp, exp_len);
  check(&p, state, exp, exp_len, out, out_len);
  for (size_t i = 0; reflexive[i] != NULL; i++) {
    if (strcmp(reflexive[i], COMPARATOR) == 0 &&
        check(&p, state, out, out_len, out, out_len) != 1)
      abort();
  }
  /* white_diff is symmetric. */
  if (strcmp(COMPARATOR, "white_diff") == 0 &&
      check(&p, state, exp, exp_len, out, out_len) != a)
    abort();
  free(out);
  free(exp);
  return 0;
}
