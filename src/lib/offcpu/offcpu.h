/* offcpu.h - switch-outs into off-CPU time.
 *
 * A sched:sched_switch sample is taken as its task leaves the CPU; with a
 * stack it says where the task waited. The wait ends when the task runs
 * again: a PERF_RECORD_SWITCH or SWITCH_CPU_WIDE without the OUT bit for
 * it (--switch-events, record --off-cpu), or a sched_switch whose next_pid
 * is it (a system-wide recording) - whichever comes first.
 *
 * The stage sits between the stitcher and the output. It sees every event
 * in time order before the stitcher does (switch-outs are noted, switch-ins
 * and exits end them) and every stitched sample after it (a deferred user
 * stack completes a switch-out only when the task returns to user space,
 * after it ran again). A switch-out goes out once both are known, once, as
 * a stitched sample whose event's period is the nanoseconds it was off the
 * CPU and whose off_cpu says why (prev_state: sleeping, blocked, preempted).
 * Any other sample passes through untouched.
 *
 * A switch-out whose task switched out again, or exited, without a
 * switch-in on record goes out with 0 ns (counted: the file cannot say);
 * at the end of the input, a task still off the CPU is counted until the
 * last event. The idle task's switch-outs are not waits and are dropped.
 */
#ifndef CS_OFFCPU_H
#define CS_OFFCPU_H

#include <callstitch/callstitch.h>

struct cs_offcpu;			/* opaque */
struct cs_tracepoints;

typedef int (*cs_offcpu_fn)(void *ctx, const struct cs_stitched *s);

/* fn receives every sample; stats (not owned) gets the off-CPU counters.
 * Returns 0 and the stage in *out (the caller frees it), or -ENOMEM. */
int cs_offcpu_new(cs_offcpu_fn fn, void *ctx, struct cs_stats *stats,
		  struct cs_offcpu **out);

/* An event in time order, before the stitcher sees it (an EXIT after: the
 * stitcher releases the task's samples first). tp reads sched_switch's
 * fields (NULL: the file has no formats, nothing is off-CPU). Returns 0,
 * -ENOMEM, or what fn returned. */
int cs_offcpu_event(struct cs_offcpu *oc, const struct cs_event *ev,
		    struct cs_tracepoints *tp);

/* A stitched sample: a noted switch-out is held (copied) until its end is
 * known; anything else goes straight to fn. A cs_stitch callback. */
int cs_offcpu_sample(void *oc, const struct cs_stitched *s);

/* End of input, after the stitcher's flush: every held switch-out goes
 * out, a task's in time order, the tasks in an order that depends on
 * their tids alone (so a run repeats itself). */
int cs_offcpu_flush(struct cs_offcpu *oc);

void cs_offcpu_free(struct cs_offcpu *oc);

#endif
