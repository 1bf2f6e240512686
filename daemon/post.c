/* The exactly-once post script and its argument builder. */
#include "post.h"

#include <stdio.h>
#include <string.h>

/* KEYS: jobs stream, results stream, dead-letter stream, submissions hash.
 * ARGV: group, consumer, entry id, delivery count, kind, body,
 *       submission key or "", error.
 * XACK does not check who owns an entry, so ownership and the delivery
 * count are checked here, in the same atomic script that writes. The job
 * is deleted once acknowledged, so the jobs stream never needs a MAXLEN
 * trim (which on Redis 7.0 would delete pending entries too). */
const char tally_post_script[] =
    "local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)\n"
    "if #p == 0 then return 0 end\n"
    "if p[1][2] ~= ARGV[2] then return -1 end\n"
    "if tonumber(p[1][4]) ~= tonumber(ARGV[4]) then return -2 end\n"
    "if ARGV[5] == 'result' then\n"
    "  redis.call('XADD', KEYS[2], '*', 'result', ARGV[6])\n"
    "  if ARGV[7] ~= '' then\n"
    "    redis.call('HSET', KEYS[4], ARGV[7], ARGV[6])\n"
    "  end\n"
    "else\n"
    "  redis.call('XADD', KEYS[3], '*', 'job', ARGV[6], 'error', ARGV[8],\n"
    "             'deliveries', ARGV[4], 'id', ARGV[3])\n"
    "end\n"
    "redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])\n"
    "redis.call('XDEL', KEYS[1], ARGV[3])\n"
    "return 1\n";

static void put(tally_post_t *p, const char *s, size_t len) {
  p->argv[p->argc] = s;
  p->argvlen[p->argc] = len;
  p->argc++;
}

static void puts_arg(tally_post_t *p, const char *s) {
  put(p, s, strlen(s));
}

void tally_post_build(tally_post_t *p, const char *sha, const char *prefix,
                      const char *consumer, const char *entry_id,
                      unsigned deliveries, const char *kind,
                      const char *body, size_t body_len,
                      const char *submission, const char *error) {
  static const char *const suffix[4] = {"jobs", "results", "dead",
                                        "submissions"};
  p->argc = 0;
  puts_arg(p, sha ? "EVALSHA" : "EVAL");
  puts_arg(p, sha ? sha : tally_post_script);
  puts_arg(p, "4");
  for (int i = 0; i < 4; i++) {
    snprintf(p->keybuf[i], sizeof(p->keybuf[i]), "%s:%s", prefix, suffix[i]);
    puts_arg(p, p->keybuf[i]);
  }
  puts_arg(p, "tallyd");
  puts_arg(p, consumer);
  puts_arg(p, entry_id);
  snprintf(p->deliveries, sizeof(p->deliveries), "%u", deliveries);
  puts_arg(p, p->deliveries);
  puts_arg(p, kind);
  put(p, body, body_len);
  puts_arg(p, submission ? submission : "");
  puts_arg(p, error ? error : "");
}
