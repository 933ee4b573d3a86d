/* symtab.c - sorted symbol table, alias choice and end fix-up as perf does. */
#include "lib/symbols/symtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t start, size;
	uint32_t name;			/* offset into the pool */
	uint32_t module;		/* offset into the pool, or UINT32_MAX */
	uint32_t seq;			/* insertion order: keeps the sort stable */
	uint8_t bind;
};

struct cs_symtab {
	struct entry *ent;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	struct cs_sym *syms;		/* the finished table */
	size_t nr_syms;
	bool have_module;		/* modules repeat: store each run once */
	uint32_t last_module_off;
};

int cs_symtab_new(struct cs_symtab **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static int pool_add(struct cs_symtab *t, const char *s, size_t len, uint32_t *off)
{
	if (t->pool_len + len + 1 > t->pool_cap) {
		size_t cap = t->pool_cap ? t->pool_cap * 2 : 65536;
		char *p;

		while (cap < t->pool_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		p = realloc(t->pool, cap);
		if (!p)
			return -ENOMEM;
		t->pool = p;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->pool_len, s, len);
	t->pool[t->pool_len + len] = '\0';
	*off = (uint32_t)t->pool_len;
	t->pool_len += len + 1;
	return 0;
}

int cs_symtab_add(struct cs_symtab *t, uint64_t start, uint64_t size,
		  enum cs_sym_bind bind, const char *name, size_t name_len,
		  const char *module)
{
	struct entry *e;
	int err;

	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;

		e = realloc(t->ent, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		t->ent = e;
		t->cap = cap;
	}
	e = &t->ent[t->nr];
	e->start = start;
	e->size = size;
	e->bind = (uint8_t)bind;
	e->seq = (uint32_t)t->nr;
	e->module = UINT32_MAX;
	err = pool_add(t, name, name_len, &e->name);
	if (err)
		return err;
	if (module) {
		if (!t->have_module ||
		    strcmp(t->pool + t->last_module_off, module)) {
			err = pool_add(t, module, strlen(module), &e->module);
			if (err)
				return err;
			t->last_module_off = e->module;
			t->have_module = true;
		}
		e->module = t->last_module_off;
	}
	t->nr++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choice among symbols at one address: sized over unsized, then
 * not weak over weak, global over local, fewer leading underscores, longer
 * name, the first seen. Returns true if b should replace a. */
static bool better(const struct cs_symtab *t, const struct entry *a,
		   const struct entry *b)
{
	const char *na = t->pool + a->name, *nb = t->pool + b->name;
	size_t ua, ub, la, lb;

	if ((a->size == 0) != (b->size == 0))
		return a->size == 0;
	if ((a->bind == CS_SYM_WEAK) != (b->bind == CS_SYM_WEAK))
		return a->bind == CS_SYM_WEAK;
	if ((a->bind == CS_SYM_GLOBAL) != (b->bind == CS_SYM_GLOBAL))
		return b->bind == CS_SYM_GLOBAL;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ub < ua;
	la = strlen(na);
	lb = strlen(nb);
	return lb > la;
}

static uint64_t page_up(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

int cs_symtab_finish(struct cs_symtab *t)
{
	size_t i, n = 0;

	if (!t->nr)
		return 0;
	/* kallsyms come sorted: check before paying for a sort */
	for (i = 1; i < t->nr && t->ent[i - 1].start <= t->ent[i].start; i++)
		;
	if (i < t->nr)
		qsort(t->ent, t->nr, sizeof(*t->ent), cmp_entry);
	/*
	 * Close unsized symbols first, then pick one per address - perf's
	 * order. So of unsized aliases (kallsyms) all but the last in file
	 * order end where they start, and the last one wins.
	 */
	for (i = 0; i < t->nr; i++) {
		struct entry *e = &t->ent[i];

		if (e->size)
			continue;
		if (i + 1 == t->nr) {
			e->size = page_up(e->start) + 4096 - e->start;
		} else {
			const struct entry *nx = &t->ent[i + 1];

			/* an unsized symbol does not reach into the next
			 * module (or from the kernel into a module) */
			if (nx->module != e->module)
				e->size = page_up(e->start + 4096) - e->start;
			else
				e->size = nx->start - e->start;
		}
	}
	for (i = 0; i < t->nr; i++) {
		if (n && t->ent[n - 1].start == t->ent[i].start) {
			if (better(t, &t->ent[n - 1], &t->ent[i]))
				t->ent[n - 1] = t->ent[i];
			continue;
		}
		t->ent[n++] = t->ent[i];
	}
	t->syms = malloc(n * sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct entry *e = &t->ent[i];
		struct cs_sym *s = &t->syms[i];

		s->start = e->start;
		s->end = e->start + e->size;
		s->name = t->pool + e->name;
		s->module = e->module == UINT32_MAX ? NULL : t->pool + e->module;
	}
	t->nr_syms = n;
	free(t->ent);
	t->ent = NULL;
	t->nr = t->cap = 0;
	t->have_module = false;
	return 0;
}

const struct cs_sym *cs_symtab_find(const struct cs_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_syms;
	const struct cs_sym *s;

	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	return addr < s->end ? s : NULL;
}

size_t cs_symtab_count(const struct cs_symtab *t)
{
	return t->nr_syms;
}

const struct cs_sym *cs_symtab_at(const struct cs_symtab *t, size_t i)
{
	return i < t->nr_syms ? &t->syms[i] : NULL;
}

void cs_symtab_free(struct cs_symtab *t)
{
	if (!t)
		return;
	free(t->ent);
	free(t->pool);
	free(t->syms);
	free(t);
}
