/* test_offcpu.c - switch-outs into off-CPU time: each comes out once, when
 * both its stack and its end are known, weighted by the time its task was
 * away, whatever order the stitcher and the switch-ins come in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "lib/offcpu/offcpu.h"
#include "lib/trace/tracepoints.h"
#include "lib/write/feature.h"
#include "tp_example.h"

#define TASK_S 1
#define TASK_D 2
#define PREEMPT_BIT 0x100

struct got {
	uint32_t tid;
	uint64_t time, ns;
	enum cs_off_cpu_state state;
	uint64_t chain0;
};

struct fx {
	struct cs_tracepoints *tp;
	struct cs_offcpu *oc;
	struct cs_stats stats;
	struct cs_evsel sw, clock;
	struct got got[16];
	size_t n;
};

static int collect(void *ctx, const struct cs_stitched *s)
{
	struct fx *x = ctx;
	struct got *g = &x->got[x->n++];

	assert_true(x->n <= 16);
	g->tid = s->event->sample.tid;
	g->time = s->event->sample.time;
	g->ns = s->event->sample.period;
	g->state = s->off_cpu;
	g->chain0 = s->chain_nr ? s->chain[0] : 0;
	return 0;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	const char *formats[] = { tp_switch_format };
	struct cs_fbuf b = { 0 };
	const char *why;

	assert_non_null(x);
	tp_example_tracing_data(&b, formats, 1);
	assert_int_equal(cs_tracepoints_new(b.p, b.len, &x->tp, &why), 0);
	cs_fbuf_free(&b);
	assert_int_equal(cs_offcpu_new(collect, x, &x->stats, &x->oc), 0);
	x->sw = (struct cs_evsel){ .name = "sched:sched_switch", .index = 0,
		.type = CS_PERF_TYPE_TRACEPOINT, .config = TP_SWITCH_ID,
		.sample_type = CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_CALLCHAIN |
			       CS_SAMPLE_RAW };
	x->clock = (struct cs_evsel){ .name = "cpu-clock", .index = 1,
		.type = CS_PERF_TYPE_SOFTWARE,
		.sample_type = CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_CALLCHAIN };
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	cs_offcpu_free(x->oc);
	cs_tracepoints_free(x->tp);
	free(x);
	return 0;
}

/* a sched_switch of tid at time; the chain is its stack (one frame) */
static struct cs_event switch_event(struct fx *x, uint8_t raw[64], uint32_t tid,
				    uint64_t time, int64_t prev_state,
				    int32_t next_pid)
{
	struct cs_event ev = { .type = CS_RECORD_SAMPLE, .evsel = &x->sw };

	ev.sample.pid = ev.sample.tid = tid;
	ev.sample.time = time;
	ev.sample.period = 1;
	ev.sample.raw = raw;
	ev.sample.raw_size = (uint32_t)tp_example_switch_raw(raw, (int32_t)tid,
							      prev_state, next_pid);
	return ev;
}

/* the event in time order, then (if stitch) the stitched sample at once */
static void switch_out(struct fx *x, uint32_t tid, uint64_t time,
		       int64_t prev_state, int32_t next_pid, bool stitch)
{
	uint8_t raw[64];
	uint64_t chain[] = { 0xffffffff81000000ULL + time };
	struct cs_event ev = switch_event(x, raw, tid, time, prev_state, next_pid);
	struct cs_stitched st = { .event = &ev, .chain = chain, .chain_nr = 1 };

	assert_int_equal(cs_offcpu_event(x->oc, &ev, x->tp), 0);
	if (stitch)
		assert_int_equal(cs_offcpu_sample(x->oc, &st), 0);
}

/* the stitched sample of an earlier switch-out, now (deferred) */
static void stitched_late(struct fx *x, uint32_t tid, uint64_t time)
{
	uint8_t raw[64];
	uint64_t chain[] = { 0xffffffff81000000ULL + time };
	struct cs_event ev = switch_event(x, raw, tid, time, TASK_S, 0);
	struct cs_stitched st = { .event = &ev, .chain = chain, .chain_nr = 1 };

	assert_int_equal(cs_offcpu_sample(x->oc, &st), 0);
}

static void switch_in(struct fx *x, uint32_t tid, uint64_t time, bool cpu_wide)
{
	struct cs_event ev = {
		.type = cpu_wide ? CS_RECORD_SWITCH_CPU_WIDE : CS_RECORD_SWITCH,
		.has_id = true,
		.id = { .pid = tid, .tid = tid, .time = time },
	};

	assert_int_equal(cs_offcpu_event(x->oc, &ev, x->tp), 0);
}

static void held_until_its_task_runs_again(void **state)
{
	struct fx *x = *state;

	switch_out(x, 10, 1000, TASK_S, 0, true);
	assert_int_equal(x->n, 0);
	switch_in(x, 10, 1750, false);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].ns, 750);
	assert_int_equal(x->got[0].time, 1000);
	assert_int_equal(x->got[0].state, CS_OFF_CPU_SLEEPING);
	/* the chain was copied: the caller's buffer is long gone */
	assert_int_equal(x->got[0].chain0, 0xffffffff81000000ULL + 1000);
	assert_int_equal(x->stats.off_cpu_samples, 1);
	assert_int_equal(x->stats.off_cpu_ns, 750);
}

static void a_deferred_stack_after_the_switch_in_goes_out_at_once(void **state)
{
	struct fx *x = *state;

	/* the user stack came when the task returned to user space */
	switch_out(x, 10, 1000, TASK_D, 0, false);
	switch_in(x, 10, 1400, true);
	assert_int_equal(x->n, 0);
	stitched_late(x, 10, 1000);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].ns, 400);
	assert_int_equal(x->got[0].state, CS_OFF_CPU_BLOCKED);
}

static void one_kernel_entry_several_waits(void **state)
{
	struct fx *x = *state;

	/* two switch-outs of one kernel entry share one deferred stack */
	switch_out(x, 10, 1000, TASK_S, 0, false);
	switch_in(x, 10, 1100, false);
	switch_out(x, 10, 1200, PREEMPT_BIT, 0, false);
	switch_in(x, 10, 1500, false);
	stitched_late(x, 10, 1000);
	stitched_late(x, 10, 1200);
	assert_int_equal(x->n, 2);
	assert_int_equal(x->got[0].ns, 100);
	assert_int_equal(x->got[1].ns, 300);
	assert_int_equal(x->got[1].state, CS_OFF_CPU_PREEMPTED);
}

static void a_held_copy_survives_its_neighbours_going_out(void **state)
{
	struct fx *x = *state;

	switch_out(x, 10, 1000, TASK_S, 0, false);	/* deferred */
	switch_in(x, 10, 1100, false);
	switch_out(x, 10, 1200, TASK_S, 0, true);	/* held */
	stitched_late(x, 10, 1000);			/* the first goes out */
	switch_in(x, 10, 1300, false);			/* the held one moved */
	assert_int_equal(x->n, 2);
	assert_int_equal(x->got[1].time, 1200);
	assert_int_equal(x->got[1].ns, 100);
	assert_int_equal(x->got[1].chain0, 0xffffffff81000000ULL + 1200);
}

static void next_pid_of_a_system_wide_switch_ends_the_wait(void **state)
{
	struct fx *x = *state;

	switch_out(x, 10, 1000, TASK_S, 20, true);
	/* task 20 switches out to 10: 10 comes in */
	switch_out(x, 20, 1600, TASK_S, 10, true);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].tid, 10);
	assert_int_equal(x->got[0].ns, 600);
}

static void a_second_switch_out_without_a_switch_in_counts_zero(void **state)
{
	struct fx *x = *state;

	switch_out(x, 10, 1000, TASK_S, 0, true);
	switch_out(x, 10, 2000, TASK_S, 0, true);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].ns, 0);
	assert_int_equal(x->stats.off_cpu_unknown, 1);
}

static void exit_ends_the_wait_and_the_end_of_input_the_rest(void **state)
{
	struct fx *x = *state;
	struct cs_event ex = { .type = CS_RECORD_EXIT, .has_id = true,
			       .id = { .tid = 10, .time = 1500 } };
	struct cs_event other = { .type = CS_RECORD_MMAP2, .has_id = true,
				  .id = { .tid = 99, .time = 5000 } };

	ex.fork.tid = ex.fork.pid = 10;
	switch_out(x, 10, 1000, TASK_S, 0, true);
	switch_out(x, 11, 1200, TASK_S, 0, true);
	assert_int_equal(cs_offcpu_event(x->oc, &ex, x->tp), 0);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].ns, 0);
	/* 11 still sleeps when the recording stops: until the last event */
	assert_int_equal(cs_offcpu_event(x->oc, &other, x->tp), 0);
	assert_int_equal(cs_offcpu_flush(x->oc), 0);
	assert_int_equal(x->n, 2);
	assert_int_equal(x->got[1].tid, 11);
	assert_int_equal(x->got[1].ns, 3800);
	assert_int_equal(x->stats.off_cpu_at_end, 1);
}

static void the_idle_task_and_other_events_are_not_waits(void **state)
{
	struct fx *x = *state;
	uint64_t chain[] = { 0x401000 };
	struct cs_event ev = { .type = CS_RECORD_SAMPLE, .evsel = &x->clock };
	struct cs_stitched st = { .event = &ev, .chain = chain, .chain_nr = 1 };

	switch_out(x, 0, 1000, 0, 10, true);
	assert_int_equal(x->n, 0);
	ev.sample.tid = 10;
	ev.sample.period = 250000;
	assert_int_equal(cs_offcpu_event(x->oc, &ev, x->tp), 0);
	assert_int_equal(cs_offcpu_sample(x->oc, &st), 0);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].state, CS_OFF_CPU_NONE);
	assert_int_equal(x->got[0].ns, 250000);	/* its period, untouched */
	assert_int_equal(x->stats.off_cpu_samples, 0);
}

static void without_formats_nothing_is_off_cpu(void **state)
{
	struct fx *x = *state;
	uint8_t raw[64];
	uint64_t chain[] = { 1 };
	struct cs_event ev = switch_event(x, raw, 10, 1000, TASK_S, 0);
	struct cs_stitched st = { .event = &ev, .chain = chain, .chain_nr = 1 };

	assert_int_equal(cs_offcpu_event(x->oc, &ev, NULL), 0);
	assert_int_equal(cs_offcpu_sample(x->oc, &st), 0);
	assert_int_equal(x->n, 1);
	assert_int_equal(x->got[0].state, CS_OFF_CPU_NONE);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(held_until_its_task_runs_again),
		T(a_deferred_stack_after_the_switch_in_goes_out_at_once),
		T(one_kernel_entry_several_waits),
		T(a_held_copy_survives_its_neighbours_going_out),
		T(next_pid_of_a_system_wide_switch_ends_the_wait),
		T(a_second_switch_out_without_a_switch_in_counts_zero),
		T(exit_ends_the_wait_and_the_end_of_input_the_rest),
		T(the_idle_task_and_other_events_are_not_waits),
		T(without_formats_nothing_is_off_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
