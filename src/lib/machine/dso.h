/* dso.h - one binary (path + build id) and its symbols, loaded on first use.
 *
 * A dso is found again by (name, build id), so every process mapping the
 * same libc shares one symbol table. Every file a dso needs (its binary,
 * its separate debug file, a kernel's symbol list) is found by one lookup
 * over an ordered list of sources: --symfs (DIR + path, DIR/.build-id),
 * an unpacked `callstitch archive`, perf's build-id cache (~/.debug/.build-id), this host (the recorded
 * path, /usr/lib/debug/.build-id), any file under --symfs with the build
 * id, and debuginfod servers. A file whose build id differs from the
 * recorded one is refused. docs/symbols.md lists the order.
 */
#ifndef CS_DSO_H
#define CS_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/machine/debuginfod.h"
#include "lib/symbols/elfimg.h"

struct cs_symtab;
struct cs_sym;
struct cs_inlines;
struct cs_tasks;
struct cs_dso_table;			/* opaque */
struct dso_prep;			/* dso.c's */

enum cs_dso_status {
	CS_DSO_NOT_LOADED,
	CS_DSO_FOUND,			/* its file is found (cs_dso_locate()),
					 * its symbols not read yet */
	CS_DSO_LOADED,			/* symbols (maybe none) are in syms */
	CS_DSO_NO_FILE,			/* nothing found to read */
	CS_DSO_BUILD_ID_MISMATCH,	/* a file was found but is another build */
	CS_DSO_NOT_A_FILE,		/* [vdso], //anon, [heap], ... */
};

struct cs_dso {
	char *name;			/* recorded path: what outputs show */
	size_t name_len;		/* strlen(name) */
	char *found;			/* file symbols were read from, or NULL */
	bool found_is_copy;		/* our [vdso], copied: removed at free */
	uint8_t build_id[20];
	uint8_t build_id_size;		/* 0: unknown */
	enum cs_dso_status status;
	struct cs_elf_info info;	/* valid once loaded from a file */
	struct cs_symtab *syms;		/* NULL: no symbols */
	struct cs_symtab *plt;		/* name@plt, built on the first
					 * address in info.plt_start..end */
	bool plt_tried;
	char *dwarf_path;		/* file that may hold its DWARF */
	char *debug_file;		/* its separate debug file, or NULL */
	bool debug_tried;		/* ... looked for (cs_dso_debug_file()) */
	struct cs_inlines *inlines;	/* opened on first inline query */
	bool inlines_tried;
	struct dso_prep *prep;		/* loaded ahead on a worker, not yet
					 * taken (cs_dso_preload()) */
	struct cs_dso *next;		/* hash chain */
};

struct cs_dso_table_opts {
	const char *symfs;		/* NULL: none */
	const char *archive;		/* an unpacked archive (unpack.h), or NULL */
	const char *sysroot;		/* a container's root file system */
	const char *jit_map;		/* a directory of perf-PID.map files,
					 * or one map file */
	bool local;			/* recorded on this host: [vdso] is our
					 * own, /proc/kallsyms the kernel's */
	bool debuginfod;		/* fetch what is missing, when
					 * DEBUGINFOD_URLS names servers */
	struct cs_fetch_hooks hooks;	/* download progress, warnings */
};

/* Returns 0 and a table in *out (caller frees), or -ENOMEM. */
int cs_dso_table_new(const struct cs_dso_table_opts *o,
		     struct cs_dso_table **out);

enum cs_file_kind {
	CS_FILE_ELF,			/* the binary */
	CS_FILE_DEBUG,			/* its separate debug file */
	CS_FILE_KALLSYMS,		/* a kernel's symbol list */
	CS_FILE_JIT_MAP,		/* /tmp/perf-PID.map of JIT code */
};

/* The name perf's build-id cache gives a file of this kind in a build's
 * directory (.build-id/ab/cdef.../LEAF): "elf", "debug", "kallsyms";
 * NULL for a kind it does not keep. */
const char *cs_build_id_leaf(enum cs_file_kind kind);

/* The lookup itself, for a file of `kind` recorded as name with this
 * build id (size 0: unknown, not checked). Returns 1 with the file's path
 * in path, 0 if none was found, -EMEDIUMTYPE if only files of another
 * build were. */
int cs_dso_table_find(struct cs_dso_table *t, enum cs_file_kind kind,
		      const char *name, const uint8_t *build_id,
		      size_t build_id_size, char *path, size_t size);

/* The dso for (name, build id), created if new (owned by the table).
 * NULL on -ENOMEM. */
struct cs_dso *cs_dso_findnew(struct cs_dso_table *t, const char *name,
			      size_t name_len, const uint8_t *build_id,
			      size_t build_id_size);

/* Finds the dso's file once (status FOUND, or why not) without reading
 * its symbols: what the unwinder needs of it. */
void cs_dso_locate(struct cs_dso_table *t, struct cs_dso *d);

/* Loads the dso's symbols once (finding it first); later calls return at
 * once. */
void cs_dso_load(struct cs_dso_table *t, struct cs_dso *d);

/* The separate debug file of a found dso, looked for once: by the build
 * id of its file (the lookup above), then by its .gnu_debuglink (next to
 * the binary, in its .debug/, under /usr/lib/debug, --symfs and --sysroot
 * by the binary's directory; checked by build id, else by the link's
 * CRC). NULL if it has none. Owned by the dso. */
const char *cs_dso_debug_file(struct cs_dso_table *t, struct cs_dso *d);

/* The symbol at vaddr (a symbol address, see cs_elf_offset_to_vaddr) in a
 * loaded dso, copied to *out (its strings owned by the dso); false when
 * there is none. */
bool cs_dso_find_sym(struct cs_dso *d, uint64_t vaddr, struct cs_sym *out);

/* Functions inlined at vaddr in d (see inlines.h); 0 without DWARF. */
size_t cs_dso_inlines(struct cs_dso_table *t, struct cs_dso *d, uint64_t vaddr,
		      const char **names, size_t cap);

/* cs_dso_inlines() in two steps, for a caller that looks up on another
 * thread: opening d's DWARF once (in stream order, as the first lookup
 * would), then lookups that touch nothing but d's inline table - no
 * other thread may look up in d meanwhile. */
void cs_dso_inlines_open(struct cs_dso_table *t, struct cs_dso *d);
size_t cs_dso_inlines_at(const struct cs_dso *d, uint64_t vaddr,
			 const char **names, size_t cap);

/* Worker threads for the table (the machine's; none by default). With
 * them, finished tables are written to the cache on a worker, and
 * cs_dso_preload() loads ahead. The caller ends them (cs_tasks_finish())
 * before cs_dso_table_free(). */
void cs_dso_table_use_tasks(struct cs_dso_table *t, struct cs_tasks *tasks);

/* Has a worker find d's file and read its symbols (from the cache, or
 * parsed and sorted), and open its DWARF when `inlines` (for
 * cs_dso_inlines()), ahead of the first use. Nothing of it reaches d
 * before cs_dso_locate(), cs_dso_load() or cs_dso_inlines() take it, in
 * stream order, as they would have made it: the same answers, counts and
 * cache writes, at the same moments. A lookup that would ask a debuginfod
 * server or index --symfs is left to the reading thread, as without
 * workers. Only for a binary by path, with workers, once; a no-op
 * otherwise. */
void cs_dso_preload(struct cs_dso_table *t, struct cs_dso *d, bool inlines);

/* Writes finished table syms to the cache under key: on a worker when the
 * table has them (syms must then live until they end), else here. */
void cs_dso_table_save(struct cs_dso_table *t, const struct cs_symtab *syms,
		       const char *key);

/* Every file symbols were read from so far: each loaded dso's binary
 * (CS_FILE_ELF) and its separate debug file (CS_FILE_DEBUG), with the
 * dso's recorded name and the build id it is known by (size 0: none).
 * A non-zero return of fn stops the walk and is returned. */
typedef int (*cs_dso_file_fn)(void *ctx, enum cs_file_kind kind,
			      const char *name, const uint8_t *build_id,
			      size_t size, const char *path);
int cs_dso_table_for_each_file(const struct cs_dso_table *t,
			       cs_dso_file_fn fn, void *ctx);

/* The lookup for a kernel's symbol list: also refused, like a binary of
 * another build, when its _text is not `text` (the address the profile
 * recorded for it; 0: unknown): a list from another boot of the same
 * kernel (KASLR) would name every kernel frame wrongly. */
int cs_dso_table_find_kallsyms(struct cs_dso_table *t, const uint8_t *build_id,
			       size_t build_id_size, uint64_t text, char *path,
			       size_t size);

/* Number of binaries loaded so far whose file was not found (or only with
 * another build id), and one of them. */
size_t cs_dso_table_missing(const struct cs_dso_table *t,
			    const struct cs_dso **first);

/* Number of dsos refused for a build id mismatch, and the first one. */
size_t cs_dso_table_mismatches(const struct cs_dso_table *t,
			       const struct cs_dso **first);

void cs_dso_table_free(struct cs_dso_table *t);

#endif
