/* test_unwind_expr.c - the DWARF expressions CFI uses, evaluated against a
 * frame's registers and a stack copy that is never read outside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <dwarf.h>
#include <errno.h>

#include "lib/unwind/expr.h"

#define RSP 7
#define RIP 16

struct fixture {
	uint64_t regs[17];
	uint8_t bytes[64];
	struct cs_stack_copy stack;
	struct cs_expr_env env;
};

static void setup(struct fixture *f, uint64_t rsp, uint64_t rip)
{
	memset(f, 0, sizeof(*f));
	f->regs[RSP] = rsp;
	f->regs[RIP] = rip;
	for (size_t i = 0; i < sizeof(f->bytes); i++)
		f->bytes[i] = (uint8_t)(0x10 + i);
	f->stack = (struct cs_stack_copy){ f->bytes, rsp, sizeof(f->bytes) };
	f->env = (struct cs_expr_env){
		.regs = f->regs, .known = 1ULL << RSP | 1ULL << RIP,
		.nregs = 17, .stack = &f->stack,
	};
}

/* ops with their byte offsets, as libdw gives them: each op's size */
static size_t build(struct cs_expr_op *ops, const struct cs_expr_op *src,
		    const uint8_t *sizes, size_t n)
{
	uint32_t off = 0;

	for (size_t i = 0; i < n; i++) {
		ops[i] = src[i];
		ops[i].offset = off;
		off += sizes[i];
	}
	return n;
}

static int eval(const struct fixture *f, const struct cs_expr_op *ops,
		size_t n, uint64_t *out, bool *is_value)
{
	return cs_expr_eval(ops, n, &f->env, out, is_value);
}

/* the PLT's CFA: rsp + 8, plus 8 more from the 11th byte of each entry */
static const struct cs_expr_op plt_cfa[] = {
	{ .atom = DW_OP_breg7, .number = 8 },
	{ .atom = DW_OP_breg16, .number = 0 },
	{ .atom = DW_OP_lit15 }, { .atom = DW_OP_and },
	{ .atom = DW_OP_lit11 }, { .atom = DW_OP_ge },
	{ .atom = DW_OP_lit3 }, { .atom = DW_OP_shl }, { .atom = DW_OP_plus },
};

static void plt_cfa_depends_on_where_in_the_entry_the_pc_is(void **state)
{
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x7ffc0000, 0x401024);	/* byte 4 of an entry */
	assert_int_equal(eval(&f, plt_cfa, 9, &v, &is_value), 0);
	assert_int_equal(v, 0x7ffc0008);
	assert_false(is_value);
	f.regs[RIP] = 0x40102b;			/* byte 11: pushed once more */
	assert_int_equal(eval(&f, plt_cfa, 9, &v, &is_value), 0);
	assert_int_equal(v, 0x7ffc0010);
}

static void a_saved_register_is_found_through_the_stack(void **state)
{
	/* __restore_rt: the CFA is the saved rsp in the signal context */
	static const struct cs_expr_op cfa[] = {
		{ .atom = DW_OP_breg7, .number = 16 }, { .atom = DW_OP_deref },
	};
	static const struct cs_expr_op loc[] = {
		{ .atom = DW_OP_call_frame_cfa }, { .atom = DW_OP_breg7, .number = 24 },
	};
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x1000, 0);
	assert_int_equal(eval(&f, cfa, 2, &v, &is_value), 0);
	/* bytes 16..23 are 0x20..0x27 */
	assert_int_equal(v, 0x2726252423222120ULL);
	f.env.cfa = v;
	f.env.cfa_known = true;
	assert_int_equal(eval(&f, loc, 2, &v, &is_value), 0);
	assert_int_equal(v, 0x1018);		/* an address, not a value */
	assert_false(is_value);
}

static void reads_stay_inside_the_copy(void **state)
{
	struct cs_expr_op ops[2] = {
		{ .atom = DW_OP_breg7 }, { .atom = DW_OP_deref },
	};
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x1000, 0);
	f.stack.size = 40;			/* dyn_size: the rest is unknown */
	ops[0].number = 32;			/* the last whole word */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), 0);
	assert_int_equal(v, 0x3736353433323130ULL);
	ops[0].number = 33;			/* one byte past the end */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), -ENODATA);
	ops[0].number = 40;			/* inside the buffer, past dyn_size */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), -ENODATA);
	ops[0].number = (uint64_t)-8;		/* below the sampled sp */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), -EFAULT);
	ops[0].number = UINT64_MAX - 0x1000 + 1;	/* wraps to 0 */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), -EFAULT);
	/* a short read ending at the last valid byte */
	ops[0].number = 36;
	ops[1] = (struct cs_expr_op){ .atom = DW_OP_deref_size, .number = 4 };
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), 0);
	assert_int_equal(v, 0x37363534);
	ops[1].number = 3;			/* not a size DWARF allows here */
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), -EINVAL);
}

static void unknown_registers_and_cfa_are_told_apart(void **state)
{
	struct cs_expr_op ops[1] = { { .atom = DW_OP_breg3 } };
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x1000, 0);
	assert_int_equal(eval(&f, ops, 1, &v, &is_value), -ESRCH);	/* rbx */
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_bregx, .number = 40 };
	assert_int_equal(eval(&f, ops, 1, &v, &is_value), -EINVAL);	/* untracked */
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_call_frame_cfa };
	assert_int_equal(eval(&f, ops, 1, &v, &is_value), -ESRCH);
}

static void malformed_expressions_fail_cleanly(void **state)
{
	struct cs_expr_op ops[80];
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x1000, 0);
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_plus };	/* underflow */
	assert_int_equal(eval(&f, ops, 1, &v, &is_value), -EINVAL);
	for (int i = 0; i < 80; i++)				/* overflow */
		ops[i] = (struct cs_expr_op){ .atom = DW_OP_lit1 };
	assert_int_equal(eval(&f, ops, 80, &v, &is_value), -EINVAL);
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_lit1 };
	ops[1] = (struct cs_expr_op){ .atom = DW_OP_lit0 };
	ops[2] = (struct cs_expr_op){ .atom = DW_OP_div };	/* by zero */
	assert_int_equal(eval(&f, ops, 3, &v, &is_value), -EINVAL);
	ops[2] = (struct cs_expr_op){ .atom = 0xe0 };		/* vendor op */
	assert_int_equal(eval(&f, ops, 3, &v, &is_value), -EINVAL);
	ops[2] = (struct cs_expr_op){ .atom = DW_OP_stack_value };
	ops[3] = (struct cs_expr_op){ .atom = DW_OP_plus };	/* not last */
	assert_int_equal(eval(&f, ops, 4, &v, &is_value), -EINVAL);
	assert_int_equal(eval(&f, ops, 0, &v, &is_value), -EINVAL);	/* empty */
}

static void branches_are_followed_and_loops_cut(void **state)
{
	static const uint8_t sizes[] = { 1, 3, 1, 1 };
	/* lit1; bra +1 (over lit5); lit5; lit7 -> 7 */
	static const struct cs_expr_op fwd[] = {
		{ .atom = DW_OP_lit1 }, { .atom = DW_OP_bra, .number = 1 },
		{ .atom = DW_OP_lit5 }, { .atom = DW_OP_lit7 },
	};
	/* skip -3: to itself, forever */
	static const struct cs_expr_op loop[] = {
		{ .atom = DW_OP_lit1 }, { .atom = DW_OP_skip, .number = (uint64_t)-3 },
	};
	static const struct cs_expr_op wild[] = {
		{ .atom = DW_OP_lit1 }, { .atom = DW_OP_skip, .number = 100 },
	};
	struct cs_expr_op ops[4];
	struct fixture f;
	uint64_t v;
	bool is_value;
	size_t n;

	(void)state;
	setup(&f, 0x1000, 0);
	n = build(ops, fwd, sizes, 4);
	assert_int_equal(eval(&f, ops, n, &v, &is_value), 0);
	assert_int_equal(v, 7);
	n = build(ops, loop, sizes, 2);
	assert_int_equal(eval(&f, ops, n, &v, &is_value), -EINVAL);
	n = build(ops, wild, sizes, 2);
	assert_int_equal(eval(&f, ops, n, &v, &is_value), -EINVAL);
}

static void arithmetic_is_dwarfs(void **state)
{
	struct cs_expr_op ops[4];
	struct fixture f;
	uint64_t v;
	bool is_value;

	(void)state;
	setup(&f, 0x1000, 0);
	/* comparisons are signed: -1 < 1 */
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_consts, .number = (uint64_t)-1 };
	ops[1] = (struct cs_expr_op){ .atom = DW_OP_lit1 };
	ops[2] = (struct cs_expr_op){ .atom = DW_OP_lt };
	ops[3] = (struct cs_expr_op){ .atom = DW_OP_stack_value };
	assert_int_equal(eval(&f, ops, 4, &v, &is_value), 0);
	assert_int_equal(v, 1);
	assert_true(is_value);
	/* shra keeps the sign; a shift of 64 or more is defined */
	ops[1] = (struct cs_expr_op){ .atom = DW_OP_const1u, .number = 70 };
	ops[2] = (struct cs_expr_op){ .atom = DW_OP_shra };
	assert_int_equal(eval(&f, ops, 3, &v, &is_value), 0);
	assert_int_equal(v, UINT64_MAX);
	ops[2] = (struct cs_expr_op){ .atom = DW_OP_shr };
	assert_int_equal(eval(&f, ops, 3, &v, &is_value), 0);
	assert_int_equal(v, 0);
	/* plus_uconst of a "negative" offset wraps, as CFI offsets do */
	ops[0] = (struct cs_expr_op){ .atom = DW_OP_breg7, .number = 0 };
	ops[1] = (struct cs_expr_op){ .atom = DW_OP_plus_uconst, .number = (uint64_t)-8 };
	assert_int_equal(eval(&f, ops, 2, &v, &is_value), 0);
	assert_int_equal(v, 0xff8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plt_cfa_depends_on_where_in_the_entry_the_pc_is),
		cmocka_unit_test(a_saved_register_is_found_through_the_stack),
		cmocka_unit_test(reads_stay_inside_the_copy),
		cmocka_unit_test(unknown_registers_and_cfa_are_told_apart),
		cmocka_unit_test(malformed_expressions_fail_cleanly),
		cmocka_unit_test(branches_are_followed_and_loops_cut),
		cmocka_unit_test(arithmetic_is_dwarfs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
