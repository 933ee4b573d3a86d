/* flame.h - the call tree of a profile, and the flame graph page showing it.
 *
 * Two layers. The tree (cs_flame_*) knows nothing of sessions: it interns
 * frames (name, dso, kind), adds stacks root first, and writes the page or
 * just its data. The output (cs_flame_output_*) plugs into cs_output_ops:
 * it resolves each stitched sample through cs_frames_resolve() and adds
 * "event; process; outermost frame; ...; innermost frame".
 *
 * The page's data, JSON version 1 (one object, compact):
 *   v        1
 *   meta     {title, samples, events, host, os_release, cmdline,
 *             deferred, stitched, stitched_late, kernel_only, unit}
 *            (unit "ns": the values are nanoseconds off the CPU)
 *   strings  every name and dso once
 *   frames   flat triples: name string, dso string (-1: none), kind
 *   nodes    flat triples in preorder: frame, samples (self + children),
 *            number of children; node 0 is the root ("all"), children
 *            sorted by name so that equal frames line up
 *   base     (a differential graph) per node, in the same order, the
 *            baseline profile's samples on the same path; meta then has
 *            base_samples (its total) and base_title
 * A unique stack costs only the nodes it does not share, so 100k unique
 * stacks stay a few MB.
 */
#ifndef CS_FLAME_H
#define CS_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>

struct cs_flame;			/* opaque */
struct cs_flame_output;			/* opaque */

enum cs_flame_kind {			/* the page colours by kind */
	CS_FLAME_OTHER = 0,		/* root, event, process */
	CS_FLAME_USER = 1,
	CS_FLAME_KERNEL = 2,
	CS_FLAME_MISSING = 3,		/* marker: the user stack never came */
};

/* What the page's header shows. Strings may be NULL; they are copied out
 * during the write. */
struct cs_flame_meta {
	const char *title;
	const char *events;		/* "cpu-clock" */
	const char *host, *os_release, *cmdline;
	bool deferred;			/* the profile had deferred callchains */
	uint64_t stitched, stitched_late, kernel_only;
	bool fold_single_top;		/* root with one child: show its children */
	const char *unit;		/* what the values count: NULL for
					 * samples, "ns" for off-CPU time */
	const char *base_title;		/* a diff's baseline, for the header */
};

/* Returns 0 and an empty tree (just the root) in *out, or -ENOMEM. The
 * caller frees it with cs_flame_free(). */
int cs_flame_new(struct cs_flame **out);

/* Interns a frame; name and dso (may be NULL) are copied. Returns the
 * frame's id (>= 0), the same for the same triple, or -ENOMEM. */
long cs_flame_frame(struct cs_flame *f, const char *name, const char *dso,
		    enum cs_flame_kind kind);

/* For a differential graph: adds count samples of the baseline profile to
 * the nodes of the same path that the tree already has (the new profile's
 * shape); the rest of a path the new profile lacks is dropped. Returns 0
 * or -EINVAL (an unknown id). */
int cs_flame_add_base(struct cs_flame *f, const uint32_t *frames, size_t nr,
		      uint64_t count);

/* The name of a frame id; owned by the tree. */
const char *cs_flame_frame_name(const struct cs_flame *f, uint32_t id);

/* Adds count samples of the stack frames[0..nr), root first, ids from
 * cs_flame_frame(). Returns 0, -ENOMEM or -EINVAL (an unknown id). */
int cs_flame_add(struct cs_flame *f, const uint32_t *frames, size_t nr,
		 uint64_t count);

uint64_t cs_flame_total(const struct cs_flame *f);
size_t cs_flame_nr_nodes(const struct cs_flame *f);

/* The page's data (see above) / the whole page. Returns 0, or -EIO when
 * out reports a write error. */
int cs_flame_write_json(const struct cs_flame *f, const struct cs_flame_meta *m,
			FILE *out);
int cs_flame_write_html(const struct cs_flame *f, const struct cs_flame_meta *m,
			FILE *out);

void cs_flame_free(struct cs_flame *f);

/* ---- the output: stitched samples -> tree ---- */

struct cs_flame_output_opts {
	bool no_kernel;			/* leave kernel frames out */
	bool no_inline;			/* no frames for inlined functions */
	bool off_cpu;			/* off-CPU time (ns), its stacks ending in
					 * "[off-cpu: why]"; else on-CPU samples */
	unsigned int jobs;		/* 2 or more: samples are counted on a
					 * thread of their own while the session
					 * reads the next (the same graph) */
};

/* Returns 0 and an output in *out (caller frees), or -ENOMEM. Run a
 * session with cs_flame_output_ops and the output as ctx. */
int cs_flame_output_new(const struct cs_flame_output_opts *o,
			struct cs_flame_output **out);
extern const struct cs_output_ops cs_flame_output_ops;

/* The tree built so far; owned by the output. */
struct cs_flame *cs_flame_output_tree(struct cs_flame_output *fo);
/* Names of the events that had samples, comma-separated; owned by fo,
 * NULL on -ENOMEM. */
const char *cs_flame_output_events(struct cs_flame_output *fo);

/* For a differential graph: the samples seen so far are the new profile's
 * (call after its session ran); the next session's samples go into the
 * tree as its baseline (cs_flame_add_base). Returns 0 or -ENOMEM. */
int cs_flame_output_start_base(struct cs_flame_output *fo);

/* Samples the output left out: off-CPU ones for an on-CPU graph, and the
 * reverse. */
uint64_t cs_flame_output_left_out(const struct cs_flame_output *fo);

void cs_flame_output_free(struct cs_flame_output *fo);

#endif
