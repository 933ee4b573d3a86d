/* arch.h - what the unwinder must know of an architecture: which DWARF
 * registers it tracks and where each comes from in a perf sample.
 *
 * perf numbers the registers of PERF_SAMPLE_REGS_USER one way (its
 * arch/.../perf_regs.h bits), DWARF another; this table is the only place
 * that maps one to the other. Adding an architecture is adding a table.
 */
#ifndef CS_UNWIND_ARCH_H
#define CS_UNWIND_ARCH_H

#include <stdbool.h>
#include <stdint.h>

/* the most DWARF registers any supported architecture tracks */
#define CS_UNWIND_MAX_REGS 33

struct cs_unwind_arch {
	const char *name;		/* as perf's ARCH header says: "x86_64" */
	unsigned int nregs;		/* DWARF registers 0..nregs-1 */
	unsigned int ra;		/* DWARF column of the return address */
	unsigned int sp;		/* DWARF number of the stack pointer */
	/* perf register bit of each DWARF register, -1: not sampled */
	int8_t perf_bit[CS_UNWIND_MAX_REGS];
	uint64_t perf_mask;		/* every perf register bit this arch has */
};

/* The architecture called name ("x86_64", or perf's "amd64"), or NULL. */
const struct cs_unwind_arch *cs_unwind_arch_find(const char *name);

/* The architecture this program was built for, or NULL. */
const struct cs_unwind_arch *cs_unwind_arch_host(void);

#endif
