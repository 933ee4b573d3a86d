/* unwind.h - user stacks from a sample's registers and stack copy.
 *
 * A `--call-graph dwarf` sample carries the user registers at the moment
 * it was taken and a copy of the top of the user stack. Walking that copy
 * with the call frame information (.eh_frame, .debug_frame) of the binaries
 * the addresses fall in gives the user frames, innermost first.
 *
 * The stage is a function of (registers, stack bytes, a way to find the
 * binary an address lies in): it never looks at anything else, so it can
 * be fed anything. It keeps each binary's CFI open and every rule row it
 * compiled, keyed by address, so the samples of a hot loop cost a table
 * lookup, not a CFI interpretation.
 *
 * Addresses it gives out are perf's: the sampled pc exactly, then for each
 * caller its return address minus one (the call instruction, which is what
 * a symbol or line belongs to), except for a signal frame, whose pc is
 * where the kernel will resume.
 */
#ifndef CS_UNWIND_H
#define CS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_unwind;			/* opaque: the caches */
struct cs_unwind_arch;

/* The binary an address lies in, as the caller's maps say. */
struct cs_unwind_module {
	const void *key;		/* the same binary always has the same key */
	const char *name;		/* what messages call it; lives with key */
	const char *path;		/* the binary's file, or NULL: not found */
	uint64_t bias;			/* address - bias = address in the file */
	/* [start, end): the addresses this same answer holds for during
	 * the sample (a mapping's part of one segment), so that the other
	 * frames in it skip the finder; left 0, 0: only the address asked */
	uint64_t start, end;
	/* Its separate debug file (for .debug_frame), or NULL; asked for
	 * once, and only when the binary's own CFI has no answer for a pc:
	 * finding it may cost a lookup, even a download. May be NULL. */
	const char *(*debug_path)(const void *key, void *ctx);
	void *debug_ctx;
};

/* Fills *mod for addr and returns true, or false if no binary holds it. */
typedef bool (*cs_unwind_find_fn)(void *ctx, uint64_t addr,
				  struct cs_unwind_module *mod);

/* A sample's registers and stack copy, as decoded (struct cs_sample). */
struct cs_unwind_input {
	uint64_t abi;			/* PERF_SAMPLE_REGS_ABI_*: 0 none */
	uint64_t regs_mask;		/* attr.sample_regs_user */
	const uint64_t *regs;		/* one per bit of regs_mask */
	const void *stack;		/* the copy, starting at the user sp */
	uint64_t stack_size;
	uint64_t stack_dyn_size;	/* bytes of the copy that are valid */
};

/* Why a stack ends. */
enum cs_unwind_stop {
	CS_UNWIND_ROOT,		/* the outermost frame: its CFI says there is
				 * no caller (_start, clone3) */
	CS_UNWIND_STACK_END,	/* the next frame lies past the stack copy */
	CS_UNWIND_NO_CFI,	/* module has no CFI for the pc */
	CS_UNWIND_NO_FILE,	/* module's binary was not found */
	CS_UNWIND_NO_MAP,	/* a pc in no mapped binary (JIT code, ...) */
	CS_UNWIND_BAD_FRAME,	/* CFI leads nowhere: a register it needs is
				 * unknown, the stack does not grow, ... */
	CS_UNWIND_DEPTH,	/* as many frames as the caller had room for */
	CS_UNWIND_NO_REGS,	/* no user registers (abi 0: a kernel thread) */
	CS_UNWIND_BAD_INPUT,	/* registers or copy unusable: see `why` */
	CS_UNWIND__COUNT,
};

struct cs_unwind_result {
	size_t nr;			/* ips written */
	enum cs_unwind_stop stop;
	const char *module;		/* NO_CFI, NO_FILE, BAD_FRAME: the binary
					 * it stopped in (the finder's name) */
	const char *why;		/* BAD_INPUT: what was wrong (static) */
};

/* A short name for a stop reason: "root", "stack copy too small", ... */
const char *cs_unwind_stop_name(enum cs_unwind_stop why);

/* An unwinder for arch (see arch.h). Returns 0 and the unwinder in *out
 * (caller frees), or -ENOMEM. */
int cs_unwind_new(const struct cs_unwind_arch *arch, struct cs_unwind **out);

/* Unwinds one sample into ips[0..cap), innermost first. Never reads the
 * stack copy outside [0, min(dyn_size, size)). Returns 0 (how far it got
 * is in *res), or -ENOMEM. */
int cs_unwind_sample(struct cs_unwind *u, const struct cs_unwind_input *in,
		     cs_unwind_find_fn find, void *ctx, uint64_t *ips,
		     size_t cap, struct cs_unwind_result *res);

void cs_unwind_free(struct cs_unwind *u);

#endif
