/* evlist_int.h - what the reader's own modules know about an evsel beyond
 * the public struct: where the id and the time sit in its records.
 * Not for use outside src/lib/read.
 */
#ifndef CS_EVLIST_INT_H
#define CS_EVLIST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/read/bytes.h"
#include "lib/read/evlist.h"

/* Worked out once per event from the field order of abi/sample_fields.h. */
struct cs_evsel_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t attr_flags;		/* CS_ATTR_* */
	size_t trailer_size;		/* bytes of the sample_id trailer, 0 if none */
	int sample_time_pos;		/* u64 index of TIME in a sample body, -1 */
	int sample_tid_pos;		/* u64 index of TID in a sample body, -1 */
	size_t sample_fixed_size;	/* bytes of the fixed fields a sample opens with */
	size_t trailer_time_back;	/* bytes from the record's end to TIME, 0 */
	/* the least size of a record whose time is where the two fields
	 * above say, worked out once for cs_layout_record_time_flat():
	 * UINT64_MAX where there is none */
	uint64_t sample_time_end;	/* a sample's: 16 + 8 * sample_time_pos */
	uint64_t trailer_time_min;	/* another record's: 8 + trailer_size */
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

/* The list itself, here so that the lookup every sample makes can be
 * inlined into the decoder. */
struct evsel {
	struct cs_evsel pub;		/* first: cs_evsel_layout() casts back */
	struct cs_perf_attr attr;
	struct cs_evsel_layout lay;
	char *name;
	uint64_t *ids;
	size_t nr_ids, cap_ids;
};

struct id_slot {
	uint64_t id;
	uint32_t index_plus1;		/* 0: empty */
};

struct cs_evlist {
	struct evsel **ev;
	size_t nr, cap;
	struct id_slot *tab;		/* open addressing, power of two */
	size_t tab_cap, tab_used;
	/* ids are mostly a dense range (the kernel numbers them in turn):
	 * then id's event is direct[id - direct_base], or NULL, and the table
	 * is not probed. NULL when the range is too wide. (Events are
	 * allocated one by one: they stay where they are as others come.) */
	const struct cs_evsel **direct;
	uint64_t direct_base, direct_span;
	/* shared by every event (checked on add) */
	int sample_id_all;
	int id_pos;			/* u64 index of the id in a sample, -1 */
	size_t id_back;			/* bytes from a trailer's end to its id, 0 */
	/* the layout of every event when they all share one sample_type and
	 * sample_id_all (perf's usual file: the time sits at the same place
	 * whatever the event), else NULL */
	const struct cs_evsel_layout *same;
};

static inline size_t cs_evlist_id_hash(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

/* The event id names, or NULL. */
static inline const struct cs_evsel *cs_evlist_find_id(const struct cs_evlist *l,
						       uint64_t id)
{
	size_t mask = l->tab_cap - 1, h;

	if (l->direct) {
		uint64_t d = id - l->direct_base;

		return d < l->direct_span ? l->direct[d] : NULL;
	}
	if (!l->tab_cap)
		return NULL;
	for (h = cs_evlist_id_hash(id, l->tab_cap); l->tab[h].index_plus1;
	     h = (h + 1) & mask)
		if (l->tab[h].id == id)
			return &l->ev[l->tab[h].index_plus1 - 1]->pub;
	return NULL;
}

/* cs_evlist_sample_event(), inline: every sample comes here. */
static inline const struct cs_evsel *
cs_evlist_sample_event_inline(const struct cs_evlist *l, const void *rec,
			      size_t size)
{
	if (!l->nr || size < 8)
		return NULL;
	if (l->nr == 1 || l->id_pos < 0)
		return &l->ev[0]->pub;	/* no id: perf takes the first */
	if ((size_t)(l->id_pos + 2) * 8 > size)
		return NULL;
	return cs_evlist_find_id(l, cs_ld64((const char *)rec + 8 + l->id_pos * 8));
}

/* The event of a kernel record other than SAMPLE (size >= 8), named by
 * the id at its trailer's end, inline for the decoder's quick path. */
static inline const struct cs_evsel *
cs_evlist_trailer_event_inline(const struct cs_evlist *l, const void *rec,
			       size_t size)
{
	if (!l->nr)
		return NULL;
	if (l->nr == 1 || !l->id_back)
		return &l->ev[0]->pub;
	if (size < 8 + l->id_back)
		return NULL;
	return cs_evlist_find_id(l, cs_ld64((const char *)rec + size - l->id_back));
}

/* A record's time where lay puts it (size >= 8), or CS_NO_TIME. */
static inline uint64_t cs_layout_record_time(const struct cs_evsel_layout *lay,
					     const void *rec, size_t size,
					     uint32_t type)
{
	if (type == CS_RECORD_SAMPLE) {
		if (lay->sample_time_pos < 0 ||
		    (size_t)(lay->sample_time_pos + 2) * 8 > size)
			return CS_NO_TIME;
		return cs_ld64((const char *)rec + 8 + lay->sample_time_pos * 8);
	}
	if (!lay->trailer_time_back || size < 8 + lay->trailer_size)
		return CS_NO_TIME;
	return cs_ld64((const char *)rec + size - lay->trailer_time_back);
}

/* cs_layout_record_time() without a branch on the type, for a caller that
 * has not branched on it already: in real recordings samples and deferred
 * records alternate in no order a predictor learns. Both places are
 * worked out and masked; where neither holds a time the header is read,
 * in bounds, and dropped. */
static inline uint64_t cs_layout_record_time_flat(const struct cs_evsel_layout *lay,
						  const void *rec, size_t size,
						  uint32_t type)
{
	uint64_t sample = -(uint64_t)(type == CS_RECORD_SAMPLE);
	uint64_t s_at = 8 + 8 * (uint64_t)(int64_t)lay->sample_time_pos;
	uint64_t t_at = size - lay->trailer_time_back;
	uint64_t least = (lay->sample_time_end & sample) |
			 (lay->trailer_time_min & ~sample);
	uint64_t ok = (uint64_t)(size >= least);
	uint64_t at = ((s_at & sample) | (t_at & ~sample)) & -ok;

	return cs_ld64((const char *)rec + at) | (ok - 1);
}

/* cs_evlist_record_time() of a kernel record (type < HEADER_ATTR, size
 * >= 8), inline for the usual file whose events share one layout. */
static inline uint64_t cs_evlist_kernel_record_time(const struct cs_evlist *l,
						    const void *rec, size_t size,
						    uint32_t type)
{
	if (!l->same)
		return cs_evlist_record_time(l, rec, size);
	return cs_layout_record_time_flat(l->same, rec, size, type);
}

/* The layout of an evsel that came from a cs_evlist. */
static inline const struct cs_evsel_layout *cs_evsel_layout(const struct cs_evsel *e)
{
	return &((const struct evsel *)e)->lay;
}

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
