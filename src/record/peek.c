/* peek.c - the recorder's fixed-layout reads of its own records. */
#include "record/peek.h"

#include <errno.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "abi/sample_fields.h"

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

	/* the head (sample_fields.h's order), checked whole, then the few
	 * fields the recorder wants taken as the walk passes them */
	if ((size_t)(end - p) < cs_fields_size(cs_sample_head, CS_SAMPLE_HEAD_NR,
					       sample_type))
		return -EBADMSG;
#pragma GCC unroll 16
	for (size_t i = 0; i < CS_SAMPLE_HEAD_NR; i++) {
		const struct cs_field *f = &cs_sample_head[i];

		if (!(sample_type & f->bit))
			continue;
		if (f->bit == CS_SAMPLE_IP)
			memcpy(&out->ip, p, 8);
		else if (f->id == CS_ID_PID)
			memcpy(&out->pid, p, 4);
		else if (f->id == CS_ID_TID)
			memcpy(&out->tid, p, 4);
		else if (f->id == CS_ID_TIME)
			memcpy(&out->time, p, 8);
		p += f->size;
	}

#define TAKE(dst) do {						\
		if (end - p < 8)				\
			return -EBADMSG;			\
		memcpy(&(dst), p, 8);				\
		p += 8;						\
	} while (0)

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
	size_t trailer = cs_fields_size(cs_trailer, CS_TRAILER_NR, sample_type);
	long at = cs_fields_at(cs_trailer, CS_TRAILER_NR, sample_type,
			       CS_SAMPLE_TID);
	uint64_t v;

	if (at < 0)
		return -ENOENT;
	if (size < sizeof(struct cs_perf_event_header) + trailer)
		return -EBADMSG;
	memcpy(&v, (const unsigned char *)rec + size - trailer + (size_t)at, 8);
	*pid = (uint32_t)v;
	*tid = (uint32_t)(v >> 32);
	return 0;
}
