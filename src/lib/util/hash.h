/* hash.h - the hashes the lookup tables share: of a string (FNV-1a, 64
 * bit, with the high bits folded down so that masking by a power of two
 * sees them), of a u64 and of a u32; and slots that carry hash bits. */
#ifndef CS_HASH_H
#define CS_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t cs_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

/* A u64's bits mixed into all of the result's (the finalizer of
 * MurmurHash3): for keys made of ids and addresses, whose low bits alone
 * would crowd a table's slots */
static inline uint64_t cs_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* A u32's bits mixed into all of the result's: ids (tids of one
 * process are consecutive) and address bits, for tables masked by a power
 * of two */
static inline uint32_t cs_hash_u32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/*
 * Open-addressed tables with u32 slots: a slot holds an index + 1 (0 is
 * empty) in its low log2(slots) bits and bits of the entry's hash in the
 * others, so a probe passes most other entries without reading them. The
 * table holds fewer entries than slots, so index + 1 fits; at most 2^32
 * slots.
 */
/* The bits of a slot that hold hash bits, for a table of cap slots */
static inline uint32_t cs_slot_hash_bits(size_t cap)
{
	unsigned int id_bits = 0;

	while (((size_t)1 << id_bits) < cap)
		id_bits++;
	return id_bits >= 32 ? 0 : UINT32_MAX << id_bits;
}

/* The slot for index i of an entry whose hash is h */
static inline uint32_t cs_slot_make(uint32_t hash_bits, uint64_t h, size_t i)
{
	return (uint32_t)(i + 1) | ((uint32_t)(h >> 32) & hash_bits);
}

/* The slot may hold the entry whose hash is h */
static inline int cs_slot_may_be(uint32_t hash_bits, uint32_t slot, uint64_t h)
{
	return (slot & hash_bits) == ((uint32_t)(h >> 32) & hash_bits);
}

/* The index a full slot holds */
static inline uint32_t cs_slot_index(uint32_t hash_bits, uint32_t slot)
{
	return (slot & ~hash_bits) - 1;
}

#endif
