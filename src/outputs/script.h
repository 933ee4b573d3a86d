/* script.h - `perf script`-compatible text output of stitched samples.
 *
 * Prints the fields perf script picks by default for the file (comm, tid,
 * [cpu] when sampled, time, period, event name) and each sample's callchain
 * as `\t%16lx sym+0xoff (dso)` lines, so tools that parse perf script
 * (FlameGraph's stackcollapse-perf.pl, ...) read it unchanged. The merged
 * view marks a missing user part with one pseudo-frame; the raw view
 * (no_merge) shows cookies and DEFERRED CALLCHAIN records as perf 7.3 does.
 * A tracepoint sample shows its fields instead of its period, formatted by
 * libtraceevent from the formats in the file, as perf script does.
 */
#ifndef CS_SCRIPT_H
#define CS_SCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include <callstitch/callstitch.h>

struct cs_script;			/* opaque */

/* Fields (perf script -F names in brackets). */
enum {
	CS_SCRIPT_COMM   = 1u << 0,	/* comm */
	CS_SCRIPT_PID    = 1u << 1,	/* pid */
	CS_SCRIPT_TID    = 1u << 2,	/* tid */
	CS_SCRIPT_CPU    = 1u << 3,	/* cpu */
	CS_SCRIPT_TIME   = 1u << 4,	/* time */
	CS_SCRIPT_PERIOD = 1u << 5,	/* period */
	CS_SCRIPT_EVENT  = 1u << 6,	/* event */
	CS_SCRIPT_IP     = 1u << 7,	/* ip: the stack (or the ip) at all */
	CS_SCRIPT_SYM    = 1u << 8,	/* sym */
	CS_SCRIPT_SYMOFF = 1u << 9,	/* symoff */
	CS_SCRIPT_DSO    = 1u << 10,	/* dso */
	CS_SCRIPT_TRACE  = 1u << 11,	/* trace: a tracepoint's fields */
};
/* perf's defaults; cpu, time and period show only when sampled */
#define CS_SCRIPT_DEFAULT (CS_SCRIPT_COMM | CS_SCRIPT_TID | CS_SCRIPT_CPU | \
	CS_SCRIPT_TIME | CS_SCRIPT_PERIOD | CS_SCRIPT_EVENT | CS_SCRIPT_IP | \
	CS_SCRIPT_SYM | CS_SCRIPT_SYMOFF | CS_SCRIPT_DSO)
/* ... and for tracepoints: their fields, the stack only when recorded */
#define CS_SCRIPT_DEFAULT_TRACEPOINT (CS_SCRIPT_COMM | CS_SCRIPT_TID | \
	CS_SCRIPT_CPU | CS_SCRIPT_TIME | CS_SCRIPT_EVENT | CS_SCRIPT_TRACE)

/* Parses a -F list: "comm,tid,ip,sym" (exactly those) or "+pid,-period"
 * (the defaults changed). Returns 0 and *fields, or -EINVAL with *bad
 * pointing at the name not understood (inside list) and *bad_len its
 * length. */
int cs_script_parse_fields(const char *list, unsigned int *fields,
			   const char **bad, size_t *bad_len);

struct cs_script_opts {
	FILE *out;			/* where the text goes (not owned) */
	unsigned int fields;		/* CS_SCRIPT_*; 0: CS_SCRIPT_DEFAULT */
	bool no_merge;			/* also print type-22 records */
	bool no_inline;			/* no "(inlined)" frames from DWARF */
	unsigned int max_stack;		/* frames per stack (per part of an
					 * unwound one); 0: perf's 127 */
	unsigned int jobs;		/* >= 2: the text is made and written
					 * on a second thread (>= 3: written
					 * on a third), the same bytes */
};

/* Returns 0 and a new printer in *out (caller frees), or -ENOMEM. */
int cs_script_new(const struct cs_script_opts *o, struct cs_script **out);

/* The callbacks to hand to cs_session_run() with the printer as ctx. */
extern const struct cs_output_ops cs_script_ops;

/* Tracepoint samples whose fields could not be shown: the file has no
 * format for their event (or their raw data is shorter than it). */
uint64_t cs_script_unformatted(const struct cs_script *sc);

/* With jobs >= 2: how many batches of work the formatting thread had
 * been sent when it was given up (the rest was made on the reading
 * thread); 0: it was not. */
size_t cs_script_fmt_given_up(const struct cs_script *sc);

/* Why the formatting thread was given up. */
enum cs_script_fmt_reason {
	CS_SCRIPT_FMT_KEPT,		/* it was not */
	/* the machine did not run it beside the reading thread: the two
	 * took turns on one CPU, the others busy */
	CS_SCRIPT_FMT_ONE_CPU,
	/* the reading thread waited for it to count a stack's lines against
	 * max_stack (with inlined calls shown) too many times */
	CS_SCRIPT_FMT_WAITS,
};

/* The reason, and into *waits (if not NULL) how many times the reading
 * thread had waited for that count by then (0: never, or not given up). */
enum cs_script_fmt_reason cs_script_fmt_reason(const struct cs_script *sc,
					       size_t *waits);

/* The bytes of the line cache's text (its arena) when it grew instead of
 * starting over, where the place table found lines other processes made
 * (a system-wide profile); 0: it did not. */
size_t cs_script_line_cache_grown(const struct cs_script *sc);

/* Writes out what is buffered; returns 0, or the errno of the write that
 * failed (this one or an earlier: the output's callbacks then returned 1,
 * stopping the run). Call it before the session that fed sc is freed: a
 * run stopped by an error leaves samples held, which point into the
 * session (its events, its machine). */
int cs_script_flush(struct cs_script *sc);

void cs_script_free(struct cs_script *sc);

#endif
