/* tally import's decoders of harness outputs (cli/import.c runs them):
 * one line of lm-evaluation-harness's samples_<task>_<date>.jsonl or of
 * NeMo Evaluator's results.jsonl in, tally jobs out. */
#ifndef TALLY_CLI_IMPORT_H
#define TALLY_CLI_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/jsonw.h"

typedef struct import_s {
  const char *task;        /* the tally task's name */
  const char *category;    /* the samples' category: the harness's task */
  const char *participant; /* the model */
  const char *contest;
  const char *scorer; /* rescore with this comparator, or NULL */
  const char *metric; /* else keep this per-sample metric as the reward */
  bool nemo;          /* NeMo Evaluator's results.jsonl, else lm-eval's */
  tally_buf_t out;    /* the jobs, JSON Lines */
  long samples, docs, rejected;
  char why[512]; /* why the last line was rejected */
} import_t;

/* Decodes one line (NUL-terminated, len bytes) and appends its jobs to
 * im->out. Returns 0, or 1 when the line is rejected (im->why says why,
 * naming the field; im->rejected counted). A blank line is nothing. */
int tally_import_line(import_t *im, const char *line, size_t len);

#endif
