/* The CCS Contest API's objects (ccs_int.h): a contest's model from its
 * submissions, and each endpoint's JSON as the 2023-06 specification
 * and its JSON Schemas have it. */
#include "daemon/ccs_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool id_char(char ch, bool first) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
         (ch >= '0' && ch <= '9') || ch == '_' ||
         (!first && (ch == '.' || ch == '-'));
}

const char *tally__ccs_id(const char *s, char *out) {
  size_t n = strlen(s);
  bool ok = n >= 1 && n <= CCS_ID_MAX && s[n - 1] != '.';
  for (size_t i = 0; ok && i < n; i++)
    ok = id_char(s[i], i == 0);
  if (ok)
    memcpy(out, s, n + 1);
  else
    snprintf(out, CCS_ID_MAX + 1, "x%016llx",
             (unsigned long long)tally__ccs_hash(s, n));
  return out;
}

void tally__ccs_abstime(tally_buf_t *b, double t) {
  double whole = floor(t);
  long ms = lround((t - whole) * 1000);
  if (ms == 1000) {
    whole += 1;
    ms = 0;
  }
  time_t secs = (time_t)whole;
  struct tm tm;
  char text[64];
  gmtime_r(&secs, &tm);
  size_t n = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(text + n, sizeof(text) - n, ".%03ldZ", ms);
  tally_json_str(b, text);
}

void tally__ccs_reltime(tally_buf_t *b, double seconds) {
  long long ms = llround(seconds * 1000);
  bool neg = ms < 0;
  if (neg)
    ms = -ms;
  char text[64];
  snprintf(text, sizeof(text), "%s%lld:%02lld:%02lld.%03lld", neg ? "-" : "",
           ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
  tally_json_str(b, text);
}

void tally__ccs_sub_free(ccs_sub_t *s) {
  free(s->id);
  free(s->participant);
  free(s->task);
  free(s->language);
  free(s->entry_point);
  free(s->public_subtasks);
}

void tally__ccs_model_free(ccs_model_t *m) {
  for (size_t i = 0; i < m->nsubs; i++)
    tally__ccs_sub_free(&m->subs[i]);
  free(m->subs);
  free(m->teams);
  free(m->orgs);
  free(m->langs);
  tally_icpc_board_free(&m->board);
  memset(m, 0, sizeof(*m));
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_sub(const void *x, const void *y) {
  const ccs_sub_t *a = x, *b = y;
  if (a->ems != b->ems)
    return a->ems < b->ems ? -1 : 1;
  if (a->eseq != b->eseq)
    return a->eseq < b->eseq ? -1 : 1;
  if (a->timestamp != b->timestamp)
    return a->timestamp < b->timestamp ? -1 : 1;
  return strcmp(a->id, b->id);
}

/* Sorts and removes repeats of list (n strings). */
static size_t uniq(const char **list, size_t n) {
  if (n == 0)
    return 0;
  qsort(list, n, sizeof(char *), cmp_str);
  size_t k = 1;
  for (size_t i = 1; i < n; i++)
    if (strcmp(list[i], list[k - 1]) != 0)
      list[k++] = list[i];
  return k;
}

bool tally__ccs_judged_visible(const ccs_model_t *m, const ccs_sub_t *s) {
  return isnan(m->frozen_since) || s->timestamp < m->frozen_since;
}

int tally__ccs_model(ccs_model_t *m, const tally_api_t *a,
                     const tally_contest_t *c, bool operator_view,
                     ccs_sub_t *subs, size_t nsubs) {
  memset(m, 0, sizeof(*m));
  m->c = c;
  m->cs = a->contests;
  m->operator_view = operator_view;
  m->now = tally__api_now();
  m->subs = subs;
  /* Only the contest's tasks count. */
  for (size_t i = 0; i < nsubs; i++) {
    if (tally_contest_has_task(c, subs[i].task))
      subs[m->nsubs++] = subs[i];
    else
      tally__ccs_sub_free(&subs[i]);
  }
  if (m->nsubs > 1)
    qsort(m->subs, m->nsubs, sizeof(ccs_sub_t), cmp_sub);
  double since = tally__api_freeze_since(a, c, m->now);
  m->frozen_since = operator_view ? NAN : since;
  m->frozen_at = m->thawed_at = NAN;
  if (!isnan(since)) {
    m->frozen_at = since;
  } else if (!isnan(c->freeze) && m->now >= c->freeze) {
    /* It froze and has thawed: by itself after the end, or when the
     * operator lifted it (tally keeps no time of that: the freeze's). */
    m->frozen_at = c->freeze;
    double by_itself = c->end + c->unfreeze_after;
    m->thawed_at =
        !isnan(by_itself) && m->now >= by_itself ? by_itself : c->freeze;
  }
  const tally_contestset_t *cs = m->cs;
  size_t np = cs != NULL ? cs->nparticipants : 0;
  m->teams = calloc(np + m->nsubs + 1, sizeof(char *));
  m->orgs = calloc(np + 1, sizeof(char *));
  m->langs = calloc(m->nsubs + 1, sizeof(char *));
  tally_icpc_sub_t *isubs = calloc(m->nsubs + 1, sizeof(*isubs));
  if (m->teams == NULL || m->orgs == NULL || m->langs == NULL ||
      isubs == NULL) {
    free(isubs);
    tally__ccs_model_free(m);
    return -1;
  }
  for (size_t i = 0; i < np; i++) {
    m->teams[m->nteams++] = cs->participants[i].id;
    if (cs->participants[i].team != NULL)
      m->orgs[m->norgs++] = cs->participants[i].team;
  }
  for (size_t i = 0; i < m->nsubs; i++) {
    ccs_sub_t *s = &m->subs[i];
    m->teams[m->nteams++] = s->participant;
    m->langs[m->nlangs++] = s->language != NULL ? s->language : "unknown";
    isubs[i] = (tally_icpc_sub_t){s->participant, s->task, s->id,
                                  s->timestamp,   true,    ""};
    snprintf(isubs[i].judgement, sizeof(isubs[i].judgement), "%s",
             s->judgement[0] != '\0' ? s->judgement : "JE");
  }
  m->nteams = uniq(m->teams, m->nteams);
  m->norgs = uniq(m->orgs, m->norgs);
  m->nlangs = uniq(m->langs, m->nlangs);
  tally_icpc_rules_t rules = {c->start, c->penalty_time, c->compile_penalty,
                              m->frozen_since};
  int rc = tally_icpc_build(&m->board, &rules, (const char *const *)c->tasks,
                            c->ntasks, isubs, m->nsubs, m->teams, m->nteams);
  free(isubs);
  if (rc != 0) {
    tally__ccs_model_free(m);
    return -1;
  }
  return 0;
}

/* Writers. */

static void key(tally_buf_t *b, const char *k, bool first) {
  if (!first)
    tally_buf_putc(b, ',');
  tally_json_str(b, k);
  tally_buf_putc(b, ':');
}

static void str_member(tally_buf_t *b, const char *k, const char *v,
                       bool first) {
  key(b, k, first);
  tally_json_str(b, v);
}

static void id_member(tally_buf_t *b, const char *k, const char *v,
                      bool first) {
  char id[CCS_ID_MAX + 1];
  str_member(b, k, tally__ccs_id(v, id), first);
}

static void int_member(tally_buf_t *b, const char *k, long long v) {
  char num[32];
  snprintf(num, sizeof(num), "%lld", v);
  key(b, k, false);
  tally_buf_puts(b, num);
}

static const tally_participant_t *person(const ccs_model_t *m, const char *u) {
  return m->cs != NULL ? tally_contestset_participant(m->cs, u) : NULL;
}

static void put_contest(const ccs_model_t *m, tally_buf_t *b) {
  const tally_contest_t *c = m->c;
  tally_buf_putc(b, '{');
  id_member(b, "id", c->name, true);
  str_member(b, "name", c->title, false);
  str_member(b, "formal_name", c->title, false);
  key(b, "start_time", false);
  tally__ccs_abstime(b, c->start);
  key(b, "duration", false);
  tally__ccs_reltime(b, c->end - c->start);
  if (!isnan(c->freeze)) {
    key(b, "scoreboard_freeze_duration", false);
    tally__ccs_reltime(b, c->end - c->freeze);
  }
  if (!isnan(c->freeze) && !isnan(c->unfreeze_after)) {
    key(b, "scoreboard_thaw_time", false);
    tally__ccs_abstime(b, c->end + c->unfreeze_after);
  }
  str_member(b, "scoreboard_type", "pass-fail", false);
  int_member(b, "penalty_time", c->penalty_time);
  tally_buf_putc(b, '}');
}

static void put_time_or_null(tally_buf_t *b, const char *k, double t) {
  key(b, k, false);
  if (isnan(t))
    tally_buf_puts(b, "null");
  else
    tally__ccs_abstime(b, t);
}

static void put_state(const ccs_model_t *m, tally_buf_t *b) {
  const tally_contest_t *c = m->c;
  tally_buf_puts(b, "{\"started\":");
  if (m->now >= c->start)
    tally__ccs_abstime(b, c->start);
  else
    tally_buf_puts(b, "null");
  put_time_or_null(b, "frozen", m->frozen_at);
  put_time_or_null(b, "ended", m->now >= c->end ? c->end : NAN);
  put_time_or_null(b, "thawed", m->thawed_at);
  tally_buf_puts(b, ",\"finalized\":null,\"end_of_updates\":null}");
}

/* The judgement types tally gives (engine/judgement.h), and JE for a
 * submission it could not score. */
static const struct {
  const char *id, *name;
  bool penalty, solved;
} jtypes[] = {
    {"AC", "Accepted", false, true},
    {"WA", "Wrong Answer", true, false},
    {"TLE", "Time Limit Exceeded", true, false},
    {"RTE", "Run-Time Error", true, false},
    {"CE", "Compile Error", false, false},
    {"JE", "Judging Error", false, false},
};
#define NJTYPES (sizeof(jtypes) / sizeof(jtypes[0]))

static void put_jtype(const ccs_model_t *m, tally_buf_t *b, size_t i) {
  bool penalty = strcmp(jtypes[i].id, "CE") == 0 ? m->c->compile_penalty
                                                 : jtypes[i].penalty;
  tally_buf_putc(b, '{');
  str_member(b, "id", jtypes[i].id, true);
  str_member(b, "name", jtypes[i].name, false);
  key(b, "penalty", false);
  tally_buf_puts(b, penalty ? "true" : "false");
  key(b, "solved", false);
  tally_buf_puts(b, jtypes[i].solved ? "true" : "false");
  tally_buf_putc(b, '}');
}

static void put_language(tally_buf_t *b, const char *lang) {
  tally_buf_putc(b, '{');
  id_member(b, "id", lang, true);
  str_member(b, "name", lang, false);
  tally_buf_puts(b, ",\"entry_point_required\":false,\"extensions\":[]}");
}

/* A problem's label: A to Z, then AA, AB, ... */
static void label_of(size_t i, char *out) {
  char rev[16];
  size_t n = 0;
  i++;
  while (i > 0 && n < sizeof(rev)) {
    i--;
    rev[n++] = (char)('A' + i % 26);
    i /= 26;
  }
  for (size_t k = 0; k < n; k++)
    out[k] = rev[n - 1 - k];
  out[n] = '\0';
}

static void put_problem(const ccs_model_t *m, tally_buf_t *b, size_t i) {
  const char *task = m->c->tasks[i];
  const tally_task_max_t *t =
      m->cs != NULL ? tally_contestset_max(m->cs, task) : NULL;
  char label[16];
  label_of(i, label);
  tally_buf_putc(b, '{');
  id_member(b, "id", task, true);
  str_member(b, "label", label, false);
  str_member(b, "name", task, false);
  int_member(b, "ordinal", (long long)i + 1);
  if (t != NULL && !isnan(t->time_limit)) {
    key(b, "time_limit", false);
    tally_json_num(b, t->time_limit);
  }
  int_member(b, "test_data_count", t != NULL ? (long long)t->ntestcases : 0);
  tally_buf_putc(b, '}');
}

static void put_org(tally_buf_t *b, const char *org) {
  tally_buf_putc(b, '{');
  id_member(b, "id", org, true);
  str_member(b, "name", org, false);
  tally_buf_putc(b, '}');
}

static void put_team(const ccs_model_t *m, tally_buf_t *b, const char *u) {
  const tally_participant_t *p = person(m, u);
  char id[CCS_ID_MAX + 1];
  tally_buf_putc(b, '{');
  str_member(b, "id", tally__ccs_id(u, id), true);
  str_member(b, "name", p != NULL && p->name != NULL ? p->name : u, false);
  str_member(b, "label", id, false);
  if (p != NULL && p->name != NULL)
    str_member(b, "display_name", p->name, false);
  if (p != NULL && p->team != NULL)
    id_member(b, "organization_id", p->team, false);
  tally_buf_puts(b, ",\"group_ids\":[]}");
}

void tally__ccs_put_submission(const ccs_model_t *m, tally_buf_t *b,
                               const ccs_sub_t *s) {
  tally_buf_putc(b, '{');
  id_member(b, "id", s->id, true);
  id_member(b, "language_id", s->language != NULL ? s->language : "unknown",
            false);
  id_member(b, "problem_id", s->task, false);
  id_member(b, "team_id", s->participant, false);
  key(b, "time", false);
  tally__ccs_abstime(b, s->timestamp);
  key(b, "contest_time", false);
  tally__ccs_reltime(b, s->timestamp - m->c->start);
  /* C and C++ have none (the specification: it must be null). */
  char lid[CCS_ID_MAX + 1];
  tally__ccs_id(s->language != NULL ? s->language : "unknown", lid);
  key(b, "entry_point", false);
  if (s->entry_point != NULL && strcmp(lid, "c") != 0 &&
      strcmp(lid, "cpp") != 0)
    tally_json_str(b, s->entry_point);
  else
    tally_buf_puts(b, "null");
  tally_buf_puts(b, ",\"files\":[]}");
}

/* When s was judged: its result's time, else its own. */
static double judged_at(const ccs_sub_t *s) {
  return s->ems > 0 ? (double)s->ems / 1000 : s->timestamp;
}

void tally__ccs_put_judgement(const ccs_model_t *m, tally_buf_t *b,
                              const ccs_sub_t *s) {
  double t = judged_at(s);
  tally_buf_putc(b, '{');
  id_member(b, "id", s->id, true);
  id_member(b, "submission_id", s->id, false);
  str_member(b, "judgement_type_id",
             s->judgement[0] != '\0' ? s->judgement : "JE", false);
  key(b, "start_time", false);
  tally__ccs_abstime(b, t);
  key(b, "start_contest_time", false);
  tally__ccs_reltime(b, t - m->c->start);
  key(b, "end_time", false);
  tally__ccs_abstime(b, t);
  key(b, "end_contest_time", false);
  tally__ccs_reltime(b, t - m->c->start);
  tally_buf_putc(b, '}');
}

/* The scoreboard's time: the latest judgement it shows, else now. */
static double board_time(const ccs_model_t *m) {
  double t = NAN;
  for (size_t i = 0; i < m->nsubs; i++)
    if (tally__ccs_judged_visible(m, &m->subs[i]) &&
        (isnan(t) || judged_at(&m->subs[i]) > t))
      t = judged_at(&m->subs[i]);
  return isnan(t) ? m->now : t;
}

static void put_scoreboard(const ccs_model_t *m, tally_buf_t *b) {
  double t = board_time(m);
  tally_buf_puts(b, "{\"time\":");
  tally__ccs_abstime(b, t);
  key(b, "contest_time", false);
  tally__ccs_reltime(b, t - m->c->start);
  key(b, "state", false);
  put_state(m, b);
  tally_buf_puts(b, ",\"rows\":[");
  for (size_t i = 0; i < m->board.nrows; i++) {
    const tally_icpc_row_t *w = &m->board.rows[i];
    if (i > 0)
      tally_buf_putc(b, ',');
    tally_buf_puts(b, "{\"rank\":");
    tally_json_num(b, (double)w->rank);
    id_member(b, "team_id", w->participant, false);
    tally_buf_puts(b, ",\"score\":{\"num_solved\":");
    tally_json_num(b, w->solved);
    int_member(b, "total_time", w->penalty);
    if (w->solved > 0)
      int_member(b, "time", w->last);
    tally_buf_puts(b, "},\"problems\":[");
    for (size_t k = 0; k < m->board.ntasks; k++) {
      const tally_icpc_cell_t *cell = &w->cells[k];
      if (k > 0)
        tally_buf_putc(b, ',');
      tally_buf_putc(b, '{');
      id_member(b, "problem_id", m->c->tasks[k], true);
      int_member(b, "num_judged", cell->judged);
      int_member(b, "num_pending", cell->pending);
      key(b, "solved", false);
      tally_buf_puts(b, cell->solved ? "true" : "false");
      if (cell->solved)
        int_member(b, "time", cell->minute);
      tally_buf_putc(b, '}');
    }
    tally_buf_puts(b, "]}");
  }
  tally_buf_puts(b, "]}");
}

/* Awards: the winner(s), the first to solve each problem and, where the
 * contest gives medal counts, the medals by rank; only teams that solved
 * something win one. */
static size_t award_count(const ccs_model_t *m) {
  size_t n = 1 + m->c->ntasks;
  for (int k = 0; k < 3; k++)
    n += m->c->medals[k] > 0;
  return n;
}

static void put_award(const ccs_model_t *m, tally_buf_t *b, size_t i) {
  static const char *const medal_ids[] = {"gold-medal", "silver-medal",
                                          "bronze-medal"};
  static const char *const medal_names[] = {
      "Gold medal winner", "Silver medal winner", "Bronze medal winner"};
  const tally_icpc_board_t *g = &m->board;
  char id[64 + CCS_ID_MAX], citation[600];
  long lo = 0, hi = 0; /* ranks [lo, hi] win, by rank */
  long task = -1;
  if (i == 0) {
    snprintf(id, sizeof(id), "winner");
    snprintf(citation, sizeof(citation), "Contest winner");
    lo = hi = 1;
  } else if (i <= m->c->ntasks) {
    task = (long)i - 1;
    char pid[CCS_ID_MAX + 1];
    snprintf(id, sizeof(id), "first-to-solve-%s",
             tally__ccs_id(m->c->tasks[task], pid));
    snprintf(citation, sizeof(citation), "First to solve problem %s",
             m->c->tasks[task]);
  } else {
    size_t k = i - 1 - m->c->ntasks, seen = 0;
    long start = 1;
    for (int kind = 0; kind < 3; kind++) {
      if (m->c->medals[kind] == 0) {
        start += m->c->medals[kind];
        continue;
      }
      if (seen++ == k) {
        snprintf(id, sizeof(id), "%s", medal_ids[kind]);
        snprintf(citation, sizeof(citation), "%s", medal_names[kind]);
        lo = start;
        hi = start + m->c->medals[kind] - 1;
        break;
      }
      start += m->c->medals[kind];
    }
  }
  tally_buf_putc(b, '{');
  str_member(b, "id", id, true);
  str_member(b, "citation", citation, false);
  tally_buf_puts(b, ",\"team_ids\":[");
  bool first = true;
  for (size_t r = 0; r < g->nrows; r++) {
    const tally_icpc_row_t *w = &g->rows[r];
    bool wins =
        task >= 0 ? w->cells[task].first
                  : w->solved > 0 && (long)w->rank >= lo && (long)w->rank <= hi;
    if (!wins)
      continue;
    char tid[CCS_ID_MAX + 1];
    if (!first)
      tally_buf_putc(b, ',');
    first = false;
    tally_json_str(b, tally__ccs_id(w->participant, tid));
  }
  tally_buf_puts(b, "]}");
}

/* The endpoints as collections of objects: how many, and the i-th with
 * its id (into id, CCS_ID_MAX + 1 bytes... or more for awards). */
static size_t count_of(const ccs_model_t *m, int kind) {
  switch (kind) {
  case CCS_JTYPES:
    return NJTYPES;
  case CCS_LANGUAGES:
    return m->nlangs;
  case CCS_PROBLEMS:
    return m->c->ntasks;
  case CCS_GROUPS:
    return 0;
  case CCS_ORGS:
    return m->norgs;
  case CCS_TEAMS:
    return m->nteams;
  case CCS_SUBMISSIONS:
    return m->nsubs;
  case CCS_JUDGEMENTS:
    return m->nsubs;
  case CCS_AWARDS:
    return award_count(m);
  default:
    return 0;
  }
}

/* Writes the i-th object of kind (false: none to show there, a judgement
 * hidden by the freeze). */
static bool put_item(const ccs_model_t *m, int kind, size_t i, tally_buf_t *b) {
  switch (kind) {
  case CCS_JTYPES:
    put_jtype(m, b, i);
    return true;
  case CCS_LANGUAGES:
    put_language(b, m->langs[i]);
    return true;
  case CCS_PROBLEMS:
    put_problem(m, b, i);
    return true;
  case CCS_ORGS:
    put_org(b, m->orgs[i]);
    return true;
  case CCS_TEAMS:
    put_team(m, b, m->teams[i]);
    return true;
  case CCS_SUBMISSIONS:
    tally__ccs_put_submission(m, b, &m->subs[i]);
    return true;
  case CCS_JUDGEMENTS:
    if (!tally__ccs_judged_visible(m, &m->subs[i]))
      return false;
    tally__ccs_put_judgement(m, b, &m->subs[i]);
    return true;
  case CCS_AWARDS:
    put_award(m, b, i);
    return true;
  default:
    return false;
  }
}

/* The id of an object as written: its "id" member's value. */
static bool item_id(const char *json, char *out, size_t len) {
  const char *p = strstr(json, "{\"id\":\"");
  if (p != json)
    return false;
  p += 7;
  const char *e = strchr(p, '"');
  if (e == NULL || (size_t)(e - p) >= len)
    return false;
  memcpy(out, p, (size_t)(e - p));
  out[e - p] = '\0';
  return true;
}

unsigned tally__ccs_answer(const ccs_model_t *m, int kind, const char *id,
                           tally_buf_t *b) {
  if (kind == CCS_CONTEST) {
    put_contest(m, b);
  } else if (kind == CCS_STATE) {
    put_state(m, b);
  } else if (kind == CCS_SCOREBOARD) {
    put_scoreboard(m, b);
  } else {
    size_t n = count_of(m, kind);
    tally_buf_t one;
    tally_buf_init(&one);
    bool found = false, first = true;
    if (id == NULL)
      tally_buf_putc(b, '[');
    for (size_t i = 0; i < n && !found; i++) {
      tally_buf_reset(&one);
      if (!put_item(m, kind, i, &one))
        continue;
      char oid[128];
      if (id != NULL) {
        found = item_id(tally_buf_text(&one), oid, sizeof(oid)) &&
                strcmp(oid, id) == 0;
        if (found)
          tally_buf_put(b, one.data, one.len);
        continue;
      }
      if (!first)
        tally_buf_putc(b, ',');
      first = false;
      tally_buf_put(b, one.data, one.len);
    }
    if (one.oom)
      b->oom = true;
    tally_buf_close(&one);
    if (id == NULL) {
      tally_buf_putc(b, ']');
    } else if (!found) {
      tally_buf_puts(b, "{\"code\":404,\"message\":");
      char msg[400];
      snprintf(msg, sizeof(msg), "no such object: %.200s", id);
      tally_json_str(b, msg);
      tally_buf_puts(b, "}\n");
      return 404;
    }
  }
  tally_buf_putc(b, '\n');
  return 200;
}
