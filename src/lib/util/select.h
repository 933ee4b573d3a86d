/* select.h - choices made without a branch.
 *
 * Where the choice depends on the data (which run of a merge holds the
 * least time, whether a sample opens a new kernel entry), a jump
 * mispredicts about as often as the answer changes. gcc turns a plain ?:
 * into a jump where it guesses the answer predictable (it did for the
 * merge's scan); these stay conditional moves.
 */
#ifndef CS_SELECT_H
#define CS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

/* c ? a : b */
static inline __attribute__((always_inline)) uint64_t
cs_select_u64(bool c, uint64_t a, uint64_t b)
{
#if defined(__x86_64__)
	__asm__("test %[c], %[c]\n\tcmovne %[a], %[b]"
		: [b] "+r"(b) : [c] "r"((uint64_t)c), [a] "r"(a) : "cc");
	return b;
#else
	/* the empty asm hides where the mask comes from */
	uint64_t mask = -(uint64_t)c;

	__asm__("" : "+r"(mask));
	return (a & mask) | (b & ~mask);
#endif
}

/* One step of a scan for the least value and where it is: v (at i)
 * replaces *best (at *at) when it is less; a tie keeps the earlier. */
static inline __attribute__((always_inline)) void
cs_least_step(uint64_t v, uint64_t i, uint64_t *best, uint64_t *at)
{
#if defined(__x86_64__)
	uint64_t b = *best, a = *at;

	__asm__("cmp %[b], %[v]\n\tcmovb %[v], %[b]\n\tcmovb %[i], %[a]"
		: [b] "+r"(b), [a] "+r"(a) : [v] "r"(v), [i] "r"(i) : "cc");
	*best = b;
	*at = a;
#else
	bool less = v < *best;

	*best = cs_select_u64(less, v, *best);
	*at = cs_select_u64(less, i, *at);
#endif
}

#endif
