/* evlist_int.h - what the reader's own modules know about an evsel beyond
 * the public struct: where the id and the time sit in its records.
 * Not for use outside src/lib/read.
 */
#ifndef CS_EVLIST_INT_H
#define CS_EVLIST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/read/evlist.h"

struct cs_evsel_layout {
	uint64_t sample_type;
	uint64_t read_format;
	size_t trailer_size;		/* bytes of the sample_id trailer, 0 if none */
	int sample_time_pos;		/* u64 index of TIME in a sample body, -1 */
	size_t trailer_time_back;	/* bytes from the record's end to TIME, 0 */
};

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
