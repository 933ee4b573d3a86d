/* test_big_alloc.c - large tables: small blocks from the heap, large ones
 * mapped on huge-page boundaries and advised before use, contents kept
 * across growth and moves, zeroed growth zero even over bytes a shrink
 * left behind, failures leaving the block the caller's.
 *
 * The suite runs this under AddressSanitizer, where every block is the
 * heap's (big_alloc.c says why), and under ThreadSanitizer
 * (tests/integration/jobs_tsan.sh), which maps as the release build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "lib/util/big_alloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define MAPS false
#else
#define MAPS true
#endif

#define MIB ((size_t)1 << 20)

static bool all_are(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return false;
	return true;
}

/* "hg" in the VmFlags of the mapping holding p: MADV_HUGEPAGE was asked */
static bool advised_huge(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, hg = false;
	unsigned long lo, hi;
	char perm[5];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			hg = hg || strstr(line, " hg") != NULL;
	}
	fclose(f);
	return hg;
}

static void small_blocks_are_the_heaps(void **state)
{
	unsigned char *p = cs_big_alloc(100);

	(void)state;
	assert_non_null(p);
	assert_false(cs_big_is_mapped(p));
	memset(p, 7, 100);
	p = cs_big_realloc(p, 100000, true);
	assert_non_null(p);
	assert_false(cs_big_is_mapped(p));
	assert_true(all_are(p, 100, 7));
	assert_true(all_are(p + 100, 100000 - 100, 0));
	cs_big_free(p);
	cs_big_free(NULL);
}

static void large_blocks_are_aligned_advised_mappings(void **state)
{
	unsigned char *p = cs_big_calloc(8 * MIB, 1);

	(void)state;
	assert_non_null(p);
	assert_int_equal(cs_big_is_mapped(p), MAPS);
	assert_true(all_are(p, 8 * MIB, 0));
	if (MAPS) {
		/* the header starts a huge page; the mapping asked for them */
		assert_int_equal(((uintptr_t)p - 64) & (2 * MIB - 1), 0);
		assert_true(advised_huge(p));
		assert_true(advised_huge(p + 8 * MIB - 1));
	}
	cs_big_free(p);
}

/* doubling from 64 elements past the point where a block is mapped:
 * what was written is kept, what is new is zero */
static void growth_keeps_contents_and_zeroes_the_rest(void **state)
{
	uint32_t *a = NULL;
	size_t cap = 0;

	(void)state;
	for (size_t n = 1; n <= 6 * MIB; n = n * 3 + 1) {
		size_t old = cap;

		assert_int_equal(cs_big_grow_zeroed((void **)&a, &cap, n,
						    sizeof(*a)), 0);
		assert_true(cap >= n);
		for (size_t i = 0; i < old; i++)
			assert_true(a[i] == (uint32_t)i * 2654435761u);
		for (size_t i = old; i < cap; i++)
			assert_true(a[i] == 0);
		for (size_t i = old; i < cap; i++)
			a[i] = (uint32_t)i * 2654435761u;
	}
	assert_int_equal(cs_big_is_mapped(a), MAPS);
	if (MAPS)
		assert_true(advised_huge(a + cap - 1));
	cs_big_free(a);
}

/* a mapping grown twice while another sits right after it must move, by
 * its pages, and keep its contents */
static void a_mapping_moved_keeps_its_contents(void **state)
{
	unsigned char *p = cs_big_alloc(5 * MIB), *q;

	(void)state;
	assert_non_null(p);
	memset(p, 0x5a, 5 * MIB);
	q = cs_big_alloc(5 * MIB);	/* likely just before or after p */
	assert_non_null(q);
	memset(q, 0x3c, 5 * MIB);
	p = cs_big_realloc(p, 40 * MIB, false);
	assert_non_null(p);
	assert_true(all_are(p, 5 * MIB, 0x5a));
	memset(p + 5 * MIB, 1, 35 * MIB);
	q = cs_big_realloc(q, 40 * MIB, true);
	assert_non_null(q);
	assert_true(all_are(q, 5 * MIB, 0x3c));
	assert_true(all_are(q + 5 * MIB, 35 * MIB, 0));
	if (MAPS) {
		assert_int_equal(((uintptr_t)p - 64) & (2 * MIB - 1), 0);
		assert_int_equal(((uintptr_t)q - 64) & (2 * MIB - 1), 0);
		assert_true(advised_huge(p + 40 * MIB - 1));
	}
	cs_big_free(p);
	cs_big_free(q);
}

/* bytes a shrink left in the mapping are not zero; a zeroed growth over
 * them must write them */
static void zeroed_growth_after_a_shrink_is_zero(void **state)
{
	unsigned char *p = cs_big_alloc(8 * MIB);

	(void)state;
	assert_non_null(p);
	memset(p, 0xff, 8 * MIB);
	p = cs_big_realloc(p, 8 * MIB - 4096, false);	/* same mapping */
	assert_non_null(p);
	p = cs_big_realloc(p, 8 * MIB, true);
	assert_non_null(p);
	assert_true(all_are(p, 8 * MIB - 4096, 0xff));
	assert_true(all_are(p + 8 * MIB - 4096, 4096, 0));
	memset(p, 0xff, 8 * MIB);
	p = cs_big_realloc(p, 5 * MIB + 5, false);	/* a shorter mapping */
	assert_non_null(p);
	assert_true(all_are(p, 5 * MIB + 5, 0xff));
	p = cs_big_realloc(p, 9 * MIB, true);
	assert_non_null(p);
	assert_true(all_are(p, 5 * MIB + 5, 0xff));
	assert_true(all_are(p + 5 * MIB + 5, 4 * MIB - 5, 0));
	cs_big_free(p);
}

static void impossible_sizes_fail_and_leave_the_block(void **state)
{
	unsigned char *p = cs_big_alloc(16), *q;
	void *a = p;
	size_t cap = 16;

	(void)state;
	assert_null(cs_big_alloc(SIZE_MAX - 8));
	assert_null(cs_big_calloc(SIZE_MAX / 2, 4));
	assert_non_null(p);
	memset(p, 9, 16);
	q = cs_big_realloc(p, SIZE_MAX - 8, false);
	assert_null(q);
	assert_true(all_are(p, 16, 9));
	/* sizes whose arithmetic would wrap (not merely too large for
	 * memory: AddressSanitizer stops at those) */
	assert_int_equal(cs_big_grow(&a, &cap, SIZE_MAX, 1), -ENOMEM);
	assert_int_equal(cs_big_grow(&a, &cap, SIZE_MAX / 4, 8), -ENOMEM);
	assert_ptr_equal(a, p);
	assert_int_equal(cap, 16);
	cs_big_free(p);
	p = cs_big_alloc(8 * MIB);
	assert_non_null(p);
	p[0] = 3;
	assert_null(cs_big_realloc(p, SIZE_MAX - 8, true));
	assert_int_equal(p[0], 3);
	cs_big_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_blocks_are_the_heaps),
		cmocka_unit_test(large_blocks_are_aligned_advised_mappings),
		cmocka_unit_test(growth_keeps_contents_and_zeroes_the_rest),
		cmocka_unit_test(a_mapping_moved_keeps_its_contents),
		cmocka_unit_test(zeroed_growth_after_a_shrink_is_zero),
		cmocka_unit_test(impossible_sizes_fail_and_leave_the_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
