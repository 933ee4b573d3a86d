/* completeness.h - does each user stack reach its root, and if not, why.
 *
 * Fed every sample as it goes to the output (after stitching and
 * unwinding), it counts the user stacks that reached a root (_start,
 * clone/clone3, a thread start) and those that ended early, by cause and by
 * the binary they ended in, for every kind of stack: frame pointers walked
 * at sample time, deferred ones, and stacks unwound from a copy.
 *
 * A stack unwound here ends where the unwinder says and why. A frame-
 * pointer stack carries no reason: it reached a root if one of its last
 * frames is a root function; otherwise the chain broke in the binary of
 * its last frame that has a symbol (what follows is garbage), which is
 * nearly always one built without frame pointers.
 */
#ifndef CS_COMPLETENESS_H
#define CS_COMPLETENESS_H

#include <callstitch/callstitch.h>
#include "lib/unwind/unwind.h"

struct cs_complete;			/* opaque */

/* Returns 0 and an empty tally in *out (caller frees), or -ENOMEM. */
int cs_complete_new(struct cs_complete **out);

/* Counts one sample. unwound: the unwinder's result when its user part was
 * unwound here, else NULL. Returns 0 or -ENOMEM. */
int cs_complete_add(struct cs_complete *c, struct cs_machine *m,
		    const struct cs_stitched *st,
		    const struct cs_unwind_result *unwound);

/* The order of cs_completeness.stops, as qsort() takes it: most stacks
 * first, then by end, kind and binary. */
int cs_stack_stop_order(const void *a, const void *b);

/* The figures so far. Owned by c; valid until the next call or free. */
const struct cs_completeness *cs_complete_get(struct cs_complete *c);

void cs_complete_free(struct cs_complete *c);

#endif
