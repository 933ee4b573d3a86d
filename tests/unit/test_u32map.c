/* test_u32map.c - ids to pointers: found after the map grows, absent ids
 * absent, a new value made once, every entry visited once, values freed by
 * the caller's function. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/u32map.h"

#define N 20000

static void found_after_growing(void **state)
{
	struct cs_u32map map = { 0 };
	static int vals[N];

	(void)state;
	assert_null(cs_u32map_get(&map, 1));	/* empty: no slots yet */
	/* consecutive ids (the tids of one process) and ids far apart */
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(cs_u32map_put(&map, i < N / 2 ? 1000 + i :
					       i * 65537u, &vals[i]), 0);
	assert_int_equal(map.nr, N);
	assert_true(map.nr * 4 <= map.cap * 3);
	for (uint32_t i = 0; i < N; i++)
		assert_ptr_equal(cs_u32map_get(&map, i < N / 2 ? 1000 + i :
					       i * 65537u), &vals[i]);
	assert_null(cs_u32map_get(&map, 999));
	assert_null(cs_u32map_get(&map, 1000 + N / 2));
	/* 0 and UINT32_MAX are ids like any other */
	assert_int_equal(cs_u32map_put(&map, 0, &vals[0]), 0);
	assert_int_equal(cs_u32map_put(&map, UINT32_MAX, &vals[1]), 0);
	assert_ptr_equal(cs_u32map_get(&map, 0), &vals[0]);
	assert_ptr_equal(cs_u32map_get(&map, UINT32_MAX), &vals[1]);
	cs_u32map_free(&map, NULL);
	assert_int_equal(map.nr, 0);
	assert_null(cs_u32map_get(&map, 1000));
}

static void put_replaces(void **state)
{
	struct cs_u32map map = { 0 };
	int a, b;

	(void)state;
	assert_int_equal(cs_u32map_put(&map, 7, &a), 0);
	assert_int_equal(cs_u32map_put(&map, 7, &b), 0);
	assert_int_equal(map.nr, 1);
	assert_ptr_equal(cs_u32map_get(&map, 7), &b);
	cs_u32map_free(&map, NULL);
}

static void get_new_makes_a_value_once(void **state)
{
	struct cs_u32map map = { 0 };
	bool created;
	uint64_t *a, *b;

	(void)state;
	a = cs_u32map_get_new(&map, 42, 64, &created);
	assert_non_null(a);
	assert_true(created);
	for (int i = 0; i < 8; i++)
		assert_int_equal(a[i], 0);	/* zeroed */
	a[0] = 7;
	b = cs_u32map_get_new(&map, 42, 64, &created);
	assert_ptr_equal(a, b);
	assert_false(created);
	assert_int_equal(b[0], 7);
	assert_ptr_equal(cs_u32map_get(&map, 42), a);
	assert_int_equal(map.nr, 1);
	cs_u32map_free(&map, free);
}

static int count_visit(void *val, void *ctx)
{
	(*(int *)val)++;
	(*(int *)ctx)++;
	return 0;
}

static int stop_at_third(void *val, void *ctx)
{
	(void)val;
	return ++*(int *)ctx == 3 ? -42 : 0;
}

static void each_visits_every_entry_once(void **state)
{
	struct cs_u32map map = { 0 };
	static int seen[1000];
	int calls = 0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(cs_u32map_put(&map, i * 7919u, &seen[i]), 0);
	assert_int_equal(cs_u32map_each(&map, count_visit, &calls), 0);
	assert_int_equal(calls, 1000);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(seen[i], 1);
	calls = 0;
	assert_int_equal(cs_u32map_each(&map, stop_at_third, &calls), -42);
	assert_int_equal(calls, 3);
	cs_u32map_free(&map, NULL);
}

static void free_frees_values(void **state)
{
	struct cs_u32map map = { 0 };

	(void)state;
	/* ASan reports a leak if a value is not freed, a double free if
	 * one is freed twice */
	for (uint32_t i = 0; i < 600; i++) {
		void *v = malloc(16);

		assert_non_null(v);
		assert_int_equal(cs_u32map_put(&map, i, v), 0);
	}
	cs_u32map_free(&map, free);
	assert_int_equal(map.cap, 0);
	/* reusable */
	assert_int_equal(cs_u32map_put(&map, 5, &map), 0);
	assert_ptr_equal(cs_u32map_get(&map, 5), &map);
	cs_u32map_free(&map, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_after_growing),
		cmocka_unit_test(put_replaces),
		cmocka_unit_test(get_new_makes_a_value_once),
		cmocka_unit_test(each_visits_every_entry_once),
		cmocka_unit_test(free_frees_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
