/* The builders of the script calls; the scripts themselves are the files
 * of redis/lua, turned into C at build time (cmake/lua2c.cmake). */
#include "redis/scripts.h"

#include <stdio.h>
#include <string.h>

const char *const tally_scripts[TALLY_SCRIPT_COUNT] = {
    [TALLY_SCRIPT_POST] = tally_lua_post,
    [TALLY_SCRIPT_HISTORY] = tally_lua_history,
    [TALLY_SCRIPT_CLAIM] = tally_lua_claim,
    [TALLY_SCRIPT_RETRY] = tally_lua_retry,
    [TALLY_SCRIPT_RELEASE] = tally_lua_release,
    [TALLY_SCRIPT_RESCORE] = tally_lua_rescore,
};

static void arg(tally_call_t *c, const char *s, size_t len) {
  c->argv[c->argc] = s;
  c->argvlen[c->argc] = len;
  c->argc++;
}

static void arg_str(tally_call_t *c, const char *s) {
  arg(c, s, strlen(s));
}

/* A string that may be NULL, which passes as "". */
static void arg_opt(tally_call_t *c, const char *s, size_t len) {
  arg(c, s ? s : "", s ? len : 0);
}

static void arg_num(tally_call_t *c, unsigned long long v) {
  char *buf = c->nums[c->nnums++];
  arg(c, buf, (size_t)snprintf(buf, sizeof(c->nums[0]), "%llu", v));
}

void tally_call_begin(tally_call_t *c, tally_script_t s, const char *sha,
                      const char *prefix, const char *consumer) {
  /* The guard is never written: on a Redis Cluster, a key that does not
   * exist makes the node refuse the call (ASK or TRYAGAIN) while the
   * queue's slot migrates, so that no script runs while some of the keys
   * it reads and writes without naming them have moved already. */
  static const char *const suffix[4] = {"jobs", "results", "dead", "guard"};
  c->argc = 0;
  c->nnums = 0;
  c->items = 0;
  c->count_arg = -1;
  arg_str(c, sha ? "EVALSHA" : "EVAL");
  arg_str(c, sha ? sha : tally_scripts[s]);
  arg_str(c, "4");
  for (int i = 0; i < 4; i++) {
    snprintf(c->keys[i], sizeof(c->keys[i]), "%s:%s", prefix, suffix[i]);
    arg_str(c, c->keys[i]);
  }
  arg_str(c, TALLY_GROUP);
  arg_str(c, consumer);
  if (s == TALLY_SCRIPT_POST || s == TALLY_SCRIPT_RELEASE) {
    snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
    arg_str(c, s == TALLY_SCRIPT_POST ? c->prefix : "0");
    c->count_arg = c->argc;
    arg_num(c, 0);
  }
}

void tally_call_rescore_begin(tally_call_t *c, const char *sha,
                              const char *prefix) {
  c->argc = 0;
  c->nnums = 0;
  c->items = 0;
  arg_str(c, sha ? "EVALSHA" : "EVAL");
  arg_str(c, sha ? sha : tally_scripts[TALLY_SCRIPT_RESCORE]);
  arg_str(c, "0");
  snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
  arg_str(c, c->prefix);
  c->count_arg = c->argc;
  arg_num(c, 0);
}

/* Rewrites the item count after an item is added. */
static void count_item(tally_call_t *c) {
  char *buf = (char *)c->argv[c->count_arg];
  c->items++;
  c->argvlen[c->count_arg] =
      (size_t)snprintf(buf, sizeof(c->nums[0]), "%u", c->items);
}

size_t tally_result_key(char *buf, size_t len, const char *prefix,
                        const char *what, const char *id, uint32_t deliveries,
                        const char *consumer) {
  int n = snprintf(buf, len, "%s:%s:%s:%u:%s", prefix, what, id,
                   (unsigned)deliveries, consumer);
  return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

int tally_call_post(tally_call_t *c, const char *id, uint32_t deliveries,
                    const char *kind, const char *body, size_t body_len,
                    const char *record, const tally_post_extra_t *extra) {
  return tally_call_post_pre(c, id, deliveries, kind, body, body_len, record,
                             extra, NULL);
}

int tally_call_post_pre(tally_call_t *c, const char *id, uint32_t deliveries,
                        const char *kind, const char *body, size_t body_len,
                        const char *record, const tally_post_extra_t *extra,
                        const tally_post_pre_t *pre) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, id);
  arg_num(c, deliveries);
  arg_str(c, kind);
  arg(c, body, body_len);
  arg_str(c, record ? record : "");
  const tally_post_extra_t none = {0};
  if (extra == NULL)
    extra = &none;
  arg_opt(c, extra->summary, extra->summary_len);
  arg_opt(c, extra->pub, extra->pub_len);
  arg_opt(c, extra->full, extra->full_len);
  const tally_post_pre_t no_pre = {0};
  if (pre == NULL)
    pre = &no_pre;
  arg_opt(c, pre->expect, pre->expect_len);
  arg_opt(c, pre->cache, pre->cache_len);
  arg_opt(c, pre->score, pre->score_len);
  arg_opt(c, pre->meta, pre->meta_len);
  for (int i = 0; i < TALLY_POST_DIRECT_ARGS; i++)
    arg_opt(c, pre->direct[i], pre->direct_len[i]);
  count_item(c);
  return 0;
}

int tally_call_rescore(tally_call_t *c, const char *submission, const char *rev,
                       const char *summary, size_t summary_len,
                       const char *error) {
  return tally_call_rescore_direct(c, submission, rev, summary, summary_len,
                                   error, NULL, NULL);
}

int tally_call_rescore_direct(tally_call_t *c, const char *submission,
                              const char *rev, const char *summary,
                              size_t summary_len, const char *error,
                              const char *const *direct,
                              const size_t *direct_len) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, submission);
  arg_str(c, rev);
  arg_opt(c, summary, summary_len);
  arg_str(c, error ? error : "");
  for (int i = 0; i < TALLY_RESCORE_DIRECT_ARGS; i++)
    arg_opt(c, direct ? direct[i] : NULL, direct ? direct_len[i] : 0);
  count_item(c);
  return 0;
}

int tally_call_rescore_place(tally_call_t *c, const char *contest,
                             const char *participant, const char *task,
                             unsigned direct, const char *score,
                             size_t score_len, const char *cache,
                             size_t cache_len, const char *meta,
                             size_t meta_len, unsigned kept) {
  size_t nums = sizeof(c->nums) / sizeof(c->nums[0]);
  if ((size_t)c->argc + 8 + 3 * (size_t)kept > TALLY_CALL_MAX_ARGS ||
      c->nnums + 2 > nums)
    return -1;
  arg_str(c, contest);
  arg_str(c, participant);
  arg_str(c, task);
  arg_num(c, direct);
  arg(c, score, score_len);
  arg(c, cache, cache_len);
  arg(c, meta, meta_len);
  arg_num(c, kept);
  return 0;
}

void tally_call_rescore_kept(tally_call_t *c, const char *submission,
                             const char *rev, bool tokened) {
  arg_str(c, submission);
  arg_str(c, rev);
  arg_str(c, tokened ? "1" : "0");
}

void tally_call_history(tally_call_t *c, const char *cursor, unsigned count) {
  arg_str(c, cursor);
  arg_num(c, count);
}

void tally_call_claim(tally_call_t *c, const char *cursor, uint64_t idle_ms,
                      unsigned count) {
  arg_num(c, idle_ms);
  arg_str(c, cursor);
  arg_num(c, count);
}

void tally_call_retry(tally_call_t *c, const char *id, uint32_t deliveries) {
  arg_str(c, id);
  arg_num(c, deliveries);
}

int tally_call_release(tally_call_t *c, const char *id, uint32_t deliveries) {
  if (c->items >= TALLY_CALL_MAX_ITEMS)
    return -1;
  arg_str(c, id);
  arg_num(c, deliveries);
  count_item(c);
  return 0;
}
