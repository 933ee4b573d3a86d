/* test_machine.c - threads, maps, dsos and resolved frames. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "lib/machine/dso.h"
#include "lib/machine/machine.h"
#include "lib/machine/maps.h"
#include "lib/symbols/elfimg.h"
#include "lib/machine/frames.h"

#define PID 100

/* ---- maps ------------------------------------------------------------------ */

static struct cs_dso *fake_dso(int n)
{
	return (struct cs_dso *)(uintptr_t)(0x1000 * n);
}

static void overlapping_mmap_splits_and_replaces(void **state)
{
	struct cs_maps m = { 0 };
	const struct cs_map *x;

	(void)state;
	assert_int_equal(cs_maps_insert(&m, 0x10000, 0x40000, 0, fake_dso(1), true), 0);
	/* a new mapping in the middle cuts the old one in two */
	assert_int_equal(cs_maps_insert(&m, 0x20000, 0x10000, 0x500, fake_dso(2), true), 0);
	assert_int_equal(m.nr, 3);
	x = cs_maps_find(&m, 0x1ffff);
	assert_ptr_equal(x->dso, fake_dso(1));
	assert_int_equal(x->end, 0x20000);
	x = cs_maps_find(&m, 0x20000);
	assert_ptr_equal(x->dso, fake_dso(2));
	assert_int_equal(x->pgoff, 0x500);
	x = cs_maps_find(&m, 0x30000);
	assert_ptr_equal(x->dso, fake_dso(1));
	/* the right part keeps its place in the file */
	assert_int_equal(x->pgoff, 0x20000);
	assert_int_equal(x->start, 0x30000);
	assert_null(cs_maps_find(&m, 0x50000));
	assert_null(cs_maps_find(&m, 0xffff));
	/* one mapping over all of them replaces them */
	assert_int_equal(cs_maps_insert(&m, 0x8000, 0x50000, 0, fake_dso(3), true), 0);
	assert_int_equal(m.nr, 1);
	assert_ptr_equal(cs_maps_find(&m, 0x30000)->dso, fake_dso(3));
	/* overlap at the left edge only */
	assert_int_equal(cs_maps_insert(&m, 0x4000, 0x5000, 0, fake_dso(4), true), 0);
	assert_int_equal(m.nr, 2);
	x = cs_maps_find(&m, 0x9000);
	assert_ptr_equal(x->dso, fake_dso(3));
	assert_int_equal(x->start, 0x9000);
	assert_int_equal(x->pgoff, 0x1000);
	cs_maps_clear(&m);
}

/* A data map over code (an mprotect() of JIT pages, a stale or garbled
 * record) fills only the gaps around it: code stays code. Code over data
 * replaces it, as mmap() does. */
static void data_map_never_covers_code(void **state)
{
	struct cs_maps m = { 0 };
	const struct cs_map *x;

	(void)state;
	assert_int_equal(cs_maps_insert(&m, 0x20000, 0x10000, 0x1000, fake_dso(1), true), 0);
	assert_int_equal(cs_maps_insert(&m, 0x40000, 0x10000, 0x3000, fake_dso(2), true), 0);
	/* one data map over both and the gaps around them */
	assert_int_equal(cs_maps_insert(&m, 0x10000, 0x50000, 0, fake_dso(3), false), 0);
	assert_int_equal(m.nr, 5);
	x = cs_maps_find(&m, 0x20010);
	assert_ptr_equal(x->dso, fake_dso(1));
	assert_int_equal(x->start, 0x20000);
	assert_int_equal(x->end, 0x30000);
	assert_int_equal(x->pgoff, 0x1000);
	assert_true(x->exec);
	assert_ptr_equal(cs_maps_find(&m, 0x4ffff)->dso, fake_dso(2));
	/* the data map's pieces keep their place in its file */
	x = cs_maps_find(&m, 0x30000);
	assert_ptr_equal(x->dso, fake_dso(3));
	assert_false(x->exec);
	assert_int_equal(x->end, 0x40000);
	assert_int_equal(x->pgoff, 0x20000);
	assert_int_equal(cs_maps_find(&m, 0x50000)->pgoff, 0x40000);
	assert_int_equal(cs_maps_find(&m, 0x10000)->end, 0x20000);
	/* entirely inside code: nothing changes */
	assert_int_equal(cs_maps_insert(&m, 0x21000, 0x1000, 0, fake_dso(4), false), 0);
	assert_int_equal(m.nr, 5);
	assert_ptr_equal(cs_maps_find(&m, 0x21000)->dso, fake_dso(1));
	/* data over data replaces it */
	assert_int_equal(cs_maps_insert(&m, 0x30000, 0x8000, 0, fake_dso(5), false), 0);
	assert_ptr_equal(cs_maps_find(&m, 0x30000)->dso, fake_dso(5));
	assert_ptr_equal(cs_maps_find(&m, 0x38000)->dso, fake_dso(3));
	/* code over data replaces it */
	assert_int_equal(cs_maps_insert(&m, 0x10000, 0x20000, 0, fake_dso(6), true), 0);
	assert_ptr_equal(cs_maps_find(&m, 0x10000)->dso, fake_dso(6));
	assert_ptr_equal(cs_maps_find(&m, 0x2ffff)->dso, fake_dso(6));
	cs_maps_clear(&m);
}

static void many_maps_are_found_by_binary_search(void **state)
{
	struct cs_maps m = { 0 };

	(void)state;
	/* inserted out of order */
	for (int i = 999; i >= 0; i--)
		assert_int_equal(cs_maps_insert(&m, 0x100000 + (uint64_t)i * 0x2000,
						0x1000, 0, fake_dso(i + 1), true), 0);
	assert_int_equal(m.nr, 1000);
	for (int i = 0; i < 1000; i++) {
		uint64_t a = 0x100000 + (uint64_t)i * 0x2000;

		assert_ptr_equal(cs_maps_find(&m, a + 0x800)->dso, fake_dso(i + 1));
		assert_null(cs_maps_find(&m, a + 0x1000));	/* the holes */
	}
	cs_maps_clear(&m);
}

static void every_count_of_maps_finds_each_and_no_hole(void **state)
{
	(void)state;
	/* the search halves what is left: each count from one map up, and
	 * every address around each map (its start, last byte, the hole
	 * after it), asked in an order that the last answer does not give */
	for (int n = 1; n <= 17; n++) {
		struct cs_maps m = { 0 };

		for (int i = 0; i < n; i++)
			assert_int_equal(cs_maps_insert(&m, 0x10000 + (uint64_t)i * 0x3000,
							0x2000, 0, fake_dso(i + 1),
							true), 0);
		for (int i = n - 1; i >= 0; i--) {
			uint64_t a = 0x10000 + (uint64_t)i * 0x3000;

			assert_ptr_equal(cs_maps_find(&m, a)->dso, fake_dso(i + 1));
			assert_null(cs_maps_find(&m, a - 1));
			assert_ptr_equal(cs_maps_find(&m, a + 0x1fff)->dso,
					 fake_dso(i + 1));
			assert_null(cs_maps_find(&m, a + 0x2000));
		}
		assert_null(cs_maps_find(&m, UINT64_MAX));
		assert_null(cs_maps_find(&m, 0));
		cs_maps_clear(&m);
	}
}

/* ---- events ------------------------------------------------------------- */

static struct cs_event comm_event(uint32_t pid, uint32_t tid, const char *comm,
				  bool exec)
{
	struct cs_event ev = { .type = CS_RECORD_COMM };

	ev.misc = exec ? CS_MISC_COMM_EXEC : 0;
	ev.comm.pid = pid;
	ev.comm.tid = tid;
	ev.comm.comm = comm;
	return ev;
}

static struct cs_event fork_event(uint32_t pid, uint32_t ppid, uint32_t tid,
				  uint32_t ptid)
{
	struct cs_event ev = { .type = CS_RECORD_FORK };

	ev.fork.pid = pid;
	ev.fork.ppid = ppid;
	ev.fork.tid = tid;
	ev.fork.ptid = ptid;
	return ev;
}

static struct cs_event mmap_event(uint32_t pid, uint64_t start, uint64_t len,
				  uint64_t pgoff, const char *file,
				  const uint8_t *bid)
{
	struct cs_event ev = { .type = CS_RECORD_MMAP2, .misc = CS_MISC_USER };

	ev.mmap.pid = ev.mmap.tid = pid;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.pgoff = pgoff;
	ev.mmap.filename = file;
	if (bid) {
		ev.mmap.has_build_id = true;
		ev.mmap.build_id_size = 20;
		memcpy(ev.mmap.build_id, bid, 20);
	}
	return ev;
}

static struct cs_machine *new_machine(const char *kallsyms, const char *symfs)
{
	struct cs_machine_opts o = {
		.kallsyms = kallsyms, .symfs = symfs,
		/* not this host: no /proc/kallsyms unless asked */
		.hostname = "elsewhere", .os_release = "0.0",
	};
	struct cs_machine *m;

	assert_int_equal(cs_machine_new(&o, &m), 0);
	return m;
}

static void feed(struct cs_machine *m, struct cs_event ev)
{
	assert_int_equal(cs_machine_event(m, &ev), 0);
}

static void fork_copies_comm_and_maps_threads_share_them(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_location loc;

	(void)state;
	feed(m, comm_event(PID, PID, "parent", false));
	feed(m, mmap_event(PID, 0x400000, 0x1000, 0, "/bin/one", NULL));
	feed(m, fork_event(PID + 1, PID, PID + 1, PID));	/* new process */
	feed(m, fork_event(PID, PID, PID + 2, PID));		/* new thread */
	assert_string_equal(cs_machine_comm(m, PID + 1, PID + 1), "parent");
	assert_string_equal(cs_machine_comm(m, PID, PID + 2), "parent");
	cs_machine_resolve(m, PID + 1, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/one");
	/* the child's later mmap is its own */
	feed(m, mmap_event(PID + 1, 0x400000, 0x1000, 0, "/bin/two", NULL));
	cs_machine_resolve(m, PID + 1, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/two");
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/one");
	/* a thread's comm is its own */
	feed(m, comm_event(PID, PID + 2, "worker", false));
	assert_string_equal(cs_machine_comm(m, PID, PID + 2), "worker");
	assert_string_equal(cs_machine_comm(m, PID, PID), "parent");
	assert_null(cs_machine_comm(m, 7, 7));
	assert_string_equal(cs_machine_comm(m, 0, 0), "swapper");
	cs_machine_free(m);
}

static struct cs_event exit_event(uint32_t pid, uint32_t tid, uint64_t time)
{
	struct cs_event ev = { .type = CS_RECORD_EXIT };

	ev.fork.pid = pid;
	ev.fork.ppid = pid;
	ev.fork.tid = tid;
	ev.fork.ptid = tid;
	ev.fork.time = time;
	return ev;
}

/* The machine remembers the processes and threads it was last asked
 * about (a system-wide profile's samples take turns between CPUs): asked
 * in turn about three, each answer is still its own, and a change made
 * to one of them in between is seen. */
static void processes_and_threads_asked_in_turn_answer_their_own(void **state)
{
	static const char *const comm[3] = { "one", "two", "three" };
	static const char *const bin[3] = { "/bin/one", "/bin/two", "/bin/three" };
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_loc_lens lens;
	struct cs_location loc;

	(void)state;
	for (uint32_t k = 0; k < 3; k++) {
		feed(m, comm_event(PID + k, PID + k, comm[k], false));
		feed(m, mmap_event(PID + k, 0x400000, 0x1000, 0, bin[k], NULL));
	}
	for (int round = 0; round < 4; round++)
		for (uint32_t k = 0; k < 3; k++) {
			uint32_t p = PID + (k + (uint32_t)round) % 3;

			assert_string_equal(cs_machine_comm_at(m, p, p, 10),
					    comm[p - PID]);
			assert_int_not_equal(cs_machine_user_space(m, p), 0);
			cs_machine_resolve_once(m, p, CS_MISC_USER, 0x400010, &loc,
						NULL);
			assert_string_equal(loc.dso_name, bin[p - PID]);
		}
	/* the last two asked about change: the next answers say so */
	feed(m, comm_event(PID + 2, PID + 2, "renamed", false));
	feed(m, mmap_event(PID + 2, 0x400000, 0x1000, 0, "/bin/new", NULL));
	feed(m, exit_event(PID + 1, PID + 1, 20));
	assert_string_equal(cs_machine_comm_at(m, PID + 2, PID + 2, 30), "renamed");
	assert_null(cs_machine_comm_at(m, PID + 1, PID + 1, 30));
	assert_string_equal(cs_machine_comm_at(m, PID + 1, PID + 1, 15), "two");
	cs_machine_resolve_once(m, PID + 2, CS_MISC_USER, 0x400010, &loc, &lens);
	assert_string_equal(loc.dso_name, "/bin/new");
	assert_int_equal(lens.dso, 8);
	assert_int_equal(lens.sym, 0);		/* no symbol: no file */
	/* never seen: no name, no space */
	assert_null(cs_machine_comm_at(m, 7, 7, 10));
	assert_int_equal(cs_machine_user_space(m, 7), 0);
	cs_machine_free(m);
}

/* A dso is found again by its name and build id; names that share their
 * length and last bytes, or one name with two build ids, are each their
 * own, however they come in turn. */
static void paths_alike_in_length_and_tail_are_dsos_of_their_own(void **state)
{
	static const char *const path[3] = {
		"/usr/lib/libaa.so.6", "/usr/lbb/libaa.so.6", "/usr/lib/libaa.so.6",
	};
	uint8_t id[3][20] = { { 1 }, { 1 }, { 2 } };
	const void *bin[3], *again;
	struct cs_machine *m = new_machine(NULL, NULL);
	uint64_t off;

	(void)state;
	for (int round = 0; round < 3; round++)
		for (uint32_t k = 0; k < 3; k++) {
			uint32_t pid = PID + 3 * (uint32_t)round + k;

			feed(m, mmap_event(pid, 0x400000, 0x1000, 0, path[k], id[k]));
			assert_true(cs_machine_user_place(m, pid, 0x400010,
							  round ? &again : &bin[k],
							  &off));
			if (round)
				assert_ptr_equal(again, bin[k]);
		}
	assert_ptr_not_equal(bin[0], bin[1]);
	assert_ptr_not_equal(bin[0], bin[2]);
	assert_ptr_not_equal(bin[1], bin[2]);
	cs_machine_free(m);
}

/* A recorder's FORK for a process that ran before the recording (perf's
 * and ours carry FORK_EXEC): its MMAPs follow, its parent's maps are not
 * its own. A parent map outside the child's would name garbage addresses
 * of the child after the parent's binary. */
static void synthesised_fork_copies_no_maps(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_event fk = fork_event(PID + 1, PID, PID + 1, PID);
	struct cs_location loc;

	(void)state;
	feed(m, comm_event(PID, PID, "gcc", false));
	feed(m, mmap_event(PID, 0x400000, 0x1000, 0, "/usr/bin/gcc", NULL));
	fk.misc = CS_MISC_FORK_EXEC;
	feed(m, fk);
	feed(m, comm_event(PID + 1, PID + 1, "cc1", false));
	feed(m, mmap_event(PID + 1, 0x600000, 0x1000, 0, "/usr/lib/cc1", NULL));
	cs_machine_resolve(m, PID + 1, CS_MISC_USER, 0x600010, &loc);
	assert_string_equal(loc.dso_name, "/usr/lib/cc1");
	cs_machine_resolve(m, PID + 1, CS_MISC_USER, 0x400010, &loc);
	assert_null(loc.dso_name);
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/usr/bin/gcc");
	cs_machine_free(m);
}

static void exec_keeps_maps_until_the_new_image_replaces_them(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_location loc;

	(void)state;
	feed(m, comm_event(PID, PID, "sh", false));
	feed(m, mmap_event(PID, 0x400000, 0x1000, 0, "/bin/sh", NULL));
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/sh");
	/* samples later in the execve call still carry the old stack */
	feed(m, comm_event(PID, PID, "prog", true));
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/sh");
	feed(m, mmap_event(PID, 0x400000, 0x2000, 0, "/bin/prog", NULL));
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x400010, &loc);
	assert_string_equal(loc.dso_name, "/bin/prog");
	assert_string_equal(cs_machine_comm(m, PID, PID), "prog");
	/* EXIT keeps the thread: late samples still need its name */
	struct cs_event ex = fork_event(PID, PID, PID, PID);
	ex.type = CS_RECORD_EXIT;
	feed(m, ex);
	assert_string_equal(cs_machine_comm(m, PID, PID), "prog");
	cs_machine_free(m);
}

/* ---- live binaries ---------------------------------------------------------- */

__attribute__((noinline)) int marker_function_for_machine(int x);
__attribute__((noinline)) int marker_function_for_machine(int x)
{
	return x * 7 + 2;
}

struct self_map {
	uint64_t start, end, pgoff;
	char path[4096];
};

static void self_mapping(uint64_t addr, struct self_map *sm)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		int n = 0;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &s, &e, &off, &n) >= 3 &&
		    addr >= s && addr < e) {
			sm->start = s;
			sm->end = e;
			sm->pgoff = off;
			snprintf(sm->path, sizeof(sm->path), "%s", line + n);
			sm->path[strcspn(sm->path, "\n")] = '\0';
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no mapping holds %#lx", (unsigned long)addr);
}

/* The mapping sm of this very binary, as perf records it for PID, with
 * build id bid (NULL: none). */
static void feed_self_map(struct cs_machine *m, const struct self_map *sm,
			  const uint8_t *bid)
{
	feed(m, mmap_event(PID, sm->start, sm->end - sm->start, sm->pgoff,
			   sm->path, bid));
}

static uint64_t marker_addr(void)
{
	return (uint64_t)(uintptr_t)&marker_function_for_machine + 3;
}

static void self_build_id(uint8_t *bid)
{
	struct cs_elf_info info;

	assert_int_equal(cs_elf_info_read("/proc/self/exe", &info), 0);
	assert_int_equal(info.build_id_size, 20);
	memcpy(bid, info.build_id, 20);
}

static void user_address_resolves_to_symbol_and_dso(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_location loc;
	struct self_map sm;
	uint8_t bid[20];

	(void)state;
	self_mapping(marker_addr(), &sm);
	self_build_id(bid);
	feed_self_map(m, &sm, bid);
	for (int twice = 0; twice < 2; twice++) {	/* second: from the cache */
		cs_machine_resolve(m, PID, CS_MISC_USER, marker_addr(), &loc);
		assert_non_null(loc.sym);
		assert_string_equal(loc.sym, "marker_function_for_machine");
		assert_int_equal(loc.sym_offset, 3);
		assert_string_equal(loc.dso_name, sm.path);
		assert_false(loc.kernel);
		assert_int_equal(loc.build_id_size, 20);
		assert_memory_equal(loc.build_id, bid, 20);
	}
	/* no map: unknown, no dso */
	cs_machine_resolve(m, PID, CS_MISC_USER, 0x1000, &loc);
	assert_null(loc.sym);
	assert_null(loc.dso_name);
	cs_machine_free(m);
}

static void a_binary_mapped_by_two_processes_is_one_place(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	const void *bin[3];
	uint64_t off[3];

	(void)state;
	/* the same library at two addresses, another at the first's */
	feed(m, mmap_event(PID, 0x7f0000000000, 0x10000, 0x2000,
			   "/opt/none/libsame.so", NULL));
	feed(m, mmap_event(PID + 1, 0x7f5500000000, 0x10000, 0x2000,
			   "/opt/none/libsame.so", NULL));
	feed(m, mmap_event(PID + 2, 0x7f0000000000, 0x10000, 0x2000,
			   "/opt/none/libother.so", NULL));
	assert_true(cs_machine_user_place(m, PID, 0x7f0000000123, &bin[0], &off[0]));
	assert_true(cs_machine_user_place(m, PID + 1, 0x7f5500000123, &bin[1],
					  &off[1]));
	assert_true(cs_machine_user_place(m, PID + 2, 0x7f0000000123, &bin[2],
					  &off[2]));
	assert_ptr_equal(bin[0], bin[1]);
	assert_int_equal(off[0], 0x2123);
	assert_int_equal(off[1], 0x2123);
	assert_ptr_not_equal(bin[2], bin[0]);
	assert_int_equal(off[2], 0x2123);
	/* in no map (and a process never seen): no place */
	assert_false(cs_machine_user_place(m, PID, 0x1000, &bin[0], &off[0]));
	assert_false(cs_machine_user_place(m, PID + 9, 0x7f0000000123, &bin[0],
					   &off[0]));
	cs_machine_free(m);
}

/* A place named without the machine (cs_machine_place_resolve(), for
 * another thread) shows what cs_machine_resolve() shows, but the map. */
static void a_place_resolves_as_its_address_does(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_loc_lens lens;
	struct cs_location loc, at;
	struct self_map sm;
	const void *bin;
	uint64_t off;
	uint8_t bid[20];

	(void)state;
	self_mapping(marker_addr(), &sm);
	self_build_id(bid);
	feed_self_map(m, &sm, bid);
	assert_true(cs_machine_user_place(m, PID, marker_addr(), &bin, &off));
	cs_machine_place_load(m, bin);
	cs_machine_place_resolve(bin, off, &at, &lens);
	cs_machine_resolve(m, PID, CS_MISC_USER, marker_addr(), &loc);
	assert_string_equal(at.sym, "marker_function_for_machine");
	assert_int_equal(lens.sym, strlen(at.sym));
	assert_int_equal(lens.dso, strlen(at.dso_name));
	cs_machine_resolve_once(m, PID, CS_MISC_USER, marker_addr(), &at, &lens);
	assert_ptr_equal(at.sym, loc.sym);
	assert_int_equal(lens.sym, strlen(at.sym));
	assert_int_equal(lens.dso, strlen(at.dso_name));
	cs_machine_place_resolve(bin, off, &at, NULL);
	assert_ptr_equal(at.sym, loc.sym);
	assert_int_equal(at.sym_offset, loc.sym_offset);
	assert_int_equal(at.sym_start, loc.sym_start);
	assert_ptr_equal(at.dso_name, loc.dso_name);
	assert_int_equal(at.dso_addr, loc.dso_addr);
	assert_int_equal(at.build_id_size, 20);
	assert_false(at.kernel);
	assert_int_equal(at.map_start, 0);	/* the map is not the place's */
	cs_machine_free(m);
}

static void build_id_mismatch_is_refused(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_location loc;
	struct self_map sm;
	uint8_t bid[20];

	(void)state;
	self_mapping(marker_addr(), &sm);
	self_build_id(bid);
	bid[7] ^= 0x55;				/* another build of the file */
	feed_self_map(m, &sm, bid);
	cs_machine_resolve(m, PID, CS_MISC_USER, marker_addr(), &loc);
	assert_null(loc.sym);
	assert_string_equal(loc.dso_name, sm.path);
	/* and said, so the CLI can tell the user */
	const char *first = NULL;
	assert_int_equal(cs_machine_build_id_mismatches(m, &first), 1);
	assert_string_equal(first, sm.path);
	cs_machine_free(m);
}

/* ---- inlined functions ------------------------------------------------------ */

static uint64_t inlined_site;

__attribute__((noinline)) static void note_return_address(void)
{
	inlined_site = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

/* always inlined: the call above returns into this function's code inside
 * its caller, so DWARF names it at that address */
static volatile int work_after_the_call;

static inline __attribute__((always_inline)) void inlined_helper_for_test(void)
{
	note_return_address();
	work_after_the_call++;	/* code after the call: the return address */
	work_after_the_call++;	/* lies inside the inlined range */
}

__attribute__((noinline)) static void caller_of_inlined_helper(void)
{
	inlined_helper_for_test();
	__asm__ volatile("" ::: "memory");
}

static void inlined_functions_come_from_dwarf(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	const char *names[8];
	struct cs_location loc;
	struct self_map sm;
	size_t n;

	(void)state;
	caller_of_inlined_helper();
	self_mapping(inlined_site, &sm);
	feed_self_map(m, &sm, NULL);
	cs_machine_resolve(m, PID, CS_MISC_USER, inlined_site, &loc);
	assert_non_null(loc.sym);
	assert_string_equal(loc.sym, "caller_of_inlined_helper");
	n = cs_machine_inlines(m, PID, inlined_site, names, 8);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "inlined_helper_for_test");
	/* asked again: the same answer, from the cache */
	assert_int_equal(cs_machine_inlines(m, PID, inlined_site, names, 8), 1);
	/* an address in no inlined call has none */
	assert_int_equal(cs_machine_inlines(m, PID, marker_addr(), names, 8), 0);
	/* kernel addresses have none */
	assert_int_equal(cs_machine_inlines(m, PID, 0xffffffff81000000, names, 8), 0);
	cs_machine_free(m);
}

static char tmpdir[64];

/* copies this test's own binary (a shell's /proc/self/exe is the shell) */
static void copy_self(const char *to)
{
	char cmd[8400], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'",
		 to, self, to);
	assert_int_equal(system(cmd), 0);
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
}

static void resolve_recorded_elsewhere(const char *symfs, const char *recorded,
				       const uint8_t *bid, const char *want)
{
	struct cs_machine *m = new_machine(NULL, symfs);
	struct cs_location loc;
	struct self_map sm;

	self_mapping(marker_addr(), &sm);
	feed(m, mmap_event(PID, sm.start, sm.end - sm.start, sm.pgoff, recorded, bid));
	cs_machine_resolve(m, PID, CS_MISC_USER, marker_addr(), &loc);
	if (want) {
		assert_non_null(loc.sym);
		assert_string_equal(loc.sym, want);
	} else {
		assert_null(loc.sym);
	}
	assert_string_equal(loc.dso_name, recorded);
	cs_machine_free(m);
}

static void symfs_finds_binaries_by_path_and_by_build_id(void **state)
{
	char path[256];
	uint8_t bid[20], hex[41];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cs-test-symfs.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	self_build_id(bid);
	cs_build_id_hex(bid, 20, (char *)hex);

	/* DIR + recorded path */
	snprintf(path, sizeof(path), "%s/opt/app/prog", tmpdir);
	copy_self(path);
	resolve_recorded_elsewhere(tmpdir, "/opt/app/prog", bid,
				   "marker_function_for_machine");
	/* without a build id the file at DIR + path is taken as it is */
	resolve_recorded_elsewhere(tmpdir, "/opt/app/prog", NULL,
				   "marker_function_for_machine");
	rm_tmpdir();

	/* any file in DIR with the build id */
	assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/cs-test-symfs.XXXXXX")));
	snprintf(path, sizeof(path), "%s/some/where/renamed", tmpdir);
	copy_self(path);
	resolve_recorded_elsewhere(tmpdir, "/opt/gone/prog", bid,
				   "marker_function_for_machine");
	/* ... but never a file of another build */
	bid[0] ^= 1;
	resolve_recorded_elsewhere(tmpdir, "/opt/gone/prog", bid, NULL);
	bid[0] ^= 1;
	rm_tmpdir();

	/* DIR/.build-id/xx/rest */
	assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/cs-test-symfs.XXXXXX")));
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", tmpdir, hex, hex + 2);
	copy_self(path);
	resolve_recorded_elsewhere(tmpdir, "/opt/gone/prog", bid,
				   "marker_function_for_machine");
	rm_tmpdir();
}

/* A kernel symbol list of three symbols in a file of its own, named in
 * path (the caller unlinks it). */
static void small_kallsyms(char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "/tmp/cs-test-kallsyms.%d", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81000100 T do_sys_open\n"
	      "ffffffff81000200 t helper\n", f);
	fclose(f);
}

static void kernel_addresses_resolve_through_kallsyms(void **state)
{
	char path[128];
	struct cs_machine *m;
	struct cs_location loc;

	(void)state;
	small_kallsyms(path, sizeof(path));
	m = new_machine(path, NULL);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffff81000123, &loc);
	assert_string_equal(loc.sym, "do_sys_open");
	assert_int_equal(loc.sym_offset, 0x23);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	assert_true(loc.kernel);
	/* a kernel address in the user part of a chain is garbage from an
	 * unwinder, shown unknown as perf does */
	cs_machine_resolve(m, PID, CS_MISC_USER, 0xffffffff81000201, &loc);
	assert_null(loc.sym);
	assert_null(loc.dso_name);
	/* with no cpumode, the address decides */
	cs_machine_resolve(m, PID, CS_MISC_CPUMODE_UNKNOWN, 0xffffffff81000201, &loc);
	assert_string_equal(loc.sym, "helper");
	cs_machine_free(m);
	unlink(path);
	/* not recorded here and no --kallsyms: unknown kernel symbols */
	m = new_machine(NULL, NULL);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffff81000123, &loc);
	assert_null(loc.sym);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	cs_machine_free(m);
}

/* perf's build-id cache keeps a kernel's symbols as
 * ~/.debug/.build-id/ab/cdef.../kallsyms: a profile from elsewhere finds
 * them by the kernel's recorded build id */
static void kernel_symbols_from_the_build_id_cache(void **state)
{
	static const uint8_t kid[20] = { 0xab, 0xcd, 0x01 };
	char path[256], *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	struct cs_machine *m;
	struct cs_location loc;
	FILE *f;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cs-test-home.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "mkdir -p %s/.debug/.build-id/ab/"
		 "cd010000000000000000000000000000000000", tmpdir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/.debug/.build-id/ab/"
		 "cd010000000000000000000000000000000000/kallsyms", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _text\nffffffff81000100 T cached_fn\n", f);
	fclose(f);
	setenv("HOME", tmpdir, 1);
	m = new_machine(NULL, NULL);
	assert_int_equal(cs_machine_add_build_id(m, "[kernel.kallsyms]", kid, 20, true), 0);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffff81000104, &loc);
	assert_string_equal(loc.sym, "cached_fn");
	cs_machine_free(m);
	/* the same kernel booted again elsewhere (KASLR): its _text moved,
	 * the list is refused and says why */
	for (int boot = 0; boot < 2; boot++) {
		struct cs_event kmap = mmap_event(UINT32_MAX, 0xffffffff81000000,
						  0x1000000, boot ? 0xffffffff9a000000 :
						  0xffffffff81000000,
						  "[kernel.kallsyms]_text", NULL);

		kmap.type = CS_RECORD_MMAP;
		kmap.misc = CS_MISC_KERNEL;
		m = new_machine(NULL, NULL);
		assert_int_equal(cs_machine_add_build_id(m, "[kernel.kallsyms]", kid, 20, true), 0);
		feed(m, kmap);
		cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffff81000104, &loc);
		if (boot) {
			assert_null(loc.sym);
			assert_non_null(strstr(cs_machine_kallsyms_error(m), "another boot"));
		} else {
			assert_string_equal(loc.sym, "cached_fn");
		}
		cs_machine_free(m);
	}
	/* another kernel's build id: not these symbols */
	m = new_machine(NULL, NULL);
	assert_int_equal(cs_machine_add_build_id(m, "[kernel.kallsyms]", kid + 1, 19, true), 0);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffff81000104, &loc);
	assert_null(loc.sym);
	cs_machine_free(m);
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
	rm_tmpdir();
}

static void ksymbol_records_name_bpf_programs(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_event ev = { .type = CS_RECORD_KSYMBOL };
	struct cs_location loc;

	(void)state;
	ev.ksymbol.addr = 0xffffffffc0001000;
	ev.ksymbol.len = 0x100;
	ev.ksymbol.name = "bpf_prog_1234_probe";
	feed(m, ev);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffffc0001010, &loc);
	assert_string_equal(loc.sym, "bpf_prog_1234_probe");
	assert_int_equal(loc.sym_offset, 0x10);
	ev.ksymbol.flags = 1;			/* unregister */
	feed(m, ev);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffffc0001010, &loc);
	assert_null(loc.sym);
	cs_machine_free(m);
}

/* A location's names live as long as the machine (machine.h), even when
 * the BPF program it named is unloaded and another takes its place. */
static void ksymbol_names_outlive_an_unregister(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_event ev = { .type = CS_RECORD_KSYMBOL };
	struct cs_location before, after;

	(void)state;
	ev.ksymbol.addr = 0xffffffffc0001000;
	ev.ksymbol.len = 0x100;
	ev.ksymbol.name = "bpf_prog_1_first";
	feed(m, ev);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffffc0001010, &before);
	ev.ksymbol.flags = 1;
	feed(m, ev);
	ev.ksymbol.flags = 0;
	ev.ksymbol.name = "bpf_prog_2_second";
	feed(m, ev);
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffffc0001010, &after);
	assert_string_equal(after.sym, "bpf_prog_2_second");
	assert_string_equal(before.sym, "bpf_prog_1_first");	/* not freed */
	assert_string_equal(before.dso_name, "bpf_prog_1_first");
	cs_machine_free(m);
}

/* Programs registered out of order: each address finds the one it is in,
 * and none between, below or above them. */
static void ksymbols_are_found_by_address(void **state)
{
	static const uint64_t start[] = { 0xffffffffc0005000, 0xffffffffc0001000,
					  0xffffffffc0009000, 0xffffffffc0003000 };
	struct cs_machine *m = new_machine(NULL, NULL);
	struct cs_event ev = { .type = CS_RECORD_KSYMBOL };
	struct cs_location loc;
	char name[4][32];

	(void)state;
	for (int i = 0; i < 4; i++) {
		snprintf(name[i], sizeof(name[i]), "bpf_prog_%d", i);
		ev.ksymbol.addr = start[i];
		ev.ksymbol.len = 0x800;
		ev.ksymbol.name = name[i];
		feed(m, ev);
	}
	for (int i = 0; i < 4; i++) {
		cs_machine_resolve(m, PID, CS_MISC_KERNEL, start[i], &loc);
		assert_string_equal(loc.sym, name[i]);
		assert_int_equal(loc.sym_offset, 0);
		cs_machine_resolve(m, PID, CS_MISC_KERNEL, start[i] + 0x7ff, &loc);
		assert_string_equal(loc.sym, name[i]);
		assert_int_equal(loc.sym_offset, 0x7ff);
		cs_machine_resolve(m, PID, CS_MISC_KERNEL, start[i] + 0x800, &loc);
		assert_null(loc.sym);			/* just past its end */
	}
	cs_machine_resolve(m, PID, CS_MISC_KERNEL, 0xffffffffc0000fff, &loc);
	assert_null(loc.sym);				/* below the first */
	cs_machine_free(m);
}

/* Kernel addresses named without the machine: not a KSYMBOL's, whose
 * name a later record changes; the others as cs_machine_resolve() names
 * them, inside the kernel's map or outside it. */
static void kernel_places_resolve_as_their_addresses_do(void **state)
{
	static const uint64_t addrs[] = { 0xffffffff81000123, 0xffffffff81000201,
					  0xffffffff80000000 };
	struct cs_event ev = { .type = CS_RECORD_KSYMBOL };
	struct cs_loc_lens lens;
	struct cs_location loc, at;
	struct cs_machine *m;
	const void *tab;
	bool outside;
	char path[128];

	(void)state;
	small_kallsyms(path, sizeof(path));
	m = new_machine(path, NULL);
	ev.ksymbol.addr = 0xffffffffc0001000;
	ev.ksymbol.len = 0x100;
	ev.ksymbol.name = "bpf_prog_1234_probe";
	feed(m, ev);
	assert_false(cs_machine_kernel_place(m, 0xffffffffc0001010, &tab, &outside));
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		assert_true(cs_machine_kernel_place(m, addrs[i], &tab, &outside));
		assert_non_null(tab);
		cs_machine_kernel_place_resolve(tab, outside, addrs[i], &at,
						&lens);
		cs_machine_resolve(m, PID, CS_MISC_KERNEL, addrs[i], &loc);
		assert_true(at.kernel);
		assert_int_equal(lens.sym, at.sym ? strlen(at.sym) : 0);
		assert_int_equal(lens.dso, at.dso_name ? strlen(at.dso_name) : 0);
		assert_ptr_equal(at.sym, loc.sym);
		assert_int_equal(at.sym_offset, loc.sym_offset);
		assert_ptr_equal(at.dso_name, loc.dso_name);
	}
	cs_machine_kernel_place_resolve(tab, false, 0xffffffff81000123, &at,
					&lens);
	assert_string_equal(at.sym, "do_sys_open");
	assert_int_equal(lens.sym, 11);
	/* no symbol: outside the kernel's map, no dso either */
	cs_machine_kernel_place_resolve(tab, true, 0xffffffff80000000, &at,
					&lens);
	assert_null(at.sym);
	assert_null(at.dso_name);
	assert_int_equal(lens.sym, 0);
	assert_int_equal(lens.dso, 0);
	cs_machine_kernel_place_resolve(tab, false, 0xffffffff80000000, &at,
					&lens);
	assert_string_equal(at.dso_name, "[kernel.kallsyms]");
	assert_int_equal(lens.dso, 17);
	cs_machine_free(m);
	unlink(path);
	/* no kernel symbols at all */
	m = new_machine(NULL, NULL);
	assert_true(cs_machine_kernel_place(m, addrs[0], &tab, &outside));
	cs_machine_kernel_place_resolve(tab, outside, addrs[0], &at, NULL);
	assert_null(at.sym);
	assert_string_equal(at.dso_name, "[kernel.kallsyms]");
	cs_machine_free(m);
}

/* ---- frames ------------------------------------------------------------------ */

static void frames_follow_markers_cookies_and_missing_parts(void **state)
{
	struct cs_machine *m = new_machine(NULL, NULL);
	uint64_t raw[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010, 0xffffffff81000020,
			   CS_CONTEXT_USER_DEFERRED, 0x300000001 };
	uint64_t merged[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010,
			      CS_CONTEXT_USER, 0x401000, 0x402000 };
	struct cs_event ev = { .type = CS_RECORD_SAMPLE };
	struct cs_stitched s = { .event = &ev };
	struct cs_frame f[8];
	size_t n;

	(void)state;
	ev.sample.pid = ev.sample.tid = PID;
	ev.sample.ip = 0xffffffff81000010;
	ev.sample.misc = CS_MISC_KERNEL;

	/* raw view: the cookie is one frame, never resolved */
	s.chain = raw;
	s.chain_nr = 5;
	s.state = CS_CHAIN_UNMERGED;
	s.cookie = 0x300000001;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[0].cpumode, CS_MISC_KERNEL);
	assert_true(f[0].loc.kernel);
	assert_int_equal(f[2].kind, CS_FRAME_COOKIE);
	assert_int_equal(f[2].addr, 0x300000001);
	assert_null(f[2].loc.dso_name);

	/* merged: markers set the mode of what follows */
	s.chain = merged;
	s.state = CS_CHAIN_STITCHED;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[1].cpumode, CS_MISC_USER);
	assert_int_equal(f[1].addr, 0x401000);
	assert_false(f[1].loc.kernel);

	/* the same chain in two parts (cs_stitched.user): the same frames */
	s.chain_nr = 2;
	s.user = merged + 2;
	s.user_nr = 3;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[0].cpumode, CS_MISC_KERNEL);
	assert_int_equal(f[1].cpumode, CS_MISC_USER);
	assert_int_equal(f[1].addr, 0x401000);
	assert_int_equal(f[2].addr, 0x402000);
	s.user = NULL;
	s.user_nr = 0;

	/* kernel-only: one pseudo-frame with the cookie and why */
	s.chain = raw;
	s.chain_nr = 3;
	s.state = CS_CHAIN_KERNEL_ONLY;
	s.missing = CS_MISSING_EXITED;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[2].kind, CS_FRAME_MISSING_USER);
	assert_int_equal(f[2].missing, CS_MISSING_EXITED);
	assert_int_equal(f[2].addr, 0x300000001);

	/* more frames than room: counted, not written past cap */
	n = cs_frames_resolve(m, &s, f, 1);
	assert_int_equal(n, 3);

	/* a context value the ABI does not define: corrupt, nothing shown */
	uint64_t corrupt[] = { CS_CONTEXT_USER, 0x401000, (uint64_t)-1 };
	s.chain = corrupt;
	s.chain_nr = 3;
	s.state = CS_CHAIN_ORIGINAL;
	assert_int_equal(cs_frames_resolve(m, &s, f, 8), 0);

	/* ... except in the user part of a stitched chain, which came from a
	 * deferred record: JIT code at or above CONTEXT_MAX is an address */
	uint64_t jit[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010,
			   CS_CONTEXT_USER, 0xfffffffffffff100, (uint64_t)-1 };
	s.chain = jit;
	s.chain_nr = 5;
	s.state = CS_CHAIN_STITCHED;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[1].kind, CS_FRAME_ADDR);
	assert_int_equal(f[1].addr, 0xfffffffffffff100);
	assert_int_equal(f[1].cpumode, CS_MISC_USER);
	assert_int_equal(f[2].addr, (uint64_t)-1);
	assert_null(f[2].loc.sym);
	s.chain_nr = 2;			/* and so in two parts */
	s.user = jit + 2;
	s.user_nr = 3;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 3);
	assert_int_equal(f[2].kind, CS_FRAME_ADDR);
	assert_int_equal(f[2].addr, (uint64_t)-1);
	s.user = NULL;
	s.user_nr = 0;

	/* no callchain: the ip */
	s.chain = NULL;
	s.chain_nr = 0;
	s.state = CS_CHAIN_ORIGINAL;
	n = cs_frames_resolve(m, &s, f, 8);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].addr, 0xffffffff81000010);
	assert_int_equal(f[0].cpumode, CS_MISC_KERNEL);
	cs_machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(overlapping_mmap_splits_and_replaces),
		cmocka_unit_test(data_map_never_covers_code),
		cmocka_unit_test(many_maps_are_found_by_binary_search),
		cmocka_unit_test(every_count_of_maps_finds_each_and_no_hole),
		cmocka_unit_test(processes_and_threads_asked_in_turn_answer_their_own),
		cmocka_unit_test(paths_alike_in_length_and_tail_are_dsos_of_their_own),
		cmocka_unit_test(fork_copies_comm_and_maps_threads_share_them),
		cmocka_unit_test(synthesised_fork_copies_no_maps),
		cmocka_unit_test(exec_keeps_maps_until_the_new_image_replaces_them),
		cmocka_unit_test(user_address_resolves_to_symbol_and_dso),
		cmocka_unit_test(a_binary_mapped_by_two_processes_is_one_place),
		cmocka_unit_test(a_place_resolves_as_its_address_does),
		cmocka_unit_test(build_id_mismatch_is_refused),
		cmocka_unit_test(inlined_functions_come_from_dwarf),
		cmocka_unit_test(symfs_finds_binaries_by_path_and_by_build_id),
		cmocka_unit_test(kernel_addresses_resolve_through_kallsyms),
		cmocka_unit_test(kernel_symbols_from_the_build_id_cache),
		cmocka_unit_test(ksymbol_records_name_bpf_programs),
		cmocka_unit_test(ksymbol_names_outlive_an_unregister),
		cmocka_unit_test(ksymbols_are_found_by_address),
		cmocka_unit_test(kernel_places_resolve_as_their_addresses_do),
		cmocka_unit_test(frames_follow_markers_cookies_and_missing_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
