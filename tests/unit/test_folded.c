/* test_folded.c - folded stacks from hand-made frames (src/outputs/folded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "outputs/folded.h"

static struct cs_frame kf(const char *sym)
{
	return (struct cs_frame){ .cpumode = CS_MISC_KERNEL, .kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = "[kernel.kallsyms]", .kernel = true } };
}

static struct cs_frame uf(const char *sym, const char *dso)
{
	return (struct cs_frame){ .cpumode = CS_MISC_USER, .kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = dso } };
}

static struct cs_frame missing(enum cs_missing_reason why)
{
	return (struct cs_frame){ .cpumode = CS_MISC_USER,
		.kind = CS_FRAME_MISSING_USER, .missing = why };
}

static char *written(struct cs_folded *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(cs_folded_write(f, m), 0);
	fclose(m);
	return text;
}

static struct cs_folded *folded(struct cs_folded_opts o)
{
	struct cs_folded *f;

	assert_int_equal(cs_folded_new(&o, &f), 0);
	return f;
}

static void stacks_print_root_first_sorted_with_counts(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ 0 });
	struct cs_frame a[] = { kf("vfs_read"), kf("do_syscall_64"),
				uf("read", "/lib/libc.so.6"), uf("main", "/bin/w") };
	struct cs_frame b[] = { uf("spin", "/bin/w"), uf("main", "/bin/w") };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 4, "w", 100), 0);
	assert_int_equal(cs_folded_add(f, b, 2, "w", 100), 0);
	assert_int_equal(cs_folded_add(f, a, 4, "w", 100), 0);
	t = written(f);
	assert_string_equal(t, "main;read;do_syscall_64;vfs_read 2\n"
			       "main;spin 1\n");
	assert_int_equal(cs_folded_total(f), 3);
	free(t);
	cs_folded_free(f);
}

static void unknown_symbols_are_named_by_dso_like_stackcollapse(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ 0 });
	struct cs_frame a[] = { uf(NULL, "/usr/lib/libfoo.so.1"), uf(NULL, NULL),
				uf("", "/bin/w") };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 3, NULL, 1), 0);
	t = written(f);
	assert_string_equal(t, "[w];[unknown];[libfoo.so.1] 1\n");
	free(t);
	cs_folded_free(f);
}

static void names_are_tidied_and_equal_names_merge(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ 0 });
	struct cs_frame a[] = { uf("ns::f(int)", "/bin/w"), uf("a;b", "/bin/w") };
	struct cs_frame b[] = { uf("ns::f(long)", "/bin/w"), uf("a;b", "/bin/w") };
	struct cs_frame c[] = { uf("(anonymous namespace)::g(int)", "/bin/w"),
				uf("say \"hi\"", "/bin/w") };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 2, NULL, 1), 0);
	assert_int_equal(cs_folded_add(f, b, 2, NULL, 1), 0);
	assert_int_equal(cs_folded_add(f, c, 2, NULL, 1), 0);
	t = written(f);
	assert_string_equal(t, "a:b;ns::f 2\n"
			       "say hi;(anonymous namespace)::g 1\n");
	free(t);
	cs_folded_free(f);
}

static void kernel_only_sample_ends_in_a_marker_frame(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ 0 });
	struct cs_frame a[] = { kf("schedule"), kf("do_syscall_64"),
				missing(CS_MISSING_LOST) };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 3, NULL, 1), 0);
	t = written(f);
	assert_string_equal(t, "[user stack missing: lost];do_syscall_64;schedule 1\n");
	free(t);
	cs_folded_free(f);
}

static void no_kernel_drops_kernel_frames_but_keeps_the_sample(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ .no_kernel = true });
	struct cs_frame a[] = { kf("vfs_read"), uf("read", "/lib/libc.so.6"),
				uf("main", "/bin/w") };
	struct cs_frame b[] = { kf("schedule"), missing(CS_MISSING_END) };
	struct cs_frame c[] = { kf("worker_thread"), kf("kthread") };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 3, NULL, 1), 0);
	assert_int_equal(cs_folded_add(f, b, 2, NULL, 1), 0);
	assert_int_equal(cs_folded_add(f, c, 2, NULL, 1), 0);
	t = written(f);
	assert_string_equal(t, "[kernel] 1\n"
			       "[user stack missing: end] 1\n"
			       "main;read 1\n");
	assert_int_equal(cs_folded_total(f), 3);
	free(t);
	cs_folded_free(f);
}

static void comm_is_the_root_frame_and_annotate_marks_kernel(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ .comm = true,
							       .annotate = true });
	struct cs_frame a[] = { kf("vfs_read"), uf("main", "/bin/w") };
	char comm[16] = "web server";
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 2, comm, 1), 0);
	/* the thread renames itself: earlier samples keep their name */
	strcpy(comm, "other");
	assert_int_equal(cs_folded_add(f, a, 2, comm, 1), 0);
	assert_int_equal(cs_folded_add(f, a, 2, NULL, 1), 0);
	t = written(f);
	assert_string_equal(t, "[unknown];main;vfs_read_[k] 1\n"
			       "other;main;vfs_read_[k] 1\n"
			       "web_server;main;vfs_read_[k] 1\n");
	free(t);
	cs_folded_free(f);
}

static void period_counts_sum_the_periods(void **state)
{
	struct cs_folded *f = folded((struct cs_folded_opts){ .use_period = true });
	struct cs_frame a[] = { uf("main", "/bin/w") };
	char *t;

	(void)state;
	assert_int_equal(cs_folded_add(f, a, 1, NULL, 250000), 0);
	assert_int_equal(cs_folded_add(f, a, 1, NULL, 249000), 0);
	t = written(f);
	assert_string_equal(t, "main 499000\n");
	free(t);
	cs_folded_free(f);
}

static void filters_select_pids_and_tids(void **state)
{
	uint32_t pid_v[] = { 10, 20 }, tid_v[] = { 21 };
	struct cs_id_list pids = { pid_v, 2 }, tids = { tid_v, 1 };
	struct cs_folded *f = folded((struct cs_folded_opts){
		.pids = &pids, .tids = &tids });

	(void)state;
	assert_false(cs_folded_wants(f, 10, 11));
	assert_true(cs_folded_wants(f, 20, 21));
	assert_false(cs_folded_wants(f, 30, 21));
	cs_folded_free(f);
}

/* With jobs, samples are counted on a thread of their own: the same
 * lines, a comm the caller reuses taken as it was when added, frames
 * filtered out in the batch, a stack of CS_FRAMES_MAX frames whole. */
static char *threaded_folded(unsigned int jobs)
{
	static const char *const syms[] = { "a", "b", "c", "d", "e", "f", "g" };
	struct cs_folded *f = folded((struct cs_folded_opts){
		.jobs = jobs, .comm = true, .no_kernel = true, .use_period = true });
	struct cs_frame *deep = malloc(CS_FRAMES_MAX * sizeof(*deep));
	char comm[16], *t;

	assert_non_null(deep);
	for (size_t i = 0; i < CS_FRAMES_MAX; i++)
		deep[i] = uf(syms[i % 7], "/bin/w");
	for (unsigned int i = 0; i < 30000; i++) {
		struct cs_frame fr[3] = { kf(syms[i % 6]), uf(syms[i % 5], "/bin/w"),
					  uf("main", "/bin/w") };

		snprintf(comm, sizeof(comm), "w%u", i % 3);
		if (i % 7 == 0)
			assert_int_equal(cs_folded_add_off_cpu(f, fr, 1, comm, 3,
							       CS_OFF_CPU_SLEEPING), 0);
		else
			assert_int_equal(cs_folded_add(f, fr, 3, i % 5 ? comm : NULL,
						       1 + i % 9), 0);
		if (i % 10000 == 0)
			assert_int_equal(cs_folded_add(f, deep, CS_FRAMES_MAX, comm, 5), 0);
	}
	assert_int_equal(cs_folded_flush(f), 0);
	assert_true(cs_folded_total(f) > 30000);
	t = written(f);
	free(deep);
	cs_folded_free(f);
	return t;
}

static void a_counting_thread_writes_the_same_lines(void **state)
{
	char *one = threaded_folded(1), *two = threaded_folded(2);

	(void)state;
	assert_true(strlen(one) > 1000);
	assert_string_equal(one, two);
	free(one);
	free(two);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stacks_print_root_first_sorted_with_counts),
		cmocka_unit_test(unknown_symbols_are_named_by_dso_like_stackcollapse),
		cmocka_unit_test(names_are_tidied_and_equal_names_merge),
		cmocka_unit_test(kernel_only_sample_ends_in_a_marker_frame),
		cmocka_unit_test(no_kernel_drops_kernel_frames_but_keeps_the_sample),
		cmocka_unit_test(comm_is_the_root_frame_and_annotate_marks_kernel),
		cmocka_unit_test(period_counts_sum_the_periods),
		cmocka_unit_test(filters_select_pids_and_tids),
		cmocka_unit_test(a_counting_thread_writes_the_same_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
