/* The server-side scripts tallyd runs on the jobs stream. Each one checks,
 * in the same atomic step as it writes, that this consumer still owns the
 * entry with the delivery count it was handed: XACK alone checks neither,
 * so a daemon whose job was claimed by another can never post it too. */
#ifndef TALLY_SCRIPTS_H
#define TALLY_SCRIPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The consumer group every tallyd reads through. */
#define TALLY_GROUP "tallyd"

typedef enum tally_script_e {
  TALLY_SCRIPT_POST = 0, /* write results or dead letters, ack, delete */
  TALLY_SCRIPT_HISTORY,  /* re-read this consumer's own pending entries */
  TALLY_SCRIPT_CLAIM,    /* take over entries idle too long elsewhere */
  TALLY_SCRIPT_RETRY,    /* count one more delivery before a retry */
  TALLY_SCRIPT_RELEASE,  /* hand entries back when draining */
  TALLY_SCRIPT_RESCORE,  /* write rescored summaries (no stream keys) */
  TALLY_SCRIPT_COUNT
} tally_script_t;

/* The Lua source of each script, for SCRIPT LOAD or EVAL. */
extern const char *const tally_scripts[TALLY_SCRIPT_COUNT];

/* The scripts, each the text of its files in redis/lua (the list that
 * joins pieces into scripts is TALLY_LUA_SCRIPTS in CMakeLists.txt). */
extern const char tally_lua_post[];    /* owned, job_of, contest, post */
extern const char tally_lua_history[]; /* job_of, history */
extern const char tally_lua_claim[];   /* job_of, released, claim */
extern const char tally_lua_retry[];   /* owned, retry */
/* owned, hold: sent with EVAL while samples wait for a judge */
extern const char tally_lua_hold[];
extern const char tally_lua_release[]; /* owned, released, release */
extern const char tally_lua_rescore[]; /* contest, rescore */
/* The small scripts sent with EVAL: the consumer group (group.lua), the
 * consumer lease (lease.lua, lease_release.lua), the participant-token
 * secret (secret.lua), and tally rescore's lock and pending marks
 * (lock_*.lua, rescore_begin.lua, rescore_finish.lua). */
extern const char tally_lua_group[];
extern const char tally_lua_lease[];
extern const char tally_lua_lease_release[];
extern const char tally_lua_lock_refresh[];
extern const char tally_lua_lock_release[];
extern const char tally_lua_secret[];
extern const char tally_lua_rescore_begin[];
extern const char tally_lua_rescore_finish[];
/* The retention script (trim.lua): XTRIM MINID of the streams tally
 * writes, by age and by count, within what consumer groups still need. */
extern const char tally_lua_trim[];

/* The Lua library the post and rescore scripts share, which keeps the
 * contest state of docs/contest.md. Tests run its functions with a
 * harness appended: compute(flat) takes a pt hash as HGETALL reads it and
 * returns {score, public_score, partial, submissions}, then st, what the
 * place cache keeps; score_json(ts) writes a task score as
 * <p>:taskscores holds it, and cache_text(st) the place cache (nil when
 * the place keeps none); num(x) writes a number as the shortest text that
 * reads back as x (as tally_json_num).
 *
 * How the library computes a task score, over the pt hash of (contest,
 * participant, task): as tally_task_score, with each summary's sides read
 * from "score"/"subtasks" and "public_score"/"public_subtasks" (an array
 * of subtask scores, or null or [] for one subtask worth the score);
 * "compiled": false adds nothing under max_subtask; a summary with
 * "scored": false, or without numeric scores, counts 0 and makes the task
 * score partial; "official": false ones are left out. The submissions are
 * ordered by timestamp, ties by submission id in byte order, so the last
 * one is the greatest (timestamp, id). The score mode, score_precision
 * and score_rounding are those of the newest scored summary in that order
 * (official or not), so the task score does not depend on which
 * submission was posted last; with no scored summary every score is 0.
 *
 * The place cache, <p>:{<c>}:ptagg:<enc u>:<enc t> (docs/contest.md),
 * keeps what that computation gathered: the pt hash's field count, the
 * official and the unscored official submissions, the newest scored
 * summary's id, timestamp, mode, precision and rounding, the last
 * official submission's id and timestamp, and per side the mode's
 * aggregate (max: the best; max_tokened_last: the best tokened and the
 * last's score; max_subtask: each subtask's best and the best of the
 * results that are one subtask). A post that adds a new scored
 * submission to a place merges it into the cache, when the cache's field
 * count is the place's less one and the submission, if it becomes the
 * newest scored one, has the same mode, precision and rounding; the sums
 * and the rounding are then made as the full computation makes them, so
 * the task score is the same, bit for bit. Anything else (a replacement,
 * a move, a token, a dead letter, a rescore, a cache that does not fit)
 * computes the task score from the whole place and writes the cache
 * again; a place with no official or no scored submission, a mode of
 * another name or a number that is not finite keeps no cache. */
extern const char tally_lua_lib[]; /* contest.lua */

/* What the post, retry and release scripts return for one entry. */
enum {
  TALLY_POST_NEED_FULL = 3,   /* nothing written: a "result" whose full view
                                 was withheld ("-") for a tokened submission;
                                 the entry is still pending and owned, so
                                 post it again with the full view */
  TALLY_POST_STALE = 2,       /* written and acknowledged, but with a task
                                 config version other than the current one
                                 (<p>:taskversions): marked in <p>:stale */
  TALLY_POST_DONE = 1,        /* written and acknowledged */
  TALLY_POST_GONE = 0,        /* the entry is no longer pending: dropped */
  TALLY_POST_STOLEN = -1,     /* another consumer owns it now: dropped */
  TALLY_POST_REDELIVERED = -2 /* delivered again since: dropped */
};

/* One script call's arguments: EVALSHA sha (or EVAL of the source when sha
 * is NULL), the three stream keys and <prefix>:guard (never written; see
 * tally_call_begin), and the script's own arguments. The
 * strings given to the tally_call_* functions are borrowed and must stay
 * alive until the call is sent (hiredis copies them when it formats the
 * command). A call holds no other resource: reuse it with _begin. */
/* The arguments of a direct post (tally_post_pre_t). */
#define TALLY_POST_DIRECT_ARGS 7
/* A post item's arguments, direct post included. */
#define TALLY_POST_ITEM_ARGS (12 + TALLY_POST_DIRECT_ARGS)
#define TALLY_CALL_MAX_ARGS (16 + TALLY_POST_ITEM_ARGS * 256)

typedef struct tally_call_s {
  const char *argv[TALLY_CALL_MAX_ARGS];
  size_t argvlen[TALLY_CALL_MAX_ARGS];
  int argc;
  int count_arg; /* index of the item count, for post and release */
  unsigned items;
  char keys[4][96];
  char prefix[96];
  char nums[4 + 3 * 256][24]; /* numbers formatted for the arguments */
  unsigned nnums;
} tally_call_t;

/* The most jobs one post or release call carries. */
#define TALLY_CALL_MAX_ITEMS 256

/* Starts a call of script s for consumer, on the streams of prefix. */
void tally_call_begin(tally_call_t *c, tally_script_t s, const char *sha,
                      const char *prefix, const char *consumer);

/* What the worker wrote besides the result (docs/contest.md): the
 * summary, the public view and the full view. A NULL string is "". A view
 * is its JSON object (it starts with "{"), or the key it was written to
 * in the same transaction: the script then writes the key, not the view,
 * into the event (its "view_key" member and the entry's "view" field). */
typedef struct tally_post_extra_s {
  const char *summary;
  size_t summary_len;
  const char *pub;
  size_t pub_len;
  const char *full;
  size_t full_len;
} tally_post_extra_t;

/* A result's task score computed before the call (contest/placecalc.h):
 * the place cache it was computed from (expect), the cache, the task
 * score's JSON and the meta text to write. The script takes them only
 * when the place's cache is expect, byte for byte, and the place has the
 * field count meta says; otherwise it computes the place itself. */
typedef struct tally_post_pre_s {
  const char *expect, *cache, *score, *meta;
  size_t expect_len, cache_len, score_len, meta_len;
  /* The direct post (contest/placecalc.h, tally_place_direct: contest,
   * participant, task, score, public score, version and event), or all
   * NULL for none. */
  const char *direct[TALLY_POST_DIRECT_ARGS];
  size_t direct_len[TALLY_POST_DIRECT_ARGS];
} tally_post_pre_t;

/* The key a result's body (what "result"), or a view too large to pass
 * inline ("view", "fullview"), is stored under before its post
 * (docs/protocol.md): "<prefix>:<what>:<id>:<deliveries>:<consumer>". Only
 * one consumer can hold an entry with a given delivery count, so a key is
 * written by one delivery only, and writing it again (a post resent)
 * writes the same bytes. Returns the length, or 0 when it does not fit in
 * len bytes. */
#define TALLY_RESULT_KEY_MAX 400
size_t tally_result_key(char *buf, size_t len, const char *prefix,
                        const char *what, const char *id, uint32_t deliveries,
                        const char *consumer);

/* Views up to this many bytes go to the post script inline; larger ones
 * through a key (tally_result_key), so that Lua never copies them and the
 * contestant stream's entries stay small. */
#define TALLY_VIEW_INLINE_MAX 512

/* Post: appends one entry. The job text is taken from the stream by the
 * script, so it never travels twice. kind is one of:
 *
 * - "result": body is the key (tally_result_key) the result JSON was
 *   written to in the same transaction, before the script. The entry added
 *   to <p>:results is {submission S (with a record), entry <id>, body
 *   <key>}. An item dropped because another consumer or another delivery
 *   holds the entry now deletes the key. record is the
 *   key of the submission hash (<p>:submission:<S>), or NULL for none; extra
 *   (NULL: all "") carries the summary and views. With a record, the hash
 *   gets job, entry and result_entry, and with a summary also summary,
 *   version, score, public_score, scored=1, tokened (kept once 1, and set by
 *   a summary's "tokened": true) and rev+1; then the contest state is
 *   updated (pt hash, index sets, contests, task scores with the place
 *   cache, both rankings) and a "score" event is added to <p>:public and
 *   published on <p>:{<c>}:events, with the full view if the submission
 *   is tokened, else the public view. Lua hashes every byte of every
 *   argument, so the full view, which only a tokened submission's event
 *   needs, may be withheld: a full view of "-" means "withheld, available
 *   on request" ("" means "none exists"). When the submission is tokened
 *   (stored tokened=1 or the summary's "tokened": true), an item with a
 *   withheld full view writes nothing at all (not even the result) and its
 *   code is TALLY_POST_NEED_FULL; otherwise "-" is taken as "". A submission
 * whose previous job placed it elsewhere (contest, participant or task) is
 * taken out of the old place, which is recomputed too. A summary whose version
 * is not the task's in <p>:taskversions (set to it when the task has none) is
 * still written, but the submission goes into <p>:stale and the item's code is
 *   TALLY_POST_STALE; written with the current version, it leaves <p>:stale.
 * - "dead": body is the cause, dead-lettered with the job. A scoring job
 *   (type absent or "score") that names its submission, participant and
 *   task is also stored as unscored: scored=0, error, the unscored
 *   summary, rev+1; it counts 0 in its task score, which becomes partial.
 *   No event is written for it.
 * - "token": body is {"submission":"S","participant":"u"|null}, plus
 *   "entry":"<id>" when extra comes from S's job scored again: the entry
 *   field of S's hash when that job was read (extra is then ignored if S
 *   holds another job by now); record is S's hash key; extra's summary,
 *   when not "", is S's summary rendered again (stored like a result's,
 *   and checked against <p>:taskversions as a result's is:
 *   TALLY_POST_STALE), and its full view, when not "", the view of the
 *   "token" event ({"score","max_score"} from the summary otherwise). A
 *   token whose participant is not the submission's is dead-lettered
 *   (the error names both). Otherwise tokened=1 is stored; for a scored
 *   submission the task score and rankings are recomputed, a
 *   "token" event is written and the token's <p>:results entry is
 *   {"submission":S,"id":<entry id>,"state":"applied"}; for one not
 *   scored yet the state is "pending", and its next result publishes the
 *   full view.
 *
 * Returns 0, or -1 when the call is full. */
int tally_call_post(tally_call_t *c, const char *id, uint32_t deliveries,
                    const char *kind, const char *body, size_t body_len,
                    const char *record, const tally_post_extra_t *extra);

/* tally_call_post with a result's precomputed task score (NULL: none).
 * The post script's reply is always the n codes, then n place caches:
 * each result's place cache as its item left it ("" when it wrote none),
 * which the next precomputation for the place starts from. */
int tally_call_post_pre(tally_call_t *c, const char *id, uint32_t deliveries,
                        const char *kind, const char *body, size_t body_len,
                        const char *record, const tally_post_extra_t *extra,
                        const tally_post_pre_t *pre);

/* History: up to count of this consumer's pending entries after cursor
 * ("0" for the first). Reply: a flat array of (id, deliveries, job) with
 * job nil when the entry was deleted while pending. */
void tally_call_history(tally_call_t *c, const char *cursor, unsigned count);

/* Claim: up to count entries of other consumers idle at least idle_ms,
 * scanning from cursor ("-" to begin). Reply: the next cursor ("-" once
 * the scan has wrapped), then (id, deliveries, job) triples. An entry
 * deleted while pending is dead-lettered by the script itself and comes
 * back with job nil. */
void tally_call_claim(tally_call_t *c, const char *cursor, uint64_t idle_ms,
                      unsigned count);

/* Retry: counts one more delivery of id (owned with deliveries), so a job
 * that keeps killing workers reaches --max-deliveries. Reply: the new
 * delivery count, or a TALLY_POST_* code <= 0. */
void tally_call_retry(tally_call_t *c, const char *id, uint32_t deliveries);

/* Release: appends one entry to hand back unscored: its delivery is
 * uncounted and it is marked idle for years, so that any daemon's next
 * claim takes it. Reply: one TALLY_POST_* code per entry. Returns 0, or -1
 * when the call is full. */
int tally_call_release(tally_call_t *c, const char *id, uint32_t deliveries);

/* Rescore: a call of TALLY_SCRIPT_RESCORE, which takes no stream keys:
 * EVALSHA sha 0 prefix n, then n x (submission, rev, summary, error and
 * the direct rescore's TALLY_RESCORE_DIRECT_ARGS texts, "" for none). */
void tally_call_rescore_begin(tally_call_t *c, const char *sha,
                              const char *prefix);

/* What the rescore script returns for one submission. */
enum {
  TALLY_RESCORED_CHANGED = 1, /* written; its score changed */
  TALLY_RESCORED_SAME = 0,    /* written; the same scores */
  TALLY_RESCORED_MOVED = -1,  /* written since rev was read: read again */
  TALLY_RESCORED_GONE = -3    /* no such submission (no job stored) */
};

/* Rescore: appends one submission, rescored from its stored job. rev is
 * the hash's rev as read with the job (an absent rev is "" or "0");
 * summary (summary_len bytes) is the new summary, or "" (or NULL) when
 * the job cannot be scored now, with error (NULL: "") saying why. The
 * script writes, when rev still matches, the summary, version, score,
 * public_score, scored, rev+1 and the pt value (tokened kept; an unscored
 * submission gets the unscored summary of its job and error), and takes
 * the submission out of <p>:stale when its version is the task's
 * current one. When score, public_score or scored changed it adds
 * {"contest","participant","task","submission","version","old","new"}
 * to <p>:changes (old and new are {"score","public_score"}, or null when
 * not scored), and when the score the contestant sees changed (the full
 * one when tokened, else the public one) a "rescore" event with view
 * {"score","max_score"} (nulls when not scored). After all items, each
 * affected task score and ranking is recomputed once. Reply: one
 * TALLY_RESCORED_* code per item. Returns 0, or -1 when the call is full. */
int tally_call_rescore(tally_call_t *c, const char *submission, const char *rev,
                       const char *summary, size_t summary_len,
                       const char *error);

/* The texts of a direct rescore (contest/rescoredirect.h). */
#define TALLY_RESCORE_DIRECT_ARGS 11

/* tally_call_rescore with the texts of a direct rescore (NULL: none), of
 * TALLY_RESCORE_DIRECT_ARGS strings and their lengths. */
int tally_call_rescore_direct(tally_call_t *c, const char *submission,
                              const char *rev, const char *summary,
                              size_t summary_len, const char *error,
                              const char *const *direct,
                              const size_t *direct_len);

/* Rescore, after all items: appends a place whose task score was computed
 * from all of its fields (contest/placecalc.h, tally_place_whole), to be
 * followed by kept calls of tally_call_rescore_kept, one for each of its
 * other fields: its contest, participant and task as the scripts name
 * them, how many of its fields the call rescores directly, the task
 * score's JSON, the place cache and the meta tally_place_whole made. The
 * script takes it when the place is the one assumed (docs/contest.md, "The
 * task scores of a direct rescore") and computes the place itself
 * otherwise. Returns 0, or -1 when the call has no room for it. */
int tally_call_rescore_place(tally_call_t *c, const char *contest,
                             const char *participant, const char *task,
                             unsigned direct, const char *score,
                             size_t score_len, const char *cache,
                             size_t cache_len, const char *meta,
                             size_t meta_len, unsigned kept);

/* One field the call does not rescore, of the place appended last: its
 * submission, the rev it was read at ("0" for none) and whether it was
 * tokened. */
void tally_call_rescore_kept(tally_call_t *c, const char *submission,
                             const char *rev, bool tokened);

#endif
