/* test_report.c - report entries and call graphs from hand-made frames. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "outputs/report.h"

static struct cs_frame kf(const char *sym)
{
	return (struct cs_frame){ .cpumode = CS_MISC_KERNEL, .kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = "[kernel.kallsyms]", .kernel = true } };
}

static struct cs_frame uf(const char *sym)
{
	return (struct cs_frame){ .cpumode = CS_MISC_USER, .kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = "/opt/w/work" } };
}

static char *written(struct cs_report *r)
{
	const char *names[] = { "cpu-clock" };
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(cs_report_write(r, m, names, 1), 0);
	fclose(m);
	return text;
}

/* What r writes is want, to the byte. */
static void assert_written(struct cs_report *r, const char *want)
{
	char *t = written(r);

	assert_string_equal(t, want);
	free(t);
}

/* The reports' memory budget: every case runs twice, in memory (0: the
 * default) and in spill mode (1 byte: every stack goes to a temporary
 * file from the first sample), and must write the same text */
static size_t memory;

static int in_memory(void **state)
{
	(void)state;
	memory = 0;
	return 0;
}

static int spilled(void **state)
{
	(void)state;
	memory = 1;
	return 0;
}

static struct cs_report *report(struct cs_report_opts o)
{
	struct cs_report *r;

	if (!o.graph_min_percent)
		o.graph_min_percent = 0.5;
	if (!o.memory)
		o.memory = memory;
	assert_int_equal(cs_report_new(&o, &r), 0);
	return r;
}

/* main -> a -> b (3 samples), main -> a (1), main -> c -> sys (kernel, 4) */
static void add_profile(struct cs_report *r)
{
	struct cs_frame s1[] = { uf("b"), uf("a"), uf("main") };
	struct cs_frame s2[] = { uf("a"), uf("main") };
	struct cs_frame s3[] = { kf("sys"), uf("c"), uf("main") };

	for (int i = 0; i < 3; i++)
		assert_int_equal(cs_report_add(r, 0, 10, 11, "work", s1, NULL, 3, 100), 0);
	assert_int_equal(cs_report_add(r, 0, 10, 11, "work", s2, NULL, 2, 100), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(cs_report_add(r, 0, 10, 12, "work", s3, NULL, 3, 100), 0);
}

static void self_overheads_sum_to_the_samples(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.no_children = true, .graph = CS_REPORT_GRAPH_NONE,
		.show_nr_samples = true });

	(void)state;
	add_profile(r);
	assert_written(r,
		"#\n"
		"# Samples: 8 of event 'cpu-clock'\n"
		"# Event count (approx.): 800\n"
		"#\n"
		"# Overhead  Samples  Command  Shared Object      Symbol \n"
		"# ........  .......  .......  .................  .......\n"
		"#\n"
		"    50.00%        4  work     [kernel.kallsyms]  [k] sys\n"
		"    37.50%        3  work     work               [.] b\n"
		"    12.50%        1  work     work               [.] a\n"
		"\n\n");
	assert_int_equal(cs_report_samples(r, 0), 8);
	assert_int_equal(cs_report_period(r, 0), 800);
	cs_report_free(r);
}

static void children_count_each_sample_once_per_entry(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.graph = CS_REPORT_GRAPH_NONE, .show_nr_samples = true });
	struct cs_frame rec[] = { uf("f"), uf("f"), uf("f"), uf("main") };

	(void)state;
	add_profile(r);
	/* recursion: f is on the stack three times, counted once */
	assert_int_equal(cs_report_add(r, 0, 10, 11, "work", rec, NULL, 4, 800), 0);
	assert_written(r,
		"#\n"
		"# Samples: 9 of event 'cpu-clock'\n"
		"# Event count (approx.): 1600\n"
		"#\n"
		"# Children      Self  Samples  Command  Shared Object      Symbol  \n"
		"# ........  ........  .......  .......  .................  ........\n"
		"#\n"
		"   100.00%     0.00%        9  work     work               [.] main\n"
		"    50.00%    50.00%        1  work     work               [.] f\n"
		"    25.00%    25.00%        4  work     [kernel.kallsyms]  [k] sys\n"
		"    25.00%     6.25%        4  work     work               [.] a\n"
		"    25.00%     0.00%        4  work     work               [.] c\n"
		"    18.75%    18.75%        3  work     work               [.] b\n"
		"\n\n");
	cs_report_free(r);
}

static void sort_keys_split_and_merge_entries(void **state)
{
	struct cs_report_opts o = { .no_children = true,
				    .graph = CS_REPORT_GRAPH_NONE };
	struct cs_report *r;
	char bad[16];

	(void)state;
	assert_int_equal(cs_report_parse_sort(&o, "tid,dso", bad, sizeof(bad)), 0);
	r = report(o);
	add_profile(r);
	assert_written(r,
		"#\n"
		"# Samples: 8 of event 'cpu-clock'\n"
		"# Event count (approx.): 800\n"
		"#\n"
		"# Overhead  Tid  Shared Object    \n"
		"# ........  ...  .................\n"
		"#\n"
		"    50.00%  11   work\n"
		"    50.00%  12   [kernel.kallsyms]\n"
		"\n\n");
	cs_report_free(r);
	assert_int_equal(cs_report_parse_sort(&o, "comm,bogus", bad, sizeof(bad)),
			 -EINVAL);
	assert_string_equal(bad, "bogus");
	assert_int_equal(cs_report_parse_sort(&o, "sym,sym", bad, sizeof(bad)),
			 -EINVAL);
}

static void caller_graph_draws_like_perf(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.no_children = true, .percent_limit = 20 });
	struct cs_frame x[] = { kf("sys"), uf("c"), uf("main") };
	struct cs_frame y[] = { kf("sys"), uf("d"), uf("main") };
	struct cs_frame z[] = { kf("sys"), uf("d"), uf("e"), uf("main") };

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", x, NULL, 3, 1), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", y, NULL, 3, 1), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", z, NULL, 4, 1), 0);
	assert_written(r,
		"#\n"
		"# Samples: 10 of event 'cpu-clock'\n"
		"# Event count (approx.): 10\n"
		"#\n"
		"# Overhead  Command  Shared Object      Symbol \n"
		"# ........  .......  .................  .......\n"
		"#\n"
		"   100.00%  w        [kernel.kallsyms]  [k] sys\n"
		"            |\n"
		"            ---main\n"
		"               |          \n"
		"               |--50.00%--c\n"
		"               |          sys\n"
		"               |          \n"
		"               |--30.00%--d\n"
		"               |          sys\n"
		"               |          \n"
		"                --20.00%--e\n"
		"                          d\n"
		"                          sys\n"
		"\n\n\n");
	cs_report_free(r);
}

static void callee_graph_starts_at_the_entry_and_hides_small_branches(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.no_children = true, .graph = CS_REPORT_GRAPH_CALLEE,
		.graph_min_percent = 25 });
	struct cs_frame x[] = { uf("leaf"), uf("p"), uf("main") };
	struct cs_frame y[] = { uf("leaf"), uf("q"), uf("main") };

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", x, NULL, 3, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", y, NULL, 3, 1), 0);
	assert_written(r,
		"#\n"
		"# Samples: 5 of event 'cpu-clock'\n"
		"# Event count (approx.): 5\n"
		"#\n"
		"# Overhead  Command  Shared Object  Symbol  \n"
		"# ........  .......  .............  ........\n"
		"#\n"
		"   100.00%  w        work           [.] leaf\n"
		"            |\n"
		"            ---leaf\n"
		"               |          \n"
		"                --80.00%--p\n"
		"                          main\n"
		"\n\n\n");
	cs_report_free(r);
}

static void unknown_symbols_and_missing_user_stacks_are_entries(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.graph = CS_REPORT_GRAPH_NONE });
	struct cs_frame a[] = {
		{ .cpumode = CS_MISC_USER, .kind = CS_FRAME_ADDR, .addr = 0x7f0000001234,
		  .loc = { .dso_name = "/lib/libx.so", .dso_addr = 0x1234 } },
		uf("main") };
	struct cs_frame b[] = { kf("schedule"),
		{ .cpumode = CS_MISC_USER, .kind = CS_FRAME_MISSING_USER,
		  .missing = CS_MISSING_LOST } };
	char *t;

	(void)state;
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", a, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", a, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", b, NULL, 2, 1), 0);
	t = written(r);
	assert_non_null(strstr(t, "    66.67%    66.67%  w        libx.so            [.] 0x0000000000001234\n"));
	assert_non_null(strstr(t, "    33.33%     0.00%  w        [unknown]          [.] [user stack missing: lost]\n"));
	assert_non_null(strstr(t, "    33.33%    33.33%  w        [kernel.kallsyms]  [k] schedule\n"));
	free(t);
	cs_report_free(r);
}

static void events_get_sections_of_their_own(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.no_children = true, .graph = CS_REPORT_GRAPH_NONE });
	struct cs_frame a[] = { uf("main") };
	const char *names[] = { "cpu-clock", "dummy:u", "task-clock" };
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", a, NULL, 1, 10), 0);
	assert_int_equal(cs_report_add(r, 2, 1, 1, "w", a, NULL, 1, 30), 0);
	assert_int_equal(cs_report_add(r, 2, 1, 1, "w", a, NULL, 1, 30), 0);
	m = open_memstream(&text, &len);
	assert_int_equal(cs_report_write(r, m, names, 3), 0);
	fclose(m);
	assert_non_null(strstr(text, "# Samples: 1 of event 'cpu-clock'\n# Event count (approx.): 10\n"));
	assert_null(strstr(text, "dummy:u"));
	assert_non_null(strstr(text, "# Samples: 2 of event 'task-clock'\n# Event count (approx.): 60\n"));
	free(text);
	cs_report_free(r);
}

/* perf's rule: an entry's graph shows whole stacks where it is innermost,
 * and from its outermost call down where it is a caller */
static void children_graph_starts_at_the_outermost_call(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){ 0 });
	struct cs_frame s[] = { uf("leaf"), uf("r"), uf("r"), uf("main") };
	char *t;

	(void)state;
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", s, NULL, 4, 1), 0);
	t = written(r);
	assert_non_null(strstr(t,
		"   100.00%   100.00%  w        work           [.] leaf\n"
		"            |\n"
		"            ---main\n"
		"               r\n"
		"               r\n"
		"               leaf\n"
		"\n"
		"   100.00%     0.00%  w        work           [.] main\n"
		"            |\n"
		"            ---main\n"
		"               r\n"
		"               r\n"
		"               leaf\n"
		"\n"
		"   100.00%     0.00%  w        work           [.] r\n"
		"            |\n"
		"            ---r\n"
		"               r\n"
		"               leaf\n"));
	free(t);
	cs_report_free(r);
}

/* inlined functions are frames of the graph after the function they sit
 * in, "(inlined)" unless named as it; never entries */
static void inlined_functions_show_in_graphs_only(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){ .no_children = true });
	struct cs_frame s[] = { kf("sys"), uf("__read_inline"), uf("w"), uf("w"),
				uf("main") };
	uint8_t inl[] = { 0, CS_OUT_INLINED, CS_OUT_INLINED_SAME, 0, 0 };
	char *t;

	(void)state;
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", s, inl, 5, 1), 0);
	t = written(r);
	assert_non_null(strstr(t,
		"   100.00%  w        [kernel.kallsyms]  [k] sys\n"
		"            |\n"
		"            ---main\n"
		"               w\n"
		"               w\n"
		"               __read_inline (inlined)\n"
		"               sys\n"));
	free(t);
	cs_report_free(r);

	/* a sample in user mode: the entry is the function, not what was
	 * inlined into it */
	r = report((struct cs_report_opts){ .graph = CS_REPORT_GRAPH_NONE });
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", s + 1, inl + 1, 4, 1), 0);
	t = written(r);
	assert_non_null(strstr(t, "   100.00%   100.00%  w        work           [.] w\n"));
	assert_null(strstr(t, "__read_inline"));
	free(t);
	cs_report_free(r);
}

/* Two local functions of one name (a static function in two files) are
 * two entries, told apart by their start, as perf does; an address
 * without a symbol is one entry, named by its address in the binary,
 * whether it is a sample's own ip or a caller's (perf 6.1 names the first
 * by its file offset and the second by its address: two entries). */
static void same_names_and_unnamed_addresses(void **state)
{
	struct cs_report *r = report((struct cs_report_opts){
		.graph = CS_REPORT_GRAPH_NONE });
	struct cs_frame one = uf("honor"), two = uf("honor"), main = uf("main");
	struct cs_frame bare = { .cpumode = CS_MISC_USER, .kind = CS_FRAME_ADDR,
		.addr = 0x55550000632ed0,
		.loc = { .dso_name = "/opt/w/work", .dso_addr = 0x632ed0 } };
	struct cs_frame a[2], b[2], c[2], d[1];
	char *t;

	(void)state;
	one.loc.sym_start = 0x1000;
	two.loc.sym_start = 0x2000;
	a[0] = one, a[1] = main;
	b[0] = two, b[1] = main;
	c[0] = one, c[1] = bare;
	d[0] = bare;
	assert_int_equal(cs_report_add(r, 0, 1, 1, "w", a, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 2, 2, "w", b, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 2, 2, "w", b, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 3, 3, "w", c, NULL, 2, 1), 0);
	assert_int_equal(cs_report_add(r, 0, 4, 4, "w", d, NULL, 1, 1), 0);
	t = written(r);
	assert_non_null(strstr(t,
		"    60.00%     0.00%  w        work           [.] main\n"
		"    40.00%    40.00%  w        work           [.] honor\n"
		"    40.00%    40.00%  w        work           [.] honor\n"
		"    40.00%    20.00%  w        work           [.] 0x0000000000632ed0\n"));
	free(t);
	cs_report_free(r);
}

/* Addresses without a symbol that weigh the same are in the order of
 * their values: near ones (sorted as one word each, their spread and
 * frame id packed together) and ones far apart (sorted as two words) */
static void unnamed_addresses_sort_by_value_near_or_far(void **state)
{
	static const uint64_t addrs[2][3] = {
		{ 0x7f00, 0x10, 0x7e00 },
		{ 0xffffffffffff0000ULL, 0x10, 0x7f00 },
	};
	static const char *const want[2] = {
		"    33.33%  [.] 0x0000000000000010\n"
		"    33.33%  [.] 0x0000000000007e00\n"
		"    33.33%  [.] 0x0000000000007f00\n",
		"    33.33%  [.] 0x0000000000000010\n"
		"    33.33%  [.] 0x0000000000007f00\n"
		"    33.33%  [.] 0xffffffffffff0000\n",
	};

	(void)state;
	for (int c = 0; c < 2; c++) {
		struct cs_report_opts o = { .graph = CS_REPORT_GRAPH_NONE,
					    .no_children = true, .nr_sort = 1,
					    .sort = { CS_REPORT_SYM } };
		struct cs_report *r = report(o);
		char *t;

		for (int i = 0; i < 3; i++) {
			struct cs_frame f = { .cpumode = CS_MISC_USER,
				.kind = CS_FRAME_ADDR, .addr = addrs[c][i] };

			assert_int_equal(cs_report_add(r, 0, 1, 1, "w", &f, NULL, 1, 1), 0);
		}
		t = written(r);
		assert_non_null(strstr(t, want[c]));
		free(t);
		cs_report_free(r);
	}
}

/* An entry of samples that weigh nothing is still shown, after the
 * others; entries under --percent-limit are not */
static void weightless_entries_are_shown_last(void **state)
{
	struct cs_frame a[] = { uf("a") }, b[] = { uf("b") }, c[] = { uf("c") };

	(void)state;
	for (int limit = 0; limit < 2; limit++) {
		struct cs_report *r = report((struct cs_report_opts){
			.graph = CS_REPORT_GRAPH_NONE, .no_children = true,
			.nr_sort = 1, .sort = { CS_REPORT_SYM },
			.percent_limit = limit ? 10 : 0 });
		char *t;

		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", b, NULL, 1, 0), 0);
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", a, NULL, 1, 95), 0);
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", c, NULL, 1, 5), 0);
		t = written(r);
		assert_non_null(strstr(t, limit ?
			"#\n    95.00%  [.] a\n\n" :
			"#\n    95.00%  [.] a\n     5.00%  [.] c\n     0.00%  [.] b\n\n"));
		free(t);
		cs_report_free(r);
	}
}

/* A fake resolver: names address A "a" and B "b" and counts its calls */
static void fake_resolve(void *ctx, uint32_t pid, struct cs_frame *f)
{
	(*(int *)ctx)++;
	(void)pid;
	f->loc = (struct cs_location){ .sym = f->addr == 0xa0 ? "a" : "b",
				       .sym_start = f->addr,
				       .dso_name = "/opt/w/work" };
}

/* cs_report_add_walked() resolves an address once per address space and
 * reports what cs_report_add() reports given the resolved frames */
static void walked_frames_resolve_once_per_space(void **state)
{
	struct cs_report_opts o = { .graph = CS_REPORT_GRAPH_CALLER };
	struct cs_report *w = report(o), *r = report(o);
	struct cs_frame walked[2], resolved[2];
	uint64_t space1[] = { 7, 7 }, space2[] = { 8, 8 };
	int calls = 0, unused = 0;
	char *tw, *tr;

	(void)state;
	for (int i = 0; i < 3; i++) {
		walked[0] = (struct cs_frame){ .addr = 0xb0, .cpumode = CS_MISC_USER };
		walked[1] = (struct cs_frame){ .addr = 0xa0, .cpumode = CS_MISC_USER };
		assert_int_equal(cs_report_add_walked(w, 0, CS_OFF_CPU_NONE, 1, 1, "w",
			walked, i == 2 ? space2 : space1, 2, 1, fake_resolve,
			&calls), 0);
		resolved[0] = walked[0];
		resolved[1] = walked[1];
		fake_resolve(&unused, 1, &resolved[0]);
		fake_resolve(&unused, 1, &resolved[1]);
		assert_int_equal(cs_report_add(r, 0, 1, 1, "w", resolved, NULL, 2, 1), 0);
	}
	assert_int_equal(calls, 4);
	tw = written(w);
	tr = written(r);
	assert_string_equal(tw, tr);
	free(tw);
	free(tr);
	cs_report_free(w);
	cs_report_free(r);
}

/* With jobs, samples are counted on a thread of their own: the same
 * text, a comm the caller reuses taken as it was when added, a stack of
 * CS_FRAMES_MAX frames (more than a batch of the hand-off) whole, walked
 * frames resolved. */
static char *threaded_profile(unsigned int jobs, size_t budget)
{
	static const char *const syms[] = { "a", "b", "c", "d", "e", "f", "g" };
	struct cs_report *r = report((struct cs_report_opts){
		.jobs = jobs, .graph = CS_REPORT_GRAPH_CALLER,
		.graph_min_percent = 0.01, .memory = budget });
	struct cs_frame *deep = malloc(CS_FRAMES_MAX * sizeof(*deep));
	uint8_t inl[3] = { CS_OUT_INLINED, 0, 0 };
	char comm[16];
	char *t;
	int calls = 0;

	assert_non_null(deep);
	for (size_t i = 0; i < CS_FRAMES_MAX; i++)
		deep[i] = uf(syms[i % 7]);
	for (unsigned int i = 0; i < 30000; i++) {
		struct cs_frame f[3] = { uf(syms[i % 7]), uf(syms[i % 5]), uf("main") };

		snprintf(comm, sizeof(comm), "w%u", i % 3);
		if (i % 4 == 0)
			f[0] = kf(syms[i % 6]);
		assert_int_equal(cs_report_add(r, i % 2, 10 + i % 3, 11, comm, f,
					       i % 11 ? NULL : inl, 3, 1 + i % 9), 0);
		if (i % 10000 == 0)
			assert_int_equal(cs_report_add(r, 0, 10, 11, comm, deep, NULL,
						       CS_FRAMES_MAX, 5), 0);
		if (i % 3 == 0) {
			struct cs_frame w[2] = {
				{ .addr = 0xa0 + (i % 2) * 0x10, .cpumode = CS_MISC_USER },
				{ .addr = 0xa0, .cpumode = CS_MISC_USER } };
			uint64_t space[2] = { 7 + i % 2, 7 };

			assert_int_equal(cs_report_add_walked(r, 0, CS_OFF_CPU_NONE,
				1, 1, comm, w, space, 2, 2, fake_resolve, &calls), 0);
		}
	}
	assert_int_equal(cs_report_flush(r), 0);
	assert_int_equal(cs_report_samples(r, 0), 25003);
	t = written(r);
	free(deep);
	cs_report_free(r);
	return t;
}

static void a_thread_of_aggregation_writes_the_same_report(void **state)
{
	char *one = threaded_profile(1, 0), *two = threaded_profile(2, 0);

	(void)state;
	assert_true(strlen(one) > 1000);
	assert_string_equal(one, two);
	free(one);
	free(two);
}

/* Spill mode (report_external.c) against the tables, on the profile
 * above: every stack spilled, or the first ones counted in memory (a
 * budget of 64 KiB) and the rest spilled, with and without the
 * aggregation's thread */
static void spill_mode_writes_what_the_tables_write(void **state)
{
	char *mem = threaded_profile(1, (size_t)1 << 40);

	(void)state;
	for (int i = 0; i < 3; i++) {
		char *ext = threaded_profile(i == 2 ? 2 : 1, i ? 1 : 64 << 10);

		assert_string_equal(mem, ext);
		free(ext);
	}
	free(mem);
}

/* A profile of distinct stacks, as the all-random ones: every sample
 * brings two new frames. progress_total 0: no progress given; else sample
 * i is i of progress_total through the input. Its text, and the line
 * that says how it was made in *note. */
#define DISTINCT_SAMPLES 3000
static char *distinct_profile(unsigned int jobs, size_t budget,
			      uint64_t progress_total, char **note)
{
	struct cs_report *r = report((struct cs_report_opts){
		.jobs = jobs, .graph = CS_REPORT_GRAPH_CALLER, .memory = budget });
	char *t;

	for (unsigned int i = 0; i < DISTINCT_SAMPLES; i++) {
		struct cs_frame f[3] = { uf("leaf"), uf("mid"), uf("main") };

		f[0].loc.sym_start = 0x1000 + 2 * i;
		f[1].loc.sym_start = 0x1001 + 2 * i;
		if (progress_total)
			cs_report_progress(r, i, progress_total);
		assert_int_equal(cs_report_add(r, 0, 10, 11, "w", f, NULL, 3,
					       1 + i % 7), 0);
	}
	t = written(r);
	assert_non_null(cs_report_memory_note(r));
	*note = strdup(cs_report_memory_note(r));
	cs_report_free(r);
	return t;
}

/* The bytes after "what" in note, or SIZE_MAX */
static size_t note_bytes(const char *note, const char *what)
{
	const char *p = strstr(note, what);

	return p ? strtoul(p + strlen(what), NULL, 10) : SIZE_MAX;
}

/* Tables that pass 7/8 of the budget while the input read so far says
 * they will end past 5/4 of it go to the temporary file then, under the
 * budget (so that the rest of the process fits beside them); those it
 * says will end past twice the budget go at half of it; tables that will
 * end within it stay in memory. The same text every way. */
static void tables_projected_far_past_the_budget_spill_early(void **state)
{
	char *note, *mem = distinct_profile(1, (size_t)1 << 30, 0, &note);
	size_t tables, budget;
	const char *p = strstr(note, "tables of ");

	(void)state;
	assert_non_null(p);
	tables = strtoul(p + strlen("tables of "), NULL, 10);
	assert_true(tables > 64 << 10);
	free(note);
	/* the tables end within the budget, past 7/8 of it */
	budget = tables + tables / 20;
	for (unsigned int jobs = 1; jobs <= 2; jobs++) {
		/* the input is 8 times what these samples are of it: at half
		 * the budget, the tables project to 7.6 times it */
		char *t = distinct_profile(jobs, budget, 8 * DISTINCT_SAMPLES, &note);

		assert_string_equal(t, mem);
		assert_non_null(strstr(note, "from a temporary file: the tables "
				       "were projected past twice the budget"));
		assert_true(note_bytes(note, " samples (") < budget / 8 * 5);
		free(t);
		free(note);
		/* 3/2 of them: 1.43 times the budget, decided at 7/8 of it */
		t = distinct_profile(jobs, budget, 3 * DISTINCT_SAMPLES / 2, &note);
		assert_string_equal(t, mem);
		assert_non_null(strstr(note, "from a temporary file: the tables "
				       "were projected past 5/4 of the budget"));
		assert_true(note_bytes(note, " samples (") > budget / 2);
		free(t);
		free(note);
		/* these samples are the whole input */
		t = distinct_profile(jobs, budget, DISTINCT_SAMPLES, &note);
		assert_string_equal(t, mem);
		assert_non_null(strstr(note, "in memory: "));
		free(t);
		free(note);
	}
	free(mem);
}

/* Not knowing where the input ends (a pipe), or told it ends between the
 * budget and 5/4 of it, tables past 7/8 of the budget stop growing and
 * the samples after are set aside; at the end, those that would take the
 * tables past the budget send them to the file (never past it), and
 * those that fit are taken back. The same text every way. */
static void tables_past_seven_eighths_set_samples_aside(void **state)
{
	char *note, *mem = distinct_profile(1, (size_t)1 << 30, 0, &note);
	size_t tables = note_bytes(note, "tables of ");

	(void)state;
	assert_true(tables > 64 << 10 && tables != SIZE_MAX);
	free(note);
	for (unsigned int jobs = 1; jobs <= 2; jobs++) {
		/* the tables would end a little past the budget (1.05 of it):
		 * as a pipe's, and as a file's projected so */
		for (unsigned int known = 0; known <= 1; known++) {
			size_t budget = tables - tables / 20;
			char *t = distinct_profile(jobs, budget, known ?
						   DISTINCT_SAMPLES : 0, &note);

			assert_string_equal(t, mem);
			assert_non_null(strstr(note, "from a temporary file: the "
					       "tables passed 7/8 of the budget"));
			assert_true(note_bytes(note, "the tables at most ") <= budget);
			free(t);
			free(note);
		}
		/* they would end at twice the budget: once the samples set
		 * aside are as many again as 3/7 of those before (a growth
		 * to 5/4 of the budget), the tables go, not at the end */
		{
			size_t budget = tables / 2;
			char *t = distinct_profile(jobs, budget, 0, &note);

			assert_string_equal(t, mem);
			assert_non_null(strstr(note, "samples set aside since would"));
			assert_true(note_bytes(note, "the tables at most ") <= budget);
			free(t);
			free(note);
		}
		/* they end within the budget: all taken back */
		char *t = distinct_profile(jobs, tables + tables / 20, 0, &note);

		assert_string_equal(t, mem);
		assert_non_null(strstr(note, "in memory: "));
		assert_non_null(strstr(note, "taken back"));
		free(t);
		free(note);
	}
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(self_overheads_sum_to_the_samples),
		cmocka_unit_test(children_count_each_sample_once_per_entry),
		cmocka_unit_test(sort_keys_split_and_merge_entries),
		cmocka_unit_test(caller_graph_draws_like_perf),
		cmocka_unit_test(callee_graph_starts_at_the_entry_and_hides_small_branches),
		cmocka_unit_test(unknown_symbols_and_missing_user_stacks_are_entries),
		cmocka_unit_test(events_get_sections_of_their_own),
		cmocka_unit_test(children_graph_starts_at_the_outermost_call),
		cmocka_unit_test(inlined_functions_show_in_graphs_only),
		cmocka_unit_test(same_names_and_unnamed_addresses),
		cmocka_unit_test(unnamed_addresses_sort_by_value_near_or_far),
		cmocka_unit_test(weightless_entries_are_shown_last),
		cmocka_unit_test(walked_frames_resolve_once_per_space),
		cmocka_unit_test(a_thread_of_aggregation_writes_the_same_report),
		cmocka_unit_test(spill_mode_writes_what_the_tables_write),
		cmocka_unit_test(tables_projected_far_past_the_budget_spill_early),
		cmocka_unit_test(tables_past_seven_eighths_set_samples_aside),
	};
	int failed = cmocka_run_group_tests_name("report in memory", tests,
						 in_memory, NULL);

	return failed + cmocka_run_group_tests_name("report in spill mode", tests,
						    spilled, NULL);
}
