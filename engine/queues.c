/* The queues a tallyd consumes (queues.h). */
#include "engine/queues.h"
#include "config/error.h"

#include <stdlib.h>
#include <string.h>

bool tally_queues_has(const tally_queues_t *q, const char *name) {
  for (size_t i = 0; i < q->n; i++)
    if (strcmp(q->names[i], name) == 0)
      return true;
  return false;
}

static int add(tally_queues_t *q, const char *name, size_t len) {
  char *copy = strndup(name, len);
  if (copy == NULL)
    return TALLY_ENOMEM;
  if (tally_queues_has(q, copy)) {
    free(copy);
    return 0;
  }
  char **names = realloc(q->names, (q->n + 1) * sizeof(*names));
  if (names == NULL) {
    free(copy);
    return TALLY_ENOMEM;
  }
  q->names = names;
  q->names[q->n++] = copy;
  return 0;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int tally_queues_pick(tally_queues_t *q, const char *list,
                      const char *default_queue, const tally_contestset_t *cs) {
  q->names = NULL;
  q->n = 0;
  int rc = 0;
  if (list != NULL) {
    for (const char *s = list; rc == 0;) {
      size_t n = strcspn(s, ",");
      rc = add(q, s, n);
      if (s[n] == '\0')
        break;
      s += n + 1;
    }
  } else {
    rc = add(q, default_queue, strlen(default_queue));
    for (size_t i = 0; rc == 0 && cs != NULL && i < cs->count; i++)
      if (cs->contests[i].queue != NULL)
        rc = add(q, cs->contests[i].queue, strlen(cs->contests[i].queue));
    if (rc == 0 && q->n > 2)
      qsort(q->names + 1, q->n - 1, sizeof(*q->names), cmp_name);
  }
  if (rc != 0)
    tally_queues_free(q);
  return rc;
}

void tally_queues_free(tally_queues_t *q) {
  for (size_t i = 0; i < q->n; i++)
    free(q->names[i]);
  free(q->names);
  q->names = NULL;
  q->n = 0;
}

const tally_contest_t *tally_queues_unconsumed(const tally_queues_t *q,
                                               const char *default_queue,
                                               const tally_contestset_t *cs,
                                               const char **queue) {
  for (size_t i = 0; cs != NULL && i < cs->count; i++) {
    const tally_contest_t *c = &cs->contests[i];
    const char *name = c->queue != NULL ? c->queue : default_queue;
    if (!tally_queues_has(q, name)) {
      *queue = name;
      return c;
    }
  }
  return NULL;
}
