/* test_report_stack_agg.c - interning frames and stacks (src/outputs/stack_agg). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "outputs/call_tree.h"
#include "outputs/stack_agg.h"

static uint32_t frame(struct cs_agg *a, const char *sym, const char *dso,
		      uint64_t addr)
{
	struct cs_agg_key k = { .sym = sym, .dso = dso, .addr = addr };
	uint32_t id;

	assert_int_equal(cs_agg_frame(a, &k, NULL, &id), 0);
	return id;
}

static void frames_are_equal_by_content_not_pointer(void **state)
{
	struct cs_agg *a;
	char s1[] = "main", s2[] = "main", d1[] = "/bin/x", d2[] = "/bin/x";

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	assert_int_equal(frame(a, s1, d1, 0), 0);
	assert_int_equal(frame(a, s2, d2, 0), 0);
	assert_int_equal(frame(a, "main", "/bin/y", 0), 1);
	assert_int_equal(frame(a, "main", "/bin/x", 8), 2);
	assert_int_equal(frame(a, NULL, "/bin/x", 0), 3);
	assert_int_equal(frame(a, NULL, NULL, 0), 4);
	assert_int_equal(frame(a, NULL, NULL, 0), 4);
	assert_int_equal(cs_agg_nr_frames(a), 5);
	assert_string_equal(cs_agg_frame_key(a, 1)->dso, "/bin/y");
	cs_agg_free(a);
}

static void flags_tell_frames_apart(void **state)
{
	struct cs_agg *a;
	struct cs_agg_key k = { .sym = "f", .flags = 1 };
	uint32_t x, y;

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	assert_int_equal(cs_agg_frame(a, &k, NULL, &x), 0);
	k.flags = 2;
	assert_int_equal(cs_agg_frame(a, &k, NULL, &y), 0);
	assert_int_not_equal(x, y);
	cs_agg_free(a);
}

static void location_of_first_sight_is_kept(void **state)
{
	struct cs_agg *a;
	struct cs_agg_key k = { .sym = "f" };
	struct cs_location l1 = { .sym = "f", .map_start = 0x1000 };
	struct cs_location l2 = { .sym = "f", .map_start = 0x2000 };
	uint32_t id;

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	assert_int_equal(cs_agg_frame(a, &k, &l1, &id), 0);
	assert_int_equal(cs_agg_frame(a, &k, &l2, &id), 0);
	assert_int_equal(cs_agg_frame_loc(a, id)->map_start, 0x1000);
	cs_agg_free(a);
}

static void same_stack_accumulates_count_and_period(void **state)
{
	struct cs_agg *a;
	uint32_t f[3] = { 7, 8, 9 }, id1, id2, buf[3];
	struct cs_agg_stack st;

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	assert_int_equal(cs_agg_add(a, 0, f, 3, 1, 250, &id1), 0);
	assert_int_equal(cs_agg_add(a, 0, f, 3, 1, 260, &id2), 0);
	assert_int_equal(id1, id2);
	assert_int_equal(cs_agg_max_depth(a), 3);
	cs_agg_stack(a, id1, buf, &st);
	assert_int_equal(st.count, 2);
	assert_int_equal(st.period, 510);
	assert_int_equal(st.nr, 3);
	assert_memory_equal(st.frames, f, sizeof(f));
	assert_int_equal(cs_agg_nr_stacks(a), 1);
	assert_int_equal(cs_agg_total_count(a), 2);
	assert_int_equal(cs_agg_total_period(a), 510);
	cs_agg_free(a);
}

static void tag_prefix_and_order_make_different_stacks(void **state)
{
	struct cs_agg *a;
	uint32_t f[3] = { 1, 2, 3 }, r[3] = { 3, 2, 1 }, id[5];

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	assert_int_equal(cs_agg_add(a, 0, f, 3, 1, 1, &id[0]), 0);
	assert_int_equal(cs_agg_add(a, 1, f, 3, 1, 1, &id[1]), 0);
	assert_int_equal(cs_agg_add(a, 0, f, 2, 1, 1, &id[2]), 0);
	assert_int_equal(cs_agg_add(a, 0, r, 3, 1, 1, &id[3]), 0);
	assert_int_equal(cs_agg_add(a, 0, f, 0, 1, 1, &id[4]), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(id[i], i);
	assert_int_equal(cs_agg_find(a, 0, r, 3, &id[0]), 0);
	assert_int_equal(id[0], 3);
	assert_int_equal(cs_agg_find(a, 2, r, 3, &id[0]), -ENOENT);
	cs_agg_free(a);
}

/* many distinct stacks force the tables to grow several times; every
 * stack must still be found with its own count afterwards */
static void growth_keeps_every_stack(void **state)
{
	enum { N = 50000 };
	struct cs_agg *a;
	struct cs_agg_stack st;
	uint32_t f[4], id, buf[4];

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	for (uint32_t round = 0; round < 2; round++)
		for (uint32_t i = 0; i < N; i++) {
			f[0] = i; f[1] = i * 7; f[2] = i % 13; f[3] = 5;
			assert_int_equal(cs_agg_add(a, i & 3, f, 1 + i % 4,
						    1, i, &id), 0);
			assert_int_equal(id, i);
		}
	assert_int_equal(cs_agg_nr_stacks(a), N);
	for (uint32_t i = 0; i < N; i += 997) {
		cs_agg_stack(a, i, buf, &st);
		assert_int_equal(st.count, 2);
		assert_int_equal(st.period, 2 * (uint64_t)i);
		assert_int_equal(st.nr, 1 + i % 4);
		assert_int_equal(st.tag, i & 3);
		f[0] = i; f[1] = i * 7; f[2] = i % 13; f[3] = 5;
		assert_memory_equal(st.frames, f, st.nr * sizeof(*f));
	}
	assert_int_equal(cs_agg_total_count(a), 2 * N);
	cs_agg_free(a);
}

/* trimmed, the table still reads by id, and finds and adds as before */
static void trimmed_table_rebuilds_its_index(void **state)
{
	struct cs_agg *a;
	struct cs_agg_stack st;
	uint32_t f[3], id, buf[3];

	(void)state;
	assert_int_equal(cs_agg_new(&a), 0);
	for (uint32_t i = 0; i < 3000; i++) {
		f[0] = frame(a, NULL, NULL, i);
		f[1] = frame(a, "g", NULL, 0);
		f[2] = frame(a, "main", NULL, 0);
		assert_int_equal(cs_agg_add(a, i % 3, f, 1 + i % 3, 1, 10, &id), 0);
		assert_int_equal(id, i);
	}
	cs_agg_trim(a);
	cs_agg_stack(a, 2999, buf, &st);
	assert_int_equal(st.nr, 3);
	assert_int_equal(st.period, 10);
	assert_string_equal(cs_agg_frame_key(a, buf[2])->sym, "main");
	cs_agg_trim(a);
	f[0] = frame(a, NULL, NULL, 2999);
	assert_int_equal(f[0], buf[0]);
	assert_int_equal(cs_agg_nr_frames(a), 3002);
	cs_agg_trim(a);
	assert_int_equal(cs_agg_find(a, 2, buf, 3, &id), 0);
	assert_int_equal(id, 2999);
	cs_agg_trim(a);
	assert_int_equal(cs_agg_add(a, 2, buf, 3, 1, 5, &id), 0);
	assert_int_equal(id, 2999);
	assert_int_equal(cs_agg_nr_stacks(a), 3000);
	assert_int_equal(cs_agg_add(a, 0, buf, 3, 1, 5, &id), 0);
	assert_int_equal(id, 3000);
	cs_agg_free(a);
}

/* stacks are paths in a tree of (parent, frame) nodes: a stack that only
 * adds an inner frame to a known one costs one node, and the shorter
 * stack keeps its own count */
static void stacks_share_their_outer_frames(void **state)
{
	struct cs_tree *t;
	uint32_t root, a, b, c, x;

	(void)state;
	assert_int_equal(cs_tree_new(&t), 0);
	assert_int_equal(cs_tree_intern(t, CS_TREE_ROOT, 40, &root), 0);
	assert_int_equal(cs_tree_intern(t, root, 1, &a), 0);
	assert_int_equal(cs_tree_intern(t, a, 2, &b), 0);
	assert_int_equal(cs_tree_intern(t, root, 2, &c), 0);
	assert_int_not_equal(b, c);
	assert_int_equal(cs_tree_intern(t, a, 2, &x), 0);
	assert_int_equal(x, b);
	assert_int_equal(cs_tree_nr_nodes(t), 4);
	assert_int_equal(cs_tree_parent(t, b), a);
	assert_int_equal(cs_tree_frame(t, b), 2);
	assert_int_equal(cs_tree_parent(t, root), CS_TREE_ROOT);
	assert_int_equal(cs_tree_find(t, b, 1, &x), -ENOENT);
	for (uint32_t i = 0; i < 100000; i++)
		assert_int_equal(cs_tree_intern(t, i % 4, i, &x), 0);
	assert_int_equal(cs_tree_find(t, 3, 99999, &x), 0);
	assert_int_equal(cs_tree_frame(t, x), 99999);
	assert_int_equal(cs_tree_find(t, a, 2, &x), 0);
	assert_int_equal(x, b);
	cs_tree_trim(t);
	assert_int_equal(cs_tree_parent(t, b), a);
	assert_int_equal(cs_tree_find(t, a, 2, &x), 0);
	assert_int_equal(x, b);
	cs_tree_trim(t);
	assert_int_equal(cs_tree_intern(t, a, 2, &x), 0);
	assert_int_equal(x, b);
	assert_int_equal(cs_tree_nr_nodes(t), 100004);
	cs_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_are_equal_by_content_not_pointer),
		cmocka_unit_test(flags_tell_frames_apart),
		cmocka_unit_test(location_of_first_sight_is_kept),
		cmocka_unit_test(same_stack_accumulates_count_and_period),
		cmocka_unit_test(tag_prefix_and_order_make_different_stacks),
		cmocka_unit_test(growth_keeps_every_stack),
		cmocka_unit_test(stacks_share_their_outer_frames),
		cmocka_unit_test(trimmed_table_rebuilds_its_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
