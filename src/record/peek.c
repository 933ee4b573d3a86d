/* peek.c - the recorder's fixed-layout reads of its own records. */
#include "record/peek.h"

#include <errno.h>
#include <string.h>

#include "abi/perf_abi.h"

int cs_rec_peek_sample(uint64_t sample_type, const void *rec, size_t size,
		       struct cs_rec_sample *out)
{
	const unsigned char *p = rec, *end = p + size;
	struct cs_perf_event_header h;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	out->misc = h.misc;
	p += sizeof(h);

#define TAKE(dst) do {						\
		if (end - p < 8)				\
			return -EBADMSG;			\
		memcpy(&(dst), p, 8);				\
		p += 8;						\
	} while (0)

	if (sample_type & CS_SAMPLE_IDENTIFIER)
		TAKE(v);
	if (sample_type & CS_SAMPLE_IP)
		TAKE(out->ip);
	if (sample_type & CS_SAMPLE_TID) {
		TAKE(v);
		out->pid = (uint32_t)v;
		out->tid = (uint32_t)(v >> 32);
	}
	if (sample_type & CS_SAMPLE_TIME)
		TAKE(out->time);
	if (sample_type & CS_SAMPLE_ADDR)
		TAKE(v);
	if (sample_type & CS_SAMPLE_ID)
		TAKE(v);
	if (sample_type & CS_SAMPLE_STREAM_ID)
		TAKE(v);
	if (sample_type & CS_SAMPLE_CPU)
		TAKE(v);
	if (sample_type & CS_SAMPLE_PERIOD)
		TAKE(v);
	if (sample_type & CS_SAMPLE_READ)
		return -ENOTSUP;
	if (sample_type & CS_SAMPLE_CALLCHAIN) {
		TAKE(v);
		if (v > (uint64_t)(end - p) / 8)
			return -EBADMSG;
		out->chain = (const uint64_t *)(const void *)p;
		out->chain_nr = v;
	}
#undef TAKE
	return 0;
}

int cs_rec_peek_trailer_tid(uint64_t sample_type, const void *rec, size_t size,
			    uint32_t *pid, uint32_t *tid)
{
	static const uint64_t bits[] = {
		CS_SAMPLE_TID, CS_SAMPLE_TIME, CS_SAMPLE_ID, CS_SAMPLE_STREAM_ID,
		CS_SAMPLE_CPU, CS_SAMPLE_IDENTIFIER,
	};
	size_t trailer = 0;
	uint64_t v;

	if (!(sample_type & CS_SAMPLE_TID))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (sample_type & bits[i])
			trailer += 8;
	if (size < sizeof(struct cs_perf_event_header) + trailer)
		return -EBADMSG;
	/* TID is the first field of the trailer */
	memcpy(&v, (const unsigned char *)rec + size - trailer, 8);
	*pid = (uint32_t)v;
	*tid = (uint32_t)(v >> 32);
	return 0;
}
