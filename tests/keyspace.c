/* Two prefixes' Redis state compared key by key (keyspace.h). */
#include "keyspace.h"

#include "redis/scripts.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing text. */
typedef struct {
  char *s;
  size_t len, cap;
} text_t;

static void put(text_t *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->s = realloc(t->s, t->cap);
    if (t->s == NULL)
      abort();
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

/* The prefix whose keys are being read: in a value, "<prefix>:" (a key's
 * name, as a view's key in an event) is written "P:". */
static const char *cur_prefix = "";

/* Appends s (n bytes) with every stream id written "ID" and the prefix
 * "P", then a separator. */
static void put_value(text_t *t, const char *s, size_t n) {
  size_t i = 0, plen = strlen(cur_prefix);
  while (i < n) {
    if (plen > 0 && n - i > plen && memcmp(s + i, cur_prefix, plen) == 0 &&
        s[i + plen] == ':') {
      put(t, "P:", 2);
      i += plen + 1;
      continue;
    }
    size_t d = 0;
    while (i + d < n && isdigit((unsigned char)s[i + d]))
      d++;
    if (d == 13 && i + d < n && s[i + d] == '-' && i + d + 1 < n &&
        isdigit((unsigned char)s[i + d + 1]) &&
        (i == 0 || !isdigit((unsigned char)s[i - 1]))) {
      size_t e = i + d + 1;
      while (e < n && isdigit((unsigned char)s[e]))
        e++;
      put(t, "ID", 2);
      i = e;
    } else if (d > 0) {
      put(t, s + i, d);
      i += d;
    } else {
      put(t, s + i, 1);
      i++;
    }
  }
  put(t, "\x1f", 1);
}

static int by_text(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The contents of key, normalized, into *t. */
static void contents(redisContext *c, const char *key, text_t *t) {
  redisReply *ty = redisCommand(c, "TYPE %s", key);
  const char *type = ty && ty->type == REDIS_REPLY_STATUS ? ty->str : "?";
  put(t, type, strlen(type));
  put(t, ":", 1);
  redisReply *r = NULL;
  if (strcmp(type, "string") == 0) {
    r = redisCommand(c, "GET %s", key);
    put_value(t, r->str, r->len);
  } else if (strcmp(type, "hash") == 0) {
    r = redisCommand(c, "HGETALL %s", key);
    size_t n = r->elements / 2;
    char **m = calloc(n + 1, sizeof(*m));
    for (size_t i = 0; i < n; i++) {
      text_t one = {0};
      put_value(&one, r->element[2 * i]->str, r->element[2 * i]->len);
      put_value(&one, r->element[2 * i + 1]->str, r->element[2 * i + 1]->len);
      m[i] = one.s;
    }
    qsort(m, n, sizeof(*m), by_text);
    for (size_t i = 0; i < n; i++) {
      put(t, m[i], strlen(m[i]));
      free(m[i]);
    }
    free(m);
  } else if (strcmp(type, "zset") == 0) {
    r = redisCommand(c, "ZRANGE %s 0 -1 WITHSCORES", key);
    for (size_t i = 0; i < r->elements; i++)
      put_value(t, r->element[i]->str, r->element[i]->len);
  } else if (strcmp(type, "set") == 0) {
    r = redisCommand(c, "SMEMBERS %s", key);
    char **m = calloc(r->elements + 1, sizeof(*m));
    for (size_t i = 0; i < r->elements; i++) {
      text_t one = {0};
      put_value(&one, r->element[i]->str, r->element[i]->len);
      m[i] = one.s;
    }
    qsort(m, r->elements, sizeof(*m), by_text);
    for (size_t i = 0; i < r->elements; i++) {
      put(t, m[i], strlen(m[i]));
      free(m[i]);
    }
    free(m);
  } else if (strcmp(type, "stream") == 0) {
    r = redisCommand(c, "XRANGE %s - +", key);
    for (size_t i = 0; i < r->elements; i++) {
      const redisReply *f = r->element[i]->element[1];
      for (size_t j = 0; j < f->elements; j++)
        put_value(t, f->element[j]->str, f->element[j]->len);
      put(t, "\n", 1);
    }
  }
  freeReplyObject(r);
  freeReplyObject(ty);
}

/* A key: its name under the prefix, stream ids written "ID" (what the
 * two prefixes' keys are matched by), and its whole name. */
typedef struct {
  char *norm, *name;
} ks_key_t;

static int by_norm(const void *x, const void *y) {
  return strcmp(((const ks_key_t *)x)->norm, ((const ks_key_t *)y)->norm);
}

/* The keys under "<prefix>:", sorted by their normalized names. */
static ks_key_t *keys_of(redisContext *c, const char *prefix, size_t *n) {
  redisReply *r = redisCommand(c, "KEYS %s:*", prefix);
  ks_key_t *k = calloc(r->elements + 1, sizeof(*k));
  size_t plen = strlen(prefix);
  for (size_t i = 0; i < r->elements; i++) {
    text_t t = {0};
    put_value(&t, r->element[i]->str + plen, r->element[i]->len - plen);
    k[i].norm = t.s;
    k[i].name = strdup(r->element[i]->str);
  }
  *n = r->elements;
  qsort(k, *n, sizeof(*k), by_norm);
  freeReplyObject(r);
  return k;
}

int tr_keyspace_diff(redisContext *c, const char *a, const char *b, char *why,
                     size_t why_len) {
  size_t na, nb;
  ks_key_t *ka = keys_of(c, a, &na), *kb = keys_of(c, b, &nb);
  int diffs = 0;
  why[0] = '\0';
  size_t i = 0, j = 0;
  while (i < na || j < nb) {
    int cmp = i == na ? 1 : j == nb ? -1 : strcmp(ka[i].norm, kb[j].norm);
    if (cmp != 0) {
      if (diffs++ == 0)
        snprintf(why, why_len, "%s only under its prefix",
                 cmp < 0 ? ka[i].name : kb[j].name);
      cmp < 0 ? i++ : j++;
      continue;
    }
    text_t ta = {0}, tb = {0};
    cur_prefix = a;
    contents(c, ka[i].name, &ta);
    cur_prefix = b;
    contents(c, kb[j].name, &tb);
    cur_prefix = "";
    if (strcmp(ta.s, tb.s) != 0 && diffs++ == 0)
      snprintf(why, why_len, "%s differs:\n  %.600s\n  %.600s", ka[i].name,
               ta.s, tb.s);
    free(ta.s);
    free(tb.s);
    i++, j++;
  }
  for (size_t x = 0; x < na; x++)
    free(ka[x].norm), free(ka[x].name);
  for (size_t x = 0; x < nb; x++)
    free(kb[x].norm), free(kb[x].name);
  free(ka);
  free(kb);
  return diffs;
}

long long tr_command_calls(redisContext *c, const char *name) {
  redisReply *r = redisCommand(c, "INFO commandstats");
  long long n = -1;
  if (r != NULL && r->type == REDIS_REPLY_STRING) {
    char key[64];
    snprintf(key, sizeof(key), "cmdstat_%s:calls=", name);
    const char *p = strstr(r->str, key);
    n = p ? strtoll(p + strlen(key), NULL, 10) : 0;
  }
  freeReplyObject(r);
  return n;
}

int tr_recompute_load(redisContext *c, char sha[64]) {
  static const char harness[] =
      "if #ARGV == 0 then return {false, false} end\n"
      "local ts, st = compute(ARGV)\n"
      "return {score_json(ts), cache_text(st) or false}\n";
  size_t n = strlen(tally_lua_lib) + sizeof(harness);
  char *src = malloc(n);
  if (src == NULL)
    return -1;
  snprintf(src, n, "%s%s", tally_lua_lib, harness);
  redisReply *r = redisCommand(c, "SCRIPT LOAD %s", src);
  free(src);
  int rc = r != NULL && r->type == REDIS_REPLY_STRING ? 0 : -1;
  if (rc == 0)
    snprintf(sha, 64, "%s", r->str);
  freeReplyObject(r);
  return rc;
}

redisReply *tr_recompute(redisContext *c, const char *sha,
                         const redisReply *flat) {
  size_t n = 3 + flat->elements;
  const char **argv = malloc(n * sizeof(*argv));
  size_t *len = malloc(n * sizeof(*len));
  redisReply *r = NULL;
  if (argv != NULL && len != NULL) {
    argv[0] = "EVALSHA";
    argv[1] = sha;
    argv[2] = "0";
    for (int i = 0; i < 3; i++)
      len[i] = strlen(argv[i]);
    for (size_t i = 0; i < flat->elements; i++) {
      argv[3 + i] = flat->element[i]->str;
      len[3 + i] = flat->element[i]->len;
    }
    r = redisCommandArgv(c, (int)n, argv, len);
  }
  free(argv);
  free(len);
  if (r != NULL && (r->type != REDIS_REPLY_ARRAY || r->elements != 2)) {
    freeReplyObject(r);
    r = NULL;
  }
  return r;
}
