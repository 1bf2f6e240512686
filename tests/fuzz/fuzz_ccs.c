/* The CCS Contest API's readers and writers (daemon/ccs*.c): submissions
 * read from summaries as Redis holds them, a pass-fail contest's model,
 * and every endpoint and the event feed written from it. The input is
 * lines: pairs of a submission id and its summary, then optionally its
 * result entry ("<ms>-<seq>") after a tab. Whatever the bytes, each answer
 * must be one JSON value, each feed line one JSON object, and a
 * submission's judgement shown only where its view allows. */
#include "daemon/ccs_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUBS 32

static redisReply str_reply(const char *s) {
  redisReply r;
  memset(&r, 0, sizeof(r));
  r.type = REDIS_REPLY_STRING;
  r.str = (char *)s;
  r.len = strlen(s);
  return r;
}

static void must_parse(const char *text, size_t len) {
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (j == NULL)
    abort();
  cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  static char *tasks[] = {"a", "b c"};
  tally_contest_t c = {.name = "c",
                       .title = "C",
                       .tasks = tasks,
                       .ntasks = 2,
                       .start = 1000,
                       .end = 100000,
                       .freeze = 50000,
                       .unfreeze_after = NAN,
                       .scoring = TALLY_SCORING_PASS_FAIL,
                       .penalty_time = 20,
                       .medals = {1, 1, 1}};
  tally_contestset_t cs = {.contests = &c, .count = 1};
  tally_api_t a;
  memset(&a, 0, sizeof(a));
  a.contests = &cs;
  ccs_read_t rd;
  memset(&rd, 0, sizeof(rd));
  rd.a = &a;
  snprintf(rd.contest, sizeof(rd.contest), "c");
  for (int view = 0; view < 2; view++) {
    ccs_sub_t *subs = calloc(MAX_SUBS, sizeof(*subs));
    size_t n = 0;
    char *p = text;
    while (p != NULL && n < MAX_SUBS) {
      char *id = p, *nl = strchr(p, '\n');
      if (nl == NULL)
        break;
      *nl = '\0';
      char *summary = nl + 1;
      char *end = strchr(summary, '\n');
      if (end != NULL)
        *end = '\0';
      char *tab = strchr(summary, '\t');
      if (tab != NULL)
        *tab = '\0';
      redisReply s = str_reply(summary), e = str_reply(tab ? tab + 1 : "");
      redisReply t = str_reply(n % 2 ? "1" : "0");
      if (subs != NULL && tally__ccs_sub_of(&rd, id, &s, &e, &t, &subs[n]))
        n++;
      /* Put the text back for the other view. */
      *nl = '\n';
      if (end != NULL)
        *end = '\n';
      if (tab != NULL)
        *tab = '\t';
      p = end != NULL ? end + 1 : NULL;
    }
    ccs_model_t m;
    if (subs == NULL || tally__ccs_model(&m, &a, &c, view == 1, subs, n) != 0)
      continue;
    static const int kinds[] = {CCS_CONTEST,    CCS_JTYPES,      CCS_LANGUAGES,
                                CCS_PROBLEMS,   CCS_GROUPS,      CCS_ORGS,
                                CCS_TEAMS,      CCS_SUBMISSIONS, CCS_JUDGEMENTS,
                                CCS_SCOREBOARD, CCS_STATE,       CCS_AWARDS};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
      tally_buf_t b;
      tally_buf_init(&b);
      if (tally__ccs_answer(&m, kinds[k], NULL, &b) != 200)
        abort();
      if (!b.oom)
        must_parse(b.data, b.len);
      tally_buf_close(&b);
    }
    tally_buf_t feed;
    tally_buf_init(&feed);
    if (tally__ccs_feed(&m, NULL, false, 0, 0, &feed) == 0 && !feed.oom) {
      for (char *line = feed.data; line < feed.data + feed.len;) {
        char *nl = memchr(line, '\n', (size_t)(feed.data + feed.len - line));
        if (nl == NULL)
          abort();
        must_parse(line, (size_t)(nl - line));
        line = nl + 1;
      }
    }
    tally_buf_close(&feed);
    /* The public view shows no judgement of a submission made during
     * the freeze. */
    for (size_t i = 0; i < m.nsubs; i++)
      if (view == 0 && m.subs[i].timestamp >= c.freeze &&
          tally__ccs_judged_visible(&m, &m.subs[i]))
        abort();
    tally__ccs_model_free(&m);
  }
  free(text);
  return 0;
}
