/* symcache.h - finished symbol tables kept between runs.
 *
 * Every run on a profile pays the same fixed costs: reading /proc/kallsyms
 * makes the kernel format ~150k lines (tens of ms), and parsing it or a
 * big binary's .symtab, then sorting, costs as much again. A finished
 * table is saved instead, in $XDG_CACHE_HOME/callstitch/ (~/.cache/...),
 * under a key that changes whenever the answer could; a run with the same
 * key maps the file and parses nothing (cs_symtab_open_saved).
 *
 * Keys name this callstitch build (its build id: another build may choose
 * symbols differently) and the source: for the kernel its build id
 * (/sys/kernel/notes), the boot (KASLR moves it every boot) and the loaded
 * modules with their addresses; for a file its path, device, inode, size
 * and modification time.
 */
#ifndef CS_SYMCACHE_H
#define CS_SYMCACHE_H

#include <stddef.h>

struct cs_symtab;

/* The key of the running kernel's symbols, as text in buf. Returns 0, or a
 * negative errno when the kernel does not say enough to key them (then
 * nothing is cached). */
int cs_symcache_kernel_key(char *buf, size_t len);

/* The key of the symbols read from file path. Returns 0 or a negative
 * errno (no such file: nothing to cache). */
int cs_symcache_file_key(const char *path, char *buf, size_t len);

/* The cached table for key: 0 and *out (caller frees), or a negative errno
 * (-ENOENT: none yet, -ESTALE: made for another key). */
int cs_symcache_open(const char *key, struct cs_symtab **out);

/* Saves finished table t for key, replacing an older table of the same
 * source atomically. Best effort: a cache that cannot be written is no
 * error. */
void cs_symcache_store(const char *key, const struct cs_symtab *t);

#endif
