/* test_jobs.c - chunks on threads written in order, parallel sorting: the
 * same bytes and the same order as one thread, for any number of jobs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/jobs.h"

/* item i prints a line whose length varies, so chunks differ in size */
static int lines(void *ctx, size_t begin, size_t end, FILE *out)
{
	size_t fail_at = *(const size_t *)ctx;

	for (size_t i = begin; i < end; i++) {
		if (i == fail_at)
			return -EBADMSG;
		fprintf(out, "%zu %.*s\n", i, (int)(i * 7919 % 97), "");
	}
	return 0;
}

static char *run(size_t nr, size_t chunk, unsigned int jobs, size_t fail_at,
		 int *err, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);

	assert_non_null(out);
	*err = cs_jobs_ordered(nr, chunk, jobs, lines, &fail_at, out);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static void chunks_are_written_in_order(void **state)
{
	size_t len1, len;
	int err;
	char *one = run(10000, 37, 1, SIZE_MAX, &err, &len1);

	(void)state;
	assert_int_equal(err, 0);
	for (unsigned int jobs = 2; jobs <= 8; jobs *= 2) {
		char *many = run(10000, 37, jobs, SIZE_MAX, &err, &len);

		assert_int_equal(err, 0);
		assert_int_equal(len, len1);
		assert_memory_equal(many, one, len);
		free(many);
	}
	free(one);
}

static void the_first_error_in_order_is_returned(void **state)
{
	size_t len;
	int err;
	char *text = run(10000, 10, 4, 5005, &err, &len);

	(void)state;
	assert_int_equal(err, -EBADMSG);
	/* nothing at or after the failing chunk is written */
	assert_null(strstr(text ? text : "", "\n5000 "));
	assert_non_null(strstr(text, "\n4999 "));
	free(text);
}

struct item {
	uint32_t key, id;
};

static void jobs_arguments_are_checked(void **state)
{
	unsigned int j = 0;

	(void)state;
	assert_int_equal(cs_jobs_parse("4", &j), 0);
	assert_int_equal(j, 4);
	assert_int_equal(cs_jobs_parse("0", &j), -EINVAL);
	assert_int_equal(cs_jobs_parse("-2", &j), -EINVAL);
	assert_int_equal(cs_jobs_parse("3x", &j), -EINVAL);
	assert_int_equal(cs_jobs_parse("99999", &j), -EINVAL);
	assert_true(cs_jobs_default() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunks_are_written_in_order),
		cmocka_unit_test(the_first_error_in_order_is_returned),
		cmocka_unit_test(jobs_arguments_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
