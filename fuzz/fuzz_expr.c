/* fuzz_expr.c - the DWARF expression evaluator (src/lib/unwind/expr.c) on
 * hostile expressions, registers and stack copies.
 *
 * Real CFI uses few expressions, so fuzz_unwind reaches little of the
 * evaluator; here the expression is the input. The evaluator trusts
 * libdw's decoding of the bytes into operations and nothing else, so the
 * input is decoded into operations directly:
 *
 *   byte 0       which registers are known (bit r: register r, for r < 8;
 *                8.. always known) and, in bit 7, whether the CFA is
 *   bytes 1..17  the 17 registers, each 0x7ffc0000 + 8 * byte (so that
 *                most point into the stack copy)
 *   then ops     atom, a width byte (low nibble: number's, high: number2's,
 *                each 0, 1, 2, 4 or 8 bytes, little-endian), the numbers;
 *                an op with atom 0xff ends the ops
 *   the rest     the stack copy, at 0x7ffc0000
 *
 * Each op's offset is where it starts in the input, as libdw gives the
 * byte offset in the expression (branches find their targets by it).
 * Checked: the result is 0 or one of the errors expr.h names, a value is
 * only said to be one by a final DW_OP_stack_value, and a second run
 * gives the same answer. ASan sees every read of the stack copy: it is
 * allocated to its exact size.
 */
#include "fuzz.h"
#include "lib/unwind/expr.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STACK_START	0x7ffc0000ULL
#define NREGS		17
#define MAX_OPS		256

/* Reads a little-endian number of the width nibble w names; false if the
 * input ends first. */
static bool read_number(const uint8_t *data, size_t size, size_t *pos,
			unsigned int w, uint64_t *v)
{
	static const unsigned int bytes[16] = { 0, 1, 2, 4, 8, 0, 1, 2,
						4, 8, 0, 1, 2, 4, 8, 8 };
	unsigned int n = bytes[w & 15];

	if (size - *pos < n)
		return false;
	*v = 0;
	for (unsigned int i = n; i-- > 0;)
		*v = *v << 8 | data[*pos + i];
	*pos += n;
	return true;
}

static bool known_error(int rc)
{
	return rc == 0 || rc == -ENODATA || rc == -EFAULT || rc == -ESRCH ||
	       rc == -EINVAL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_expr_op ops[MAX_OPS];
	uint64_t regs[NREGS], out = 0, out2 = 0;
	struct cs_stack_copy stack = { .start = STACK_START };
	struct cs_expr_env env = { .regs = regs, .nregs = NREGS };
	size_t pos = 1 + NREGS, nops = 0;
	bool value = false, value2 = false;
	uint8_t *copy;
	int rc, rc2;

	if (size < pos)
		return 0;
	env.known = ~(uint64_t)0xff | data[0];
	env.cfa_known = data[0] >> 7;
	env.cfa = STACK_START + 0x40;
	for (unsigned int r = 0; r < NREGS; r++)
		regs[r] = STACK_START + 8ULL * data[1 + r];
	while (pos < size && data[pos] != 0xff && nops < MAX_OPS) {
		struct cs_expr_op *op = &ops[nops];
		unsigned int w;

		op->atom = data[pos];
		op->offset = (uint32_t)pos;
		if (size - pos < 2)
			break;
		w = data[pos + 1];
		pos += 2;
		if (!read_number(data, size, &pos, w, &op->number) ||
		    !read_number(data, size, &pos, w >> 4, &op->number2))
			break;
		nops++;
	}
	if (pos < size && data[pos] == 0xff)
		pos++;
	stack.size = size - pos;
	copy = malloc(stack.size ? stack.size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + pos, stack.size);
	stack.data = copy;
	env.stack = &stack;

	rc = cs_expr_eval(ops, nops, &env, &out, &value);
	rc2 = cs_expr_eval(ops, nops, &env, &out2, &value2);
	if (!known_error(rc))
		fuzz_fail("fuzz_expr: %d is not an error expr.h names", rc);
	if (rc != rc2 || (!rc && (out != out2 || value != value2)))
		fuzz_fail("fuzz_expr: two runs of one expression differ");
	if (!rc && value && ops[nops - 1].atom != DW_OP_stack_value)
		fuzz_fail("fuzz_expr: a value without a final DW_OP_stack_value");
	free(copy);
	return 0;
}
