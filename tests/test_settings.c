/* tallyd's settings: the defaults, every flag, the config file, how flags
 * override it, and every error each of them can report. */
#include "config/error.h"
#include "daemon/settings.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

static char dir[64];
static tally_settings_t s;
static tally_diag_t d;

/* Each test runs in a fresh temporary folder, which is also the current
 * folder, so that file errors read "tallyd.json: ...". */
static void setup(void) {
  snprintf(dir, sizeof(dir), "/tmp/tally-settings-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_eq(chdir(dir), 0);
  cr_assert_eq(mkdir("sub", 0700), 0);
  cr_assert_eq(tally_settings_init(&s), 0);
  tally_diag_init(&d, NULL);
}

static void teardown(void) {
  tally_settings_close(&s);
  tally_diag_close(&d);
#if defined(__SANITIZE_ADDRESS__)
  /* Criterion's test processes end without LeakSanitizer's exit check,
   * and ignore assertions in .fini: a leak crashes the test instead. */
  if (__lsan_do_recoverable_leak_check() != 0)
    abort();
#endif
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    cr_log_info("could not remove %s", dir);
}

TestSuite(settings, .init = setup, .fini = teardown);

static int parse_argv(char **argv) {
  int argc = 0;
  while (argv[argc] != NULL)
    argc++;
  return tally_settings_parse(&s, argc, argv, &d);
}

#define PARSE(...) parse_argv((char *[]){"tallyd", __VA_ARGS__, NULL})

/* Writes text to the file name (relative to the test's folder). */
static void put(const char *name, const char *text) {
  FILE *f = fopen(name, "w");
  cr_assert_not_null(f, "%s", name);
  fputs(text, f);
  fclose(f);
}

/* Every message of d, one per line, in a static buffer. */
static const char *errors(void) {
  static char buf[16384];
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < d.count; i++)
    used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
                             i ? "\n" : "", d.msgs[i]);
  return buf;
}

/* Parses argv, which must fail, and checks every message against want
 * (one per line). */
#define EXPECT_ERRORS(want, ...)                                               \
  do {                                                                         \
    cr_expect_eq(PARSE(__VA_ARGS__), TALLY_ECONFIG);                           \
    cr_expect_str_eq(errors(), want);                                          \
    cr_expect_eq(d.dropped, 0);                                                \
  } while (0)

Test(settings, sets_the_documented_defaults) {
  unsigned cpus = uv_available_parallelism();
  cr_expect_eq(s.workers, cpus < 1 ? 1 : cpus > 256 ? 256 : cpus);
  cr_expect_geq(s.workers, 1);
  cr_expect_leq(s.workers, 256);

  char host[256] = "", consumer[300];
  gethostname(host, sizeof(host));
  snprintf(consumer, sizeof(consumer), "%s:%ld", host, (long)getpid());
  cr_expect_str_eq(s.consumer, consumer);

  /* tally-worker beside the running executable. */
  char exe[PATH_MAX + 16];
  ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);
  cr_assert_gt(n, 0);
  exe[n] = '\0';
  strcpy(strrchr(exe, '/') + 1, "tally-worker");
  cr_expect_str_eq(s.worker, exe);

  cr_expect_null(s.tasks);
  cr_expect_null(s.plugins);
  cr_expect_null(s.redis);
  cr_expect_null(s.config);
  cr_expect_str_eq(s.prefix, "tally");
  cr_expect_eq(s.claim_idle, 30000);
  cr_expect_eq(s.job_timeout, 1000);
  cr_expect_eq(s.drain_timeout, 10000);
  cr_expect_eq(s.max_deliveries, 3);
  cr_expect_str_eq(s.data_dir, "tally-data");
  cr_expect_eq(s.log_format, TALLY_LOG_TEXT);
  cr_expect_eq(s.log_level, TALLY_LOG_INFO);
  cr_expect_eq(s.batch, 16);
  cr_expect_eq(s.max_job_bytes, 4194304);
  cr_expect_str_eq(s.redis_server, "redis-server");
  /* tally beside the running executable too. */
  strcpy(strrchr(exe, '/') + 1, "tally");
  cr_expect_str_eq(s.tally, exe);
  cr_expect(s.auto_rescore);
  cr_expect_null(s.pidfile);
}

Test(settings, keeps_the_defaults_when_only_tasks_is_given) {
  cr_assert_eq(PARSE("--tasks", "t"), 0, "%s", errors());
  cr_expect_eq(d.count, 0);
  cr_expect_str_eq(s.tasks, "t");
  cr_expect_str_eq(s.prefix, "tally");
  cr_expect_eq(s.job_timeout, 1000);
  cr_expect_str_eq(s.redis_server, "redis-server");
}

/* Checks the values that applies_every_flag and its variants set. */
static void expect_every_flag(void) {
  cr_expect_str_eq(s.tasks, "/srv/tasks");
  cr_expect_str_eq(s.plugins, "plug");
  cr_expect_str_eq(s.redis, "unix:///run/redis.sock?db=2");
  cr_expect_eq(s.workers, 7);
  cr_expect_str_eq(s.prefix, "contest1");
  cr_expect_str_eq(s.consumer, "judge-a");
  cr_expect_eq(s.claim_idle, 45000);
  cr_expect_eq(s.job_timeout, 2500);
  cr_expect_eq(s.drain_timeout, 86400000);
  cr_expect_eq(s.max_deliveries, 5);
  cr_expect_str_eq(s.data_dir, "data");
  cr_expect_eq(s.log_format, TALLY_LOG_JSON);
  cr_expect_eq(s.log_level, TALLY_LOG_WARN);
  cr_expect_eq(s.batch, 1024);
  cr_expect_eq(s.max_job_bytes, 1024);
  cr_expect_str_eq(s.worker, "bin/tally-worker");
  cr_expect_str_eq(s.redis_server, "/opt/redis/bin/redis-server");
  cr_expect_null(s.config);
}

Test(settings, applies_every_flag) {
  cr_assert_eq(PARSE("--tasks", "/srv/tasks", "--plugins", "plug", "--redis",
                     "unix:///run/redis.sock?db=2", "--workers", "7",
                     "--prefix", "contest1", "--consumer", "judge-a",
                     "--claim-idle", "45000", "--job-timeout", "2500",
                     "--drain-timeout", "86400000", "--max-deliveries", "5",
                     "--data-dir", "data", "--log-format", "json",
                     "--log-level", "warn", "--batch", "1024",
                     "--max-job-bytes", "1024", "--worker", "bin/tally-worker",
                     "--redis-server", "/opt/redis/bin/redis-server"),
               0, "%s", errors());
  expect_every_flag();
}

Test(settings, accepts_flag_equals_value) {
  cr_assert_eq(PARSE("--tasks=/srv/tasks", "--plugins=plug",
                     "--redis=unix:///run/redis.sock?db=2", "--workers=7",
                     "--prefix=contest1", "--consumer=judge-a",
                     "--claim-idle=45000", "--job-timeout=2500",
                     "--drain-timeout=86400000", "--max-deliveries=5",
                     "--data-dir=data", "--log-format=json", "--log-level=warn",
                     "--batch=1024", "--max-job-bytes=1024",
                     "--worker=bin/tally-worker",
                     "--redis-server=/opt/redis/bin/redis-server"),
               0, "%s", errors());
  expect_every_flag();
}

Test(settings, lets_the_last_of_a_repeated_flag_win) {
  cr_assert_eq(
      PARSE("--tasks", "a", "--workers", "2", "--tasks=b", "--workers", "3"), 0,
      "%s", errors());
  cr_expect_str_eq(s.tasks, "b");
  cr_expect_eq(s.workers, 3);
}

Test(settings, accepts_a_tcp_redis_url) {
  cr_assert_eq(PARSE("--tasks", "t", "--redis", "redis://127.0.0.1:6380/1"), 0,
               "%s", errors());
  cr_expect_str_eq(s.redis, "redis://127.0.0.1:6380/1");
}

Test(settings, reads_every_key_from_the_config_file) {
  put("tallyd.json",
      "{\"tasks\": \"/srv/tasks\", \"plugins\": \"/srv/plug\",\n"
      " \"redis\": \"redis://10.0.0.5:6379\", \"workers\": 12,\n"
      " \"prefix\": \"p\", \"consumer\": \"box 1\", \"claim_idle\": 1000,\n"
      " \"job_timeout\": 1, \"drain_timeout\": 20000,\n"
      " \"max_deliveries\": 1000, \"data_dir\": \"/var/lib/tally\",\n"
      " \"log_format\": \"json\", \"log_level\": \"debug\", \"batch\": 1,\n"
      " \"max_job_bytes\": 66060288, \"worker\": \"/usr/bin/tally-worker\",\n"
      " \"redis_server\": \"redis-server-7\"}\n");
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.config, "tallyd.json");
  cr_expect_str_eq(s.tasks, "/srv/tasks");
  cr_expect_str_eq(s.plugins, "/srv/plug");
  cr_expect_str_eq(s.redis, "redis://10.0.0.5:6379");
  cr_expect_eq(s.workers, 12);
  cr_expect_str_eq(s.prefix, "p");
  cr_expect_str_eq(s.consumer, "box 1");
  cr_expect_eq(s.claim_idle, 1000);
  cr_expect_eq(s.job_timeout, 1);
  cr_expect_eq(s.drain_timeout, 20000);
  cr_expect_eq(s.max_deliveries, 1000);
  cr_expect_str_eq(s.data_dir, "/var/lib/tally");
  cr_expect_eq(s.log_format, TALLY_LOG_JSON);
  cr_expect_eq(s.log_level, TALLY_LOG_DEBUG);
  cr_expect_eq(s.batch, 1);
  cr_expect_eq(s.max_job_bytes, 66060288);
  cr_expect_str_eq(s.worker, "/usr/bin/tally-worker");
  cr_expect_str_eq(s.redis_server, "redis-server-7");
}

Test(settings, reads_the_rescore_and_pidfile_settings_from_flags) {
  cr_assert_eq(PARSE("--tasks", "t", "--tally", "bin/tally", "--auto-rescore",
                     "false", "--pidfile=run/tallyd.pid"),
               0, "%s", errors());
  cr_expect_str_eq(s.tally, "bin/tally");
  cr_expect_not(s.auto_rescore);
  cr_expect_str_eq(s.pidfile, "run/tallyd.pid");
  cr_assert_eq(PARSE("--tasks", "t", "--auto-rescore=true"), 0, "%s", errors());
  cr_expect(s.auto_rescore);
}

Test(settings, reads_the_rescore_and_pidfile_settings_from_the_file) {
  put("sub/tallyd.json", "{\"tasks\": \"t\", \"tally\": \"bin/tally\", "
                         "\"auto_rescore\": false, \"pidfile\": \"t.pid\"}");
  cr_assert_eq(PARSE("--config", "sub/tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.tally, "sub/bin/tally", "joined to the file's folder");
  cr_expect_not(s.auto_rescore);
  cr_expect_str_eq(s.pidfile, "sub/t.pid");
}

Test(settings, reads_the_http_address_from_a_flag_and_the_file) {
  cr_expect_str_eq(s.http, "127.0.0.1:9464", "the default");
  cr_assert_eq(PARSE("--tasks", "t", "--http", "off"), 0, "%s", errors());
  cr_expect_str_eq(s.http, "off");
  cr_assert_eq(PARSE("--tasks", "t", "--http=[::1]:0"), 0, "%s", errors());
  cr_expect_str_eq(s.http, "[::1]:0");
  put("tallyd.json", "{\"tasks\": \"t\", \"http\": \"0.0.0.0:9100\"}");
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.http, "0.0.0.0:9100");
}

Test(settings, names_a_bad_http_address) {
  put("tallyd.json", "{\"tasks\": \"t\", \"http\": \"localhost:80\"}");
  EXPECT_ERRORS(
      "tallyd.json: http: \"localhost:80\" is not IP:PORT or [IPv6]:PORT (an "
      "address, not a host name; a port from 0 to 65535), or off\n"
      "--http: \"127.0.0.1:65536\" is not IP:PORT or [IPv6]:PORT (an "
      "address, not a host name; a port from 0 to 65535), or off\n"
      "--http: \"::1:80\" is not IP:PORT or [IPv6]:PORT (an address, not a "
      "host name; a port from 0 to 65535), or off\n"
      "--http: \"127.0.0.1\" is not IP:PORT or [IPv6]:PORT (an address, not "
      "a host name; a port from 0 to 65535), or off\n"
      "--http: \"[127.0.0.1]:80\" is not IP:PORT or [IPv6]:PORT (an "
      "address, not a host name; a port from 0 to 65535), or off",
      "--config", "tallyd.json", "--http", "127.0.0.1:65536", "--http",
      "::1:80", "--http", "127.0.0.1", "--http", "[127.0.0.1]:80");
}

Test(settings, cuts_a_long_bad_http_address_but_says_what_is_wanted) {
  char value[80]; /* the longest value the setting takes */
  memset(value, 'x', sizeof(value) - 1);
  value[sizeof(value) - 1] = '\0';
  cr_assert_neq(PARSE("--tasks", "t", "--http", value), 0);
  char want[200];
  snprintf(want, sizeof(want), "--http: \"%.64s...\" is not IP:PORT", value);
  cr_expect(strstr(errors(), want) != NULL, "%s", errors());
  cr_expect(strstr(errors(), "a port from 0 to 65535), or off") != NULL, "%s",
            errors());
}

Test(settings, names_a_bad_auto_rescore_value) {
  put("tallyd.json", "{\"tasks\": \"t\", \"auto_rescore\": \"no\"}");
  EXPECT_ERRORS("tallyd.json: auto_rescore: must be true or false\n"
                "--auto-rescore: must be true or false",
                "--config", "tallyd.json", "--auto-rescore", "1");
}

Test(settings, lets_flags_override_the_config_file) {
  put("tallyd.json", "{\"tasks\": \"/srv/tasks\", \"workers\": 4, "
                     "\"log_level\": \"error\", \"prefix\": \"file\"}");
  /* The flags come before and after --config: order does not matter. */
  cr_assert_eq(
      PARSE("--workers", "2", "--config=tallyd.json", "--prefix", "flag"), 0,
      "%s", errors());
  cr_expect_str_eq(s.tasks, "/srv/tasks");
  cr_expect_eq(s.workers, 2);
  cr_expect_str_eq(s.prefix, "flag");
  cr_expect_eq(s.log_level, TALLY_LOG_ERROR);
}

Test(settings, takes_tasks_from_the_config_file_alone) {
  put("tallyd.json", "{\"tasks\": \"/srv/tasks\"}");
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.tasks, "/srv/tasks");
}

Test(settings, resolves_relative_paths_in_the_file_against_its_folder) {
  const char *json = "{\"tasks\": \"tasks\", \"plugins\": \"../plug\", "
                     "\"data_dir\": \"./data\", \"worker\": \"tally-worker\", "
                     "\"redis_server\": \"redis-server\"}";
  put("sub/tallyd.json", json);
  cr_assert_eq(PARSE("--config", "sub/tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.tasks, "sub/tasks");
  cr_expect_str_eq(s.plugins, "sub/../plug");
  cr_expect_str_eq(s.data_dir, "sub/./data");
  cr_expect_str_eq(s.worker, "sub/tally-worker");
  /* redis_server is a command, looked up on PATH: never joined. */
  cr_expect_str_eq(s.redis_server, "redis-server");
}

Test(settings, resolves_relative_paths_against_an_absolute_config_folder) {
  put("sub/tallyd.json", "{\"tasks\": \"tasks\", \"data_dir\": \"/abs\"}");
  char config[128], want[128];
  snprintf(config, sizeof(config), "%s/sub/tallyd.json", dir);
  snprintf(want, sizeof(want), "%s/sub/tasks", dir);
  cr_assert_eq(PARSE("--config", config), 0, "%s", errors());
  cr_expect_str_eq(s.tasks, want);
  cr_expect_str_eq(s.data_dir, "/abs");
}

Test(settings, leaves_paths_of_a_config_file_in_the_current_folder_alone) {
  put("tallyd.json", "{\"tasks\": \"tasks\"}");
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_str_eq(s.tasks, "tasks");
}

Test(settings, keeps_relative_paths_from_flags_relative_to_the_current_dir) {
  put("sub/tallyd.json", "{\"tasks\": \"tasks\", \"plugins\": \"plug\"}");
  cr_assert_eq(
      PARSE("--config", "sub/tallyd.json", "--tasks", "mine", "--worker", "w"),
      0, "%s", errors());
  cr_expect_str_eq(s.tasks, "mine");
  cr_expect_str_eq(s.plugins, "sub/plug");
  cr_expect_str_eq(s.worker, "w");
}

Test(settings, keeps_flag_paths_relative_when_the_file_has_errors) {
  put("sub/bad.json", "{\"tasks\": ");
  cr_expect_eq(PARSE("--config", "sub/bad.json", "--tasks", "mine"),
               TALLY_ECONFIG);
  cr_expect_str_eq(s.tasks, "mine");
  cr_expect_eq(PARSE("--config", "sub/none.json", "--tasks", "mine"),
               TALLY_ECONFIG);
  cr_expect_str_eq(s.tasks, "mine");
}

/* File errors. */

/* Writes json to tallyd.json, parses it with --tasks given, and checks
 * every message. */
static void expect_file_errors(const char *json, const char *want) {
  put("tallyd.json", json);
  cr_expect_eq(PARSE("--config", "tallyd.json", "--tasks", "t"), TALLY_ECONFIG);
  cr_expect_str_eq(errors(), want);
}

Test(settings, names_an_unknown_key_and_a_repeated_one) {
  expect_file_errors(
      "{\"tasks\": \"a\", \"wokers\": 2, \"config\": \"x.json\", "
      "\"tasks\": \"b\"}",
      "tallyd.json: wokers: unknown key\n"
      "tallyd.json: config: unknown key\n"
      "tallyd.json: tasks: key appears twice");
}

Test(settings, names_each_wrong_type) {
  expect_file_errors(
      "{\"tasks\": 1, \"workers\": \"4\", \"prefix\": null, "
      "\"log_format\": true, \"job_timeout\": [1], \"redis\": {}}",
      "tallyd.json: tasks: must be a string\n"
      "tallyd.json: workers: must be a whole number from 1 to 256\n"
      "tallyd.json: prefix: must be a string\n"
      "tallyd.json: log_format: must be \"text\" or \"json\"\n"
      "tallyd.json: job_timeout: must be a whole number from 1 to 86400000\n"
      "tallyd.json: redis: must be a string");
}

Test(settings, names_each_value_out_of_range) {
  expect_file_errors(
      "{\"workers\": 0, \"claim_idle\": 999, \"job_timeout\": 86400001, "
      "\"drain_timeout\": 0, \"max_deliveries\": 1001, \"batch\": 1025, "
      "\"max_job_bytes\": 66060289}",
      "tallyd.json: workers: must be a whole number from 1 to 256\n"
      "tallyd.json: claim_idle: must be a whole number from 1000 to "
      "86400000\n"
      "tallyd.json: job_timeout: must be a whole number from 1 to 86400000\n"
      "tallyd.json: drain_timeout: must be a whole number from 1 to "
      "86400000\n"
      "tallyd.json: max_deliveries: must be a whole number from 1 to 1000\n"
      "tallyd.json: batch: must be a whole number from 1 to 1024\n"
      "tallyd.json: max_job_bytes: must be a whole number from 1024 to "
      "66060288");
}

Test(settings, refuses_fractions_and_negative_numbers) {
  expect_file_errors(
      "{\"workers\": 1.5, \"batch\": -4, \"max_job_bytes\": 1e300}",
      "tallyd.json: workers: must be a whole number from 1 to 256\n"
      "tallyd.json: batch: must be a whole number from 1 to 1024\n"
      "tallyd.json: max_job_bytes: must be a whole number from 1024 to "
      "66060288");
}

Test(settings, accepts_a_whole_number_written_with_an_exponent) {
  put("tallyd.json", "{\"tasks\": \"t\", \"claim_idle\": 6e4}");
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_eq(s.claim_idle, 60000);
}

Test(settings, names_a_bad_enum_value) {
  expect_file_errors(
      "{\"log_format\": \"xml\", \"log_level\": \"INFO\"}",
      "tallyd.json: log_format: must be \"text\" or \"json\"\n"
      "tallyd.json: log_level: must be \"debug\", \"info\", \"warn\" or "
      "\"error\"");
}

Test(settings, names_bad_strings) {
  char json[512];
  snprintf(json, sizeof(json),
           "{\"plugins\": \"\", \"prefix\": \"a b\", \"consumer\": \"%0201d\","
           " \"redis\": \"redis://localhost:6379\"}",
           0);
  expect_file_errors(
      json, "tallyd.json: plugins: must not be empty\n"
            "tallyd.json: prefix: must not contain spaces or control "
            "characters\n"
            "tallyd.json: consumer: must be at most 200 bytes\n"
            "tallyd.json: redis: redis://localhost:6379: the host must be an "
            "IP address (host names are not resolved)");
}

Test(settings, bounds_the_prefix_at_64_bytes) {
  char json[256];
  snprintf(json, sizeof(json), "{\"tasks\": \"t\", \"prefix\": \"%064d\"}", 0);
  put("tallyd.json", json);
  cr_assert_eq(PARSE("--config", "tallyd.json"), 0, "%s", errors());
  cr_expect_eq(strlen(s.prefix), 64);
  snprintf(json, sizeof(json), "{\"prefix\": \"%065d\"}", 0);
  expect_file_errors(json, "tallyd.json: prefix: must be at most 64 bytes");
}

Test(settings, refuses_a_file_that_is_not_an_object) {
  expect_file_errors("[{\"tasks\": \"t\"}]",
                     "tallyd.json: must be a JSON object");
}

Test(settings, names_the_line_and_column_of_malformed_json) {
  expect_file_errors("{\n  \"tasks\": \"t\",\n  \"workers\": 4x\n}\n",
                     "tallyd.json: invalid JSON at line 3, column 15");
  tally_diag_close(&d);
  tally_diag_init(&d, NULL);
  expect_file_errors("", "tallyd.json: invalid JSON at line 1, column 1");
}

Test(settings, refuses_text_after_the_object) {
  expect_file_errors("{\"tasks\": \"t\"} {}",
                     "tallyd.json: unexpected text after the JSON value");
}

Test(settings, names_a_file_it_cannot_read) {
  EXPECT_ERRORS("missing.json: cannot read: No such file or directory",
                "--config", "missing.json", "--tasks", "t");
  tally_diag_close(&d);
  tally_diag_init(&d, NULL);
  EXPECT_ERRORS("sub: cannot read: Is a directory", "--config", "sub",
                "--tasks", "t");
}

Test(settings, refuses_a_file_over_one_mib) {
  FILE *f = fopen("big.json", "w");
  cr_assert_not_null(f);
  fputs("{\"tasks\": \"", f);
  for (int i = 0; i < 1024 * 1024; i++)
    fputc('a', f);
  fputs("\"}", f);
  fclose(f);
  EXPECT_ERRORS("big.json: cannot read: larger than 1 MiB", "--config",
                "big.json", "--tasks", "t");
}

Test(settings, names_the_file_as_given) {
  put("sub/tallyd.json", "{\"tasks\": \"t\", \"batch\": 0}");
  char config[128], want[256];
  snprintf(config, sizeof(config), "%s/sub/tallyd.json", dir);
  snprintf(want, sizeof(want),
           "%s: batch: must be a whole number from 1 to 1024", config);
  EXPECT_ERRORS(want, "--config", config);
}

/* Flag errors. */

Test(settings, names_an_unknown_flag) {
  EXPECT_ERRORS("--bogus: unknown flag\n"
                "--wrokers: unknown flag\n"
                "-h: unexpected argument (flags start with --)",
                "--tasks", "t", "--bogus", "--wrokers=3", "-h");
}

Test(settings, names_a_missing_value) {
  EXPECT_ERRORS("--tasks: missing value\n"
                "--prefix: missing value\n"
                "--tasks: required (or \"tasks\" in the config file)",
                "--tasks", "--prefix");
}

Test(settings, names_a_positional_argument) {
  EXPECT_ERRORS("jobs.jsonl: unexpected argument (flags start with --)\n"
                "--: unexpected argument (flags start with --)",
                "--tasks", "t", "jobs.jsonl", "--");
}

Test(settings, names_every_bad_number) {
  EXPECT_ERRORS("--workers: must be a whole number from 1 to 256\n"
                "--batch: must be a whole number from 1 to 1024\n"
                "--job-timeout: must be a whole number from 1 to 86400000\n"
                "--max-deliveries: must be a whole number from 1 to 1000\n"
                "--claim-idle: must be a whole number from 1000 to 86400000\n"
                "--drain-timeout: must be a whole number from 1 to 86400000\n"
                "--max-job-bytes: must be a whole number from 1024 to 66060288",
                "--tasks", "t", "--workers", "four", "--batch=-1",
                "--job-timeout", "1.5", "--max-deliveries=", "--claim-idle",
                "1e4", "--drain-timeout", "99999999999999999999999",
                "--max-job-bytes", " 2048");
}

Test(settings, names_bad_flag_strings_and_enums) {
  EXPECT_ERRORS(
      "--prefix: must not be empty\n"
      "--consumer: must not be empty\n"
      "--log-format: must be \"text\" or \"json\"\n"
      "--log-level: must be \"debug\", \"info\", \"warn\" or "
      "\"error\"\n"
      "--redis: localhost: expected "
      "redis://[USER[:PASSWORD]@]IP[:PORT][/DB] or "
      "unix://[USER[:PASSWORD]@]/PATH[?db=N] (or, with sentinels, "
      "sentinel://[USER[:PASSWORD]@]IP[:PORT][,IP[:PORT]...]/MASTER[/DB])\n"
      "--prefix: must not contain spaces or control characters",
      "--tasks", "t", "--prefix=", "--consumer=", "--log-format", "JSON",
      "--log-level=verbose", "--redis", "localhost", "--prefix", "a\tb");
}

/* A brace in the prefix would be every key's hash tag: one slot for all
 * queues on a cluster. */
Test(settings, refuses_a_hash_tag_in_the_prefix) {
  EXPECT_ERRORS("--prefix: must not contain '{' or '}' (each queue's keys "
                "carry their own Redis Cluster hash tag)",
                "--tasks", "t", "--prefix", "t{x}");
}

Test(settings, requires_tasks) {
  cr_expect_eq(parse_argv((char *[]){"tallyd", NULL}), TALLY_ECONFIG);
  cr_expect_str_eq(errors(),
                   "--tasks: required (or \"tasks\" in the config file)");
}

Test(settings, names_config_flag_mistakes) {
  EXPECT_ERRORS("--config: missing value\n"
                "--tasks: required (or \"tasks\" in the config file)",
                "--config");
  tally_diag_close(&d);
  tally_diag_init(&d, NULL);
  put("a.json", "{\"tasks\": \"t\"}");
  EXPECT_ERRORS("--config: given more than once\n"
                "--tasks: required (or \"tasks\" in the config file)",
                "--config", "a.json", "--config=a.json");
}

Test(settings, reports_every_error_at_once) {
  put("tallyd.json", "{\"workers\": 0, \"colour\": true, \"batch\": 2}");
  EXPECT_ERRORS("tallyd.json: colour: unknown key\n"
                "tallyd.json: workers: must be a whole number from 1 to 256\n"
                "--job-timeout: must be a whole number from 1 to 86400000\n"
                "--nope: unknown flag\n"
                "extra: unexpected argument (flags start with --)\n"
                "--tasks: required (or \"tasks\" in the config file)",
                "--job-timeout", "0", "--config", "tallyd.json", "--nope",
                "extra");
  /* The valid values were applied all the same. */
  cr_expect_eq(s.batch, 2);
}

Test(settings, keeps_messages_already_in_the_diag) {
  tally_diag_add(&d, NULL, "earlier");
  cr_expect_eq(PARSE("--tasks", "t"), 0);
  cr_expect_str_eq(errors(), "earlier");
}

Test(settings, returns_einval_for_help_with_nothing_recorded) {
  cr_expect_eq(PARSE("--help"), TALLY_EINVAL);
  cr_expect_eq(d.count, 0);
  /* Even among mistakes, and where a value was expected. */
  cr_expect_eq(PARSE("--workers", "0", "--bogus", "--tasks", "--help"),
               TALLY_EINVAL);
  cr_expect_eq(d.count, 0);
  cr_expect_null(s.tasks);
  cr_expect_neq(s.workers, 0);
}

Test(settings, refuses_a_value_for_help) {
  EXPECT_ERRORS("--help: takes no value", "--tasks", "t", "--help=yes");
}

Test(settings, lists_every_flag_with_its_default_in_the_usage) {
  static const char *const want[] = {
      "--tasks DIR",         "--plugins DIR",
      "--redis URL",         "--workers N",
      "--prefix P",          "--consumer NAME",
      "--claim-idle MS",     "--job-timeout MS",
      "--drain-timeout MS",  "--max-deliveries N",
      "--data-dir DIR",      "--log-format F",
      "--log-level L",       "--batch N",
      "--max-job-bytes N",   "--worker PATH",
      "--redis-server PATH", "--tally PATH",
      "--auto-rescore B",    "--pidfile FILE",
      "--config FILE",       "--help",
      "(default: tally)",    "(default: 30000)",
      "(default: 3)",        "(default: tally-data)",
      "(default: text)",     "(default: info)",
      "(default: 16)",       "(default: 4194304)",
      "(default: HOST:PID)", "(default: one per CPU)"};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    cr_expect_not_null(strstr(tally_settings_usage, want[i]), "%s", want[i]);
  /* The job and drain timeouts. */
  cr_expect_not_null(strstr(tally_settings_usage, "(default: 1000)\n"));
  cr_expect_not_null(strstr(tally_settings_usage, "(default: 10000)\n"));
}

/* Each number at and beyond its bounds, as a flag and in the file. */
typedef struct bound_case_s {
  char flag[24];
  char key[24];
  unsigned long long min, max;
  size_t offset;
  int is64;
} bound_case_t;

#define U(field) offsetof(tally_settings_t, field), 0
#define U64(field) offsetof(tally_settings_t, field), 1

ParameterizedTestParameters(settings, holds_each_number_to_its_bounds) {
  static bound_case_t cases[] = {
      {"--workers", "workers", 1, 256, U(workers)},
      {"--claim-idle", "claim_idle", 1000, 86400000, U64(claim_idle)},
      {"--job-timeout", "job_timeout", 1, 86400000, U64(job_timeout)},
      {"--drain-timeout", "drain_timeout", 1, 86400000, U64(drain_timeout)},
      {"--max-deliveries", "max_deliveries", 1, 1000, U(max_deliveries)},
      {"--batch", "batch", 1, 1024, U(batch)},
      {"--max-job-bytes", "max_job_bytes", 1024, 66060288, U64(max_job_bytes)},
  };
  return cr_make_param_array(bound_case_t, cases,
                             sizeof(cases) / sizeof(cases[0]));
}

static unsigned long long field_of(const bound_case_t *c) {
  const char *f = (const char *)&s + c->offset;
  return c->is64 ? *(const uint64_t *)f : *(const unsigned *)f;
}

ParameterizedTest(bound_case_t *c, settings, holds_each_number_to_its_bounds) {
  char lo[32], hi[32], want[256];
  /* The bounds themselves are accepted. */
  snprintf(lo, sizeof(lo), "%s=%llu", c->flag, c->min);
  cr_assert_eq(PARSE("--tasks", "t", lo), 0, "%s", errors());
  cr_expect_eq(field_of(c), c->min);
  snprintf(hi, sizeof(hi), "%llu", c->max);
  cr_assert_eq(PARSE("--tasks", "t", c->flag, hi), 0, "%s", errors());
  cr_expect_eq(field_of(c), c->max);

  /* One beyond each is refused, naming the flag... */
  snprintf(lo, sizeof(lo), "%s=%llu", c->flag, c->min - 1);
  snprintf(hi, sizeof(hi), "%s=%llu", c->flag, c->max + 1);
  snprintf(want, sizeof(want),
           "%s: must be a whole number from %llu to %llu\n"
           "%s: must be a whole number from %llu to %llu",
           c->flag, c->min, c->max, c->flag, c->min, c->max);
  EXPECT_ERRORS(want, "--tasks", "t", lo, hi);
  cr_expect_eq(field_of(c), c->max);

  /* ...or the file and key. */
  tally_diag_close(&d);
  tally_diag_init(&d, NULL);
  char json[128];
  snprintf(json, sizeof(json), "{\"%s\": %llu}", c->key, c->max + 1);
  snprintf(want, sizeof(want),
           "tallyd.json: %s: must be a whole number from %llu to %llu", c->key,
           c->min, c->max);
  expect_file_errors(json, want);
}
