/* swap.c - records and attrs of a foreign-endian file into native order.
 *
 * Swapping is done in place on a reader-owned copy, field by field per
 * record type: u32 pairs stay pairs, strings and payload bytes (raw data,
 * user stack, aux, build ids) stay as they are. The attr's flag word is a
 * C bitfield: a big-endian compiler allocates it from the most significant
 * bit, so it is fixed by reversing the bits of each byte, not by a u64 swap.
 */
#include "lib/read/reader_int.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "lib/read/bytes.h"

#include <stddef.h>
#include <string.h>

struct scur {
	uint8_t *p, *end;
	const char *why;
};

static bool sneed(struct scur *c, uint64_t n, const char *what)
{
	if (c->why)
		return false;
	if (n > (uint64_t)(c->end - c->p)) {
		c->why = what;
		return false;
	}
	return true;
}

static uint64_t s64(struct scur *c, const char *what)
{
	uint64_t v;

	if (!sneed(c, 8, what))
		return 0;
	v = __builtin_bswap64(cs_ld64(c->p));
	cs_st64(c->p, v);
	c->p += 8;
	return v;
}

static uint32_t s32(struct scur *c, const char *what)
{
	uint32_t v;

	if (!sneed(c, 4, what))
		return 0;
	v = __builtin_bswap32(cs_ld32(c->p));
	cs_st32(c->p, v);
	c->p += 4;
	return v;
}

static uint16_t s16(struct scur *c, const char *what)
{
	uint16_t v;

	if (!sneed(c, 2, what))
		return 0;
	v = __builtin_bswap16(cs_ld16(c->p));
	cs_st16(c->p, v);
	c->p += 2;
	return v;
}

static void s64n(struct scur *c, uint64_t n, const char *what)
{
	if (c->why)
		return;
	if (n > (uint64_t)(c->end - c->p) / 8) {
		c->why = what;
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		cs_swap64_at(c->p + i * 8);
	c->p += n * 8;
}

static void skip(struct scur *c, uint64_t n, const char *what)
{
	if (sneed(c, n, what))
		c->p += n;
}

static uint8_t revbits(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	return (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

void cs_swap_attr(void *attr, size_t size)
{
	static const struct { uint8_t off, width; } f[] = {
		{ 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 32, 8 },
		{ 40, 0 },	/* the bitfield word */
		{ 48, 4 }, { 52, 4 }, { 56, 8 }, { 64, 8 }, { 72, 8 }, { 80, 8 },
		{ 88, 4 }, { 92, 4 }, { 96, 8 }, { 104, 4 }, { 108, 2 },
		{ 110, 2 }, { 112, 4 }, { 116, 4 }, { 120, 8 }, { 128, 8 },
		{ 136, 8 },
	};
	uint8_t *a = attr;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint8_t *p = a + f[i].off;
		size_t w = f[i].width ? f[i].width : 8;

		if (f[i].off + w > size)
			break;
		switch (f[i].width) {
		case 0:
			for (int k = 0; k < 8; k++)
				p[k] = revbits(p[k]);
			break;
		case 2: cs_swap16_at(p); break;
		case 4: cs_swap32_at(p); break;
		case 8: cs_swap64_at(p); break;
		}
	}
}

void cs_swap_header(void *rec)
{
	uint8_t *b = rec;

	cs_swap32_at(b);
	cs_swap16_at(b + 4);
	cs_swap16_at(b + 6);
}

static void swap_read(struct scur *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & CS_FORMAT_ID) + !!(rf & CS_FORMAT_LOST);
	uint64_t times = !!(rf & CS_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & CS_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & CS_FORMAT_GROUP) {
		uint64_t nr = s64(c, "read group count");

		s64n(c, times, "read times");
		if (!c->why && nr > (uint64_t)(c->end - c->p) / 8 / per)
			c->why = "read group entries exceed the record";
		s64n(c, nr * per, "read group entries");
	} else {
		s64n(c, per + times, "read values");
	}
}

static void swap_sample(const struct cs_perf_attr *a, struct scur *c)
{
	uint64_t st = a->sample_type;

	if (st & CS_SAMPLE_IDENTIFIER)
		s64(c, "identifier");
	if (st & CS_SAMPLE_IP)
		s64(c, "ip");
	if (st & CS_SAMPLE_TID) {
		s32(c, "pid");
		s32(c, "tid");
	}
	if (st & CS_SAMPLE_TIME)
		s64(c, "time");
	if (st & CS_SAMPLE_ADDR)
		s64(c, "addr");
	if (st & CS_SAMPLE_ID)
		s64(c, "id");
	if (st & CS_SAMPLE_STREAM_ID)
		s64(c, "stream id");
	if (st & CS_SAMPLE_CPU) {
		s32(c, "cpu");
		s32(c, "cpu");
	}
	if (st & CS_SAMPLE_PERIOD)
		s64(c, "period");
	if (st & CS_SAMPLE_READ)
		swap_read(c, a->read_format);
	if (st & CS_SAMPLE_CALLCHAIN)
		s64n(c, s64(c, "callchain nr"), "callchain nr exceeds the record");
	if (st & CS_SAMPLE_RAW)
		skip(c, s32(c, "raw size"), "raw size exceeds the record");
	if (st & CS_SAMPLE_BRANCH_STACK) {
		uint64_t nr = s64(c, "branch nr");

		if (a->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			s64(c, "branch hw_idx");
		if (!c->why && nr > (uint64_t)(c->end - c->p) / 24)
			c->why = "branch nr exceeds the record";
		s64n(c, nr * 3, "branch entries");
		if (a->branch_sample_type & CS_BRANCH_SAMPLE_COUNTERS)
			s64n(c, nr, "branch counters exceed the record");
	}
	if (st & CS_SAMPLE_REGS_USER) {
		if (s64(c, "user regs abi"))
			s64n(c, (uint64_t)__builtin_popcountll(a->sample_regs_user),
			     "user regs");
	}
	if (st & CS_SAMPLE_STACK_USER) {
		uint64_t n = s64(c, "user stack size");

		if (n) {
			skip(c, n, "user stack size exceeds the record");
			s64(c, "user stack dyn_size");
		}
	}
	if (st & (CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT))
		s64(c, "weight");
	if (st & CS_SAMPLE_DATA_SRC)
		s64(c, "data_src");
	if (st & CS_SAMPLE_TRANSACTION)
		s64(c, "transaction");
	if (st & CS_SAMPLE_REGS_INTR) {
		if (s64(c, "intr regs abi"))
			s64n(c, (uint64_t)__builtin_popcountll(a->sample_regs_intr),
			     "intr regs");
	}
	if (st & CS_SAMPLE_PHYS_ADDR)
		s64(c, "phys_addr");
	if (st & CS_SAMPLE_CGROUP)
		s64(c, "cgroup");
	if (st & CS_SAMPLE_DATA_PAGE_SIZE)
		s64(c, "data_page_size");
	if (st & CS_SAMPLE_CODE_PAGE_SIZE)
		s64(c, "code_page_size");
	if (st & CS_SAMPLE_AUX)
		skip(c, s64(c, "aux size"), "aux size exceeds the record");
}

static void swap_trailer(uint64_t st, struct scur *c)
{
	if (st & CS_SAMPLE_TID) {
		s32(c, "pid");
		s32(c, "tid");
	}
	if (st & CS_SAMPLE_TIME)
		s64(c, "time");
	if (st & CS_SAMPLE_ID)
		s64(c, "id");
	if (st & CS_SAMPLE_STREAM_ID)
		s64(c, "stream id");
	if (st & CS_SAMPLE_CPU) {
		s32(c, "cpu");
		s32(c, "cpu");
	}
	if (st & CS_SAMPLE_IDENTIFIER)
		s64(c, "identifier");
}

static void swap_kernel_body(uint32_t type, uint16_t misc, struct scur *c,
			     const struct cs_evsel_layout *lay)
{
	switch (type) {
	case CS_RECORD_MMAP:
		s32(c, "pid"); s32(c, "tid");
		s64n(c, 3, "start, len, pgoff");
		break;
	case CS_RECORD_MMAP2:
		s32(c, "pid"); s32(c, "tid");
		s64n(c, 3, "start, len, pgoff");
		if (mmap2_has_build_id(misc, lay, c->p, c->end)) {
			skip(c, 24, "build id");
		} else {
			s32(c, "maj"); s32(c, "min");
			s64n(c, 2, "ino");
		}
		s32(c, "prot"); s32(c, "flags");
		break;
	case CS_RECORD_COMM:
	case CS_RECORD_ITRACE_START:
	case CS_RECORD_SWITCH_CPU_WIDE:
		s32(c, "pid"); s32(c, "tid");
		break;
	case CS_RECORD_EXIT:
	case CS_RECORD_FORK:
		s32(c, "pid"); s32(c, "ppid"); s32(c, "tid"); s32(c, "ptid");
		s64(c, "time");
		break;
	case CS_RECORD_LOST:
		s64n(c, 2, "lost");
		break;
	case CS_RECORD_LOST_SAMPLES:
	case CS_RECORD_AUX_OUTPUT_HW_ID:
		s64(c, "value");
		break;
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
	case CS_RECORD_AUX:
		s64n(c, 3, "body");
		break;
	case CS_RECORD_READ:
		s32(c, "pid"); s32(c, "tid");
		swap_read(c, lay ? lay->read_format : 0);
		break;
	case CS_RECORD_NAMESPACES: {
		uint64_t nr;

		s32(c, "pid"); s32(c, "tid");
		nr = s64(c, "nr_namespaces");
		if (!c->why && nr > (uint64_t)(c->end - c->p) / 16)
			c->why = "nr_namespaces exceeds the record";
		s64n(c, nr * 2, "namespaces");
		break;
	}
	case CS_RECORD_KSYMBOL:
		s64(c, "addr"); s32(c, "len"); s16(c, "ksym_type"); s16(c, "flags");
		break;
	case CS_RECORD_BPF_EVENT:
		s16(c, "type"); s16(c, "flags"); s32(c, "id");
		break;
	case CS_RECORD_CGROUP:
		s64(c, "id");
		break;
	case CS_RECORD_TEXT_POKE:
		s64(c, "addr"); s16(c, "old_len"); s16(c, "new_len");
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED:
		s64(c, "cookie");
		s64n(c, s64(c, "nr"), "nr exceeds the record");
		break;
	default:
		break;
	}
}

static void swap_user_body(uint32_t type, struct scur *c)
{
	switch (type) {
	case CS_RECORD_HEADER_ATTR: {
		uint32_t asz;

		if (!sneed(c, 8, "attr"))
			return;
		asz = __builtin_bswap32(cs_ld32(c->p + 4));
		if (!asz)
			asz = CS_PERF_ATTR_SIZE_VER0;
		if (!sneed(c, asz, "attr size exceeds the record"))
			return;
		cs_swap_attr(c->p, asz);
		c->p += asz;
		s64n(c, (uint64_t)(c->end - c->p) / 8, "ids");
		break;
	}
	case CS_RECORD_HEADER_BUILD_ID:
		s32(c, "pid");
		break;
	case CS_RECORD_HEADER_TRACING_DATA:
		s32(c, "size");
		break;
	case CS_RECORD_HEADER_FEATURE:
	case CS_RECORD_COMPRESSED2:
	case CS_RECORD_HEADER_EVENT_TYPE:
		s64(c, "first field");	/* feature id / data_size / event id */
		break;
	case CS_RECORD_EVENT_UPDATE: {
		uint64_t t = s64(c, "update type");

		s64(c, "id");
		if (t == 1)		/* SCALE: a double */
			s64(c, "scale");
		break;
	}
	case CS_RECORD_AUXTRACE:
		s64n(c, 3, "size, offset, reference");
		s32(c, "idx"); s32(c, "tid"); s32(c, "cpu"); s32(c, "reserved");
		break;
	case CS_RECORD_ID_INDEX:
	case CS_RECORD_TIME_CONV:
	case CS_RECORD_STAT:
	case CS_RECORD_STAT_ROUND:
	case CS_RECORD_STAT_CONFIG:
		/* all u64: the whole body (TIME_CONV's trailing flag bytes
		 * are in the last u64 and read by nobody here) */
		s64n(c, (uint64_t)(c->end - c->p) / 8, "body");
		break;
	default:
		break;
	}
}

const char *cs_swap_body(const struct cs_evlist *l, void *rec, size_t size)
{
	uint8_t *b = rec;
	uint32_t type = cs_ld32(b);
	uint16_t misc = cs_ld16(b + 4);
	struct scur c = { b + 8, b + size, NULL };
	const struct cs_evsel *e;

	if (type >= CS_RECORD_HEADER_ATTR) {
		swap_user_body(type, &c);
		return c.why;
	}
	e = cs_evlist_event_of_x(l, type, rec, size, 1);
	if (type == CS_RECORD_SAMPLE) {
		if (!e)
			return "its id names no event of the file";
		swap_sample(e->attr, &c);
		return c.why;
	}
	if (e) {
		const struct cs_evsel_layout *lay = cs_evsel_layout(e);

		if (lay->trailer_size) {
			struct scur t;

			if (lay->trailer_size > size - 8)
				return "too short for its sample_id trailer";
			c.end = b + size - lay->trailer_size;
			t.p = c.end;
			t.end = b + size;
			t.why = NULL;
			swap_trailer(lay->sample_type, &t);
		}
		swap_kernel_body(type, misc, &c, lay);
	} else {
		swap_kernel_body(type, misc, &c, NULL);
	}
	return c.why;
}
