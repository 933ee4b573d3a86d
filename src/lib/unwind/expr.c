/* expr.c - the DWARF expression evaluator (see expr.h). */
#include "lib/unwind/expr.h"

#include <dwarf.h>
#include <errno.h>

_Static_assert(EFAULT == 14 && ENODATA == 61, "cs_stack_read() spells them out");

#define STACK_MAX	64
#define STEPS_MAX	1024

struct vm {
	uint64_t v[STACK_MAX];
	size_t n;
};

static int push(struct vm *s, uint64_t x)
{
	if (s->n == STACK_MAX)
		return -EINVAL;
	s->v[s->n++] = x;
	return 0;
}

static int reg_value(const struct cs_expr_env *env, uint64_t reg, uint64_t *v)
{
	if (reg >= env->nregs || reg >= 64)
		return -EINVAL;		/* a register we do not track */
	if (!(env->known >> reg & 1))
		return -ESRCH;
	*v = env->regs[reg];
	return 0;
}

static int deref(const struct cs_expr_env *env, uint64_t addr, uint64_t size,
		 uint64_t *v)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EINVAL;
	return cs_stack_read_size(env->stack, addr, (unsigned int)size, v);
}

/* The index of the operation at byte offset `to`, or -1. */
static long op_at(const struct cs_expr_op *ops, size_t nops, uint64_t to)
{
	for (size_t i = 0; i < nops; i++)
		if (ops[i].offset == to)
			return (long)i;
	return -1;
}

static int binary(uint8_t atom, uint64_t a, uint64_t b, uint64_t *r)
{
	int64_t sa = (int64_t)a, sb = (int64_t)b;

	switch (atom) {
	case DW_OP_and:		*r = a & b; break;
	case DW_OP_or:		*r = a | b; break;
	case DW_OP_xor:		*r = a ^ b; break;
	case DW_OP_plus:	*r = a + b; break;
	case DW_OP_minus:	*r = a - b; break;
	case DW_OP_mul:		*r = a * b; break;
	case DW_OP_div:
		if (!b || (sa == INT64_MIN && sb == -1))
			return -EINVAL;
		*r = (uint64_t)(sa / sb);
		break;
	case DW_OP_mod:
		if (!b)
			return -EINVAL;
		*r = a % b;
		break;
	case DW_OP_shl:		*r = b >= 64 ? 0 : a << b; break;
	case DW_OP_shr:		*r = b >= 64 ? 0 : a >> b; break;
	case DW_OP_shra:
		*r = b >= 64 ? (sa < 0 ? UINT64_MAX : 0) :
		     sa < 0 ? ~(~a >> b) : a >> b;
		break;
	case DW_OP_eq:		*r = sa == sb; break;
	case DW_OP_ne:		*r = sa != sb; break;
	case DW_OP_lt:		*r = sa < sb; break;
	case DW_OP_le:		*r = sa <= sb; break;
	case DW_OP_gt:		*r = sa > sb; break;
	case DW_OP_ge:		*r = sa >= sb; break;
	default:
		return -EINVAL;
	}
	return 0;
}

int cs_expr_eval(const struct cs_expr_op *ops, size_t nops,
		 const struct cs_expr_env *env, uint64_t *out, bool *is_value)
{
	struct vm s = { .n = 0 };
	size_t steps = 0, i = 0;
	uint64_t a, c;
	int err;

	*is_value = false;
	while (i < nops) {
		const struct cs_expr_op *op = &ops[i];
		uint8_t at = op->atom;

		if (++steps > STEPS_MAX)
			return -EINVAL;
		i++;
		err = 0;
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			err = push(&s, at - DW_OP_lit0);
		} else if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			err = reg_value(env, at - DW_OP_breg0, &a);
			if (!err)
				err = push(&s, a + op->number);
		} else {
			switch (at) {
			case DW_OP_addr:
			case DW_OP_const1u: case DW_OP_const1s:
			case DW_OP_const2u: case DW_OP_const2s:
			case DW_OP_const4u: case DW_OP_const4s:
			case DW_OP_const8u: case DW_OP_const8s:
			case DW_OP_constu: case DW_OP_consts:
				err = push(&s, op->number);
				break;
			case DW_OP_bregx:
				err = reg_value(env, op->number, &a);
				if (!err)
					err = push(&s, a + op->number2);
				break;
			case DW_OP_call_frame_cfa:
				if (!env->cfa_known)
					return -ESRCH;
				err = push(&s, env->cfa);
				break;
			case DW_OP_dup:
				if (!s.n)
					return -EINVAL;
				err = push(&s, s.v[s.n - 1]);
				break;
			case DW_OP_over:
				if (s.n < 2)
					return -EINVAL;
				err = push(&s, s.v[s.n - 2]);
				break;
			case DW_OP_pick:
				if (op->number >= s.n)
					return -EINVAL;
				err = push(&s, s.v[s.n - 1 - op->number]);
				break;
			case DW_OP_drop:
				if (!s.n)
					return -EINVAL;
				s.n--;
				break;
			case DW_OP_swap:
				if (s.n < 2)
					return -EINVAL;
				a = s.v[s.n - 1];
				s.v[s.n - 1] = s.v[s.n - 2];
				s.v[s.n - 2] = a;
				break;
			case DW_OP_rot:		/* top three: a b c -> c a b */
				if (s.n < 3)
					return -EINVAL;
				c = s.v[s.n - 1];
				s.v[s.n - 1] = s.v[s.n - 2];
				s.v[s.n - 2] = s.v[s.n - 3];
				s.v[s.n - 3] = c;
				break;
			case DW_OP_deref:
			case DW_OP_deref_size:
				if (!s.n)
					return -EINVAL;
				err = deref(env, s.v[s.n - 1],
					    at == DW_OP_deref ? 8 : op->number, &a);
				if (!err)
					s.v[s.n - 1] = a;
				break;
			case DW_OP_abs:
				if (!s.n)
					return -EINVAL;
				if ((int64_t)s.v[s.n - 1] < 0)
					s.v[s.n - 1] = -s.v[s.n - 1];
				break;
			case DW_OP_neg:
				if (!s.n)
					return -EINVAL;
				s.v[s.n - 1] = -s.v[s.n - 1];
				break;
			case DW_OP_not:
				if (!s.n)
					return -EINVAL;
				s.v[s.n - 1] = ~s.v[s.n - 1];
				break;
			case DW_OP_plus_uconst:
				if (!s.n)
					return -EINVAL;
				s.v[s.n - 1] += op->number;
				break;
			case DW_OP_skip:
			case DW_OP_bra: {
				long to;

				if (at == DW_OP_bra) {
					if (!s.n)
						return -EINVAL;
					if (!s.v[--s.n])
						break;
				}
				/* the target counts from the end of this
				 * 3-byte operation */
				to = op_at(ops, nops, op->offset + 3 +
					   (uint64_t)(int64_t)(int16_t)op->number);
				if (to < 0)
					return -EINVAL;
				i = (size_t)to;
				break;
			}
			case DW_OP_nop:
				break;
			case DW_OP_stack_value:
				if (i != nops)
					return -EINVAL;
				*is_value = true;
				break;
			default:
				if (s.n < 2)
					return -EINVAL;
				err = binary(at, s.v[s.n - 2], s.v[s.n - 1], &a);
				if (!err) {
					s.n--;
					s.v[s.n - 1] = a;
				}
				break;
			}
		}
		if (err)
			return err;
	}
	if (!s.n)
		return -EINVAL;
	*out = s.v[s.n - 1];
	return 0;
}
