/* perf_regs.h - perf's user register numbering, per architecture.
 *
 * PERF_SAMPLE_REGS_USER writes one u64 per set bit of attr.sample_regs_user,
 * lowest bit first; the bits are the kernel's arch/ * /include/uapi/asm/
 * perf_regs.h numbers. CS_PERF_REGS_USER_MASK is what `perf record
 * --call-graph dwarf` asks for on the architecture callstitch is built for
 * (perf's arch__user_reg_mask()); 0 where we do not know it yet. This is
 * the one place that knows it: the recorder asks for these registers, and
 * readers find a register's slot by counting the mask's bits below it.
 */
#ifndef CS_PERF_REGS_H
#define CS_PERF_REGS_H

#include <stdint.h>

/* the u64 before the registers: which register set follows */
enum {
	CS_PERF_REGS_ABI_NONE = 0,	/* no user registers (a kernel thread) */
	CS_PERF_REGS_ABI_32   = 1,
	CS_PERF_REGS_ABI_64   = 2,
};

/* x86 (arch/x86/include/uapi/asm/perf_regs.h) */
enum {
	CS_PERF_REG_X86_AX, CS_PERF_REG_X86_BX, CS_PERF_REG_X86_CX,
	CS_PERF_REG_X86_DX, CS_PERF_REG_X86_SI, CS_PERF_REG_X86_DI,
	CS_PERF_REG_X86_BP, CS_PERF_REG_X86_SP, CS_PERF_REG_X86_IP,
	CS_PERF_REG_X86_FLAGS, CS_PERF_REG_X86_CS, CS_PERF_REG_X86_SS,
	CS_PERF_REG_X86_DS, CS_PERF_REG_X86_ES, CS_PERF_REG_X86_FS,
	CS_PERF_REG_X86_GS,
	CS_PERF_REG_X86_R8, CS_PERF_REG_X86_R9, CS_PERF_REG_X86_R10,
	CS_PERF_REG_X86_R11, CS_PERF_REG_X86_R12, CS_PERF_REG_X86_R13,
	CS_PERF_REG_X86_R14, CS_PERF_REG_X86_R15,
};
/* AX..SS and R8..R15: DS, ES, FS and GS are never sampled for user space */
#define CS_PERF_REGS_X86_64_USER_MASK 0xff0fffULL

/* arm64 (arch/arm64/include/uapi/asm/perf_regs.h): x0..x30, sp, pc */
#define CS_PERF_REG_ARM64_SP	31
#define CS_PERF_REG_ARM64_PC	32
#define CS_PERF_REGS_ARM64_USER_MASK ((1ULL << 33) - 1)

#if defined(__x86_64__)
#define CS_PERF_REGS_USER_MASK	CS_PERF_REGS_X86_64_USER_MASK
#define CS_PERF_REG_USER_IP	CS_PERF_REG_X86_IP
#define CS_PERF_REG_USER_SP	CS_PERF_REG_X86_SP
#elif defined(__aarch64__)
#define CS_PERF_REGS_USER_MASK	CS_PERF_REGS_ARM64_USER_MASK
#define CS_PERF_REG_USER_IP	CS_PERF_REG_ARM64_PC
#define CS_PERF_REG_USER_SP	CS_PERF_REG_ARM64_SP
#else
#define CS_PERF_REGS_USER_MASK	0ULL
#define CS_PERF_REG_USER_IP	0
#define CS_PERF_REG_USER_SP	0
#endif

/* Where register bit `reg` sits among the u64s of a register set sampled
 * with `mask`, or -1 if the mask leaves it out. */
static inline int cs_perf_reg_slot(uint64_t mask, unsigned int reg)
{
	if (reg >= 64 || !(mask & (1ULL << reg)))
		return -1;
	return __builtin_popcountll(mask & ((1ULL << reg) - 1));
}

/* perf's limit for --call-graph dwarf,SIZE: the kernel refuses a
 * sample_stack_user of 65535 or more, or one that is not a multiple of 8 */
#define CS_PERF_STACK_USER_MAX 65528u
#define CS_PERF_STACK_USER_DEFAULT 8192u

#endif
