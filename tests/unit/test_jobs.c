/* test_jobs.c - chunks on threads written in order, parallel sorting: the
 * same bytes and the same order as one thread, for any number of jobs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* chunk c's items print 3000 bytes each when c % 3 == 1, a few
 * otherwise: a chunk's text outgrows the buffer a short one left, and
 * short ones follow in buffers long ones grew */
static int long_and_short(void *ctx, size_t begin, size_t end, FILE *out)
{
	size_t chunk = *(const size_t *)ctx;

	for (size_t i = begin; i < end; i++) {
		size_t n = i / chunk % 3 == 1 ? 3000 : i % 13;

		fprintf(out, "%zu ", i);
		for (size_t k = 0; k < n; k++)
			fputc('a' + (int)((i + k) % 26), out);
		fputc('\n', out);
	}
	return 0;
}

static char *run_long_and_short(unsigned int jobs, size_t *len)
{
	size_t chunk = 37;
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);

	assert_non_null(out);
	assert_int_equal(cs_jobs_ordered(3000, chunk, jobs, long_and_short,
					 &chunk, out), 0);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static void chunk_buffers_reused_hold_only_their_chunk(void **state)
{
	size_t len1, len;
	char *one = run_long_and_short(1, &len1);

	(void)state;
	for (unsigned int jobs = 2; jobs <= 8; jobs *= 2) {
		char *many = run_long_and_short(jobs, &len);

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

/* a job that sums what the caller's thread does not touch */
struct sum_job {
	const uint32_t *v;
	size_t nr;
	uint64_t sum;
};

static int sum_up(void *ctx)
{
	struct sum_job *j = ctx;

	for (size_t i = 0; i < j->nr; i++)
		j->sum += j->v[i];
	return j->sum ? -EEXIST : 0;
}

static void a_job_beside_runs_once_and_returns_its_result(void **state)
{
	uint32_t v[1000];

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		v[i] = (uint32_t)i;
	for (unsigned int jobs = 1; jobs <= 2; jobs++) {
		struct sum_job sj = { v, 1000, 0 }, none = { v, 0, 0 };
		struct cs_job a, b;
		uint64_t here = 0;

		cs_job_start(&a, jobs, sum_up, &sj);
		cs_job_start(&b, jobs, sum_up, &none);
		for (size_t i = 0; i < 1000; i++)
			here += v[i];
		assert_int_equal(cs_job_wait(&a), -EEXIST);
		assert_int_equal(cs_job_wait(&b), 0);
		/* waiting again only answers again */
		assert_int_equal(cs_job_wait(&a), -EEXIST);
		assert_int_equal(sj.sum, 499500);
		assert_int_equal(here, 499500);
	}
}

/* each part sums its items into its own slot; part 3 may fail */
struct split_sum {
	uint64_t sum[CS_JOBS_MAX_PARTS];
	size_t begin[CS_JOBS_MAX_PARTS], end[CS_JOBS_MAX_PARTS];
	bool fail;
};

static int sum_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	struct split_sum *s = ctx;

	s->begin[part] = begin;
	s->end[part] = end;
	for (size_t i = begin; i < end; i++)
		s->sum[part] += i;
	return s->fail && part >= 3 ? -(int)(100 + part) : 0;
}

static void a_range_is_split_into_parts_that_cover_it(void **state)
{
	(void)state;
	for (unsigned int jobs = 1; jobs <= 100; jobs += 33) {
		struct split_sum s = { .fail = false };
		int parts = cs_jobs_split(100000, 1000, jobs, sum_part, &s);
		uint64_t total = 0;

		assert_int_equal(parts, jobs < CS_JOBS_MAX_PARTS ? jobs :
				 CS_JOBS_MAX_PARTS);
		for (int p = 0; p < parts; p++) {
			assert_int_equal(s.begin[p], p ? s.end[p - 1] : 0);
			total += s.sum[p];
		}
		assert_int_equal(s.end[parts - 1], 100000);
		assert_int_equal(total, 100000ull * 99999 / 2);
	}
}

static void small_ranges_take_fewer_parts_and_errors_come_in_order(void **state)
{
	struct split_sum s = { .fail = false };

	(void)state;
	/* at least 1000 items a part: 2500 items are 2 parts */
	assert_int_equal(cs_jobs_split(2500, 1000, 8, sum_part, &s), 2);
	assert_int_equal(cs_jobs_split(10, 1000, 8, sum_part, &s), 1);
	assert_int_equal(cs_jobs_split(0, 1000, 8, sum_part, &s), 1);
	s.fail = true;
	assert_int_equal(cs_jobs_split(8000, 1000, 8, sum_part, &s), -103);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunks_are_written_in_order),
		cmocka_unit_test(chunk_buffers_reused_hold_only_their_chunk),
		cmocka_unit_test(the_first_error_in_order_is_returned),
		cmocka_unit_test(jobs_arguments_are_checked),
		cmocka_unit_test(a_job_beside_runs_once_and_returns_its_result),
		cmocka_unit_test(a_range_is_split_into_parts_that_cover_it),
		cmocka_unit_test(small_ranges_take_fewer_parts_and_errors_come_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
