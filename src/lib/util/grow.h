/* grow.h - arrays that grow by doubling.
 *
 * The tables of the outputs (frames, nodes, per-event and per-node
 * counters) grow one element at a time to sizes known only at the end;
 * doubling keeps that amortised O(1). Counters that start at zero take
 * the zeroed form. The check that there is room is inline: some arrays
 * are checked once a sample.
 */
#ifndef CS_GROW_H
#define CS_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* The capacity the arrays below double cap to (from 64 when it is 0) to
 * hold need elements of elem bytes: 0 and *new_cap, or -ENOMEM if the
 * count or its bytes would overflow. For every allocator that grows so
 * (big_alloc.h's too). */
int cs_grow_cap(size_t cap, size_t need, size_t elem, size_t *new_cap);

/* The slow path of the two below: reallocates *arr. */
int cs_grow_realloc(void **arr, size_t *cap, size_t need, size_t elem,
		    bool zero);

/* Makes *arr (elements of elem bytes, room for *cap) hold at least need
 * elements: *cap doubles, from 64 when it is 0. On success *arr and *cap
 * are the new array, still the caller's, and 0 is returned. -ENOMEM if
 * the size would overflow or realloc fails; then both are unchanged. */
static inline int cs_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap ? 0 : cs_grow_realloc(arr, cap, need, elem, false);
}

/* cs_grow(), the elements past the old *cap zeroed. */
static inline int cs_grow_zeroed(void **arr, size_t *cap, size_t need,
				 size_t elem)
{
	return need <= *cap ? 0 : cs_grow_realloc(arr, cap, need, elem, true);
}

#endif
