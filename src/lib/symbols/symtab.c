/* symtab.c - sorted symbol table, alias choice and end fix-up as perf does. */
#include "lib/symbols/symtab.h"
#include "lib/util/pool.h"
#include "lib/util/write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct entry {
	uint64_t start, size;
	uint32_t name;			/* offset into the pool */
	uint32_t module;		/* offset into the pool, or UINT32_MAX */
	uint32_t seq;			/* insertion order: keeps the sort stable */
	uint8_t bind;
	uint8_t mangled;		/* demangle on first find */
};

/* A mangled name as it is shown, by its symbol's index: mangled names
 * are few among a table's lookups, so they are kept in a hash table, not
 * in a slot for each symbol of the table. */
struct shown {
	uint64_t i;			/* UINT64_MAX: empty */
	const char *dem;		/* NULL: shown as it is; in dem_pool */
	size_t dem_len;
};

/* a finished symbol but its start, which is searched in an array of its own */
struct fin_ent {
	uint64_t end;			/* exclusive */
	uint32_t name, module;		/* pool offsets; module UINT32_MAX: none */
};

/* An address range in which every lookup finds symbol i: from its start
 * (lo) to its end or the next symbol's start, and the name shown. */
struct recent {
	uint64_t lo, hi;		/* [lo, hi); empty: lo == hi */
	const char *name;
	uint32_t i, name_len;		/* tables of more symbols keep none */
};

/* Each string of the pool is its length (LEN_BYTES, native order), its
 * bytes and a NUL; its offset is that of its bytes. The length comes with
 * the name's first bytes, in the line they are in: an output that copies
 * a name need not measure it first (script did, 3% of a run). */
#define LEN_BYTES 2
#define LEN_MEASURE 0xffff		/* a longer name's: measured instead */

#define RECENT_BITS 9			/* recent answers, by 4 KiB of address: */
#define RECENT_BITS_MIN 4		/* fewer for a small table */
#define BUCKETS_FROM 1024		/* symbols: smaller tables have none */
#define BUCKET_SYMS 8			/* symbols a bucket holds, on average */

/* Where the search starts: the table's address range cut into buckets of
 * 1 << shift bytes, and for each the first symbol that starts in it or
 * after it. A lookup searches its bucket's few symbols instead of the
 * whole table, whose last probes were cache misses each. */
struct buckets {
	uint64_t base;			/* the first symbol's start */
	unsigned int shift;
	size_t nr;
	uint32_t *first;		/* nr + 1; first[nr]: nr_syms */
};

struct cs_symtab {
	struct entry *ent;		/* while filling */
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	/* the finished table: in memory, or a saved file's mapping */
	uint64_t *starts;
	struct fin_ent *ends;
	const char *pool_view;		/* pool, or the mapping's */
	uint8_t *mangled;		/* per symbol; NULL when mapped */
	const uint8_t *saved_mangled;	/* ... the mapping's */
	/* symbols as cs_symtab_find() returns them, made on first use: the
	 * lookups of cs_symtab_lookup() touch them only to demangle */
	struct cs_sym *syms;
	size_t nr_syms;
	void *map;
	size_t map_len;
	bool have_module;		/* modules repeat: store each run once */
	uint32_t last_module_off;
	struct shown *shown;		/* cap_shown; names demangled */
	size_t nr_shown, cap_shown;
	struct cs_pool dem_pool;	/* the demangled names: thousands a
					 * run, ended together */
	struct recent *recent;		/* 1 << recent_bits; made by find */
	unsigned int recent_bits;
	struct buckets buckets;		/* made by find; nr 0: none */
	bool buckets_tried;
};

int cs_symtab_new(struct cs_symtab **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int cs_symtab_reserve(struct cs_symtab *t, size_t nr, size_t bytes)
{
	if (t->nr + nr > t->cap) {
		struct entry *e = realloc(t->ent, (t->nr + nr) * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->ent = e;
		t->cap = t->nr + nr;
	}
	bytes += nr * LEN_BYTES;
	if (t->pool_len + bytes > t->pool_cap) {
		char *p;

		/* pool offsets are 32 bits: a bigger hint is not followed */
		if (t->pool_len + bytes > UINT32_MAX)
			return 0;
		p = realloc(t->pool, t->pool_len + bytes);
		if (!p)
			return -ENOMEM;
		t->pool = p;
		t->pool_cap = t->pool_len + bytes;
	}
	return 0;
}

static int pool_add(struct cs_symtab *t, const char *s, size_t len, uint32_t *off)
{
	uint16_t stored = len < LEN_MEASURE ? (uint16_t)len : LEN_MEASURE;
	size_t need = t->pool_len + LEN_BYTES + len + 1;

	if (need > t->pool_cap) {
		size_t cap = t->pool_cap ? t->pool_cap * 2 : 65536;
		char *p;

		while (cap < need)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		p = realloc(t->pool, cap);
		if (!p)
			return -ENOMEM;
		t->pool = p;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->pool_len, &stored, LEN_BYTES);
	memcpy(t->pool + t->pool_len + LEN_BYTES, s, len);
	t->pool[need - 1] = '\0';
	*off = (uint32_t)(t->pool_len + LEN_BYTES);
	t->pool_len = need;
	return 0;
}

/* The length of the finished pool's string at off. A saved table's
 * lengths are checked here, where one is read, not when the table is
 * opened (most names never are): one that would run past the pool, that
 * does not end at a NUL, or too long to be kept, is measured, up to the
 * pool's last NUL at worst. (A NUL inside the length is not looked for:
 * that would measure every name, which the lengths are there to spare.) */
static size_t pool_strlen(const struct cs_symtab *t, uint32_t off)
{
	uint16_t len;

	memcpy(&len, t->pool_view + off - LEN_BYTES, LEN_BYTES);
	if (len == LEN_MEASURE || len >= t->pool_len - off ||
	    t->pool_view[off + len] != '\0')
		return strlen(t->pool_view + off);
	return len;
}

static int add(struct cs_symtab *t, uint64_t start, uint64_t size,
	       enum cs_sym_bind bind, const char *name, size_t name_len,
	       const char *module, bool mangled)
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
	/* only C++ (_Z) and Rust v0 (_R) names can be mangled */
	e->mangled = mangled && name_len > 2 && name[0] == '_' &&
		     (name[1] == 'Z' || name[1] == 'R');
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

int cs_symtab_add(struct cs_symtab *t, uint64_t start, uint64_t size,
		  enum cs_sym_bind bind, const char *name, size_t name_len,
		  const char *module)
{
	return add(t, start, size, bind, name, name_len, module, false);
}

int cs_symtab_add_mangled(struct cs_symtab *t, uint64_t start, uint64_t size,
			  enum cs_sym_bind bind, const char *name,
			  size_t name_len)
{
	return add(t, start, size, bind, name, name_len, NULL, true);
}

/* Aliases are chosen by their shown (demangled) names: demangle the few
 * symbols that share an address with another now. */
static int demangle_aliases(struct cs_symtab *t)
{
	for (size_t i = 0; i < t->nr; i++) {
		struct entry *e = &t->ent[i];
		char *dem;
		int err;

		if (!e->mangled ||
		    !((i && t->ent[i - 1].start == e->start) ||
		      (i + 1 < t->nr && t->ent[i + 1].start == e->start)))
			continue;
		e->mangled = 0;
		dem = cs_demangle(t->pool + e->name);
		if (!dem)
			continue;
		err = pool_add(t, dem, strlen(dem), &e->name);
		free(dem);
		if (err)
			return err;
	}
	return 0;
}

/* A symbol's start and its entry's index, as the sort moves them */
struct sort_pair {
	uint64_t start;
	uint64_t index;
};

/* v[0, n) by start, stably, in radix passes of a byte each from the low
 * one; tmp has room for n. A pass whose byte is the same in every start
 * moves nothing and is skipped: a binary's addresses share their high
 * bytes, so most tables take three or four passes. Returns where the
 * sorted pairs are: v or tmp. */
static struct sort_pair *radix_sort(struct sort_pair *v, struct sort_pair *tmp,
				    size_t n)
{
	size_t count[8][256] = { { 0 } };

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			count[b][(v[i].start >> (8 * b)) & 255]++;
	for (int b = 0; b < 8; b++) {
		size_t *c = count[b], off = 0;
		struct sort_pair *swap;

		if (c[(v[0].start >> (8 * b)) & 255] == n)
			continue;
		for (int d = 0; d < 256; d++) {
			size_t k = c[d];

			c[d] = off;
			off += k;
		}
		for (size_t i = 0; i < n; i++)
			tmp[c[(v[i].start >> (8 * b)) & 255]++] = v[i];
		swap = v;
		v = tmp;
		tmp = swap;
	}
	return v;
}

/* The entries by (start, insertion order). A binary's symbol table comes
 * in no order: sorting its 40-byte entries with qsort() took 8% of a
 * first run on a real profile, in calls to a comparison and copies.
 * Sorted as (start, index) pairs by radix, which is stable (equal starts
 * keep the order they were added in), and then moved once, they cost a
 * fraction of that. Returns 0 or -ENOMEM (t unchanged). */
static int sort_entries(struct cs_symtab *t)
{
	struct sort_pair *pairs = malloc(t->nr * 2 * sizeof(*pairs)), *by_start;
	struct entry *sorted = malloc(t->nr * sizeof(*sorted));

	if (!pairs || !sorted) {
		free(pairs);
		free(sorted);
		return -ENOMEM;
	}
	/* seq is the entry's index: entries are only appended before this */
	for (size_t i = 0; i < t->nr; i++)
		pairs[i] = (struct sort_pair){ t->ent[i].start, t->ent[i].seq };
	by_start = radix_sort(pairs, pairs + t->nr, t->nr);
	for (size_t i = 0; i < t->nr; i++)
		sorted[i] = t->ent[by_start[i].index];
	free(pairs);
	free(t->ent);
	t->ent = sorted;
	t->cap = t->nr;
	return 0;
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
	if (i < t->nr && sort_entries(t))
		return -ENOMEM;
	if (demangle_aliases(t))
		return -ENOMEM;
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
	t->starts = malloc(n * sizeof(*t->starts));
	t->ends = malloc(n * sizeof(*t->ends));
	t->mangled = calloc(n, 1);
	if (!t->starts || !t->ends || !t->mangled)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct entry *e = &t->ent[i];
		uint64_t end = e->start + e->size;

		if (end < e->start)	/* a size read from a file may wrap */
			end = UINT64_MAX;
		t->starts[i] = e->start;
		t->ends[i] = (struct fin_ent){ end, e->name, e->module };
		t->mangled[i] = e->mangled;
	}
	t->nr_syms = n;
	t->pool_view = t->pool;
	free(t->ent);
	t->ent = NULL;
	t->nr = t->cap = 0;
	t->have_module = false;
	return 0;
}

static struct shown *shown_slot(struct shown *tab, size_t cap, uint64_t i)
{
	size_t k = (size_t)((i * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);

	while (tab[k].i != UINT64_MAX && tab[k].i != i)
		k = (k + 1) & (cap - 1);
	return &tab[k];
}

/* The name shown for symbol i, whose name is at off in the pool, and its
 * length in *len: demangled (once) when it is mangled; the mangled one if
 * libiberty cannot demangle it or memory runs out. */
static const char *shown_name(struct cs_symtab *t, size_t i, uint32_t off,
			      size_t *len)
{
	const char *name = t->pool_view + off;
	struct shown *e = t->cap_shown ? shown_slot(t->shown, t->cap_shown, i) :
			  NULL;

	if (e && e->i == i && e->dem) {
		*len = e->dem_len;
		return e->dem;
	}
	*len = pool_strlen(t, off);
	if (e && e->i == i)
		return name;
	if (!((t->mangled && t->mangled[i]) ||
	      (t->saved_mangled && t->saved_mangled[i])))
		return name;
	if ((t->nr_shown + 1) * 2 > t->cap_shown) {
		size_t cap = t->cap_shown ? t->cap_shown * 2 : 64;
		struct shown *tab = malloc(cap * sizeof(*tab));

		if (!tab)
			return name;
		for (size_t k = 0; k < cap; k++)
			tab[k].i = UINT64_MAX;
		for (size_t k = 0; k < t->cap_shown; k++)
			if (t->shown[k].i != UINT64_MAX)
				*shown_slot(tab, cap, t->shown[k].i) = t->shown[k];
		free(t->shown);
		t->shown = tab;
		t->cap_shown = cap;
	}
	e = shown_slot(t->shown, t->cap_shown, i);
	e->i = i;
	e->dem = cs_demangle_into(name, &t->dem_pool, &e->dem_len);
	t->nr_shown++;
	if (!e->dem)
		return name;
	*len = e->dem_len;
	return e->dem;
}

/* The name shown for symbol i, and its length in *len. Only a name that
 * starts so can be mangled: for the others the flag (another cache line)
 * is not read. */
static const char *name_at(struct cs_symtab *t, size_t i, size_t *len)
{
	uint32_t off = t->ends[i].name;
	const char *name = t->pool_view + off;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R')) {
		*len = pool_strlen(t, off);
		return name;
	}
	return shown_name(t, i, off, len);
}

/* Symbol i, made on first use; NULL without memory. */
static const struct cs_sym *sym_at(struct cs_symtab *t, size_t i)
{
	struct cs_sym *s;
	const struct fin_ent *f = &t->ends[i];

	/* zero pages until a lookup fills its symbol: most are never read */
	if (!t->syms && !(t->syms = calloc(t->nr_syms, sizeof(*t->syms))))
		return NULL;
	s = &t->syms[i];
	if (s->name)
		return s;
	s->start = t->starts[i];
	s->end = f->end;
	s->module = f->module == UINT32_MAX ? NULL : t->pool_view + f->module;
	s->name = name_at(t, i, &s->name_len);
	return s;
}

/* The search's last probes are cache misses in a big table, and a
 * profile's new addresses are often in a function it has just asked
 * about: the answers are kept by the address's 4 KiB block. */
static struct recent *recent_slot(struct cs_symtab *t, uint64_t addr)
{
	if (!t->recent) {
		/* about a slot for every four symbols, at most RECENT_BITS */
		t->recent_bits = RECENT_BITS_MIN;
		while (t->recent_bits < RECENT_BITS &&
		       (size_t)4 << t->recent_bits < t->nr_syms)
			t->recent_bits++;
		t->recent = calloc((size_t)1 << t->recent_bits, sizeof(*t->recent));
		if (!t->recent)
			return NULL;
	}
	return &t->recent[((addr >> 12) * 0x9e3779b97f4a7c15ULL) >>
			  (64 - t->recent_bits)];
}

/* The buckets of a big table, made on its first lookup (one pass over
 * its starts). Without memory, the search goes without them. */
static void buckets_make(struct cs_symtab *t)
{
	struct buckets *b = &t->buckets;
	uint64_t span;
	size_t i = 0;

	t->buckets_tried = true;
	if (t->nr_syms < BUCKETS_FROM || t->nr_syms > UINT32_MAX)
		return;
	span = t->starts[t->nr_syms - 1] - t->starts[0];
	b->shift = 4;
	while (b->shift < 63 && (span >> b->shift) >= t->nr_syms / BUCKET_SYMS)
		b->shift++;
	b->base = t->starts[0];
	b->nr = (size_t)(span >> b->shift) + 1;
	b->first = malloc((b->nr + 1) * sizeof(*b->first));
	if (!b->first) {
		b->nr = 0;
		return;
	}
	for (size_t k = 0; k < b->nr; k++) {
		uint64_t from = b->base + ((uint64_t)k << b->shift);

		while (t->starts[i] < from)
			i++;
		b->first[k] = (uint32_t)i;
	}
	b->first[b->nr] = (uint32_t)t->nr_syms;
}

/* The index of the symbol containing addr, or SIZE_MAX; *name its name
 * as shown, *len that name's length. */
static size_t find_index(struct cs_symtab *t, uint64_t addr, const char **name,
			 size_t *len)
{
	struct recent *r = recent_slot(t, addr);
	const struct buckets *b = &t->buckets;
	size_t lo = 0, hi = t->nr_syms, i;

	/* most lookups miss the recent answer, whose slot is a cache miss
	 * itself: the bucket they search next is asked for before it */
	if (b->nr && addr >= b->base) {
		uint64_t k = (addr - b->base) >> b->shift;

		__builtin_prefetch(&b->first[k < b->nr ? k : b->nr - 1]);
	}
	if (r && addr - r->lo < r->hi - r->lo) {
		*name = r->name;
		*len = r->name_len;
		return r->i;
	}
	if (!t->buckets_tried)
		buckets_make(t);
	if (b->nr) {
		uint64_t k;

		if (addr < b->base)
			return SIZE_MAX;
		k = (addr - b->base) >> b->shift;
		if (k >= b->nr)
			k = b->nr - 1;
		/* every symbol before the bucket's first starts below addr */
		lo = b->first[k];
		hi = b->first[k + 1];
		/* the answer's end is one of ends[lo - 1, hi - 1]: asked for
		 * now, its cache misses come while the starts are searched,
		 * not after (a bucket's are two or three lines) */
		if (lo < hi) {
			__builtin_prefetch(&t->ends[lo ? lo - 1 : 0]);
			__builtin_prefetch(&t->ends[lo + (hi - lo) / 2]);
			__builtin_prefetch(&t->ends[hi - 1]);
		}
	}
	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= t->ends[lo - 1].end)
		return SIZE_MAX;
	i = lo - 1;
	*name = name_at(t, i, len);
	if (r && i <= UINT32_MAX && *len <= UINT32_MAX) {
		r->lo = t->starts[i];
		r->hi = i + 1 < t->nr_syms && t->starts[i + 1] < t->ends[i].end ?
			t->starts[i + 1] : t->ends[i].end;
		r->name = *name;
		r->i = (uint32_t)i;
		r->name_len = (uint32_t)*len;
	}
	return i;
}

const struct cs_sym *cs_symtab_find(struct cs_symtab *t, uint64_t addr)
{
	const char *name;
	size_t len, i = find_index(t, addr, &name, &len);

	return i == SIZE_MAX ? NULL : sym_at(t, i);
}

bool cs_symtab_lookup(struct cs_symtab *t, uint64_t addr, struct cs_sym *out)
{
	const char *name;
	size_t len, i = find_index(t, addr, &name, &len);
	const struct fin_ent *f;

	if (i == SIZE_MAX)
		return false;
	f = &t->ends[i];
	out->start = t->starts[i];
	out->end = f->end;
	out->name = name;
	out->name_len = len;
	out->module = f->module == UINT32_MAX ? NULL : t->pool_view + f->module;
	return true;
}

size_t cs_symtab_count(const struct cs_symtab *t)
{
	return t->nr_syms;
}

const struct cs_sym *cs_symtab_at(struct cs_symtab *t, size_t i)
{
	return i < t->nr_syms ? sym_at(t, i) : NULL;
}

/* ---- saved tables ------------------------------------------------------- */

/* A finished table as a file: this header, the key (padded to 8 bytes),
 * starts[nr], ends[nr], mangled[nr] (padded to 8), the pool (its strings
 * with their lengths). Native byte order: it is a cache of this machine.
 * The magic's digit is the format's version: a file of another version
 * is not read, and the table is made and saved again. */
struct saved_head {
	char magic[8];
	uint64_t key_len, nr, pool_len;
};

static const char saved_magic[8] = "CSSYMT2";

#define HUGE_TABLE ((size_t)2 << 20)	/* a saved table's size, from which it
					 * is advised onto huge pages */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int cs_symtab_save(const struct cs_symtab *t, int fd, const char *key)
{
	struct saved_head h = { .key_len = strlen(key), .nr = t->nr_syms,
				.pool_len = t->pool_len };
	static const char zero[8];
	const uint8_t *m = t->mangled ? t->mangled : t->saved_mangled;
	uint8_t *none = m ? NULL : calloc(t->nr_syms ? t->nr_syms : 1, 1);
	int err;

	if (!m && !none)
		return -ENOMEM;
	memcpy(h.magic, saved_magic, sizeof(h.magic));
	/* in one call: the file's page cache then comes in folios of up to
	 * 2 MiB, which the mapping of a later open maps with huge pages - a
	 * lookup's few reads of a big table are TLB misses each otherwise */
	err = cs_writev_all(fd, (struct iovec[]){
		{ &h, sizeof(h) },
		{ (void *)(uintptr_t)key, h.key_len },
		{ (void *)(uintptr_t)zero, pad8(h.key_len) - h.key_len },
		{ t->starts, t->nr_syms * sizeof(*t->starts) },
		{ t->ends, t->nr_syms * sizeof(*t->ends) },
		{ (void *)(uintptr_t)(m ? m : none), t->nr_syms },
		{ (void *)(uintptr_t)zero, pad8(t->nr_syms) - t->nr_syms },
		{ (void *)(uintptr_t)t->pool_view, t->pool_len },
	}, 8);
	free(none);
	return err;
}

/* Checks a saved table's bytes (every offset inside, names terminated) and
 * points t at them. */
static int saved_view(struct cs_symtab *t, const char *buf, size_t len,
		      const char *key)
{
	struct saved_head h;
	size_t off, per, key_len = strlen(key);

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, saved_magic, sizeof(h.magic)))
		return -EBADMSG;
	if (h.key_len != key_len || h.key_len > len - sizeof(h) ||
	    memcmp(buf + sizeof(h), key, key_len))
		return -ESTALE;
	off = sizeof(h) + pad8(key_len);
	per = sizeof(*t->starts) + sizeof(*t->ends) + 1;
	if (off > len || h.nr > (len - off) / per ||
	    h.pool_len != len - off - h.nr * (per - 1) - pad8(h.nr) ||
	    (h.nr && (!h.pool_len || buf[len - 1] != '\0')) ||
	    h.pool_len > UINT32_MAX)
		return -EBADMSG;
	t->starts = (uint64_t *)(uintptr_t)(buf + off);
	off += h.nr * sizeof(*t->starts);
	t->ends = (struct fin_ent *)(uintptr_t)(buf + off);
	off += h.nr * sizeof(*t->ends);
	t->saved_mangled = (const uint8_t *)buf + off;
	off += pad8(h.nr);
	t->pool_view = buf + off;
	t->pool_len = h.pool_len;
	for (size_t i = 0; i < h.nr; i++) {
		const struct fin_ent *f = &t->ends[i];

		/* a string's length is before it (pool_strlen()) */
		if (f->name >= h.pool_len || f->name < LEN_BYTES ||
		    (f->module != UINT32_MAX &&
		     (f->module >= h.pool_len || f->module < LEN_BYTES)) ||
		    f->end < t->starts[i] || (i && t->starts[i] <= t->starts[i - 1]))
			return -EBADMSG;
	}
	t->nr_syms = h.nr;
	return 0;
}

int cs_symtab_open_saved(const char *path, const char *key,
			 struct cs_symtab **out)
{
	struct cs_symtab *t;
	struct stat st;
	void *map;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -EBADMSG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	/* A big table's lookups read a few lines each, far apart: on 4 KiB
	 * pages each is a TLB miss too. The file was written in one call
	 * (cs_symtab_save()), so its page cache is in large folios, and a
	 * filesystem that aligns such mappings (ext4, xfs: to 2 MiB) maps
	 * them with huge pages; the advice asks for the same folios when
	 * the file is read again after the page cache dropped it. */
	if ((size_t)st.st_size >= HUGE_TABLE)
		madvise(map, (size_t)st.st_size, MADV_HUGEPAGE);
	err = cs_symtab_new(&t);
	if (!err) {
		t->map = map;
		t->map_len = (size_t)st.st_size;
		err = saved_view(t, map, t->map_len, key);
	}
	if (err) {
		if (t)
			cs_symtab_free(t);
		else
			munmap(map, (size_t)st.st_size);
		return err;
	}
	*out = t;
	return 0;
}

void cs_symtab_free(struct cs_symtab *t)
{
	if (!t)
		return;
	free(t->ent);
	free(t->pool);
	free(t->syms);
	if (t->map) {
		munmap(t->map, t->map_len);
	} else {
		free(t->starts);
		free(t->ends);
	}
	free(t->mangled);
	free(t->shown);
	cs_pool_free(&t->dem_pool);
	free(t->recent);
	free(t->buckets.first);
	free(t);
}
