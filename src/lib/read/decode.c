/* decode.c - one native-endian record into a struct cs_event.
 *
 * A cursor walks the record; every take checks what remains first, so a
 * hostile length can only produce -EBADMSG with a reason, never a read past
 * the record. Arrays are handed out as pointers into the record: records
 * are 8-byte aligned (the reader guarantees it) and so are u64 arrays.
 * The fixed-size fields (a sample's head, the sample_id trailer) are
 * checked whole and read by sample_fields.h's tables, the one place their order
 * is written.
 */
#include "lib/read/decode.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "abi/sample_fields.h"
#include "lib/read/bytes.h"
#include "lib/util/errbuf.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <inttypes.h>
#include <string.h>

struct cur {
	const uint8_t *p, *end;
	const char *why;		/* first failure */
};

static inline int need(struct cur *c, uint64_t n, const char *what)
{
	if (c->why)
		return 0;
	if (n > (uint64_t)(c->end - c->p)) {
		c->why = what;
		return 0;
	}
	return 1;
}

/* n bytes at the cursor, stepped over; NULL (and why) if fewer remain. */
static inline const void *take(struct cur *c, uint64_t n, const char *what)
{
	const void *p = c->p;

	if (!need(c, n, what))
		return NULL;
	c->p += n;
	return p;
}

/* The fields of one size: 0 when the record has run out (c->why says). */
static inline uint64_t u64(struct cur *c, const char *what)
{
	const uint8_t *p = take(c, 8, what);

	return p ? cs_ld64(p) : 0;
}

static inline uint32_t u32(struct cur *c, const char *what)
{
	const uint8_t *p = take(c, 4, what);

	return p ? cs_ld32(p) : 0;
}

static inline uint16_t u16(struct cur *c, const char *what)
{
	const uint8_t *p = take(c, 2, what);

	return p ? cs_ld16(p) : 0;
}

/* nr u64s as an array in place; nr is from the file, so divide (nr * 8
 * is only made once it is known to fit). */
static const uint64_t *u64s(struct cur *c, uint64_t nr, const char *what)
{
	if (!c->why && nr > (uint64_t)(c->end - c->p) / 8) {
		c->why = what;
		return NULL;
	}
	return take(c, nr * 8, what);
}

/* A NUL-terminated string filling the rest of the body, padded to 8
 * bytes: more padding than that means the record's size is not its own
 * (it swallowed what follows it). */
static const char *str(struct cur *c, const char *what)
{
	const char *s = (const char *)c->p;
	const char *nul;

	if (c->why)
		return NULL;
	nul = memchr(c->p, '\0', (size_t)(c->end - c->p));
	if (!nul) {
		c->why = what;
		return NULL;
	}
	if ((const uint8_t *)nul + 1 + 8 <= c->end) {
		c->why = "padded by more than 8 bytes: its size is not its own";
		return NULL;
	}
	c->p = c->end;
	return s;
}

static uint64_t read_values(uint64_t rf, struct cur *c)
{
	const uint8_t *start = c->p;
	uint64_t per = 1 + !!(rf & CS_FORMAT_ID) + !!(rf & CS_FORMAT_LOST);
	uint64_t times = !!(rf & CS_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & CS_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & CS_FORMAT_GROUP) {
		uint64_t nr = u64(c, "read group count");

		u64s(c, times, "read times");
		if (nr > (uint64_t)(c->end - c->p) / 8 / per) {
			if (!c->why)
				c->why = "read group entries exceed the record";
			return 0;
		}
		u64s(c, nr * per, "read group entries");
	} else {
		u64s(c, per + times, "read values");
	}
	return (uint64_t)(c->p - start) / 8;
}

#define FIXED_BITS	CS_SAMPLE_HEAD_BITS
#define FIXED_MAX	CS_SAMPLE_HEAD_MAX

/* v into the field of *s at sample_at (-1: none) and the one of *id that
 * idf names (CS_ID_NONE: none). */
static inline __attribute__((always_inline)) void
put_field(struct cs_sample *s, int sample_at, struct cs_sample_id *id,
	  unsigned int idf, unsigned int size, const uint8_t *p)
{
	if (size == 8) {
		uint64_t v = cs_ld64(p);

		if (sample_at >= 0)
			*(uint64_t *)(void *)((char *)s + sample_at) = v;
		if (idf != CS_ID_NONE)
			*(uint64_t *)(void *)((char *)id + cs_id_at[idf]) = v;
	} else {
		uint32_t v = cs_ld32(p);

		if (sample_at >= 0)
			*(uint32_t *)(void *)((char *)s + sample_at) = v;
		if (idf != CS_ID_NONE)
			*(uint32_t *)(void *)((char *)id + cs_id_at[idf]) = v;
	}
}

/* The fixed fields (sample_fields.h's cs_sample_head) when the body is known to
 * hold all that st selects: no check per field. Unrolled, so that for an
 * st known at compile time each field is a plain load and store. */
static inline __attribute__((always_inline)) void
fixed_fields(uint64_t st, struct cur *c, struct cs_sample *s,
	     struct cs_sample_id *id)
{
	const uint8_t *p = c->p;

#pragma GCC unroll 16
	for (size_t i = 0; i < CS_SAMPLE_HEAD_NR; i++) {
		const struct cs_field *f = &cs_sample_head[i];

		if (!(st & f->bit))
			continue;
		put_field(s, f->sample_at, id, f->id, f->size, p);
		p += f->size;
	}
	c->p = p;
}

/* The fixed fields of the layouts `perf record -g` writes: IP, TID, TIME,
 * PERIOD, with IDENTIFIER when it records more than one event and CPU
 * when it records per CPU. */
#define USUAL_BITS (CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | \
		    CS_SAMPLE_PERIOD)

/* fixed_fields() with st one of those layouts' spelled out, so that each
 * is straight-line code (no test per field), any other st as it is. */
static inline __attribute__((always_inline)) void
usual_fixed_fields(uint64_t st, struct cur *c, struct cs_sample *s,
		   struct cs_sample_id *id)
{
	switch (st & FIXED_BITS) {
	case USUAL_BITS:
		fixed_fields(USUAL_BITS, c, s, id);
		break;
	case USUAL_BITS | CS_SAMPLE_CPU:
		fixed_fields(USUAL_BITS | CS_SAMPLE_CPU, c, s, id);
		break;
	case USUAL_BITS | CS_SAMPLE_IDENTIFIER:
		fixed_fields(USUAL_BITS | CS_SAMPLE_IDENTIFIER, c, s, id);
		break;
	case USUAL_BITS | CS_SAMPLE_IDENTIFIER | CS_SAMPLE_CPU:
		fixed_fields(USUAL_BITS | CS_SAMPLE_IDENTIFIER | CS_SAMPLE_CPU,
			     c, s, id);
		break;
	default:
		fixed_fields(st, c, s, id);
		break;
	}
}

/* Fills *s and, with the fields a sample shares with a sample_id trailer,
 * *id: written together, so that nobody reads a field back while its
 * store is still on its way (a wide copy from the sample afterwards
 * stalled on store forwarding). */
static int sample_body(const struct cs_perf_attr *attr, struct cur *c,
		       struct cs_sample *s, struct cs_sample_id *id)
{
	uint64_t st = attr->sample_type;

	/* a body of FIXED_MAX bytes holds the fixed fields whichever are
	 * there; a shorter one is measured, and the field it ends in named */
	if ((size_t)(c->end - c->p) < FIXED_MAX) {
		c->why = cs_fields_cut(cs_sample_head, CS_SAMPLE_HEAD_NR, st,
				       (size_t)(c->end - c->p));
		if (c->why)
			return -EBADMSG;
	}
	fixed_fields(st, c, s, id);
	if (st & CS_SAMPLE_READ) {
		const uint8_t *at = c->p;

		s->read_size = read_values(attr->read_format, c);
		s->read = (const uint64_t *)(const void *)at;
	}
	if (st & CS_SAMPLE_CALLCHAIN) {
		s->callchain_nr = u64(c, "callchain nr");
		s->callchain = u64s(c, s->callchain_nr,
				    "callchain nr exceeds the record");
	}
	if (!(st & ~(FIXED_BITS | CS_SAMPLE_READ | CS_SAMPLE_CALLCHAIN)))
		return c->why ? -EBADMSG : 0;
	if (st & CS_SAMPLE_RAW) {
		s->raw_size = u32(c, "raw size");
		s->raw = take(c, s->raw_size, "raw size exceeds the record");
		/* the kernel pads size so that what follows stays aligned */
		if (!c->why && ((uintptr_t)c->p & 7))
			c->why = "raw size leaves the record misaligned";
	}
	if (st & CS_SAMPLE_BRANCH_STACK) {
		s->branch_nr = u64(c, "branch nr");
		if (attr->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			s->branch_hw_idx = u64(c, "branch hw_idx");
		if (!c->why && s->branch_nr > (uint64_t)(c->end - c->p) / 24)
			c->why = "branch nr exceeds the record";
		s->branches = take(c, s->branch_nr * 24, "branch entries");
		if (attr->branch_sample_type & CS_BRANCH_SAMPLE_COUNTERS)
			s->branch_counters = u64s(c, s->branch_nr,
						  "branch counters exceed the record");
	}
	if (st & CS_SAMPLE_REGS_USER) {
		s->user_regs_abi = u64(c, "user regs abi");
		if (s->user_regs_abi)
			s->user_regs = u64s(c, (uint64_t)__builtin_popcountll(
					    attr->sample_regs_user), "user regs");
	}
	if (st & CS_SAMPLE_STACK_USER) {
		s->stack_user_size = u64(c, "user stack size");
		if (s->stack_user_size) {
			s->stack_user = take(c, s->stack_user_size,
					      "user stack size exceeds the record");
			if (!c->why && (s->stack_user_size & 7))
				c->why = "user stack size not a multiple of 8";
			s->stack_user_dyn_size = u64(c, "user stack dyn_size");
		}
	}
	if (st & (CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT))
		s->weight = u64(c, "weight");
	if (st & CS_SAMPLE_DATA_SRC)
		s->data_src = u64(c, "data_src");
	if (st & CS_SAMPLE_TRANSACTION)
		s->transaction = u64(c, "transaction");
	if (st & CS_SAMPLE_REGS_INTR) {
		s->intr_regs_abi = u64(c, "intr regs abi");
		if (s->intr_regs_abi)
			s->intr_regs = u64s(c, (uint64_t)__builtin_popcountll(
					    attr->sample_regs_intr), "intr regs");
	}
	if (st & CS_SAMPLE_PHYS_ADDR)
		s->phys_addr = u64(c, "phys_addr");
	if (st & CS_SAMPLE_CGROUP)
		s->cgroup = u64(c, "cgroup");
	if (st & CS_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = u64(c, "data_page_size");
	if (st & CS_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = u64(c, "code_page_size");
	if (st & CS_SAMPLE_AUX) {
		s->aux_size = u64(c, "aux size");
		s->aux = take(c, s->aux_size, "aux size exceeds the record");
	}
	return c->why ? -EBADMSG : 0;
}

/*
 * Zeroes an event or a sample with 16-byte stores, unrolled for a size
 * known at compile time (n a multiple of 8): no call, no branch. gcc
 * makes `rep stos` of a plain memset of ~300 bytes, whose start-up cost
 * was half of cs_decode's time, and libc's memset was ~10% of stitch_only.
 */
typedef uint64_t zero_vec __attribute__((vector_size(16), aligned(8), may_alias));

static inline void zero(void *p, size_t n)
{
	const zero_vec z = { 0, 0 };
	size_t i;

#pragma GCC unroll 32
	for (i = 0; i + 16 <= n; i += 16)
		*(zero_vec *)(void *)((char *)p + i) = z;
	if (i < n)
		*(uint64_t *)(void *)((char *)p + i) = 0;
}

/* out must be zeroed. */
static int decode_sample(const struct cs_perf_attr *attr, const void *rec,
			 size_t size, struct cs_sample *out,
			 struct cs_sample_id *id, const char **why)
{
	struct cur c = { (const uint8_t *)rec + 8, (const uint8_t *)rec + size, NULL };
	int err;

	if (size < 8) {
		*why = "record shorter than its header";
		return -EBADMSG;
	}
	out->misc = cs_ld16((const uint8_t *)rec + 4);
	err = sample_body(attr, &c, out, id);
	/* the kernel writes exactly the fields: bytes left over mean a
	 * damaged size (when every sample_type bit is one we know) */
	if (!err && c.p != c.end && attr->sample_type < CS_SAMPLE_MAX) {
		c.why = "longer than its fields: its size is not its own";
		err = -EBADMSG;
	}
	*why = c.why;
	return err;
}

int cs_decode_sample(const struct cs_perf_attr *attr, const void *rec,
		     size_t size, struct cs_sample *out)
{
	struct cs_sample_id id;
	const char *why;

	zero(out, sizeof(*out));
	return decode_sample(attr, rec, size, out, &id, &why);
}

/* The sample_id trailer (sample_fields.h's cs_trailer) of sample_type st at p,
 * known to hold the trailer_size bytes st gives: no check per field. */
static inline __attribute__((always_inline)) void
trailer_fields(uint64_t st, const uint8_t *p, struct cs_sample_id *id)
{
#pragma GCC unroll 16
	for (size_t i = 0; i < CS_TRAILER_NR; i++) {
		const struct cs_field *f = &cs_trailer[i];

		if (!(st & f->bit))
			continue;
		put_field(NULL, -1, id, f->id, f->size, p);
		p += f->size;
	}
}

static const char *const type_names[] = {
	[CS_RECORD_MMAP] = "MMAP",
	[CS_RECORD_LOST] = "LOST",
	[CS_RECORD_COMM] = "COMM",
	[CS_RECORD_EXIT] = "EXIT",
	[CS_RECORD_THROTTLE] = "THROTTLE",
	[CS_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[CS_RECORD_FORK] = "FORK",
	[CS_RECORD_READ] = "READ",
	[CS_RECORD_SAMPLE] = "SAMPLE",
	[CS_RECORD_MMAP2] = "MMAP2",
	[CS_RECORD_AUX] = "AUX",
	[CS_RECORD_ITRACE_START] = "ITRACE_START",
	[CS_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[CS_RECORD_SWITCH] = "SWITCH",
	[CS_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[CS_RECORD_NAMESPACES] = "NAMESPACES",
	[CS_RECORD_KSYMBOL] = "KSYMBOL",
	[CS_RECORD_BPF_EVENT] = "BPF_EVENT",
	[CS_RECORD_CGROUP] = "CGROUP",
	[CS_RECORD_TEXT_POKE] = "TEXT_POKE",
	[CS_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[CS_RECORD_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[CS_RECORD_HEADER_ATTR] = "ATTR",
	[CS_RECORD_HEADER_EVENT_TYPE] = "EVENT_TYPE",
	[CS_RECORD_HEADER_TRACING_DATA] = "TRACING_DATA",
	[CS_RECORD_HEADER_BUILD_ID] = "BUILD_ID",
	[CS_RECORD_FINISHED_ROUND] = "FINISHED_ROUND",
	[CS_RECORD_ID_INDEX] = "ID_INDEX",
	[CS_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[CS_RECORD_AUXTRACE] = "AUXTRACE",
	[CS_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[CS_RECORD_THREAD_MAP] = "THREAD_MAP",
	[CS_RECORD_CPU_MAP] = "CPU_MAP",
	[CS_RECORD_STAT_CONFIG] = "STAT_CONFIG",
	[CS_RECORD_STAT] = "STAT",
	[CS_RECORD_STAT_ROUND] = "STAT_ROUND",
	[CS_RECORD_EVENT_UPDATE] = "EVENT_UPDATE",
	[CS_RECORD_TIME_CONV] = "TIME_CONV",
	[CS_RECORD_HEADER_FEATURE] = "FEATURE",
	[CS_RECORD_COMPRESSED] = "COMPRESSED",
	[CS_RECORD_FINISHED_INIT] = "FINISHED_INIT",
	[CS_RECORD_COMPRESSED2] = "COMPRESSED2",
	[CS_RECORD_BPF_METADATA] = "BPF_METADATA",
	[CS_RECORD_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
	[CS_RECORD_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
};

const char *cs_record_type_name(uint32_t type)
{
	if (type < sizeof(type_names) / sizeof(type_names[0]))
		return type_names[type];
	return NULL;
}

/* The body of a kernel record other than SAMPLE, between header and trailer. */
static void kernel_body(uint32_t type, uint16_t misc, struct cur *c,
			struct cs_event *ev, const struct cs_evsel_layout *lay)
{
	switch (type) {
	case CS_RECORD_MMAP:
		ev->mmap.pid = u32(c, "pid");
		ev->mmap.tid = u32(c, "tid");
		ev->mmap.start = u64(c, "start");
		ev->mmap.len = u64(c, "len");
		ev->mmap.pgoff = u64(c, "pgoff");
		ev->mmap.filename = str(c, "filename not terminated");
		break;
	case CS_RECORD_MMAP2:
		ev->mmap.pid = u32(c, "pid");
		ev->mmap.tid = u32(c, "tid");
		ev->mmap.start = u64(c, "start");
		ev->mmap.len = u64(c, "len");
		ev->mmap.pgoff = u64(c, "pgoff");
		if (mmap2_has_build_id(misc, lay, c->p, c->end)) {
			/* u8 size, 3 bytes of padding, 20 bytes of id */
			need(c, 24, "build id");
			if (!c->why) {
				ev->mmap.has_build_id = true;
				ev->mmap.build_id_size = c->p[0];
				memcpy(ev->mmap.build_id, c->p + 4, 20);
				c->p += 24;
			}
		} else {
			ev->mmap.maj = u32(c, "maj");
			ev->mmap.min = u32(c, "min");
			ev->mmap.ino = u64(c, "ino");
			ev->mmap.ino_generation = u64(c, "ino_generation");
		}
		ev->mmap.prot = u32(c, "prot");
		ev->mmap.flags = u32(c, "flags");
		ev->mmap.filename = str(c, "filename not terminated");
		break;
	case CS_RECORD_LOST:
		ev->lost.id = u64(c, "id");
		ev->lost.lost = u64(c, "lost");
		break;
	case CS_RECORD_LOST_SAMPLES:
		ev->lost.id = 0;
		ev->lost.lost = u64(c, "lost");
		break;
	case CS_RECORD_COMM:
		ev->comm.pid = u32(c, "pid");
		ev->comm.tid = u32(c, "tid");
		ev->comm.comm = str(c, "comm not terminated");
		break;
	case CS_RECORD_EXIT:
	case CS_RECORD_FORK:
		ev->fork.pid = u32(c, "pid");
		ev->fork.ppid = u32(c, "ppid");
		ev->fork.tid = u32(c, "tid");
		ev->fork.ptid = u32(c, "ptid");
		ev->fork.time = u64(c, "time");
		break;
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
		u64s(c, 3, "time, id, stream_id");
		break;
	case CS_RECORD_READ:
		u32(c, "pid");
		u32(c, "tid");
		read_values(lay ? lay->read_format : 0, c);
		break;
	case CS_RECORD_AUX:
		u64s(c, 3, "aux offset, size, flags");
		break;
	case CS_RECORD_ITRACE_START:
	case CS_RECORD_SWITCH_CPU_WIDE:
		u32(c, "pid");
		u32(c, "tid");
		break;
	case CS_RECORD_NAMESPACES: {
		uint64_t nr;

		u32(c, "pid");
		u32(c, "tid");
		nr = u64(c, "nr_namespaces");
		if (!c->why && nr > (uint64_t)(c->end - c->p) / 16)
			c->why = "nr_namespaces exceeds the record";
		u64s(c, nr * 2, "namespaces");
		break;
	}
	case CS_RECORD_KSYMBOL:
		ev->ksymbol.addr = u64(c, "addr");
		ev->ksymbol.len = u32(c, "len");
		ev->ksymbol.ksym_type = u16(c, "ksym_type");
		ev->ksymbol.flags = u16(c, "flags");
		ev->ksymbol.name = str(c, "name not terminated");
		break;
	case CS_RECORD_BPF_EVENT:
		take(c, 16, "bpf event");
		break;
	case CS_RECORD_CGROUP:
		u64(c, "cgroup id");
		str(c, "cgroup path not terminated");
		break;
	case CS_RECORD_TEXT_POKE: {
		uint16_t o, n;

		u64(c, "addr");
		o = u16(c, "old_len");
		n = u16(c, "new_len");
		take(c, (uint64_t)o + n, "text poke bytes exceed the record");
		break;
	}
	case CS_RECORD_AUX_OUTPUT_HW_ID:
		u64(c, "hw_id");
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED:
		ev->deferred.cookie = u64(c, "cookie");
		ev->deferred.nr = u64(c, "nr");
		ev->deferred.ips = u64s(c, ev->deferred.nr, "nr exceeds the record");
		break;
	default:
		break;			/* SWITCH has no body; unknown: counted */
	}
}

/* Kernel records whose body kernel_body() reads to its last byte (READ
 * is not: its layout depends on the event, which may be unknown). */
static bool exact_body(uint32_t type)
{
	switch (type) {
	case CS_RECORD_LOST:
	case CS_RECORD_LOST_SAMPLES:
	case CS_RECORD_EXIT:
	case CS_RECORD_FORK:
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
	case CS_RECORD_AUX:
	case CS_RECORD_ITRACE_START:
	case CS_RECORD_SWITCH:
	case CS_RECORD_SWITCH_CPU_WIDE:
	case CS_RECORD_NAMESPACES:
	case CS_RECORD_AUX_OUTPUT_HW_ID:
	case CS_RECORD_CALLCHAIN_DEFERRED:
		return true;
	}
	return false;
}

/* cs_decode() of any record, the long way. */
static __attribute__((noinline)) int
decode_record(const struct cs_evlist *l, const void *rec, size_t size,
	      uint64_t offset, const char *path, struct cs_event *ev,
	      struct cs_errbuf *eb)
{
	const uint8_t *b = rec;
	const struct cs_evsel_layout *lay = NULL;
	const char *why = NULL;
	const char *tn;
	uint32_t type;
	uint16_t misc;
	int err = 0;

	zero(ev, sizeof(*ev));
	if (size < 8 || cs_ld16(b + 6) != size) {
		why = "size disagrees with the header";
		type = size >= 4 ? cs_ld32(b) : 0;
		goto bad;
	}
	type = cs_ld32(b);
	misc = cs_ld16(b + 4);
	ev->type = type;
	ev->misc = misc;
	ev->size = (uint16_t)size;
	ev->offset = offset;
	ev->bytes = rec;

	if (type == CS_RECORD_SAMPLE) {
		ev->evsel = cs_evlist_sample_event_inline(l, rec, size);
		if (!ev->evsel) {
			why = "its id names no event of the file";
			goto bad;
		}
		err = decode_sample(cs_evsel_attr(ev->evsel), rec, size,
				    &ev->sample, &ev->id, &why);
		if (err)
			goto bad;
		ev->has_id = true;
		return 0;
	}

	ev->evsel = cs_evlist_event_of(l, rec, size);
	if (ev->evsel)
		lay = cs_evsel_layout(ev->evsel);

	if (type < CS_RECORD_HEADER_ATTR) {
		struct cur c = { b + 8, b + size, NULL };
		/* every event of a file has a trailer of the same size: one
		 * whose id names no event (perf's own records carry id 0)
		 * still has it */
		const struct cs_evsel *first = cs_evlist_get(l, 0);
		size_t tsize = lay ? lay->trailer_size : first ?
			cs_evsel_layout(first)->trailer_size : 0;

		if (tsize > size - 8) {
			why = "too short for its sample_id trailer";
			goto bad;
		}
		/* the trailer is tsize bytes, all there: its fields are read
		 * without a check each, as on the quick path */
		c.end = b + size - tsize;
		if (lay && tsize) {
			trailer_fields(lay->sample_type, c.end, &ev->id);
			ev->has_id = true;
		} else if (tsize) {
			/* the kernel writes only ids of the file's events; perf's
			 * own records say 0. Another id is a damaged record, or
			 * a damaged ids section that lost the event */
			struct cs_sample_id id = { 0 };

			trailer_fields(cs_evsel_layout(first)->sample_type, c.end, &id);
			if (id.id) {
				why = "its sample id names no event of the file";
				goto bad;
			}
		}
		kernel_body(type, misc, &c, ev, lay);
		/* a body we walk to its end must end where the record does */
		if (!c.why && c.p != c.end && (lay || first) && exact_body(type))
			c.why = "longer than its fields: its size is not its own";
		if (c.why) {
			why = c.why;
			goto bad;
		}
	}
	return 0;

bad:
	tn = cs_record_type_name(type);
	if (tn)
		return cs_error(eb, -EBADMSG, "%s: %s record at offset %#" PRIx64
				": %s", path, tn, offset, why);
	return cs_error(eb, -EBADMSG, "%s: record of type %u at offset %#" PRIx64
			": %s", path, type, offset, why);
}

/* Out of line, so that the one-layout case is a branch, not a conditional
 * move, which would make it wait for the event's lookup after all. */
static __attribute__((noinline)) const struct cs_evsel_layout *
layout_of_event(const struct cs_evsel *evsel)
{
	return cs_evsel_layout(evsel);
}

/* A usual sample of layout lay and nr callchain entries, found sound,
 * into *ev. again: *ev holds zeroes or an earlier decode of the caller's
 * (cs_decode_again()). */
static inline __attribute__((always_inline)) void
fill_usual(const struct cs_evsel_layout *lay, const struct cs_evsel *evsel,
	   const void *rec, size_t size, uint64_t offset, uint64_t nr,
	   struct cs_event *ev, bool again)
{
	const uint8_t *b = rec;
	struct cur c = { b + 8, b + size, NULL };

	/* a sample of one layout sets the same fields whichever way it was
	 * decoded: after one, the others are still zero */
	if (!again || ev->type != CS_RECORD_SAMPLE || !ev->evsel ||
	    cs_evsel_layout(ev->evsel)->sample_type != lay->sample_type)
		zero(ev, sizeof(*ev));
	usual_fixed_fields(lay->sample_type, &c, &ev->sample, &ev->id);
	ev->sample.misc = cs_ld16(b + 4);
	ev->sample.callchain_nr = nr;
	ev->sample.callchain = (const uint64_t *)(const void *)
			       (b + 16 + lay->sample_fixed_size);
	ev->type = CS_RECORD_SAMPLE;
	ev->misc = ev->sample.misc;
	ev->size = (uint16_t)size;
	ev->offset = offset;
	ev->bytes = rec;
	ev->evsel = evsel;
	ev->has_id = true;
}

/*
 * The usual CALLCHAIN_DEFERRED record (size >= 8): cookie, nr, then nr
 * ips that fill it up to its event's sample_id trailer, straight through
 * (in real recordings nearly every other record is one). Returns 0 with
 * *ev decoded as decode_record() decodes it, or -1, having decided
 * nothing, for any other record, which decode_record() walks (and
 * explains if it is damaged).
 */
static inline int quick_deferred(const struct cs_evlist *l, const void *rec,
				 size_t size, uint64_t offset,
				 struct cs_event *ev)
{
	const uint8_t *b = rec;
	const struct cs_evsel_layout *lay;
	const struct cs_evsel *evsel;
	size_t tsize, body;
	uint64_t nr;

	if (cs_ld32(b) != CS_RECORD_CALLCHAIN_DEFERRED || size < 24 ||
	    cs_ld16(b + 6) != size ||
	    !(evsel = cs_evlist_trailer_event_inline(l, rec, size)))
		return -1;
	lay = cs_evsel_layout(evsel);
	tsize = lay->trailer_size;
	if (!tsize || tsize > size - 24)
		return -1;
	body = size - 24 - tsize;		/* the ips' bytes */
	nr = cs_ld64(b + 16);
	if ((body & 7) || nr != body / 8)
		return -1;
	zero(ev, sizeof(*ev));
	ev->type = CS_RECORD_CALLCHAIN_DEFERRED;
	ev->misc = cs_ld16(b + 4);
	ev->size = (uint16_t)size;
	ev->offset = offset;
	ev->bytes = rec;
	ev->evsel = evsel;
	ev->deferred.cookie = cs_ld64(b + 8);
	ev->deferred.nr = nr;
	ev->deferred.ips = (const uint64_t *)(const void *)(b + 24);
	trailer_fields(lay->sample_type, b + size - tsize, &ev->id);
	ev->has_id = true;
	return 0;
}

/*
 * The usual sample (perf record -g): the fixed fields, then a callchain
 * that fills the record, straight through. With k, one whose callchain
 * ends in a deferred user part is not decoded: *k says what it waits for
 * (1). Returns 0 with *ev decoded, or -1, having decided nothing, for any
 * other record, which decode_record() walks (and explains if it is
 * damaged). Inline in both callers: every sample comes here.
 */
static inline __attribute__((always_inline)) int quick_sample(const struct cs_evlist *l, const void *rec,
			       size_t size, uint64_t offset,
			       struct cs_event *ev, struct cs_wait_key *k,
			       bool again)
{
	const uint8_t *b = rec, *chain;
	const struct cs_evsel_layout *lay;
	const struct cs_evsel *evsel;
	size_t left;
	uint64_t nr;

	if (size < 8 + FIXED_MAX || cs_ld32(b) != CS_RECORD_SAMPLE ||
	    cs_ld16(b + 6) != size ||
	    !(evsel = cs_evlist_sample_event_inline(l, rec, size)))
		return -1;
	/* when every event has the one layout, the rest need not wait for
	 * the event's lookup (which reads the record) */
	lay = l->same;
	if (!lay)
		lay = layout_of_event(evsel);
	if ((lay->sample_type & ~FIXED_BITS) != CS_SAMPLE_CALLCHAIN)
		return -1;
	chain = b + 8 + lay->sample_fixed_size;	/* nr, then the ips */
	left = size - 8 - lay->sample_fixed_size;
	if (left < 8 || (left & 7))
		return -1;
	nr = cs_ld64(chain);
	if (nr != (left - 8) / 8)
		return -1;
	if (k && nr >= 2 && cs_ld64(b + size - 16) == CS_CONTEXT_USER_DEFERRED) {
		k->cookie = cs_ld64(b + size - 8);
		k->evsel = (uint16_t)(evsel->index < CS_WAIT_NO_EVSEL ?
				      evsel->index : CS_WAIT_NO_EVSEL);
		k->tid = lay->sample_tid_pos < 0 ? 0 :
			 cs_ld32(b + 8 + 8 * lay->sample_tid_pos + 4);
		k->time = lay->sample_time_pos < 0 ? 0 :
			  cs_ld64(b + 8 + 8 * lay->sample_time_pos);
		return 1;
	}
	fill_usual(lay, evsel, rec, size, offset, nr, ev, again);
	return 0;
}

int cs_decode(const struct cs_evlist *l, const void *rec, size_t size,
	      uint64_t offset, const char *path, struct cs_event *ev,
	      struct cs_errbuf *eb)
{
	/* most records are the usual sample; anything else, and any doubt,
	 * the long way */
	if (!quick_sample(l, rec, size, offset, ev, NULL, false))
		return 0;
	if (size >= 8 && !quick_deferred(l, rec, size, offset, ev))
		return 0;
	return decode_record(l, rec, size, offset, path, ev, eb);
}

int cs_decode_again(const struct cs_evlist *l, const void *rec, size_t size,
		    uint64_t offset, const char *path, struct cs_event *ev,
		    struct cs_errbuf *eb)
{
	if (!quick_sample(l, rec, size, offset, ev, NULL, true))
		return 0;
	return decode_record(l, rec, size, offset, path, ev, eb);
}

int cs_decode_or_wait(const struct cs_evlist *l, const void *rec, size_t size,
		      uint64_t offset, const char *path, struct cs_event *ev,
		      struct cs_wait_key *k, struct cs_errbuf *eb)
{
	int ret = quick_sample(l, rec, size, offset, ev, k, false);

	if (ret >= 0)
		return ret;
	if (size >= 8 && !quick_deferred(l, rec, size, offset, ev))
		return 0;
	return decode_record(l, rec, size, offset, path, ev, eb);
}

/* A sample cs_decode_or_wait() returned 1 for, its checks known to hold,
 * into *ev (again: as cs_decode_again() takes it). */
static inline __attribute__((always_inline)) void
decode_checked(const struct cs_evlist *l, const struct cs_evsel *evsel,
	       const void *rec, size_t size, uint64_t offset,
	       struct cs_event *ev, bool again)
{
	const struct cs_evsel_layout *lay = l->same;

	if (!lay)
		lay = layout_of_event(evsel);
	/* the callchain fills the record: cs_decode_or_wait() checked that
	 * its count says so */
	fill_usual(lay, evsel, rec, size, offset,
		   (size - 16 - lay->sample_fixed_size) / 8, ev, again);
}

int cs_decode_filed(const struct cs_evlist *l, const void *rec, size_t size,
		    uint64_t offset, unsigned int evsel, struct cs_event *ev)
{
	/* by the key's index: the record's id line and the id's table are
	 * not read again (a sample goes out long after it was filed) */
	const struct cs_evsel *e = evsel < CS_WAIT_NO_EVSEL ?
				   &l->ev[evsel]->pub :
				   cs_evlist_sample_event_inline(l, rec, size);

	decode_checked(l, e, rec, size, offset, ev, true);
	return 0;
}

int cs_decode_waiting(const struct cs_evlist *l, const void *rec, size_t size,
		      uint64_t offset, struct cs_event *ev)
{
	decode_checked(l, cs_evlist_sample_event_inline(l, rec, size), rec,
		       size, offset, ev, false);
	return 0;
}
