/* test_inject.c - inject's rewrite, read back through a session.
 *
 * src/outputs is not part of libcallstitch, so inject.c is compiled into this
 * test directly; the session, writer and encoders come from the library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "outputs/inject.c"

#define PID 42
#define K1 0xffffffff81001010ULL
#define K2 0xffffffff81002020ULL
#define U1 0x401010ULL
#define U2 0x402020ULL
#define U3 0x403030ULL

struct fx {
	char in[64], out[64];
	struct cs_perf_attr attr;
	struct cs_writer *w;
	uint64_t buf[1024];
	uint64_t now;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	int fd;

	assert_non_null(x);
	strcpy(x->in, "/tmp/test_inject_in.XXXXXX");
	strcpy(x->out, "/tmp/test_inject_out.XXXXXX");
	fd = mkstemp(x->in);
	assert_true(fd >= 0);
	close(fd);
	fd = mkstemp(x->out);
	assert_true(fd >= 0);
	close(fd);
	x->attr = (struct cs_perf_attr){
		.type = CS_PERF_TYPE_SOFTWARE, .size = CS_PERF_ATTR_SIZE_VER7,
		.sample_period = 1000,
		.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			       CS_SAMPLE_CALLCHAIN | CS_SAMPLE_PERIOD,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_COMM |
			 CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT,
	};
	x->now = 1000;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	unlink(x->in);
	unlink(x->out);
	free(x);
	return 0;
}

/* ---- writing the input ---- */

static void in_begin(struct fx *x)
{
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer_opts o = { 0 };
	uint64_t id = 1;
	struct cs_comm c = { PID, PID, "prog" };
	struct cs_sample_id sid = { .pid = PID, .tid = PID, .time = x->now++ };
	long n;

	assert_int_equal(cs_writer_open(x->in, -1, &o, &eb, &x->w), 0);
	assert_int_equal(cs_writer_add_event(x->w, &x->attr, "cpu-clock", &id, 1), 0);
	assert_int_equal(cs_writer_set_string(x->w, CS_FEAT_HOSTNAME, "box"), 0);
	assert_int_equal(cs_writer_begin(x->w), 0);
	n = cs_encode_comm(&x->attr, &c, false, &sid, x->buf, sizeof(x->buf));
	assert_true(n > 0);
	assert_int_equal(cs_writer_write(x->w, x->buf, (size_t)n), 0);
}

static void in_sample(struct fx *x, uint16_t mode, const uint64_t *chain, size_t nr)
{
	struct cs_sample s = {
		.ip = nr > 1 ? chain[1] : 0, .pid = PID, .tid = PID, .time = x->now++,
		.period = 1000, .misc = mode,
	};
	long n = cs_encode_sample(&x->attr, &s, chain, nr, x->buf, sizeof(x->buf));

	assert_true(n > 0);
	assert_int_equal(cs_writer_write(x->w, x->buf, (size_t)n), 0);
}

static void in_deferred(struct fx *x, uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct cs_deferred d = { .cookie = cookie, .nr = nr, .ips = ips };
	struct cs_sample_id sid = { .pid = PID, .tid = PID, .time = x->now++ };
	long n = cs_encode_deferred(&x->attr, &d, &sid, x->buf, sizeof(x->buf));

	assert_true(n > 0);
	assert_int_equal(cs_writer_write(x->w, x->buf, (size_t)n), 0);
}

static void in_comm(struct fx *x, uint32_t tid, const char *name, bool exec)
{
	struct cs_comm c = { PID, tid, name };
	struct cs_sample_id sid = { .pid = PID, .tid = tid, .time = x->now++ };
	long n = cs_encode_comm(&x->attr, &c, exec, &sid, x->buf, sizeof(x->buf));

	assert_true(n > 0);
	assert_int_equal(cs_writer_write(x->w, x->buf, (size_t)n), 0);
}

static void in_mmap2(struct fx *x, uint64_t start, const char *path)
{
	struct cs_mmap m = {
		.pid = PID, .tid = PID, .start = start, .len = 0x1000,
		.prot = 5 /* r-x */, .flags = 2, .filename = path,
	};
	struct cs_sample_id sid = { .pid = PID, .tid = PID, .time = x->now++ };
	long n = cs_encode_mmap2(&x->attr, &m, CS_MISC_USER, &sid, x->buf,
				 sizeof(x->buf));

	assert_true(n > 0);
	assert_int_equal(cs_writer_write(x->w, x->buf, (size_t)n), 0);
}

static void in_end(struct fx *x)
{
	assert_int_equal(cs_writer_finish(x->w), 0);
	cs_writer_free(x->w);
	x->w = NULL;
}

/* ---- inject, then read back ---- */

static void inject(struct fx *x, bool passthrough, struct cs_inject_stats *st)
{
	struct cs_session_opts so = { .sz = sizeof(so),
		.path = x->in, .fd = -1, .no_merge = passthrough, .ordered_off = passthrough,
	};
	struct cs_writer_opts wo = { 0 };
	struct cs_inject_opts io = { .passthrough = passthrough, .input = x->in };
	struct cs_errbuf eb = { { 0 } };
	struct cs_session *s = NULL;
	struct cs_writer *w = NULL;
	struct cs_inject *inj = NULL;
	int err;

	assert_int_equal(cs_session_open(&so, &s), 0);
	assert_int_equal(cs_writer_open(x->out, -1, &wo, &eb, &w), 0);
	assert_int_equal(cs_inject_new(w, &io, &inj), 0);
	err = cs_session_run(s, &cs_inject_ops, inj);
	if (err)
		fail_msg("inject: %d %s / %s", err, cs_inject_error(inj), cs_session_error(s));
	*st = *cs_inject_stats(inj);
	cs_inject_free(inj);
	cs_writer_free(w);
	cs_session_free(s);
}

struct seen {
	size_t samples, deferred, other;
	uint64_t chains[8][16];
	size_t chain_nr[8];
	enum cs_chain_state states[8];
};

static int seen_sample(void *ctx, const struct cs_stitched *st)
{
	struct seen *v = ctx;
	size_t i = v->samples++;

	if (i < 8) {
		v->states[i] = st->state;
		v->chain_nr[i] = st->event->sample.callchain_nr;
		memcpy(v->chains[i], st->event->sample.callchain,
		       (v->chain_nr[i] < 16 ? v->chain_nr[i] : 16) * 8);
	}
	return 0;
}

static int seen_deferred(void *ctx, const struct cs_event *ev)
{
	(void)ev;
	((struct seen *)ctx)->deferred++;
	return 0;
}

static int seen_event(void *ctx, const struct cs_event *ev)
{
	(void)ev;
	((struct seen *)ctx)->other++;
	return 0;
}

/* Reads out as recorded (no merging): what an old tool sees. */
static struct cs_session *read_back(struct fx *x, struct seen *v)
{
	static const struct cs_output_ops ops = {
		.sample = seen_sample, .deferred = seen_deferred, .event = seen_event,
	};
	struct cs_session_opts so = { .sz = sizeof(so), .path = x->out, .fd = -1, .no_merge = true };
	struct cs_session *s = NULL;

	memset(v, 0, sizeof(*v));
	assert_int_equal(cs_session_open(&so, &s), 0);
	assert_int_equal(cs_session_run(s, &ops, v), 0);
	return s;
}

static void assert_chain(const struct seen *v, size_t i, const uint64_t *want, size_t nr)
{
	assert_int_equal(v->chain_nr[i], nr);
	assert_memory_equal(v->chains[i], want, nr * 8);
}

/* ---- tests ---- */

static void a_deferred_sample_gets_its_whole_stack_back(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, K2, CS_CONTEXT_USER_DEFERRED, 7 };
	const uint64_t ips[] = { U1, U2, U3 };
	const uint64_t want[] = { CS_CONTEXT_KERNEL, K1, K2, CS_CONTEXT_USER, U1, U2, U3 };
	struct cs_inject_stats st;
	struct seen v;
	struct cs_session *s;

	in_begin(x);
	in_sample(x, CS_MISC_KERNEL, rec, 5);
	in_sample(x, CS_MISC_KERNEL, rec, 5);
	in_deferred(x, 7, ips, 3);
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.stitched, 2);
	assert_int_equal(st.deferred_dropped, 1);

	s = read_back(x, &v);
	assert_int_equal(v.samples, 2);
	assert_int_equal(v.deferred, 0);		/* no type 22 left */
	assert_int_equal(v.states[0], CS_CHAIN_ORIGINAL);	/* no longer deferred */
	assert_chain(&v, 0, want, 7);
	assert_chain(&v, 1, want, 7);
	/* the deferral bits are gone, the rest of the attr is as it was */
	assert_int_equal(cs_session_nr_evsels(s), 1);
	assert_int_equal(cs_evsel_attr(cs_session_evsel(s, 0))->flags,
			 x->attr.flags & ~(CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT));
	assert_int_equal(cs_evsel_attr(cs_session_evsel(s, 0))->sample_type, x->attr.sample_type);
	assert_string_equal(cs_session_info(s)->hostname, "box");
	cs_session_free(s);
}

static void a_late_sample_is_stitched_from_the_record_before_it(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_USER_DEFERRED, 9 };
	const uint64_t ips[] = { U1, U2 };
	const uint64_t want[] = { CS_CONTEXT_USER, U1, U2 };
	struct cs_inject_stats st;
	struct seen v;

	in_begin(x);
	in_sample(x, CS_MISC_USER, rec, 2);
	in_deferred(x, 9, ips, 2);
	in_sample(x, CS_MISC_USER, rec, 2);	/* same kernel entry, after its record */
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.stitched, 1);
	assert_int_equal(st.stitched_late, 1);
	cs_session_free(read_back(x, &v));
	assert_int_equal(v.samples, 2);
	assert_chain(&v, 0, want, 3);
	assert_chain(&v, 1, want, 3);
}

static void a_kernel_only_sample_keeps_its_kernel_part_without_the_cookie(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, K2, CS_CONTEXT_USER_DEFERRED, 11 };
	const uint64_t want[] = { CS_CONTEXT_KERNEL, K1, K2 };
	struct cs_inject_stats st;
	struct seen v;

	in_begin(x);
	in_sample(x, CS_MISC_KERNEL, rec, 5);	/* its record never comes */
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.kernel_only, 1);
	cs_session_free(read_back(x, &v));
	assert_int_equal(v.samples, 1);
	assert_chain(&v, 0, want, 3);
}

static void an_ordinary_sample_is_copied_as_recorded(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, CS_CONTEXT_USER, U1, U2 };
	struct cs_inject_stats st;
	struct seen v;

	in_begin(x);
	in_sample(x, CS_MISC_KERNEL, rec, 5);
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.original, 1);
	cs_session_free(read_back(x, &v));
	assert_chain(&v, 0, rec, 5);
}

static void passthrough_keeps_deferred_records_and_bits(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, CS_CONTEXT_USER_DEFERRED, 5 };
	const uint64_t ips[] = { U1 };
	struct cs_inject_stats st;
	struct seen v;
	struct cs_session *s;

	in_begin(x);
	in_sample(x, CS_MISC_KERNEL, rec, 4);
	in_deferred(x, 5, ips, 1);
	in_end(x);
	inject(x, true, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.deferred_dropped, 0);
	s = read_back(x, &v);
	assert_int_equal(v.deferred, 1);
	assert_chain(&v, 0, rec, 4);			/* cookie and all */
	assert_int_equal(cs_evsel_attr(cs_session_evsel(s, 0))->flags, x->attr.flags);
	cs_session_free(s);
}

/* What perf 6.1 does with the output: events in time order, each sample
 * resolved against the comm and maps of its moment. */
struct timeline {
	struct cs_session *s;
	size_t n;
	uint32_t type[16];
	uint64_t time[16];
	const char *comm[16];		/* a sample's comm at its moment */
};

static int tl_sample(void *ctx, const struct cs_stitched *st)
{
	struct timeline *t = ctx;

	if (t->n < 16) {
		t->type[t->n] = CS_RECORD_SAMPLE;
		t->time[t->n] = st->event->sample.time;
		t->comm[t->n] = cs_machine_comm(cs_session_machine(t->s), PID,
						st->event->sample.tid);
	}
	t->n++;
	return 0;
}

static int tl_event(void *ctx, const struct cs_event *ev)
{
	struct timeline *t = ctx;

	if (t->n < 16) {
		t->type[t->n] = ev->type;
		t->time[t->n] = ev->id.time;
	}
	t->n++;
	return 0;
}

static void an_exec_applies_before_the_samples_that_get_its_stack(void **state)
{
	struct fx *x = *state;
	/* two samples inside execve: their user stack, taken on the way out,
	 * is the new image's, whose COMM and MMAP2 come between them */
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, CS_CONTEXT_USER_DEFERRED, 13 };
	const uint64_t ips[] = { 0x7000010 };
	static const struct cs_output_ops ops = { .sample = tl_sample, .event = tl_event };
	struct cs_session_opts so = { .sz = sizeof(so), .path = x->out, .fd = -1 };
	struct timeline t = { 0 };
	struct cs_inject_stats st;

	in_begin(x);					/* COMM prog, 1000 */
	in_sample(x, CS_MISC_KERNEL, rec, 4);		/* 1001 */
	in_comm(x, PID, "newprog", true);		/* 1002 */
	in_comm(x, PID + 1, "other", false);		/* 1003: another thread */
	in_mmap2(x, 0x7000000, "/usr/bin/newprog");	/* 1004 */
	in_sample(x, CS_MISC_KERNEL, rec, 4);		/* 1005 */
	in_deferred(x, 13, ips, 1);			/* 1006 */
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.stitched, 2);
	assert_int_equal(st.retimed, 2);

	assert_int_equal(cs_session_open(&so, &t.s), 0);
	assert_int_equal(cs_session_run(t.s, &ops, &t), 0);
	assert_int_equal(t.n, 6);
	/* the exec's records at the first waiting sample's time, before it */
	assert_int_equal(t.type[0], CS_RECORD_COMM);
	assert_int_equal(t.time[0], 1000);
	assert_int_equal(t.type[1], CS_RECORD_COMM);
	assert_int_equal(t.time[1], 1001);
	assert_int_equal(t.type[2], CS_RECORD_MMAP2);
	assert_int_equal(t.time[2], 1001);
	assert_int_equal(t.type[3], CS_RECORD_SAMPLE);
	assert_int_equal(t.time[3], 1001);
	assert_string_equal(t.comm[3], "newprog");
	/* another thread's record keeps its time */
	assert_int_equal(t.type[4], CS_RECORD_COMM);
	assert_int_equal(t.time[4], 1003);
	assert_int_equal(t.type[5], CS_RECORD_SAMPLE);
	assert_int_equal(t.time[5], 1005);
	assert_string_equal(t.comm[5], "newprog");
	cs_session_free(t.s);	/* the comms live as long as it */
}

static void a_thread_without_waiting_samples_keeps_its_times(void **state)
{
	struct fx *x = *state;
	const uint64_t rec[] = { CS_CONTEXT_KERNEL, K1, CS_CONTEXT_USER_DEFERRED, 17 };
	const uint64_t ips[] = { U1 };
	struct cs_inject_stats st;

	in_begin(x);
	in_sample(x, CS_MISC_KERNEL, rec, 4);
	in_deferred(x, 17, ips, 1);		/* back in user space */
	in_comm(x, PID, "renamed", false);
	in_mmap2(x, 0x7000000, "/usr/lib/libnew.so");
	in_end(x);
	inject(x, false, &st);
	assert_int_equal(st.retimed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_deferred_sample_gets_its_whole_stack_back, setup, teardown),
		cmocka_unit_test_setup_teardown(a_late_sample_is_stitched_from_the_record_before_it, setup, teardown),
		cmocka_unit_test_setup_teardown(a_kernel_only_sample_keeps_its_kernel_part_without_the_cookie, setup, teardown),
		cmocka_unit_test_setup_teardown(an_ordinary_sample_is_copied_as_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(passthrough_keeps_deferred_records_and_bits, setup, teardown),
		cmocka_unit_test_setup_teardown(an_exec_applies_before_the_samples_that_get_its_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(a_thread_without_waiting_samples_keeps_its_times, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
