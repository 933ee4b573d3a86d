/* maps.h - one process's memory maps: sorted, non-overlapping ranges.
 *
 * A new mapping replaces what it overlaps (splitting the ranges it cuts),
 * as mmap() does, except that a data (non-executable) map never replaces
 * an executable one: it fills only the gaps around it. A code address is
 * resolved in code, whatever data maps a recording reports later over it
 * (an mprotect() of JIT pages, a stale or garbled record). Lookup is a binary search behind a one-entry cache:
 * consecutive frames mostly hit the same map.
 */
#ifndef CS_MAPS_H
#define CS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_dso;

struct cs_map {
	uint64_t start, end;		/* [start, end) */
	uint64_t pgoff;			/* file offset of start */
	struct cs_dso *dso;		/* owned by the dso table */
	bool exec;			/* executable: no data map covers it */
};

struct cs_maps {
	struct cs_map *map;
	size_t nr, cap;
	size_t last;			/* index of the last hit */
	uint64_t space;			/* changes whenever the maps change */
};

/* Inserts [start, start + len) (len > 0), executable or not. Returns 0
 * or -ENOMEM. */
int cs_maps_insert(struct cs_maps *m, uint64_t start, uint64_t len,
		   uint64_t pgoff, struct cs_dso *dso, bool exec);

/* The map holding addr, or NULL. */
const struct cs_map *cs_maps_find(struct cs_maps *m, uint64_t addr);

/* Replaces dst's maps by a copy of src's. Returns 0 or -ENOMEM. */
int cs_maps_copy(struct cs_maps *dst, const struct cs_maps *src);

void cs_maps_clear(struct cs_maps *m);	/* frees the array */

#endif
