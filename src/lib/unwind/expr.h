/* expr.h - the DWARF expressions call frame information uses, evaluated
 * against one frame's registers and the sample's stack copy.
 *
 * Real CFI needs few operations: the PLT's CFA (rsp + 8 + 8 * ((rip & 15)
 * >= 11)), the signal trampoline's register locations (rsp + offset into
 * the saved context) and the odd stack realignment. Every operation of
 * DWARF 5's arithmetic, stack and branch sets is understood; memory is the
 * stack copy alone, read with bounds checks, and a run is cut after a fixed
 * number of steps so that a looping branch cannot hang the reader.
 */
#ifndef CS_UNWIND_EXPR_H
#define CS_UNWIND_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

/* One operation, as libdw decodes it (Dwarf_Op). */
struct cs_expr_op {
	uint8_t atom;			/* DW_OP_* */
	uint32_t offset;		/* byte offset in the expression (branches) */
	uint64_t number, number2;
};

/* The user stack copy of a sample: the bytes at [start, start + size). */
struct cs_stack_copy {
	const uint8_t *data;
	uint64_t start;			/* the sampled stack pointer */
	uint64_t size;			/* valid bytes (dyn_size), never more */
};

/* Reads the size-byte (1, 2, 4 or 8) little-endian value at addr from the
 * copy: 0, -ENODATA past its end (the copy was too small to hold it) or
 * -EFAULT below its start. */
static inline int cs_stack_read_size(const struct cs_stack_copy *st,
				     uint64_t addr, unsigned int size,
				     uint64_t *val)
{
	const uint8_t *p;
	uint64_t v = 0;

	if (addr < st->start)
		return -14;		/* EFAULT; kept free of <errno.h> */
	if (st->size < size || addr - st->start > st->size - size)
		return -61;		/* ENODATA */
	p = st->data + (addr - st->start);
	if (size == 8) {		/* the common read: one load */
		memcpy(&v, p, 8);
		*val = le64toh(v);
		return 0;
	}
	for (unsigned int i = size; i-- > 0;)
		v = v << 8 | p[i];
	*val = v;
	return 0;
}

static inline int cs_stack_read(const struct cs_stack_copy *st, uint64_t addr,
				uint64_t *val)
{
	return cs_stack_read_size(st, addr, 8, val);
}

/* What an expression may look at. */
struct cs_expr_env {
	const uint64_t *regs;		/* DWARF numbering */
	uint64_t known;			/* bit r set: regs[r] is known */
	unsigned int nregs;
	uint64_t cfa;			/* for DW_OP_call_frame_cfa */
	bool cfa_known;
	const struct cs_stack_copy *stack;
};

/* Evaluates ops[0..nops). On 0, *out is the result and *is_value tells a
 * value (the expression ended with DW_OP_stack_value) from an address.
 * Errors: -ENODATA a read past the stack copy, -EFAULT a read below it,
 * -ESRCH a register or the CFA not known, -EINVAL a malformed or
 * unsupported expression (stack underflow or overflow, division by zero,
 * a bad branch, too many steps, an unknown operation). */
int cs_expr_eval(const struct cs_expr_op *ops, size_t nops,
		 const struct cs_expr_env *env, uint64_t *out, bool *is_value);

#endif
