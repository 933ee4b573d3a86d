/* arch.c - the per-architecture register tables (see arch.h). */
#include "lib/unwind/arch.h"

#include <string.h>

/* perf's x86 bits (arch/x86/include/uapi/asm/perf_regs.h): AX 0, BX 1,
 * CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8, FLAGS 9, CS 10, SS 11,
 * DS..GS 12-15 (never sampled for user space), R8..R15 16-23. DWARF's
 * x86_64 numbers (the psABI): rax rdx rcx rbx rsi rdi rbp rsp, r8-r15,
 * then 16, the return address column, which holds rip. */
static const struct cs_unwind_arch x86_64 = {
	.name = "x86_64",
	.nregs = 17,
	.ra = 16,
	.sp = 7,
	.perf_bit = { 0, 3, 2, 1, 4, 5, 6, 7,
		      16, 17, 18, 19, 20, 21, 22, 23,
		      8 },
	.perf_mask = 0xffffff,
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
