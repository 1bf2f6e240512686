/* Contest configs and participants: the strict decoders and the loader. */
#include "engine/contests.h"

#include "config/cfg.h"
#include "config/error.h"
#include "contest/scoremode.h"
#include "engine/taskset.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const ranking_names[] = {"total", "elo", NULL};
static const char *const scoring_names[] = {"score", "pass-fail", NULL};

enum {
  KEY_NAME,
  KEY_TITLE,
  KEY_TASKS,
  KEY_START,
  KEY_END,
  KEY_FREEZE,
  KEY_UNFREEZE_AFTER,
  KEY_PRECISION,
  KEY_RANKING,
  KEY_QUEUE,
  KEY_SCORING,
  KEY_PENALTY_TIME,
  KEY_COMPILE_PENALTY,
  KEY_MEDALS,
  KEY_RWS,
  NKEYS
};

static const tally_cfg_key_t contest_keys[] = {
    [KEY_NAME] = {"name", tally_cfg_set_string, offsetof(tally_contest_t, name),
                  TALLY_CFG_REQUIRED, 0, 0, NULL},
    [KEY_TITLE] = {"title", tally_cfg_set_string,
                   offsetof(tally_contest_t, title), 0, 0, 0, NULL},
    [KEY_TASKS] = {"tasks", NULL, 0, TALLY_CFG_REQUIRED, 0, 0, NULL},
    [KEY_START] = {"start", NULL, 0, 0, 0, 0, NULL},
    [KEY_END] = {"end", NULL, 0, 0, 0, 0, NULL},
    [KEY_FREEZE] = {"freeze", NULL, 0, 0, 0, 0, NULL},
    [KEY_UNFREEZE_AFTER] = {"unfreeze_after", NULL, 0, 0, 0, 0, NULL},
    [KEY_PRECISION] = {"score_precision", tally_cfg_set_int,
                       offsetof(tally_contest_t, score_precision), 0, 0, 10,
                       NULL},
    [KEY_RANKING] = {"ranking", tally_cfg_set_enum,
                     offsetof(tally_contest_t, ranking), 0, 0, 0,
                     ranking_names},
    [KEY_QUEUE] = {"queue", tally_cfg_set_string,
                   offsetof(tally_contest_t, queue), 0, 0, 0, NULL},
    [KEY_SCORING] = {"scoring", tally_cfg_set_enum,
                     offsetof(tally_contest_t, scoring), 0, 0, 0,
                     scoring_names},
    [KEY_PENALTY_TIME] = {"penalty_time", tally_cfg_set_int,
                          offsetof(tally_contest_t, penalty_time), 0, 0,
                          1000000, NULL},
    [KEY_COMPILE_PENALTY] = {"compile_penalty", NULL, 0, 0, 0, 0, NULL},
    [KEY_MEDALS] = {"medals", NULL, 0, 0, 0, 0, NULL},
    [KEY_RWS] = {"rws", NULL, 0, 0, 0, 0, NULL},
    [NKEYS] = {NULL, NULL, 0, 0, 0, 0, NULL},
};

int tally_rfc3339(const char *s, double *out) {
  /* The date and time by strptime; the fraction and the offset, which it
   * does not read, by hand. RFC 3339 fixes every field's width. */
  static const char shape[] = "dddd-dd-ddTdd:dd:dd";
  for (size_t i = 0; i < sizeof(shape) - 1; i++) {
    char want = shape[i];
    if (want == 'd'   ? !isdigit((unsigned char)s[i])
        : want == 'T' ? (s[i] != 'T' && s[i] != 't' && s[i] != ' ')
                      : s[i] != want)
      return -1;
  }
  char date[20];
  memcpy(date, s, 19);
  date[19] = '\0';
  date[10] = 'T';
  struct tm tm = {0};
  const char *end = strptime(date, "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == NULL || *end != '\0')
    return -1;
  struct tm want = tm;
  const char *p = s + 19;
  double frac = 0;
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p))
      return -1;
    double scale = 0.1;
    while (isdigit((unsigned char)*p)) {
      frac += (*p - '0') * scale;
      scale /= 10;
      p++;
    }
  }
  long offset = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]) ||
        p[3] != ':' || !isdigit((unsigned char)p[4]) ||
        !isdigit((unsigned char)p[5]))
      return -1;
    long h = (p[1] - '0') * 10 + (p[2] - '0');
    long m = (p[4] - '0') * 10 + (p[5] - '0');
    if (h > 23 || m > 59)
      return -1;
    offset = (h * 60 + m) * 60 * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p != '\0')
    return -1;
  /* A leap second (:60) is accepted as the next second, as RFC 3339
   * allows; a day that does not exist (02-30) is not. */
  bool leap = tm.tm_sec == 60;
  if (leap)
    tm.tm_sec = 59;
  time_t t = timegm(&tm);
  struct tm back;
  if (t == (time_t)-1 || gmtime_r(&t, &back) == NULL ||
      back.tm_mday != want.tm_mday || back.tm_mon != want.tm_mon ||
      back.tm_hour != want.tm_hour || back.tm_min != want.tm_min)
    return -1;
  *out = (double)t + (leap ? 1 : 0) + frac - (double)offset;
  return 0;
}

void tally_rfc3339_text(double t, char *buf, size_t len) {
  time_t s = (time_t)floor(t);
  struct tm tm;
  if (!isfinite(t) || gmtime_r(&s, &tm) == NULL) {
    snprintf(buf, len, "?");
    return;
  }
  char text[64];
  strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  double frac = t - floor(t);
  if (frac > 0) {
    char f[16];
    snprintf(f, sizeof(f), "%.3f", frac);
    strncat(text, f + 1, sizeof(text) - strlen(text) - 1);
  }
  snprintf(buf, len, "%sZ", text);
}

bool tally_queue_name_ok(const char *name) {
  size_t n = 0;
  for (; name[n] != '\0'; n++) {
    char c = name[n];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      return false;
  }
  return n >= 1 && n <= TALLY_QUEUE_NAME_MAX;
}

void tally_contest_free(tally_contest_t *c) {
  for (size_t i = 0; i < c->nrws; i++) {
    free(c->rws[i].url);
    free(c->rws[i].username);
    free(c->rws[i].password);
  }
  free(c->rws);
  free(c->name);
  free(c->title);
  free(c->queue);
  for (size_t i = 0; i < c->ntasks; i++)
    free(c->tasks[i]);
  free(c->tasks);
  free(c->file);
  memset(c, 0, sizeof(*c));
}

/* The "rws" key: a list of {"url", "username", "password"}, each a
 * Ranking Web Server the contest is pushed to. */
static int decode_rws(const cJSON *v, tally_contest_t *c, tally_diag_t *d,
                      tally_jpath_t *path) {
  size_t old = tally_jpath_key(path, "rws");
  int rc = 0;
  if (!cJSON_IsArray(v) || v->child == NULL) {
    rc = tally_diag_add(d, path,
                        "must be a non-empty list of {\"url\", "
                        "\"username\", \"password\"}");
    tally_jpath_restore(path, old);
    return rc;
  }
  size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
  c->rws = calloc(n, sizeof(*c->rws));
  if (c->rws == NULL) {
    tally_jpath_restore(path, old);
    return tally_diag_add(d, NULL, "out of memory");
  }
  for (const cJSON *t = v->child; t != NULL; t = t->next, i++) {
    size_t o2 = tally_jpath_index(path, i);
    tally_rws_target_t *r = &c->rws[c->nrws++];
    if (!cJSON_IsObject(t)) {
      rc = tally_diag_add(d, path, "must be an object");
      tally_jpath_restore(path, o2);
      continue;
    }
    for (const cJSON *m = t->child; m != NULL; m = m->next) {
      size_t o3 = tally_jpath_key(path, m->string);
      char **dst = strcmp(m->string, "url") == 0        ? &r->url
                   : strcmp(m->string, "username") == 0 ? &r->username
                   : strcmp(m->string, "password") == 0 ? &r->password
                                                        : NULL;
      if (dst == NULL)
        rc = tally_diag_add(d, path,
                            "unknown key (a Ranking Web Server has url, "
                            "username and password)");
      else if (*dst != NULL)
        rc = tally_diag_add(d, path, "given twice");
      else if (!cJSON_IsString(m) || m->valuestring[0] == '\0')
        rc = tally_diag_add(d, path, "must be a non-empty string");
      else if (dst == &r->url && strncmp(m->valuestring, "http://", 7) != 0 &&
               strncmp(m->valuestring, "https://", 8) != 0)
        rc = tally_diag_add(d, path, "must be an http:// or https:// URL");
      else {
        /* The entities' paths go after it: it ends in '/'. */
        size_t len = strlen(m->valuestring);
        bool slash = m->valuestring[len - 1] == '/';
        *dst = malloc(len + 2);
        if (*dst == NULL)
          rc = tally_diag_add(d, NULL, "out of memory");
        else
          snprintf(*dst, len + 2, "%s%s", m->valuestring,
                   dst == &r->url && !slash ? "/" : "");
      }
      tally_jpath_restore(path, o3);
    }
    if (r->url == NULL) {
      rc = tally_diag_add(d, path, "url: is required");
    }
    if ((r->username == NULL) != (r->password == NULL))
      rc = tally_diag_add(d, path, "username and password go together");
    tally_jpath_restore(path, o2);
  }
  tally_jpath_restore(path, old);
  return rc;
}

/* The time at node v, or a message. */
static const char *time_of(const cJSON *v, double *out) {
  if (!cJSON_IsString(v))
    return "must be a string, an RFC 3339 time";
  if (tally_rfc3339(v->valuestring, out) != 0)
    return "must be an RFC 3339 time, such as 2026-11-27T09:00:00Z";
  return NULL;
}

static int decode_tasks(const cJSON *v, tally_contest_t *c, tally_diag_t *d,
                        tally_jpath_t *path) {
  size_t old = tally_jpath_key(path, "tasks");
  int rc = 0;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
    rc = tally_diag_add(d, path, "must be an array of task names, not empty");
    tally_jpath_restore(path, old);
    return rc;
  }
  size_t n = (size_t)cJSON_GetArraySize(v);
  c->tasks = calloc(n, sizeof(char *));
  if (c->tasks == NULL) {
    tally_jpath_restore(path, old);
    return tally_diag_add(d, NULL, "out of memory");
  }
  size_t i = 0;
  for (const cJSON *t = v->child; t != NULL; t = t->next, i++) {
    size_t o2 = tally_jpath_index(path, i);
    if (!cJSON_IsString(t) || t->valuestring[0] == '\0') {
      rc = tally_diag_add(d, path, "must be a task name, a string");
    } else {
      for (size_t k = 0; k < c->ntasks; k++)
        if (strcmp(c->tasks[k], t->valuestring) == 0)
          rc =
              tally_diag_add(d, path, "\"%s\" is listed twice", t->valuestring);
      char *copy = strdup(t->valuestring);
      if (copy == NULL)
        rc = tally_diag_add(d, NULL, "out of memory");
      else
        c->tasks[c->ntasks++] = copy;
    }
    tally_jpath_restore(path, o2);
  }
  tally_jpath_restore(path, old);
  return rc;
}

int tally_contest_parse(const char *text, size_t len, tally_diag_t *d,
                        tally_contest_t *c) {
  memset(c, 0, sizeof(*c));
  c->start = c->end = c->freeze = c->unfreeze_after = NAN;
  cJSON *root = tally_cfg_parse_json(text, len, d);
  if (root == NULL)
    return TALLY_ECONFIG;
  tally_jpath_t path;
  tally_jpath_init(&path);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return tally_diag_add(d, NULL, "a contest config must be a JSON object");
  }
  const cJSON *found[NKEYS];
  int rc = tally_cfg_decode(contest_keys, root, c, d, &path, found);
  if (found[KEY_TASKS] != NULL &&
      decode_tasks(found[KEY_TASKS], c, d, &path) != 0)
    rc = TALLY_ECONFIG;
  double *times[] = {
      [KEY_START] = &c->start, [KEY_END] = &c->end, [KEY_FREEZE] = &c->freeze};
  for (int k = KEY_START; k <= KEY_FREEZE; k++) {
    if (found[k] == NULL)
      continue;
    const char *bad = time_of(found[k], times[k]);
    if (bad != NULL) {
      size_t old = tally_jpath_key(&path, contest_keys[k].name);
      rc = tally_diag_add(d, &path, "%s", bad);
      tally_jpath_restore(&path, old);
    }
  }
  const cJSON *u = found[KEY_UNFREEZE_AFTER];
  if (u != NULL) {
    size_t old = tally_jpath_key(&path, "unfreeze_after");
    if (!cJSON_IsNumber(u) || !(u->valuedouble >= 0) ||
        !isfinite(u->valuedouble))
      rc = tally_diag_add(d, &path, "must be a number of seconds, at least 0");
    else
      c->unfreeze_after = u->valuedouble;
    tally_jpath_restore(&path, old);
  }
  const cJSON *cp = found[KEY_COMPILE_PENALTY];
  if (cp != NULL) {
    size_t old = tally_jpath_key(&path, "compile_penalty");
    if (!cJSON_IsBool(cp))
      rc = tally_diag_add(d, &path, "must be true or false");
    else
      c->compile_penalty = cJSON_IsTrue(cp);
    tally_jpath_restore(&path, old);
  }
  const cJSON *md = found[KEY_MEDALS];
  if (md != NULL) {
    size_t old = tally_jpath_key(&path, "medals");
    static const char *const kinds[] = {"gold", "silver", "bronze"};
    if (!cJSON_IsObject(md))
      rc = tally_diag_add(d, &path,
                          "must be an object of gold, silver and "
                          "bronze counts");
    for (const cJSON *m = cJSON_IsObject(md) ? md->child : NULL; m != NULL;
         m = m->next) {
      size_t o2 = tally_jpath_key(&path, m->string);
      int k = 0;
      while (k < 3 && strcmp(m->string, kinds[k]) != 0)
        k++;
      if (k == 3)
        rc = tally_diag_add(d, &path,
                            "unknown key (medals are gold, silver, bronze)");
      else if (!cJSON_IsNumber(m) || m->valuedouble != floor(m->valuedouble) ||
               m->valuedouble < 0 || m->valuedouble > 100000)
        rc = tally_diag_add(d, &path, "must be a whole number, 0 to 100000");
      else
        c->medals[k] = (int)m->valuedouble;
      tally_jpath_restore(&path, o2);
    }
    tally_jpath_restore(&path, old);
  }
  if (found[KEY_RWS] != NULL && decode_rws(found[KEY_RWS], c, d, &path) != 0)
    rc = TALLY_ECONFIG;
  if (found[KEY_RWS] != NULL && rc == 0) {
    size_t old = tally_jpath_key(&path, "rws");
    if (c->scoring == TALLY_SCORING_PASS_FAIL ||
        c->ranking == TALLY_RANKING_ELO)
      rc = tally_diag_add(d, &path,
                          "CMS's Ranking Web Server shows score-based "
                          "contests only (not pass-fail, not Elo)");
    else if (found[KEY_START] == NULL || found[KEY_END] == NULL)
      rc = tally_diag_add(d, &path,
                          "a contest pushed to a Ranking Web Server needs "
                          "its start and end");
    tally_jpath_restore(&path, old);
  }
  if (found[KEY_PENALTY_TIME] == NULL)
    c->penalty_time = TALLY_PENALTY_TIME;
  if (c->scoring != TALLY_SCORING_PASS_FAIL) {
    for (int k = KEY_PENALTY_TIME; k <= KEY_MEDALS; k++)
      if (found[k] != NULL) {
        size_t old = tally_jpath_key(&path, contest_keys[k].name);
        rc = tally_diag_add(d, &path,
                            "is for a pass-fail contest only (\"scoring\": "
                            "\"pass-fail\")");
        tally_jpath_restore(&path, old);
      }
  } else if (c->ranking == TALLY_RANKING_ELO) {
    size_t old = tally_jpath_key(&path, "scoring");
    rc = tally_diag_add(d, &path,
                        "a pass-fail contest ranks by problems solved, so it "
                        "cannot also be ranked by Elo (\"ranking\": \"elo\")");
    tally_jpath_restore(&path, old);
  } else if (found[KEY_START] == NULL || found[KEY_END] == NULL) {
    size_t old = tally_jpath_key(&path, "scoring");
    rc = tally_diag_add(d, &path,
                        "a pass-fail contest needs its start (penalty "
                        "minutes count from it) and its end");
    tally_jpath_restore(&path, old);
  }
  if (c->queue != NULL && !tally_queue_name_ok(c->queue)) {
    size_t old = tally_jpath_key(&path, "queue");
    rc = tally_diag_add(d, &path,
                        "must be a queue name: 1 to %d letters, digits, "
                        "'-', '_' or '.'",
                        TALLY_QUEUE_NAME_MAX);
    tally_jpath_restore(&path, old);
  }
  if (rc == 0) {
    if (!isnan(c->start) && !isnan(c->end) && !(c->start < c->end))
      rc = tally_diag_add(d, NULL, "end: must be after start");
    if (!isnan(c->freeze) && ((!isnan(c->start) && c->freeze < c->start) ||
                              (!isnan(c->end) && c->freeze > c->end)))
      rc = tally_diag_add(d, NULL, "freeze: must be between start and end");
    if (!isnan(c->unfreeze_after) && isnan(c->freeze))
      rc = tally_diag_add(d, NULL, "unfreeze_after: needs a freeze");
    if (!isnan(c->unfreeze_after) && isnan(c->end))
      rc = tally_diag_add(d, NULL,
                          "unfreeze_after: needs an end (it counts from it)");
  }
  cJSON_Delete(root);
  if (rc == 0 && c->title == NULL && (c->title = strdup(c->name)) == NULL)
    rc = tally_diag_add(d, NULL, "out of memory");
  if (rc != 0)
    tally_contest_free(c);
  return rc;
}

void tally_contestset_init(tally_contestset_t *cs) {
  memset(cs, 0, sizeof(*cs));
}

void tally_contestset_close(tally_contestset_t *cs) {
  for (size_t i = 0; i < cs->count; i++)
    tally_contest_free(&cs->contests[i]);
  free(cs->contests);
  for (size_t i = 0; i < cs->nparticipants; i++) {
    free(cs->participants[i].id);
    free(cs->participants[i].name);
    free(cs->participants[i].team);
  }
  free(cs->participants);
  for (size_t i = 0; i < cs->nmaxes; i++) {
    free(cs->maxes[i].name);
    for (size_t k = 0; k < cs->maxes[i].nheaders; k++)
      free(cs->maxes[i].headers[k]);
    free(cs->maxes[i].headers);
    free(cs->maxes[i].subtask_public);
  }
  free(cs->maxes);
  memset(cs, 0, sizeof(*cs));
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

bool tally_contest_file(const char *name) {
  return ends_with(name, ".contest.json") ||
         strcmp(name, "participants.json") == 0;
}

/* participants.json: {"ID": {"name": "...", "team": "..."}, ...}. */
static int load_participants(tally_contestset_t *cs, const char *text,
                             size_t len, tally_diag_t *d) {
  cJSON *root = tally_cfg_parse_json(text, len, d);
  if (root == NULL)
    return TALLY_ECONFIG;
  int rc = 0;
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return tally_diag_add(d, NULL,
                          "must be an object: participant id -> {\"name\", "
                          "\"team\"}");
  }
  size_t n = (size_t)cJSON_GetArraySize(root);
  cs->participants = calloc(n + 1, sizeof(*cs->participants));
  if (cs->participants == NULL) {
    cJSON_Delete(root);
    return tally_diag_add(d, NULL, "out of memory");
  }
  tally_jpath_t path;
  tally_jpath_init(&path);
  for (const cJSON *p = root->child; p != NULL; p = p->next) {
    size_t old = tally_jpath_key(&path, p->string);
    for (size_t i = 0; i < cs->nparticipants; i++)
      if (strcmp(cs->participants[i].id, p->string) == 0)
        rc = tally_diag_add(d, &path, "key appears twice");
    static const tally_cfg_key_t keys[] = {
        {"name", tally_cfg_set_string, offsetof(tally_participant_t, name), 0,
         0, 0, NULL},
        {"team", tally_cfg_set_string, offsetof(tally_participant_t, team), 0,
         0, 0, NULL},
        {NULL, NULL, 0, 0, 0, 0, NULL}};
    tally_participant_t *q = &cs->participants[cs->nparticipants];
    if (p->string[0] == '\0')
      rc = tally_diag_add(d, &path, "a participant id must not be empty");
    if (!cJSON_IsObject(p))
      rc = tally_diag_add(d, &path, "must be an object with name and team");
    else if (tally_cfg_decode(keys, p, q, d, &path, NULL) != 0)
      rc = TALLY_ECONFIG;
    if ((q->id = strdup(p->string)) == NULL)
      rc = tally_diag_add(d, NULL, "out of memory");
    cs->nparticipants++;
    tally_jpath_restore(&path, old);
  }
  cJSON_Delete(root);
  return rc;
}

static int cmp_contest(const void *a, const void *b) {
  return strcmp(((const tally_contest_t *)a)->name,
                ((const tally_contest_t *)b)->name);
}

static int cmp_participant(const void *a, const void *b) {
  return strcmp(((const tally_participant_t *)a)->id,
                ((const tally_participant_t *)b)->id);
}

/* Loads the file at path (name is its base name) into cs. */
static int load_file(tally_contestset_t *cs, const char *path, const char *name,
                     tally_diag_t *d) {
  char *text, err[512];
  size_t len;
  if (tally_read_file_max(path, TALLY_CONFIG_FILE_MAX, &text, &len, err,
                          sizeof(err)) != 0)
    return tally_diag_add(d, NULL, "%s", err);
  tally_diag_t fd;
  tally_diag_init(&fd, path);
  int rc;
  if (strcmp(name, "participants.json") == 0) {
    rc = load_participants(cs, text, len, &fd);
  } else {
    tally_contest_t c;
    rc = tally_contest_parse(text, len, &fd, &c);
    if (rc == 0) {
      tally_contest_t *grown =
          realloc(cs->contests, (cs->count + 1) * sizeof(*grown));
      if (grown == NULL || (c.file = strdup(path)) == NULL) {
        if (grown != NULL)
          cs->contests = grown;
        tally_contest_free(&c);
        rc = tally_diag_add(&fd, NULL, "out of memory");
      } else {
        cs->contests = grown;
        cs->contests[cs->count++] = c;
      }
    }
  }
  free(text);
  tally_diag_move(d, &fd);
  return rc;
}

static bool any_json(const char *name) {
  (void)name;
  return true;
}

int tally_contestset_load(tally_contestset_t *cs, const char *dir,
                          bool in_tasks, tally_diag_t *d) {
  char **paths;
  size_t n;
  int rc = tally_json_files(dir, in_tasks ? tally_contest_file : any_json,
                            &paths, &n, d);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < n; i++) {
    const char *slash = strrchr(paths[i], '/');
    if (load_file(cs, paths[i], slash != NULL ? slash + 1 : paths[i], d) != 0)
      rc = TALLY_ECONFIG;
  }
  tally_free_paths(paths, n);
  if (cs->count > 1)
    qsort(cs->contests, cs->count, sizeof(*cs->contests), cmp_contest);
  for (size_t i = 1; i < cs->count; i++)
    if (strcmp(cs->contests[i - 1].name, cs->contests[i].name) == 0)
      rc = tally_diag_add(d, NULL, "%s: contest name \"%s\" is also used by %s",
                          cs->contests[i].file, cs->contests[i].name,
                          cs->contests[i - 1].file);
  /* A Ranking Web Server keeps one score per user and task: two contests
   * pushed to one server may not share a task. */
  for (size_t i = 0; i < cs->count; i++)
    for (size_t j = i + 1; j < cs->count; j++) {
      const tally_contest_t *x = &cs->contests[i], *y = &cs->contests[j];
      for (size_t u = 0; u < x->nrws; u++)
        for (size_t v = 0; v < y->nrws; v++) {
          if (strcmp(x->rws[u].url, y->rws[v].url) != 0)
            continue;
          for (size_t t = 0; t < x->ntasks; t++)
            if (tally_contest_has_task(y, x->tasks[t]))
              rc = tally_diag_add(
                  d, NULL,
                  "%s: rws: task \"%s\" is also a task of contest \"%s\" "
                  "(%s), pushed to the same Ranking Web Server (%s), which "
                  "keeps one score per user and task",
                  y->file, x->tasks[t], x->name, x->file, y->rws[v].url);
        }
    }
  if (cs->nparticipants > 1)
    qsort(cs->participants, cs->nparticipants, sizeof(*cs->participants),
          cmp_participant);
  if (rc != 0)
    tally_contestset_close(cs);
  return rc;
}

const tally_contest_t *tally_contestset_find(const tally_contestset_t *cs,
                                             const char *name) {
  for (size_t lo = 0, hi = cs->count; lo < hi;) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(cs->contests[mid].name, name);
    if (c == 0)
      return &cs->contests[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const tally_participant_t *
tally_contestset_participant(const tally_contestset_t *cs, const char *id) {
  for (size_t lo = 0, hi = cs->nparticipants; lo < hi;) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(cs->participants[mid].id, id);
    if (c == 0)
      return &cs->participants[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool tally_contest_has_task(const tally_contest_t *c, const char *task) {
  for (size_t i = 0; i < c->ntasks; i++)
    if (strcmp(c->tasks[i], task) == 0)
      return true;
  return false;
}

int tally_contestset_load_beside(tally_contestset_t *cs, const char *tasks_path,
                                 tally_diag_t *d) {
  struct stat st;
  if (stat(tasks_path, &st) == 0 && S_ISDIR(st.st_mode))
    return tally_contestset_load(cs, tasks_path, true, d);
  char *dir = strdup(tasks_path);
  if (dir == NULL)
    return tally_diag_add(d, NULL, "out of memory");
  char *slash = strrchr(dir, '/');
  int rc;
  if (slash == NULL)
    rc = tally_contestset_load(cs, ".", true, d);
  else {
    *slash = '\0';
    rc = tally_contestset_load(cs, dir[0] ? dir : "/", true, d);
  }
  free(dir);
  return rc;
}

int tally_contestset_check_tasks(tally_contestset_t *cs,
                                 const tally_taskset_t *ts, tally_diag_t *d) {
  int rc = 0;
  /* ts is sorted by name: so are the maxima. */
  cs->maxes = calloc(ts->count + 1, sizeof(*cs->maxes));
  if (cs->maxes == NULL)
    return tally_diag_add(d, NULL, "out of memory");
  for (size_t i = 0; i < ts->count; i++) {
    const tally_task_t *t = ts->entries[i].task;
    tally_task_max_t *m = &cs->maxes[cs->nmaxes];
    if ((m->name = strdup(t->name)) == NULL)
      return tally_diag_add(d, NULL, "out of memory");
    m->max_score = t->max_score;
    m->max_public_score = t->max_public_score;
    m->ntestcases = t->ntestcases;
    m->time_limit = t->has_time_limit ? t->time_limit : NAN;
    m->score_mode = tally_score_mode_name(t->score_mode);
    m->score_precision = t->score_precision;
    m->nheaders = 0;
    m->headers = calloc(t->nsubtasks + 1, sizeof(char *));
    if (m->headers == NULL) {
      free(m->name);
      return tally_diag_add(d, NULL, "out of memory");
    }
    for (size_t k = 0; k < t->nsubtasks; k++)
      if (t->subtasks[k].header != NULL &&
          (m->headers[m->nheaders] = strdup(t->subtasks[k].header)) != NULL)
        m->nheaders++;
    m->nsubtasks = 0;
    m->subtask_public = calloc(t->nsubtasks + 1, sizeof(bool));
    for (size_t k = 0; m->subtask_public != NULL && k < t->nsubtasks; k++)
      m->subtask_public[m->nsubtasks++] = t->subtasks[k].all_public;
    cs->nmaxes++;
  }
  for (size_t i = 0; i < cs->count; i++) {
    const tally_contest_t *c = &cs->contests[i];
    for (size_t k = 0; k < c->ntasks; k++) {
      if (tally_taskset_find(ts, c->tasks[k]) != NULL)
        continue;
      tally_diag_t fd;
      tally_diag_init(&fd, c->file);
      tally_jpath_t path;
      tally_jpath_init(&path);
      tally_jpath_key(&path, "tasks");
      tally_jpath_index(&path, k);
      rc = tally_diag_add(&fd, &path, "no task \"%s\" is loaded", c->tasks[k]);
      tally_diag_move(d, &fd);
    }
  }
  return rc;
}

const tally_task_max_t *tally_contestset_max(const tally_contestset_t *cs,
                                             const char *name) {
  for (size_t lo = 0, hi = cs->nmaxes; lo < hi;) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(cs->maxes[mid].name, name);
    if (c == 0)
      return &cs->maxes[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}
