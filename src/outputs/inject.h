/* inject.h - rewrites a profile into a perf.data that tools predating
 * deferred callchains read (perf 6.1 and the like).
 *
 * Stitched samples are re-encoded with their whole stack: kernel part,
 * PERF_CONTEXT_USER, user ips. A sample whose user part never came keeps
 * its kernel part alone (the USER_DEFERRED marker and cookie are dropped:
 * old perf refuses the unknown marker). Type-22 records are dropped, the
 * deferral bits cleared in the attrs, and everything else is copied: side
 * band, build ids, and the header features the writer knows. Record types
 * newer than perf 6.1 (>= 83: COMPRESSED2, BPF_METADATA, SCHEDSTAT_*) are
 * dropped and counted, since 6.1 stops at the first one.
 *
 * A COMM or MMAP that a thread writes while some of its samples wait for
 * their user stack (inside execve: the stack is the new image's) is
 * written at the oldest such sample's time, so that perf 6.1, which
 * resolves a sample at its own time, sees what callstitch resolves the
 * sample against.
 *
 * A --call-graph dwarf profile has its user stacks unwound on the way (see
 * src/lib/unwind): its samples are written with the unwound stack as an
 * ordinary callchain and without the register and stack copies, and its
 * events lose PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER and
 * exclude_callchain_user, so a reader takes the stacks as they are.
 *
 * Samples leave the stitcher after the records that completed them, so the
 * output is not in time order; no FINISHED_ROUND is written, which tells a
 * reader to sort the whole file (perf does).
 *
 * A stream (perf record -o -) works too: its events and features arrive as
 * records ahead of the data, its build ids as HEADER_BUILD_ID records.
 *
 * Passthrough copies every record unchanged (type 22 and the deferral bits
 * included) in file order, FINISHED_ROUNDs too: only the container is
 * rewritten (attrs of at most 128 bytes, no compression).
 */
#ifndef CS_INJECT_H
#define CS_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

struct cs_writer;
struct cs_inject;			/* opaque */

struct cs_inject_opts {
	bool passthrough;
	const char *input;		/* the input's name, for messages */
};

struct cs_inject_stats {
	uint64_t samples;		/* samples written */
	uint64_t stitched;		/* ... with a deferred user part put back */
	uint64_t stitched_late;
	uint64_t kernel_only;		/* ... with the kernel part only */
	uint64_t original;		/* ... as recorded */
	uint64_t unwound;		/* ... with a user part unwound from the
					 * stack copy, which is left out */
	uint64_t truncated;		/* ... whose user part had to be cut to fit */
	uint64_t records;		/* other records written */
	uint64_t retimed;		/* ... of them moved back to a waiting
					 * sample of their thread (exec) */
	uint64_t deferred_dropped;	/* type-22 records left out */
	uint64_t newer_dropped;		/* records perf 6.1 cannot read, left out */
};

/* An inject writing through w, which must be open and not begun: the
 * output adds the events and features in its begin callback and finishes
 * the file in its end callback. w stays the caller's. Returns 0 and the
 * output in *out (caller frees), or -ENOMEM. */
int cs_inject_new(struct cs_writer *w, const struct cs_inject_opts *o,
		  struct cs_inject **out);

/* Run the session with these ops and the inject as ctx; with passthrough,
 * open the session with no_merge and ordered_off. A callback that fails
 * returns 1 with the reason in cs_inject_error(). */
extern const struct cs_output_ops cs_inject_ops;

const struct cs_inject_stats *cs_inject_stats(const struct cs_inject *inj);
/* The reason of the last failure, "" if none; owned by inj. */
const char *cs_inject_error(const struct cs_inject *inj);

void cs_inject_free(struct cs_inject *inj);

#endif
