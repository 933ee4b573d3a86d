/* pool.c - see pool.h. */
#include "lib/util/pool.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* under ASan the room not handed out is poisoned, and each piece is
 * followed by a poisoned gap: a read or write past a piece is caught as
 * it would be past a malloc()'d block */
#define REDZONE 16
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define REDZONE 0
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ALIGN alignof(max_align_t)
/* what malloc() takes from the heap for a block, its own header included:
 * a whole number of pages */
#define BLOCK_BYTES (64 * 1024 - 2 * sizeof(size_t))

struct cs_pool_block {
	struct cs_pool_block *next;
	alignas(max_align_t) char room[];
};

void *cs_pool_zalloc(struct cs_pool *pool, size_t size)
{
	struct cs_pool_block *b;
	size_t need, room;
	char *p;

	if (!size || size > SIZE_MAX / 2)
		return NULL;
	need = (size + REDZONE + ALIGN - 1) & ~(ALIGN - 1);
	if (need > pool->left) {
		/* a piece bigger than a quarter block gets a block of its
		 * own, behind the newest, whose room stays in use */
		room = BLOCK_BYTES - sizeof(*b);
		if (need > room / 4)
			room = need;
		b = calloc(1, sizeof(*b) + room);
		if (!b)
			return NULL;
		if (room == need && pool->blocks) {
			b->next = pool->blocks->next;
			pool->blocks->next = b;
			POISON(b->room, room);
			UNPOISON(b->room, size);
			return b->room;
		}
		b->next = pool->blocks;
		pool->blocks = b;
		pool->next = b->room;
		pool->left = room;
		POISON(b->room, room);
	}
	p = pool->next;
	pool->next += need;
	pool->left -= need;
	UNPOISON(p, size);
	return p;
}

char *cs_pool_strndup(struct cs_pool *pool, const char *s, size_t len)
{
	char *p = len < SIZE_MAX ? cs_pool_zalloc(pool, len + 1) : NULL;

	if (p)
		memcpy(p, s, len);
	return p;
}

void cs_pool_free(struct cs_pool *pool)
{
	for (struct cs_pool_block *b = pool->blocks, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	memset(pool, 0, sizeof(*pool));
}
