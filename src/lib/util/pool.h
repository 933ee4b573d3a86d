/* pool.h - small allocations that all end together.
 *
 * A profile names thousands of threads, processes and demangled names,
 * each a few dozen bytes that live as long as the table holding them.
 * Made one malloc() each, ending them took one free() each, every one a
 * cache miss on a block touched long before: 2-3% of a short script run
 * went to its teardown. A pool hands out pieces of 64 KiB blocks and
 * frees the blocks at its end: the pool owns every piece, and a piece is
 * never freed alone.
 */
#ifndef CS_POOL_H
#define CS_POOL_H

#include <stddef.h>

struct cs_pool_block;

/* Zero-initialised is an empty pool. */
struct cs_pool {
	struct cs_pool_block *blocks;	/* the newest first */
	char *next;			/* free room in the newest block */
	size_t left;
};

/* size bytes (> 0), zeroed, aligned for any type; the pool's, valid
 * until cs_pool_free(). NULL when out of memory or size is 0. */
void *cs_pool_zalloc(struct cs_pool *pool, size_t size);

/* A copy of the len bytes at s with a NUL after them, the pool's; NULL
 * when out of memory. */
char *cs_pool_strndup(struct cs_pool *pool, const char *s, size_t len);

/* Frees every piece; the pool is empty and reusable afterwards. */
void cs_pool_free(struct cs_pool *pool);

#endif
