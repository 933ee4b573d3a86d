/* unwind.c - the frame walk (see unwind.h). */
#include "lib/unwind/unwind.h"
#include "lib/unwind/arch.h"
#include "lib/unwind/cfi.h"
#include "lib/unwind/expr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cs_unwind {
	const struct cs_unwind_arch *arch;
	struct cs_cfi *cfi;
	uint64_t mask;			/* the register mask index[] is for */
	int8_t index[CS_UNWIND_MAX_REGS];	/* DWARF reg -> slot, -1 none */
	int pc_index;			/* slot of the pc, -1 none */
};

/* One frame: its pc and its registers, DWARF numbering. The pc is apart
 * because not every architecture gives it a DWARF number (arm64's has
 * none); a caller's pc is its callee's return-address column. */
struct frame {
	uint64_t pc;
	uint64_t regs[CS_UNWIND_MAX_REGS];
	uint64_t known;			/* bit r: regs[r] holds a value */
};

const char *cs_unwind_stop_name(enum cs_unwind_stop why)
{
	static const char *const names[CS_UNWIND__COUNT] = {
		[CS_UNWIND_ROOT] = "reached the outermost frame",
		[CS_UNWIND_STACK_END] = "stack copy too small",
		[CS_UNWIND_NO_CFI] = "no CFI",
		[CS_UNWIND_NO_FILE] = "binary not found",
		[CS_UNWIND_NO_MAP] = "address in no binary",
		[CS_UNWIND_BAD_FRAME] = "CFI leads nowhere",
		[CS_UNWIND_DEPTH] = "frame limit",
		[CS_UNWIND_NO_REGS] = "no user registers",
		[CS_UNWIND_BAD_INPUT] = "bad registers or stack copy",
	};

	return (unsigned int)why < CS_UNWIND__COUNT ? names[why] : "?";
}

int cs_unwind_new(const struct cs_unwind_arch *arch, struct cs_unwind **out)
{
	struct cs_unwind *u = calloc(1, sizeof(*u));

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->arch = arch;
	if (cs_cfi_new(arch, &u->cfi)) {
		free(u);
		return -ENOMEM;
	}
	*out = u;
	return 0;
}

void cs_unwind_free(struct cs_unwind *u)
{
	if (!u)
		return;
	cs_cfi_free(u->cfi);
	free(u);
}

/* The sample's pc and registers in DWARF numbering; false if the two the
 * walk cannot start without (pc, sp) are missing. Where each register
 * sits among the sampled ones depends on the mask only: worked out once,
 * from the architecture's list of perf bits and DWARF numbers. */
static bool load_regs(struct cs_unwind *u, const struct cs_unwind_input *in,
		      struct frame *f)
{
	const struct cs_unwind_arch *a = u->arch;

	if (u->mask != in->regs_mask || !u->mask) {
		u->mask = in->regs_mask;
		memset(u->index, -1, sizeof(u->index));
		for (size_t i = 0; i < a->nr_regs; i++) {
			const struct cs_perf_reg *r = &a->regs[i];

			if (r->dwarf >= 0 && (unsigned int)r->dwarf < a->nregs)
				u->index[r->dwarf] =
					(int8_t)cs_perf_reg_slot(u->mask, r->bit);
		}
		u->pc_index = cs_perf_reg_slot(u->mask, a->pc_bit);
	}
	f->known = 0;
	for (unsigned int r = 0; r < a->nregs; r++) {
		if (u->index[r] < 0)
			continue;
		f->regs[r] = in->regs[u->index[r]];
		f->known |= 1ULL << r;
	}
	if (u->pc_index < 0)
		return false;
	f->pc = in->regs[u->pc_index];
	return f->known >> a->sp & 1;
}

static const char *check_input(const struct cs_unwind_arch *a,
			       const struct cs_unwind_input *in)
{
	if (in->regs_mask & ~a->perf_mask)
		return "the register mask names registers this architecture does not have";
	if (in->abi != 2)
		return "registers of a 32-bit task (only 64-bit ones are unwound)";
	if (!in->regs)
		return "no register values";
	if (in->stack_size && !in->stack)
		return "no stack copy";
	if (in->stack_dyn_size > in->stack_size)
		return "the stack copy's dyn_size exceeds its size";
	return NULL;
}

/* The value a rule gives a register of the caller; 0 or an error of
 * cs_expr_eval()'s kind. */
static int apply(const struct cs_cfi_row *row, const struct cs_rule *rule,
		 const struct cs_expr_env *env, uint64_t *val)
{
	uint64_t addr;
	bool is_value;
	int err;

	switch (rule->kind) {
	case CS_RULE_OFFSET:
		return cs_stack_read(env->stack, env->cfa + (uint64_t)rule->off, val);
	case CS_RULE_VAL_OFFSET:
		*val = env->cfa + (uint64_t)rule->off;
		return 0;
	case CS_RULE_REGISTER:
		if (rule->reg >= env->nregs || !(env->known >> rule->reg & 1))
			return -ESRCH;
		*val = env->regs[rule->reg];
		return 0;
	case CS_RULE_EXPR:
		err = cs_expr_eval(row->ops + rule->op, rule->nops, env, &addr,
				   &is_value);
		if (err || is_value) {
			*val = addr;
			return err;
		}
		return cs_stack_read(env->stack, addr, val);
	}
	return -ESRCH;			/* undefined */
}

static enum cs_unwind_stop stop_of(int err)
{
	return err == -ENODATA ? CS_UNWIND_STACK_END : CS_UNWIND_BAD_FRAME;
}

/* One step: the caller's registers from this frame's row. Registers the
 * row does not mention keep their values; only the changed ones are
 * worked out. */
static enum cs_unwind_stop step(const struct cs_unwind_arch *a,
				const struct cs_cfi_row *row,
				const struct cs_stack_copy *stack,
				const struct frame *cur, struct frame *caller)
{
	struct cs_expr_env env = {
		.regs = cur->regs, .known = cur->known, .nregs = a->nregs,
		.stack = stack,
	};
	bool is_value;
	int err;

	if (row->regs[a->ra].kind == CS_RULE_UNDEFINED)
		return CS_UNWIND_ROOT;
	if (row->cfa.kind == CS_RULE_OFFSET) {
		if (row->cfa.reg >= a->nregs || !(cur->known >> row->cfa.reg & 1))
			return CS_UNWIND_BAD_FRAME;
		env.cfa = cur->regs[row->cfa.reg] + (uint64_t)row->cfa.off;
	} else {
		err = cs_expr_eval(row->ops + row->cfa.op, row->cfa.nops, &env,
				   &env.cfa, &is_value);
		if (err)
			return stop_of(err);
	}
	env.cfa_known = true;
	memcpy(caller->regs, cur->regs, a->nregs * sizeof(cur->regs[0]));
	caller->known = cur->known;
	for (unsigned int i = 0; i < row->nr_changed; i++) {
		unsigned int r = row->changed[i];

		err = apply(row, &row->regs[r], &env, &caller->regs[r]);
		if (!err)
			caller->known |= 1ULL << r;
		else if (r == a->ra || r == a->sp)
			return stop_of(err);
		else		/* lost; fine until a rule needs it */
			caller->known &= ~(1ULL << r);
	}
	if (!(caller->known >> a->ra & 1))
		return CS_UNWIND_BAD_FRAME;
	caller->pc = caller->regs[a->ra];
	return CS_UNWIND__COUNT;	/* no stop: go on */
}

/* A step through code without CFI (the crt files' helpers, hand-written
 * assembly), as libdw takes one on x86_64 and so perf: by the frame
 * pointer, if the code keeps one - the caller's frame pointer and the
 * return address are the two words at it, and the caller's stack starts
 * above them. Only those three registers are known after it. False when
 * the frame pointer is unknown, below the stack pointer or outside the
 * copy. */
static bool fp_step(const struct cs_unwind_arch *a,
		    const struct cs_stack_copy *stack, const struct frame *cur,
		    struct frame *caller)
{
	uint64_t fp, saved_fp, ret;

	if (a->fp < 0 || !(cur->known >> a->fp & 1))
		return false;
	fp = cur->regs[a->fp];
	if (fp < cur->regs[a->sp] || fp > UINT64_MAX - 16 ||
	    cs_stack_read(stack, fp, &saved_fp) ||
	    cs_stack_read(stack, fp + 8, &ret))
		return false;
	caller->known = 1ULL << a->sp | 1ULL << a->fp | 1ULL << a->ra;
	caller->regs[a->sp] = fp + 16;
	caller->regs[a->fp] = saved_fp;
	caller->regs[a->ra] = ret;
	caller->pc = ret;
	return true;
}

int cs_unwind_sample(struct cs_unwind *u, const struct cs_unwind_input *in,
		     cs_unwind_find_fn find, void *ctx, uint64_t *ips,
		     size_t cap, struct cs_unwind_result *res)
{
	const struct cs_unwind_arch *a = u->arch;
	struct cs_stack_copy stack;
	struct frame frames[2], *cur = &frames[0], *caller = &frames[1];
	struct cs_unwind_module mod = { .start = 0, .end = 0 };
	bool exact = true;		/* cur's pc is not a return address */
	enum cs_unwind_stop stop;

	memset(res, 0, sizeof(*res));
	if (!in->abi) {
		res->stop = CS_UNWIND_NO_REGS;
		return 0;
	}
	res->why = check_input(a, in);
	if (!res->why && !load_regs(u, in, cur))
		res->why = "the register mask lacks the pc or the stack pointer";
	if (res->why) {
		res->stop = CS_UNWIND_BAD_INPUT;
		return 0;
	}
	stack = (struct cs_stack_copy){
		.data = in->stack,
		.start = cur->regs[a->sp],
		.size = in->stack_dyn_size,
	};
	for (;;) {
		uint64_t pc = cur->pc;
		/* a return address may be the first byte after the function
		 * that called: the call instruction is what holds its row */
		uint64_t at = exact ? pc : pc - 1;
		const struct cs_cfi_row *row;
		struct frame *t;
		int err;

		if (res->nr == cap) {
			res->stop = CS_UNWIND_DEPTH;
			return 0;
		}
		/* a zero return address is the other way to end a stack */
		if (!pc && res->nr) {
			res->stop = CS_UNWIND_ROOT;
			return 0;
		}
		/* callers often lie in the binary of the frame before */
		if (at < mod.start || at >= mod.end) {
			mod = (struct cs_unwind_module){ .start = 0, .end = 0 };
			if (!find(ctx, at, &mod)) {
				ips[res->nr++] = at;
				res->stop = CS_UNWIND_NO_MAP;
				return 0;
			}
		}
		row = cs_cfi_find(u->cfi, &mod, at - mod.bias, &stop, &err);
		if (err)
			return err;
		/* a signal trampoline is shown at itself: its return address
		 * minus one (perf 6.1's choice) is the byte before it, where
		 * no symbol is */
		ips[res->nr++] = row && row->signal ? pc : at;
		if (row)
			stop = step(a, row, &stack, cur, caller);
		else if (stop == CS_UNWIND_NO_CFI && fp_step(a, &stack, cur, caller))
			stop = CS_UNWIND__COUNT;
		if (stop == CS_UNWIND__COUNT &&
		    caller->regs[a->sp] <= cur->regs[a->sp] && !(row && row->signal))
			stop = CS_UNWIND_BAD_FRAME;	/* a stack must grow */
		if (stop != CS_UNWIND__COUNT) {
			res->stop = stop;
			if (!row || stop == CS_UNWIND_BAD_FRAME)
				res->module = mod.name;
			return 0;
		}
		/* the frame a signal interrupted resumes at its exact pc */
		exact = row && row->signal;
		t = cur;
		cur = caller;
		caller = t;
	}
}
