/* evlist_int.h - what the reader's own modules know about an evsel beyond
 * the public struct: where the id and the time sit in its records.
 * Not for use outside src/lib/read.
 */
#ifndef CS_EVLIST_INT_H
#define CS_EVLIST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/read/evlist.h"

struct cs_evsel_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t attr_flags;		/* CS_ATTR_* */
	size_t trailer_size;		/* bytes of the sample_id trailer, 0 if none */
	int sample_time_pos;		/* u64 index of TIME in a sample body, -1 */
	size_t trailer_time_back;	/* bytes from the record's end to TIME, 0 */
};

/*
 * Whether an MMAP2 record carries a build id rather than maj/min/ino.
 * The misc bit alone is not proof: the kernel builds one record for all
 * events that watch a mapping and sets the bit once any of them asked
 * for build ids, so an event without attr.build_id can receive the bit
 * on a record written in the inode form (seen on Linux 6.18 when another
 * recorder ran beside perf 6.1, which then crashed). body points at the
 * union; a size byte over 20 cannot be a build id either.
 */
static inline bool mmap2_has_build_id(uint16_t misc,
				      const struct cs_evsel_layout *lay,
				      const uint8_t *body, const uint8_t *end)
{
	if (!(misc & CS_MISC_MMAP_BUILD_ID))
		return false;
	if (lay)
		return lay->attr_flags & CS_ATTR_BUILD_ID;
	return end - body >= 24 && body[0] <= 20;
}

/* The layout of an evsel that came from a cs_evlist. */
const struct cs_evsel_layout *cs_evsel_layout(const struct cs_evsel *e);

/* Bytes of the sample_id trailer an attr produces (0 without sample_id_all). */
size_t cs_attr_trailer_size(const struct cs_perf_attr *attr);

/* Copies attr (attr->size bytes are readable, 0 meaning the first 64) into
 * *out, zero-extended; a size beyond our struct is cut to it. */
void cs_attr_copy(struct cs_perf_attr *out, const struct cs_perf_attr *attr);

/* cs_evlist_event_of() for a record whose header (type) is native but
 * whose body may still be in the other byte order. */
const struct cs_evsel *cs_evlist_event_of_x(const struct cs_evlist *l,
					    uint32_t type, const void *rec,
					    size_t size, int swap);

#endif
