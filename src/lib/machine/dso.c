/* dso.c - the dso table and where a binary's symbols come from. */
#include "lib/machine/dso.h"
#include "lib/machine/debuginfod.h"
#include "lib/symbols/inlines.h"
#include "lib/symbols/symcache.h"
#include "lib/symbols/symtab.h"
#include "lib/util/open_regular.h"
#include "lib/util/tasks.h"
#include "lib/util/write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DSO_HASH_BITS 10
#define RECENT_BITS 6

struct bid_file {			/* a file under symfs and its build id */
	uint8_t id[20];
	uint8_t size;
	char *path;
};

struct cs_dso_table {
	char *symfs;
	char *archive;			/* an unpacked archive's directory */
	char *sysroot;
	char *jit_map;			/* a directory of perf-PID.map, or one */
	bool jit_map_is_dir;
	char *cache_dir;		/* ~/.debug, or NULL without $HOME */
	bool local;
	bool debuginfod_on;
	struct cs_fetch_hooks hooks;
	struct cs_debuginfod *debuginfod;	/* made on first use */
	struct cs_dso *hash[1u << DSO_HASH_BITS];
	struct cs_dso *recent[1u << RECENT_BITS];	/* by recent_slot() */
	struct bid_file *index;		/* symfs files by build id, built once */
	size_t nr_index, cap_index;
	bool indexed;
	size_t mismatches;
	const struct cs_dso *first_mismatch;
	struct cs_tasks *tasks;		/* workers (the machine's), or NULL */
	struct save *saves;		/* tables handed to them to save */
};

/* What a worker makes of a dso ahead of its first use (cs_dso_preload()):
 * the lookups and reading cs_dso_locate() and cs_dso_load() would do,
 * into fields of its own, never into the dso. The reading thread claims
 * the task when it first needs the dso and takes the results then, in
 * stream order, as if it had made them there: counts, first mismatch,
 * cache writes, all happen at that moment. The table owns it. */
struct dso_prep {
	struct cs_task task;		/* the file, its debug file, symbols */
	struct cs_task inl_task;	/* its DWARF: queued as task ends */
	struct cs_dso_table *t;		/* only its immutable lookup options */
	char *name;			/* the dso's, copied */
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool want_inlines;
	bool claimed;			/* the reading thread's from here */
	/* made by the task; a stage left undone (false) is done on the
	 * reading thread as without workers: a lookup would have asked a
	 * debuginfod server or indexed --symfs, which only it does */
	bool located, debug_done, syms_done, inl_queued, inl_done;
	int r;				/* find_file() of the binary */
	struct cs_elf_info info;
	char *found;
	char *debug_file;
	char *from;			/* the file symbols were read from */
	struct cs_symtab *syms;
	char *key;			/* syms to be saved under it, or NULL */
	struct cs_inlines *inl;
};

/* A finished table to be written to the cache on a worker. */
struct save {
	struct cs_task task;
	const struct cs_symtab *syms;	/* the dso's or the kernel's, or */
	struct cs_inlines *inl;		/* a debug image */
	char *key;
	struct save *next;
};

/* dir without its trailing slashes (DIR/ + /path), copied; NULL for none */
static int copy_dir(const char *dir, char **out)
{
	size_t n;

	*out = NULL;
	if (!dir || !*dir)
		return 0;
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	*out = strndup(dir, n);
	return *out ? 0 : -ENOMEM;
}

int cs_dso_table_new(const struct cs_dso_table_opts *o,
		     struct cs_dso_table **out)
{
	struct cs_dso_table *t = calloc(1, sizeof(*t));
	const char *home = getenv("HOME");
	struct stat st;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->local = o->local;
	t->debuginfod_on = o->debuginfod && cs_debuginfod_configured();
	t->hooks = o->hooks;
	if (copy_dir(o->symfs, &t->symfs) || copy_dir(o->archive, &t->archive) ||
	    copy_dir(o->sysroot, &t->sysroot) || copy_dir(o->jit_map, &t->jit_map) ||
	    (home && *home && asprintf(&t->cache_dir, "%s/.debug", home) < 0)) {
		t->cache_dir = NULL;
		cs_dso_table_free(t);
		return -ENOMEM;
	}
	t->jit_map_is_dir = t->jit_map && !stat(t->jit_map, &st) &&
			    S_ISDIR(st.st_mode);
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

static bool dso_is(const struct cs_dso *d, const char *name, size_t name_len,
		   const uint8_t *build_id, size_t build_id_size)
{
	return !strncmp(d->name, name, name_len) && !d->name[name_len] &&
	       d->build_id_size == build_id_size &&
	       (!build_id_size || !memcmp(d->build_id, build_id, build_id_size));
}

/*
 * Where a name found lately is remembered, by its length and last bytes.
 * The table's hash reads a name a byte at a time (and its bucket order is
 * the order dsos are listed in, so it stays), and every process maps the
 * same few files: on a system-wide profile of a build, thousands of
 * MMAPs of a dozen paths.
 */
static struct cs_dso **recent_slot(struct cs_dso_table *t, const char *name,
				   size_t name_len)
{
	uint64_t tail = 0;

	memcpy(&tail, name + (name_len > 8 ? name_len - 8 : 0),
	       name_len < 8 ? name_len : 8);
	tail = (tail ^ name_len) * 0x9e3779b97f4a7c15ULL;
	return &t->recent[tail >> (64 - RECENT_BITS)];
}

struct cs_dso *cs_dso_findnew(struct cs_dso_table *t, const char *name,
			      size_t name_len, const uint8_t *build_id,
			      size_t build_id_size)
{
	struct cs_dso **r = recent_slot(t, name, name_len);
	struct cs_dso *d;
	uint32_t h;

	if (build_id_size > 20)
		build_id_size = 20;
	if (*r && dso_is(*r, name, name_len, build_id, build_id_size))
		return *r;
	h = hash_name(name, name_len);
	for (d = t->hash[h]; d; d = d->next)
		if (dso_is(d, name, name_len, build_id, build_id_size)) {
			*r = d;
			return d;
		}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strndup(name, name_len);
	if (!d->name) {
		free(d);
		return NULL;
	}
	d->name_len = strlen(d->name);
	if (build_id_size)
		memcpy(d->build_id, build_id, build_id_size);
	d->build_id_size = (uint8_t)build_id_size;
	d->next = t->hash[h];
	t->hash[h] = d;
	*r = d;
	return d;
}

/* /tmp/perf-PID.map: "START SIZE name" lines (hex), written by JITs */
static bool is_perf_map(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "/tmp/perf-", 10) && n > 14 &&
	       !strcmp(name + n - 4, ".map");
}

static void load_perf_map(struct cs_dso *d, const char *path)
{
	int fd = path ? cs_open_regular(path, 0) : -1;
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char line[4096];

	d->status = CS_DSO_NO_FILE;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
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

/* The kernel records resolved paths: a ".." component is a hostile one,
 * which joined to --symfs would reach outside it. */
static bool has_dotdot(const char *name)
{
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return true;
	return false;
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

static const char *index_find(struct cs_dso_table *t, const uint8_t *id,
			      size_t size)
{
	if (!t->indexed) {
		t->indexed = true;
		index_table = t;
		nftw(t->symfs, index_one, 16, FTW_PHYS);
		index_table = NULL;
	}
	for (size_t i = 0; i < t->nr_index; i++)
		if (t->index[i].size == size && !memcmp(t->index[i].id, id, size))
			return t->index[i].path;
	return NULL;
}

/* ---- finding a file -------------------------------------------------------
 *
 * One lookup for every file a dso needs: its binary, its separate debug
 * file, and for the kernel its symbol list. Each source is tried in the
 * order below; the first file that is there and (for ELF) carries the
 * recorded build id wins. A file with another build id is noted and
 * passed over: its symbols would be wrong.
 */

enum source {
	SRC_SYMFS,		/* --symfs DIR: by path, then DIR/.build-id */
	SRC_ARCHIVE,		/* --archive: callstitch archive's, unpacked */
	SRC_SYSROOT,		/* --sysroot DIR: a container's root */
	SRC_JIT_MAP,		/* --jit-map DIR/perf-PID.map, or that FILE */
	SRC_JIT_MAP_ANY,	/* --jit-map FILE for any JIT code */
	SRC_CACHE,		/* ~/.debug/.build-id, perf's build-id cache */
	SRC_HOST,		/* this host's recorded path, /usr/lib/debug */
	SRC_SYMFS_INDEX,	/* any file under --symfs with the build id */
	SRC_DEBUGINFOD,		/* the servers of DEBUGINFOD_URLS */
};

static const enum source file_order[] = {
	SRC_SYMFS, SRC_ARCHIVE, SRC_SYSROOT, SRC_CACHE, SRC_HOST,
	SRC_SYMFS_INDEX, SRC_DEBUGINFOD,
};
/* kernel addresses move at each boot: the running kernel's own list is
 * trusted before one cached by build id */
static const enum source kallsyms_order[] = {
	SRC_SYMFS, SRC_ARCHIVE, SRC_HOST, SRC_CACHE,
};
/* a runtime writes /tmp/perf-PID.map in its own file system: a map file
 * named for another pid (a container's) serves the JIT code that has none */
static const enum source jit_map_order[] = {
	SRC_JIT_MAP, SRC_SYSROOT, SRC_HOST, SRC_JIT_MAP_ANY,
};

struct lookup {
	struct cs_dso_table *t;
	enum cs_file_kind kind;
	const char *name;		/* recorded path, " (deleted)" cut */
	const uint8_t *id;		/* the build id the file must carry */
	size_t id_size;			/* 0: unknown, any file is taken */
	uint64_t kernel_text;		/* kallsyms: _text as recorded, or 0 */
	struct cs_elf_info info;	/* of the file found */
	char *found;
	size_t size;
	bool done;
	bool mismatch;			/* a file with another build id was seen */
	bool worker;			/* on a worker thread: stop before a */
	bool stopped;			/* source only the reading thread asks */
};

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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* _text in a kallsyms file, or 0 (none, or addresses hidden as zeros).
 * The list opens with the kernel's text: a few lines suffice. */
static uint64_t kallsyms_text(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long addr;
	char line[512], name[64], type;
	uint64_t text = 0;

	for (int i = 0; f && i < 1000 && fgets(line, sizeof(line), f); i++)
		if (sscanf(line, "%llx %c %63s", &addr, &type, name) == 3 &&
		    !strcmp(name, "_text")) {
			text = addr;
			break;
		}
	if (f)
		fclose(f);
	return text;
}

/* Takes path if it is the file the lookup wants. */
static void consider(struct lookup *l, const char *path)
{
	struct cs_elf_info info;
	struct stat st;

	if (l->done)
		return;
	if (l->kind == CS_FILE_KALLSYMS || l->kind == CS_FILE_JIT_MAP) {
		uint64_t text;

		if (stat(path, &st) || !S_ISREG(st.st_mode) ||
		    access(path, R_OK))
			return;
		/* the same kernel booted again sits elsewhere (KASLR): a
		 * list whose _text is not the recorded one is another boot's
		 * and would name every kernel frame wrongly */
		if (l->kind == CS_FILE_KALLSYMS && l->kernel_text &&
		    (text = kallsyms_text(path)) && text != l->kernel_text) {
			l->mismatch = true;
			return;
		}
	} else {
		if (cs_elf_info_read(path, &info))
			return;
		/* a file without a build id note cannot be checked: take it */
		if (l->id_size && info.build_id_size &&
		    (info.build_id_size != l->id_size ||
		     memcmp(info.build_id, l->id, l->id_size))) {
			l->mismatch = true;
			return;
		}
		/* a debug file is wanted for its symbols */
		if (l->kind == CS_FILE_DEBUG && !info.has_symtab)
			return;
		l->info = info;
	}
	l->done = fmt_path(l->found, l->size, "%s", path);
}

__attribute__((format(printf, 2, 3)))
static void consider_fmt(struct lookup *l, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	int r;

	if (l->done)
		return;
	va_start(ap, fmt);
	r = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r >= 0 && (size_t)r < sizeof(path))
		consider(l, path);
}

const char *cs_build_id_leaf(enum cs_file_kind kind)
{
	switch (kind) {
	case CS_FILE_ELF:	return "elf";
	case CS_FILE_DEBUG:	return "debug";
	case CS_FILE_KALLSYMS:	return "kallsyms";
	case CS_FILE_JIT_MAP:	break;
	}
	return NULL;
}

/* dir/.build-id/ab/cdef...: perf's cache keeps the files of a build in
 * it (cs_build_id_leaf()); a bare file there is a binary */
static void in_build_id_tree(struct lookup *l, const char *dir, const char *hex)
{
	if (!cs_build_id_leaf(l->kind))
		return;
	if (l->kind == CS_FILE_ELF)
		consider_fmt(l, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	consider_fmt(l, "%s/.build-id/%.2s/%s/%s", dir, hex, hex + 2,
		     cs_build_id_leaf(l->kind));
}

/* dir as a root file system: the recorded path under it ("[vdso]" at
 * its top), debug files under its /usr/lib/debug/.build-id */
static void in_root(struct lookup *l, const char *dir, const char *hex)
{
	if (l->kind == CS_FILE_ELF || l->kind == CS_FILE_JIT_MAP)
		consider_fmt(l, "%s%s%s", dir, l->name[0] == '/' ? "" : "/",
			     l->name);
	else if (l->kind == CS_FILE_DEBUG && hex)
		consider_fmt(l, "%s/usr/lib/debug/.build-id/%.2s/%s.debug", dir,
			     hex, hex + 2);
}

static void from_debuginfod(struct lookup *l)
{
	struct cs_dso_table *t = l->t;
	char *path = NULL;

	if (!t->debuginfod_on || !l->id_size ||
	    (l->kind != CS_FILE_ELF && l->kind != CS_FILE_DEBUG))
		return;
	/* a download's progress and warnings are told in stream order */
	if (l->worker) {
		l->stopped = true;
		return;
	}
	if (!t->debuginfod &&
	    cs_debuginfod_new(&t->hooks, &t->debuginfod))
		return;
	if (cs_debuginfod_find(t->debuginfod, l->kind == CS_FILE_DEBUG, l->id,
			       l->id_size, l->name, &path) == 0)
		consider(l, path);
	free(path);
}

static void from_source(struct lookup *l, enum source src, const char *hex)
{
	struct cs_dso_table *t = l->t;

	switch (src) {
	case SRC_SYMFS:
		if (!t->symfs)
			break;
		in_root(l, t->symfs, hex);
		if (hex)
			in_build_id_tree(l, t->symfs, hex);
		break;
	case SRC_ARCHIVE:
		if (!t->archive)
			break;
		if (hex)
			in_build_id_tree(l, t->archive, hex);
		else		/* a binary without a build id: by its path */
			in_root(l, t->archive, NULL);
		break;
	case SRC_SYSROOT:
		if (t->sysroot)
			in_root(l, t->sysroot, hex);
		break;
	case SRC_JIT_MAP:		/* the map of this pid */
		if (t->jit_map && t->jit_map_is_dir)
			consider_fmt(l, "%s/%s", t->jit_map, base_name(l->name));
		else if (t->jit_map &&
			 !strcmp(base_name(t->jit_map), base_name(l->name)))
			consider(l, t->jit_map);
		break;
	case SRC_JIT_MAP_ANY:
		if (t->jit_map && !t->jit_map_is_dir)
			consider(l, t->jit_map);
		break;
	case SRC_CACHE:
		if (hex && t->cache_dir)
			in_build_id_tree(l, t->cache_dir, hex);
		break;
	case SRC_HOST:
		if (l->kind == CS_FILE_KALLSYMS) {
			if (t->local)
				consider(l, "/proc/kallsyms");
		} else if (l->name[0] == '/' &&
			   (l->kind != CS_FILE_ELF || !t->symfs || hex)) {
			/* a binary outside --symfs only when the build id
			 * proves it is the same file */
			in_root(l, "", hex);
		}
		break;
	case SRC_SYMFS_INDEX:
		if (t->symfs && hex && l->kind == CS_FILE_ELF) {
			const char *p;

			/* the index is built once, into the table */
			if (l->worker) {
				l->stopped = true;
				break;
			}
			p = index_find(t, l->id, l->id_size);

			if (p)
				consider(l, p);
		}
		break;
	case SRC_DEBUGINFOD:
		from_debuginfod(l);
		break;
	}
}

/* Looks for the file; fills found (the path) and, for ELF kinds, info.
 * Returns 1 if found, 0 if not, -EMEDIUMTYPE if the only files seen carry
 * another build id; on a worker, -EAGAIN when the next source to ask is
 * one only the reading thread asks (debuginfod, the --symfs index). */
static int find_file_on(struct cs_dso_table *t, bool worker,
			enum cs_file_kind kind, const char *name,
			const uint8_t *id, size_t id_size, uint64_t kernel_text,
			struct cs_elf_info *info, char *found, size_t size)
{
	struct lookup l = {
		.t = t, .kind = kind, .name = name, .id = id,
		.id_size = id_size, .kernel_text = kernel_text,
		.found = found, .size = size, .worker = worker,
	};
	const enum source *order = file_order;
	size_t n = sizeof(file_order) / sizeof(file_order[0]);
	char hex[41];

	if (kind == CS_FILE_KALLSYMS) {
		order = kallsyms_order;
		n = sizeof(kallsyms_order) / sizeof(kallsyms_order[0]);
	} else if (kind == CS_FILE_JIT_MAP) {
		order = jit_map_order;
		n = sizeof(jit_map_order) / sizeof(jit_map_order[0]);
	}
	if (id_size)
		cs_build_id_hex(id, id_size, hex);
	for (size_t i = 0; i < n && !l.done && !l.stopped; i++)
		from_source(&l, order[i], id_size ? hex : NULL);
	if (l.done && info)
		*info = l.info;
	if (l.done)
		return 1;
	if (l.stopped)
		return -EAGAIN;
	return l.mismatch ? -EMEDIUMTYPE : 0;
}

static int find_file(struct cs_dso_table *t, enum cs_file_kind kind,
		     const char *name, const uint8_t *id, size_t id_size,
		     uint64_t kernel_text, struct cs_elf_info *info, char *found,
		     size_t size)
{
	return find_file_on(t, false, kind, name, id, id_size, kernel_text,
			    info, found, size);
}

int cs_dso_table_find(struct cs_dso_table *t, enum cs_file_kind kind,
		      const char *name, const uint8_t *build_id,
		      size_t build_id_size, char *path, size_t size)
{
	return find_file(t, kind, name, build_id, build_id_size, 0, NULL,
			 path, size);
}

int cs_dso_table_find_kallsyms(struct cs_dso_table *t, const uint8_t *build_id,
			       size_t build_id_size, uint64_t text, char *path,
			       size_t size)
{
	return find_file(t, CS_FILE_KALLSYMS, "[kernel.kallsyms]", build_id,
			 build_id_size, text, NULL, path, size);
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
	ok = cs_write_all(fd, (const void *)base, end - start) == 0;
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
		/* kept while the table lives: `archive` packs it */
		d->found = strdup(path);
		if (d->found) {
			d->found_is_copy = true;
			return;
		}
	} else if (d->info.build_id_size) {
		d->status = CS_DSO_BUILD_ID_MISMATCH;
	}
	unlink(path);
}

/* ---- saving to the cache ---------------------------------------------- */

static void save_run(struct cs_task *task)
{
	struct save *sv = (struct save *)((char *)task - offsetof(struct save, task));

	if (sv->syms)
		cs_symcache_store(sv->key, sv->syms);
	else
		cs_inlines_save(sv->inl);
}

/* Writes a finished table (or a debug image) to the cache: here without
 * workers, as always; with them on one, after the loading they do (the
 * reading thread never waits for a save). The table stays in use here
 * meanwhile: a save reads only what finishing it made (symtab.h,
 * inlines.h). Takes key. */
static void save_table(struct cs_dso_table *t, const struct cs_symtab *syms,
		       struct cs_inlines *inl, char *key)
{
	struct save *sv = t->tasks ? calloc(1, sizeof(*sv)) : NULL;

	if (!sv) {
		if (syms)
			cs_symcache_store(key, syms);
		else
			cs_inlines_save(inl);
		free(key);
		return;
	}
	sv->syms = syms;
	sv->inl = inl;
	sv->key = key;
	sv->task.run = save_run;
	sv->next = t->saves;
	t->saves = sv;
	cs_tasks_add_after(t->tasks, &sv->task);
}

void cs_dso_table_save(struct cs_dso_table *t, const struct cs_symtab *syms,
		       const char *key)
{
	char *k = strdup(key);

	if (k)
		save_table(t, syms, NULL, k);
	else
		cs_symcache_store(key, syms);
}

/* ---- reading a dso ------------------------------------------------------ */

/* The symbols of file from, sorted once: from the symbol cache when it
 * has them, else read, and then *key (malloc'd) says to save them under
 * it - a binary's table is the same every run. Touches nothing shared:
 * a worker runs it. */
static struct cs_symtab *symbols_of(const char *from, char **key)
{
	char buf[8192];
	bool keyed = !cs_symcache_file_key(from, buf, sizeof(buf));
	struct cs_symtab *syms;

	*key = NULL;
	if (keyed && !cs_symcache_open(buf, &syms)) {
		if (cs_symtab_count(syms))
			return syms;
		cs_symtab_free(syms);
		return NULL;
	}
	if (cs_symtab_new(&syms))
		return NULL;
	if (cs_elf_load_symbols(from, syms) < 0 ||
	    cs_symtab_finish(syms) || !cs_symtab_count(syms)) {
		cs_symtab_free(syms);
		return NULL;
	}
	if (keyed && !(*key = strdup(buf)))
		cs_symcache_store(buf, syms);	/* no memory to wait */
	return syms;
}

static void load_symbols(struct cs_dso_table *t, struct cs_dso *d,
			 const char *from)
{
	char *key;

	d->syms = symbols_of(from, &key);
	if (key)
		save_table(t, d->syms, NULL, key);
}

/* Whether a debug file found by name alone is the one a .gnu_debuglink
 * names: the CRC-32 of its contents is what the link recorded. */
static bool crc_matches(const char *path, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	return n == 0 && (uint32_t)crc == want;
}

/* The debug file that binary's .gnu_debuglink names, where gdb looks for
 * it: next to the binary, in its .debug/, and under /usr/lib/debug (of
 * --symfs, --sysroot and this host) by the recorded directory (of name,
 * whose file's facts are info). */
static bool debuglink_file(struct cs_dso_table *t, const char *name,
			   const struct cs_elf_info *info, const char *binary,
			   char *found, size_t size)
{
	const char *roots[] = { t->symfs, t->sysroot, "" };
	char link[256], bdir[4096], rdir[4096];
	struct lookup l = {
		.t = t, .kind = CS_FILE_DEBUG, .name = name,
		.id = info->build_id, .id_size = info->build_id_size,
		.found = found, .size = size,
	};
	uint32_t crc;

	_Static_assert(sizeof(link) == sizeof(info->debuglink), "link's room");
	/* info was read from binary: for a stripped one it holds the link */
	if (info->debuglink_read) {
		if (!info->debuglink[0])
			return false;
		memcpy(link, info->debuglink, sizeof(link));
		crc = info->debuglink_crc;
	} else if (cs_elf_debuglink(binary, link, sizeof(link), &crc)) {
		return false;
	}
	if (!fmt_path(bdir, sizeof(bdir), "%s", binary) ||
	    !fmt_path(rdir, sizeof(rdir), "%s", name) ||
	    !strrchr(bdir, '/') || !strrchr(rdir, '/'))
		return false;
	*strrchr(bdir, '/') = '\0';
	*strrchr(rdir, '/') = '\0';
	for (int i = 0; i < 5; i++) {
		l.done = false;
		if (i == 0)
			consider_fmt(&l, "%s/%s", bdir, link);
		else if (i == 1)
			consider_fmt(&l, "%s/.debug/%s", bdir, link);
		else if (roots[i - 2])
			consider_fmt(&l, "%s/usr/lib/debug%s/%s", roots[i - 2],
				     rdir, link);
		if (!l.done || !strcmp(found, binary))
			continue;
		/* build ids on both sides were compared; else the CRC */
		if ((l.id_size && l.info.build_id_size) || crc_matches(found, crc))
			return true;
	}
	return false;
}

/* The debug file of binary (the file found for name, info its facts):
 * 1 with its path in path, 0 if it has none, -EAGAIN on a worker when
 * only the reading thread may go on looking. */
static int debug_lookup(struct cs_dso_table *t, bool worker, const char *name,
			const struct cs_elf_info *info, const char *binary,
			char *path, size_t size)
{
	if (info->build_id_size) {
		int r = find_file_on(t, worker, CS_FILE_DEBUG, name,
				     info->build_id, info->build_id_size, 0,
				     NULL, path, size);

		if (r > 0 || r == -EAGAIN)
			return r;
	}
	return debuglink_file(t, name, info, binary, path, size) ? 1 : 0;
}

/* The name to look a binary up by: the recorded one, but for the
 * " (deleted)" of a file replaced after it was mapped. False when it does
 * not fit: then there is no file. */
static bool file_name(const char *recorded, char *name, size_t size)
{
	size_t n;

	if (!fmt_path(name, size, "%s", recorded))
		return false;
	n = strlen(name);
	if (n > 10 && !strcmp(name + n - 10, " (deleted)"))
		name[n - 10] = '\0';
	return true;
}

/* ---- work ahead, on a worker -------------------------------------------- */

static struct dso_prep *prep_of(struct cs_task *task, size_t member)
{
	return (struct dso_prep *)((char *)task - member);
}

static void prep_inlines_run(struct cs_task *task)
{
	struct dso_prep *p = prep_of(task, offsetof(struct dso_prep, inl_task));

	if (cs_inlines_open_unsaved(p->from, &p->inl))
		p->inl = NULL;
	p->inl_done = true;
}

/* What cs_dso_locate() and cs_dso_load() would do for the dso, into p. */
static void prep_run(struct cs_task *task)
{
	struct dso_prep *p = prep_of(task, offsetof(struct dso_prep, task));
	char name[4096], found[4096], path[4096];
	const char *from;
	int r;

	if (!file_name(p->name, name, sizeof(name)))
		return;
	p->r = find_file_on(p->t, true, CS_FILE_ELF, name, p->build_id,
			    p->build_id_size, 0, &p->info, found, sizeof(found));
	if (p->r == -EAGAIN)
		return;
	if (p->r <= 0) {
		p->located = true;
		return;
	}
	if (!(p->found = strdup(found)))
		return;
	p->located = true;
	from = p->found;
	/* a stripped binary: its symbols are in its debug file */
	if (!p->info.has_symtab) {
		r = debug_lookup(p->t, true, p->name, &p->info, p->found, path,
				 sizeof(path));
		if (r < 0 || (r && !(p->debug_file = strdup(path))))
			return;
		p->debug_done = true;
		if (r)
			from = p->debug_file;
	}
	if (!(p->from = strdup(from)))
		return;
	p->syms = symbols_of(from, &p->key);
	p->syms_done = true;
	/* inlined calls are asked about only for frames with a symbol; the
	 * DWARF next, before the other binaries: it is needed about when
	 * the symbols are */
	if (p->want_inlines && p->syms) {
		p->inl_task.run = prep_inlines_run;
		p->inl_queued = true;
		cs_tasks_add(p->t->tasks, &p->inl_task, true);
	}
}

void cs_dso_table_use_tasks(struct cs_dso_table *t, struct cs_tasks *tasks)
{
	t->tasks = tasks;
}

void cs_dso_preload(struct cs_dso_table *t, struct cs_dso *d, bool inlines)
{
	struct dso_prep *p;

	/* [vdso], JIT maps and the like are quick, and some write files */
	if (!t->tasks || d->prep || d->status != CS_DSO_NOT_LOADED ||
	    pseudo_name(d->name) || has_dotdot(d->name) || is_perf_map(d->name))
		return;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->name = strdup(d->name))) {
		free(p);
		return;
	}
	p->t = t;
	memcpy(p->build_id, d->build_id, d->build_id_size);
	p->build_id_size = d->build_id_size;
	p->want_inlines = inlines;
	p->task.run = prep_run;
	d->prep = p;
	cs_tasks_add(t->tasks, &p->task, false);
}

/* d's work ahead, done: run here if no worker took it, waited for if one
 * did. */
static struct dso_prep *prep_claim(struct cs_dso_table *t, struct cs_dso *d)
{
	struct dso_prep *p = d->prep;

	if (p && !p->claimed) {
		cs_tasks_claim(t->tasks, &p->task);
		p->claimed = true;
	}
	return p;
}

static void prep_free(struct dso_prep *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->found);
	free(p->debug_file);
	free(p->from);
	cs_symtab_free(p->syms);
	free(p->key);
	cs_inlines_free(p->inl);
	free(p);
}

/* ---- the reading thread's side ----------------------------------------- */

/* The end of a binary's lookup (r: find_file()'s answer), counted now. */
static void located(struct cs_dso_table *t, struct cs_dso *d, int r,
		    const struct cs_elf_info *info, char *found)
{
	if (r <= 0) {
		memset(&d->info, 0, sizeof(d->info));
		d->status = r ? CS_DSO_BUILD_ID_MISMATCH : CS_DSO_NO_FILE;
		if (r && !t->mismatches++)
			t->first_mismatch = d;
		free(found);
		return;
	}
	d->info = *info;
	d->found = found;
	d->status = d->found ? CS_DSO_FOUND : CS_DSO_NO_FILE;
}

const char *cs_dso_debug_file(struct cs_dso_table *t, struct cs_dso *d)
{
	struct dso_prep *p = d->prep;
	char path[4096];

	if (d->debug_tried)
		return d->debug_file;
	d->debug_tried = true;
	if ((d->status != CS_DSO_FOUND && d->status != CS_DSO_LOADED) ||
	    !d->found || d->found_is_copy)
		return NULL;
	/* claimed when it was located: d->found is the one p found */
	if (p && p->claimed && p->debug_done) {
		d->debug_file = p->debug_file;
		p->debug_file = NULL;
		return d->debug_file;
	}
	if (debug_lookup(t, false, d->name, &d->info, d->found, path,
			 sizeof(path)) > 0)
		d->debug_file = strdup(path);
	return d->debug_file;
}

void cs_dso_locate(struct cs_dso_table *t, struct cs_dso *d)
{
	char name[4096], found[4096];
	struct cs_elf_info info;
	struct dso_prep *p;
	int r;

	if (d->status != CS_DSO_NOT_LOADED)
		return;
	if (!strcmp(d->name, "[vdso]")) {
		/* here it is our own; elsewhere a copy an archive carries */
		if (t->local && !t->symfs && !t->archive) {
			load_vdso(d);
			return;
		}
	} else if (pseudo_name(d->name)) {
		d->status = CS_DSO_NOT_A_FILE;
		return;
	}
	if (has_dotdot(d->name)) {
		d->status = CS_DSO_NO_FILE;
		return;
	}
	if (is_perf_map(d->name)) {
		load_perf_map(d, find_file(t, CS_FILE_JIT_MAP, d->name, NULL, 0,
					   0, NULL, found, sizeof(found)) > 0 ?
				 found : NULL);
		return;
	}
	p = prep_claim(t, d);
	if (p && p->located) {
		located(t, d, p->r, &p->info, p->found);
		p->found = NULL;
		return;
	}
	/* the file was replaced after it was mapped; its name still leads */
	if (!file_name(d->name, name, sizeof(name))) {
		d->status = CS_DSO_NO_FILE;
		return;
	}
	r = find_file(t, CS_FILE_ELF, name, d->build_id, d->build_id_size, 0,
		      &info, found, sizeof(found));
	located(t, d, r, &info, r > 0 ? strdup(found) : NULL);
}

void cs_dso_load(struct cs_dso_table *t, struct cs_dso *d)
{
	const char *from;
	struct dso_prep *p;

	cs_dso_locate(t, d);
	if (d->status != CS_DSO_FOUND)
		return;
	d->status = CS_DSO_LOADED;
	from = d->found;
	/* a stripped binary: its symbols are in its debug file */
	if (!d->info.has_symtab && cs_dso_debug_file(t, d))
		from = d->debug_file;
	d->dwarf_path = strdup(from);
	p = d->prep;
	if (p && p->claimed && p->syms_done && !strcmp(p->from, from)) {
		d->syms = p->syms;
		p->syms = NULL;
		if (p->key)
			save_table(t, d->syms, NULL, p->key);
		p->key = NULL;
		return;
	}
	load_symbols(t, d, from);
}

/* The symbol cache's key of d's PLT names into buf: what they are made
 * of, the binary's relocations and (for an ifunc's entry) the symbols of
 * the file they were read from. False when either cannot be keyed; our
 * [vdso]'s copy has a new name every run. */
static bool plt_key(const struct cs_dso *d, char *buf, size_t len)
{
	char bin[4096], syms[4096];
	int r;

	if (d->found_is_copy || cs_symcache_file_key(d->found, bin, sizeof(bin)))
		return false;
	if (!d->syms)
		syms[0] = '\0';
	else if (!d->dwarf_path ||
		 cs_symcache_file_key(d->dwarf_path, syms, sizeof(syms)))
		return false;
	r = snprintf(buf, len, "plt\n%s\nsymbols %zu\n%s", bin,
		     d->syms ? cs_symtab_count(d->syms) : 0, syms);
	return r > 0 && (size_t)r < len;
}

/* PLT entries have no symbols: they are named from the running binary's
 * relocations (which a debug file does not carry), and only for a dso with
 * an address in its PLT - most never have one. Reading them parses the
 * binary's ELF headers and relocations again every run: the table is
 * kept in the symbol cache like a binary's own (an empty one too). */
static void load_plt(struct cs_dso *d)
{
	char key[8400];
	bool keyed;

	d->plt_tried = true;
	if (!d->found)
		return;
	keyed = plt_key(d, key, sizeof(key));
	if (!keyed || cs_symcache_open(key, &d->plt)) {
		if (cs_symtab_new(&d->plt))
			return;
		if (cs_elf_load_plt(d->found, d->syms, d->plt) < 0 ||
		    cs_symtab_finish(d->plt)) {
			cs_symtab_free(d->plt);
			d->plt = NULL;
			return;
		}
		if (keyed)
			cs_symcache_store(key, d->plt);
	}
	if (!cs_symtab_count(d->plt)) {
		cs_symtab_free(d->plt);
		d->plt = NULL;
	}
}

bool cs_dso_find_sym(struct cs_dso *d, uint64_t vaddr, struct cs_sym *out)
{
	if (vaddr >= d->info.plt_start && vaddr < d->info.plt_end) {
		if (!d->plt_tried)
			load_plt(d);
		if (d->plt)
			return cs_symtab_lookup(d->plt, vaddr, out);
	}
	return d->syms && cs_symtab_lookup(d->syms, vaddr, out);
}

/* d's DWARF as a worker opened it, if one did (from the file it loaded
 * the symbols from: d's dwarf_path); the image it built is saved now. */
static bool prep_inlines(struct cs_dso_table *t, struct cs_dso *d)
{
	struct dso_prep *p = d->prep;

	if (!p || !p->claimed || !p->inl_queued || !d->dwarf_path ||
	    strcmp(p->from, d->dwarf_path))
		return false;
	cs_tasks_claim(t->tasks, &p->inl_task);
	if (!p->inl_done)
		return false;
	d->inlines = p->inl;
	p->inl = NULL;
	if (d->inlines)
		save_table(t, NULL, d->inlines, NULL);
	return true;
}

void cs_dso_inlines_open(struct cs_dso_table *t, struct cs_dso *d)
{
	if (d->inlines_tried)
		return;
	d->inlines_tried = true;
	if (prep_inlines(t, d)) {
		/* taken as a worker made it */
	} else if (!t->tasks) {
		if (d->dwarf_path && cs_inlines_open(d->dwarf_path, &d->inlines))
			d->inlines = NULL;
	} else if (d->dwarf_path) {
		/* opened here, saved on a worker */
		if (cs_inlines_open_unsaved(d->dwarf_path, &d->inlines))
			d->inlines = NULL;
		else
			save_table(t, NULL, d->inlines, NULL);
	}
}

size_t cs_dso_inlines_at(const struct cs_dso *d, uint64_t vaddr,
			 const char **names, size_t cap)
{
	return d->inlines ? cs_inlines_at(d->inlines, vaddr, names, cap) : 0;
}

size_t cs_dso_inlines(struct cs_dso_table *t, struct cs_dso *d, uint64_t vaddr,
		      const char **names, size_t cap)
{
	cs_dso_inlines_open(t, d);
	return cs_dso_inlines_at(d, vaddr, names, cap);
}

int cs_dso_table_for_each_file(const struct cs_dso_table *t,
			       cs_dso_file_fn fn, void *ctx)
{
	for (size_t i = 0; i < (1u << DSO_HASH_BITS); i++) {
		for (const struct cs_dso *d = t->hash[i]; d; d = d->next) {
			const uint8_t *id = d->info.build_id;
			size_t size = d->info.build_id_size;
			int err;

			if (d->status != CS_DSO_LOADED || !d->found)
				continue;	/* JIT maps: no ELF file */
			if (!size) {
				id = d->build_id;
				size = d->build_id_size;
			}
			err = fn(ctx, CS_FILE_ELF, d->name, id, size, d->found);
			if (!err && d->dwarf_path && strcmp(d->dwarf_path, d->found))
				err = fn(ctx, CS_FILE_DEBUG, d->name, id, size,
					 d->dwarf_path);
			if (err)
				return err;
		}
	}
	return 0;
}

size_t cs_dso_table_missing(const struct cs_dso_table *t,
			    const struct cs_dso **first)
{
	size_t n = 0;

	*first = NULL;
	for (size_t i = 0; i < (1u << DSO_HASH_BITS); i++)
		for (const struct cs_dso *d = t->hash[i]; d; d = d->next)
			if ((d->status == CS_DSO_NO_FILE ||
			     d->status == CS_DSO_BUILD_ID_MISMATCH) &&
			    !is_perf_map(d->name) && !n++)
				*first = d;
	return n;
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
			prep_free(d->prep);
			cs_symtab_free(d->syms);
			cs_symtab_free(d->plt);
			cs_inlines_free(d->inlines);
			if (d->found_is_copy)
				unlink(d->found);
			free(d->dwarf_path);
			free(d->debug_file);
			free(d->found);
			free(d->name);
			free(d);
		}
	}
	/* the workers have ended (the caller's cs_tasks_finish()): every
	 * save ran */
	for (struct save *sv = t->saves, *next; sv; sv = next) {
		next = sv->next;
		free(sv->key);
		free(sv);
	}
	for (size_t i = 0; i < t->nr_index; i++)
		free(t->index[i].path);
	free(t->index);
	cs_debuginfod_free(t->debuginfod);
	free(t->cache_dir);
	free(t->archive);
	free(t->sysroot);
	free(t->jit_map);
	free(t->symfs);
	free(t);
}
