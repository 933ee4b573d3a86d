/* swap.c - native records and attrs into the other byte order. */
#include "lib/write/swap.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* A cursor over one record; every step checks the bytes that remain. */
struct sw {
	uint8_t *p;
	uint8_t *end;
	bool bad;
};

static bool need(struct sw *s, size_t n)
{
	if (s->bad || n > (size_t)(s->end - s->p)) {
		s->bad = true;
		return false;
	}
	return true;
}

static uint64_t sw64(struct sw *s)
{
	uint64_t v;

	if (!need(s, 8))
		return 0;
	memcpy(&v, s->p, 8);
	uint64_t x = cs_bswap64(v);
	memcpy(s->p, &x, 8);
	s->p += 8;
	return v;		/* the native value, for lengths */
}

static uint32_t sw32(struct sw *s)
{
	uint32_t v;

	if (!need(s, 4))
		return 0;
	memcpy(&v, s->p, 4);
	uint32_t x = cs_bswap32(v);
	memcpy(s->p, &x, 4);
	s->p += 4;
	return v;
}

static void sw16(struct sw *s)
{
	uint16_t v;

	if (!need(s, 2))
		return;
	memcpy(&v, s->p, 2);
	v = cs_bswap16(v);
	memcpy(s->p, &v, 2);
	s->p += 2;
}

static void skip(struct sw *s, uint64_t n)
{
	if (n > (uint64_t)(s->end - s->p)) {
		s->bad = true;
		return;
	}
	s->p += n;
}

static void sw64n(struct sw *s, uint64_t n)
{
	if (n > (uint64_t)(s->end - s->p) / 8) {
		s->bad = true;
		return;
	}
	while (n--)
		sw64(s);
}

static size_t sample_id_size(const struct cs_perf_attr *a)
{
	uint64_t t = a->sample_type;

	if (!(a->flags & CS_ATTR_SAMPLE_ID_ALL))
		return 0;
	return 8 * (!!(t & CS_SAMPLE_TID) + !!(t & CS_SAMPLE_TIME) +
		    !!(t & CS_SAMPLE_ID) + !!(t & CS_SAMPLE_STREAM_ID) +
		    !!(t & CS_SAMPLE_CPU) + !!(t & CS_SAMPLE_IDENTIFIER));
}

static void sw_sample_id(const struct cs_perf_attr *a, struct sw *s)
{
	uint64_t t = a->sample_type;

	if (t & CS_SAMPLE_TID) {
		sw32(s);
		sw32(s);
	}
	if (t & CS_SAMPLE_TIME)
		sw64(s);
	if (t & CS_SAMPLE_ID)
		sw64(s);
	if (t & CS_SAMPLE_STREAM_ID)
		sw64(s);
	if (t & CS_SAMPLE_CPU) {
		sw32(s);
		sw32(s);
	}
	if (t & CS_SAMPLE_IDENTIFIER)
		sw64(s);
}

static void sw_read(const struct cs_perf_attr *a, struct sw *s)
{
	uint64_t rf = a->read_format;
	uint64_t per = 1 + !!(rf & CS_FORMAT_ID) + !!(rf & CS_FORMAT_LOST);
	uint64_t head = !!(rf & CS_FORMAT_TOTAL_TIME_ENABLED) +
			!!(rf & CS_FORMAT_TOTAL_TIME_RUNNING);

	if (!(rf & CS_FORMAT_GROUP)) {
		sw64n(s, head + per);
		return;
	}
	uint64_t nr = sw64(s);

	sw64n(s, head);
	if (nr > (uint64_t)(s->end - s->p) / 8 / per) {
		s->bad = true;
		return;
	}
	sw64n(s, nr * per);
}

static void sw_sample(const struct cs_perf_attr *a, struct sw *s)
{
	uint64_t t = a->sample_type;

	if (t & CS_SAMPLE_IDENTIFIER)
		sw64(s);
	if (t & CS_SAMPLE_IP)
		sw64(s);
	if (t & CS_SAMPLE_TID) {
		sw32(s);
		sw32(s);
	}
	if (t & CS_SAMPLE_TIME)
		sw64(s);
	if (t & CS_SAMPLE_ADDR)
		sw64(s);
	if (t & CS_SAMPLE_ID)
		sw64(s);
	if (t & CS_SAMPLE_STREAM_ID)
		sw64(s);
	if (t & CS_SAMPLE_CPU) {
		sw32(s);
		sw32(s);
	}
	if (t & CS_SAMPLE_PERIOD)
		sw64(s);
	if (t & CS_SAMPLE_READ)
		sw_read(a, s);
	if (t & CS_SAMPLE_CALLCHAIN)
		sw64n(s, sw64(s));
	if (t & CS_SAMPLE_RAW)
		skip(s, sw32(s));	/* raw bytes are the tracepoint's own */
	if (t & CS_SAMPLE_BRANCH_STACK) {
		uint64_t nr = sw64(s);

		if (a->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			sw64(s);
		if (nr > (uint64_t)(s->end - s->p) / 24) {
			s->bad = true;
			return;
		}
		/* from, to, flags: flags swapped as a u64, as perf reads it */
		sw64n(s, nr * 3);
		if (a->branch_sample_type & CS_BRANCH_SAMPLE_COUNTERS)
			sw64n(s, nr);
	}
	if (t & CS_SAMPLE_REGS_USER) {
		if (sw64(s))
			sw64n(s, (uint64_t)__builtin_popcountll(a->sample_regs_user));
	}
	if (t & CS_SAMPLE_STACK_USER) {
		uint64_t n = sw64(s);

		if (n) {
			skip(s, n);
			sw64(s);
		}
	}
	if (t & (CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT))
		sw64(s);
	if (t & CS_SAMPLE_DATA_SRC)
		sw64(s);
	if (t & CS_SAMPLE_TRANSACTION)
		sw64(s);
	if (t & CS_SAMPLE_REGS_INTR) {
		if (sw64(s))
			sw64n(s, (uint64_t)__builtin_popcountll(a->sample_regs_intr));
	}
	if (t & CS_SAMPLE_PHYS_ADDR)
		sw64(s);
	if (t & CS_SAMPLE_CGROUP)
		sw64(s);
	if (t & CS_SAMPLE_DATA_PAGE_SIZE)
		sw64(s);
	if (t & CS_SAMPLE_CODE_PAGE_SIZE)
		sw64(s);
	if (t & CS_SAMPLE_AUX)
		skip(s, sw64(s));
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

int cs_wswap_record(const struct cs_perf_attr *a, void *rec, size_t size)
{
	struct sw s = { .p = rec, .end = (uint8_t *)rec + size };
	struct cs_perf_event_header h;
	size_t idsz = sample_id_size(a);
	uint8_t *trailer;

	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, rec, sizeof(h));
	sw32(&s);
	sw16(&s);
	sw16(&s);
	trailer = (uint8_t *)rec + size - (idsz <= size - 8 ? idsz : 0);

	switch (h.type) {
	case CS_RECORD_SAMPLE:
		sw_sample(a, &s);
		return s.bad ? -EBADMSG : 0;
	case CS_RECORD_FINISHED_ROUND:
	case CS_RECORD_FINISHED_INIT:
		return 0;
	case CS_RECORD_MMAP:
		sw32(&s);
		sw32(&s);
		sw64n(&s, 3);
		break;
	case CS_RECORD_MMAP2:
		sw32(&s);
		sw32(&s);
		sw64n(&s, 3);
		if (h.misc & CS_MISC_MMAP_BUILD_ID) {
			skip(&s, 24);	/* size byte, reserved and build id bytes */
		} else {
			sw32(&s);
			sw32(&s);
			sw64n(&s, 2);
		}
		sw32(&s);
		sw32(&s);
		break;
	case CS_RECORD_COMM:
		sw32(&s);
		sw32(&s);
		break;
	case CS_RECORD_FORK:
	case CS_RECORD_EXIT:
		sw32(&s);
		sw32(&s);
		sw32(&s);
		sw32(&s);
		sw64(&s);
		break;
	case CS_RECORD_LOST:
		sw64n(&s, 2);
		break;
	case CS_RECORD_LOST_SAMPLES:
		sw64(&s);
		break;
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
		sw64n(&s, 3);
		break;
	case CS_RECORD_SWITCH:
		break;
	case CS_RECORD_SWITCH_CPU_WIDE:
		sw32(&s);
		sw32(&s);
		break;
	case CS_RECORD_KSYMBOL:
		sw64(&s);
		sw32(&s);
		sw16(&s);
		sw16(&s);
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED: {
		sw64(&s);
		sw64n(&s, sw64(&s));
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	if (s.bad || s.p > trailer)
		return -EBADMSG;
	if (idsz) {
		s.p = trailer;
		sw_sample_id(a, &s);
	}
	return s.bad ? -EBADMSG : 0;
}

static uint8_t revbits(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

void cs_wswap_attr(void *dst, const struct cs_perf_attr *attr, size_t size)
{
	/* field widths of the attr, in order, up to the largest we know */
	static const uint8_t width[] = {
		4, 4, 8, 8, 8, 8, 0 /* flags */, 4, 4, 8, 8, 8, 8, 4, 4, 8,
		4, 2, 2, 4, 4, 8, 8, 8,
	};
	uint8_t buf[sizeof(struct cs_perf_attr)];
	size_t off = 0;

	if (size > sizeof(buf))
		size = sizeof(buf);
	memcpy(buf, attr, sizeof(buf));
	for (size_t i = 0; i < sizeof(width) && off < size; i++) {
		uint8_t *p = buf + off;

		switch (width[i]) {
		case 0:
			/* a bitfield: a big-endian compiler numbers its bits
			 * from the top of each byte */
			for (int k = 0; k < 8; k++)
				p[k] = revbits(p[k]);
			off += 8;
			continue;
		case 2: {
			uint16_t v;

			memcpy(&v, p, 2);
			v = cs_bswap16(v);
			memcpy(p, &v, 2);
			break;
		}
		case 4: {
			uint32_t v;

			memcpy(&v, p, 4);
			v = cs_bswap32(v);
			memcpy(p, &v, 4);
			break;
		}
		default: {
			uint64_t v;

			memcpy(&v, p, 8);
			v = cs_bswap64(v);
			memcpy(p, &v, 8);
			break;
		}
		}
		off += width[i] ? width[i] : 8;
	}
	memcpy(dst, buf, size);
}
