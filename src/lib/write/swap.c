/* swap.c - native records and attrs into the other byte order.
 *
 * The field layouts are lib/util/bswap_record.c's, shared with the reader;
 * what is the writer's own is the set of record types it will write
 * swapped: the ones its encoders and inject produce.
 */
#include "lib/write/swap.h"
#include "lib/util/bswap_record.h"
#include "abi/sample_fields.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static size_t sample_id_size(const struct cs_perf_attr *a)
{
	if (!(a->flags & CS_ATTR_SAMPLE_ID_ALL))
		return 0;
	return cs_fields_size(cs_trailer, CS_TRAILER_NR, a->sample_type);
}

uint64_t cs_wswap_record_id(const struct cs_perf_attr *a, const void *rec,
			   size_t size)
{
	const struct cs_perf_event_header *h = rec;
	const uint8_t *p = rec;
	uint64_t t = a->sample_type, id = 0;
	/* IDENTIFIER names the event wherever it is, else ID */
	uint64_t bit = t & CS_SAMPLE_IDENTIFIER ? CS_SAMPLE_IDENTIFIER :
					       CS_SAMPLE_ID;
	size_t off, tsize;
	long at;

	if (size < sizeof(*h))
		return 0;
	if (h->type == CS_RECORD_SAMPLE) {
		at = cs_fields_at(cs_sample_head, CS_SAMPLE_HEAD_NR, t, bit);
		if (at < 0)
			return 0;
		off = sizeof(*h) + (size_t)at;
	} else if (h->type < CS_RECORD_KERNEL_MAX && (tsize = sample_id_size(a))) {
		at = cs_fields_at(cs_trailer, CS_TRAILER_NR, t, bit);
		if (at < 0)
			return 0;
		off = size - tsize + (size_t)at;
	} else {
		return 0;
	}
	if (off < sizeof(*h) || off > size - 8)
		return 0;
	memcpy(&id, p + off, 8);
	return id;
}

static bool writable_type(uint32_t type)
{
	switch (type) {
	case CS_RECORD_SAMPLE:
	case CS_RECORD_FINISHED_ROUND:
	case CS_RECORD_FINISHED_INIT:
	case CS_RECORD_MMAP:
	case CS_RECORD_MMAP2:
	case CS_RECORD_COMM:
	case CS_RECORD_FORK:
	case CS_RECORD_EXIT:
	case CS_RECORD_LOST:
	case CS_RECORD_LOST_SAMPLES:
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
	case CS_RECORD_SWITCH:
	case CS_RECORD_SWITCH_CPU_WIDE:
	case CS_RECORD_KSYMBOL:
	case CS_RECORD_CALLCHAIN_DEFERRED:
		return true;
	default:
		return false;
	}
}

int cs_wswap_record(const struct cs_perf_attr *a, void *rec, size_t size)
{
	struct cs_perf_event_header h;
	struct cs_bswap_how how = {
		.dir = CS_BSWAP_FROM_NATIVE,
		.attr = a,
		.trailer_size = sample_id_size(a),
	};

	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, rec, sizeof(h));
	if (!writable_type(h.type))
		return -EOPNOTSUPP;
	how.mmap2_build_id = h.misc & CS_MISC_MMAP_BUILD_ID;
	cs_bswap_header(rec);
	return cs_bswap_body(&how, h.type, rec, size) ? -EBADMSG : 0;
}

void cs_wswap_attr(void *dst, const struct cs_perf_attr *attr, size_t size)
{
	uint8_t buf[sizeof(struct cs_perf_attr)];

	if (size > sizeof(buf))
		size = sizeof(buf);
	memcpy(buf, attr, sizeof(buf));
	cs_bswap_attr(buf, size);
	memcpy(dst, buf, size);
}
