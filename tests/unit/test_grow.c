/* test_grow.c - arrays that grow by doubling, zeroed or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <cmocka.h>

#include "lib/util/grow.h"

static void grows_by_doubling_and_keeps_the_elements(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(cs_grow((void **)&v, &cap, 0, sizeof(*v)), 0);
	assert_null(v);				/* nothing asked, nothing made */
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(cs_grow((void **)&v, &cap, i + 1, sizeof(*v)), 0);
		assert_true(cap >= i + 1);
		v[i] = i * 7;
	}
	assert_int_equal(cap, 1024);		/* 64 doubled four times */
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i * 7);
	free(v);
}

static void zeroed_growth_zeroes_only_the_new_elements(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(cs_grow_zeroed((void **)&v, &cap, 10, sizeof(*v)), 0);
	assert_int_equal(cap, 64);
	for (size_t i = 0; i < cap; i++) {
		assert_int_equal(v[i], 0);
		v[i] = i + 1;
	}
	/* one past the end: the next power of two, from the old cap on zero */
	assert_int_equal(cs_grow_zeroed((void **)&v, &cap, 65, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(v[i], i + 1);
	for (size_t i = 64; i < 128; i++)
		assert_int_equal(v[i], 0);
	/* a jump well past the end */
	assert_int_equal(cs_grow_zeroed((void **)&v, &cap, 1000, sizeof(*v)), 0);
	assert_int_equal(cap, 1024);
	assert_int_equal(v[127], 0);
	assert_int_equal(v[999], 0);
	free(v);
}

static void overflow_fails_and_leaves_the_array(void **state)
{
	uint64_t *v = NULL, *was;
	size_t cap = 0;

	(void)state;
	assert_int_equal(cs_grow((void **)&v, &cap, 3, sizeof(*v)), 0);
	v[2] = 42;
	was = v;
	assert_int_equal(cs_grow((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v)),
			 -ENOMEM);
	assert_int_equal(cs_grow_zeroed((void **)&v, &cap, SIZE_MAX, 1), -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 64);
	assert_int_equal(v[2], 42);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_by_doubling_and_keeps_the_elements),
		cmocka_unit_test(zeroed_growth_zeroes_only_the_new_elements),
		cmocka_unit_test(overflow_fails_and_leaves_the_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
