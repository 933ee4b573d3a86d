/* test_record_waiting.c - the recorder's set of samples that wait for a
 * deferred user stack, fed records built with encode.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/write/encode.h"

#include "record/waiting.h"

#define TID 4242
#define COOKIE 0xb00000006ULL

static struct cs_perf_attr attr = {
	.type = CS_PERF_TYPE_SOFTWARE,
	.size = CS_PERF_ATTR_SIZE_VER7,
	.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
		       CS_SAMPLE_TIME | CS_SAMPLE_CALLCHAIN | CS_SAMPLE_CPU |
		       CS_SAMPLE_PERIOD,
	.flags = CS_ATTR_SAMPLE_ID_ALL,
};

static uint64_t buf[1024];
static uint64_t clock_ns = 1000;

static int feed(struct cs_waiting *w, long size)
{
	assert_true(size > 0);
	return cs_waiting_see(w, buf, (size_t)size);
}

/* A sample of tid whose user part was deferred to cookie. */
static void sample_deferred(struct cs_waiting *w, uint32_t tid, uint64_t cookie)
{
	uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000130ULL,
			     CS_CONTEXT_USER_DEFERRED, cookie };
	struct cs_sample s = { .ip = chain[1], .pid = tid, .tid = tid,
			       .time = clock_ns++, .id = 7, .period = 1,
			       .misc = CS_MISC_KERNEL };

	assert_int_equal(feed(w, cs_encode_sample(&attr, &s, chain, 4, buf, sizeof(buf))), 0);
}

static void sample_ordinary(struct cs_waiting *w, uint32_t tid)
{
	uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000130ULL,
			     CS_CONTEXT_USER, 0x401000, 0x401100 };
	struct cs_sample s = { .ip = chain[1], .pid = tid, .tid = tid,
			       .time = clock_ns++, .id = 7, .period = 1,
			       .misc = CS_MISC_KERNEL };

	assert_int_equal(feed(w, cs_encode_sample(&attr, &s, chain, 5, buf, sizeof(buf))), 0);
}

static void deferred_record(struct cs_waiting *w, uint32_t tid, uint64_t cookie)
{
	uint64_t ips[] = { 0x7f18fe337fa7ULL, 0x7f18fe330e0fULL };
	struct cs_deferred d = { .cookie = cookie, .nr = 2, .ips = ips };
	struct cs_sample_id id = { .pid = tid, .tid = tid, .time = clock_ns++, .id = 8 };

	assert_int_equal(feed(w, cs_encode_deferred(&attr, &d, &id, buf, sizeof(buf))), 0);
}

static void task_exit(struct cs_waiting *w, uint32_t tid)
{
	struct cs_fork_exit f = { .pid = tid, .ppid = 1, .tid = tid, .ptid = 1,
				  .time = clock_ns };
	struct cs_sample_id id = { .pid = tid, .tid = tid, .time = clock_ns++, .id = 8 };

	assert_int_equal(feed(w, cs_encode_fork_exit(&attr, CS_RECORD_EXIT, &f, &id,
						     buf, sizeof(buf))), 0);
}

static int setup(void **state)
{
	struct cs_waiting *w;

	assert_int_equal(cs_waiting_new(attr.sample_type, &w), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	cs_waiting_free(*state);
	return 0;
}

static void deferred_sample_waits_until_its_record_comes(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 1);
	assert_int_equal(cs_waiting_cookies(w), 1);
	deferred_record(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_cookies(w), 0);
	assert_int_equal(cs_waiting_stats(w)->released, 1);
}

static void one_record_releases_every_sample_of_its_kernel_entry(void **state)
{
	struct cs_waiting *w = *state;

	for (int i = 0; i < 22; i++)
		sample_deferred(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 22);
	assert_int_equal(cs_waiting_cookies(w), 1);
	deferred_record(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_stats(w)->released, 22);
}

static void record_of_another_tid_releases_nothing(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	deferred_record(w, TID + 1, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 1);
	assert_int_equal(cs_waiting_stats(w)->orphans, 1);
}

static void record_with_another_cookie_releases_nothing(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	deferred_record(w, TID, COOKIE + 1);
	assert_int_equal(cs_waiting_samples(w), 1);
}

static void newer_cookie_gives_up_the_older_wait(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	sample_deferred(w, TID, COOKIE);
	sample_deferred(w, TID, COOKIE + 1);
	assert_int_equal(cs_waiting_samples(w), 1);
	assert_int_equal(cs_waiting_cookies(w), 1);
	assert_int_equal(cs_waiting_stats(w)->superseded, 2);
	deferred_record(w, TID, COOKIE + 1);
	assert_int_equal(cs_waiting_samples(w), 0);
}

static void late_sample_after_its_record_does_not_wait(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	deferred_record(w, TID, COOKIE);
	sample_deferred(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_stats(w)->late, 1);
}

static void record_read_before_its_samples_leaves_none_waiting(void **state)
{
	struct cs_waiting *w = *state;

	/* the record sat in a ring read before the samples' ring */
	deferred_record(w, TID, COOKIE);
	sample_deferred(w, TID, COOKIE);
	sample_deferred(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 0);
}

static void exit_of_the_task_ends_its_wait(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	sample_deferred(w, TID + 1, COOKIE);
	task_exit(w, TID);
	assert_int_equal(cs_waiting_samples(w), 1);
	assert_int_equal(cs_waiting_stats(w)->exited, 1);
}

static void duplicate_record_changes_nothing(void **state)
{
	struct cs_waiting *w = *state;

	sample_deferred(w, TID, COOKIE);
	deferred_record(w, TID, COOKIE);
	deferred_record(w, TID, COOKIE);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_stats(w)->released, 1);
	assert_int_equal(cs_waiting_stats(w)->orphans, 0);
}

static void ordinary_callchain_waits_for_nothing(void **state)
{
	struct cs_waiting *w = *state;

	sample_ordinary(w, TID);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_stats(w)->deferred_samples, 0);
}

static void many_threads_wait_apart(void **state)
{
	struct cs_waiting *w = *state;

	/* enough tids to grow the table several times */
	for (uint32_t t = 1; t <= 5000; t++)
		sample_deferred(w, t, COOKIE + t);
	assert_int_equal(cs_waiting_samples(w), 5000);
	assert_int_equal(cs_waiting_cookies(w), 5000);
	for (uint32_t t = 1; t <= 5000; t += 2)
		deferred_record(w, t, COOKIE + t);
	assert_int_equal(cs_waiting_samples(w), 2500);
	for (uint32_t t = 2; t <= 5000; t += 2)
		deferred_record(w, t, COOKIE + t);
	assert_int_equal(cs_waiting_samples(w), 0);
	assert_int_equal(cs_waiting_stats(w)->orphans, 0);
}

static void truncated_sample_is_refused(void **state)
{
	struct cs_waiting *w = *state;
	uint64_t chain[] = { CS_CONTEXT_USER_DEFERRED, COOKIE };
	struct cs_sample s = { .pid = TID, .tid = TID, .misc = CS_MISC_USER };
	long n = cs_encode_sample(&attr, &s, chain, 2, buf, sizeof(buf));
	struct cs_perf_event_header h;

	assert_true(n > 24);
	/* claim a callchain longer than the record */
	memcpy(&h, buf, sizeof(h));
	h.size = (uint16_t)(n - 16);
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(cs_waiting_see(w, buf, (size_t)n - 16), -EBADMSG);
	assert_int_equal(cs_waiting_samples(w), 0);
}

static void deferred_record_without_trailer_tid_is_ignored(void **state)
{
	struct cs_waiting *w;
	uint64_t ips[] = { 1 };
	struct cs_deferred d = { .cookie = COOKIE, .nr = 1, .ips = ips };
	struct cs_perf_attr a = attr;
	struct cs_sample_id id = { 0 };

	(void)state;
	a.sample_type = CS_SAMPLE_IP | CS_SAMPLE_CALLCHAIN;
	assert_int_equal(cs_waiting_new(a.sample_type, &w), 0);
	assert_int_equal(cs_waiting_see(w, buf, (size_t)cs_encode_deferred(&a, &d, &id, buf,
									   sizeof(buf))), 0);
	assert_int_equal(cs_waiting_stats(w)->records, 0);
	cs_waiting_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(deferred_sample_waits_until_its_record_comes, setup, teardown),
		cmocka_unit_test_setup_teardown(one_record_releases_every_sample_of_its_kernel_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(record_of_another_tid_releases_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(record_with_another_cookie_releases_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(newer_cookie_gives_up_the_older_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(late_sample_after_its_record_does_not_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(record_read_before_its_samples_leaves_none_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(exit_of_the_task_ends_its_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_record_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(ordinary_callchain_waits_for_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(many_threads_wait_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(truncated_sample_is_refused, setup, teardown),
		cmocka_unit_test(deferred_record_without_trailer_tid_is_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
