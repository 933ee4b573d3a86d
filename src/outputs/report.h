/* report.h - a text profile in the layout of `perf report --stdio`.
 *
 * Samples are aggregated per unique stack while the profile is read (one
 * hash probe per frame, no allocation per sample); entries, their
 * overheads and call graphs are worked out once, at the end:
 *
 *   - an entry is one value of the sort keys (default comm,dso,sym), per
 *     event; Self is the period of samples whose innermost frame is the
 *     entry, Children (the default) the period of samples whose stack holds
 *     it anywhere, counted once per sample;
 *   - under each entry, the call graph of the stacks that reach it (for
 *     Children, down to the entry's innermost occurrence), root first
 *     (caller) or entry first (callee), branches below min_percent of the
 *     event's total hidden, drawn as perf draws it.
 *
 * Percentages are of the period (the "Event count"), as in perf; -n adds
 * sample counts, whose Self column sums to the number of samples. An event
 * whose samples are off-CPU time (cs_report_add_off_cpu) says so in its
 * header, counts nanoseconds and shows a Seconds column; its switch-outs
 * can be told apart by why they waited (the state sort key).
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "lib/machine/frames.h"
#include "outputs/out_inlines.h"
#include "outputs/report_opts.h"

struct cs_report;			/* opaque */

enum cs_report_key {
	CS_REPORT_COMM,
	CS_REPORT_PID,
	CS_REPORT_TID,
	CS_REPORT_DSO,
	CS_REPORT_SYM,
	CS_REPORT_STATE,		/* off-CPU: sleeping, blocked, preempted */
	CS_REPORT__NR_KEYS,
};

enum cs_report_graph {
	CS_REPORT_GRAPH_CALLER,		/* root first (perf's default) */
	CS_REPORT_GRAPH_CALLEE,		/* the entry first, callers below */
	CS_REPORT_GRAPH_NONE,
};

struct cs_report_opts {
	bool no_children;		/* Self only ("Overhead") */
	bool show_nr_samples;		/* -n: a Samples column */
	enum cs_report_graph graph;
	double graph_min_percent;	/* hide branches below this; perf: 0.5 */
	double percent_limit;		/* hide entries below this */
	enum cs_report_key sort[CS_REPORT__NR_KEYS];
	size_t nr_sort;			/* 0: comm,dso,sym */
	unsigned int jobs;		/* threads for aggregating, sorting and
					 * formatting; 0 or 1: this one. Same
					 * output. */
	size_t memory;			/* bytes the report's tables may hold
					 * (0: 256 MiB): past that, the stacks
					 * go to a temporary file in $TMPDIR
					 * and the report is made from there
					 * in about that much (same output) */
};

/* Parses "comm,dso,sym" (any subset and order of comm, pid, tid, dso, sym,
 * state)
 * into o->sort. Returns 0 or -EINVAL with the bad key in bad[0..len). */
int cs_report_parse_sort(struct cs_report_opts *o, const char *arg,
			 char *bad, size_t len);

/* Returns 0 and a new report in *out (the caller frees it), or -ENOMEM. */
int cs_report_new(const struct cs_report_opts *o, struct cs_report **out);
void cs_report_free(struct cs_report *r);

/* Adds a sample of event `evsel` (an index) given its resolved frames,
 * innermost first, and for each a cs_out_inline kind (out_inlines.h;
 * inlined may be NULL: none is). Inlined functions show in call graphs
 * only. comm may be NULL and is copied; the frames' strings must outlive
 * r. Returns 0 or -ENOMEM. */
int cs_report_add(struct cs_report *r, unsigned int evsel, uint32_t pid,
		  uint32_t tid, const char *comm, const struct cs_frame *frames,
		  const uint8_t *inlined, size_t nr, uint64_t period);

/* The same for a switch-out turned into off-CPU time (period: its
 * nanoseconds off the CPU, state: why). An event with such samples is
 * written as off-CPU time, in seconds. */
int cs_report_add_off_cpu(struct cs_report *r, unsigned int evsel,
			  enum cs_off_cpu_state state, uint32_t pid,
			  uint32_t tid, const char *comm,
			  const struct cs_frame *frames, const uint8_t *inlined,
			  size_t nr, uint64_t period);

/* Fills f->loc for an address of process pid (cs_frame_resolve()). */
typedef void (*cs_report_resolve_fn)(void *ctx, uint32_t pid,
				     struct cs_frame *f);

/* cs_report_add_off_cpu() without inlined functions, for frames as
 * cs_frames_walk() gives them, not resolved: space[i] is the address space
 * frame i's address lies in (cs_machine_user_space(),
 * cs_machine_kernel_space()), 0 for one that is no address or whose space
 * is not known. A frame seen before at the same (space, address, cpumode)
 * is found at once; any other is resolved by resolve(ctx, pid, frame),
 * which may write the frame. The same report as cs_report_add_off_cpu()
 * given the resolved frames (with jobs > 1, every frame is resolved and
 * the sample handed to the counting thread, as there). Returns 0 or
 * -ENOMEM. */
int cs_report_add_walked(struct cs_report *r, unsigned int evsel,
			 enum cs_off_cpu_state state, uint32_t pid,
			 uint32_t tid, const char *comm,
			 struct cs_frame *frames, const uint64_t *space,
			 size_t nr, uint64_t period,
			 cs_report_resolve_fn resolve, void *ctx);

/* Where the samples added from now on come from: done of total bytes
 * through the input (total 0: not known, as of a pipe). Over 7/8 of the
 * memory budget, tables that, growing on as they grew over the input so
 * far, would end past 5/4 of it go to the temporary file at once, before
 * they and the rest of the process pass the budget; those that would end
 * under the budget go on in memory; without progress, or between the two,
 * later samples are set aside until the end says which. The output is
 * the same either way. */
void cs_report_progress(struct cs_report *r, uint64_t done, uint64_t total);

/* With jobs > 1, the samples added are counted on a thread of their own
 * while the caller reads the next ones (the frames' keys are made here):
 * waits until every sample added is counted and ends that thread. Later
 * samples are counted at once. Returns 0 or the first error of counting
 * (-ENOMEM). cs_report_write() flushes first. */
int cs_report_flush(struct cs_report *r);

/* Samples and period added for an event (counted: after a flush). */
uint64_t cs_report_samples(const struct cs_report *r, unsigned int evsel);
uint64_t cs_report_period(const struct cs_report *r, unsigned int evsel);

/* Writes one section per event that has samples: "# Samples: ... of event
 * 'NAME'", the column header, the entries and their call graphs.
 * names[i] names event i (NULL or beyond nr_names: "event i").
 * Returns 0, -ENOMEM or -EIO. */
int cs_report_write(struct cs_report *r, FILE *out, const char *const *names,
		    size_t nr_names);

/* The line that says what failed with a temporary file, after an error;
 * NULL if none did. */
const char *cs_report_error(const struct cs_report *r);

/* After cs_report_write(): one line that says how the report was made,
 * in memory (its tables' bytes) or from a temporary file (when and why
 * it went there); NULL before. Owned by r. */
const char *cs_report_memory_note(const struct cs_report *r);

/* As an output: ctx is a struct cs_report_run. `end` writes the metadata
 * header (from cs_session_info() and the stitching statistics) and then
 * the report. */
struct cs_report_run {
	struct cs_report *report;
	FILE *out;
	const struct cs_id_list *pids, *tids;	/* filters (NULL: all) */
	const struct cs_name_list *comms;
	enum cs_cpu_view view;		/* which samples, off-CPU time or not */
	struct cs_machine *machine;	/* set by begin */
	struct cs_frame *frames;	/* allocated by begin */
	uint64_t *spaces;		/* per frame, allocated by begin */
	bool no_inline;			/* leave inlined functions out */
	int write_err;			/* errno of a failed write; end then
					 * returns 1 and the command names the file */
	struct cs_frame *expanded;	/* frames with inlined functions */
	uint8_t *inlined;
	struct cs_out_inline_cache *inline_cache;
	uint64_t filtered;		/* samples the filters left out */
	uint64_t data_start, data_size;	/* the file's data section, by
					 * which samples tell the report how
					 * far in they are (size 0: a pipe) */
};
extern const struct cs_output_ops cs_report_ops;
/* Frees what begin allocated (not the report). */
void cs_report_run_release(struct cs_report_run *run);

#endif
