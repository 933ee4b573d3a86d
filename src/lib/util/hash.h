/* hash.h - the string hash the lookup tables share (FNV-1a, 64 bit, with
 * the high bits folded down so that masking by a power of two sees them). */
#ifndef CS_HASH_H
#define CS_HASH_H

#include <stdint.h>

static inline uint64_t cs_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

#endif
