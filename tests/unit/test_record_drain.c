/* test_record_drain.c - the drain at stop, end to end on a ring in memory:
 * a "kernel" thread appends the deferred record some time after the stop,
 * and the recorder keeps reading exactly as long as samples wait for it. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/write/encode.h"
#include "lib/write/writer.h"

/* src/record is linked into the binary, not the library: take it whole */
#include "../../src/record/peek.c"
#include "../../src/record/waiting.c"
#include "../../src/record/ring.c"
#include "../../src/record/dsos.c"
#include "../../src/record/synth.c"
#include "../../src/record/event_parse.c"
#include "../../src/record/events.c"
#include "../../src/record/tracefs.c"
#include "../../src/record/tracing_data.c"
#include "../../src/record/child.c"
#include "../../src/record/record.c"

#define PAGE 4096
#define DATA (64 * 1024)
#define TID 77
#define COOKIE 0x300000001ULL

struct fixture {
	uint64_t mem[(PAGE + DATA) / 8];
	uint64_t head;
	pthread_mutex_t lock;
	struct cs_rec_evlist l;
	struct cs_rec_evsel evsels[2];	/* sampling, then the dummy */
	int cpu, fd;
	struct cs_record_opts o;
	struct cs_record_result res;
	struct cs_errbuf eb;
	struct rec r;
	char path[64];
};

static struct cs_perf_attr attr = {
	.type = CS_PERF_TYPE_SOFTWARE,
	.size = CS_PERF_ATTR_SIZE_VER7,
	.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
		       CS_SAMPLE_TIME | CS_SAMPLE_CALLCHAIN | CS_SAMPLE_CPU |
		       CS_SAMPLE_PERIOD,
	.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DEFER_CALLCHAIN,
};

/* The kernel's side: one record into the ring, head published last. */
static void kernel_put(struct fixture *f, const void *rec, size_t size)
{
	struct perf_event_mmap_page *pc = (void *)f->mem;
	unsigned char *data = (unsigned char *)f->mem + PAGE;

	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < size; i++)
		data[(f->head + i) % DATA] = ((const unsigned char *)rec)[i];
	f->head += size;
	__atomic_store_n(&pc->data_head, f->head, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&f->lock);
}

static void kernel_sample(struct fixture *f, uint64_t cookie)
{
	uint64_t buf[64];
	uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000130ULL,
			     CS_CONTEXT_USER_DEFERRED, cookie };
	struct cs_sample s = { .ip = chain[1], .pid = TID, .tid = TID, .time = 10,
			       .id = 1, .period = 1, .misc = CS_MISC_KERNEL };
	long n = cs_encode_sample(&attr, &s, chain, 4, buf, sizeof(buf));

	assert_true(n > 0);
	kernel_put(f, buf, (size_t)n);
}

static void kernel_deferred(struct fixture *f, uint64_t cookie)
{
	uint64_t buf[64], ips[] = { 0x401000, 0x401100 };
	struct cs_deferred d = { .cookie = cookie, .nr = 2, .ips = ips };
	struct cs_sample_id id = { .pid = TID, .tid = TID, .time = 20, .id = 2 };
	long n = cs_encode_deferred(&attr, &d, &id, buf, sizeof(buf));

	assert_true(n > 0);
	kernel_put(f, buf, (size_t)n);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct perf_event_mmap_page *pc;
	struct cs_writer_opts wo = { 0 };
	uint64_t id1 = 1, id2 = 2;
	struct cs_perf_attr dummy = attr;

	assert_non_null(f);
	pthread_mutex_init(&f->lock, NULL);
	pc = (void *)f->mem;
	pc->data_offset = PAGE;
	pc->data_size = DATA;
	f->l.nr_cpus = 1;
	f->l.cpus = &f->cpu;
	f->l.nr_threads = 1;
	f->fd = -1;			/* ioctls on no fd: nothing to disable */
	f->l.evsels = f->evsels;
	f->l.nr_evsels = 2;
	f->evsels[0].fds = f->evsels[1].fds = &f->fd;
	f->evsels[1].tracking = true;
	f->l.rings = calloc(1, sizeof(*f->l.rings));
	assert_int_equal(cs_ring_init(&f->l.rings[0], f->mem, PAGE, DATA), 0);

	snprintf(f->path, sizeof(f->path), "/tmp/test_record_drain.%d", (int)getpid());
	f->o.output = f->path;
	f->o.drain_ms = 2000;
	f->r.o = &f->o;
	f->r.res = &f->res;
	f->r.eb = &f->eb;
	f->r.l = &f->l;
	sigprocmask(SIG_SETMASK, NULL, &f->r.oldmask);
	assert_int_equal(cs_writer_open(f->path, -1, &wo, &f->eb, &f->r.w), 0);
	dummy.config = CS_PERF_COUNT_SW_DUMMY;
	dummy.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DEFER_OUTPUT;
	assert_int_equal(cs_writer_add_event(f->r.w, &attr, "cpu-clock", &id1, 1), 0);
	assert_int_equal(cs_writer_add_event(f->r.w, &dummy, "dummy:u", &id2, 1), 0);
	assert_int_equal(cs_writer_begin(f->r.w), 0);
	assert_int_equal(cs_waiting_new(attr.sample_type, &f->r.waiting), 0);
	assert_int_equal(cs_dsos_new(attr.sample_type, &f->r.dsos), 0);
	nr_signals = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	cs_writer_free(f->r.w);
	cs_waiting_free(f->r.waiting);
	cs_dsos_free(f->r.dsos);
	cs_ring_unmap(&f->l.rings[0]);
	free(f->l.rings);
	unlink(f->path);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 0;
}

struct late {
	struct fixture *f;
	unsigned delay_ms;
};

static void *late_record(void *arg)
{
	struct late *l = arg;
	struct timespec ts = { 0, (long)l->delay_ms * 1000000L };

	nanosleep(&ts, NULL);
	kernel_deferred(l->f, COOKIE);
	return NULL;
}

static double drain_ms(const struct fixture *f)
{
	return f->res.drain_ns / 1e6;
}

static void drain_lasts_until_the_awaited_record_comes(void **state)
{
	struct fixture *f = *state;
	struct late l = { f, 60 };
	pthread_t t;

	kernel_sample(f, COOKIE);
	kernel_sample(f, COOKIE);
	assert_int_equal(read_rings(&f->r), 0);
	assert_int_equal(cs_waiting_samples(f->r.waiting), 2);
	pthread_create(&t, NULL, late_record, &l);
	assert_int_equal(stop_and_drain(&f->r), 0);
	pthread_join(t, NULL);
	assert_int_equal(f->res.still_waiting, 0);
	assert_int_equal(f->res.waiting.released, 2);
	/* waited for the record, and not much longer */
	assert_true(drain_ms(f) >= 55);
	assert_true(drain_ms(f) < 1000);
	assert_int_equal(f->res.samples, 2);
}

static void drain_gives_up_at_its_limit(void **state)
{
	struct fixture *f = *state;

	f->o.drain_ms = 150;
	kernel_sample(f, COOKIE);
	kernel_sample(f, COOKIE);
	kernel_sample(f, COOKIE);
	assert_int_equal(stop_and_drain(&f->r), 0);
	assert_int_equal(f->res.still_waiting, 3);
	assert_true(drain_ms(f) >= 145);
	assert_true(drain_ms(f) < 1500);
}

static void nothing_waiting_means_no_drain(void **state)
{
	struct fixture *f = *state;

	kernel_sample(f, COOKIE);
	kernel_deferred(f, COOKIE);
	assert_int_equal(stop_and_drain(&f->r), 0);
	assert_int_equal(f->res.still_waiting, 0);
	assert_true(drain_ms(f) < 100);
}

static void drain_off_reads_once_and_stops(void **state)
{
	struct fixture *f = *state;

	f->o.drain_ms = 0;
	kernel_sample(f, COOKIE);
	assert_int_equal(stop_and_drain(&f->r), 0);
	assert_int_equal(f->res.still_waiting, 1);
	assert_int_equal(f->res.samples, 1);
	assert_true(drain_ms(f) < 100);
}

static void second_signal_cuts_the_drain_short(void **state)
{
	struct fixture *f = *state;

	kernel_sample(f, COOKIE);
	nr_signals = 2;
	assert_int_equal(stop_and_drain(&f->r), 0);
	assert_int_equal(f->res.still_waiting, 1);
	assert_true(drain_ms(f) < 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(drain_lasts_until_the_awaited_record_comes, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_gives_up_at_its_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_waiting_means_no_drain, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_off_reads_once_and_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(second_signal_cuts_the_drain_short, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
