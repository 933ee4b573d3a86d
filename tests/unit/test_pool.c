/* test_pool.c - small allocations that all end together. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/pool.h"

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void pieces_are_zeroed_aligned_and_apart(void **state)
{
	struct cs_pool pool = { 0 };
	unsigned char *piece[3000];
	size_t size[3000];

	(void)state;
	/* sizes from 1 to 97 bytes: more than one block's worth */
	for (int i = 0; i < 3000; i++) {
		size[i] = 1 + (size_t)(i * 7) % 97;
		piece[i] = cs_pool_zalloc(&pool, size[i]);
		assert_non_null(piece[i]);
		assert_int_equal((uintptr_t)piece[i] % alignof(max_align_t), 0);
		assert_true(all_zero(piece[i], size[i]));
		memset(piece[i], i & 0xff, size[i]);
	}
	/* none was handed out twice: each still holds what was written */
	for (int i = 0; i < 3000; i++)
		for (size_t k = 0; k < size[i]; k++)
			assert_int_equal(piece[i][k], i & 0xff);
	cs_pool_free(&pool);
	assert_null(pool.blocks);
}

static void a_big_piece_leaves_the_newest_block_in_use(void **state)
{
	struct cs_pool pool = { 0 };
	unsigned char *small, *big, *next;

	(void)state;
	small = cs_pool_zalloc(&pool, 24);
	big = cs_pool_zalloc(&pool, 300 * 1024);
	assert_non_null(small);
	assert_non_null(big);
	assert_true(all_zero(big, 300 * 1024));
	memset(big, 0xab, 300 * 1024);
	/* the next small piece comes from the block the first one is in */
	next = cs_pool_zalloc(&pool, 24);
	assert_non_null(next);
	assert_true(next > small && next < small + 4096);
	assert_true(all_zero(next, 24));
	cs_pool_free(&pool);
}

static void strndup_copies_and_ends_the_string(void **state)
{
	struct cs_pool pool = { 0 };
	const char src[] = "foo::bar(int)";
	char *s;

	(void)state;
	s = cs_pool_strndup(&pool, src, 8);
	assert_non_null(s);
	assert_string_equal(s, "foo::bar");
	assert_ptr_not_equal(s, src);
	assert_null(cs_pool_zalloc(&pool, 0));
	cs_pool_free(&pool);
	/* empty again, and usable */
	s = cs_pool_strndup(&pool, "", 0);
	assert_non_null(s);
	assert_string_equal(s, "");
	cs_pool_free(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pieces_are_zeroed_aligned_and_apart),
		cmocka_unit_test(a_big_piece_leaves_the_newest_block_in_use),
		cmocka_unit_test(strndup_copies_and_ends_the_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
