/* The scoreboard's pages (page.h): the contests' index and a contest's
 * board as HTML, with their script, style sheet and policy. */
#include "daemon/page.h"

#include "daemon/web.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* A cell's colour, red (0) to green (120), as a class of the page's own
 * style sheet: an inline style="" attribute would need the policy to
 * allow inline styles of any content. */
#define HUES 121

/* The style sheet (board.css and the hue classes) and the policy that
 * lets the page run only its own script and style, by their SHA-256;
 * made once. */
static char *style_text;
static char csp_text[512];
static uv_once_t once = UV_ONCE_INIT;

static void hash_into(char *out, const char *text) {
  struct sha256_ctx ctx;
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, strlen(text), (const uint8_t *)text);
  sha256_digest(&ctx, sizeof(digest), digest);
  char b64[BASE64_ENCODE_RAW_LENGTH(SHA256_DIGEST_SIZE) + 1];
  base64_encode_raw(b64, sizeof(digest), digest);
  b64[sizeof(b64) - 1] = '\0';
  strcpy(out, b64);
}

static void make_policy(void) {
  /* Made once and kept for the process's life. */
  size_t size = strlen(tally_web_board_css) + HUES * 48;
  style_text = malloc(size);
  if (style_text == NULL)
    abort();
  size_t n = (size_t)snprintf(style_text, size, "%s", tally_web_board_css);
  for (int h = 0; h < HUES; h++)
    n += (size_t)snprintf(style_text + n, size - n,
                          ".h%d{background:hsl(%d,65%%,82%%)}", h, h);
  char style_hash[64], script_hash[64];
  hash_into(style_hash, style_text);
  hash_into(script_hash, tally_web_board_js);
  snprintf(csp_text, sizeof(csp_text),
           "default-src 'none'; script-src 'sha256-%s'; style-src "
           "'sha256-%s'; connect-src 'self'; img-src 'self'; base-uri "
           "'none'; form-action 'none'; frame-ancestors 'none'",
           script_hash, style_hash);
}

const char *tally_page_csp(void) {
  uv_once(&once, make_policy);
  return csp_text;
}

/* Text for HTML, escaped. */
static void text(tally_buf_t *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&':
      tally_buf_puts(b, "&amp;");
      break;
    case '<':
      tally_buf_puts(b, "&lt;");
      break;
    case '>':
      tally_buf_puts(b, "&gt;");
      break;
    case '"':
      tally_buf_puts(b, "&quot;");
      break;
    case '\'':
      tally_buf_puts(b, "&#39;");
      break;
    default:
      tally_buf_putc(b, *s);
    }
  }
}

/* A path segment, percent-encoded. */
static void segment(tally_buf_t *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      tally_buf_putc(b, (char)c);
    } else {
      char hex[4];
      snprintf(hex, sizeof(hex), "%%%02X", c);
      tally_buf_puts(b, hex);
    }
  }
}

static void head(tally_buf_t *b, const char *title) {
  tally_buf_puts(b, "<!doctype html>\n<html lang=\"en\"><head><meta "
                    "charset=\"utf-8\"><meta name=\"viewport\" "
                    "content=\"width=device-width, initial-scale=1\"><title>");
  text(b, title);
  tally_buf_puts(b, "</title><style>");
  tally_page_csp();
  tally_buf_puts(b, style_text);
  tally_buf_puts(b, "</style></head><body>\n");
}

void tally_page_index(tally_buf_t *b, const tally_contestset_t *cs,
                      char *const *names, size_t n) {
  head(b, "Contests");
  tally_buf_puts(b, "<h1>Contests</h1>\n<ul>\n");
  size_t shown = 0;
  for (size_t i = 0; cs != NULL && i < cs->count; i++, shown++) {
    tally_buf_puts(b, "<li><a href=\"/contests/");
    segment(b, cs->contests[i].name);
    tally_buf_puts(b, "\">");
    text(b, cs->contests[i].title);
    tally_buf_puts(b, "</a></li>\n");
  }
  for (size_t i = 0; i < n; i++) {
    if (cs != NULL && tally_contestset_find(cs, names[i]) != NULL)
      continue;
    tally_buf_puts(b, "<li><a href=\"/contests/");
    segment(b, names[i]);
    tally_buf_puts(b, "\">");
    text(b, names[i]);
    tally_buf_puts(b, "</a></li>\n");
    shown++;
  }
  tally_buf_puts(b, "</ul>\n");
  if (shown == 0)
    tally_buf_puts(b, "<p class=\"note\">No contest yet.</p>\n");
  tally_buf_puts(b, "</body></html>\n");
}

/* A number as the board shows it: at most precision digits after the
 * point, without trailing zeros. */
static void number(tally_buf_t *b, double v, int precision) {
  char s[64];
  snprintf(s, sizeof(s), "%.*f", precision, v);
  if (strchr(s, '.') != NULL) {
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '0')
      s[--n] = '\0';
    if (n > 0 && s[n - 1] == '.')
      s[--n] = '\0';
  }
  if (strcmp(s, "-0") == 0)
    strcpy(s, "0");
  tally_buf_puts(b, s);
}

static void person(tally_buf_t *b, const tally_board_t *board, const char *id) {
  const tally_participant_t *p =
      board->cs != NULL ? tally_contestset_participant(board->cs, id) : NULL;
  tally_buf_puts(b, "<td>");
  text(b, p != NULL && p->name != NULL ? p->name : id);
  tally_buf_puts(b, "</td><td>");
  if (p != NULL && p->team != NULL)
    text(b, p->team);
  tally_buf_puts(b, "</td>");
}

/* The task score of a row on task, from its (task, JSON) pairs. */
static bool task_score(const tally_board_row_t *w, const char *task,
                       double *score, bool *partial) {
  for (size_t k = 0; k + 1 < w->nfields; k += 2) {
    if (strcmp(w->fields[k], task) != 0)
      continue;
    cJSON *j = cJSON_Parse(w->fields[k + 1]);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "public_score");
    *score = cJSON_IsNumber(s) ? s->valuedouble : 0;
    *partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "partial"));
    cJSON_Delete(j);
    return true;
  }
  return false;
}

/* A pass-fail cell as a board shows it: "+" and the rejected tries
 * before the solve ("+2") over its minute; "-3" for three rejected
 * tries; "?" and the pending tries during the freeze or judging. */
static void icpc_cell(tally_buf_t *b, const tally_icpc_cell_t *c) {
  char text[64];
  unsigned tries = c->judged + c->pending;
  const char *cls = c->solved    ? (c->first ? "solved first" : "solved")
                    : c->pending ? "pending"
                    : tries > 0  ? "rejected"
                                 : "";
  tally_buf_puts(b, "<td class=\"icpc ");
  tally_buf_puts(b, cls);
  tally_buf_puts(b, "\">");
  if (c->solved && tries > 1)
    snprintf(text, sizeof(text), "+%u<small>%ld</small>", tries - 1, c->minute);
  else if (c->solved)
    snprintf(text, sizeof(text), "+<small>%ld</small>", c->minute);
  else if (c->pending)
    snprintf(text, sizeof(text), "?%u<small>%u tr%s</small>", c->pending, tries,
             tries == 1 ? "y" : "ies");
  else if (tries > 0)
    snprintf(text, sizeof(text), "-%u", tries);
  else
    text[0] = '\0';
  tally_buf_puts(b, text);
  tally_buf_puts(b, "</td>");
}

/* The rows of a pass-fail board: rank, participant, team, solved,
 * penalty, then a cell per task. */
static void icpc_rows(tally_buf_t *b, const tally_board_t *board) {
  const tally_icpc_board_t *g = board->icpc;
  for (size_t i = 0; i < g->nrows; i++) {
    const tally_icpc_row_t *w = &g->rows[i];
    tally_buf_puts(b, "<tr data-p=\"");
    text(b, w->participant);
    tally_buf_puts(b, "\"><td class=\"rank\">");
    number(b, (double)w->rank, 0);
    tally_buf_puts(b, "</td>");
    person(b, board, w->participant);
    tally_buf_puts(b, "<td class=\"total\">");
    number(b, w->solved, 0);
    tally_buf_puts(b, "</td><td>");
    number(b, (double)w->penalty, 0);
    tally_buf_puts(b, "</td>");
    for (size_t t = 0; t < g->ntasks; t++)
      icpc_cell(b, &w->cells[t]);
    tally_buf_puts(b, "</tr>\n");
  }
}

/* One time of the contest's clock: a label and an RFC 3339 <time>. */
static void clock_time(tally_buf_t *b, const char *label, double t,
                       bool *first) {
  if (isnan(t))
    return;
  char when[64];
  tally_rfc3339_text(t, when, sizeof(when));
  tally_buf_puts(b, *first ? "" : " · ");
  tally_buf_puts(b, label);
  tally_buf_puts(b, " <time datetime=\"");
  tally_buf_puts(b, when);
  tally_buf_puts(b, "\">");
  tally_buf_puts(b, when);
  tally_buf_puts(b, "</time>");
  *first = false;
}

/* The contest's clock, when its config gives times: start, end and the
 * configured freeze, and (the script fills it) where the contest stands. */
static void contest_clock(tally_buf_t *b, const tally_contest_t *c) {
  if (c == NULL || (isnan(c->start) && isnan(c->end)))
    return;
  tally_buf_puts(b, "<p class=\"clock\" id=\"clock\"");
  char num[64];
  if (!isnan(c->start)) {
    snprintf(num, sizeof(num), " data-start=\"%.3f\"", c->start);
    tally_buf_puts(b, num);
  }
  if (!isnan(c->end)) {
    snprintf(num, sizeof(num), " data-end=\"%.3f\"", c->end);
    tally_buf_puts(b, num);
  }
  tally_buf_putc(b, '>');
  bool first = true;
  clock_time(b, "Start", c->start, &first);
  clock_time(b, "End", c->end, &first);
  clock_time(b, "Freeze", c->freeze, &first);
  tally_buf_puts(b, " <span id=\"clock-now\"></span></p>\n");
}

/* The score board's second header row: each task's public maximum (what
 * its cells can reach) and the total's. */
static void max_row(tally_buf_t *b, const tally_board_t *board, int precision) {
  double total = 0;
  tally_buf_t cells;
  tally_buf_init(&cells);
  for (size_t i = 0; i < board->ntasks; i++) {
    const tally_task_max_t *m =
        board->cs != NULL ? tally_contestset_max(board->cs, board->tasks[i])
                          : NULL;
    tally_buf_puts(&cells, "<td>");
    if (m != NULL) {
      number(&cells, m->max_public_score, precision);
      total += m->max_public_score;
    } else {
      tally_buf_putc(&cells, '-');
    }
    tally_buf_puts(&cells, "</td>");
  }
  tally_buf_puts(b, "<tr class=\"max\"><td></td><td>Maximum</td><td></td>"
                    "<td class=\"total\">");
  number(b, total, precision);
  tally_buf_puts(b, "</td>");
  tally_buf_put(b, cells.data != NULL ? cells.data : "", cells.len);
  tally_buf_puts(b, "</tr>");
  tally_buf_close(&cells);
}

void tally_page_board(tally_buf_t *b, const tally_board_t *board) {
  const tally_contest_t *c = board->config;
  const char *title = c != NULL ? c->title : board->contest;
  int precision = c != NULL ? c->score_precision : 2;
  head(b, title);
  tally_buf_puts(b, "<h1>");
  text(b, title);
  tally_buf_puts(b, "</h1>\n<p class=\"note\"><a href=\"/\">Contests</a> · "
                    "<span id=\"live\">static</span></p>\n");
  contest_clock(b, c);
  if (board->frozen)
    tally_buf_puts(b, "<p class=\"frozen\">The board is frozen: submissions "
                      "made since the freeze are not shown.</p>\n");
  /* What the script needs, in data attributes (JSON, escaped). */
  tally_buf_puts(b, "<table id=\"board\" data-contest=\"");
  text(b, board->contest);
  tally_buf_puts(b, "\" data-ranking=\"");
  tally_buf_puts(b, board->icpc != NULL ? "pass-fail"
                    : board->elo        ? "elo"
                                        : "total");
  tally_buf_puts(b, "\" data-precision=\"");
  number(b, precision, 0);
  tally_buf_t json;
  tally_buf_init(&json);
  tally_buf_putc(&json, '[');
  for (size_t i = 0; i < board->ntasks; i++) {
    if (i > 0)
      tally_buf_putc(&json, ',');
    tally_json_str(&json, board->tasks[i]);
  }
  tally_buf_puts(&json, "]");
  tally_buf_puts(b, "\" data-tasks=\"");
  text(b, tally_buf_text(&json));
  tally_buf_reset(&json);
  tally_buf_putc(&json, '{');
  for (size_t i = 0; i < board->ntasks; i++) {
    const tally_task_max_t *m =
        board->cs != NULL ? tally_contestset_max(board->cs, board->tasks[i])
                          : NULL;
    if (i > 0)
      tally_buf_putc(&json, ',');
    tally_json_str(&json, board->tasks[i]);
    tally_buf_putc(&json, ':');
    tally_json_num(&json, m != NULL ? m->max_public_score : 0);
  }
  tally_buf_putc(&json, '}');
  tally_buf_puts(b, "\" data-max=\"");
  text(b, tally_buf_text(&json));
  /* The names and teams a row that appears later needs. */
  tally_buf_reset(&json);
  tally_buf_putc(&json, '{');
  for (size_t i = 0; board->cs != NULL && i < board->cs->nparticipants; i++) {
    const tally_participant_t *p = &board->cs->participants[i];
    if (i > 0)
      tally_buf_putc(&json, ',');
    tally_json_str(&json, p->id);
    tally_buf_puts(&json, ":[");
    tally_json_str(&json, p->name != NULL ? p->name : p->id);
    tally_buf_putc(&json, ',');
    tally_json_str(&json, p->team != NULL ? p->team : "");
    tally_buf_putc(&json, ']');
  }
  tally_buf_putc(&json, '}');
  tally_buf_puts(b, "\" data-people=\"");
  text(b, tally_buf_text(&json));
  tally_buf_close(&json);
  bool any_hidden = false;
  tally_buf_puts(b, "\">\n<thead><tr><th>#</th><th>Participant</th>"
                    "<th>Team</th>");
  if (board->elo) {
    tally_buf_puts(b, "<th>Rating</th><th>Matches</th><th>W/D/L</th>");
  } else if (board->icpc != NULL) {
    tally_buf_puts(b, "<th>Solved</th><th>Penalty</th>");
    for (size_t i = 0; i < board->ntasks; i++) {
      tally_buf_puts(b, "<th>");
      text(b, board->tasks[i]);
      tally_buf_puts(b, "</th>");
    }
  } else {
    tally_buf_puts(b, "<th>Total</th>");
    for (size_t i = 0; i < board->ntasks; i++) {
      /* A task none of whose score is public (its testcases all private,
       * or a private one in each of its subtasks) shows 0 to everyone:
       * the header says why. */
      const tally_task_max_t *m =
          board->cs != NULL ? tally_contestset_max(board->cs, board->tasks[i])
                            : NULL;
      bool hidden = m != NULL && m->max_score > 0 && m->max_public_score == 0;
      tally_buf_puts(b, hidden ? "<th class=\"private\" title=\"None of "
                                 "this task's score is public: the board "
                                 "shows 0 for it\">"
                               : "<th>");
      text(b, board->tasks[i]);
      tally_buf_puts(b,
                     hidden ? "<br><small>not public</small></th>" : "</th>");
      any_hidden |= hidden;
    }
  }
  tally_buf_puts(b, "</tr>");
  if (!board->elo && board->icpc == NULL)
    max_row(b, board, precision);
  tally_buf_puts(b, "</thead>\n<tbody>\n");
  if (board->icpc != NULL)
    icpc_rows(b, board);
  long rank = 0;
  for (size_t i = 0; board->icpc == NULL && i < board->nrows; i++) {
    const tally_board_row_t *w = &board->rows[i];
    if (i == 0 || w->value != board->rows[i - 1].value)
      rank = (long)i + 1;
    tally_buf_puts(b, "<tr data-p=\"");
    text(b, w->id);
    tally_buf_puts(b, board->elo ? "\" data-rating=\"" : "\" data-total=\"");
    tally_json_num(b, w->value);
    tally_buf_puts(b, "\"><td class=\"rank\">");
    number(b, (double)rank, 0);
    tally_buf_puts(b, "</td>");
    person(b, board, w->id);
    if (board->elo) {
      tally_buf_puts(b, "<td>");
      number(b, w->value, precision);
      tally_buf_puts(b, "</td><td>");
      tally_buf_puts(b, w->nfields > 0 ? w->fields[0] : "0");
      tally_buf_puts(b, "</td><td>");
      for (size_t k = 1; k < 4; k++) {
        if (k > 1)
          tally_buf_putc(b, '/');
        tally_buf_puts(b, k < w->nfields ? w->fields[k] : "0");
      }
      tally_buf_puts(b, "</td></tr>\n");
      continue;
    }
    tally_buf_puts(b, "<td class=\"total\">");
    number(b, w->value, precision);
    tally_buf_puts(b, "</td>");
    for (size_t t = 0; t < board->ntasks; t++) {
      double s;
      bool partial;
      tally_buf_puts(b, "<td data-t=\"");
      text(b, board->tasks[t]);
      if (!task_score(w, board->tasks[t], &s, &partial)) {
        tally_buf_puts(b, "\">-</td>");
        continue;
      }
      const tally_task_max_t *m =
          board->cs != NULL ? tally_contestset_max(board->cs, board->tasks[t])
                            : NULL;
      double f =
          m != NULL && m->max_public_score > 0 ? s / m->max_public_score : 0;
      f = f < 0 ? 0 : f > 1 ? 1 : f;
      char hue[32];
      snprintf(hue, sizeof(hue), "\" class=\"h%d", (int)lround(f * (HUES - 1)));
      tally_buf_puts(b, "\" tabindex=\"0\" data-s=\"");
      tally_json_num(b, s);
      tally_buf_puts(b, hue);
      tally_buf_puts(b, partial ? " partial\">" : "\">");
      number(b, s, precision);
      if (partial)
        tally_buf_putc(b, '*');
      tally_buf_puts(b, "</td>");
    }
    tally_buf_puts(b, "</tr>\n");
  }
  tally_buf_puts(b, "</tbody></table>\n");
  if (any_hidden)
    tally_buf_puts(b, "<p class=\"note\">not public: none of that task's "
                      "score is public (its testcases are all private, or "
                      "each of its subtasks has a private one), so the "
                      "public board shows 0 for it.</p>\n");
  if (board->icpc != NULL)
    tally_buf_puts(b, "<p class=\"note\">+ solved (the rejected tries "
                      "before it, and the contest minute), - rejected "
                      "tries, ? tries pending; darker green: solved "
                      "first.</p>\n");
  else if (!board->elo)
    tally_buf_puts(b, "<p class=\"note\">* partial: a submission of that "
                      "task could not be scored and counts 0. Open a score "
                      "to see it subtask by subtask.</p>\n<div id=\"cell\" "
                      "class=\"cell\" hidden></div>\n");
  tally_buf_puts(b, "<script>");
  tally_buf_puts(b, tally_web_board_js);
  tally_buf_puts(b, "</script>\n</body></html>\n");
}
