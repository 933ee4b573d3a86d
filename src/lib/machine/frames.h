/* frames.h - a stitched sample's stack as resolved frames.
 *
 * cs_frames_resolve() (public, in callstitch.h) is how every output walks a
 * stack; this is the same walk in two steps, for an output that caches
 * what it makes of an address and resolves only what it has not seen.
 */
#ifndef CS_FRAMES_H
#define CS_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

/* The frames of s with addr, cpumode, kind and missing set (loc
 * untouched); returns the count as cs_frames_resolve() does. */
size_t cs_frames_walk(const struct cs_stitched *s, struct cs_frame *out,
		      size_t cap);
/* One frame's loc. */
void cs_frame_resolve(struct cs_machine *m, uint32_t pid, struct cs_frame *f);

#endif
