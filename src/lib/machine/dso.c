/* dso.c - the dso table and where a binary's symbols come from. */
#include "lib/machine/dso.h"
#include "lib/symbols/inlines.h"
#include "lib/symbols/symtab.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define DSO_HASH_BITS 10

struct bid_file {			/* a file under symfs and its build id */
	uint8_t id[20];
	uint8_t size;
	char *path;
};

struct cs_dso_table {
	char *symfs;
	bool local;
	struct cs_dso *hash[1u << DSO_HASH_BITS];
	struct bid_file *index;		/* symfs files by build id, built once */
	size_t nr_index, cap_index;
	bool indexed;
	size_t mismatches;
	const struct cs_dso *first_mismatch;
};

int cs_dso_table_new(const char *symfs, bool local, struct cs_dso_table **out)
{
	struct cs_dso_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->local = local;
	if (symfs && *symfs) {
		size_t n = strlen(symfs);

		t->symfs = strdup(symfs);
		if (!t->symfs) {
			free(t);
			return -ENOMEM;
		}
		while (n > 1 && t->symfs[n - 1] == '/')	/* DIR/ + /path */
			t->symfs[--n] = '\0';
	}
	*out = t;
	return 0;
}

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h >> (32 - DSO_HASH_BITS);
}

struct cs_dso *cs_dso_findnew(struct cs_dso_table *t, const char *name,
			      size_t name_len, const uint8_t *build_id,
			      size_t build_id_size)
{
	uint32_t h = hash_name(name, name_len);
	struct cs_dso *d;

	if (build_id_size > 20)
		build_id_size = 20;
	for (d = t->hash[h]; d; d = d->next)
		if (!strncmp(d->name, name, name_len) && !d->name[name_len] &&
		    d->build_id_size == build_id_size &&
		    (!build_id_size || !memcmp(d->build_id, build_id, build_id_size)))
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strndup(name, name_len);
	if (!d->name) {
		free(d);
		return NULL;
	}
	if (build_id_size)
		memcpy(d->build_id, build_id, build_id_size);
	d->build_id_size = (uint8_t)build_id_size;
	d->next = t->hash[h];
	t->hash[h] = d;
	return d;
}

/* /tmp/perf-PID.map: "START SIZE name" lines (hex), written by JITs */
static bool is_perf_map(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "/tmp/perf-", 10) && n > 14 &&
	       !strcmp(name + n - 4, ".map");
}

static void load_perf_map(struct cs_dso *d)
{
	FILE *f = fopen(d->name, "r");
	char line[4096];

	d->status = CS_DSO_NO_FILE;
	if (!f)
		return;
	if (cs_symtab_new(&d->syms)) {
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		unsigned long long start, size;
		size_t len;

		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		len = strcspn(p, "\n");
		if (len && cs_symtab_add(d->syms, start, size, CS_SYM_GLOBAL, p,
					 len, NULL))
			break;
	}
	fclose(f);
	d->status = CS_DSO_LOADED;
	if (cs_symtab_finish(d->syms) || !cs_symtab_count(d->syms)) {
		cs_symtab_free(d->syms);
		d->syms = NULL;
	}
}

static bool pseudo_name(const char *name)
{
	return name[0] == '[' || !strncmp(name, "//anon", 6) ||
	       !strncmp(name, "/memfd:", 7) || !strncmp(name, "anon_inode:", 11) ||
	       !strncmp(name, "/dev/", 5) || name[0] != '/';
}

/* ---- the symfs build-id index ------------------------------------------ */

static struct cs_dso_table *index_table;	/* nftw has no context pointer */

static int index_one(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	struct cs_dso_table *t = index_table;
	struct cs_elf_info info;
	struct bid_file *b;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 64)
		return 0;
	if (t->nr_index >= 100000)		/* a whole root fs: enough */
		return 1;
	if (cs_elf_info_read(path, &info) || !info.build_id_size)
		return 0;
	if (t->nr_index == t->cap_index) {
		size_t cap = t->cap_index ? t->cap_index * 2 : 64;

		b = realloc(t->index, cap * sizeof(*b));
		if (!b)
			return 1;
		t->index = b;
		t->cap_index = cap;
	}
	b = &t->index[t->nr_index];
	b->path = strdup(path);
	if (!b->path)
		return 1;
	memcpy(b->id, info.build_id, info.build_id_size);
	b->size = info.build_id_size;
	t->nr_index++;
	return 0;
}

static const char *index_find(struct cs_dso_table *t, const struct cs_dso *d)
{
	if (!t->indexed) {
		t->indexed = true;
		index_table = t;
		nftw(t->symfs, index_one, 16, FTW_PHYS);
		index_table = NULL;
	}
	for (size_t i = 0; i < t->nr_index; i++)
		if (t->index[i].size == d->build_id_size &&
		    !memcmp(t->index[i].id, d->build_id, d->build_id_size))
			return t->index[i].path;
	return NULL;
}

/* ---- finding the file --------------------------------------------------- */

enum verdict { NO_FILE, MISMATCH, MATCH };

static enum verdict try_file(const struct cs_dso *d, const char *path,
			     struct cs_elf_info *info)
{
	if (cs_elf_info_read(path, info))
		return NO_FILE;
	/* a file without a build id note cannot be checked: take it */
	if (d->build_id_size && info->build_id_size &&
	    (info->build_id_size != d->build_id_size ||
	     memcmp(info->build_id, d->build_id, d->build_id_size)))
		return MISMATCH;
	return MATCH;
}

/* A path that fits, or false: a cut path must never be opened. */
__attribute__((format(printf, 3, 4)))
static bool fmt_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r >= 0 && (size_t)r < size;
}

/* .build-id/xx/rest in dir: a file, or perf's cache directory with "elf" */
static bool build_id_path(char *buf, size_t size, const char *dir,
			  const struct cs_dso *d, const char *suffix)
{
	char hex[41];

	cs_build_id_hex(d->build_id, d->build_id_size, hex);
	return fmt_path(buf, size, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2,
			suffix);
}

static bool locate(struct cs_dso_table *t, struct cs_dso *d, const char *name,
		   char *found, size_t size)
{
	bool mismatch = false, have_id = d->build_id_size > 0;
	const char *home = getenv("HOME");
	char cand[6][4096];
	int n = 0;

	if (t->symfs) {
		n += fmt_path(cand[n], sizeof(cand[0]), "%s%s", t->symfs, name);
		if (have_id) {
			n += build_id_path(cand[n], sizeof(cand[0]), t->symfs, d, "");
			n += build_id_path(cand[n], sizeof(cand[0]), t->symfs, d, "/elf");
		}
	}
	if (have_id && home && *home) {
		char dir[4096];

		if (fmt_path(dir, sizeof(dir), "%s/.debug", home)) {
			n += build_id_path(cand[n], sizeof(cand[0]), dir, d, "");
			n += build_id_path(cand[n], sizeof(cand[0]), dir, d, "/elf");
		}
	}
	/* outside symfs only when the build id proves it is the same file */
	if (!t->symfs || have_id)
		n += fmt_path(cand[n], sizeof(cand[0]), "%s", name);

	for (int i = 0; i < n; i++) {
		switch (try_file(d, cand[i], &d->info)) {
		case MATCH:
			if (!fmt_path(found, size, "%s", cand[i]))
				break;
			return true;
		case MISMATCH:
			mismatch = true;
			break;
		case NO_FILE:
			break;
		}
	}
	if (t->symfs && have_id) {
		const char *p = index_find(t, d);

		if (p && try_file(d, p, &d->info) == MATCH &&
		    fmt_path(found, size, "%s", p))
			return true;
	}
	memset(&d->info, 0, sizeof(d->info));
	d->status = mismatch ? CS_DSO_BUILD_ID_MISMATCH : CS_DSO_NO_FILE;
	return false;
}

/* The separate debug file of a binary without .symtab, if it matches. */
static bool debug_file(struct cs_dso_table *t, const struct cs_dso *d,
		       const struct cs_elf_info *main, char *buf, size_t size)
{
	struct cs_elf_info info;
	struct cs_dso probe = *d;
	char dir[4096];

	if (!main->build_id_size)
		return false;
	memcpy(probe.build_id, main->build_id, main->build_id_size);
	probe.build_id_size = main->build_id_size;
	for (int i = 0; i < 2; i++) {
		if (i == 0 && !t->symfs)
			continue;
		if (!fmt_path(dir, sizeof(dir), "%s/usr/lib/debug",
			      i == 0 ? t->symfs : "") ||
		    !build_id_path(buf, size, dir, &probe, ".debug"))
			continue;
		if (try_file(&probe, buf, &info) == MATCH && info.has_symtab)
			return true;
	}
	return false;
}

/* This process's vdso, copied to a file for the ELF reader: the kernel
 * maps the same image into every process. */
static bool own_vdso(char *path, size_t size)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	unsigned long start, end;
	char line[256];
	bool ok = false;
	FILE *f;
	int fd;

	if (!base || !(f = fopen("/proc/self/maps", "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base) {
			ok = true;
			break;
		}
	fclose(f);
	if (!ok)
		return false;
	snprintf(path, size, "/tmp/callstitch-vdso.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	ok = write(fd, (const void *)base, end - start) == (ssize_t)(end - start);
	close(fd);
	if (!ok)
		unlink(path);
	return ok;
}

static void load_vdso(struct cs_dso *d)
{
	char path[64];

	d->status = CS_DSO_NO_FILE;
	if (!own_vdso(path, sizeof(path)))
		return;
	if (cs_elf_info_read(path, &d->info) == 0 &&
	    (!d->build_id_size || !d->info.build_id_size ||
	     (d->info.build_id_size == d->build_id_size &&
	      !memcmp(d->info.build_id, d->build_id, d->build_id_size)))) {
		d->status = CS_DSO_LOADED;
		if (!cs_symtab_new(&d->syms) &&
		    (cs_elf_load_symbols(path, d->syms) <= 0 ||
		     cs_symtab_finish(d->syms) || !cs_symtab_count(d->syms))) {
			cs_symtab_free(d->syms);
			d->syms = NULL;
		}
	} else if (d->info.build_id_size) {
		d->status = CS_DSO_BUILD_ID_MISMATCH;
	}
	unlink(path);
}

void cs_dso_load(struct cs_dso_table *t, struct cs_dso *d)
{
	char name[4096], found[4096], dbg[4096];
	const char *from;
	size_t n;

	if (d->status != CS_DSO_NOT_LOADED)
		return;
	if (!strcmp(d->name, "[vdso]") && t->local && !t->symfs) {
		load_vdso(d);
		return;
	}
	if (is_perf_map(d->name)) {
		load_perf_map(d);
		return;
	}
	if (pseudo_name(d->name)) {
		d->status = CS_DSO_NOT_A_FILE;
		return;
	}
	/* the file was replaced after it was mapped; its name still leads */
	if (!fmt_path(name, sizeof(name), "%s", d->name)) {
		d->status = CS_DSO_NO_FILE;
		return;
	}
	n = strlen(name);
	if (n > 10 && !strcmp(name + n - 10, " (deleted)"))
		name[n - 10] = '\0';
	if (!locate(t, d, name, found, sizeof(found))) {
		if (d->status == CS_DSO_BUILD_ID_MISMATCH && !t->mismatches++)
			t->first_mismatch = d;
		return;
	}
	d->status = CS_DSO_LOADED;
	d->found = strdup(found);
	from = found;
	if (!d->info.has_symtab && debug_file(t, d, &d->info, dbg, sizeof(dbg)))
		from = dbg;
	d->dwarf_path = strdup(from);
	if (cs_symtab_new(&d->syms))
		return;
	/* PLT entries have no symbols: name them from the running binary's
	 * relocations, which a debug file does not carry */
	if ((cs_elf_load_symbols(from, d->syms) < 0) |
	    (cs_elf_load_plt(found, d->syms) < 0) ||
	    cs_symtab_finish(d->syms) || !cs_symtab_count(d->syms)) {
		cs_symtab_free(d->syms);
		d->syms = NULL;
	}
}

size_t cs_dso_inlines(struct cs_dso *d, uint64_t vaddr, const char **names,
		      size_t cap)
{
	if (!d->inlines_tried) {
		d->inlines_tried = true;
		if (d->dwarf_path && cs_inlines_open(d->dwarf_path, &d->inlines))
			d->inlines = NULL;
	}
	return d->inlines ? cs_inlines_at(d->inlines, vaddr, names, cap) : 0;
}

size_t cs_dso_table_mismatches(const struct cs_dso_table *t,
			       const struct cs_dso **first)
{
	if (first)
		*first = t->first_mismatch;
	return t->mismatches;
}

void cs_dso_table_free(struct cs_dso_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < (1u << DSO_HASH_BITS); i++) {
		struct cs_dso *d = t->hash[i], *next;

		for (; d; d = next) {
			next = d->next;
			cs_symtab_free(d->syms);
			cs_inlines_free(d->inlines);
			free(d->dwarf_path);
			free(d->found);
			free(d->name);
			free(d);
		}
	}
	for (size_t i = 0; i < t->nr_index; i++)
		free(t->index[i].path);
	free(t->index);
	free(t->symfs);
	free(t);
}
