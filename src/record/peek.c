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
		p += v * 8;
	}
#undef TAKE
	out->parsed = (size_t)(p - (const unsigned char *)rec);
	return 0;
}

int cs_rec_peek_user_copy(uint64_t sample_type, uint64_t regs_mask,
			  const void *rec, size_t size, const struct cs_rec_sample *s,
			  struct cs_rec_user_copy *out)
{
	const unsigned char *p = (const unsigned char *)rec + s->parsed;
	const unsigned char *end = (const unsigned char *)rec + size;
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (sample_type & (CS_SAMPLE_RAW | CS_SAMPLE_BRANCH_STACK))
		return -ENOTSUP;
	if (s->parsed > size)
		return -EBADMSG;
	if (sample_type & CS_SAMPLE_REGS_USER) {
		if (end - p < 8)
			return -EBADMSG;
		memcpy(&out->abi, p, 8);
		p += 8;
		if (out->abi) {
			n = (uint64_t)__builtin_popcountll(regs_mask);
			if (n > (uint64_t)(end - p) / 8)
				return -EBADMSG;
			out->regs = (const uint64_t *)(const void *)p;
			p += n * 8;
		}
	}
	if (sample_type & CS_SAMPLE_STACK_USER) {
		if (end - p < 8)
			return -EBADMSG;
		memcpy(&n, p, 8);
		p += 8;
		if (n) {
			/* the copy, then dyn_size */
			if (n > (uint64_t)(end - p) || (uint64_t)(end - p) - n < 8)
				return -EBADMSG;
			out->stack = p;
			memcpy(&out->stack_size, p + n, 8);
			if (out->stack_size > n)
				return -EBADMSG;
		}
	}
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
