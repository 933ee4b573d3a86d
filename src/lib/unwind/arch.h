/* arch.h - what the unwinder must know of an architecture: which DWARF
 * registers it tracks and where each comes from in a perf sample.
 *
 * perf numbers the registers of PERF_SAMPLE_REGS_USER one way, DWARF
 * another; both numbers of every register come from one list per
 * architecture in src/abi/perf_regs.h. Adding an architecture is adding
 * its list there and its entry in arch.c (docs/unwind.md says how).
 */
#ifndef CS_UNWIND_ARCH_H
#define CS_UNWIND_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "abi/perf_regs.h"

/* the most DWARF registers any supported architecture tracks */
#define CS_UNWIND_MAX_REGS 33

struct cs_unwind_arch {
	const char *name;		/* as perf's ARCH header says: "x86_64" */
	unsigned int nregs;		/* DWARF registers 0..nregs-1 */
	unsigned int ra;		/* DWARF column of the return address */
	unsigned int sp;		/* DWARF number of the stack pointer */
	int fp;				/* of the frame pointer, for code
					 * without CFI; -1: not walked */
	unsigned int pc_bit;		/* perf bit of the sampled pc */
	/* each register perf samples: its perf bit and DWARF number */
	const struct cs_perf_reg *regs;
	size_t nr_regs;
	uint64_t perf_mask;		/* every perf register bit this arch has */
};

/* The architecture called name ("x86_64", or perf's "amd64"), or NULL. */
const struct cs_unwind_arch *cs_unwind_arch_find(const char *name);

/* The architecture this program was built for, or NULL. */
const struct cs_unwind_arch *cs_unwind_arch_host(void);

#endif
