/* bytes.h - unaligned loads and byte swaps shared by the reader modules.
 *
 * Records are 8-byte aligned in a well-formed file, but a hostile or
 * truncated one need not be, and UBSan rightly rejects a misaligned u64
 * load: every scalar read from file bytes goes through these helpers. The
 * compiler turns the memcpy into one plain load.
 */
#ifndef CS_READ_BYTES_H
#define CS_READ_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint64_t cs_ld64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t cs_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint16_t cs_ld16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void cs_st64(void *p, uint64_t v) { memcpy(p, &v, sizeof(v)); }
static inline void cs_st32(void *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }
static inline void cs_st16(void *p, uint16_t v) { memcpy(p, &v, sizeof(v)); }

/* In-place swaps of one field at p (any alignment). */
static inline void cs_swap64_at(void *p) { cs_st64(p, __builtin_bswap64(cs_ld64(p))); }
static inline void cs_swap32_at(void *p) { cs_st32(p, __builtin_bswap32(cs_ld32(p))); }
static inline void cs_swap16_at(void *p) { cs_st16(p, __builtin_bswap16(cs_ld16(p))); }

/* Reads a u64/u32 stored in the file's byte order. */
static inline uint64_t cs_ld64x(const void *p, int swap)
{
	uint64_t v = cs_ld64(p);

	return swap ? __builtin_bswap64(v) : v;
}

static inline uint32_t cs_ld32x(const void *p, int swap)
{
	uint32_t v = cs_ld32(p);

	return swap ? __builtin_bswap32(v) : v;
}

#endif
