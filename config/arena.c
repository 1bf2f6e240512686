/* The job decoder's arena (config/arena.h). */
#include "config/arena.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer the unused part of every block is poisoned, so a
 * node read after its job's reset is reported as it would be after a
 * free. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Blocks are at least this large, and each new one twice the last, up to
 * BLOCK_MAX: a job of any size takes a few dozen blocks at most, so that
 * finding whether a pointer is the arena's (each free of cJSON's asks)
 * stays cheap and decoding stays linear in the job's size. A larger
 * allocation gets a block of its own size. */
#define BLOCK_BYTES ((size_t)64 * 1024)
#define BLOCK_MAX ((size_t)16 * 1024 * 1024)
/* What a reset keeps for the next job. */
#define KEEP_BYTES ((size_t)1024 * 1024)
#define ALIGN alignof(max_align_t)

struct tally_arena_block_s {
  tally_arena_block_t *next;
  size_t size; /* bytes of data */
  size_t used;
  alignas(max_align_t) unsigned char data[];
};

_Thread_local tally_arena_t *tally__arena_current;

static bool owns(const tally_arena_t *a, const void *p) {
  uintptr_t u = (uintptr_t)p;
  for (const tally_arena_block_t *b = a->first; b != NULL; b = b->next)
    if (u >= (uintptr_t)b->data && u < (uintptr_t)b->data + b->size)
      return true;
  return false;
}

static void *arena_alloc(tally_arena_t *a, size_t n) {
  if (n > SIZE_MAX - ALIGN)
    return NULL;
  n = (n + ALIGN - 1) & ~(ALIGN - 1);
  tally_arena_block_t *b = a->cur;
  /* The blocks after cur are free again since the last reset. */
  while (b != NULL && b->size - b->used < n) {
    b = b->next;
    if (b != NULL)
      b->used = 0;
  }
  if (b == NULL) {
    tally_arena_block_t **tail = &a->first;
    size_t last = 0;
    while (*tail != NULL) {
      last = (*tail)->size;
      tail = &(*tail)->next;
    }
    size_t size = last * 2 > BLOCK_MAX ? BLOCK_MAX : last * 2;
    if (size < BLOCK_BYTES)
      size = BLOCK_BYTES;
    if (n > size)
      size = n;
    b = malloc(sizeof(*b) + size);
    if (b == NULL)
      return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    POISON(b->data, size);
    *tail = b;
  }
  a->cur = b;
  void *p = b->data + b->used;
  b->used += n;
  UNPOISON(p, n);
  return p;
}

bool tally__arena_owns(const tally_arena_t *a, const void *p) {
  return owns(a, p);
}

/* Each allocation is a header holding its size, then its bytes. */
typedef union header_u {
  size_t n;
  max_align_t align;
} header_t;

void *tally__arena_alloc(tally_arena_t *a, size_t n, int fill) {
  if (n > SIZE_MAX - sizeof(header_t))
    return NULL;
  header_t *h = arena_alloc(a, sizeof(header_t) + n);
  if (h == NULL)
    return NULL;
  h->n = n;
  memset(h + 1, fill, n);
  return h + 1;
}

size_t tally__arena_size(const void *p) {
  return ((const header_t *)p - 1)->n;
}

tally_arena_t *tally_arena_use(tally_arena_t *a) {
  tally_arena_t *was = tally__arena_current;
  tally__arena_current = a;
  return was;
}

void tally_arena_reset(tally_arena_t *a) {
  size_t kept = 0;
  tally_arena_block_t **link = &a->first;
  while (*link != NULL) {
    tally_arena_block_t *b = *link;
    if (kept + b->size > KEEP_BYTES && kept > 0) {
      *link = b->next;
      UNPOISON(b->data, b->size);
      free(b);
      continue;
    }
    kept += b->size;
    b->used = 0;
    POISON(b->data, b->size);
    link = &b->next;
  }
  a->cur = a->first;
}

size_t tally_arena_bytes(const tally_arena_t *a) {
  size_t n = 0;
  for (const tally_arena_block_t *b = a->first; b != NULL; b = b->next)
    n += b->size;
  return n;
}

void tally_arena_free(tally_arena_t *a) {
  while (a->first != NULL) {
    tally_arena_block_t *b = a->first;
    a->first = b->next;
    UNPOISON(b->data, b->size);
    free(b);
  }
  a->cur = NULL;
}
