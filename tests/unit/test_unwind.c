/* test_unwind.c - the rule cache and the frame walk, on call frame
 * information written here in assembly: a frame-less leaf, a function
 * with a saved register and two epilogues (DW_CFA_remember_state), a
 * PLT-like CFA expression, a signal trampoline, and an outermost frame.
 * The fixtures are never run; the test reads their CFI from its own
 * binary and walks stacks it builds by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <link.h>

#include "lib/unwind/arch.h"
#include "lib/unwind/cfi.h"
#include "lib/unwind/unwind.h"

#if defined(__x86_64__)

__asm__(
	".text\n"
	/* the outermost frame: no return address */
	".p2align 4\n"
	".globl uw_root, uw_root_ret\n"
	"uw_root:\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"	nop\n"
	"	call uw_mid\n"
	"uw_root_ret:\n"
	"	hlt\n"
	".cfi_endproc\n"

	/* rbx saved, 16 bytes of locals, an early return */
	".p2align 4\n"
	".globl uw_mid, uw_mid_ret, uw_early_ret, uw_mid_late\n"
	"uw_mid:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset rbx, -16\n"
	"	sub $16, %rsp\n"
	".cfi_adjust_cfa_offset 16\n"
	"	call uw_leaf\n"
	"uw_mid_ret:\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	".cfi_remember_state\n"
	"	add $16, %rsp\n"
	".cfi_adjust_cfa_offset -16\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore rbx\n"
	"uw_early_ret:\n"
	"	ret\n"
	".cfi_restore_state\n"
	"1:\n"
	"uw_mid_late:\n"
	"	nop\n"
	"	add $16, %rsp\n"
	".cfi_adjust_cfa_offset -16\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"

	/* a leaf without a frame */
	".p2align 4\n"
	".globl uw_leaf, uw_leaf_body\n"
	"uw_leaf:\n"
	".cfi_startproc\n"
	"	nop\n"
	"uw_leaf_body:\n"
	"	nop\n"
	"	ret\n"
	".cfi_endproc\n"

	/* a PLT entry's CFA: rsp + 8, + 8 from its 11th byte on
	 * (DW_CFA_def_cfa_expression: breg7 8; breg16 0; lit15; and; lit11;
	 * ge; lit3; shl; plus) */
	".p2align 4\n"
	".globl uw_plt\n"
	"uw_plt:\n"
	".cfi_startproc\n"
	".cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22\n"
	"	.fill 16, 1, 0x90\n"
	".cfi_endproc\n"

	/* a signal trampoline: the CFA is the word at rsp + 64, rip and
	 * rbx are saved at rsp + 72 and rsp + 80 (DW_CFA_expression), and
	 * like glibc's, its CFI starts one byte early so that a lookup at
	 * the return address minus one finds it */
	".p2align 4\n"
	".globl uw_sigtramp\n"
	".cfi_startproc\n"
	".cfi_signal_frame\n"
	/* (SLEB128: 64 is 0xc0 0x00) */
	".cfi_escape 0x0f, 0x04, 0x77, 0xc0, 0x00, 0x06\n"
	".cfi_escape 0x10, 0x10, 0x03, 0x77, 0xc8, 0x00\n"
	".cfi_escape 0x10, 0x03, 0x03, 0x77, 0xd0, 0x00\n"
	".cfi_escape 0x10, 0x07, 0x03, 0x77, 0xc0, 0x00\n"
	"	nop\n"
	"uw_sigtramp:\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	".cfi_endproc\n"
	/* a function without CFI that keeps a frame pointer */
	".p2align 4\n"
	".globl uw_nocfi, uw_nocfi_body\n"
	"uw_nocfi:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"uw_nocfi_body:\n"
	"	nop\n"
	"	pop %rbp\n"
	"	ret\n");

extern const char uw_root[], uw_root_ret[], uw_mid[], uw_mid_ret[],
	uw_early_ret[], uw_mid_late[], uw_leaf[], uw_leaf_body[], uw_plt[],
	uw_sigtramp[], uw_nocfi_body[];

#define A(sym) ((uint64_t)(uintptr_t)(sym))

/* ---- this binary as the unwinder's module ---- */

static uint64_t load_bias;

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	load_bias = info->dlpi_addr;		/* the main program comes first */
	return 1;
}

static const struct cs_unwind_module self = {
	.key = &load_bias,
	.name = "test_unwind",
	.path = "/proc/self/exe",
};

static bool find_self(void *ctx, uint64_t addr, struct cs_unwind_module *mod)
{
	(void)ctx;
	if (addr < A(uw_root) || addr >= A(uw_sigtramp) + 64)
		return false;
	*mod = self;
	mod->bias = load_bias;
	return true;
}

static int setup(void **state)
{
	(void)state;
	dl_iterate_phdr(first_object, NULL);
	return 0;
}

/* ---- the rule cache ---- */

static const struct cs_cfi_row *row_at(struct cs_cfi *c, uint64_t addr,
				       enum cs_unwind_stop *why)
{
	struct cs_unwind_module mod = self;
	int err;
	const struct cs_cfi_row *row;

	mod.bias = load_bias;
	row = cs_cfi_find(c, &mod, addr - load_bias, why, &err);
	assert_int_equal(err, 0);
	return row;
}

static void a_row_holds_the_cfa_and_the_saved_registers(void **state)
{
	struct cs_cfi *c;
	const struct cs_cfi_row *r;
	enum cs_unwind_stop why;

	(void)state;
	assert_int_equal(cs_cfi_new(cs_unwind_arch_host(), &c), 0);
	r = row_at(c, A(uw_mid_ret) - 1, &why);		/* at the call */
	assert_non_null(r);
	assert_int_equal(r->cfa.kind, CS_RULE_OFFSET);
	assert_int_equal(r->cfa.reg, 7);
	assert_int_equal(r->cfa.off, 32);
	assert_int_equal(r->regs[3].kind, CS_RULE_OFFSET);	/* rbx */
	assert_int_equal(r->regs[3].off, -16);
	assert_int_equal(r->regs[16].kind, CS_RULE_OFFSET);	/* rip */
	assert_int_equal(r->regs[16].off, -8);
	assert_int_equal(r->regs[7].kind, CS_RULE_VAL_OFFSET);	/* rsp = CFA */
	assert_int_equal(r->regs[7].off, 0);
	assert_false(r->signal);
	cs_cfi_free(c);
}

static void a_row_is_compiled_once_and_found_at_any_of_its_pcs(void **state)
{
	struct cs_cfi *c;
	const struct cs_cfi_row *a, *b;
	enum cs_unwind_stop why;

	(void)state;
	assert_int_equal(cs_cfi_new(cs_unwind_arch_host(), &c), 0);
	/* every byte of the PLT-like entry shares one row */
	a = row_at(c, A(uw_plt) + 3, &why);
	assert_non_null(a);
	assert_int_equal(a->cfa.kind, CS_RULE_EXPR);
	assert_int_equal(a->cfa.nops, 9);
	b = row_at(c, A(uw_plt) + 9, &why);
	assert_ptr_equal(a, b);				/* found, not made again */
	b = row_at(c, A(uw_plt) + 12, &why);
	assert_ptr_equal(a, b);
	assert_int_equal(cs_cfi_stats(c)->interpreted, 1);
	assert_int_equal(cs_cfi_stats(c)->rows, 1);
	/* the same pc again: the direct-mapped cache answers */
	b = row_at(c, A(uw_plt) + 12, &why);
	assert_ptr_equal(a, b);
	assert_int_equal(cs_cfi_stats(c)->interpreted, 1);
	assert_int_equal(cs_cfi_stats(c)->lookups, 4);
	/* below the first pc asked, libdw is asked again (its row starts
	 * cannot be trusted, see below) and the row grows down */
	b = row_at(c, A(uw_plt) + 1, &why);
	assert_ptr_equal(a, b);
	assert_int_equal(cs_cfi_stats(c)->interpreted, 2);
	assert_int_equal(cs_cfi_stats(c)->rows, 1);
	b = row_at(c, A(uw_plt) + 2, &why);
	assert_ptr_equal(a, b);
	assert_int_equal(cs_cfi_stats(c)->interpreted, 2);
	assert_int_equal(cs_cfi_stats(c)->modules, 1);
	cs_cfi_free(c);
}

/* libdw reports the row after DW_CFA_restore_state as starting where the
 * remembered row started: a row must not be trusted below the pc it was
 * asked for, or the early epilogue would get the body's rule */
static void restore_state_does_not_spread_a_row_over_the_epilogue(void **state)
{
	struct cs_cfi *c;
	const struct cs_cfi_row *late, *early, *body;
	enum cs_unwind_stop why;

	(void)state;
	assert_int_equal(cs_cfi_new(cs_unwind_arch_host(), &c), 0);
	late = row_at(c, A(uw_mid_late), &why);
	assert_non_null(late);
	assert_int_equal(late->cfa.off, 32);
	early = row_at(c, A(uw_early_ret), &why);
	assert_non_null(early);
	assert_int_equal(early->cfa.off, 8);
	body = row_at(c, A(uw_mid_ret), &why);
	assert_non_null(body);
	assert_int_equal(body->cfa.off, 32);
	assert_ptr_not_equal(body, late);	/* two rows, the same rules */
	assert_int_equal(row_at(c, A(uw_mid_late), &why)->cfa.off, 32);
	cs_cfi_free(c);
}

static void the_signal_trampoline_and_the_root_are_marked(void **state)
{
	struct cs_cfi *c;
	const struct cs_cfi_row *r;
	enum cs_unwind_stop why;

	(void)state;
	assert_int_equal(cs_cfi_new(cs_unwind_arch_host(), &c), 0);
	r = row_at(c, A(uw_sigtramp) - 1, &why);
	assert_non_null(r);
	assert_true(r->signal);
	assert_int_equal(r->cfa.kind, CS_RULE_EXPR);
	assert_int_equal(r->regs[16].kind, CS_RULE_EXPR);
	assert_int_equal(r->regs[3].kind, CS_RULE_EXPR);
	r = row_at(c, A(uw_root_ret) - 1, &why);
	assert_non_null(r);
	assert_int_equal(r->regs[16].kind, CS_RULE_UNDEFINED);
	cs_cfi_free(c);
}

static void no_cfi_and_no_file_are_answers_too(void **state)
{
	struct cs_unwind_module none = { .key = "none", .name = "gone" };
	struct cs_cfi *c;
	enum cs_unwind_stop why;
	int err;

	(void)state;
	assert_int_equal(cs_cfi_new(cs_unwind_arch_host(), &c), 0);
	assert_null(row_at(c, load_bias + 8, &why));	/* the ELF header */
	assert_int_equal(why, CS_UNWIND_NO_CFI);
	assert_null(row_at(c, load_bias + 8, &why));
	assert_int_equal(why, CS_UNWIND_NO_CFI);
	assert_int_equal(cs_cfi_stats(c)->rows, 0);
	assert_null(cs_cfi_find(c, &none, 0x1000, &why, &err));
	assert_int_equal(err, 0);
	assert_int_equal(why, CS_UNWIND_NO_FILE);
	cs_cfi_free(c);
}

/* ---- the walk ---- */

/* perf's x86_64 mask: AX..SS and R8..R15 */
#define MASK 0xff0fffULL
#define PERF_SP 7
#define PERF_IP 8
#define PERF_BX 1
#define PERF_BP 6

struct sample {
	uint64_t regs[20];
	uint64_t stack[64];
	struct cs_unwind_input in;
};

/* regs index of a perf register bit under MASK */
static int slot(int bit)
{
	return __builtin_popcountll(MASK & ((1ULL << bit) - 1));
}

static void sample_init(struct sample *s, uint64_t ip, uint64_t sp)
{
	memset(s, 0, sizeof(*s));
	s->regs[slot(PERF_IP)] = ip;
	s->regs[slot(PERF_SP)] = sp;
	s->in = (struct cs_unwind_input){
		.abi = 2, .regs_mask = MASK, .regs = s->regs,
		.stack = s->stack, .stack_size = sizeof(s->stack),
		.stack_dyn_size = sizeof(s->stack),
	};
}

#define SP 0x7ffc1000ULL
#define AT(addr) (s.stack[((addr) - SP) / 8])

static struct cs_unwind *unwinder(void)
{
	struct cs_unwind *u;

	assert_int_equal(cs_unwind_new(cs_unwind_arch_host(), &u), 0);
	return u;
}

/* Walks s into ips[0..cap); says why it stopped. */
static enum cs_unwind_stop walk(struct cs_unwind *u, const struct sample *s,
				uint64_t *ips, size_t cap,
				struct cs_unwind_result *res)
{
	assert_int_equal(cs_unwind_sample(u, &s->in, find_self, NULL, ips, cap,
					  res), 0);
	return res->stop;
}

/* A sample taken in leaf (no frame), called from mid (rbx and locals,
 * 24 bytes), called from root: the stack the walks below start from.
 * At SP leaf's return address; mid's above its rbx and locals. */
static void sample_in_leaf_of_mid_of_root(struct sample *smp)
{
	sample_init(smp, A(uw_leaf_body), SP);
	smp->stack[0] = A(uw_mid_ret);
	smp->stack[(8 + 24) / 8] = A(uw_root_ret);
}

/* leaf (no frame) <- mid (rbx, locals) <- root */
static void frames_are_walked_to_the_root(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	sample_in_leaf_of_mid_of_root(&s);
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 3);
	assert_int_equal(ips[0], A(uw_leaf_body));	/* the sampled pc */
	assert_int_equal(ips[1], A(uw_mid_ret) - 1);	/* callers: the call */
	assert_int_equal(ips[2], A(uw_root_ret) - 1);
	cs_unwind_free(u);
}

/* find_self with the range its answer holds for, counting its calls */
static bool find_self_ranged(void *ctx, uint64_t addr,
			     struct cs_unwind_module *mod)
{
	int *calls = ctx;

	++*calls;
	if (!find_self(NULL, addr, mod))
		return false;
	mod->start = A(uw_root);
	mod->end = A(uw_sigtramp) + 64;
	return true;
}

static bool find_self_counted(void *ctx, uint64_t addr,
			      struct cs_unwind_module *mod)
{
	++*(int *)ctx;
	return find_self(NULL, addr, mod);
}

static void frames_in_the_range_of_an_answer_skip_the_finder(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16], again[16];
	int ranged = 0, counted = 0;

	(void)state;
	sample_in_leaf_of_mid_of_root(&s);
	assert_int_equal(cs_unwind_sample(u, &s.in, find_self_ranged, &ranged,
					  ips, 16, &res), 0);
	assert_int_equal(res.stop, CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 3);
	assert_int_equal(ranged, 1);		/* one binary: asked once */
	/* a finder that gives no range is asked for every frame, and the
	 * walk is the same */
	assert_int_equal(cs_unwind_sample(u, &s.in, find_self_counted, &counted,
					  again, 16, &res), 0);
	assert_int_equal(res.nr, 3);
	assert_int_equal(counted, 3);
	assert_memory_equal(ips, again, 3 * sizeof(ips[0]));
	cs_unwind_free(u);
}

static void the_copy_ends_where_dyn_size_says(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	sample_in_leaf_of_mid_of_root(&s);	/* mid's return address at
						 * SP + 32: in the buffer ... */
	s.in.stack_dyn_size = 32;		/* ... but not valid */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_STACK_END);
	assert_int_equal(res.nr, 2);
	cs_unwind_free(u);
}

static void the_plt_cfa_follows_the_pc(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	/* early in the entry: the return address is at rsp */
	sample_init(&s, A(uw_plt) + 4, SP);
	AT(SP) = A(uw_root_ret);
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 2);
	/* after the push: one word further */
	sample_init(&s, A(uw_plt) + 11, SP);
	AT(SP) = 0x1234;
	AT(SP + 8) = A(uw_root_ret);
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 2);
	assert_int_equal(ips[1], A(uw_root_ret) - 1);
	cs_unwind_free(u);
}

/* a handler (the leaf) returns into the trampoline, whose CFI restores
 * the interrupted frame: a pc that is exact, not a return address */
static void a_signal_frame_resumes_the_interrupted_pc(void **state)
{
	const uint64_t ctx = SP + 8, isp = SP + 256;
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	sample_init(&s, A(uw_leaf_body), SP);
	s.in.stack = s.stack;
	AT(SP) = A(uw_sigtramp);		/* the handler returns here */
	AT(ctx + 64) = isp;			/* saved rsp, and the CFA */
	AT(ctx + 72) = A(uw_mid_late);		/* saved rip: interrupted here */
	AT(ctx + 80) = 0xb0b;			/* saved rbx */
	AT(isp + 24) = A(uw_root_ret);		/* mid's return address */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 4);
	assert_int_equal(ips[1], A(uw_sigtramp));	/* shown at itself */
	/* looked up at the exact pc: at pc - 1 (the early ret) the frame
	 * would be 24 bytes smaller and the walk would go astray */
	assert_int_equal(ips[2], A(uw_mid_late));
	assert_int_equal(ips[3], A(uw_root_ret) - 1);
	cs_unwind_free(u);
}

static void bad_input_is_refused_before_any_read(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	sample_init(&s, A(uw_leaf_body), SP);
	s.in.stack = NULL;			/* any read would crash */
	s.in.stack_dyn_size = 64;
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_BAD_INPUT);
	assert_int_equal(res.nr, 0);

	sample_init(&s, A(uw_leaf_body), SP);
	s.in.stack_dyn_size = s.in.stack_size + 8;	/* dyn_size > size */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_BAD_INPUT);
	assert_non_null(strstr(res.why, "dyn_size"));

	sample_init(&s, A(uw_leaf_body), SP);
	s.in.regs_mask = MASK & ~(1ULL << PERF_IP);	/* no pc */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_BAD_INPUT);

	sample_init(&s, A(uw_leaf_body), SP);
	s.in.regs_mask = MASK | 1ULL << 40;	/* not an x86_64 register */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_BAD_INPUT);

	sample_init(&s, A(uw_leaf_body), SP);
	s.in.abi = 0;				/* a kernel thread */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_NO_REGS);
	assert_int_equal(res.nr, 0);
	cs_unwind_free(u);
}

static void where_a_walk_cannot_go_it_says_why(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	/* a return address outside any binary */
	sample_init(&s, A(uw_leaf_body), SP);
	AT(SP) = 0x1000;
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_NO_MAP);
	assert_int_equal(res.nr, 2);
	assert_int_equal(ips[1], 0xfff);

	/* a frame whose caller's stack would not be above it */
	sample_init(&s, A(uw_leaf_body), SP);
	AT(SP) = A(uw_leaf_body) + 1;		/* itself, CFA rsp + 8 ... */
	AT(SP + 8) = A(uw_leaf_body) + 1;	/* ... fine, it grows */
	assert_int_equal(walk(u, &s, ips, 3, &res), CS_UNWIND_DEPTH);
	assert_int_equal(res.nr, 3);

	/* rbx is unknown once mid's frame is gone, but nothing needs it */
	sample_in_leaf_of_mid_of_root(&s);
	s.regs[slot(PERF_BX)] = 0xb0b;
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	cs_unwind_free(u);
}

/* Code without CFI that keeps a frame pointer (crt files' helpers) is
 * walked by it, as libdw and so perf walk it: nocfi <- mid <- root. */
static void code_without_cfi_is_walked_by_its_frame_pointer(void **state)
{
	struct cs_unwind *u = unwinder();
	struct cs_unwind_result res;
	struct sample s;
	uint64_t ips[16];

	(void)state;
	sample_init(&s, A(uw_nocfi_body), SP);
	s.regs[slot(PERF_BP)] = SP;		/* push %rbp; mov %rsp, %rbp */
	AT(SP) = 0xf00;				/* the caller's rbp */
	AT(SP + 8) = A(uw_mid_ret);
	AT(SP + 16 + 24) = A(uw_root_ret);	/* mid's, from its CFI again */
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_ROOT);
	assert_int_equal(res.nr, 3);
	assert_int_equal(ips[0], A(uw_nocfi_body));
	assert_int_equal(ips[1], A(uw_mid_ret) - 1);
	assert_int_equal(ips[2], A(uw_root_ret) - 1);

	/* a frame pointer below the stack pointer (0: none kept) or outside
	 * the copy leads nowhere: the walk stops there, naming the binary */
	sample_init(&s, A(uw_nocfi_body), SP);
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_NO_CFI);
	assert_int_equal(res.nr, 1);
	assert_non_null(res.module);
	s.regs[slot(PERF_BP)] = SP + sizeof(s.stack);
	assert_int_equal(walk(u, &s, ips, 16, &res), CS_UNWIND_NO_CFI);
	assert_int_equal(res.nr, 1);
	cs_unwind_free(u);
}

/* The one list of perf's registers (src/abi/perf_regs.h) gives what perf
 * asks for and the psABI's map, checked here against both written out. */
static void perf_and_dwarf_numbers_come_from_one_list(void **state)
{
	/* DWARF rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip -> perf's bits */
	static const int want[17] = { 0, 3, 2, 1, 4, 5, 6, 7,
				      16, 17, 18, 19, 20, 21, 22, 23, 8 };
	const struct cs_unwind_arch *a = cs_unwind_arch_find("x86_64");
	int got[17];

	(void)state;
	assert_int_equal(CS_PERF_REGS_X86_64_USER_MASK, 0xff0fffULL);
	assert_int_equal(CS_PERF_REGS_X86_64_MASK, 0xffffffULL);
	assert_int_equal(CS_PERF_REGS_ARM64_USER_MASK, 0x1ffffffffULL);
	assert_int_equal(CS_PERF_REG_ARM64_PC, 32);
	assert_ptr_equal(cs_unwind_arch_find("amd64"), a);
	assert_int_equal(a->perf_mask, CS_PERF_REGS_X86_64_MASK);
	assert_int_equal(a->pc_bit, PERF_IP);
	memset(got, -1, sizeof(got));
	for (size_t i = 0; i < a->nr_regs; i++) {
		int d = a->regs[i].dwarf;

		if (d >= 0 && d < 17) {
			assert_int_equal(got[d], -1);	/* named once */
			got[d] = a->regs[i].bit;
		}
	}
	for (int d = 0; d < 17; d++)
		assert_int_equal(got[d], want[d]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_row_holds_the_cfa_and_the_saved_registers),
		cmocka_unit_test(a_row_is_compiled_once_and_found_at_any_of_its_pcs),
		cmocka_unit_test(restore_state_does_not_spread_a_row_over_the_epilogue),
		cmocka_unit_test(the_signal_trampoline_and_the_root_are_marked),
		cmocka_unit_test(no_cfi_and_no_file_are_answers_too),
		cmocka_unit_test(frames_are_walked_to_the_root),
		cmocka_unit_test(frames_in_the_range_of_an_answer_skip_the_finder),
		cmocka_unit_test(the_copy_ends_where_dyn_size_says),
		cmocka_unit_test(the_plt_cfa_follows_the_pc),
		cmocka_unit_test(a_signal_frame_resumes_the_interrupted_pc),
		cmocka_unit_test(bad_input_is_refused_before_any_read),
		cmocka_unit_test(where_a_walk_cannot_go_it_says_why),
		cmocka_unit_test(code_without_cfi_is_walked_by_its_frame_pointer),
		cmocka_unit_test(perf_and_dwarf_numbers_come_from_one_list),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

#else

static void x86_64_only(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(x86_64_only) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
