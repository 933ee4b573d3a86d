/* speedscope.h - the profile as speedscope's file format (JSON), for its
 * time-order, left-heavy and sandwich views.
 *
 * What speedscope loads (its file-format-schema.json): one "sampled"
 * profile per thread (and per event, when several events sampled), each a
 * list of stacks (frame indices, root first) with their weights, in the
 * order the samples were taken, so that the time-order view is a
 * timeline; the frames are shared by all profiles. Weights are the
 * samples' periods: nanoseconds for cpu-clock and task-clock (unit
 * "nanoseconds"), event counts otherwise (unit "none"); a sample without
 * a period weighs 1. Consecutive samples with the same stack are merged
 * into one entry (speedscope does the same when it loads a file).
 * Profiles come heaviest first; speedscope opens the first.
 *
 * Frames are named as in `callstitch folded` (the symbol, else the
 * binary's base name in brackets, else [unknown]; a kernel-only sample
 * ends in "[user stack missing: why]"); a frame's "file" is its binary.
 */
#ifndef CS_SPEEDSCOPE_H
#define CS_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "outputs/out_inlines.h"
#include "outputs/report_opts.h"

struct cs_speedscope;			/* opaque */

/* Returns 0 and an empty profile in *out (the caller frees it), or
 * -ENOMEM. With jobs 2 or more the samples are counted on a thread of
 * their own while the caller reads the next ones: the same file. */
int cs_speedscope_new(unsigned int jobs, struct cs_speedscope **out);
void cs_speedscope_free(struct cs_speedscope *p);

/* Adds a sample of event evsel (which must outlive p; NULL for none) by
 * thread tid given its resolved frames, innermost first. comm may be NULL
 * and is copied; the thread is named by the last one. The frames' strings
 * must outlive p. A period of 0 weighs 1. Returns 0 or -ENOMEM. */
int cs_speedscope_add(struct cs_speedscope *p, const struct cs_evsel *evsel,
		      uint32_t tid, const char *comm,
		      const struct cs_frame *frames, size_t nr, uint64_t period);

/* With jobs > 1: waits until every sample added is counted and ends the
 * counting thread; later samples are counted at once. Returns 0 or the
 * first error of counting (-ENOMEM). cs_speedscope_write() flushes
 * first. */
int cs_speedscope_flush(struct cs_speedscope *p);

/* Writes the file: name is the file's name (the input), exporter the
 * program that wrote it. Returns 0, -ENOMEM or -EIO. */
int cs_speedscope_write(struct cs_speedscope *p, const char *name,
			const char *exporter, FILE *out);

/* cs_output_ops whose ctx is a struct cs_speedscope_run; `end` writes. */
struct cs_speedscope_run {
	struct cs_speedscope *speedscope;
	FILE *out;
	const char *name;		/* the file's name for the page */
	const char *exporter;		/* "callstitch 0.1.0" */
	bool no_inline;			/* no frames for inlined functions */
	const struct cs_id_list *pids;	/* only these processes (NULL: all) */
	const struct cs_id_list *tids;	/* only these threads (NULL: all) */
	int write_err;			/* errno of a failed write; end then
					 * returns 1 and the command names the file */
	struct cs_machine *machine;	/* set by begin */
	struct cs_out_stack stack;	/* allocated by begin */
};
extern const struct cs_output_ops cs_speedscope_ops;
/* Frees what begin allocated (not the profile). */
void cs_speedscope_run_release(struct cs_speedscope_run *r);

#endif
