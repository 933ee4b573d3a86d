/* perf_regs.h - perf's user register numbering, per architecture.
 *
 * PERF_SAMPLE_REGS_USER writes one u64 per set bit of attr.sample_regs_user,
 * lowest bit first; the bits are the kernel's arch/ * /include/uapi/asm/
 * perf_regs.h numbers. CS_PERF_REGS_USER_MASK is what `perf record
 * --call-graph dwarf` asks for on the architecture callstitch is built for
 * (perf's arch__user_reg_mask()); 0 where we do not know it yet. This is
 * the one place that knows perf's numbering: the recorder asks for these
 * registers, readers find a register's slot by counting the mask's bits
 * below it, and the unwinder maps them to DWARF's.
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

/*
 * The registers perf samples on each architecture, one list per
 * architecture and the only place that knows them:
 *
 *     X(NAME, perf bit, DWARF number, asked for by --call-graph dwarf)
 *
 * The perf bits are the kernel's (arch/ARCH/include/uapi/asm/perf_regs.h),
 * the DWARF numbers the psABI's (-1: the register has none). From these
 * lists come the names (CS_PERF_REG_X86_IP), the masks the recorder asks
 * for, and the unwinder's map from DWARF registers to sampled ones
 * (src/lib/unwind/arch.c): adding an architecture starts here.
 */

/* x86_64: the return-address column (16) holds rip; DS, ES, FS and GS are
 * never sampled for user space */
#define CS_PERF_REGS_X86_64(X)						\
	X(AX,     0,  0, 1) X(BX,     1,  3, 1) X(CX,     2,  2, 1)	\
	X(DX,     3,  1, 1) X(SI,     4,  4, 1) X(DI,     5,  5, 1)	\
	X(BP,     6,  6, 1) X(SP,     7,  7, 1) X(IP,     8, 16, 1)	\
	X(FLAGS,  9, 49, 1) X(CS,    10, 51, 1) X(SS,    11, 52, 1)	\
	X(DS,    12, 53, 0) X(ES,    13, 50, 0) X(FS,    14, 54, 0)	\
	X(GS,    15, 55, 0)							\
	X(R8,    16,  8, 1) X(R9,    17,  9, 1) X(R10,   18, 10, 1)	\
	X(R11,   19, 11, 1) X(R12,   20, 12, 1) X(R13,   21, 13, 1)	\
	X(R14,   22, 14, 1) X(R15,   23, 15, 1)

/* arm64: x0..x30 (x30 is the link register, the return-address column),
 * sp, and the pc, which DWARF does not number */
#define CS_PERF_REGS_ARM64(X)						\
	X(X0,   0,  0, 1) X(X1,   1,  1, 1) X(X2,   2,  2, 1) X(X3,   3,  3, 1) \
	X(X4,   4,  4, 1) X(X5,   5,  5, 1) X(X6,   6,  6, 1) X(X7,   7,  7, 1) \
	X(X8,   8,  8, 1) X(X9,   9,  9, 1) X(X10, 10, 10, 1) X(X11, 11, 11, 1) \
	X(X12, 12, 12, 1) X(X13, 13, 13, 1) X(X14, 14, 14, 1) X(X15, 15, 15, 1) \
	X(X16, 16, 16, 1) X(X17, 17, 17, 1) X(X18, 18, 18, 1) X(X19, 19, 19, 1) \
	X(X20, 20, 20, 1) X(X21, 21, 21, 1) X(X22, 22, 22, 1) X(X23, 23, 23, 1) \
	X(X24, 24, 24, 1) X(X25, 25, 25, 1) X(X26, 26, 26, 1) X(X27, 27, 27, 1) \
	X(X28, 28, 28, 1) X(X29, 29, 29, 1) X(LR,  30, 30, 1) X(SP,  31, 31, 1) \
	X(PC,  32, -1, 1)

/* what the lists give */
#define CS_PERF_REG_X86_ENUM_(name, bit, dwarf, user)	CS_PERF_REG_X86_##name = (bit),
#define CS_PERF_REG_ARM64_ENUM_(name, bit, dwarf, user)	CS_PERF_REG_ARM64_##name = (bit),
#define CS_PERF_REG_BIT_(name, bit, dwarf, user)	| (1ULL << (bit))
#define CS_PERF_REG_USER_BIT_(name, bit, dwarf, user)	| ((user) ? 1ULL << (bit) : 0)
#define CS_PERF_REG_ENTRY_(name, bit, dwarf, user)	{ (bit), (dwarf) },

enum { CS_PERF_REGS_X86_64(CS_PERF_REG_X86_ENUM_) };
enum { CS_PERF_REGS_ARM64(CS_PERF_REG_ARM64_ENUM_) };

/* every register an architecture has / the ones perf record asks for */
#define CS_PERF_REGS_X86_64_MASK	(0 CS_PERF_REGS_X86_64(CS_PERF_REG_BIT_))
#define CS_PERF_REGS_X86_64_USER_MASK	(0 CS_PERF_REGS_X86_64(CS_PERF_REG_USER_BIT_))
#define CS_PERF_REGS_ARM64_MASK		(0 CS_PERF_REGS_ARM64(CS_PERF_REG_BIT_))
#define CS_PERF_REGS_ARM64_USER_MASK	(0 CS_PERF_REGS_ARM64(CS_PERF_REG_USER_BIT_))

/* One register of a list, for tables: `static const struct cs_perf_reg
 * t[] = { CS_PERF_REGS_X86_64(CS_PERF_REG_ENTRY_) };` */
struct cs_perf_reg {
	uint8_t bit;			/* perf's number */
	int8_t dwarf;			/* DWARF's, -1: none */
};

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
