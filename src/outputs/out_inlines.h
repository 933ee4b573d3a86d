/* out_inlines.h - a stack with the functions inlined at its user addresses,
 * for the summarising outputs (report, folded), as perf shows them.
 *
 * perf puts each function the compiler inlined at a user address into the
 * stack as a frame of its own, innermost first, before the frame of the
 * function it was inlined into ("read" then "__GI___libc_read (inlined)"
 * in a caller-ordered graph). Doing the same keeps our stacks and perf's
 * alike.
 */
#ifndef CS_OUT_INLINES_H
#define CS_OUT_INLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "lib/machine/frames.h"

enum cs_out_inline {
	CS_OUT_NOT_INLINED = 0,
	CS_OUT_INLINED,			/* a function inlined here */
	CS_OUT_INLINED_SAME,		/* inlined, named as the frame itself */
};

/* Answers of the machine's DWARF lookup, kept per (dso, address): a
 * profile asks about the same few thousand addresses millions of times.
 * Zero it before first use; it holds no allocations. */
#define CS_OUT_INLINE_CACHE 4096
#define CS_OUT_INLINE_NAMES 6
struct cs_out_inline_cache {
	struct {
		const char *dso;	/* NULL: empty slot */
		uint64_t addr;
		uint8_t n;
		const char *names[CS_OUT_INLINE_NAMES];
	} slot[CS_OUT_INLINE_CACHE];
};

/* Copies in[0..n) to out, each user frame preceded by copies of itself
 * renamed (loc.sym) to the functions inlined at its address, innermost
 * first; kinds[i] says which out[i] are such copies. Returns how many
 * frames out holds (at most cap). Names belong to the machine. */
size_t cs_out_expand_inlines(struct cs_machine *m, uint32_t pid,
			     const struct cs_frame *in, size_t n,
			     struct cs_frame *out, uint8_t *kinds, size_t cap);
/* The same, asking the machine only about addresses not in cache. */
size_t cs_out_expand_inlines_cached(struct cs_machine *m, uint32_t pid,
				    const struct cs_frame *in, size_t n,
				    struct cs_frame *out, uint8_t *kinds,
				    size_t cap, struct cs_out_inline_cache *cache);

/* What an output keeps to turn a stitched sample into frames, with the
 * functions inlined at its user addresses as frames of their own. */
struct cs_out_stack {
	struct cs_frame *frames;	/* CS_FRAMES_MAX each */
	struct cs_frame *expanded;
	uint8_t *inlined;		/* kinds of the expanded frames */
	struct cs_out_inline_cache *cache;
};

/* Allocates the buffers. Returns 0 or -ENOMEM (release it either way). */
int cs_out_stack_init(struct cs_out_stack *st);
void cs_out_stack_release(struct cs_out_stack *st);

/* The frames of s, innermost first, in *out (st's buffers: valid until the
 * next call); with inlines, the functions inlined at user addresses are
 * frames too. Returns how many (at most CS_FRAMES_MAX). */
size_t cs_out_stack_resolve(struct cs_out_stack *st, struct cs_machine *m,
			    const struct cs_stitched *s, bool inlines,
			    const struct cs_frame **out);

#endif
