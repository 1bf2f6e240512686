/* tally score and tally check: scoring offline, checking configs. */
#include "cli/cli.h"
#include "contest/scoremode.h"
#include "engine/engine.h"
#include "evalspecs/apply.h"
#include "evalspecs/spec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* Scores every JSON line of f, printing one line per job. Returns the
 * number of jobs that failed, or -1 on an I/O error or out of memory. */
typedef struct score_ctx_s {
  tally_engine_t *e;
  tally_buf_t *out;
  const cli_out_t *form;
  long failed;
  int rc; /* TALLY_EIO when a write failed */
} score_ctx_t;

static int score_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  score_ctx_t *sc = ctx;
  (void)lineno;
  len = cli_trim_end(line, len);
  if (len == 0)
    return 0;
  tally_buf_reset(sc->out);
  int rc = tally_engine_score(sc->e, line, len, NULL, sc->out);
  if (rc == TALLY_ENOMEM) {
    fprintf(stderr, "tally: out of memory\n");
    return rc;
  }
  if (rc != 0)
    sc->failed++;
  tally_buf_putc(sc->out, '\n');
  if (cli_write_results(sc->form, sc->out->data, sc->out->len) != 0)
    return sc->rc = TALLY_EIO;
  return 0;
}

static long score_stream(tally_engine_t *e, FILE *f, const char *name,
                         tally_buf_t *out, const cli_out_t *form) {
  score_ctx_t sc = {e, out, form, 0, 0};
  return cli_each_line(f, name, score_line, &sc) != 0 || sc.rc != 0 ? -1
                                                                    : sc.failed;
}

/* tally score --explain: each job's readable line and how its score comes
 * out of it (cli/explain.c), one job after another. */
typedef struct explain_ctx_s {
  tally_engine_t *e;
  tally_buf_t scratch, text;
  const char *name;
  long failed;
} explain_ctx_t;

static int explain_line(void *ctx, char *line, size_t len,
                        unsigned long lineno) {
  explain_ctx_t *x = ctx;
  len = cli_trim_end(line, len);
  if (len == 0)
    return 0;
  line[len] = '\0';
  tally_buf_reset(&x->text);
  if (cli_explain(x->e, line, len, x->name, lineno, &x->scratch, &x->text,
                  &x->failed) != 0) {
    fprintf(stderr, "tally: out of memory\n");
    return TALLY_ENOMEM;
  }
  return fwrite(x->text.data, 1, x->text.len, stdout) == x->text.len
             ? 0
             : TALLY_EIO;
}

static int score_explain(tally_engine_t *e, int nfiles, char **files) {
  explain_ctx_t x = {.e = e};
  tally_buf_init(&x.scratch);
  tally_buf_init(&x.text);
  int status = cli_each_file_line(nfiles, files, &x.name, explain_line, &x);
  tally_buf_close(&x.scratch);
  tally_buf_close(&x.text);
  return status != 0 ? status : x.failed > 0 ? EXIT_JOB_FAILED : 0;
}

/* tally score --mode: one participant's jobs for one task, each scored,
 * then combined into the task score under a score mode. */
typedef struct mode_run_s {
  tally_engine_t *e;
  const tally_taskset_t *tasks;
  const tally_task_t *task; /* the task of the first job */
  tally_submission_t *subs;
  size_t n, cap;
  long failed; /* jobs that could not be scored */
  tally_buf_t *out;
} mode_run_t;

/* Finds the task of job, which must be the task of every job before it.
 * Returns it, or NULL after printing why (naming name and lineno). */
static const tally_task_t *mode_job_task(mode_run_t *m, const cJSON *job,
                                         const char *name,
                                         unsigned long lineno) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(job, "task");
  const tally_task_t *task = NULL;
  if (t == NULL && m->tasks->count == 1)
    task = m->tasks->entries[0].task;
  else if (t == NULL)
    fprintf(stderr, "tally: %s:%lu: task: missing\n", name, lineno);
  else if (!cJSON_IsString(t))
    fprintf(stderr, "tally: %s:%lu: task: must be a string\n", name, lineno);
  else if ((task = tally_taskset_find(m->tasks, t->valuestring)) == NULL)
    fprintf(stderr, "tally: %s:%lu: task: unknown task \"%s\"\n", name, lineno,
            t->valuestring);
  if (task != NULL && m->task != NULL && task != m->task) {
    fprintf(stderr,
            "tally: %s:%lu: task \"%s\", but the jobs before are for task "
            "\"%s\": --mode scores one task\n",
            name, lineno, task->name, m->task->name);
    return NULL;
  }
  if (m->task == NULL)
    m->task = task;
  return task;
}

/* Adds the job in line (len bytes, NUL-terminated) as a submission: its
 * task, timestamp, official and tokened flags, and its result, or
 * unscored if it cannot be scored (said on stderr). Returns 0,
 * EXIT_CONFIG when the job cannot be placed, or EXIT_JOB_FAILED when out
 * of memory; each after printing why. */
static int mode_add(mode_run_t *m, char *line, size_t len, const char *name,
                    unsigned long lineno) {
  char err[512];
  cJSON *job = cJSON_ParseWithOpts(line, NULL, 1);
  const tally_task_t *task = NULL;
  int status = 0;
  if (!cJSON_IsObject(job)) {
    fprintf(stderr, "tally: %s:%lu: not a JSON object\n", name, lineno);
    status = EXIT_CONFIG;
  } else if ((task = mode_job_task(m, job, name, lineno)) == NULL) {
    status = EXIT_CONFIG;
  } else if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    tally_submission_t *subs = realloc(m->subs, cap * sizeof(*subs));
    if (subs == NULL) {
      fprintf(stderr, "tally: out of memory\n");
      status = EXIT_JOB_FAILED;
    } else {
      m->subs = subs;
      m->cap = cap;
    }
  }
  tally_submission_t *s = NULL;
  if (status == 0) {
    s = &m->subs[m->n];
    tally_submission_init(s);
    if (tally_submission_read_job(s, job, err, sizeof(err)) != 0) {
      fprintf(stderr, "tally: %s:%lu: %s\n", name, lineno, err);
      status = EXIT_CONFIG;
    }
  }
  cJSON_Delete(job);
  if (status != 0)
    return status;
  m->n++;

  tally_buf_reset(m->out);
  int rc = tally_engine_score(m->e, line, len, NULL, m->out);
  if (rc == 0) {
    cJSON *res = cJSON_Parse(m->out->data);
    rc = res == NULL ? TALLY_ENOMEM
                     : tally_submission_read_result(s, res, err, sizeof(err));
    cJSON_Delete(res);
  }
  if (rc == TALLY_ENOMEM || m->out->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  if (rc != 0) {
    fprintf(stderr, "tally: %s:%lu: %s (counted as not scored)\n", name, lineno,
            m->e->err);
    m->failed++;
  }
  return 0;
}

/* Adds every JSON line of f (named name) with mode_add. Returns 0, or
 * EXIT_CONFIG or EXIT_JOB_FAILED (read error, out of memory) after
 * printing why. */
typedef struct mode_ctx_s {
  mode_run_t *m;
  const char *name;
} mode_ctx_t;

static int mode_line(void *ctx, char *line, size_t len, unsigned long lineno) {
  mode_ctx_t *mc = ctx;
  len = cli_trim_end(line, len);
  line[len] = '\0';
  return len > 0 ? mode_add(mc->m, line, len, mc->name, lineno) : 0;
}

static int mode_stream(mode_run_t *m, FILE *f, const char *name) {
  mode_ctx_t mc = {m, name};
  int status = cli_each_line(f, name, mode_line, &mc);
  return status == TALLY_EIO ? EXIT_JOB_FAILED : status;
}

/* Prints the task score of the submissions in m as one JSON line.
 * Returns 0 or EXIT_JOB_FAILED (out of memory). */
static int mode_print(const mode_run_t *m, tally_score_mode_t mode) {
  tally_task_score_t ts;
  const tally_task_t *task = m->task;
  if (task == NULL && m->tasks->count == 1)
    task = m->tasks->entries[0].task;
  tally_task_score(mode, task ? task->score_precision : 0,
                   task ? task->score_rounding : TALLY_ROUND_SUBTASK, m->subs,
                   m->n, &ts);
  tally_buf_t *b = m->out;
  tally_buf_reset(b);
  tally_buf_puts(b, "{\"task\":");
  if (task != NULL)
    tally_json_str(b, task->name);
  else
    tally_buf_puts(b, "null");
  tally_buf_puts(b, ",\"mode\":");
  tally_json_str(b, tally_score_mode_name(mode));
  tally_buf_puts(b, ",\"score\":");
  tally_json_num(b, ts.score);
  tally_buf_puts(b, ",\"public_score\":");
  tally_json_num(b, ts.public_score);
  tally_buf_puts(b, ts.partial ? ",\"partial\":true" : ",\"partial\":false");
  tally_buf_puts(b, ",\"submissions\":");
  tally_json_num(b, (double)ts.submissions);
  tally_buf_puts(b, "}\n");
  if (b->oom) {
    fprintf(stderr, "tally: out of memory\n");
    return EXIT_JOB_FAILED;
  }
  fwrite(b->data, 1, b->len, stdout);
  return 0;
}

/* Scores the job files (stdin if there are none) as one participant's
 * submissions and prints their task score. Returns the exit status. */
static int score_mode(tally_engine_t *e, const tally_taskset_t *tasks,
                      tally_score_mode_t mode, int nfiles, char **files,
                      tally_buf_t *out) {
  mode_run_t m = {.e = e, .tasks = tasks, .out = out};
  int status = 0;
  if (nfiles == 0)
    status = mode_stream(&m, stdin, "stdin");
  for (int k = 0; k < nfiles && status == 0; k++) {
    FILE *f = strcmp(files[k], "-") == 0 ? stdin : fopen(files[k], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", files[k], strerror(errno));
      status = EXIT_JOB_FAILED;
      break;
    }
    status =
        mode_stream(&m, f, strcmp(files[k], "-") == 0 ? "stdin" : files[k]);
    if (f != stdin)
      fclose(f);
  }
  if (status == 0)
    status = mode_print(&m, mode);
  if (status == 0 && m.failed > 0)
    status = EXIT_JOB_FAILED;
  for (size_t k = 0; k < m.n; k++)
    tally_submission_close(&m.subs[k]);
  free(m.subs);
  return status;
}

int cmd_score(int argc, char **argv) {
  const char *task_path = NULL, *plugin_dir = NULL, *mode_name = NULL;
  tally_score_mode_t mode = TALLY_MODE_MAX_SUBTASK;
  bool elo = false, pass_fail = false, public_view = false;
  long threads = 0;
  cli_out_t form = {CLI_OUT_AUTO, false};
  bool explain = false;
  int i = 0;
  for (; i < argc; i++) {
    if (cli_out_flag(&form, argv[i]))
      continue;
    if (strcmp(argv[i], "--explain") == 0) {
      explain = true;
      continue;
    }
    if ((strcmp(argv[i], "--task") == 0 || strcmp(argv[i], "--tasks") == 0) &&
        i + 1 < argc && task_path == NULL)
      task_path = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc)
      plugin_dir = argv[++i];
    else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
      mode_name = argv[++i];
    else if (strcmp(argv[i], "--elo") == 0)
      elo = true;
    else if (strcmp(argv[i], "--pass-fail") == 0)
      pass_fail = true;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      if ((threads = cli_positive(argv[++i])) == 0 || threads > 1024) {
        fprintf(stderr,
                "tally: --threads: %s is not a number of threads "
                "from 1 to 1024\n",
                argv[i]);
        return EXIT_CONFIG;
      }
    } else if (strcmp(argv[i], "--public") == 0)
      public_view = true;
    else if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0')
      goto bad_usage;
    else
      break;
  }
  if (task_path == NULL)
    goto bad_usage;
  if ((elo ? 1 : 0) + (pass_fail ? 1 : 0) + (mode_name != NULL ? 1 : 0) > 1) {
    fprintf(stderr, "tally: --elo, --pass-fail and --mode: give one (Elo "
                    "ratings, pass-fail boards, or one task score)\n");
    return EXIT_CONFIG;
  }
  cli_out_resolve(&form);
  if (explain && (elo || pass_fail || mode_name != NULL)) {
    fprintf(stderr, "tally: --explain: explains each job's result, not "
                    "--elo, --pass-fail or --mode\n");
    return EXIT_CONFIG;
  }
  if (public_view && !pass_fail) {
    fprintf(stderr, "tally: --public: only with --pass-fail (the board as "
                    "the public sees it during the configured freeze)\n");
    return EXIT_CONFIG;
  }
  if (mode_name != NULL && tally_score_mode_parse(mode_name, &mode) != 0) {
    fprintf(stderr,
            "tally: --mode: unknown score mode \"%s\" (max, max_subtask or "
            "max_tokened_last)\n",
            mode_name);
    return EXIT_CONFIG;
  }

  cli_t c;
  int status = cli_load(&c, plugin_dir, task_path);
  if (status != 0) {
    cli_close(&c);
    return status;
  }

  tally_engine_t e;
  tally_buf_t out;
  tally_engine_init(&e, &c.tasks);
  e.contests = &c.contests;
  tally_buf_init(&out);
  if (explain) {
    status = score_explain(&e, argc - i, argv + i);
    tally_buf_close(&out);
    tally_engine_close(&e);
    cli_close(&c);
    return cli_flush_stdout(status, "the explanation");
  }
  if (mode_name != NULL || elo || pass_fail) {
    status = elo ? cli_score_elo(&e, argc - i, argv + i, &out)
             : pass_fail
                 ? cli_score_icpc(&e, &c.contests, public_view, argc - i,
                                  argv + i, &out)
                 : score_mode(&e, &c.tasks, mode, argc - i, argv + i, &out);
    tally_buf_close(&out);
    tally_engine_close(&e);
    cli_close(&c);
    status = cli_flush_stdout(status, "the score");
    return status;
  }
  if (threads == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (cpus < 64 ? cpus : 64) : 1;
  }
  long failed = 0;
  if (i == argc) {
    failed = threads > 1 ? cli_score_parallel(&c.tasks, &c.contests, &form,
                                              (unsigned)threads, stdin, "stdin")
                         : score_stream(&e, stdin, "stdin", &out, &form);
  }
  for (; i < argc && failed >= 0; i++) {
    FILE *f = strcmp(argv[i], "-") == 0 ? stdin : fopen(argv[i], "r");
    if (f == NULL) {
      fprintf(stderr, "tally: %s: %s\n", argv[i], strerror(errno));
      failed = -1;
      break;
    }
    long n = threads > 1 ? cli_score_parallel(&c.tasks, &c.contests, &form,
                                              (unsigned)threads, f, argv[i])
                         : score_stream(&e, f, argv[i], &out, &form);
    failed = n < 0 ? -1 : failed + n;
    if (f != stdin)
      fclose(f);
  }
  tally_buf_close(&out);
  tally_engine_close(&e);
  cli_close(&c);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "tally: cannot write results: %s\n", strerror(errno));
    return EXIT_JOB_FAILED;
  }
  return failed == 0 ? 0 : EXIT_JOB_FAILED;

bad_usage:
  cli_usage(stderr);
  return EXIT_CONFIG;
}

/* Checks the task configs at path, printing a line per task or every
 * error. Returns 0 or EXIT_CONFIG. */
static int check_path(cli_t *c, const char *path) {
  tally_diag_t d;
  tally_taskset_t ts;
  int status = 0;
  bool lint_failed = false;
  tally_diag_init(&d, NULL);
  tally_taskset_init(&ts);
  if (tally_taskset_load(&ts, &c->reg, path, &d) != 0) {
    cli_print_diag(&d);
    status = EXIT_CONFIG;
  }
  for (size_t k = 0; k < ts.count; k++) {
    const tally_task_t *t = ts.entries[k].task;
    /* A spec the reference takes, but whose validator errors on every
     * run: a literal pattern or schema that cannot be used. */
    bool flagged = false;
    for (size_t i = 0; t->spec != NULL && i < t->spec->nvalidators; i++) {
      const tally_es_validator_t *v = &t->spec->validators[i];
      char why[700];
      if (!tally_es_lint(v, why, sizeof(why)))
        continue;
      fprintf(stderr,
              "%s: evaluation_spec.validators[%zu].%s: every run of "
              "validator \"%s\" would be an error: %s\n",
              ts.entries[k].file, i,
              strcmp(v->type_name, "file_json_schema") == 0 ? "config.schema"
                                                            : "expected_from",
              v->key, why);
      flagged = true;
    }
    if (flagged) {
      lint_failed = true;
      continue;
    }
    if (t->spec != NULL)
      printf("%s: ok: task %s, agent_run, %zu validators, %zu metrics, %zu "
             "dimensions (%s), max score %g\n",
             ts.entries[k].file, t->name, t->spec->nvalidators,
             t->spec->nmetrics, t->spec->ndims, t->spec->strategy_name,
             t->max_score);
    else if (t->card != NULL)
      printf("%s: ok: task %s, answer, %zu dimensions, max score %g (public "
             "%g)\n",
             ts.entries[k].file, t->name, t->card->ndims, t->max_score,
             t->max_public_score);
    else
      printf("%s: ok: task %s, %s, %zu testcases, %zu subtasks, max score %g "
             "(public %g)\n",
             ts.entries[k].file, t->name, t->type->name, t->ntestcases,
             t->nsubtasks, t->max_score, t->max_public_score);
  }
  tally_contestset_t cs;
  tally_contestset_init(&cs);
  if (status == 0 && (tally_contestset_load_beside(&cs, path, &d) != 0 ||
                      tally_contestset_check_tasks(&cs, &ts, &d) != 0)) {
    cli_print_diag(&d);
    status = EXIT_CONFIG;
  }
  for (size_t k = 0; status == 0 && k < cs.count; k++) {
    const tally_contest_t *ct = &cs.contests[k];
    printf("%s: ok: contest %s, %zu task%s, %s ranking%s\n", ct->file, ct->name,
           ct->ntasks, ct->ntasks == 1 ? "" : "s",
           ct->ranking == TALLY_RANKING_ELO ? "elo" : "total",
           isnan(ct->freeze) ? "" : ", with a freeze");
  }
  if (status == 0 && cs.nparticipants > 0)
    printf("%s: ok: %zu participants with names or teams\n", path,
           cs.nparticipants);
  tally_contestset_close(&cs);
  tally_taskset_close(&ts);
  tally_diag_close(&d);
  return lint_failed ? EXIT_CONFIG : status;
}

int cmd_check(int argc, char **argv) {
  const char *plugin_dir = NULL;
  int i = 0;
  if (i + 1 < argc && strcmp(argv[i], "--plugins") == 0) {
    plugin_dir = argv[i + 1];
    i += 2;
  }
  if (i == argc) {
    cli_usage(stderr);
    return EXIT_CONFIG;
  }
  cli_t c;
  int status = cli_open(&c, plugin_dir);
  /* Every path is checked, so that every error is shown at once. */
  int failed = 0;
  for (; i < argc && status == 0; i++)
    failed |= check_path(&c, argv[i]);
  if (failed)
    status = EXIT_CONFIG;
  cli_close(&c);
  return status;
}
