/* cfi.c - binaries' CFI through libdw, compiled into cached rows (cfi.h). */
#include "lib/unwind/cfi.h"
#include "lib/unwind/arch.h"
#include "lib/symbols/elfimg.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PC_CACHE_BITS	14
#define ROW_OPS_MAX	1024		/* the signal trampoline needs 36 */

struct module {
	const void *key;
	Elf *elf;			/* the binary */
	Dwarf_CFI *eh;			/* its .eh_frame, or NULL */
	Dwarf *own_dwarf;		/* the binary's own .debug_frame ... */
	Elf *dbg_elf;			/* ... or its debug file's */
	Dwarf *dbg_dwarf;
	Dwarf_CFI *df;			/* .debug_frame, or NULL */
	bool no_file;			/* its file was not found */
	bool debug_tried;
	struct cs_cfi_row **rows;	/* sorted by end, disjoint */
	size_t nr_rows, cap_rows;
};

struct pc_ent {
	const void *key;		/* NULL: empty */
	uint64_t pc;
	const struct cs_cfi_row *row;	/* NULL: none, for `why` */
	uint8_t why;
};

struct cs_cfi {
	const struct cs_unwind_arch *arch;
	struct module **mods;		/* open addressing by key */
	size_t cap_mods, nr_mods;
	struct pc_ent *cache;
	struct cs_cfi_stats st;
};

int cs_cfi_new(const struct cs_unwind_arch *arch, struct cs_cfi **out)
{
	struct cs_cfi *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->arch = arch;
	c->cache = calloc(1u << PC_CACHE_BITS, sizeof(*c->cache));
	if (!c->cache) {
		free(c);
		return -ENOMEM;
	}
	cs_elf_init();
	*out = c;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* ---- opening a binary's CFI ---------------------------------------------- */

/* The file mapped whole, so that the descriptor can go at once: a
 * system-wide profile maps more binaries than a process may keep open. */
static Elf *open_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (elf_kind(elf) != ELF_K_ELF || elf_cntl(elf, ELF_C_FDDONE))) {
		elf_end(elf);
		elf = NULL;
	}
	close(fd);
	return elf;
}

static void module_open(struct module *m, const struct cs_unwind_module *mod)
{
	if (mod->path)
		m->elf = open_elf(mod->path);
	if (!m->elf) {
		m->no_file = true;
		return;
	}
	m->eh = dwarf_getcfi_elf(m->elf);
}

static bool has_debug_frame(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".debug_frame"))
			return true;
	}
	return false;
}

/* .debug_frame, looked for only when .eh_frame has no answer: in the
 * binary itself (built with -fno-asynchronous-unwind-tables, say), else in
 * its separate debug file. libdw inflates every compressed debug section
 * of a file it opens, so a file without .debug_frame is left alone. */
static void module_open_debug_frame(struct module *m,
				    const struct cs_unwind_module *mod)
{
	const char *debug_path;

	m->debug_tried = true;
	if (m->elf && has_debug_frame(m->elf)) {
		m->own_dwarf = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
		if (m->own_dwarf)
			m->df = dwarf_getcfi(m->own_dwarf);
	}
	debug_path = m->df || !mod->debug_path ? NULL :
		     mod->debug_path(mod->key, mod->debug_ctx);
	if (!debug_path)
		return;
	m->dbg_elf = open_elf(debug_path);
	if (m->dbg_elf && has_debug_frame(m->dbg_elf))
		m->dbg_dwarf = dwarf_begin_elf(m->dbg_elf, DWARF_C_READ, NULL);
	if (m->dbg_dwarf)
		m->df = dwarf_getcfi(m->dbg_dwarf);
}

static void module_free(struct module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_rows; i++)
		free(m->rows[i]);
	free(m->rows);
	/* the CFI of a Dwarf goes with it; .eh_frame's is ours to end */
	if (m->eh)
		dwarf_cfi_end(m->eh);
	if (m->own_dwarf)
		dwarf_end(m->own_dwarf);
	if (m->dbg_dwarf)
		dwarf_end(m->dbg_dwarf);
	if (m->dbg_elf)
		elf_end(m->dbg_elf);
	if (m->elf)
		elf_end(m->elf);
	free(m);
}

static int mods_grow(struct cs_cfi *c)
{
	size_t cap = c->cap_mods ? c->cap_mods * 2 : 64;
	struct module **mods = calloc(cap, sizeof(*mods));

	if (!mods)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap_mods; i++) {
		struct module *m = c->mods[i];
		size_t j;

		if (!m)
			continue;
		for (j = mix64((uintptr_t)m->key) & (cap - 1); mods[j];
		     j = (j + 1) & (cap - 1))
			;
		mods[j] = m;
	}
	free(c->mods);
	c->mods = mods;
	c->cap_mods = cap;
	return 0;
}

static struct module *module_get(struct cs_cfi *c,
				 const struct cs_unwind_module *mod)
{
	struct module *m;
	size_t i;

	if ((c->nr_mods + 1) * 2 > c->cap_mods && mods_grow(c))
		return NULL;
	for (i = mix64((uintptr_t)mod->key) & (c->cap_mods - 1); c->mods[i];
	     i = (i + 1) & (c->cap_mods - 1))
		if (c->mods[i]->key == mod->key)
			return c->mods[i];
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->key = mod->key;
	module_open(m, mod);
	c->mods[i] = m;
	c->nr_mods++;
	c->st.modules++;
	return m;
}

/* ---- rows ------------------------------------------------------------------ */

/* The first row ending after pc (rows are sorted by end), or nr_rows. */
static size_t row_after(const struct module *m, uint64_t pc)
{
	size_t lo = 0, hi = m->nr_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->rows[mid]->end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keeps a row libdw gave for pc. A row is known by its end: libdw reports
 * ends exactly, but after DW_CFA_restore_state it reports the start of
 * the row that was remembered (elfutils 0.188), so a row is taken to
 * start at the pc it was asked for and grows down as lower pcs of it are
 * asked. Returns the row kept (row itself, or the one it extends). */
static struct cs_cfi_row *row_keep(struct cs_cfi *c, struct module *m,
				   struct cs_cfi_row *row, uint64_t pc, int *err)
{
	size_t at = row_after(m, pc);

	row->start = pc;
	if (at < m->nr_rows && m->rows[at]->end == row->end) {
		if (m->rows[at]->start > pc)
			m->rows[at]->start = pc;
		free(row);
		return m->rows[at];
	}
	if (m->nr_rows == m->cap_rows) {
		size_t cap = m->cap_rows ? m->cap_rows * 2 : 16;
		struct cs_cfi_row **rows = realloc(m->rows, cap * sizeof(*rows));

		if (!rows) {
			free(row);
			*err = -ENOMEM;
			return NULL;
		}
		m->rows = rows;
		m->cap_rows = cap;
	}
	memmove(&m->rows[at + 1], &m->rows[at],
		(m->nr_rows - at) * sizeof(*m->rows));
	m->rows[at] = row;
	m->nr_rows++;
	c->st.rows++;
	return row;
}

/* libdw's operations, counted or copied into ops */
static size_t take_ops(const Dwarf_Op *ops, size_t nops,
		       struct cs_expr_op *to, size_t at)
{
	if (to)
		for (size_t i = 0; i < nops; i++)
			to[at + i] = (struct cs_expr_op){
				.atom = ops[i].atom,
				.offset = (uint32_t)ops[i].offset,
				.number = ops[i].number,
				.number2 = ops[i].number2,
			};
	return nops;
}

/* One register's rule from libdw's location description for it. */
static void compile_reg(const Dwarf_Op *ops, size_t nops, bool same,
			struct cs_rule *r, struct cs_expr_op *to, size_t *at)
{
	memset(r, 0, sizeof(*r));
	if (!nops) {
		r->kind = same ? CS_RULE_SAME : CS_RULE_UNDEFINED;
		return;
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		r->kind = CS_RULE_REGISTER;
		r->reg = (uint8_t)ops[0].number;
		if (ops[0].number > 255)
			r->kind = CS_RULE_UNDEFINED;
		return;
	}
	/* [call_frame_cfa, plus_uconst N?, stack_value?]: the common ones */
	if (ops[0].atom == DW_OP_call_frame_cfa && nops <= 3) {
		size_t i = 1;
		uint64_t off = 0;

		if (i < nops && ops[i].atom == DW_OP_plus_uconst)
			off = ops[i++].number;
		if (i == nops || (i + 1 == nops && ops[i].atom == DW_OP_stack_value)) {
			r->kind = i == nops ? CS_RULE_OFFSET : CS_RULE_VAL_OFFSET;
			r->off = (int64_t)off;
			return;
		}
	}
	r->kind = CS_RULE_EXPR;
	r->op = (uint16_t)*at;
	r->nops = (uint16_t)nops;
	*at += take_ops(ops, nops, to, *at);
}

/* Compiles libdw's frame into a row in one allocation; NULL on -ENOMEM
 * (*err) or for CFI we cannot use. Counting pass first, then the copy. */
static struct cs_cfi_row *compile(const struct cs_unwind_arch *arch,
				  Dwarf_Frame *f, int *err)
{
	unsigned int nregs = arch->nregs;
	struct cs_cfi_row *row = NULL;
	Dwarf_Addr start, end;
	Dwarf_Op *cfa_ops;
	size_t cfa_nops;
	bool signal;
	int ra;

	ra = dwarf_frame_info(f, &start, &end, &signal);
	if (ra < 0 || (unsigned int)ra != arch->ra ||
	    dwarf_frame_cfa(f, &cfa_ops, &cfa_nops) || !cfa_nops)
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		struct cs_rule scratch[CS_UNWIND_MAX_REGS];
		struct cs_rule *regs = row ? row->regs : scratch;
		struct cs_expr_op *to = row ? row->ops : NULL;
		size_t at = 0;

		/* the CFA: register + offset, or an expression's value */
		if (cfa_nops == 1 && (cfa_ops[0].atom == DW_OP_bregx ||
		    (cfa_ops[0].atom >= DW_OP_breg0 && cfa_ops[0].atom <= DW_OP_breg31))) {
			bool x = cfa_ops[0].atom == DW_OP_bregx;
			struct cs_rule cfa = {
				.kind = CS_RULE_OFFSET,
				.reg = (uint8_t)(x ? cfa_ops[0].number :
						 (Dwarf_Word)(cfa_ops[0].atom - DW_OP_breg0)),
				.off = (int64_t)(x ? cfa_ops[0].number2 :
						 cfa_ops[0].number),
			};

			if (x && cfa_ops[0].number >= nregs)
				return NULL;
			if (row)
				row->cfa = cfa;
		} else {
			if (row)
				row->cfa = (struct cs_rule){ .kind = CS_RULE_EXPR,
					.op = (uint16_t)at, .nops = (uint16_t)cfa_nops };
			at += take_ops(cfa_ops, cfa_nops, to, at);
		}
		for (unsigned int r = 0; r < nregs; r++) {
			Dwarf_Op mem[3], *ops;
			size_t nops;

			if (dwarf_frame_register(f, (int)r, mem, &ops, &nops))
				nops = 0, ops = mem;
			compile_reg(ops, nops, !ops, &regs[r], to, &at);
		}
		if (row)
			break;
		if (at > ROW_OPS_MAX)
			return NULL;
		row = malloc(sizeof(*row) + nregs * sizeof(*row->regs) +
			     at * sizeof(*row->ops));
		if (!row) {
			*err = -ENOMEM;
			return NULL;
		}
		row->start = start;
		row->end = end;
		row->signal = signal;
		row->nops = at;
		row->regs = (struct cs_rule *)(row + 1);
		row->ops = (struct cs_expr_op *)(row->regs + nregs);
	}
	/* What CFI leaves unsaid, and libdw's ABI defaults (x86_64's in
	 * elfutils 0.188 swap rax and rbx), are read the way libunwind and
	 * so perf read them: a register the frame does not mention keeps
	 * its value, and the stack pointer of the caller is the CFA. Only
	 * the return address keeps "undefined": that marks the outermost
	 * frame. */
	for (unsigned int r = 0; r < nregs; r++) {
		struct cs_rule *rule = &row->regs[r];

		if (r == arch->ra || (rule->kind != CS_RULE_UNDEFINED &&
				      rule->kind != CS_RULE_SAME))
			continue;
		if (r == arch->sp)
			*rule = (struct cs_rule){ .kind = CS_RULE_VAL_OFFSET };
		else
			rule->kind = CS_RULE_SAME;
	}
	row->nr_changed = 0;
	for (unsigned int r = 0; r < nregs; r++)
		if (row->regs[r].kind != CS_RULE_SAME)
			row->changed[row->nr_changed++] = (uint8_t)r;
	return row;
}

static struct cs_cfi_row *interpret(struct cs_cfi *c, Dwarf_CFI *cfi,
				    uint64_t pc, bool *found, int *err)
{
	struct cs_cfi_row *row;
	Dwarf_Frame *f;

	*found = false;
	if (!cfi)
		return NULL;
	c->st.interpreted++;
	if (dwarf_cfi_addrframe(cfi, pc, &f))
		return NULL;
	*found = true;
	row = compile(c->arch, f, err);
	free(f);
	return row;
}

/* ---- lookup ---------------------------------------------------------------- */

const struct cs_cfi_row *cs_cfi_find(struct cs_cfi *c,
				     const struct cs_unwind_module *mod,
				     uint64_t pc, enum cs_unwind_stop *why,
				     int *err)
{
	struct pc_ent *e = &c->cache[mix64((uintptr_t)mod->key ^ pc * 0x9e3779b97f4a7c15ULL) >>
				     (64 - PC_CACHE_BITS)];
	struct cs_cfi_row *row = NULL;
	struct module *m;
	bool found;
	size_t at;

	c->st.lookups++;
	*err = 0;
	if (e->key == mod->key && e->pc == pc) {
		*why = (enum cs_unwind_stop)e->why;
		return e->row;
	}
	m = module_get(c, mod);
	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	*why = CS_UNWIND_NO_FILE;
	if (m->no_file)
		goto out;
	at = row_after(m, pc);
	if (at < m->nr_rows && m->rows[at]->start <= pc) {
		row = m->rows[at];
		goto out;
	}
	*why = CS_UNWIND_NO_CFI;
	row = interpret(c, m->eh, pc, &found, err);
	if (!found) {
		if (!m->debug_tried)
			module_open_debug_frame(m, mod);
		row = interpret(c, m->df, pc, &found, err);
	}
	if (*err)
		return NULL;
	if (found && !row)
		*why = CS_UNWIND_BAD_FRAME;	/* CFI we cannot use */
	if (row) {
		row = row_keep(c, m, row, pc, err);
		if (!row)
			return NULL;
	}
out:
	e->key = mod->key;
	e->pc = pc;
	e->row = row;
	e->why = (uint8_t)*why;
	return row;
}

const struct cs_cfi_stats *cs_cfi_stats(const struct cs_cfi *c)
{
	return &c->st;
}

void cs_cfi_free(struct cs_cfi *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap_mods; i++)
		module_free(c->mods[i]);
	free(c->mods);
	free(c->cache);
	free(c);
}
