/* test_strset.c - interned strings: one stable copy per distinct string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/strset.h"

static void equal_strings_share_one_copy(void **state)
{
	struct cs_strset set = { 0 };
	char a[] = "worker", b[] = "worker";
	const char *x, *y;

	(void)state;
	x = cs_strset_intern(&set, a);
	y = cs_strset_intern(&set, b);
	assert_non_null(x);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a);		/* a copy, not the caller's buffer */
	a[0] = 'X';
	assert_string_equal(x, "worker");
	assert_int_equal(set.nr, 1);
	cs_strset_free(&set);
}

static void copies_survive_the_table_growing(void **state)
{
	struct cs_strset set = { 0 };
	const char *first[5000];
	char name[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "thread-%d", i);
		first[i] = cs_strset_intern(&set, name);
		assert_non_null(first[i]);
	}
	assert_int_equal(set.nr, 5000);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "thread-%d", i);
		assert_ptr_equal(cs_strset_intern(&set, name), first[i]);
	}
	assert_ptr_not_equal(cs_strset_intern(&set, ""), NULL);
	assert_int_equal(set.nr, 5001);
	cs_strset_free(&set);
	assert_int_equal(set.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_share_one_copy),
		cmocka_unit_test(copies_survive_the_table_growing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
