/* fuzz_unwind.c - the DWARF unwinder (src/lib/unwind) on hostile
 * registers and stack copies, against real CFI: the real-kernel
 * fixture's program mapped at BASE and this host's libc at LIBC_BASE
 * (an address in NOFILE_BASE's range names a binary that is not found).
 *
 * Input: the 24 x86_64 user registers perf samples (PERF_REG_X86 order:
 * ax bx cx dx si di bp sp ip flags cs ss r8..r15, as u64), then the stack
 * copy; the low 3 bits of the first byte shorten the valid part of the
 * copy (dyn_size) by that many words. The unwinder is made once, so its
 * caches carry over from input to input as they do over a profile's
 * samples. Checked: at most cap frames, the first is the sampled ip.
 */
#include "fuzz.h"
#include "lib/unwind/arch.h"
#include "lib/unwind/unwind.h"

#include <stdlib.h>
#include <string.h>

#define BASE		0x555555554000ULL
#define LIBC_BASE	0x7f0000000000ULL
#define NOFILE_BASE	0x10000ULL
#define PERF_REG_IP	8

static const char workload[] = CS_SOURCE_DIR "/tests/fixtures/linux-7.3.4/bin/workload";
static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";

static bool find(void *ctx, uint64_t addr, struct cs_unwind_module *m)
{
	(void)ctx;
	memset(m, 0, sizeof(*m));
	if (addr >= BASE && addr < BASE + 0x5000) {
		m->key = workload;
		m->name = "workload";
		m->path = workload;
		m->bias = BASE;
		m->start = BASE;		/* frames here skip find() */
		m->end = BASE + 0x5000;
	} else if (addr >= LIBC_BASE && addr < LIBC_BASE + 0x200000) {
		m->key = libc;
		m->name = "libc.so.6";
		m->path = libc;
		m->bias = LIBC_BASE;
	} else if (addr >= NOFILE_BASE && addr < NOFILE_BASE + 0x10000) {
		m->key = "nofile";
		m->name = "/gone";
	} else {
		return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cs_unwind *u;
	const struct cs_unwind_arch *arch = cs_unwind_arch_find("x86_64");
	size_t nregs = (size_t)__builtin_popcountll(arch->perf_mask);
	struct cs_unwind_input in = { .abi = 2, .regs_mask = arch->perf_mask };
	struct cs_unwind_result res;
	uint64_t regs[64], ips[128], *stack;
	size_t words;

	if (size < nregs * 8)
		return 0;
	if (!u && cs_unwind_new(arch, &u))
		fuzz_fail("fuzz_unwind: no memory for an unwinder");
	memcpy(regs, data, nregs * 8);
	words = (size - nregs * 8) / 8;
	stack = malloc(words ? words * 8 : 1);
	if (!stack)
		return 0;
	memcpy(stack, data + nregs * 8, words * 8);
	in.regs = regs;
	in.stack = stack;
	in.stack_size = words * 8;
	in.stack_dyn_size = in.stack_size;
	if (words > (size_t)(data[0] & 7))
		in.stack_dyn_size -= (uint64_t)(data[0] & 7) * 8;
	if (!cs_unwind_sample(u, &in, find, NULL, ips, 128, &res)) {
		if (res.nr > 128)
			fuzz_fail("fuzz_unwind: %zu frames for room for 128", res.nr);
		if (res.nr && ips[0] != regs[PERF_REG_IP])
			fuzz_fail("fuzz_unwind: the first frame is not the sampled ip");
	}
	free(stack);
	return 0;
}
