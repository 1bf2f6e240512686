/* bench_tallyd's bare cycle: tallyd's Redis work without scoring, the
 * ceiling tallyd is measured against (bench/README.md). */
#include "bench_jobs.h"
#include "bench_support.h"
#include "bench_tallyd.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The post script, bench/bare.lua, turned into C at build time. */
extern const char tally_lua_bare[];

static void bare_fail(const char *what, redisContext *c, redisReply *r) {
  fprintf(stderr, "bench_tallyd: bare cycle: %s: %s\n", what,
          r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
  _exit(1);
}

static void bare_flush(redisContext *c) {
  int done = 0;
  while (!done)
    if (redisBufferWrite(c, &done) != REDIS_OK)
      bare_fail("write", c, NULL);
}

/* Builds the result body and record key of each entry of one
 * XREADGROUP reply into body and rec. */
static size_t bare_results(const redisReply *entries, tally_buf_t *body,
                           char (*rec)[64]) {
  size_t n = 0;
  for (; n < entries->elements && n < BARE_COUNT; n++) {
    const redisReply *e = entries->element[n];
    const char *id = e->element[0]->str;
    const char *job = e->element[1]->element[1]->str;
    long s = strtol(job + strlen("{\"submission\": \"s-"), NULL, 10);
    int d = (int)(s % NDISTINCT);
    tally_buf_t *b = &body[n];
    tally_buf_reset(b);
    bench_putf(b, RESULT_HEAD, s);
    tally_buf_put(b, corpus.result_tail[d], corpus.result_tail_len[d]);
    bench_putf(b, ",\"id\":\"%s\"}", id);
    snprintf(rec[n], sizeof(rec[n]), "bare:submission:s-%ld", s);
  }
  return n;
}

/* Appends the post of the entries of one XREADGROUP reply, and returns
 * how many replies it will get. As tallyd does, one EVALSHA of the bare
 * script; or, plain, a MULTI with XADD, HSET, XACK and XDEL for each
 * entry, which keeps the results out of Lua (the client sends the job
 * text back for the record, since only a script could copy it). */
static unsigned bare_post(redisContext *wr, const char *sha, bool plain,
                          const redisReply *entries) {
  enum { HEAD = 9 };
  static tally_buf_t body[BARE_COUNT];
  static char rec[BARE_COUNT][64], num[16];
  const char *argv[HEAD + 1 + 5 * BARE_COUNT];
  size_t lens[HEAD + 1 + 5 * BARE_COUNT];
  size_t n = bare_results(entries, body, rec);
  if (plain) {
    redisAppendCommand(wr, "MULTI");
    for (size_t i = 0; i < n; i++) {
      const redisReply *e = entries->element[i];
      const redisReply *id = e->element[0], *job = e->element[1]->element[1];
      redisAppendCommand(wr, "XADD bare:results * result %b", body[i].data,
                         body[i].len);
      redisAppendCommand(wr, "HSET %s job %b result %b entry %b", rec[i],
                         job->str, job->len, body[i].data, body[i].len, id->str,
                         id->len);
      redisAppendCommand(wr, "XACK bare:jobs tallyd %b", id->str, id->len);
      redisAppendCommand(wr, "XDEL bare:jobs %b", id->str, id->len);
    }
    redisAppendCommand(wr, "EXEC");
    bare_flush(wr);
    return 2 + 4 * (unsigned)n;
  }
  const char *head[HEAD] = {
      "EVALSHA",   sha,      "3",    "bare:jobs", "bare:results",
      "bare:dead", "tallyd", "bare", "0"};
  int argc = 0;
  for (; argc < HEAD; argc++) {
    argv[argc] = head[argc];
    lens[argc] = strlen(head[argc]);
  }
  argv[argc] = num;
  lens[argc++] = (size_t)snprintf(num, sizeof(num), "%zu", n);
  for (size_t i = 0; i < n; i++) {
    const char *id = entries->element[i]->element[0]->str;
    const char *item[5] = {id, "1", "result", body[i].data, rec[i]};
    size_t ilen[5] = {strlen(id), 1, 6, body[i].len, strlen(rec[i])};
    for (int k = 0; k < 5; k++) {
      argv[argc] = item[k];
      lens[argc++] = ilen[k];
    }
  }
  if (redisAppendCommandArgv(wr, argc, argv, lens) != REDIS_OK)
    bare_fail("EVALSHA", wr, NULL);
  bare_flush(wr);
  return 1;
}

/* Reads the n replies of one post. */
static void bare_replies(redisContext *wr, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    redisReply *r;
    if (redisGetReply(wr, (void **)&r) != REDIS_OK ||
        r->type == REDIS_REPLY_ERROR)
      bare_fail("post", wr, r);
    freeReplyObject(r);
  }
}

/* See bench_tallyd.h. Up to depth posts are in flight, and the next read
 * goes out before the client waits for a post: with depth 1, the client
 * waits for each post before it builds the next. */
void bare_main(const char *sock, unsigned depth, bool plain) {
  redisContext *rd = redisConnectUnix(sock), *wr = redisConnectUnix(sock);
  if (rd == NULL || rd->err || wr == NULL || wr->err)
    bare_fail("connect", rd, NULL);
  redisReply *r = redisCommand(wr, "SCRIPT LOAD %s", tally_lua_bare);
  if (r == NULL || r->type != REDIS_REPLY_STRING)
    bare_fail("SCRIPT LOAD", wr, r);
  char sha[48];
  snprintf(sha, sizeof(sha), "%s", r->str);
  freeReplyObject(r);

  unsigned replies[64]; /* a ring of the posts in flight */
  unsigned first = 0, inflight = 0;
  for (;;) {
    redisAppendCommand(rd,
                       "XREADGROUP GROUP tallyd bare COUNT %d BLOCK 1000 "
                       "STREAMS bare:jobs >",
                       BARE_COUNT);
    bare_flush(rd);
    for (; inflight >= depth; inflight--, first = (first + 1) % 64)
      bare_replies(wr, replies[first]);
    redisReply *batch;
    if (redisGetReply(rd, (void **)&batch) != REDIS_OK ||
        batch->type == REDIS_REPLY_ERROR)
      bare_fail("XREADGROUP", rd, batch);
    if (batch->type == REDIS_REPLY_ARRAY && batch->elements > 0 &&
        batch->element[0]->element[1]->elements > 0) {
      replies[(first + inflight) % 64] =
          bare_post(wr, sha, plain, batch->element[0]->element[1]);
      inflight++;
    } else {
      for (; inflight > 0; inflight--, first = (first + 1) % 64)
        bare_replies(wr, replies[first]);
    }
    freeReplyObject(batch);
  }
}
