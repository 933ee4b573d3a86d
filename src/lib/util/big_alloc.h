/* big_alloc.h - large tables on transparent huge pages.
 *
 * report's and the aggregation's tables (the hash indexes, the frames and
 * nodes, the view's entries and sort keys) reach hundreds of MiB on an
 * all-distinct profile and are touched at random: with 4 KiB pages the
 * run took 220k page faults, each a trip into the kernel, and a TLB miss
 * on most probes. The kernel here gives huge pages only where asked
 * (transparent_hugepage "madvise"), and it must be asked before the first
 * touch; a brk heap's growth does not keep the request. So a block of at
 * least CS_BIG_MIN bytes is its own mapping, 2 MiB aligned and advised
 * MADV_HUGEPAGE when made; it grows by moving its pages (mremap, no copy)
 * and its new bytes come zeroed from the kernel, so a zeroed growth
 * writes nothing. A smaller block is malloc()'s: a small profile pays no
 * 2 MiB page for a table of a few KiB.
 *
 * A block of this module is freed by cs_big_free() only, never free():
 * a header before the caller's bytes says which kind it is. Under
 * AddressSanitizer every block is malloc()'s (see big_alloc.c).
 */
#ifndef CS_BIG_ALLOC_H
#define CS_BIG_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Blocks of at least this many bytes (header included) are mappings. */
#define CS_BIG_MIN ((size_t)4 << 20)

/* size bytes, contents undefined (zero for a new mapping); NULL when out
 * of memory or size is too large. The caller owns it: cs_big_free(). */
void *cs_big_alloc(size_t size);

/* nr elements of elem bytes, zeroed; NULL when out of memory or the size
 * overflows. The caller owns it: cs_big_free(). */
void *cs_big_calloc(size_t nr, size_t elem);

/* p (NULL or a block of this module) resized to size bytes, the first
 * min(old, size) bytes kept, like realloc(). On success the block may
 * have moved and the old pointer is not valid; on NULL (out of memory)
 * p is unchanged and still the caller's. When zero is true, the bytes
 * past the old size are zeroed. size 0 gives a block of no bytes, not a
 * free. A mapping shrunk under CS_BIG_MIN stays a mapping (in fewer huge
 * pages); a heap block grown past it becomes one, its one copy. */
void *cs_big_realloc(void *p, size_t size, bool zero);

/* Ends a block of this module; NULL is nothing. */
void cs_big_free(void *p);

/* Whether p (a block of this module) is a mapping of its own; for tests
 * and for docs/performance.md's counts. */
bool cs_big_is_mapped(const void *p);

/* The slow path of the two below (grow.h's doubling, for these blocks). */
int cs_big_grow_realloc(void **arr, size_t *cap, size_t need, size_t elem,
			bool zero);

/* Makes *arr (a block of this module or NULL, elements of elem bytes,
 * room for *cap) hold at least need elements: *cap doubles, from 64 when
 * it is 0. On success *arr and *cap are the new block, still the
 * caller's, and 0 is returned; -ENOMEM if the size would overflow or
 * memory is out, and then both are unchanged. */
static inline int cs_big_grow(void **arr, size_t *cap, size_t need,
			      size_t elem)
{
	return need <= *cap ? 0 : cs_big_grow_realloc(arr, cap, need, elem, false);
}

/* cs_big_grow(), the elements past the old *cap zeroed. */
static inline int cs_big_grow_zeroed(void **arr, size_t *cap, size_t need,
				     size_t elem)
{
	return need <= *cap ? 0 : cs_big_grow_realloc(arr, cap, need, elem, true);
}

#endif
