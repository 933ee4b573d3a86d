/* symtab.h - a sorted table of function symbols with address lookup.
 *
 * Filled once (from an ELF file or from kallsyms), finished (sorted, aliases
 * at one address reduced to the one perf would show, sizes of unsized
 * symbols closed at the next symbol), then only read. Names live in one
 * string pool owned by the table, each with its length.
 */
#ifndef CS_SYMTAB_H
#define CS_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_symtab;			/* opaque */

enum cs_sym_bind {
	CS_SYM_LOCAL = 0,
	CS_SYM_WEAK = 1,
	CS_SYM_GLOBAL = 2,
};

struct cs_sym {
	uint64_t start;
	uint64_t end;			/* exclusive */
	const char *name;		/* owned by the table */
	const char *module;		/* kallsyms "[module]" name, or NULL */
	size_t name_len;		/* strlen(name), kept with it: an output
					 * need not measure a name it copies.
					 * name[name_len] is always its NUL; a
					 * damaged saved table may hold another
					 * NUL before it (its bytes, printed) */
};

/* Returns 0 and an empty table in *out (caller frees), or -ENOMEM. */
int cs_symtab_new(struct cs_symtab **out);

/* Makes room for nr more symbols whose names (and modules) take about
 * bytes: a loader that knows its table's size saves the copies and page
 * faults of growing it by doubling. Only a hint; adding more still works.
 * Returns 0 or -ENOMEM. */
int cs_symtab_reserve(struct cs_symtab *t, size_t nr, size_t bytes);

/* Adds a symbol; name (and module) are copied. size 0: ends at the next
 * symbol. Returns 0 or -ENOMEM. */
int cs_symtab_add(struct cs_symtab *t, uint64_t start, uint64_t size,
		  enum cs_sym_bind bind, const char *name, size_t name_len,
		  const char *module);

/* Like cs_symtab_add(), for a name that may be mangled (C++, Rust): it is
 * demangled when a lookup first returns it, not here - most symbols of a
 * binary are never looked up. */
int cs_symtab_add_mangled(struct cs_symtab *t, uint64_t start, uint64_t size,
			  enum cs_sym_bind bind, const char *name,
			  size_t name_len);

/* Sorts and settles aliases and sizes; call once after the last add.
 * Returns 0 or -ENOMEM. */
int cs_symtab_finish(struct cs_symtab *t);

/* The symbol containing addr, or NULL; its name demangled (once, cached in
 * the table). Pointer valid until the table is freed. Not safe to call on
 * one table from two threads at once. */
const struct cs_sym *cs_symtab_find(struct cs_symtab *t, uint64_t addr);

/* Like cs_symtab_find(), the symbol copied to *out (its strings owned by
 * the table): a lookup reads no state of the symbol's own unless its name
 * is mangled. Returns false when no symbol contains addr. */
bool cs_symtab_lookup(struct cs_symtab *t, uint64_t addr, struct cs_sym *out);

size_t cs_symtab_count(const struct cs_symtab *t);
const struct cs_sym *cs_symtab_at(struct cs_symtab *t, size_t i);

/* Writes finished table t to fd under key (any string that says what the
 * table was made from). Mangled names are saved as they are. Reads only
 * what cs_symtab_finish() (or the open) made, never what lookups fill in:
 * it may run on another thread while this one looks up. Returns 0 or a
 * negative errno. */
int cs_symtab_save(const struct cs_symtab *t, int fd, const char *key);

/* A finished table from a file cs_symtab_save() wrote with the same key,
 * mapped, not copied: nothing is parsed or sorted. Returns 0 and the table
 * in *out (caller frees), -ESTALE for another key, -EBADMSG for a file
 * that is not such a table, or another negative errno. */
int cs_symtab_open_saved(const char *path, const char *key,
			 struct cs_symtab **out);

void cs_symtab_free(struct cs_symtab *t);

/* Demangles a C++ or Rust (legacy or v0) name as perf shows it (no
 * parameter lists). Returns a malloc'd string the caller frees, or NULL
 * when name is not mangled. */
char *cs_demangle(const char *name);

struct cs_pool;

/* cs_demangle()'s text as a piece of pool (the pool's, see pool.h), its
 * length in *len; NULL when name is not mangled, libiberty cannot
 * demangle it, or memory runs out. */
const char *cs_demangle_into(const char *name, struct cs_pool *pool,
			     size_t *len);

/* Parses /proc/kallsyms text (buf, len) into t (not finished). Text (t, T,
 * W, w, ...) symbols only. Returns the number added, -ENOMEM, or -EBADMSG
 * with *bad_line set to the 1-based line that could not be parsed.
 * A file whose addresses are all zero (kptr_restrict) adds nothing. */
long cs_kallsyms_parse(struct cs_symtab *t, const char *buf, size_t len,
		       size_t *bad_line);

#endif
