/* arch.c - the per-architecture register tables (see arch.h). */
#include "lib/unwind/arch.h"

#include <string.h>

/* perf's x86_64 registers with their DWARF numbers (src/abi/perf_regs.h).
 * The walk tracks DWARF's rax..r15 and the return-address column, 16,
 * which holds rip. */
static const struct cs_perf_reg x86_64_regs[] = {
	CS_PERF_REGS_X86_64(CS_PERF_REG_ENTRY_)
};

static const struct cs_unwind_arch x86_64 = {
	.name = "x86_64",
	.nregs = 17,
	.ra = 16,
	.sp = 7,
	.fp = 6,			/* rbp */
	.pc_bit = CS_PERF_REG_X86_IP,
	.regs = x86_64_regs,
	.nr_regs = sizeof(x86_64_regs) / sizeof(x86_64_regs[0]),
	.perf_mask = CS_PERF_REGS_X86_64_MASK,
};

const struct cs_unwind_arch *cs_unwind_arch_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "x86_64") || !strcmp(name, "amd64"))
		return &x86_64;
	return NULL;
}

const struct cs_unwind_arch *cs_unwind_arch_host(void)
{
#if defined(__x86_64__)
	return &x86_64;
#else
	return NULL;
#endif
}
