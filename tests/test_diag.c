/* Error collection for config decoders: JSON paths, "file: path: message"
 * lines, and the cap on kept messages. */
#include "support.h"

#include <criterion/criterion.h>
#include <string.h>

Test(diag, writes_identifier_keys_with_dots_and_others_quoted) {
  tally_jpath_t p;
  tally_jpath_init(&p);
  tally_jpath_key(&p, "score_type_parameters");
  tally_jpath_index(&p, 1);
  tally_jpath_index(&p, 2);
  cr_expect_str_eq(p.buf, "score_type_parameters[1][2]");
  tally_jpath_init(&p);
  tally_jpath_key(&p, "testcases");
  size_t old = tally_jpath_key(&p, "big_0");
  cr_expect_str_eq(p.buf, "testcases.big_0");
  tally_jpath_restore(&p, old);
  tally_jpath_key(&p, "0");
  cr_expect_str_eq(p.buf, "testcases[\"0\"]");
  tally_jpath_restore(&p, old);
  tally_jpath_key(&p, "a\"b\\c\x01");
  cr_expect_str_eq(p.buf, "testcases[\"a\\\"b\\\\c\\u0001\"]");
  tally_jpath_restore(&p, old);
  tally_jpath_key(&p, "");
  cr_expect_str_eq(p.buf, "testcases[\"\"]");
  tally_jpath_restore(&p, old);
  cr_expect_str_eq(p.buf, "testcases");
}

Test(diag, cuts_an_overlong_path_with_an_ellipsis) {
  tally_jpath_t p;
  tally_jpath_init(&p);
  tally_jpath_key(&p, "root");
  for (size_t i = 0; i < 100; i++)
    tally_jpath_index(&p, 1000000 + i);
  cr_expect_lt(strlen(p.buf), sizeof(p.buf));
  cr_expect(strcmp(p.buf + strlen(p.buf) - 3, "...") == 0, "%s", p.buf);
  cr_expect_eq(strncmp(p.buf, "root[1000000]", 13), 0);
}

Test(diag, formats_file_path_and_message) {
  tally_diag_t d;
  tally_diag_init(&d, "t.json");
  tally_jpath_t p;
  tally_jpath_init(&p);
  cr_expect_eq(tally_diag_add(&d, &p, "no path %d", 1), TALLY_ECONFIG);
  tally_jpath_key(&p, "name");
  tally_diag_add(&d, &p, "is missing");
  tally_diag_add(&d, NULL, "null path");
  cr_assert_eq(d.count, 3);
  cr_expect_str_eq(d.msgs[0], "t.json: no path 1");
  cr_expect_str_eq(d.msgs[1], "t.json: name: is missing");
  cr_expect_str_eq(d.msgs[2], "t.json: null path");
  tally_diag_close(&d);
  tally_diag_init(&d, NULL);
  tally_diag_add(&d, &p, "no file");
  cr_expect_str_eq(d.msgs[0], "name: no file");
  tally_diag_close(&d);
}

Test(diag, keeps_a_bounded_number_of_messages_but_counts_them_all) {
  tally_diag_t d;
  tally_diag_init(&d, "t.json");
  for (int i = 0; i < TALLY_DIAG_MAX + 50; i++)
    tally_diag_add(&d, NULL, "error %d", i);
  cr_expect_eq(d.count, TALLY_DIAG_MAX);
  cr_expect_eq(d.dropped, 50);
  cr_expect_eq(tally_diag_count(&d), TALLY_DIAG_MAX + 50);
  cr_expect_str_eq(d.msgs[0], "t.json: error 0");
  tally_diag_close(&d);
  cr_expect_eq(tally_diag_count(&d), 0);
}

Test(diag, moves_messages_between_collections) {
  tally_diag_t a, b;
  tally_diag_init(&a, "a.json");
  tally_diag_init(&b, "b.json");
  tally_diag_add(&a, NULL, "first");
  tally_diag_add(&b, NULL, "second");
  tally_diag_add(&b, NULL, "third");
  tally_diag_move(&a, &b);
  cr_assert_eq(a.count, 3);
  cr_expect_str_eq(a.msgs[1], "b.json: second");
  cr_expect_str_eq(a.msgs[2], "b.json: third");
  cr_expect_eq(tally_diag_count(&b), 0);
  tally_diag_close(&a);
  tally_diag_close(&b);
}

Test(diag, caps_the_errors_of_a_task_with_very_many_problems) {
  /* 300 unknown codenames: every one is an error, 200 are kept. */
  char json[8192];
  size_t used = (size_t)snprintf(json, sizeof(json),
                                 "{\"name\": \"t\", \"score_type\": "
                                 "\"GroupMin\", \"score_type_parameters\": "
                                 "[[1, [");
  for (int i = 0; i < 300; i++)
    used += (size_t)snprintf(json + used, sizeof(json) - used, "%s\"x%d\"",
                             i ? ", " : "", i);
  snprintf(json + used, sizeof(json) - used,
           "]]], \"testcases\": {\"a\": true}}");
  tally_registry_t reg;
  cr_assert_eq(tally_registry_init(&reg), 0);
  tally_diag_t d;
  tally_diag_init(&d, "task.json");
  tally_task_t *task = NULL;
  cr_expect_eq(tally_task_parse(&reg, json, strlen(json), &d, &task),
               TALLY_ECONFIG);
  cr_expect_null(task);
  cr_expect_eq(tally_diag_count(&d), 300);
  cr_expect_eq(d.count, TALLY_DIAG_MAX);
  tally_diag_close(&d);
  tally_registry_close(&reg);
}
