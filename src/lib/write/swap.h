/* swap.h - turns native records and attrs into the other byte order.
 *
 * Only the writer's big_endian mode uses this: it writes the file a
 * machine of the other byte order would have written, field by field
 * (u32 pairs stay in place, strings and build ids are bytes, the attr flag
 * word is a bitfield and so has its bits reversed within each byte, as a
 * big-endian compiler lays it out).
 */
#ifndef CS_WRITE_SWAP_H
#define CS_WRITE_SWAP_H

#include <stddef.h>
#include <stdint.h>

#include "abi/perf_abi.h"

/* The id a native record names (IDENTIFIER, the sample's ID or the trailer's),
 * read with the layout every event of the file shares; 0 if it has none. */
uint64_t cs_wswap_record_id(const struct cs_perf_attr *layout, const void *rec,
			   size_t size);

/* Swaps rec in place, using attr (the record's event) for the sample layout
 * and the sample_id trailer. Returns 0, or -EOPNOTSUPP for a record type it
 * does not know field by field, -EBADMSG if the record is inconsistent. */
int cs_wswap_record(const struct cs_perf_attr *attr, void *rec, size_t size);

/* Writes the first size bytes of attr, swapped, to dst. */
void cs_wswap_attr(void *dst, const struct cs_perf_attr *attr, size_t size);

static inline uint16_t cs_bswap16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t cs_bswap32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t cs_bswap64(uint64_t v) { return __builtin_bswap64(v); }

#endif
