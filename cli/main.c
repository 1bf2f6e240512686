/* The tally command line: offline scoring and config checks, the client
 * side of tallyd's Redis streams (submit, status, results), and the
 * contest state (rescore, ranking, reload). One entry per command. */
#include "cli/cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct cli_command_s {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage; /* after "tally ": its arguments, lines joined by \n */
} cli_command_t;

static const cli_command_t commands[] = {
    {"score", cmd_score,
     "score (--task FILE | --tasks DIR) [--plugins DIR] [--threads N]\n"
     "                     [--json | --text] [--details] [--explain]\n"
     "                     [--mode MODE | --elo | --pass-fail [--public]] "
     "[JOBS...]"},
    {"check", cmd_check, "check [--plugins DIR] FILE|DIR..."},
    {"submit", cmd_submit,
     "submit [REDIS] [--ids] [--wait-replicas N] [FILE...]"},
    {"status", cmd_status, "status [REDIS] [--json]"},
    {"results", cmd_results,
     "results [REDIS] [--from ID] [--count N] [--no-follow] [--dead]\n"
     "                     [--json | --text] [--details]\n"
     "       tally results [REDIS] --submission S [--tasks DIR [--plugins "
     "DIR]]"},
    {"rescore", cmd_rescore,
     "rescore [REDIS] --tasks DIR [--plugins DIR] SELECTION\n"
     "                     [--dry-run] [--threads N] [--wait SECONDS] "
     "[--json]"},
    {"ranking", cmd_ranking,
     "ranking [REDIS] --contest C [--public | --by elo] [--json | --text]"},
    {"reload", cmd_reload,
     "reload (--pid N | --pidfile FILE) [REDIS] [--wait SECONDS]"},
    {"token", cmd_token, "token [REDIS] --participant P"},
    {"contest", cmd_contest,
     "contest (freeze [--at TIME | --configured] | unfreeze | show) [REDIS] C"},
    {"report", cmd_report,
     "report ([REDIS] --contest C | --results FILE... --tasks DIR "
     "[--plugins DIR])\n"
     "                     [--participant P] [--k 1,5,10] [--bootstrap N] "
     "[--seed S]\n"
     "                     [--confidence 0.95] [--by category] "
     "[--refusals FILE]\n"
     "                     [--json | --html FILE]"},
    {"migrate", cmd_migrate, "migrate [REDIS] --to-queue Q [--dry-run]"},
    {"import", cmd_import,
     "import --from lm-eval|nemo --participant P (--scorer C | --metric M)\n"
     "                     [--contest C] [--task T] [--task-dir DIR] "
     "FILE..."},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* What the commands' arguments mean. */
static const char notes[] =
    "REDIS: --redis URL (redis://[USER[:PASSWORD]@]IP[:PORT][/DB],\n"
    "       unix://[USER[:PASSWORD]@]/PATH[?db=N] or "
    "sentinel://[USER[:PASSWORD]@]\n"
    "       IP[:PORT][,IP[:PORT]...]/MASTER[/DB]; default: the server "
    "tallyd\n"
    "       starts in --data-dir DIR, default tally-data), --prefix P (key\n"
    "       prefix, default tally), --redis-password-file FILE (the password "
    "on\n"
    "       its first line; else TALLY_REDIS_PASSWORD, if set),\n"
    "       --sentinel-password-file FILE (the sentinels' password; else the\n"
    "       URL's sentinel_password, else TALLY_SENTINEL_PASSWORD),\n"
    "       --queue Q (the queue whose streams and contests a command uses;\n"
    "       default: a contest's own queue, as tallyd published it, else\n"
    "       --default-queue Q, default main; on a Redis Cluster, which any\n"
    "       node's URL reaches, queue main cannot live)\n"
    "MODE: max, max_subtask or max_tokened_last: print one participant's "
    "task\n"
    "       score over the jobs instead of each job's result\n"
    "--elo: print the Elo rating each participant's matches give in each\n"
    "       contest (answer tasks) instead of each job's result\n"
    "--pass-fail: print the ICPC board of each pass-fail contest the jobs'\n"
    "       submissions are in (--public: as the public sees it during the\n"
    "       contest's configured freeze) instead of each job's result\n"
    "SELECTION: the submissions in every one given of --task T, --contest "
    "C,\n"
    "       --participant P and --submission S; or alone, --changed (the "
    "tasks\n"
    "       whose config version changed) or --stale (the submissions "
    "scored\n"
    "       with another version than the current one)\n"
    "score: --threads N scores jobs on N threads, results in input order\n"
    "       (default: one per CPU); --explain says, for each job, how its\n"
    "       score comes out of its outcomes, dimensions or validators\n"
    "score, results, ranking: on a terminal, a line per submission (with\n"
    "       --details its subtasks and testcases, dimensions or validators)\n"
    "       and a ranking's table; JSON elsewhere; --json or --text chooses\n"
    "rescore: --threads N (default: one per CPU); --wait S gives up when "
    "another\n"
    "       rescore holds the lock for S s (default: waits); exits 1 on a "
    "Redis\n"
    "       or lock error, 2 on a bad selection or config\n"
    "reload: sends SIGHUP to tallyd; with REDIS given, waits (--wait, "
    "default\n"
    "       60 s) for the rescore that the reload starts to finish\n"
    "contest: freeze freezes the public board now (or restores its "
    "configured\n"
    "       freeze when that would hold now; nothing when frozen already),\n"
    "       --at TIME from TIME (now or RFC 3339), --configured withdraws "
    "the\n"
    "       operator's word; unfreeze lifts any freeze; show says where "
    "it stands\n"
    "report: a benchmark's pass@k, mean reward with bootstrap and normal\n"
    "       intervals (--bootstrap resamples, default 10000, seeded by "
    "--seed,\n"
    "       default 42), categories and failures; --results scores job files\n"
    "       offline; --refusals replaces the refusal phrases (one a line)\n"
    "migrate: moves queue main's keys (the layout of before queues) into\n"
    "       queue Q on the same server, for a move to a Redis Cluster; run\n"
    "       it with every tallyd stopped, then give the contests \"queue\": "
    "Q\n"
    "import: a harness's per-sample outputs (lm-evaluation-harness's\n"
    "       samples_<task>_<date>.jsonl, NeMo Evaluator's results.jsonl) as\n"
    "       jobs on stdout, one task for the benchmark (written into\n"
    "       --task-dir): --scorer rescores each\n"
    "       response with a tally comparator, --metric keeps the harness's\n"
    "       per-sample metric (acc, exact_match, ...) as the reward\n";

void cli_usage(FILE *f) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "%s tally %s\n", i == 0 ? "usage:" : "      ",
            commands[i].usage);
  fputs(notes, f);
}

/* Whether a command's first argument asks for its help (a later one may
 * be a value: a participant named -h). */
static bool asks_help(int argc, char **argv) {
  return argc >= 1 &&
         (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
}

int main(int argc, char **argv) {
  for (size_t i = 0; argc >= 2 && i < NCOMMANDS; i++) {
    if (strcmp(argv[1], commands[i].name) != 0)
      continue;
    if (asks_help(argc - 2, argv + 2)) {
      /* tally COMMAND --help: that command's usage and the notes. */
      printf("usage: tally %s\n", commands[i].usage);
      fputs(notes, stdout);
      return 0;
    }
    return commands[i].run(argc - 2, argv + 2);
  }
  if (argc == 2 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    cli_usage(stdout);
    return 0;
  }
  cli_usage(stderr);
  return EXIT_CONFIG;
}
