/* test_stack_health.c - the completeness figures as the lines a user reads
 * (report's header, --stats). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "outputs/stack_health.h"

/* The text cs_stack_health_write() gives for c, at most max_stops lines
 * of stops; the caller frees it. */
static char *health_text(const struct cs_completeness *c, size_t max_stops)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cs_stack_health_write(f, c, "# ", "#   ", max_stops);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A stack copy that ended in five binaries is one piece of advice: one
 * line with the sum, placed by it, not five lines that read the same. */
static void advice_without_a_binary_is_one_line(void **state)
{
	const struct cs_stack_stop stops[] = {
		{ "/usr/lib/libz.so.1", CS_STACK_COPY_TOO_SMALL, CS_STACK_KIND_DWARF, 40 },
		{ "/usr/lib/libc.so.6", CS_STACK_NO_CFI, CS_STACK_KIND_DWARF, 30 },
		{ "/usr/lib/libc.so.6", CS_STACK_COPY_TOO_SMALL, CS_STACK_KIND_DWARF, 20 },
		{ "/usr/bin/python3", CS_STACK_COPY_TOO_SMALL, CS_STACK_KIND_DWARF, 5 },
		{ "/usr/bin/python3", CS_STACK_TOO_DEEP, CS_STACK_KIND_DWARF, 3 },
		{ "/usr/lib/libm.so.6", CS_STACK_TOO_DEEP, CS_STACK_KIND_DWARF, 2 },
	};
	struct cs_completeness c = {
		.user_stacks = 1000, .stops = stops,
		.nr_stops = sizeof(stops) / sizeof(stops[0]),
	};
	char *text;

	(void)state;
	c.by_kind[CS_STACK_KIND_DWARF] = 1000;
	c.by_end[CS_STACK_ROOT] = 900;
	text = health_text(&c, 8);
	assert_int_equal(count_of(text, "stack copy ended"), 1);
	assert_non_null(strstr(text, "#   6.5% of user stacks (65) were cut where "
				     "the stack copy ended"));
	assert_non_null(strstr(text, "#   0.5% of user stacks (5) hit the "
				     "unwinder's frame limit"));
	/* the sum comes first, then libc's 30, then the frame limit's 5 */
	assert_true(strstr(text, "(65)") < strstr(text, "(30) stop in libc.so.6"));
	assert_true(strstr(text, "(30)") < strstr(text, "(5)"));
	free(text);
}

/* Advice that names its binary stays a line per binary, and the lines
 * past max_stops are summed into "other places". */
static void advice_per_binary_stays_apart(void **state)
{
	const struct cs_stack_stop stops[] = {
		{ "/usr/lib/libc.so.6", CS_STACK_FP_BROKEN, CS_STACK_KIND_FP, 50 },
		{ "/usr/lib/libz.so.1", CS_STACK_FP_BROKEN, CS_STACK_KIND_FP, 30 },
		{ "/usr/lib/libm.so.6", CS_STACK_FP_BROKEN, CS_STACK_KIND_FP, 10 },
		{ "/usr/lib/libq.so.1", CS_STACK_COPY_TOO_SMALL, CS_STACK_KIND_DWARF, 4 },
		{ "/usr/lib/libr.so.1", CS_STACK_COPY_TOO_SMALL, CS_STACK_KIND_DWARF, 4 },
	};
	struct cs_completeness c = {
		.user_stacks = 100, .stops = stops,
		.nr_stops = sizeof(stops) / sizeof(stops[0]),
	};
	char *text;

	(void)state;
	c.by_kind[CS_STACK_KIND_FP] = 100;
	c.by_end[CS_STACK_ROOT] = 2;
	text = health_text(&c, 2);
	assert_non_null(strstr(text, "(50) stop in libc.so.6, which has no frame pointers"));
	assert_non_null(strstr(text, "(30) stop in libz.so.1, which has no frame pointers"));
	/* libm's 10 and the one line of the two copies' 8: two places */
	assert_non_null(strstr(text, "#   18.0% of user stacks (18) stop in 2 other places"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(advice_without_a_binary_is_one_line),
		cmocka_unit_test(advice_per_binary_stays_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
