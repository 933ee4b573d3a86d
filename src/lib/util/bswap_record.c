/* bswap_record.c - the field layout of each record type, walked to swap it.
 *
 * The cursor reads every field in native order (c.swap is set when the
 * bytes start foreign), then the field's bytes are swapped where they lie.
 */
#include "lib/util/bswap_record.h"
#include "lib/util/cursor.h"
#include "abi/sample_fields.h"

#include <string.h>

/* Per-field helpers are inlined so that their widths are constants. */
#define FIELD static inline __attribute__((always_inline))

FIELD void swap_at(uint8_t *p, unsigned int width)
{
	if (width == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = __builtin_bswap64(v);
		memcpy(p, &v, 8);
	} else if (width == 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		v = __builtin_bswap32(v);
		memcpy(p, &v, 4);
	} else {
		uint16_t v;

		memcpy(&v, p, 2);
		v = __builtin_bswap16(v);
		memcpy(p, &v, 2);
	}
}

/* The cursor walks a record the caller handed over as writable, so the
 * bytes just read may be written back. */
static uint8_t *behind(struct cs_cursor *c, uint64_t n)
{
	return (uint8_t *)(uintptr_t)(c->p - n);
}

FIELD uint64_t f(struct cs_cursor *c, unsigned int width, const char *what)
{
	uint64_t v = cs_cursor_get(c, width, what);

	if (!c->why)
		swap_at(behind(c, width), width);
	return v;
}

FIELD uint64_t f64(struct cs_cursor *c, const char *what)
{
	return f(c, 8, what);
}

FIELD void f32x2(struct cs_cursor *c, const char *a, const char *b)
{
	f(c, 4, a);
	f(c, 4, b);
}

static void f64n(struct cs_cursor *c, uint64_t n, const char *what)
{
	uint8_t *p = behind(c, 0);

	if (!cs_cursor_need_n(c, n, 8, what))
		return;
	for (uint64_t i = 0; i < n; i++)
		swap_at(p + i * 8, 8);
	c->p += n * 8;
}

static uint8_t revbits(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	return (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

void cs_bswap_attr(void *attr, size_t size)
{
	/* field widths in order; 0 is the bitfield word */
	static const uint8_t width[] = {
		4, 4, 8, 8, 8, 8, 0, 4, 4, 8, 8, 8, 8, 4, 4, 8,
		4, 2, 2, 4, 4, 8, 8, 8,
	};
	uint8_t *p = attr;
	size_t off = 0;

	for (size_t i = 0; i < sizeof(width); i++) {
		size_t w = width[i] ? width[i] : 8;

		if (off + w > size)
			break;
		if (width[i])
			swap_at(p + off, width[i]);
		else
			for (int k = 0; k < 8; k++)
				p[off + k] = revbits(p[off + k]);
		off += w;
	}
}

void cs_bswap_header(void *rec)
{
	uint8_t *b = rec;

	swap_at(b, 4);
	swap_at(b + 4, 2);
	swap_at(b + 6, 2);
}

/* A sample's head and the sample_id trailer are swapped from
 * abi/sample_fields.h's tables, the fields after the head from these:
 * present when any of bits is in sample_type, one u64, or a u32 pair when
 * what2 is set. */
struct flagged {
	uint64_t bits;
	const char *what, *what2;
};

static const struct flagged sample_weights[] = {
	{ CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT, "weight", NULL },
	{ CS_SAMPLE_DATA_SRC, "data_src", NULL },
	{ CS_SAMPLE_TRANSACTION, "transaction", NULL },
};

static const struct flagged sample_tail[] = {
	{ CS_SAMPLE_PHYS_ADDR, "phys_addr", NULL },
	{ CS_SAMPLE_CGROUP, "cgroup", NULL },
	{ CS_SAMPLE_DATA_PAGE_SIZE, "data_page_size", NULL },
	{ CS_SAMPLE_CODE_PAGE_SIZE, "code_page_size", NULL },
};

#define WALK(c, st, tab) walk(c, st, tab, sizeof(tab) / sizeof(tab[0]))

FIELD void walk(struct cs_cursor *c, uint64_t st, const struct flagged *tab,
		size_t n)
{
	/* unrolled, so each entry's bits and width are constants: a walk
	 * costs what the straight-line tests it replaced did */
#pragma GCC unroll 16
	for (size_t i = 0; i < n; i++) {
		if (!(st & tab[i].bits))
			continue;
		if (tab[i].what2)
			f32x2(c, tab[i].what, tab[i].what2);
		else
			f64(c, tab[i].what);
	}
}

/* The fields of a head or a trailer (sample_fields.h's table of n
 * entries) that st selects, each at its width: a u32 pair stays a pair.
 * Checked whole, not per field: CS_SAMPLE_HEAD_MAX bytes hold any head
 * or trailer, a shorter rest is measured and the field it ends in named
 * (the same word a field-by-field walk stops at). Unrolled, so that each
 * field is a swap of a known width. */
FIELD void walk_fields(struct cs_cursor *c, uint64_t st,
		       const struct cs_field *tab, size_t n)
{
	size_t left = (size_t)(c->end - c->p);
	uint8_t *p = behind(c, 0);

	if (c->why)
		return;
	if (left < CS_SAMPLE_HEAD_MAX) {
		c->why = cs_fields_cut(tab, n, st, left);
		if (c->why)
			return;
	}
#pragma GCC unroll 16
	for (size_t i = 0; i < n; i++) {
		if (!(st & tab[i].bit))
			continue;
		swap_at(p, tab[i].size);
		p += tab[i].size;
	}
	c->p = p;
}

static void read_values(struct cs_cursor *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & CS_FORMAT_ID) + !!(rf & CS_FORMAT_LOST);
	uint64_t times = !!(rf & CS_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & CS_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & CS_FORMAT_GROUP) {
		uint64_t nr = f64(c, "read group count");

		f64n(c, times, "read times");
		if (cs_cursor_need_n(c, nr, 8 * per,
				     "read group entries exceed the record"))
			f64n(c, nr * per, "read group entries");
	} else {
		f64n(c, per + times, "read values");
	}
}

static void regs(struct cs_cursor *c, uint64_t mask, const char *abi,
		 const char *what)
{
	if (f64(c, abi))
		f64n(c, (uint64_t)__builtin_popcountll(mask), what);
}

static void sample(const struct cs_perf_attr *a, struct cs_cursor *c)
{
	uint64_t st = a->sample_type;

	walk_fields(c, st, cs_sample_head, CS_SAMPLE_HEAD_NR);
	if (st & CS_SAMPLE_READ)
		read_values(c, a->read_format);
	if (st & CS_SAMPLE_CALLCHAIN)
		f64n(c, f64(c, "callchain nr"), "callchain nr exceeds the record");
	if (st & CS_SAMPLE_RAW)
		cs_cursor_skip(c, f(c, 4, "raw size"), "raw size exceeds the record");
	if (st & CS_SAMPLE_BRANCH_STACK) {
		uint64_t nr = f64(c, "branch nr");

		if (a->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			f64(c, "branch hw_idx");
		/* from, to, flags: flags swapped as a u64, as perf reads it */
		if (cs_cursor_need_n(c, nr, 24, "branch nr exceeds the record"))
			f64n(c, nr * 3, "branch entries");
		if (a->branch_sample_type & CS_BRANCH_SAMPLE_COUNTERS)
			f64n(c, nr, "branch counters exceed the record");
	}
	if (st & CS_SAMPLE_REGS_USER)
		regs(c, a->sample_regs_user, "user regs abi", "user regs");
	if (st & CS_SAMPLE_STACK_USER) {
		uint64_t n = f64(c, "user stack size");

		if (n) {
			cs_cursor_skip(c, n, "user stack size exceeds the record");
			f64(c, "user stack dyn_size");
		}
	}
	WALK(c, st, sample_weights);
	if (st & CS_SAMPLE_REGS_INTR)
		regs(c, a->sample_regs_intr, "intr regs abi", "intr regs");
	WALK(c, st, sample_tail);
	if (st & CS_SAMPLE_AUX)
		cs_cursor_skip(c, f64(c, "aux size"), "aux size exceeds the record");
}

static void kernel_body(const struct cs_bswap_how *how, uint32_t type,
			struct cs_cursor *c)
{
	switch (type) {
	case CS_RECORD_MMAP:
		f32x2(c, "pid", "tid");
		f64n(c, 3, "start, len, pgoff");
		break;
	case CS_RECORD_MMAP2:
		f32x2(c, "pid", "tid");
		f64n(c, 3, "start, len, pgoff");
		if (how->mmap2_build_id) {
			cs_cursor_skip(c, 24, "build id");
		} else {
			f32x2(c, "maj", "min");
			f64n(c, 2, "ino");
		}
		f32x2(c, "prot", "flags");
		break;
	case CS_RECORD_COMM:
	case CS_RECORD_ITRACE_START:
	case CS_RECORD_SWITCH_CPU_WIDE:
		f32x2(c, "pid", "tid");
		break;
	case CS_RECORD_EXIT:
	case CS_RECORD_FORK:
		f32x2(c, "pid", "ppid");
		f32x2(c, "tid", "ptid");
		f64(c, "time");
		break;
	case CS_RECORD_LOST:
		f64n(c, 2, "lost");
		break;
	case CS_RECORD_LOST_SAMPLES:
	case CS_RECORD_AUX_OUTPUT_HW_ID:
		f64(c, "value");
		break;
	case CS_RECORD_CGROUP:
		f64(c, "id");
		break;
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
	case CS_RECORD_AUX:
		f64n(c, 3, "body");
		break;
	case CS_RECORD_READ:
		f32x2(c, "pid", "tid");
		read_values(c, how->attr ? how->attr->read_format : 0);
		break;
	case CS_RECORD_NAMESPACES: {
		uint64_t nr;

		f32x2(c, "pid", "tid");
		nr = f64(c, "nr_namespaces");
		if (cs_cursor_need_n(c, nr, 16, "nr_namespaces exceeds the record"))
			f64n(c, nr * 2, "namespaces");
		break;
	}
	case CS_RECORD_KSYMBOL:
		f64(c, "addr");
		f(c, 4, "len");
		f(c, 2, "ksym_type");
		f(c, 2, "flags");
		break;
	case CS_RECORD_BPF_EVENT:
		f(c, 2, "type");
		f(c, 2, "flags");
		f(c, 4, "id");
		break;
	case CS_RECORD_TEXT_POKE:
		f64(c, "addr");
		f(c, 2, "old_len");
		f(c, 2, "new_len");
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED:
		f64(c, "cookie");
		f64n(c, f64(c, "nr"), "nr exceeds the record");
		break;
	default:
		break;
	}
}

static void user_body(uint32_t type, struct cs_cursor *c)
{
	switch (type) {
	case CS_RECORD_HEADER_ATTR: {
		struct cs_cursor size_at = *c;
		uint64_t asz;

		if (!cs_cursor_need(c, 8, "attr"))
			return;
		size_at.p += 4;
		asz = cs_cursor_get(&size_at, 4, "attr");
		if (!asz)
			asz = CS_PERF_ATTR_SIZE_VER0;
		if (!cs_cursor_need(c, asz, "attr size exceeds the record"))
			return;
		cs_bswap_attr(behind(c, 0), asz);
		c->p += asz;
		f64n(c, (uint64_t)(c->end - c->p) / 8, "ids");
		break;
	}
	case CS_RECORD_HEADER_BUILD_ID:
		f(c, 4, "pid");
		break;
	case CS_RECORD_HEADER_TRACING_DATA:
		f(c, 4, "size");
		break;
	case CS_RECORD_HEADER_FEATURE:
	case CS_RECORD_COMPRESSED2:
	case CS_RECORD_HEADER_EVENT_TYPE:
		f64(c, "first field");	/* feature id / data_size / event id */
		break;
	case CS_RECORD_EVENT_UPDATE: {
		uint64_t t = f64(c, "update type");

		f64(c, "id");
		if (t == 1)		/* SCALE: a double */
			f64(c, "scale");
		break;
	}
	case CS_RECORD_AUXTRACE:
		f64n(c, 3, "size, offset, reference");
		f32x2(c, "idx", "tid");
		f32x2(c, "cpu", "reserved");
		break;
	case CS_RECORD_ID_INDEX:
	case CS_RECORD_TIME_CONV:
	case CS_RECORD_STAT:
	case CS_RECORD_STAT_ROUND:
	case CS_RECORD_STAT_CONFIG:
		/* all u64: the whole body (TIME_CONV's trailing flag bytes
		 * are in the last u64 and read by nobody here) */
		f64n(c, (uint64_t)(c->end - c->p) / 8, "body");
		break;
	default:
		break;
	}
}

const char *cs_bswap_body(const struct cs_bswap_how *how, uint32_t type,
			  void *rec, size_t size)
{
	uint8_t *b = rec;
	struct cs_cursor c = {
		b + 8, b + size, how->dir == CS_BSWAP_TO_NATIVE, NULL,
	};

	if (size < 8)
		return "shorter than its header";
	if (type >= CS_RECORD_HEADER_ATTR) {
		user_body(type, &c);
		return c.why;
	}
	if (type == CS_RECORD_SAMPLE) {
		if (!how->attr)
			return "its id names no event of the file";
		sample(how->attr, &c);
		return c.why;
	}
	if (how->attr && how->trailer_size) {
		struct cs_cursor t = c;

		if (how->trailer_size > size - 8)
			return "too short for its sample_id trailer";
		c.end = t.p = b + size - how->trailer_size;
		/* sized from the same bits it walks: it always fits */
		walk_fields(&t, how->attr->sample_type, cs_trailer,
			    CS_TRAILER_NR);
	}
	kernel_body(how, type, &c);
	return c.why;
}
