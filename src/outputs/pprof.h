/* pprof.h - the profile as pprof's profile.proto, gzipped.
 *
 * What continuous-profiling services and `go tool pprof` read:
 *   sample_type   samples/count, then per event its period: cpu/nanoseconds
 *                 for cpu-clock and task-clock (their period is in ns),
 *                 off_cpu/nanoseconds for off-CPU time, else NAME/count
 *   sample        location ids (innermost first), the values, and labels
 *                 comm (string), pid and tid (numbers), and for off-CPU
 *                 time state (sleeping, blocked on I/O, preempted), which
 *                 is also its stack's leaf, "[off-cpu: sleeping]"
 *   location      the address, its mapping, one line naming the function
 *                 (none when the symbol is unknown)
 *   function      name (the demangled symbol), and its dso as file name
 *   mapping       start, limit, file offset, file name, build id (hex)
 *   string_table  "" first
 *   period_type, period, time_nanos, duration_nanos, default_sample_type
 * A kernel-only sample's missing user part is a location whose function is
 * named "[user stack missing: why]", as in the other outputs.
 *
 * Samples are aggregated per unique (thread, event, stack) while reading;
 * the protobuf is encoded once, at the end.
 */
#ifndef CS_PPROF_H
#define CS_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "lib/machine/frames.h"
#include "outputs/out_inlines.h"
#include "outputs/report_opts.h"

struct cs_pprof;			/* opaque */

/* One event of the profile, as the sample types need it. */
struct cs_pprof_event {
	const char *name;		/* "cpu-clock" */
	uint64_t period;		/* fixed period; 0 when sampled by frequency */
	uint64_t freq;			/* samples per second, or 0 */
};

struct cs_pprof_opts {
	int64_t end_nanos;		/* wall clock (epoch ns) when the recording
					 * ended, or 0; time_nanos is this less
					 * the span of the samples */
	int compression;		/* zlib level; 0 means the default (1) */
	unsigned int jobs;		/* 2 or more: samples are counted on a
					 * thread of their own. Same output. */
};

/* Returns 0 and a new profile in *out (the caller frees it), or -ENOMEM. */
int cs_pprof_new(const struct cs_pprof_opts *o, struct cs_pprof **out);
void cs_pprof_free(struct cs_pprof *p);

/* Adds a sample of event `evsel` at `time` (ns, the recording's clock)
 * given its resolved frames, innermost first. comm may be NULL and is
 * copied; the frames' strings must outlive p. Returns 0 or -ENOMEM. */
int cs_pprof_add(struct cs_pprof *p, unsigned int evsel, uint32_t pid,
		 uint32_t tid, const char *comm, uint64_t time,
		 const struct cs_frame *frames, size_t nr, uint64_t period);

/* The same with the functions inlined at the frames' addresses: frames
 * marked in `inlined` (cs_out_inline kinds, out_inlines.h) become extra
 * lines of the next real frame's location, innermost first, as
 * profile.proto has them. */
int cs_pprof_add_inlined(struct cs_pprof *p, unsigned int evsel, uint32_t pid,
			 uint32_t tid, const char *comm, uint64_t time,
			 const struct cs_frame *frames, const uint8_t *inlined,
			 size_t nr, uint64_t period);

/* The same for a switch-out turned into off-CPU time: the stack gets a leaf
 * location saying why its task waited and a "state" label, and its event's
 * values are off_cpu/nanoseconds. */
int cs_pprof_add_off_cpu(struct cs_pprof *p, unsigned int evsel,
			 enum cs_off_cpu_state state, uint32_t pid,
			 uint32_t tid, const char *comm, uint64_t time,
			 const struct cs_frame *frames, const uint8_t *inlined,
			 size_t nr, uint64_t period);

/* With jobs > 1, the samples added are counted on a thread of their own
 * while the caller reads the next ones (the frames and the comm are
 * copied to it): waits until every one is counted and ends that thread;
 * later samples are counted at once. Returns 0 or the first error of
 * counting (-ENOMEM, -EINVAL). cs_pprof_encode() flushes first. */
int cs_pprof_flush(struct cs_pprof *p);

/* Samples counted (every one added, after a flush). */
uint64_t cs_pprof_samples(const struct cs_pprof *p);

/* Encodes the profile (uncompressed) into *data and *len (the caller frees
 * *data). events[i] describes event i. Returns 0 or -ENOMEM. */
int cs_pprof_encode(struct cs_pprof *p, const struct cs_pprof_event *events,
		    size_t nr_events, uint8_t **data, size_t *len);

/* Encodes and writes it gzipped. Returns 0, -ENOMEM or -EIO. */
int cs_pprof_write(struct cs_pprof *p, const struct cs_pprof_event *events,
		   size_t nr_events, FILE *out);

/* As an output: ctx is a struct cs_pprof_run; `end` writes to out. */
struct cs_pprof_run {
	struct cs_pprof *pprof;
	FILE *out;
	const struct cs_id_list *pids, *tids;	/* filters (NULL: all) */
	bool inline_lines;		/* --inline: locations list inlined functions */
	enum cs_cpu_view view;		/* which samples, off-CPU time or not */
	struct cs_machine *machine;	/* set by begin */
	struct cs_frame *frames;	/* allocated by begin */
	struct cs_frame *expanded;
	uint8_t *inlined;
	struct cs_out_inline_cache *inline_cache;
	int write_err;			/* errno of a failed write; end then
					 * returns 1 and the command names the file */
};
extern const struct cs_output_ops cs_pprof_ops;
void cs_pprof_run_release(struct cs_pprof_run *run);

#endif
