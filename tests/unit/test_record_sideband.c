/* test_record_sideband.c - side band synthesised from /proc and the
 * binaries that samples hit, using this test process as the subject. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "abi/perf_regs.h"
#include "lib/write/encode.h"

#include "record/dsos.h"
#include "record/synth.h"

static struct cs_perf_attr attr = {
	.type = CS_PERF_TYPE_SOFTWARE,
	.size = CS_PERF_ATTR_SIZE_VER7,
	.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
		       CS_SAMPLE_TIME | CS_SAMPLE_CALLCHAIN | CS_SAMPLE_CPU |
		       CS_SAMPLE_PERIOD,
	.flags = CS_ATTR_SAMPLE_ID_ALL,
};

struct sink {
	struct cs_dsos *dsos;
	unsigned forks, comms, mmap2s, mmaps;
	bool saw_exe, saw_comm_self;
	char exe[4096];
	pid_t pid;
};

static int take(void *ctx, const void *rec, size_t size)
{
	struct sink *k = ctx;
	struct cs_perf_event_header h;
	const char *r = rec;

	memcpy(&h, rec, sizeof(h));
	assert_int_equal(h.size, size);
	assert_int_equal(size % 8, 0);
	switch (h.type) {
	case CS_RECORD_FORK:
		k->forks++;
		break;
	case CS_RECORD_COMM:
		k->comms++;
		if (!strncmp(r + 16, "test_record_sid", 15))
			k->saw_comm_self = true;
		break;
	case CS_RECORD_MMAP2:
		k->mmap2s++;
		if (!strcmp(r + 72, k->exe))
			k->saw_exe = true;
		break;
	case CS_RECORD_MMAP:
		k->mmaps++;
		assert_string_equal(r + 40, "[kernel.kallsyms]_text");
		break;
	}
	return k->dsos ? cs_dsos_see(k->dsos, rec, size) : 0;
}

static void sink_init(struct sink *k)
{
	ssize_t n;

	memset(k, 0, sizeof(*k));
	n = readlink("/proc/self/exe", k->exe, sizeof(k->exe) - 1);
	assert_true(n > 0);
	k->exe[n] = '\0';
	k->pid = getpid();
	assert_int_equal(cs_dsos_new(attr.sample_type, &k->dsos), 0);
}

static void synth_init(struct cs_synth *s, struct sink *k)
{
	memset(s, 0, sizeof(*s));
	s->attr = &attr;
	s->id = 99;
	s->emit = take;
	s->ctx = k;
}

static void process_synthesis_names_threads_and_code(void **state)
{
	static struct cs_synth s;
	struct sink k;

	(void)state;
	sink_init(&k);
	synth_init(&s, &k);
	assert_int_equal(cs_synth_process(&s, k.pid), 0);
	assert_true(k.forks >= 1);
	assert_int_equal(k.forks, k.comms);	/* one of each per thread */
	assert_true(k.saw_comm_self);
	assert_true(k.saw_exe);
	assert_true(k.mmap2s >= 2);		/* the test, libc, ... */
	assert_int_equal(s.records, k.forks + k.comms + k.mmap2s);
	cs_dsos_free(k.dsos);
}

static void kernel_map_is_one_mmap_when_addresses_show(void **state)
{
	static struct cs_synth s;
	struct sink k;
	int err;

	(void)state;
	sink_init(&k);
	synth_init(&s, &k);
	err = cs_synth_kernel(&s);
	if (err == -ENOENT)
		skip();		/* kptr_restrict hides _text from us */
	assert_int_equal(err, 0);
	assert_int_equal(k.mmaps, 1);
	cs_dsos_free(k.dsos);
}

/* A user-mode sample of pid at ip, with callchain chain. */
static void sample_at(struct cs_dsos *d, uint32_t pid, uint64_t ip,
		      const uint64_t *chain, uint64_t nr)
{
	uint64_t buf[256];
	struct cs_sample s = { .ip = ip, .pid = pid, .tid = pid, .misc = CS_MISC_USER };
	long n = cs_encode_sample(&attr, &s, chain, nr, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n), 0);
}

static void mmap2_at(struct cs_dsos *d, uint32_t pid, uint64_t start, const char *path)
{
	uint64_t buf[256];
	struct cs_mmap m = { .pid = pid, .tid = pid, .start = start, .len = 0x1000,
			     .prot = PROT_READ | PROT_EXEC, .filename = path };
	struct cs_sample_id id = { .pid = pid, .tid = pid };
	long n = cs_encode_mmap2(&attr, &m, CS_MISC_USER, &id, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n), 0);
}

struct hits {
	unsigned n;
	char paths[8][4096];
	uint8_t ids[8][20];
	size_t sizes[8];
};

static int collect_hit(void *ctx, uint16_t misc, const uint8_t *bid, size_t size,
		       const char *path, const char *src)
{
	struct hits *h = ctx;

	assert_null(src);	/* our own mount namespace: read at path */
	if (misc == CS_MISC_KERNEL)
		return 0;	/* depends on the machine's notes */
	assert_true(h->n < 8);
	strcpy(h->paths[h->n], path);
	memcpy(h->ids[h->n], bid, size);
	h->sizes[h->n++] = size;
	return 0;
}

static void only_binaries_under_samples_get_build_ids(void **state)
{
	struct sink k;
	struct hits h = { 0 };
	uint8_t want[20];
	int n;

	(void)state;
	sink_init(&k);
	n = cs_dsos_read_build_id(k.exe, want, sizeof(want));
	if (n == -ENOENT)
		skip();		/* linked without --build-id */
	assert_true(n > 0);
	mmap2_at(k.dsos, 100, 0x400000, k.exe);
	mmap2_at(k.dsos, 100, 0x800000, "/nonexistent/libnothit.so");
	sample_at(k.dsos, 100, 0x400010, NULL, 0);
	assert_int_equal(cs_dsos_for_each_hit(k.dsos, collect_hit, &h), 0);
	assert_int_equal(h.n, 1);
	assert_string_equal(h.paths[0], k.exe);
	assert_int_equal(h.sizes[0], (size_t)n);
	assert_memory_equal(h.ids[0], want, (size_t)n);
	cs_dsos_free(k.dsos);
}

static void callchain_frames_mark_their_binaries(void **state)
{
	struct sink k;
	struct hits h = { 0 };
	uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000000ULL,
			     CS_CONTEXT_USER, 0x400020, 0x900000 };

	(void)state;
	sink_init(&k);
	mmap2_at(k.dsos, 7, 0x400000, k.exe);
	/* the ip is in no map: only the callchain finds the binary */
	sample_at(k.dsos, 7, 0x12345, chain, 5);
	assert_int_equal(cs_dsos_for_each_hit(k.dsos, collect_hit, &h), 0);
	assert_int_equal(h.n, 1);
	assert_string_equal(h.paths[0], k.exe);
	cs_dsos_free(k.dsos);
}

static void forked_child_runs_its_parents_code(void **state)
{
	struct sink k;
	struct hits h = { 0 };
	uint64_t buf[64];
	struct cs_fork_exit f = { .pid = 200, .ppid = 100, .tid = 200, .ptid = 100 };
	struct cs_sample_id id = { .pid = 200, .tid = 200 };
	long n;

	(void)state;
	sink_init(&k);
	mmap2_at(k.dsos, 100, 0x400000, k.exe);
	n = cs_encode_fork_exit(&attr, CS_RECORD_FORK, &f, &id, buf, sizeof(buf));
	assert_int_equal(cs_dsos_see(k.dsos, buf, (size_t)n), 0);
	sample_at(k.dsos, 200, 0x400010, NULL, 0);
	assert_int_equal(cs_dsos_for_each_hit(k.dsos, collect_hit, &h), 0);
	assert_int_equal(h.n, 1);
	cs_dsos_free(k.dsos);
}

static void exec_forgets_the_old_image(void **state)
{
	struct sink k;
	struct hits h = { 0 };
	uint64_t buf[64];
	struct cs_comm c = { .pid = 100, .tid = 100, .comm = "new" };
	struct cs_sample_id id = { .pid = 100, .tid = 100 };
	long n;

	(void)state;
	sink_init(&k);
	mmap2_at(k.dsos, 100, 0x400000, k.exe);
	n = cs_encode_comm(&attr, &c, true, &id, buf, sizeof(buf));
	assert_int_equal(cs_dsos_see(k.dsos, buf, (size_t)n), 0);
	sample_at(k.dsos, 100, 0x400010, NULL, 0);
	assert_int_equal(cs_dsos_for_each_hit(k.dsos, collect_hit, &h), 0);
	assert_int_equal(h.n, 0);
	cs_dsos_free(k.dsos);
}

/* An executable map whose MMAP2 carries build id {tag, 0, ...}. */
static void mmap2_bid_at(struct cs_dsos *d, const struct cs_perf_attr *a, uint32_t pid,
			 uint64_t start, const char *path, uint8_t tag)
{
	uint64_t buf[256];
	struct cs_mmap m = { .pid = pid, .tid = pid, .start = start, .len = 0x1000,
			     .prot = PROT_READ | PROT_EXEC, .filename = path,
			     .has_build_id = true, .build_id_size = 20,
			     .build_id = { tag } };
	struct cs_sample_id id = { .pid = pid, .tid = pid };
	long n = cs_encode_mmap2(a, &m, CS_MISC_USER, &id, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n), 0);
}

/* --call-graph dwarf: the user frames are unwound later from the copies,
 * so the user ip among the registers and every word of the stack copy
 * (up to dyn_size) that lies in a code map marks its binary. */
static void dwarf_stack_copies_mark_the_binaries_they_name(void **state)
{
	struct cs_perf_attr a = attr;
	struct cs_dsos *d;
	struct hits h = { 0 };
	uint64_t regs[24] = { 0 }, stack[4] = { 0x7ffd00001000, 0xc00100, 0x5,
						0x800100 /* past dyn_size */ };
	uint64_t buf[512];
	struct cs_sample s = {
		.ip = 0xffffffff81000000ULL, .pid = 9, .tid = 9, .misc = CS_MISC_KERNEL,
		.user_regs_abi = CS_PERF_REGS_ABI_64, .user_regs = regs,
		.stack_user_size = sizeof(stack), .stack_user = stack,
		.stack_user_dyn_size = 24,
	};
	int ip = cs_perf_reg_slot(CS_PERF_REGS_X86_64_USER_MASK, CS_PERF_REG_X86_IP);
	long n;

	(void)state;
	a.sample_type |= CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER;
	a.sample_regs_user = CS_PERF_REGS_X86_64_USER_MASK;
	a.sample_stack_user = sizeof(stack);
	assert_int_equal(ip, 8);
	regs[ip] = 0x400010;
	assert_int_equal(cs_dsos_new(a.sample_type, &d), 0);
	cs_dsos_scan_user_stacks(d, a.sample_regs_user);
	mmap2_bid_at(d, &a, 9, 0x400000, "/bin/prog", 1);
	mmap2_bid_at(d, &a, 9, 0x800000, "/lib/libnothit.so", 2);
	mmap2_bid_at(d, &a, 9, 0xc00000, "/lib/libc.so.6", 3);
	n = cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n), 0);
	assert_int_equal(cs_dsos_for_each_hit(d, collect_hit, &h), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.paths[0], "/bin/prog");
	assert_string_equal(h.paths[1], "/lib/libc.so.6");
	assert_int_equal(h.ids[1][0], 3);

	/* a kernel thread's sample: no registers, no copy */
	memset(&h, 0, sizeof(h));
	s.pid = s.tid = 10;
	s.user_regs_abi = CS_PERF_REGS_ABI_NONE;
	s.stack_user_size = 0;
	n = cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n), 0);
	/* a copy cut short is skipped, not read past its end */
	s.pid = s.tid = 9;
	s.user_regs_abi = CS_PERF_REGS_ABI_64;
	s.stack_user_size = sizeof(stack);
	n = cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf));
	assert_int_equal(cs_dsos_see(d, buf, (size_t)n - 16), 0);
	cs_dsos_free(d);
}

static void build_id_of_a_non_elf_file_is_an_error(void **state)
{
	uint8_t bid[20];

	(void)state;
	assert_true(cs_dsos_read_build_id("/proc/self/status", bid, sizeof(bid)) < 0);
	assert_int_equal(cs_dsos_read_build_id("/nonexistent", bid, sizeof(bid)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_synthesis_names_threads_and_code),
		cmocka_unit_test(kernel_map_is_one_mmap_when_addresses_show),
		cmocka_unit_test(only_binaries_under_samples_get_build_ids),
		cmocka_unit_test(callchain_frames_mark_their_binaries),
		cmocka_unit_test(forked_child_runs_its_parents_code),
		cmocka_unit_test(exec_forgets_the_old_image),
		cmocka_unit_test(dwarf_stack_copies_mark_the_binaries_they_name),
		cmocka_unit_test(build_id_of_a_non_elf_file_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
