/* test_encode.c - record encoders: the kernel's byte layout, and decode(encode(x)) == x. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "spec_example.h"

#include "lib/write/encode.h"
#include "lib/read/decode.h"
#include "lib/read/evlist.h"
#include "lib/read/bytes.h"
#include "lib/util/errbuf.h"

#define ALL_SAMPLE_BITS (CS_SAMPLE_MAX - 1)


/* SPEC.md's worked example from a real kernel, byte for byte. */
static void deferred_record_is_the_kernel_layout(void **state)
{
	const uint8_t *want = spec_deferred_record;
	struct cs_perf_attr a = {
		.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			       CS_SAMPLE_CALLCHAIN | CS_SAMPLE_PERIOD,
		.flags = CS_ATTR_SAMPLE_ID_ALL,
	};
	uint64_t ips[3] = { 0x7f18fe337fa7, 0x7f18fe330e0f, 0x7f18fe331448 };
	struct cs_deferred d = { .cookie = 0xb00000006, .nr = 3, .ips = ips };
	struct cs_sample_id id = { .pid = 2312, .tid = 2312, .time = 0x1c35e77ae6 };
	uint8_t buf[128];

	(void)state;
	assert_int_equal(cs_encode_deferred(&a, &d, &id, buf, sizeof(buf)), 64);
	assert_memory_equal(buf, want, 64);
}

/* IDENTIFIER opens a sample and closes a trailer; CPU carries a zero u32. */
static void identifier_is_first_in_samples_and_last_in_trailers(void **state)
{
	struct cs_perf_attr a = {
		.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_TID | CS_SAMPLE_CPU |
			       CS_SAMPLE_TIME,
		.flags = CS_ATTR_SAMPLE_ID_ALL,
	};
	struct cs_sample s = { .id = 77, .pid = 1, .tid = 2, .time = 3, .cpu = 5 };
	struct cs_sample_id id = { .id = 77, .pid = 1, .tid = 2, .time = 3, .cpu = 5 };
	uint8_t buf[256];
	long n;

	(void)state;
	n = cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf));
	assert_int_equal(n, 8 + 8 + 8 + 8 + 8);
	assert_int_equal(cs_ld64(buf + 8), 77);
	assert_int_equal(cs_ld32(buf + 16), 1);
	assert_int_equal(cs_ld32(buf + 20), 2);
	assert_int_equal(cs_ld64(buf + 24), 3);
	assert_int_equal(cs_ld32(buf + 32), 5);
	assert_int_equal(cs_ld32(buf + 36), 0);

	n = cs_encode_sample_id(&a, &id, buf, sizeof(buf));
	assert_int_equal(n, 32);
	assert_int_equal(cs_ld32(buf), 1);
	assert_int_equal(cs_ld64(buf + 8), 3);
	assert_int_equal(cs_ld32(buf + 16), 5);
	assert_int_equal(cs_ld64(buf + 24), 77);
}

/* The cap is honoured to the byte, and "too big for you" differs from
 * "too big for any record". */
/* Only the trailer's time changes; a record without one is refused. */
static void set_time_rewrites_the_trailer_time_only(void **state)
{
	struct cs_perf_attr a = {
		.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			       CS_SAMPLE_CPU,
		.flags = CS_ATTR_SAMPLE_ID_ALL,
	};
	struct cs_comm c = { 1, 2, "x" };
	struct cs_sample_id id = { .pid = 1, .tid = 2, .time = 300, .cpu = 5, .id = 77 };
	uint8_t buf[128], before[128];
	long n;

	(void)state;
	n = cs_encode_comm(&a, &c, true, &id, buf, sizeof(buf));
	assert_true(n > 0);
	memcpy(before, buf, (size_t)n);
	assert_int_equal(cs_encode_set_time(&a, buf, (size_t)n, 100), 0);
	/* trailer: pid/tid, time, cpu, identifier */
	assert_int_equal(cs_ld64(buf + n - 24), 100);
	assert_memory_equal(buf, before, (size_t)n - 24);
	assert_memory_equal(buf + n - 16, before + n - 16, 16);
	assert_int_equal(cs_encode_set_time(&a, buf, 16, 100), -EINVAL);
	a.flags = 0;
	assert_int_equal(cs_encode_set_time(&a, buf, (size_t)n, 100), -EINVAL);
}

static void short_buffer_is_enospc_and_untouched_past_cap(void **state)
{
	struct cs_perf_attr a = { .sample_type = CS_SAMPLE_CALLCHAIN };
	uint64_t chain[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static uint64_t big[9000];
	struct cs_sample s = { 0 };
	uint8_t buf[64];

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(cs_encode_sample(&a, &s, chain, 8, buf, 40), -ENOSPC);
	for (size_t i = 40; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xaa);
	assert_int_equal(cs_encode_sample(&a, &s, big, 9000, buf, sizeof(buf)),
			 -EINVAL);
	/* 8 header + 8 nr + 8177 * 8 = 65432: the largest chain that fits */
	static uint8_t huge[65536];

	assert_int_equal(cs_encode_sample(&a, &s, big, 8189, huge, sizeof(huge)),
			 65528);
	assert_int_equal(cs_encode_sample(&a, &s, big, 8190, huge, sizeof(huge)),
			 -EINVAL);
}

static void strings_are_nul_padded_to_8(void **state)
{
	struct cs_perf_attr a = { .sample_type = CS_SAMPLE_TID };
	struct cs_comm c = { .pid = 7, .tid = 8, .comm = "abcdefg" };	/* 8 with NUL */
	struct cs_comm c2 = { .pid = 7, .tid = 8, .comm = "abcdefgh" };	/* 9 */
	uint8_t buf[128];

	(void)state;
	assert_int_equal(cs_encode_comm(&a, &c, false, NULL, buf, sizeof(buf)), 24);
	assert_int_equal(buf[4], 0);			/* misc */
	assert_int_equal(cs_encode_comm(&a, &c2, true, NULL, buf, sizeof(buf)), 32);
	assert_int_equal(cs_ld32(buf + 4) & 0xffff, CS_MISC_COMM_EXEC);
	assert_string_equal((char *)buf + 16, "abcdefgh");
	for (int i = 25; i < 32; i++)
		assert_int_equal(buf[i], 0);
}

/* ---- decode(encode(x)) == x --------------------------------------------- */

static void sample_with_every_bit_round_trips(void **state)
{
	struct cs_perf_attr a = {
		.size = CS_PERF_ATTR_SIZE_VER7,
		.sample_type = ALL_SAMPLE_BITS & ~CS_SAMPLE_WEIGHT,
		.read_format = CS_FORMAT_GROUP | CS_FORMAT_ID |
			       CS_FORMAT_TOTAL_TIME_ENABLED | CS_FORMAT_LOST,
		.branch_sample_type = CS_BRANCH_SAMPLE_HW_INDEX,
		.sample_regs_user = 0x5,	/* two registers */
		.sample_regs_intr = 0x7,	/* three */
		.flags = CS_ATTR_SAMPLE_ID_ALL,
	};
	uint64_t rd[] = { 2, 1000, 11, 111, 0, 22, 222, 1 };	/* nr, enabled, {v,id,lost}x2 */
	uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010,
			     CS_CONTEXT_USER_DEFERRED, 0x1234 };
	uint8_t raw[13] = "tracepoint!!";
	struct cs_branch_entry br[2] = { { 1, 2, 3 }, { 4, 5, 6 } };
	uint64_t uregs[2] = { 0x10, 0x20 }, iregs[3] = { 1, 2, 3 };
	uint8_t stack[16] = { 9, 8, 7 };
	uint64_t aux[2] = { 0xdead, 0xbeef };
	struct cs_sample s = {
		.ip = 0xffffffff81000010, .pid = 10, .tid = 11, .time = 123456789,
		.addr = 0xabc, .id = 42, .stream_id = 43, .cpu = 3, .period = 4000,
		.read = rd, .read_size = 8, .raw = raw, .raw_size = 13,
		.branch_nr = 2, .branch_hw_idx = 7, .branches = br,
		.user_regs_abi = 2, .user_regs = uregs,
		.stack_user_size = 16, .stack_user = stack, .stack_user_dyn_size = 12,
		.weight = 0x0001000200000003, .data_src = 0x55, .transaction = 0x66,
		.intr_regs_abi = 2, .intr_regs = iregs, .phys_addr = 0x77,
		.aux_size = 16, .aux = aux, .cgroup = 88, .data_page_size = 4096,
		.code_page_size = 2 << 20, .misc = CS_MISC_KERNEL | CS_MISC_EXACT_IP,
	};
	struct cs_sample d;
	uint8_t buf[1024];
	long n;

	(void)state;
	n = cs_encode_sample(&a, &s, chain, 4, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(n % 8, 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(cs_decode_sample(&a, buf, (size_t)n, &d), 0);
	assert_int_equal(d.ip, s.ip);
	assert_int_equal(d.pid, 10);
	assert_int_equal(d.tid, 11);
	assert_int_equal(d.time, s.time);
	assert_int_equal(d.addr, s.addr);
	assert_int_equal(d.id, 42);
	assert_int_equal(d.stream_id, 43);
	assert_int_equal(d.cpu, 3);
	assert_int_equal(d.period, 4000);
	assert_int_equal(d.read_size, 8);
	assert_memory_equal(d.read, rd, sizeof(rd));
	assert_int_equal(d.callchain_nr, 4);
	assert_memory_equal(d.callchain, chain, sizeof(chain));
	/* the kernel's padding: 4 + raw_size is a multiple of 8 */
	assert_int_equal(d.raw_size, 20);
	assert_memory_equal(d.raw, raw, 13);
	assert_int_equal(d.branch_nr, 2);
	assert_int_equal(d.branch_hw_idx, 7);
	assert_memory_equal(d.branches, br, sizeof(br));
	assert_int_equal(d.user_regs_abi, 2);
	assert_memory_equal(d.user_regs, uregs, sizeof(uregs));
	assert_int_equal(d.stack_user_size, 16);
	assert_memory_equal(d.stack_user, stack, 16);
	assert_int_equal(d.stack_user_dyn_size, 12);
	assert_int_equal(d.weight, s.weight);
	assert_int_equal(d.data_src, 0x55);
	assert_int_equal(d.transaction, 0x66);
	assert_int_equal(d.intr_regs_abi, 2);
	assert_memory_equal(d.intr_regs, iregs, sizeof(iregs));
	assert_int_equal(d.phys_addr, 0x77);
	assert_int_equal(d.aux_size, 16);
	assert_memory_equal(d.aux, aux, 16);
	assert_int_equal(d.cgroup, 88);
	assert_int_equal(d.data_page_size, 4096);
	assert_int_equal(d.code_page_size, 2 << 20);
}

static void inconsistent_sample_is_refused(void **state)
{
	struct cs_perf_attr a = { .sample_type = CS_SAMPLE_READ,
				  .read_format = CS_FORMAT_ID };
	struct cs_perf_attr st = { .sample_type = CS_SAMPLE_STACK_USER };
	uint64_t rd[3] = { 1, 2, 3 };
	uint8_t stack[12];
	struct cs_sample s = { .read = rd, .read_size = 3 };
	uint8_t buf[256];

	(void)state;
	/* value + id is two u64, not three */
	assert_int_equal(cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf)), -EINVAL);
	s.read_size = 2;
	assert_int_equal(cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf)), 24);
	/* a user stack dump is whole u64s */
	memset(&s, 0, sizeof(s));
	s.stack_user = stack;
	s.stack_user_size = 12;
	assert_int_equal(cs_encode_sample(&st, &s, NULL, 0, buf, sizeof(buf)), -EINVAL);
}

struct rt {
	struct cs_evlist *l;
	struct cs_perf_attr a;
	struct cs_errbuf eb;
	uint8_t buf[1024];
};

static int rt_setup(void **state)
{
	struct rt *t = calloc(1, sizeof(*t));
	uint64_t ids[2] = { 500, 501 };

	assert_non_null(t);
	t->a.size = CS_PERF_ATTR_SIZE_VER7;
	t->a.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			   CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD |
			   CS_SAMPLE_CALLCHAIN | CS_SAMPLE_STREAM_ID;
	t->a.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_MMAP2 | CS_ATTR_COMM | CS_ATTR_BUILD_ID |
		     CS_ATTR_TASK | CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT;
	assert_int_equal(cs_evlist_new(&t->l), 0);
	assert_int_equal(cs_evlist_add(t->l, &t->a, "cpu-clock", ids, 2), 0);
	*state = t;
	return 0;
}

static int rt_teardown(void **state)
{
	struct rt *t = *state;

	cs_evlist_free(t->l);
	free(t);
	return 0;
}

static void decode_ok(struct rt *t, long n, struct cs_event *ev)
{
	assert_true(n > 0);
	assert_int_equal(cs_decode(t->l, t->buf, (size_t)n, 0, "t", ev, &t->eb), 0);
	assert_int_equal(ev->size, n);
}

static void check_id(const struct cs_event *ev, const struct cs_sample_id *id)
{
	assert_true(ev->has_id);
	assert_int_equal(ev->id.pid, id->pid);
	assert_int_equal(ev->id.tid, id->tid);
	assert_int_equal(ev->id.time, id->time);
	assert_int_equal(ev->id.id, id->id);
	assert_int_equal(ev->id.stream_id, id->stream_id);
	assert_int_equal(ev->id.cpu, id->cpu);
}

static void side_band_records_round_trip(void **state)
{
	struct rt *t = *state;
	struct cs_sample_id id = { .pid = 100, .tid = 101, .time = 5555, .id = 501,
				   .stream_id = 9, .cpu = 1 };
	struct cs_comm c = { .pid = 100, .tid = 101, .comm = "worker-thread" };
	struct cs_mmap m = { .pid = 100, .tid = 101, .start = 0x400000,
			     .len = 0x2000, .pgoff = 0x1000, .maj = 8, .min = 1,
			     .ino = 1234, .ino_generation = 5, .prot = 5, .flags = 2,
			     .filename = "/usr/lib/libfoo.so.1" };
	struct cs_mmap mb = m;
	struct cs_fork_exit f = { .pid = 100, .ppid = 1, .tid = 101, .ptid = 1,
				  .time = 5000 };
	struct cs_lost lost = { .id = 501, .lost = 17 };
	struct cs_event ev;

	(void)state;
	decode_ok(t, cs_encode_comm(&t->a, &c, true, &id, t->buf, sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_COMM);
	assert_true(ev.misc & CS_MISC_COMM_EXEC);
	assert_string_equal(ev.comm.comm, "worker-thread");
	assert_int_equal(ev.comm.tid, 101);
	check_id(&ev, &id);

	decode_ok(t, cs_encode_mmap2(&t->a, &m, CS_MISC_USER, &id, t->buf,
				     sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_MMAP2);
	assert_int_equal(ev.mmap.start, 0x400000);
	assert_int_equal(ev.mmap.len, 0x2000);
	assert_int_equal(ev.mmap.pgoff, 0x1000);
	assert_int_equal(ev.mmap.ino, 1234);
	assert_int_equal(ev.mmap.maj, 8);
	assert_int_equal(ev.mmap.prot, 5);
	assert_false(ev.mmap.has_build_id);
	assert_string_equal(ev.mmap.filename, m.filename);
	check_id(&ev, &id);

	mb.has_build_id = true;
	mb.build_id_size = 20;
	for (int i = 0; i < 20; i++)
		mb.build_id[i] = (uint8_t)(0xa0 + i);
	decode_ok(t, cs_encode_mmap2(&t->a, &mb, CS_MISC_USER, &id, t->buf,
				     sizeof(t->buf)), &ev);
	assert_true(ev.misc & CS_MISC_MMAP_BUILD_ID);
	assert_true(ev.mmap.has_build_id);
	assert_int_equal(ev.mmap.build_id_size, 20);
	assert_memory_equal(ev.mmap.build_id, mb.build_id, 20);

	decode_ok(t, cs_encode_mmap(&t->a, &m, CS_MISC_KERNEL, &id, t->buf,
				    sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_MMAP);
	assert_int_equal(ev.mmap.pgoff, 0x1000);
	assert_string_equal(ev.mmap.filename, m.filename);

	decode_ok(t, cs_encode_fork_exit(&t->a, CS_RECORD_FORK, &f, &id, t->buf,
					 sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_FORK);
	assert_int_equal(ev.fork.ppid, 1);
	assert_int_equal(ev.fork.time, 5000);
	decode_ok(t, cs_encode_fork_exit(&t->a, CS_RECORD_EXIT, &f, &id, t->buf,
					 sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_EXIT);
	check_id(&ev, &id);
	assert_int_equal(cs_encode_fork_exit(&t->a, CS_RECORD_COMM, &f, &id, t->buf,
					     sizeof(t->buf)), -EINVAL);

	decode_ok(t, cs_encode_lost(&t->a, &lost, &id, t->buf, sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_LOST);
	assert_int_equal(ev.lost.lost, 17);
	assert_int_equal(ev.lost.id, 501);
}

static void deferred_and_sample_round_trip_with_their_event(void **state)
{
	struct rt *t = *state;
	uint64_t user[4] = { 0x401000, 0x402000, 0x403000, 0x404000 };
	uint64_t chain[5] = { CS_CONTEXT_KERNEL, 0xffffffff81234567,
			      0xffffffff81000abc, CS_CONTEXT_USER_DEFERRED,
			      0x8badf00d12345678 };
	struct cs_deferred d = { .cookie = 0x8badf00d12345678, .nr = 4, .ips = user };
	struct cs_sample_id id = { .pid = 3, .tid = 4, .time = 99, .id = 500, .cpu = 1 };
	struct cs_sample s = { .ip = 0xffffffff81234567, .pid = 3, .tid = 4,
			       .time = 98, .id = 500, .stream_id = 500, .cpu = 0,
			       .period = 250000, .misc = CS_MISC_KERNEL };
	struct cs_event ev;

	(void)state;
	decode_ok(t, cs_encode_deferred(&t->a, &d, &id, t->buf, sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_CALLCHAIN_DEFERRED);
	assert_int_equal(ev.misc, CS_MISC_USER);
	assert_int_equal(ev.deferred.cookie, d.cookie);
	assert_int_equal(ev.deferred.nr, 4);
	assert_memory_equal(ev.deferred.ips, user, sizeof(user));
	assert_non_null(ev.evsel);
	check_id(&ev, &id);

	decode_ok(t, cs_encode_sample(&t->a, &s, chain, 5, t->buf, sizeof(t->buf)), &ev);
	assert_int_equal(ev.type, CS_RECORD_SAMPLE);
	assert_int_equal(ev.sample.callchain_nr, 5);
	assert_memory_equal(ev.sample.callchain, chain, sizeof(chain));
	assert_int_equal(ev.sample.period, 250000);
	assert_int_equal(ev.sample.time, 98);
	assert_int_equal(ev.sample.id, 500);
	assert_non_null(ev.evsel);
	assert_string_equal(ev.evsel->name, "cpu-clock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deferred_record_is_the_kernel_layout),
		cmocka_unit_test(identifier_is_first_in_samples_and_last_in_trailers),
		cmocka_unit_test(set_time_rewrites_the_trailer_time_only),
		cmocka_unit_test(short_buffer_is_enospc_and_untouched_past_cap),
		cmocka_unit_test(strings_are_nul_padded_to_8),
		cmocka_unit_test(sample_with_every_bit_round_trips),
		cmocka_unit_test(inconsistent_sample_is_refused),
		cmocka_unit_test_setup_teardown(side_band_records_round_trip,
						rt_setup, rt_teardown),
		cmocka_unit_test_setup_teardown(deferred_and_sample_round_trip_with_their_event,
						rt_setup, rt_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
