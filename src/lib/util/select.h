/* select.h - c ? a : b without a branch.
 *
 * Where c depends on the data (which run of a merge holds the least
 * time, whether a sample opens a new kernel entry), a jump mispredicts
 * about as often as c changes. gcc turns a plain ?: into a jump when it
 * guesses c predictable; the empty asm hides where the mask comes from,
 * so that the select stays arithmetic (or a conditional move).
 */
#ifndef CS_SELECT_H
#define CS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t
cs_select_u64(bool c, uint64_t a, uint64_t b)
{
	uint64_t mask = -(uint64_t)c;

	__asm__("" : "+r"(mask));
	return (a & mask) | (b & ~mask);
}

#endif
