/* completeness.c - how user stacks end (see completeness.h). */
#include "lib/completeness/completeness.h"
#include "abi/perf_abi.h"
#include "lib/machine/machine.h"
#include "lib/util/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the last frames looked at for a root: a frame-pointer walk often adds
 * a stale frame or two beyond it */
#define ROOT_WINDOW 3
/* the frames whose resolution is asked for at once, ahead */
#define PREFETCH_FRAMES 32

struct stop_ent {
	struct cs_stack_stop stop;
	bool used;
};

/* is_root()'s answers by the name's address: the machine's names are
 * interned, and stacks end in the same few functions */
#define ROOT_MEMO_BITS 8
struct root_memo {
	const char *sym;
	bool root;
};

struct cs_complete {
	struct cs_completeness figures;
	struct root_memo memo[1u << ROOT_MEMO_BITS];
	struct stop_ent *stops;		/* open addressing by (dso, end, kind) */
	size_t cap, nr;
	struct cs_stack_stop *sorted;
};

const char *cs_stack_end_name(enum cs_stack_end e)
{
	static const char *const names[CS_STACK__COUNT] = {
		[CS_STACK_ROOT] = "reached a root",
		[CS_STACK_COPY_TOO_SMALL] = "stack copy too small",
		[CS_STACK_NO_CFI] = "no CFI",
		[CS_STACK_NO_BINARY] = "binary not found",
		[CS_STACK_BAD_CFI] = "CFI leads nowhere",
		[CS_STACK_FP_BROKEN] = "frame-pointer chain broke",
		[CS_STACK_UNKNOWN_CODE] = "code outside known binaries",
		[CS_STACK_TOO_DEEP] = "frame limit",
		[CS_STACK_MISSING] = "user stack missing",
	};

	return (unsigned int)e < CS_STACK__COUNT ? names[e] : "?";
}

const char *cs_stack_kind_name(enum cs_stack_kind k)
{
	static const char *const names[CS_STACK_KIND__COUNT] = {
		[CS_STACK_KIND_FP] = "frame pointers",
		[CS_STACK_KIND_DEFERRED] = "deferred (frame pointers)",
		[CS_STACK_KIND_DWARF] = "dwarf",
	};

	return (unsigned int)k < CS_STACK_KIND__COUNT ? names[k] : "?";
}

int cs_complete_new(struct cs_complete **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void cs_complete_free(struct cs_complete *c)
{
	if (!c)
		return;
	free(c->stops);
	free(c->sorted);
	free(c);
}

static size_t slot_of(const struct stop_ent *tab, size_t cap, const char *dso,
		      enum cs_stack_end end, enum cs_stack_kind kind)
{
	/* dso names are the machine's interned strings: the pointer is
	 * the identity */
	size_t i = (size_t)(((uintptr_t)dso >> 3) * 0x9e3779b97f4a7c15ULL +
			    end * 31 + kind) & (cap - 1);

	for (; tab[i].used; i = (i + 1) & (cap - 1))
		if (tab[i].stop.dso == dso && tab[i].stop.end == end &&
		    tab[i].stop.kind == kind)
			break;
	return i;
}

static int count_stop(struct cs_complete *c, const char *dso,
		      enum cs_stack_end end, enum cs_stack_kind kind)
{
	struct stop_ent *e;

	if ((c->nr + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct stop_ent *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (size_t i = 0; i < c->cap; i++)
			if (c->stops[i].used)
				tab[slot_of(tab, cap, c->stops[i].stop.dso,
					    c->stops[i].stop.end,
					    c->stops[i].stop.kind)] = c->stops[i];
		free(c->stops);
		c->stops = tab;
		c->cap = cap;
	}
	e = &c->stops[slot_of(c->stops, c->cap, dso, end, kind)];
	if (!e->used) {
		*e = (struct stop_ent){ .stop = { dso, end, kind, 0 }, .used = true };
		c->nr++;
	}
	e->stop.stacks++;
	return 0;
}

static bool is_root_name(const char *sym)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl",
		"__libc_start_call_main", "clone", "__clone", "clone3",
		"__clone3", "__clone_internal", "start_thread", "thread_start",
	};

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(sym, roots[i]))
			return true;
	return false;
}

static bool is_root(struct cs_complete *c, const char *sym)
{
	struct root_memo *m;

	if (!sym)
		return false;
	m = &c->memo[((uintptr_t)sym >> 3 ^ (uintptr_t)sym >> 11) &
		     ((1u << ROOT_MEMO_BITS) - 1)];
	if (m->sym != sym) {
		m->sym = sym;
		m->root = is_root_name(sym);
	}
	return m->root;
}

/* The user part of a merged chain: after its user context marker. */
static const uint64_t *user_part(const struct cs_stitched *st, size_t *nr)
{
	for (uint64_t i = 0; i < st->chain_nr; i++)
		if (st->chain[i] == CS_CONTEXT_USER ||
		    st->chain[i] == CS_CONTEXT_USER_DEFERRED) {
			*nr = st->chain_nr - i - 1;
			return st->chain + i + 1;
		}
	*nr = 0;
	return NULL;
}

static enum cs_stack_end end_of_unwind(enum cs_unwind_stop why)
{
	switch (why) {
	case CS_UNWIND_ROOT:		return CS_STACK_ROOT;
	case CS_UNWIND_STACK_END:	return CS_STACK_COPY_TOO_SMALL;
	case CS_UNWIND_NO_CFI:		return CS_STACK_NO_CFI;
	case CS_UNWIND_NO_FILE:		return CS_STACK_NO_BINARY;
	case CS_UNWIND_DEPTH:		return CS_STACK_TOO_DEEP;
	case CS_UNWIND_NO_MAP:		return CS_STACK_UNKNOWN_CODE;
	default:			return CS_STACK_BAD_CFI;
	}
}

int cs_complete_add(struct cs_complete *c, struct cs_machine *m,
		    const struct cs_stitched *st,
		    const struct cs_unwind_result *unwound)
{
	const struct cs_sample *smp = &st->event->sample;
	struct cs_completeness *f = &c->figures;
	enum cs_stack_kind kind = CS_STACK_KIND_FP;
	enum cs_stack_end end;
	const char *dso = NULL, *last[ROOT_WINDOW];
	const uint64_t *ips;
	size_t nr, good;

	if (st->state == CS_CHAIN_UNMERGED)
		return 0;			/* the raw view: nothing joined */
	if (st->state == CS_CHAIN_KERNEL_ONLY) {
		kind = CS_STACK_KIND_DEFERRED;
		end = CS_STACK_MISSING;
		goto count;
	}
	if (st->state == CS_CHAIN_STITCHED || st->state == CS_CHAIN_STITCHED_LATE)
		kind = CS_STACK_KIND_DEFERRED;
	if (unwound)
		kind = CS_STACK_KIND_DWARF;
	ips = user_part(st, &nr);
	if (!nr) {
		/* a sample in user mode without a chain has one frame */
		if (!unwound && (smp->misc & CS_MISC_CPUMODE_MASK) == CS_MISC_USER &&
		    !st->chain_nr)
			return 0;		/* no call graph recorded */
		f->no_user++;
		return 0;
	}
	for (size_t i = 0; i < nr && i < PREFETCH_FRAMES; i++)
		cs_machine_prefetch(m, smp->pid, CS_MISC_USER, ips[i]);
	/* the frames that resolve, innermost first: past them is garbage;
	 * the names of the last ROOT_WINDOW are kept */
	for (good = 0; good < nr; good++) {
		struct cs_location loc;

		cs_machine_resolve(m, smp->pid, CS_MISC_USER, ips[good], &loc);
		if (!loc.sym)
			break;
		dso = loc.dso_name;
		last[good % ROOT_WINDOW] = loc.sym;
	}
	for (size_t i = good; i-- > 0 && i + ROOT_WINDOW >= good;) {
		if (is_root(c, last[i % ROOT_WINDOW])) {
			end = CS_STACK_ROOT;
			goto count;
		}
	}
	if (unwound) {
		end = end_of_unwind(unwound->stop);
		if (unwound->module)
			dso = unwound->module;
	} else if (!good) {
		end = CS_STACK_UNKNOWN_CODE;
	} else {
		end = CS_STACK_FP_BROKEN;
	}
	if (end == CS_STACK_UNKNOWN_CODE) {
		struct cs_location loc;

		/* the binary it ran into, if any: [unknown] in outputs */
		cs_machine_resolve(m, smp->pid, CS_MISC_USER,
				   ips[good < nr ? good : nr - 1], &loc);
		dso = loc.dso_name;
	}
count:
	f->user_stacks++;
	f->by_kind[kind]++;
	f->by_end[end]++;
	if (end == CS_STACK_ROOT || end == CS_STACK_MISSING)
		return 0;
	return count_stop(c, dso, end, kind);
}

int cs_stack_stop_order(const void *a, const void *b)
{
	const struct cs_stack_stop *x = a, *y = b;

	if (x->stacks != y->stacks)
		return x->stacks < y->stacks ? 1 : -1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->dso ? x->dso : "", y->dso ? y->dso : "");
}

const struct cs_completeness *cs_complete_get(struct cs_complete *c)
{
	struct cs_stack_stop *s = realloc(c->sorted, (c->nr ? c->nr : 1) * sizeof(*s));
	size_t n = 0;

	if (!s)
		return &c->figures;		/* without the list */
	c->sorted = s;
	for (size_t i = 0; i < c->cap; i++)
		if (c->stops[i].used)
			s[n++] = c->stops[i].stop;
	qsort(s, n, sizeof(*s), cs_stack_stop_order);
	c->figures.stops = s;
	c->figures.nr_stops = n;
	return &c->figures;
}
