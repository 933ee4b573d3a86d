/* folded.h - folded stacks ("root;...;leaf count"), for flame graph tools.
 *
 * One line per unique stack, outermost frame first, frames separated by
 * ';' and the number of samples last: the input of FlameGraph's
 * flamegraph.pl and of inferno. Frames are named the way
 * stackcollapse-perf.pl names them, so a flame graph drawn from our output
 * and one drawn from `perf script | stackcollapse-perf.pl` line up:
 * function arguments dropped, ';' turned into ':', an unknown symbol shown
 * as its dso's base name in brackets ("[libc.so.6]") or "[unknown]".
 * Functions inlined at a user address are frames of their own, as perf
 * script prints them. A kernel-only sample (its user stack never came) has
 * a marker as its outermost frame naming why, e.g.
 * "[user stack missing: lost]".
 *
 * Lines are sorted, so the output of one profile is always the same.
 *
 * Off-CPU time (record --off-cpu) folds the same way with the time as the
 * count (microseconds: period_div 1000) and a last frame saying why the
 * task waited, "[off-cpu: sleeping]", "[off-cpu: blocked on I/O]" or
 * "[off-cpu: preempted]".
 */
#ifndef CS_FOLDED_H
#define CS_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "lib/machine/frames.h"
#include "outputs/out_inlines.h"
#include "outputs/report_opts.h"

struct cs_folded;			/* opaque */

struct cs_folded_opts {
	bool no_kernel;			/* drop kernel frames */
	bool no_user;			/* drop user frames */
	bool comm;			/* the process name as the root frame */
	bool annotate;			/* "_[k]" after kernel frames' names */
	bool use_period;		/* count the period, not samples */
	uint32_t period_div;		/* written periods are divided by this
					 * (1000: off-CPU ns as microseconds);
					 * 0 means 1 */
	const struct cs_id_list *pids;	/* only these processes (NULL: all) */
	const struct cs_id_list *tids;	/* only these threads (NULL: all) */
	unsigned int jobs;		/* 2 or more: samples are counted on a
					 * thread of their own. Same output. */
};

/* Returns 0 and a new aggregator in *out (the caller frees it), or
 * -ENOMEM. opts is copied; the pid and tid lists must outlive it. */
int cs_folded_new(const struct cs_folded_opts *opts, struct cs_folded **out);
void cs_folded_free(struct cs_folded *f);

/* Adds one sample given its resolved frames, innermost first (as
 * cs_frames_resolve() gives them). comm may be NULL. Strings in the frames
 * must outlive f. Returns 0 or -ENOMEM. */
int cs_folded_add(struct cs_folded *f, const struct cs_frame *frames,
		  size_t nr, const char *comm, uint64_t period);

/* The same for off-CPU time: the stack gets a leaf frame saying why its
 * task waited ("[off-cpu: sleeping]"); period is the nanoseconds. */
int cs_folded_add_off_cpu(struct cs_folded *f, const struct cs_frame *frames,
			  size_t nr, const char *comm, uint64_t period,
			  enum cs_off_cpu_state state);

/* Whether a sample of pid/tid passes the --pid/--tid filters. */
bool cs_folded_wants(const struct cs_folded *f, uint32_t pid, uint32_t tid);
/* Whether samples need their command name (the --comm root frame). */
bool cs_folded_wants_comm(const struct cs_folded *f);

/* With jobs > 1, the samples added are counted on a thread of their own
 * while the caller reads the next ones (the frames' keys are made here):
 * waits until every one is counted and ends that thread; later samples
 * are counted at once. Returns 0 or the first error of counting
 * (-ENOMEM). cs_folded_write() flushes first. */
int cs_folded_flush(struct cs_folded *f);

/* Writes every stack, sorted. Returns 0, -ENOMEM or -EIO. */
int cs_folded_write(struct cs_folded *f, FILE *out);

/* Samples (or periods, with use_period) added and counted (after a
 * flush); equals the sum of the counts written. */
uint64_t cs_folded_total(const struct cs_folded *f);

/* cs_output_ops whose ctx is a struct cs_folded_run; `end` writes. */
struct cs_folded_run {
	struct cs_folded *folded;
	FILE *out;
	bool no_inline;			/* no frames for inlined functions */
	enum cs_cpu_view view;		/* on-CPU samples or off-CPU time */
	uint64_t left_out;		/* samples the view left out */
	int write_err;			/* errno of a failed write; end then
					 * returns 1 and the command names the file */
	struct cs_machine *machine;	/* set by begin */
	struct cs_out_stack stack;	/* allocated by begin */
};
extern const struct cs_output_ops cs_folded_ops;
/* Frees what begin allocated (not the aggregator). */
void cs_folded_run_release(struct cs_folded_run *r);

#endif
