/* The job decoder's arena (config/arena.c): the tree of each job comes
 * from a few blocks that the next job starts again, string lengths stay
 * exact for strings with a NUL in them, and nothing is lost or leaked. */
#include "config/arena.h"
#include "config/job.h"
#include "config/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parse(tally_job_t *job, const char *text) {
  char err[256];
  cr_assert_eq(tally_job_parse(job, text, strlen(text), err, sizeof(err)), 0,
               "%s", err);
}

Test(arena, a_job_string_with_a_nul_keeps_its_length) {
  tally_job_t job;
  tally_job_init(&job);
  parse(&job, "{\"submission\":\"s\",\"evaluations\":{},"
              "\"x\":\"ab\\u0000cd\\u00e9\",\"y\":\"\\u0000\",\"z\":\"\"}");
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(job.root, "x");
  const cJSON *y = cJSON_GetObjectItemCaseSensitive(job.root, "y");
  const cJSON *z = cJSON_GetObjectItemCaseSensitive(job.root, "z");
  cr_expect_eq(tally_json_strlen(x), 7, "a, b, NUL, c, d and two bytes of e");
  cr_expect_eq(memcmp(x->valuestring, "ab\0cd\xc3\xa9", 7), 0);
  cr_expect_eq(tally_json_strlen(y), 1);
  cr_expect_eq(tally_json_strlen(z), 0);
  /* A copy is not the arena's: it is measured as any heap string (cJSON
   * copies up to the first NUL). */
  cJSON *copy = cJSON_Duplicate(x, 1);
  cr_expect_eq(tally_json_strlen(copy), 2);
  cJSON_Delete(copy);
  tally_job_close(&job);
}

Test(arena, the_next_job_reuses_the_blocks) {
  tally_job_t job;
  tally_job_init(&job);
  char text[4096];
  int n =
      snprintf(text, sizeof(text), "{\"submission\":\"s\",\"evaluations\":{");
  for (int i = 0; i < 100; i++)
    n += snprintf(text + n, sizeof(text) - (size_t)n, "%s\"%d\":1",
                  i ? "," : "", i);
  snprintf(text + n, sizeof(text) - (size_t)n, "}}");
  parse(&job, text);
  size_t first = tally_arena_bytes(&job.arena);
  cr_expect_geq(first, 64 * 1024);
  for (int k = 0; k < 50; k++)
    parse(&job, text);
  cr_expect_eq(tally_arena_bytes(&job.arena), first,
               "no block more for the same job");
  parse(&job, "{\"submission\":\"t\",\"evaluations\":{}}");
  cr_expect_str_eq(
      cJSON_GetObjectItemCaseSensitive(job.root, "submission")->valuestring,
      "t");
  tally_job_close(&job);
}

Test(arena, a_large_job_grows_it_and_a_reset_gives_back_the_excess) {
  tally_job_t job;
  tally_job_init(&job);
  /* About 3 MB of tree: more blocks than a reset keeps (1 MiB). */
  size_t cap = 4 << 20;
  char *text = malloc(cap);
  size_t n = (size_t)snprintf(text, cap,
                              "{\"submission\":\"s\",\"evaluations\""
                              ":{},\"big\":[");
  for (int i = 0; i < 40000; i++)
    n += (size_t)snprintf(text + n, cap - n, "%s\"item number %d\"",
                          i ? "," : "", i);
  snprintf(text + n, cap - n, "]}");
  parse(&job, text);
  size_t grown = tally_arena_bytes(&job.arena);
  cr_expect_gt(grown, 1 << 20, "%zu bytes", grown);
  const cJSON *big = cJSON_GetObjectItemCaseSensitive(job.root, "big");
  cr_expect_eq(cJSON_GetArraySize(big), 40000);
  cr_expect_str_eq(cJSON_GetArrayItem(big, 39999)->valuestring,
                   "item number 39999");
  parse(&job, "{\"submission\":\"s\",\"evaluations\":{}}");
  cr_expect_leq(tally_arena_bytes(&job.arena), 1 << 20, "at most 1 MiB kept");
  free(text);
  tally_job_close(&job);
  cr_expect_null(job.arena.first);
}

Test(arena, a_refused_job_leaves_nothing_behind) {
  tally_job_t job;
  tally_job_init(&job);
  char err[256];
  const char *bad = "{\"submission\":\"s\",\"evaluations\":{\"a\":[1,2,";
  cr_expect_neq(tally_job_parse(&job, bad, strlen(bad), err, sizeof(err)), 0);
  cr_expect_null(job.root);
  parse(&job, "{\"submission\":\"s\",\"evaluations\":{}}");
  tally_job_close(&job);
}

Test(arena, outside_a_window_cjson_uses_the_heap) {
  tally_arena_t a = {0};
  tally_arena_t *was = tally_arena_use(&a);
  cJSON *in = cJSON_Parse("[\"in the arena\"]");
  tally_arena_use(was);
  cJSON *out = cJSON_Parse("[\"on the heap\"]");
  cr_expect_not_null(a.first);
  cr_expect_str_eq(cJSON_GetArrayItem(in, 0)->valuestring, "in the arena");
  cJSON_Delete(out); /* free() of heap blocks */
  was = tally_arena_use(&a);
  cJSON_Delete(in); /* skips the arena's blocks */
  tally_arena_use(was);
  tally_arena_free(&a);
}

/* tally_json_parse inside a window marks the tree, so that its strings
 * are measured without asking malloc about the arena's memory (which
 * only heap blocks answer); outside one it is cJSON's parse. */
Test(arena, tally_json_parse_measures_its_strings_in_a_window) {
  static const char text[] =
      "{\"a\":\"x\\u0000y\",\"b\":[\"\",\"longer one\"]}";
  tally_arena_t a = {0};
  tally_arena_t *was = tally_arena_use(&a);
  cJSON *in = tally_json_parse(text, strlen(text));
  cr_assert_not_null(in);
  cr_expect_not_null(a.first);
  cr_expect_eq(tally_json_strlen(cJSON_GetObjectItemCaseSensitive(in, "a")), 3);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(in, "b");
  cr_expect_eq(tally_json_strlen(cJSON_GetArrayItem(b, 0)), 0);
  cr_expect_eq(tally_json_strlen(cJSON_GetArrayItem(b, 1)), 10);
  cJSON_Delete(in);
  tally_arena_use(was);
  tally_arena_free(&a);
  cJSON *out = tally_json_parse(text, strlen(text));
  cr_expect_eq(tally_json_strlen(cJSON_GetObjectItemCaseSensitive(out, "a")),
               3);
  cJSON_Delete(out);
  cr_expect_null(tally_json_parse("{\"a\":", 5));
}
