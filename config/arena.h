/* An arena for the job decoder's JSON tree: cJSON allocates the nodes and
 * strings of a job from a few large blocks instead of one heap block per
 * value, and the next job starts the blocks again instead of freeing each
 * node. tally's cJSON hooks (config/json.c) are the way in: inside a
 * tally_arena_use window they allocate from the arena and skip its memory
 * when freeing; outside one they use malloc and free. */
#ifndef TALLY_ARENA_H
#define TALLY_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tally_arena_block_s tally_arena_block_t;

typedef struct tally_arena_s {
  tally_arena_block_t *first; /* the blocks, oldest first */
  tally_arena_block_t *cur;   /* the one being filled */
} tally_arena_t;

/* Makes a (NULL: none) the arena cJSON allocates from on this thread, and
 * the one whose memory cJSON's frees skip; returns the previous one. */
tally_arena_t *tally_arena_use(tally_arena_t *a);

/* Starts a's blocks again: what was allocated from it is gone. Keeps up
 * to 1 MiB of blocks for the next job and frees the rest. */
void tally_arena_reset(tally_arena_t *a);

/* The bytes of a's blocks. */
size_t tally_arena_bytes(const tally_arena_t *a);

/* Frees a's blocks. */
void tally_arena_free(tally_arena_t *a);

/* For the hooks: the arena of this thread's window (NULL outside one); n
 * bytes from a, 16-aligned, filled with fill, with n kept for
 * tally__arena_size (NULL when memory is short); whether p is a's; the n
 * that p was allocated with. */
extern _Thread_local tally_arena_t *tally__arena_current;
void *tally__arena_alloc(tally_arena_t *a, size_t n, int fill);
bool tally__arena_owns(const tally_arena_t *a, const void *p);
size_t tally__arena_size(const void *p);

#endif
