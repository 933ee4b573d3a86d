/* frames.h - a stitched sample's stack as resolved frames, for outputs.
 *
 * Every output (script, report, folded, flame, pprof) walks stacks the same
 * way: context markers are skipped but set the cpumode of the frames after
 * them, each address is resolved through the machine, and a missing or
 * unmerged user part is shown as one last pseudo-frame. Keeping that in one
 * place keeps the outputs in agreement.
 */
#ifndef CS_FRAMES_H
#define CS_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

enum cs_frame_kind {
	CS_FRAME_ADDR,		/* an ordinary address */
	CS_FRAME_COOKIE,	/* unmerged view: the cookie entry (addr = cookie) */
	CS_FRAME_MISSING_USER,	/* kernel-only: user part missing (addr = cookie) */
};

struct cs_frame {
	uint64_t addr;
	uint8_t cpumode;		/* CS_MISC_KERNEL, CS_MISC_USER, ... */
	enum cs_frame_kind kind;
	enum cs_missing_reason missing;	/* for CS_FRAME_MISSING_USER */
	struct cs_location loc;		/* resolved; strings owned by the machine */
};

/* Fills out[0..cap) with the frames of s, innermost first, and returns how
 * many there are (which may exceed cap: only cap are filled). A sample
 * without a callchain yields one frame: its ip. A chain holding a context
 * value the ABI does not define is corrupt and yields none (as in perf). */
size_t cs_frames_resolve(struct cs_machine *m, const struct cs_stitched *s,
			 struct cs_frame *out, size_t cap);

/* cs_frames_resolve() in two steps, for an output that caches what it
 * makes of an address and resolves only what it has not seen: the frames
 * with addr, cpumode, kind and missing set (loc untouched), and one
 * frame's loc. */
size_t cs_frames_walk(const struct cs_stitched *s, struct cs_frame *out,
		      size_t cap);
void cs_frame_resolve(struct cs_machine *m, uint32_t pid, struct cs_frame *f);

/* Most frames a chain can have: a record is at most 64 KiB of u64s. */
#define CS_FRAMES_MAX 8192

#endif
