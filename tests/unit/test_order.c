/* test_order.c - time ordering across per-CPU runs, bounded by rounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
/* from the sanitizer runtime; its header is not installed with gcc 12 */
size_t __sanitizer_get_current_allocated_bytes(void);
#define HAVE_ALLOC_STATS 1
#endif

#include "lib/order/order.h"

/* A fake record: 8 bytes of header, then its time and its "file offset". */
struct rec {
	uint32_t type;
	uint16_t misc, size;
	uint64_t time;
	uint64_t offset;
};

struct got {
	struct rec *r;
	size_t n, cap;
	int fail_at;			/* return 7 at this delivery (1-based) */
	int pause_every;		/* CS_ORDER_PAUSE after every so many */
	size_t nr_stable;		/* deliveries marked stable */
};

static int collect(void *ctx, const void *bytes, size_t size, uint64_t offset,
		   bool stable)
{
	struct got *g = ctx;
	struct rec r;

	g->nr_stable += stable;

	assert_int_equal(size, sizeof(r));
	memcpy(&r, bytes, sizeof(r));
	assert_int_equal(r.offset, offset);	/* bytes belong to this offset */
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->r = realloc(g->r, g->cap * sizeof(*g->r));
		assert_non_null(g->r);
	}
	g->r[g->n++] = r;
	if (g->fail_at && (int)g->n == g->fail_at)
		return 7;
	if (g->pause_every && g->n % (size_t)g->pause_every == 0)
		return CS_ORDER_PAUSE;
	return 0;
}

static uint64_t next_offset;

static int push(struct cs_order *q, uint64_t time, bool stable_copy_test)
{
	/* a buffer the caller reuses: the queue must not keep pointing into it */
	static struct rec buf;
	int err;

	buf.type = 9;
	buf.size = sizeof(buf);
	buf.time = time;
	buf.offset = next_offset;
	err = cs_order_push(q, time, &buf, sizeof(buf), next_offset, false);
	next_offset += sizeof(buf);
	if (stable_copy_test)
		memset(&buf, 0xa5, sizeof(buf));
	return err;
}

static struct cs_order *new_queue(struct got *g)
{
	struct cs_order *q;

	memset(g, 0, sizeof(*g));
	next_offset = 0;
	assert_int_equal(cs_order_new(collect, g, &q), 0);
	return q;
}

static void assert_times(const struct got *g, const uint64_t *want, size_t n)
{
	assert_int_equal(g->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(g->r[i].time, want[i]);
}

static void interleaved_cpu_runs_come_out_in_time_order(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);
	static const uint64_t cpu0[] = { 1, 3, 5, 7 }, cpu1[] = { 2, 4, 6, 8 };
	static const uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(push(q, cpu0[i], true), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(push(q, cpu1[i], true), 0);
	assert_int_equal(cs_order_flush(q), 0);
	assert_times(&g, want, 8);
	assert_int_equal(cs_order_queued(q), 0);
	cs_order_free(q);
	free(g.r);
}

static void round_end_releases_up_to_the_previous_rounds_largest_time(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);
	static const uint64_t first[] = { 5, 10, 15, 20 };

	(void)state;
	push(q, 10, false); push(q, 20, false);		/* cpu 0 */
	push(q, 5, false); push(q, 15, false);		/* cpu 1 */
	assert_int_equal(cs_order_round_end(q), 0);
	assert_int_equal(g.n, 0);	/* a later chunk may still reach back */
	assert_int_equal(cs_order_queued(q), 4);
	push(q, 30, false); push(q, 25, false);
	assert_int_equal(cs_order_round_end(q), 0);
	assert_times(&g, first, 4);	/* <= 20, the first round's largest */
	assert_int_equal(cs_order_queued(q), 2);
	push(q, 21, false);		/* reaches back into the waiting round */
	assert_int_equal(cs_order_round_end(q), 0);
	static const uint64_t all[] = { 5, 10, 15, 20, 21, 25, 30 };
	assert_times(&g, all, 7);
	cs_order_free(q);
	free(g.r);
}

static void equal_times_keep_file_order(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	/* three runs (the times drop between them), every time equal to 7 in
	 * some of them */
	push(q, 7, false); push(q, 7, false); push(q, 9, false);	/* 0 1 2 */
	push(q, 7, false); push(q, 8, false);			/* 3 4 */
	push(q, 1, false); push(q, 7, false); push(q, 7, false);	/* 5 6 7 */
	assert_int_equal(cs_order_flush(q), 0);
	static const uint64_t want_off[] = { 5, 0, 1, 3, 6, 7, 4, 2 };
	assert_int_equal(g.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(g.r[i].offset, want_off[i] * sizeof(struct rec));
	cs_order_free(q);
	free(g.r);
}

static void records_without_time_go_out_at_once(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);
	struct rec r = { .type = 68, .size = sizeof(r), .time = 0, .offset = 999 };

	(void)state;
	push(q, 50, false);
	push(q, 40, false);
	assert_int_equal(cs_order_push(q, UINT64_MAX, &r, sizeof(r), 999, false), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.r[0].offset, 999);
	assert_int_equal(cs_order_queued(q), 2);
	assert_int_equal(cs_order_flush(q), 0);
	assert_int_equal(g.r[1].time, 40);
	assert_int_equal(g.r[2].time, 50);
	cs_order_free(q);
	free(g.r);
}

static void copied_records_outlive_the_callers_buffer(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	/* push() scribbles over its buffer after each push */
	for (uint64_t t = 100; t > 0; t--)
		assert_int_equal(push(q, t, true), 0);
	assert_int_equal(cs_order_flush(q), 0);
	assert_int_equal(g.n, 100);
	for (size_t i = 0; i < 100; i++) {
		assert_int_equal(g.r[i].time, i + 1);
		assert_int_equal(g.r[i].type, 9);
	}
	cs_order_free(q);
	free(g.r);
}

static void stable_records_are_not_copied(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);
	struct rec r[3] = {
		{ .type = 9, .size = sizeof(struct rec), .time = 3, .offset = 0 },
		{ .type = 9, .size = sizeof(struct rec), .time = 1, .offset = 24 },
		{ .type = 9, .size = sizeof(struct rec), .time = 2, .offset = 48 },
	};

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(cs_order_push(q, r[i].time, &r[i], sizeof(r[i]),
					       r[i].offset, true), 0);
	/* a stable pointer is the caller's promise: changes show through */
	r[0].type = 10;
	assert_int_equal(cs_order_flush(q), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.r[0].time, 1);
	assert_int_equal(g.r[2].type, 10);
	assert_int_equal(g.nr_stable, 3);	/* and say so to the receiver */
	cs_order_free(q);
	free(g.r);
}

static void delivery_error_stops_and_is_returned(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	g.fail_at = 3;
	for (uint64_t t = 1; t <= 10; t++)
		push(q, t, false);
	assert_int_equal(cs_order_flush(q), 7);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.nr_stable, 0);	/* copies live only in the call */
	cs_order_free(q);	/* the rest is freed (ASan checks) */
	free(g.r);
}

/* xorshift: the tests must be repeatable */
static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct ref {
	uint64_t time, offset;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* A delivery that paused goes on until it is done, as a puller's does. */
static int until_done(struct cs_order *q, int err)
{
	while (err == CS_ORDER_PAUSE) {
		assert_true(cs_order_paused(q));
		err = cs_order_resume(q);
	}
	return err;
}

/*
 * Simulates perf record: ncpu buffers filled at random rates; each round
 * writes out what every buffer holds, one buffer after the other. Checks
 * the output against a stable sort of everything, and returns the most
 * records ever queued.
 */
static size_t simulate(struct cs_order *q, struct got *g, int ncpu, int rounds,
		       int per_round, bool use_rounds)
{
	struct ref *all = NULL;
	size_t nall = 0, cap = 0, most = 0;
	uint64_t clock = 1;

	for (int r = 0; r < rounds; r++) {
		uint64_t *buf[64];
		int nbuf[64] = { 0 };

		assert_true(ncpu <= 64);
		for (int c = 0; c < ncpu; c++)
			buf[c] = malloc(per_round * sizeof(uint64_t));
		/* events happen in time, each on a random cpu */
		for (int i = 0; i < per_round; i++) {
			int c = (int)(rnd() % (uint64_t)ncpu);

			clock += rnd() % 3;	/* equal times happen */
			buf[c][nbuf[c]++] = clock;
		}
		for (int c = 0; c < ncpu; c++) {
			for (int i = 0; i < nbuf[c]; i++) {
				if (nall == cap) {
					cap = cap ? cap * 2 : 4096;
					all = realloc(all, cap * sizeof(*all));
				}
				all[nall].time = buf[c][i];
				all[nall].offset = next_offset;
				nall++;
				assert_int_equal(push(q, buf[c][i], true), 0);
			}
			free(buf[c]);
		}
		if (cs_order_queued(q) > most)
			most = cs_order_queued(q);
		if (use_rounds)
			assert_int_equal(until_done(q, cs_order_round_end(q)), 0);
	}
	assert_int_equal(until_done(q, cs_order_flush(q)), 0);
	qsort(all, nall, sizeof(*all), ref_cmp);
	assert_int_equal(g->n, nall);
	for (size_t i = 0; i < nall; i++) {
		assert_int_equal(g->r[i].time, all[i].time);
		assert_int_equal(g->r[i].offset, all[i].offset);
	}
	free(all);
	return most;
}

static void rounds_of_many_cpus_match_a_stable_sort(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	simulate(q, &g, 8, 50, 2000, true);
	cs_order_free(q);
	free(g.r);
}

/* every count of runs a merge meets, from one to twice the buffers: each
 * count has a scan of its own up to FEW_RUNS, a scan in two levels up to
 * WIDE_RUNS (64), a heap above */
static void rounds_of_every_cpu_count_match_a_stable_sort(void **state)
{
	(void)state;
	for (int ncpu = 1; ncpu <= 40; ncpu++) {
		struct got g;
		struct cs_order *q = new_queue(&g);

		simulate(q, &g, ncpu, 12, 60 * ncpu, true);
		cs_order_free(q);
		free(g.r);
	}
}

/* a merge picks records ahead of the one it delivers: a pause must leave
 * those queued, for the resumed delivery, none lost and none twice */
static void paused_deliveries_resume_where_they_stopped(void **state)
{
	(void)state;
	for (int every = 1; every <= 7; every += 3) {
		for (int ncpu = 2; ncpu <= 64; ncpu *= 2) {
			struct got g;
			struct cs_order *q = new_queue(&g);

			g.pause_every = every;
			simulate(q, &g, ncpu, 10, 300, true);
			cs_order_free(q);
			free(g.r);
		}
	}
}

static void file_without_rounds_is_sorted_at_the_end(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	size_t most = simulate(q, &g, 4, 20, 5000, false);
	assert_int_equal(most, 20 * 5000);	/* nothing could go earlier */
	cs_order_free(q);
	free(g.r);
}

static void reverse_sorted_input_is_sorted(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);

	(void)state;
	for (uint64_t t = 20000; t > 0; t--)
		push(q, t / 2, false);		/* pairs of equal times */
	assert_int_equal(cs_order_flush(q), 0);
	assert_int_equal(g.n, 20000);
	for (size_t i = 1; i < g.n; i++) {
		assert_true(g.r[i - 1].time <= g.r[i].time);
		if (g.r[i - 1].time == g.r[i].time)
			assert_true(g.r[i - 1].offset < g.r[i].offset);
	}
	cs_order_free(q);
	free(g.r);
}

static void memory_stays_bounded_across_many_rounds(void **state)
{
	struct got g;
	struct cs_order *q = new_queue(&g);
	size_t queued_max = 0;
	uint64_t clock = 0;

	(void)state;
	g.cap = 1 << 20;	/* the collector's own growth is not the queue's */
	g.r = malloc(g.cap * sizeof(*g.r));
#ifdef HAVE_ALLOC_STATS
	size_t base = 0;
#endif
	for (int r = 0; r < 2000; r++) {
		for (int c = 0; c < 2; c++)
			for (int i = 0; i < 200; i++)
				push(q, clock + (uint64_t)i * 2 + (uint64_t)c, false);
		clock += 400;
		if (cs_order_queued(q) > queued_max)
			queued_max = cs_order_queued(q);
		assert_int_equal(cs_order_round_end(q), 0);
#ifdef HAVE_ALLOC_STATS
		if (r == 20)
			base = __sanitizer_get_current_allocated_bytes();
		/* 19 MB of copies go through; a few 1 MiB chunks stay */
		if (r > 20)
			assert_true(__sanitizer_get_current_allocated_bytes() <=
				    base + 4 * 1024 * 1024);
#endif
		if (g.n > (1 << 19))
			g.n = 0;	/* keep the collector small; order is checked elsewhere */
	}
	/* two rounds' worth, never the whole file */
	assert_true(queued_max <= 3 * 400);
	assert_int_equal(cs_order_flush(q), 0);
	assert_int_equal(cs_order_queued(q), 0);
	cs_order_free(q);
	free(g.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interleaved_cpu_runs_come_out_in_time_order),
		cmocka_unit_test(round_end_releases_up_to_the_previous_rounds_largest_time),
		cmocka_unit_test(equal_times_keep_file_order),
		cmocka_unit_test(records_without_time_go_out_at_once),
		cmocka_unit_test(copied_records_outlive_the_callers_buffer),
		cmocka_unit_test(stable_records_are_not_copied),
		cmocka_unit_test(delivery_error_stops_and_is_returned),
		cmocka_unit_test(rounds_of_many_cpus_match_a_stable_sort),
		cmocka_unit_test(rounds_of_every_cpu_count_match_a_stable_sort),
		cmocka_unit_test(paused_deliveries_resume_where_they_stopped),
		cmocka_unit_test(file_without_rounds_is_sorted_at_the_end),
		cmocka_unit_test(reverse_sorted_input_is_sorted),
		cmocka_unit_test(memory_stays_bounded_across_many_rounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
