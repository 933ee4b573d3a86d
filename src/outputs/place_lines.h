/* place_lines.h - where script's line cache holds an address's lines, by
 * the binary and file offset the address lies at.
 *
 * The line cache is keyed by (address space, address), and every process
 * is a space of its own: a compiler run a thousand times would have its
 * hot functions resolved, measured and formatted a thousand times. What a
 * user frame line shows but its address - symbol, offset, dso, inlined
 * calls - depends only on (binary, file offset) (cs_machine_user_place()),
 * so this table remembers which text of the cache's arena was made for
 * each: a non-PIE binary's address seen in an earlier process is the same
 * text, a shared library's differs only in its address. It only points
 * into the arena: when the arena starts over it is cleared with it.
 */
#ifndef CS_PLACE_LINES_H
#define CS_PLACE_LINES_H

#include <stdbool.h>
#include <stdint.h>

struct cs_place_lines;			/* opaque */

/* 32 bytes: the table is bigger than the CPU's caches, a lookup is a
 * cache miss, and two entries share a line. */
struct cs_place_line {
	const void *bin;		/* NULL: empty */
	uint64_t off;
	uint64_t addr;			/* what the text was made for */
	uint32_t text;			/* its offset in the arena */
	uint16_t len;			/* its bytes */
	uint8_t lines;			/* its lines */
	uint8_t gen;			/* cs_place_lines_gen() when filled */
};

/* Returns 0 and an empty table in *out (caller frees), or -ENOMEM. */
int cs_place_lines_new(struct cs_place_lines **out);

/* The one slot (bin, off) can be in (cs_place_lines_holds()); filling
 * it (gen: cs_place_lines_gen()) replaces what it held. */
struct cs_place_line *cs_place_lines_slot(struct cs_place_lines *t,
					  const void *bin, uint64_t off);

/* The table's generation, which cs_place_lines_clear() changes. */
uint8_t cs_place_lines_gen(const struct cs_place_lines *t);

/* Whether slot pl holds (bin, off), filled since the last clear. */
bool cs_place_lines_holds(const struct cs_place_lines *t,
			  const struct cs_place_line *pl, const void *bin,
			  uint64_t off);

/* Every slot empty: the text they point to is gone. A new generation,
 * so that a profile whose arena starts over often does not write the
 * whole table each time (it is, once in 256). */
void cs_place_lines_clear(struct cs_place_lines *t);

void cs_place_lines_free(struct cs_place_lines *t);

#endif
