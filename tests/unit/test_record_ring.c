/* test_record_ring.c - reading a perf ring buffer: order, wrap-around,
 * tail publication, and refusing an impossible record. The ring lives in
 * ordinary memory laid out like the kernel's mmap. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "record/ring.h"

#define PAGE 4096
#define DATA 4096		/* small, so records wrap soon */

struct fake {
	uint64_t mem[(PAGE + DATA) / 8];
	struct cs_ring ring;
	uint64_t head;		/* where the "kernel" writes next */
};

struct seen {
	unsigned n;
	uint32_t sizes[64];
	uint64_t firsts[64];	/* first payload word of each record */
	uint64_t lasts[64];	/* last payload word */
	unsigned stop_after;	/* 0: never stop */
};

static struct perf_event_mmap_page *pc(struct fake *f)
{
	return (struct perf_event_mmap_page *)(void *)f->mem;
}

/* Writes one record of size bytes whose payload words count up from seq,
 * wrapping at the end of the data area, then publishes the head. */
static void kernel_write(struct fake *f, uint16_t size, uint64_t seq)
{
	unsigned char *data = (unsigned char *)f->mem + PAGE;
	uint64_t rec[512];
	struct cs_perf_event_header h = { .type = 9, .size = size };

	memcpy(rec, &h, sizeof(h));
	for (unsigned i = 1; i < size / 8u; i++)
		rec[i] = seq + i;
	for (unsigned i = 0; i < size; i++)
		data[(f->head + i) % DATA] = ((unsigned char *)rec)[i];
	f->head += size;
	__atomic_store_n(&pc(f)->data_head, f->head, __ATOMIC_RELEASE);
}

static int collect(void *ctx, const void *rec, size_t size)
{
	struct seen *s = ctx;
	const uint64_t *w = rec;

	assert_int_equal((uintptr_t)rec % 8, 0);
	s->sizes[s->n] = (uint32_t)size;
	s->firsts[s->n] = w[1];
	s->lasts[s->n] = w[size / 8 - 1];
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pc(f)->data_offset = PAGE;
	pc(f)->data_size = DATA;
	assert_int_equal(cs_ring_init(&f->ring, f->mem, PAGE, DATA), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	cs_ring_unmap(&f->ring);
	free(f);
	return 0;
}

static void records_come_out_in_order_and_the_tail_follows(void **state)
{
	struct fake *f = *state;
	struct seen s = { 0 };

	kernel_write(f, 64, 100);
	kernel_write(f, 16, 200);
	kernel_write(f, 1024, 300);
	assert_int_equal(cs_ring_pending(&f->ring), 64 + 16 + 1024);
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), 64 + 16 + 1024);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.sizes[0], 64);
	assert_int_equal(s.firsts[1], 201);
	assert_int_equal(s.lasts[2], 300 + 1024 / 8 - 1);
	assert_int_equal(pc(f)->data_tail, 64 + 16 + 1024);
	assert_int_equal(cs_ring_pending(&f->ring), 0);
	/* nothing new: nothing read */
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), 0);
	assert_int_equal(s.n, 3);
}

/* What the callbacks saw of the published tail. */
struct watch {
	struct fake *f;
	struct seen s;
	uint64_t tail_seen;	/* data_tail as the last callback saw it */
};

static int watch_tail(void *ctx, const void *rec, size_t size)
{
	struct watch *w = ctx;

	w->tail_seen = __atomic_load_n(&pc(w->f)->data_tail, __ATOMIC_ACQUIRE);
	return collect(&w->s, rec, size);
}

static void room_is_given_back_during_the_read(void **state)
{
	struct fake *f = *state;
	struct watch w = { .f = f };

	for (int i = 0; i < 4; i++)
		kernel_write(f, 512, 1000 * (uint64_t)i);
	assert_int_equal(cs_ring_read(&f->ring, watch_tail, &w), 4 * 512);
	assert_int_equal(w.s.n, 4);
	assert_int_equal(pc(f)->data_tail, 4 * 512);
	/* before the last record was read, the kernel already had the room
	 * of the first two back: a quarter of the ring at a time */
	assert_int_equal(w.tail_seen, 2 * 512);
}

static void record_across_the_end_comes_out_whole(void **state)
{
	struct fake *f = *state;
	struct seen s = { 0 };

	/* fill to 40 bytes before the end, consume, then straddle it */
	kernel_write(f, DATA - 40, 1);
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), DATA - 40);
	kernel_write(f, 200, 5000);
	kernel_write(f, 24, 6000);
	s.n = 0;
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), 224);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.sizes[0], 200);
	assert_int_equal(s.firsts[0], 5001);
	assert_int_equal(s.lasts[0], 5000 + 200 / 8 - 1);
	assert_int_equal(s.firsts[1], 6001);
	assert_int_equal(pc(f)->data_tail, DATA - 40 + 224);
}

static void many_laps_lose_nothing(void **state)
{
	struct fake *f = *state;
	struct seen s = { 0 };
	uint64_t want = 0;

	/* odd sizes so that records straddle the end at many offsets */
	for (unsigned lap = 0; lap < 500; lap++) {
		uint16_t size = (uint16_t)(8 * (2 + lap % 61));

		kernel_write(f, size, lap * 1000);
		want += size;
		s.n = 0;
		assert_int_equal(cs_ring_read(&f->ring, collect, &s), size);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.sizes[0], size);
		assert_int_equal(s.firsts[0], lap * 1000 + 1);
		assert_int_equal(s.lasts[0], lap * 1000 + size / 8 - 1);
	}
	assert_int_equal(pc(f)->data_tail, want);
}

static void a_stop_consumes_up_to_the_record_that_stopped(void **state)
{
	struct fake *f = *state;
	struct seen s = { .stop_after = 2 };

	kernel_write(f, 32, 1);
	kernel_write(f, 32, 2);
	kernel_write(f, 32, 3);
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), 42);
	assert_int_equal(pc(f)->data_tail, 64);
	s.stop_after = 0;
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), 32);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.firsts[2], 4);
}

static void impossible_record_size_is_refused(void **state)
{
	struct fake *f = *state;
	struct seen s = { 0 };
	struct cs_perf_event_header h = { .type = 9, .size = 4 };

	memcpy((unsigned char *)f->mem + PAGE, &h, sizeof(h));
	__atomic_store_n(&pc(f)->data_head, 64, __ATOMIC_RELEASE);
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), -EBADMSG);
	assert_int_equal(s.n, 0);

	/* a size beyond the published head is as wrong */
	h.size = 128;
	memcpy((unsigned char *)f->mem + PAGE, &h, sizeof(h));
	assert_int_equal(cs_ring_read(&f->ring, collect, &s), -EBADMSG);
	assert_int_equal(pc(f)->data_tail, 0);
}

static void ring_size_must_be_a_power_of_two(void **state)
{
	uint64_t mem[(PAGE + 3 * PAGE) / 8] = { 0 };
	struct cs_ring r;

	(void)state;
	assert_int_equal(cs_ring_init(&r, mem, PAGE, 3 * PAGE), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(records_come_out_in_order_and_the_tail_follows, setup, teardown),
		cmocka_unit_test_setup_teardown(room_is_given_back_during_the_read, setup, teardown),
		cmocka_unit_test_setup_teardown(record_across_the_end_comes_out_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(many_laps_lose_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(a_stop_consumes_up_to_the_record_that_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(impossible_record_size_is_refused, setup, teardown),
		cmocka_unit_test(ring_size_must_be_a_power_of_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
