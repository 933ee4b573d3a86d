/* inlines.c - inlined-function chains from DWARF through libdw. */
#include "lib/symbols/inlines.h"
#include "lib/util/grow.h"
#include "lib/util/hash.h"
#include "lib/symbols/symtab.h"
#include "lib/symbols/debugimg.h"
#include "lib/symbols/elfimg.h"
#include "lib/symbols/symcache.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 32

struct cu_range {
	uint64_t lo, hi;		/* [lo, hi) */
	Dwarf_Off cu;			/* offset of the CU's DIE */
	struct cu_index *ci;		/* the CU's calls once indexed */
};

struct inl {				/* one range of one inlined call */
	uint64_t lo, hi;
	uint64_t reach;			/* max hi of this and all before it */
	Dwarf_Off die;
	uint32_t depth;			/* nesting: deeper is more inner */
	const char *name;		/* interned once asked for, or NULL */
};

/* What an address search reads of a range: the probes past the first
 * few are cache misses, so they read these, 16 bytes, not the entries
 * they stand for; the last probe's line holds `end`. */
struct range_key {
	uint64_t lo;
	uint64_t end;			/* hi of a CU range, reach of a call */
};

struct cu_index {			/* a CU's inlined calls, built once */
	Dwarf_Off cu;
	struct inl *v;
	struct range_key *keys;		/* v[i].lo, v[i].reach */
	size_t nr, cap;
	struct cu_index *next;
};


struct memo {
	const char *raw;		/* in the DWARF's string section */
	const char *name;		/* interned; NULL: empty slot */
	bool demangle;
};

/* A CU range as saved with the image (symcache.h). */
struct saved_range {
	uint64_t lo, hi, cu;
};

struct cs_inlines {
	int fd;
	Dwarf *dw;
	Elf *elf;			/* the file, when dw is made of image */
	Elf *img_elf;
	char *image;			/* see debugimg.h; malloc'd, or: */
	size_t image_size;
	struct cs_symcache_image saved;	/* the image saved by an earlier run */
	struct cu_range *ranges;
	struct range_key *range_keys;	/* ranges[i].lo, ranges[i].hi */
	size_t nr_ranges, cap_ranges;
	char **owned;			/* interned strings */
	size_t nr_owned, cap_owned;
	const char **set;		/* owned[], hashed by content */
	size_t set_cap;
	struct memo *memo;		/* DWARF string -> interned name */
	size_t memo_cap, memo_nr;
	struct cu_index *cus[256];	/* by CU offset hash */
	/* an image built here, to be saved (cs_inlines_save()): the key and
	 * the CUs' ranges as saved, copied, so that the save reads nothing
	 * that lookups write */
	char *save_key;
	struct saved_range *save_ranges;
	size_t save_nr;
};

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_range(struct cs_inlines *in, uint64_t lo, uint64_t hi,
		     Dwarf_Off cu)
{
	if (lo >= hi)
		return 0;
	if (cs_grow((void **)&in->ranges, &in->cap_ranges, in->nr_ranges + 1,
		    sizeof(*in->ranges)))
		return -ENOMEM;
	in->ranges[in->nr_ranges++] = (struct cu_range){ lo, hi, cu, NULL };
	return 0;
}

/* .debug_aranges is missing or partial in many builds: index every CU's
 * ranges once instead */
static int index_cus(struct cs_inlines *in)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(in->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t p = 0;

		if (dwarf_offdie(in->dw, off + hsize, &cu)) {
			while ((p = dwarf_ranges(&cu, p, &base, &lo, &hi)) > 0)
				if (add_range(in, lo, hi, off + hsize))
					return -ENOMEM;
		}
		off = next;
	}
	if (in->nr_ranges)	/* none: ranges is NULL, which qsort may not see */
		qsort(in->ranges, in->nr_ranges, sizeof(*in->ranges), cmp_range);
	return 0;
}

/* The CUs' ranges as indexed by the run that saved the image; -ENODATA
 * if it saved none that fit. */
static int load_ranges(struct cs_inlines *in)
{
	const struct saved_range *v = in->saved.index;
	size_t n = in->saved.index_size / sizeof(*v);

	if (!n || in->saved.index_size % sizeof(*v))
		return -ENODATA;
	in->ranges = calloc(n, sizeof(*in->ranges));
	if (!in->ranges)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		in->ranges[i] = (struct cu_range){ v[i].lo, v[i].hi, v[i].cu, NULL };
	in->nr_ranges = in->cap_ranges = n;
	return 0;
}

/* Keeps what saving the image and the CUs' ranges for key takes, for
 * cs_inlines_save(). Best effort: without memory nothing is saved. */
static void save_later(struct cs_inlines *in, const char *key)
{
	struct saved_range *v = calloc(in->nr_ranges, sizeof(*v));
	char *k = strdup(key);

	if (!v || !k) {
		free(v);
		free(k);
		return;
	}
	for (size_t i = 0; i < in->nr_ranges; i++)
		v[i] = (struct saved_range){ in->ranges[i].lo, in->ranges[i].hi,
					     in->ranges[i].cu };
	in->save_key = k;
	in->save_ranges = v;
	in->save_nr = in->nr_ranges;
}

void cs_inlines_save(struct cs_inlines *in)
{
	if (!in || !in->save_key)
		return;
	cs_symcache_image_store(in->save_key, in->image, in->image_size,
				in->save_ranges,
				in->save_nr * sizeof(*in->save_ranges));
	free(in->save_key);
	free(in->save_ranges);
	in->save_key = NULL;
	in->save_ranges = NULL;
}

/* The image of the sections we read, from the cache (symcache.h), else
 * built from the file's compressed sections (debugimg.h). 0, or nonzero
 * when the file is better opened as it is. */
static int open_image(struct cs_inlines *in, const char *key)
{
	int err;

	if (!cs_elf_init())
		return 1;
	if (*key && !cs_symcache_image_open(key, &in->saved)) {
		in->img_elf = elf_memory(in->saved.image, in->saved.size);
		return !in->img_elf;
	}
	if (!(in->elf = elf_begin(in->fd, ELF_C_READ_MMAP, NULL)) ||
	    elf_kind(in->elf) != ELF_K_ELF)
		return 1;
	err = cs_debugimg_build(in->elf, &in->image, &in->image_size);
	if (err)
		return err;
	in->img_elf = elf_memory(in->image, in->image_size);
	return !in->img_elf;
}

/* Lets go of what open_image() opened, whether it got all the way or
 * not: when libdw reads the file itself, and at the end. */
static void close_image(struct cs_inlines *in)
{
	if (in->img_elf)
		elf_end(in->img_elf);
	if (in->elf)
		elf_end(in->elf);
	free(in->image);
	cs_symcache_image_close(&in->saved);
	in->img_elf = in->elf = NULL;
	in->image = NULL;
}

/* From the image (open_image) when the file compresses its sections, else
 * as libdw opens any file. */
static void open_dwarf(struct cs_inlines *in, const char *key)
{
	if (!open_image(in, key) &&
	    (in->dw = dwarf_begin_elf(in->img_elf, DWARF_C_READ, NULL)))
		return;
	close_image(in);
	in->dw = dwarf_begin(in->fd, DWARF_C_READ);
}

int cs_inlines_open(const char *path, struct cs_inlines **out)
{
	int err = cs_inlines_open_unsaved(path, out);

	if (!err)
		cs_inlines_save(*out);
	return err;
}

int cs_inlines_open_unsaved(const char *path, struct cs_inlines **out)
{
	struct cs_inlines *in;
	char key[4600];
	int err;

	*out = NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		err = -errno;
		free(in);
		return err;
	}
	if (cs_symcache_file_key(path, key, sizeof(key)))
		key[0] = '\0';
	open_dwarf(in, key);
	if (!in->dw) {
		cs_inlines_free(in);
		return -ENODATA;
	}
	err = in->saved.map ? load_ranges(in) : -ENODATA;
	if (err == -ENODATA) {
		err = index_cus(in);
		if (!err && in->image && *key && in->nr_ranges)
			save_later(in, key);
	}
	if (!err && !in->nr_ranges)
		err = -ENODATA;
	if (!err && !(in->range_keys = malloc(in->nr_ranges *
					      sizeof(*in->range_keys))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < in->nr_ranges; i++)
		in->range_keys[i] = (struct range_key){ in->ranges[i].lo,
							in->ranges[i].hi };
	if (err) {
		cs_inlines_free(in);
		return err;
	}
	*out = in;
	return 0;
}

static size_t hash_ptr(const char *p, bool demangle)
{
	uint64_t h = ((uintptr_t)p * 2 + demangle) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20);
}

/* the interned copy equal to s, or where it would go */
static const char **set_slot(struct cs_inlines *in, const char *s)
{
	size_t i = (size_t)cs_hash_str(s) & (in->set_cap - 1);

	while (in->set[i] && strcmp(in->set[i], s))
		i = (i + 1) & (in->set_cap - 1);
	return &in->set[i];
}

static struct memo *memo_slot(struct cs_inlines *in, const char *raw,
			      bool demangle)
{
	size_t i = hash_ptr(raw, demangle) & (in->memo_cap - 1);

	while (in->memo[i].name &&
	       (in->memo[i].raw != raw || in->memo[i].demangle != demangle))
		i = (i + 1) & (in->memo_cap - 1);
	return &in->memo[i];
}

/* Keeps both tables at most half full. */
static int grow_tables(struct cs_inlines *in)
{
	if ((in->nr_owned + 1) * 2 > in->set_cap) {
		size_t cap = in->set_cap ? in->set_cap * 2 : 1024;
		const char **set = calloc(cap, sizeof(*set));

		if (!set)
			return -ENOMEM;
		free(in->set);
		in->set = set;
		in->set_cap = cap;
		for (size_t i = 0; i < in->nr_owned; i++)
			*set_slot(in, in->owned[i]) = in->owned[i];
	}
	if ((in->memo_nr + 1) * 2 > in->memo_cap) {
		struct memo *old = in->memo;
		size_t old_cap = in->memo_cap;
		size_t cap = old_cap ? old_cap * 2 : 1024;

		in->memo = calloc(cap, sizeof(*in->memo));
		if (!in->memo) {
			in->memo = old;
			return -ENOMEM;
		}
		in->memo_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].name)
				*memo_slot(in, old[i].raw, old[i].demangle) = old[i];
		free(old);
	}
	return 0;
}

/* One copy of each name; a DWARF string is demangled once. */
static const char *intern(struct cs_inlines *in, const char *s, bool demangle)
{
	struct memo *m;
	const char **slot;
	char *copy;

	if (grow_tables(in))
		return NULL;
	m = memo_slot(in, s, demangle);
	if (m->name)
		return m->name;
	copy = demangle ? cs_demangle(s) : NULL;
	slot = set_slot(in, copy ? copy : s);
	if (*slot) {
		free(copy);
	} else {
		if (in->nr_owned == in->cap_owned) {
			size_t cap = in->cap_owned ? in->cap_owned * 2 : 64;
			char **p = realloc(in->owned, cap * sizeof(*p));

			if (!p) {
				free(copy);
				return NULL;
			}
			in->owned = p;
			in->cap_owned = cap;
		}
		if (!copy)
			copy = strdup(s);
		if (!copy)
			return NULL;
		in->owned[in->nr_owned++] = copy;
		*slot = copy;
	}
	*m = (struct memo){ s, *slot, demangle };
	in->memo_nr++;
	return *slot;
}

/* perf (like addr2line) names an inlined function by its linkage name
 * when it has one: glibc's hidden aliases show as __GI_... */
static const char *die_name(struct cs_inlines *in, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		s = dwarf_formstring(&at);
	if (s)
		return intern(in, s, true);
	if (dwarf_attr_integrate(die, DW_AT_name, &at))
		s = dwarf_formstring(&at);
	return intern(in, s ? s : "??", false);
}

static int cmp_inl(const void *a, const void *b)
{
	const struct inl *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_inl(struct cu_index *ci, uint64_t lo, uint64_t hi,
		   Dwarf_Off die, uint32_t depth)
{
	if (lo >= hi)
		return 0;
	if (cs_grow((void **)&ci->v, &ci->cap, ci->nr + 1, sizeof(*ci->v)))
		return -ENOMEM;
	ci->v[ci->nr++] = (struct inl){ lo, hi, 0, die, depth, NULL };
	return 0;
}

/* Every inlined call with code in the CU: one walk of its DIE tree, where
 * dwarf_getscopes() would walk it again for every address. *last is the
 * offset of the DIE walked last: a tree walked in order only goes
 * forward, and a damaged one whose sibling links go back, or lead two
 * branches to one subtree, is not followed there (it would be walked
 * again and again: a fuzzed file took minutes). */
static int walk(struct cu_index *ci, Dwarf_Die *parent, uint32_t depth,
		bool types, Dwarf_Off *last)
{
	Dwarf_Die die;

	if (depth > 256 || dwarf_child(parent, &die) != 0)
		return 0;
	do {
		Dwarf_Off off = dwarf_dieoffset(&die);
		int tag;

		if (off <= *last)
			return 0;
		*last = off;
		tag = dwarf_tag(&die);

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t p = 0;

			while ((p = dwarf_ranges(&die, p, &base, &lo, &hi)) > 0)
				if (add_inl(ci, lo, hi, dwarf_dieoffset(&die), depth))
					return -ENOMEM;
		}
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
		     (types && (tag == DW_TAG_class_type ||
				tag == DW_TAG_structure_type)) ||
		     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
		    dwarf_haschildren(&die) &&
		    walk(ci, &die, depth + 1, types, last))
			return -ENOMEM;
	} while (dwarf_siblingof(&die, &die) == 0);
	return 0;
}

/* A C struct holds no functions: its members need no walk. (libc's CUs
 * each declare hundreds of structs from their headers.) */
static bool c_language(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case 0x002c:			/* DW_LANG_C17, DWARF 6 */
		return true;
	}
	return false;
}

static struct cu_index *cu_index(struct cs_inlines *in, Dwarf_Off cu)
{
	struct cu_index **head = &in->cus[(cu >> 4) & 255], *ci;
	Dwarf_Die die;
	Dwarf_Off last = cu;		/* the walk's: the CU's DIE first */
	uint64_t reach = 0;

	for (ci = *head; ci; ci = ci->next)
		if (ci->cu == cu)
			return ci;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->cu = cu;
	if (dwarf_offdie(in->dw, cu, &die) &&
	    walk(ci, &die, 0, !c_language(dwarf_srclang(&die)), &last)) {
		free(ci->v);
		free(ci);
		return NULL;
	}
	if (ci->nr) {
		qsort(ci->v, ci->nr, sizeof(*ci->v), cmp_inl);
		ci->keys = malloc(ci->nr * sizeof(*ci->keys));
		if (!ci->keys) {
			free(ci->v);
			free(ci);
			return NULL;
		}
	}
	for (size_t i = 0; i < ci->nr; i++) {
		if (ci->v[i].hi > reach)
			reach = ci->v[i].hi;
		ci->v[i].reach = reach;
		ci->keys[i] = (struct range_key){ ci->v[i].lo, reach };
	}
	ci->next = *head;
	*head = ci;
	return ci;
}

/* How many of keys[0..nr) (sorted by lo) start at or before addr: both
 * lookups, the CU ranges' and a CU's calls', look back from there. */
static inline size_t ranges_past(const struct range_key *keys, size_t nr,
				 uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t lookup(struct cs_inlines *in, uint64_t addr, const char **out)
{
	size_t lo, n = 0;
	struct inl *hit[MAX_DEPTH];
	struct cu_index *ci = NULL;

	lo = ranges_past(in->range_keys, in->nr_ranges, addr);
	/* ranges may nest or overlap a little: look back a few */
	for (size_t k = lo, tries = 0; k-- > 0 && tries < 8; tries++) {
		if (addr < in->range_keys[k].end) {
			/* kept on the range: a hash chain walk per address
			 * was a cache miss per link */
			ci = in->ranges[k].ci;
			if (!ci)
				ci = in->ranges[k].ci = cu_index(in, in->ranges[k].cu);
			break;
		}
	}
	if (!ci || !ci->nr)
		return 0;
	lo = ranges_past(ci->keys, ci->nr, addr);
	/* every call whose range holds addr; `reach` says when none before
	 * can any more */
	for (size_t k = lo; k-- > 0 && ci->keys[k].end > addr;) {
		if (addr < ci->v[k].hi && n < MAX_DEPTH)
			hit[n++] = &ci->v[k];
	}
	/* innermost (deepest) first */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && hit[j]->depth > hit[j - 1]->depth; j--) {
			struct inl *t = hit[j];

			hit[j] = hit[j - 1];
			hit[j - 1] = t;
		}
	/* a call's name is looked up once, not once per address in it */
	for (size_t i = 0; i < n; i++) {
		Dwarf_Die die;

		if (!hit[i]->name && dwarf_offdie(in->dw, hit[i]->die, &die))
			hit[i]->name = die_name(in, &die);
		out[i] = hit[i]->name;
		if (!out[i])
			return i;
	}
	return n;
}

size_t cs_inlines_at(struct cs_inlines *in, uint64_t vaddr, const char **names,
		     size_t cap)
{
	const char *found[MAX_DEPTH];
	size_t n = lookup(in, vaddr, found);

	for (size_t i = 0; i < n && i < cap; i++)
		names[i] = found[i];
	return n;
}

void cs_inlines_free(struct cs_inlines *in)
{
	if (!in)
		return;
	if (in->dw)
		dwarf_end(in->dw);
	close_image(in);
	if (in->fd >= 0)
		close(in->fd);
	for (size_t i = 0; i < 256; i++) {
		struct cu_index *ci = in->cus[i], *next;

		for (; ci; ci = next) {
			next = ci->next;
			free(ci->v);
			free(ci->keys);
			free(ci);
		}
	}
	for (size_t i = 0; i < in->nr_owned; i++)
		free(in->owned[i]);
	free(in->owned);
	free(in->set);
	free(in->memo);
	free(in->ranges);
	free(in->range_keys);
	free(in->save_key);
	free(in->save_ranges);
	free(in);
}
