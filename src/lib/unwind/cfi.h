/* cfi.h - the call frame information of binaries, compiled into rows and
 * cached (the unwinder's inside; see unwind.h for the stage).
 *
 * A row is what CFI says about one range of pcs of one binary: how to find
 * the canonical frame address (CFA) and where each register of the caller
 * was saved. libdw interprets the CFI (dwarf_cfi_addrframe); each answer is
 * compiled once into a row, kept sorted per binary, and found again through
 * a direct-mapped cache keyed by (binary, pc). A pc without CFI is cached
 * too, so a miss is paid once.
 */
#ifndef CS_UNWIND_CFI_H
#define CS_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/unwind/arch.h"
#include "lib/unwind/expr.h"
#include "lib/unwind/unwind.h"

struct cs_cfi;				/* opaque */

enum cs_rule_kind {
	CS_RULE_UNDEFINED,		/* cannot be recovered */
	CS_RULE_SAME,			/* unchanged by this frame */
	CS_RULE_OFFSET,			/* saved at CFA + off; for the CFA:
					 * the value reg + off */
	CS_RULE_VAL_OFFSET,		/* the value CFA + off */
	CS_RULE_REGISTER,		/* the value of register reg */
	CS_RULE_EXPR,			/* ops: an address, or a value if they
					 * end with DW_OP_stack_value */
};

struct cs_rule {
	int64_t off;
	uint8_t kind;			/* enum cs_rule_kind */
	uint8_t reg;
	uint16_t nops;			/* CS_RULE_EXPR: row->ops[op..op+nops) */
	uint16_t op;
};

struct cs_cfi_row {
	uint64_t start, end;		/* the file addresses it holds for */
	bool signal;			/* a signal trampoline's frame */
	struct cs_rule cfa;		/* OFFSET (reg + off) or EXPR */
	struct cs_rule *regs;		/* [arch->nregs], in this allocation */
	uint8_t nr_changed;		/* registers whose rule is not SAME: */
	uint8_t changed[CS_UNWIND_MAX_REGS];	/* the only ones a step touches */
	size_t nops;
	struct cs_expr_op *ops;		/* in this allocation */
};

struct cs_cfi_stats {
	uint64_t lookups;		/* cs_cfi_find() calls */
	uint64_t interpreted;		/* ... that asked libdw (cache misses) */
	uint64_t rows;			/* rows kept */
	uint64_t modules;		/* binaries opened */
};

int cs_cfi_new(const struct cs_unwind_arch *arch, struct cs_cfi **out);

/* The row for pc, a file address of mod, or NULL with *why (NO_CFI,
 * NO_FILE or BAD_FRAME, for CFI that libdw read but we cannot use). The
 * row lives as long as c. Returns -ENOMEM only through *err. */
const struct cs_cfi_row *cs_cfi_find(struct cs_cfi *c,
				     const struct cs_unwind_module *mod,
				     uint64_t pc, enum cs_unwind_stop *why,
				     int *err);

const struct cs_cfi_stats *cs_cfi_stats(const struct cs_cfi *c);

void cs_cfi_free(struct cs_cfi *c);

#endif
