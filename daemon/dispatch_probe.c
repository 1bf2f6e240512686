/* The dispatcher's probe: once a second, on the write connection, it reads
 * what /metrics shows of Redis (the group's lag, this consumer's pending
 * entries, the server's used memory, the rescore's progress). Probe
 * replies never reset the connection: what cannot be read shows as NaN. */
#include "daemon/dispatch_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PROBE_GROUPS, PROBE_CONSUMERS, PROBE_MEMORY, PROBE_RESCORE };

/* The value of field name in a flat field/value array, or NULL. */
static const redisReply *field(const redisReply *a, const char *name) {
  if (a == NULL || a->type != REDIS_REPLY_ARRAY)
    return NULL;
  for (size_t i = 0; i + 1 < a->elements; i += 2)
    if (a->element[i]->type == REDIS_REPLY_STRING &&
        strcmp(a->element[i]->str, name) == 0)
      return a->element[i + 1];
  return NULL;
}

static double number(const redisReply *v) {
  if (v == NULL)
    return NAN;
  if (v->type == REDIS_REPLY_INTEGER)
    return (double)v->integer;
  if (v->type == REDIS_REPLY_STRING) {
    char *end;
    double x = strtod(v->str, &end);
    return end != v->str && *end == '\0' ? x : NAN;
  }
  return NAN;
}

/* The entry of a list of flat arrays (XINFO's) whose "name" is name. */
static const redisReply *named(const redisReply *list, const char *name) {
  if (list == NULL || list->type != REDIS_REPLY_ARRAY)
    return NULL;
  for (size_t i = 0; i < list->elements; i++) {
    const redisReply *n = field(list->element[i], "name");
    if (n != NULL && n->type == REDIS_REPLY_STRING && strcmp(n->str, name) == 0)
      return list->element[i];
  }
  return NULL;
}

static void on_probe(tally_redis_t *r, redisReply *reply, void *priv) {
  tally_dispatch_t *d = r->data;
  tally_dispatch_probe_t *p = &d->probe;
  d->probing--;
  switch ((intptr_t)priv) {
  case PROBE_GROUPS:
    /* lag is nil when Redis cannot tell (after deletions, say). */
    p->lag = number(field(named(reply, TALLY_GROUP), "lag"));
    break;
  case PROBE_CONSUMERS: {
    const redisReply *c = named(reply, d->opt.consumer);
    /* A consumer that has not read yet is not listed: none pending. */
    p->pending = reply != NULL && reply->type == REDIS_REPLY_ARRAY
                     ? (c != NULL ? number(field(c, "pending")) : 0)
                     : NAN;
    break;
  }
  case PROBE_MEMORY: {
    const char *s = reply != NULL && reply->type == REDIS_REPLY_STRING
                        ? strstr(reply->str, "\nused_memory:")
                        : NULL;
    p->used_memory = s != NULL ? strtod(s + 13, NULL) : NAN;
    break;
  }
  default: {
    bool ok = reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
              reply->elements == 3;
    const redisReply *state = ok ? reply->element[0] : NULL;
    /* A rescore runs from "selecting" until it is "done" or "failed". */
    p->rescore_running = !ok ? NAN
                             : state->type == REDIS_REPLY_STRING &&
                                   strcmp(state->str, "done") != 0 &&
                                   strcmp(state->str, "failed") != 0;
    p->rescore_done = ok ? number(reply->element[1]) : NAN;
    p->rescore_total = ok ? number(reply->element[2]) : NAN;
    if (ok && state->type == REDIS_REPLY_NIL)
      p->rescore_done = p->rescore_total = 0;
  }
  }
}

void tally__probe(tally_dispatch_t *d, uint64_t now) {
  if (!d->ready || d->closing || d->probing > 0 || now < d->probe_next)
    return;
  d->probe_next = now + TALLY_PROBE_EVERY_MS;
  char rescore[160];
  snprintf(rescore, sizeof(rescore), "%s:rescore", d->opt.prefix);
  const char *cmds[][5] = {
      {"XINFO", "GROUPS", d->jobs_key, NULL, NULL},
      {"XINFO", "CONSUMERS", d->jobs_key, TALLY_GROUP, NULL},
      {"INFO", "memory", NULL, NULL, NULL},
      {"HMGET", rescore, "state", "done", "total"},
  };
  for (intptr_t i = 0; i < 4; i++) {
    size_t lens[5];
    int argc = 0;
    while (argc < 5 && cmds[i][argc] != NULL) {
      lens[argc] = strlen(cmds[i][argc]);
      argc++;
    }
    if (tally_redis_command(&d->wr, d->opt.command_timeout_ms, on_probe,
                            (void *)i, argc, cmds[i], lens) == 0)
      d->probing++;
  }
}
