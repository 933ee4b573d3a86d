/* test_handoff.c - records handed to a consumer thread in batches arrive
 * whole, in order, however large; the consumer's error comes back. The
 * same from a producer on a thread of its own to the caller. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/handoff.h"

/* record i: its number, its length, then bytes i + j */
struct got {
	uint32_t next;			/* the record expected next */
	uint32_t fail_at;		/* the consumer fails there */
	int bad;			/* a record out of order or damaged */
	size_t batches;
};

static size_t rec_len(uint32_t i)
{
	/* mostly small, now and then larger than a batch (256 KiB) */
	return i % 997 == 5 ? 300000 + i : 8 + i * 7919 % 500;
}

static int consume(void *ctx, const void *buf, size_t len)
{
	struct got *g = ctx;
	const unsigned char *p = buf, *end = p + len;

	g->batches++;
	while (p < end) {
		uint32_t i, n;

		memcpy(&i, p, 4);
		memcpy(&n, p + 4, 4);
		if (i == g->fail_at)
			return -EBADMSG;
		if (i != g->next++ || n != rec_len(i))
			g->bad++;
		for (uint32_t j = 8; j < n; j++)
			if (p[j] != (unsigned char)(i + j))
				g->bad++;
		p += cs_handoff_record_size(n);
	}
	return 0;
}

/* Appends records [0, nr) unless the consumer fails first; 1 when it
 * stopped for that. */
static int append_records(struct cs_handoff *h, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t n = (uint32_t)rec_len(i);
		unsigned char *p;

		if (cs_handoff_error(h))
			return 1;
		p = cs_handoff_append(h, n);
		assert_non_null(p);
		memcpy(p, &i, 4);
		memcpy(p + 4, &n, 4);
		for (uint32_t j = 8; j < n; j++)
			p[j] = (unsigned char)(i + j);
	}
	return 0;
}

static int produce(struct got *g, uint32_t nr)
{
	struct cs_handoff *h;

	assert_int_equal(cs_handoff_new(consume, g, &h), 0);
	append_records(h, nr);
	return cs_handoff_finish(h);
}

/* ---- the other direction: the producer on its own thread ---- */

struct producer {
	uint32_t nr;
	int ret;			/* what it returns when done */
	int stopped;			/* it saw the consumer's error */
};

static int producer_main(void *ctx, struct cs_handoff *h)
{
	struct producer *p = ctx;

	p->stopped = append_records(h, p->nr);
	return p->ret;
}

static int drain(struct got *g, struct producer *p)
{
	struct cs_handoff *h;

	assert_int_equal(cs_handoff_new_producer(producer_main, p, &h), 0);
	return cs_handoff_drain(h, consume, g);
}

static void records_arrive_whole_and_in_order(void **state)
{
	struct got g = { .fail_at = UINT32_MAX };

	(void)state;
	assert_int_equal(produce(&g, 20000), 0);
	assert_int_equal(g.next, 20000);
	assert_int_equal(g.bad, 0);
	/* batches, not records, went across */
	assert_true(g.batches > 20 && g.batches < 2000);
}

static void nothing_appended_is_no_batch(void **state)
{
	struct got g = { .fail_at = UINT32_MAX };

	(void)state;
	assert_int_equal(produce(&g, 0), 0);
	assert_int_equal(g.batches, 0);
}

static void the_consumers_error_is_returned_and_the_rest_dropped(void **state)
{
	struct got g = { .fail_at = 3000 };

	(void)state;
	assert_int_equal(produce(&g, 20000), -EBADMSG);
	assert_int_equal(g.next, 3000);
	assert_int_equal(g.bad, 0);
}

static void the_error_is_seen_by_the_producer(void **state)
{
	struct got g = { .fail_at = 0 };
	struct cs_handoff *h;
	int err = 0;

	(void)state;
	assert_int_equal(cs_handoff_new(consume, &g, &h), 0);
	/* the batches go round until the consumer's failure shows */
	for (uint32_t i = 0; !err; i++) {
		unsigned char *p = cs_handoff_append(h, 4096);

		assert_non_null(p);
		memset(p, 0, 4096);
		memcpy(p + 4, &(uint32_t){ 4096 }, 4);
		err = cs_handoff_error(h);
	}
	assert_int_equal(err, -EBADMSG);
	assert_int_equal(cs_handoff_finish(h), -EBADMSG);
}

static void produced_ahead_records_arrive_in_order(void **state)
{
	struct got g = { .fail_at = UINT32_MAX };
	struct producer p = { .nr = 20000 };

	(void)state;
	assert_int_equal(drain(&g, &p), 0);
	assert_int_equal(g.next, 20000);
	assert_int_equal(g.bad, 0);
	assert_int_equal(p.stopped, 0);
	assert_true(g.batches > 20 && g.batches < 2000);
}

static void the_producers_return_comes_back(void **state)
{
	struct got g = { .fail_at = UINT32_MAX };
	struct producer p = { .nr = 5000, .ret = -EIO };

	(void)state;
	/* what it appended before it returned is taken first */
	assert_int_equal(drain(&g, &p), -EIO);
	assert_int_equal(g.next, 5000);
	assert_int_equal(g.bad, 0);
}

static void the_callers_error_stops_the_producer(void **state)
{
	struct got g = { .fail_at = 3000 };
	struct producer p = { .nr = 2000000 };

	(void)state;
	assert_int_equal(drain(&g, &p), -EBADMSG);
	assert_int_equal(g.next, 3000);
	assert_int_equal(p.stopped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_arrive_whole_and_in_order),
		cmocka_unit_test(nothing_appended_is_no_batch),
		cmocka_unit_test(the_consumers_error_is_returned_and_the_rest_dropped),
		cmocka_unit_test(the_error_is_seen_by_the_producer),
		cmocka_unit_test(produced_ahead_records_arrive_in_order),
		cmocka_unit_test(the_producers_return_comes_back),
		cmocka_unit_test(the_callers_error_stops_the_producer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
