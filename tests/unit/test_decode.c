/* test_decode.c - record decoding: every sample bit lands in its field, the
 * sample_id trailer is found from the end, and every length that does not
 * fit the record gives -EBADMSG with the file, type and offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "spec_example.h"

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/read/decode.h"
#include "lib/read/evlist.h"
#include "abi/sample_fields.h"
#include "lib/util/errbuf.h"

#define ALL_SAMPLE_BITS (CS_SAMPLE_MAX - 1)

/* A record under construction, as u64 words (u32 pairs packed by hand). */
struct rb {
	uint64_t w[512];
	size_t n;
};

static void rb_start(struct rb *b, uint32_t type, uint16_t misc)
{
	b->n = 1;
	b->w[0] = type | (uint64_t)misc << 32;
}

static void put(struct rb *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static void pair(struct rb *b, uint32_t lo, uint32_t hi)
{
	put(b, lo | (uint64_t)hi << 32);
}

static size_t rb_end(struct rb *b)
{
	size_t size = b->n * 8;

	b->w[0] = (b->w[0] & 0x0000ffffffffffffULL) | (uint64_t)size << 48;
	return size;
}

/* Sets header.size to size (for truncation tests) */
static void rb_resize(struct rb *b, size_t size)
{
	b->w[0] = (b->w[0] & 0x0000ffffffffffffULL) | (uint64_t)size << 48;
}

static struct cs_perf_attr attr_all(uint64_t weight_bit)
{
	struct cs_perf_attr a;

	memset(&a, 0, sizeof(a));
	a.type = CS_PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.sample_type = (ALL_SAMPLE_BITS & ~(CS_SAMPLE_WEIGHT |
			CS_SAMPLE_WEIGHT_STRUCT)) | weight_bit;
	a.read_format = CS_FORMAT_GROUP | CS_FORMAT_ID | CS_FORMAT_LOST |
			CS_FORMAT_TOTAL_TIME_ENABLED | CS_FORMAT_TOTAL_TIME_RUNNING;
	a.branch_sample_type = CS_BRANCH_SAMPLE_HW_INDEX | CS_BRANCH_SAMPLE_COUNTERS;
	a.sample_regs_user = 0x7;	/* three registers */
	a.sample_regs_intr = 0x30;	/* two registers */
	a.flags = CS_ATTR_SAMPLE_ID_ALL;
	return a;
}

/* Every field of a sample with every bit set, in the ABI's order. */
static size_t build_full_sample(struct rb *b)
{
	rb_start(b, CS_RECORD_SAMPLE, CS_MISC_USER);
	put(b, 77);				/* IDENTIFIER */
	put(b, 0x401000);			/* IP */
	pair(b, 100, 101);			/* TID: pid, tid */
	put(b, 123456789);			/* TIME */
	put(b, 0xdead0000);			/* ADDR */
	put(b, 77);				/* ID */
	put(b, 88);				/* STREAM_ID */
	pair(b, 3, 0);				/* CPU, res */
	put(b, 250000);				/* PERIOD */
	put(b, 2);				/* READ: nr */
	put(b, 1000); put(b, 900);		/* enabled, running */
	put(b, 11); put(b, 77); put(b, 0);	/* value, id, lost */
	put(b, 12); put(b, 78); put(b, 1);
	put(b, 4);				/* CALLCHAIN: nr */
	put(b, CS_CONTEXT_KERNEL); put(b, 0xffffffff81000010ULL);
	put(b, CS_CONTEXT_USER_DEFERRED); put(b, 0xb00000006ULL);
	put(b, 12 | (uint64_t)0x44434241 << 32);	/* RAW: size 12, "ABCD" */
	put(b, 0x4c4b4a4948474645ULL);		/* "EFGHIJKL" */
	put(b, 2);				/* BRANCH_STACK: nr */
	put(b, 5);				/* hw_idx */
	put(b, 0x10); put(b, 0x20); put(b, 0x1);
	put(b, 0x30); put(b, 0x40); put(b, 0x2);
	put(b, 0xc1); put(b, 0xc2);		/* counters */
	put(b, 2);				/* REGS_USER: abi */
	put(b, 0xa); put(b, 0xb); put(b, 0xc);
	put(b, 16);				/* STACK_USER: size */
	put(b, 0x1111); put(b, 0x2222);
	put(b, 8);				/* dyn_size */
	put(b, 0x5555);				/* WEIGHT(_STRUCT) */
	put(b, 0x6666);				/* DATA_SRC */
	put(b, 0x7777);				/* TRANSACTION */
	put(b, 2);				/* REGS_INTR: abi */
	put(b, 0xd); put(b, 0xe);
	put(b, 0x8888);				/* PHYS_ADDR */
	put(b, 0x9999);				/* CGROUP */
	put(b, 4096);				/* DATA_PAGE_SIZE */
	put(b, 2097152);			/* CODE_PAGE_SIZE */
	put(b, 8);				/* AUX: size */
	put(b, 0x0102030405060708ULL);
	return rb_end(b);
}

static void every_sample_bit_lands_in_its_field(void **state)
{
	struct cs_perf_attr a = attr_all(CS_SAMPLE_WEIGHT_STRUCT);
	struct cs_sample s;
	struct rb b;
	size_t size = build_full_sample(&b);

	(void)state;
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), 0);
	assert_int_equal(s.misc, CS_MISC_USER);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 100);
	assert_int_equal(s.tid, 101);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0xdead0000);
	assert_int_equal(s.id, 77);
	assert_int_equal(s.stream_id, 88);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.period, 250000);
	assert_int_equal(s.read_size, 9);
	assert_int_equal(s.read[0], 2);
	assert_int_equal(s.read[8], 1);
	assert_int_equal(s.callchain_nr, 4);
	assert_int_equal(s.callchain[2], CS_CONTEXT_USER_DEFERRED);
	assert_int_equal(s.callchain[3], 0xb00000006ULL);
	assert_int_equal(s.raw_size, 12);
	assert_memory_equal(s.raw, "ABCDEFGHIJKL", 12);
	assert_int_equal(s.branch_nr, 2);
	assert_int_equal(s.branch_hw_idx, 5);
	assert_int_equal(s.branches[1].from, 0x30);
	assert_int_equal(s.branches[1].to, 0x40);
	assert_int_equal(s.branches[1].flags, 0x2);
	assert_int_equal(s.branch_counters[1], 0xc2);
	assert_int_equal(s.user_regs_abi, 2);
	assert_int_equal(s.user_regs[2], 0xc);
	assert_int_equal(s.stack_user_size, 16);
	assert_int_equal(((const uint64_t *)s.stack_user)[1], 0x2222);
	assert_int_equal(s.stack_user_dyn_size, 8);
	assert_int_equal(s.weight, 0x5555);
	assert_int_equal(s.data_src, 0x6666);
	assert_int_equal(s.transaction, 0x7777);
	assert_int_equal(s.intr_regs_abi, 2);
	assert_int_equal(s.intr_regs[1], 0xe);
	assert_int_equal(s.phys_addr, 0x8888);
	assert_int_equal(s.cgroup, 0x9999);
	assert_int_equal(s.data_page_size, 4096);
	assert_int_equal(s.code_page_size, 2097152);
	assert_int_equal(s.aux_size, 8);
	assert_int_equal(*(const uint64_t *)s.aux, 0x0102030405060708ULL);
}

static void plain_weight_is_the_same_slot(void **state)
{
	struct cs_perf_attr a = attr_all(CS_SAMPLE_WEIGHT);
	struct cs_sample s;
	struct rb b;
	size_t size = build_full_sample(&b);

	(void)state;
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), 0);
	assert_int_equal(s.weight, 0x5555);
	assert_int_equal(s.aux_size, 8);
}

static void every_cut_of_a_full_sample_is_ebadmsg(void **state)
{
	struct cs_perf_attr a = attr_all(CS_SAMPLE_WEIGHT_STRUCT);
	struct cs_sample s;
	struct rb b;
	size_t size = build_full_sample(&b);

	(void)state;
	for (size_t cut = 8; cut < size; cut += 8) {
		rb_resize(&b, cut);
		assert_int_equal(cs_decode_sample(&a, b.w, cut, &s), -EBADMSG);
	}
}

static void read_without_group_has_fixed_values(void **state)
{
	struct cs_perf_attr a;
	struct cs_sample s;
	struct rb b;
	size_t size;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.sample_type = CS_SAMPLE_TID | CS_SAMPLE_READ;
	a.read_format = CS_FORMAT_ID | CS_FORMAT_LOST | CS_FORMAT_TOTAL_TIME_RUNNING;
	rb_start(&b, CS_RECORD_SAMPLE, 0);
	pair(&b, 1, 2);
	put(&b, 500); put(&b, 400); put(&b, 9); put(&b, 0);	/* value, running, id, lost */
	size = rb_end(&b);
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), 0);
	assert_int_equal(s.read_size, 4);
	assert_int_equal(s.read[0], 500);
	assert_int_equal(s.read[2], 9);
	/* one word short */
	assert_int_equal(cs_decode_sample(&a, b.w, size - 8, &s), -EBADMSG);
}

static void branch_stack_without_hw_index_has_no_hw_idx(void **state)
{
	struct cs_perf_attr a;
	struct cs_sample s;
	struct rb b;
	size_t size;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.sample_type = CS_SAMPLE_BRANCH_STACK | CS_SAMPLE_PERIOD;
	rb_start(&b, CS_RECORD_SAMPLE, 0);
	put(&b, 42);		/* PERIOD comes first in the ABI's order */
	put(&b, 1);
	put(&b, 0xaa); put(&b, 0xbb); put(&b, 0xcc);
	size = rb_end(&b);
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), 0);
	assert_int_equal(s.branch_nr, 1);
	assert_int_equal(s.branches[0].to, 0xbb);
	assert_null(s.branch_counters);
	assert_int_equal(s.period, 42);
}

static void regs_with_abi_zero_have_no_values(void **state)
{
	struct cs_perf_attr a;
	struct cs_sample s;
	struct rb b;
	size_t size;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.sample_type = CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER | CS_SAMPLE_PERIOD;
	a.sample_regs_user = 0xff;
	rb_start(&b, CS_RECORD_SAMPLE, 0);
	put(&b, 7);		/* PERIOD */
	put(&b, 0);		/* abi none: no registers follow */
	put(&b, 0);		/* stack size 0: no data, no dyn_size */
	size = rb_end(&b);
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), 0);
	assert_null(s.user_regs);
	assert_int_equal(s.stack_user_size, 0);
	/* one more word would be a register or a dyn_size if either were
	 * read: it is a word past the fields */
	put(&b, 0x5151);
	size = rb_end(&b);
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), -EBADMSG);
	assert_int_equal(s.stack_user_dyn_size, 0);
	assert_int_equal(s.period, 7);
}

struct hostile {
	uint64_t bit;
	uint64_t value;
};

/* A length field claiming more than the record holds, for each field that
 * has one: the decoder must refuse, not read on. */
static void hostile_lengths_are_ebadmsg(void **state)
{
	static const struct hostile h[] = {
		{ CS_SAMPLE_CALLCHAIN, 1ULL << 61 },
		{ CS_SAMPLE_CALLCHAIN, 3 },
		{ CS_SAMPLE_RAW, 0xfffffff0 },
		{ CS_SAMPLE_BRANCH_STACK, UINT64_MAX / 2 },
		{ CS_SAMPLE_BRANCH_STACK, 2 },
		{ CS_SAMPLE_STACK_USER, UINT64_MAX - 4 },
		{ CS_SAMPLE_STACK_USER, 64 },
		{ CS_SAMPLE_AUX, UINT64_MAX },
		{ CS_SAMPLE_READ, UINT64_MAX / 3 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		struct cs_perf_attr a;
		struct cs_sample s;
		struct rb b;
		size_t size;

		memset(&a, 0, sizeof(a));
		a.sample_type = h[i].bit;
		a.read_format = CS_FORMAT_GROUP | CS_FORMAT_ID;
		rb_start(&b, CS_RECORD_SAMPLE, 0);
		put(&b, h[i].value);
		put(&b, 0); put(&b, 0);		/* two words of something */
		size = rb_end(&b);
		assert_int_equal(cs_decode_sample(&a, b.w, size, &s), -EBADMSG);
	}
}

static void raw_size_that_misaligns_is_ebadmsg(void **state)
{
	struct cs_perf_attr a;
	struct cs_sample s;
	struct rb b;
	size_t size;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.sample_type = CS_SAMPLE_RAW;
	rb_start(&b, CS_RECORD_SAMPLE, 0);
	put(&b, 5);		/* 4 + 5 bytes: what follows would be misaligned */
	put(&b, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode_sample(&a, b.w, size, &s), -EBADMSG);
}

/* ---- cs_decode: trailers and other record types ---- */

struct fix {
	struct cs_evlist *l;
	struct cs_errbuf eb;
};

static int one_event(void **state, uint64_t sample_type, uint64_t flags)
{
	static struct fix f;
	struct cs_perf_attr a;
	uint64_t ids[] = { 6, 7 };

	memset(&f, 0, sizeof(f));
	memset(&a, 0, sizeof(a));
	a.size = CS_PERF_ATTR_SIZE_VER7;
	a.type = CS_PERF_TYPE_SOFTWARE;
	a.sample_type = sample_type;
	a.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DEFER_CALLCHAIN | flags;
	assert_int_equal(cs_evlist_new(&f.l), 0);
	assert_int_equal(cs_evlist_add(f.l, &a, NULL, ids, 2), 0);
	*state = &f;
	return 0;
}

static int setup_spec(void **state)
{
	return one_event(state, CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			 CS_SAMPLE_CALLCHAIN | CS_SAMPLE_PERIOD, 0);
}

#define WIDE (CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID | \
	      CS_SAMPLE_TIME | CS_SAMPLE_ID | CS_SAMPLE_STREAM_ID | \
	      CS_SAMPLE_CPU | CS_SAMPLE_PERIOD)

static int setup_wide(void **state)
{
	return one_event(state, WIDE, CS_ATTR_BUILD_ID);
}

static int setup_wide_no_build_id(void **state)
{
	return one_event(state, WIDE, 0);
}

/* A WIDE event's sample_id trailer, every field in perf's order, its
 * STREAM_ID 70 and IDENTIFIER 7. An ID unlike the IDENTIFIER shows which
 * of the two the decoder took. */
static void put_wide_trailer(struct rb *b, uint32_t pid, uint32_t tid,
			     uint64_t time, uint64_t id, uint32_t cpu)
{
	pair(b, pid, tid);		/* TID */
	put(b, time);			/* TIME */
	put(b, id);			/* ID */
	put(b, 70);			/* STREAM_ID */
	pair(b, cpu, 0);		/* CPU */
	put(b, 7);			/* IDENTIFIER */
}

static int teardown(void **state)
{
	struct fix *f = *state;

	cs_evlist_free(f->l);
	return 0;
}

/* The 64-byte record of SPEC.md §1, byte for byte. */
static void spec_deferred_record_decodes(void **state)
{
	const uint8_t *rec = spec_deferred_record;
	struct fix *f = *state;
	struct cs_event ev;

	assert_int_equal(cs_decode(f->l, rec, sizeof(spec_deferred_record), 0x1000, "t.data",
				   &ev, &f->eb), 0);
	assert_int_equal(ev.type, CS_RECORD_CALLCHAIN_DEFERRED);
	assert_int_equal(ev.misc, CS_MISC_USER);
	assert_int_equal(ev.offset, 0x1000);
	assert_int_equal(ev.deferred.cookie, 0xb00000006ULL);
	assert_int_equal(ev.deferred.nr, 3);
	assert_int_equal(ev.deferred.ips[0], 0x7f18fe337fa7ULL);
	assert_int_equal(ev.deferred.ips[2], 0x7f18fe331448ULL);
	assert_true(ev.has_id);
	assert_int_equal(ev.id.pid, 2312);
	assert_int_equal(ev.id.tid, 2312);
	assert_int_equal(ev.id.time, 0x1c35e77ae6ULL);
	assert_non_null(ev.evsel);
	assert_int_equal(cs_evlist_record_time(f->l, rec, sizeof(spec_deferred_record)),
			 0x1c35e77ae6ULL);
}

static void deferred_nr_past_the_trailer_is_ebadmsg(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_CALLCHAIN_DEFERRED, CS_MISC_USER);
	put(&b, 0x42);		/* cookie */
	put(&b, 2);		/* nr: 2, but only one ip before the trailer */
	put(&b, 0x7f0000001000ULL);
	pair(&b, 5, 5);
	put(&b, 999);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x2a8, "t.data", &ev, &f->eb),
			 -EBADMSG);
	assert_string_equal(f->eb.msg, "t.data: CALLCHAIN_DEFERRED record at "
			    "offset 0x2a8: nr exceeds the record");
}

/* A deferred record with every trailer field decodes to exactly its
 * fields (the trailer's in their order from the end), every other byte of
 * the event zero, whatever the event held before. */
static void deferred_record_with_every_trailer_field(void **state)
{
	struct fix *f = *state;
	struct cs_event ev, want;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_CALLCHAIN_DEFERRED, CS_MISC_USER);
	put(&b, 0xc00c1e);		/* cookie */
	put(&b, 2);			/* nr */
	put(&b, 0x7f0000001000ULL);
	put(&b, 0x7f0000002000ULL);
	put_wide_trailer(&b, 10, 11, 5000, 6, 1);
	size = rb_end(&b);
	memset(&ev, 0xa5, sizeof(ev));
	assert_int_equal(cs_decode(f->l, b.w, size, 0x300, "t", &ev, &f->eb), 0);
	memset(&want, 0, sizeof(want));
	want.type = CS_RECORD_CALLCHAIN_DEFERRED;
	want.misc = CS_MISC_USER;
	want.size = (uint16_t)size;
	want.offset = 0x300;
	want.bytes = b.w;
	want.evsel = ev.evsel;
	want.has_id = true;
	want.id.pid = 10;
	want.id.tid = 11;
	want.id.time = 5000;
	want.id.id = 7;			/* IDENTIFIER, after ID */
	want.id.stream_id = 70;
	want.id.cpu = 1;
	want.deferred.cookie = 0xc00c1e;
	want.deferred.nr = 2;
	want.deferred.ips = &b.w[3];
	assert_non_null(ev.evsel);
	assert_memory_equal(&ev, &want, sizeof(want));
	/* one ip more than nr says: the general decoder explains */
	put(&b, 7);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x300, "t", &ev, &f->eb),
			 -EBADMSG);
	assert_string_equal(f->eb.msg, "t: CALLCHAIN_DEFERRED record at offset "
			    "0x300: longer than its fields: its size is not its own");
}

static void trailer_fields_come_from_the_end(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_COMM, CS_MISC_COMM_EXEC);
	pair(&b, 10, 11);
	put(&b, 0x0000006b726f77ULL);	/* "work\0..." padded */
	put_wide_trailer(&b, 10, 11, 5000, 7, 1);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_string_equal(ev.comm.comm, "work");
	assert_int_equal(ev.comm.pid, 10);
	assert_true(ev.has_id);
	assert_int_equal(ev.id.tid, 11);
	assert_int_equal(ev.id.time, 5000);
	assert_int_equal(ev.id.id, 7);
	assert_int_equal(ev.id.stream_id, 70);
	assert_int_equal(ev.id.cpu, 1);
	assert_int_equal(cs_evlist_record_time(f->l, b.w, size), 5000);
}

static void unterminated_strings_are_ebadmsg(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_COMM, 0);
	pair(&b, 10, 11);
	put(&b, 0x4141414141414141ULL);	/* no NUL before the trailer */
	put_wide_trailer(&b, 10, 11, 5000, 7, 1);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x40, "t", &ev, &f->eb),
			 -EBADMSG);
	assert_non_null(strstr(f->eb.msg, "COMM record at offset 0x40"));
}

static void mmap2_with_build_id(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_MMAP2, CS_MISC_USER | CS_MISC_MMAP_BUILD_ID);
	pair(&b, 20, 21);
	put(&b, 0x400000); put(&b, 0x1000); put(&b, 0);
	put(&b, 20 | 0xaabbcc00ULL << 32);	/* size 20, pad, id bytes 0..3 */
	put(&b, 0x0807060504030201ULL); put(&b, 0x100f0e0d0c0b0a09ULL);
	pair(&b, 5, 2);				/* prot r-x, flags private */
	put(&b, 0x6e69622f7273752fULL);	/* "/usr/bin" */
	put(&b, 0);
	put_wide_trailer(&b, 20, 21, 1, 7, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_true(ev.mmap.has_build_id);
	assert_int_equal(ev.mmap.build_id_size, 20);
	assert_int_equal(ev.mmap.build_id[0], 0x00);
	assert_int_equal(ev.mmap.build_id[1], 0xcc);
	assert_int_equal(ev.mmap.build_id[4], 0x01);
	assert_int_equal(ev.mmap.prot, 5);
	assert_string_equal(ev.mmap.filename, "/usr/bin");
	assert_int_equal(ev.mmap.start, 0x400000);
}

/* The kernel sets the build-id bit on the one record it writes for every
 * event watching a mapping; an event that did not ask for build ids gets
 * the inode form under that bit. */
static void mmap2_build_id_bit_without_build_id_attr_is_the_inode_form(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_MMAP2, CS_MISC_USER | CS_MISC_MMAP_BUILD_ID);
	pair(&b, 20, 21);
	put(&b, 0x400000); put(&b, 0x1000); put(&b, 0);
	pair(&b, 8, 1);				/* maj 8: looks like a size */
	put(&b, 4242); put(&b, 0);		/* ino, generation */
	pair(&b, 5, 2);
	put(&b, 0x0000000000612f2fULL);		/* "//a" */
	put_wide_trailer(&b, 20, 21, 1, 7, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_false(ev.mmap.has_build_id);
	assert_int_equal(ev.mmap.maj, 8);
	assert_int_equal(ev.mmap.min, 1);
	assert_int_equal(ev.mmap.ino, 4242);
	assert_string_equal(ev.mmap.filename, "//a");
}

static void fork_exit_lost_ksymbol(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_FORK, 0);
	pair(&b, 30, 29); pair(&b, 31, 29); put(&b, 77);
	put_wide_trailer(&b, 30, 31, 77, 7, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_int_equal(ev.fork.pid, 30);
	assert_int_equal(ev.fork.ppid, 29);
	assert_int_equal(ev.fork.tid, 31);
	assert_int_equal(ev.fork.time, 77);

	rb_start(&b, CS_RECORD_LOST, 0);
	put(&b, 7); put(&b, 12);
	put_wide_trailer(&b, 0, 0, 80, 7, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_int_equal(ev.lost.id, 7);
	assert_int_equal(ev.lost.lost, 12);

	rb_start(&b, CS_RECORD_KSYMBOL, 0);
	put(&b, 0xffffffffc0000000ULL);
	pair(&b, 256, 1 | 2u << 16);
	put(&b, 0x00636f72705f6662ULL);	/* "bf_proc" */
	put_wide_trailer(&b, 0, 0, 81, 7, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_int_equal(ev.ksymbol.len, 256);
	assert_int_equal(ev.ksymbol.ksym_type, 1);
	assert_int_equal(ev.ksymbol.flags, 2);
	assert_string_equal(ev.ksymbol.name, "bf_proc");
}

static void record_shorter_than_its_trailer_is_ebadmsg(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_EXIT, 0);
	put(&b, 1); put(&b, 2);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x10, "t", &ev, &f->eb),
			 -EBADMSG);
	assert_non_null(strstr(f->eb.msg, "t: EXIT record at offset 0x10"));
}

static void every_kernel_type_cut_short_is_ebadmsg_not_a_crash(void **state)
{
	struct fix *f = *state;

	/* a record of each type whose body is just the trailer: any type
	 * with a fixed body must refuse it, none may read past it */
	for (uint32_t t = 1; t < CS_RECORD_KERNEL_MAX; t++) {
		struct cs_event ev;
		struct rb b;
		size_t size;
		int err;

		if (t == CS_RECORD_SAMPLE)
			continue;
		rb_start(&b, t, 0);
		put_wide_trailer(&b, 1, 1, 2, 7, 0);
		size = rb_end(&b);
		cs_error_clear(&f->eb);
		err = cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb);
		if (t == CS_RECORD_SWITCH)	/* the one type with no body */
			assert_int_equal(err, 0);
		else
			assert_int_equal(err, -EBADMSG);
	}
}

static void user_and_unknown_types_are_counted_not_refused(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_FINISHED_ROUND, 0);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_null(ev.evsel);
	assert_false(ev.has_id);
	rb_start(&b, 200, 0);		/* newer than us */
	put(&b, 1);
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0, "t", &ev, &f->eb), 0);
	assert_int_equal(ev.type, 200);
	assert_null(cs_record_type_name(200));
	assert_string_equal(cs_record_type_name(22), "CALLCHAIN_DEFERRED");
	assert_string_equal(cs_record_type_name(83), "COMPRESSED2");
}

static void header_size_disagreeing_with_size_is_ebadmsg(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;

	rb_start(&b, CS_RECORD_FINISHED_ROUND, 0);
	rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, 16, 0x8, "t", &ev, &f->eb), -EBADMSG);
	assert_int_equal(cs_decode(f->l, b.w, 4, 0x8, "t", &ev, &f->eb), -EBADMSG);
}

static void sample_decodes_through_its_evsel(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	rb_start(&b, CS_RECORD_SAMPLE, CS_MISC_KERNEL);
	put(&b, 7);				/* IDENTIFIER */
	put(&b, 0xffffffff81000000ULL);		/* IP */
	pair(&b, 40, 41);
	put(&b, 9999);
	put(&b, 7);				/* ID */
	put(&b, 70);				/* STREAM_ID */
	pair(&b, 1, 0);
	put(&b, 4000);				/* PERIOD */
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x100, "t", &ev, &f->eb), 0);
	assert_int_equal(ev.sample.ip, 0xffffffff81000000ULL);
	assert_int_equal(ev.sample.period, 4000);
	assert_int_equal(ev.id.time, 9999);
	assert_int_equal(ev.id.cpu, 1);
	assert_true(ev.has_id);
	assert_int_equal(cs_evlist_record_time(f->l, b.w, size), 9999);
	/* cut in the middle: the decoder says which record and where */
	rb_resize(&b, size - 16);
	assert_int_equal(cs_decode(f->l, b.w, size - 16, 0x100, "t", &ev, &f->eb),
			 -EBADMSG);
	assert_non_null(strstr(f->eb.msg, "t: SAMPLE record at offset 0x100: "));
}

/* The fixed fields of a sample of setup_ids_and_chain's event, up to its
 * callchain: IDENTIFIER and ID 7, pid 40, tid 41, cpu 3, period 4000. */
static void ids_and_chain_head(struct rb *b, uint16_t misc, uint64_t ip,
			       uint64_t time)
{
	rb_start(b, CS_RECORD_SAMPLE, misc);
	put(b, 7);			/* IDENTIFIER */
	put(b, ip);			/* IP */
	pair(b, 40, 41);		/* TID */
	put(b, time);			/* TIME */
	put(b, 7);			/* ID */
	pair(b, 3, 0);			/* CPU */
	put(b, 4000);			/* PERIOD */
}

/* A body of 72 bytes or more takes the unchecked path for its fixed
 * fields; one under takes the checked path: the same event either way. */
static void sample_ids_are_the_same_on_both_paths(void **state)
{
	struct fix *f = *state;
	struct cs_event small, big;
	struct rb b;
	size_t size;

	for (int nr = 0; nr <= 2; nr += 2) {
		ids_and_chain_head(&b, CS_MISC_USER, 0x401000, 9999);
		put(&b, (uint64_t)nr);		/* CALLCHAIN */
		for (int i = 0; i < nr; i++)
			put(&b, 0x401000 + (uint64_t)i);
		size = rb_end(&b);
		assert_true(nr ? size - 8 >= 72 : size - 8 < 72);
		assert_int_equal(cs_decode(f->l, b.w, size, 0x100, "t",
					   nr ? &big : &small, &f->eb), 0);
	}
	for (int i = 0; i < 2; i++) {
		const struct cs_event *e = i ? &big : &small;

		assert_int_equal(e->sample.pid, 40);
		assert_int_equal(e->sample.tid, 41);
		assert_int_equal(e->sample.time, 9999);
		assert_int_equal(e->sample.cpu, 3);
		assert_int_equal(e->id.pid, 40);
		assert_int_equal(e->id.tid, 41);
		assert_int_equal(e->id.time, 9999);
		assert_int_equal(e->id.id, 7);
		assert_int_equal(e->id.cpu, 3);
		assert_int_equal(e->sample.period, 4000);
		assert_true(e->has_id);
	}
	assert_int_equal(big.sample.callchain_nr, 2);
}

/* The kernel writes a sample's fields and nothing more: bytes past them
 * mean its size is not its own (it swallowed what followed). */
static void bytes_past_a_samples_fields_are_ebadmsg(void **state)
{
	struct fix *f = *state;
	struct cs_event ev;
	struct rb b;
	size_t size;

	ids_and_chain_head(&b, CS_MISC_USER, 0x401000, 9999);
	put(&b, 0);				/* CALLCHAIN nr 0 */
	put(&b, 0);				/* bytes nobody asked for */
	size = rb_end(&b);
	assert_int_equal(cs_decode(f->l, b.w, size, 0x100, "t", &ev, &f->eb), -EBADMSG);
	assert_non_null(strstr(f->eb.msg, "SAMPLE record at offset 0x100: longer "
			       "than its fields"));
}

/* The stitcher decodes one event of its own again and again: a usual
 * sample decoded into it after another record keeps nothing of that one,
 * and is the event a fresh decode gives, byte for byte. */
static void decoded_again_is_decoded_afresh(void **state)
{
	struct fix *f = *state;
	struct cs_event again, fresh;
	struct rb b;
	size_t size;

	memset(&again, 0, sizeof(again));
	rb_start(&b, CS_RECORD_MMAP, CS_MISC_USER);
	pair(&b, 40, 41);
	put(&b, 0x400000); put(&b, 0x1000); put(&b, 0x2000);
	put(&b, 0x0000006e69622fULL);		/* "/bin" */
	pair(&b, 40, 41); put(&b, 77); put(&b, 7); pair(&b, 3, 0); put(&b, 7);
	size = rb_end(&b);
	assert_int_equal(cs_decode_again(f->l, b.w, size, 0, "t", &again, &f->eb), 0);
	assert_string_equal(again.mmap.filename, "/bin");
	for (int nr = 4; nr >= 2; nr -= 2) {
		ids_and_chain_head(&b, CS_MISC_KERNEL, 0xffffffff81000000ULL,
				   9999 + (uint64_t)nr);
		put(&b, (uint64_t)nr);		/* CALLCHAIN */
		for (int i = 0; i < nr; i++)
			put(&b, 0xffffffff81000100ULL + (uint64_t)i);
		size = rb_end(&b);
		memset(&fresh, 0xa5, sizeof(fresh));
		assert_int_equal(cs_decode(f->l, b.w, size, 0x100, "t", &fresh, &f->eb), 0);
		assert_int_equal(cs_decode_again(f->l, b.w, size, 0x100, "t", &again,
						 &f->eb), 0);
		assert_memory_equal(&again, &fresh, sizeof(fresh));
	}
}

/* A usual sample of sample_type st (fixed fields in the ABI's order,
 * each field's value its bit's number, so that a field read from the
 * wrong place shows), with a callchain of nr entries ending in deferred. */
static size_t usual_sample(struct rb *b, uint64_t st, uint64_t time, int nr)
{
	rb_start(b, CS_RECORD_SAMPLE, CS_MISC_KERNEL);
	if (st & CS_SAMPLE_IDENTIFIER)
		put(b, 6);
	if (st & CS_SAMPLE_IP)
		put(b, 0xffffffff81000000ULL);
	if (st & CS_SAMPLE_TID)
		pair(b, 40, 41);
	if (st & CS_SAMPLE_TIME)
		put(b, time);
	if (st & CS_SAMPLE_ADDR)
		put(b, 0x5000);
	if (st & CS_SAMPLE_ID)
		put(b, 7);
	if (st & CS_SAMPLE_STREAM_ID)
		put(b, 9);
	if (st & CS_SAMPLE_CPU)
		pair(b, 3, 0);
	if (st & CS_SAMPLE_PERIOD)
		put(b, 4000 + time);
	put(b, (uint64_t)nr);
	for (int i = 0; i < nr - 2; i++)
		put(b, 0xffffffff81000100ULL + (uint64_t)i);
	put(b, CS_CONTEXT_USER_DEFERRED);
	put(b, 0xc00c1e);
	return rb_end(b);
}

/* The layouts perf record -g writes are decoded by code of their own
 * (with and without IDENTIFIER and CPU), and a sample filed by its key is
 * decoded without the checks again: each gives, byte for byte, the event
 * a fresh decode gives (fields in their places, the rest zero), one after
 * the other in one event as the stitcher decodes them, and the fields the
 * general decoder gives. */
static void usual_layouts_decode_as_the_general_decoder_does(void **state)
{
	static const uint64_t layouts[] = {
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_PERIOD,
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_PERIOD |
			CS_SAMPLE_CPU,
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_PERIOD |
			CS_SAMPLE_IDENTIFIER,
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_PERIOD |
			CS_SAMPLE_IDENTIFIER | CS_SAMPLE_CPU,
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_ADDR |
			CS_SAMPLE_CPU,
	};
	struct cs_event again, filed, fresh, general;
	struct cs_errbuf eb = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		uint64_t st = layouts[i] | CS_SAMPLE_CALLCHAIN;
		struct cs_evlist *l, *lg;
		void *fix;

		/* the general decoder alone: a WEIGHT after the callchain
		 * keeps the same fields off the quick path */
		one_event(&fix, st | CS_SAMPLE_WEIGHT, 0);
		lg = ((struct fix *)fix)->l;
		one_event(&fix, st, 0);
		l = ((struct fix *)fix)->l;
		/* the stitcher's event lives as long as the session's evlist */
		memset(&again, 0, sizeof(again));
		memset(&filed, 0, sizeof(filed));
		/* records of 80 bytes and more: the quick path's least */
		for (int nr = 8; nr >= 6; nr -= 2) {
			struct cs_wait_key k;
			struct rb b, g;
			size_t size, gsize;

			size = usual_sample(&b, st, 9999 + (uint64_t)nr, nr);
			memset(&fresh, 0xa5, sizeof(fresh));
			assert_int_equal(cs_decode_or_wait(l, b.w, size, 0x100, "t",
							   &fresh, &k, &eb), 1);
			assert_int_equal(k.tid, 41);
			assert_int_equal(k.evsel, 0);
			assert_int_equal(k.cookie, 0xc00c1e);
			assert_int_equal(cs_decode(l, b.w, size, 0x100, "t", &fresh,
						   &eb), 0);
			assert_int_equal(cs_decode_again(l, b.w, size, 0x100, "t",
							 &again, &eb), 0);
			assert_memory_equal(&again, &fresh, sizeof(fresh));
			assert_int_equal(cs_decode_filed(l, b.w, size, 0x100,
							 k.evsel, &filed), 0);
			assert_memory_equal(&filed, &fresh, sizeof(fresh));

			g = b;
			put(&g, 0);		/* WEIGHT */
			gsize = rb_end(&g);
			memset(&general, 0x5a, sizeof(general));
			assert_int_equal(cs_decode(lg, g.w, gsize, 0x100, "t",
						   &general, &eb), 0);
			assert_memory_equal(&general.sample, &fresh.sample,
					    offsetof(struct cs_sample, callchain));
			assert_int_equal(general.sample.callchain_nr,
					 fresh.sample.callchain_nr);
			assert_memory_equal(&general.id, &fresh.id, sizeof(fresh.id));
		}
		cs_evlist_free(l);
		cs_evlist_free(lg);
	}
}

/* ---- every layout of the id fields, on every path ---- */

/* The ABI's orders, written here apart from the decoder's own (sample_fields.h),
 * with the word each field's message names when a record ends in it. */
static const struct { uint64_t bit; const char *name; } head_order[] = {
	{ CS_SAMPLE_IDENTIFIER, "identifier" }, { CS_SAMPLE_IP, "ip" },
	{ CS_SAMPLE_TID, "pid" }, { CS_SAMPLE_TIME, "time" },
	{ CS_SAMPLE_ADDR, "addr" }, { CS_SAMPLE_ID, "id" },
	{ CS_SAMPLE_STREAM_ID, "stream id" }, { CS_SAMPLE_CPU, "cpu" },
	{ CS_SAMPLE_PERIOD, "period" },
};
static const uint64_t trailer_order[] = {
	CS_SAMPLE_TID, CS_SAMPLE_TIME, CS_SAMPLE_ID, CS_SAMPLE_STREAM_ID,
	CS_SAMPLE_CPU, CS_SAMPLE_IDENTIFIER,
};

/* ID and IDENTIFIER differ, so that which one a decoder keeps shows. */
#define V_PID		40
#define V_TID		41
#define V_ID		7
#define V_IDENT		6
#define V_STREAM	9
#define V_CPU		3

/* Bits of order (nr of them) that mask's bits pick. */
static uint64_t pick(const uint64_t *order, size_t stride, size_t nr,
		     unsigned int mask)
{
	uint64_t st = 0;

	for (size_t i = 0; i < nr; i++)
		if (mask & (1u << i))
			st |= *(const uint64_t *)(const void *)
			      ((const char *)order + i * stride);
	return st;
}

/* Two events of sample_type st: the first has id V_ID, the second
 * V_IDENT, so that the event a record is filed under says which of its
 * fields named it. */
static struct cs_evlist *two_events(uint64_t st)
{
	struct cs_evlist *l;
	struct cs_perf_attr a;
	uint64_t id = V_ID, ident = V_IDENT;

	memset(&a, 0, sizeof(a));
	a.size = CS_PERF_ATTR_SIZE_VER7;
	a.type = CS_PERF_TYPE_SOFTWARE;
	a.sample_type = st;
	a.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DEFER_CALLCHAIN;
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, &id, 1), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, &ident, 1), 0);
	return l;
}

static void put_trailer(struct rb *b, uint64_t st, uint64_t time)
{
	if (st & CS_SAMPLE_TID)
		pair(b, V_PID, V_TID);
	if (st & CS_SAMPLE_TIME)
		put(b, time);
	if (st & CS_SAMPLE_ID)
		put(b, V_ID);
	if (st & CS_SAMPLE_STREAM_ID)
		put(b, V_STREAM);
	if (st & CS_SAMPLE_CPU)
		pair(b, V_CPU, 0);
	if (st & CS_SAMPLE_IDENTIFIER)
		put(b, V_IDENT);
}

/* The ids a record of st carries. The id: a trailer's is its last field
 * (IDENTIFIER over ID), a sample's too (ID, after IDENTIFIER). */
static struct cs_sample_id want_ids(uint64_t st, uint64_t time, bool trailer)
{
	struct cs_sample_id w;

	memset(&w, 0, sizeof(w));
	if (st & CS_SAMPLE_TID) {
		w.pid = V_PID;
		w.tid = V_TID;
	}
	if (st & CS_SAMPLE_TIME)
		w.time = time;
	if (st & (trailer ? CS_SAMPLE_IDENTIFIER : CS_SAMPLE_ID))
		w.id = trailer ? V_IDENT : V_ID;
	else if (st & (CS_SAMPLE_ID | CS_SAMPLE_IDENTIFIER))
		w.id = trailer ? V_ID : V_IDENT;
	if (st & CS_SAMPLE_STREAM_ID)
		w.stream_id = V_STREAM;
	if (st & CS_SAMPLE_CPU)
		w.cpu = V_CPU;
	return w;
}

/* The event perf files a record of st under: the one IDENTIFIER names
 * when there is one (it sits at the same place whatever the event), else
 * ID's, else the first. */
static unsigned int want_event(uint64_t st)
{
	return (st & CS_SAMPLE_IDENTIFIER) ? 1 : 0;
}

/* Every one of the 64 trailers gives the same ids, time and event on the
 * quick path (a usual CALLCHAIN_DEFERRED record) and the general one (an
 * EXIT record), each field where the ABI puts it; a record too short for
 * its trailer says so. */
static void every_trailer_layout_is_read_alike_on_both_paths(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < 64; mask++) {
		uint64_t st = pick(trailer_order, sizeof(trailer_order[0]), 6, mask);
		uint64_t time = 5000 + mask;
		struct cs_sample_id want = want_ids(st, time, true);
		struct cs_evlist *l = two_events(st);
		struct cs_errbuf eb = { 0 };
		struct cs_event deferred, exited;
		size_t dsize, esize, tsize;
		struct rb d, e;

		rb_start(&d, CS_RECORD_CALLCHAIN_DEFERRED, CS_MISC_USER);
		put(&d, 0xc00c1e);
		put(&d, 2);
		put(&d, 0x7f0000001000ULL);
		put(&d, 0x7f0000002000ULL);
		put_trailer(&d, st, time);
		dsize = rb_end(&d);
		tsize = dsize - 40;
		rb_start(&e, CS_RECORD_EXIT, 0);
		pair(&e, 100, 1);
		pair(&e, 101, 1);
		put(&e, 4000);
		put_trailer(&e, st, time);
		esize = rb_end(&e);

		memset(&deferred, 0xa5, sizeof(deferred));
		memset(&exited, 0x5a, sizeof(exited));
		assert_int_equal(cs_decode(l, d.w, dsize, 0x40, "t", &deferred, &eb), 0);
		assert_int_equal(cs_decode(l, e.w, esize, 0x40, "t", &exited, &eb), 0);
		assert_int_equal(deferred.deferred.nr, 2);
		assert_int_equal(exited.fork.time, 4000);
		for (int i = 0; i < 2; i++) {
			const struct cs_event *ev = i ? &exited : &deferred;
			const void *rec = i ? (const void *)e.w : (const void *)d.w;

			assert_int_equal(ev->has_id, st != 0);
			assert_memory_equal(&ev->id, &want, sizeof(want));
			assert_ptr_equal(ev->evsel, cs_evlist_get(l, want_event(st)));
			assert_int_equal(cs_evlist_record_time(l, rec, i ? esize : dsize),
					 (st & CS_SAMPLE_TIME) ? time : CS_NO_TIME);
		}
		/* the header and all but the trailer's last 8 bytes */
		if (tsize) {
			rb_resize(&e, tsize);
			cs_error_clear(&eb);
			assert_int_equal(cs_decode(l, e.w, tsize, 0x40, "t", &exited,
						   &eb), -EBADMSG);
			assert_string_equal(eb.msg, "t: EXIT record at offset 0x40: "
					    "too short for its sample_id trailer");
		}
		cs_evlist_free(l);
	}
}

/* A sample of st: its head fields in the ABI's order, then a callchain of
 * nr entries (the last two [USER_DEFERRED, cookie] when nr >= 2). */
static size_t head_sample(struct rb *b, uint64_t st, uint64_t time, int nr)
{
	rb_start(b, CS_RECORD_SAMPLE, CS_MISC_KERNEL);
	if (st & CS_SAMPLE_IDENTIFIER)
		put(b, V_IDENT);
	if (st & CS_SAMPLE_IP)
		put(b, 0xffffffff81000000ULL);
	if (st & CS_SAMPLE_TID)
		pair(b, V_PID, V_TID);
	if (st & CS_SAMPLE_TIME)
		put(b, time);
	if (st & CS_SAMPLE_ADDR)
		put(b, 0x5000);
	if (st & CS_SAMPLE_ID)
		put(b, V_ID);
	if (st & CS_SAMPLE_STREAM_ID)
		put(b, V_STREAM);
	if (st & CS_SAMPLE_CPU)
		pair(b, V_CPU, 0);
	if (st & CS_SAMPLE_PERIOD)
		put(b, 4000);
	put(b, (uint64_t)nr);
	for (int i = 0; i < nr - 2; i++)
		put(b, 0xffffffff81000100ULL + (uint64_t)i);
	if (nr >= 2) {
		put(b, CS_CONTEXT_USER_DEFERRED);
		put(b, 0xc00c1e);
	}
	return rb_end(b);
}

/* What a record of st that ends left bytes into its head names. */
static const char *want_cut(uint64_t st, size_t left)
{
	size_t at = 0;

	for (size_t i = 0; i < sizeof(head_order) / sizeof(head_order[0]); i++) {
		if (!(st & head_order[i].bit))
			continue;
		if (head_order[i].bit == CS_SAMPLE_TID && left >= at + 4 &&
		    left < at + 8)
			return "tid";
		if (left < at + 8)
			return head_order[i].name;
		at += 8;
	}
	return NULL;
}

static void assert_head(const struct cs_event *ev, uint64_t st, uint64_t time)
{
	struct cs_sample_id want = want_ids(st, time, false);
	const struct cs_sample *s = &ev->sample;

	assert_int_equal(s->ip, (st & CS_SAMPLE_IP) ? 0xffffffff81000000ULL : 0);
	assert_int_equal(s->pid, want.pid);
	assert_int_equal(s->tid, want.tid);
	assert_int_equal(s->time, want.time);
	assert_int_equal(s->addr, (st & CS_SAMPLE_ADDR) ? 0x5000 : 0);
	assert_int_equal(s->id, want.id);
	assert_int_equal(s->stream_id, want.stream_id);
	assert_int_equal(s->cpu, want.cpu);
	assert_int_equal(s->period, (st & CS_SAMPLE_PERIOD) ? 4000 : 0);
	assert_true(ev->has_id);
	assert_memory_equal(&ev->id, &want, sizeof(want));
}

/* The decoder's head table (sample_fields.h) has the bits and the bytes its
 * checks assume: a bit missing from CS_SAMPLE_HEAD_BITS would send a
 * field of the head to the variable part's checks, which do not read it;
 * a head longer than CS_SAMPLE_HEAD_MAX would be read past a short body. */
static void head_table_has_the_bits_and_bytes_the_checks_assume(void **state)
{
	uint64_t bits = 0;
	size_t bytes = 0;

	(void)state;
	for (size_t i = 0; i < CS_SAMPLE_HEAD_NR; i++) {
		bits |= cs_sample_head[i].bit;
		bytes += cs_sample_head[i].size;
	}
	assert_int_equal(bits, CS_SAMPLE_HEAD_BITS);
	assert_int_equal(bytes, CS_SAMPLE_HEAD_MAX);
	for (size_t i = 0; i < CS_TRAILER_NR; i++)
		assert_true(cs_trailer[i].bit & CS_SAMPLE_HEAD_BITS);
}

/* Every one of the 512 sample heads is read alike by each way a sample is
 * decoded: the quick path (straight-line code for perf record -g's
 * layouts, the table walked for the rest), a sample filed by its wait key
 * and decoded again, the general decoder with its body long or short
 * (under 72 bytes: measured first), and cs_decode_sample(); the event it
 * is filed under, its time and its wait key come from where the ABI puts
 * them; a record that ends inside its head names the field it ends in. */
static void every_sample_head_layout_is_read_alike_on_every_path(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < 512; mask++) {
		uint64_t st = pick(&head_order[0].bit, sizeof(head_order[0]), 9,
				   mask) | CS_SAMPLE_CALLCHAIN;
		uint64_t time = 9000 + mask;
		size_t head = 8 * (size_t)__builtin_popcount(mask);
		struct cs_evlist *l = two_events(st);
		struct cs_evlist *lg = two_events(st | CS_SAMPLE_WEIGHT);
		struct cs_errbuf eb = { 0 };

		for (int nr = 0; nr <= 8; nr += 8) {
			struct cs_event quick, general, filed;
			struct cs_sample alone;
			struct cs_wait_key k;
			struct rb b, g;
			size_t size, gsize;

			size = head_sample(&b, st, time, nr);
			g = b;
			put(&g, 0);			/* WEIGHT */
			gsize = rb_end(&g);
			memset(&quick, 0xa5, sizeof(quick));
			memset(&general, 0x5a, sizeof(general));
			assert_int_equal(cs_decode(l, b.w, size, 0x100, "t", &quick,
						   &eb), 0);
			assert_int_equal(cs_decode(lg, g.w, gsize, 0x100, "t", &general,
						   &eb), 0);
			assert_int_equal(cs_decode_sample(cs_evsel_attr(
					 cs_evlist_get(l, 0)), b.w, size, &alone), 0);
			assert_head(&quick, st, time);
			assert_head(&general, st, time);
			assert_memory_equal(&alone, &quick.sample, sizeof(alone));
			assert_int_equal(quick.sample.callchain_nr, nr);
			assert_ptr_equal(quick.sample.callchain, &b.w[2 + head / 8]);
			assert_ptr_equal(quick.evsel, cs_evlist_get(l, want_event(st)));
			assert_ptr_equal(general.evsel, cs_evlist_get(lg, want_event(st)));
			assert_int_equal(cs_evlist_record_time(l, b.w, size),
					 (st & CS_SAMPLE_TIME) ? time : CS_NO_TIME);
			if (!nr)
				continue;
			/* the chain ends in a deferred user part: it waits */
			assert_int_equal(cs_decode_or_wait(l, b.w, size, 0x100, "t",
							   &filed, &k, &eb), 1);
			assert_int_equal(k.tid, (st & CS_SAMPLE_TID) ? V_TID : 0);
			assert_int_equal(k.time, (st & CS_SAMPLE_TIME) ? time : 0);
			assert_int_equal(k.cookie, 0xc00c1e);
			assert_int_equal(k.evsel, want_event(st));
			memset(&filed, 0, sizeof(filed));
			assert_int_equal(cs_decode_filed(l, b.w, size, 0x100, k.evsel,
							 &filed), 0);
			assert_memory_equal(&filed, &quick, sizeof(quick));
			/* a key without the index: looked up */
			memset(&filed, 0, sizeof(filed));
			assert_int_equal(cs_decode_filed(l, b.w, size, 0x100,
							 CS_WAIT_NO_EVSEL,
							 &filed), 0);
			assert_memory_equal(&filed, &quick, sizeof(quick));
			/* stitched late, it is decoded into the caller's event as
			 * it stands: another sample of the same event, with every
			 * field its decode would not set left dirty */
			memset(&filed, 0x3c, sizeof(filed));
			filed.type = CS_RECORD_SAMPLE;
			filed.evsel = quick.evsel;
			assert_int_equal(cs_decode_waiting(l, b.w, size, 0x100, &filed), 0);
			assert_memory_equal(&filed, &quick, sizeof(quick));
		}
		cs_evlist_free(l);
		cs_evlist_free(lg);

		/* cut inside the head: one event, so that it is found whatever
		 * the cut leaves of its id */
		{
			void *fix;
			struct rb b;
			struct cs_event ev;
			char want[64];

			one_event(&fix, st, 0);
			l = ((struct fix *)fix)->l;
			head_sample(&b, st, time, 0);
			for (size_t left = 0; left < head; left += 4) {
				rb_resize(&b, 8 + left);
				cs_error_clear(&eb);
				assert_int_equal(cs_decode(l, b.w, 8 + left, 0x100, "t",
							   &ev, &eb), -EBADMSG);
				snprintf(want, sizeof(want), "t: SAMPLE record at "
					 "offset 0x100: %s", want_cut(st, left));
				assert_string_equal(eb.msg, want);
			}
			cs_evlist_free(l);
		}
	}
}

static int setup_ids_and_chain(void **state)
{
	return one_event(state, (WIDE & ~CS_SAMPLE_STREAM_ID) | CS_SAMPLE_CALLCHAIN, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_sample_bit_lands_in_its_field),
		cmocka_unit_test(plain_weight_is_the_same_slot),
		cmocka_unit_test(every_cut_of_a_full_sample_is_ebadmsg),
		cmocka_unit_test(read_without_group_has_fixed_values),
		cmocka_unit_test(branch_stack_without_hw_index_has_no_hw_idx),
		cmocka_unit_test(regs_with_abi_zero_have_no_values),
		cmocka_unit_test(hostile_lengths_are_ebadmsg),
		cmocka_unit_test(raw_size_that_misaligns_is_ebadmsg),
		cmocka_unit_test_setup_teardown(spec_deferred_record_decodes, setup_spec, teardown),
		cmocka_unit_test_setup_teardown(deferred_nr_past_the_trailer_is_ebadmsg, setup_spec, teardown),
		cmocka_unit_test_setup_teardown(trailer_fields_come_from_the_end, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(deferred_record_with_every_trailer_field, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(unterminated_strings_are_ebadmsg, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(mmap2_with_build_id, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(mmap2_build_id_bit_without_build_id_attr_is_the_inode_form, setup_wide_no_build_id, teardown),
		cmocka_unit_test_setup_teardown(fork_exit_lost_ksymbol, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(record_shorter_than_its_trailer_is_ebadmsg, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(every_kernel_type_cut_short_is_ebadmsg_not_a_crash, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(user_and_unknown_types_are_counted_not_refused, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(header_size_disagreeing_with_size_is_ebadmsg, setup_wide, teardown),
		cmocka_unit_test_setup_teardown(sample_ids_are_the_same_on_both_paths,
						setup_ids_and_chain, teardown),
		cmocka_unit_test_setup_teardown(bytes_past_a_samples_fields_are_ebadmsg,
						setup_ids_and_chain, teardown),
		cmocka_unit_test_setup_teardown(sample_decodes_through_its_evsel, setup_wide, teardown),
		cmocka_unit_test(usual_layouts_decode_as_the_general_decoder_does),
		cmocka_unit_test(every_trailer_layout_is_read_alike_on_both_paths),
		cmocka_unit_test(every_sample_head_layout_is_read_alike_on_every_path),
		cmocka_unit_test(head_table_has_the_bits_and_bytes_the_checks_assume),
		cmocka_unit_test_setup_teardown(decoded_again_is_decoded_afresh,
						setup_ids_and_chain, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
