/* A place's task score computed in C for the post script to check and
 * write (docs/contest.md, "Task scores computed by tallyd"): the post script's
 * fast path (contest.lua's add_score) done before the call. Given the place
 * cache a post will find (as tallyd last saw it written) and the new
 * submission's summary, it makes the cache the script would write, the task
 * score's JSON and what the contestant event needs. The script uses them only
 * when the cache it reads is byte for byte the one they were made from, and the
 * place has the field count they assume; otherwise it computes as before.
 * So a wrong guess costs time, never a wrong score. */
#ifndef TALLY_CONTEST_PLACECALC_H
#define TALLY_CONTEST_PLACECALC_H

#include "config/jsonw.h"

#include <stdbool.h>
#include <stddef.h>

/* An id as contest.lua's idtext writes it (a string as it is, a number as
 * num writes it), in a new string; NULL for anything else, a string
 * holding a NUL (which a C string cannot tell apart from a shorter one),
 * or when memory is short. */
char *tally_place_idtext(const cJSON *v);

/* The place of a summary: its contest ("default" when it names none),
 * participant and task, each as contest.lua's idtext gives it. */
typedef struct tally_place_id_s {
  char *contest, *participant, *task;
} tally_place_id_t;

/* The place of summary text (a JSON object) into *out (freed with
 * tally_place_id_free). Returns 0, or -1 when the summary names no
 * participant or task (or memory is short). */
int tally_place_id(const char *summary, size_t len, tally_place_id_t *out);
/* tally_place_id of the summary's tree s (NULL when not JSON). */
int tally_place_id_tree(const cJSON *s, tally_place_id_t *out);
void tally_place_id_free(tally_place_id_t *id);

/* What a post computed for one new field of a place. */
typedef struct tally_place_calc_s {
  tally_buf_t cache; /* the new place cache */
  tally_buf_t score; /* the task score's JSON, as <p>:taskscores holds */
  tally_buf_t meta;  /* tokened, partial, field count, public score */
} tally_place_calc_t;

void tally_place_calc_init(tally_place_calc_t *c);
void tally_place_calc_close(tally_place_calc_t *c);

/* Adds submission S's field to the place whose cache is old (old_len
 * bytes), as the post script's fast path does, with the summary text and
 * its "tokened" member as the field's tokened flag (the script checks
 * that flag against the one it stores).
 * Returns 0 with *c filled, or -1 when the fast path does not apply (the
 * cache is not one, the summary is not scored or not finite, its mode,
 * precision or rounding differ from the newest's, or the new cache could
 * not be kept): the script then computes the place itself. meta is the
 * field's tokened flag and partial ('0' or '1' each), the new field count,
 * ':' and the new public task score. */
int tally_place_add(const char *old, size_t old_len, const char *S,
                    const char *summary, size_t summary_len,
                    tally_place_calc_t *c);
/* tally_place_add of the summary's tree s (cJSON_Parse's, NULL when the
 * text is not JSON), for a caller that reads it for more. */
int tally_place_add_tree(const char *old, size_t old_len, const char *S,
                         const cJSON *s, tally_place_calc_t *c);

/* One field of a place, for tally_place_whole: submission id S, its
 * summary text (len bytes) and its tokened flag (the field's first byte). */
typedef struct tally_place_member_s {
  const char *id;
  const char *summary;
  size_t len;
  bool tokened;
} tally_place_member_t;

/* The task score of a whole place, computed from all n of its fields as the
 * scripts' compute does (docs/contest.md, "The task scores of a direct
 * rescore"): into *id the place every summary names (freed with
 * tally_place_id_free), c->cache the place cache, c->score the task score's
 * JSON, and c->meta '0' or '1' for partial, then the public task score as
 * num writes it. Returns 0, or -1 when it is left to the script: a summary
 * that is not an object or names another place, a scored one without a
 * mode, rounding or numeric precision, a number that is not finite, no
 * official or no scored field, a place whose cache could not be kept, or
 * memory short. */
int tally_place_whole(const tally_place_member_t *m, size_t n,
                      tally_place_id_t *id, tally_place_calc_t *c);

/* The direct post of a result (docs/contest.md, "The direct post"): what
 * the post script writes for a new scored submission whose place's task
 * score was computed (tally_place_add), all of it made here, so that the
 * script only checks the state it assumed and writes. Each text is in
 * buf at off[i], len[i] bytes: */
enum {
  TALLY_DIRECT_CONTEST, /* the place, as contest.lua's ident has it */
  TALLY_DIRECT_PARTICIPANT,
  TALLY_DIRECT_TASK,
  TALLY_DIRECT_SCORE,        /* the record's score, as num writes it */
  TALLY_DIRECT_PUBLIC_SCORE, /* its public_score */
  TALLY_DIRECT_VERSION,      /* its version, as idtext writes it */
  TALLY_DIRECT_EVENT,        /* the contestant event, as publish writes it */
  TALLY_DIRECT_COUNT
};

/* Texts made one after another in one buffer: text i is at
 * buf.data + off[i], len[i] bytes (a direct post's and a direct
 * rescore's). */
#define TALLY_TEXTS_MAX 11

typedef struct tally_texts_s {
  tally_buf_t buf;
  size_t off[TALLY_TEXTS_MAX], len[TALLY_TEXTS_MAX];
} tally_texts_t;

void tally_texts_init(tally_texts_t *t);
void tally_texts_close(tally_texts_t *t);
/* Ends text i, begun when buf was start bytes long. */
void tally_texts_mark(tally_texts_t *t, int i, size_t start);
/* Appends s as text i. */
void tally_texts_put(tally_texts_t *t, int i, const char *s);
/* Appends v, as num writes it, as text i. */
void tally_texts_num(tally_texts_t *t, int i, double v);

typedef tally_texts_t tally_place_direct_t;
_Static_assert(TALLY_DIRECT_COUNT <= TALLY_TEXTS_MAX, "a direct post's texts");

/* Makes the direct post of submission S's summary (summary_len bytes)
 * with its public view pub (pub_len bytes: the view's JSON, or the key it
 * was written to, which starts with prefix and ':'; none when 0) and c,
 * what tally_place_add computed for it. Returns 0, or -1 when a direct
 * post does not apply (the summary is tokened, not scored, a rated match,
 * has no version or is not an object; memory is short): the script then
 * posts from the summary as before. */
int tally_place_direct(const char *summary, size_t summary_len, const char *S,
                       const char *prefix, const char *pub, size_t pub_len,
                       const tally_place_calc_t *c, tally_place_direct_t *d);
/* tally_place_direct of the summary's tree s (NULL when not JSON). */
int tally_place_direct_tree(const cJSON *s, const char *S, const char *prefix,
                            const char *pub, size_t pub_len,
                            const tally_place_calc_t *c,
                            tally_place_direct_t *d);

/* Writes s (len bytes) as a JSON string the way Redis's Lua cjson.encode
 * does: '"', '\\' and '/' escaped, control bytes and DEL as \u00xx but for
 * \b, \t, \n, \f and \r, every other byte as it is. */
void tally_lua_json_str(tally_buf_t *b, const char *s, size_t len);

/* Writes the members "contest", "participant" and "task" (the place id)
 * and "submission" (S) of a contestant event or a change entry,
 * separated by commas, as the scripts write them. */
void tally_lua_place_members(tally_buf_t *b, const tally_place_id_t *id,
                             const char *S);

#endif
