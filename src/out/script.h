/* script.h - `perf script`-compatible text output of stitched samples.
 *
 * Prints the fields perf script picks by default for the file (comm, tid,
 * [cpu] when sampled, time, period, event name) and each sample's callchain
 * as `\t%16lx sym+0xoff (dso)` lines, so tools that parse perf script
 * (FlameGraph's stackcollapse-perf.pl, ...) read it unchanged. The merged
 * view marks a missing user part with one pseudo-frame; the raw view
 * (no_merge) shows cookies and DEFERRED CALLCHAIN records as perf 7.3 does.
 */
#ifndef CS_SCRIPT_H
#define CS_SCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include <callstitch/callstitch.h>

struct cs_script;			/* opaque */

struct cs_script_opts {
	FILE *out;			/* where the text goes (not owned) */
	bool no_merge;			/* also print type-22 records */
	bool no_inline;			/* no "(inlined)" frames from DWARF */
	unsigned int max_stack;		/* frames per stack; 0: perf's 127 */
};

/* Returns 0 and a new printer in *out (caller frees), or -ENOMEM. */
int cs_script_new(const struct cs_script_opts *o, struct cs_script **out);

/* The callbacks to hand to cs_session_run() with the printer as ctx. */
extern const struct cs_output_ops cs_script_ops;

/* Writes out what is buffered; returns 0 or -EIO. */
int cs_script_flush(struct cs_script *sc);

void cs_script_free(struct cs_script *sc);

#endif
