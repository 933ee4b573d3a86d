/* swap.c - native records and attrs into the other byte order.
 *
 * The field layouts are lib/util/bswap_record.c's, shared with the reader;
 * what is the writer's own is the set of record types it will write
 * swapped: the ones its encoders and inject produce.
 */
#include "lib/write/swap.h"
#include "lib/util/bswap_record.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static size_t sample_id_size(const struct cs_perf_attr *a)
{
	uint64_t t = a->sample_type;

	if (!(a->flags & CS_ATTR_SAMPLE_ID_ALL))
		return 0;
	return 8 * (!!(t & CS_SAMPLE_TID) + !!(t & CS_SAMPLE_TIME) +
		    !!(t & CS_SAMPLE_ID) + !!(t & CS_SAMPLE_STREAM_ID) +
		    !!(t & CS_SAMPLE_CPU) + !!(t & CS_SAMPLE_IDENTIFIER));
}

uint64_t cs_wswap_record_id(const struct cs_perf_attr *a, const void *rec,
			   size_t size)
{
	const struct cs_perf_event_header *h = rec;
	const uint8_t *p = rec;
	uint64_t t = a->sample_type, id = 0;
	size_t off;

	if (size < sizeof(*h))
		return 0;
	if (h->type == CS_RECORD_SAMPLE) {
		if (t & CS_SAMPLE_IDENTIFIER) {
			off = 8;
		} else if (t & CS_SAMPLE_ID) {
			off = 8 + 8 * (!!(t & CS_SAMPLE_IP) + !!(t & CS_SAMPLE_TID) +
				       !!(t & CS_SAMPLE_TIME) + !!(t & CS_SAMPLE_ADDR));
		} else {
			return 0;
		}
	} else if (h->type < CS_RECORD_KERNEL_MAX && sample_id_size(a)) {
		if (t & CS_SAMPLE_IDENTIFIER)
			off = size - 8;
		else if (t & CS_SAMPLE_ID)
			off = size - sample_id_size(a) +
			      8 * (!!(t & CS_SAMPLE_TID) + !!(t & CS_SAMPLE_TIME));
		else
			return 0;
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
