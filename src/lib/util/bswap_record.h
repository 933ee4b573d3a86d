/* bswap_record.h - perf records and attrs swapped between byte orders.
 *
 * One field walker per record type serves both directions: the reader
 * turns a foreign-endian record into native order, the writer's
 * big-endian mode turns a native record into the other order. Only where
 * a length is read differs: after the swap going to native, before it
 * going away from native.
 *
 * Swapping is done in place on a caller-owned copy, field by field: u32
 * pairs stay pairs, strings and payload bytes (raw data, user stack, aux,
 * build ids) stay as they are. The attr's flag word is a C bitfield: a
 * big-endian compiler allocates it from the most significant bit, so it
 * is fixed by reversing the bits of each byte, not by a u64 swap.
 */
#ifndef CS_UTIL_BSWAP_RECORD_H
#define CS_UTIL_BSWAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/perf_abi.h"

enum cs_bswap_dir {
	CS_BSWAP_TO_NATIVE,		/* a foreign record, read by the reader */
	CS_BSWAP_FROM_NATIVE,		/* a native record, to be written foreign */
};

/* What a record's body depends on beyond its own bytes. */
struct cs_bswap_how {
	enum cs_bswap_dir dir;
	/* the record's event: sample layout, read_format and the trailer's
	 * fields; NULL when no event is known (then a kernel record is
	 * swapped without its trailer and a READ body without values) */
	const struct cs_perf_attr *attr;
	size_t trailer_size;		/* sample_id trailer bytes, 0 if none */
	bool mmap2_build_id;		/* MMAP2 holds a build id, not the inode */
};

/* Swaps the fields of an attr that lie within its first size bytes. */
void cs_bswap_attr(void *attr, size_t size);

/* Swaps the 8-byte header of the record at rec. */
void cs_bswap_header(void *rec);

/* Swaps the body of a record of the given type (size bytes at rec,
 * header not touched). A SAMPLE needs how->attr. Bodies of types it does
 * not know field by field are left as they are. Returns NULL, or the
 * field that did not fit in the record (a static string). */
const char *cs_bswap_body(const struct cs_bswap_how *how, uint32_t type,
			  void *rec, size_t size);

#endif
