/* place_lines.c - script's lines by binary and file offset (place_lines.h). */
#include "outputs/place_lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PL_BITS 16			/* slots: 2 MiB, one huge page */
#define PL_SLOTS (1u << PL_BITS)
#define PL_BYTES (PL_SLOTS * sizeof(struct cs_place_line))

_Static_assert(sizeof(struct cs_place_line) == 32, "two slots a cache line");

struct cs_place_lines {
	struct cs_place_line *slots;	/* PL_SLOTS */
	uint8_t gen;			/* of the slots filled since the clear */
};

int cs_place_lines_new(struct cs_place_lines **out)
{
	struct cs_place_lines *t = calloc(1, sizeof(*t));

	*out = NULL;
	/* looked up at random: on a huge page where the kernel gives one,
	 * no TLB miss per lookup and one page fault instead of 512 */
	if (!t || !(t->slots = aligned_alloc(PL_BYTES, PL_BYTES))) {
		free(t);
		return -ENOMEM;
	}
	madvise(t->slots, PL_BYTES, MADV_HUGEPAGE);
	memset(t->slots, 0, PL_BYTES);
	*out = t;
	return 0;
}

struct cs_place_line *cs_place_lines_slot(struct cs_place_lines *t,
					  const void *bin, uint64_t off)
{
	uint64_t h = (off ^ (uint64_t)(uintptr_t)bin * 0x9e3779b97f4a7c15ULL) *
		     0xff51afd7ed558ccdULL;

	return &t->slots[h >> (64 - PL_BITS)];
}

uint8_t cs_place_lines_gen(const struct cs_place_lines *t)
{
	return t->gen;
}

bool cs_place_lines_holds(const struct cs_place_lines *t,
			  const struct cs_place_line *pl, const void *bin,
			  uint64_t off)
{
	return pl->bin == bin && pl->off == off && pl->gen == t->gen;
}

void cs_place_lines_clear(struct cs_place_lines *t)
{
	/* a slot of an old generation is empty; when the count comes back
	 * to a generation slots may still have, they are emptied */
	if (++t->gen == 0)
		memset(t->slots, 0, PL_BYTES);
}

void cs_place_lines_free(struct cs_place_lines *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}
